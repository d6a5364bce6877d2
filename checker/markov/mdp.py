"""MDPs: ``Pmin``/``Pmax`` of eventually reaching a set, and the optimal memoryless schedulers.

:func:`mdp_reach` computes them by policy iteration (each evaluation an exact or sparse float solve; the
float one started from the greedy policy of a few value-iteration sweeps) after the graph precomputations
of [BK08] §10.6.1 (:func:`graph_precomputation`): the states of value 0 and of value 1, found by backward
passes over the predecessor arrays (:mod:`checker.markov.graph`: ``Prob0A`` and ``Prob1E`` for ``max``,
``Prob0E`` and ``Prob1A`` for ``min``, Storm's names). Value iteration is offered as an independent check
(:func:`mdp_value_iteration`) and, vectorised over many target sets, for the privacy engine
(:func:`mdp_reach_many`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

import numpy as np

from checker.markov.first_passage import reach_probabilities
from checker.markov.graph import MdpGraph, prob0a, prob0e, prob1a, prob1e
from checker.markov.models import Dtmc, Mdp, Values, dtmc_from_edges, initial_expectation, state_mask
from checker.markov.solve import use_exact_solve

__all__ = ["MdpResult", "Precomputation", "graph_precomputation", "mdp_reach", "mdp_reach_many",
           "mdp_value_iteration"]


@dataclass(frozen=True)
class MdpResult:
    """``values[s]`` = optimal probability from ``s``; ``policy[s]`` = index of an optimal choice among
    ``s``'s choices (``-1`` for states without choice); ``initial_value`` from the initial
    distribution; ``iterations`` of policy (or value) iteration."""

    values: Values
    policy: np.ndarray
    initial_value: Fraction | float
    exact: bool
    iterations: int
    objective: str
    method: str = "policy iteration"
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Precomputation:
    """The states whose optimal probability of reaching the target is 0 (``zero``) or 1 (``one``, the
    target included), and the choice an optimal memoryless scheduler takes in them (``choice[s]``,
    ``-1`` where any choice is optimal: on the target, in a state without choice, and for ``max`` on
    ``zero``, for ``min`` on ``one``)."""

    zero: np.ndarray
    one: np.ndarray
    choice: np.ndarray


def graph_precomputation(mdp: Mdp, target: np.ndarray, objective: Literal["min", "max"]) -> Precomputation:
    """The graph precomputation of ``Pmax`` (``Prob0A``, ``Prob1E``) or ``Pmin`` (``Prob0E``, ``Prob1A``)
    on the predecessor arrays of ``mdp`` (:class:`~checker.markov.graph.MdpGraph`): O(edges) for the
    ``Prob0`` sets, and a few such passes for ``Prob1E``'s nested fixpoint. ``Pmax``'s scheduler on
    ``one`` is ``Prob1E``'s (it reaches the target almost surely); ``Pmin``'s on ``zero`` is
    ``Prob0E``'s (it never reaches the target); every choice of a ``Prob1A`` state keeps the value 1."""
    graph = MdpGraph.of(mdp)
    if objective == "max":
        one, choice = prob1e(graph, target)
        return Precomputation(prob0a(graph, target), one, choice)
    zero, choice = prob0e(graph, target)
    return Precomputation(zero, prob1a(graph, target, zero) | target, choice)


def _choice_values(mdp: Mdp, vals: Values, exact: bool) -> Values:
    """``Σ_t P_c(t) vals(t)`` for every choice ``c``."""
    if exact:
        assert mdp.edge_prob_exact is not None
        choice_value: Values = np.empty(mdp.num_choices, dtype=object)
        ep = mdp.edge_ptr.tolist()
        dst = mdp.edge_dst.tolist()
        for c in range(mdp.num_choices):
            choice_value[c] = sum((mdp.edge_prob_exact[e] * vals[dst[e]] for e in range(ep[c], ep[c + 1])),
                                  Fraction(0))
        return choice_value
    return np.bincount(mdp.edge_choice, weights=mdp.edge_prob * vals[mdp.edge_dst], minlength=mdp.num_choices)


