"""PCTL's probabilistic operators ([PCTL]) on the Markov model of a Kripke structure.

``P⋈p [ψ]`` holds in a state when the probability of the paths from it that satisfy the path formula
``ψ`` compares so with ``p``; ``P=? [ψ]`` is that probability itself. On an MDP ``Pmin``/``Pmax`` are
the minimum/maximum over all schedulers (memoryless deterministic ones attain them for these path
formulas: Baier & Katoen, *Principles of Model Checking*, §10.6), and ``P`` is refused unless the
caller names a scheduler (a scenario's ``P`` is its uniform scheduler, as in ``flcheck check``).

The path formulas and how each is computed (``f``, ``g`` state formulas, decided by
:class:`checker.mc.satisfaction.SatisfactionSets`):

* ``f U g`` — reachability of ``g`` in the model where the states of ``¬f ∧ ¬g`` have no choice
  (:func:`checker.markov.mdp.mdp_reach`: graph precomputations, then exact or float solves);
  ``F g`` is ``true U g``;
* ``G f = ¬F ¬f``: ``Pmax[G f] = 1 − Pmin[F ¬f]`` (and dually);
* ``X f`` — ``opt_c Σ_t P_c(s, t)·[t ⊨ f]``;
* ``f U<=k g`` — ``k`` steps of ``x_{i+1}(s) = 1`` on ``g``, ``0`` on ``¬f ∧ ¬g``, else
  ``opt_c Σ_t P_c(s, t) x_i(t)`` from ``x_0 = [g]``; ``F<=k``, ``G<=k`` as above.

A deadlock state has no next state (IIIf semantics): ``X f`` has probability 0 there and a run ends
there (``F``/``G``/``U`` read the finite run). ``total`` semantics loops every deadlock, as Storm's and
PRISM's builders do. Values are exact (``Fraction``) when the model is exact and small
(:func:`checker.markov.solve.use_exact_solve`), else floats.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Literal

import numpy as np

from checker.errors import InputError
from checker.markov.mdp import mdp_reach
from checker.markov.models import Mdp, Values, mdp_from_kripke
from checker.markov.solve import use_exact_solve
from checker.mc import ctl_ast
from checker.mc.exploration import Limits, check_limits
from checker.mc.kripke import Kripke

Objective = Literal["min", "max"]
#: How ``P`` (no min/max) resolves an MDP's choices: ``"uniform"`` (a scenario's reading), or
#: ``None`` (refused, as Storm does: an MDP needs Pmin or Pmax).
DefaultScheduler = Literal["uniform"] | None

__all__ = ["PctlEvaluator", "block_states", "compare", "loop_deadlocks", "path_values"]


def block_states(mdp: Mdp, blocked: np.ndarray) -> Mdp:
    """``mdp`` with every choice of the ``blocked`` states removed (they become deadlocks)."""
    if not blocked.any():
        return mdp
    keep_choice = ~blocked[mdp.choice_src]
    keep_edge = keep_choice[mdp.edge_choice]
    counts = np.bincount(mdp.choice_src[keep_choice], minlength=mdp.num_states)
    choice_ptr = np.zeros(mdp.num_states + 1, dtype=np.int64)
    np.cumsum(counts, out=choice_ptr[1:])
    sizes = np.diff(mdp.edge_ptr)[keep_choice]
    edge_ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=edge_ptr[1:])
    exact = None if mdp.edge_prob_exact is None else tuple(
        p for p, k in zip(mdp.edge_prob_exact, keep_edge.tolist(), strict=True) if k)
    return Mdp(mdp.num_states, choice_ptr, mdp.choice_action[keep_choice], edge_ptr, mdp.edge_dst[keep_edge],
               mdp.edge_prob[keep_edge], exact, mdp.initial, mdp.actions)


def loop_deadlocks(mdp: Mdp) -> Mdp:
    """``mdp`` with a probability-1 self-loop choice (action ``-1``) on every state without a choice
    (the ``total`` semantics; Storm and PRISM add such loops when they build a model)."""
    nchoice = np.diff(mdp.choice_ptr)
    dead = np.flatnonzero(nchoice == 0)
    if not len(dead):
        return mdp
    # choices in state order: the old ones of each state, then a loop for each deadlock
    src = np.concatenate([mdp.choice_src, dead])
    order = np.argsort(src, kind="stable")
    old_sizes = np.diff(mdp.edge_ptr)
    sizes = np.concatenate([old_sizes, np.ones(len(dead), dtype=np.int64)])[order]
    edge_ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=edge_ptr[1:])
    old_edges = [np.arange(mdp.edge_ptr[c], mdp.edge_ptr[c + 1]) for c in range(mdp.num_choices)]
    dst_parts: list[np.ndarray] = []
    prob_parts: list[np.ndarray] = []
    exact_parts: list[Fraction] = []
    for c in order.tolist():
        if c < mdp.num_choices:
            dst_parts.append(mdp.edge_dst[old_edges[c]])
            prob_parts.append(mdp.edge_prob[old_edges[c]])
            if mdp.edge_prob_exact is not None:
                exact_parts.extend(mdp.edge_prob_exact[e] for e in old_edges[c].tolist())
        else:
            dst_parts.append(np.array([dead[c - mdp.num_choices]]))
            prob_parts.append(np.ones(1))
            exact_parts.append(Fraction(1))
    counts = np.bincount(src, minlength=mdp.num_states)
    choice_ptr = np.zeros(mdp.num_states + 1, dtype=np.int64)
    np.cumsum(counts, out=choice_ptr[1:])
    action = np.concatenate([mdp.choice_action, np.full(len(dead), -1, dtype=mdp.choice_action.dtype)])[order]
    return Mdp(mdp.num_states, choice_ptr, action, edge_ptr,
               np.concatenate(dst_parts).astype(np.int64), np.concatenate(prob_parts),
               None if mdp.edge_prob_exact is None else tuple(exact_parts), mdp.initial, mdp.actions)


def _uniform(mdp: Mdp) -> Mdp:
    """The MDP of the uniform scheduler's chain (one choice per state that has any)."""
    dtmc = mdp.induced_dtmc("uniform", exact=mdp.edge_prob_exact is not None)
    has = np.diff(dtmc.ptr) > 0
    choice_ptr = np.zeros(dtmc.num_states + 1, dtype=np.int64)
    np.cumsum(has.astype(np.int64), out=choice_ptr[1:])
    edge_ptr = np.concatenate([dtmc.ptr[:-1][has], [dtmc.ptr[-1]]]).astype(np.int64)
    return Mdp(dtmc.num_states, choice_ptr, np.full(int(has.sum()), -1, dtype=np.int64), edge_ptr,
               np.asarray(dtmc.idx, dtype=np.int64), np.asarray(dtmc.prob, dtype=np.float64), dtmc.prob_exact,
               dtmc.initial, mdp.actions)


