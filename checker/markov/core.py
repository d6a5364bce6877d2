"""Markov models of a probabilistic Kripke structure: DTMCs, MDPs, first passage, path sums.

Seed 004, Section III-B ("probabilistic path quantifier") and the IIIf ``Prob`` theory
(``shared/iiif-notes.md``, Prob): ``P(M ⊢F s)`` applies a probability assignment to the set of finite
paths that start in an initial state, stay in ``M`` and end in ``s``.  Two quantities are offered here
under DISTINCT names, because they differ as soon as a run can visit ``s`` twice:

* :func:`reach_probability` — the *first-passage* probability ``Pr[◇ s]`` that a run eventually
  reaches ``s`` (what probabilistic model checkers compute; always in ``[0, 1]``);
* :func:`path_sum` — the seed's literal path sum ``Σ_{π ∈ M ⊢F s} Pr(π)`` over all finite paths ending
  in ``s``, which equals the *expected number of visits* to ``s``; it may exceed 1 and diverges when a
  reachable state of ``s`` is recurrent.  On a model where no run visits ``s`` twice both coincide.

Models
------
A :class:`~checker.mc.kripke.Kripke` structure with probabilities is an MDP: the edges leaving a state that
share an action form one distribution (a *choice*); different actions are nondeterministic choices.
Without probabilities every edge is its own choice (probability 1).  A memoryless *scheduler* (one choice
per state, or the uniform mixture over the enabled choices) turns the MDP into a DTMC
(:func:`dtmc_from_kripke`).  Deadlock states have no successor: the DTMC row is empty (sub-stochastic),
so the path sum counts no extension of a path ending there; first passage and transient distributions
treat deadlocks as absorbing ends of runs.

Exactness
---------
Where the model carries exact probabilities (``Kripke.edge_prob_exact``) and is small, linear systems are
solved exactly over ``Fraction`` (sparse Gaussian elimination without pivoting, valid because
``I − A`` restricted to the states that can reach the target is a non-singular M-matrix); otherwise with
``scipy.sparse.linalg.spsolve``.  ``exact=None`` chooses automatically (:data:`EXACT_AUTO_LIMIT`).

MDPs
----
:func:`mdp_reach` computes ``Pmin``/``Pmax`` of eventually reaching a set by policy iteration (each
evaluation an exact or sparse float solve) after the graph precomputations ``Prob0E`` (max) and
``Prob0A`` (min) of Baier & Katoen, *Principles of Model Checking*, §10.6; value iteration is offered as
an independent check (:func:`mdp_value_iteration`).
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as spla

from checker.mc.kripke import Kripke
from checker.mc.ts import Action

__all__ = [
    "EXACT_AUTO_LIMIT",
    "Dtmc",
    "Mdp",
    "MdpResult",
    "ObservableDistribution",
    "PathSum",
    "Scheduler",
    "bottom_absorption",
    "bottom_components",
    "dtmc_from_kripke",
    "mdp_from_kripke",
    "mdp_reach",
    "mdp_reach_many",
    "mdp_value_iteration",
    "observable_distribution",
    "path_sum",
    "reach_probabilities",
    "reach_probability",
    "solve_exact",
    "transient_distribution",
]

#: ``exact=None`` solves exactly when the model has exact probabilities and at most this many states.
EXACT_AUTO_LIMIT = 3000

#: A memoryless scheduler: ``"uniform"`` (each enabled choice with equal probability), or a mapping
#: ``state id -> index of the chosen choice among that state's choices`` (``0 .. k-1``; states not in
#: the mapping use choice 0), or a mapping ``state id -> Action`` (the choice carrying that action).
Scheduler = Literal["uniform"] | Mapping[int, int] | Mapping[int, Action]

Values = np.ndarray  # float64, or dtype=object holding Fractions


def _as_mask(target: np.ndarray | Iterable[int], n: int) -> np.ndarray:
    arr = np.asarray(target)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ValueError(f"target mask has shape {arr.shape}, expected ({n},)")
        return arr
    mask = np.zeros(n, dtype=bool)
    idx = np.asarray(list(target) if not isinstance(target, np.ndarray) else target, dtype=np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"target state id out of range 0..{n - 1}")
    mask[idx] = True
    return mask


# ---------------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Dtmc:
    """A (sub-)stochastic discrete-time Markov chain in CSR form.

    Row ``s`` lists the successors ``idx[ptr[s]:ptr[s+1]]`` with probabilities ``prob`` (float) and
    ``prob_exact`` (``Fraction``, when known).  Rows sum to 1, except deadlock rows which are empty.
    ``initial`` is the initial distribution as ``((state, probability), ...)``.
    """

    num_states: int
    ptr: np.ndarray
    idx: np.ndarray
    prob: np.ndarray
    prob_exact: tuple[Fraction, ...] | None
    initial: tuple[tuple[int, Fraction], ...]

    @property
    def is_exact(self) -> bool:
        return self.prob_exact is not None

    def matrix(self) -> sp.csr_matrix:
        """The transition matrix ``P`` (float, CSR)."""
        return sp.csr_matrix((self.prob, self.idx, self.ptr), shape=(self.num_states, self.num_states))

    def rows_exact(self) -> list[dict[int, Fraction]]:
        """Row ``s`` as ``{successor: exact probability}``; raises if the chain is not exact."""
        if self.prob_exact is None:
            raise ValueError("this chain has no exact probabilities")
        rows: list[dict[int, Fraction]] = []
        idx = self.idx.tolist()
        ptr = self.ptr.tolist()
        for s in range(self.num_states):
            row: dict[int, Fraction] = {}
            for e in range(ptr[s], ptr[s + 1]):
                row[idx[e]] = row.get(idx[e], Fraction(0)) + self.prob_exact[e]
            rows.append(row)
        return rows

    @property
    def deadlocks(self) -> np.ndarray:
        return np.diff(self.ptr) == 0

    def initial_vector(self, exact: bool) -> Values:
        vec: Values = np.zeros(self.num_states, dtype=object if exact else np.float64)
        if exact:
            vec[:] = Fraction(0)
        for s, p in self.initial:
            vec[s] = vec[s] + (p if exact else float(p))
        return vec


@dataclass(frozen=True, eq=False)
class Mdp:
    """A Markov decision process: state ``s`` has choices ``choice_ptr[s] .. choice_ptr[s+1]-1``;
    choice ``c`` has the distribution ``edge_dst/edge_prob[edge_ptr[c]:edge_ptr[c+1]]`` and the action
    ``actions[choice_action[c]]`` (``-1``: an unlabelled edge-choice of a non-probabilistic model)."""

    num_states: int
    choice_ptr: np.ndarray
    choice_action: np.ndarray
    edge_ptr: np.ndarray
    edge_dst: np.ndarray
    edge_prob: np.ndarray
    edge_prob_exact: tuple[Fraction, ...] | None
    initial: tuple[tuple[int, Fraction], ...]
    actions: tuple[Action, ...] = ()

    @property
    def num_choices(self) -> int:
        return len(self.choice_action)

    @property
    def choice_src(self) -> np.ndarray:
        return np.repeat(np.arange(self.num_states, dtype=np.int64), np.diff(self.choice_ptr))

    @property
    def is_dtmc(self) -> bool:
        """True when no state has more than one choice."""
        return bool(np.all(np.diff(self.choice_ptr) <= 1))

    def induced_dtmc(self, scheduler: Scheduler = "uniform") -> Dtmc:
        """The DTMC obtained by resolving every state's choice with a memoryless ``scheduler``."""
        n = self.num_states
        nchoice = np.diff(self.choice_ptr)
        weight_exact: list[Fraction] = []
        if isinstance(scheduler, str):
            if scheduler != "uniform":
                raise ValueError(f"unknown scheduler {scheduler!r}; expected 'uniform' or a mapping")
            ns = nchoice[self.choice_src]
            weight = np.where(ns > 0, 1.0 / np.maximum(ns, 1), 0.0)
            weight_exact = [Fraction(1, int(k)) for k in ns.tolist()]
        else:
            chosen = np.zeros(n, dtype=np.int64)
            for s, choice in scheduler.items():
                k = int(nchoice[s])
                if isinstance(choice, Action):
                    local = [i for i in range(k)
                             if self.choice_action[self.choice_ptr[s] + i] >= 0
                             and self.actions[self.choice_action[self.choice_ptr[s] + i]] == choice]
                    if not local:
                        raise ValueError(f"scheduler: state {s} has no choice with action {choice}")
                    chosen[s] = local[0]
                else:
                    if not 0 <= int(choice) < max(k, 1):
                        raise ValueError(f"scheduler: state {s} has {k} choices, cannot pick {choice}")
                    chosen[s] = int(choice)
            local_index = np.arange(self.num_choices) - self.choice_ptr[self.choice_src]
            sel = local_index == chosen[self.choice_src]
            weight = sel.astype(np.float64)
            weight_exact = [Fraction(int(b)) for b in sel.tolist()]
        edge_choice = np.repeat(np.arange(self.num_choices), np.diff(self.edge_ptr))
        src = self.choice_src[edge_choice]
        prob = self.edge_prob * weight[edge_choice]
        exact = None
        if self.edge_prob_exact is not None:
            ec = edge_choice.tolist()
            exact = [p * weight_exact[c] for p, c in zip(self.edge_prob_exact, ec, strict=True)]
        keep = prob > 0
        if exact is not None:
            keep = np.array([p != 0 for p in exact], dtype=bool) if len(exact) else keep
        return _dtmc_from_edges(n, src[keep], self.edge_dst[keep], prob[keep],
                                None if exact is None else [p for p, k in zip(exact, keep, strict=True) if k],
                                self.initial)


