"""The PCTL (P, Pmin, Pmax) and dpCTL (D{ε,δ}) syntax of the property language: parse, print, positions."""

from __future__ import annotations

from fractions import Fraction

import pytest

from checker.errors import InputError
from checker.mc import ctl_ast as A
from checker.mc.ctl_parse import parse_formula

GOAL, A_, B = A.Label("goal"), A.Label("a"), A.Label("b")


@pytest.mark.parametrize(("text", "expected"), [
    ("P=? [F goal]", A.ProbQuery("=?", None, A.Eventually(GOAL))),
    ("P>=0.5 [F<=3 goal]", A.ProbQuery(">=", Fraction(1, 2), A.Eventually(GOAL, 3))),
    ("P<1/4 [G a]", A.ProbQuery("<", Fraction(1, 4), A.Globally(A_))),
    ("P<=1e-6 [G<=2 a]", A.ProbQuery("<=", Fraction(1, 10**6), A.Globally(A_, 2))),
    ("P>0 [X a]", A.ProbQuery(">", Fraction(0), A.Next(A_))),
    ("Pmin=?[a U b]", A.ProbQuery("=?", None, A.Until(A_, B), "Pmin")),
    ("Pmax=? [a U<=4 b]", A.ProbQuery("=?", None, A.Until(A_, B, 4), "Pmax")),
    ("Pmin>=0.9 [F goal]", A.ProbQuery(">=", Fraction(9, 10), A.Eventually(GOAL), "Pmin")),
    ("Pmax <= 1/2 [F goal]", A.ProbQuery("<=", Fraction(1, 2), A.Eventually(GOAL), "Pmax")),
    ("D{ln(3), 0}[F goal]", A.DPQuery(A.Eps(Fraction(3), log=True), Fraction(0), A.Eventually(GOAL))),
    ("D{2.2,1e-6}[X a]", A.DPQuery(A.Eps(Fraction(11, 5)), Fraction(1, 10**6), A.Next(A_))),
    ("D{1/2, 0}[a U<=2 b]", A.DPQuery(A.Eps(Fraction(1, 2)), Fraction(0), A.Until(A_, B, 2))),
    ("AG P>=0.9 [X a]", A.AG(A.ProbQuery(">=", Fraction(9, 10), A.Next(A_)))),
    ("P=? [F P>0.5 [F a]]",
     A.ProbQuery("=?", None, A.Eventually(A.ProbQuery(">", Fraction(1, 2), A.Eventually(A_))))),
    ('P=? [F round = 1 & "sat3" in ready]', A.ProbQuery("=?", None, A.Eventually(A.And((
        A.Compare("==", A.Ref("round"), A.Const(Fraction(1))), A.Member(A.Const("sat3"), A.Ref("ready"))))))),
])
def test_parse_and_print(text: str, expected: A.Formula) -> None:
    got = parse_formula(text)
    assert got == expected
    assert parse_formula(str(got)) == got


@pytest.mark.parametrize("text", ["P >= 2", "D >= 1", "EF F", "AG X", "G -> U", "P & D"])
def test_p_d_f_g_x_remain_names_outside_their_forms(text: str) -> None:
    f = parse_formula(text)
    assert not A.has_probabilistic(f)
    assert parse_formula(str(f)) == f


def test_children_reach_atoms_in_brackets() -> None:
    f = parse_formula("P>=0.5 [a U (b & enabled(r))]")
    assert {str(x) for x in A.atoms_of(f)} == {"a", "b", "enabled(r)"}
    assert A.has_probabilistic(f) and not A.has_probabilistic(parse_formula("EF a"))


def test_eps_values() -> None:
    import math
    assert float(A.Eps(Fraction(3), log=True)) == pytest.approx(math.log(3))
    assert A.Eps(Fraction(3), log=True).exp == 3 and A.Eps(Fraction(1, 2)).exp is None
    assert A.Eps(Fraction(0)).exp == 1


@pytest.mark.parametrize(("text", "col", "expected"), [
    ("P>=2 [F a]", 1, "between 0 and 1"),
    ("P=? [F>=3 a]", 7, "'<='"),
    ("P=? [F a", 9, "']'"),
    ("D{ln(1/2), 0}[F a]", 3, "x >= 1"),
    ("D{1, 2}[F a]", 1, "between 0 and 1"),
    ("P=? [F a U b]", 10, "']'"),
])
def test_errors_are_positioned(text: str, col: int, expected: str) -> None:
    with pytest.raises(InputError) as err:
        parse_formula(text)
    assert err.value.position is not None and err.value.position.column == col
    assert expected in str(err.value)


@pytest.mark.parametrize("text", ["goal goal", "EF a b", "enabled(x) y", "P!=0.5 [F a]"])
def test_top_level_errors_list_only_what_can_follow(text: str) -> None:
    with pytest.raises(InputError) as err:
        parse_formula(text)
    listed = str(err.value).split("expected", 1)[1]
    for impossible in ("'R'", "'U'", "']'", "'}'", "')'"):
        assert impossible not in listed
    assert "end of formula" in listed
