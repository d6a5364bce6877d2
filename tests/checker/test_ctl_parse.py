"""The property language: parsing, printing, error positions, and atom evaluation over observables."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.errors import InputError
from checker.mc import ctl_ast
from checker.mc.ctl import ModelChecker, check
from checker.mc.ctl_parse import parse_formula
from checker.mc.kripke import Kripke
from checker.mc.ts import Action

# ------------------------------------------------------------------ parsing
NAMES = st.sampled_from(["p", "goal", "all_ready", "x1", "sat 1", "EF", "in"])


def atoms() -> st.SearchStrategy[ctl_ast.Formula]:
    refs = st.sampled_from([ctl_ast.Ref("round"), ctl_ast.Ref("ready"), ctl_ast.Ref("get_grad")])
    consts = st.one_of(
        st.fractions(min_value=-5, max_value=5, max_denominator=7).map(ctl_ast.Const),
        st.sampled_from(["sat1", 'q"x', "a\\b"]).map(ctl_ast.Const),
        st.booleans().map(ctl_ast.Const),
    )
    terms = st.one_of(refs, consts,
                      st.lists(st.one_of(refs, consts), min_size=2, max_size=3).map(
                          lambda x: ctl_ast.VectorLit(tuple(x))),
                      st.lists(consts, max_size=3).map(lambda x: ctl_ast.SetLit(tuple(x))))
    return st.one_of(
        NAMES.map(ctl_ast.Label),
        st.builds(ctl_ast.Compare, st.sampled_from(ctl_ast.COMPARE_OPS), refs, terms),
        st.builds(ctl_ast.Member, terms, refs, st.booleans()),
        NAMES.map(ctl_ast.Enabled),
        st.just(ctl_ast.TrueF()), st.just(ctl_ast.FalseF()),
    )


def formulas() -> st.SearchStrategy[ctl_ast.Formula]:
    def extend(ch: st.SearchStrategy[ctl_ast.Formula]) -> st.SearchStrategy[ctl_ast.Formula]:
        return st.one_of(
            st.builds(lambda op, f: op(f), st.sampled_from([ctl_ast.Not, *ctl_ast.UNARY_OPS.values()]), ch),
            st.builds(
                lambda op, f, g: op(f, g),
                st.sampled_from([*ctl_ast.BINARY_OPS.values(), ctl_ast.Implies, ctl_ast.Iff]),
                ch,
                ch,
            ),
            st.lists(ch, min_size=2, max_size=3).map(lambda x: ctl_ast.And(tuple(x))),
            st.lists(ch, min_size=2, max_size=3).map(lambda x: ctl_ast.Or(tuple(x))),
        )

    return st.recursive(atoms(), extend, max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(f=formulas())
def test_print_parse_round_trip(f: ctl_ast.Formula) -> None:
    assert parse_formula(str(f)) == f


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("EF goal", ctl_ast.EF(ctl_ast.Label("goal"))),
        ('EF "goal"', ctl_ast.EF(ctl_ast.Label("goal"))),
        ("AG !goal", ctl_ast.AG(ctl_ast.Not(ctl_ast.Label("goal")))),
        ("E[!clipped U goal]", ctl_ast.EU(ctl_ast.Not(ctl_ast.Label("clipped")), ctl_ast.Label("goal"))),
        ("E(p U q)", ctl_ast.EU(ctl_ast.Label("p"), ctl_ast.Label("q"))),
        ("A[p R q]", ctl_ast.AR(ctl_ast.Label("p"), ctl_ast.Label("q"))),
        ("curmodpar == 1/2", ctl_ast.Compare("==", ctl_ast.Ref("curmodpar"), ctl_ast.Const(Fraction(1, 2)))),
        ("curmodpar = 0.5", ctl_ast.Compare("==", ctl_ast.Ref("curmodpar"), ctl_ast.Const(Fraction(1, 2)))),
        ('"sat1" in ready', ctl_ast.Member(ctl_ast.Const("sat1"), ctl_ast.Ref("ready"))),
        ('"sat1" not in ready', ctl_ast.Member(ctl_ast.Const("sat1"), ctl_ast.Ref("ready"), negated=True)),
        ("ready == clients", ctl_ast.Compare("==", ctl_ast.Ref("ready"), ctl_ast.Ref("clients"))),
        ("round >= 2", ctl_ast.Compare(">=", ctl_ast.Ref("round"), ctl_ast.Const(Fraction(2)))),
        ("enabled(eval_server)", ctl_ast.Enabled("eval_server")),
        ("last == get_grad", ctl_ast.Compare("==", ctl_ast.Ref("last"), ctl_ast.Ref("get_grad"))),
        (
            "pos == (1, -2)",
            ctl_ast.Compare(
                "==",
                ctl_ast.Ref("pos"),
                ctl_ast.VectorLit((ctl_ast.Const(Fraction(1)), ctl_ast.Const(Fraction(-2)))),
            ),
        ),
        (
            "p -> q -> r",
            ctl_ast.Implies(ctl_ast.Label("p"), ctl_ast.Implies(ctl_ast.Label("q"), ctl_ast.Label("r"))),
        ),
        (
            "p & q | r",
            ctl_ast.Or((ctl_ast.And((ctl_ast.Label("p"), ctl_ast.Label("q"))), ctl_ast.Label("r"))),
        ),
        (
            "not p and q or r",
            ctl_ast.Or(
                (ctl_ast.And((ctl_ast.Not(ctl_ast.Label("p")), ctl_ast.Label("q"))), ctl_ast.Label("r"))
            ),
        ),
        ("p <-> q", ctl_ast.Iff(ctl_ast.Label("p"), ctl_ast.Label("q"))),
        ("EFgoal", ctl_ast.Label("EFgoal")),
        ("AG EF p -- a comment", ctl_ast.AG(ctl_ast.EF(ctl_ast.Label("p")))),
    ],
)
def test_parse_examples(text: str, expected: ctl_ast.Formula) -> None:
    assert parse_formula(text) == expected


@pytest.mark.parametrize(
    ("text", "line", "column", "expected_part"),
    [
        ("EF", 1, 3, "a name"),
        ("AG (p", 1, 6, "')'"),
        ("p & & q", 1, 5, "a name"),
        ("E[p U q", 1, 8, "']'"),
        ("p # q", 1, 3, "'&'"),
        ("AG (p ->\n  q ==)", 2, 7, "a number"),
        ("x == 1/0", 1, 6, "non-zero"),
        ("EF 3", 1, 4, "comparison"),
    ],
)
def test_parse_errors_name_position_and_expectation(
    text: str, line: int, column: int, expected_part: str
) -> None:
    with pytest.raises(InputError) as info:
        parse_formula(text)
    err = info.value
    assert err.position is not None
    assert (err.position.source, err.position.line, err.position.column) == ("<formula>", line, column)
    assert err.expected is not None and expected_part in err.expected
    assert str(err).startswith(f"<formula>:{line}:{column}: ")


def test_parse_offsets_for_embedded_formulas() -> None:
    """Scenario files embed formulas: errors name the line/column in the file."""
    with pytest.raises(InputError) as info:
        parse_formula("AG (p &)", source="spec/x.fl", line=12, column=10)
    pos = info.value.position
    assert pos is not None and (pos.source, pos.line, pos.column) == ("spec/x.fl", 12, 17)
    with pytest.raises(InputError) as info:
        parse_formula("AG (p &\n   )", source="spec/x.fl", line=12, column=10)
    pos = info.value.position
    assert pos is not None and (pos.line, pos.column) == (13, 4)
    f = parse_formula("EF  nope", source="spec/x.fl", line=3, column=5)
    k = Kripke.from_edges(1, [0], [], [], labels={"goal": np.array([True])})
    with pytest.raises(InputError) as info:
        check(k, f)
    assert str(info.value).startswith("spec/x.fl:3:9: unknown label 'nope'")
    assert "goal" in (info.value.expected or "")


# ------------------------------------------------------------------ atoms over observables
@dataclass(frozen=True)
class Actor:
    name: str


def fl_like() -> Kripke:
    """Four states with FL-style observables (exact numbers, sets of actors, actions, vectors)."""
    c1, c2 = Actor("sat1"), Actor("sat2")
    obs = {
        "curmodpar": [Fraction(0), Fraction(1, 2), Fraction(1, 2), 1],
        "ready": [frozenset(), frozenset({c1}), frozenset({c1, c2}), frozenset({"sat1", "sat2"})],
        "clients": [frozenset({c1, c2})] * 4,
        "round": np.array([0, 0, 1, 2]),
        "last": [
            None,
            Action("get_grad", "sat1"),
            Action("get_grad", "sat2"),
            Action("eval_server", "server"),
        ],
        "pos": [(0, 0), (1, 2), (1,), [3]],
        "flag": [True, False, True, False],
        "weight": [0.5, 0.25, 0.1, 2.0],
    }
    return Kripke.from_edges(
        4,
        [0],
        [0, 1, 2],
        [1, 2, 3],
        action=[0, 0, 1],
        actions=(Action("get_grad", "sat1"), Action("eval_server", "server")),
        observables=obs,
        labels={"goal": np.array([False, False, False, True])},
    )


@pytest.mark.parametrize(
    ("atom", "expected"),
    [
        ("curmodpar == 1/2", [False, True, True, False]),
        ("curmodpar >= 1/2", [False, True, True, True]),
        ("curmodpar != 0.5", [True, False, False, True]),
        ('"sat1" in ready', [False, True, True, True]),
        ('"sat2" not in ready', [True, True, False, False]),
        ("ready == clients", [False, False, True, True]),
        ('ready == {"sat1", "sat2"}', [False, False, True, True]),
        ("ready == {}", [True, False, False, False]),
        ('ready <= {"sat1", "sat2"}', [True, True, True, True]),
        ("ready < clients", [True, True, False, False]),
        ("round >= 1", [False, False, True, True]),
        ("round < 1/2", [True, True, False, False]),
        ("1 <= round", [False, False, True, True]),
        ("round == 2", [False, False, False, True]),
        ("enabled(get_grad)", [True, True, False, False]),
        ("enabled(eval_server)", [False, False, True, False]),
        ('enabled("eval_server(server)")', [False, False, True, False]),
        ("last == get_grad", [False, True, True, False]),
        ('last == "eval_server"', [False, False, False, True]),
        ("pos == (1, 2)", [False, True, False, False]),
        ("pos == 1", [False, False, True, False]),  # a 1-element vector equals a scalar
        ("pos == 3", [False, False, False, True]),
        ("flag", [True, False, True, False]),
        ("flag == false", [False, True, False, True]),
        ("goal", [False, False, False, True]),
        ('"goal"', [False, False, False, True]),
        ("weight == 1/4", [False, True, False, False]),
        ("weight == 1/10", [False, False, False, False]),  # 0.1 is not exactly 1/10
        ("weight > 1", [False, False, False, True]),
        ("round == curmodpar", [True, False, False, False]),
        ('"sat1" in clients & round >= 1', [False, False, True, True]),
    ],
)
def test_atom_evaluation(atom: str, expected: list[bool]) -> None:
    assert ModelChecker(fl_like()).sat(atom).tolist() == expected


@pytest.mark.parametrize(
    ("atom", "message"),
    [
        ("nosuch", "unknown label 'nosuch'"),
        ("rnd >= 2", "unknown observable 'rnd'"),
        ("weight", "not boolean"),
        ("1 == 2", "neither side"),
        ("ready >= 2", "cannot order"),
        ("x in y", "unknown observable"),
        ("ready == clientz", "unknown observable 'clientz'"),
        ("round == rnd", "unknown observable 'rnd'"),
    ],
)
def test_atom_errors_are_input_errors_with_position(atom: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        ModelChecker(fl_like()).sat(parse_formula("EF " + atom))
    assert message in str(info.value)
    assert info.value.position is not None and info.value.position.column == 4


def test_atoms_evaluated_once_per_distinct_value() -> None:
    calls = []

    class Counting:
        def __init__(self, v: int) -> None:
            self.v = v

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Counting) and other.v == self.v

        def __hash__(self) -> int:
            return hash(self.v)

        def __str__(self) -> str:
            calls.append(self.v)
            return f"v{self.v}"

    n = 3000
    k = Kripke.from_edges(n, [0], [], [], observables={"o": [Counting(i % 3) for i in range(n)]})
    got = ModelChecker(k).sat('o == "v1"')
    assert got.sum() == n // 3
    assert len(calls) == 3  # str() called once per distinct value, not per state
