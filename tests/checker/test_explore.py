"""Breadth-first exploration of transition systems into Kripke structures."""

from __future__ import annotations

import doctest
import io
import sys
from collections import deque
from collections.abc import Iterator
from fractions import Fraction
from typing import cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import checker.mc.ctl
import checker.mc.ctl_parse
import checker.mc.explore
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_parse import parse_formula
from checker.mc.exploration import current_rss_mb as _current_rss_mb
from checker.mc.explore import Limits, Progress, _peak_rss_mb, depth_of_structure, explore
from checker.mc.ts import Action, Step, TransitionSystem
from checker.verdict import Verdict
from tests.checker.ctl_reference import ReferenceChecker


class GraphTS:
    """A transition system given by an adjacency dict (states are strings)."""

    def __init__(self, graph: dict[str, list[str]], init: list[str]):
        self.graph, self.init = graph, init

    def initial_states(self) -> list[str]:
        return list(self.init)

    def successors(self, s: str) -> Iterator[Step[str]]:
        for t in self.graph.get(s, []):
            yield Step(Action("go", detail=f"{s}->{t}"), t)

    def observable_names(self) -> list[str]:
        return ["name", "even"]

    def observe(self, s: str, name: str) -> object:
        return s if name == "name" else int(s[1:]) % 2 == 0


def reachable_reference(graph: dict[str, list[str]],
                        init: list[str]) -> tuple[set[str], set[tuple[str, str]]]:
    seen = set(init)
    queue = deque(init)
    edges = set()
    while queue:
        s = queue.popleft()
        for t in graph.get(s, []):
            edges.add((s, t))
            if t not in seen:
                seen.add(t)
                queue.append(t)
    return seen, edges


@st.composite
def graphs(draw: st.DrawFn) -> tuple[dict[str, list[str]], list[str]]:
    n = draw(st.integers(1, 12))
    names = [f"s{i}" for i in range(n)]
    graph = {s: sorted(set(draw(st.lists(st.sampled_from(names), max_size=3)))) for s in names}
    init = sorted(set(draw(st.lists(st.sampled_from(names), min_size=1, max_size=2))))
    return graph, init


@settings(max_examples=120, deadline=None)
@given(g=graphs())
def test_explore_matches_reference_bfs(g: tuple[dict[str, list[str]], list[str]]) -> None:
    graph, init = g
    k = explore(GraphTS(graph, init))
    k.validate()
    states, edges = reachable_reference(graph, init)
    assert k.complete and k.frontier is None
    assert set(k.observables["name"]) == states and k.num_states == len(states)
    names = [str(v) for v in k.observables["name"]]
    got = {(names[int(s)], names[int(t)]) for s, t in zip(k.edge_src, k.succ_idx, strict=True)}
    assert got == edges
    assert sorted(names[i] for i in k.initial) == sorted(init)
    assert k.states is not None and list(k.states) == list(names)
    assert all(k.observables["even"][i] == (int(names[i][1:]) % 2 == 0) for i in range(k.num_states))
    # ids are in BFS order: initial states first
    assert sorted(k.initial.tolist()) == list(range(len(init)))


@settings(max_examples=120, deadline=None)
@given(g=graphs(), cap=st.integers(1, 12), semantics=st.sampled_from(["iiif", "total"]),
       formula=st.sampled_from(["EF even", "AG even", "EG even", "AF !even", "E[even U !even]",
                                "A[even U !even]", "AX even", "EX EX true", "AG EX true"]))
def test_state_limit_gives_sound_partial_structure(g: tuple[dict[str, list[str]], list[str]], cap: int,
                                                   semantics: str, formula: str) -> None:
    graph, init = g
    full = explore(GraphTS(graph, init))
    part = explore(GraphTS(graph, init), limits=Limits(max_states=max(cap, len(init)), check_every=1))
    part.validate()
    if part.complete:
        assert part.num_states == full.num_states
        return
    assert part.frontier is not None and part.frontier.any()
    assert part.limit_reason is not None and "state limit" in part.limit_reason
    assert part.num_states <= max(cap, len(init))
    # every expanded (non-frontier) state has exactly its true successors
    names = [str(v) for v in part.observables["name"]]
    for i in np.flatnonzero(~part.frontier).tolist():
        succ = {names[int(t)] for t in part.successors(i)}
        assert succ == set(graph.get(names[i], []))
    for i in np.flatnonzero(part.frontier).tolist():
        assert len(part.successors(i)) == 0
    # three-valued verdicts never contradict the full structure
    full.labels["even"] = np.array(full.observables["even"], dtype=bool)  # the reference reads labels only
    ref = ReferenceChecker(full, semantics)
    truth = ref.holds(parse_formula(formula))
    res = ModelChecker(part, semantics).check(formula, vacuity=False)
    if res.verdict is Verdict.HOLDS:
        assert truth
    elif res.verdict is Verdict.VIOLATED:
        assert not truth