def _dtmc_from_edges(n: int, src: np.ndarray, dst: np.ndarray, prob: np.ndarray,
                     exact: Sequence[Fraction] | None, initial: tuple[tuple[int, Fraction], ...]) -> Dtmc:
    """Merge parallel edges (same source and target) and build the CSR chain."""
    if len(src) == 0:
        return Dtmc(n, np.zeros(n + 1, np.int64), np.zeros(0, np.int64), np.zeros(0), () if exact is not None
                    else None, initial)
    key = src.astype(np.int64) * n + dst.astype(np.int64)
    uniq, inv = np.unique(key, return_inverse=True)
    prob_m = np.bincount(inv, weights=prob, minlength=len(uniq))
    exact_m: tuple[Fraction, ...] | None = None
    if exact is not None:
        acc = [Fraction(0)] * len(uniq)
        for i, p in zip(inv.tolist(), exact, strict=True):
            acc[i] += p
        exact_m = tuple(acc)
        prob_m = np.array([float(p) for p in acc], dtype=np.float64)
    s_m, d_m = np.divmod(uniq, n)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(s_m, minlength=n), out=ptr[1:])
    return Dtmc(n, ptr, d_m.astype(np.int64), prob_m, exact_m, initial)


def _initial_distribution(kripke: Kripke,
                          initial: Mapping[int, Fraction] | None) -> tuple[tuple[int, Fraction], ...]:
    if initial is None:
        ids = sorted(set(int(i) for i in kripke.initial.tolist()))
        if not ids:
            raise ValueError("the Kripke structure has no initial state")
        return tuple((i, Fraction(1, len(ids))) for i in ids)
    dist = tuple(sorted((int(s), Fraction(p)) for s, p in initial.items() if Fraction(p) != 0))
    total = sum((p for _, p in dist), Fraction(0))
    if total != 1 or any(p < 0 for _, p in dist):
        raise ValueError(f"initial distribution must be non-negative and sum to 1, got total {total}")
    return dist


