"""``flcheck privacy MODEL``: NI-FL-DP, δ(ε), attacker advantage and bounds, NI_Decomposition, and the
seed's literal definitions ([IIIf-FL], III-C and III-D); ``--theory`` prints the sympy check of Lemma II.2
and Theorem 1.

MODEL is a scenario file (``.fl``; its ``neighbour`` declarations are the pairs judged, reading
``declared``, and its attacker's ``observes`` what is observed), the name of a bundled scenario
(``flcheck list``), or a built-in example ``example:NAME[:key=value,...]``
(:data:`checker.app.load.EXAMPLES`). The pipeline is the one of ``flcheck check``
(:func:`checker.app.privacy_fl.privacy_report`): same pairs, same observation, same figures.
``--reading`` widens the pairs judged (default ``declared``; a model that declares none: ``all``);
the output names the pairs judged. For a model of several rounds each declared pair also gets the
rounds-and-clients table (:mod:`checker.app.privacy_budget`; JSON key ``budget``): the ε of each round's
release alone and given the history, of each client's reports, the exact ε of the releases through
each round (its exact δ at ``--eps``), the basic, advanced and PLD composition bounds at δ' = 1e-6, and
``NI_Decomposition`` per report and per client sequence.

* ``example:moniteo`` — keys ``k`` (satellites, 2), ``rounds`` (1), ``mechanism`` (``rr``, ``geometric``,
  ``none``; default ``rr``), ``points`` (points per satellite, 1), ``extra`` (extra candidate points in the
  universe, 1);
* ``example:seed`` — the published rules; keys ``clients`` (2), ``rounds`` (1), ``events`` (4),
  ``mechanism`` (``none``), ``extra`` (1).

Exit status: 0 NI-FL-DP holds for ``--eps`` (without ``--eps``: for some finite ε), also vacuously
(the premise that is never satisfied is named: in the text, on stderr under ``--json``); 1 violated,
or unknown when an exploration limit stopped the observed system; 2 bad input.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from checker.cli.defines import add_define_option, defines_of
from checker.cli.json_output import emit_json
from checker.cli.options import (
    OBSERVE_HELP,
    PRIVACY_REDUCTIONS,
    READING_CHOICES,
    add_limit_options,
    add_reduction_options,
    exact_number,
    limits_of,
    reductions_of,
)
from checker.errors import InputError
from checker.tables import table_text
from checker.verdict import EXIT_HOLDS

if TYPE_CHECKING:  # the privacy pipeline is imported by run(): most of a second, for this command only
    from checker.app.privacy_budget import BudgetReport
    from checker.app.privacy_results import PairResult, PrivacyReport
    from checker.privacy.ni_fl_dp import Eps
    from checker.privacy.schedulers import WorstCase
    from flmodel.data import NeighbourReading

#: --reading: which generated neighbours to check besides the declared ones (``declared``: only those;
#: ``both`` is the older name of ``all``).
READINGS: dict[str, tuple[NeighbourReading, ...]] = {"all": ("replace_one", "add_remove_one"),
                                        "both": ("replace_one", "add_remove_one"),
                                        "replace_one": ("replace_one",),
                                        "add_remove_one": ("add_remove_one",), "declared": ()}


def readings_of(choice: str | None, declared: Sequence[object]) -> tuple[NeighbourReading, ...]:
    """The generated readings judged for ``--reading choice``: the declared pairs alone by default,
    every reading when the model declares no pair."""
    if choice is None:
        return () if declared else READINGS["all"]
    return READINGS[choice]


#: The kind of the bounds that are the published Theorem 1's equality claims (its errata): shown under the
#: literal reading's section (not with ``--no-literal``), never in the table of bounds.
ERRATUM_KIND = "equality claim"

#: Why NI-FL-DP holds vacuously on a model without neighbouring datasets.
VACUOUS_REASON = ("no neighbouring dataset in the universe: the premise 'dataset D0 ◇1 dataset D1' is "
                  "never satisfied")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "privacy",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", nargs="?",
                   help="scenario file (.fl), bundled scenario (flcheck list) or "
                        "example:NAME[:key=value,...]")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--observe", default="sequence", metavar="WHAT",
                   help=f"{OBSERVE_HELP}; also curmodpar (the released models), trace (every event), "
                        "client:NAME (a client's updates)")
    p.add_argument("--observing", metavar="NAMES", default=None,
                   help="comma-separated observables the attacker observes instead of the scenario's "
                        "attacker declaration (as a property's 'observing NAMES')")
    p.add_argument("--eps", type=epsilon, default=None, metavar="E",
                   help="ε to decide: a number (read exactly, e.g. 0.5 or 1/3), ln(RATIO), or inf")
    p.add_argument("--reading", choices=[*READING_CHOICES, "both"], default=None,
                   help="neighbouring pairs judged: declared (default: the scenario's neighbour "
                        "declarations), or these widened by the generated neighbours of a reading of ◇1 "
                        "(replace_one, add_remove_one, all; a model without declarations: all)")
    p.add_argument("--scheduler", choices=["uniform", "memoryless", "adaptive", "blind", "worst"],
                   default="uniform",
                   help="how the protocol's choices are resolved: uniform (each enabled step equally "
                        "likely, default), or the worst case over adaptive schedulers (alias worst: they see "
                        "their steps and everything the attacker observed so far), blind ones (dpCTL's: "
                        "they see only their own steps) or memoryless ones; never the data")
    p.add_argument("--no-literal", action="store_true",
                   help="skip the literal single-Kripke check of the seed's definitions")
    add_limit_options(p)
    add_reduction_options(p, PRIVACY_REDUCTIONS)
    p.add_argument("--no-decomposition", action="store_true",
                   help="skip NI_Decomposition (does not record per-client updates: much smaller models)")
    p.add_argument("--float", dest="use_float", action="store_true",
                   help="floating point instead of exact rationals")
    p.add_argument("--theory", action="store_true",
                   help="also check Lemma II.2 and Theorem 1 step by step (sympy)")
    add_define_option(p)
    p.set_defaults(func=run)


def epsilon(text: str) -> Eps:
    """``--eps``: ε read exactly (:meth:`Eps.parse`), refused while parsing when it is no ε or when
    ``e^ε`` overflows a float (the bounds and figures are evaluated in floating point; ``inf`` says
    "no guarantee")."""
    from checker.privacy.ni_fl_dp import Eps  # lazy: mpmath is imported only when --eps is given

    word = text.strip()
    inner = word[3:-1].strip() if word.startswith("ln(") and word.endswith(")") else word
    if inner.lower() not in ("inf", "+inf", "infinity"):
        try:  # ASCII digits, a bounded exponent, no zero denominator: checked before Eps reads it
            exact_number(inner)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"cannot read ε from {text!r}: expected a non-negative number such as 0.5 or 1/3, "
                "ln(RATIO) such as ln(3), or inf (ASCII digits)") from None
    try:
        eps = Eps.parse(text)
        eps.exp_float()
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    except OverflowError:
        raise argparse.ArgumentTypeError(f"{text!r} is too large: e^ε overflows a float (use inf)") from None
    return eps


def run(args: argparse.Namespace) -> int:
    # lazy: the privacy pipeline and sympy take seconds to import, and only this command needs them
    from checker.app.privacy_budget import declared_budgets, privacy_json  # lazy: the PLD accountant's scipy
    from checker.app.privacy_fl import privacy_model, privacy_report  # lazy: the privacy pipeline
    from checker.app.theory_check import check_all  # lazy: sympy, for --theory and this command only

    eps = args.eps
    theory = check_all() if args.theory else None
    if args.model is None:
        if theory is None:
            raise InputError("no model given", None, "MODEL (a scenario or example:NAME), or --theory")
        if args.json:
            emit_json(args.flcheck_command, {"theory": [s.json() for s in theory]})
        else:
            _print_theory(theory)
        return EXIT_HOLDS
    asked = None if args.observing is None else tuple(n.strip() for n in args.observing.split(",")
                                                       if n.strip())
    model = privacy_model(args.model, defines_of(args), reductions_of(args, PRIVACY_REDUCTIONS), asked)
    observing = model.observing if asked is None else asked
    if asked is not None:
        known = set(model.system.observable_names())
        unknown = [n for n in observing if n not in known]
        if unknown or not observing:
            raise InputError(f"unknown observable {unknown[0] if unknown else '(none)'!r} in --observing",
                             None, "one of " + ", ".join(sorted(known)))
    limits = limits_of(args)
    args.watchdog.phase("NI-FL-DP: exploring and comparing the neighbouring systems")
    report = privacy_report(model.system, model.universe, observe=args.observe, eps=eps,
                            declared=model.declared, observing=observing,
                            readings=readings_of(args.reading, model.declared), limits=limits,
                            literal=not args.no_literal, decomposition=not args.no_decomposition,
                            exact=False if args.use_float else None, scheduler=args.scheduler,
                            reducer=model.reducer)
    budgets = declared_budgets(report)
    if args.json:
        out = privacy_json(report, budgets)
        if theory is not None:
            out["theory"] = [s.json() for s in theory]
        emit_json(args.flcheck_command, out)
        if report.vacuous:  # the text says so in its table; under JSON, stderr does
            print(f"flcheck: note: NI-FL-DP holds vacuously: {VACUOUS_REASON}", file=sys.stderr)
    else:
        _print_report(report, args, budgets)
        if theory is not None:
            _print_theory(theory)
    return report.verdict.exit_code()


def _figure(x: Any, digits: int | None = None) -> str:
    """A figure for the terminal: ``digits`` (default :data:`checker.render.DIGITS`) significant digits,
    ``inf``, or a text kept as it is."""
    from checker.render import DIGITS  # lazy: numpy, imported by run() already

    digits = DIGITS if digits is None else digits
    if isinstance(x, str):
        return x
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{float(x):.{digits}g}"


def _print_schedule(p: PairResult) -> None:
    """The worst case over a scheduler class for one pair: ε*, δ(ε) and the advantage (brackets when
    the search stopped), the uniform ε* beside it, and the worst scheduler's first choices."""
    s = p.schedule
    assert s is not None

    def case(c: WorstCase) -> str:
        return _figure(c.value) if c.exact else f"in [{_figure(c.value)}, {_figure(c.upper)}]"

    eps = p.epsilon.text() if s.epsilon_case.exact else (
        f"in [{p.epsilon.text()}, {_figure(s.epsilon_case.upper)}]")
    print(f"\n{p.label} over {s.schedulers} schedulers ({s.histories} histories): ε* {eps} "
          f"(uniform scheduler: {s.uniform_epsilon.text()}); δ(ε = {s.eps_checked.text()}) "
          f"{case(s.delta_case)}; best advantage {case(s.advantage_case)}", file=sys.stdout)
    for line in s.choices_text(6):
        print(f"  {line}", file=sys.stdout)


