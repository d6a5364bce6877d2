"""NI-FL-DP, NI_Decomposition and the decisional problem on an FL system (application layer).

Seed 004, Section III-C (``NI_FL_DP``, ``NI_Decomposition``) and III-D (Definition III.1, Theorem 1),
computed on an :class:`flmodel.system.FLSystem`.

Two readings are computed side by side:

**The seed's definition, literally.**  ``NI_FL_DP I s0 s1 ε`` quantifies over states ``s0``, ``s1``
reachable from ONE initial infrastructure ``I`` in ONE Kripke structure with ``dataset G0 ◇1 dataset G1``.
No published rule changes ``dataset`` (``put_part`` requires it and keeps it, ``get_grad`` and
``eval_server`` copy it), so every reachable state has the dataset of ``I`` and ``◇1`` — irreflexive
under both readings — can never hold: the definition (and ``NI_Decomposition``, whose conclusion is
``NI_FL_DP``) holds vacuously.  :func:`literal_check` proves this on the model by collecting the
reachable datasets, and reports the per-client partition premise of ``NI_Decomposition``, which CAN be
met inside one structure (``put_part`` chooses the partition).  It also contrasts the seed's path sum
``P(M ⊢F {curmodpar = v})`` with first passage (:mod:`checker.markov.core`).

**The intended reading (differential privacy).**  For the system's dataset ``D`` and each neighbouring
``D'`` (replace-one and add/remove-one, :mod:`flmodel.data`), build the system for ``D'``, resolve
the nondeterminism with a scheduler (default: uniform over the enabled actions) and compute the
distribution of what the attacker observes at the end of the run:

* ``curmodpar`` (default): the sequence of released models, one per aggregation (round);
* ``trace``: the whole protocol trace — every event (``Put`` with its partition, ``Get c v``,
  ``Eval w``) in order;
* ``client:NAME``: the sequence of updates client ``NAME`` sends.

Then ε* (pure), δ(ε), the NI-FL-DP verdict, the worst pair and outcome, the attacker advantage and the
bounds of Theorem 1 and the literature (:mod:`checker.privacy.ni_fl_dp`,
:mod:`checker.privacy.advantage`), and
``NI_Decomposition`` on the model: each client's ε from its own update distribution against the global
ε, whether the theorem's conclusion holds, and the bounds the model actually satisfies
(post-processing of the joint client updates, composition over rounds).

Observation window: a run ends when it deadlocks or, with ``stop_after_rounds`` (default), at the
last aggregation allowed by ``max_rounds`` (clients may keep reporting afterwards in the published
rules, but nothing further is released).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from checker.errors import InputError
from checker.markov.core import (
    ObservableDistribution,
    bottom_absorption,
    bottom_components,
    dtmc_from_kripke,
    mdp_from_kripke,
    mdp_reach_many,
    observable_distribution,
    path_sum,
)
from checker.mc.explore import Limits, explore
from checker.mc.kripke import Kripke
from checker.privacy.advantage import AttackerResult, Bound, attackers_from_features, bounds
from checker.privacy.ni_fl_dp import (
    Eps,
    EpsilonResult,
    delta_for_epsilon,
    ni_fl_dp,
    per_round_epsilons,
    pure_epsilon,
)
from checker.verdict import Verdict
from flmodel.data import NEIGHBOUR_READINGS, DataPoint, Dataset, NeighbourReading, neighbours, neighbours_1
from flmodel.system import FLState, FLSystem

__all__ = [
    "DatasetObservation",
    "DecompositionResult",
    "LiteralCheck",
    "ObservedSystem",
    "PairResult",
    "PrivacyReport",
    "literal_check",
    "observe_dataset",
    "parse_observe",
    "privacy_report",
]

Number = Fraction | float
#: Default exploration limits per dataset: 200 000 states.  (No default memory limit: ``explore``
#: measures the process's PEAK resident set size, which a long-lived process — or one exec'ed from a
#: large parent — may already exceed; the CLI, a fresh process, passes ``--max-memory-mb``.)
DEFAULT_LIMITS = Limits(max_states=200_000)
Vector = tuple[Fraction, ...]
#: An observable event of the protocol trace: (kind, actor, value).
Event = tuple[str, str | None, Hashable]


def parse_observe(text: str, clients: Sequence[str]) -> tuple[str, str | None]:
    """``"curmodpar"``, ``"trace"`` or ``"client:NAME"`` -> ``(mode, client)``; :class:`InputError`
    naming the expected forms otherwise."""
    if text in ("curmodpar", "trace"):
        return text, None
    if text.startswith("client:"):
        name = text.split(":", 1)[1]
        if name not in clients:
            raise InputError(f"unknown client {name!r} in --observe {text}", None,
                             f"one of client:{', client:'.join(clients)}")
        return "client", name
    raise InputError(f"unknown observation {text!r}", None, "curmodpar, trace or client:NAME")


# ---------------------------------------------------------------------------------------------------
# The system observed by the attacker: a product with the record of released values
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ObsState:
    fl: FLState
    releases: tuple[Vector, ...]
    updates: tuple[tuple[Vector, ...], ...]  # per client (sorted), in order
    trace: tuple[Event, ...] | None


class ObservedSystem:
    """The product of an :class:`FLSystem` with the attacker's record (a transition system in the sense
    of :mod:`checker.mc.ts`).  Records are appended on the step that produces them: an aggregation
    appends the new ``curmodpar`` to ``releases``; a report by client ``c`` appends its update to
    ``updates[c]``; with ``record_trace`` every event is appended to ``trace``.  Probabilities and
    actions are those of the FL system, so the product is a refinement that only adds memory."""

    def __init__(self, system: FLSystem, *, record_trace: bool = False, record_updates: bool = True,
                 stop_after_rounds: bool = True) -> None:
        self.system = system
        self.clients = tuple(system.clients)
        self._index = {c: i for i, c in enumerate(self.clients)}
        self.record_trace = record_trace
        self.record_updates = record_updates
        self.stop_after_rounds = stop_after_rounds
        self._names = ("releases", "trace", "dataset", "partition", "curmodpar",
                       *(f"updates:{c}" for c in self.clients))

    def initial_states(self) -> list[_ObsState]:
        return [_ObsState(s, (), tuple(() for _ in self.clients), () if self.record_trace else None)
                for s in self.system.initial_states()]

    def successors(self, state: _ObsState) -> list[tuple[object, _ObsState, Fraction]]:
        b = self.system.bounds
        if self.stop_after_rounds and b.max_rounds is not None and state.fl.round >= b.max_rounds:
            return []
        out = []
        for act, target, p in self.system.successors(state.fl):
            kind = str(self.system.observe(target, "last_kind"))
            g = target.infra.igra
            releases, updates, trace = state.releases, state.updates, state.trace
            value: Hashable = None
            if target.round > state.fl.round:
                releases = (*releases, g.curmodpar)
                value = g.curmodpar
            elif kind == "get_grad" and act.actor in self._index:
                v = g.gradient[act.actor]
                if self.record_updates:
                    i = self._index[act.actor]
                    updates = (*updates[:i], (*updates[i], v), *updates[i + 1:])
                value = v
            elif kind == "put_part":
                value = g.partition
            if trace is not None:
                trace = (*trace, (kind, act.actor, value))
            out.append((act, _ObsState(target, releases, updates, trace), p))
        return out

    def observable_names(self) -> Sequence[str]:
        return self._names

    def observe(self, state: _ObsState, name: str) -> object:
        if name == "releases":
            return state.releases
        if name == "trace":
            return state.trace
        if name == "dataset":
            return state.fl.infra.igra.dataset
        if name == "partition":
            return state.fl.infra.igra.partition
        if name == "curmodpar":
            return state.fl.infra.igra.curmodpar
        if name.startswith("updates:") and name[8:] in self._index:
            return state.updates[self._index[name[8:]]]
        raise KeyError(f"unknown observable {name!r}")


# ---------------------------------------------------------------------------------------------------
# Distributions for one dataset
# ---------------------------------------------------------------------------------------------------


@dataclass
class DatasetObservation:
    """What the attacker can observe when the system runs on ``dataset``: ``releases`` (distribution
    of the released-model sequence), ``updates[c]`` (of client ``c``'s update sequence), ``joint``
    (of all clients' update sequences together), ``trace`` (when recorded); ``states``/``transitions``
    of the explored product; ``scheduler_independent`` (``None``: not checked) and ``undetermined``
    (mass of runs without an eventual observation)."""

    dataset: Dataset
    releases: dict[Hashable, Number]
    updates: dict[str, dict[Hashable, Number]]
    joint: dict[Hashable, Number]
    trace: dict[Hashable, Number] | None
    states: int
    transitions: int
    exact: bool
    scheduler_independent: bool | None = None
    undetermined: Number = 0
    kripke: Kripke | None = field(default=None, repr=False)


def observe_dataset(system: FLSystem, dataset: Iterable[DataPoint] | None = None, *,
                    record_trace: bool = False, record_updates: bool = True, limits: Limits | None = None,
                    check_scheduler: bool = True, keep_kripke: bool = False,
                    stop_after_rounds: bool = True, exact: bool | None = None) -> DatasetObservation:
    """Explore ``system`` (rebuilt for ``dataset`` when given) observed by the attacker, resolve the
    nondeterminism with the uniform scheduler, and return the distributions of the observations at the
    end of the runs (:func:`checker.markov.core.observable_distribution`, eventual values).

    ``check_scheduler``: also decide whether the release distribution depends on the scheduler, by
    comparing ``Pmin`` and ``Pmax`` over all schedulers of each release sequence (vectorised float
    value iteration, :func:`checker.markov.core.mdp_reach_many`, tolerance 1e-9).  ``keep_kripke``: keep the
    explored product in the result (memory)."""
    sys_d = system if dataset is None else system.with_dataset(dataset)
    ts = ObservedSystem(sys_d, record_trace=record_trace, record_updates=record_updates,
                        stop_after_rounds=stop_after_rounds)
    names = ["releases", *(f"updates:{c}" for c in ts.clients)] + (["trace"] if record_trace else [])
    k = explore(ts, limits=limits or DEFAULT_LIMITS, observables=names,  # type: ignore[arg-type]
                probabilities=True, keep_states=False)
    if not k.complete:
        hint = "" if not record_updates else "; try without the decomposition (fewer recorded updates)"
        raise InputError(f"the observed FL system is too large or unbounded ({k.limit_reason}); "
                         f"bound it with max_rounds / max_events{hint}", None, "a finite bounded model")
    dtmc = dtmc_from_kripke(k)
    use_exact = dtmc.is_exact if exact is None else exact
    ab = bottom_absorption(dtmc, exact=use_exact)

    def dist_of(values: Sequence[Hashable]) -> ObservableDistribution:
        return observable_distribution(dtmc, values, exact=use_exact, absorbed=ab)

    rel = dist_of(list(k.observables["releases"]))
    upd = {c: dist_of(list(k.observables[f"updates:{c}"])).dist for c in ts.clients}
    joint = dist_of(list(zip(*(k.observables[f"updates:{c}"] for c in ts.clients), strict=True))).dist
    tr = dist_of(list(k.observables["trace"])).dist if record_trace else None
    obs = DatasetObservation(frozenset(sys_d.initial.igra.dataset), dict(rel.dist), upd, joint, tr,
                             k.num_states, k.num_transitions, rel.exact, undetermined=rel.missing,
                             kripke=k if keep_kripke else None)
    if check_scheduler:
        obs.scheduler_independent = _scheduler_independent(k, list(k.observables["releases"]))
    return obs


def _scheduler_independent(k: Kripke, values: list[Hashable]) -> bool | None:
    """Whether ``Pmin = Pmax`` (over all schedulers, within 1e-9) for every eventual value; ``None``
    (not checked) when runs may end in cycles or states × outcomes exceeds 4·10⁶."""
    mdp = mdp_from_kripke(k)
    if mdp.is_dtmc:
        return True
    comps = bottom_components(mdp.induced_dtmc("uniform"))
    if any(len(c) > 1 for c in comps):
        return None
    ends: dict[Hashable, list[int]] = {}
    for (t,) in comps:
        ends.setdefault(values[t], []).append(t)
    if k.num_states * len(ends) > 4_000_000:  # dense states × outcomes matrices: not checked
        return None
    targets = np.zeros((k.num_states, len(ends)), dtype=bool)
    for j, ts in enumerate(ends.values()):
        targets[ts, j] = True
    lo = mdp_reach_many(mdp, targets, "min")
    hi = mdp_reach_many(mdp, targets, "max")
    init = [s for s, _ in mdp.initial]
    return bool(np.max(np.abs(hi[init] - lo[init]), initial=0.0) <= 1e-9)


# ---------------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------------


@dataclass
class DecompositionResult:
    """``NI_Decomposition`` (seed 004, III-C) on one neighbouring pair.

    ``client_eps[c]``: ε* of client ``c``'s update distribution; ``partition_relation[c]``: ``"equal"``,
    ``"neighbours"`` (``partition G0 c ◇1 partition G1 c`` in the pair's reading), ``"other"``, or
    ``"chosen by put_part"`` (the data are not yet deployed: counted as constrained);
    ``premise_eps``: the smallest ε meeting the theorem's premise (max ε* over clients whose partitions
    are neighbours; 0 when none is); ``global_eps``: ε* of the released models; ``conclusion_holds``:
    ``global ≤ premise_eps`` (the theorem, instantiated with the smallest ε its premise allows);
    ``max_rule_holds``: the seed's "ε = max of the local ε" (global ≤ max over all clients);
    ``sum_bound``: Σ_c ε_c; ``joint_eps``: ε* of all clients' updates together, ``post_processing_holds``:
    global ≤ joint — it FAILS when the release is not a function of the updates alone, which is the
    case whenever the FedAvg weights ``card (partition G c) / card (dataset G)`` differ between the two
    datasets (add/remove-one, or a replaced point that moves to another client); ``rounds``: per-round
    conditional ε of the releases, ``composition_holds``: global ≤ Σ rounds (the chain rule: always
    true, a check of the computation)."""

    client_eps: dict[str, EpsilonResult]
    partition_relation: dict[str, str]
    premise_eps: EpsilonResult | None
    global_eps: EpsilonResult
    conclusion_holds: bool
    max_rule_holds: bool
    sum_bound: Eps
    sum_bound_holds: bool
    joint_eps: EpsilonResult
    post_processing_holds: bool
    rounds: list[EpsilonResult]
    composition_holds: bool

    def json(self) -> dict[str, object]:
        return {
            "client_epsilon": {c: e.json() for c, e in self.client_eps.items()},
            "partition_relation": self.partition_relation,
            "premise_epsilon": None if self.premise_eps is None else self.premise_eps.json(),
            "global_epsilon": self.global_eps.json(),
            "conclusion_holds": self.conclusion_holds,
            "max_rule_holds": self.max_rule_holds,
            "sum_of_client_epsilons": self.sum_bound.json(),
            "sum_bound_holds": self.sum_bound_holds,
            "joint_updates_epsilon": self.joint_eps.json(),
            "post_processing_holds": self.post_processing_holds,
            "per_round_epsilon": [r.json() for r in self.rounds],
            "composition_over_rounds_holds": self.composition_holds,
        }


@dataclass
class PairResult:
    """One neighbouring pair ``(D0, D1)`` in one reading: ε*, δ(ε) at the checked ε, the verdict,
    the attackers' advantages and the bounds, and ``NI_Decomposition`` on the pair."""

    reading: str
    label: str
    d0: Dataset
    d1: Dataset
    p0: dict[Hashable, Number]
    p1: dict[Hashable, Number]
    epsilon: EpsilonResult
    eps_checked: Eps
    delta: Number
    verdict: Verdict
    best: AttackerResult
    attackers: list[AttackerResult]
    bounds: list[Bound]
    decomposition: DecompositionResult | None

    def json(self) -> dict[str, object]:
        return {
            "reading": self.reading,
            "pair": self.label,
            "epsilon": self.epsilon.json(),
            "epsilon_exact": self.epsilon.text(),
            "worst_outcome": show(self.epsilon.outcome),
            "worst_outcome_probabilities": [_num(self.epsilon.p0), _num(self.epsilon.p1)],
            "delta": _num(self.delta),
            "verdict": str(self.verdict),
            "advantage": {"best": _num(self.best.advantage),
                          "attackers": {a.name: _num(a.advantage) for a in self.attackers}},
            "bounds": {b.name: b.json() for b in self.bounds},
            "outcomes": [len(self.p0), len(self.p1)],
            "decomposition": None if self.decomposition is None else self.decomposition.json(),
        }


@dataclass
class LiteralCheck:
    """The seed's definitions read literally inside ONE Kripke structure (see module docstring)."""

    states: int
    complete: bool
    reachable_datasets: int
    dataset_neighbour_pairs: dict[str, int]
    premise_satisfiable: dict[str, bool]
    reachable_partitions: int
    partition_premise_pairs: dict[str, int]
    verdict: Verdict
    path_sums: list[dict[str, object]]
    explanation: str

    def json(self) -> dict[str, object]:
        return {
            "states": self.states, "complete": self.complete,
            "reachable_datasets": self.reachable_datasets,
            "dataset_neighbour_pairs": self.dataset_neighbour_pairs,
            "premise_satisfiable": self.premise_satisfiable,
            "reachable_partitions": self.reachable_partitions,
            "decomposition_partition_premise_pairs": self.partition_premise_pairs,
            "verdict": str(self.verdict), "path_sums": self.path_sums, "explanation": self.explanation,
        }


@dataclass
class PrivacyReport:
    """Everything ``flcheck privacy`` prints: the pairs, the worst one, the verdict, the literal
    check, and the parameters used."""

    observe: str
    eps: Eps | None
    pairs: list[PairResult]
    worst: PairResult | None
    verdict: Verdict
    vacuous: bool
    literal: LiteralCheck | None
    base: DatasetObservation
    readings: dict[str, int]
    scheduler: str = "uniform"
    notes: list[str] = field(default_factory=list)

    def json(self) -> dict[str, Any]:
        w = self.worst
        out: dict[str, Any] = {
            "epsilon": w.epsilon.json() if w else 0.0,
            "delta": _num(w.delta) if w else 0.0,
            "worst_pair": None if w is None else {"reading": w.reading, "pair": w.label,
                                                  "outcome": show(w.epsilon.outcome),
                                                  "epsilon_exact": w.epsilon.text()},
            "advantage": ({"best": _num(w.best.advantage),
                           "attackers": {a.name: _num(a.advantage) for a in w.attackers}}
                          if w else {"best": 0.0, "attackers": {}}),
            "bounds": {b.name: b.json() for b in w.bounds} if w else {},
            "vacuous": self.vacuous,
            "verdict": str(self.verdict),
            "observe": self.observe,
            "eps_checked": None if self.eps is None else self.eps.json(),
            "scheduler": self.scheduler,
            "scheduler_independent": self.base.scheduler_independent,
            "exact": self.base.exact,
            "pairs_per_reading": self.readings,
            "pairs": [p.json() for p in self.pairs],
            "literal": None if self.literal is None else self.literal.json(),
            "notes": self.notes,
        }
        return out


def _num(x: Number) -> float | str:
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return float(x)


def show(o: object) -> str:
    """A compact rendering of an outcome (Fractions as a/b, at most 300 characters)."""
    text = repr(o) if not isinstance(o, tuple) else _show_tuple(o)
    return text if len(text) <= 300 else text[:297] + "..."


def _show_tuple(o: tuple[Any, ...]) -> str:
    def one(x: Any) -> str:
        if isinstance(x, Fraction):
            return str(x)
        if isinstance(x, tuple):
            return "(" + ", ".join(one(y) for y in x) + ")"
        if isinstance(x, frozenset):
            return "{" + ", ".join(sorted(one(y) for y in x)) + "}"
        return str(x)
    return one(o)


# ---------------------------------------------------------------------------------------------------
# The analysis
# ---------------------------------------------------------------------------------------------------


def _pair_label(d0: Dataset, d1: Dataset) -> str:
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
            return Fraction(o[r][i])
        return low  # no such round in this run
    return f


def _releases_from_trace(trace: Hashable) -> tuple[Hashable, ...]:
    return tuple(v for kind, _, v in trace if kind == "eval_server")  # type: ignore[misc, union-attr]


def _observed(obs: DatasetObservation, mode: str, client: str | None) -> dict[Hashable, Number]:
    if mode == "curmodpar":
        return obs.releases
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


def _decomposition(system: FLSystem, o0: DatasetObservation, o1: DatasetObservation,
                   reading: NeighbourReading) -> DecompositionResult:
    s0, s1 = system.with_dataset(o0.dataset), system.with_dataset(o1.dataset)
    clients = list(system.clients)
    client_eps = {c: pure_epsilon(o0.updates[c], o1.updates[c]) for c in clients}
    relation: dict[str, str] = {}
    for c in clients:
        a, b = s0.initial.igra.part(c), s1.initial.igra.part(c)
        if not s0.initial_partitioned and not system.initial_partitioned:
            relation[c] = "chosen by put_part"
        elif a == b:
            relation[c] = "equal"
        elif neighbours_1(a, b, reading):
            relation[c] = "neighbours"
        else:
            relation[c] = "other"
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
    joint_eps = pure_epsilon(o0.joint, o1.joint)
    rounds = per_round_epsilons(o0.releases, o1.releases)  # type: ignore[arg-type]
    return DecompositionResult(
        client_eps, relation, premise, global_eps, conclusion, _le(global_eps, worst_client), sum_bound,
        _le(global_eps, sum_bound), joint_eps, _le(global_eps, joint_eps), rounds,
        _le(global_eps, _sum_eps(rounds)))


def privacy_report(system: FLSystem, universe: Iterable[DataPoint] | None = None, *,
                   observe: str = "curmodpar", eps: Eps | float | str | None = None,
                   readings: Sequence[NeighbourReading] = NEIGHBOUR_READINGS, limits: Limits | None = None,
                   literal: bool = True, check_scheduler: bool = True, decomposition: bool = True,
                   exact: bool | None = None,
                   declared: Sequence[tuple[str, Iterable[DataPoint]]] = ()) -> PrivacyReport:
    """NI-FL-DP of ``system`` at its dataset ``D`` against every neighbouring dataset drawn from
    ``universe`` (default: ``D`` itself, which gives removals only) under each reading.

    ``eps``: the ε to decide (``None``: decide whether the model is ε-DP for some finite ε, and
    evaluate the bounds at the model's ε*).  ``declared``: further named neighbouring datasets (e.g. a
    scenario's ``neighbour`` declarations), reported with reading ``"declared"``.  The verdict is
    ``holds vacuously`` when no neighbouring
    dataset exists."""
    mode, client = parse_observe(observe, system.clients)
    e = None if eps is None else Eps.of(eps)
    base_data: Dataset = frozenset(system.initial.igra.dataset)
    uni = set(base_data) | set(universe or ())
    record_trace = mode == "trace"
    cache: dict[Dataset, DatasetObservation] = {}

    def get(d: Dataset) -> DatasetObservation:
        if d not in cache:
            cache[d] = observe_dataset(system, d, record_trace=record_trace,
                                       record_updates=decomposition or mode == "client", limits=limits,
                                       check_scheduler=check_scheduler and d == base_data, exact=exact)
        return cache[d]

    base = get(base_data)
    pairs: list[PairResult] = []
    per_reading: dict[str, int] = {}
    jobs: list[tuple[str, NeighbourReading, Dataset, str]] = []
    for reading in readings:
        nbs = list(neighbours(base_data, uni, reading))
        per_reading[reading] = len(nbs)
        jobs += [(reading, reading, d1, _pair_label(base_data, d1)) for d1 in nbs]
    for name, data in declared:
        d1 = frozenset(data)
        as_reading: NeighbourReading = "replace_one" if len(d1) == len(base_data) else "add_remove_one"
        jobs.append(("declared", as_reading, d1, f"{name}: {_pair_label(base_data, d1)}"))
    if declared:
        per_reading["declared"] = len(declared)
    for shown, reading, d1, label in jobs:
        o1 = get(d1)
        p0, p1 = _observed(base, mode, client), _observed(o1, mode, client)
        res = pure_epsilon(p0, p1)
        checked = e if e is not None else (res.as_eps() if not res.infinite else Eps(value=Fraction(0)))
        delta = delta_for_epsilon(p0, p1, checked)
        if e is not None:
            verdict = ni_fl_dp(p0, p1, e)
        else:
            verdict = Verdict.VIOLATED if res.infinite else Verdict.HOLDS
        sample = list(p0) + list(p1)
        feats = _features(mode, [_releases_from_trace(o) for o in sample] if mode == "trace" else sample)
        if mode == "trace":
            feats = {n: (lambda o, f=f: f(_releases_from_trace(o))) for n, f in feats.items()}
        atts = attackers_from_features(p0, p1, feats)
        bs = bounds(atts[0].advantage, checked, delta)
        decomp = _decomposition(system, base, o1, reading) if decomposition else None
        pairs.append(PairResult(shown, label, base_data, d1, dict(p0), dict(p1),
                                res, checked, delta, verdict, atts[0], atts, bs, decomp))
    worst = None
    for p in pairs:
        if worst is None or (worst.epsilon.ratio is not None and (
                p.epsilon.ratio is None or p.epsilon.ratio > worst.epsilon.ratio)):
            worst = p
    vacuous = not pairs
    if vacuous:
        verdict = Verdict.HOLDS_VACUOUSLY
    else:
        verdict = Verdict.HOLDS if all(p.verdict == Verdict.HOLDS for p in pairs) else Verdict.VIOLATED
    notes = []
    if base.scheduler_independent is False:
        notes.append("the release distribution depends on the scheduler: results are for the uniform "
                     "scheduler over enabled actions")
    if base.undetermined:
        notes.append(f"probability {float(base.undetermined):.3g} of runs without an eventual observation")
    if per_reading.get("replace_one") == 0:
        notes.append("no replace-one neighbour: the universe has no data point outside the dataset")
    lit = literal_check(system, limits=limits) if literal else None
    return PrivacyReport(observe, e, pairs, worst, verdict, vacuous, lit, base, per_reading, notes=notes)


def literal_check(system: FLSystem, *, limits: Limits | None = None, max_path_sums: int = 3) -> LiteralCheck:
    """The seed's ``NI_FL_DP I s0 s1 ε`` and ``NI_Decomposition`` read literally, inside the one Kripke
    structure ``M = Kripke {t. I →FL* t} {I}`` of ``system`` (bounded as the system is).

    Collects the datasets and partitions of all reachable states; the premise
    ``dataset G0 ◇1 dataset G1`` is satisfiable iff two reachable datasets are neighbours (never, when
    only one dataset is reachable); the per-client premise of ``NI_Decomposition`` is counted over
    pairs of reachable partitions.  Also compares the seed's path sum ``P(M ⊢F {curmodpar = v})`` with
    the first-passage probability for the initial ``curmodpar`` and a few released values (on the
    observed structure, uniform scheduler)."""
    k = explore(system, limits=limits or Limits(max_states=50_000),
                observables=["dataset", "curmodpar"],
                keep_states=True)
    datasets = set(k.observables["dataset"])
    parts = {s.infra.igra.partition for s in k.states} if k.states is not None else set()  # type: ignore[attr-defined]
    ds = sorted(datasets, key=lambda d: sorted(d))
    pairs_n = {r: sum(1 for i, a in enumerate(ds) for b in ds[i + 1:] if neighbours_1(a, b, r))
               for r in NEIGHBOUR_READINGS}
    satisfiable = {r: n > 0 for r, n in pairs_n.items()}
    plist = list(parts)
    clients = list(system.clients)
    part_pairs = {r: sum(1 for i, a in enumerate(plist) for b in plist[i + 1:]
                         if all(neighbours_1(a[c], b[c], r) for c in clients))
                  for r in NEIGHBOUR_READINGS}
    verdict = Verdict.HOLDS_VACUOUSLY if not any(satisfiable.values()) else Verdict.UNKNOWN
    if not k.complete:
        verdict = Verdict.UNKNOWN
    # path sums vs first passage on the observed (release-stopped) structure
    ps: list[dict[str, object]] = []
    obs = ObservedSystem(system, record_updates=False)
    ko = explore(obs, limits=limits or DEFAULT_LIMITS, observables=["curmodpar"],  # type: ignore[arg-type]
                 keep_states=False)
    if ko.complete:
        d = dtmc_from_kripke(ko)
        vals = list(ko.observables["curmodpar"])
        init_val = vals[int(ko.initial[0])]
        others = [v for v in dict.fromkeys(vals) if v != init_val]
        candidates = [init_val, *others[: max_path_sums - 1]]
        for v in candidates:
            target = np.array([x == v for x in vals], dtype=bool)
            res = path_sum(d, target)
            ps.append({"curmodpar": show(v), "path_sum": _num(res.value) if not res.diverges else "inf",
                       "first_passage": _num(res.first_passage), "differs": res.differs_from_first_passage})
    expl = (f"{len(datasets)} reachable dataset(s) in {k.num_states} states"
            f"{'' if k.complete else ' (exploration incomplete: ' + str(k.limit_reason) + ')'}: "
            + ("the rules never change the dataset, so 'dataset G0 ◇1 dataset G1' can never hold inside one "
               "Kripke structure (◇1 is irreflexive in both readings); NI_FL_DP I s0 s1 ε and the "
               "conclusion of NI_Decomposition hold vacuously"
               if len(datasets) == 1 else "neighbouring datasets are reachable"))
    return LiteralCheck(k.num_states, k.complete, len(datasets), pairs_n, satisfiable, len(parts), part_pairs,
                        verdict, ps, expl)
