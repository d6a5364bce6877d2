"""State-space reductions of ``flcheck check`` (:mod:`checker.app.reductions`): every verdict and figure
is the same with and without each reduction, on the bundled scenarios and on generated ones; the
dead-value reset is a functional bisimulation of the model (checked step by step on explored states)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.app.check import check_scenario
from checker.app.load import resolve_scenario_path
from checker.app.reductions import Reductions, gradient_readers, reduce_system
from checker.app.value_reductions import reduce_values
from checker.mc.explore import Limits, explore
from checker.render import json_value
from flmodel.scenario import load_scenario, parse_scenario
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import ScenarioSystem, build_system
from flmodel.system import FLState
from tests.strategies import star_scenario_text

LIMITS = Limits(max_states=200_000, max_seconds=600)

#: Details that describe the explored structure, not the result: a witness path, the size of the
#: invariant that blocks an attack.
#: details that count or show the explored structure's own states (a reduction merges states)
STRUCTURAL = ("trace", "invariant_states", "goal_states")


def _figures(report: Any) -> list[tuple[Any, ...]]:
    """Everything a check decides, per property: verdict, figure, its exact text, the details (ε, δ(ε),
    advantage, bounds, probability, outcome counts; not the witness path, whose states are the
    structure's, nor the size of an invariant or of an attack tree's goal set) and, for privacy
    properties, the two output distributions themselves."""
    out = []
    for r in report.results:
        details = {k: v for k, v in r.details.items() if k not in STRUCTURAL}
        if "probability" in details:  # exact on a small structure, a float on a large one: same value
            details["probability"] = float(Fraction(details["probability"]))
        if "facts" in details:  # the invariant's facts about an observable the reduction resets differ
            details["facts"] = [f for f in details["facts"] if not f.startswith("gradient")]
        dists = report.artefacts["privacy"].get(r.name)
        exact = None if dists is None else (sorted(map(repr, dists[0].items())),
                                           sorted(map(repr, dists[1].items())))
        out.append((r.name, str(r.verdict), r.value, r.value_text, repr(details), exact))
    return out


def _compare(scenario: Scenario, choice: Reductions, limits: Limits = LIMITS) -> tuple[int, int, list[str]]:
    plain = check_scenario(scenario, limits=limits, reductions=Reductions.none())
    reduced = check_scenario(scenario, limits=limits, reductions=choice)
    assert plain.kripke.complete and reduced.kripke.complete
    assert _figures(reduced) == _figures(plain)
    assert plain.reductions.names == []
    return int(plain.kripke.num_states), int(reduced.kripke.num_states), reduced.reductions.names


@pytest.mark.parametrize("name,defines", [
    ("moniteo", None), pytest.param("seed_model", None, marks=pytest.mark.slow),
    pytest.param("moniteo_link_loss", None, marks=pytest.mark.slow), ("moniteo_swarm8", {"N": 3}),
    ("moniteo_deadline", None)])
def test_bundled_scenarios_agree(name: str, defines: dict[str, int] | None) -> None:
    scenario = load_scenario(resolve_scenario_path(name), defines=defines)
    before, after, applied = _compare(scenario, Reductions())
    assert after <= before
    if name in ("moniteo", "moniteo_swarm8"):  # fedavg rounds, every gradient dead after the round
        assert applied[0] == "dead_values" and after < before
    # the swarm's properties name no satellite: the quotient is explored, and its privacy properties
    # are decided on the system without it (OWN_EXPLORATION_KINDS); moniteo's name every client
    assert ("symmetry" in applied) == (name == "moniteo_swarm8")
    if name == "moniteo_swarm8":
        _, alone, names = _compare(scenario, Reductions(dead_values=False, cone=False, counter=False))
        assert names == ["symmetry"] and alone < before
        _, counted, names = _compare(scenario, Reductions(dead_values=False, cone=False))
        assert names == ["symmetry", "counter"] and counted == alone
        # the swarm's ctl and probability properties read round, ready and enabledness only: the model,
        # the gradients and the last rule are outside their cone of influence
        _, alone, names = _compare(scenario, Reductions(dead_values=False, symmetry=False))
        assert names == ["cone"] and alone < before


@pytest.mark.slow
def test_swarm8_agrees() -> None:
    scenario = load_scenario(resolve_scenario_path("moniteo_swarm8"), defines={"N": 5})
    before, after, _ = _compare(scenario, Reductions())
    assert after < before


def test_dead_value_reset_is_a_functional_bisimulation() -> None:
    """``successors(h(s)) = h(successors(s))`` for every explored unreduced state ``s``, with the
    same actions and probabilities (``h`` resets the gradients of unready clients)."""
    for name in ("moniteo", "seed_model"):
        scenario = load_scenario(resolve_scenario_path(name))
        plain = build_system(scenario).fl
        reduced = reduce_values(plain, reset_unready=plain.clients)
        k = explore(plain, limits=Limits(max_states=3000))  # type: ignore[arg-type]  # FLSystem yields plain tuples
        assert k.states is not None
        states: list[FLState] = list(k.states)  # type: ignore[arg-type]  # the states FLSystem made
        for s in states:
            hs = reduced.abstract(s)
            left = sorted((str(a), t, p) for a, t, p in reduced.successors(hs))
            right = sorted((str(a), reduced.abstract(t), p)
                           for a, t, p in plain.successors(s))
            assert left == right


def _scenario_text(values: list[int], noise: str, rounds: int, protocol: str, properties: list[str],
                   traces: str = "drop") -> str:
    """A star scenario (:func:`tests.strategies.star_scenario_text`): one datum per satellite, the last
    one secret with the neighbour ``hot`` replacing it, one noise mechanism on every update, the
    attacker ``eve`` at the ground station reading the model."""
    events = (3 if traces == "full" else 4) if protocol == "published" else None
    return star_scenario_text(values, noise=noise, protocol=protocol, rounds=rounds, traces=traces,
                              events=events, hot=True, attacker="eve at ground observes curmodpar",
                              properties=properties)


def test_properties_naming_a_gradient_keep_it() -> None:
    text = _scenario_text([1, 2], "rr grid {0, 1} r 1/2 clip", 1, "fedavg_rounds",
                          ['ctl AG (gradient_sat1 == curmodpar | gradient_sat1 != curmodpar)'])
    s = parse_scenario(text)
    assert gradient_readers(s, ["sat1", "sat2"]) == ({"sat1"}, False)
    _, applied = reduce_system(build_system(s), s)
    assert applied.details["dead_values"]["clients"] == ["sat2"]
    assert applied.details["dead_values"]["kept"] == ["sat1"]
    off, applied_off = reduce_system(build_system(s), s, Reductions.none())
    assert applied_off.names == [] and off.fl.reset_unready == ()


def test_a_reset_that_ignores_a_reader_changes_the_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison can fail: resetting a gradient that a property reads (detection switched off)
    turns a violated invariant into one that holds."""
    import checker.app.reductions as reductions

    path = resolve_scenario_path("moniteo")
    prop = "property reset_visible: ctl AG (ready_sat1 | gradient_sat1 == (0, 0));\n"
    scenario = parse_scenario(path.read_text() + prop, source=str(path))
    plain = check_scenario(scenario, limits=LIMITS, only=["reset_visible"], reductions=Reductions.none())
    assert str(plain.results[0].verdict) == "violated"
    reduced = check_scenario(scenario, limits=LIMITS, only=["reset_visible"])
    assert reduced.reductions.names == [] or reduced.reductions.details["dead_values"]["kept"] == ["sat1"]
    assert str(reduced.results[0].verdict) == "violated"
    monkeypatch.setattr(reductions, "gradient_readers", lambda _s, _c, _r=(): (set(), False))
    wrong = check_scenario(scenario, limits=LIMITS, only=["reset_visible"])
    assert wrong.reductions.details["dead_values"]["clients"] == ["sat1", "sat2", "sat3"]
    assert str(wrong.results[0].verdict) == "holds"


