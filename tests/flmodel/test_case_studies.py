"""The bundled satellite case studies: the Walker shell's contact plan is the orbit generator's
output, attackers are bound to the graph (an observation off every route is an error naming the
attacker and the route), attack trees show the attacker's own step, and the verdicts the scenario
comments explain."""

from __future__ import annotations

import math
import re
from pathlib import Path

import flcheck_spec
import pytest

from checker.app.check import check_file, check_scenario
from checker.app.load import load_model
from checker.app.reductions import Reductions
from checker.cli.main import main
from flmodel.errors import ModelError
from flmodel.network import Network
from flmodel.orbits import Sampling, contact_plan, contact_text
from flmodel.orbits_motion import bundled_orbit_file, load_ground_stations, load_walker_shell
from flmodel.scenario import parse_scenario
from flmodel.scenario_build import build_system

BUNDLED = flcheck_spec.bundled_scenarios()
WALKER = BUNDLED["walker12_relay"]


def _contact_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("contact ")]


@pytest.mark.parametrize("scenario, shell_file", [("walker12_relay", "walker_53_12_3_1.toml"),
                                                   ("walker32_relay", "walker_53_32_4_1.toml")])
def test_walker_contact_plan_is_the_generators_output(scenario: str, shell_file: str) -> None:
    """One round of an hour sampled every 60 s, Toulouse, inter-satellite links up to 3000 km."""
    shell = load_walker_shell(bundled_orbit_file(shell_file))
    stations = [s for s in load_ground_stations(bundled_orbit_file("stations.toml"))
                if s.name == "toulouse"]
    plan = contact_plan(shell, stations, sampling=Sampling(60.0, 3600.0, 1, 1), max_isl_range_km=3000.0)
    text = BUNDLED[scenario].read_text(encoding="utf-8")
    assert _contact_lines(text) == contact_text(plan, "rounds").splitlines()


def test_walker_routes_go_through_the_insider() -> None:
    s = parse_scenario(WALKER.read_text(encoding="utf-8"), str(WALKER))
    assert s.attacker is not None and s.attacker.name == "sat0"
    assert s.networked


def _without(text: str, line: str) -> str:
    assert line in text
    return text.replace(line + "\n", "")


