"""Backward and forward searches over the edges of a Kripke structure, used by attack-tree generation and
as the independent ``EF`` of the attack-tree tests (they do not use the CTL checker). All three are the
one breadth-first search of :mod:`checker.mc.reach`."""

from __future__ import annotations

import numpy as np

from checker.mc import reach
from checker.mc.kripke import Kripke


def distance_to(kripke: Kripke, goal: np.ndarray) -> np.ndarray:
    """Length of a shortest path from every state into ``goal`` (``-1`` when none): a breadth-first search
    on the reversed relation (``EF goal`` is ``distance_to(...) >= 0``)."""
    pred_ptr, pred_idx, _ = kripke.pred_ptr_idx
    return reach.distances(pred_ptr, pred_idx, goal)


def ef_mask(kripke: Kripke, goal: np.ndarray) -> np.ndarray:
    """``EF goal`` = lfp Z. goal ∪ EX Z, by backward search (independent of the CTL checker)."""
    pred_ptr, pred_idx, _ = kripke.pred_ptr_idx
    return reach.reachable(pred_ptr, pred_idx, goal)


def forward_reach(kripke: Kripke, sources: np.ndarray) -> np.ndarray:
    """States reachable (in zero or more steps) from the mask ``sources``."""
    return reach.reachable(kripke.succ_ptr, kripke.succ_idx, sources)
