"""Attack-step attributes and defences declared in a scenario: the ``attack_step`` and ``defence``
statements (parsed, refused at their position), ``flcheck attack-tree``'s text, JSON and ADTool output
under them, and a cross-check of the tree's optimum against brute-force enumeration of the attack paths
of small generated scenarios."""

from __future__ import annotations

import contextlib
import io
import json
import math
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.app.step_attributes import defence_of, step_table, summarise
from checker.attack_trees.adtool import read_adtool
from checker.attack_trees.attributes import evaluate
from checker.attack_trees.defences import cheapest_attack
from checker.attack_trees.generation import AttackFound, generate_attack_tree
from checker.cli.main import main
from checker.errors import InputError
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_parse import parse_formula
from checker.mc.explore import explore
from checker.mc.kripke import Kripke
from flmodel.errors import ModelError
from flmodel.scenario import load_scenario, parse_scenario
from flmodel.scenario_build import build_system
from tests.strategies import star_scenario_text

SPEC = Path(__file__).resolve().parents[2] / "spec" / "scenarios"


def quorum_scenario(clients: int = 2, quorum: int | None = None, extra: str = "") -> str:
    """``clients`` satellites around a ground station; ``aggregate quorum K`` lets the server
    aggregate once K reported, so attacks on ``round = 1`` differ in length and in who reports."""
    text = star_scenario_text(range(1, clients + 1), name="attributes", hub="a", site="b", server="s",
                              client="c", datum="p", quorum=quorum)
    return f"{text}{extra}\n"


STEPS = ("attack_step get_grad_round by c1 cost 5 probability 1/2 time 2\n"
         "attack_step get_grad_round cost 1;\n"
         "defence revoke: remove get_grad_round by c1\n")


def refused(text: str) -> list[tuple[int | None, int | None, str]]:
    with pytest.raises(ModelError) as info:
        parse_scenario(text, "s.fl")
    return [(d.line, d.column, d.message) for d in info.value.diagnostics]


# ================================================================ parsing and refusals
def test_the_statements_parse_to_plain_data_and_print_back() -> None:
    s = parse_scenario(quorum_scenario(extra=STEPS), "s.fl")
    assert s.step_attributes() == {
        ("get_grad_round", "c1"): {"cost": 5, "probability": Fraction(1, 2), "time": 2},
        ("get_grad_round", None): {"cost": 1}}
    d = s.defence("revoke")
    assert (d.rule, d.actor, d.location) == ("get_grad_round", "c1", None)
    again = parse_scenario(s.to_text(), "again.fl")
    assert again == s and again.step_attributes() == s.step_attributes()
    assert "attack_step get_grad_round by c1 cost 5 probability 1/2 time 2" in s.to_text()


def test_families_and_expressions_write_one_statement_per_member() -> None:
    """``attack_step … for i in 1..N`` and ``defence … for i in 1..N`` equal the statements written by
    hand; values and budgets are expressions over constants and the family index."""
    family = quorum_scenario(clients=3, extra=(
        "attack_step get_grad_round by c[i] cost 2 * i - 1 probability 1/(i + 1) time i / 2 for i in 1..3\n"
        "defence revoke[i]: remove get_grad_round by c[i] budget i + 1/2 for i in 1..3\n"
        "defence cut: remove link a -- b1, a -- b2 budget 7"))
    by_hand = quorum_scenario(clients=3, extra="\n".join(
        [f"attack_step get_grad_round by c{i} cost {2 * i - 1} probability 1/{i + 1} time {i}/2"
         for i in (1, 2, 3)]
        + [f"defence revoke{i}: remove get_grad_round by c{i} budget {2 * i + 1}/2" for i in (1, 2, 3)]
        + ["defence cut: remove link a -- b1, a -- b2 budget 7"]))
    s, hand = parse_scenario(family, "f.fl"), parse_scenario(by_hand, "h.fl")
    assert s.steps == hand.steps and s.defences == hand.defences
    assert s.step_attributes()[("get_grad_round", "c3")] == {"cost": 5, "probability": Fraction(1, 4),
                                                             "time": Fraction(3, 2)}
    assert s.defence("revoke2").budget == Fraction(5, 2)
    cut = s.defence("cut")
    assert [lk.text() for lk in cut.links] == ["a -- b1", "a -- b2"] and cut.budget == 7
    assert "defence cut: remove link a -- b1, a -- b2 budget 7" in s.to_text()
    assert parse_scenario(s.to_text(), "again.fl") == s


