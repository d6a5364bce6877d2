"""Corners where the structure's reductions once gave wrong verdicts (issue #26), each checked with and
without the reductions, and the safety net behind them: evidence of the reduced structure that does not
replay on the model sends the property to the plain exploration (:mod:`checker.app.lift`)."""

from __future__ import annotations

from typing import Any

import pytest

from checker.app.check import check_scenario
from checker.app.reductions import Reductions
from checker.mc.explore import Limits
from flmodel.scenario import parse_scenario

LIMITS = Limits(max_states=100_000, max_seconds=300)

TRACE_COUNT = """\
scenario "trace_count depends on the reported values"
locations ls, l1
links ls -- l1
server srv at ls
clients c1 at l1
policy at ls: srv may eval_server
policy at l1: c1 may get_grad
data a = (1) -> 2
dataset a
partition c1: {a}
model squared_nobias rate 1/2 initial (0)
protocol published traces full
bounds rounds 2, events 4
"""

COSTS = """\
scenario "attack_step costs under the symmetry quotient"
locations g, o1, o2
links g -- o1, g -- o2
server srv at g
clients sat1 at o1, sat2 at o2
policies default
data p1 = (1) -> 2
data p2 = (1) -> 2
dataset p1, p2
partition sat1: {p1}, sat2: {p2}
model squared_nobias rate 1/2 initial (0)
protocol fedavg_rounds traces drop
bounds rounds 1
"""


def _both(text: str) -> tuple[Any, Any]:
    scenario = parse_scenario(text, source="<corner>")
    return (check_scenario(scenario, limits=LIMITS),
            check_scenario(scenario, limits=LIMITS, reductions=Reductions.none()))


def _figures(report: Any) -> list[tuple[str, str, Any]]:
    return [(r.name, str(r.verdict), r.value_text) for r in report.results]


def test_trace_count_reads_the_reported_values() -> None:
    """Under full trace sets a report equal to an earlier one adds no trace: ``trace_count`` depends on
    the model and the parts, which the cone must keep (the trace records each step's event)."""
    text = TRACE_COUNT + ("property new_value: ctl AG ((round = 1 & last == get_grad & events == 3) -> "
                          "trace_count == 4);\n"
                          "property more: attack_tree exists trace_count == 3 & round = 1;\n"
                          "property fewer: attack_tree reduced exists trace_count == 3 & round = 1;\n")
    reduced, plain = _both(text)
    assert _figures(reduced) == _figures(plain)
    assert str(plain.results[0].verdict) == "holds"
    assert "fallback" not in reduced.reductions.details


@pytest.mark.parametrize("attributes,shown", [
    (("cost 1", "cost 5"), "min cost 6"),
    (("probability 1/2", "probability 1/10"), "max probability 1/20"),
    (("time 1", "time 3"), "min time 4"),
])
def test_attack_step_attributes_keep_clients_apart(attributes: tuple[str, str], shown: str) -> None:
    """Two satellites that differ only in their steps' attributes are not interchangeable: every attack
    has both report, so the optimum combines both attributes."""
    text = COSTS + (f"attack_step get_grad_round by sat1 {attributes[0]}\n"
                    f"attack_step get_grad_round by sat2 {attributes[1]}\n"
                    "property released: attack_tree reduced exists round = 1;\n")
    reduced, plain = _both(text)
    assert _figures(reduced) == _figures(plain)
    assert shown in reduced.results[0].evidence
    assert reduced.results[0].details["attributes"] == plain.results[0].details["attributes"]


def test_same_attributes_keep_the_symmetry() -> None:
    text = COSTS + ("attack_step get_grad_round by sat1 cost 2\nattack_step get_grad_round by sat2 cost 2\n"
                    "property released: attack_tree reduced exists round = 1;\n")
    reduced, plain = _both(text)
    assert "symmetry" in reduced.reductions.names
    assert _figures(reduced) == _figures(plain)
    steps = reduced.results[0].details["attributes"]["min_cost"]["steps"]
    assert sorted(s.split(" ")[2] for s in steps[:2]) == ["sat1", "sat2"]  # the model's own actors


