"""Parametric scenarios (``flmodel.scenario_family``): constants, tables, indexed names and families
expand to the hand-written scenario; definitions from outside override constants; errors in a family
name the member; the validation of repeated statements, property options, a BOM and CRLF."""

from __future__ import annotations

from fractions import Fraction

import flcheck_spec
import pytest

from flmodel.errors import ModelError
from flmodel.scenario import load_scenario, parse_scenario

SWARM = flcheck_spec.bundled_scenarios()["moniteo_swarm8"]

FAMILY = """scenario "family"
const N = 3;
const t = [1/2, 2, -1];
locations g, o[i] for i in 1..N
links g -- o[i] for i in 1..N
server s at g
clients c[i] at o[i] for i in 1..N
policy at g: s may put_part, eval_server
policy at o[i]: c[i] may get_grad for i in 1..N
data p[i] = (i % 3) -> (i * 2) % 4 + t[i] for i in 1..N
partition c[i]: {p[i]} for i in 1..N
model squared rate 1/4 initial (0, 0)
bounds rounds 1
"""

HAND = """scenario "family"
locations g, o1, o2, o3
links g -- o1, g -- o2, g -- o3
server s at g
clients c1 at o1, c2 at o2, c3 at o3
policy at g: s may put_part, eval_server
policy at o1: c1 may get_grad
policy at o2: c2 may get_grad
policy at o3: c3 may get_grad
data p1 = (1) -> 5/2
data p2 = (2) -> 2
data p3 = (0) -> 1
partition c1: {p1}, c2: {p2}, c3: {p3}
model squared rate 1/4 initial (0, 0)
bounds rounds 1
"""


def _messages(text: str, source: str = "f.fl", **defines: int) -> list[str]:
    with pytest.raises(ModelError) as info:
        parse_scenario(text, source, defines=defines)
    return [str(d) for d in info.value.diagnostics]


def test_family_expands_to_the_hand_written_scenario() -> None:
    family = parse_scenario(FAMILY, "f.fl")
    assert family == parse_scenario(HAND, "h.fl")
    assert family.constants == (("N", 3),)
    assert [d.target for d in family.data] == [Fraction(5, 2), Fraction(2), Fraction(1)]


def test_round_trip_prints_the_expanded_scenario() -> None:
    family = parse_scenario(FAMILY, "f.fl")
    printed = family.to_text()
    assert "const" not in printed and "[" not in printed and "sat" not in printed
    assert printed == parse_scenario(HAND, "h.fl").to_text()
    assert parse_scenario(printed, "p.fl") == family


def test_defines_override_the_default() -> None:
    two = parse_scenario(FAMILY, "f.fl", defines={"N": 2})
    assert two.client_names == ("c1", "c2")
    assert two.constants == (("N", 2),)
    swarm = load_scenario(SWARM, defines={"N": 4})
    assert swarm.client_names == ("sat1", "sat2", "sat3", "sat4")
    assert [d.name for d in swarm.data] == ["loc1", "loc2", "loc3", "loc4", "loc_hot"]


def test_unknown_define_lists_the_constants() -> None:
    (msg,) = _messages(FAMILY, M=2)
    assert "not a constant of the scenario: M" in msg and "integer constants: N" in msg
    assert any("t is a table; a definition from outside sets an integer constant" in m
               for m in _messages(FAMILY, t=2))


def test_error_in_a_family_names_the_line_and_member() -> None:
    bad = FAMILY.replace("clients c[i] at o[i] for i in 1..N", "clients c[i] at o[i * i] for i in 1..N")
    msgs = _messages(bad)
    assert "f.fl:7:9: in family i = 2: unknown location 'o4' in the placement of 'c2'" in msgs[0], msgs
    assert any("in family i = 3: unknown location 'o9'" in m for m in msgs)
    msgs = _messages(FAMILY.replace("t[i] for i in 1..N", "t[i] for i in 1..N + 1"), N=3)
    assert any("f.fl:10:" in m and "table t has 3 entries; index 4" in m for m in msgs), msgs


