"""Graph precomputations: on a chain, which states can reach a set, which reach it almost surely
(``Prob1``, [BK08] Alg. 46), and the bottom strongly connected components; on an MDP, the states whose
minimal or maximal probability of reaching a set is 0 or 1 (:class:`MdpGraph`, :func:`prob0a`,
:func:`prob0e`, :func:`prob1a`, :func:`prob1e`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from checker.markov.models import Dtmc, Mdp, state_mask
from checker.mc import reach

__all__ = ["MdpGraph", "almost_sure_states", "backward_reach", "bottom_components", "can_reach",
           "forward_reach", "prob0a", "prob0e", "prob1a", "prob1e", "recurrent_target"]


def backward_reach(n: int, src: np.ndarray, dst: np.ndarray, target: np.ndarray) -> np.ndarray:
    """States that can reach ``target`` along edges ``src -> dst`` (including ``target``): the
    breadth-first search of :mod:`checker.mc.reach` on the reversed edges."""
    pred_ptr, pred_idx = reach.csr_from_edges(n, dst, src)
    return reach.reachable(pred_ptr, pred_idx, target)


def almost_sure_states(dtmc: Dtmc, target: np.ndarray) -> np.ndarray:
    """``Prob1``: states that reach ``target`` with probability 1, i.e. that cannot reach a state that
    cannot reach the target without passing through the target (Baier & Katoen, Alg. 46).  Besides
    saving work, it makes the float solve well-conditioned where hitting times are astronomically
    long (``I − A`` nearly singular)."""
    no = ~can_reach(dtmc, target)
    src = dtmc.src
    keep = dtmc.positive & ~target[src]
    return ~backward_reach(dtmc.num_states, src[keep], dtmc.idx[keep], no)


def can_reach(dtmc: Dtmc, target: np.ndarray) -> np.ndarray:
    """States that reach ``target`` with positive probability (``¬Prob0``; ``target`` included)."""
    src = dtmc.src
    pos = dtmc.positive
    return backward_reach(dtmc.num_states, src[pos], dtmc.idx[pos], target)


def forward_reach(dtmc: Dtmc, start: np.ndarray) -> np.ndarray:
    """States reachable (in zero or more steps) from the states ``start`` (ids or a mask)."""
    return reach.reachable(dtmc.ptr, dtmc.idx, state_mask(start, dtmc.num_states))


def recurrent_target(dtmc: Dtmc, candidates: np.ndarray) -> int | None:
    """A candidate state lying in a closed SCC that has an internal edge, or ``None``."""
    if not candidates.any():
        return None
    mat = dtmc.matrix()
    import scipy.sparse.csgraph as csgraph  # lazy: scipy's import costs a tenth of a second

    _, comp = csgraph.connected_components(mat, directed=True, connection="strong")
    src = dtmc.src
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


def bottom_components(dtmc: Dtmc) -> list[list[int]]:
    """The bottom strongly connected components (closed classes) of the chain; a deadlock state is a
    bottom component of its own.  Every run of a finite chain ends up in one of them a.s."""
    n = dtmc.num_states
    if n == 0:
        return []
    import scipy.sparse.csgraph as csgraph  # lazy: scipy's import costs a tenth of a second

    _, comp = csgraph.connected_components(dtmc.matrix(), directed=True, connection="strong")
    src = dtmc.src
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



# ------------------------------------------------------------------------------------------ MDPs
@dataclass(frozen=True, eq=False)
class MdpGraph:
    """The graph of an MDP's edges of positive probability, with predecessor arrays for the backward
    passes of :func:`prob0a`, :func:`prob0e`, :func:`prob1a` and :func:`prob1e` (built once, shared by
    them: Storm's ``backwardTransitions``).

    ``choice_ptr``/``choice_src`` are the MDP's (state → its choices, choice → its state);
    ``edge_choice``/``edge_dst`` list the positive edges; the positive edges entering ``t`` are
    ``pred_edge[pred_ptr[t]:pred_ptr[t+1]]`` (indices into ``edge_choice``/``edge_dst``)."""

    num_states: int
    choice_ptr: np.ndarray
    choice_src: np.ndarray
    edge_choice: np.ndarray
    edge_dst: np.ndarray
    pred_ptr: np.ndarray
    pred_edge: np.ndarray

    @classmethod
    def of(cls, mdp: Mdp) -> MdpGraph:
        """The graph of ``mdp`` (O(edges): one stable counting sort by target)."""
        keep = np.flatnonzero(mdp.edge_positive)
        edge_choice = np.asarray(mdp.edge_choice[keep], dtype=np.int64)
        edge_dst = np.asarray(mdp.edge_dst[keep], dtype=np.int64)
        pred_ptr, pred_edge = reach.csr_from_edges(mdp.num_states, edge_dst,
                                                   np.arange(len(keep), dtype=np.int64))
        return cls(mdp.num_states, np.asarray(mdp.choice_ptr, dtype=np.int64),
                   np.asarray(mdp.choice_src, dtype=np.int64), edge_choice, edge_dst, pred_ptr, pred_edge)

    @property
    def num_choices(self) -> int:
        return len(self.choice_src)

    @cached_property
    def edge_src(self) -> np.ndarray:
        """The state every positive edge leaves."""
        return self.choice_src[self.edge_choice]

    @cached_property
    def pred_src(self) -> np.ndarray:
        """The states of the predecessor arrays: the predecessors of ``t`` are
        ``pred_src[pred_ptr[t]:pred_ptr[t+1]]`` (with repetitions, one per edge)."""
        return self.edge_src[self.pred_edge]

    def first_choice(self, choices: np.ndarray) -> np.ndarray:
        """Per state, the index (among its choices) of the first of ``choices`` (a boolean mask over the
        choices) it has, ``-1`` where it has none."""
        out = np.full(self.num_states, -1, dtype=np.int64)
        ids = np.flatnonzero(choices)  # grouped by state: a state's choices are consecutive
        src = self.choice_src[ids]
        first = np.ones(len(ids), dtype=bool)
        first[1:] = src[1:] != src[:-1]
        out[src[first]] = ids[first] - self.choice_ptr[src[first]]
        return out


def prob0a(graph: MdpGraph, target: np.ndarray) -> np.ndarray:
    """``Prob0A`` (Storm's name: probability 0 under All schedulers): the states from which no scheduler
    reaches ``target``, i.e. ``Pmax = 0`` — those with no path of positive edges to it ([BK08] §10.6.1).
    One backward breadth-first search over the predecessor arrays."""
    return ~reach.reachable(graph.pred_ptr, graph.pred_src, target)


def _attractor(graph: MdpGraph, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``R = lfp Z. target ∪ {s | s has a choice, and every choice of s has a successor in Z}`` and the
    choices with a successor in ``R``.

    One backward pass ([BK08] §10.6.1, in the counting form of [dA97]): every state counts its choices
    without a successor in ``R`` yet; a state entering ``R`` marks the choices of its positive in-edges,
    each marked choice decrements its state's count, and a state whose count reaches 0 enters ``R``. Each
    edge is looked at once, when its target enters ``R``: O(edges), vectorised over the states that entered
    ``R`` together."""
    n = graph.num_states
    inside = np.array(target, dtype=bool, copy=True)
    waiting = np.diff(graph.choice_ptr)
    hit = np.zeros(graph.num_choices, dtype=bool)
    choice_scratch = np.zeros(max(graph.num_choices, 1), dtype=np.int64)
    state_scratch = np.zeros(max(n, 1), dtype=np.int64)
    layer = np.flatnonzero(inside)
    while layer.size:
        choices = graph.edge_choice[reach.gather_ranges(graph.pred_ptr, graph.pred_edge, layer)]
        choices = reach.distinct(choices[~hit[choices]], choice_scratch)
        if not choices.size:
            break
        hit[choices] = True
        states = graph.choice_src[choices]
        np.subtract.at(waiting, states, 1)
        states = reach.distinct(states, state_scratch)
        layer = states[(waiting[states] == 0) & ~inside[states]]
        inside[layer] = True
    return inside, hit


def prob0e(graph: MdpGraph, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Prob0E`` (Storm's name: probability 0 under somE scheduler): the states from which some scheduler
    never reaches ``target``, i.e. ``Pmin = 0``, and such a scheduler.

    They are the complement of :func:`_attractor`'s ``R``: a state outside ``R`` has no choice (a run ends
    there) or a choice with no successor in ``R``, which keeps the run outside ``R ⊇ target`` forever;
    from a state of ``R`` every scheduler reaches a state of ``R`` of smaller rank with positive
    probability at each step, hence ``target`` with positive probability ([BK08] §10.6.1).
    Returns ``(mask, choice)``: ``choice[s]`` the index of such a choice of ``s`` (``-1`` where ``s`` has
    no choice or is not in the mask)."""
    inside, hit = _attractor(graph, target)
    avoid = ~hit & ~inside[graph.choice_src]
    return ~inside, graph.first_choice(avoid)


def prob1a(graph: MdpGraph, target: np.ndarray, zero_min: np.ndarray | None = None) -> np.ndarray:
    """``Prob1A`` (probability 1 under All schedulers): the states from which every scheduler reaches
    ``target`` almost surely, i.e. ``Pmin = 1``; ``zero_min`` is :func:`prob0e`'s mask when known.

    A state ``s ∉ target`` has ``Pmin(s) < 1`` iff some path of positive edges from ``s`` that avoids
    ``target`` reaches a state of ``Prob0E``: following its choices, then the scheduler that avoids the
    target forever, misses the target with positive probability; conversely a memoryless scheduler with
    ``P(s) < 1`` leaves, with positive probability, ``s`` for a bottom component (or a deadlock) outside
    the target, whose states are in ``Prob0E``, without passing the target. So ``Prob1A`` is the
    complement of one backward search from ``Prob0E`` that enters no target state (the MDP form of the
    chains' ``Prob1``, [BK08] Alg. 46)."""
    if zero_min is None:
        zero_min, _ = prob0e(graph, target)
    return ~reach.reachable(graph.pred_ptr, graph.pred_src, zero_min & ~target, enter=~target)


def prob1e(graph: MdpGraph, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Prob1E`` (probability 1 under somE scheduler): the states from which some scheduler reaches
    ``target`` almost surely, i.e. ``Pmax = 1``, and a memoryless scheduler doing so.

    The nested fixpoint of [BK08] §10.6.1 and [dA97]: ``U₀`` = the states that can reach ``target``; then
    ``U_{i+1}`` = the states with a path to ``target`` along *safe* choices, those whose positive
    successors all lie in ``U_i`` (one backward search each, over the predecessor arrays restricted to the
    safe choices' edges), until ``U`` is stable. In the final ``U`` each state off the target has a safe
    choice with a successor one step closer to the target (its breadth-first distance along safe
    edges); that choice stays in ``U`` and gets closer with positive probability at every step, so the
    scheduler taking it reaches the target almost surely. Returns ``(mask, choice)`` (``choice[s] = -1``
    on the target and outside the mask)."""
    can = ~prob0a(graph, target)
    in_edges = graph.edge_choice[graph.pred_edge]
    while True:
        unsafe = np.zeros(graph.num_choices, dtype=bool)
        unsafe[graph.edge_choice[~can[graph.edge_dst]]] = True
        keep = ~unsafe[in_edges]
        offsets = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(keep, out=offsets[1:])
        ptr, idx = offsets[graph.pred_ptr], graph.pred_src[keep]
        now = reach.reachable(ptr, idx, target, enter=can)
        if np.array_equal(now, can):
            break
        can = now
    dist = reach.distances(ptr, idx, target, enter=can)
    src, dst = graph.edge_src, graph.edge_dst
    closer = ~unsafe[graph.edge_choice] & ~target[src] & can[src] & (dist[dst] == dist[src] - 1)
    good = np.zeros(graph.num_choices, dtype=bool)
    good[graph.edge_choice[closer]] = True
    return can, graph.first_choice(good)