def mdp_from_kripke(kripke: Kripke, initial: Mapping[int, Fraction] | None = None) -> Mdp:
    """The MDP of a Kripke structure (IIIf ``Kripke S I`` with the probabilities of ``checker.mc.ts``).

    With probabilities, the edges of a state sharing an action form one choice; without, every edge is
    a choice of probability 1.  ``initial`` is the initial distribution (default: uniform over
    ``kripke.initial``, the seed's ``M = Kripke {t. I →* t} {I}`` has a single initial state).

    An incomplete structure (exploration limit hit) is rejected: its frontier states have unknown
    successors, so no probability computed on it would be sound.
    """
    if not kripke.complete:
        raise ValueError(f"the Kripke structure is incomplete ({kripke.limit_reason}); "
                         "probabilities need the full reachable state space")
    n = kripke.num_states
    m = kripke.num_transitions
    src = kripke.edge_src
    if kripke.edge_prob is None:
        order = np.arange(m)
        group_key = np.arange(m, dtype=np.int64)  # each edge its own choice (CSR: sorted by source)
        choice_action_per_edge = kripke.edge_action.astype(np.int64)
        prob = np.ones(m)
        exact: tuple[Fraction, ...] | None = tuple(Fraction(1) for _ in range(m))
    else:
        key = src * (len(kripke.actions) + 1) + kripke.edge_action.astype(np.int64)
        order = np.lexsort((kripke.succ_idx, key))
        group_key = key[order]
        choice_action_per_edge = kripke.edge_action.astype(np.int64)[order]
        prob = np.asarray(kripke.edge_prob, dtype=np.float64)[order]
        exact = None
        if kripke.edge_prob_exact is not None:
            ex = kripke.edge_prob_exact
            exact = tuple(Fraction(ex[i]) for i in order.tolist())
    dst = kripke.succ_idx[order].astype(np.int64)
    src_sorted = src[order]
    if m:
        starts = np.flatnonzero(np.r_[True, group_key[1:] != group_key[:-1]])
    else:
        starts = np.zeros(0, dtype=np.int64)
    edge_ptr = np.r_[starts, m].astype(np.int64)
    choice_src = src_sorted[starts] if m else np.zeros(0, np.int64)
    choice_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(choice_src, minlength=n), out=choice_ptr[1:])
    choice_action = choice_action_per_edge[starts] if m else np.zeros(0, np.int64)
    return Mdp(n, choice_ptr, choice_action, edge_ptr, dst, prob, exact,
               _initial_distribution(kripke, initial), tuple(kripke.actions))


def dtmc_from_kripke(kripke: Kripke, scheduler: Scheduler = "uniform",
                     initial: Mapping[int, Fraction] | None = None) -> Dtmc:
    """The DTMC of ``kripke`` under a memoryless ``scheduler`` (default: uniform over the enabled
    choices; a structure with one choice per state is already a DTMC and any scheduler gives it)."""
    return mdp_from_kripke(kripke, initial).induced_dtmc(scheduler)


# ---------------------------------------------------------------------------------------------------
# Graph precomputations
# ---------------------------------------------------------------------------------------------------


def _backward_reach(n: int, src: np.ndarray, dst: np.ndarray, target: np.ndarray) -> np.ndarray:
    """States that can reach ``target`` along edges ``src -> dst`` (including ``target``): one
    breadth-first search (scipy, C speed) from a virtual node ``n`` linked to every target state, on the
    reversed graph."""
    reach = target.copy()
    tid = np.flatnonzero(target)
    if len(src) == 0 or tid.size == 0:
        return reach
    rows = np.concatenate([dst.astype(np.int64), np.full(tid.size, n, dtype=np.int64)])
    cols = np.concatenate([src.astype(np.int64), tid])
    rev = sp.csr_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n + 1, n + 1))
    order = csgraph.breadth_first_order(rev, n, directed=True, return_predecessors=False)
    reach[order[order < n]] = True
    return reach


def _prob1(dtmc: Dtmc, target: np.ndarray) -> np.ndarray:
    """``Prob1``: states that reach ``target`` with probability 1, i.e. that cannot reach a state that
    cannot reach the target without passing through the target (Baier & Katoen, Alg. 46).  Besides
    saving work, it makes the float solve well-conditioned where hitting times are astronomically
    long (``I − A`` nearly singular)."""
    no = ~_dtmc_can_reach(dtmc, target)
    src = np.repeat(np.arange(dtmc.num_states), np.diff(dtmc.ptr))
    pos = dtmc.prob > 0 if dtmc.prob_exact is None else np.array([p > 0 for p in dtmc.prob_exact], bool)
    keep = pos & ~target[src]
    return ~_backward_reach(dtmc.num_states, src[keep], dtmc.idx[keep], no)


def _dtmc_can_reach(dtmc: Dtmc, target: np.ndarray) -> np.ndarray:
    src = np.repeat(np.arange(dtmc.num_states), np.diff(dtmc.ptr))
    pos = dtmc.prob > 0 if dtmc.prob_exact is None else np.array([p > 0 for p in dtmc.prob_exact], bool)
    return _backward_reach(dtmc.num_states, src[pos], dtmc.idx[pos], target)


# ---------------------------------------------------------------------------------------------------
# Exact sparse linear algebra
# ---------------------------------------------------------------------------------------------------


