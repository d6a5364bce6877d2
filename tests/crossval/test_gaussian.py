"""Gaussian / Laplace closed forms ([SecAgg-MIA] Thm. 4.2, Prop. 1), the Gaussian inverses with their edge
cases, and the discretisation brackets."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from checker.crossval.curve_conversions import delta_from_tradeoff, tradeoff_from_delta_curve
from checker.crossval.gaussian import (
    gaussian_delta,
    gaussian_epsilon,
    gaussian_grid,
    gaussian_loss_tails,
    gaussian_mu,
    gaussian_tradeoff,
    laplace_delta,
    laplace_loss_tails,
    mahalanobis,
    worst_case_delta,
)


def mp_gauss_delta(mu: float, eps: float) -> float:
    """Independent 50-digit evaluation of Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)."""
    mpmath.mp.dps = 50
    m, e = mpmath.mpf(mu), mpmath.mpf(eps)
    return float(mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2))


LogDensity = Callable[[float], float]


def quad_hockey(logp: LogDensity, logq: LogDensity, eps: float, lo: float, hi: float,
                points: list[float] | None = None) -> float:
    """Direct numerical integration of ∫ (p(z) − e^ε q(z))⁺ dz."""
    f = lambda z: max(0.0, math.exp(logp(z)) - math.exp(eps + logq(z)))  # noqa: E731
    val, _ = integrate.quad(f, lo, hi, points=points, limit=400, epsabs=1e-14, epsrel=1e-12)
    return val


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.0, 5.0])
def test_gaussian_closed_form_to_1e12(mu: float) -> None:
    eps = np.linspace(0, 10, 41)
    got = gaussian_delta(mu, eps)
    ref = np.array([mp_gauss_delta(mu, e) for e in eps])
    np.testing.assert_allclose(got, ref, atol=1e-12, rtol=0)
    # and by direct integration of the two densities (independent of the closed form)
    for e in (0.0, 0.7, 2.0):
        q = quad_hockey(stats.norm(0, 1).logpdf, stats.norm(mu, 1).logpdf, e, -40, 40, points=[0, mu])
        assert gaussian_delta(mu, e)[0] == pytest.approx(q, abs=1e-10)


def test_gaussian_tails_are_exact_at_thresholds() -> None:
    for mu in (0.3, 1.0, 3.0):
        t = gaussian_loss_tails(mu, np.linspace(0, 5, 51))
        np.testing.assert_allclose(t.delta(), gaussian_delta(mu, t.eps), atol=1e-13)


@pytest.mark.parametrize("mu", [0.2, 1.0, 3.0])
def test_laplace_closed_form_to_1e12(mu: float) -> None:
    eps = np.linspace(-2, mu + 1, 37)
    t = laplace_loss_tails(mu, eps)
    np.testing.assert_allclose(t.delta(), laplace_delta(mu, eps), atol=1e-12)
    for e in (0.0, mu / 3, mu / 2):
        q = quad_hockey(stats.laplace(0, 1).logpdf, stats.laplace(mu, 1).logpdf, e, -60, 60, points=[0, mu])
        assert laplace_delta(mu, e)[0] == pytest.approx(q, abs=1e-10)


def test_gaussian_epsilon_inverts() -> None:
    for mu in (0.5, 1.0, 4.0):
        for d in (1e-2, 1e-5, 1e-9):
            e = gaussian_epsilon(mu, d)
            assert gaussian_delta(mu, e)[0] == pytest.approx(d, rel=1e-9)
    assert gaussian_epsilon(1.0, 0.0) == math.inf
    assert gaussian_epsilon(1.0, 0.5) == 0.0


INF = math.inf
MU_GRID = (0.0, 1e-8, 0.1, 1.0, 4.0, 30.0, 1e4, INF)
DELTA_GRID = (0.0, 1e-300, 1e-12, 1e-5, 0.1, 0.5, 1.0 - 1e-12, 1.0)
EPS_GRID = (0.0, 1e-8, 0.3, 1.0, 10.0, 200.0, INF)


def test_gaussian_delta_edges() -> None:
    """μ at 0 (identical distributions) and ∞ (mutually singular), ε at ±∞, for every μ."""
    assert gaussian_delta(0.0, [0.0, 1.0, INF]).tolist() == [0.0, 0.0, 0.0]
    assert gaussian_delta(0.0, [-1.0])[0] == pytest.approx(1 - math.exp(-1.0), rel=1e-15)
    assert gaussian_delta(INF, [-INF, 0.0, 1e300, INF]).tolist() == [1.0] * 4
    for mu in (1e-8, 0.1, 1.0, 30.0, 1e4):
        assert gaussian_delta(mu, [-INF, INF]).tolist() == [1.0, 0.0], mu
        assert gaussian_delta(mu, 1e300)[0] == 0.0


@pytest.mark.parametrize(
    "call, value",
    [
        (lambda: gaussian_delta(-1.0, 0.0), "-1.0"),
        (lambda: gaussian_delta(math.nan, 0.0), "nan"),
        (lambda: gaussian_delta(1.0, [0.0, math.nan]), "nan"),
        (lambda: gaussian_epsilon(-0.5, 0.1), "-0.5"),
        (lambda: gaussian_epsilon(math.nan, 0.1), "nan"),
        (lambda: gaussian_epsilon(1.0, 1.5), "1.5"),
        (lambda: gaussian_epsilon(1.0, -1e-3), "-0.001"),
        (lambda: gaussian_epsilon(1.0, math.nan), "nan"),
        (lambda: gaussian_mu(-2.0, 0.1), "-2.0"),
        (lambda: gaussian_mu(math.nan, 0.1), "nan"),
        (lambda: gaussian_mu(1.0, 2.0), "2.0"),
        (lambda: gaussian_mu(1.0, math.nan), "nan"),
    ],
)
def test_invalid_arguments_are_named_with_their_value(call: Callable[[], object], value: str) -> None:
    with pytest.raises(ValueError, match=value):
        call()


def test_gaussian_epsilon_edges() -> None:
    assert gaussian_epsilon(0.0, 0.0) == 0.0  # identical distributions: (0, 0)-DP
    assert gaussian_epsilon(1.0, 1.0) == gaussian_epsilon(INF, 1.0) == 0.0  # δ = 1 holds for any ε
    assert gaussian_epsilon(1.0, 0.0) == gaussian_epsilon(INF, 0.0) == INF
    assert gaussian_epsilon(INF, 0.5) == gaussian_epsilon(INF, 1.0 - 1e-12) == INF
    # a large but finite μ has a finite ε (about μ²/2 + μ·Φ⁻¹(1 − δ))
    e = gaussian_epsilon(1e4, 1e-5)
    assert math.isfinite(e) and 1e4**2 / 2 < e < 1e4**2 / 2 + 1e4 * 5
    assert gaussian_delta(1e4, e)[0] <= 1e-5


def test_gaussian_mu_edges() -> None:
    assert gaussian_mu(INF, 0.0) == gaussian_mu(INF, 1e-5) == INF
    assert gaussian_mu(0.0, 1.0) == gaussian_mu(3.0, 1.0) == INF
    assert gaussian_mu(0.0, 0.0) == gaussian_mu(5.0, 0.0) == 0.0
    # at ε = 0 the closed form is 2Φ(μ/2) − 1, so μ = 2Φ⁻¹((1 + δ)/2)
    assert gaussian_mu(0.0, 0.1) == pytest.approx(2 * stats.norm.ppf(0.55), rel=1e-10)


def _round_trip_rel(mu: float, delta: float) -> float:
    """Relative accuracy of a round trip: tight where the closed form keeps full precision, looser for
    δ near the smallest floats or μ near 0, where δ_G itself is accurate to about 1e-6."""
    return 1e-9 if 1e-12 <= delta <= 0.5 and 0.1 <= mu <= 30 else 1e-4


@pytest.mark.parametrize("mu", MU_GRID)
@pytest.mark.parametrize("delta", DELTA_GRID)
def test_epsilon_round_trip_over_grid_with_edges(mu: float, delta: float) -> None:
    """ε = gaussian_epsilon(μ, δ) is the smallest ε ≥ 0 with δ_G(ε) ≤ δ, and gaussian_mu gives μ back;
    ε = inf exactly in the two documented cases."""
    eps = gaussian_epsilon(mu, delta)
    if eps == INF:
        assert (delta == 0 and mu > 0) or (mu == INF and delta < 1)
        return
    assert gaussian_delta(mu, eps)[0] <= delta
    if eps == 0:
        return
    if eps * 1e-6 > 1e-15:  # a smaller ε (beyond the bisection's resolution) misses δ
        assert gaussian_delta(mu, eps * (1 - 1e-6))[0] > delta
    assert gaussian_mu(eps, delta) == pytest.approx(mu, rel=_round_trip_rel(mu, delta))


@pytest.mark.parametrize("eps", EPS_GRID)
@pytest.mark.parametrize("delta", DELTA_GRID)
def test_mu_round_trip_over_grid_with_edges(eps: float, delta: float) -> None:
    """μ = gaussian_mu(ε, δ) is the largest μ with δ_G(ε) ≤ δ, and gaussian_epsilon gives ε back;
    μ = inf exactly when every μ satisfies δ, μ = 0 exactly when only μ = 0 does."""
    mu = gaussian_mu(eps, delta)
    if mu == INF:
        assert eps == INF or delta == 1
        return
    if mu == 0:
        assert delta == 0
        return
    assert gaussian_delta(mu, eps)[0] <= delta
    assert gaussian_delta(mu * (1 + 1e-6), eps)[0] > delta
    back = gaussian_epsilon(mu, delta)
    rel = _round_trip_rel(mu, delta)
    assert back <= eps * (1 + rel) + 1e-15  # δ_G(ε) ≤ δ at this μ, so its smallest such ε is ≤ ε
    if eps == 0:
        assert back == 0
    elif delta <= 0.5:  # near δ = 1 the curve is flat and ε is ill-conditioned in float64
        assert back == pytest.approx(eps, rel=rel)


@settings(max_examples=15, deadline=None)
@given(st.floats(0.05, 5.0))
def test_gaussian_tradeoff_is_tradeoff_and_dual(mu: float) -> None:
    a = np.linspace(0, 1, 2001)
    f = gaussian_tradeoff(mu, a)
    assert np.all(f <= 1 - a + 1e-12)
    assert np.all(np.diff(f) <= 1e-15)
    assert np.all(np.diff(f, 2) >= -1e-12)
    eps = np.linspace(0, 3, 7)
    # conjugate of f_G is δ_G (Dong et al. Prop. 2.12); sampled sup is a lower estimate
    approx = delta_from_tradeoff(a, f, eps)
    exact = gaussian_delta(mu, eps)
    assert np.all(approx <= exact + 1e-12)
    np.testing.assert_allclose(approx, exact, atol=2e-3)
    # f from the δ-curve family equals f_G (up to sampling of ε)
    e_grid = np.linspace(0, 12, 1201)
    a = a[::4]
    f = f[::4]
    f2 = tradeoff_from_delta_curve(e_grid, gaussian_delta(mu, e_grid), a)
    assert np.all(f2 <= f + 1e-9)
    np.testing.assert_allclose(f2[1:], f[1:], atol=5e-3)  # α = 0 needs ε → ∞


def test_mahalanobis_and_worst_case_pair() -> None:
    rng = np.random.default_rng(3)
    for d in (1, 2, 4):
        a = rng.normal(size=(d, d))
        cov = a @ a.T + 0.5 * np.eye(d)
        lo, hi = np.zeros(d), rng.uniform(0.5, 2.0, d)
        delta, x, xp = worst_case_delta(lo, hi, cov)
        best = 0.0
        corners = list(itertools.product(*zip(lo, hi, strict=True)))
        for c1 in corners:
            for c2 in corners:
                diff = np.array(c1) - np.array(c2)
                best = max(best, math.sqrt(diff @ np.linalg.solve(cov, diff)))
        assert delta == pytest.approx(best, rel=1e-12)
        assert mahalanobis(x, xp, cov) == pytest.approx(delta, rel=1e-12)


@pytest.mark.parametrize("mu1,d", [(0.5, 1), (0.3, 16), (0.2, 100)])
def test_bracket_and_composition_match_mu_sqrt_d(mu1: float, d: int) -> None:
    """Pessimistic ≥ closed form (μ√d) ≥ optimistic, errors shrink as h refines, pessimistic error O(h²)."""
    eps = np.linspace(0, 6, 61) + 0.00051  # off the grids, so that d = 1 is not trivially exact
    exact = gaussian_delta(mu1 * math.sqrt(d), eps)
    widths, perrs, oerrs = [], [], []
    for h in (4e-3, 2e-3, 1e-3):
        tails = gaussian_loss_tails(mu1, gaussian_grid(mu1, h))
        pess = tails.to_grid(h, True).self_compose(d)
        opt = tails.to_grid(h, False).self_compose(d)
        up, lo = pess.delta(eps), opt.delta(eps)
        assert np.all(up >= exact - 1e-13)
        assert np.all(lo <= exact + 1e-13)
        widths.append(float(np.max(up - lo)))
        perrs.append(float(np.max(up - exact)))
        oerrs.append(float(np.max(exact - lo)))
    assert widths[0] > widths[1] > widths[2]
    # both sides second order (h/4 gives ~1/16; first order would give 1/4)
    assert perrs[2] < perrs[0] / 6
    assert oerrs[2] < oerrs[0] / 6
    assert perrs[2] < 5e-6 and oerrs[2] < 5e-6
    # the first-order optimistic alternative (round every loss down) is valid but much wider
    rd = gaussian_loss_tails(mu1, gaussian_grid(mu1, 1e-3)).to_grid(1e-3, False, method="round")
    rounded = rd.self_compose(d).delta(eps)
    assert np.all(rounded <= exact + 1e-13)
    assert float(np.max(exact - rounded)) > 10 * oerrs[2]


@settings(max_examples=20, deadline=None)
@given(
    st.floats(0.1, 2.0),
    st.sampled_from([2e-3, 5e-3, 1e-2]),
    st.integers(1, 8),
    st.booleans(),
    st.booleans(),
)
def test_discretised_curves_are_privacy_curves(mu: float, h: float, d: int, pess: bool, lap: bool) -> None:
    """Every discretised, composed estimate is itself a valid PLD: δ non-increasing and convex in e^ε, and
    its trade-off function is a trade-off function (convex, non-increasing, f(α) ≤ 1 − α)."""
    if lap:
        tails = laplace_loss_tails(mu, np.arange(-mu - 2 * h, mu + 2 * h, h))
    else:
        tails = gaussian_loss_tails(mu, gaussian_grid(mu, h))
    pld = tails.to_grid(h, pess).self_compose(d)
    x = np.linspace(0.05, 10.0, 500)
    dl = pld.delta(np.log(x))
    assert np.all(np.diff(dl) <= 1e-12)
    assert np.all(np.diff(dl, 2) >= -1e-9)
    a = np.linspace(0, 1, 401)
    f = pld.tradeoff(a)
    assert np.all(f <= 1 - a + 1e-9)
    assert np.all(np.diff(f) <= 1e-12)
    assert np.all(np.diff(f, 2) >= -1e-9)
    # and it sits on the right side of the exact curve (known in closed form for composed Gaussians
    # and for one Laplace)
    if lap and d > 1:
        return
    exact = laplace_delta(mu, np.log(x)) if lap else gaussian_delta(mu * math.sqrt(d), np.log(x))
    if pess:
        assert np.all(dl >= exact - 1e-12)
    else:
        assert np.all(dl <= exact + 1e-12)


def test_worst_case_pair_local_search_in_high_dimension() -> None:
    """d > 16 with correlated Σ: the returned pair beats every random sign pattern and every single flip."""
    rng = np.random.default_rng(5)
    d = 24
    a = rng.normal(size=(d, d))
    cov = a @ a.T / d + 0.2 * np.eye(d)
    hi = rng.uniform(0.5, 1.5, d)
    delta, x, xp = worst_case_delta(np.zeros(d), hi, cov)
    assert mahalanobis(x, xp, cov) == pytest.approx(delta, rel=1e-12)
    prec = np.linalg.inv(cov)
    s = np.sign(xp - x)
    best = s @ (hi[:, None] * prec * hi[None, :]) @ s
    for _ in range(2000):
        r = rng.choice([-1.0, 1.0], d)
        assert r @ (hi[:, None] * prec * hi[None, :]) @ r <= best + 1e-9
    for i in range(d):
        f = s.copy()
        f[i] = -f[i]
        assert f @ (hi[:, None] * prec * hi[None, :]) @ f <= best + 1e-9
