"""checker.mc.reach: the one breadth-first search, against networkx and a textbook FIFO-queue BFS."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.mc import reach


@st.composite
def csr_graphs(draw: st.DrawFn, max_states: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """A random directed graph as CSR arrays (self-loops and parallel edges allowed, rows unsorted)."""
    n = draw(st.integers(1, max_states))
    rows = [draw(st.lists(st.integers(0, n - 1), max_size=4)) for _ in range(n)]
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=ptr[1:])
    idx = np.array([t for r in rows for t in r], dtype=np.int32)
    return ptr, idx


def masks(n: int) -> st.SearchStrategy[np.ndarray]:
    return st.lists(st.booleans(), min_size=n, max_size=n).map(lambda bs: np.array(bs, dtype=bool))


def to_networkx(ptr: np.ndarray, idx: np.ndarray, enter: np.ndarray | None = None,
                expand: np.ndarray | None = None, sources: np.ndarray | None = None) -> nx.DiGraph:
    graph = nx.DiGraph()
    n = len(ptr) - 1
    graph.add_nodes_from(range(n))
    for u in range(n):
        if expand is not None and not expand[u] and not (sources is not None and sources[u]):
            continue
        for v in idx[ptr[u]:ptr[u + 1]].tolist():
            if enter is None or enter[v]:
                graph.add_edge(u, v)
    return graph


def queue_bfs(ptr: np.ndarray, idx: np.ndarray, sources: list[int], expand: np.ndarray | None = None,
              ) -> tuple[list[int], dict[int, int], dict[int, int]]:
    """Textbook FIFO-queue BFS taking successors in increasing id order: visit order, predecessor and
    distance of every reached state."""
    order = list(dict.fromkeys(sources))
    pred: dict[int, int] = {}
    dist = dict.fromkeys(order, 0)
    queue = deque(order)
    while queue:
        u = queue.popleft()
        if expand is not None and not expand[u] and u not in sources:
            continue
        for v in sorted(set(idx[ptr[u]:ptr[u + 1]].tolist())):
            if v not in dist:
                dist[v], pred[v] = dist[u] + 1, u
                order.append(v)
                queue.append(v)
    return order, pred, dist


@contextmanager
def handover_after(levels: int) -> Iterator[None]:
    """Hand the search over to scipy after ``levels`` vectorised levels."""
    saved = reach.LEVELS_BEFORE_SCIPY
    reach.LEVELS_BEFORE_SCIPY = levels
    try:
        yield
    finally:
        reach.LEVELS_BEFORE_SCIPY = saved


#: the vectorised phase alone, and early hand-overs to scipy
LEVELS = st.sampled_from([reach.LEVELS_BEFORE_SCIPY, 0, 1, 2])


@given(levels=LEVELS, g=csr_graphs(), data=st.data())
@settings(max_examples=60, deadline=None)
def test_reachable_is_networkx_descendants(levels: int, g: tuple[np.ndarray, np.ndarray],
                                           data: st.DataObject) -> None:
    ptr, idx = g
    n = len(ptr) - 1
    sources = data.draw(masks(n))
    enter = data.draw(st.none() | masks(n))
    expand = data.draw(st.none() | masks(n))
    graph = to_networkx(ptr, idx, enter, expand, sources)
    expected = set(np.flatnonzero(sources).tolist())
    for s in list(expected):
        expected |= nx.descendants(graph, s)
    with handover_after(levels):
        got = reach.reachable(ptr, idx, sources, enter=enter, expand=expand)
    assert set(np.flatnonzero(got).tolist()) == expected


@given(levels=LEVELS, g=csr_graphs(), data=st.data())
@settings(max_examples=60, deadline=None)
def test_distances_are_networkx_shortest_path_lengths(levels: int, g: tuple[np.ndarray, np.ndarray],
                                                      data: st.DataObject) -> None:
    ptr, idx = g
    n = len(ptr) - 1
    sources = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))
    graph = to_networkx(ptr, idx)
    expected = nx.multi_source_dijkstra_path_length(graph, set(sources))
    with handover_after(levels):
        got = reach.distances(ptr, idx, sources)
    assert {v: int(d) for v, d in enumerate(got) if d >= 0} == expected
    assert all(got[v] == -1 for v in range(n) if v not in expected)


@given(levels=LEVELS, g=csr_graphs(), data=st.data())
@settings(max_examples=60, deadline=None)
def test_search_tree_is_the_fifo_queue_bfs(levels: int, g: tuple[np.ndarray, np.ndarray],
                                           data: st.DataObject) -> None:
    """Same visit order and predecessors as a textbook BFS (so witness paths do not depend on where
    the search hands over to scipy)."""
    ptr, idx = g
    n = len(ptr) - 1
    sources = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))
    expand = data.draw(st.none() | masks(n))
    with handover_after(levels):
        order, pred = reach.search_tree(ptr, idx, sources, expand=expand)
    want_order, want_pred, _ = queue_bfs(ptr, idx, sources, expand)
    assert order.tolist() == want_order
    assert {v: int(pred[v]) for v in range(n) if pred[v] != reach.NO_PREDECESSOR} == want_pred


@given(levels=LEVELS, g=csr_graphs(), data=st.data())
@settings(max_examples=60, deadline=None)
def test_shortest_path_is_shortest_and_stays_in_through(levels: int, g: tuple[np.ndarray, np.ndarray],
                                                        data: st.DataObject) -> None:
    ptr, idx = g
    n = len(ptr) - 1
    start = data.draw(st.integers(0, n - 1))
    target, through = data.draw(masks(n)), data.draw(masks(n))
    with handover_after(levels):
        path = reach.shortest_path(ptr, idx, start, target, through)
    allowed = through & ~target
    allowed[start] = True
    graph = to_networkx(ptr, idx, expand=allowed)
    lengths = nx.single_source_shortest_path_length(graph, start)
    hits = [t for t in lengths if target[t]]
    if not hits:
        assert path is None
        return
    assert path is not None and path[0] == start and target[path[-1]]
    assert len(path) - 1 == min(lengths[t] for t in hits)
    assert all(through[s] for s in path[1:-1])
    assert all(v in idx[ptr[u]:ptr[u + 1]] for u, v in itertools.pairwise(path))


def test_transpose_and_csr_from_edges_round_trip() -> None:
    src = np.array([2, 0, 0, 1, 2])
    dst = np.array([0, 1, 2, 2, 2])
    ptr, idx = reach.csr_from_edges(3, src, dst)
    assert ptr.tolist() == [0, 2, 3, 5] and idx.tolist() == [1, 2, 2, 0, 2]
    pptr, pidx = reach.transpose(ptr, idx)
    assert [sorted(pidx[pptr[t]:pptr[t + 1]].tolist()) for t in range(3)] == [[2], [0], [0, 1, 2]]


def test_deep_chain_is_reached_to_the_end() -> None:
    n = 20 * reach.LEVELS_BEFORE_SCIPY
    ptr = np.arange(n + 1, dtype=np.int64)
    ptr[-1] = n - 1
    idx = np.arange(1, n, dtype=np.int64)
    assert reach.reachable(ptr, idx, [0]).all()
    assert reach.distances(ptr, idx, [0]).tolist() == list(range(n))
    path = reach.shortest_path(ptr, idx, 0, np.arange(n) == n - 1, np.ones(n, dtype=bool))
    assert path == list(range(n))


def test_bad_sources_are_rejected() -> None:
    ptr, idx = np.array([0, 1, 1]), np.array([1])
    with pytest.raises(ValueError, match="out of range"):
        reach.reachable(ptr, idx, [2])
    with pytest.raises(ValueError, match="length 2"):
        reach.reachable(ptr, idx, np.array([True]))


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))))
def test_topological_layers_are_networkx_generations(graph: tuple[int, list[tuple[int, int]]]) -> None:
    """On a random directed graph, the layers are networkx's topological generations when it is
    acyclic (self-loops make it cyclic), and ``None`` exactly when networkx finds a cycle."""
    n, edges = graph
    src = np.array([a for a, _ in edges], dtype=np.int64)
    dst = np.array([b for _, b in edges], dtype=np.int64)
    layers = reach.topological_layers(*reach.csr_from_edges(n, src, dst))
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    if not nx.is_directed_acyclic_graph(g):
        assert layers is None
        return
    assert layers is not None
    generations = [sorted(gen) for gen in nx.topological_generations(g)]
    assert [sorted(layer.tolist()) for layer in layers] == generations
