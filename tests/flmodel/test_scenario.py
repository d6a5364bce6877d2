"""The scenario language: bundled files parse and round-trip, errors carry positions and are reported
all at once, the built system agrees with the reference instances of ``flmodel.examples``."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import flcheck_spec
import pytest

from flmodel.data import point
from flmodel.errors import ModelError
from flmodel.scenario import load_scenario, parse_scenario
from flmodel.scenario_build import (
    build_fl_system,
    build_system,
    neighbour_dataset,
    neighbour_system,
    universe,
)

BUNDLED = flcheck_spec.bundled_scenarios()

GOOD = """scenario "tiny"
locations g, o1, o2
links g -- o1, g -> o2
server s at g
clients c1 at o1, c2 at o2
policy at g: s may put_part, eval_server
policy at o1: c1 may get_grad
policy at o2: any may get_grad anywhere
data p = (1) -> 2
data q = (0.5) -> -1/3 secret
data r = (2) -> 1 observed by c2
dataset p, q
partition c1: {p}, c2: {q}
model squared rate 0.25 initial (0, 0)
noise additive {-1: 1/4, 0: 1/2, 1: 1/4}
protocol fedavg_rounds traces drop
bounds rounds 1, events 9
neighbour n1: replace q with r
neighbour n2: remove q
attacker eve at o1 observes curmodpar
property a: ctl AG (round < 1 -> EF round = 1);
property b: attack_tree exists ready_c1;
property c: privacy epsilon <= ln(3) between n1 observing curmodpar
property d: advantage <= 1/2 between n2
property e: advantage <= tight(1/2) between n1
property f: probability max >= 0.5 reach round = 1;
property g: crossval between n1 trials = 100 seed = 3
property h: attack mia epsilons = "inf" rounds = 2
"""


def test_all_four_scenarios_are_bundled() -> None:
    assert {"moniteo", "moniteo_link_loss", "moniteo_swarm8", "seed_model"} <= set(BUNDLED)


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_scenarios_parse_and_round_trip(name: str) -> None:
    s = load_scenario(BUNDLED[name])
    again = parse_scenario(s.to_text(), "<printed>")
    assert again == s
    assert again.to_text() == s.to_text()
    assert s.properties, "every bundled scenario names properties"


def test_exact_numbers_and_fields() -> None:
    s = parse_scenario(GOOD, "good.fl")
    assert s.model is not None and s.model.rate == Fraction(1, 4)
    (q,) = [d for d in s.data if d.name == "q"]
    assert q.features == (Fraction(1, 2),) and q.target == Fraction(-1, 3) and q.secret
    assert s.policies[2].actors is None and s.policies[2].anywhere
    assert s.links[1].directed and not s.links[0].directed
    assert s.property("f").bound == Fraction(1, 2) and s.property("f").scheduler == "max"
    assert s.property("c").eps is not None and s.property("c").eps.log
    f = s.property("a").formula
    assert f is not None and f.text == "AG (round < 1 -> EF round = 1)"
    assert (f.pos.line, f.pos.column) == (21, 17)
    assert s.property("g").options[0].value == Fraction(100)
    assert parse_scenario(s.to_text()) == s


def test_built_system_components() -> None:
    s = parse_scenario(GOOD, "good.fl")
    ts = build_system(s)
    (s0,) = ts.initial_states()
    g = s0.infra.igra
    assert g.server == "s" and g.clients == frozenset({"c1", "c2"})
    assert ("g", "o1") in g.gra.edges and ("o1", "g") in g.gra.edges
    assert ("g", "o2") in g.gra.edges and ("o2", "g") not in g.gra.edges
    assert g.aloc["eve"] == "o1"  # the eavesdropper becomes an actor at its location
    assert g.part("c1") == frozenset({point("p", 1, 2)})
    assert g.curmodpar == (0, 0) and g.gradient["c2"] == (0, 0)
    assert ts.observe(s0, "secret_in_dataset") is True
    assert ts.observe(s0, "holds_q") == "c2"
    assert ts.observe(s0, "ready_c1") is False
    d1 = neighbour_dataset(s, "n1")
    assert point("r", 2, 1) in d1 and point("q", "1/2", "-1/3") not in d1
    (t0,) = neighbour_system(s, "n1").initial_states()
    assert t0.infra.igra.part("c2") == frozenset({point("r", 2, 1)})  # the replacement stays on c2
    # additive noise: one get_grad step splits into 3 x 3 outcomes (2 coordinates) summing to 1
    steps = [st for st in ts.successors(s0) if st[0].actor == "c1"]
    assert len(steps) == 9 and sum(p for _, _, p in steps) == 1


def test_seed_model_scenario_equals_reference_instance() -> None:
    """seed_model.fl and ``flmodel.examples.seed_model()`` (built independently in Python)
    have the same reachable structure."""
    from checker.mc.explore import explore
    from flmodel.examples import seed_model

    ours = explore(build_system(load_scenario(BUNDLED["seed_model"])))
    ref = explore(seed_model())
    assert (ours.num_states, ours.num_transitions) == (ref.num_states, ref.num_transitions)
    assert sorted(map(str, ours.actions)) == sorted(map(str, ref.actions))


def _errors(text: str) -> list[tuple[int | None, str]]:
    with pytest.raises(ModelError) as info:
        parse_scenario(text, "bad.fl")
    assert all(d.source == "bad.fl" for d in info.value.diagnostics)
    return [(d.line, d.message) for d in info.value.diagnostics]


def test_semantic_errors_are_reported_all_at_once() -> None:
    bad = (GOOD.replace("partition c1: {p}, c2: {q}", "partition c1: {p, q}, c3: {q}")
           .replace("policy at o1: c1 may get_grad", "policy at o1: mallory may get_grad")
           .replace("clients c1 at o1, c2 at o2", "clients c1 at o1, c2 at o2, c4 at nowhere")
           .replace("additive {-1: 1/4, 0: 1/2, 1: 1/4}", "additive {-1: 1/4, 0: 1/2, 1: 1/3}"))
    errs = _errors(bad)
    text = "\n".join(m for _, m in errs)
    assert "unknown location 'nowhere'" in text
    assert "unknown actor 'mallory'" in text
    assert "'c3', which is not a client" in text
    assert "parts overlap: 'q'" in text
    assert "client 'c2' has no part" in text
    assert "sum to 13/12, not 1" in text
    assert len(errs) >= 6
    assert all(line is not None for line, _ in errs)
    lines = dict((m.split(":")[0], ln) for ln, m in errs)
    assert lines["policy at 'o1' names unknown actor 'mallory'; known"] == 7


@pytest.mark.parametrize(("old", "new", "message"), [
    ("c2: {q}", "c2: {}", "does not cover the dataset"),
    ("model squared rate 0.25 initial (0, 0)", "model squared rate 0.25 initial (0)", "dimension 1"),
    ("model squared rate 0.25", "model cubic rate 0.25", "unknown loss 'cubic'"),
    ("between n2", "between n9", "unknown neighbour 'n9'"),
    ("bounds rounds 1, events 9", "bounds rounds 1, rounds 2", "given twice"),
    ("protocol fedavg_rounds", "protocol gossip", "unknown protocol variant"),
    ("replace q with r", "replace r with q", "'r' is not in the dataset"),
    ("property b:", "property a:", "declared twice"),
    ("attacker eve at o1", "attacker eve", "not an actor"),
    ("may put_part, eval_server", "may put_part, evaluate", "unknown action 'evaluate'"),
])
def test_each_semantic_error(old: str, new: str, message: str) -> None:
    assert old in GOOD
    errs = _errors(GOOD.replace(old, new))
    assert any(message in m for _, m in errs), errs


def test_syntax_error_names_position_and_expectation() -> None:
    errs = _errors(GOOD.replace("server s at g", "server s g"))
    ((line, msg),) = errs
    assert line == 4 and "unexpected 'g'" in msg and "'at'" in msg



def test_every_property_kind_ends_with_or_without_a_semicolon() -> None:
    """One rule for ``;`` ([spec/LANGUAGE.md]): optional after every property kind, the same property
    either way."""
    lines = GOOD.splitlines(keepends=True)
    props = [i for i, line in enumerate(lines) if line.startswith("property ")]
    assert len(props) >= 5 and any(lines[i].rstrip().endswith(";") for i in props)
    added = [line.rstrip("\n").rstrip(";") + ";\n" if i in props else line for i, line in enumerate(lines)]
    removed = [line.rstrip("\n").rstrip(";") + "\n" if i in props else line for i, line in enumerate(lines)]
    plain = parse_scenario(GOOD, "g.fl").properties
    assert parse_scenario("".join(added), "g.fl").properties == plain
    assert parse_scenario("".join(removed), "g.fl").properties == plain


def test_unknown_observable_in_attacker() -> None:
    errs = _errors(GOOD.replace("observes curmodpar", "observes gradient_c9"))
    ((line, msg),) = errs
    assert line == 20 and "unknown observable 'gradient_c9'" in msg and "gradient_c1" in msg


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_scenario(tmp_path / "nope.fl")


def test_fl_system_and_universe_for_other_commands() -> None:
    """The unwrapped FLSystem (the privacy command, the Isabelle export) and the universe of
    declared points (neighbour generation)."""
    from flmodel.system import FLSystem

    s = load_scenario(BUNDLED["moniteo"])
    fl = build_fl_system(s)
    assert isinstance(fl, FLSystem)
    assert "gradient:sat1" in fl.observable_names()
    assert {p.name for p in universe(s)} == {"loc_a", "loc_b", "loc_c", "loc_c_hot"}
    d1 = neighbour_dataset(s, "hot")
    (t0,) = fl.with_dataset(d1).initial_states()
    assert {p.name for p in t0.infra.igra.part("sat3")} == {"loc_c_hot"}
