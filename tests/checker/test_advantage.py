"""Tests for checker.privacy.advantage: best advantage = TV, threshold attackers, ε bounds vs the seed."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.privacy.advantage import (
    advantage,
    attackers_from_features,
    best_advantage,
    bounds,
    bounds_json,
    seed_theorem1_stated_probability,
    threshold_attacker,
    total_variation,
)
from checker.privacy.ni_fl_dp import Eps, delta_for_epsilon, pure_epsilon

F = Fraction

distributions = st.lists(st.integers(0, 6), min_size=1, max_size=5).filter(lambda ws: sum(ws) > 0).map(
    lambda ws: {i: F(w, sum(ws)) for i, w in enumerate(ws) if w})


def rr(p: Fraction, bit: int) -> dict[int, Fraction]:
    return {bit: p, 1 - bit: 1 - p}


@pytest.mark.parametrize("p", [F(3, 4), F(2, 3), F(9, 10), F(1, 2)])
def test_randomized_response_attains_tight_bound(p: Fraction) -> None:
    d0, d1 = rr(p, 0), rr(p, 1)
    best = best_advantage(d0, d1)
    eps = pure_epsilon(d0, d1)
    assert best.advantage == 2 * p - 1 == total_variation(d0, d1)
    bs = {b.name: b for b in bounds(best.advantage, eps.as_eps())}
    assert bs["tight_pure"].value == best.advantage and bs["tight_pure"].holds
    assert bs["tight_approx"].value == best.advantage  # δ = 0
    assert bs["seed_theorem1_proof_as_bound"].holds
    # the proof's equality Adv = 1 - 1/e^ε fails for ε > 0 (RR attains tanh(ε/2) < 1 - e^-ε)
    assert bs["seed_theorem1_proof"].holds == (p == F(1, 2))
    assert not bs["seed_theorem1_stated"].holds
    assert bs["seed_theorem1_stated"].value == pytest.approx(1 - math.e)
    # RR's likelihood-ratio attacker is symmetric: P_D0(A=0) = P_D1(A=1) (for p = 1/2 it always
    # answers 0, which is not)
    assert best.symmetric == (p != F(1, 2)) and best.correct == max(p, F(1, 2))


def test_seed_stated_probability_is_not_a_probability() -> None:
    v = seed_theorem1_stated_probability()
    assert v == pytest.approx(1 - math.e / 2) and v < 0


def test_asymmetric_attacker_and_lemma() -> None:
    # D0 = {0: 1}, D1 = {0: 1/2, 1: 1/2}; attacker answers 1 iff x = 1
    d0, d1 = {0: F(1)}, {0: F(1, 2), 1: F(1, 2)}
    res = advantage(d0, d1, lambda x: int(x == 1))
    assert res.advantage == F(1, 2) and res.p0_says0 == 1 and res.p1_says1 == F(1, 2)
    assert not res.symmetric  # the seed's symmetry assumption fails
    # Lemma II.2 under the balanced reading holds anyway: Adv = 2 P(correct) - 1
    assert res.advantage == 2 * res.correct - 1
    # but the seed's "replace by symmetry" step would give 2 P_D1(A=1) - 1 = 0 != 1/2
    assert 2 * res.p1_says1 - 1 != res.advantage
    # ε = ∞ here: bounds with ε = ∞ allow everything
    eps = pure_epsilon(d0, d1)
    assert eps.infinite
    assert all(b.holds for b in bounds(res.advantage, eps.as_eps()) if b.kind == "upper bound")


def brute_force_best(d0: dict, d1: dict) -> Fraction:
    outs = sorted(set(d0) | set(d1))
    best = F(0)
    for bits in itertools.product([0, 1], repeat=len(outs)):
        table = dict(zip(outs, bits, strict=True))
        best = max(best, advantage(d0, d1, lambda x, t=table: t[x]).advantage)
    return best


@settings(max_examples=120, deadline=None)
@given(distributions, distributions, st.integers(0, 30))
def test_best_advantage_and_bounds_properties(d0: dict, d1: dict, e10: int) -> None:
    best = best_advantage(d0, d1)
    assert best.advantage == total_variation(d0, d1) == brute_force_best(d0, d1)
    assert best.advantage == 2 * best.correct - 1  # Lemma II.2, balanced reading
    # threshold attackers never beat the likelihood-ratio attacker; on the identity feature with
    # monotone likelihood ratio they may tie
    th = threshold_attacker(d0, d1, lambda x: x, "x")
    assert 0 <= th.advantage <= best.advantage
    # model's pure ε: the tight pure bound holds; the proof's bound holds
    eps = pure_epsilon(d0, d1)
    bs = {b.name: b for b in bounds(best.advantage, eps.as_eps())}
    assert bs["tight_pure"].holds and bs["seed_theorem1_proof_as_bound"].holds and bs["yeom"].holds
    assert not bs["seed_theorem1_stated"].holds
    # any ε with its δ(ε): the tight (ε, δ) bound holds (exactly, with e^ε rational)
    e = Eps(ratio=1 + F(e10, 10))
    delta = delta_for_epsilon(d0, d1, e)
    b2 = {b.name: b for b in bounds(best.advantage, e, delta)}
    assert b2["tight_approx"].holds
    if delta == 0:  # the model is ε-DP at this ε: the pure bound must hold
        assert b2["tight_pure"].holds
    # float ε path agrees with the exact one to 1e-12
    b3 = {b.name: b for b in bounds(float(best.advantage), float(e), float(delta))}
    assert abs(float(b3["tight_approx"].value) - float(b2["tight_approx"].value)) < 1e-12


def test_pure_bound_fails_without_dp() -> None:
    d0, d1 = {0: F(9, 10), 1: F(1, 10)}, {0: F(1, 10), 1: F(9, 10)}
    best = best_advantage(d0, d1).advantage  # 4/5
    bs = {b.name: b for b in bounds(best, "ln(2)", delta_for_epsilon(d0, d1, "ln(2)"))}
    assert not bs["tight_pure"].holds and bs["tight_approx"].holds
    js = bounds_json(list(bs.values()))
    assert set(js["tight_pure"]) >= {"value", "holds"} and js["tight_pure"]["holds"] is False


def test_threshold_attackers_on_features() -> None:
    d0 = {(0, 0): F(1, 2), (1, 0): F(1, 2)}
    d1 = {(0, 1): F(1, 2), (1, 1): F(1, 2)}
    res = attackers_from_features(d0, d1, {"first": lambda x: x[0], "second": lambda x: x[1]})
    names = [r.name for r in res]
    assert names == ["likelihood-ratio", "threshold(first)", "threshold(second)"]
    assert [r.advantage for r in res] == [1, 0, 1]
    assert res[2].description == "answer 1 iff second >= 1"
