"""Breadth-first exploration of a :class:`BatchTransitionSystem`: integer-coded states, expanded a
whole slice of the BFS queue at a time with numpy, into the same :class:`Kripke` structure as
:func:`checker.mc.explore.explore` (IIIf MC: the states reachable from the initial ones).

A batch transition system codes each state as a *row* of non-negative integers (a canonical code: two
states are equal exactly when their rows are) and computes the successors of many rows at once
(:class:`BatchSteps`); actions and exact probabilities are ids into its tables. ``decode`` turns a row
back into the state object the system's ``observe`` reads, so observables, witnesses and everything
downstream work on decoded states, decoded lazily after the search (:class:`DecodedStates`).

A system may also compute whole observable columns from the rows (an optional method
``observe_rows(rows, name)`` returning the values of ``name`` on every row, or ``None`` when it cannot),
which spares decoding the states.

The search keeps no Python object per state: the rows in one growing array, and their ids in an
open-addressing hash table (:class:`RowIndex`) keyed by the rows packed into 63-bit words (exact:
every column gets as many bits as its largest value needs, with room to double; the table is rebuilt
with wider columns when a value outgrows its bits). The queue is expanded in slices of consecutive ids;
new targets get ids in the order of their first edge, so the ids, the CSR arrays, the action order and
the probabilities are those of :func:`~checker.mc.explore.explore` (which expands one state after the
other in id order) — provided that ``successors_batch`` lists the steps of each row in the order the
system's own ``successors`` would (the contract of :class:`BatchTransitionSystem`).

Limits behave as in :func:`~checker.mc.explore.explore`: a state or transition limit keeps every state
expanded before the one whose expansion crosses it, rolls that one back to the frontier and stops with
the same ``limit_reason``; time, memory and progress are checked between slices (a slice holds at most
``slice_states`` states, fewer while expanding a slice takes longer than
:data:`~checker.mc.exploration.CHECK_SECONDS`: the slices adapt, so the limits are checked about every
``CHECK_SECONDS`` on every model), where the plain explorer checks every ``check_every`` states.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterator, Sequence
from fractions import Fraction
from typing import NamedTuple, Protocol, overload, runtime_checkable

import numpy as np

from checker.errors import LimitReached
from checker.mc.collector import exploring
from checker.mc.exploration import (
    CHECK_SECONDS,
    EXPLORATION_MEMORY_SHARE,
    LazyObservables,
    Limits,
    ProgressCallback,
    peak_rss_mb,
    progress_report,
    stop_reason,
)
from checker.mc.kripke import Kripke
from checker.mc.ts import Action, as_action

#: Bits of a key word (keys are non-negative int64 values).
WORD_BITS = 63
#: States of the first slice (the slices then adapt to ``CHECK_SECONDS``, up to ``slice_states``).
FIRST_SLICE = 512
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: multiply, keep the high bits


class BatchSteps(NamedTuple):
    """The steps from a batch of rows, grouped by source row: ``source[e]`` is the index (in the batch)
    of the row edge ``e`` leaves (non-decreasing), ``action[e]`` an index into the system's
    ``actions``, ``target[e]`` the target row and ``probability[e]`` an index into its
    ``probabilities``."""

    source: np.ndarray
    action: np.ndarray
    target: np.ndarray
    probability: np.ndarray


@runtime_checkable
class BatchTransitionSystem(Protocol):
    """A transition system whose states are rows of ``width`` non-negative integers.

    Contract: rows are a canonical code (``decode`` is injective); ``successors_batch(rows)`` lists for
    each row, in order, exactly the steps ``successors(decode(row))`` of the system it codes, in that
    order, with ``actions[action]`` the step's action object (duck-typed as in
    :func:`checker.mc.ts.as_action`) and ``probabilities[probability]`` its exact probability. The
    tables may grow while the search runs (they are read after each call)."""

    @property
    def width(self) -> int:
        """Integers per row."""
        ...

    @property
    def actions(self) -> Sequence[object]:
        """The action table."""
        ...

    @property
    def probabilities(self) -> Sequence[Fraction]:
        """The probability table (exact)."""
        ...

    def initial_rows(self) -> np.ndarray:
        """The rows of the initial states, shape ``(k, width)``."""
        ...

    def successors_batch(self, rows: np.ndarray) -> BatchSteps:
        """The steps from every row of ``rows`` (shape ``(m, width)``)."""
        ...

    def decode(self, row: np.ndarray) -> Hashable:
        """The state a row codes."""
        ...

    def observable_names(self) -> Sequence[str]:
        """Names of the observables (as :meth:`checker.mc.ts.TransitionSystem.observable_names`)."""
        ...

    def observe(self, state: Hashable, name: str) -> object:
        """Value of observable ``name`` on a decoded state."""
        ...


# ------------------------------------------------------------------------------------------ the index
class RowIndex:
    """An exact map from rows to ids: each row is packed into ``words`` non-negative 63-bit integers
    (column ``j`` takes ``bits[j]`` bits at ``shift[j]`` of word ``word[j]``), and the packed keys are
    stored in an open-addressing hash table with linear probing (load at most 1/2), all in numpy.

    >>> ix = RowIndex(2)
    >>> rows = np.array([[1, 2], [3, 0], [1, 2]])
    >>> ix.rebuild(rows[:2], rows.max(axis=0)); ix.lookup(ix.pack(rows)).tolist()
    [0, 1, 0]
    """

    def __init__(self, width: int):
        self.width = width
        self.limit = np.zeros(width, dtype=np.int64)  # largest value each column can hold
        self.word = np.zeros(width, dtype=np.int64)
        self.shift = np.zeros(width, dtype=np.uint64)
        self.words = 1
        self._layout(np.zeros(width, dtype=np.int64))
        self._keys = np.zeros((0, 1), dtype=np.int64)
        self._ids = np.zeros(0, dtype=np.int64)
        self._mask = 0
        self._bits = 0
        self.count = 0

    def _layout(self, maxima: np.ndarray) -> None:
        """Bits per column for values up to twice ``maxima`` (at least one), greedily into words."""
        bits = [min(WORD_BITS, max(1, int(2 * int(m)).bit_length())) for m in maxima]
        word, used = 0, 0
        for j, b in enumerate(bits):
            if used + b > WORD_BITS:
                word, used = word + 1, 0
            self.word[j] = word
            self.shift[j] = used
            self.limit[j] = (1 << b) - 1
            used += b
        self.words = word + 1
        self._weights = np.zeros((self.width, self.words), dtype=np.int64)
        self._weights[np.arange(self.width), self.word] = np.left_shift(1, self.shift.astype(np.int64))

    def fits(self, maxima: np.ndarray) -> bool:
        """Whether rows with these column maxima pack without loss."""
        return bool(np.all(maxima <= self.limit))

    def pack(self, rows: np.ndarray) -> np.ndarray:
        """The keys of ``rows``, shape ``(m, words)`` (int64): ``Σ_j rows[:, j] · 2^shift[j]`` per word
        (no carries: the columns' bit ranges are disjoint)."""
        return np.einsum("ij,jk->ik", rows, self._weights)

    def _slots(self, keys: np.ndarray) -> np.ndarray:
        h = keys[:, 0].view(np.uint64) * _GOLDEN
        for w in range(1, keys.shape[1]):
            h = (h ^ keys[:, w].view(np.uint64)) * _GOLDEN
        return (h >> np.uint64(64 - self._bits)).astype(np.int64)

    def rebuild(self, rows: np.ndarray, maxima: np.ndarray) -> None:
        """Re-lay the columns for ``maxima`` and index ``rows`` (ids ``0 .. len(rows)-1``)."""
        self._layout(maxima)
        self.count = 0
        self._allocate(max(len(rows), 1))
        if len(rows):
            self.insert(self.pack(rows), np.arange(len(rows), dtype=np.int64))

    def _allocate(self, entries: int) -> None:
        self._bits = max(10, (2 * entries - 1).bit_length())
        cap = 1 << self._bits
        self._mask = cap - 1
        self._keys = np.zeros((cap, self.words), dtype=np.int64)
        self._ids = np.full(cap, -1, dtype=np.int64)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """The id of every key, ``-1`` where absent."""
        out = np.full(len(keys), -1, dtype=np.int64)
        if not len(keys) or not self.count:
            return out
        pending = np.arange(len(keys))
        slot = self._slots(keys)
        while len(pending):
            ids = self._ids[slot]
            hit = ids >= 0
            if self.words == 1:
                same = hit & (self._keys[slot, 0] == keys[pending, 0])
            else:
                same = hit & np.all(self._keys[slot] == keys[pending], axis=1)
            out[pending[same]] = ids[same]
            go_on = hit & ~same
            pending = pending[go_on]
            slot = (slot[go_on] + 1) & self._mask
        return out

    def insert(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Add distinct keys, none of them present, with their ids (the table grows to keep its load at
        most 1/2)."""
        if 2 * (self.count + len(keys)) > len(self._ids):
            old_keys, old_ids = self._keys[self._ids >= 0], self._ids[self._ids >= 0]
            self._allocate(self.count + len(keys))
            self.count = 0
            if len(old_ids):
                self.insert(old_keys, old_ids)
        pending = np.arange(len(keys))
        slot = self._slots(keys)
        while len(pending):
            free = np.flatnonzero(self._ids[slot] < 0)
            # keys bound for the same free slot: one of them takes it, the others probe on
            mine = ids[pending[free]]
            self._ids[slot[free]] = mine
            won = free[self._ids[slot[free]] == mine]
            self._keys[slot[won]] = keys[pending[won]]
            moved = np.ones(len(pending), dtype=bool)
            moved[won] = False
            pending = pending[moved]
            slot = (slot[moved] + 1) & self._mask
        self.count += len(keys)


def first_unique(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct keys (rows of ``keys``), the index of each one's first occurrence and, per key, the
    position of its distinct key: ``(unique, first, inverse)`` with ``unique[inverse] == keys``."""
    if keys.shape[1] == 1:
        k = keys[:, 0]
        order = np.argsort(k)
        sk = k[order]
        step = sk[1:] != sk[:-1]
        starts = np.concatenate(([0], np.flatnonzero(step) + 1)) if len(k) else np.zeros(0, np.int64)
        first = np.minimum.reduceat(order, starts) if len(k) else np.zeros(0, np.int64)
        group = np.concatenate(([0], np.cumsum(step)))
        inverse = np.empty(len(k), dtype=np.int64)
        inverse[order] = group
        return sk[starts].reshape(-1, 1), first.astype(np.int64), inverse
    unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    return unique, first.astype(np.int64), inverse.reshape(-1).astype(np.int64)


# ------------------------------------------------------------------------------------------ the states
class DecodedStates(Sequence[Hashable]):
    """``Kripke.states`` of a batch exploration: the rows, decoded on first use (one state on access by
    index; all of them, kept, on iteration)."""

    def __init__(self, ts: BatchTransitionSystem, rows: np.ndarray):
        self._ts = ts
        self.rows = rows
        self._all: list[Hashable] | None = None
        self._some: dict[int, Hashable] = {}

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> Hashable: ...

    @overload
    def __getitem__(self, index: slice) -> list[Hashable]: ...

    def __getitem__(self, index: int | slice) -> Hashable | list[Hashable]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.rows)))]
        if self._all is not None:
            return self._all[index]
        i = int(index) + (len(self.rows) if index < 0 else 0)
        if not 0 <= i < len(self.rows):
            raise IndexError(index)
        hit = self._some.get(i)
        if hit is None:
            hit = self._some[i] = self._ts.decode(self.rows[i])
        return hit

    def __iter__(self) -> Iterator[Hashable]:
        if self._all is None:
            decode, some = self._ts.decode, self._some
            self._all = [some[i] if i in some else decode(row) for i, row in enumerate(self.rows)]
            self._some = {}
        return iter(self._all)