def test_removing_the_relay_link_is_an_error_naming_attacker_and_route(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Observing sat8's report by name when no route of it reaches the insider."""
    text = _without(WALKER.read_text(encoding="utf-8"), "contact orbit[0] -- orbit[8] in rounds 1;")
    text = text.replace("attacker sat0 observes copied", "attacker sat0 observes gradient_sat8").replace(
        "between hot observing copied", "between hot observing gradient_sat8")
    with pytest.raises(ModelError) as info:
        parse_scenario(text, "w.fl")
    d, prop = info.value.diagnostics  # the attacker's statement, and the property observing it
    assert "attacker 'sat0' at 'orbit0' observes gradient_sat8" in d.message
    assert prop.message == d.message and prop.line is not None and prop.line > (d.line or 0)
    assert "orbit8 -> orbit5 -> orbit2 -> orbit10 -> orbit7 -> ground" in d.message
    assert "never reaches 'orbit0'" in d.message
    line = 1 + next(i for i, ln in enumerate(text.splitlines()) if ln.startswith("attacker sat0"))
    assert (d.line, d.column) == (line, len("attacker sat0 observes ") + 1)
    bad = tmp_path / "w.fl"
    bad.write_text(text, encoding="utf-8")
    assert main(["explore", str(bad)]) == 2
    err = capsys.readouterr().err
    assert re.search(rf"{re.escape(str(bad))}:{line}:\d+: .*attacker 'sat0'", err)


HIDDEN = "property hidden: privacy epsilon <= 0 between hot observing copied\n"


def _privacy(text: str, *names: str) -> dict[str, tuple[str, object]]:
    """Verdict and ε* of the named privacy properties of the scenario ``text``."""
    rep = check_scenario(parse_scenario(text, "w.fl"), only=list(names))
    return {r.name: (r.verdict.value, r.details["ratio"]) for r in rep.results}


@pytest.mark.slow
def test_removing_the_relay_link_changes_the_privacy_verdict() -> None:
    """The insider observes what it relays: with the link orbit0 -- orbit8 sat8's report crosses it
    (ε* = ln 2, the ratio 2 of sat8's randomized response); without it the report goes round and the
    insider copies nothing that depends on the secret (ε* = 0): 'hidden' turns from violated to holds."""
    text = WALKER.read_text(encoding="utf-8") + HIDDEN
    assert _privacy(text, "hidden") == {"hidden": ("violated", "2")}
    cut = _without(text, "contact orbit[0] -- orbit[8] in rounds 1;")
    assert _privacy(cut, "hidden") == {"hidden": ("holds", "1")}


@pytest.mark.slow
def test_an_eavesdropper_on_a_link_that_carries_no_secret_learns_nothing() -> None:
    """An eavesdropper tapping orbit1 -- orbit4 of the Walker shell copies the reports routed over it
    (sat1's: orbit1 -> orbit4 -> ground), none of which depends on the secret: ε* = 0. (That a tap
    copies exactly what its link carries is tested on a small relay in tests/flmodel/test_network.py.)"""
    text = WALKER.read_text(encoding="utf-8").replace("attacker sat0 observes copied",
                                                      "attacker eve on orbit[1] -- orbit[4] observes copied")
    text = "".join(ln for ln in text.splitlines(keepends=True) if "observing gradient_sat0" not in ln)
    text += HIDDEN + "property copies: ctl EF seen_sat1 & !seen_sat8;\n"
    rep = check_scenario(parse_scenario(text, "w.fl"), only=["hidden", "copies"])
    res = {r.name: r for r in rep.results}
    assert (res["hidden"].verdict.value, res["hidden"].details["ratio"]) == ("holds", "1")
    assert res["copies"].verdict.value == "holds"


@pytest.mark.parametrize("observed, message", [
    ("gradient_sat1", "never reaches 'orbit3'"),     # sat1's report goes orbit1 -> ground_station
    ("partition_sat1", "never leaves 'orbit1'"),
    ("curmodpar", None),                             # the model is broadcast over ground_station -- orbit3
    ("gradient_sat3", None),                         # sat3's own report starts at orbit3
    ("round", None),                                 # protocol state is not bound to the graph
])
def test_an_insider_observes_only_what_reaches_it(observed: str, message: str | None) -> None:
    text = BUNDLED["moniteo_link_loss"].read_text(encoding="utf-8").replace(
        "attacker eve at ground_station observes curmodpar, gradient_sat3",
        f"attacker sat3 observes {observed}")
    text = "".join(ln for ln in text.splitlines(keepends=True) if "eavesdrop by eve" not in ln)  # eve's steps
    if message is None:
        parse_scenario(text, "m.fl")
        return
    with pytest.raises(ModelError) as info:
        parse_scenario(text, "m.fl")
    assert any(message in d.message and "attacker 'sat3'" in d.message for d in info.value.diagnostics)


def test_static_scenarios_bind_observations_too() -> None:
    """Also without a time-varying topology: in moniteo.fl an attacker at orbit1 cannot see sat2's
    report (orbit2 -> ground_station), the one at the ground station can."""
    text = BUNDLED["moniteo"].read_text(encoding="utf-8")
    parse_scenario(text.replace("observes curmodpar", "observes gradient_sat2"), "m.fl")
    with pytest.raises(ModelError, match="never reaches 'orbit1'"):
        parse_scenario(text.replace("attacker eve at ground_station observes curmodpar",
                                    "attacker eve at orbit1 observes gradient_sat2"), "m.fl")


@pytest.mark.slow
def test_link_loss_attack_tree_contains_the_attackers_step(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["attack-tree", "moniteo_link_loss", "--goal", "seen_sat3"]) == 0
    out = capsys.readouterr().out
    steps = [line.strip() for line in out.splitlines() if re.match(r"\s*\d+\. ", line)]
    assert steps[0].startswith("1. - get_grad_round_noisy by sat3 at orbit3")
    assert steps[1].startswith("2. - eavesdrop by eve at ground_station [report of sat3]")


@pytest.mark.slow
def test_walker_case_study_verdicts() -> None:
    rep = check_file(WALKER)
    res = {r.name: r for r in rep.results}
    assert {n: r.verdict.value for n, r in res.items()} == {
        "round_can_complete": "holds", "round_almost_surely": "holds",
        "copies_only_after_report": "holds", "insider_copies_report": "holds", "relay_view": "holds",
        "clean_link": "holds"}
    assert res["relay_view"].details["ratio"] == "2"   # sat8's randomized response, r = 1/2
    assert res["clean_link"].value == 0                # sat0's own report carries no secret
    assert rep.kripke.num_states == 18429


def test_the_insider_copies_only_the_reports_routed_through_it() -> None:
    """Of the 12 reports the insider could be declared to copy, only sat8's (relayed by orbit0) and
    sat0's own ever cross orbit0 (in the one configuration of the shell's contact plan); the others are
    not marked, and their seen_c observables stay known (and false)."""
    system = build_system(parse_scenario(WALKER.read_text(encoding="utf-8"), str(WALKER)))
    assert system.network is not None and system.network.tapped == {"sat0", "sat8"}
    assert "seen_sat3" in system.observable_names() and system.variable_reads("seen_sat3") == frozenset()


@pytest.mark.slow
def test_copying_only_what_crosses_is_exact() -> None:
    """Marking every report as copyable (each then waits for a crossing that never comes) decides the
    insider's view as marking only those that cross: the same ε*, outcomes and probabilities."""
    s = parse_scenario(WALKER.read_text(encoding="utf-8"), str(WALKER))
    narrow = check_scenario(s, only=["relay_view"], reductions=Reductions.none())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Network, "may_cross", lambda self, gra, sources, target, limit=0: frozenset(sources))
        assert build_system(s).network.tapped == frozenset(s.client_names)  # type: ignore[union-attr]
        wide = check_scenario(s, only=["relay_view"], reductions=Reductions.none())
    assert [(r.verdict, r.value, r.details["ratio"]) for r in narrow.results] == \
        [(r.verdict, r.value, r.details["ratio"]) for r in wide.results]
    assert narrow.artefacts["privacy"]["relay_view"][:4] == wide.artefacts["privacy"]["relay_view"][:4]