def _postorder(unknowns: list[int], rows: Mapping[int, Mapping[int, Fraction]]) -> list[int]:
    """A DFS post-order of the unknowns along the successor relation (successors first): on an acyclic
    chain it makes ``I − A`` triangular, so elimination creates no fill-in."""
    seen: set[int] = set()
    order: list[int] = []
    unknown_set = set(unknowns)
    for root in unknowns:
        if root in seen:
            continue
        seen.add(root)
        stack: list[tuple[int, Iterable[int]]] = [(root, iter(sorted(rows[root])))]
        while stack:
            node, it = stack[-1]
            for nxt in it:
                if nxt in unknown_set and nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(sorted(rows[nxt]))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def solve_exact(rows: Mapping[int, Mapping[int, Fraction]], rhs: Mapping[int, Fraction],
                unknowns: Sequence[int]) -> dict[int, Fraction]:
    """Solve ``x = A x + b`` exactly for the ``unknowns`` (``x_j = 0`` for ``j`` not an unknown).

    ``rows[i]`` is row ``i`` of ``A`` (``{j: a_ij}``), ``rhs[i]`` is ``b_i``.  Sparse Gaussian elimination
    of ``(I − A) x = b`` without pivoting, in DFS post-order; valid when ``I − A`` restricted to the
    unknowns is a non-singular M-matrix (all pivots are then positive), which holds for the states that
    can reach the target of a first-passage problem.  Raises ``ArithmeticError`` on a zero pivot.
    """
    order = _postorder(list(unknowns), rows)
    pos = {s: k for k, s in enumerate(order)}
    upper: dict[int, tuple[dict[int, Fraction], Fraction]] = {}
    for i in order:
        row: dict[int, Fraction] = {i: Fraction(1)}
        for j, a in rows[i].items():
            if j in pos and a:
                row[j] = row.get(j, Fraction(0)) - a
        b = Fraction(rhs.get(i, 0))
        heap = [pos[j] for j in row if pos[j] < pos[i]]
        heapq.heapify(heap)
        done: set[int] = set()
        while heap:
            pj = heapq.heappop(heap)
            if pj in done:
                continue
            done.add(pj)
            j = order[pj]
            coef = row.pop(j, Fraction(0))
            if not coef:
                continue
            urow, ub = upper[j]
            b -= coef * ub
            for k, u in urow.items():
                nv = row.get(k, Fraction(0)) - coef * u
                if nv:
                    row[k] = nv
                else:
                    row.pop(k, None)
                if pos[k] < pos[i] and pos[k] not in done:
                    heapq.heappush(heap, pos[k])
        piv = row.pop(i, Fraction(0))
        if piv == 0:
            raise ArithmeticError(f"zero pivot at state {i}: the system is singular")
        upper[i] = ({k: v / piv for k, v in row.items()}, b / piv)
    x: dict[int, Fraction] = {}
    for i in reversed(order):
        urow, ub = upper[i]
        x[i] = ub - sum((u * x[k] for k, u in urow.items()), Fraction(0))
    return x


def _solve_float(mat: sp.csr_matrix, b: np.ndarray, unknowns: np.ndarray) -> np.ndarray:
    """Solve ``x = A x + b`` on ``unknowns`` with a sparse direct solver."""
    a_uu = mat[unknowns][:, unknowns]
    system = (sp.identity(len(unknowns), format="csc") - a_uu.tocsc()).tocsc()
    sol = spla.spsolve(system, b)
    return np.atleast_1d(np.asarray(sol, dtype=np.float64))


def _use_exact(exact: bool | None, available: bool, size: int) -> bool:
    if exact is None:
        return available and size <= EXACT_AUTO_LIMIT
    if exact and not available:
        raise ValueError("exact computation requested but the model has no exact probabilities")
    return exact


# ---------------------------------------------------------------------------------------------------
# DTMC: first passage
# ---------------------------------------------------------------------------------------------------


def reach_probabilities(dtmc: Dtmc, target: np.ndarray | Iterable[int], *,
                        exact: bool | None = None) -> Values:
    """First-passage probabilities ``x(s) = Pr_s[◇ target]`` for every state ``s``.

    ``x`` is the least solution of ``x = 1`` on ``target``, ``x(s) = Σ_t P(s,t) x(t)`` elsewhere; states
    that cannot reach the target get 0 and states that reach it almost surely get 1 (graph
    precomputations ``Prob0``/``Prob1``), the others solve a non-singular system.
    Returns a float array, or an object array of ``Fraction`` when exact.

    >>> k = Kripke.from_edges(3, [0], [0, 0, 1, 2], [1, 2, 1, 2],
    ...                       prob_exact=[Fraction(1, 3), Fraction(2, 3), Fraction(1), Fraction(1)])
    >>> reach_probabilities(dtmc_from_kripke(k), [1], exact=True).tolist()
    [Fraction(1, 3), Fraction(1, 1), Fraction(0, 1)]
    """
    n = dtmc.num_states
    tmask = _as_mask(target, n)
    yes = _prob1(dtmc, tmask)
    can = _dtmc_can_reach(dtmc, tmask)
    unknown = np.flatnonzero(can & ~yes)
    tmask = yes  # states reaching the target almost surely count as target (Prob1 precomputation)
    if _use_exact(exact, dtmc.is_exact, len(unknown)):
        rows = dtmc.rows_exact()
        rhs = {int(s): sum((p for t, p in rows[s].items() if tmask[t]), Fraction(0))
               for s in unknown.tolist()}
        sol = solve_exact({int(s): rows[s] for s in unknown.tolist()}, rhs, unknown.tolist())
        out: Values = np.empty(n, dtype=object)
        out[:] = Fraction(0)
        for s in np.flatnonzero(tmask).tolist():
            out[s] = Fraction(1)
        for s, v in sol.items():
            out[s] = v
        return out
    res = tmask.astype(np.float64)
    if unknown.size:
        mat = dtmc.matrix()
        b = np.asarray(mat[unknown][:, np.flatnonzero(tmask)].sum(axis=1)).ravel()
        res[unknown] = _solve_float(mat, b, unknown)
    return res