def _narrow(ids: np.ndarray) -> np.ndarray:
    """Non-negative ids as int32 where they fit (edge arrays of a search: half the memory)."""
    return ids.astype(np.int32) if not len(ids) or ids.max() < 2**31 - 1 else ids


class _Growing:
    """An array that grows along its first axis (capacity doubling)."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype | type):
        self.data = np.zeros((1024, *shape), dtype=dtype)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        end = self.size + len(values)
        if end > len(self.data):
            grown = np.zeros((max(end, 2 * len(self.data)), *self.data.shape[1:]), dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size: end] = values
        self.size = end

    def view(self) -> np.ndarray:
        return self.data[: self.size]


# ------------------------------------------------------------------------------------------ the search
def explore_batch(
    ts: BatchTransitionSystem,
    *,
    limits: Limits | None = None,
    observables: Sequence[str] | None = None,
    probabilities: bool | None = None,
    keep_states: bool = True,
    lazy_observables: bool = True,
    progress: ProgressCallback | None = None,
    progress_interval: float = 0.5,
    source: str = "<model>",
    slice_states: int = 1 << 15,
) -> Kripke:
    """Explore ``ts`` breadth-first from its initial rows (parameters as
    :func:`checker.mc.explore.explore`; ``slice_states``: most states expanded by one call of
    ``successors_batch``). ``stats`` also has ``"batch": 1.0``."""
    lim = limits or Limits()
    names = list(ts.observable_names()) if observables is None else list(observables)
    t0 = time.perf_counter()
    width = ts.width
    initial = np.asarray(ts.initial_rows())
    if initial.ndim != 2 or initial.shape[1] != width:
        raise ValueError(f"initial rows of shape {initial.shape}, expected (k, {width})")
    if len(initial) and initial.min() < 0:
        raise ValueError("rows must be non-negative")
    rows = _Growing((width,), initial.dtype)
    depth = _Growing((), np.int32)
    index = RowIndex(width)
    maxima = initial.max(axis=0) if len(initial) else np.zeros(width, dtype=np.int64)
    keys = index.pack(initial) if index.fits(maxima) else None
    if keys is None:
        index.rebuild(initial[:0], maxima)
        keys = index.pack(initial)
    uniq, first, inverse = first_unique(keys)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    index.insert(uniq[order], np.arange(len(order), dtype=np.int64))
    rows.extend(initial[first[order]])
    depth.extend(np.zeros(len(order), dtype=np.int32))
    initial_ids = rank[inverse]
    maxima = maxima.astype(np.int64)

    dst_parts: list[np.ndarray] = []
    act_parts: list[np.ndarray] = []
    prob_parts: list[np.ndarray] = []
    count_parts: list[np.ndarray] = []
    n_edges = 0
    amap = np.full(0, -1, dtype=np.int64)  # the system's action id -> the structure's
    actions: list[Action] = []
    action_index: dict[Action, int] = {}
    pnontrivial = np.zeros(0, dtype=bool)  # per probability id: differs from 1
    nontrivial = False
    reason: str | None = None
    expanded = 0
    next_progress = t0 + progress_interval
    stops = lim.stops()
    width = max(1, min(slice_states, FIRST_SLICE) // 2)  # doubled before the first slice
    slice_start = time.perf_counter()
    with exploring() as frozen:  # checker.mc.collector
        while expanded < rows.size:
            n = rows.size
            if expanded:
                now = time.perf_counter()
                reason = stop_reason(lim, stops, EXPLORATION_MEMORY_SHARE)
                if reason is not None:
                    break
                if progress is not None and now >= next_progress:
                    next_progress = now + progress_interval
                    progress(progress_report(n, expanded, n_edges, now - t0, int(depth.data[expanded])))
            # the slice grows while it takes under CHECK_SECONDS and shrinks when it takes longer, so that
            # the limits are checked about as often on a swarm of 128 satellites as on a small model
            took = time.perf_counter() - slice_start
            width = (min(slice_states, width * 2) if took < CHECK_SECONDS / 2
                     else max(1, width // 2) if took > 2 * CHECK_SECONDS else width)
            slice_start = time.perf_counter()
            a, b = expanded, min(n, expanded + max(1, width))
            try:  # a stop by the watchdog here leaves the structure of the slices before this one
                steps = ts.successors_batch(rows.data[a:b])
                src = np.asarray(steps.source, dtype=np.int64)
                m = len(src)
                targets = np.asarray(steps.target, dtype=rows.data.dtype)
                counts = np.bincount(src, minlength=b - a) if m else np.zeros(b - a, dtype=np.int64)
                if m:
                    if len(counts) != b - a or np.any(src[1:] < src[:-1]):
                        raise ValueError("successors_batch: sources outside the batch or not grouped by row")
                    tmax = targets.max(axis=0)
                    if targets.min() < 0:
                        raise ValueError("rows must be non-negative")
                    if not index.fits(tmax):
                        maxima = np.maximum(maxima, tmax)
                        index.rebuild(rows.view(), maxima)
                    else:
                        maxima = np.maximum(maxima, tmax)
                    uniq, first, inverse = first_unique(index.pack(targets))
                    found = index.lookup(uniq)
                    new = np.flatnonzero(found < 0)
                    new = new[np.argsort(first[new], kind="stable")]  # ids in the order of first discovery
                else:
                    new = np.zeros(0, dtype=np.int64)
            except LimitReached as exc:
                reason = exc.reason
                break
            # the limits: the first state whose expansion crosses one is rolled back, with the rest
            # (as in explore, the actions and the probabilities other than 1 met while expanding the
            # rolled-back state count: those of its steps before the new state that crosses the state
            # limit, or all of its steps when it crosses the transition limit)
            stop: int | None = None
            seen = m
            if lim.max_states is not None and max(0, lim.max_states - n) < len(new):
                seen = int(first[new[max(0, lim.max_states - n)]])
                stop = int(src[seen])
                reason = f"state limit of {lim.max_states} reached"
            if lim.max_transitions is not None and m:
                ends = np.cumsum(counts)
                over = np.flatnonzero(n_edges + ends > lim.max_transitions)
                if len(over) and (stop is None or over[0] < stop):
                    stop = int(over[0])
                    seen = int(ends[stop])
                    reason = f"transition limit of {lim.max_transitions} reached"
            cut = m
            if stop is not None:
                cut = int(counts[:stop].sum())
                new = new[first[new] < cut]
                counts = counts[:stop]
            if m:
                ids = np.arange(n, n + len(new), dtype=np.int64)
                found[new] = ids
                index.insert(uniq[new], ids)
                rows.extend(np.take(targets, first[new], axis=0))
                depth.extend(depth.data[a + src[first[new]]] + 1)
                dst_parts.append(_narrow(found[inverse[:cut]]))
                aids = np.asarray(steps.action[:seen], dtype=np.int64)
                pids = np.asarray(steps.probability[:seen], dtype=np.int64)
                if len(ts.actions) > len(amap):
                    amap = np.concatenate([amap, np.full(len(ts.actions) - len(amap), -1, dtype=np.int64)])
                if len(ts.probabilities) > len(pnontrivial):
                    pnontrivial = np.concatenate([pnontrivial, np.array(
                        [p != 1 for p in ts.probabilities[len(pnontrivial):]], dtype=bool)])
                kid = amap[aids]
                if np.any(kid < 0):
                    unseen, at = np.unique(aids[kid < 0], return_index=True)
                    for t in unseen[np.argsort(at)].tolist():
                        action = as_action(ts.actions[t])
                        aid = action_index.get(action)
                        if aid is None:
                            aid = action_index[action] = len(actions)
                            actions.append(action)
                        amap[t] = aid
                    kid = amap[aids]
                act_parts.append(kid[:cut].astype(np.int32))
                prob_parts.append(_narrow(pids[:cut]))
                nontrivial = nontrivial or bool(pnontrivial[pids].any())
            count_parts.append(counts)
            n_edges += cut
            if stop is not None:
                expanded = a + stop
                break
            expanded = b

    n = rows.size
    ptr = np.zeros(n + 1, dtype=np.int64)
    if count_parts:
        np.cumsum(np.concatenate(count_parts), out=ptr[1: expanded + 1])
    ptr[expanded + 1:] = ptr[expanded]
    frontier = None
    if reason is not None:
        frontier = np.zeros(n, dtype=bool)
        frontier[expanded:] = True
    itype = np.int32 if n < 2**31 - 1 else np.int64
    dst = np.concatenate(dst_parts, dtype=itype) if dst_parts else np.zeros(0, dtype=itype)
    act = np.concatenate(act_parts) if act_parts else np.zeros(0, dtype=np.int32)
    del dst_parts[:], act_parts[:]
    keep_prob = nontrivial if probabilities is None else probabilities
    exact: list[Fraction] | None = None
    floats = None
    if keep_prob:
        table = [p if type(p) is Fraction else Fraction(p) for p in ts.probabilities]
        objects = np.array(table, dtype=object)
        ftable = np.array([p.numerator / p.denominator for p in table], dtype=np.float64)
        exact = []
        for part in prob_parts:  # slice by slice: no per-edge temporaries for the whole structure
            exact.extend(objects[part].tolist())
        floats = np.concatenate([ftable[part] for part in prob_parts]) if prob_parts else np.zeros(0)
    del prob_parts[:]
    all_rows = rows.view().copy()
    states = DecodedStates(ts, all_rows)
    lazy = lazy_observables and keep_states
    observe_rows = getattr(ts, "observe_rows", None)

    def columns(name: str) -> list[object] | None:
        col: list[object] | None = None if observe_rows is None else observe_rows(all_rows, name)
        return col

    lazy_obs = LazyObservables(ts, states, names, columns)
    obs: LazyObservables | dict[str, list[object]] = (
        lazy_obs if lazy else {name: lazy_obs[name] for name in names})
    max_depth = int(depth.view().max()) if depth.size else 0
    elapsed = time.perf_counter() - t0
    kripke = Kripke(
        num_states=n,
        initial=np.unique(initial_ids),
        succ_ptr=ptr,
        succ_idx=dst.astype(itype),
        edge_action=act,
        actions=tuple(actions) or (Action("step"),),
        observables=obs,
        edge_prob=floats,
        edge_prob_exact=exact,
        states=states if keep_states else None,
        state_names=None,
        complete=reason is None,
        limit_reason=reason,
        frontier=frontier,
        source=source,
        stats={"seconds": elapsed, "states_per_second": n / elapsed if elapsed > 0 else float("inf"),
               "depth": float(max_depth), "max_rss_mb": peak_rss_mb(), "batch": 1.0},
    )
    if progress is not None:
        progress(progress_report(n, expanded, n_edges, elapsed, max_depth))
    frozen.tie(kripke)
    return kripke