def test_a_wrong_footprint_falls_back_to_the_plain_exploration(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the trace's dependencies left out of the event's declaration (the defect), the cone forgets
    the model and finds a counterexample that does not replay on the model: the property is decided on
    the plain exploration, and the output says so."""
    from flmodel.rule_parts import Event

    monkeypatch.setattr(Event, "dependencies", lambda self, scope, choice, draw: {"evs"})
    text = TRACE_COUNT + ("property new_value: ctl AG ((round = 1 & last == get_grad & events == 3) -> "
                          "trace_count == 4);\n")
    reduced, plain = _both(text)
    assert "cone" in reduced.reductions.names
    assert _figures(reduced) == _figures(plain)
    assert "new_value" in reduced.reductions.details["fallback"]["properties"]
    assert reduced.results[0].details["fallback"]["states"] == plain.kripke.num_states


def test_a_symmetry_blind_to_attributes_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the attributes left out of the symmetry (the defect), the quotient's cheapest way reports by
    sat1 twice: its replay on the model costs 6, not 2, and the property is decided on the plain
    exploration."""
    import checker.app.reductions as reductions

    monkeypatch.setattr(reductions, "step_colours", lambda scenario: {})
    text = COSTS + ("attack_step get_grad_round by sat1 cost 1\nattack_step get_grad_round by sat2 cost 5\n"
                    "property released: attack_tree reduced exists round = 1;\n")
    reduced, plain = _both(text)
    assert "symmetry" in reduced.reductions.names
    assert _figures(reduced) == _figures(plain)
    assert "released" in reduced.reductions.details["fallback"]["properties"]


def _decided(data: Any) -> Any:
    """A privacy report's JSON without what counts the explored states."""
    import re

    if isinstance(data, dict):
        return {k: _decided(v) for k, v in data.items()
                if k not in ("seconds", "explorations", "reductions", "states", "transitions")}
    if isinstance(data, list):
        return [_decided(x) for x in data]
    return re.sub(r"in \d+ states( \(reduced\))?", "in N states", data) if isinstance(data, str) else data


def test_observing_on_the_command_line_keeps_the_gradient(capsys: pytest.CaptureFixture[str]) -> None:
    """``flcheck privacy --observing gradient_sat3``: the dead-value reset keeps the gradient the
    attacker observes (the threshold attackers read its values), so every figure is the unreduced
    one."""
    import json

    from checker.cli.main import main

    runs = []
    for extra in ([], ["--no-reduce"]):
        main(["privacy", "moniteo", "--observing", "gradient_sat3", "--json", *extra])
        runs.append(json.loads(capsys.readouterr().out))
    assert _decided(runs[0]) == _decided(runs[1])


def _strict_system(values: list[int], **kw: Any) -> Any:
    from tests.strategies import star_scenario_text

    text = star_scenario_text(values, **{"noise": "rr grid {0, 1, 2} epsilon ln(2)", **kw})
    return parse_scenario(text + "\nproperty p: ctl AG round <= 1;\n", "strict.fl")


_RANGE = "rr grid {0, 1, 2} r 1/2"


@pytest.mark.parametrize(("values", "kw", "never", "refused"), [
    ([2, 4], {}, True, False),  # one round, the updates 1 and 2 on the grid: the cone may forget the model
    ([2, 6], {}, False, True),  # sat2's update 3 is off the grid {0, 1, 2}
    ([2, 4], {"rounds": 2}, False, True),  # a report of round 2 is drawn at a model the run computed
    ([2, 4], {"partitioned": False, "protocol": "published", "events": 3}, False, True),  # {d1, d2}: 3/2
    ([2, 2], {"partitioned": False, "protocol": "published", "events": 3}, True, False),  # 0 or 1
    # a range (not strict): every model lies in [0, 2], where the update (w + y)/2 stays for y <= 2
    ([1, 2], {"rounds": 2, "noise": _RANGE}, True, False),
    ([1, 2], {"rounds": 3, "protocol": "published", "events": 5, "noise": _RANGE}, True, False),
    ([2, 4], {"rounds": 2, "noise": _RANGE}, False, True),  # (2 + 4)/2 = 3 once the model reaches 2
])
def test_a_strict_grid_keeps_the_model_only_where_a_report_may_be_refused(
        values: list[int], kw: dict[str, Any], never: bool, refused: bool) -> None:
    """A strict grid refuses values off it: whether a report exists then depends on the model and
    the client's part, and the cone keeps them, unless every report is drawn at the initial model and
    the mechanism accepts every part the client can hold (``FLSystem.reports_never_refused``). The
    reduced verdict equals the unreduced one either way (both refuse the same scenarios)."""
    from flmodel.errors import ModelError
    from flmodel.scenario_build import build_system

    scenario = _strict_system(values, **kw)
    fl = build_system(scenario).fl
    assert all(fl.reports_never_refused(c) for c in sorted(fl.initial.igra.clients)) is never
    outcomes = []
    for choice in (Reductions(), Reductions.none()):
        try:
            report = check_scenario(scenario, limits=Limits(max_seconds=60), reductions=choice)
            outcomes.append([str(r.verdict) for r in report.results])
        except ModelError as exc:  # the first refused value met depends on the order of exploration
            assert "is not on the grid" in exc.diagnostics[0].message
            outcomes.append(["refused"])
    assert outcomes[0] == outcomes[1]
    assert (outcomes[0] == ["refused"]) is refused
    if never:
        report = check_scenario(scenario, limits=Limits(max_seconds=60))
        assert "curmodpar" in report.reductions.details["cone"]["forgotten"]