class CountingAction:
    """A model's own action class (flmodel cannot import the checker): counts conversions."""

    reads = 0

    def __init__(self, rule: str):
        self._rule = rule
        self.actor = "c1"
        self.location = None
        self.detail = ""

    @property
    def rule(self) -> str:
        CountingAction.reads += 1
        return self._rule


class Walk:
    """A random walk on 0..n-1 with exact probabilities; two shared action objects."""

    def __init__(self, n: int):
        self.n = n
        self.left, self.right = CountingAction("left"), CountingAction("right")

    def initial_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> list[tuple[object, int, Fraction]]:
        if s == self.n - 1:
            return []
        return [(self.right, s + 1, Fraction(2, 3)), (self.right, max(s - 1, 0), Fraction(1, 3)),
                (self.left, max(s - 1, 0), Fraction(1))]

    def observable_names(self) -> list[str]:
        return ["pos"]

    def observe(self, s: int, name: str) -> int:
        return s


def test_probabilistic_exploration_and_action_conversion_once() -> None:
    CountingAction.reads = 0
    # plain (action, target, probability) tuples with duck-typed actions, as flmodel yields them
    k = explore(cast("TransitionSystem[int]", Walk(50)))
    k.validate()
    assert k.num_states == 50 and k.num_transitions == 49 * 3
    assert k.edge_prob_exact is not None and k.edge_prob is not None
    assert Fraction(2, 3) in k.edge_prob_exact
    assert sorted(str(a) for a in k.actions) == ["left(c1)", "right(c1)"]
    assert CountingAction.reads == 2  # one as_action per distinct action object
    assert ModelChecker(k).check("AF pos == 49", vacuity=False).verdict is Verdict.VIOLATED
    assert ModelChecker(k).check("EF pos == 49").verdict is Verdict.HOLDS


def test_non_probabilistic_systems_have_no_probabilities() -> None:
    k = explore(GraphTS({"s0": ["s1"], "s1": ["s0"]}, ["s0"]))
    assert k.edge_prob is None and k.edge_prob_exact is None
    k2 = explore(GraphTS({"s0": ["s1"], "s1": ["s0"]}, ["s0"]), probabilities=True)
    assert k2.edge_prob_exact == [Fraction(1), Fraction(1)]


def test_transition_time_and_memory_limits() -> None:
    big = {f"s{i}": [f"s{i + 1}", f"s{(i * 7) % 500}"] for i in range(500)}
    k = explore(GraphTS(big, ["s0"]), limits=Limits(max_transitions=20, check_every=1))
    assert not k.complete and "transition limit" in (k.limit_reason or "")
    assert k.num_transitions <= 20
    k.validate()
    k = explore(GraphTS(big, ["s0"]), limits=Limits(max_seconds=0.0, check_every=1))
    assert not k.complete and "time limit" in (k.limit_reason or "")
    k = explore(GraphTS(big, ["s0"]), limits=Limits(max_memory_mb=1.0, check_every=1))
    assert not k.complete and "memory limit" in (k.limit_reason or "")


def test_memory_limit_uses_current_not_peak_size() -> None:
    """A process whose peak RSS was once large must still explore under a limit above its current
    size: the limit compares the current resident size (the peak never falls)."""
    ballast = bytearray(300 * 1024 * 1024)  # raise the peak by ~300 MB, then free it
    ballast[:: 4096] = b"x" * len(ballast[:: 4096])
    del ballast
    current = _current_rss_mb()
    assert current < _peak_rss_mb() - 100
    big = {f"s{i}": [f"s{i + 1}"] for i in range(2000)}
    k = explore(GraphTS(big, ["s0"]), limits=Limits(max_memory_mb=current + 80, check_every=1))
    assert k.complete and k.num_states == 2001


def test_progress_callback_and_observable_selection() -> None:
    seen: list[Progress] = []
    big = {f"s{i}": [f"s{i + 1}"] for i in range(3000)}
    k = explore(GraphTS(big, ["s0"]), progress=seen.append, progress_interval=0.0,
                limits=Limits(check_every=100), observables=["name"])
    assert seen and seen[-1].states == k.num_states == 3001
    assert all(p.frontier == p.states - p.expanded for p in seen)
    assert "states/s" in seen[-1].text()
    assert list(k.observables) == ["name"]
    assert depth_of_structure(k) == 3000
    assert k.stats["depth"] == 3000


def test_stderr_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    fake = Tty()
    monkeypatch.setattr(sys, "stderr", fake)
    show = checker.mc.explore.stderr_progress()
    assert show is not None
    show(Progress(10, 4, 6, 12, 0.5, 20.0, 2))
    assert "10 states (6 in frontier)" in fake.getvalue() and "20 states/s" in fake.getvalue()
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert checker.mc.explore.stderr_progress() is None


def test_module_doctests() -> None:
    for mod in (checker.mc.ctl, checker.mc.explore, checker.mc.ctl_parse):
        result = doctest.testmod(mod)
        assert result.failed == 0 and result.attempted > 0, mod.__name__
