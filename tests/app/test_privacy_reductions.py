"""The reductions of the privacy explorations (:class:`checker.app.reductions.ObservationReducer`): one
action per state when the action classes commute (:mod:`checker.mc.confluence`), orbit representatives
when the attacker's record is symmetric. Every distribution the pipeline computes (releases, the
sequence and the final value of what the attacker observes, each client's updates and their joint
record) must be exactly the same with and without each reduction, on generated and bundled scenarios;
and forcing the one-action exploration where the footprints do not commute changes them, so the
conflict check is what keeps it exact. The whole report (pairs, NI_Decomposition from the clients'
own explorations and the joint record's pass over pairs of states, budgets, the literal reading) is the
unreduced pipeline's, and the pass equals the enumeration of the joint record."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.app import privacy_decomposition
from checker.app import reductions as reductions_module
from checker.app.load import resolve_scenario_path
from checker.app.privacy_budget import declared_budgets, privacy_json
from checker.app.privacy_decomposition import client_updates, joint_epsilon
from checker.app.privacy_fl import privacy_report
from checker.app.privacy_observation import DatasetObservation, observe_dataset
from checker.app.reductions import ObservationReducer, Reductions
from checker.privacy.ni_fl_dp import pure_epsilon
from flmodel.scenario import load_scenario, parse_scenario
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import build_system, neighbour_dataset
from tests.checker.test_explore_batch import _swarm_models
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


# ------------------------------------------------------------------------------ the whole report
def _report_json(scenario: Scenario, reduced: bool, *, literal: bool = True) -> tuple[dict[str, Any], int]:
    """``flcheck privacy``'s JSON of ``scenario`` (its declared pairs, the decomposition, the literal
    reading) with the reductions of the privacy explorations or none (``reducer=None``: one exploration
    per dataset recording every client's updates), without what only says how it was explored; and the
    states explored."""
    system = build_system(scenario)
    reducer = ObservationReducer(scenario, system.secrets, choice=Reductions(dead_values=False)) if reduced \
        else None
    observing = tuple(o.name for o in scenario.attacker.observes) if scenario.attacker else ("curmodpar",)
    declared = [(n.name, neighbour_dataset(scenario, n.name)) for n in scenario.neighbours]
    rep = privacy_report(system, declared=declared, observing=observing, exact=True, literal=literal,
                         reducer=reducer)
    doc = privacy_json(rep, declared_budgets(rep))
    explored = doc.pop("explorations")
    states = 0
    for e in explored:
        notes = e["reductions"].get("decomposition", {})
        states += e["states"] + sum(c["states"] for c in notes.get("clients", []))
        states += notes.get("every_client", {}).get("states", 0)
    if doc["literal"] is not None:
        states += doc["literal"]["states"]
        for key in ("states", "explanation", "reductions"):
            doc["literal"].pop(key)
    return doc, states


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_generated_reports_are_the_same_with_and_without_reductions(
        case: tuple[str, tuple[str, ...], bool, bool]) -> None:
    """Every figure of the report — the pairs, NI_Decomposition (each client's ε*, the joint updates' ε*,
    the rounds), the budgets and the literal reading — is the one of the unreduced pipeline, on generated
    swarms with per-client noise, unequal data, undeployed data (``put_part`` fires) and two rounds."""
    text, _, _, _ = case
    scenario = parse_scenario(text, source="<generated>")
    reduced, _ = _report_json(scenario, True)
    plain, _ = _report_json(scenario, False)
    assert reduced == plain


@pytest.mark.parametrize("name,defines,smaller", [
    ("moniteo", None, True), ("moniteo_rounds", None, True), ("moniteo_swarm8", {"N": 5}, True),
    ("moniteo_deadline", None, False), ("moniteo_link_loss", None, False),
    pytest.param("seed_model", None, False, marks=pytest.mark.slow)])
def test_bundled_reports_are_the_same_with_and_without_reductions(name: str, defines: dict[str, int] | None,
                                                                  smaller: bool) -> None:
    """Where the joint record's pass does not apply (the deadline protocol is not confluent, a report
    lost in flight records nothing) the joint record is enumerated as without reductions, after the
    pairs' own explorations: then more states are explored in all, for the same figures."""
    scenario = load_scenario(resolve_scenario_path(name), defines=defines)
    reduced, fewer = _report_json(scenario, True)
    plain, more = _report_json(scenario, False)
    assert reduced == plain
    assert fewer < more or not smaller


