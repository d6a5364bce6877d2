"""Exact values and upper bounds for :mod:`checker.privacy.schedulers` (its facts 3 and 4).

* :class:`Scale` decides the sign of ``A − e^ε B`` exactly (values of δ are kept as pairs ``(A, B)``);
* :func:`outcome_distributions`, :func:`uniform_distributions`: the outcome distributions of D and D'
  under a deterministic scheduler (node -> action) or the uniform one;
* :func:`linear_programme`: ``max_σ Σ_leaves leaf(h)`` over deterministic history-dependent schedulers
  restricted to allowed actions, bottom up over the history tree (fact 3 of
  :mod:`checker.privacy.schedulers`);
* :class:`DeltaRelaxation`, :class:`EpsilonRelaxation`: for a partly fixed scheduler, an upper bound
  over its completions with witness schedulers, and the exact value of a complete scheduler.

This module is generic (it never imports ``flmodel``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Generic, Literal, TypeVar

import mpmath

from checker.privacy.ni_fl_dp import Eps, Number, ratio_within
from checker.privacy.observable_mdp import Action, HistoryTree, ordered

__all__ = [
    "Allowed",
    "Choice",
    "DeltaRelaxation",
    "Direction",
    "EpsilonRelaxation",
    "OutcomeKind",
    "Pair",
    "Ratio",
    "Relaxation",
    "Scale",
    "add_pairs",
    "charged_event",
    "finals_separate",
    "linear_programme",
    "max_ratio",
    "outcome_distributions",
    "ratio_epsilon",
    "ratio_of",
    "uniform_distributions",
]

OutcomeKind = Literal["sequence", "final"]
Direction = Literal[0, 1]
#: ``(A, B)`` standing for ``A − e^ε B``.
Pair = tuple[Number, Number]
#: A deterministic scheduler on a history tree: node id -> action.
Choice = dict[int, Action]
#: For each node the actions a scheduler may play there.
Allowed = Sequence[tuple[Action, ...]]
Ratio = Fraction | float
V = TypeVar("V")


# ---------------------------------------------------------------------------------------------------
# Exact arithmetic with A − e^ε B
# ---------------------------------------------------------------------------------------------------


class Scale:
    """Signs and values of ``A − α B`` for ``α = e^ε``, decided exactly for exact inputs."""

    def __init__(self, eps: Eps, exact: bool):
        self.eps = eps
        self.exact = exact
        self.zero: Number = Fraction(0) if exact else 0.0
        self.alpha = eps.exp_exact() if exact else None

    def sign(self, a: Number, b: Number) -> int:
        if self.eps.infinite:
            return -1 if b > 0 else 1 if b < 0 else (a > 0) - (a < 0)
        if not self.exact:
            v = float(a) - self.eps.exp_float() * float(b)
            return (v > 0) - (v < 0)
        if self.alpha is not None:
            exact_value = Fraction(a) - self.alpha * Fraction(b)
            return (exact_value > 0) - (exact_value < 0)
        # α transcendental: A − αB = 0 only for A = B = 0; otherwise compare the rational A/B with α.
        if b == 0:
            return (a > 0) - (a < 0)
        if b > 0:
            return -1 if a <= 0 or ratio_within(Fraction(a) / Fraction(b), self.eps) else 1
        return 1 if a >= 0 or ratio_within(Fraction(-a) / Fraction(-b), self.eps) else -1

    def less(self, u: Pair, v: Pair) -> bool:
        return self.sign(u[0] - v[0], u[1] - v[1]) < 0

    def value(self, pair: Pair) -> Number:
        a, b = pair
        if self.eps.infinite:
            return a
        if not self.exact:
            return max(float(a) - self.eps.exp_float() * float(b), 0.0)
        if self.alpha is not None:
            return Fraction(a) - self.alpha * Fraction(b)
        with mpmath.workdps(50):
            e = self.eps.value
            assert e is not None
            alpha = mpmath.exp(mpmath.mpf(e.numerator) / e.denominator)
            return max(float(mpmath.mpf(Fraction(a).numerator) / Fraction(a).denominator
                              - alpha * mpmath.mpf(Fraction(b).numerator) / Fraction(b).denominator), 0.0)


def add_pairs(u: Pair, v: Pair) -> Pair:
    return (u[0] + v[0], u[1] + v[1])


def ratio_of(p: Number, q: Number) -> Ratio:
    """``p / q`` (``inf`` when ``q = 0 < p``; ``0`` when both vanish)."""
    if q == 0:
        return math.inf if p > 0 else 0
    return Fraction(p) / Fraction(q) if isinstance(p, Fraction) and isinstance(q, Fraction) else p / q


def ratio_epsilon(r: Ratio) -> float:
    return math.inf if r == math.inf else (0.0 if r <= 1 else math.log(r))


# ---------------------------------------------------------------------------------------------------
# Outcome distributions of a scheduler
# ---------------------------------------------------------------------------------------------------


def sides(tree: HistoryTree, direction: Direction) -> tuple[list[Number], list[Number]]:
    first = [m[direction] for m in tree.mass]
    second = [m[1 - direction] for m in tree.mass]
    return first, second


def outcome_distributions(tree: HistoryTree, choice: Mapping[int, Action], kind: OutcomeKind
                   ) -> tuple[dict[Hashable, Number], dict[Hashable, Number]]:
    """``(P_D, P_D')`` over outcomes under the deterministic scheduler ``choice``."""
    zero: Number = Fraction(0) if tree.exact else 0.0
    p_d: dict[Hashable, Number] = {}
    p_dp: dict[Hashable, Number] = {}
    stack = list(tree.roots)
    while stack:
        node = stack.pop()
        if tree.is_leaf(node):
            o = tree.outcome(node, kind)
            p_d[o] = p_d.get(o, zero) + tree.mass[node][0]
            p_dp[o] = p_dp.get(o, zero) + tree.mass[node][1]
        else:
            stack.extend(tree.children[node][choice[node]])
    return p_d, p_dp


def uniform_distributions(tree: HistoryTree, kind: OutcomeKind = "sequence"
                          ) -> tuple[dict[Hashable, Number], dict[Hashable, Number]]:
    """``(P_D, P_D')`` over outcomes under the uniform scheduler: ``P(o) = Σ_{leaves h with outcome o}
    m(h) Π_{prefixes} 1/|enabled|``, outcomes with different action sequences merged."""
    one: Number = Fraction(1) if tree.exact else 1.0
    zero = one - one
    weight: dict[int, Number] = {r: one for r in tree.roots}
    p_d: dict[Hashable, Number] = {}
    p_dp: dict[Hashable, Number] = {}
    for node in range(len(tree)):
        w = weight.pop(node)
        if tree.is_leaf(node):
            o = tree.outcome(node, kind)
            p_d[o] = p_d.get(o, zero) + w * tree.mass[node][0]
            p_dp[o] = p_dp.get(o, zero) + w * tree.mass[node][1]
            continue
        share = w / len(tree.enabled[node])
        for kids in tree.children[node].values():
            for child in kids:
                weight[child] = share
    return p_d, p_dp


def charged_event(first: Mapping[Hashable, Number], second: Mapping[Hashable, Number], scale: Scale
           ) -> tuple[Pair, tuple[Hashable, ...]]:
    """The hockey-stick of ``first`` against ``second`` as a pair, and the outcomes charged."""
    total: Pair = (scale.zero, scale.zero)
    charged = []
    for o in ordered([*first, *second]):
        a, b = first.get(o, scale.zero), second.get(o, scale.zero)
        if scale.sign(a, b) > 0:
            total = add_pairs(total, (a, b))
            charged.append(o)
    return total, tuple(charged)


def max_ratio(first: Mapping[Hashable, Number], second: Mapping[Hashable, Number]
               ) -> tuple[Ratio, Hashable]:
    best: tuple[Ratio, Hashable] = (-1, None)
    for o in ordered([*first, *second]):
        r = ratio_of(first.get(o, 0), second.get(o, 0))
        if r > best[0]:
            best = (r, o)
    return best


# ---------------------------------------------------------------------------------------------------
# Relaxations: history-dependent optima with some choices fixed (facts 3 and 4)
# ---------------------------------------------------------------------------------------------------

def linear_programme(tree: HistoryTree, allowed: Allowed, leaf: Callable[[int], V],
                      add: Callable[[V, V], V], less: Callable[[V, V], bool], zero: V,
                      support: Support | None = None) -> tuple[V, Choice]:
    """``max_σ Σ_leaves leaf(h)`` over deterministic schedulers playing ``allowed`` actions, bottom up.

    ``support``: when ``leaf`` is ``zero`` outside a set of leaves, that set's :class:`Support`; only
    those leaves and their ancestors are evaluated (every other node is worth ``zero`` and plays its
    first allowed action, the choice the full pass makes there), which gives the same value and
    the same scheduler."""
    nodes: Sequence[int] = range(len(tree) - 1, -1, -1) if support is None else support.nodes
    value: dict[int, V] = {}
    choice: Choice = {n: allowed[n][0] for n in range(len(tree)) if not tree.is_leaf(n)}
    for node in nodes:
        if tree.is_leaf(node):
            value[node] = leaf(node)
            continue
        best: V | None = None
        for action in allowed[node]:
            total = zero
            for child in tree.children[node][action]:
                v = value.get(child)
                if v is not None:
                    total = add(total, v)
            if best is None or less(best, total):
                best, choice[node] = total, action
        assert best is not None
        value[node] = best
    total = zero
    for root in tree.roots:
        v = value.get(root)
        if v is not None:
            total = add(total, v)
    return total, choice


class Support:
    """A set of leaves of a history tree with their ancestors, deepest first (node ids descend: a
    parent comes before its children in the tree)."""

    def __init__(self, tree: HistoryTree, parent: Sequence[int], leaves: set[int]):
        nodes = set(leaves)
        stack = list(leaves)
        while stack:
            up = parent[stack.pop()]
            if up >= 0 and up not in nodes:
                nodes.add(up)
                stack.append(up)
        self.nodes = sorted(nodes, reverse=True)


def parents(tree: HistoryTree) -> list[int]:
    """The parent of every node of ``tree`` (``-1`` for a root)."""
    parent = [-1] * len(tree)
    for node in range(len(tree)):
        for kids in tree.children[node].values():
            for child in kids:
                parent[child] = node
    return parent


def leaves_by_final(tree: HistoryTree) -> dict[Hashable, set[int]]:
    groups: dict[Hashable, set[int]] = {}
    for leaf in tree.leaves():
        groups.setdefault(tree.observation(leaf), set()).add(leaf)
    return {o: groups[o] for o in ordered(groups)}


def final_supports(tree: HistoryTree, finals: Mapping[Hashable, set[int]]) -> dict[Hashable, Support]:
    """The :class:`Support` of each final observation's leaves."""
    if not finals:
        return {}
    parent = parents(tree)
    return {o: Support(tree, parent, members) for o, members in finals.items()}


def finals_separate(tree: HistoryTree, max_entries: int = 5_000_000) -> bool:
    """Whether no deterministic scheduler reaches two leaves with the same last observation.

    Under a deterministic scheduler two reached leaves part where the history branches on an
    observation (the actions are the scheduler's).  So it suffices that at every such branching (the
    first observation included) the leaves below different observations have disjoint sets of last
    observations — e.g. when the observation records everything seen so far.  Then every outcome of a
    scheduler is one leaf, δ and ε* decompose per leaf as for ``sequence`` outcomes (fact 3 of
    :mod:`checker.privacy.schedulers`), and the bottom-up programme is exact.  ``False`` also when the
    sets would hold more than ``max_entries`` entries in all (the caller then falls back to the branch
    and bound)."""
    below: dict[int, frozenset[Hashable]] = {}
    entries = 0
    for node in range(len(tree) - 1, -1, -1):  # children first
        if tree.is_leaf(node):
            below[node] = frozenset((tree.observation(node),))
            entries += 1
            continue
        union: set[Hashable] = set()
        for kids in tree.children[node].values():
            seen: set[Hashable] = set()
            for child in kids:
                mine = below.pop(child)
                if not seen.isdisjoint(mine):
                    return False
                seen |= mine
            union |= seen
        below[node] = frozenset(union)
        entries += len(union)
        if entries > max_entries:
            return False
    seen = set()  # the first observation is a branching too
    for root in tree.roots:
        if not seen.isdisjoint(below[root]):
            return False
        seen |= below[root]
    return True


class Relaxation(ABC, Generic[V]):
    """An upper bound over the schedulers that play ``allowed`` actions, with witness schedulers."""

    @abstractmethod
    def bound(self, allowed: Allowed) -> tuple[V, list[Choice]]:
        """An upper bound of the value over the schedulers restricted to ``allowed``, and witnesses."""

    @abstractmethod
    def evaluate(self, choice: Choice) -> tuple[V, Hashable, Pair]:
        """The exact value of a complete scheduler, its decisive outcome/event and ``(P_D, P_D')``."""

    @abstractmethod
    def less(self, u: V, v: V) -> bool:
        """Whether value ``u`` is below value ``v``."""


class DeltaRelaxation(Relaxation[Pair]):
    def __init__(self, tree: HistoryTree, direction: Direction, kind: OutcomeKind, scale: Scale):
        self.tree, self.direction, self.kind, self.scale = tree, direction, kind, scale
        self.first, self.second = sides(tree, direction)
        #: every outcome of a deterministic scheduler is one leaf: the bound is the exact programme
        self.per_leaf = kind == "sequence" or finals_separate(tree)
        self.finals = leaves_by_final(tree) if not self.per_leaf else {}
        self.supports = final_supports(tree, self.finals)

    def less(self, u: Pair, v: Pair) -> bool:
        return self.scale.less(u, v)

    def bound(self, allowed: Allowed) -> tuple[Pair, list[Choice]]:
        zero: Pair = (self.scale.zero, self.scale.zero)
        if self.per_leaf:
            def leaf(node: int) -> Pair:
                pair = (self.first[node], self.second[node])
                return pair if self.scale.sign(*pair) > 0 else zero
            total, choice = linear_programme(self.tree, allowed, leaf, add_pairs, self.less, zero)
            return total, [choice]
        total = zero
        witnesses: list[tuple[Pair, Choice]] = []
        for o, members in self.finals.items():
            def term(node: int, members: set[int] = members) -> Pair:
                return (self.first[node], self.second[node]) if node in members else zero
            best, choice = linear_programme(self.tree, allowed, term, add_pairs, self.less, zero,
                                            self.supports[o])
            if self.scale.sign(*best) > 0:
                total = add_pairs(total, best)
                witnesses.append((best, choice))
        witnesses.sort(key=lambda w: float(self.scale.value(w[0])), reverse=True)
        return total, [c for _, c in witnesses] or [linear_programme(
            self.tree, allowed, lambda _n: zero, add_pairs, self.less, zero)[1]]

    def evaluate(self, choice: Choice) -> tuple[Pair, Hashable, Pair]:
        dists = outcome_distributions(self.tree, choice, self.kind)
        first, second = dists[self.direction], dists[1 - self.direction]
        total, charged = charged_event(first, second, self.scale)
        return total, charged, (total[0], total[1]) if self.direction == 0 else (total[1], total[0])


class EpsilonRelaxation(Relaxation[Ratio]):
    def __init__(self, tree: HistoryTree, direction: Direction, kind: OutcomeKind):
        self.tree, self.direction, self.kind = tree, direction, kind
        self.first, self.second = sides(tree, direction)
        self.per_leaf = kind == "sequence" or finals_separate(tree)
        self.finals = leaves_by_final(tree) if not self.per_leaf else {}
        self.supports = final_supports(tree, self.finals)
        self.zero: Number = Fraction(0) if tree.exact else 0.0

    def less(self, u: Ratio, v: Ratio) -> bool:
        return u < v

    def bound(self, allowed: Allowed) -> tuple[Ratio, list[Choice]]:
        if self.per_leaf:
            return self._best_leaf(allowed)
        return self._dinkelbach(allowed)

    def _best_leaf(self, allowed: Allowed) -> tuple[Ratio, list[Choice]]:
        def leaf(node: int) -> Ratio:
            return ratio_of(self.first[node], self.second[node])
        none_yet: Ratio = -1
        best, choice = linear_programme(self.tree, allowed, leaf, max, _ratio_less, none_yet)
        return best, [choice]

    def _dinkelbach(self, allowed: Allowed) -> tuple[Ratio, list[Choice]]:
        zero = self.zero
        # ε* = ∞ iff some scheduler reaches Q(o) = 0 < P(o): minimise Q, then maximise P (lexicographic).
        for o, members in self.finals.items():
            def lexical(node: int, members: set[int] = members) -> Pair:
                return (self.second[node], self.first[node]) if node in members else (zero, zero)
            (q, p), choice = linear_programme(self.tree, allowed, lexical, add_pairs, _lexically_less,
                                              (zero, zero), self.supports[o])
            if q == 0 and p > 0:
                return math.inf, [choice]
        ratio: Ratio = 0
        best_choice: Choice | None = None
        for _ in range(10_000):
            candidates: list[tuple[Number, Choice, Hashable]] = []
            for o, members in self.finals.items():
                def linear(node: int, members: set[int] = members, ratio: Ratio = ratio) -> Number:
                    return self.first[node] - ratio * self.second[node] if node in members else zero
                gain, choice = linear_programme(self.tree, allowed, linear, lambda u, v: u + v,
                                                 lambda u, v: u < v, zero, self.supports[o])
                if gain > 0:
                    candidates.append((gain, choice, o))
            if not candidates:
                break
            _, choice, o = max(candidates, key=lambda c: c[0])
            dists = outcome_distributions(self.tree, choice, self.kind)
            improved = ratio_of(dists[self.direction].get(o, zero), dists[1 - self.direction].get(o, zero))
            if improved <= ratio:  # floating-point rounding; exact arithmetic always improves
                break
            ratio, best_choice = improved, choice
        if best_choice is None:
            best_choice = linear_programme(self.tree, allowed, lambda _n: zero, lambda u, v: u + v,
                                            lambda u, v: u < v, zero)[1]
        return ratio, [best_choice]

    def evaluate(self, choice: Choice) -> tuple[Ratio, Hashable, Pair]:
        dists = outcome_distributions(self.tree, choice, self.kind)
        ratio, o = max_ratio(dists[self.direction], dists[1 - self.direction])
        return ratio, o, (dists[0].get(o, self.zero), dists[1].get(o, self.zero))


def _lexically_less(u: Pair, v: Pair) -> bool:
    """``u`` worse than ``v`` for "smallest first component, then largest second"."""
    return u[0] > v[0] or (u[0] == v[0] and u[1] < v[1])


def _ratio_less(u: Ratio, v: Ratio) -> bool:
    return u < v
