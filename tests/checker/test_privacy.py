"""Tests for checker.privacy.ni_fl_dp: pure ε, δ(ε), NI-FL-DP decisions, post-processing, composition."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.crossval.privacy_curves import exact_epsilon, hockey_stick_exact
from checker.privacy.ni_fl_dp import (
    Eps,
    apply_channel,
    compose_advanced,
    compose_basic,
    delta_for_epsilon,
    hockey_stick,
    ni_fl_dp,
    post_process,
    product_distribution,
    pure_epsilon,
    ratio_within,
    validate_distribution,
    worst_pair,
)
from checker.verdict import Verdict

F = Fraction


def rr(p: Fraction, bit: int) -> dict[int, Fraction]:
    """Randomized response: report the true bit with probability p."""
    return {bit: p, 1 - bit: 1 - p}


def clamped_geometric(alpha: Fraction, x: int, lo: int, hi: int) -> dict[int, Fraction]:
    """Two-sided geometric mechanism x + Z, P(Z = k) = (1-α)/(1+α) α^|k|, output clamped to [lo, hi]
    (Ghosh, Roughgarden, Sundararajan 2009): exact probabilities; ε = ln(1/α) for |x - x'| = 1."""
    c = (1 - alpha) / (1 + alpha)
    out = {}
    for y in range(lo, hi + 1):
        k = y - x
        if y == lo:  # mass of all outputs <= lo
            m = lo - x  # sum_{j <= m} c α^|j|
            out[y] = c * alpha ** (-m) / (1 - alpha) if m <= 0 else 1 - _upper(c, alpha, m + 1)
        elif y == hi:
            m = hi - x
            out[y] = _upper(c, alpha, m) if m >= 1 else 1 - c * alpha ** (-(m - 1)) / (1 - alpha)
        else:
            out[y] = c * alpha ** abs(k)
    return out


def _upper(c: Fraction, alpha: Fraction, m: int) -> Fraction:
    """sum_{j >= m} c α^j for m >= 1."""
    return c * alpha**m / (1 - alpha)


distributions = st.lists(st.integers(0, 6), min_size=1, max_size=5).filter(lambda ws: sum(ws) > 0).map(
    lambda ws: {i: F(w, sum(ws)) for i, w in enumerate(ws) if w})


@pytest.mark.parametrize("p", [F(3, 4), F(2, 3), F(9, 10), F(51, 100), F(1, 2)])
def test_randomized_response_epsilon_exact(p: Fraction) -> None:
    res = pure_epsilon(rr(p, 0), rr(p, 1))
    assert res.ratio == p / (1 - p)
    assert res.epsilon == pytest.approx(math.log(p / (1 - p)), abs=1e-15)
    assert ni_fl_dp(rr(p, 0), rr(p, 1), Eps(ratio=p / (1 - p))) == Verdict.HOLDS
    if p != F(1, 2):
        assert ni_fl_dp(rr(p, 0), rr(p, 1), Eps(ratio=p / (1 - p) - F(1, 10**9))) == Verdict.VIOLATED
    # δ(ε) closed form for ε below ε*: only one outcome has a positive term
    alpha = F(1) if p == F(1, 2) else (1 + p / (1 - p)) / 2
    assert delta_for_epsilon(rr(p, 0), rr(p, 1), Eps(ratio=alpha)) == max(F(0), p - alpha * (1 - p))


@pytest.mark.parametrize("alpha", [F(1, 2), F(1, 3), F(2, 3)])
def test_geometric_mechanism_epsilon(alpha: Fraction) -> None:
    lo, hi = -4, 5
    p0, p1 = clamped_geometric(alpha, 0, lo, hi), clamped_geometric(alpha, 1, lo, hi)
    assert sum(p0.values()) == 1 and sum(p1.values()) == 1
    res = pure_epsilon(p0, p1)
    assert res.ratio == 1 / alpha
    # neighbours at distance 2 (sensitivity 2): ε doubles
    assert pure_epsilon(p0, clamped_geometric(alpha, 2, lo, hi)).ratio == 1 / alpha**2