def _choice_sums(mdp: Mdp, x: Values, exact: bool) -> Values:
    """``Σ_t P_c(t) x(t)`` for every choice ``c``."""
    if exact:
        assert mdp.edge_prob_exact is not None
        out: Values = np.empty(mdp.num_choices, dtype=object)
        ep, dst = mdp.edge_ptr.tolist(), mdp.edge_dst.tolist()
        probs = mdp.edge_prob_exact
        for c in range(mdp.num_choices):
            out[c] = sum((probs[e] * x[dst[e]] for e in range(ep[c], ep[c + 1])), Fraction(0))
        return out
    return np.bincount(mdp.edge_choice, weights=mdp.edge_prob * x[mdp.edge_dst], minlength=mdp.num_choices)


def _optimise(mdp: Mdp, per_choice: Values, objective: Objective, exact: bool) -> Values:
    """``opt_c per_choice[c]`` over each state's choices (0 for a state without choice)."""
    n = mdp.num_states
    out: Values = np.empty(n, dtype=object) if exact else np.zeros(n)
    if exact:
        out[:] = Fraction(0)
    has = np.diff(mdp.choice_ptr) > 0
    if not exact:
        if has.any():
            reduce = np.maximum if objective == "max" else np.minimum
            out[has] = reduce.reduceat(np.asarray(per_choice, dtype=np.float64), mdp.choice_ptr[:-1][has])
        return out
    ptr = mdp.choice_ptr.tolist()
    pick = max if objective == "max" else min
    for s in np.flatnonzero(has).tolist():
        out[s] = pick(per_choice[ptr[s]:ptr[s + 1]].tolist())
    return out


