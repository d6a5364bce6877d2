"""Secure aggregation as a noise mechanism ([SecAgg-MIA] §4.2, Fig. 1)."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from checker.crossval.gaussian import gaussian_delta
from checker.crossval.secagg import (
    irwin_hall_lattice,
    secagg_curve,
    secagg_epsilon,
    secagg_gaussian_mu,
    secagg_loss_tails,
)


def ih_pdf_exact(x: Fraction, n: int) -> Fraction:
    """The alternating-sum Irwin–Hall density, in exact rational arithmetic."""
    return sum(
        ((-1) ** k * math.comb(n, k) * max(x - k, Fraction(0)) ** (n - 1) for k in range(n + 1)), Fraction(0)
    ) / math.factorial(n - 1)


def ih_cdf_exact(x: Fraction, n: int) -> Fraction:
    return sum(
        ((-1) ** k * math.comb(n, k) * max(x - k, Fraction(0)) ** n for k in range(n + 1)), Fraction(0)
    ) / math.factorial(n)


@pytest.mark.parametrize("n", [2, 3, 7, 30])
def test_irwin_hall_lattice_is_exact(n: int) -> None:
    m = 8
    dens, cdf = irwin_hall_lattice(n, m)
    for i in range(0, n * m + 1, max(1, n // 3)):
        x = Fraction(i, m)
        ref_d = ih_pdf_exact(x, n)
        ref_c = ih_cdf_exact(x, n)
        assert dens[i] == pytest.approx(float(ref_d), rel=1e-12, abs=1e-300)
        assert cdf[i] == pytest.approx(float(ref_c), rel=1e-11, abs=1e-300)


def _uniform_pdf(n: int) -> Callable[[float], float]:
    return lambda z: float(ih_pdf_exact(Fraction(z + n / 2), n)) if -n / 2 < z < n / 2 else 0.0


def _quad_delta(p: Callable[[float], float], q: Callable[[float], float], eps: float, lo: float, hi: float,
                points: list[float]) -> float:
    f = lambda z: max(0.0, p(z) - math.exp(eps) * q(z))  # noqa: E731
    val, _ = integrate.quad(f, lo, hi, points=points, limit=500, epsabs=1e-13, epsrel=1e-11)
    return val


@pytest.mark.parametrize("n", [3, 6])
def test_uniform_d1_matches_numerical_integration(n: int) -> None:
    eps = np.array([0.0, 0.3, 1.0, 2.0])
    c = secagg_curve("uniform", n, 1, eps, interval=1e-3)
    f = _uniform_pdf(n)
    knots = [k - n / 2 for k in range(n + 2)]
    for i, e in enumerate(eps):
        ref = _quad_delta(f, lambda z: f(z - 1.0), e, -n / 2, n / 2 + 1, knots)
        assert c.bracket.lower[i] - 1e-9 <= ref <= c.bracket.upper[i] + 1e-9
        assert c.bracket.upper[i] - ref < 2e-6


@pytest.mark.parametrize("n", [2, 5, 20])
def test_exponential_d1_matches_numerical_integration(n: int) -> None:
    eps = np.array([0.0, 0.5, 1.5, 3.0])
    c = secagg_curve("exponential", n, 1, eps, interval=1e-3)
    p = stats.gamma(n).pdf
    q = lambda z: stats.gamma(n).pdf(z - 4.0)  # noqa: E731
    hi = float(stats.gamma(n).isf(1e-16)) + 8
    for i, e in enumerate(eps):
        # break points: the support edge 4 and the crossing p = e^ε q (where the integrand's kink is)
        r1 = math.expm1((e + 4.0) / (n - 1))
        r2 = math.expm1((-e + 4.0) / (n - 1))
        pts = sorted({4.0, 4.0 + 4.0 / r1, 4.0 + 4.0 / r2, float(n), n + 4.0})
        fwd = _quad_delta(p, q, e, 0.0, hi, pts)
        rev = _quad_delta(q, p, e, 0.0, hi, pts)
        ref = max(fwd, rev)
        assert c.bracket.lower[i] - 1e-9 <= ref <= c.bracket.upper[i] + 1e-9
        assert c.bracket.upper[i] - ref < 2e-6


def test_degenerate_n1() -> None:
    eps = np.array([0.0, 1.0, 5.0])
    np.testing.assert_allclose(secagg_curve("uniform", 1, 1, eps).delta, 1.0)
    c = secagg_curve("exponential", 1, 1, eps)
    np.testing.assert_allclose(c.delta, 1 - math.exp(-4), atol=1e-12)
    assert secagg_loss_tails("exponential", 1).infinity_mass == pytest.approx(1 - math.exp(-4))


def test_delta_rises_with_d_and_tracks_gaussian() -> None:
    """[SecAgg-MIA] Fig. 1: for a given ε, δ increases quickly with d; M is close to the Gaussian
    mechanism."""
    eps = np.array([1.0, 2.0, 4.0])
    for entries in ("uniform", "exponential"):
        prev = np.zeros_like(eps)
        for d in (1, 10, 100):
            c = secagg_curve(entries, 100, d, eps, interval=1e-3)
            assert np.all(c.delta > prev)
            prev = c.delta
            np.testing.assert_allclose(c.gaussian, gaussian_delta(secagg_gaussian_mu(entries, 100, d), eps))
            if entries == "uniform":
                assert np.max(np.abs(c.delta - c.gaussian)) < 0.01
        assert prev[0] > 0.5  # d = 100: weak privacy at ε = 1


def test_composition_consistent_with_two_stage() -> None:
    """d = 4 by one FFT equals composing two d = 2 curves."""
    t = secagg_loss_tails("uniform", 10, 1e-3)
    g = t.to_grid(1e-3, True)
    eps = np.linspace(0, 4, 21)
    np.testing.assert_allclose(
        g.self_compose(4).delta(eps), g.self_compose(2).compose(g.self_compose(2)).delta(eps), atol=1e-9
    )


def test_secagg_epsilon_is_inverse_of_curve() -> None:
    e = secagg_epsilon("uniform", 100, 10, 1e-5)
    c = secagg_curve("uniform", 100, 10, [e, e - 0.05], interval=1e-3, optimistic=False)
    assert c.delta[0] <= 1e-5 + 1e-12 < c.delta[1]
    assert secagg_epsilon("uniform", 10, 1, 0.0) == math.inf  # bounded support: no pure ε


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        secagg_curve("normal", 10, 1, [0.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        secagg_curve("uniform", 0, 1, [0.0])


@pytest.mark.slow
def test_bench_configuration_is_certified_to_1e7() -> None:
    """The benchmark's curve (uniform, n = 100, d = 100, 201 ε) at h = 1.5e-4: certified width ≤ 1e-7,
    and a 4× finer upper curve lies inside the bracket."""
    eps = np.linspace(0.0, 10.0, 201)
    c = secagg_curve("uniform", 100, 100, eps, interval=1.5e-4)
    assert c.bracket.error <= 1e-7
    fine = secagg_curve("uniform", 100, 100, eps, interval=1.5e-4 / 4, optimistic=False)
    assert np.all(fine.delta <= c.bracket.upper + 1e-12)
    assert np.all(fine.delta >= c.bracket.lower - 1e-12)
