"""The reductions over a time-varying topology: the network rules (:func:`flmodel.network.networked`)
state their footprints, so the dead-value reset, the cone of influence, the symmetry and the partial-order
reduction of the privacy explorations apply to network scenarios. Every footprint is checked against the
steps themselves (what a step changes is among what its class writes, its guard literals hold where it is
enabled, a ``single`` class has one action at a time), every verdict, probability and privacy
distribution is the same with and without the reductions (bundled and generated network scenarios), the
scheduler-dependent deadline rule is refused, and a deliberately wrong footprint is caught by the same
comparisons."""

from __future__ import annotations

import dataclasses
import math
import random
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flmodel.network as network
import flmodel.network_rules as network_rules
from checker.app import reductions as reductions_module
from checker.app.check import check_scenario
from checker.app.load import resolve_scenario_path
from checker.app.privacy_observation import DatasetObservation, observe_dataset
from checker.app.reductions import ObservationReducer, Reductions
from checker.app.value_reductions import reduce_values
from checker.mc.explore import Limits, explore
from flmodel.network import CLOCK, ROUND, STEPS, crossed_var, gra_status, link_var, lost_var, seen_var
from flmodel.scenario import load_scenario, parse_scenario
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import ScenarioSystem, build_system, neighbour_dataset
from flmodel.system import FLState
from tests.checker.test_reductions import _figures
from tests.checker.test_symmetry import _network_text

LIMITS = Limits(max_states=200_000, max_seconds=600)
NETWORK_SCENARIOS = ["moniteo_link_loss", "moniteo_deadline", "walker_family", "walker12_relay"]


def valuation(system: ScenarioSystem, state: FLState) -> dict[str, object]:
    """Every footprint variable (:class:`flmodel.system.ActionClass`, :mod:`flmodel.network`) on
    ``state``."""
    g = state.infra.igra
    st_ = gra_status(g.gra)
    out: dict[str, object] = {
        "curmodpar": g.curmodpar, "dataset": g.dataset, "evs": state.infra.prot.evs, "round": state.round,
        "events": state.events, "last": state.last, "partitioned": state.partitioned, "aloc": g.aloc,
        "poli": state.infra.poli, ROUND: st_.round, CLOCK: st_.clock, STEPS: st_.round_steps}
    for c in system.fl.clients:
        out.update({f"ready:{c}": c in g.ready, f"gradient:{c}": g.gradient[c], f"partition:{c}": g.part(c),
                    lost_var(c): c in st_.lost, crossed_var(c): c in st_.crossed, seen_var(c): c in st_.seen})
    if system.network is not None:
        out.update({link_var(lk): lk <= g.gra.edges for lk in system.network.failures})
    return out


def assert_footprints_hold(system: ScenarioSystem, samples: int = 150, seed: int = 3) -> int:
    """On sampled reachable states: every step changes only variables its class writes, the class's
    guard literals hold where it is enabled, a ``single`` class has at most one enabled action, and
    every step belongs to a stated class. Returns the number of steps checked."""
    classes = system.fl.action_classes()
    assert classes is not None
    by_key = {(c.rule, c.actor): c for c in classes}
    states: list[FLState] = list(explore(system, limits=Limits(max_states=4000)).states or ())  # type: ignore[arg-type]
    checked = 0
    for s in random.Random(seed).sample(states, min(samples, len(states))):
        before = valuation(system, s)
        actions: dict[tuple[str, str], set[object]] = {}
        for act, t, _ in system.successors(s):
            cls = by_key[(act.rule, act.actor)]
            actions.setdefault((act.rule, act.actor), set()).add(act)
            after = valuation(system, t)
            changed = {v for v, x in before.items() if after[v] != x}
            assert changed <= cls.writes, (act, changed - cls.writes)
            for v, x in cls.guard:
                assert before[v] == x, (act, v)
            checked += 1
        for key, acts in actions.items():
            assert len(acts) == 1 or not by_key[key].single, (key, acts)
    return checked


