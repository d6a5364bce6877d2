"""Bottom strongly connected components of a chain (:func:`checker.markov.graph.bottom_components`)
against networkx's ``attracting_components`` on the same edge list, compared exactly as sets of sets."""

from __future__ import annotations

from fractions import Fraction

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.markov.graph import bottom_components
from checker.markov.models import dtmc_from_kripke
from checker.mc.kripke import Kripke

Edges = list[tuple[int, int]]


def networkx_bottoms(num_states: int, edges: Edges) -> set[frozenset[int]]:
    graph = nx.DiGraph()
    graph.add_nodes_from(range(num_states))
    graph.add_edges_from(edges)
    return {frozenset(component) for component in nx.attracting_components(graph)}


def our_bottoms(components: list[list[int]]) -> set[frozenset[int]]:
    as_sets = {frozenset(component) for component in components}
    assert len(as_sets) == len(components), "a component is listed twice"
    return as_sets


@st.composite
def chains(draw: st.DrawFn, max_states: int = 12) -> tuple[int, Edges]:
    """A random chain's support: 1..max_states states, each with 0..3 successors (so deadlocks),
    self-loops drawn with their own probability, and often several closed classes."""
    num_states = draw(st.integers(1, max_states))
    edges: Edges = []
    for state in range(num_states):
        successors = draw(st.sets(st.integers(0, num_states - 1), max_size=min(num_states, 3)))
        if draw(st.booleans()):
            successors.add(state)
        edges.extend((state, successor) for successor in sorted(successors))
    return num_states, edges


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains())
def test_bottom_components_are_networkx_attracting_components(chain: tuple[int, Edges]) -> None:
    num_states, edges = chain
    kripke = Kripke.from_edges(num_states, [0], [s for s, _ in edges], [t for _, t in edges])
    dtmc = dtmc_from_kripke(kripke)
    assert our_bottoms(bottom_components(dtmc)) == networkx_bottoms(num_states, edges)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains(), st.data())
def test_probability_zero_edges_do_not_count(chain: tuple[int, Edges], data: st.DataObject) -> None:
    """With exact probabilities, some of them 0: the chain's support decides, an edge of probability 0
    neither leaves nor joins a component."""
    num_states, edges = chain
    weights = [data.draw(st.integers(0, 3)) for _ in edges]
    for state in range(num_states):  # every state with edges keeps one positive edge
        own = [i for i, (s, _) in enumerate(edges) if s == state]
        if own and not any(weights[i] for i in own):
            weights[own[0]] = 1
    totals = {state: sum(w for (s, _), w in zip(edges, weights, strict=True) if s == state)
              for state in range(num_states)}
    probabilities = [Fraction(w, totals[s]) for (s, _), w in zip(edges, weights, strict=True)]
    kripke = Kripke.from_edges(num_states, [0], [s for s, _ in edges], [t for _, t in edges],
                               prob_exact=probabilities)
    support = [edge for edge, w in zip(edges, weights, strict=True) if w > 0]
    assert our_bottoms(bottom_components(dtmc_from_kripke(kripke))) == networkx_bottoms(num_states, support)


def test_known_chain_with_every_kind_of_bottom_component() -> None:
    """0 → {1, 3, 5, 6}; 1 ⇄ 2 (a closed cycle); 3 → 4 → 3 → 0 (not closed); 5 a self-loop; 6 a deadlock;
    7 → 8 ⇄ 9 (a second closed cycle reached from a transient state)."""
    edges = [(0, 1), (0, 3), (0, 5), (0, 6), (1, 2), (2, 1), (3, 4), (4, 3), (3, 0), (5, 5),
             (7, 8), (8, 9), (9, 8)]
    kripke = Kripke.from_edges(10, [0], [s for s, _ in edges], [t for _, t in edges])
    expected = {frozenset({1, 2}), frozenset({5}), frozenset({6}), frozenset({8, 9})}
    assert our_bottoms(bottom_components(dtmc_from_kripke(kripke))) == expected
    assert networkx_bottoms(10, edges) == expected
