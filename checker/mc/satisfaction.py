"""Satisfaction sets of CTL formulas on one Kripke structure (IIIf MC: the set of states of ``f``).

:class:`SatisfactionSets` computes, memoised per sub-formula, the lower and upper bound of the set of
states satisfying a formula: bottom-up over the syntax, atoms by :mod:`checker.mc.atoms`, temporal
operators by the vectorised fixpoints of :mod:`checker.mc.fixpoints` (the universal ones as duals of the
existential ones), on an explicit stack. Every formula is first checked against the structure's
vocabulary (:mod:`checker.mc.vocabulary`). Verdicts, evidence and vacuity build on it
(:mod:`checker.mc.ctl`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from checker.errors import InputError
from checker.mc import ctl_ast, reach
from checker.mc.atoms import AtomEvaluator
from checker.mc.ctl_parse import parse_formula
from checker.mc.explore import LazyObservables
from checker.mc.fixpoints import Graph, Semantics
from checker.mc.kripke import Kripke
from checker.mc.vocabulary import ValueType, Vocabulary, check_formula

Bounds = tuple[np.ndarray, np.ndarray]


class SatisfactionSets:
    """Satisfaction sets of CTL formulas on one structure under one semantics, memoised per
    sub-formula (formulas are compared structurally), so repeated or shared sub-formulas cost nothing.

    Parameters
    ----------
    kripke:
        The structure (complete or incomplete).
    semantics:
        ``"iiif"`` (default, IIIf deadlock semantics) or ``"total"`` (deadlocks get a self-loop).
    """

    def __init__(self, kripke: Kripke, semantics: Semantics | str = Semantics.IIIF):
        self.kripke = kripke
        self.semantics = Semantics(semantics)
        self.graph = Graph(kripke, self.semantics)
        self.atoms = AtomEvaluator(kripke)
        self.exact = self.graph.frontier is None
        self._memo: dict[ctl_ast.Formula, Bounds] = {}
        self.vocabulary = vocabulary_of_kripke(kripke)
        self._checked: set[ctl_ast.Formula] = set()
        #: Decides a nested ``P``/``D`` bound: the states satisfying it (``None``: refused).
        self.probabilistic: Callable[[ctl_ast.ProbQuery | ctl_ast.DPQuery], np.ndarray] | None = None
        n = kripke.num_states
        self._true = np.ones(n, dtype=bool)
        self._false = np.zeros(n, dtype=bool)

    # ------------------------------------------------------------------ public set operations
    def sat(self, formula: ctl_ast.Formula | str) -> np.ndarray:
        """The states that certainly satisfy ``formula`` (exact on a complete structure)."""
        return self.sat_bounds(formula)[0]

    def sat_bounds(self, formula: ctl_ast.Formula | str) -> Bounds:
        """``(lower, upper)`` bounds of the satisfaction set (identical arrays when complete)."""
        f = as_formula(formula)
        got = self._memo.get(f)
        if got is None:
            if f not in self._checked:
                check_formula(f, self.vocabulary)
                self._checked.add(f)
            got = self._bounds(f)
        return got

    def ef(self, target: np.ndarray) -> np.ndarray:
        """``EF target`` for an arbitrary boolean state set (lower bound on incomplete structures)."""
        return self.graph.eu(self._true, np.asarray(target, dtype=bool))

    def eu(self, f: np.ndarray, g: np.ndarray) -> np.ndarray:
        """``E[f U g]`` for arbitrary state sets."""
        return self.graph.eu(np.asarray(f, dtype=bool), np.asarray(g, dtype=bool))

    def path(self, start: int, target: np.ndarray, through: np.ndarray | None = None) -> list[int] | None:
        """A shortest path from ``start`` to a ``target`` state, all earlier states in ``through``
        (default: anywhere); ``None`` if there is none."""
        thr = self._true if through is None else np.asarray(through, dtype=bool)
        return reach.shortest_path(self.graph.ptr, self.graph.dst, int(start), np.asarray(target, dtype=bool),
                                   thr)

    # ------------------------------------------------------------------ evaluation
    def _both(self, fn: Callable[..., np.ndarray], *args: Bounds) -> Bounds:
        """Apply a monotone primitive to lower bounds (pessimistic) and upper bounds (optimistic)."""
        lo = fn(*(a[0] for a in args), False)
        if self.exact:
            return lo, lo
        return lo, fn(*(a[1] for a in args), True)

    def _neg(self, b: Bounds) -> Bounds:
        lo, hi = b
        if lo is hi:
            neg = ~lo
            return neg, neg
        return ~hi, ~lo

    def _probabilistic(self, f: ctl_ast.ProbQuery | ctl_ast.DPQuery) -> Bounds:
        """A ``P``/``D`` operator nested in CTL: decided by :attr:`probabilistic` (set by a caller that
        has the structure's probabilities), else refused."""
        if isinstance(f, ctl_ast.ProbQuery) and f.is_query:
            raise InputError(f"{f.quantifier}=? is a query, not a condition", f.pos,
                             f"{f.quantifier}=? at the top of the property, or a bound such as "
                             f"{f.quantifier}>=0.5 inside it")
        if self.probabilistic is None:
            if isinstance(f, ctl_ast.DPQuery):
                raise InputError("D{ε,δ}[ψ] compares two systems: it is a whole property, not part of a "
                                 "formula", f.pos,
                                 "D{ε,δ}[ψ] alone, between a scenario and a declared neighbour")
            raise InputError(f"{f.quantifier} operators need the model's probabilities", f.pos,
                             "an explicit model (.tra/.lab) or a scenario")
        sat = self.probabilistic(f)
        return sat, sat

    def _bounds(self, root: ctl_ast.Formula) -> Bounds:
        """Bounds of ``root`` and its sub-formulas, bottom-up on an explicit stack (a formula nested
        thousands of operators deep needs no recursion)."""
        memo = self._memo
        stack = [root]
        while stack:
            f = stack[-1]
            if f in memo:
                stack.pop()
                continue
            missing = [d for d in _dependencies(f) if d not in memo]
            if missing:
                stack.extend(missing)
                continue
            memo[f] = self._combine(f)
            stack.pop()
        return memo[root]

    def _combine(self, f: ctl_ast.Formula) -> Bounds:
        """The bounds of ``f`` from those of its :func:`_dependencies` (already in the memo)."""
        graph, memo = self.graph, self._memo
        if isinstance(f, ctl_ast.TrueF):
            return self._true, self._true
        if isinstance(f, ctl_ast.FalseF):
            return self._false, self._false
        if isinstance(f, ctl_ast.Atom):
            lo, hi = self.atoms.evaluate(f)
            return (lo, lo) if self.exact else (lo, hi)
        rewritten = _rewrite(f)
        if rewritten is not None:
            return memo[rewritten]
        if isinstance(f, ctl_ast.Not):
            return self._neg(memo[f.arg])
        if isinstance(f, ctl_ast.And | ctl_ast.Or):
            parts = [memo[a] for a in f.args]
            op = np.logical_and if isinstance(f, ctl_ast.And) else np.logical_or
            start = self._true if isinstance(f, ctl_ast.And) else self._false
            lo = start.copy()
            for p in parts:
                op(lo, p[0], out=lo)
            if self.exact:
                return lo, lo
            hi = start.copy()
            for p in parts:
                op(hi, p[1], out=hi)
            return lo, hi
        if isinstance(f, ctl_ast.EX):
            return self._both(graph.ex, memo[f.arg])
        if isinstance(f, ctl_ast.EF):
            return self._both(lambda x, o: graph.eu(self._true, x, o), memo[f.arg])
        if isinstance(f, ctl_ast.EG):
            return self._both(graph.eg, memo[f.arg])
        if isinstance(f, ctl_ast.EU):
            return self._both(graph.eu, memo[f.left], memo[f.right])
        if isinstance(f, ctl_ast.PROBABILISTIC):
            return self._probabilistic(f)
        raise TypeError(f"not a CTL formula: {f!r}")


def _rewrite(f: ctl_ast.Formula) -> ctl_ast.Formula | None:
    """The formula over ``! & | EX EF EG EU`` that ``f`` abbreviates (``None``: ``f`` is one of those)."""
    if isinstance(f, ctl_ast.Implies):
        return ctl_ast.Or((ctl_ast.Not(f.left), f.right))
    if isinstance(f, ctl_ast.Iff):
        return ctl_ast.Or(
            (ctl_ast.And((f.left, f.right)), ctl_ast.And((ctl_ast.Not(f.left), ctl_ast.Not(f.right))))
        )
    if isinstance(f, ctl_ast.ER):  # E[f R g] = E[g U (f ∧ g)] ∨ EG g
        return ctl_ast.Or((ctl_ast.EU(f.right, ctl_ast.And((f.left, f.right))), ctl_ast.EG(f.right)))
    # universal operators: duals of the existential ones (fixpoints module docstring)
    if isinstance(f, ctl_ast.AX):
        return ctl_ast.Not(ctl_ast.EX(ctl_ast.Not(f.arg)))
    if isinstance(f, ctl_ast.AG):
        return ctl_ast.Not(ctl_ast.EF(ctl_ast.Not(f.arg)))
    if isinstance(f, ctl_ast.AF):
        return ctl_ast.Not(ctl_ast.EG(ctl_ast.Not(f.arg)))
    if isinstance(f, ctl_ast.AR):
        return ctl_ast.Not(ctl_ast.EU(ctl_ast.Not(f.left), ctl_ast.Not(f.right)))
    if isinstance(f, ctl_ast.AU):
        nl, nr = ctl_ast.Not(f.left), ctl_ast.Not(f.right)
        return ctl_ast.Not(ctl_ast.Or((ctl_ast.EU(nr, ctl_ast.And((nl, nr))), ctl_ast.EG(nr))))
    return None


def _dependencies(f: ctl_ast.Formula) -> tuple[ctl_ast.Formula, ...]:
    """The formulas whose bounds :meth:`SatisfactionSets._combine` needs for ``f``."""
    rewritten = _rewrite(f)
    return (rewritten,) if rewritten is not None else f.children()


def vocabulary_of_kripke(kripke: Kripke) -> Vocabulary:
    """The vocabulary a structure carries: the one its builder gave, else its labels, the rules of
    its actions and its observables (boolean and integer arrays typed, other values unchecked; an
    explored structure's lazy columns are not evaluated for this)."""
    if kripke.vocabulary is not None:
        return kripke.vocabulary
    observables: dict[str, ValueType] = {}
    for name in kripke.observables:
        values = None if isinstance(kripke.observables, LazyObservables) else kripke.observables[name]
        if isinstance(values, np.ndarray) and values.dtype.kind == "b":
            observables[name] = ValueType("bool")
        elif isinstance(values, np.ndarray) and values.dtype.kind in "iu":
            observables[name] = ValueType("int")
        elif isinstance(values, list) and values and all(isinstance(v, bool) for v in values):
            observables[name] = ValueType("bool")
        else:
            observables[name] = ValueType("any")
    rules = frozenset(a.rule for a in kripke.actions) | frozenset(str(a) for a in kripke.actions)
    return Vocabulary(labels=frozenset(kripke.labels), observables=observables, rules=rules)


def as_formula(formula: ctl_ast.Formula | str) -> ctl_ast.Formula:
    if isinstance(formula, ctl_ast.Formula):
        return formula
    return parse_formula(formula)