def _weighted_initial(dtmc: Dtmc, values: Values, exact: bool) -> Fraction | float:
    if exact:
        return sum((p * values[s] for s, p in dtmc.initial), Fraction(0))
    return float(sum(float(p) * float(values[s]) for s, p in dtmc.initial))


def reach_probability(dtmc: Dtmc, target: np.ndarray | Iterable[int], *,
                      exact: bool | None = None) -> Fraction | float:
    """``Pr[◇ target]`` from the initial distribution (first passage; see :func:`path_sum` for the
    seed's literal path sum)."""
    vals = reach_probabilities(dtmc, target, exact=exact)
    return _weighted_initial(dtmc, vals, vals.dtype == object)


# ---------------------------------------------------------------------------------------------------
# The seed's path sum  P(M ⊢F s)
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PathSum:
    """The seed's ``P(M ⊢F s) = Σ_{finite paths π from init ending in s} Pr(π)`` (seed 004, III-B).

    ``value`` is ``inf`` when the sum diverges (``diverges`` true; ``witness`` is then a reachable
    recurrent target state); ``first_passage`` is ``Pr[◇ s]`` for comparison; ``max_length`` is the
    bound on path length (number of steps) when the sum was truncated.
    """

    value: Fraction | float
    diverges: bool
    first_passage: Fraction | float
    exact: bool
    max_length: int | None = None
    witness: int | None = None

    @property
    def differs_from_first_passage(self) -> bool:
        return self.diverges or self.value != self.first_passage


def path_sum(dtmc: Dtmc, target: np.ndarray | Iterable[int], *, max_length: int | None = None,
             exact: bool | None = None) -> PathSum:
    """The path sum ``Σ_π Pr(π)`` over the finite paths that start in an initial state (weighted by the
    initial distribution) and end in ``target`` (IIIf ``pmap ops (M ⊢F s)``).

    Equals the expected number of visits to ``target``: ``Σ_{k≥0} π₀ Pᵏ 1_target``.  With ``max_length``
    only paths of at most that many steps count (always finite).  Without it the series is solved as
    ``x = 1_target + P x`` on the states that can reach the target; it diverges exactly when a target
    state reachable from an initial state lies in a closed recurrent class (a bottom strongly connected
    component with at least one edge), because such a state is visited infinitely often.
    """
    n = dtmc.num_states
    tmask = _as_mask(target, n)
    fp_vals = reach_probabilities(dtmc, tmask, exact=exact)
    use_exact = fp_vals.dtype == object
    first = _weighted_initial(dtmc, fp_vals, use_exact)
    if max_length is not None:
        if max_length < 0:
            raise ValueError("max_length must be >= 0")
        vec = dtmc.initial_vector(use_exact)
        total: Fraction | float = Fraction(0) if use_exact else 0.0
        for step in range(max_length + 1):
            total += sum(vec[tmask].tolist(), Fraction(0) if use_exact else 0.0)
            if step < max_length:
                vec = _step(dtmc, vec, use_exact, absorb_deadlocks=False)
        return PathSum(total, False, first, use_exact, max_length)
    # divergence: a reachable target state in a closed class with an internal edge
    reach_from_init = _forward_reach(dtmc, np.array([s for s, _ in dtmc.initial], dtype=np.int64))
    witness = _recurrent_target(dtmc, tmask & reach_from_init)
    if witness is not None:
        return PathSum(float("inf"), True, first, use_exact, None, witness)
    # only states reachable from an initial state matter (an unreachable recurrent target would make
    # the system singular without affecting the sum)
    can = _dtmc_can_reach(dtmc, tmask) & reach_from_init
    unknown = np.flatnonzero(can)
    if use_exact:
        rows = dtmc.rows_exact()
        rhs = {int(s): Fraction(int(tmask[s])) for s in unknown.tolist()}
        sol = solve_exact({int(s): rows[s] for s in unknown.tolist()}, rhs, unknown.tolist())
        vals: Values = np.empty(n, dtype=object)
        vals[:] = Fraction(0)
        for s, v in sol.items():
            vals[s] = v
    else:
        vals = np.zeros(n)
        if unknown.size:
            vals[unknown] = _solve_float(dtmc.matrix(), tmask[unknown].astype(np.float64), unknown)
    return PathSum(_weighted_initial(dtmc, vals, use_exact), False, first, use_exact)


def _forward_reach(dtmc: Dtmc, start: np.ndarray) -> np.ndarray:
    src = np.repeat(np.arange(dtmc.num_states), np.diff(dtmc.ptr))
    return _backward_reach(dtmc.num_states, dtmc.idx, src, _as_mask(start, dtmc.num_states))


def _recurrent_target(dtmc: Dtmc, candidates: np.ndarray) -> int | None:
    """A candidate state lying in a closed SCC that has an internal edge, or ``None``."""
    if not candidates.any():
        return None
    n = dtmc.num_states
    mat = dtmc.matrix()
    _, comp = csgraph.connected_components(mat, directed=True, connection="strong")
    src = np.repeat(np.arange(n), np.diff(dtmc.ptr))
    leaves = comp[src] != comp[dtmc.idx]
    leaking = np.zeros(comp.max() + 1, dtype=bool)
    leaking[comp[src[leaves]]] = True
    has_internal = np.zeros(comp.max() + 1, dtype=bool)
    has_internal[comp[src[~leaves]]] = True
    rows_ok = np.ones(comp.max() + 1, dtype=bool)  # a deadlock in the class makes it leak
    rows_ok[comp[dtmc.deadlocks]] = False
    closed = ~leaking & has_internal & rows_ok
    hits = np.flatnonzero(candidates & closed[comp])
    return int(hits[0]) if hits.size else None


# ---------------------------------------------------------------------------------------------------
# Transient distributions and observables at the end of bounded runs
# ---------------------------------------------------------------------------------------------------