def test_a_bound_may_be_a_constant() -> None:
    text = quorum_scenario().replace("bounds rounds 1", "bounds rounds R")
    assert text != quorum_scenario()
    text = text.replace('scenario "attributes"', 'scenario "attributes"\nconst R = 1;')
    assert parse_scenario(text, "r.fl", defines={"R": 2}).bound("rounds") == 2
    assert parse_scenario(text, "r.fl").bound("rounds") == 1
    (where,) = refused(text.replace("bounds rounds R", "bounds rounds R / 2"))
    assert where[2] == "bounds rounds must be a non-negative integer, got 1/2"


LINE = quorum_scenario().count("\n")  # the line of the first statement of ``extra``


@pytest.mark.parametrize(("extra", "column", "message"), [
    ("attack_step get_grad by c1 cost 1", 13,
     "unknown rule 'get_grad' in attack_step (did you mean 'get_grad_round'?); expected a rule of this "
     "system: put_part_once, get_grad_round, eval_round"),
    ("attack_step get_grad_round by moon cost 1", 31,
     "attack_step names unknown actor 'moon'; expected an actor, known: c1, c2, s"),
    ("attack_step get_grad_round by c1 cost -1", 39,
     "cost -1 of attack_step get_grad_round by c1 is negative; expected a number >= 0"),
    ("attack_step get_grad_round time -1/2", 33,
     "time -1/2 of attack_step get_grad_round (every actor) is negative; expected a number >= 0"),
    ("attack_step eval_round probability 3/2", 36,
     "probability 3/2 of attack_step eval_round (every actor) is more than 1; expected a probability in "
     "[0, 1]"),
    ("attack_step eval_round cost 1 cost 2", 31,
     "cost given twice in one attack_step statement; the first is at s.fl:{line}:29"),
    ("attack_step eval_round cost 1/0", 31, "division by zero"),
    ("defence d: remove", 9,
     "defence 'd' removes nothing; expected 'remove RULE', 'remove by ACTOR', 'remove at LOCATION' or "
     "'remove link A -- B'"),
    ("defence d: remove eval by s", 19,
     "defence 'd' removes unknown rule 'eval'; expected a rule of this system: put_part_once, "
     "get_grad_round, eval_round"),
    ("defence d: remove at moon", 22, "unknown location 'moon' in defence 'd'; known: a, b1, b2"),
    ("defence d: remove by eve", 22,
     "defence 'd' names unknown actor 'eve'; expected an actor, known: c1, c2, s"),
])
def test_misuse_is_refused_at_its_position(extra: str, column: int, message: str) -> None:
    assert refused(quorum_scenario(extra=extra)) == [(LINE, column, message.format(line=LINE))]


def test_duplicates_name_the_first_declaration() -> None:
    text = quorum_scenario(extra="attack_step eval_round cost 1\nattack_step eval_round time 2\n"
                                 "defence d: remove eval_round\ndefence d: remove at a")
    assert refused(text) == [
        (LINE + 1, 13, f"second attack_step for eval_round (every actor); the first is at s.fl:{LINE}:13 "
                       "(declare every attribute in one statement)"),
        (LINE + 3, 9, f"defence 'd' declared twice; the first is at s.fl:{LINE + 2}:9")]


def test_a_statement_without_attribute_is_a_syntax_error_naming_them() -> None:
    (where,) = refused(quorum_scenario(extra="attack_step eval_round\n"))
    assert where[2] == "unexpected end of file; expected 'by', cost, probability or time"


def test_an_unknown_defence_is_an_input_error_listing_the_declared_ones() -> None:
    s = parse_scenario(quorum_scenario(extra=STEPS), "s.fl")
    with pytest.raises(InputError, match=r"unknown defence 'nope'.*\(revoke\)"):
        defence_of(s, "nope")