def _network(values: list[int], profiles: list[int], **kw: Any) -> str:
    """A generated network scenario (:func:`tests.checker.test_symmetry._network_text`)."""
    kw.setdefault("properties", [])
    kw.setdefault("relay", False)
    kw.setdefault("aggregate", "all")
    kw.setdefault("rounds", 1)
    kw.setdefault("attacker", None)
    return _network_text(values, profiles, **kw)


# ------------------------------------------------------------------------------ the footprints
def test_the_status_is_named_and_constant_counters_are_not_written() -> None:
    """A star with a lossy link: reports write ``lost:c`` (guard: not lost) and the aggregation resets
    it; no window, deadline or failure: the counters and links are not written."""
    s = build_system(parse_scenario(_network([1, 1], [3, 0], properties=["ctl EF round = 1"]), "<n>"))
    classes = {(c.rule, c.actor): c for c in s.fl.action_classes() or ()}
    report = classes[("get_grad_round_noisy", "sat1")]
    assert (lost_var("sat1"), False) in report.guard and lost_var("sat1") in report.writes
    assert not report.writes & {ROUND, CLOCK, STEPS}
    aggregate = classes[("eval_round", "srv")]
    assert {lost_var("sat1"), lost_var("sat2")} <= aggregate.writes
    assert s.variable_reads("lost") == {lost_var("sat1"), lost_var("sat2")}
    windows = build_system(parse_scenario(_network([1, 1], [1, 1], aggregate="deadline 2"), "<w>"))
    classes = {(c.rule, c.actor): c for c in windows.fl.action_classes() or ()}
    report = classes[("get_grad_round_noisy", "sat1")]
    assert {CLOCK, STEPS} <= report.writes and {CLOCK, STEPS} <= report.guard_reads
    assert windows.variable_reads("step") == {CLOCK}
    assert windows.variable_reads("link_ground_o1") == {CLOCK}


@pytest.mark.parametrize("text", [
    _network([1, 1, 1], [3, 3, 3], aggregate="quorum 2"),
    _network([1, 1], [5, 5], relay=True, attacker="eve at r1 observes curmodpar"),
    _network([0, 0, 1], [1, 1, 4], relay=True, aggregate="deadline 2",
             attacker="eve at r1 observes gradient_sat3"),
    _network([1, 0], [2, 4], attacker="eve on ground -- o1 observes copied", rounds=2),
], ids=["loss-quorum", "relay-failure", "window-deadline-tap", "rounds-window-link-tap"])
def test_every_step_stays_in_its_footprint(text: str) -> None:
    assert assert_footprints_hold(build_system(parse_scenario(text, "<network>"))) > 40


@pytest.mark.parametrize("name", NETWORK_SCENARIOS)
def test_bundled_steps_stay_in_their_footprints(name: str) -> None:
    assert assert_footprints_hold(build_system(load_scenario(resolve_scenario_path(name))), samples=60) > 50


