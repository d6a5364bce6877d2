"""The ``check`` properties decided between the scenario's dataset ``D0`` and a declared neighbour ``D1``:

* ``privacy`` — NI-FL-DP ([IIIf-FL], III-C) by :func:`checker.app.privacy_fl.privacy_report`, the one
  pipeline of ``flcheck privacy``, ``audit``, the reports and the Isabelle export: both systems are
  explored with the attacker's record, and the distributions of what the attacker observes — the
  sequence of what it sees, per release and per change (``observe="sequence"``, default), or its final
  value (``"final"``) — under the uniform scheduler (or the worst case over a scheduler class) are
  compared by :func:`checker.app.privacy_fl.assess_pair` (exact: ``e^ε`` decided exactly);
* ``advantage`` — on the same pair of distributions: the best distinguishing advantage (total
  variation, [IIIf-FL] II-D / Theorem 1) against a number, the seed's Theorem-1 bound read as
  ``Adv ≤ 1 − e^{−ε}``, or the tight pure-DP bound ``tanh(ε/2)`` (:func:`checker.privacy.advantage.bounds`);
* ``dp`` — ``D{ε,δ}[ψ]`` ([dpCTL]) over a scheduler class (:func:`checker.app.privacy_dp.dp_check`);
* ``budget`` — a privacy budget over rounds (:mod:`checker.app.privacy_budget`);
* ``crossval`` — :func:`checker.crossval.crossval_scenario.cross_validate` on the pair of
  distributions, with the formal ε of :func:`~checker.app.privacy_fl.assess_pair`."""

from __future__ import annotations

import math
from collections.abc import Hashable
from fractions import Fraction
from typing import Any

from checker.app.check_context import CheckContext, Judged
from checker.app.check_results import PropertyResult, compare, exact_text
from checker.app.privacy_dp import dp_check, history_text
from checker.app.privacy_fl import assess_pair, pair_label, partition_relation, privacy_report
from checker.app.privacy_results import number_json, outcome_text
from checker.app.reductions import ObservationReducer
from checker.app.scenario_formulas import parse_dp_query
from checker.errors import ExplorationIncomplete, Undecided
from checker.privacy.ni_fl_dp import Eps, eps_within, ratio_within
from checker.privacy.observed_pld import CyclicChain
from checker.render import value_text
from checker.verdict import Verdict
from flmodel.data import NeighbourReading
from flmodel.scenario_build import neighbour_dataset
from flmodel.scenario_properties import (
    SCOPE_TEXT,
    AdvantageProperty,
    BudgetProperty,
    CrossvalProperty,
    DpProperty,
    EpsSpec,
    PrivacyProperty,
)

__all__ = ["check_advantage", "check_budget", "check_crossval", "check_dp", "check_privacy", "eps_of"]


def pair_of(ctx: CheckContext, p: Judged) -> tuple[dict[Hashable, Any], dict[Hashable, Any], str | None]:
    """The observation distributions ``(P0, P1)`` of the property's pair (:meth:`CheckContext.judged`)."""
    pair, problem = ctx.judged(p)
    if pair is None:
        return {}, {}, problem
    return pair.p0, pair.p1, None


def eps_of(spec: EpsSpec) -> Eps:
    """The engines' ε of a scenario's ε (``ln(r)`` kept as its ratio ``r``: exact)."""
    return Eps(ratio=spec.value) if spec.log else Eps(value=spec.value)


def _observed_text(ctx: CheckContext, names: tuple[str, ...]) -> str:
    """How the attacker's observation was read, for the evidence."""
    what = ", ".join(names)
    if ctx.observe == "final":
        return f"observing {what} at the end of runs"
    return f"observing the sequence of {what} (one entry per release or change, in run order)"



