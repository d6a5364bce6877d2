"""Satisfaction sets of CTL formulas on one Kripke structure (IIIf MC: the set of states of ``f``).

:class:`SatisfactionSets` computes, memoised per sub-formula, the lower and upper bound of the set of
states satisfying a formula: bottom-up over the syntax, atoms by :mod:`checker.mc.atoms`, temporal
operators by the vectorised fixpoints of :mod:`checker.mc.fixpoints` (the universal ones as duals of the
existential ones). Verdicts, evidence and vacuity build on it (:mod:`checker.mc.ctl`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from checker.mc import ctl_ast, reach
from checker.mc.atoms import AtomEvaluator
from checker.mc.ctl_parse import parse_formula
from checker.mc.fixpoints import Graph, Semantics
from checker.mc.kripke import Kripke

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
            got = self._compute(f)
            self._memo[f] = got
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

    def _compute(self, f: ctl_ast.Formula) -> Bounds:
        graph = self.graph
        if isinstance(f, ctl_ast.TrueF):
            return self._true, self._true
        if isinstance(f, ctl_ast.FalseF):
            return self._false, self._false
        if isinstance(f, ctl_ast.Atom):
            lo, hi = self.atoms.evaluate(f)
            return (lo, lo) if self.exact else (lo, hi)
        if isinstance(f, ctl_ast.Not):
            return self._neg(self.sat_bounds(f.arg))
        if isinstance(f, ctl_ast.And | ctl_ast.Or):
            parts = [self.sat_bounds(a) for a in f.args]
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
        if isinstance(f, ctl_ast.Implies):
            return self.sat_bounds(ctl_ast.Or((ctl_ast.Not(f.left), f.right)))
        if isinstance(f, ctl_ast.Iff):
            return self.sat_bounds(
                ctl_ast.Or(
                    (ctl_ast.And((f.left, f.right)), ctl_ast.And((ctl_ast.Not(f.left), ctl_ast.Not(f.right))))
                )
            )
        if isinstance(f, ctl_ast.EX):
            return self._both(graph.ex, self.sat_bounds(f.arg))
        if isinstance(f, ctl_ast.EF):
            return self._both(lambda x, o: graph.eu(self._true, x, o), self.sat_bounds(f.arg))
        if isinstance(f, ctl_ast.EG):
            return self._both(graph.eg, self.sat_bounds(f.arg))
        if isinstance(f, ctl_ast.EU):
            return self._both(graph.eu, self.sat_bounds(f.left), self.sat_bounds(f.right))
        if isinstance(f, ctl_ast.ER):
            # E[f R g] = E[g U (f ∧ g)] ∨ EG g
            return self.sat_bounds(
                ctl_ast.Or((ctl_ast.EU(f.right, ctl_ast.And((f.left, f.right))), ctl_ast.EG(f.right)))
            )
        # universal operators: duals of the existential ones (fixpoints module docstring)
        if isinstance(f, ctl_ast.AX):
            return self.sat_bounds(ctl_ast.Not(ctl_ast.EX(ctl_ast.Not(f.arg))))
        if isinstance(f, ctl_ast.AG):
            return self.sat_bounds(ctl_ast.Not(ctl_ast.EF(ctl_ast.Not(f.arg))))
        if isinstance(f, ctl_ast.AF):
            return self.sat_bounds(ctl_ast.Not(ctl_ast.EG(ctl_ast.Not(f.arg))))
        if isinstance(f, ctl_ast.AR):
            return self.sat_bounds(ctl_ast.Not(ctl_ast.EU(ctl_ast.Not(f.left), ctl_ast.Not(f.right))))
        if isinstance(f, ctl_ast.AU):
            nl, nr = ctl_ast.Not(f.left), ctl_ast.Not(f.right)
            return self.sat_bounds(
                ctl_ast.Not(ctl_ast.Or((ctl_ast.EU(nr, ctl_ast.And((nl, nr))), ctl_ast.EG(nr))))
            )
        raise TypeError(f"not a CTL formula: {f!r}")


def as_formula(formula: ctl_ast.Formula | str) -> ctl_ast.Formula:
    if isinstance(formula, ctl_ast.Formula):
        return formula
    return parse_formula(formula)
