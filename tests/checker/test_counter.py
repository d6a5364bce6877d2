"""The counter abstraction of interchangeable clients (:mod:`checker.app.counter`) against the unreduced
check and against an enumeration of the orbits written separately, on generated swarms (hypothesis):
symmetric ones, asymmetric ones (clients with other data, clients a property names, which it must keep
apart) and ones where it must be refused (the uniform scheduler). Two deliberately wrong abstractions
(outcomes memoized without the global part; a named client not kept apart) are caught by the same
comparison."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import checker.app.reductions as reductions
from checker.app.check import check_scenario
from checker.app.counter import CounterStates, CounterSystem
from checker.app.reductions import Reductions, reduce_system
from checker.mc.explore import Limits, explore
from flmodel.scenario import parse_scenario
from flmodel.scenario_build import build_system
from flmodel.symmetry import permute_state
from flmodel.system import FLState
from tests.differential.compare import figures

LIMITS = Limits(max_states=60_000, max_seconds=120)
SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


def swarm_text(targets: list[int], rounds: int, noise: str, props: list[str]) -> str:
    """A swarm whose client ``sat<i>`` holds one point of target ``targets[i-1]`` (clients with equal
    targets are interchangeable unless a property names them)."""
    n = len(targets)
    sats = range(1, n + 1)
    lines = [
        'scenario "counter"',
        "locations ground, " + ", ".join(f"o{i}" for i in sats),
        "links " + ", ".join(f"ground -- o{i}" for i in sats),
        "server srv at ground",
        "clients " + ", ".join(f"sat{i} at o{i}" for i in sats),
        "policies default",
        *(f"data d{i} = (1) -> {t}" for i, t in zip(sats, targets, strict=True)),
        "dataset " + ", ".join(f"d{i}" for i in sats),
        "partition " + ", ".join(f"sat{i}: {{d{i}}}" for i in sats),
        "model squared_nobias rate 1/2 initial (0)",
        *([noise] if noise else []),
        "protocol fedavg_rounds traces drop",
        f"bounds rounds {rounds}",
        *(f"property p{k}: {p};" for k, p in enumerate(props)),
    ]
    return "\n".join(lines) + "\n"


def _props(rounds: int) -> list[str]:
    return [
        f"ctl AG (round < {rounds} -> EF round = {rounds})",
        f"ctl AG (!(EX true) -> round = {rounds})",
        "ctl AG (enabled(eval_round) -> ready == clients)",
        f"probability min >= 1 reach round = {rounds}",
        "ctl EF (round = 1 & curmodpar == 1)",
        "probability max >= 1/4 reach (round = 1 & curmodpar == 1)",
        "probability min >= 1/4 reach (round = 1 & curmodpar == 1/2)",
        'ctl EF ("sat1" in ready & !("sat2" in ready))',  # names sat1 and sat2: kept apart
        "ctl AG (round = 0 -> EF (ready == clients))",
    ]


@st.composite
def swarms(draw: st.DrawFn, uniform: bool = False) -> str:
    n = draw(st.integers(2, 5))
    targets = draw(st.lists(st.sampled_from([0, 1, 2] if draw(st.booleans()) else [1, 2]), min_size=n,
                            max_size=n))
    rounds = draw(st.integers(1, 2))
    noise = draw(st.sampled_from(["", "noise rr grid {0, 1, 2} r 1/2 clip on update",
                                  "noise rr grid {0, 1} r 1/3 clip on update"]))
    props = draw(st.lists(st.sampled_from(_props(rounds)), min_size=1, max_size=4, unique=True))
    if uniform:
        props.append("probability >= 1/2 reach round = 1")
    return swarm_text(targets, rounds, noise, props)


def _checked(text: str, choice: Reductions) -> Any:
    return check_scenario(parse_scenario(text, source="<counter>"), limits=LIMITS, reductions=choice)


def _agree(text: str) -> Any:
    """The counter abstraction, the orbit quotient alone and the unreduced check give the same figures;
    returns the reduced check."""
    plain = _checked(text, Reductions.none())
    reduced = _checked(text, Reductions())
    orbits = _checked(text, Reductions(counter=False))
    assert plain.kripke.complete and reduced.kripke.complete
    assert figures(reduced) == figures(plain), text
    assert figures(orbits) == figures(plain), text
    assert reduced.kripke.num_states <= orbits.kripke.num_states
    return reduced


@SETTINGS
@given(swarms())
def test_counter_agrees_with_the_unreduced_check(text: str) -> None:
    reduced = _agree(text)
    if "symmetry" in reduced.reductions.names:  # min/max schedulers only: the counter applies
        assert reduced.reductions.details["counter"]["applied"], text


@SETTINGS
@given(swarms(uniform=True))
def test_uniform_scheduler_refuses_the_counter(text: str) -> None:
    """The uniform scheduler weighs an action by the clients that can take it: the orbit quotient is
    explored instead, and the JSON says why."""
    reduced = _agree(text)
    counter = reduced.reductions.details["counter"]
    assert not counter["applied"]
    assert "uniform" in counter["reason"] or "no symmetry" in counter["reason"]


def _orbit(state: FLState, classes: tuple[tuple[str, ...], ...], sym: Any) -> frozenset[FLState]:
    """The states the class permutations map ``state`` to, by brute force over every permutation of
    every class (written apart from the counters)."""
    out = set()
    for perms in itertools.product(*(itertools.permutations(cls) for cls in classes)):
        mapping = {c: d for cls, perm in zip(classes, perms, strict=True)
                   for c, d in zip(cls, perm, strict=True)}
        out.add(permute_state(state, mapping, sym))
    return frozenset(out)


@SETTINGS
@given(swarms())
def test_counter_states_are_the_orbits(text: str) -> None:
    """Explored counters = the orbits of the states of the system with the same reductions but the
    symmetry, enumerated by brute force; each plain state's counters are among the explored ones."""
    scenario = parse_scenario(text, source="<counter>")
    counted, _ = reduce_system(build_system(scenario), scenario)
    if not isinstance(counted, CounterStates):
        return
    flat, _ = reduce_system(build_system(scenario), scenario, Reductions(symmetry=False, counter=False))
    plain = explore(flat, limits=LIMITS)
    mine = explore(counted, limits=LIMITS)
    assert plain.states is not None and mine.states is not None
    sym = counted.symmetry
    orbits = {_orbit(s, sym.classes, sym) for s in plain.states}
    assert len(orbits) == mine.num_states
    assert {counted.abstract(s) for s in plain.states} == set(mine.states)