def test_the_bundled_link_loss_scenario_declares_eve_s_costs() -> None:
    s = load_scenario(SPEC / "moniteo_link_loss.fl")
    assert s.step_attributes()[("eavesdrop", "eve")] == {"cost": 3, "probability": Fraction(1, 2), "time": 1}
    assert {d.name for d in s.defences} == {"revoke_sat3", "no_tap", "cut_link"}
    assert [lk.text() for lk in s.defence("cut_link").links] == ["ground_station -- orbit3"]
    assert s.defence("cut_link").budget == 5


# ================================================================ the command
def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.fl"
    path.write_text(quorum_scenario(extra=STEPS), encoding="utf-8")
    return path


def test_attack_tree_text_shows_the_optimum_front_and_undeclared_steps(scenario_file: Path) -> None:
    # round = 1 needs both reports then eval_round: cost 5 + 1 + 0, probability 1/2, time 2 + 0 + 0
    code, out, _ = run(["attack-tree", str(scenario_file), "--goal", "round = 1"])
    assert code == 0
    assert "  min cost 6 in the tree: " in out
    assert "  max probability of success 1/2 in the tree: " in out
    assert "  min time 2 in the tree: " in out
    assert "  cheapest attack over every path of the model: cost 6: " in out
    assert "    6, 1/2, 2: " in out
    assert ("undeclared (neutral: cost 0, probability 1, time 0): eval_round by s (cost, probability, time); "
            "get_grad_round by c2 (probability, time)") in out


def test_attack_tree_json_adds_attributes_and_defence(scenario_file: Path) -> None:
    code, out, _ = run(["attack-tree", str(scenario_file), "--goal", "round = 1", "--json",
                        "--defence", "revoke", "--budget", "5/2"])
    assert code == 0
    doc = json.loads(out)
    attrs = doc["attributes"]
    assert (attrs["min_cost"]["value"], attrs["max_probability"]["value"], attrs["min_time"]["value"]) == (
        6, "1/2", 2)
    assert [(p["cost"], p["probability"], p["time"]) for p in attrs["pareto_front"]] == [(6, "1/2", 2)]
    assert attrs["cheapest_attack"]["value"] == 6 and attrs["cheapest_attack"]["conclusive"] is True
    assert len(attrs["min_cost"]["steps"]) == 3
    assert doc["defence"] == {"name": "revoke", "removes": "transitions of rule get_grad_round by c1",
                              "budget": "5/2", "blocks": True, "conclusive": True, "remaining": None,
                              "links": [], "states": doc["defence"]["states"], "goal_reachable": False,
                              "static_links": False}
    for key in ("attack_exists", "tree", "valid"):  # the keys of a tree without attributes stay
        assert key in doc


def test_a_defence_that_leaves_an_attack_names_it(tmp_path: Path) -> None:
    # with a quorum of 1, revoking c1 leaves c2's report then the aggregation, at cost 1
    path = tmp_path / "q.fl"
    path.write_text(quorum_scenario(quorum=1, extra=STEPS), encoding="utf-8")
    code, out, _ = run(["attack-tree", str(path), "--goal", "round = 1", "--defence", "revoke"])
    assert code == 1  # with --defence the exit code is the defence's: an attack remains
    assert out.rstrip().splitlines()[-1] == (
        "defence revoke: removing transitions of rule get_grad_round by c1 does not block every attack of "
        "any cost: get_grad_round by c2 at b2; eval_quorum by s at a [reporters=c2] (cost 1) remains")
    code, out, _ = run(["attack-tree", str(path), "--goal", "round = 1", "--defence", "revoke",
                        "--budget", "1/2"])
    assert code == 0  # it blocks every attack within the budget
    assert out.rstrip().splitlines()[-1] == (
        "defence revoke: removing transitions of rule get_grad_round by c1 blocks every attack of cost "
        "<= 1/2")


@pytest.mark.parametrize(("args", "message"), [
    (["--defence", "nope"], "unknown defence 'nope'"),
    (["--budget", "3"], "--budget needs --defence"),
    (["--defence", "revoke", "--budget", "-1"], "'-1' is not a cost >= 0"),
])
def test_bad_defence_options_exit_2(scenario_file: Path, args: list[str], message: str) -> None:
    code, _, err = run(["attack-tree", str(scenario_file), "--goal", "round = 1", *args])
    assert code == 2 and message in err