WALKER32 = BUNDLED["walker32_relay"]


def _walker32_classes() -> list[int]:
    """The sizes of walker32_relay's symmetry classes: satellites other than sat11 and sat17, by
    their datum (i mod 3)."""
    return [sum(1 for i in range(32) if i % 3 == k and i not in (11, 17)) for k in range(3)]


@pytest.mark.slow
def test_walker32_case_study_verdicts() -> None:
    """The 32-satellite shell: every verdict the scenario's comments explain, on the structure of
    Π_k (n_k + 1)·8 + 1 states (who of each class reported; sat11 and sat17 each unreported, reported
    with the copy due, or copied, never both due at once; and the aggregated state)."""
    rep = check_file(WALKER32)
    res = {r.name: r for r in rep.results}
    assert {n: r.verdict.value for n, r in res.items()} == {
        "round_can_complete": "holds", "round_almost_surely": "holds", "copies_only_after_report": "holds",
        "insider_copies_report": "holds", "relay_view": "holds", "clean_link": "holds"}
    tree = res["insider_copies_report"].details
    assert (tree["ways"], tree["shortest"], tree["ways_replayed"]) == (1, 2, 1)
    assert res["relay_view"].details["ratio"] == "2"   # sat11's randomized response, r = 1/2
    assert res["clean_link"].value == 0                # sat17's own report carries no secret
    sizes = sorted(len(c) for c in rep.reductions.details["symmetry"]["classes"])
    assert sizes == sorted(_walker32_classes())
    assert rep.kripke.num_states == math.prod(n + 1 for n in sizes) * 8 + 1
    # the attack tree's ways are paths of the structure: the orbit quotient, not the counters
    assert rep.reductions.names == ["dead_values", "cone", "symmetry"]
    assert "attack tree" in rep.reductions.details["counter"]["reason"]


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_family_swarm_state_count_is_the_closed_form(n: int) -> None:
    """V = 3 report values, the last satellite's report may be lost: (V+1)^(N-1)·(V+2) + V^N."""
    kripke = load_model(BUNDLED["walker_family"], defines={"N": n})
    assert kripke.num_states == 4 ** (n - 1) * 5 + 3 ** n


def test_family_swarm_verdicts() -> None:
    rep = check_file(BUNDLED["walker_family"])
    res = {r.name: r for r in rep.results}
    assert {n: r.verdict.value for n, r in res.items()} == {
        "round_can_complete_unless_lost": "holds", "completes": "holds", "ni_fl_dp": "holds"}
    assert res["completes"].details["probability"] == "99/100"
    # the properties read the round and the lost reports: the cone forgets the model and the reports'
    # values; sat1 and sat3 (equal anomalies, equal links) are interchangeable: 401 states, 19 explored
    # (3 kinds of sat1/sat3 pairs by how many reported, times sat2, times sat4 unreported, reported or
    # lost, and the aggregated state)
    assert rep.reductions.names == ["dead_values", "cone", "symmetry", "counter"]
    assert rep.kripke.num_states == 19
    # the privacy pair: the reports commute (one action per state), on orbit representatives
    (pair,) = rep.reductions.explorations
    applied = pair["D0"]["reductions"]
    assert applied["partial_order"]["applied"] and applied["symmetry"]["applied"]
