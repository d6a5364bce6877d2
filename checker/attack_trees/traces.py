"""When two attacks are the same attack: independence of actions and Mazurkiewicz traces.

Two steps commute when their actions are *independent* (:class:`Independence`): actions ``a ≠ b`` are
independent in ``K`` iff for every state ``x``
(D) whenever ``x -a-> y`` and ``x -b-> y'`` there is ``z`` with ``y -b-> z`` and ``y' -a-> z`` (diamond), and
(C) whenever ``x -a-> y -b-> z`` there is ``y'`` with ``x -b-> y' -a-> z``, and symmetrically for ``b a``
(the axioms of an asynchronous transition system). Two action words are the same attack iff they are
Mazurkiewicz-trace equivalent, i.e. one becomes the other by swapping adjacent independent actions. Each
trace class is represented by its lexicographic normal form (Anisimov–Knuth): a word is in normal form iff
it has no factor ``b·u·a`` with ``a < b``, ``a`` independent of ``b`` and of every letter of ``u``
(:func:`extends_normal_form`). Letters are the full actions, the actions without their detail, or the
edges themselves (:func:`edge_letters`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from checker.mc.kripke import Kripke
from checker.mc.ts import Action


class Independence:
    """The independence relation of the actions of ``kripke`` (axioms (D) and (C) of the module
    docstring), computed lazily per pair (vectorised joins over the edges of the two actions) and
    cached."""

    def __init__(self, kripke: Kripke, letters: np.ndarray | None = None, n_letters: int | None = None):
        self.kripke = kripke
        lets = kripke.edge_action if letters is None else letters
        n = len(kripke.actions) if n_letters is None else n_letters
        # CSR edges are ordered by source, so a stable sort by letter orders them by (letter, source)
        order = np.argsort(lets, kind="stable")
        self._src = kripke.edge_src[order]
        self._dst = kripke.succ_idx[order]
        self._bounds = np.searchsorted(lets[order], np.arange(n + 1))
        self._cache: dict[tuple[int, int], bool] = {}

    def edges_of(self, action: int) -> tuple[np.ndarray, np.ndarray]:
        """``(src, dst)`` of the edges carrying ``action`` (a letter), sorted by source."""
        lo, hi = int(self._bounds[action]), int(self._bounds[action + 1])
        return self._src[lo:hi], self._dst[lo:hi]

    @staticmethod
    def _join(keys: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All ``(j, i)`` with ``keys[i] == queries[j]`` (``keys`` sorted)."""
        lo = np.searchsorted(keys, queries, "left")
        cnt = np.searchsorted(keys, queries, "right") - lo
        total = int(cnt.sum())
        j = np.repeat(np.arange(len(queries)), cnt)
        offsets = np.cumsum(cnt) - cnt
        i = np.arange(total) - np.repeat(offsets, cnt) + np.repeat(lo, cnt)
        return j, i

    def _commutes(self, a: int, b: int, limit: int | None = None) -> bool:
        """(C) for ``a b``: every ``x -a-> y -b-> z`` has some ``x -b-> y' -a-> z`` (checked for the first
        ``limit`` ``a``-edges only when ``limit`` is given: a quick, sound rejection test)."""
        n = self.kripke.num_states
        sa, da = self.edges_of(a)
        sb, db = self.edges_of(b)
        if limit is not None:
            sa, da = sa[:limit], da[:limit]
        j, i = self._join(sb, da)
        if not len(j):
            return True
        ab = sa[j] * n + db[i]
        xs = np.unique(sa[j])
        jb, ib = self._join(sb, xs)  # x -b-> y'
        sa_all, da_all = self.edges_of(a)
        j2, i2 = self._join(sa_all, db[ib])  # y' -a-> z
        ba = xs[jb[j2]] * n + da_all[i2]
        return bool(np.isin(ab, ba).all())

    def _diamond(self, a: int, b: int, limit: int | None = None) -> bool:
        """(D): whenever ``x -a-> y`` and ``x -b-> y'``, some ``z`` has ``y -b-> z`` and ``y' -a-> z``."""
        n = self.kripke.num_states
        sa, da = self.edges_of(a)
        sb, db = self.edges_of(b)
        sa_all, da_all = sa, da
        if limit is not None:
            sa, da = sa[:limit], da[:limit]
        ja, ib = self._join(sb, sa)  # triples t: (x, y = da[ja], y' = db[ib])
        if not len(ja):
            return True
        y, y2 = da[ja], db[ib]
        t1, e1 = self._join(sb, y)  # y -b-> z
        t2, e2 = self._join(sa_all, y2)  # y' -a-> z
        keys1 = t1 * n + db[e1]
        keys2 = t2 * n + da_all[e2]
        closed = np.unique(keys1[np.isin(keys1, keys2)] // n)
        return len(closed) == len(ja)

    def _axioms(self, a: int, b: int, limit: int | None) -> bool:
        return (self._diamond(a, b, limit) and self._commutes(a, b, limit)
                and self._commutes(b, a, limit))

    def independent(self, a: int, b: int) -> bool:
        if a == b:
            return False
        key = (a, b) if a < b else (b, a)
        hit = self._cache.get(key)
        if hit is None:
            # a cheap check on a prefix of the edges rejects most dependent pairs early
            hit = self._axioms(a, b, 1024) and self._axioms(a, b, None)
            self._cache[key] = hit
        return hit


def extends_normal_form(word: Sequence[int], letter: int, rank: Sequence[int],
                        independent: Callable[[int, int], bool]) -> bool:
    """Is ``word·letter`` in lexicographic normal form, given ``word`` is? (No factor ``b·u·letter`` with
    ``letter < b`` in ``rank`` order, ``letter`` independent of ``b`` and of every letter of ``u``.)"""
    r = rank[letter]
    for prev in reversed(word):
        if not independent(prev, letter):
            return True
        if rank[prev] > r:
            return False
    return True


def edge_letters(kripke: Kripke, mode: str) -> tuple[np.ndarray, list[str], list[int]]:
    """The letter of every edge for comparing attacks, the letters' names and their rank (the total
    order of the lexicographic normal form). ``actions``: the full action (rule, actor, location,
    detail); ``steps``: the action without its detail (e.g. the same client step whatever noisy value or
    trace choice it carries); ``paths``: the edge itself (every path is its own attack)."""
    if mode == "paths":
        return np.arange(kripke.num_transitions), [], []
    if mode == "actions":
        keys = [(a.rule, a.actor or "", a.location or "", a.detail) for a in kripke.actions]
        names = [str(a) for a in kripke.actions]
        letters = kripke.edge_action.astype(np.int64)
    elif mode == "steps":
        classes: dict[tuple[str, str, str], int] = {}
        of_action = []
        for a in kripke.actions:
            of_action.append(classes.setdefault((a.rule, a.actor or "", a.location or ""), len(classes)))
        keys = [(*k, "") for k in classes]
        names = [str(Action(r, act or None, loc or None)) for r, act, loc in classes]
        letters = np.asarray(of_action, dtype=np.int64)[kripke.edge_action] if of_action else \
            np.zeros(0, np.int64)
    else:
        raise ValueError(f"unknown distinction {mode!r} (expected actions, steps or paths)")
    order = sorted(range(len(keys)), key=lambda i: (keys[i], i))
    rank = [0] * len(keys)
    for r, i in enumerate(order):
        rank[i] = r
    return letters, names, rank

