"""The reductions of the privacy explorations (:class:`checker.app.reductions.ObservationReducer`): one
action per state when the action classes commute (:mod:`checker.mc.confluence`), orbit representatives
when the attacker's record is symmetric. Every distribution the pipeline computes (releases, the
sequence and the final value of what the attacker observes, each client's updates and their joint
record) must be exactly the same with and without each reduction, on generated and bundled scenarios;
and forcing the one-action exploration where the footprints do not commute changes them, so the
conflict check is what keeps it exact."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.app import reductions as reductions_module
from checker.app.load import resolve_scenario_path
from checker.app.privacy_observation import DatasetObservation, observe_dataset
from checker.app.reductions import ObservationReducer, Reductions
from flmodel.scenario import load_scenario, parse_scenario
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import build_system, neighbour_dataset
from tests.strategies import star_scenario_text

_NONE = Reductions.none()
CHOICES = {"partial_order": replace(_NONE, partial_order=True),
           "symmetry": replace(_NONE, symmetry=True),
           "gradient_sum": replace(_NONE, gradient_sum=True),
           "all": Reductions(dead_values=False)}


def _observations(scenario: Scenario, observing: tuple[str, ...], choice: Reductions | None, *,
                  record_updates: bool = False, neighbour: str | None = "hot"
                  ) -> tuple[list[DatasetObservation], list[dict[str, Any]]]:
    system = build_system(scenario)
    reducer = None if choice is None else ObservationReducer(scenario, system.secrets, choice=choice)
    datasets = [None] if neighbour is None else [None, neighbour_dataset(scenario, neighbour)]
    out = [observe_dataset(system.fl, d, record_updates=record_updates, observing=observing,
                           observer=system.observe, exact=True, reducer=reducer) for d in datasets]
    return out, [o.reductions for o in out]


def _distributions(o: DatasetObservation) -> dict[str, Any]:
    return {"releases": o.releases, "sequence": o.sequence, "final": o.final, "updates": o.updates,
            "joint": o.joint, "undetermined": o.undetermined}


def _agree(scenario: Scenario, observing: tuple[str, ...], record_updates: bool = False
           ) -> dict[str, list[dict[str, Any]]]:
    plain, _ = _observations(scenario, observing, None, record_updates=record_updates)
    applied: dict[str, list[dict[str, Any]]] = {}
    for name, choice in CHOICES.items():
        reduced, info = _observations(scenario, observing, choice, record_updates=record_updates)
        for a, b in zip(plain, reduced, strict=True):
            assert _distributions(b) == _distributions(a), name
            assert b.states <= a.states
            if b.scheduler_independent is not None and a.scheduler_independent is not None:
                assert b.scheduler_independent == a.scheduler_independent
        applied[name] = info
    return applied


# ------------------------------------------------------------------------------ generated scenarios
@st.composite
def _cases(draw: st.DrawFn) -> tuple[str, tuple[str, ...], bool, bool]:
    n = draw(st.integers(2, 3))
    values = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    per_client = draw(st.booleans())
    noises = ["rr grid {0, 1} r 1/2 clip", "rr grid {0, 1, 2} r 2/3 clip", "rr grid {0, 1} r 3/4 clip"]
    noise: str | list[str] = (draw(st.lists(st.sampled_from(noises), min_size=n, max_size=n))
                              if per_client else draw(st.sampled_from(noises)))
    rounds = draw(st.integers(1, 2 if n == 2 else 1))
    partitioned = draw(st.booleans())
    observing = draw(st.sampled_from([("curmodpar",), ("curmodpar", "round"), ("gradient_sat1",),
                                      ("ready",)]))
    text = star_scenario_text(values, noise=noise, rounds=rounds, hot=True, partitioned=partitioned,
                              attacker=f"eve at ground observes {', '.join(observing)}")
    return text, observing, draw(st.booleans()), partitioned


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_generated_scenarios_keep_every_distribution(case: tuple[str, tuple[str, ...], bool, bool]) -> None:
    text, observing, record_updates, partitioned = case
    applied = _agree(parse_scenario(text, source="<generated>"), observing, record_updates)
    po = applied["partial_order"][0]["partial_order"]
    # undeployed data: the server chooses among the partitions, and the choice is not confluent;
    # ``ready`` changes with every report: all of them append to the record, in their order (one
    # client's gradient only with that client's reports, which commute with the others')
    assert po["applied"] == (partitioned and observing != ("ready",))
    if partitioned and observing == ("ready",):
        assert "record:seen" in po["reason"]
    if record_updates:
        assert not applied["symmetry"][0]["symmetry"]["applied"]


# ------------------------------------------------------------------------------ bundled scenarios
@pytest.mark.parametrize("name,defines,confluent", [
    ("moniteo", None, True), ("moniteo_rounds", None, True), ("moniteo_swarm8", {"N": 4}, True),
    pytest.param("seed_model", None, False, marks=pytest.mark.slow), ("moniteo_deadline", None, False)])
def test_bundled_scenarios_keep_every_distribution(name: str, defines: dict[str, int] | None,
                                                   confluent: bool) -> None:
    scenario = load_scenario(resolve_scenario_path(name), defines=defines)
    observing = tuple(o.name for o in scenario.attacker.observes) if scenario.attacker else ("curmodpar",)
    neighbour = scenario.neighbours[0].name if scenario.neighbours else None
    plain, _ = _observations(scenario, observing, None, neighbour=neighbour)
    reduced, info = _observations(scenario, observing, CHOICES["all"], neighbour=neighbour)
    for a, b in zip(plain, reduced, strict=True):
        assert _distributions(b) == _distributions(a)
    assert info[0]["partial_order"]["applied"] is confluent
    if name == "seed_model":  # the published rules: a client may report again while the server aggregates
        assert "do not commute" in info[0]["partial_order"]["reason"]


def test_forcing_one_action_where_actions_conflict_changes_the_distribution(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the published rules a report and the aggregation may be enabled together and do not
    commute: the conflict check refuses the reduction, and exploring one action per state anyway (the
    check switched off) gives another distribution of the released model."""
    text = star_scenario_text([1, 2], noise="rr grid {0, 1} r 2/3 clip", protocol="published", events=4,
                              hot=True, attacker="eve at ground observes curmodpar")
    scenario = parse_scenario(text)
    plain, _ = _observations(scenario, ("curmodpar",), None)
    refused, info = _observations(scenario, ("curmodpar",), CHOICES["partial_order"])
    assert not info[0]["partial_order"]["applied"]
    assert [_distributions(o) for o in refused] == [_distributions(o) for o in plain]
    monkeypatch.setattr(reductions_module, "confluence_conflicts", lambda *a, **k: [])
    forced, info = _observations(scenario, ("curmodpar",), CHOICES["partial_order"])
    assert info[0]["partial_order"]["applied"]
    assert forced[0].releases != plain[0].releases
    assert sum(forced[0].releases.values()) == sum(plain[0].releases.values()) == Fraction(1)