def mdp_reach(mdp: Mdp, target: np.ndarray | Iterable[int], objective: Literal["min", "max"] = "max",
              *, exact: bool | None = None, max_iterations: int = 10_000) -> MdpResult:
    """``Pmax``/``Pmin`` of eventually reaching ``target`` over all schedulers, by policy iteration.

    Precomputation (:func:`graph_precomputation`): ``max`` — states that cannot reach the target get 0
    (``Prob0A``), states from which some scheduler reaches it almost surely get 1 (``Prob1E``); ``min`` —
    states where some scheduler avoids the target forever get 0 (``Prob0E``), states from which every
    scheduler reaches it almost surely get 1 (``Prob1A``).  The value-1 states join the target (reaching
    them is as good as reaching it: from there the precomputed scheduler, for ``max``, or any, for
    ``min``, reaches it almost surely).  Then policy iteration: evaluate the current memoryless policy
    (first passage of its DTMC, exact or sparse float), switch a state to a choice that is *strictly*
    better, stop when no state improves.  For ``max`` the value of a policy that is stable is a fixpoint
    of the Bellman operator, hence ``≥`` the least fixpoint ``Pmax`` and so equal to it; for ``min`` the
    Bellman operator has a unique fixpoint after ``Prob0E``.  Memoryless deterministic policies suffice
    for both ([BK08] Thm. 10.102 / Lemma 10.113); the returned ``policy`` attains the optimum from every
    state (on the precomputed states it is the precomputation's scheduler).

    Exact (``Fraction``) or float as :func:`~checker.markov.solve.use_exact_solve` decides; the float path
    evaluates each policy on its float chain (:meth:`~checker.markov.models.Mdp.induced_by_choice`, built
    once per policy and shared), with the error bound of
    :func:`~checker.markov.first_passage.reach_probabilities`, and switches only on improvements above
    ``1e-12``.
    """
    if objective not in ("min", "max"):
        raise ValueError(f"objective must be 'min' or 'max', got {objective!r}")
    n = mdp.num_states
    pre = graph_precomputation(mdp, state_mask(target, n), objective)
    tmask, zero_set = pre.one, pre.zero
    use_exact = use_exact_solve(exact, mdp.edge_prob_exact is not None, n)
    nchoice = np.diff(mdp.choice_ptr)
    # initial policy: the precomputation's choices on its states (they keep their fixed values), any
    # choice elsewhere
    policy = np.where(pre.choice >= 0, pre.choice, np.where(nchoice > 0, 0, -1)).astype(np.int64)
    margin: Fraction | float = Fraction(0) if use_exact else 1e-12  # float 0.0 would round Fractions
    free = np.flatnonzero((nchoice > 1) & ~tmask & ~zero_set)
    if not use_exact and len(free):
        policy[free] = _warm_start(mdp, tmask, zero_set, objective)[free]
    iterations = 0
    while True:
        iterations += 1
        if iterations > max_iterations:
            raise RuntimeError("policy iteration did not converge")
        dtmc = mdp.induced_by_choice(np.maximum(policy, 0), exact=use_exact)
        vals = reach_probabilities(_restrict_zero(dtmc, zero_set), tmask, exact=use_exact)
        if use_exact:
            for s in np.flatnonzero(zero_set).tolist():
                vals[s] = Fraction(0)
        else:
            vals[zero_set] = 0.0
        new_policy = _improve(mdp, policy, _choice_values(mdp, vals, use_exact), free, objective, margin)
        if new_policy is None:
            break
        policy = new_policy
    return MdpResult(vals, policy, initial_expectation(mdp.initial, vals, use_exact), use_exact, iterations,
                     objective)


#: At most this many Bellman sweeps of float value iteration whose greedy policy starts float policy
#: iteration (:func:`_warm_start`), in rounds of :data:`WARM_START_ROUND`: a start near the optimum saves
#: policy evaluations, each a sparse solve; any start converges to the optimum.
WARM_START_SWEEPS = 1024
WARM_START_ROUND = 32


