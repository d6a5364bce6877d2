"""``NI_Decomposition`` ([IIIf-FL], III-C) on a neighbouring pair, from explorations the reductions keep
small.

The figures (:class:`~checker.app.privacy_results.DecompositionResult`) need, per dataset, the distribution
of every client's update sequence, and, per pair, ε* of all clients' updates together (the *joint*
record). Recording every client's updates in one exploration, as the attacker's record of
:class:`~checker.app.privacy_observation.ObservedSystem`, makes the explored states as many as the joint
records: exponential in the number of clients (the generated swarm: ``(5·3^N − 1)/2``). With the
reductions of the privacy explorations (:class:`checker.app.reductions.ObservationReducer`) they are
computed instead as follows, exactly.

* :func:`client_updates` — one exploration per class of interchangeable clients, recording the updates
  of one client ``c`` of the class: the symmetry then fixes only ``c``, the gradient sum keeps the
  others' reports as their weighted sum (``c``'s update is read before), the partial order applies as for
  the core pair. A permutation ``π`` of a class is an automorphism of the system, and it maps the runs in
  which ``c`` reports ``x`` onto those in which ``π(c)`` does, with the same probabilities: every client
  of the class has the distribution of ``c``'s.
* :func:`joint_epsilon` — ε* of the joint record without enumerating it: a forward pass over pairs of
  states of the two systems reached by the same record. Its conditions, checked on every state it meets
  (else it returns ``None`` and the caller enumerates the joint record as before): the two systems are
  confluent for the joint record (one action per state gives every scheduler's distribution: the partial
  order of :class:`~checker.app.reductions.ObservationReducer`), the steps of that action either all add
  one update of one client, with distinct values, or none and have one outcome; the pair of states meets
  the same client's report on both sides. Then a record ``u`` is produced by exactly one run of each
  system, ``P_i(u)`` is the product of its steps' probabilities, and the state ``(s0, s1)`` a prefix of
  ``u`` leads to determines the continuations and their probabilities, so
  ``max_u P0(u)/P1(u) = max over the runs of the pair chain of the product of the step ratios``: each
  pair keeps the largest and the smallest ratio of the prefixes reaching it (the other prefixes cannot
  end in a larger or smaller one), exactly (rationals). A record one system produces and the other cannot
  (a value, a client or the end of the run on one side only) gives ε* = ∞. The pairs' states are the
  reduced ones (summed gradients, no record): polynomially many on the generated swarm.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from checker.app.privacy_observation import (
    DatasetObservation,
    ObservedSystem,
    Recorded,
    ReducedStep,
    StepReducer,
    Vector,
    observe_dataset,
)
from checker.errors import ExplorationIncomplete
from checker.mc.exploration import EXPLORATION_MEMORY_SHARE, Limits, stop_reason
from checker.privacy.ni_fl_dp import EpsilonResult, pure_epsilon
from flmodel.data import Dataset
from flmodel.system import FLState
from flmodel.view import FLView

__all__ = ["client_updates", "joint_epsilon", "joint_of"]

Number = Fraction | float
#: Pairs of states :func:`joint_epsilon` meets at most without ``limits.max_states``.
DEFAULT_MAX_PAIRS = 2_000_000


def client_updates(system: FLView, dataset: Dataset, reducer: StepReducer, *, limits: Limits | None,
                   exact: bool | None) -> tuple[dict[str, dict[Hashable, Number]], dict[str, Any]]:
    """Per client, the distribution of its update sequence at the end of the runs of ``system`` on
    ``dataset`` (module docstring), and what was explored: per class, the client recorded, its states
    and the reductions."""
    sys_d = system.with_dataset(dataset)
    out: dict[str, dict[Hashable, Number]] = {}
    info: list[dict[str, Any]] = []
    for cls in reducer.interchangeable(sys_d):
        seen = observe_dataset(sys_d, record_updates=True, update_clients=cls[:1], limits=limits,
                               check_scheduler=False, exact=exact, reducer=reducer)
        for c in cls:
            out[c] = seen.updates[cls[0]]
        info.append({"clients": list(cls), "recorded": cls[0], "states": seen.states,
                     "transitions": seen.transitions, "reductions": seen.reductions})
    return {c: out[c] for c in sys_d.clients}, {"per_class": info}


@dataclass
class _Best:
    """The largest (``hi``) and smallest (``lo``) ratio ``P0/P1`` of the record prefixes reaching a pair,
    with their probabilities and records."""

    hi: Number
    hi_p: tuple[Number, Number]
    hi_record: tuple[tuple[str, Vector], ...]
    lo: Number
    lo_p: tuple[Number, Number]
    lo_record: tuple[tuple[str, Vector], ...]

    def extend(self, r: Number, p0: Number, p1: Number, inc: tuple[str, Vector]) -> _Best:
        return _Best(self.hi * r, (self.hi_p[0] * p0, self.hi_p[1] * p1), (*self.hi_record, inc),
                     self.lo * r, (self.lo_p[0] * p0, self.lo_p[1] * p1), (*self.lo_record, inc))

    def merge(self, other: _Best) -> None:
        if other.hi > self.hi:
            self.hi, self.hi_p, self.hi_record = other.hi, other.hi_p, other.hi_record
        if other.lo < self.lo:
            self.lo, self.lo_p, self.lo_record = other.lo, other.lo_p, other.lo_record


class _Unsupported(Exception):
    """A condition of the pass fails (the reason)."""


Outcome = tuple[tuple[str, Vector] | None, FLState, Number]


class _Side:
    """One system of the pair: its reduced steps, read as record increments."""

    def __init__(self, system: FLView, step: Callable[[FLState], Sequence[ReducedStep]]):
        self.observed = ObservedSystem(system, step=step)
        self._step = step
        self.initial = self.normal(system.initial_states()[0])

    def outcomes(self, state: FLState) -> list[Outcome]:
        """The steps of the one action of ``state`` as ``(increment, target, probability)``."""
        if self.observed.ended(state):
            return []
        merged: dict[tuple[tuple[str, Vector] | None, FLState], Number] = {}
        for step in self._step(state):
            act, target, p = step[0], step[1], step[2]
            raw: FLState = step[3] if len(step) > 3 else target
            key = (self.observed.update(state, act, raw), target)
            merged[key] = merged[key] + p if key in merged else p
        return [(inc, t, p) for (inc, t), p in merged.items()]

    def normal(self, state: FLState) -> FLState:
        """Follow the steps that add nothing to the record (each must have one outcome)."""
        for _ in range(DEFAULT_MAX_PAIRS):
            steps = self.outcomes(state)
            if not steps or steps[0][0] is not None:
                return state
            if len(steps) > 1:
                raise _Unsupported("a step that records no update has several outcomes")
            state = steps[0][1]
        raise _Unsupported("a run that records no update does not end")

    def reports(self, state: FLState) -> dict[Vector, tuple[str, FLState, Number]]:
        """The outcomes of a reporting state by the update's value (one client's report)."""
        out: dict[Vector, tuple[str, FLState, Number]] = {}
        for inc, target, p in self.outcomes(state):
            if inc is None:
                raise _Unsupported("a step records an update on some outcomes only (a report lost in flight)")
            client, value = inc
            if value in out:
                raise _Unsupported("two outcomes of a report record the same update")
            out[value] = (client, self.normal(target), p)
        if len({c for c, _, _ in out.values()}) > 1:
            raise _Unsupported("one step records the updates of two clients")
        return out


def joint_epsilon(system: FLView, d0: Dataset, d1: Dataset, reducer: StepReducer, *,
                  limits: Limits | None = None) -> tuple[EpsilonResult | None, dict[str, Any]]:
    """ε* of the joint update record of ``system`` on ``d0`` against ``d1`` by the pass over pairs of
    states (module docstring), and what it did; ``None`` (with the reason) when a condition fails."""
    recorded = Recorded(("curmodpar",), True, False)  # every client's updates
    sides: list[_Side] = []
    for d in (d0, d1):
        sys_d = system.with_dataset(d)
        step, applied = reducer.steps(sys_d, recorded)
        if step is None or not applied.get("partial_order", {}).get("applied"):
            return None, {"method": "enumeration", "reason": "the joint record is not known to be confluent: "
                          + str(applied.get("partial_order", {}).get("reason", "partial order off"))}
        try:
            sides.append(_Side(sys_d, step))
        except _Unsupported as exc:
            return None, {"method": "enumeration", "reason": str(exc)}
    try:
        return _pass(sides[0], sides[1], [c for c in system.clients], limits or Limits())
    except _Unsupported as exc:
        return None, {"method": "enumeration", "reason": str(exc)}


def _pass(a: _Side, b: _Side, clients: list[str], limits: Limits) -> tuple[EpsilonResult, dict[str, Any]]:
    one: Number = Fraction(1)
    layer: dict[tuple[FLState, FLState], _Best] = {
        (a.initial, b.initial): _Best(one, (one, one), (), one, (one, one), ())}
    ends: _Best | None = None
    pairs = 0
    cap = limits.max_states or DEFAULT_MAX_PAIRS
    stops = limits.stops()
    exact = True
    while layer:
        nxt: dict[tuple[FLState, FLState], _Best] = {}
        pairs += len(layer)
        reason = stop_reason(limits, stops, EXPLORATION_MEMORY_SHARE)
        if reason is None and pairs > cap:
            reason = f"state limit of {cap} reached"
        if reason is not None:
            raise ExplorationIncomplete(f"the joint update record's pass stopped ({reason})", reason)
        for (s0, s1), best in layer.items():
            r0, r1 = a.reports(s0), b.reports(s1)
            if not r0 or not r1:
                if r0 or r1:  # the record ends on one side only
                    return _infinite(best, r0, r1, clients), {"method": "pairs of states", "pairs": pairs}
                if ends is None:
                    ends = best
                else:
                    ends.merge(best)
                continue
            c0, c1 = {c for c, _, _ in r0.values()}, {c for c, _, _ in r1.values()}
            if c0 != c1:
                raise _Unsupported("the two systems' next reports are of different clients")
            if r0.keys() != r1.keys():
                return _infinite(best, r0, r1, clients), {"method": "pairs of states", "pairs": pairs}
            for value, (client, t0, p0) in r0.items():
                _, t1, p1 = r1[value]
                exact = exact and isinstance(p0, Fraction) and isinstance(p1, Fraction)
                grown = best.extend(p0 / p1, p0, p1, (client, value))
                key = (t0, t1)
                if key in nxt:
                    nxt[key].merge(grown)
                else:
                    nxt[key] = grown
        layer = nxt
    assert ends is not None
    return _result(ends, clients, exact), {"method": "pairs of states", "pairs": pairs}


def joint_of(record: tuple[tuple[str, Vector], ...], clients: Sequence[str]
             ) -> tuple[tuple[Vector, ...], ...]:
    """A record of ``(client, update)`` increments as the joint outcome: each client's updates, in the
    order of ``clients`` (:class:`~checker.app.privacy_observation.DatasetObservation`'s ``joint``)."""
    return tuple(tuple(v for c, v in record if c == client) for client in clients)


def _result(ends: _Best, clients: Sequence[str], exact: bool) -> EpsilonResult:
    up, down = ends.hi, 1 / ends.lo
    if up >= down:
        ratio, outcome, (p0, p1), direction = up, ends.hi_record, ends.hi_p, 0
    else:
        ratio, outcome, (p0, p1), direction = down, ends.lo_record, ends.lo_p, 1
    if ratio == 1:
        direction = 0
    eps = math.log(ratio) if ratio != 1 else 0.0
    return EpsilonResult(eps, ratio if exact else float(ratio), joint_of(outcome, clients), direction, p0, p1,
                         exact)


def _infinite(best: _Best, r0: dict[Vector, Any], r1: dict[Vector, Any], clients: Sequence[str]
              ) -> EpsilonResult:
    """ε* = ∞: a record prefix (the highest-ratio one reaching the pair, extended by an update only one side
    makes, or ending on one side only) that one system produces and the other cannot."""
    only0 = [v for v in r0 if v not in r1]
    only1 = [v for v in r1 if v not in r0]
    if only0 or (not r1 and r0):
        value = only0[0] if only0 else next(iter(r0))
        client, _, p = r0[value]
        record, p0 = (*best.hi_record, (client, value)), best.hi_p[0] * p
        return EpsilonResult(math.inf, None, joint_of(record, clients), 0, p0, Fraction(0), True)
    if only1 or r1:
        value = only1[0] if only1 else next(iter(r1))
        client, _, p = r1[value]
        record, p1 = (*best.hi_record, (client, value)), best.hi_p[1] * p
        return EpsilonResult(math.inf, None, joint_of(record, clients), 1, Fraction(0), p1, True)
    return EpsilonResult(math.inf, None, joint_of(best.hi_record, clients), 0, best.hi_p[0], Fraction(0),
                         True)


def enumerated_joint(o0: DatasetObservation, o1: DatasetObservation) -> EpsilonResult:
    """ε* of the joint records the two observations enumerated."""
    assert o0.joint is not None and o1.joint is not None
    return pure_epsilon(o0.joint, o1.joint)