def _print_report(rep: PrivacyReport, args: argparse.Namespace, budgets: Sequence[BudgetReport] = ()) -> None:
    from checker.app.privacy_fl import judged_text  # lazy: loaded by run() already
    from checker.app.privacy_results import outcome_text
    from flmodel.readings import readings_line  # lazy: with the pipeline run() loaded

    out = sys.stdout
    base = rep.base
    sched = ""
    if base.scheduler_independent is not None:
        dep = "independent of" if base.scheduler_independent else "DEPENDS ON"
        sched = f" (release distribution {dep} the scheduler)"
    print(f"model {args.model}: observe {rep.observe}; dataset of {len(base.dataset)} points; "
          f"{base.states} states explored for it; scheduler {rep.scheduler}{sched}; "
          f"{'exact' if base.exact else 'floating point'}", file=out)
    print(f"pairs judged: {judged_text(rep)}", file=out)
    if rep.rule_readings:
        print(readings_line(rep.rule_readings), file=out)
    eps_text = "the model's ε*" if rep.eps is None else f"ε = {rep.eps.text()}"
    rows = [["reading", "neighbour pair", "ε*", "δ(ε)", "best Adv", "NI-FL-DP"]]
    for p in rep.pairs:
        rows.append([p.reading, p.label, p.epsilon.text(), _figure(p.delta), _figure(p.advantage),
                     str(p.verdict)])
    if rep.pairs:
        print(table_text(rows, rule=True), file=out)
        print(f"(δ(ε) and the verdict at {eps_text}; without --eps NI-FL-DP means 'ε* finite')", file=out)
    else:
        print(f"NI-FL-DP holds vacuously: {VACUOUS_REASON}", file=out)
    for p in rep.pairs:
        if p.schedule is not None:
            _print_schedule(p)
    w = rep.worst
    if w is not None:
        print(f"\nworst pair: {w.reading} {w.label}: ε* = {w.epsilon.text()}, "
              f"outcome {outcome_text(w.epsilon.outcome, rep.observe)} with P0 = {_figure(w.epsilon.p0)}, "
              f"P1 = {_figure(w.epsilon.p1)}", file=out)
        under = "" if w.schedule is None else " (under the scheduler attaining ε*)"
        print(f"attackers{under}: " + "; ".join(f"{a.name} {_figure(a.advantage)}" for a in w.attackers),
              file=out)
        rows = [["bound", "formula", "value", "kind", "holds on the model"]]
        for b in w.bounds:
            if b.kind == ERRATUM_KIND:  # the published theorem's claims: under the literal reading below
                continue
            rows.append([b.name, b.formula, _figure(b.value), b.kind, "yes" if b.holds else "NO"])
        over = "" if w.schedule is None else f" (worst case over {w.schedule.schedulers} schedulers)"
        print(f"bounds at ε = {w.eps_checked.text()}, δ = {_figure(w.delta)}, "
              f"best advantage {_figure(w.advantage)}{over}:", file=out)
        print(table_text(rows, rule=True), file=out)
        if any(p.decomposition is not None for p in rep.pairs):
            print("\nNI_Decomposition per pair (client ε*, global ε*; theorem conclusion; seed's max rule; "
                  "post-processing of joint updates; composition over rounds):", file=out)
        for p in rep.pairs:
            d = p.decomposition
            if d is None:
                continue
            cl = ", ".join(f"{c}: {e.text()} [{d.partition_relation[c]}]" for c, e in d.client_eps.items())
            pp = "holds" if d.post_processing_holds else "FAILS (data-dependent FedAvg weights)"
            print(f"  {p.reading} {p.label}: {cl}; global {d.global_eps.text()}; conclusion "
                  f"{_ok(d.conclusion_holds)}; max rule {_ok(d.max_rule_holds)}; post-processing {pp}; "
                  f"rounds {[r.text() for r in d.rounds]} composition {_ok(d.composition_holds)}", file=out)
    lit = rep.literal
    if lit is not None:
        print(f"\nseed's definition literally (one Kripke structure): {lit.explanation}; "
              f"verdict {lit.verdict}", file=out)
        print(f"  NI_Decomposition partition premise (all clients' partitions ◇1) between reachable states: "
              f"{lit.partition_premise_pairs} pairs of {lit.reachable_partitions} reachable partitions",
              file=out)
        for line in lit.flaws:
            print(f"  {line}", file=out)
        if w is not None:
            for b in (b for b in w.bounds if b.kind == ERRATUM_KIND):
                print(f"  {b.name}: the published claim {b.formula} = {_figure(b.value)} at ε = "
                      f"{w.eps_checked.text()} {'holds' if b.holds else 'does NOT hold'} on the model "
                      f"(best advantage {_figure(w.advantage)})", file=out)
        for ps in lit.path_sums:
            print(f"  P(M ⊢F {{curmodpar = {ps['curmodpar']}}}): path sum {_figure(ps['path_sum'])} "
                  f"vs first passage {_figure(ps['first_passage'])}{' (differ)' if ps['differs'] else ''}",
                  file=out)
    _print_budgets(budgets)
    for note in rep.notes:
        print(f"note: {note}", file=out)
    print(f"\nNI-FL-DP: {rep.verdict}", file=out)