def test_adtool_export_round_trips_the_declared_values(tmp_path: Path) -> None:
    steps = ("attack_step get_grad_round by c1 cost 5/2 probability 1/3 time 2\n"
             "attack_step get_grad_round cost 1 probability 9/10\n"
             "attack_step eval_quorum by s time 1/7\n")
    path = tmp_path / "q.fl"
    path.write_text(quorum_scenario(quorum=1, extra=steps), encoding="utf-8")
    code, out, _ = run(["attack-tree", str(path), "--goal", "round = 1", "--format", "adtool"])
    assert code == 0
    doc = read_adtool(out)
    assert sorted(doc.domains) == ["MinCost1", "MinTimeSeq3", "ProbSucc2"]
    declared = {("get_grad_round", "c1"): (Fraction(5, 2), Fraction(1, 3), Fraction(2)),
                ("get_grad_round", "c2"): (Fraction(1), Fraction(9, 10), Fraction(0)),
                ("eval_quorum", "s"): (Fraction(0), Fraction(1), Fraction(1, 7))}
    leaves = [n for n in doc.root.walk() if not n.children]
    assert leaves
    for leaf in leaves:
        rule, _by, actor = leaf.label.split(":")[0].split(" ")[:3]
        assert (leaf.basic["MinCost1"], leaf.basic["ProbSucc2"], leaf.basic["MinTimeSeq3"]) == \
            declared[(rule, actor)]
    # ADTool's MinCost and MinTimeSeq are flcheck's domains: the root's derived values are the optimum
    scenario = parse_scenario(path.read_text(encoding="utf-8"), str(path))
    kripke, goal = structure(scenario, "round = 1")
    found = generate_attack_tree(kripke, goal, minimal_only=True)
    assert isinstance(found, AttackFound)
    table = step_table(scenario)
    assert table is not None
    best = evaluate(found.tree, table)
    assert doc.root.derived["MinCost1"] == best.cost.value
    assert doc.root.derived["MinTimeSeq3"] == best.time.value


# ================================================================ brute force
def structure(scenario: object, goal_text: str) -> tuple[Kripke, np.ndarray]:
    kripke = explore(build_system(scenario))  # type: ignore[arg-type]
    goal = ModelChecker(kripke).sat(parse_formula(goal_text))
    return kripke, goal


def attack_paths(kripke: Kripke, goal: np.ndarray) -> list[list[int]]:
    """Every simple path (as edge ids) from an initial state that hits the goal first at its end."""
    out: list[list[int]] = []

    def walk(state: int, seen: set[int], edges: list[int]) -> None:
        if goal[state]:
            out.append(list(edges))
            return
        for e in range(int(kripke.succ_ptr[state]), int(kripke.succ_ptr[state + 1])):
            target = int(kripke.succ_idx[e])
            if target not in seen:
                walk(target, seen | {target}, [*edges, e])

    for s in np.flatnonzero(kripke.initial_mask()).tolist():
        walk(int(s), {int(s)}, [])
    return out


def lookup(table: Mapping[tuple[str, str | None], Mapping[str, Fraction]], rule: str, actor: str | None,
           name: str) -> Fraction:
    neutral = {"cost": Fraction(0), "probability": Fraction(1), "time": Fraction(0)}
    for key in ((rule, actor), (rule, None)):
        if name in table.get(key, {}):
            return Fraction(table[key][name])
    return neutral[name]


VALUES = st.fractions(min_value=0, max_value=10, max_denominator=4)
PROBABILITIES = st.fractions(min_value=0, max_value=1, max_denominator=6)