def test_a_missing_write_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the lost report's effect declared without stating ``lost:c`` among what it writes, the step
    check would fail."""
    monkeypatch.setattr(network_rules.Lost, "written", lambda self, scope: {})
    s = build_system(parse_scenario(_network([1, 1], [3, 3]), "<n>"))
    with pytest.raises(AssertionError):
        assert_footprints_hold(s)


# ------------------------------------------------------------------------------ the check's figures
def _compare(scenario: Scenario, choice: Reductions | None = None) -> tuple[int, int, list[str]]:
    plain = check_scenario(scenario, limits=LIMITS, reductions=Reductions.none())
    reduced = check_scenario(scenario, limits=LIMITS, reductions=choice or Reductions())
    assert plain.kripke.complete and reduced.kripke.complete
    assert _figures(reduced) == _figures(plain)
    return int(plain.kripke.num_states), int(reduced.kripke.num_states), reduced.reductions.names


@pytest.mark.parametrize("name", [
    pytest.param("moniteo_link_loss", marks=pytest.mark.slow), "moniteo_deadline", "walker_family",
    pytest.param("walker12_relay", marks=pytest.mark.slow)])
def test_bundled_network_checks_agree(name: str) -> None:
    """Every verdict, figure and privacy distribution of the bundled network scenarios is the same
    reduced and unreduced; the reductions that apply are the ones the footprints allow (walker12_relay
    without its privacy pair, whose explorations the dead values alone reduce: 7 s each)."""
    s = load_scenario(resolve_scenario_path(name))
    if name == "walker12_relay":
        s = dataclasses.replace(s, properties=tuple(p for p in s.properties if p.kind != "privacy"))
    before, after, applied = _compare(s)
    assert "dead_values" in applied and after <= before
    if name in ("moniteo_deadline", "walker_family"):  # only ctl and probability read the structure
        assert "cone" in applied and after < before


# ------------------------------------------------------------------------------ privacy explorations
CHOICES = {"partial_order": Reductions(dead_values=False, symmetry=False),
           "symmetry": Reductions(dead_values=False, partial_order=False),
           "both": Reductions(dead_values=False)}


def _observations(scenario: Scenario, observing: tuple[str, ...], choice: Reductions | None,
                  neighbour: str) -> list[DatasetObservation]:
    system = build_system(scenario)
    reducer = None if choice is None else ObservationReducer(scenario, system.secrets, choice=choice)
    return [observe_dataset(system.fl, d, record_updates=False, observing=observing, observer=system.observe,
                            exact=True, reducer=reducer)
            for d in (None, neighbour_dataset(scenario, neighbour))]


def _distributions(o: DatasetObservation) -> dict[str, Any]:
    return {"releases": o.releases, "sequence": o.sequence, "final": o.final, "undetermined": o.undetermined}


def _agree(scenario: Scenario, observing: tuple[str, ...], choices: dict[str, Reductions] = CHOICES,
           ) -> dict[str, dict[str, Any]]:
    """The privacy explorations' distributions under each choice of reductions equal the plain ones;
    what each applied on ``D0``."""
    neighbour = scenario.neighbours[0].name
    plain = _observations(scenario, observing, None, neighbour)
    applied = {}
    for name, choice in choices.items():
        reduced = _observations(scenario, observing, choice, neighbour)
        for a, b in zip(plain, reduced, strict=True):
            assert _distributions(b) == _distributions(a), name
            assert b.states <= a.states
        applied[name] = reduced[0].reductions
    return applied


@pytest.mark.parametrize("name,confluent", [
    ("walker_family", True), ("moniteo_deadline", False),
    pytest.param("moniteo_link_loss", False, marks=pytest.mark.slow)])
def test_bundled_privacy_explorations_agree(name: str, confluent: bool) -> None:
    """walker_family's reports commute (no step windows, no deadline, the loss is an outcome of the
    report): one action per state; the deadline's steps counter and the link-loss scenario's step
    windows and eavesdropper make the order matter: refused, with the variable that decides it."""
    s = load_scenario(resolve_scenario_path(name))
    observing = tuple(o.name for o in s.attacker.observes) if s.attacker else ("curmodpar",)
    po = _agree(s, observing, {"both": CHOICES["both"]})["both"]["partial_order"]
    assert po["applied"] is confluent, po
    if name == "moniteo_deadline":  # ε* differs under the worst scheduler: the order matters
        assert "net:steps" in po["reason"]
    if name == "moniteo_link_loss":
        assert "net:clock" in po["reason"] or "crossed:" in po["reason"]


OBSERVED = [("curmodpar",), ("curmodpar", "lost"), ("lost",), ("round",), ("copied",), ("gradient_sat1",),
            ("seen_sat1",), ("ready",)]


@st.composite
def _privacy_cases(draw: st.DrawFn) -> tuple[str, tuple[str, ...]]:
    n = draw(st.integers(2, 3))
    profiles = [draw(st.sampled_from([0, 2, 3, 4, 5])) for _ in range(n)]
    if sum(1 for k in profiles if k == 5) > 1:
        profiles = [k if k != 5 or i == profiles.index(5) else 0 for i, k in enumerate(profiles)]
    aggregate = draw(st.sampled_from(["all", "all", "all", f"quorum {n - 1}", "deadline 2"]))
    observing = draw(st.sampled_from([("curmodpar",), ("round",), *OBSERVED]))
    if observing == ("copied",):
        attacker = "eve on ground -- o1 observes copied"
    elif observing == ("seen_sat1",):
        attacker = "eve at ground observes gradient_sat1"
    else:
        attacker = f"eve at ground observes {', '.join(observing)}"
    values = [draw(st.integers(0, 1)) for _ in range(n)]
    if aggregate == "all" and not any(profiles):
        aggregate = f"quorum {n}"  # the all-clients rule, over the network
    text = _network_text(values, profiles, relay=False, aggregate=aggregate, rounds=1, attacker=attacker,
                         properties=[], hot=True)
    return text, observing


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_privacy_cases())
def test_generated_privacy_explorations_agree(case: tuple[str, tuple[str, ...]]) -> None:
    """Losses, windows in steps or rounds, failures, quorum and deadline rounds, attackers at the hub or
    on a link: the privacy explorations' distributions are exact under every choice of reductions. One
    action per state is explored exactly when the reports commute: every client's rounds (no deadline,
    no quorum before the last report), no link the environment may cut (a cut changes the routes of
    the reports after it), and a record that only the aggregation writes (the model or the round, and
    the lost reports when none can be lost; a lost report, a copy and a client's report change what
    the attacker sees, in their order)."""
    text, observing = case
    scenario = parse_scenario(text, source="<generated>")
    applied = _agree(scenario, observing)
    po = applied["partial_order"]["partial_order"]
    quiet = all(o in ("curmodpar", "round") or (o == "lost" and "loss" not in text) for o in observing)
    commute = "aggregate" not in text and "failure" not in text and quiet
    assert po["applied"] == commute, po


@st.composite
def _check_cases(draw: st.DrawFn) -> str:
    from tests.checker.test_symmetry import network_scenarios

    text = draw(network_scenarios())
    return text


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_check_cases())
def test_generated_network_checks_agree(text: str) -> None:
    """The generated network scenarios of the symmetry tests (windows, losses, failures, relays with
    ties, partial rounds, tapping attackers; properties over round, lost, copied, seen and the model):
    every verdict and figure with all reductions equals the unreduced check's."""
    _compare(parse_scenario(text, source="<generated>"))