def _print_budgets(budgets: Sequence[BudgetReport]) -> None:
    for b in budgets:
        print(f"\nrounds and clients, {b.label} (ε of what is seen; a DP accountant's composition of the "
              f"per-round mechanisms at δ' = {b.delta_prime:g}):")
        rows = [["sequence", "round", "ε round alone", "ε round | history", "exact ε rounds 1..r",
                 "exact ε(δ')", "basic Σ", "advanced", "PLD ε(δ')"]]
        for s in [b.releases, *b.clients.values()]:
            for r in s.rows:
                at = r.exact_at_delta_eps()
                # advanced composition only where it is below basic composition
                advanced = _figure(r.advanced) if r.advanced is not None and r.advanced_tighter else "≥ basic"
                rows.append([s.what, str(r.round), r.marginal.text(), r.conditional.text(), r.exact.text(),
                             "-" if at is None else _figure(float(at)), _figure(float(r.basic)),
                             "-" if r.advanced is None else advanced, _figure(r.pld)])
        print(table_text(rows, rule=True))
        if b.eps_ref is not None:
            print(f"exact δ(ε = {b.eps_ref.text()}) of the releases through each round: "
                  + ", ".join(f"round {r.round}: {_figure(r.exact_delta)}" for r in b.releases.rows))
        for d in b.decomposition:
            premise = "none constrained" if d.premise is None else d.premise.text()
            print(f"NI_Decomposition {d.reading}: premise ε = {premise}, released sequence ε = "
                  f"{d.global_eps.text()}: conclusion {_ok(d.holds)}")
        if b.readings_part:
            print("(the readings part: each report meets a smaller ε than the rounds compose to)")


def _ok(flag: bool) -> str:
    return "holds" if flag else "FAILS"


def _print_theory(steps: Sequence[Any]) -> None:
    print("\nLemma II.2 and Theorem 1, step by step (sympy, symbolic ε):")
    for s in steps:
        cond = f" [assuming {'; '.join(s.assumptions)}]" if s.assumptions else ""
        print(f"  {s.id:7s} {s.verdict!s:8s}{cond} {s.source}: {s.claim}")
        print(f"          {s.detail}")
