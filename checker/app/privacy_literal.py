"""[IIIf-FL]'s ``NI_FL_DP I s0 s1 ε`` and ``NI_Decomposition`` read literally (Section III-C).

The definition quantifies over states ``s0``, ``s1`` reachable from ONE initial infrastructure ``I`` in
ONE Kripke structure with ``dataset G0 ◇1 dataset G1``. No published rule changes ``dataset``
(``put_part`` requires it and keeps it, ``get_grad`` and ``eval_server`` copy it), so every reachable
state has the dataset of ``I`` and ``◇1`` — irreflexive under both readings — can never hold: the
definition (and ``NI_Decomposition``, whose conclusion is ``NI_FL_DP``) holds vacuously.
:func:`literal_check` proves this on the model by collecting the reachable datasets, and reports the
per-client partition premise of ``NI_Decomposition``, which CAN be met inside one structure
(``put_part`` chooses the partition). It also contrasts the seed's path sum ``P(M ⊢F {curmodpar = v})``
with first passage (:mod:`checker.markov.core`).

Given the judged pair (the report's worst pair: the distributions ``P0``, ``P1`` of what the attacker
observes under ``D0`` and ``D1``), it also shows the published definition's remaining flaws
(spec/SPEC.md, R32–R35):

* R32 :func:`published_form`: the definition compares ``curmodpar G0`` under ``D0`` with ``curmodpar G1``
  under ``D1`` — two different outcomes.  With ``G0``, ``G1`` universally quantified over final states
  (R34) it holds at ε iff ``P0(o0) ≤ e^ε P1(o1)`` and ``P1(o1) ≤ e^ε P0(o0)`` for all ``o0 ∈ supp P0``,
  ``o1 ∈ supp P1``: its smallest ε is ``ln max(max P0 / min P1, max P1 / min P0)``, beside the DP form's
  ``ε* = max_o |ln P0(o)/P1(o)|`` (one outcome under both datasets, [DworkRoth14] Def. 2.4);
* R33 :func:`reversed_inequality`: III-C's ``D0 ≤ e^ε D1 ≡ D1 ≤ e^{−ε} D0`` at the checked ε and the
  decisive outcome, beside the correct ``D1 ≥ e^{−ε} D0`` (which always agrees with the first);
* R34/R35 :data:`FREE_VARIABLES`: the variables the definitions leave free and the reading taken;
* :func:`decomposition_premise`: ``NI_Decomposition``'s per-client premise
  ``∀c. partition G0 c ◇1 partition G1 c`` across the two systems (of ``D0`` and of ``D1``), counted
  over the partitions each may hold.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Literal, cast

import numpy as np

from checker.app.privacy_observation import ObservedSystem, Recorded, ReducedStep, StepReducer
from checker.app.privacy_results import LiteralCheck, PairResult, number_json, outcome_text
from checker.app.value_reductions import forgettable, reduce_values
from checker.markov.models import dtmc_from_kripke
from checker.markov.pathsum import path_sum
from checker.mc import reach
from checker.mc.cone import cone_of_influence
from checker.mc.explore import Limits, explore
from checker.mc.kripke import Kripke
from checker.privacy.ni_fl_dp import Eps, EpsilonResult, ratio_within
from checker.render import value_text
from checker.verdict import Verdict
from flmodel.data import (
    NEIGHBOUR_READINGS,
    DataPoint,
    Dataset,
    Partition,
    is_partition,
    neighbours_1,
    partitions,
)
from flmodel.system import FLState
from flmodel.view import FLView

__all__ = [
    "FREE_VARIABLES",
    "PartitionPremise",
    "ReversedInequality",
    "decomposition_premise",
    "exp_compare",
    "literal_check",
    "published_form",
    "reversed_inequality",
]

Number = Fraction | float

#: R34/R35: the variables ``NI_FL_DP`` and ``NI_Decomposition`` leave free, and the reading taken.
FREE_VARIABLES: tuple[dict[str, str], ...] = (
    {"variable": "M", "definition": "NI_FL_DP", "reading": "Kripke {t. I →FL* t} {I} (R29)"},
    {"variable": "G0", "definition": "NI_FL_DP", "reading": "igra s0, s0 any final state of D0's system"},
    {"variable": "G1", "definition": "NI_FL_DP", "reading": "igra s1, s1 any final state of D1's system"},
    {"variable": "ε", "definition": "NI_Decomposition", "reading": "∀ε, the premise at its smallest ε"},
)

#: At most this many partitions per dataset enter :func:`decomposition_premise`'s count.
MAX_PARTITIONS = 200


# --- R32: two different outcomes --------------------------------------------------------------------


def published_form(p0: Mapping[Hashable, Number], p1: Mapping[Hashable, Number]) -> EpsilonResult:
    """The smallest ε of ``NI_FL_DP`` as published (R32), with ``G0``, ``G1`` universally quantified over
    the final states (R34): ``P0(o0) ≤ e^ε P1(o1)`` and ``P1(o1) ≤ e^ε P0(o0)`` for all ``o0 ∈ supp P0``,
    ``o1 ∈ supp P1``, i.e. ``e^ε = max(max P0 / min P1, max P1 / min P0)`` (≥ 1, since the product of
    the two ratios is ≥ 1).  An empty support leaves nothing to compare (``ε = 0``).

    The result's ``outcome`` is the decisive pair ``(o0, o1)``, ``p0 = P0(o0)``, ``p1 = P1(o1)``;
    ``direction`` 0 when ``P0(o0) ≤ e^ε P1(o1)`` is the tight bound, 1 when the other one is.  Exact
    (``Fraction``) when both distributions are.

    >>> published_form({"a": Fraction(1)}, {"b": Fraction(1)}).text()  # pure ε* = ∞, published 0
    '0'
    """
    # in the order of the outcomes' text: among equal probabilities the decisive pair is the same
    # whatever order the exploration met them in
    s0 = sorted(((o, v) for o, v in p0.items() if v > 0), key=lambda t: repr(t[0]))
    s1 = sorted(((o, v) for o, v in p1.items() if v > 0), key=lambda t: repr(t[0]))
    exact = all(isinstance(v, Fraction | int) for _, v in s0 + s1)
    if not s0 or not s1:
        return EpsilonResult(0.0, Fraction(1) if exact else 1.0, None, 0, Fraction(0), Fraction(0), exact)
    hi0, lo0 = max(s0, key=lambda t: t[1]), min(s0, key=lambda t: t[1])
    hi1, lo1 = max(s1, key=lambda t: t[1]), min(s1, key=lambda t: t[1])
    if exact:
        r0: Number = Fraction(hi0[1]) / Fraction(lo1[1])
        r1: Number = Fraction(hi1[1]) / Fraction(lo0[1])
    else:
        r0, r1 = float(hi0[1]) / float(lo1[1]), float(hi1[1]) / float(lo0[1])
    if r0 >= r1:
        return EpsilonResult(math.log(r0), r0, (hi0[0], lo1[0]), 0, hi0[1], lo1[1], exact)
    return EpsilonResult(math.log(r1), r1, (lo0[0], hi1[0]), 1, lo0[1], hi1[1], exact)


def _same_epsilon(a: EpsilonResult, b: EpsilonResult) -> bool:
    if a.ratio is None or b.ratio is None:
        return a.ratio is None and b.ratio is None
    if a.exact and b.exact:
        return Fraction(a.ratio) == Fraction(b.ratio)
    return math.isclose(float(a.ratio), float(b.ratio), rel_tol=1e-9)


# --- R33: the reversed inequality ---------------------------------------------------------------------


def _equals_exp(r: Fraction, eps: Eps) -> bool:
    """``r = e^ε`` for finite ``eps``: exact when ``e^ε`` is rational; for rational ε ≠ 0 never
    (``e^ε`` is transcendental, Lindemann–Weierstrass)."""
    exact = eps.exp_exact()
    return exact is not None and r == exact


def exp_compare(x: Number, relation: Literal["<=", ">="], sign: Literal[1, -1], eps: Eps, y: Number) -> bool:
    """Decide ``x ≤ e^{sign·ε}·y`` (``relation`` ``"<="``) or ``x ≥ e^{sign·ε}·y`` exactly, for
    probabilities ``x``, ``y ≥ 0`` (a float is read as the rational it is).

    For ε = ∞, ``e^{+∞}·y`` is read as ``+∞`` (ε = ∞ constrains nothing) and ``e^{−∞}·y`` as 0.
    Otherwise with ``r = x / y``: ``x ≤ e^ε y ⟺ r ≤ e^ε``, ``x ≤ e^{−ε} y ⟺ 1/r ≥ e^ε``,
    ``x ≥ e^ε y ⟺ ¬(r < e^ε)``, ``x ≥ e^{−ε} y ⟺ 1/r ≤ e^ε``, each decided by
    :func:`~checker.privacy.ni_fl_dp.ratio_within` (and an exact equality test where ``e^ε`` is rational)."""
    fx, fy = Fraction(x), Fraction(y)
    if eps.infinite:
        if sign > 0:
            return relation == "<="
        return fx <= 0 if relation == "<=" else True
    if fy == 0:
        return fx == 0 if relation == "<=" else True
    if fx == 0:
        return relation == "<="
    r = fx / fy
    if sign > 0:
        if relation == "<=":
            return ratio_within(r, eps)
        return not ratio_within(r, eps) or _equals_exp(r, eps)
    inv = 1 / r
    if relation == "<=":
        return not ratio_within(inv, eps) or _equals_exp(inv, eps)
    return ratio_within(inv, eps)


@dataclass(frozen=True)
class ReversedInequality:
    """III-C's ``D0 ≤ e^ε D1 ≡ D1 ≤ e^{−ε} D0`` (R33) at one ε and one outcome: ``d0``, ``d1`` are the
    outcome's probabilities in the order that makes ``D0 ≤ e^ε D1`` the tight bound (``swapped``: ``D0``
    is the probability under the pair's second dataset — III-C's "swap the order of the data sets");
    ``stated`` is ``D0 ≤ e^ε D1``, ``claimed_equivalent`` ``D1 ≤ e^{−ε} D0``, ``correct_equivalent``
    ``D1 ≥ e^{−ε} D0`` (always equal to ``stated``)."""

    eps: Eps
    outcome: Hashable
    d0: Number
    d1: Number
    swapped: bool
    stated: bool
    claimed_equivalent: bool
    correct_equivalent: bool

    def json(self, observe: str = "curmodpar") -> dict[str, object]:
        return {"epsilon": self.eps.json(), "epsilon_exact": self.eps.text(),
                "outcome": outcome_text(self.outcome, observe),
                "D0": number_json(self.d0), "D1": number_json(self.d1), "swapped": self.swapped,
                "D0 <= e^eps D1": self.stated, "D1 <= e^-eps D0": self.claimed_equivalent,
                "D1 >= e^-eps D0": self.correct_equivalent}


def reversed_inequality(d0: Number, d1: Number, eps: Eps, outcome: Hashable = None, *,
                        swapped: bool = False) -> ReversedInequality:
    """The three inequalities of R33 for ``D0 = d0``, ``D1 = d1`` at ``eps`` (:func:`exp_compare`)."""
    return ReversedInequality(eps, outcome, d0, d1, swapped,
                              exp_compare(d0, "<=", 1, eps, d1),
                              exp_compare(d1, "<=", -1, eps, d0),
                              exp_compare(d1, ">=", -1, eps, d0))


# --- NI_Decomposition's premise across the two systems ------------------------------------------------


@dataclass(frozen=True)
class PartitionPremise:
    """``∀c ∈ clients. partition G0 c ◇1 partition G1 c`` between a partition ``G0`` of ``D0``'s
    system and one ``G1`` of ``D1``'s: ``partitions`` the number each system may hold (its initial one,
    plus every partition ``put_part`` may choose when ``put_part`` fires; at most
    :data:`MAX_PARTITIONS` each, ``bounded`` when cut), ``counts[reading]`` the pairs meeting the premise
    among the ``examined`` pairs, ``deployed_counts[reading]`` those among them in which both partitions
    are disjoint covers of their datasets (``put_part``'s choices, or deployed initial parts: the
    structural facts bind these), ``facts[reading]`` the structural reason, ``fixed_owners``: one
    partition per dataset (``put_part`` never fires)."""

    clients: tuple[str, ...]
    partitions: tuple[int, int]
    examined: int
    bounded: bool
    fixed_owners: bool
    counts: dict[str, int]
    deployed_counts: dict[str, int]
    facts: dict[str, str]

    def json(self) -> dict[str, object]:
        return {"clients": list(self.clients), "partitions": list(self.partitions),
                "pairs_examined": self.examined, "bounded": self.bounded,
                "fixed_owners": self.fixed_owners, "pairs_meeting_premise": dict(self.counts),
                "deployed_pairs_meeting_premise": dict(self.deployed_counts), "facts": dict(self.facts)}

    def text(self) -> str:
        cut = f" (bounded: at most {MAX_PARTITIONS} partitions per dataset)" if self.bounded else ""
        how = "one fixed partition each" if self.fixed_owners else "put_part chooses"
        counts = ", ".join(f"{r} {n}" for r, n in self.counts.items())
        deployed = ""
        if self.deployed_counts != self.counts:
            deployed = (" (between deployed partitions: "
                        + ", ".join(f"{r} {n}" for r, n in self.deployed_counts.items())
                        + "; the others pair a not yet deployed initial partition, which the facts below "
                          "do not bind)")
        return (f"{counts} of {self.examined} pairs of partitions ({self.partitions[0]} of D0 x "
                f"{self.partitions[1]} of D1, {how}){cut}{deployed}; " + "; ".join(self.facts.values()))


def _initial_partition(system: FLView, data: Dataset) -> Partition:
    if data == frozenset(system.initial.igra.dataset):
        return system.initial.igra.partition
    return system.with_dataset(data).initial.igra.partition


def _choosable(system: FLView, data: Dataset, put_part_fires: bool,
               limit: int) -> tuple[list[Partition], bool]:
    init = _initial_partition(system, data)
    out = [init]
    if not put_part_fires:
        return out, False
    rest = (p for p in partitions(data, system.clients) if p != init)
    out += itertools.islice(rest, max(limit - 1, 0))
    return out, next(rest, None) is not None


def _facts(d0: Dataset, d1: Dataset, k: int, fixed: tuple[Partition, Partition] | None,
           clients: tuple[str, ...]) -> dict[str, str]:
    """The structural reasons, for partitions that are disjoint covers (``put_part``'s choices)."""
    removed, added, common = len(d0 - d1), len(d1 - d0), len(d0 & d1)
    moved = k - removed
    chain = removed == added and 0 <= moved <= common
    delta = len(d1) - len(d0)
    parity = (delta - k) % 2 == 0 and abs(delta) <= k
    possible = "possible if put_part chooses" if fixed is not None else "possible here"
    out = {
        "replace_one": (f"replace-one needs each of the {k} clients to lose one point and gain one: a chain "
                        f"of {max(moved, 0)} moved point(s) through every client "
                        + (f"({possible})" if chain else
                           f"(impossible: {removed} removed, {added} added, {common} common point(s))")),
        "add_remove_one": (f"add/remove-one changes each part by one, so |D1| - |D0| = {delta} needs the "
                           f"parity of the {k} clients " + ("(it has)" if parity else "(it has not)")),
    }
    if fixed is not None:
        changed = [c for c in clients if fixed[0].get(c, frozenset()) != fixed[1].get(c, frozenset())]
        out["fixed_owners"] = (f"fixed owners: only {len(changed)} of the {k} clients' parts change "
                               + ("(◇1 is irreflexive: the premise cannot be met)" if len(changed) < k
                                  else "(every client owns a changed point)"))
    return out


def decomposition_premise(system: FLView, d0: Dataset, d1: Dataset, *, put_part_fires: bool = True,
                          max_partitions: int = MAX_PARTITIONS) -> PartitionPremise:
    """``NI_Decomposition``'s per-client premise across the systems of ``d0`` and ``d1``.

    The partitions each system may hold are its initial one and, when ``put_part`` fires (it does not
    read the data), every ``Part`` with ``dataset G = ⋃•_c Part c`` (:func:`flmodel.data.partitions`).
    Counted, per neighbour reading, the pairs in which every client's part is a neighbour of its
    counterpart, in all and between disjoint covers.  Structural facts for disjoint covers over ``K``
    clients: replace-one makes every client lose one point and gain one, so ``|D0∖D1| = |D1∖D0|`` and
    ``K − |D0∖D1|`` common points move along a chain through every client; add/remove-one changes every
    part's size by ±1, so ``|D1| − |D0| ≡ K (mod 2)`` (with a one-point size change: an odd number of
    clients); with fixed owners only the owners of changed points change part, so some client keeps its
    part whenever ``K`` exceeds them.  An initial partition that does not cover its dataset (nothing
    deployed yet: empty parts) is bound by none of these facts."""
    clients = tuple(sorted(system.clients))
    parts0, cut0 = _choosable(system, d0, put_part_fires, max_partitions)
    parts1, cut1 = _choosable(system, d1, put_part_fires, max_partitions)
    cover0 = [is_partition(d0, clients, a) for a in parts0]
    cover1 = [is_partition(d1, clients, b) for b in parts1]
    counts: dict[str, int] = dict.fromkeys(NEIGHBOUR_READINGS, 0)
    deployed: dict[str, int] = dict.fromkeys(NEIGHBOUR_READINGS, 0)
    for r in NEIGHBOUR_READINGS:
        for a, ca in zip(parts0, cover0, strict=True):
            for b, cb in zip(parts1, cover1, strict=True):
                if all(neighbours_1(a.get(c, frozenset()), b.get(c, frozenset()), r) for c in clients):
                    counts[r] += 1
                    deployed[r] += ca and cb
    fixed = None if put_part_fires else (parts0[0], parts1[0])
    return PartitionPremise(clients, (len(parts0), len(parts1)), len(parts0) * len(parts1), cut0 or cut1,
                            not put_part_fires, counts, deployed,
                            _facts(d0, d1, len(clients), fixed, clients))


def _flaws(pair: PairResult, system: FLView, put_part_fires: bool, observe: str
           ) -> tuple[dict[str, object], dict[str, object] | None, dict[str, object], list[str]]:
    """The JSON of R32, R33 and the premise across the systems for ``pair``, and one line for each."""
    dp = pair.epsilon
    pub = published_form(pair.p0, pair.p1)
    agree = _same_epsilon(pub, dp)
    o0, o1 = pub.outcome if isinstance(pub.outcome, tuple) and len(pub.outcome) == 2 else (None, None)
    pub_json: dict[str, object] = {
        "epsilon": pub.json(), "epsilon_exact": pub.text(),
        "outcomes": None if pub.outcome is None else [outcome_text(o0, observe), outcome_text(o1, observe)],
        "probabilities": [number_json(pub.p0), number_json(pub.p1)],
        "dp_epsilon": dp.json(), "dp_epsilon_exact": dp.text(), "agree": agree}
    where = ("" if pub.outcome is None else
             f" ({outcome_text(o0, observe)} under D0 with P0 = {value_text(pub.p0)} against "
             f"{outcome_text(o1, observe)} under D1 with P1 = {value_text(pub.p1)})")
    lines = [f"R32 two outcomes: the published form (curmodpar G0 under D0 vs curmodpar G1 under D1, "
             f"G0, G1 over final states) needs ε = {pub.text()}{where}; the DP form (one outcome under both) "
             f"ε* = {dp.text()}: {'they agree' if agree else 'they DISAGREE'}"]
    rev_json = None
    if dp.outcome is not None:
        swapped = dp.direction == 1
        a, b = (dp.p1, dp.p0) if swapped else (dp.p0, dp.p1)
        rev = reversed_inequality(a, b, pair.eps_checked, dp.outcome, swapped=swapped)
        rev_json = rev.json(observe)
        order = "P1, P0 (the sets swapped)" if swapped else "P0, P1"
        lines.append(f"R33 reversed inequality at ε = {pair.eps_checked.text()}, outcome "
                     f"{outcome_text(dp.outcome, observe)} (D0, D1 = {order} = {value_text(a)}, "
                     f"{value_text(b)}): "
                     f"D0 ≤ e^ε D1 {_tv(rev.stated)}; III-C's 'equivalent' D1 ≤ e^-ε D0 "
                     f"{_tv(rev.claimed_equivalent)}; the correct D1 ≥ e^-ε D0 {_tv(rev.correct_equivalent)}")
    prem = decomposition_premise(system, pair.d0, pair.d1, put_part_fires=put_part_fires)
    prem_json = {"pair": pair.label, **prem.json()}
    lines.append(f"NI_Decomposition premise across the two systems ({pair.label}): {prem.text()}")
    return pub_json, rev_json, prem_json, lines


def _tv(flag: bool) -> str:
    return "true" if flag else "false"


#: The literal reading is a side analysis of the unreduced structure: its explorations stop here (and
#: say so), so that a model the reductions make small is still judged when its literal structure is not.
LITERAL_MAX_STATES = 200_000


def _literal_limits(limits: Limits | None) -> Limits:
    """``limits`` with at most :data:`LITERAL_MAX_STATES` states (the memory limit kept)."""
    if limits is None:
        return Limits(max_states=LITERAL_MAX_STATES)
    cap = LITERAL_MAX_STATES if limits.max_states is None else min(limits.max_states, LITERAL_MAX_STATES)
    return replace(limits, max_states=cap)


class _Stepped:
    """``system`` with the reduced successor function ``step`` (a transition system to explore)."""

    def __init__(self, system: FLView, step: Callable[[FLState], Sequence[ReducedStep]]):
        self.system, self._step = system, step

    def initial_states(self) -> Sequence[FLState]:
        return self.system.initial_states()

    def successors(self, state: FLState) -> list[tuple[Any, FLState, Fraction]]:
        return [(s[0], s[1], s[2]) for s in self._step(state)]

    def observable_names(self) -> Sequence[str]:
        return self.system.observable_names()

    def observe(self, state: FLState, name: str) -> object:
        return self.system.observe(state, name)


def _reachable(system: FLView, limits: Limits, reducer: StepReducer | None
               ) -> tuple[Kripke, set[Partition], dict[str, Any]]:
    """The structure ``M`` of ``system`` as far as the literal reading reads it (the datasets, the
    partitions and whether ``put_part`` fires), its reachable partitions and the reductions applied.

    The cone of influence of what is read ([COI], :mod:`checker.mc.cone`: the model and the gradients,
    when no rule's guard or effect on what is read depends on them) is forgotten; then ``reducer``'s
    reductions that keep the set of reachable values of what is read
    (:class:`~checker.app.privacy_observation.Recorded` with ``interleavings``: no partial order): the
    gradient sum (a functional bisimulation keeping every value but the gradients) and the symmetry
    (the orbit relation is a bisimulation for the atoms the group fixes: the dataset and the last rule
    are fixed by every permutation, [ES96]). The group moves partitions: when it applies and
    ``put_part`` never fires (a fact the bisimulation keeps), every state of ``M`` holds the initial
    partition, its only reachable one; when ``put_part`` fires the structure is explored again with
    every client's partition read (which fixes every client)."""
    names = ("dataset", "last_kind")
    every = (*names, *(f"partition:{c}" for c in system.clients))
    coned, cone = (system, {}) if reducer is None else _cone(system, every)
    for observing in (names, every):
        step, applied = (None, {}) if reducer is None else reducer.steps(
            coned, Recorded(observing, False, False, interleavings=True))
        if cone:
            applied = {"cone": cone, **applied}
        ts: Any = coned if step is None else _Stepped(coned, step)
        k = explore(ts, limits=limits, observables=["dataset", "curmodpar", "last_kind"], keep_states=True)
        symmetric = bool(applied.get("symmetry", {}).get("applied"))
        if not symmetric:
            states = cast(list[FLState], k.states) if k.states is not None else []
            return k, {s.infra.igra.partition for s in states}, applied
        if "put_part" not in set(k.observables["last_kind"]) and k.complete:
            return k, {system.initial_states()[0].infra.igra.partition}, applied
    raise AssertionError("every client's partition is read: no symmetry applies")  # pragma: no cover


def _cone(system: FLView, names: Sequence[str]) -> tuple[FLView, dict[str, Any]]:
    """``system`` forgetting the values outside the cone of influence of the observables ``names``, and
    what was forgotten (``{}``: nothing)."""
    classes = system.action_classes()
    if classes is None:
        return system, {}
    seeds: set[str] = set()
    for name in names:
        reads = system.variable_reads(name)
        if reads is None:
            return system, {}
        seeds |= reads
    forget = sorted(forgettable(system) - cone_of_influence(classes, seeds) - system.forgotten)
    if not forget:
        return system, {}
    return reduce_values(system, forget=forget), {"applied": True, "forgotten": forget}


def _candidates(ko: Kripke, count: int) -> list[Hashable]:
    """The released values whose path sums are shown: the initial ``curmodpar``, then the others by the
    length of the shortest run reaching them and by value (an order every reduction keeps)."""
    vals = list(ko.observables["curmodpar"])
    init_val = vals[int(ko.initial[0])]
    depth = reach.distances(ko.succ_ptr, ko.succ_idx, ko.initial).tolist()
    first: dict[Hashable, int] = {}
    for v, d in zip(vals, depth, strict=True):
        if v != init_val and d >= 0 and (v not in first or d < first[v]):
            first[v] = d
    try:
        others = sorted(first, key=lambda v: (first[v], v))
    except TypeError:  # values that do not compare: by their text
        others = sorted(first, key=lambda v: (first[v], repr(v)))
    return [init_val, *others[: max(count - 1, 0)]]


def literal_check(system: FLView, *, limits: Limits | None = None, max_path_sums: int = 3,
                  pair: PairResult | None = None, observe: str = "curmodpar",
                  reducer: StepReducer | None = None) -> LiteralCheck:
    """The seed's ``NI_FL_DP I s0 s1 ε`` and ``NI_Decomposition`` read literally, inside the one Kripke
    structure ``M = Kripke {t. I →FL* t} {I}`` of ``system`` (bounded as the system is).

    Collects the datasets and partitions of all reachable states; the premise
    ``dataset G0 ◇1 dataset G1`` is satisfiable iff two reachable datasets are neighbours (never, when
    only one dataset is reachable); the per-client premise of ``NI_Decomposition`` is counted over
    pairs of reachable partitions.  Also compares the seed's path sum ``P(M ⊢F {curmodpar = v})`` with
    the first-passage probability for the initial ``curmodpar`` and a few released values (on the
    observed structure, uniform scheduler; :func:`_candidates`).

    ``pair``: the judged pair (the report's worst pair; ``observe`` how its outcomes read): with it the
    check adds R32 (:func:`published_form` beside the pair's ε*), R33 (:func:`reversed_inequality` at
    the pair's checked ε and decisive outcome) and ``NI_Decomposition``'s premise across the systems of
    its two datasets (:func:`decomposition_premise`; ``put_part`` fires there iff it fires in this
    system's exploration).  The free variables (R34/R35) are listed in every case.

    ``reducer``: the reductions of the explorations that keep what is read of them (:func:`_reachable`;
    the path sums, expected numbers of visits, and first passage under the uniform scheduler are kept by
    the symmetry and the gradient sum, lumpings of the chain onto states that agree on ``curmodpar``,
    [KNP06]); ``states`` is then the reduced structure's, and ``reductions`` says what was applied."""
    limits = _literal_limits(limits)
    k, parts, applied = _reachable(system, limits, reducer)
    # the FL system's "dataset" observable is the frozenset of data points
    datasets = set(cast(list[frozenset[DataPoint]], k.observables["dataset"]))
    ds = sorted(datasets, key=lambda d: sorted(d))
    pairs_n: dict[str, int] = {
        r: sum(1 for i, a in enumerate(ds) for b in ds[i + 1:] if neighbours_1(a, b, r))
        for r in NEIGHBOUR_READINGS}
    satisfiable: dict[str, bool] = {r: n > 0 for r, n in pairs_n.items()}
    plist = list(parts)
    clients = list(system.clients)
    part_pairs: dict[str, int] = {r: sum(1 for i, a in enumerate(plist) for b in plist[i + 1:]
                         if all(neighbours_1(a[c], b[c], r) for c in clients))
                  for r in NEIGHBOUR_READINGS}
    verdict = Verdict.HOLDS_VACUOUSLY if not any(satisfiable.values()) else Verdict.UNKNOWN
    if not k.complete:
        verdict = Verdict.UNKNOWN
    # path sums vs first passage on the observed (release-stopped) structure
    ps: list[dict[str, object]] = []
    step, applied_observed = (None, {}) if reducer is None else reducer.steps(
        system, Recorded(("curmodpar",), False, False, interleavings=True))
    obs = ObservedSystem(system, record_updates=False, step=step)
    ko = explore(obs, limits=limits, observables=["curmodpar"],  # type: ignore[arg-type]  # ObservedSystem yields plain (action, state, probability) tuples, which explore reads as Steps
                 keep_states=False)
    if ko.complete:
        d = dtmc_from_kripke(ko)
        vals = list(ko.observables["curmodpar"])
        for v in _candidates(ko, max_path_sums):
            target = np.array([x == v for x in vals], dtype=bool)
            res = path_sum(d, target)
            ps.append({"curmodpar": outcome_text(v),
                       "path_sum": number_json(res.value) if not res.diverges else "inf",
                       "first_passage": number_json(res.first_passage),
                       "differs": res.differs_from_first_passage})
    expl = (f"{len(datasets)} reachable dataset(s) in {k.num_states} states"
            f"{'' if not applied else ' (reduced)'}"
            f"{'' if k.complete else ' (exploration incomplete: ' + str(k.limit_reason) + ')'}: "
            + ("the rules never change the dataset, so 'dataset G0 ◇1 dataset G1' can never hold inside one "
               "Kripke structure (◇1 is irreflexive in both readings); NI_FL_DP I s0 s1 ε and the "
               "conclusion of NI_Decomposition hold vacuously"
               if len(datasets) == 1 else "neighbouring datasets are reachable"))
    fires = "put_part" in set(k.observables["last_kind"])
    free = [dict(v) for v in FREE_VARIABLES]
    flaws: list[str] = []
    pub = rev = prem = None
    if pair is not None:
        pub, rev, prem, flaws = _flaws(pair, system, fires, observe)
    flaws.insert(max(len(flaws) - 1, 0), "R34/R35 free variables: " + "; ".join(
        f"{v['variable']} ({v['definition']}): {v['reading']}" for v in free))
    return LiteralCheck(k.num_states, k.complete, len(datasets), pairs_n, satisfiable, len(parts), part_pairs,
                        verdict, ps, expl, published_form=pub, reversed_inequality=rev, free_variables=free,
                        decomposition_premise=prem, flaws=flaws,
                        reductions={"structure": applied, "observed": applied_observed} if reducer else {})