def test_confluent_swarm_explores_far_fewer_states() -> None:
    """moniteo_swarm8 at N = 4: the reductions keep the distributions (above) and explore a small part
    of the states; the record stays exact rationals."""
    scenario = load_scenario(resolve_scenario_path("moniteo_swarm8"), defines={"N": 4})
    plain, _ = _observations(scenario, ("curmodpar",), None)
    reduced, _ = _observations(scenario, ("curmodpar",), CHOICES["all"])
    assert reduced[0].states * 3 < plain[0].states
    assert all(isinstance(p, Fraction) for p in reduced[0].releases.values())


def test_gradient_sum_with_unequal_parts_and_a_nonzero_start() -> None:
    """The partial sum keeps FedAvg's weights: parts of 2, 1 and 0 points, a start model of 1 (the
    clients' initial gradients too), two rounds; the released sequence is the same as without it."""
    text = """scenario "unequal parts"
locations g, o1, o2, o3
links g -- o1, g -- o2, g -- o3
server srv at g
clients c1 at o1, c2 at o2, c3 at o3
policies default
data a = (1) -> 2
data b = (1) -> 0
data c = (1) -> 1 secret
data c_hot = (1) -> 3 secret observed by c2
dataset a, b, c
partition c1: {a, b}, c2: {c}, c3: {}
model squared_nobias rate 1/2 initial (1)
noise rr grid {0, 1, 2} r 1/2 clip on update
protocol fedavg_rounds traces drop
bounds rounds 2
neighbour hot: replace c with c_hot
attacker eve at g observes curmodpar
"""
    scenario = parse_scenario(text)
    plain, _ = _observations(scenario, ("curmodpar",), None)
    summed, info = _observations(scenario, ("curmodpar",), CHOICES["gradient_sum"])
    assert info[0]["gradient_sum"]["applied"]
    assert [_distributions(o) for o in summed] == [_distributions(o) for o in plain]
    assert summed[0].states < plain[0].states


def test_a_report_lost_in_flight_is_no_update() -> None:
    """moniteo_link_loss: sat3 reports while its link is up with probability 2/3 and the report arrives
    with 99/100 (the scenario's closed form); a lost report is sent but never received, so sat3's
    recorded updates are non-empty with probability 2/3 · 99/100 = 33/50, not 2/3."""
    scenario = load_scenario(resolve_scenario_path("moniteo_link_loss"))
    system = build_system(scenario)
    o = observe_dataset(system.fl, record_updates=True, observing=("curmodpar",), observer=system.observe,
                        exact=True, check_scheduler=False)
    assert sum(p for seq, p in o.updates["sat3"].items() if seq) == Fraction(33, 50)