def check_privacy(ctx: CheckContext, p: PrivacyProperty) -> PropertyResult:
    if p.scheduler in (None, "uniform") and ctx.observe == "sequence":
        forward = _privacy_forward(ctx, p)
        if forward is not None:
            return forward
    d0, d1, problem = pair_of(ctx, p)
    names = ctx.observing(p)
    if problem:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", problem)
    eps = eps_of(p.eps)
    pair = assess_pair(d0, d1, eps)
    res, verdict = pair.epsilon, pair.verdict
    judged, _ = ctx.judged(p)
    schedule = None if judged is None else judged.schedule
    value = math.inf if res.infinite else res.epsilon
    worst = "" if res.outcome is None else (
        f"worst outcome {outcome_text(res.outcome, ctx.observe)}: "
        f"P0 = {value_text(res.p0)}, P1 = {value_text(res.p1)}")
    if schedule is None:
        note = ctx.scheduler_note(p.neighbour, names)
    else:
        within = schedule.epsilon_within(eps)
        verdict = Verdict.UNKNOWN if within is None else (Verdict.HOLDS if within else Verdict.VIOLATED)
        bracket = "" if schedule.epsilon_case.exact else (
            f", ε* in [{res.text()}, {schedule.epsilon_case.upper}] (search stopped)")
        note = (f"worst case over {schedule.schedulers} schedulers{bracket} (uniform scheduler: ε* = "
                f"{schedule.uniform_epsilon.text()}); the scheduler: "
                + "; ".join(schedule.choices_text(3)))
    evidence = (f"ε* = {res.text()} vs ε = {eps.text()}; " + worst +
                f"; {_observed_text(ctx, names)}, {note}, {len(d0)}/{len(d1)} outcomes")
    details: dict[str, Any] = {
        "epsilon_bound": eps.text(), "epsilon": res.json(),
        "ratio": None if res.ratio is None else str(res.ratio), "observing": list(names),
        "observe": ctx.observe, "neighbour": p.neighbour, "outcomes": [len(d0), len(d1)],
        "scheduler": "uniform" if schedule is None else schedule.schedulers,
        "scheduler_independent": ctx.independent.get((p.neighbour, names), [None, None])}
    if schedule is not None:
        details["schedule"] = schedule.json()
    ctx.artefacts["privacy"][p.name] = (d0, d1, names, eps, res)
    return PropertyResult(p.name, p.kind, verdict, value, res.text(), evidence, details)



def _privacy_forward(ctx: CheckContext, p: PrivacyProperty) -> PropertyResult | None:
    """A privacy property under the uniform scheduler from the forward pass over the two chains
    (:func:`checker.app.privacy_rounds.forward_privacy`); ``None`` where it does not apply (then the
    enumerated sequences decide): runs with cycles, or a structure with more than one action in some
    state, where the enumeration also says whether the distributions depend on the scheduler; and
    at most :data:`~checker.app.privacy_rounds.ENUMERATED_OUTCOMES` sequences on each side, where the
    enumeration is cheap and keeps the whole distributions (the reports plot them). The exploration
    stops at the first state with several actions (:class:`~checker.app.privacy_rounds.SeveralActions`)."""
    from checker.app import privacy_rounds  # lazy: with the budgets' PLD accountant (scipy)

    names, eps = ctx.observing(p), eps_of(p.eps)
    d0 = frozenset(ctx.system.fl.initial.igra.dataset)
    d1 = frozenset(neighbour_dataset(ctx.scenario, p.neighbour))
    reducer = ObservationReducer(ctx.scenario, ctx.system.secrets, choice=ctx.reductions)
    try:
        fw = privacy_rounds.forward_privacy(ctx.system, d0, d1, observing=names, reducer=reducer,
                                            limits=ctx.limits, cache=ctx.streams, one_action=True)
    except (CyclicChain, privacy_rounds.SeveralActions):
        return None
    except ExplorationIncomplete as exc:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", "exploration incomplete: the output "
                              f"distributions need the whole state space ({exc})")
    if not all(fw.independent) or max(fw.outcomes) <= privacy_rounds.ENUMERATED_OUTCOMES:
        return None
    res = fw.epsilon
    ctx.independent[(p.neighbour, names)] = fw.independent
    ctx.explorations.append({"neighbour": p.neighbour, "observing": list(names), "scheduler": "uniform",
                             **fw.explorations})
    within = ratio_within(math.inf if res.ratio is None else res.ratio, eps)
    worst = "" if res.outcome is None else (
        f"worst outcome {outcome_text(res.outcome, ctx.observe)}: "
        f"P0 = {value_text(res.p0)}, P1 = {value_text(res.p1)}")
    evidence = (f"ε* = {res.text()} vs ε = {eps.text()}; " + worst +
                f"; {_observed_text(ctx, names)}, {ctx.scheduler_note(p.neighbour, names)}, "
                f"{fw.outcomes[0]}/{fw.outcomes[1]} outcomes")
    details: dict[str, Any] = {
        "epsilon_bound": eps.text(), "epsilon": res.json(),
        "ratio": None if res.ratio is None else str(res.ratio), "observing": list(names),
        "observe": ctx.observe, "neighbour": p.neighbour, "outcomes": list(fw.outcomes),
        "scheduler": "uniform", "scheduler_independent": fw.independent, "method": "forward pass"}
    ctx.artefacts["privacy"][p.name] = None if fw.pair is None else (*fw.pair, names, eps, res)
    return PropertyResult(p.name, p.kind, Verdict.HOLDS if within else Verdict.VIOLATED,
                          math.inf if res.infinite else res.epsilon, res.text(), evidence, details)