@pytest.mark.parametrize(("old", "new", "message"), [
    ("const N = 3;", "const N = 7/2;", "constant N must be an integer, got 7/2"),
    ("o[i] for i in 1..N\nlinks", "o[i / 2] for i in 1..N\nlinks",
     "in family i = 1: the index of o[…] must be an integer"),
    ("(i % 3)", "(i % 0)", "remainder by zero"),
    ("(i % 3)", "(j % 3)", "unknown name j in an expression; known: N, t, i (family index)"),
    ("const t", "const N = 2;\nconst t", "second declaration of constant N; the first is at f.fl:2:7"),
    ("for i in 1..N\nlinks", "for N in 1..N\nlinks", "family index N is already a constant"),
    ("const N = 3;", "const N = 100000;", "more than 10000 members"),
])
def test_expansion_errors(old: str, new: str, message: str) -> None:
    assert old in FAMILY
    msgs = _messages(FAMILY.replace(old, new))
    assert any(message in m for m in msgs), msgs


def test_empty_family_writes_nothing() -> None:
    one = load_scenario(SWARM, defines={"N": 1})
    assert one.client_names == ("sat1",) and [d.name for d in one.data] == ["loc1", "loc_hot"]


GOOD = """scenario "dups"
locations g, o1, o2
links g -- o1, g -- o2
server s at g
clients c1 at o1, c2 at o2
policy at g: s may put_part, eval_server
policy at o1: c1 may get_grad
data p = (1) -> 2
data q = (2) -> 1
data r = (3) -> 1
dataset p, q
partition c1: {p}, c2: {q}
model squared rate 1/4 initial (0, 0)
noise rr grid {0, 1, 2} r 1/2
protocol fedavg_rounds
bounds rounds 1
neighbour n: replace q with r
property x: crossval between n trials = 10 seed = 1
"""


def test_good_base_is_valid() -> None:
    parse_scenario(GOOD, "d.fl")


@pytest.mark.parametrize(("old", "new", "message"), [
    ("trials = 10", "trails = 10", "d.fl:18:32: unknown option 'trails' (did you mean 'trials'?)"),
    ("trials = 10", "trials = 0", "option trials must be a positive integer, got 0"),
    ("trials = 10", "trials = 1/2", "option trials must be a positive integer, got 1/2"),
    ("seed = 1", "seed = 1 seed = 2", "d.fl:18:53: option 'seed' given twice; the first is at d.fl:18:44"),
    ("noise rr grid {0, 1, 2} r 1/2\n", "noise rr grid {0, 1, 2} r 1/2\nnoise none\n",
     "d.fl:15:1: second noise statement for every client; the first is at d.fl:14:1"),
    ("noise rr grid {0, 1, 2} r 1/2\n", "noise for c1: none\nnoise for c2, c1: none\n",
     "d.fl:15:15: second noise statement for client 'c1' (the same mechanism); the first is at d.fl:14:11"),
    ("policy at o1: c1 may get_grad\n", "policy at o1: c1 may get_grad\npolicy at o1: c1 may get_grad\n",
     "d.fl:8:11: second policy at 'o1' for the same actors; the first is at d.fl:7:11"),
    ("links g -- o1, g -- o2", "links g -- o1, g -- o2, o1 -- g",
     "d.fl:3:25: link o1 -- g given twice; the first is at d.fl:3:7"),
    ("model squared rate 1/4 initial (0, 0)\n", "model squared rate 1/4 initial (0, 0)\nmodel hinge rate 1 "
     "initial (0, 0)\n", "d.fl:14:7: second model statement; the first is at d.fl:13:7"),
    ("protocol fedavg_rounds\n", "protocol fedavg_rounds\nprotocol published\n",
     "d.fl:16:10: second protocol statement; the first is at d.fl:15:10"),
    ("bounds rounds 1\n", "bounds rounds 1\nbounds events 3\n",
     "d.fl:17:1: second bounds statement; the first is at d.fl:16:1"),
])
def test_repeated_statements_and_bad_options(old: str, new: str, message: str) -> None:
    assert old in GOOD
    msgs = _messages(GOOD.replace(old, new), "d.fl")
    assert any(message in m for m in msgs), msgs


def test_bom_and_crlf_are_accepted() -> None:
    plain = parse_scenario(GOOD, "d.fl")
    assert parse_scenario("\ufeff" + GOOD, "d.fl") == plain
    assert parse_scenario(GOOD.replace("\n", "\r\n"), "d.fl") == plain
    crlf_bad = ("\ufeff" + GOOD.replace("trials = 10", "trails = 10")).replace("\n", "\r\n")
    assert any("d.fl:18:32: unknown option 'trails'" in m for m in _messages(crlf_bad, "d.fl"))
