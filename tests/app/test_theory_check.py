"""Tests for checker.app.theory_check: the sympy verdicts on Lemma II.2 and Theorem 1, cross-checked
numerically and against concrete distributions (checker.privacy.advantage)."""

from __future__ import annotations

import math
from collections.abc import Hashable
from fractions import Fraction

import pytest
import sympy

from checker.app import theory_check
from checker.app.theory_check import StepCheck, check_all
from checker.privacy.advantage import advantage, best_advantage
from checker.privacy.ni_fl_dp import pure_epsilon
from checker.verdict import Verdict

F = Fraction
Distribution = dict[Hashable, Fraction | float]


@pytest.fixture(scope="module")
def steps() -> dict[str, StepCheck]:
    return {s.id: s for s in check_all()}


def test_lemma_ii2_verdicts(steps: dict[str, StepCheck]) -> None:
    assert steps["II.2-0"].verdict == Verdict.HOLDS and steps["II.2-0"].lhs == "a - b"
    assert steps["II.2-1"].verdict == Verdict.HOLDS and "complement rule" in steps["II.2-1"].detail
    assert steps["II.2-2"].verdict == Verdict.HOLDS and steps["II.2-2"].assumptions == ()
    # the substitution steps need the symmetry assumption ...
    for sid in ("II.2-3", "II.2-4", "II.2-6"):
        assert steps[sid].verdict == Verdict.HOLDS
        assert steps[sid].assumptions == ("symmetry: P_D0(A=0) = P_D1(A=1)",)
    # ... but the balanced reading of the conclusion does not
    assert steps["II.2-5"].verdict == Verdict.HOLDS and steps["II.2-5"].assumptions == ()


def test_lemma_counterexample_is_real() -> None:
    d0: Distribution = {0: F(1)}
    d1: Distribution = {0: F(1, 2), 1: F(1, 2)}
    r = advantage(d0, d1, lambda x: int(x == 1))
    a, c = r.p1_says1, r.p0_says0
    assert (a, c, r.advantage) == (F(1, 2), F(1), F(1, 2))
    assert a - 1 + c == r.advantage != 2 * a - 1  # II.2-3 fails without symmetry
    assert r.advantage == 2 * r.correct - 1  # II.2-5 holds


def test_theorem1_verdicts(steps: dict[str, StepCheck]) -> None:
    assert steps["T1-2"].verdict == Verdict.VIOLATED
    assert steps["T1-3"].verdict == Verdict.HOLDS and steps["T1-4"].verdict == Verdict.HOLDS
    assert steps["T1-5"].verdict == Verdict.VIOLATED  # Adv = 1 - 1/e^ε is not an equality
    assert steps["T1-6"].verdict == Verdict.HOLDS  # but an upper bound
    assert steps["T1-7"].verdict == Verdict.HOLDS  # P = 1 - 1/(2e^ε)
    t8 = steps["T1-8"]
    assert t8.verdict == Verdict.VIOLATED and "-0.359141" in t8.detail and "ε = -1" in t8.detail
    assert "negative" in t8.detail and "excluded" in t8.detail
    assert "at no ε > 0" in steps["T1-2"].detail and "> 0" in steps["T1-5"].detail
    assert steps["T1-9"].verdict == Verdict.HOLDS and steps["T1-10"].verdict == Verdict.HOLDS
    assert all(isinstance(s.json()["verdict"], str) for s in steps.values())


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0])
def test_theorem1_numerically(eps: float) -> None:
    e = math.exp(eps)
    tight = (e - 1) / (e + 1)
    proof = 1 - 1 / e
    assert tight == pytest.approx(math.tanh(eps / 2))
    assert proof - tight == pytest.approx((e - 1) / (e * (e + 1)))
    assert proof > tight
    # the proof's transformation, done right, and the printed one
    p_proof = (1 + proof) / 2
    assert p_proof == pytest.approx(1 - 1 / (2 * e))
    assert 1 - 1 / (2 * math.exp(-1)) < 0
    # randomized response with e^ε = p/(1-p) attains the tight bound, not the proof's value
    p = e / (1 + e)
    pf = F(p)
    d0: Distribution = {0: pf, 1: 1 - pf}
    d1: Distribution = {0: 1 - pf, 1: pf}
    best = best_advantage(d0, d1).advantage
    assert float(best) == pytest.approx(tight, abs=1e-12)
    assert pure_epsilon(d0, d1).epsilon == pytest.approx(eps, abs=1e-9)


# Each verdict is computed from the expressions the paper prints: a different reading of one of them
# (a wrong fact) must change the verdict of the steps that cite it, and only those.


def _verdicts(monkeypatch: pytest.MonkeyPatch, name: str, value: object) -> dict[str, Verdict]:
    monkeypatch.setattr(theory_check, name, value)
    return {s.id: s.verdict for s in check_all()}


def test_wrong_definition_of_advantage_fails_ii2_0(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _verdicts(monkeypatch, "printed_advantage", lambda a, b: a + b)
    assert got["II.2-0"] == Verdict.VIOLATED


def test_privacy_term_zero_for_every_positive_eps_makes_t1_2_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    eps_zero = lambda eps: sympy.Piecewise((1, sympy.Eq(eps, 0)), (0, True))  # noqa: E731
    got = _verdicts(monkeypatch, "proof_privacy_term", eps_zero)
    assert got["T1-2"] == Verdict.HOLDS
    assert got["T1-1"] == Verdict.HOLDS  # still 1 at ε = 0


def test_privacy_term_not_one_at_zero_fails_t1_1(monkeypatch: pytest.MonkeyPatch) -> None:
    got = _verdicts(monkeypatch, "proof_privacy_term", lambda eps: 1 / sympy.exp(eps + 1))
    assert got["T1-1"] == Verdict.VIOLATED and got["T1-2"] == Verdict.VIOLATED


def test_tight_value_in_the_proof_makes_t1_5_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    tight = lambda eps: (sympy.exp(eps) - 1) / (sympy.exp(eps) + 1)  # noqa: E731
    got = _verdicts(monkeypatch, "proof_advantage", tight)
    assert got["T1-5"] == Verdict.HOLDS
    assert got["T1-7"] == Verdict.VIOLATED  # P = 1 - 1/(2e^ε) no longer solves 2P - 1 = Adv


def test_corrected_printed_probability_makes_t1_8_hold_and_nothing_else_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = {s.id: s.verdict for s in check_all()}
    eps = theory_check.symbols()["eps"]
    got = _verdicts(monkeypatch, "printed_probability", lambda: 1 - 1 / (2 * sympy.exp(eps)))
    assert got["T1-8"] == Verdict.HOLDS
    assert {k for k in original if original[k] != got[k]} == {"T1-8"}