def check_advantage(ctx: CheckContext, p: AdvantageProperty) -> PropertyResult:
    d0, d1, problem = pair_of(ctx, p)
    if problem:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", problem)
    pair = assess_pair(d0, d1, eps_of(p.bound) if isinstance(p.bound, EpsSpec) else None)
    best = pair.best
    adv = best.advantage
    eps_model = pair.epsilon
    details: dict[str, Any] = {"advantage": str(adv), "correct": str(best.correct),
                               "symmetric": best.symmetric, "observe": ctx.observe,
                               "model_epsilon": eps_model.json(), "neighbour": p.neighbour}
    bound_value: Fraction | float
    if not isinstance(p.bound, EpsSpec):
        bound_value = p.bound
        bound_text = str(p.bound)
    else:
        name = "seed_theorem1_proof_as_bound" if p.bound_kind == "theorem1" else "tight_pure"
        (b,) = [b for b in pair.bounds if b.name == name]
        bound_value = b.value
        bound_text = f"{b.formula} at ε = {pair.eps_checked.text()} = {exact_text(b.value)}"
        details["bounds"] = {x.name: x.json() for x in pair.bounds}
    holds = compare(adv, "<=", bound_value)
    evidence = (f"best attacker (likelihood ratio): Adv = {exact_text(adv)} vs bound {bound_text}; "
                f"P(correct) = {exact_text(best.correct)}; model ε* = {eps_model.text()}")
    ctx.artefacts["privacy"].setdefault(p.name, None)
    return PropertyResult(p.name, p.kind, Verdict.HOLDS if holds else Verdict.VIOLATED, float(adv),
                          exact_text(adv), evidence, details)



def check_dp(ctx: CheckContext, p: DpProperty) -> PropertyResult:
    """``D{ε,δ}[ψ]`` ([dpCTL]) between ``D0`` and the declared neighbour, over the property's scheduler
    class (:func:`checker.app.privacy_dp.dp_check`); the figure is the larger of the two directions'
    ``Pr_first(ψ) − e^ε Pr_second(ψ)`` under the worst scheduler found, to be compared with ``δ``."""
    f = parse_dp_query(p)
    sched = p.scheduler
    neighbour = ctx.system.with_dataset(neighbour_dataset(ctx.scenario, p.neighbour))
    try:
        res = dp_check(ctx.system, neighbour, f, p.neighbour, observing=ctx.observing(p), schedulers=sched,
                       limits=ctx.limits)
    except (Undecided, ExplorationIncomplete) as exc:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", f"not decided: {exc}",
                              {"scheduler": sched}, formula=str(f))
    decisive = max(res.directions, key=lambda r: float(r.value))
    worst = decisive.value
    first, second = decisive.direction
    evidence = (f"Pr_{first}(ψ) = {exact_text(decisive.probabilities[0])}, Pr_{second}(ψ) = "
                f"{exact_text(decisive.probabilities[1])}: Pr_{first} − e^ε Pr_{second} = "
                f"{exact_text(worst)} vs δ = {exact_text(f.delta)} ({sched} scheduler, "
                f"{decisive.note})")
    if decisive.holds is False and decisive.witness is not None:
        evidence += f"; witness run: {history_text(decisive.witness)}"
    details = {"scheduler": sched, "text": res.text(), **res.to_json()}
    return PropertyResult(p.name, p.kind, res.verdict, float(worst), exact_text(worst), evidence,
                          details, formula=str(f))