# ------------------------------------------------------------------------------ wrong footprints
def test_a_deadline_that_claimed_to_commute_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the round's steps counter not written and the deadline aggregation declared as waiting for
    every client (wrong declarations), the deadline's reports would commute and one action per state
    would be explored: which reports make the deadline would no longer depend on the scheduler, and the
    release distribution differs from the plain one, so the comparison catches it."""
    s = load_scenario(resolve_scenario_path("moniteo_deadline"))
    observing = tuple(o.name for o in s.attacker.observes) if s.attacker else ("curmodpar",)
    real = network.StatusVariables.of
    monkeypatch.setattr(network.StatusVariables, "of",
                        classmethod(lambda cls, net: dataclasses.replace(real(net), steps=False)))
    monkeypatch.setattr(network_rules.Reporters, "literals",
                        lambda self, scope: tuple((f"ready:{c}", True) for c in scope.clients))
    neighbour = s.neighbours[0].name
    plain = _observations(s, observing, None, neighbour)
    wrong = _observations(s, observing, CHOICES["partial_order"], neighbour)
    assert wrong[0].reductions["partial_order"]["applied"]
    assert [_distributions(o) for o in wrong] != [_distributions(o) for o in plain]


def test_copied_without_its_gradients_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """``copied`` holds the copied reports: were its reads stated without the gradients, the cone would
    forget them and a probability over what the attacker copied changes."""
    text = _network([1, 0], [3, 0], attacker="eve on ground -- o1 observes copied",
                    properties=['probability uniform >= 1/2 reach ("sat1", 1) in copied'])
    s = parse_scenario(text, "<copied>")
    cone = Reductions(dead_values=False, symmetry=False)
    _, _, applied = _compare(s, cone)
    assert applied == ["cone"]
    real = network.Network.observable_reads

    def without_gradients(self: network.Network, name: str, *args: Any) -> frozenset[str] | None:
        reads = real(self, name, *args)
        return None if reads is None else frozenset(v for v in reads if not v.startswith("gradient:"))

    monkeypatch.setattr(network.Network, "observable_reads", without_gradients)
    plain = check_scenario(s, limits=LIMITS, reductions=Reductions.none())
    wrong = check_scenario(s, limits=LIMITS, reductions=cone)
    assert "gradient:sat1" in wrong.reductions.details["cone"]["forgotten"]
    assert _figures(wrong) != _figures(plain)


def test_forcing_one_action_over_step_windows_changes_the_distribution(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Step windows make the order of the reports matter (a report takes a step of the window): the
    conflict check refuses, and exploring one action per state anyway gives other distributions."""
    text = _network([1, 0], [1, 1], attacker="eve at ground observes curmodpar", hot=True)
    early = text.replace("contact ground -- o1 in steps 1..2", "contact ground -- o1 in steps 1..1")
    s = parse_scenario(early, "<windows>")
    plain = _observations(s, ("curmodpar",), None, "hot")
    refused = _observations(s, ("curmodpar",), CHOICES["partial_order"], "hot")
    assert "net:clock" in refused[0].reductions["partial_order"]["reason"]
    monkeypatch.setattr(reductions_module, "confluence_conflicts", lambda *a, **k: [])
    forced = _observations(s, ("curmodpar",), CHOICES["partial_order"], "hot")
    assert [_distributions(o) for o in forced] != [_distributions(o) for o in plain]