def _step(dtmc: Dtmc, vec: Values, exact: bool, absorb_deadlocks: bool) -> Values:
    if exact:
        out: Values = np.empty(dtmc.num_states, dtype=object)
        out[:] = Fraction(0)
        assert dtmc.prob_exact is not None
        ptr = dtmc.ptr.tolist()
        idx = dtmc.idx.tolist()
        for s in np.flatnonzero(vec != 0).tolist():
            mass = vec[s]
            if ptr[s] == ptr[s + 1]:
                if absorb_deadlocks:
                    out[s] += mass
                continue
            for e in range(ptr[s], ptr[s + 1]):
                out[idx[e]] += mass * dtmc.prob_exact[e]
        return out
    res = dtmc.matrix().T @ vec
    if absorb_deadlocks:
        dl = dtmc.deadlocks
        res[dl] += vec[dl]
    return res


def transient_distribution(dtmc: Dtmc, steps: int, *, exact: bool | None = None) -> Values:
    """The distribution over states after exactly ``steps`` steps, a run ending in a deadlock staying
    there (``π_{k+1} = π_k P`` plus the deadlock mass)."""
    use_exact = _use_exact(exact, dtmc.is_exact, dtmc.num_states)
    vec = dtmc.initial_vector(use_exact)
    for _ in range(steps):
        vec = _step(dtmc, vec, use_exact, absorb_deadlocks=True)
    return vec


@dataclass(frozen=True)
class ObservableDistribution:
    """Distribution of an observable's value at the end of runs: ``dist`` maps value -> probability;
    ``missing`` (``steps=None`` only) is the mass of runs whose eventual value is undetermined (they end in
    a bottom component on which the observable is not constant)."""

    dist: dict[Hashable, Fraction | float]
    missing: Fraction | float
    exact: bool
    steps: int | None


def observable_distribution(dtmc: Dtmc, values: Sequence[Hashable], *, steps: int | None = None,
                            exact: bool | None = None,
                            absorbed: Sequence[tuple[list[int], Fraction | float]] | None = None,
                            ) -> ObservableDistribution:
    """Distribution of ``values[s]`` (one value per state, e.g. ``Kripke.observables["curmodpar"]``)
    at the end of runs.

    ``steps=k``: on the state reached after ``k`` steps (a run stopped earlier in a deadlock counts with
    its deadlock state).  ``steps=None``: the *eventual* value, i.e. the value on the bottom strongly
    connected component where the run ends up (a deadlock where it terminates, or a closed cycle on
    which the value is constant): ``Σ_{B bottom, values|B = v} Pr[run ends in B]``
    (:func:`bottom_absorption`; pass its result as ``absorbed`` to reuse it for several observables);
    ``missing`` is the mass of components on which the value varies.
    """
    if len(values) != dtmc.num_states:
        raise ValueError(f"{len(values)} observable values for {dtmc.num_states} states")
    use_exact = _use_exact(exact, dtmc.is_exact, dtmc.num_states)
    zero: Fraction | float = Fraction(0) if use_exact else 0.0
    dist: dict[Hashable, Fraction | float] = {}
    if steps is not None:
        vec = transient_distribution(dtmc, steps, exact=use_exact)
        for s in np.flatnonzero(vec != 0).tolist():
            dist[values[s]] = dist.get(values[s], zero) + vec[s]
        return ObservableDistribution(dist, zero, use_exact, steps)
    if absorbed is None:
        absorbed = bottom_absorption(dtmc, exact=use_exact)
    for comp_states, mass in absorbed:
        vals = {values[t] for t in comp_states}
        if len(vals) != 1:
            continue
        (v,) = vals
        if mass:
            dist[v] = dist.get(v, zero) + mass
    total = sum(dist.values(), zero)
    return ObservableDistribution(dist, (Fraction(1) if use_exact else 1.0) - total, use_exact, None)


def bottom_components(dtmc: Dtmc) -> list[list[int]]:
    """The bottom strongly connected components (closed classes) of the chain; a deadlock state is a
    bottom component of its own.  Every run of a finite chain ends up in one of them a.s."""
    n = dtmc.num_states
    if n == 0:
        return []
    _, comp = csgraph.connected_components(dtmc.matrix(), directed=True, connection="strong")
    src = np.repeat(np.arange(n), np.diff(dtmc.ptr))
    leaves = comp[src] != comp[dtmc.idx]
    leaking = np.zeros(comp.max() + 1, dtype=bool)
    leaking[comp[src[leaves]]] = True
    order = np.argsort(comp, kind="stable")
    bounds = np.flatnonzero(np.r_[True, np.diff(comp[order]) != 0, True])
    out: list[list[int]] = []
    for i in range(len(bounds) - 1):
        members = order[bounds[i]:bounds[i + 1]]
        if not leaking[comp[members[0]]]:
            out.append(sorted(members.tolist()))
    return out


