"""[SNJ23]'s one-run audit bound (:mod:`checker.crossval.audit_one_run`): the published example, the pure-DP
case against the binomial tail, and a law: simulated ε-DP randomized-response guesses never give a
lower bound above ε more often than the confidence allows."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from checker.crossval.audit_one_run import epsilon_lower_bound, one_run_audit, p_value


def test_published_example_of_appendix_d() -> None:
    assert epsilon_lower_bound(1000, 100, 75, 1e-4, 0.95) == pytest.approx(0.673, abs=5e-4)


@pytest.mark.parametrize(("r", "v", "eps"), [(100, 60, 0.0), (100, 90, 1.5), (50, 50, 3.0), (10, 3, 0.2)])
def test_pure_dp_p_value_is_the_binomial_tail(r: int, v: int, eps: float) -> None:
    q = math.exp(eps) / (1 + math.exp(eps))
    assert p_value(1000, r, v, eps, 0.0) == pytest.approx(float(stats.binom.sf(v - 1, r, q)), rel=1e-12)


def test_delta_term_brute_force() -> None:
    """The δ term ``2mδ·max_i P[v − i ≤ B < v]/i`` by a plain loop over i."""
    m, r, v, eps, delta = 500, 80, 66, 1.0, 1e-4
    q = 1 / (1 + math.exp(-eps))
    alpha = max(sum(stats.binom.pmf(v - j, r, q) for j in range(1, i + 1)) / i for i in range(1, v + 1))
    expected = float(stats.binom.sf(v - 1, r, q)) + alpha * delta * 2 * m
    assert p_value(m, r, v, eps, delta) == pytest.approx(expected, rel=1e-10)


def test_bound_is_monotone_in_correct_guesses_and_zero_at_chance() -> None:
    bounds = [epsilon_lower_bound(1000, 100, v, 1e-5, 0.95) for v in range(50, 101, 5)]
    assert bounds[0] == 0.0 and all(a <= b for a, b in itertools.pairwise(bounds))


def test_randomized_response_guesses_respect_the_confidence() -> None:
    """Canaries seen through ε-DP randomized response (ε = 1): over 200 audits, the bound exceeds ε in
    at most about 5 % of them (binomial 99.9 % upper limit)."""
    rng = np.random.default_rng(3)
    eps, m, exceed = 1.0, 400, 0
    keep = math.exp(eps) / (1 + math.exp(eps))
    for _ in range(200):
        included = rng.random(m) < 0.5
        seen = np.where(rng.random(m) < keep, included, ~included)
        scores = seen + 1e-3 * rng.random(m)  # ties broken at random
        if one_run_audit(scores, included, 0.95, 0.0).epsilon_lower > eps:
            exceed += 1
    assert exceed <= stats.binom.ppf(0.999, 200, 0.05)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        p_value(10, 20, 5, 1.0, 0.0)
    with pytest.raises(ValueError):
        epsilon_lower_bound(10, 5, 5, 0.0, 1.0)
    with pytest.raises(ValueError):
        one_run_audit([1.0, math.nan], [True, False], 0.95, 0.0)
