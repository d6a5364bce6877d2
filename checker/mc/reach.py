"""Reachability on CSR successor arrays: the one breadth-first search of the checker.

A graph is a pair of CSR arrays ``(ptr, idx)``: the successors of ``u`` are ``idx[ptr[u]:ptr[u+1]]``
(a Kripke structure's ``succ_ptr``/``succ_idx``, or their :func:`transpose` for a backward search;
:func:`csr_from_edges` builds them from an edge list). A search starts from ``sources`` (a boolean
mask, or state ids in the order they are to be visited) and follows an edge ``u → v`` when ``u`` may be
left (it is a source, or ``expand`` is not given, or ``expand[u]``), ``v`` may be entered (``enter`` is
not given, or ``enter[v]``) and ``v`` has not been visited yet.

The search is level-synchronous and vectorised: each level gathers the successors of the whole
frontier with one ``np.repeat``/``arange`` gather (:func:`gather_ranges`). After
:data:`LEVELS_BEFORE_SCIPY` levels it hands the rest to scipy's C breadth-first search on the graph
restricted to the edges still allowed, with a virtual node linked to the current frontier, so that deep
(chain-like) graphs stay O(E). Both phases visit states in the order of a FIFO-queue breadth-first
search that takes the successors of a state in increasing id order (as scipy's
``breadth_first_order`` does, whatever the order in ``idx``), so :func:`search_tree` and the shortest
paths read off it do not depend on where the search hands over; for a tree the hand-over waits for a
level whose visit order is increasing (the virtual node's successors are visited in id order too).

Three results of one search: :func:`reachable` (the visited mask), :func:`search_tree` (visit order and
predecessors) and :func:`distances` (breadth-first distance from the nearest source). Beside them,
:func:`topological_layers` orders an acyclic graph (Kahn's algorithm, a level at a time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy is imported where a search hands over to it (its import costs a tenth of a second)
    import scipy.sparse as sp

#: Level-synchronous search levels before handing over to scipy's C breadth-first search.
LEVELS_BEFORE_SCIPY = 48

#: Predecessor of a source and of an unreached state in :func:`search_tree`.
NO_PREDECESSOR = -1

Sources = np.ndarray | Sequence[int]


def index_dtype(n: int) -> type[np.signedinteger]:
    """The narrowest index type for ids below ``n`` (32-bit halves the memory of large structures)."""
    return np.int32 if n < 2**31 - 1 else np.int64


def csr_graph(indices: np.ndarray, indptr: np.ndarray, n: int) -> sp.csr_matrix:
    """A square CSR matrix with int8 ones, keeping 32-bit indices when they fit (scipy upcasts all
    index arrays to the widest one given, which would double the memory of large structures)."""
    if len(indices) < 2**31 - 1 and n < 2**31 - 1:
        indices = indices.astype(np.int32, copy=False)
        indptr = indptr.astype(np.int32, copy=False)
    import scipy.sparse as sp  # lazy: see the imports

    return sp.csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr), shape=(n, n))


def csr_from_edges(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR arrays ``(ptr, idx)`` of the edges ``src[e] → dst[e]`` (stable: the edges of one state keep
    their order)."""
    src = np.asarray(src, dtype=np.int64)
    order = np.argsort(src, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, np.asarray(dst)[order]


#: Graphs with at most this many edges are transposed by a stable numpy sort (no scipy import: a small
#: query starts faster), larger ones by scipy's O(E) conversion.
SMALL_GRAPH_EDGES = 1 << 16


def transpose(ptr: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reversed graph ``(pred_ptr, pred_idx)``: the predecessors of ``t`` are
    ``pred_idx[pred_ptr[t]:pred_ptr[t+1]]`` in increasing order of their id (scipy's CSR→CSC
    conversion, O(E) in C; up to :data:`SMALL_GRAPH_EDGES` edges the same arrays by a stable sort of the
    edges by target, the sources being in increasing order already)."""
    n = len(ptr) - 1
    itype = index_dtype(max(n, len(idx)) + 1)
    if len(idx) == 0:
        return np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=itype)
    if len(idx) <= SMALL_GRAPH_EDGES:
        counts: np.ndarray = np.diff(np.asarray(ptr, dtype=np.int64))
        src = np.repeat(np.arange(n, dtype=np.int64), counts)
        pred_ptr, pred_idx = csr_from_edges(n, np.asarray(idx), src)
        return pred_ptr, pred_idx.astype(itype, copy=False)
    reverse = csr_graph(np.asarray(idx), np.asarray(ptr), n).tocsc()
    return reverse.indptr.astype(np.int64, copy=False), reverse.indices.astype(itype, copy=False)


def _ranges(ptr: np.ndarray, rows: np.ndarray, idx_len: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``idx`` of the successors of ``rows`` (concatenated) and each row's count."""
    starts = ptr[rows]
    lens = ptr[rows + 1] - starts
    if idx_len < 2**31 - 1:  # 32-bit positions halve the memory traffic of the gather
        starts = starts.astype(np.int32)
        lens = lens.astype(np.int32)
    total = int(lens.sum(dtype=np.int64))
    if total == 0:
        return np.zeros(0, dtype=np.int64), lens
    offsets = np.cumsum(lens) - lens
    pos = np.repeat(starts - offsets, lens)
    pos += np.arange(total, dtype=pos.dtype)
    return pos, lens


def gather_ranges(ptr: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Concatenation of ``idx[ptr[r]:ptr[r+1]]`` for every ``r`` in ``rows`` (vectorised)."""
    pos, _ = _ranges(ptr, rows, len(idx))
    return idx[pos] if len(pos) else idx[:0]


def distinct(ids: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """One occurrence of every value of ``ids`` in O(len(ids)), without sorting; ``scratch`` is an
    integer array indexable by every id (its contents are overwritten)."""
    if len(ids) < 2:
        return ids
    pos = np.arange(len(ids), dtype=scratch.dtype)
    scratch[ids] = pos
    return ids[scratch[ids] == pos]


def _first_occurrences(ids: np.ndarray) -> np.ndarray:
    """Positions of the first occurrence of every value of ``ids``, in increasing order."""
    _, first = np.unique(ids, return_index=True)
    first.sort()
    return first


def _source_ids(sources: Sources, n: int) -> np.ndarray:
    arr = np.asarray(sources)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ValueError(f"a source mask must have length {n}")
        return np.flatnonzero(arr)
    ids = arr.astype(np.int64).reshape(-1)
    if len(ids) and (ids.min() < 0 or ids.max() >= n):
        raise ValueError(f"source state id out of range 0..{n - 1}")
    return ids[_first_occurrences(ids)] if len(ids) > 1 else ids


class _Search:
    """One breadth-first search; ``tree``/``depth`` say which extra results to record."""

    def __init__(self, ptr: np.ndarray, idx: np.ndarray, sources: Sources, enter: np.ndarray | None,
                 expand: np.ndarray | None, *, tree: bool = False, depth: bool = False):
        self.ptr, self.idx = ptr, idx
        self.n = n = len(ptr) - 1
        self.tree, self.record_depth = tree, depth
        start = _source_ids(sources, n)
        self.visited = np.zeros(n, dtype=bool)
        self.visited[start] = True
        #: states that may still be entered
        self.allowed = ~self.visited if enter is None else np.asarray(enter, dtype=bool) & ~self.visited
        #: states whose edges are followed (``None``: all)
        self.leave = None if expand is None else np.asarray(expand, dtype=bool) | self.visited
        self.order = [start]
        self.pred = np.full(n, NO_PREDECESSOR, dtype=np.int64) if tree else None
        self.dist = np.full(n, -1, dtype=np.int64) if depth else None
        if self.dist is not None:
            self.dist[start] = 0
        self._run(start)

    def _run(self, level: np.ndarray) -> None:
        if not len(self.idx) or not self.allowed.any():
            return
        scratch = np.zeros(self.n, dtype=index_dtype(self.n))
        depth = 0
        while level.size:
            # scipy visits the successors of a state, the virtual node's included, in increasing id
            # order: the tree hands over at a level whose visit order is increasing, so it stays the same
            if depth >= LEVELS_BEFORE_SCIPY and (not self.tree or bool(np.all(level[1:] > level[:-1]))):
                self._finish_in_c(level, depth)
                return
            rows = level if self.leave is None else level[self.leave[level]]
            pos, lens = _ranges(self.ptr, rows, len(self.idx))
            succ = self.idx[pos]
            keep = self.allowed[succ]
            new = succ[keep]
            if new.size == 0:
                return
            if self.tree:
                owner = np.repeat(np.arange(len(rows)), lens)[keep]
                by_owner_then_id = np.lexsort((new, owner))
                new, owner = new[by_owner_then_id], owner[by_owner_then_id]
                first = _first_occurrences(new)
                new = new[first]
                assert self.pred is not None
                self.pred[new] = rows[owner[first]]
                self.order.append(new)
            else:
                new = distinct(new, scratch)
            self.allowed[new] = False
            self.visited[new] = True
            depth += 1
            if self.dist is not None:
                self.dist[new] = depth
            level = new

    def _finish_in_c(self, level: np.ndarray, depth: int) -> None:
        """Continue the search from ``level`` (reached at ``depth``) with scipy, on the edges still
        allowed plus a virtual node ``n`` whose successors are ``level`` in order."""
        from scipy.sparse import csgraph  # lazy: see the imports

        n = self.n
        keep = self.allowed[self.idx]
        if self.leave is not None:
            keep &= np.repeat(self.leave, np.diff(self.ptr))
        csum = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(keep, out=csum[1:])
        ptr = np.concatenate([csum[self.ptr], [csum[-1] + len(level)]])
        idx = np.concatenate([self.idx[keep], level.astype(self.idx.dtype)])
        graph = csr_graph(idx, ptr, n + 1)
        if self.tree:
            order, pred = csgraph.breadth_first_order(graph, n, directed=True, return_predecessors=True)
            new = order[1 + len(level):]
            assert self.pred is not None
            self.pred[new] = pred[new]
            self.order.append(new.astype(np.int64))
        else:
            new = csgraph.breadth_first_order(graph, n, directed=True, return_predecessors=False)[1:]
        self.visited[new] = True
        self.allowed[new] = False
        if self.dist is not None:
            hops = csgraph.shortest_path(graph, method="D", unweighted=True, indices=n)
            self.dist[new] = depth - 1 + hops[new].astype(np.int64)


def reachable(ptr: np.ndarray, idx: np.ndarray, sources: Sources, *, enter: np.ndarray | None = None,
              expand: np.ndarray | None = None) -> np.ndarray:
    """The boolean mask of the states reached from ``sources`` (sources included; see the module
    docstring for ``enter`` and ``expand``)."""
    return _Search(ptr, idx, sources, enter, expand).visited


def search_tree(ptr: np.ndarray, idx: np.ndarray, sources: Sources, *, enter: np.ndarray | None = None,
                expand: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(order, pred)``: the reached states in breadth-first visit order (sources first) and each
    state's predecessor on a shortest path from a source (:data:`NO_PREDECESSOR` for sources and
    unreached states)."""
    search = _Search(ptr, idx, sources, enter, expand, tree=True)
    assert search.pred is not None
    return np.concatenate(search.order), search.pred


def distances(ptr: np.ndarray, idx: np.ndarray, sources: Sources, *, enter: np.ndarray | None = None,
              expand: np.ndarray | None = None) -> np.ndarray:
    """Number of edges on a shortest path from a source to every state (``-1`` when unreached)."""
    search = _Search(ptr, idx, sources, enter, expand, depth=True)
    assert search.dist is not None
    return search.dist


def shortest_path(ptr: np.ndarray, idx: np.ndarray, start: int, target: np.ndarray,
                  through: np.ndarray) -> list[int] | None:
    """A shortest path ``start … t`` with ``target[t]`` whose states before ``t`` satisfy ``through``
    (``[start]`` when ``target[start]``; the edges of ``start`` are always followed), or ``None``."""
    if target[start]:
        return [start]
    order, pred = search_tree(ptr, idx, [start], expand=through & ~target)
    hits = order[target[order]]
    if not len(hits):
        return None
    path = [int(hits[0])]
    while path[-1] != start:
        path.append(int(pred[path[-1]]))
    path.reverse()
    return path


def topological_layers(ptr: np.ndarray, idx: np.ndarray) -> list[np.ndarray] | None:
    """The states of an acyclic graph in layers, every edge leading from a layer to a later one:
    layer 0 holds the states without predecessors, layer ``k + 1`` the states whose predecessors all
    lie in layers ``0..k`` (Kahn's algorithm, one vectorised step per layer). ``None`` when the graph
    has a cycle (a self-loop included): then some state is never freed.

    >>> ptr, idx = csr_from_edges(4, np.array([0, 0, 1, 2]), np.array([1, 2, 3, 3]))
    >>> [layer.tolist() for layer in topological_layers(ptr, idx)]
    [[0], [1, 2], [3]]
    >>> topological_layers(*csr_from_edges(2, np.array([0, 1]), np.array([1, 0]))) is None
    True
    """
    n = len(ptr) - 1
    indegree = np.bincount(np.asarray(idx, dtype=np.int64), minlength=n)
    layer = np.flatnonzero(indegree == 0)
    layers: list[np.ndarray] = []
    placed = 0
    while layer.size:
        layers.append(layer)
        placed += layer.size
        succ = gather_ranges(ptr, idx, layer)
        if not succ.size:
            break
        freed, counts = np.unique(succ, return_counts=True)
        indegree[freed] -= counts
        layer = freed[indegree[freed] == 0]
    return layers if placed == n else None
