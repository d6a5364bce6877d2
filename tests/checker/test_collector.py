"""The garbage collector around explorations (:mod:`checker.mc.collector`): the explored objects are frozen
out of the collector's reach while their structure lives, the cycles an exploration leaves behind are
freed, nothing stays frozen after the structure is gone (memory stays bounded over many explorations),
and an exploration that fails or runs with the collector off leaves it as it was."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

from checker.mc.collector import exploring
from checker.mc.explore import explore
from checker.mc.explore_batch import BatchSteps, explore_batch
from checker.mc.ts import Step


@dataclass(frozen=True)
class Node:
    """A state the collector tracks (an instance of a class)."""

    value: int


class Garbage:
    """An object in a reference cycle with itself: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


class Ring:
    """``size`` states in a ring; every expansion leaves one cyclic garbage object behind."""

    def __init__(self, size: int, fail_at: int | None = None) -> None:
        self.size, self.fail_at = size, fail_at
        self.garbage: list[weakref.ref[Garbage]] = []

    def initial_states(self) -> list[Node]:
        return [Node(0)]

    def successors(self, s: Node) -> list[Step]:
        if s.value == self.fail_at:
            raise RuntimeError("a failing model")
        self.garbage.append(weakref.ref(Garbage()))
        return [Step("next", Node((s.value + 1) % self.size))]

    def observable_names(self) -> list[str]:
        return ["value"]

    def observe(self, s: Node, name: str) -> int:
        return s.value

    def alive(self) -> int:
        return sum(r() is not None for r in self.garbage)


class BatchRing:
    """The ring as rows of one integer (a :class:`~checker.mc.explore_batch.BatchTransitionSystem`)."""

    width = 1
    actions = ("next",)
    probabilities = (1,)

    def __init__(self, size: int) -> None:
        self.size = size

    def initial_rows(self) -> np.ndarray:
        return np.zeros((1, 1), dtype=np.int64)

    def successors_batch(self, rows: np.ndarray) -> BatchSteps:
        m = len(rows)
        return BatchSteps(np.arange(m), np.zeros(m, dtype=np.int64), (rows + 1) % self.size,
                          np.zeros(m, dtype=np.int64))

    def decode(self, row: np.ndarray) -> Node:
        return Node(int(row[0]))

    def observable_names(self) -> list[str]:
        return ["value"]

    def observe(self, s: Node, name: str) -> int:
        return s.value


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    gc.collect()
    yield
    if not was:
        gc.disable()


def test_explored_states_are_frozen_while_the_structure_lives() -> None:
    before = gc.get_freeze_count()
    ring = Ring(5000)
    k = explore(ring, lazy_observables=False)
    assert k.num_states == 5000 and gc.isenabled()
    assert gc.get_freeze_count() >= before + k.num_states  # every Node is out of the collector's reach
    assert ring.alive() == 0  # the cycles the exploration left were freed at its end
    del k
    assert gc.get_freeze_count() == 0  # the structure gone, nothing stays frozen


def test_batch_exploration_freezes_and_releases_too() -> None:
    k = explore_batch(BatchRing(3000))
    assert k.num_states == 3000 and gc.get_freeze_count() > 0
    del k
    assert gc.get_freeze_count() == 0


def test_memory_stays_bounded_over_many_explorations() -> None:
    """Twenty explorations, each leaving cyclic garbage and dropped after use: after them nothing is
    frozen and no garbage object of theirs is alive."""
    rings = []
    for _ in range(20):
        ring = Ring(500)
        k = explore(ring)
        assert k.num_states == 500
        del k
        rings.append(ring)
    gc.collect()
    assert gc.get_freeze_count() == 0
    assert sum(r.alive() for r in rings) == 0


def test_a_failing_exploration_freezes_nothing() -> None:
    ring = Ring(100, fail_at=50)
    with pytest.raises(RuntimeError, match="failing model"):
        explore(ring)
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_collector_switched_off_by_the_caller_stays_off() -> None:
    gc.disable()
    try:
        k = explore(Ring(100))
        assert not gc.isenabled() and gc.get_freeze_count() == 0
        with exploring() as frozen:
            pass
        assert not gc.isenabled() and not frozen.done
        del k
    finally:
        gc.enable()
