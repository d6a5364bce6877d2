"""NI-FL-DP of an FL system: the analysis behind ``flcheck privacy`` and the privacy and advantage
properties of ``flcheck check``.

[IIIf-FL], Section III-C (``NI_FL_DP``, ``NI_Decomposition``) and III-D (Definition III.1, Theorem 1),
in the intended reading (differential privacy): for the system's dataset ``D`` and each neighbouring
``D'`` (replace-one and add/remove-one, :mod:`flmodel.data`, and the declared neighbours), the system
is built for ``D'`` and the distributions of what the attacker observes at the end of the runs are
compared (:mod:`checker.app.privacy_observation`). Each pair of distributions goes through
:func:`assess_pair`: ε* (pure), δ(ε), the NI-FL-DP verdict, the attacker advantage and the bounds of
Theorem 1 and the literature (:mod:`checker.privacy.ni_fl_dp`, :mod:`checker.privacy.advantage`).
``NI_Decomposition`` is checked on the model: each client's ε from its own update distribution against
the global ε, whether the theorem's conclusion holds, and the bounds the model actually satisfies
(post-processing of the joint client updates, composition over rounds); with the reductions of the
privacy explorations, the clients' updates and the joint record's ε* come from
:mod:`checker.app.privacy_decomposition`, never from the attacker's record of the pairs' explorations. The
definitions read literally are :mod:`checker.app.privacy_literal`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

from checker.app.load import ScenarioFile, load_fl_model, resolve_model_spec
from checker.app.privacy_decomposition import client_updates, joint_epsilon
from checker.app.privacy_literal import literal_check
from checker.app.privacy_observation import (
    DatasetObservation,
    Event,
    StepReducer,
    observe_dataset,
    parse_observe,
)
from checker.app.privacy_results import DecompositionResult, PairAssessment, PairResult, PrivacyReport
from checker.app.privacy_scheduler import ScheduledPair, scheduled_pair
from checker.app.reductions import ObservationReducer, Reductions, reduce_system
from checker.errors import InputError
from checker.mc.explore import Limits
from checker.privacy.advantage import attackers_from_features, bounds
from checker.privacy.dp_query import SchedulerClass
from checker.privacy.ni_fl_dp import (
    Eps,
    EpsilonResult,
    delta_for_epsilon,
    ni_fl_dp,
    per_round_epsilons,
    pure_epsilon,
)
from checker.privacy.schedulers import scheduler_class_text
from checker.verdict import Verdict
from flmodel.data import NEIGHBOUR_READINGS, DataPoint, Dataset, NeighbourReading, neighbours, neighbours_1
from flmodel.readings import readings_of
from flmodel.scenario import load_scenario
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import ScenarioSystem, build_system, neighbour_dataset, universe
from flmodel.view import FLView

__all__ = ["PrivacyModel", "assess_pair", "judged_text", "pair_label", "partition_relation", "privacy_model",
           "privacy_report", "scenario_observing"]

Number = Fraction | float
#: A numeric feature of an observation, for threshold attackers.
Feature = Callable[[Hashable], float | Fraction]


@dataclass(frozen=True)
class PrivacyModel:
    """What the privacy pipeline judges for a command-line model: the system (a scenario's
    :class:`~flmodel.scenario_build.ScenarioSystem`, or an example's FL system), the universe of
    candidate data points, the declared neighbouring datasets and what the attacker observes; for a
    scenario, the reductions of the explorations (:class:`checker.app.reductions.ObservationReducer`,
    the dead values already reset in ``system``)."""

    system: Any
    universe: list[DataPoint]
    declared: list[tuple[str, Dataset]]
    observing: tuple[str, ...]
    reducer: StepReducer | None = None


def scenario_observing(scenario: Scenario) -> tuple[str, ...]:
    """What a scenario's attacker observes: the names of ``attacker ... observes`` (default
    ``curmodpar``, the released model)."""
    att = scenario.attacker
    if att is not None and att.observes:
        return tuple(n.name for n in att.observes)
    return ("curmodpar",)


def privacy_model(spec: str, defines: Mapping[str, int] | None = None,
                  reductions: Reductions | None = None, observing: Sequence[str] | None = None
                  ) -> PrivacyModel:
    """The :class:`PrivacyModel` of a command-line ``MODEL`` (:func:`checker.app.load.load_fl_model`'s
    forms): a scenario keeps its property-language observables, declared neighbours and attacker, and
    gets the reductions of ``reductions`` that keep every privacy figure (default: none; those of
    ``flcheck check``: dead values, gradient sum, symmetry, partial order). ``observing``: what the
    attacker observes instead of the scenario's attacker declaration (``--observing``); the reductions
    keep what it reads."""
    model = resolve_model_spec(spec)
    if isinstance(model, ScenarioFile) and model.path.suffix == ".fl":
        scenario = load_scenario(model.path, defines=defines)
        declared = [(n.name, neighbour_dataset(scenario, n.name)) for n in scenario.neighbours]
        choice = reductions or Reductions.none()
        reduced, _ = reduce_system(build_system(scenario), scenario, Reductions.dead_values_only(choice),
                                   reads=tuple(observing or ()))
        watched = tuple(observing) if observing else scenario_observing(scenario)
        explored = choice.gradient_sum or choice.partial_order or choice.symmetry
        reducer = ObservationReducer(scenario, reduced.secrets, choice=choice) if explored else None
        return PrivacyModel(reduced, universe(scenario), declared, watched, reducer)
    fl, uni, data = load_fl_model(spec, defines)
    return PrivacyModel(fl, uni, data, tuple(observing) if observing else ("curmodpar",))


def judged_text(report: PrivacyReport) -> str:
    """Which neighbouring pairs a report judged, for the output (``declared: hot``, readings)."""
    parts = [f"{r} ({n})" for r, n in report.readings.items()]
    named = [p.label.split(":", 1)[0] for p in report.pairs if p.reading == "declared"]
    if named:
        parts = [f"declared {', '.join(named)}" if x.startswith("declared") else x for x in parts]
    return "; ".join(parts) if parts else "none"


def assess_pair(p0: Mapping[Hashable, Number], p1: Mapping[Hashable, Number], eps: Eps | None, *,
                features: Mapping[str, Feature] | None = None) -> PairAssessment:
    """The NI-FL-DP figures of the observation distributions ``p0`` (on ``D0``) and ``p1`` (on a
    neighbour ``D1``): ε*, δ at the checked ε, the verdict, the attackers (likelihood ratio, then a
    threshold attacker per feature) and the advantage bounds.

    ``eps``: the ε to decide; ``None``: decide whether ε* is finite, and evaluate δ and the bounds at
    ε* (at 0 when ε* is infinite)."""
    d0, d1 = dict(p0), dict(p1)
    epsilon = pure_epsilon(d0, d1)
    checked = eps if eps is not None else (
        epsilon.as_eps() if not epsilon.infinite else Eps(value=Fraction(0)))
    delta = delta_for_epsilon(d0, d1, checked)
    if eps is not None:
        verdict = ni_fl_dp(d0, d1, eps)
    else:
        verdict = Verdict.VIOLATED if epsilon.infinite else Verdict.HOLDS
    attackers = attackers_from_features(d0, d1, features or {})
    return PairAssessment(epsilon, checked, delta, verdict, attackers,
                          bounds(attackers[0].advantage, checked, delta))


def pair_label(d0: Dataset, d1: Dataset) -> str:
    """How ``d1`` differs from ``d0``, for the output (``D vs D-{a}+{b}``)."""
    gone = sorted(str(p) for p in d0 - d1)
    new = sorted(str(p) for p in d1 - d0)
    if gone and new:
        return f"D vs D-{{{','.join(gone)}}}+{{{','.join(new)}}}"
    if gone:
        return f"D vs D-{{{','.join(gone)}}}"
    return f"D vs D+{{{','.join(new)}}}"


def _features(mode: str, sample: Iterable[Hashable], limit: int = 12) -> dict[str, Any]:
    """Numeric features of an observation for threshold attackers: each coordinate of each released
    model (``curmodpar``) or of each update (``client``), at most ``limit``."""
    lengths = [len(o) for o in sample if isinstance(o, tuple)]
    if not lengths:
        return {}
    maxlen = max(lengths)
    feats: dict[str, Any] = {}
    prefix = "curmodpar" if mode != "client" else "update"
    for r in range(maxlen):
        dims = {len(o[r]) for o in sample if isinstance(o, tuple) and len(o) > r and isinstance(o[r], tuple)}
        for i in range(max(dims, default=0)):
            if len(feats) >= limit:
                return feats
            feats[f"{prefix}[round {r + 1}][{i}]"] = _coord(r, i)
    return feats


def _coord(r: int, i: int) -> Any:
    low = Fraction(-(10**12))

    def f(o: Hashable) -> Fraction:
        if isinstance(o, tuple) and len(o) > r and isinstance(o[r], tuple) and len(o[r]) > i:
            x = o[r][i]
            if isinstance(x, int | Fraction) and not isinstance(x, bool):
                return Fraction(x)
        return low  # no such round in this run (or no number there)
    return f


def _releases_from_trace(trace: Hashable) -> tuple[Hashable, ...]:
    """The released models of a recorded protocol trace (its ``eval_server`` events' values)."""
    events = cast("tuple[Event, ...]", trace)
    return tuple(value for kind, _, value in events if kind == "eval_server")


def _observed(obs: DatasetObservation, mode: str, client: str | None) -> dict[Hashable, Number]:
    if mode == "curmodpar":
        return obs.releases
    if mode in ("sequence", "final"):
        dist = obs.sequence if mode == "sequence" else obs.final
        assert dist is not None
        return dist
    if mode == "trace":
        assert obs.trace is not None
        return obs.trace
    assert client is not None
    return obs.updates[client]


def _le(a: EpsilonResult, b: EpsilonResult | Eps) -> bool:
    """``ε_a ≤ ε_b`` exactly (ratios compared)."""
    rb = b.as_eps() if isinstance(b, EpsilonResult) else b
    if a.ratio is None:
        return rb.infinite
    if rb.infinite:
        return True
    exact = rb.exp_exact()
    if exact is not None:
        return Fraction(a.ratio) <= exact
    return float(a.ratio) <= rb.exp_float() * (1 + 1e-12)


def _sum_eps(items: Iterable[EpsilonResult]) -> Eps:
    r = Fraction(1)
    for e in items:
        if e.ratio is None:
            return Eps(infinite=True)
        r *= Fraction(e.ratio)
    return Eps(ratio=r)


def partition_relation(system: FLView, d0: Dataset, d1: Dataset, reading: NeighbourReading
                       ) -> dict[str, str]:
    """How each client's partition differs between the systems on ``d0`` and ``d1`` (the premise of
    ``NI_Decomposition``): ``"equal"``, ``"neighbours"`` (under ``reading``), ``"other"``, or
    ``"chosen by put_part"`` when partitions are chosen at run time."""
    s0, s1 = system.with_dataset(d0), system.with_dataset(d1)
    relation: dict[str, str] = {}
    for c in system.clients:
        a, b = s0.initial.igra.part(c), s1.initial.igra.part(c)
        if not s0.initial_partitioned and not system.initial_partitioned:
            relation[c] = "chosen by put_part"
        elif a == b:
            relation[c] = "equal"
        elif neighbours_1(a, b, reading):
            relation[c] = "neighbours"
        else:
            relation[c] = "other"
    return relation


def _decomposition(system: FLView, o0: DatasetObservation, o1: DatasetObservation,
                   reading: NeighbourReading, joint_eps: EpsilonResult) -> DecompositionResult:
    clients = list(system.clients)
    client_eps = {c: pure_epsilon(o0.updates[c], o1.updates[c]) for c in clients}
    relation = partition_relation(system, o0.dataset, o1.dataset, reading)
    # clients whose partition is chosen at run time by put_part may have neighbouring partitions: they
    # are counted as constrained by the premise (the conservative choice for checking the theorem)
    constrained = [client_eps[c] for c in clients if relation[c] in ("neighbours", "chosen by put_part")]
    premise = (max(constrained, key=lambda e: math.inf if e.ratio is None else e.ratio)
               if constrained else None)
    global_eps = pure_epsilon(o0.releases, o1.releases)
    zero = pure_epsilon({0: Fraction(1)}, {0: Fraction(1)})
    conclusion = _le(global_eps, premise if premise is not None else zero)
    worst_client = max(client_eps.values(), key=lambda e: math.inf if e.ratio is None else e.ratio,
                       default=zero)
    sum_bound = _sum_eps(client_eps.values())
    rounds = per_round_epsilons(o0.releases, o1.releases)  # type: ignore[arg-type]  # release outcomes are sequences (tuples); Distribution keys are any Hashable
    return DecompositionResult(
        client_eps, relation, premise, global_eps, conclusion, _le(global_eps, worst_client), sum_bound,
        _le(global_eps, sum_bound), joint_eps, _le(global_eps, joint_eps), rounds,
        _le(global_eps, _sum_eps(rounds)))


def privacy_report(system: FLView | Any, universe: Iterable[DataPoint] | None = None, *,
                   observe: str = "sequence", eps: Eps | float | str | None = None,
                   readings: Sequence[NeighbourReading] | None = None, limits: Limits | None = None,
                   literal: bool = True, check_scheduler: bool = True, decomposition: bool = True,
                   exact: bool | None = None,
                   declared: Sequence[tuple[str, Iterable[DataPoint]]] = (),
                   observing: Sequence[str] = ("curmodpar",),
                   scheduler: SchedulerClass = "uniform", scheduler_nodes: int = 100_000,
                   reducer: StepReducer | None = None) -> PrivacyReport:
    """NI-FL-DP of ``system`` at its dataset ``D`` against its neighbouring datasets: the one pipeline
    behind ``flcheck check`` (privacy, advantage and crossval properties), ``flcheck privacy``,
    ``flcheck audit`` on a model, the reports and the Isabelle export.

    ``system``: an :class:`FLSystem`, or a scenario's system (anything with the FL system as ``fl``
    and an ``observe(state, name)`` for the property language's names, e.g.
    :class:`flmodel.scenario_build.ScenarioSystem`).  ``observing``: the names the attacker observes
    (a scenario's ``attacker ... observes``); ``observe``: ``sequence`` (default: the sequence of what
    it observes, per release and per change, in the order of the run), ``final`` (the values at the
    end of the run), ``curmodpar``, ``trace`` or ``client:NAME``
    (:mod:`checker.app.privacy_observation`).

    Pairs judged: ``declared`` (named neighbouring datasets, e.g. a scenario's ``neighbour``
    declarations, reported with reading ``"declared"``) and the neighbours of ``D`` drawn from
    ``universe`` (default: ``D`` itself, which gives removals only) under each of ``readings``
    (``None``: none when some pair is declared, else every reading of :data:`NEIGHBOUR_READINGS`).

    ``eps``: the ε to decide (``None``: decide whether the model is ε-DP for some finite ε, and
    evaluate the bounds at the model's ε*).  The verdict is ``holds vacuously`` when no pair exists.

    ``scheduler``: how the protocol's choices are resolved — ``uniform`` (each enabled action equally
    likely), or the worst case over ``memoryless`` or ``worst`` (history-dependent) schedulers that see
    the actions and the attacker's record, never the data (:mod:`checker.app.privacy_scheduler`;
    ``scheduler_nodes`` bounds its branch and bound, beyond which ε* and δ are brackets and a verdict
    the bracket does not decide is ``unknown``).

    ``reducer``: reductions of the explorations that keep every distribution exactly
    (:class:`checker.app.reductions.ObservationReducer`); used under the uniform scheduler only (the
    worst case over schedulers is searched on the whole structure)."""
    observer = None
    if isinstance(system, ScenarioSystem):
        observer, system = system.observe, system.fl
    if readings is None:
        readings = () if declared else NEIGHBOUR_READINGS
    mode, client = parse_observe(observe, system.clients)
    e = None if eps is None else Eps.of(eps)
    base_data: Dataset = frozenset(system.initial.igra.dataset)
    uni = set(base_data) | set(universe or ())
    record_trace = mode == "trace"
    cache: dict[Dataset, DatasetObservation] = {}

    named = {frozenset(data) for _, data in declared}
    per_client = decomposition or mode == "client"
    used = reducer if scheduler == "uniform" else None
    # with reductions, the clients' updates are not in the attacker's record of the pairs' explorations
    # (it would hold as many values as the joint records): they come from explorations of their own
    # (checker.app.privacy_decomposition), or, when the joint record's pass does not apply, from
    # explorations recording every client's updates, as without reductions
    split = used is not None and per_client and not record_trace
    filled: dict[Dataset, str] = {}

    def get(d: Dataset) -> DatasetObservation:
        # the scheduler check on D and the declared neighbours (not on every generated one: its cost)
        if d not in cache:
            checked = check_scheduler and (d == base_data or d in named)
            cache[d] = observe_dataset(system, d, record_trace=record_trace,
                                       record_updates=per_client and not split, limits=limits,
                                       check_scheduler=checked, exact=exact, observing=observing,
                                       observer=observer, keep_kripke=scheduler != "uniform", reducer=used)
        return cache[d]

    def fill(d: Dataset, joint: bool) -> DatasetObservation:
        """``get(d)`` with its clients' updates (and, with ``joint``, the joint record enumerated)."""
        obs = get(d)
        if not split or filled.get(d) == "whole" or (filled.get(d) == "clients" and not joint):
            return obs
        assert used is not None
        notes = obs.reductions.setdefault("decomposition", {})
        if joint:
            whole = observe_dataset(system, d, record_updates=True, limits=limits, check_scheduler=False,
                                    exact=exact, reducer=used)
            obs.updates, obs.joint, filled[d] = whole.updates, whole.joint, "whole"
            notes["every_client"] = {"states": whole.states, "transitions": whole.transitions,
                                     "reductions": whole.reductions}
        else:
            obs.updates, info = client_updates(system, d, used, limits=limits, exact=exact)
            obs.joint, filled[d] = None, "clients"
            notes["clients"] = info["per_class"]
        return obs

    def joint_eps(d1: Dataset, label: str) -> EpsilonResult:
        """ε* of the joint update record of the pair ``(D, d1)``, filling both observations."""
        eps = None
        if split and not (filled.get(base_data) == filled.get(d1) == "whole"):
            assert used is not None
            eps, info = joint_epsilon(system, base_data, d1, used, limits=limits)
            get(d1).reductions.setdefault("decomposition", {}).setdefault("joint", {})[label] = info
        o0, o1 = fill(base_data, eps is None), fill(d1, eps is None)
        if eps is None:
            assert o0.joint is not None and o1.joint is not None
            eps = pure_epsilon(o0.joint, o1.joint)
        return eps

    base = get(base_data)
    pairs: list[PairResult] = []
    per_reading: dict[str, int] = {}
    jobs: list[tuple[str, NeighbourReading, Dataset, str]] = []
    for reading in readings:
        nbs = list(neighbours(base_data, uni, reading))
        per_reading[reading] = len(nbs)
        jobs += [(reading, reading, d1, pair_label(base_data, d1)) for d1 in nbs]
    for name, data in declared:
        d1 = frozenset(data)
        as_reading: NeighbourReading = "replace_one" if len(d1) == len(base_data) else "add_remove_one"
        jobs.append(("declared", as_reading, d1, f"{name}: {pair_label(base_data, d1)}"))
    if declared:
        per_reading["declared"] = len(declared)
    for shown, reading, d1, label in jobs:
        o1 = get(d1)
        joint = joint_eps(d1, label) if decomposition else None
        if mode == "client":
            base, o1 = fill(base_data, False), fill(d1, False)
        p0, p1 = _observed(base, mode, client), _observed(o1, mode, client)
        sample = list(p0) + list(p1)
        if mode == "trace":
            feats = {n: (lambda o, f=f: f(_releases_from_trace(o)))
                     for n, f in _features(mode, [_releases_from_trace(o) for o in sample]).items()}
        elif mode == "final":
            feats = {n: (lambda o, f=f: f((o,))) for n, f in _features(mode, [(o,) for o in sample]).items()}
        else:
            feats = _features(mode, sample)
        schedule = None
        if scheduler != "uniform":
            schedule = _scheduled(base, o1, mode, client, e, scheduler, scheduler_nodes, p0, p1, label)
            p0, p1 = schedule.p0, schedule.p1
        pair = assess_pair(p0, p1, e, features=feats)
        verdict, delta, pair_bounds = pair.verdict, pair.delta, pair.bounds
        if schedule is not None:
            # every figure of the bounds over the class: Adv_s <= f(ε, δ_s) <= f(ε, δ_C) for each
            # scheduler s (f grows with δ), so the worst advantage is checked against the worst δ
            verdict, delta = _scheduled_verdict(schedule, e), schedule.delta_case.value
            pair_bounds = bounds(schedule.advantage_case.value, pair.eps_checked, delta)
        decomp = None if joint is None else _decomposition(system, base, o1, reading, joint)
        pairs.append(PairResult(shown, label, base_data, d1, dict(p0), dict(p1), pair.epsilon,
                                pair.eps_checked, delta, verdict, pair.best, pair.attackers,
                                pair_bounds, decomp, schedule))
    worst = None
    for p in pairs:
        if worst is None or (worst.epsilon.ratio is not None and (
                p.epsilon.ratio is None or p.epsilon.ratio > worst.epsilon.ratio)):
            worst = p
    vacuous = not pairs
    if vacuous:
        verdict = Verdict.HOLDS_VACUOUSLY
    else:
        verdicts = {p.verdict for p in pairs}
        verdict = (Verdict.HOLDS if verdicts == {Verdict.HOLDS} else
                   Verdict.VIOLATED if Verdict.VIOLATED in verdicts else Verdict.UNKNOWN)
    notes = []
    if scheduler != "uniform":
        notes.append("ε*, δ(ε) and the verdict are the worst case over the "
                     f"{scheduler_class_text(scheduler)}; uniform scheduler: ε* = "
                     + ", ".join(f"{p.label.split(':', 1)[0]} {p.schedule.uniform_epsilon.text()}"
                                 for p in pairs if p.schedule is not None))
    elif base.scheduler_independent is False:
        notes.append("the release distribution depends on the scheduler: results are for the uniform "
                     "scheduler over enabled actions")
    if base.undetermined:
        notes.append(f"probability {float(base.undetermined):.3g} of runs without an eventual observation")
    if per_reading.get("replace_one") == 0:
        notes.append("no replace-one neighbour: the universe has no data point outside the dataset")
    lit = literal_check(system, limits=limits, pair=worst, observe=observe, reducer=used) if literal else None
    return PrivacyReport(observe, e, pairs, worst, verdict, vacuous, lit, base, per_reading,
                         scheduler=scheduler, notes=notes, observing=tuple(observing), observations=cache,
                         rule_readings=readings_of(system.rules.name))


def _scheduled(o0: DatasetObservation, o1: DatasetObservation, mode: str, client: str | None, e: Eps | None,
               scheduler: SchedulerClass, nodes: int, p0: Mapping[Hashable, Number],
               p1: Mapping[Hashable, Number], label: str) -> ScheduledPair:
    """The pair over ``scheduler`` (:func:`~checker.app.privacy_scheduler.scheduled_pair`); a model in
    which no scheduler that sees only the history exists is bad input for that query."""
    try:
        return scheduled_pair(o0, o1, mode, client, e, schedulers=scheduler, uniform={"p0": p0, "p1": p1},
                              node_limit=nodes, blind_limit=nodes)
    except ValueError as exc:
        raise InputError(f"no {scheduler} scheduler is defined for pair {label}: {exc}", None,
                         "--scheduler uniform or adaptive, or a scenario whose steps on offer do not depend "
                         "on what a scheduler of this class cannot see") from exc


def _scheduled_verdict(schedule: ScheduledPair, e: Eps | None) -> Verdict:
    """NI-FL-DP over a scheduler class: decided from the bracket of ε*_C (``unknown`` when the search
    stopped with the bracket straddling ε); with no ε given, whether ε*_C is finite."""
    if e is None:
        if schedule.epsilon.infinite:
            return Verdict.VIOLATED
        return Verdict.HOLDS if schedule.epsilon_case.exact or schedule.epsilon_case.upper != math.inf \
            else Verdict.UNKNOWN
    within = schedule.epsilon_within(e)
    return Verdict.UNKNOWN if within is None else (Verdict.HOLDS if within else Verdict.VIOLATED)
