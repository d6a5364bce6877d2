"""Step labels and step counters read observables one state at a time (``StateValues``): on generated
Kripke structures with generated observables, :func:`counter_observables`, :func:`step_label` and the
text of a generated tree are the same whether the observables are plain columns or lazily computed
columns (:class:`checker.mc.explore.LazyObservables`, evaluated or not), and equal the plain definition
computed on whole columns; the step-counter test reads only states of the sampled edges and evaluates no
column."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from fractions import Fraction

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.attack_trees.export import tree_to_text
from checker.attack_trees.generation import AttackFound, generate_attack_tree
from checker.attack_trees.labels import StateValues, counter_observables, step_label
from checker.mc.explore import LazyObservables
from checker.mc.kripke import Kripke
from checker.mc.ts import Step
from tests.strategies import kripke_structures

KINDS = ("state", "small_int", "fraction", "float", "bool", "text", "array", "mixed")


class TableSystem:
    """A transition system whose only use is ``observe``: the value of ``name`` on state ``s`` is
    ``table[name][s]``; every call is counted."""

    def __init__(self, table: dict[str, list[object]]):
        self.table = table
        self.calls = 0

    def initial_states(self) -> Iterable[int]:
        return [0]

    def successors(self, state: int) -> Iterable[Step[int]]:
        return []

    def observable_names(self) -> Sequence[str]:
        return list(self.table)

    def observe(self, state: int, name: str) -> object:
        self.calls += 1
        return self.table[name][state]


@st.composite
def columns(draw: st.DrawFn, n: int) -> list[object]:
    """One observable's values on ``n`` states, of a random kind (``state``: the state id, a counter on
    every structure; ``mixed``: a number on some states and text on others)."""
    kind = draw(st.sampled_from(KINDS))
    if kind == "state":
        return list(range(n))
    if kind == "small_int":
        return list(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    if kind == "fraction":
        return [Fraction(v, 2) for v in draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))]
    if kind == "float":
        return [v / 2 for v in draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))]
    if kind == "bool":
        return list(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    if kind == "text":
        return list(draw(st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n)))
    if kind == "array":
        return [np.array([v, 0]) for v in draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))]
    return list(draw(st.lists(st.one_of(st.integers(0, 2), st.sampled_from(["a", "b"])),
                              min_size=n, max_size=n)))


@st.composite
def observed_structures(draw: st.DrawFn) -> tuple[Kripke, dict[str, list[object]]]:
    """A generated Kripke structure and 1..5 generated observable columns."""
    k = draw(kripke_structures(max_states=8))
    names = draw(st.lists(st.sampled_from(["v", "w", "x", "y", "z"]), min_size=1, max_size=5, unique=True))
    return k, {name: draw(columns(k.num_states)) for name in names}


def _equal(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    return bool(a == b)


def plain_counters(k: Kripke, table: dict[str, list[object]], sample: int) -> set[str]:
    """The definition on whole columns: ``v`` is a counter iff its value on the source of the first of
    the first ``sample`` edges ``a -> b`` with ``a != b`` is a non-boolean number and it differs between
    ``a`` and ``b`` on every one of those edges."""
    src, dst = k.edge_src.tolist(), k.succ_idx.tolist()
    moving = [(a, b) for a, b in zip(src, dst, strict=True) if a != b][:sample]
    if not moving:
        return set()
    out = set()
    for name, column in table.items():
        first = column[moving[0][0]]
        numeric = isinstance(first, int | Fraction | float) and not isinstance(first, bool)
        if numeric and all(not _equal(column[a], column[b]) for a, b in moving):
            out.add(name)
    return out


def _with(k: Kripke, table: dict[str, list[object]], lazy: bool) -> tuple[Kripke, TableSystem | None]:
    if not lazy:
        return dataclasses.replace(k, observables=dict(table)), None
    ts = TableSystem(table)
    return dataclasses.replace(k, observables=LazyObservables(ts, list(range(k.num_states)), list(table))), ts


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(observed_structures(), st.integers(1, 6))
def test_counters_equal_the_plain_definition(case: tuple[Kripke, dict[str, list[object]]],
                                             sample: int) -> None:
    k, table = case
    expected = plain_counters(k, table, sample)
    plain, _ = _with(k, table, lazy=False)
    assert counter_observables(plain, sample) == expected
    lazy, ts = _with(k, table, lazy=True)
    assert ts is not None and isinstance(lazy.observables, LazyObservables)
    assert counter_observables(lazy, sample) == expected
    assert lazy.observables.evaluated() == []
    moving = int(np.count_nonzero(k.edge_src != k.succ_idx))
    touched = {s for e in np.flatnonzero(k.edge_src != k.succ_idx)[:sample].tolist()
               for s in (int(k.edge_src[e]), int(k.succ_idx[e]))}
    assert ts.calls <= len(table) * len(touched)
    if moving:
        assert ts.calls >= len(table)  # every observable's value on the first source was read


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(observed_structures(), st.data())
def test_step_labels_do_not_depend_on_how_values_are_read(
        case: tuple[Kripke, dict[str, list[object]]], data: st.DataObject) -> None:
    k, table = case
    plain, _ = _with(k, table, lazy=False)
    lazy, _ = _with(k, table, lazy=True)
    evaluated, _ = _with(k, table, lazy=True)
    first = next(iter(table))
    evaluated.observables[first]  # one column evaluated, the others not
    shared = StateValues(lazy)
    shown = data.draw(st.none() | st.lists(st.sampled_from(sorted(table)), unique=True))
    for e in range(k.num_transitions):
        s, t = int(k.edge_src[e]), int(k.succ_idx[e])
        label = step_label(plain, s, t, e, shown)
        changed = {name for name, column in table.items() if not _equal(column[s], column[t])}
        assert {c.name for c in label.changes if c.name in table} == (
            changed if shown is None else changed & set(shown))
        assert step_label(lazy, s, t, e, shown) == label
        assert step_label(lazy, s, t, e, shown, shared) == label
        assert step_label(evaluated, s, t, e, shown) == label


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(observed_structures(), st.integers(0, 7))
def test_generated_trees_do_not_depend_on_how_values_are_read(
        case: tuple[Kripke, dict[str, list[object]]], goal_state: int) -> None:
    k, table = case
    goal = [goal_state % k.num_states]
    plain, _ = _with(k, table, lazy=False)
    lazy, _ = _with(k, table, lazy=True)
    a, b = generate_attack_tree(plain, goal), generate_attack_tree(lazy, goal)
    assert type(a) is type(b)
    if isinstance(a, AttackFound) and isinstance(b, AttackFound):
        assert tree_to_text(a.tree, plain) == tree_to_text(b.tree, lazy)
        assert a.paths == b.paths