def _indicator(mask: np.ndarray, exact: bool) -> Values:
    if not exact:
        return mask.astype(np.float64)
    out: Values = np.empty(len(mask), dtype=object)
    out[:] = Fraction(0)
    out[mask] = Fraction(1)
    return out


def _complement(values: Values) -> Values:
    return 1 - values


def _flip(objective: Objective) -> Objective:
    return "min" if objective == "max" else "max"


def _until(mdp: Mdp, left: np.ndarray, right: np.ndarray, bound: int | None, objective: Objective,
           exact: bool, limits: Limits | None = None) -> Values:
    """``opt P[left U<=bound right]`` per state: unbounded by :func:`checker.markov.mdp.mdp_reach` on the
    structure with the states outside ``left ∪ right`` blocked; bounded by ``bound`` steps of value
    iteration ``x_{k+1}(s) = opt_c Σ_t P_c(t) x_k(t)`` on the free states ([BK08] 10.2). The iteration
    is a function of ``x_k`` alone, so once ``x_{k+1} = x_k`` every later step is the same and the
    remaining steps are skipped (exact). Each step checks ``limits``
    (:func:`checker.mc.exploration.check_limits`): a bound of a million steps stops at the time or
    memory limit, never past it."""
    blocked = ~left & ~right
    if bound is None:
        return mdp_reach(block_states(mdp, blocked), right, objective, exact=exact).values
    x = _indicator(right, exact)
    fixed = right | blocked | (np.diff(mdp.choice_ptr) == 0)
    free = np.flatnonzero(~fixed)
    for _ in range(bound):
        check_limits(limits)
        step = _optimise(mdp, _choice_sums(mdp, x, exact), objective, exact)
        if np.array_equal(step[free], x[free]):  # a fixpoint: the remaining steps change nothing
            break
        x = x.copy()
        x[free] = step[free]
    return x


def path_values(mdp: Mdp, path: ctl_ast.PathFormula, sat: Callable[[ctl_ast.Formula], np.ndarray],
                objective: Objective, *, exact: bool | None = None, limits: Limits | None = None) -> Values:
    """The optimal (``objective``) probability of ``path`` from every state of ``mdp`` (a chain: one
    choice per state, where min and max agree); ``sat`` decides the state formulas inside; ``limits``
    bound the step-bounded iterations (:func:`_until`)."""
    use_exact = use_exact_solve(exact, mdp.edge_prob_exact is not None, mdp.num_states)
    values = _path_values(mdp, path, sat, objective, use_exact, limits)
    return values if use_exact else np.clip(values, 0.0, 1.0)  # float sums may pass 1 by an ulp


def _path_values(mdp: Mdp, path: ctl_ast.PathFormula, sat: Callable[[ctl_ast.Formula], np.ndarray],
                 objective: Objective, use_exact: bool, limits: Limits | None = None) -> Values:
    n = mdp.num_states
    true = np.ones(n, dtype=bool)
    if isinstance(path, ctl_ast.Next):
        return _optimise(mdp, _choice_sums(mdp, _indicator(sat(path.arg), use_exact), use_exact), objective,
                         use_exact)
    if isinstance(path, ctl_ast.Eventually):
        return _until(mdp, true, sat(path.arg), path.bound, objective, use_exact, limits)
    if isinstance(path, ctl_ast.Globally):
        return _complement(_until(mdp, true, ~sat(path.arg), path.bound, _flip(objective), use_exact, limits))
    if isinstance(path, ctl_ast.Until):
        return _until(mdp, sat(path.left), sat(path.right), path.bound, objective, use_exact, limits)
    raise TypeError(f"not a path formula: {path!r}")  # pragma: no cover