# ------------------------------------------------------------------------------ dead values
@pytest.mark.parametrize("name", ["moniteo_link_loss", "walker12_relay"])
def test_dead_value_reset_is_a_functional_bisimulation_over_networks(name: str) -> None:
    """``successors(h(s)) = h(successors(s))`` for sampled explored states of network scenarios (a lost
    report, a cut link and a copy neither read nor write an unready client's gradient)."""
    plain = build_system(load_scenario(resolve_scenario_path(name))).fl
    assert plain.dead_gradient_clients() == plain.clients
    reduced = reduce_values(plain, reset_unready=plain.clients)
    states: list[FLState] = list(explore(plain, limits=Limits(max_states=3000)).states or ())  # type: ignore[arg-type]
    for s in random.Random(5).sample(states, min(len(states), 200)):
        hs = reduced.abstract(s)
        left = sorted((str(a), t, p) for a, t, p in reduced.successors(hs))
        right = sorted((str(a), reduced.abstract(t), p)
                       for a, t, p in plain.successors(s))
        assert left == right


def walker_family_cone_quotient(n: int) -> int:
    """States of walker_family's explored structure under the cone and the symmetry: the properties
    read the round and the lost reports, so the model and every report value are forgotten; satellites
    1..N-1 with equal anomalies form a class (each reported or not: ``n_k + 1`` counts per class), and
    satellite N is unreported, reported or lost; after the aggregation one state."""
    anomaly = [1, 2, 1, 0, 2, 1, 0]
    out = 3
    for k in range(3):
        out *= 1 + sum(1 for i in range(1, n) if anomaly[(i - 1) % 7] == k)
    return out + 1


@pytest.mark.parametrize("n", [4, 8, 16])
def test_walker_family_structure_at_scale(n: int) -> None:
    """walker_family: the cone forgets every report value and the model, the symmetry merges the
    satellites with equal anomalies; the explored structure has the closed-form size (601 states at
    N = 16, from about 5·10^9; 4051 at N = 32, bench/bench_scale.py) and the ctl and probability
    verdicts of the bundled file (compared with the unreduced check up to N = 8 in the slow tests of
    test_symmetry)."""
    s = load_scenario(resolve_scenario_path("walker_family"), defines={"N": n})
    s = dataclasses.replace(s, properties=tuple(p for p in s.properties if p.kind in ("ctl", "probability")))
    report = check_scenario(s, limits=LIMITS)
    assert report.reductions.names == ["dead_values", "cone", "symmetry", "counter"]
    assert report.reductions.details["counter"]["stored"] == "representatives"  # a network status
    assert int(report.kripke.num_states) == walker_family_cone_quotient(n)
    assert walker_family_cone_quotient(32) == 4051  # the 32-satellite figure of the scenario's comment
    assert [(r.name, str(r.verdict), r.value_text) for r in report.results] == [
        ("round_can_complete_unless_lost", "holds", ""), ("completes", "holds", "99/100 ≈ 0.99")]