def test_the_cone_keeps_what_a_property_reads_through_the_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """A probability of the released model keeps the model and, through the aggregation, every
    gradient; ``ready`` alone keeps none of them. A cone that skips the rules' dependencies (closure
    switched off) forgets the gradients the model is computed from, and the comparison catches it."""
    import checker.app.reductions as reductions

    text = _scenario_text([1, 2], "rr grid {0, 1} r 1/2 clip", 1, "fedavg_rounds",
                          ["probability max >= 1/5 reach curmodpar == 1/2", "ctl EF ready_sat1"])
    s = parse_scenario(text)
    only_cone = Reductions(dead_values=False, symmetry=False, cone=True)
    _, applied = reduce_system(build_system(s), s, only_cone)
    assert applied.details["cone"]["forgotten"] == ["last"]
    _compare(s, only_cone)
    flag = parse_scenario(_scenario_text([1, 2], "rr grid {0, 1} r 1/2 clip", 1, "fedavg_rounds",
                                         ["ctl AG (ready == clients -> EF round = 1)"]))
    _, applied = reduce_system(build_system(flag), flag, only_cone)
    assert applied.details["cone"]["forgotten"] == ["curmodpar", "gradient:sat1", "gradient:sat2", "last"]
    _compare(flag, only_cone)
    monkeypatch.setattr(reductions, "cone_of_influence",
                        lambda classes, seeds: frozenset(seeds).union(*(c.guard_reads for c in classes)))
    plain = check_scenario(s, limits=LIMITS, reductions=Reductions.none())
    wrong = check_scenario(s, limits=LIMITS, reductions=only_cone)
    assert "gradient:sat1" in wrong.reductions.details["cone"]["forgotten"]
    assert _figures(wrong) != _figures(plain)


