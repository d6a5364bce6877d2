"""Backward and forward searches over the edges of a Kripke structure, used by attack-tree generation and
as the independent ``EF`` of the attack-tree tests (they do not use the CTL checker)."""

from __future__ import annotations

import numpy as np

from checker.mc.kripke import Kripke


def distance_to(kripke: Kripke, goal: np.ndarray) -> np.ndarray:
    """Length of a shortest path from every state into ``goal`` (``-1`` when none): a layered backward
    breadth-first search (``EF goal`` is ``distance_to(...) >= 0``)."""
    dist = np.full(kripke.num_states, -1, dtype=np.int64)
    dist[goal] = 0
    frontier = goal.copy()
    src, dst = kripke.edge_src, kripke.succ_idx
    level = 0
    while frontier.any():
        level += 1
        sel = frontier[dst]
        cand = src[sel]
        cand = cand[dist[cand] < 0]
        if not len(cand):
            break
        dist[cand] = level
        frontier = np.zeros(kripke.num_states, dtype=bool)
        frontier[cand] = True
    return dist


def ef_mask(kripke: Kripke, goal: np.ndarray) -> np.ndarray:
    """``EF goal`` = lfp Z. goal ∪ EX Z, by backward search (independent of the CTL checker)."""
    return distance_to(kripke, goal) >= 0


def forward_reach(kripke: Kripke, sources: np.ndarray) -> np.ndarray:
    """States reachable (in zero or more steps) from the mask ``sources``."""
    seen = sources.copy()
    frontier = sources.copy()
    src, dst = kripke.edge_src, kripke.succ_idx
    while frontier.any():
        nxt = dst[frontier[src]]
        nxt = nxt[~seen[nxt]]
        if not len(nxt):
            break
        seen[nxt] = True
        frontier = np.zeros(kripke.num_states, dtype=bool)
        frontier[nxt] = True
    return seen