@st.composite
def generated(draw: st.DrawFn) -> tuple[str, str]:
    """A small quorum scenario with random attributes (some per actor, some rule defaults, some
    missing) and one of its goals."""
    n = draw(st.integers(1, 3))
    quorum = draw(st.integers(1, n))
    lines = []
    for rule, actors in (("get_grad_round", [f"c{i}" for i in range(1, n + 1)]), ("eval_quorum", ["s"])):
        for actor in [None, *actors]:
            chosen = draw(st.sets(st.sampled_from(["cost", "probability", "time"])))
            if not chosen:
                continue
            parts = [f"{name} {draw(PROBABILITIES if name == 'probability' else VALUES)}"
                     for name in ("cost", "probability", "time") if name in chosen]
            by = f" by {actor}" if actor is not None else ""
            lines.append(f"attack_step {rule}{by} " + " ".join(parts))
    goal = draw(st.sampled_from(["round = 1", f'"c{n}" in ready | round = 1']))
    return quorum_scenario(n, quorum, "\n".join(lines)), goal


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated())
def test_optimum_agrees_with_brute_force_over_attack_paths(case: tuple[str, str]) -> None:
    text, goal_text = case
    scenario = parse_scenario(text, "gen.fl")
    kripke, goal = structure(scenario, goal_text)
    plain = scenario.step_attributes()
    paths = attack_paths(kripke, goal)
    assert paths

    def total(path: list[int], name: str) -> Fraction:
        values = [lookup(plain, kripke.actions[int(kripke.edge_action[e])].rule,
                         kripke.actions[int(kripke.edge_action[e])].actor, name) for e in path]
        if name == "probability":
            return math.prod(values, start=Fraction(1))
        return sum(values, Fraction(0))

    found = generate_attack_tree(kripke, goal, distinguish="paths", max_depth=kripke.num_states - 1,
                                 max_attacks=10_000, minimal_only=False)
    assert isinstance(found, AttackFound) and not found.truncated
    table = step_table(scenario)
    if table is None:  # nothing declared: every attack is free and certain
        assert all(total(p, "cost") == 0 and total(p, "probability") == 1 for p in paths)
        return
    best = evaluate(found.tree, table)
    assert best.cost.value == min(total(p, "cost") for p in paths)
    assert best.probability.value == max(total(p, "probability") for p in paths)
    assert best.time.value == min(total(p, "time") for p in paths)
    cheapest, conclusive = cheapest_attack(kripke, goal, table)
    assert conclusive and cheapest is not None and cheapest.value == best.cost.value
    summary = summarise(found.tree, table, kripke, goal)
    assert summary.most_probable is not None and summary.most_probable.value == best.probability.value
    assert summary.fastest is not None and summary.fastest.value == best.time.value
    front = {(p.cost, p.probability, p.time) for p in summary.front}
    vectors = {(total(p, "cost"), total(p, "probability"), total(p, "time")) for p in paths}
    dominated = {v for v in vectors if any(w != v and w[0] <= v[0] and w[1] >= v[1] and w[2] <= v[2]
                                           for w in vectors)}
    assert front == vectors - dominated


def test_check_shows_the_optimum_of_an_attack_tree_property(tmp_path: Path) -> None:
    from checker.app.check import check_scenario

    text = quorum_scenario(extra=STEPS + "property r: attack_tree exists round = 1\n")
    (result,) = check_scenario(parse_scenario(text, "s.fl")).results
    assert result.value_text == "5 nodes, min cost 6"
    assert result.evidence.endswith("; min cost 6, max probability 1/2, min time 2")
    assert result.details["attributes"]["min_cost"]["value"] == 6
    plain = check_scenario(parse_scenario(quorum_scenario(extra="property r: attack_tree exists round = 1"),
                                          "p.fl")).results[0]
    assert plain.value_text == "5 nodes" and "attributes" not in plain.details


@pytest.mark.slow
def test_the_bundled_link_loss_attack_has_the_documented_figures() -> None:
    """moniteo_link_loss.fl's comment: cost 3, probability 99/200, time 2; every defence blocks it."""
    path = str(SPEC / "moniteo_link_loss.fl")
    for name in ("no_tap", "revoke_sat3", "cut_link"):
        code, out, _ = run(["attack-tree", path, "--goal", "seen_sat3", "--json", "--defence", name])
        doc = json.loads(out)
        attrs = doc["attributes"]
        assert code == 0
        optima = (attrs["min_cost"]["value"], attrs["max_probability"]["value"], attrs["min_time"]["value"])
        assert optima == (3, "99/200", 2)
        assert attrs["most_probable_attack"]["value"] == "99/200" and attrs["cheapest_attack"]["value"] == 3
        assert doc["defence"]["blocks"] is True, name
    assert doc["defence"]["budget"] == 5 and doc["defence"]["links"] == ["ground_station -- orbit3"]