def check_budget(ctx: CheckContext, p: BudgetProperty) -> PropertyResult:
    """A privacy budget ``(ε_B, δ_B)`` between ``D0`` and the declared neighbour, decided on the exact
    figures of :mod:`checker.app.privacy_budget` (the observations of the one privacy pipeline): it
    holds when ``δ(ε_B) ≤ δ_B`` (``δ_B = 0``: ``ε* ≤ ε_B``) in every round of the scope — each round's
    release alone (``per round``), the releases through each round (``over rounds``), each client's
    reports through each round (``per client over rounds``); a violation names the first round (and
    client).  The details add the per-round table and the rounds at which a DP accountant's basic,
    advanced and PLD composition bounds first exceed ``ε_B``."""
    from checker.app.privacy_budget import (  # lazy: scipy's FFT (PLD composition), for budgets only
        DEFAULT_DELTA_PRIME,
        budget_of_pair,
        first_exceeded,
    )

    eps = eps_of(p.eps)
    delta = p.delta
    scope = p.budget_scope
    dprime = float(delta) if 0 < delta < 1 else DEFAULT_DELTA_PRIME
    try:
        try:  # the forward pass over the two chains; the enumeration where it does not apply
            table = _forward_budget(ctx, p, eps, dprime)
        except CyclicChain:
            rep = privacy_report(ctx.system, observe="sequence", observing=ctx.observing(p), readings=(),
                                 declared=[(p.neighbour, neighbour_dataset(ctx.scenario, p.neighbour))],
                                 limits=ctx.limits, literal=False, decomposition=True, exact=True)
            (pair,) = rep.pairs
            table = budget_of_pair(rep, pair, delta_prime=dprime, eps_ref=eps)
    except ExplorationIncomplete as exc:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", f"exploration incomplete ({exc})")
    found, rows = first_exceeded(table, eps, delta, scope)
    seqs = list(table.clients.values()) if scope == "client" else [table.releases]
    accountant: dict[str, Any] = {}
    composed = (("basic", lambda r: not eps_within(r.basic, eps)),
                # advanced composition where it is tighter than basic, basic elsewhere
                ("advanced", lambda r: r.advanced is None or min(r.advanced, float(r.basic)) > float(eps)),
                ("pld", lambda r: r.pld_delta is None or r.pld_delta[1] > float(delta)))
    for name, over in composed if scope != "round" else ():  # per round: no composition to bound
        if name == "advanced" and not any(r.advanced_tighter for s in seqs for r in s.rows):
            continue  # never tighter than basic: not shown
        first = [(r.round, s.what) for s in seqs for r in s.rows if over(r)]
        accountant[name] = None if not first else {"round": min(first)[0], "what": min(first)[1]}
    scope_text = SCOPE_TEXT[scope]
    budget_text = f"(ε, δ) = ({eps.text()}, {exact_text(delta)}) {scope_text}"
    undecided = [r for r in rows if r["exceeded"] is None]
    stopped = [s.stopped for s in seqs if s.stopped]
    exact_run = {s.what: _run_figures(s, dprime) for s in seqs if s.rows} if scope != "round" else {}
    details: dict[str, Any] = {
        "scope": scope, "epsilon_bound": eps.text(), "delta_bound": float(delta), "neighbour": p.neighbour,
        "exceeded": None if found is None else {
            "round": found.round, "client": found.client, "epsilon": found.epsilon.json(),
            "epsilon_exact": found.epsilon.text(),
            "delta": None if found.delta is None else float(found.delta)},
        "rounds": rows, "accountant_first_exceeded": accountant, "budget": table.json(),
        "exact_run": exact_run}
    if found is None and (undecided or stopped):
        why = (f"δ(ε_B) not computed from round {undecided[0]['round']} (the privacy loss distribution "
               "has more atoms than the forward pass keeps)" if undecided else stopped[0])
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "",
                              f"budget {budget_text} not exceeded in the rounds computed; not decided: {why}",
                              details)
    if found is None:
        verdict = Verdict.HOLDS
        worst = max((r for r in rows), key=lambda r: math.inf if r["epsilon"] == "inf" else r["epsilon"],
                    default=None)
        head = f"budget {budget_text} never exceeded in {table.rounds} rounds"
        value = None if worst is None else (math.inf if worst["epsilon"] == "inf" else worst["epsilon"])
        value_text = "" if worst is None else worst["epsilon_exact"]
    else:
        verdict = Verdict.VIOLATED
        head = f"budget {budget_text} first exceeded at {found.text()}"
        value = math.inf if found.epsilon.infinite else found.epsilon.epsilon
        value_text = found.epsilon.text()
    acc = "; ".join(f"{n} composition exceeds it from round {v['round']}" if v else f"{n} composition never"
                    for n, v in accountant.items())
    evidence = f"{head}; a DP accountant's bounds: {acc} (δ' = {dprime:g})" if accountant else head
    if exact_run:
        w = max(exact_run, key=lambda x: math.inf if exact_run[x]["epsilon"] == "inf"
                else exact_run[x]["epsilon"])
        v = exact_run[w]
        if v["delta"] is not None:
            evidence += (f"; the exact run ({w}, {v['rounds']} rounds): δ(ε_B) = {v['delta_text']}, "
                         f"ε(δ') = {v['epsilon_at_delta_text']}")
    return PropertyResult(p.name, p.kind, verdict, value, value_text, evidence, details)