def test_supports_differ_gives_inf_and_outcome() -> None:
    res = pure_epsilon({"a": F(1)}, {"a": F(1, 2), "b": F(1, 2)})
    assert res.infinite and res.epsilon == math.inf and res.outcome == "b" and res.direction == 1
    assert res.json() == "inf"
    assert ni_fl_dp({"a": F(1)}, {"a": F(1, 2), "b": F(1, 2)}, 100) == Verdict.VIOLATED
    assert ni_fl_dp({"a": F(1)}, {"a": F(1, 2), "b": F(1, 2)}, "inf") == Verdict.HOLDS
    # forward direction only: P0 <= e^ε P1 holds with e^ε = 2 (P0 charges nothing P1 does not)
    assert ni_fl_dp({"a": F(1)}, {"a": F(1, 2), "b": F(1, 2)}, "ln(2)", direction="forward") == Verdict.HOLDS
    assert delta_for_epsilon({"a": F(1)}, {"a": F(1, 2), "b": F(1, 2)}, "inf") == F(1, 2)


def test_exact_boundary_decisions() -> None:
    # ratio 3 vs ε = ln 3 given as ratio: holds exactly; ε rational close to ln 3
    assert ratio_within(F(3), "ln(3)")
    assert not ratio_within(F(3), Eps(value=F(109861228866810, 10**14)))  # < ln 3 by ~9.7e-16
    assert ratio_within(F(3), Eps(value=F(109861228866811, 10**14)))  # > ln 3
    assert ratio_within(F(1), 0) and not ratio_within(F(10**9 + 1, 10**9), 0)
    assert ratio_within(math.inf, "inf") and not ratio_within(math.inf, 5)
    assert Eps.parse("0.1").value == F(1, 10) and Eps.parse("log(3/2)").ratio == F(3, 2)
    with pytest.raises(ValueError, match="cannot read ε"):
        Eps.parse("abc")
    with pytest.raises(ValueError, match=">= 0"):
        Eps.of(-1)


def test_validate_distribution() -> None:
    validate_distribution({1: F(1, 2), 2: F(1, 2)})
    with pytest.raises(ValueError, match="sum to 3/4"):
        validate_distribution({1: F(1, 2), 2: F(1, 4)}, "D0")
    validate_distribution({1: F(1, 2), 2: F(1, 4)}, "D0", allow_sub=True)
    with pytest.raises(ValueError, match="negative"):
        validate_distribution({1: F(-1, 2), 2: F(3, 2)})


@settings(max_examples=150, deadline=None)
@given(distributions, distributions)
def test_epsilon_symmetric_and_zero_iff_equal(p: dict, q: dict) -> None:
    a, b = pure_epsilon(p, q), pure_epsilon(q, p)
    assert a.ratio == b.ratio and a.epsilon == b.epsilon
    assert (a.ratio == 1) == (p == q)
    # independent reference (crossval's exact_epsilon computes max_o ln p/q for one direction)
    assert a.epsilon == pytest.approx(max(exact_epsilon(p, q), exact_epsilon(q, p)), abs=1e-12)
    assert delta_for_epsilon(p, q, 0) == max(hockey_stick_exact(p, q, F(1)), hockey_stick_exact(q, p, F(1)))
    # δ(ε*) = 0 and NI-FL-DP holds exactly at ε*, δ(ε) decreasing in ε
    if not a.infinite:
        assert delta_for_epsilon(p, q, a.as_eps()) == 0
        assert ni_fl_dp(p, q, a.as_eps()) == Verdict.HOLDS
        if a.ratio != 1:
            assert ni_fl_dp(p, q, Eps(ratio=(1 + a.ratio) / 2)) == Verdict.VIOLATED
            half = delta_for_epsilon(p, q, Eps(ratio=(1 + a.ratio) / 2))
            assert 0 < half <= delta_for_epsilon(p, q, 0)
            assert ni_fl_dp(p, q, Eps(ratio=(1 + a.ratio) / 2), delta=half) == Verdict.HOLDS


@settings(max_examples=100, deadline=None)
@given(distributions, distributions, st.lists(st.integers(0, 2), min_size=5, max_size=5),
       st.integers(0, 20))
