"""``flcheck ctl MODEL FORMULA``: does every initial state satisfy the CTL formula?

Exit 0 holds (also vacuously), 1 violated or unknown, 2 bad input; ``--json`` prints ``{"formula",
"verdict", "semantics", "states", "transitions", "satisfying_initial", "witness"|"counterexample"}``
(plus ``"vacuity"`` for a vacuous verdict and ``"limit_reason"`` for an incomplete exploration). A
vacuous verdict always names the sub-formula that is never satisfied: in the text, or on stderr
under ``--json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checker.cli.defines import add_define_option, defines_of
from checker.cli.explore import MODEL_HELP, clear_progress, explicit_notes, model_files
from checker.cli.json_output import emit_json, json_text
from checker.cli.options import add_limit_options, limits_of, output_file
from checker.errors import InputError, Position
from checker.io.files import check_output_path, write_atomic
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_ast import DPQuery, Formula, ProbQuery, has_probabilistic
from checker.mc.ctl_parse import parse_formula
from checker.mc.fixpoints import Semantics
from checker.verdict import EXIT_HOLDS

if TYPE_CHECKING:
    from checker.mc.kripke import Kripke
    from flmodel.readings import Reading


def _scenario_path(args: argparse.Namespace) -> Path | None:
    """The scenario file the model arguments name (a path or a bundled name), or ``None`` for an
    explicit or JSON model."""
    from checker.app.load import model_kind, resolve_model_files  # lazy: the loader imports the model layer

    resolved = resolve_model_files(list(args.model))
    if not isinstance(resolved, str | Path):
        if len(resolved) != 1:
            return None
        (resolved,) = resolved
    if model_kind(resolved) == "scenario" and Path(resolved).exists():
        return Path(resolved)
    return None


def _check_vocabulary_first(args: argparse.Namespace, formula: Formula) -> bool:
    """On a scenario, check the formula's atoms against the scenario's vocabulary before exploring
    (an unknown name or ill-typed comparison is exit 2 at once, not after the exploration). Returns
    whether the model is a scenario."""
    path = _scenario_path(args)
    if path is not None:
        # lazy: the model layer, for scenarios only (an explicit model needs none of it)
        from checker.app.scenario_vocabulary import scenario_vocabulary
        from checker.mc.vocabulary import check_formula  # lazy: as the import above
        from flmodel.scenario import load_scenario  # lazy: as the import above
        from flmodel.scenario_build import build_system  # lazy: as the import above

        system = build_system(load_scenario(path, defines=defines_of(args)))
        check_formula(formula, scenario_vocabulary(system))
        return True
    return False


def _write_all_states(path: str, formula: Formula, values: Any, inputs: list[Path]) -> Path:
    """Every state's value (a query) or verdict (a condition): CSV (``state,value,exact`` or
    ``state,satisfies``) or JSON by the extension of ``path``."""
    from checker.app.ctl_query import value_json  # lazy: the probabilistic engines

    is_bool = values.dtype == bool
    if path.lower().endswith(".json"):
        rows = [{"state": i, "satisfies": bool(v)} if is_bool else {"state": i, **value_json(v)}
                for i, v in enumerate(values.tolist())]
        return write_atomic(path, json_text("ctl", {"formula": str(formula), "states": rows}, indent=None)
                            + "\n", inputs=inputs)
    head = "state,satisfies\n" if is_bool else "state,value,exact\n"

    def lines() -> Any:
        yield head
        for i, v in enumerate(values.tolist()):
            if is_bool:
                yield f"{i},{'true' if v else 'false'}\n"
            else:
                j = value_json(v)
                yield f"{i},{j['value']!r},{j['exact'] or ''}\n"
    return write_atomic(path, lines(), inputs=inputs)


def _run_probabilistic(args: argparse.Namespace, kripke: Kripke, formula: Formula, scenario: bool,
                       t_load: float) -> int:
    """P/Pmin/Pmax (and CTL around them): a query prints the probability at the initial states, a
    condition a verdict."""
    # lazy: the Markov engines, for probabilities only
    from checker.app.ctl_query import probabilistic_checker, probability_values, value_text

    t0 = time.perf_counter()
    init = [int(i) for i in kripke.initial]
    inputs = model_files(args.model)
    if isinstance(formula, ProbQuery) and formula.is_query:
        if args.all_states:
            check_output_path(args.all_states, inputs)
        query = probability_values(kripke, formula, args.semantics, scenario=scenario, limits=limits_of(args))
        values = query.values
        seconds = time.perf_counter() - t0
        payload: dict[str, Any] = {**query.json(), "seconds": round(seconds, 6)}
        if args.all_states:
            payload["written"] = [str(_write_all_states(args.all_states, formula, values, inputs))]
        if args.json:
            emit_json(args.flcheck_command, with_readings(payload, _readings(args)), indent=1)
        else:
            for s in init:
                print(f"{formula} = {value_text(values[s])}" + (f"  (state {s})" if len(init) > 1 else ""))
            print(f"  structure: {kripke.num_states} states, {kripke.num_transitions} transitions")
            for path in payload.get("written", []):
                print(f"  wrote {path}")
            _print_readings(args)
            print(f"  time: load {t_load:.3f} s, check {seconds:.3f} s")
        return EXIT_HOLDS
    mc, _ = probabilistic_checker(kripke, args.semantics, scenario=scenario, limits=limits_of(args))
    if args.all_states:
        check_output_path(args.all_states, inputs)
    result = mc.check(formula, evidence=False, vacuity=False)
    written = []
    if args.all_states:
        written.append(str(_write_all_states(args.all_states, formula, result.sat, inputs)))
    if args.json:
        out = result.to_json()
        if written:
            out["written"] = written
        emit_json(args.flcheck_command, with_readings(out, _readings(args)), indent=1)
    else:
        print(result.render())
        _print_readings(args)
        for path in written:
            print(f"  wrote {path}")
        print(f"  time: load {t_load:.3f} s, check {result.seconds:.3f} s")
    return result.verdict.exit_code()


def _run_dp(args: argparse.Namespace, formula: DPQuery) -> int:
    """``D{ε,δ}[ψ]`` ([dpCTL]) between the scenario's dataset and ``--between NAME``, over the
    ``--scheduler`` class (:func:`checker.app.ctl_query.dp_between`, the engine of ``check``'s ``dp``
    properties)."""
    from checker.app.ctl_query import dp_between  # lazy: the model layer and the dpCTL engine

    t0 = time.perf_counter()
    res = dp_between(_scenario_path(args), formula, args.between, defines=defines_of(args),
                     scheduler=args.scheduler, limits=limits_of(args))
    seconds = time.perf_counter() - t0
    if args.json:
        emit_json(args.flcheck_command, with_readings({**res.json(), "seconds": round(seconds, 6)},
                                                      _readings(args)), indent=1)
    else:
        print(res.text())
        _print_readings(args)
        if res.check is not None:
            print(f"  observing {', '.join(res.observing)}; {res.check.histories} histories; "
                  f"time {seconds:.3f} s")
    return 1 if res.check is None else res.check.verdict.exit_code()


def _formula_among_models(args: argparse.Namespace) -> None:
    """Refuse a second formula where a model file is expected (``ctl moniteo 'EF x' 'AG y'``): ctl checks
    one formula; every MODEL argument after the first is a model file, never a formula."""
    from checker.app.load import EXPLICIT_SUFFIXES  # lazy: the loader imports the model layer

    for arg in args.model[1:]:
        if Path(arg).exists() or any(Path(arg + suffix).exists() for suffix in EXPLICIT_SUFFIXES):
            continue
        try:
            parse_formula(arg)
        except InputError:
            continue
        raise InputError(f"{arg!r} and {args.formula!r} are both formulas: ctl checks one formula on a model",
                         Position("<command line>"),
                         f"flcheck ctl {args.model[0]} FORMULA, once per formula; or the formulas as "
                         "properties of a scenario, all checked by flcheck check")


def run_ctl(args: argparse.Namespace) -> int:
    from checker.app.load import load_model  # lazy: the loader imports the model layer
    from checker.mc.explore import stderr_progress  # lazy: as the import above

    _formula_among_models(args)
    formula = parse_formula(args.formula, source="<formula>")
    if isinstance(formula, DPQuery):
        return _run_dp(args, formula)
    if args.between is not None:
        raise InputError("--between names the neighbour of a D{ε,δ}[ψ] query", None,
                         "a formula D{ε,δ}[path formula]")
    scenario = _check_vocabulary_first(args, formula)
    probabilistic = has_probabilistic(formula)
    if args.all_states and not probabilistic:
        raise InputError("--all-states writes the values of a probabilistic property", None,
                         "a formula with P=?, P>=p, Pmin or Pmax")
    t0 = time.perf_counter()
    progress = None if args.progress else stderr_progress()
    with args.watchdog.exploring():  # the exploration stops itself at the limits: a partial structure
        kripke = load_model(args.model, limits=limits_of(args), progress=progress or args.watchdog.explored,
                            probabilities=probabilistic, defines=defines_of(args))
    args.keep.append(kripke)
    if progress:
        clear_progress()
    t_load = time.perf_counter() - t0
    explicit_notes(kripke)
    if probabilistic:
        return _run_probabilistic(args, kripke, formula, scenario, t_load)
    result = ModelChecker(kripke, args.semantics).check(formula, evidence=not args.no_evidence,
                                                         vacuity=not args.no_vacuity)
    if args.json:
        emit_json(args.flcheck_command, with_readings(result.to_json(), _readings(args)), indent=1)
        if result.vacuity is not None:  # the JSON says so too; a reader of the terminal must see it
            print(f"flcheck: note: holds vacuously: {result.vacuity.reason}", file=sys.stderr)
    else:
        print(result.render())
        _print_readings(args)
        print(f"  time: load {t_load:.3f} s, check {result.seconds:.3f} s")
    return result.verdict.exit_code()


def _readings(args: argparse.Namespace) -> tuple[Reading, ...] | None:
    """The published rules' readings a check of the scenario relies on (``None``: not a scenario)."""
    path = _scenario_path(args)
    if path is None:
        return None
    from checker.app.ctl_query import scenario_readings  # lazy: the model layer, for scenarios only

    return scenario_readings(path, defines_of(args))