def bottom_absorption(dtmc: Dtmc, *, exact: bool | None = None) -> list[tuple[list[int], Fraction | float]]:
    """``[(component, Pr[the run ends up in component])]`` for every bottom SCC, from the initial
    distribution, with ONE linear solve: the expected numbers of visits ``x`` to the transient states
    solve ``x = π₀ + Qᵀ x`` (``Q`` the chain restricted to transient states), and the mass entering a
    bottom component ``B`` is ``π₀(B) + Σ_{s transient} x(s) P(s, B)``."""
    use_exact = _use_exact(exact, dtmc.is_exact, dtmc.num_states)
    n = dtmc.num_states
    comps = bottom_components(dtmc)
    comp_of = np.full(n, -1, dtype=np.int64)
    for i, members in enumerate(comps):
        comp_of[members] = i
    transient = comp_of < 0
    init = dtmc.initial_vector(use_exact)
    zero: Fraction | float = Fraction(0) if use_exact else 0.0
    mass: list[Fraction | float] = [zero] * len(comps)
    for s, p in dtmc.initial:
        if comp_of[s] >= 0:
            mass[comp_of[s]] += p if use_exact else float(p)
    reach = _forward_reach(dtmc, np.array([s for s, _ in dtmc.initial], dtype=np.int64)) & transient
    unknown = np.flatnonzero(reach)
    src = np.repeat(np.arange(n), np.diff(dtmc.ptr))
    if unknown.size:
        if use_exact:
            rows_t: dict[int, dict[int, Fraction]] = {int(s): {} for s in unknown.tolist()}
            assert dtmc.prob_exact is not None
            for e, (a, b) in enumerate(zip(src.tolist(), dtmc.idx.tolist(), strict=True)):
                if reach[a] and reach[b]:
                    rows_t[b][a] = rows_t[b].get(a, Fraction(0)) + dtmc.prob_exact[e]
            x = solve_exact(rows_t, {int(s): init[s] for s in unknown.tolist()}, unknown.tolist())
            for e, (a, b) in enumerate(zip(src.tolist(), dtmc.idx.tolist(), strict=True)):
                if reach[a] and comp_of[b] >= 0:
                    mass[comp_of[b]] += x[a] * dtmc.prob_exact[e]
        else:
            mat_t = dtmc.matrix().T.tocsr()
            xs = _solve_float(mat_t, np.asarray(init[unknown], dtype=np.float64), unknown)
            xfull = np.zeros(n)
            xfull[unknown] = xs
            into = comp_of[dtmc.idx]
            sel = reach[src] & (into >= 0)
            contrib = np.bincount(into[sel], weights=xfull[src[sel]] * dtmc.prob[sel], minlength=len(comps))
            mass = [mass[i] + float(contrib[i]) for i in range(len(comps))]
    return list(zip(comps, mass, strict=True))


# ---------------------------------------------------------------------------------------------------
# MDP: min / max first passage
# ---------------------------------------------------------------------------------------------------


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


def _prob0(mdp: Mdp, tmask: np.ndarray, objective: str) -> np.ndarray:
    """States whose optimal (``max``: ``Prob0E``; ``min``: ``Prob0A``) probability is 0."""
    n = mdp.num_states
    edge_choice = np.repeat(np.arange(mdp.num_choices), np.diff(mdp.edge_ptr))
    pos = mdp.edge_prob > 0
    if mdp.edge_prob_exact is not None:
        pos = np.array([p > 0 for p in mdp.edge_prob_exact], dtype=bool) if len(pos) else pos
    csrc = mdp.choice_src
    if objective == "max":
        can = _backward_reach(n, csrc[edge_choice[pos]], mdp.edge_dst[pos], tmask)
        return ~can
    # min: R = lfp Z. target ∪ {s not deadlock | every choice of s has a successor in Z}
    reach = tmask.copy()
    nchoice = np.diff(mdp.choice_ptr)
    while True:
        hit = np.zeros(mdp.num_choices, dtype=bool)
        e_ok = pos & reach[mdp.edge_dst]
        hit[np.unique(edge_choice[e_ok])] = True
        all_hit = np.ones(n, dtype=bool)
        bad = csrc[~hit]
        all_hit[bad] = False
        new = reach | (all_hit & (nchoice > 0))
        if np.array_equal(new, reach):
            return ~reach
        reach = new


def _choice_values(mdp: Mdp, vals: Values, exact: bool) -> Values:
    """``q(c) = Σ_t P_c(t) vals(t)`` for every choice ``c``."""
    if exact:
        assert mdp.edge_prob_exact is not None
        q: Values = np.empty(mdp.num_choices, dtype=object)
        ep = mdp.edge_ptr.tolist()
        dst = mdp.edge_dst.tolist()
        for c in range(mdp.num_choices):
            q[c] = sum((mdp.edge_prob_exact[e] * vals[dst[e]] for e in range(ep[c], ep[c + 1])), Fraction(0))
        return q
    edge_choice = np.repeat(np.arange(mdp.num_choices), np.diff(mdp.edge_ptr))
    return np.bincount(edge_choice, weights=mdp.edge_prob * vals[mdp.edge_dst], minlength=mdp.num_choices)