def _warm_start(mdp: Mdp, fixed_one: np.ndarray, zero_set: np.ndarray, objective: str) -> np.ndarray:
    """The greedy policy of value iteration from below, swept in rounds of :data:`WARM_START_ROUND` until
    a round changes the greedy choice of at most 1 in 200 states with a choice to make, or no value by
    more than 1e-6 (policy iteration finishes from there), or :data:`WARM_START_SWEEPS` sweeps."""
    nchoice = np.diff(mdp.choice_ptr)
    free = (nchoice > 1) & ~fixed_one & ~zero_set
    enough = max(1, int(free.sum()) // 200)
    x = fixed_one.astype(np.float64)
    policy = _greedy(mdp, x, objective)
    for _ in range(WARM_START_SWEEPS // WARM_START_ROUND):
        new = _bellman_sweeps(mdp, fixed_one, zero_set, objective, WARM_START_ROUND, x)
        new_policy = _greedy(mdp, new, objective)
        changed = int(np.count_nonzero((new_policy != policy) & free))
        if changed <= enough or np.max(np.abs(new - x), initial=0.0) <= 1e-6:
            return new_policy
        x, policy = new, new_policy
    return policy


def _bellman_sweeps(mdp: Mdp, fixed_one: np.ndarray, zero_set: np.ndarray, objective: str,
                    sweeps: int, start: np.ndarray) -> np.ndarray:
    """At most ``sweeps`` steps of value iteration from ``start`` (the ``fixed_one`` and ``zero_set``
    states kept), fewer once no value changes by more than 1e-10."""
    x = start
    nchoice = np.diff(mdp.choice_ptr)
    free = (nchoice > 0) & ~fixed_one & ~zero_set
    # the j-th choices of the states that have one, gathered once: an optimum over a state's choices is
    # a few elementwise optima (states have few choices; a reduceat over every state is slower)
    with_choice = np.flatnonzero(nchoice > 0)
    first = mdp.choice_ptr[with_choice]
    later = [(np.flatnonzero(nchoice[with_choice] > j), first[nchoice[with_choice] > j] + j)
             for j in range(1, int(nchoice.max(initial=0)))]
    opt = np.maximum if objective == "max" else np.minimum
    matrix = mdp.choice_matrix
    for _ in range(sweeps):
        per_choice = matrix @ x
        best = x.copy()
        value = per_choice[first]
        for rows, choices in later:
            value[rows] = opt(value[rows], per_choice[choices])
        best[with_choice] = value
        new = np.where(free, best, x)
        if np.max(np.abs(new - x), initial=0.0) <= 1e-10:
            return new
        x = new
    return x


def _greedy(mdp: Mdp, values: np.ndarray, objective: str) -> np.ndarray:
    """Per state, the index of its first choice of optimal value under ``values`` (``-1``: no choice)."""
    per_choice = mdp.choice_matrix @ values
    nchoice = np.diff(mdp.choice_ptr)
    with_choice = np.flatnonzero(nchoice > 0)
    out = np.full(mdp.num_states, -1, dtype=np.int64)
    if not len(with_choice):
        return out
    starts = mdp.choice_ptr[:-1][with_choice]
    reduce = np.maximum.reduceat if objective == "max" else np.minimum.reduceat
    best = np.repeat(reduce(per_choice, starts), nchoice[with_choice])
    src = mdp.choice_src
    hit = np.flatnonzero(per_choice == best)
    first = np.ones(len(hit), dtype=bool)
    first[1:] = src[hit][1:] != src[hit][:-1]
    out[src[hit[first]]] = hit[first] - mdp.choice_ptr[src[hit[first]]]
    return out


def _improve(mdp: Mdp, policy: np.ndarray, choice_value: Values, free: np.ndarray, objective: str,
             margin: Fraction | float) -> np.ndarray | None:
    """Policy improvement: each ``free`` state switches to its first choice of best value when that is
    better than its current choice's by more than ``margin`` (``None``: no state improves)."""
    new_policy = policy.copy()
    if choice_value.dtype != object:  # float: vectorised over the states
        if not len(free):
            return None
        lo = mdp.choice_ptr[free]
        counts = mdp.choice_ptr[free + 1] - lo
        flat = (np.repeat(lo - np.cumsum(counts) + counts, counts)
                + np.arange(int(counts.sum()))).astype(np.int64)
        seg = np.asarray(choice_value, dtype=np.float64)[flat]
        starts = np.cumsum(counts) - counts
        reduce = np.maximum.reduceat if objective == "max" else np.minimum.reduceat
        best = reduce(seg, starts)
        cur = np.asarray(choice_value, dtype=np.float64)[lo + policy[free]]
        better = best > cur + margin if objective == "max" else best < cur - margin
        if not better.any():
            return None
        hit = np.flatnonzero(seg == np.repeat(best, counts))
        owner = np.repeat(np.arange(len(free)), counts)[hit]
        first = np.ones(len(hit), dtype=bool)
        first[1:] = owner[1:] != owner[:-1]
        choice = np.empty(len(free), dtype=np.int64)
        choice[owner[first]] = hit[first] - starts[owner[first]]
        new_policy[free[better]] = choice[better]
        return new_policy
    improved = False
    for s in free.tolist():
        lo_s, hi_s = int(mdp.choice_ptr[s]), int(mdp.choice_ptr[s + 1])
        best_i, best_v = int(policy[s]), choice_value[lo_s + policy[s]]
        for i in range(hi_s - lo_s):
            v = choice_value[lo_s + i]
            if (v > best_v + margin) if objective == "max" else (v < best_v - margin):
                best_i, best_v = i, v
        if best_i != policy[s]:
            new_policy[s] = best_i
            improved = True
    return new_policy if improved else None


def _restrict_zero(dtmc: Dtmc, zero_set: np.ndarray) -> Dtmc:
    """Make the ``zero_set`` states deadlocks (their value is fixed at 0)."""
    if not zero_set.any():
        return dtmc
    src = dtmc.src
    keep = ~zero_set[src]
    exact = None if dtmc.prob_exact is None else [p for p, k in zip(dtmc.prob_exact, keep, strict=True) if k]
    return dtmc_from_edges(dtmc.num_states, src[keep], dtmc.idx[keep], dtmc.prob[keep], exact, dtmc.initial)


def mdp_value_iteration(mdp: Mdp, target: np.ndarray | Iterable[int],
                        objective: Literal["min", "max"] = "max", *, tolerance: float = 1e-13,
                        max_iterations: int = 1_000_000) -> MdpResult:
    """Float value iteration from below (``x₀ = 1_target``, ``x_{k+1} = opt_c Σ P_c x_k``) after the same
    precomputation as :func:`mdp_reach` (its states of value 0 and 1 fixed); stops when successive
    iterates differ by less than ``tolerance`` (a heuristic stopping rule: an independent cross-check,
    not a certified bound)."""
    n = mdp.num_states
    pre = graph_precomputation(mdp, state_mask(target, n), objective)
    tmask, zero_set = pre.one, pre.zero
    x = tmask.astype(np.float64)
    nchoice = np.diff(mdp.choice_ptr)
    has = (nchoice > 0) & ~tmask & ~zero_set
    fill = -np.inf if objective == "max" else np.inf
    choice_matrix = mdp.choice_matrix
    with_choice = np.flatnonzero(nchoice > 0)
    starts = mdp.choice_ptr[:-1][with_choice]
    reduce = np.maximum.reduceat if objective == "max" else np.minimum.reduceat
    it = 0
    for it in range(1, max_iterations + 1):  # noqa: B007
        choice_value = choice_matrix @ x
        best = np.full(n, fill)
        if len(with_choice):
            best[with_choice] = reduce(choice_value, starts)
        new = np.where(has, best, x)
        new[zero_set] = 0.0
        if np.max(np.abs(new - x), initial=0.0) < tolerance:
            x = new
            break
        x = new
    choice_value = _choice_values(mdp, x, False)
    policy = pre.choice.copy()
    for s in np.flatnonzero((nchoice > 0) & (policy < 0)).tolist():
        lo, hi = int(mdp.choice_ptr[s]), int(mdp.choice_ptr[s + 1])
        seg = choice_value[lo:hi]
        policy[s] = int(np.argmax(seg) if objective == "max" else np.argmin(seg))
    return MdpResult(x, policy, initial_expectation(mdp.initial, x, False), False, it, objective,
                     "value iteration")


def mdp_reach_many(mdp: Mdp, targets: np.ndarray, objective: Literal["min", "max"] = "max", *,
                   tolerance: float = 1e-13, max_iterations: int = 100_000) -> np.ndarray:
    """``Pmin``/``Pmax`` of eventually reaching each of ``m`` target sets at once (``targets`` is an
    ``n × m`` boolean matrix), by vectorised float value iteration from below: ``X₀ = targets``,
    ``X_{k+1}(s) = opt_c Σ_t P_c(t) X_k(t)`` off the targets.  Both optima of reachability are the least
    fixpoints of their Bellman operators (Baier & Katoen, Thm. 10.100), so the iteration converges to
    them from below; on an acyclic model it is exact after (depth) iterations.  Returns ``n × m``."""
    n = mdp.num_states
    tmat = np.asarray(targets, dtype=bool)
    if tmat.ndim != 2 or tmat.shape[0] != n:
        raise ValueError(f"targets must be an ({n}, m) boolean matrix")
    choice_matrix = mdp.choice_matrix
    nchoice = np.diff(mdp.choice_ptr)
    has = np.flatnonzero(nchoice > 0)
    starts = mdp.choice_ptr[:-1][has]
    x = tmat.astype(np.float64)
    reduce = np.maximum.reduceat if objective == "max" else np.minimum.reduceat
    for _ in range(max_iterations):
        choice_value = choice_matrix @ x
        new = x.copy()
        if len(has):
            new[has] = reduce(choice_value, starts, axis=0)
        new[tmat] = 1.0
        if np.max(np.abs(new - x), initial=0.0) < tolerance:
            return new
        x = new
    raise RuntimeError("value iteration did not converge")