def with_readings(data: dict[str, Any], readings: tuple[Reading, ...] | None) -> dict[str, Any]:
    """:func:`checker.app.ctl_query.with_readings`, imported only for a scenario."""
    if readings is None:
        return data
    from checker.app.ctl_query import with_readings as add  # lazy: the model layer, for scenarios only

    return add(data, readings)


def _print_readings(args: argparse.Namespace) -> None:
    readings = _readings(args)
    if readings:
        from flmodel.readings import readings_line  # lazy: the model layer, for scenarios only

        print(readings_line(readings))


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``ctl``."""
    p = sub.add_parser("ctl",
                       description="Check whether every initial state satisfies a CTL formula. "
                       "Formula syntax: spec/grammar/ctl.lark, e.g. 'EF goal', 'AG !goal', "
                       "'E[!clipped U goal]', 'AG (\"sat1\" in ready -> round >= 1)'; probabilities "
                       "(PCTL): 'P=? [F goal]', 'Pmax=? [!bad U<=10 goal]', 'P>=0.9 [G safe]' (on a scenario "
                       "P is the uniform scheduler; on an MDP file say Pmin or Pmax).")
    p.add_argument("model", nargs="+", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("formula", metavar="FORMULA",
                   help="the property (one per run, the last argument: every MODEL before it is a file)")
    p.add_argument("--semantics", choices=[s.value for s in Semantics], default=Semantics.IIIF.value,
                   help="iiif (default: deadlocks satisfy AX/AF) or total (deadlocks loop, NuSMV style)")
    add_limit_options(p)
    p.add_argument("--no-evidence", action="store_true", help="skip witness/counterexample search")
    p.add_argument("--no-vacuity", action="store_true", help="skip the vacuity check")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--all-states", metavar="FILE", type=output_file,
                   help="write every state's probability (P=? queries) or verdict (other probabilistic "
                   "properties) to FILE: JSON for .json, else CSV")
    p.add_argument("--between", metavar="NAME", help="the declared neighbour of a D{ε,δ}[ψ] query "
                   "(dpCTL: Pr_D(ψ) <= e^ε Pr_D'(ψ) + δ both ways)")
    p.add_argument("--scheduler", choices=["uniform", "memoryless", "adaptive", "blind", "worst"],
                   default="worst",
                   help="the schedulers a D{ε,δ} query quantifies over: adaptive (alias worst, the default: "
                   "an adversary choosing from its steps and everything observed so far), blind (dpCTL's: "
                   "a fixed order of steps, seeing nothing), memoryless or uniform")
    add_define_option(p)
    p.set_defaults(func=run_ctl)