def _run_figures(s: Any, dprime: float) -> dict[str, Any]:
    """The exact δ(ε_B) and ε(δ') of a whole sequence (its last row; ``None`` where its privacy loss
    distribution is not known)."""
    last = s.rows[-1]
    at = last.exact_at_delta_eps()
    return {"rounds": len(s.rows), "epsilon": last.exact.json(), "epsilon_exact": last.exact.text(),
            "delta": None if last.exact_delta is None else number_json(last.exact_delta),
            "delta_text": None if last.exact_delta is None else exact_text(last.exact_delta),
            "delta_prime": dprime, "epsilon_at_delta": None if at is None else at.json(),
            "epsilon_at_delta_text": None if at is None else (
                "inf" if at.infinite else "0" if at.ratio == 1 else
                f"ln({at.ratio}) ≈ {float(at):.6g}" if len(str(at.ratio)) <= 24 else f"≈ {float(at):.6g}")}


def _forward_budget(ctx: CheckContext, p: BudgetProperty, eps: Eps, dprime: float) -> Any:
    """The budget table of the property's pair from the forward passes of
    :mod:`checker.app.privacy_rounds` (the passes shared by the check's budget properties)."""
    from checker.app.privacy_rounds import forward_budget  # lazy: scipy's FFT (PLD composition)

    fl = ctx.system.fl
    d0 = frozenset(fl.initial.igra.dataset)
    d1 = frozenset(neighbour_dataset(ctx.scenario, p.neighbour))
    reading: NeighbourReading = "replace_one" if len(d1) == len(d0) else "add_remove_one"
    reducer = ObservationReducer(ctx.scenario, ctx.system.secrets, choice=ctx.reductions)
    return forward_budget(ctx.system, d0, d1, f"{p.neighbour}: {pair_label(d0, d1)}",
                          observing=ctx.observing(p), reducer=reducer,
                          relation=partition_relation(fl, d0, d1, reading), limits=ctx.limits,
                          delta_prime=dprime, eps_ref=eps, cache=ctx.streams)



def check_crossval(ctx: CheckContext, p: CrossvalProperty) -> PropertyResult:
    from checker.crossval.crossval_scenario import cross_validate  # lazy: scipy, a second to import

    d0, d1, problem = pair_of(ctx, p)
    if problem:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", problem)
    opts = {o.key: o.value for o in p.options}
    trials = int(opts.get("trials", 20_000))  # the scenario checker refuses trials < 1 and seed < 0
    seed = int(opts.get("seed", 0))
    formal = assess_pair(d0, d1, None).epsilon
    cv = cross_validate(d0, d1, formal_eps=math.inf if formal.infinite else formal.epsilon, trials=trials,
                        seed=seed, name=p.name)
    evidence = (f"numerical ε = {cv.numerical_eps:.6g}, formal ε = {formal.text()}, audited ε ≥ "
                f"{cv.audit.eps_lower:.4g} ({cv.audit.trials} trials); "
                + "; ".join(f"{c.name}: {c.verdict}" for c in cv.checks))
    return PropertyResult(p.name, p.kind, cv.verdict, cv.numerical_eps, f"{cv.numerical_eps:.6g}", evidence,
                          {"crossval": cv.to_json()})

