"""Defences that remove links (``defence NAME: remove link A -- B [budget C]``): the scenario is explored
again without the links and the cheapest attack searched there. The reference for every verdict is the
scenario text with the links' statements deleted by hand, explored as a scenario of its own, and every
simple attack path of it enumerated; on a relay topology, one removal re-routes the secret report around
the eavesdropper (the attack is blocked), another leaves the route through it (the attack remains), and
a third cuts the report off."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from checker.app.step_attributes import judge_defence, step_table
from checker.attack_trees.attributes import StepTable
from checker.cli.main import main
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_parse import parse_formula
from checker.mc.explore import Limits, explore
from checker.mc.kripke import Kripke
from flmodel.scenario import parse_scenario
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import build_system

SPEC = Path(__file__).resolve().parents[2] / "spec" / "scenarios"

#: Contact links of the relay topology: sat2's report goes orbit2 -> relay -> ground (2 hops), past the
#: eavesdropper eve at relay; the detour orbit2 -> orbit1 -> hop -> ground is one hop longer.
LINKS = ("ground -- relay", "relay -- orbit2", "orbit2 -- orbit1", "orbit1 -- hop", "hop -- ground")

RELAY = "\n".join([
    'scenario "relay"',
    "locations ground, relay, hop, orbit1, orbit2",
    *(f"contact {link} in rounds 1" for link in LINKS),
    "server station at ground",
    "clients sat1 at orbit1, sat2 at orbit2",
    "actor eve at relay",
    "policies default",
    "data p1 = (1) -> 1",
    "data p2 = (1) -> 2 secret",
    "data p2_hot = (1) -> 3 secret observed by sat2",
    "dataset p1, p2",
    "partition sat1: {p1}, sat2: {p2}",
    "model squared_nobias rate 1/2 initial (0)",
    "noise for sat2: rr grid {0, 1} r 1/2 on update",
    "protocol fedavg_rounds traces drop",
    "bounds rounds 1",
    "neighbour hot: replace p2 with p2_hot",
    "attacker eve at relay observes gradient_sat2",
    "attack_step get_grad_round_noisy by sat2 cost 1 probability 9/10 time 1",
    "attack_step get_grad_round_noisy by sat1 cost 2",
    "attack_step eavesdrop by eve cost 3 probability 1/2 time 1",
]) + "\n"

GOAL = "seen_sat2"


def goal_of(kripke: Kripke, text: str = GOAL) -> np.ndarray:
    return ModelChecker(kripke).sat_bounds(parse_formula(text))[0]


def by_hand(text: str, links: tuple[str, ...]) -> Kripke:
    """The reference: the scenario text without the links' contact, loss and failure lines, explored
    (parsed without the checks, which refuse an attacker observing a report whose route no longer
    crosses it: the point of the defence)."""
    kept = [line for line in text.splitlines()
            if not any(line.startswith(f"{kind} {link}") for kind in ("contact", "loss") for link in links)]
    return explore(build_system(parse_scenario("\n".join(kept) + "\n", "by_hand.fl", check=False)))


def path_costs(kripke: Kripke, goal: np.ndarray, table: StepTable) -> list[Fraction]:
    """The cost of every simple path from an initial state to its first goal state."""
    costs: list[Fraction] = []

    def extend(state: int, visited: frozenset[int], cost: Fraction) -> None:
        if goal[state]:
            costs.append(cost)
            return
        for edge in range(int(kripke.succ_ptr[state]), int(kripke.succ_ptr[state + 1])):
            target = int(kripke.succ_idx[edge])
            if target not in visited:
                step = table.vector(kripke.actions[int(kripke.edge_action[edge])]).cost
                extend(target, visited | {target}, cost + Fraction(step))

    for start in kripke.initial.tolist():
        extend(int(start), frozenset({int(start)}), Fraction(0))
    return costs


def with_defence(links: tuple[str, ...], budget: str = "") -> Scenario:
    line = f"defence d: remove link {', '.join(links)}" + (f" budget {budget}" if budget else "")
    return parse_scenario(RELAY + line + "\n", "relay.fl")


@pytest.mark.parametrize("links", [*((link,) for link in LINKS), *itertools.combinations(LINKS, 2)],
                         ids=lambda links: " + ".join(links))
def test_link_removals_agree_with_the_text_deleted_by_hand(links: tuple[str, ...]) -> None:
    scenario = with_defence(links)
    kripke = explore(build_system(scenario))
    table = step_table(scenario)
    assert table is not None
    reference = by_hand(RELAY, links)
    costs = path_costs(reference, goal_of(reference), table)
    for budget in (None, Fraction(3), Fraction(4), Fraction(6)):
        verdict = judge_defence(scenario, "d", kripke, goal_of, table, budget)
        within = [c for c in costs if budget is None or c <= budget]
        assert verdict.states == reference.num_states
        assert verdict.goal_reachable == bool(costs)
        assert verdict.cut.blocks == (not within) and verdict.cut.conclusive
        assert (verdict.cut.remaining is None) == (not within)
        if within:
            assert verdict.cut.remaining is not None and verdict.cut.remaining.value == min(within)


def test_the_relay_topology_has_a_blocking_and_a_non_blocking_removal() -> None:
    """Removing relay -- orbit2 routes sat2's report around eve (blocked); removing hop -- ground leaves
    it through her (cost 1 + 3 remains); without both of sat2's links the report cannot leave."""
    assert explore(build_system(parse_scenario(RELAY, "relay.fl"))).num_states == 14
    kripke = explore(build_system(with_defence(("relay -- orbit2",))))
    rerouted = judge_defence(with_defence(("relay -- orbit2",), "10"), "d", kripke, goal_of,
                             step_table(with_defence(("relay -- orbit2",))))
    assert rerouted.cut.blocks and not rerouted.goal_reachable and rerouted.cut.budget == 10
    assert rerouted.states < kripke.num_states  # round still completes over the detour
    sat2_reports = goal_of(by_hand(RELAY, ("relay -- orbit2",)), "ready_sat2")
    assert sat2_reports.any()
    kept = judge_defence(with_defence(("hop -- ground",), "10"), "d", kripke, goal_of,
                         step_table(with_defence(("hop -- ground",))))
    assert not kept.cut.blocks and kept.cut.remaining is not None and kept.cut.remaining.value == 4
    assert kept.cut.remaining.text() == ("get_grad_round_noisy by sat2 at orbit2; eavesdrop by eve at relay "
                                         "[report of sat2]")
    cut_off = by_hand(RELAY, ("relay -- orbit2", "orbit2 -- orbit1"))
    assert not goal_of(cut_off, "ready_sat2").any()


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_the_command_uses_the_statement_s_budget_and_the_option_overrides_it(tmp_path: Path) -> None:
    path = tmp_path / "relay.fl"
    path.write_text(RELAY + "defence keep: remove link hop -- ground budget 3\n"
                    "defence reroute: remove link relay -- orbit2\n", encoding="utf-8")
    code, out, _ = run(["attack-tree", str(path), "--goal", GOAL, "--defence", "keep"])
    assert code == 0
    assert out.rstrip().splitlines()[-1] == (
        "defence keep: removing link hop -- ground blocks every attack of cost <= 3 (the model explored "
        "again without the link: 14 states; the goal is still reachable)")
    code, out, _ = run(["attack-tree", str(path), "--goal", GOAL, "--defence", "keep", "--budget", "4",
                        "--json"])
    doc = json.loads(out)
    schema = json.loads((SPEC.parent / "schema" / "attack-tree.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert doc["attributes"]["most_probable_attack"]["value"] == "9/20"
    assert doc["attributes"]["fastest_attack"]["value"] == 2
    assert doc["defence"] == {
        "name": "keep", "removes": "link hop -- ground", "budget": 4, "blocks": False, "conclusive": True,
        "remaining": {"cost": 4, "steps": ["get_grad_round_noisy by sat2 at orbit2",
                                           "eavesdrop by eve at relay [report of sat2]"]},
        "links": ["hop -- ground"], "states": 14, "goal_reachable": True, "static_links": False}
    code, out, _ = run(["attack-tree", str(path), "--goal", GOAL, "--defence", "reroute"])
    assert out.rstrip().splitlines()[-1] == (
        "defence reroute: removing link relay -- orbit2 blocks every attack of any cost (the model explored "
        "again without the link: 8 states; the goal is no longer reachable)")


def test_the_bundled_link_loss_scenario_without_sat3_s_link(tmp_path: Path) -> None:
    """moniteo_link_loss.fl: without ground_station -- orbit3 sat3's report has no route, so eve never
    copies it; without ground_station -- orbit1 her cheapest attack (cost 3) remains. The defended
    structures have the sizes of the scenario text with the link deleted by hand."""
    text = (SPEC / "moniteo_link_loss.fl").read_text(encoding="utf-8")
    path = tmp_path / "ll.fl"
    path.write_text(text + "defence cut3: remove link ground_station -- orbit3 budget 5\n"
                    "defence cut1: remove link ground_station -- orbit1 budget 5\n", encoding="utf-8")
    code, out, _ = run(["attack-tree", str(path), "--goal", "seen_sat3", "--json", "--defence", "cut3"])
    cut3 = json.loads(out)["defence"]
    assert code == 0 and cut3["blocks"] and not cut3["goal_reachable"]
    hand = text.replace("contact ground_station -- orbit3 in steps 1..2\n", "").replace(
        "loss ground_station -- orbit3 1/10 retries 1\n", "")
    assert hand != text
    # no contact, loss or failure statement is left: the reference keeps the routing semantics by its flag
    reference = explore(build_system(replace(parse_scenario(hand, "hand.fl", check=False), routed=True)))
    assert cut3["states"] == reference.num_states
    code, out, _ = run(["attack-tree", str(path), "--goal", "seen_sat3", "--json", "--defence", "cut1"])
    cut1 = json.loads(out)["defence"]
    assert not cut1["blocks"] and cut1["remaining"]["cost"] == 3
    hand1 = text.replace("links ground_station -- orbit1, ground_station -- orbit2",
                         "links ground_station -- orbit2")
    assert cut1["states"] == explore(build_system(parse_scenario(hand1, "hand1.fl", check=False))).num_states


def test_a_link_defence_on_static_links_says_no_rule_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "m.fl"
    path.write_text((SPEC / "moniteo.fl").read_text(encoding="utf-8")
                    + "defence cut3: remove link ground_station -- orbit3\n", encoding="utf-8")
    code, out, _ = run(["attack-tree", str(path), "--goal", "ready_sat3", "--defence", "cut3",
                        "--max-depth", "1"])
    assert code == 1  # with --defence the exit code is the defence's: an attack remains
    assert out.rstrip().endswith("note: the scenario's links are static (no contact, loss, failure or "
                                 "partial aggregation), no rule reads them, so removing one changes no step")


@pytest.mark.slow
def test_walker12_relay_without_the_insider_s_link() -> None:
    """walker12_relay.fl: without orbit0 -- orbit8, sat8's report takes orbit8 -> orbit5 -> orbit2 ->
    orbit10 -> orbit7 -> ground and never crosses the insider sat0 (the scenario's comment): every copy is
    blocked; without orbit2 -- orbit5 (off sat8's route) the copy remains. Each defended structure equals
    the scenario text with the contact line deleted by hand, explored."""
    text = (SPEC / "walker12_relay.fl").read_text(encoding="utf-8")
    scenario = parse_scenario(text + "attack_step eavesdrop by sat0 cost 2\n"
                              "defence relay: remove link orbit0 -- orbit8 budget 10\n"
                              "defence other: remove link orbit2 -- orbit5\n", "w.fl")
    kripke = explore(build_system(scenario))
    for name, line, blocks in (("relay", "contact orbit[0] -- orbit[8] in rounds 1;\n", True),
                               ("other", "contact orbit[2] -- orbit[5] in rounds 1;\n", False)):
        verdict = judge_defence(scenario, name, kripke, lambda k: goal_of(k, "seen_sat8"),
                                step_table(scenario))
        assert verdict.cut.blocks is blocks and verdict.goal_reachable is not blocks
        assert line in text
        reference = explore(build_system(parse_scenario(text.replace(line, ""), "hand.fl", check=False)))
        assert verdict.states == reference.num_states
        assert bool(goal_of(reference, "seen_sat8").any()) == (not blocks)
        if not blocks:
            assert verdict.cut.remaining is not None and verdict.cut.remaining.value == 2


def test_an_incomplete_exploration_proves_nothing() -> None:
    scenario = with_defence(("relay -- orbit2",))
    kripke = explore(build_system(scenario))
    verdict = judge_defence(scenario, "d", kripke, goal_of, step_table(scenario), limits=Limits(max_states=3))
    assert not verdict.cut.conclusive and not verdict.cut.blocks and verdict.states <= 3
    assert verdict.text().endswith("the exploration is incomplete, so nothing is proved (the model explored "
                                   f"again without the link: {verdict.states} states; the goal is not "
                                   "reached in the explored states)")