def _family_releases(n: int, hot: bool) -> dict[tuple[tuple[Fraction, ...], ...], Fraction]:
    """walker_family's release distribution by convolution, from the scenario's text: satellite i < N
    reports ``y/2`` (squared loss without intercept, rate 1/2, w = 0, x = 1) for ``y`` its anomaly,
    satellite N for ``y = 1`` (``3`` with the neighbour hot), snapped to {0, 1, 2} (ties down) and
    kept with probability 1/2, each other point 1/4 (randomized response, r = 1/2); satellite N's
    report arrives with probability 99/100, else the round never completes (no release); the release
    is the mean of the N reports (equal parts)."""
    anomaly = [1, 2, 1, 0, 2, 1, 0]
    targets = [anomaly[(i - 1) % 7] for i in range(1, n)] + [3 if hot else 1]
    sums = {0: Fraction(1)}
    for y in targets:
        snapped = min(range(3), key=lambda g: (abs(g - Fraction(y, 2)), g))
        report = {g: Fraction(1, 2) if g == snapped else Fraction(1, 4) for g in range(3)}
        nxt: dict[int, Fraction] = {}
        for total, p in sums.items():
            for g, q in report.items():
                nxt[total + g] = nxt.get(total + g, Fraction(0)) + p * q
        sums = nxt
    arrive = 1 - Fraction(1, 10) ** 2
    return {((Fraction(k, n),),): p * arrive for k, p in sums.items()} | {(): 1 - arrive}


def _family_order_states(n: int) -> int:
    """States of walker_family's privacy exploration with one report order on orbit representatives,
    keeping every report: the first enabled report is the unready satellite of smallest name, and a
    representative puts a class's unready satellites first, so the classes report one after the other
    in the order of their first names (satellite N alone: 3 reports or lost); while a class of ``m``
    satellites fills, its reports are multisets (``Σ_{k ≤ m} C(k+2, 2)`` states times the full classes'
    ``C(m+2, 2)``); then one state per released sum (``2N + 1``)."""
    anomaly = [1, 2, 1, 0, 2, 1, 0]
    classes: dict[object, list[str]] = {}
    for i in range(1, n):
        classes.setdefault(anomaly[(i - 1) % 7], []).append(f"sat{i}")
    classes["last"] = [f"sat{n}"]
    total, full = 1, 1
    for members in sorted(classes.values(), key=min):
        if members == [f"sat{n}"]:
            total, full = total + 4 * full, 4 * full
            continue
        m = len(members)
        total, full = total + full * (math.comb(m + 3, 3) - 1), full * math.comb(m + 2, 2)
    return total + 2 * n + 1


@pytest.mark.slow
def test_walker_family_privacy_pair_at_32_satellites() -> None:
    """The 32-satellite swarm's privacy pair: one report order, the reports' weighted sum and orbit
    representatives leave 1217 states per dataset (without the sum 2391025 by the closed form, checked
    at N = 8; 2.3·10^19 without any reduction); both release distributions equal the convolution of the
    satellites' reports, and the largest ratio is 2 (ε* = ln 2)."""
    s = load_scenario(resolve_scenario_path("walker_family"), defines={"N": 32})
    d0, d1 = _observations(s, ("curmodpar",), Reductions(), "hot")
    assert (d0.states, d1.states) == (1217, 1217)
    applied = {k for k, v in d0.reductions.items() if v["applied"]}
    assert applied == {"gradient_sum", "partial_order", "symmetry"}
    assert d0.sequence == _family_releases(32, hot=False) and d1.sequence == _family_releases(32, hot=True)
    ratios = [max(d0.sequence[v] / d1.sequence[v], d1.sequence[v] / d0.sequence[v]) for v in d0.sequence]
    assert max(ratios) == 2
    eight = load_scenario(resolve_scenario_path("walker_family"), defines={"N": 8})
    kept = check_scenario(eight, limits=LIMITS, only=["ni_fl_dp"], reductions=Reductions(gradient_sum=False))
    (pair,) = kept.reductions.explorations
    assert pair["D0"]["states"] == _family_order_states(8) == 2107 and _family_order_states(32) == 2391025
    assert str(kept.results[0].verdict) == "holds"