def test_post_processing_never_increases_epsilon_or_delta(p: dict, q: dict, f: list, e10: int) -> None:
    pp, qq = post_process(p, lambda o: f[o]), post_process(q, lambda o: f[o])
    a, b = pure_epsilon(p, q), pure_epsilon(pp, qq)
    assert not b.infinite or a.infinite
    if not a.infinite:
        assert not b.infinite and b.ratio <= a.ratio
    eps = Eps(value=F(e10, 10))
    assert delta_for_epsilon(pp, qq, eps) <= delta_for_epsilon(p, q, eps) + 1e-15

    # a randomised channel: keep with 1/2, else uniform over {0,1,2}
    def kernel(o: int) -> dict:
        return {y: F(1, 6) + (F(1, 2) if y == f[o] else 0) for y in range(3)}

    c = pure_epsilon(apply_channel(p, kernel), apply_channel(q, kernel))
    assert not c.infinite  # full support after the channel
    if not a.infinite:
        assert c.ratio <= a.ratio


def test_hockey_stick_float_path_agrees_with_exact() -> None:
    p = {0: F(1, 2), 1: F(1, 3), 2: F(1, 6)}
    q = {0: F(1, 6), 1: F(1, 3), 2: F(1, 2)}
    for e in [F(0), F(1, 10), F(1, 2), F(1)]:
        v = hockey_stick(p, q, Eps(value=e))
        ref = sum(max(0.0, float(p[o]) - math.exp(float(e)) * float(q[o])) for o in p)
        assert abs(v - ref) < 1e-15
    pf = {k: float(v) for k, v in p.items()}
    qf = {k: float(v) for k, v in q.items()}
    assert abs(hockey_stick(pf, qf, "ln(2)") - float(hockey_stick(p, q, "ln(2)"))) < 1e-15


def test_worst_pair_and_composition() -> None:
    r1 = pure_epsilon(rr(F(2, 3), 0), rr(F(2, 3), 1))
    r2 = pure_epsilon(rr(F(3, 4), 0), rr(F(3, 4), 1))
    rinf = pure_epsilon({0: F(1)}, {1: F(1)})
    assert worst_pair([("a", r1), ("b", r2)])[0] == "b"
    assert worst_pair([("a", r1), ("c", rinf), ("b", r2)])[0] == "c"
    assert worst_pair([]) is None
    # composition: the product of independent RRs has ε = ε1 + ε2 exactly (ratio 2·3 = 6)
    joint0 = product_distribution([rr(F(2, 3), 0), rr(F(3, 4), 0)])
    joint1 = product_distribution([rr(F(2, 3), 1), rr(F(3, 4), 1)])
    assert pure_epsilon(joint0, joint1).ratio == 6
    eps, delta = compose_basic([(r1.as_eps(), F(0)), (r2.as_eps(), F(1, 100))])
    assert eps.ratio == 6 and delta == F(1, 100)
    assert compose_basic([(F(1, 2), 0), (F(1, 3), 0)])[0].value == F(5, 6)
    e, d = compose_advanced(0.1, 0.0, 10, 1e-5)
    assert d == pytest.approx(1e-5)
    assert e == pytest.approx(math.sqrt(20 * math.log(1e5)) * 0.1 + math.expm1(0.1))


sequences = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(1, 5)), min_size=1,
                     max_size=4).map(lambda xs: _seq_dist(xs))


def _seq_dist(xs: list) -> dict:
    total = sum(w for _, _, w in xs)
    out: dict = {}
    for a, b, w in xs:
        out[(a, b)] = out.get((a, b), F(0)) + F(w, total)
    return out


@settings(max_examples=150, deadline=None)
@given(sequences, sequences)
def test_per_round_composition_bounds_joint_epsilon(p: dict, q: dict) -> None:
    from checker.privacy.ni_fl_dp import per_round_epsilons

    joint = pure_epsilon(p, q)
    rounds = per_round_epsilons(p, q)
    assert len(rounds) <= 2
    if any(r.infinite for r in rounds):
        return
    bound = F(1)
    for r in rounds:
        bound *= r.ratio
    assert not joint.infinite and joint.ratio <= bound


def test_per_round_epsilons_of_independent_rounds() -> None:
    from checker.privacy.ni_fl_dp import per_round_epsilons

    p = product_distribution([rr(F(2, 3), 0), rr(F(3, 4), 0)])
    q = product_distribution([rr(F(2, 3), 1), rr(F(3, 4), 1)])
    rounds = per_round_epsilons(p, q)
    assert [r.ratio for r in rounds] == [2, 3]
    assert pure_epsilon(p, q).ratio == 6  # independent rounds: the bound is attained