def test_rules_that_read_a_gradient_otherwise_keep_every_gradient() -> None:
    """A rule declared with a value that reads a client's gradient other than through FedAvg's weighted
    sum of ready clients: the declarations derive no gradient footprint, so neither the dead values nor
    the gradient sum apply."""
    from flmodel.rule_data import Write
    from flmodel.rule_parts import Drawn, Event

    class Peek(Drawn):
        gradient_reads = None

        def reads(self, scope: Any) -> tuple[str, ...]:
            return (f"gradient:{scope.actor}",)

    s = load_scenario(resolve_scenario_path("moniteo"))
    system = build_system(s)
    rules = system.fl.rules
    writes = (*rules.rules[1].writes, Write("evs", Event("get", Peek())))
    peek = dataclasses.replace(rules.rules[1], writes=writes)
    changed = dataclasses.replace(rules, rules=(rules.rules[0], peek, rules.rules[2]))
    assert peek.gradients is None and not system.fl.replace(rules=changed).gradients_summed()
    _, applied = reduce_system(ScenarioSystem(system.fl.replace(rules=changed), system.secrets, s), s)
    assert not applied.details["dead_values"]["applied"] and "reason" in applied.details["dead_values"]


# ------------------------------------------------------------------------------ generated scenarios
@st.composite
def scenarios(draw: st.DrawFn) -> str:
    protocol = draw(st.sampled_from(["fedavg_rounds", "published"]))
    n = draw(st.integers(1, 3 if protocol == "fedavg_rounds" else 2))
    values = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    grid = draw(st.sampled_from(["{0, 1}", "{0, 1, 2}"]))
    noise = f"rr grid {grid} r {draw(st.sampled_from(['1/2', '2/3']))} clip"
    rounds = draw(st.integers(1, 2 if protocol == "fedavg_rounds" and n <= 2 else 1))
    named = [f"sat{i}" for i in draw(st.sets(st.integers(1, n), max_size=n))]
    props = [f"ctl AG (round < {rounds} -> EF round = {rounds})",
             f"probability min >= 1 reach round = {rounds}",
             "privacy epsilon <= ln(2) between hot",
             "advantage <= theorem1(ln(2)) between hot"]
    for c in named:
        props.append(draw(st.sampled_from([
            f"ctl EF ready_{c}",
            f"probability max >= 1/2 reach ready_{c}",
            f"ctl AG (ready_{c} -> EF round = {rounds})",
            f"ctl EF (ready_{c} & gradient_{c} == curmodpar)",
            f"attack_tree exists ready_{c}",
        ])))
    traces = draw(st.sampled_from(["drop", "full"])) if protocol == "published" else "drop"
    return _scenario_text(values, noise, rounds, protocol, props, traces)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_generated_scenarios_agree(text: str) -> None:
    scenario = parse_scenario(text, source="<generated>")
    _compare(scenario, Reductions())


# ------------------------------------------------------------------------------ the trace abstraction
PUBLISHED = resolve_scenario_path("moniteo_published")


