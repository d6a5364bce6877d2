"""``attack_tree reduced``: attack trees built on the structure the symmetry and the cone of influence
reduce (:mod:`checker.app.reductions`). The verdict equals the unreduced tree's on generated network
scenarios (``EF goal`` is kept by both reductions), every way of a reduced tree replays as a path of the
model, and an attack tree without ``reduced`` still keeps the structure whole."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.app.check import check_scenario
from checker.app.load import resolve_scenario_path
from checker.mc.explore import Limits
from flmodel.scenario import load_scenario, parse_scenario
from flmodel.scenario_build import build_system
from tests.checker.test_symmetry import network_scenarios, relay_scenarios

LIMITS = Limits(max_states=200_000, max_seconds=600)
GOALS = ["round = 1", "round = 2", "!(lost == {})", "ready_sat1 & !ready_sat2 & round = 0",
         "lost_sat1", "!(copied == {})", "seen_sat1"]


def _trees(text: str) -> dict[str, Any]:
    """Verdict and figures of every attack-tree property of ``text``."""
    rep = check_scenario(parse_scenario(text, "<generated>"), limits=LIMITS)
    assert rep.kripke.complete
    return {r.name: (str(r.verdict), r.details) for r in rep.results if r.kind == "attack_tree"}


@st.composite
def scenarios_with_trees(draw: st.DrawFn) -> str:
    text = draw(st.one_of(network_scenarios(), relay_scenarios()))
    known = parse_scenario(text, "<generated>")
    names = set(build_system(known).observable_names())
    goals = [g for g in GOALS if set(re.findall(r"[a-z_][a-z0-9_]*", g)) <= names]
    chosen = draw(st.lists(st.sampled_from(goals), min_size=1, max_size=3, unique=True))
    lines = [f"property tree{i}: attack_tree reduced {draw(st.sampled_from(['exists', 'absent']))} {g};"
             for i, g in enumerate(chosen)]
    return text + "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios_with_trees())
def test_reduced_trees_decide_as_the_whole_structure(text: str) -> None:
    """The same verdict with and without ``reduced`` (the other properties of the scenario decide whether
    the symmetry or the cone apply at all), and every way of a reduced tree replays on the model."""
    reduced = _trees(text)
    whole = _trees(text.replace("attack_tree reduced ", "attack_tree "))
    assert {n: v for n, (v, _) in reduced.items()} == {n: v for n, (v, _) in whole.items()}
    for _, details in reduced.values():
        if "reduced_by" in details and "ways" in details:  # a tree of the reduced structure
            assert details["ways_replayed"] == details["ways"] >= 1
    assert all("reduced_by" not in details for _, details in whole.values())


def test_walker12_relay_reduced_tree() -> None:
    """The 12-satellite shell's insider tree on 641 states instead of 18,429: the same tree (sat8
    reports, sat0 copies: one way of two steps), replayed on the model."""
    path = resolve_scenario_path("walker12_relay")
    s = load_scenario(path)
    s = dataclasses.replace(s, properties=tuple(p for p in s.properties if p.kind != "privacy"))
    whole = check_scenario(s, limits=LIMITS)
    tree = next(p for p in s.properties if p.kind == "attack_tree")
    s = dataclasses.replace(s, properties=tuple(dataclasses.replace(p, reduced=True) if p is tree else p
                                                for p in s.properties))
    assert "attack_tree reduced exists seen_sat8" in s.to_text()
    reduced = check_scenario(s, limits=LIMITS)
    assert (whole.kripke.num_states, reduced.kripke.num_states) == (18429, 641)
    assert whole.reductions.names == ["dead_values"]
    assert reduced.reductions.names == ["dead_values", "cone", "symmetry"]
    w = next(r for r in whole.results if r.name == tree.name)
    r = next(r for r in reduced.results if r.name == tree.name)
    assert (w.verdict, w.value_text) == (r.verdict, r.value_text)
    keys = ("ways", "shortest", "tree_size")
    assert {k: w.details[k] for k in keys} == {k: r.details[k] for k in keys} == \
        {"ways": 1, "shortest": 2, "tree_size": 4}
    assert r.details["reduced_by"] == ["cone", "symmetry"] and r.details["ways_replayed"] == 1


def test_the_keyword_parses_and_prints() -> None:
    text = resolve_scenario_path("walker32_relay").read_text(encoding="utf-8")
    s = parse_scenario(text, "w.fl")
    tree = next(p for p in s.properties if p.kind == "attack_tree")
    assert tree.reduced and tree.expect == "exists" and tree.formula is not None
    assert parse_scenario(s.to_text(), "again.fl") == s
