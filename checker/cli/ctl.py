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

from checker.app.load import load_model, model_kind, resolve_model_files
from checker.app.scenario_vocabulary import scenario_vocabulary
from checker.cli.defines import add_define_option, defines_of
from checker.cli.explore import MODEL_HELP, add_limit_options, clear_progress, limits_of
from checker.cli.json_output import emit_json
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_ast import Formula
from checker.mc.ctl_parse import parse_formula
from checker.mc.explore import stderr_progress
from checker.mc.fixpoints import Semantics
from checker.mc.vocabulary import check_formula
from flmodel.scenario import load_scenario
from flmodel.scenario_build import build_system


def _check_vocabulary_first(args: argparse.Namespace, formula: Formula) -> None:
    """On a scenario, check the formula's atoms against the scenario's vocabulary before exploring
    (an unknown name or ill-typed comparison is exit 2 at once, not after the exploration)."""
    resolved = resolve_model_files(list(args.model))
    if isinstance(resolved, str | Path) and model_kind(resolved) == "scenario" and Path(resolved).exists():
        system = build_system(load_scenario(Path(resolved), defines=defines_of(args)))
        check_formula(formula, scenario_vocabulary(system))


def run_ctl(args: argparse.Namespace) -> int:
    formula = parse_formula(args.formula, source="<formula>")
    _check_vocabulary_first(args, formula)
    t0 = time.perf_counter()
    progress = stderr_progress()
    kripke = load_model(args.model, limits=limits_of(args), progress=progress, probabilities=False,
                        defines=defines_of(args))
    if progress:
        clear_progress()
    t_load = time.perf_counter() - t0
    result = ModelChecker(kripke, args.semantics).check(formula, evidence=not args.no_evidence,
                                                         vacuity=not args.no_vacuity)
    if args.json:
        emit_json(args.flcheck_command, result.to_json(), indent=1)
        if result.vacuity is not None:  # the JSON says so too; a reader of the terminal must see it
            print(f"flcheck: note: holds vacuously: {result.vacuity.reason}", file=sys.stderr)
    else:
        print(result.render())
        print(f"  time: load {t_load:.3f} s, check {result.seconds:.3f} s")
    return result.verdict.exit_code()


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``ctl``."""
    p = sub.add_parser("ctl", help="check a CTL property on a model (exit 0 holds, 1 not, 2 bad input)",
                       description="Check whether every initial state satisfies a CTL formula. "
                       "Formula syntax: spec/grammar/ctl.lark, e.g. 'EF goal', 'AG !goal', "
                       "'E[!clipped U goal]', 'AG (\"sat1\" in ready -> round >= 1)'.")
    p.add_argument("model", nargs="+", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("formula", metavar="FORMULA", help="the CTL property")
    p.add_argument("--semantics", choices=[s.value for s in Semantics], default=Semantics.IIIF.value,
                   help="iiif (default: deadlocks satisfy AX/AF) or total (deadlocks loop, NuSMV style)")
    add_limit_options(p)
    p.add_argument("--no-evidence", action="store_true", help="skip witness/counterexample search")
    p.add_argument("--no-vacuity", action="store_true", help="skip the vacuity check")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_define_option(p)
    p.set_defaults(func=run_ctl)