def test_moniteo_published_checks_completely() -> None:
    """Moniteo under the rules as published, full trace sets, one round, four steps (millions of states
    taken literally): every property decided on the trace abstraction and the cone, with the verdicts
    the scenario's comments state."""
    report = check_scenario(load_scenario(PUBLISHED), limits=LIMITS)
    assert report.kripke.complete and report.reductions.names == ["dead_values", "traces", "cone"]
    assert {r.name: str(r.verdict) for r in report.results} == {
        "round_possible": "holds", "round_not_guaranteed": "holds", "reports_twice": "holds",
        "redeploys": "holds", "eval_needs_all": "holds", "dataset_fixed": "holds",
        "secret_can_move": "holds", "round_max": "holds", "round_min": "holds"}
    assert report.kripke.num_states < 2000


@pytest.mark.parametrize("steps", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_moniteo_published_agrees_with_the_literal_structure(steps: int) -> None:
    """With fewer steps the literal structure is within reach (8533 states at two steps, 964421 at
    three): every verdict and probability is the same."""
    _compare(load_scenario(PUBLISHED, defines={"E": steps}), Reductions(), Limits(max_states=2_000_000))


def test_the_trace_abstraction_keeps_away_from_the_uniform_scheduler(monkeypatch: pytest.MonkeyPatch) -> None:
    """A uniform-scheduler probability weighs a step by the traces it may extend: the abstraction is
    refused, and forced (the kind check switched off) it changes the probability."""
    import checker.app.reductions as reductions

    text = star_scenario_text([1, 2], noise="rr grid {0, 1} r 1/2 clip", protocol="published", traces="full",
                              events=3, properties=["probability uniform >= 0 reach last == put_part"])
    s = parse_scenario(text)
    only = Reductions(dead_values=False, cone=False, symmetry=False, traces=True)
    _, applied = reduce_system(build_system(s), s, only)
    assert not applied.details["traces"]["applied"] and "uniform" in applied.details["traces"]["reason"]
    plain = check_scenario(s, limits=LIMITS, reductions=Reductions.none())
    own = (*reductions.OWN_EXPLORATION_KINDS, "probability")
    monkeypatch.setattr(reductions, "OWN_EXPLORATION_KINDS", own)
    forced = check_scenario(s, limits=LIMITS, reductions=only)
    assert forced.reductions.names == ["traces"]
    assert forced.results[0].value != plain.results[0].value


def test_one_switch_per_reduction(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``check --no-<name>`` switches exactly that reduction off, for every reduction, and says so under
    ``reductions`` in the JSON (the privacy explorations' own under ``explorations``)."""
    import json

    from checker.app.reductions import REDUCTIONS
    from checker.cli.check import REDUCTION_HELP
    from checker.cli.main import main

    assert set(REDUCTION_HELP) == set(REDUCTIONS)
    path = tmp_path / "s.fl"
    path.write_text(_scenario_text([1, 2, 1], "rr grid {0, 1} r 1/2 clip", 1, "fedavg_rounds",
                                   ["ctl AG (round < 1 -> EF round = 1)",
                                    "privacy epsilon <= ln(4) between hot"]))
    for name in REDUCTIONS:
        main(["check", str(path), "--json", f"--no-{name.replace('_', '-')}"])
        data = json.loads(capsys.readouterr().out)["reductions"]
        where = data["explorations"][0]["D0"]["reductions"] if name in ("gradient_sum", "partial_order") \
            else data
        assert where[name] == {"applied": False, "reason": "switched off"}, name


@pytest.mark.parametrize("name,defines,formula", [
    ("moniteo_swarm8", {"N": 4}, "EF (ready == clients & round = 0)"),
    ("moniteo_swarm8", {"N": 4}, "AG (round = 0)"),
    ("moniteo_published", None, 'AG !(ready == {"sat1"} & last == get_grad_noisy)'),
])
def test_evidence_is_replayed_on_the_models_own_states(name: str, defines: dict[str, int] | None,
                                                        formula: str) -> None:
    """A witness or counterexample found on the reduced structure (symmetry and cone on the swarm; the
    trace abstraction and cone on the published rules) is shown in the model's own states: replaying
    its actions on the unreduced system from the initial state reaches states whose values are the
    ones shown, step by step (curmodpar and the traces included, which the reduced states forget)."""
    path = resolve_scenario_path(name)
    text = path.read_text() + f"property shown: ctl {formula};\n"
    scenario = parse_scenario(text, source=str(path), defines=defines)
    report = check_scenario(scenario, limits=LIMITS, only=["shown"])
    assert report.reductions.names
    trace = report.results[0].details["trace"]
    assert "replayed on the model's own states" in trace["note"]
    system = build_system(scenario)
    (state,) = system.initial_states()
    values: dict[str, Any] = {}
    for i, step in enumerate(trace["steps"]):
        if i:
            nexts = [t for a, t, _ in system.successors(state) if str(a) == step["action"]]
            state = next(t for t in nexts if all(
                json_value(system.observe(t, k)) == v for k, v in step["changed"].items()))
        now = {k: json_value(system.observe(state, k)) for k in system.observable_names()}
        assert {k: v for k, v in now.items() if i == 0 or values.get(k) != v} == step["changed"]
        values = now
    assert len(trace["steps"]) > 1


# ------------------------------------------------------------------------------ ample sets
def test_partial_order_of_the_structure(monkeypatch: pytest.MonkeyPatch) -> None:
    """Properties that do not see the clients' reports (rounds, deadlocks): one ample report per state,
    the same verdicts and probabilities as the plain structure; a property that sees which client
    reported keeps every interleaving it needs (the report is visible), and ignoring that visibility
    (the check switched off) loses the interleaving that breaks it."""
    import checker.app.reductions as reductions

    blind = _scenario_text([1, 2, 0], "rr grid {0, 1} r 1/2 clip", 1, "fedavg_rounds",
                           ["ctl AG (round < 1 -> EF round = 1)", "ctl AG (!(EX true) -> round = 1)",
                            "probability min >= 1 reach round = 1"])
    s = parse_scenario(blind)
    only = Reductions(dead_values=False, cone=True, symmetry=False, partial_order=True)
    before, after, names = _compare(s, only)
    # the three reports in one order, then the aggregation: 5 states of the 8 ready sets' 9
    assert names == ["cone", "partial_order"] and after <= 5 < before
    seeing = parse_scenario(_scenario_text([1, 2, 0], "rr grid {0, 1} r 1/2 clip", 1, "fedavg_rounds",
                                           ["ctl AG (ready_sat2 -> ready_sat1)"]))
    _, _, names = _compare(seeing, only)
    assert "partial_order" in names  # applied: sat3's report is ample, sat1's and sat2's are visible
    plain = check_scenario(seeing, limits=LIMITS, reductions=Reductions.none())
    assert str(plain.results[0].verdict) == "violated"
    monkeypatch.setattr(reductions, "_read_names", lambda system, scenario: (set(), None))
    wrong = check_scenario(seeing, limits=LIMITS, reductions=only)
    assert str(wrong.results[0].verdict) == "holds"


def test_partial_order_refuses_next_steps_and_the_uniform_scheduler() -> None:
    for prop, why in (("ctl AG EX round = 1", "next-step"), ("probability uniform >= 0 reach round = 1",
                                                            "uniform")):
        s = parse_scenario(_scenario_text([1, 2], "rr grid {0, 1} r 1/2 clip", 1, "fedavg_rounds", [prop]))
        _, applied = reduce_system(build_system(s), s)
        assert not applied.details["partial_order"]["applied"]
        assert why in applied.details["partial_order"]["reason"]


@pytest.mark.parametrize("name,defines", [("moniteo", None), ("seed_model", None), ("moniteo_rounds", None),
                                          ("moniteo_swarm8", {"N": 4}), ("moniteo_published", {"E": 2})])
def test_bundled_steps_stay_in_their_footprints(name: str, defines: dict[str, int] | None) -> None:
    """Every sampled step of the published and round-based rules changes only what its class says it
    writes, its guard literals hold where it is enabled, and a ``single`` class has one action
    (:func:`tests.checker.test_network_reductions.assert_footprints_hold`)."""
    from tests.checker.test_network_reductions import assert_footprints_hold

    system = build_system(load_scenario(resolve_scenario_path(name), defines=defines))
    assert assert_footprints_hold(system, samples=60) > 50