def test_the_decomposition_of_the_swarm_grows_polynomially() -> None:
    """The generated swarm at N = 9: without reductions the record of every client's updates has
    (5·3^N − 1)/2 states per dataset; with them, the clients' explorations (one per class) and the
    joint record's pass over pairs of states stay small, and the figures are the same (above)."""
    swarm = _swarm_models()
    scenario = parse_scenario(swarm.swarm_scenario(9, 1, 3), source="<swarm>")
    system = build_system(scenario)
    one_order = ObservationReducer(scenario, system.secrets, choice=replace(_NONE, partial_order=True))
    plain = observe_dataset(system.fl, record_updates=True, check_scheduler=False, reducer=one_order)
    assert plain.states == (5 * 3**9 - 1) // 2
    reducer = ObservationReducer(scenario, system.secrets, choice=Reductions(dead_values=False))
    updates, info = client_updates(system.fl, plain.dataset, reducer, limits=None, exact=True)
    assert updates == plain.updates
    assert len(info["per_class"]) == 3  # the targets cycle through 3 values
    assert sum(c["states"] for c in info["per_class"]) < plain.states // 50
    hot = neighbour_dataset(scenario, "hot")
    eps, how = joint_epsilon(system.fl, plain.dataset, hot, reducer)
    other = observe_dataset(system.fl, hot, record_updates=True, check_scheduler=False, reducer=one_order)
    assert plain.joint is not None and other.joint is not None
    assert eps is not None and how["method"] == "pairs of states" and how["pairs"] < 200
    assert eps.ratio == pure_epsilon(plain.joint, other.joint).ratio


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_the_joint_pass_equals_the_enumeration(case: tuple[str, tuple[str, ...], bool, bool]) -> None:
    """ε* of the joint update record by the pass over pairs of states is the enumerated one, exactly
    (ratio, ∞ included), wherever the pass applies; where it does not it says why."""
    text, _, _, _ = case
    scenario = parse_scenario(text, source="<generated>")
    system = build_system(scenario)
    d0 = frozenset(system.fl.initial.igra.dataset)
    d1 = neighbour_dataset(scenario, "hot")
    reducer = ObservationReducer(scenario, system.secrets, choice=Reductions(dead_values=False))
    eps, how = joint_epsilon(system.fl, d0, d1, reducer)
    o0, o1 = (observe_dataset(system.fl, d, record_updates=True, check_scheduler=False) for d in (d0, d1))
    assert o0.joint is not None and o1.joint is not None
    want = pure_epsilon(o0.joint, o1.joint)
    if eps is None:
        assert how["method"] == "enumeration" and how["reason"]
    else:
        assert eps.ratio == want.ratio
        assert eps.outcome is not None and (o0.joint.get(eps.outcome, 0), o1.joint.get(eps.outcome, 0)) == \
            (eps.p0, eps.p1)  # a witness: the record and its probabilities


def test_the_joint_pass_refuses_a_report_lost_in_flight() -> None:
    """moniteo_link_loss: sat3's report may be lost (no update) or arrive (an update) in one step, so a
    record does not tell the runs apart: the pass refuses, and the report enumerates (same figures,
    above)."""
    scenario = load_scenario(resolve_scenario_path("moniteo_link_loss"))
    system = build_system(scenario)
    reducer = ObservationReducer(scenario, system.secrets, choice=Reductions(dead_values=False))
    d0 = frozenset(system.fl.initial.igra.dataset)
    eps, how = joint_epsilon(system.fl, d0, neighbour_dataset(scenario, scenario.neighbours[0].name), reducer)
    assert eps is None and how["method"] == "enumeration"


def test_a_wrongly_merged_record_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass keeps, per pair of states, the largest and smallest ratio of the prefixes reaching it:
    keeping the first prefix only (records that add up to the same sum meet in one pair) gives another
    ε* than the enumeration, so the comparison above catches a pass that merges records wrongly."""
    text = star_scenario_text([0, 1, 2], noise=["rr grid {0, 1, 2} r 1/2", "rr grid {0, 1, 2} r 1/3",
                                                "rr grid {0, 1, 2} r 2/3"], hot=True,
                              attacker="eve at ground observes curmodpar")
    scenario = parse_scenario(text)
    system = build_system(scenario)
    reducer = ObservationReducer(scenario, system.secrets, choice=Reductions(dead_values=False))
    d0, d1 = frozenset(system.fl.initial.igra.dataset), neighbour_dataset(scenario, "hot")
    right, _ = joint_epsilon(system.fl, d0, d1, reducer)
    o0, o1 = (observe_dataset(system.fl, d, record_updates=True, check_scheduler=False) for d in (d0, d1))
    assert o0.joint is not None and o1.joint is not None and right is not None
    assert right.ratio == pure_epsilon(o0.joint, o1.joint).ratio == Fraction(3, 2)
    monkeypatch.setattr(privacy_decomposition._Best, "merge", lambda self, other: None)
    wrong, _ = joint_epsilon(system.fl, d0, d1, reducer)
    assert wrong is not None and wrong.ratio != right.ratio