def mdp_reach(mdp: Mdp, target: np.ndarray | Iterable[int], objective: Literal["min", "max"] = "max",
              *, exact: bool | None = None, max_iterations: int = 10_000) -> MdpResult:
    """``Pmax``/``Pmin`` of eventually reaching ``target`` over all schedulers, by policy iteration.

    Precomputation: ``max`` — states that cannot reach the target get 0 (``Prob0E``); ``min`` — states
    where some scheduler avoids the target forever get 0 (``Prob0A``).  Then policy iteration: evaluate
    the current memoryless policy (first passage of its DTMC, exact or sparse float), switch a state to
    a choice that is *strictly* better, stop when no state improves.  For ``max`` the value of a policy
    that is stable is a fixpoint of the Bellman operator, hence ``≥`` the least fixpoint ``Pmax`` and so
    equal to it; for ``min`` the Bellman operator has a unique fixpoint after ``Prob0A``.
    Memoryless deterministic policies suffice for both (Baier & Katoen, Thm. 10.102 / Lemma 10.113).
    """
    if objective not in ("min", "max"):
        raise ValueError(f"objective must be 'min' or 'max', got {objective!r}")
    n = mdp.num_states
    tmask = _as_mask(target, n)
    zero_set = _prob0(mdp, tmask, objective) & ~tmask
    use_exact = _use_exact(exact, mdp.edge_prob_exact is not None, n)
    nchoice = np.diff(mdp.choice_ptr)
    # initial policy: for min, a choice staying inside R (every choice does, by construction of Prob0A);
    # for max, any choice.  States in target / zero_set keep their fixed values.
    policy = np.where(nchoice > 0, 0, -1).astype(np.int64)
    tol: Fraction | float = Fraction(0) if use_exact else 1e-12  # a float 0.0 would round Fractions
    iterations = 0
    while True:
        iterations += 1
        if iterations > max_iterations:
            raise RuntimeError("policy iteration did not converge")
        dtmc = mdp.induced_dtmc({s: int(c) for s, c in enumerate(policy.tolist()) if c >= 0})
        vals = reach_probabilities(_restrict_zero(dtmc, zero_set), tmask, exact=use_exact)
        if use_exact:
            for s in np.flatnonzero(zero_set).tolist():
                vals[s] = Fraction(0)
        else:
            vals[zero_set] = 0.0
        q = _choice_values(mdp, vals, use_exact)
        improved = False
        new_policy = policy.copy()
        for s in np.flatnonzero((nchoice > 1) & ~tmask & ~zero_set).tolist():
            lo, hi = int(mdp.choice_ptr[s]), int(mdp.choice_ptr[s + 1])
            cur = q[lo + policy[s]]
            best_i, best_v = int(policy[s]), cur
            for i in range(hi - lo):
                v = q[lo + i]
                better = (v > best_v + tol) if objective == "max" else (v < best_v - tol)
                if better:
                    best_i, best_v = i, v
            if best_i != policy[s]:
                new_policy[s] = best_i
                improved = True
        policy = new_policy
        if not improved:
            break
    return MdpResult(vals, policy, _weighted_initial_mdp(mdp, vals, use_exact), use_exact, iterations,
                     objective)


def _restrict_zero(dtmc: Dtmc, zero_set: np.ndarray) -> Dtmc:
    """Make the ``zero_set`` states deadlocks (their value is fixed at 0)."""
    if not zero_set.any():
        return dtmc
    src = np.repeat(np.arange(dtmc.num_states), np.diff(dtmc.ptr))
    keep = ~zero_set[src]
    exact = None if dtmc.prob_exact is None else [p for p, k in zip(dtmc.prob_exact, keep, strict=True) if k]
    return _dtmc_from_edges(dtmc.num_states, src[keep], dtmc.idx[keep], dtmc.prob[keep], exact, dtmc.initial)


def _weighted_initial_mdp(mdp: Mdp, vals: Values, exact: bool) -> Fraction | float:
    if exact:
        return sum((p * vals[s] for s, p in mdp.initial), Fraction(0))
    return float(sum(float(p) * float(vals[s]) for s, p in mdp.initial))


def mdp_value_iteration(mdp: Mdp, target: np.ndarray | Iterable[int],
                        objective: Literal["min", "max"] = "max", *, tolerance: float = 1e-13,
                        max_iterations: int = 1_000_000) -> MdpResult:
    """Float value iteration from below (``x₀ = 1_target``, ``x_{k+1} = opt_c Σ P_c x_k``) after the same
    ``Prob0`` precomputation as :func:`mdp_reach`; stops when successive iterates differ by less than
    ``tolerance`` (a heuristic stopping rule: an independent cross-check, not a certified bound)."""
    n = mdp.num_states
    tmask = _as_mask(target, n)
    zero_set = _prob0(mdp, tmask, objective) & ~tmask
    x = tmask.astype(np.float64)
    nchoice = np.diff(mdp.choice_ptr)
    has = (nchoice > 0) & ~tmask & ~zero_set
    fill = -np.inf if objective == "max" else np.inf
    edge_choice = np.repeat(np.arange(mdp.num_choices), np.diff(mdp.edge_ptr))
    a_mat = sp.csr_matrix((mdp.edge_prob, (edge_choice, mdp.edge_dst)), shape=(mdp.num_choices, n))
    with_choice = np.flatnonzero(nchoice > 0)
    starts = mdp.choice_ptr[:-1][with_choice]
    reduce = np.maximum.reduceat if objective == "max" else np.minimum.reduceat
    it = 0
    for it in range(1, max_iterations + 1):  # noqa: B007
        q = a_mat @ x
        best = np.full(n, fill)
        if len(with_choice):
            best[with_choice] = reduce(q, starts)
        new = np.where(has, best, x)
        new[zero_set] = 0.0
        if np.max(np.abs(new - x), initial=0.0) < tolerance:
            x = new
            break
        x = new
    q = _choice_values(mdp, x, False)
    policy = np.full(n, -1, dtype=np.int64)
    for s in np.flatnonzero(nchoice > 0).tolist():
        lo, hi = int(mdp.choice_ptr[s]), int(mdp.choice_ptr[s + 1])
        seg = q[lo:hi]
        policy[s] = int(np.argmax(seg) if objective == "max" else np.argmin(seg))
    return MdpResult(x, policy, _weighted_initial_mdp(mdp, x, False), False, it, objective, "value iteration")


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
    edge_choice = np.repeat(np.arange(mdp.num_choices), np.diff(mdp.edge_ptr))
    a = sp.csr_matrix((mdp.edge_prob, (edge_choice, mdp.edge_dst)), shape=(mdp.num_choices, n))
    nchoice = np.diff(mdp.choice_ptr)
    has = np.flatnonzero(nchoice > 0)
    starts = mdp.choice_ptr[:-1][has]
    x = tmat.astype(np.float64)
    reduce = np.maximum.reduceat if objective == "max" else np.minimum.reduceat
    for _ in range(max_iterations):
        q = a @ x
        new = x.copy()
        if len(has):
            new[has] = reduce(q, starts, axis=0)
        new[tmat] = 1.0
        if np.max(np.abs(new - x), initial=0.0) < tolerance:
            return new
        x = new
    raise RuntimeError("value iteration did not converge")
