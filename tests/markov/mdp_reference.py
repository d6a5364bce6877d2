"""Reference graph precomputations of an MDP, written from the definitions with Python sets (slow, plain,
independent of :mod:`checker.markov.graph`), and the fixpoint of flcheck's previous release (one
``np.unique`` over every edge per iteration), kept as a second oracle and as the "before" of
``bench/bench_mdp.py``.

For a target ``T`` ([BK08] §10.6.1): ``Pmax = 0`` on the states with no path of positive edges to ``T``;
``Pmin = 0`` outside ``lfp Z. T ∪ {s | s has a choice and each choice has a successor in Z}``;
``Pmax = 1`` on the greatest ``U`` such that from every state of ``U`` a path along choices whose
successors all lie in ``U`` reaches ``T``; ``Pmin = 1`` on the states from which no path avoiding ``T``
reaches a state of ``Pmin = 0``.
"""

from __future__ import annotations

import numpy as np

from checker.markov.models import Mdp


def _choices(mdp: Mdp) -> list[list[set[int]]]:
    """Per state, per choice, the successors of positive probability."""
    out: list[list[set[int]]] = []
    for s in range(mdp.num_states):
        per: list[set[int]] = []
        for c in range(int(mdp.choice_ptr[s]), int(mdp.choice_ptr[s + 1])):
            lo, hi = int(mdp.edge_ptr[c]), int(mdp.edge_ptr[c + 1])
            per.append({int(mdp.edge_dst[e]) for e in range(lo, hi) if mdp.edge_positive[e]})
        out.append(per)
    return out


def _mask(n: int, states: set[int]) -> np.ndarray:
    out = np.zeros(n, dtype=bool)
    out[sorted(states)] = True
    return out


def _can_reach(choices: list[list[set[int]]], target: set[int], allowed: set[int] | None = None) -> set[int]:
    """States with a path to ``target`` (every state on it before the last in ``allowed``)."""
    reached = set(target)
    changed = True
    while changed:
        changed = False
        for s, per in enumerate(choices):
            if s in reached or (allowed is not None and s not in allowed):
                continue
            if any(succ & reached for succ in per):
                reached.add(s)
                changed = True
    return reached


def max_zero(mdp: Mdp, target: np.ndarray) -> np.ndarray:
    choices = _choices(mdp)
    return ~_mask(mdp.num_states, _can_reach(choices, set(np.flatnonzero(target).tolist())))


def min_zero(mdp: Mdp, target: np.ndarray) -> np.ndarray:
    choices = _choices(mdp)
    z = set(np.flatnonzero(target).tolist())
    changed = True
    while changed:
        changed = False
        for s, per in enumerate(choices):
            if s not in z and per and all(succ & z for succ in per):
                z.add(s)
                changed = True
    return ~_mask(mdp.num_states, z)


def max_one(mdp: Mdp, target: np.ndarray) -> np.ndarray:
    choices = _choices(mdp)
    t = set(np.flatnonzero(target).tolist())
    u = set(range(mdp.num_states))
    while True:
        r = set(t)
        changed = True
        while changed:
            changed = False
            for s, per in enumerate(choices):
                if s not in r and any(succ <= u and succ & r for succ in per):
                    r.add(s)
                    changed = True
        if r == u:
            return _mask(mdp.num_states, u)
        u = r


def min_one(mdp: Mdp, target: np.ndarray) -> np.ndarray:
    choices = _choices(mdp)
    t = set(np.flatnonzero(target).tolist())
    zero = set(np.flatnonzero(min_zero(mdp, target)).tolist())
    outside = set(range(mdp.num_states)) - t
    return ~_mask(mdp.num_states, _can_reach(choices, zero - t, outside))


def previous_prob0(mdp: Mdp, tmask: np.ndarray, objective: str) -> np.ndarray:
    """flcheck's previous ``Prob0`` (``max``: no path to the target; ``min``: the fixpoint above, each
    iteration over every edge)."""
    n = mdp.num_states
    edge_choice = mdp.edge_choice
    pos = mdp.edge_positive
    csrc = mdp.choice_src
    if objective == "max":
        return max_zero(mdp, tmask)
    reach = tmask.copy()
    nchoice = np.diff(mdp.choice_ptr)
    while True:
        hit = np.zeros(mdp.num_choices, dtype=bool)
        e_ok = pos & reach[mdp.edge_dst]
        hit[np.unique(edge_choice[e_ok])] = True
        all_hit = np.ones(n, dtype=bool)
        all_hit[csrc[~hit]] = False
        new = reach | (all_hit & (nchoice > 0))
        if np.array_equal(new, reach):
            return ~reach
        reach = new
