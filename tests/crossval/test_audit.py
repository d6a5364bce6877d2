"""Likelihood-ratio audits ([SecAgg-MIA] eq. 8-11): valid lower bounds, power, parsing."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from checker.crossval.audit import (
    Mechanism,
    audit,
    clopper_pearson_upper,
    eps_lower_bound,
    gaussian_mechanism,
    laplace_mechanism,
    parse_mechanism,
    rr_mechanism,
    secagg_mechanism,
)
from checker.crossval.gaussian import gaussian_epsilon
from checker.errors import InputError


def test_clopper_pearson_coverage_and_values() -> None:
    # k = 0: the bound solves (1 - p)^n = alpha
    assert clopper_pearson_upper(0, 100, 0.05)[0] == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-10)
    assert clopper_pearson_upper(100, 100, 0.05)[0] == 1.0
    # empirical coverage over many binomial draws is at least the nominal level
    rng = np.random.default_rng(0)
    p, n, alpha = 0.13, 200, 0.1
    k = rng.binomial(n, p, size=4000)
    cover = np.mean(clopper_pearson_upper(k, n, alpha) >= p)
    assert cover >= 1 - alpha - 0.01


def test_eps_lower_bound_formula() -> None:
    # RR(3/4) achieves FPR = FNR = 1/4: ε ≥ ln 3 exactly
    assert eps_lower_bound(0.25, 0.25)[0] == pytest.approx(math.log(3), abs=1e-15)
    assert eps_lower_bound(0.5, 0.5)[0] == 0.0
    assert eps_lower_bound(0.0, 0.5)[0] == math.inf
    assert eps_lower_bound(0.2, 0.3, delta=0.1)[0] == pytest.approx(math.log(max(0.7 / 0.3, 0.6 / 0.2)))


def test_audited_lower_bounds_never_exceed_exact_epsilon_over_many_seeds() -> None:
    cases: list[tuple[Mechanism, float, float]] = [
        (rr_mechanism(Fraction(3, 4)), 0.0, math.log(3)),
        (rr_mechanism(Fraction(9, 10)), 0.0, math.log(9)),
        (laplace_mechanism(1.0), 0.0, 1.0),
        (laplace_mechanism(0.5), 0.0, 2.0),
        (gaussian_mechanism(1.0), 1e-3, gaussian_epsilon(1.0, 1e-3)),
        (gaussian_mechanism(2.0, d=3), 1e-2, gaussian_epsilon(2.0, 1e-2)),
    ]
    for mech, delta, exact in cases:
        for seed in range(25):
            for method in ("exact", "gaussian"):
                # at confidence 1 − 1e-5 a violation over these 300 audits has probability ≤ 0.3 %
                r = audit(mech, trials=2000, confidence=1 - 1e-5, delta=delta, seed=seed, method=method)
                assert r.eps_lower <= exact + 1e-12, (mech.name, seed, method, r.eps_lower, exact)


def test_confidence_level_is_honoured() -> None:
    """At confidence C the bound exceeds the exact ε in at most a fraction 1 − C of the seeds."""
    mech = rr_mechanism(Fraction(3, 4))
    over = [audit(mech, trials=1000, confidence=0.8, seed=s).eps_lower > math.log(3) for s in range(300)]
    assert np.mean(over) <= 0.2


def test_audit_is_powerful_when_given_many_trials() -> None:
    r = audit(rr_mechanism(Fraction(3, 4)), trials=200_000, confidence=0.95, seed=1)
    assert 0.9 * math.log(3) < r.eps_lower <= math.log(3)
    r = audit(laplace_mechanism(1.0), trials=200_000, confidence=0.95, seed=1)
    assert 0.8 < r.eps_lower <= 1.0
    g = audit(gaussian_mechanism(1.0), trials=100_000, confidence=0.95, delta=1e-2, seed=2, method="gaussian")
    assert 0.6 * gaussian_epsilon(1.0, 1e-2) < g.eps_lower <= gaussian_epsilon(1.0, 1e-2)


def test_seeded_and_reproducible() -> None:
    m = parse_mechanism("secagg:uniform:n=10:d=2")
    a = audit(m, trials=500, seed=7)
    b = audit(m, trials=500, seed=7)
    assert a.eps_lower == b.eps_lower and a.fpr == b.fpr
    assert a.pair == ([-0.5, -0.5], [0.5, 0.5])


def test_tradeoff_upper_points_are_above_true_tradeoff() -> None:
    """For the Gaussian mechanism the audited (FPR_up, FNR_up) lie above f_G (Proposition 1)."""
    r = audit(gaussian_mechanism(1.5), trials=20_000, seed=3)
    f = stats.norm.cdf(stats.norm.ppf(1 - r.points_fpr) - 1.5)
    assert np.all(f <= r.points_fnr + 1e-12)


def test_secagg_audit_below_certified_curve() -> None:
    m = secagg_mechanism("exponential", 10, 2)
    for seed in range(3):
        r = audit(m, trials=3000, delta=1e-3, seed=seed)
        assert r.reference_eps is not None
        assert r.eps_lower <= r.reference_eps


@pytest.mark.parametrize(
    "text,column",
    [
        ("gaussian:mu=x", 13),
        ("foo:bar=1", 1),
        ("rr:p=3/0", 6),
        ("secagg:normal:n=3", 8),
        ("gaussian", 9),
        ("laplace:b=1:zz", 13),
    ],
)
def test_parse_errors_name_column(text: str, column: int) -> None:
    with pytest.raises(InputError) as info:
        parse_mechanism(text)
    assert info.value.position is not None
    assert info.value.position.column == column


def test_parse_accepts_documented_forms() -> None:
    assert parse_mechanism("gaussian:mu=1").name == "gaussian:mu=1:d=1"
    assert parse_mechanism("rr:p=3/4").name == "rr:p=3/4"
    assert parse_mechanism("laplace:b=1").name.startswith("laplace")
    assert parse_mechanism("secagg:uniform:n=10:d=1").name == "secagg:uniform:n=10:d=1"