def compare(values: Values, op: str, bound: Fraction) -> np.ndarray:
    """The states whose value compares with ``bound`` by ``op`` (``< <= > >=``), exactly for
    ``Fraction`` values (floats compared as they are)."""
    b: Fraction | float = bound if values.dtype == object else float(bound)
    cmp = {"<": lambda v: v < b, "<=": lambda v: v <= b, ">": lambda v: v > b, ">=": lambda v: v >= b}[op]
    return np.array([bool(cmp(v)) for v in values.tolist()], dtype=bool)


class PctlEvaluator:
    """Decides ``P``/``Pmin``/``Pmax`` sub-formulas on one structure (memoised per formula).

    ``sat`` decides state formulas (a :class:`~checker.mc.satisfaction.SatisfactionSets`' ``sat``);
    ``default`` resolves a plain ``P`` on an MDP (see :data:`DefaultScheduler`); ``total`` loops the
    deadlocks; ``timed`` marks a CTMC's embedded chain, on which step bounds are refused (they would
    count jumps, not time). ``limits`` bound the step-bounded queries (:func:`path_values`)."""

    def __init__(self, kripke: Kripke, sat: Callable[[ctl_ast.Formula], np.ndarray], *,
                 default: DefaultScheduler = None, total: bool = False, ctmc: bool = False,
                 exact: bool | None = None, limits: Limits | None = None):
        if not kripke.complete:
            raise InputError(f"probabilities need the whole state space; the exploration stopped "
                             f"({kripke.limit_reason})", None, "a larger --max-states / --max-seconds")
        self.kripke, self.sat, self.default, self.ctmc, self.exact = kripke, sat, default, ctmc, exact
        self.limits = limits
        mdp = mdp_from_kripke(kripke)
        self.mdp = loop_deadlocks(mdp) if total else mdp
        self._uniform: Mdp | None = None
        self._memo: dict[ctl_ast.ProbQuery, Values] = {}

    def _model(self, q: ctl_ast.ProbQuery) -> tuple[Mdp, Objective]:
        if q.quantifier == "Pmin":
            return self.mdp, "min"
        if q.quantifier == "Pmax" or self.mdp.is_dtmc:
            return self.mdp, "max"
        if self.default != "uniform":
            raise InputError(f"{q} on an MDP: the probability depends on the scheduler", q.pos,
                             f"Pmin or Pmax ('{str(q).replace('P', 'Pmax', 1)}')")
        if self._uniform is None:
            self._uniform = _uniform(self.mdp)
        return self._uniform, "max"

    def values(self, q: ctl_ast.ProbQuery) -> Values:
        """The probability of ``q``'s path formula from every state (exact ``Fraction`` or float)."""
        got = self._memo.get(q)
        if got is None:
            if self.ctmc and getattr(q.path, "bound", None) is not None:
                raise InputError(f"time-bounded CSL is not supported: {q.path} on a CTMC", q.pos,
                                 "an untimed path formula (F, G, U, X on the embedded chain)")
            mdp, objective = self._model(q)
            got = path_values(mdp, q.path, self.sat, objective, exact=self.exact, limits=self.limits)
            self._memo[q] = got
        return got

    def satisfying(self, f: ctl_ast.ProbQuery | ctl_ast.DPQuery) -> np.ndarray:
        """The states satisfying a bound ``P⋈p [ψ]`` (the hook of
        :attr:`checker.mc.satisfaction.SatisfactionSets.probabilistic`)."""
        if isinstance(f, ctl_ast.DPQuery):
            raise InputError("D{ε,δ}[ψ] compares two systems: it is a whole property, not part of a formula",
                             f.pos, "D{ε,δ}[ψ] alone, between a scenario and a declared neighbour")
        assert f.bound is not None
        return compare(self.values(f), f.op, f.bound)