def test_swarm_counts_are_the_closed_form() -> None:
    """One round of 9 clients in three classes of 3: how many of each class have reported, and the
    evaluated state: 4³ + 1 states."""
    text = swarm_text([0, 1, 2] * 3, 1, "noise rr grid {0, 1, 2} r 1/2 clip on update", _props(1)[:4])
    reduced = _checked(text, Reductions())
    assert reduced.reductions.details["counter"]["stored"] == "counters"
    assert reduced.kripke.num_states == 4**3 + 1


def test_named_clients_stay_apart() -> None:
    """A property naming sat1 and sat2 keeps them out of the classes; the others are counted."""
    text = swarm_text([1, 1, 1, 1], 1, "", [_props(1)[7], _props(1)[0]])
    reduced = _agree(text)
    assert reduced.reductions.details["symmetry"]["classes"] == [["sat3", "sat4"]]
    assert reduced.reductions.details["counter"]["applied"]


class _ForgetsTheGlobalPart(CounterStates):
    """Wrong: memoizes a client's outcomes without the global part (round, model, last step)."""

    def _outcome_key(self, gid: int, c: str, lid: int) -> tuple[Any, ...]:
        return (c, lid)


def _nothing_fixed(scenario: Any, system: Any) -> tuple[set[str], None]:
    """Wrong: keeps no named client apart."""
    return set(), None


@pytest.mark.parametrize("mutant", ["global_part", "named_clients"])
def test_a_wrong_abstraction_is_caught(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison of :func:`_agree` fails on a wrong counter abstraction."""
    if mutant == "global_part":
        monkeypatch.setattr(reductions, "CounterStates", _ForgetsTheGlobalPart)
        text = swarm_text([1, 1, 2], 2, "noise rr grid {0, 1, 2} r 1/2 clip on update",
                          [_props(2)[0], _props(2)[2], "ctl EF (round = 2)"])
    else:
        monkeypatch.setattr(reductions, "symmetry_fixed", _nothing_fixed)
        text = swarm_text([1, 1, 1], 1, "", [_props(1)[7]])
    plain = _checked(text, Reductions.none())
    wrong = _checked(text, Reductions())
    assert "counter" in wrong.reductions.names or mutant == "named_clients"
    assert figures(wrong) != figures(plain)


def test_counter_falls_back_to_representatives() -> None:
    """Where the counters cannot be the states (the traces name clients), the representatives are
    stored and every client class still takes one step per local state."""
    text = swarm_text([1, 1, 2], 1, "", [_props(1)[0]]).replace("traces drop", "traces full")
    scenario = parse_scenario(text)
    system, applied = reduce_system(build_system(scenario), scenario, Reductions(traces=False))
    assert isinstance(system, CounterSystem) and not isinstance(system, CounterStates)
    assert applied.details["counter"]["stored"] == "representatives"
    assert "traces" in applied.details["counter"]["stored_reason"]
    _agree(text)


@SETTINGS
@given(swarms())
def test_counter_steps_are_distributions(text: str) -> None:
    """Every action of every explored counter state is a probability distribution (a step counted
    twice would sum past 1)."""
    from checker.mc.ts import Step, check_distributions

    scenario = parse_scenario(text, source="<counter>")
    counted, _ = reduce_system(build_system(scenario), scenario)
    if not isinstance(counted, CounterSystem):
        return
    k = explore(counted, limits=LIMITS)
    assert k.states is not None
    for s in k.states:
        check_distributions(repr(s), [Step(a, t, p) for a, t, p in counted.successors(s)])
