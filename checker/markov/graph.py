"""Graph precomputations on a chain: which states can reach a set, which reach it almost surely
(``Prob1``, Baier & Katoen, *Principles of Model Checking*, Alg. 46), and the bottom strongly connected
components."""

from __future__ import annotations

import numpy as np

from checker.markov.models import Dtmc, state_mask
from checker.mc import reach

__all__ = ["almost_sure_states", "backward_reach", "bottom_components", "can_reach", "forward_reach",
           "recurrent_target"]


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

