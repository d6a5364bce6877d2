"""``dp secagg``'s certified bracket on the grid n ∈ {10, 16, 100}, d ∈ {1, 4, 100}, ε ∈ [0.5, 40].

d = 1 against the exact δ(ε) computed by mpmath at 50 significant digits (the Irwin–Hall CDF by its
alternating sum at a working precision that absorbs the cancellation, the Gamma CDF by the regularised
incomplete gamma function, the threshold of the monotone loss by bisection): ``lower ≤ exact ≤ upper``
at every point, with no floor, and ε(δ) finite where the exact one is. d > 1: the composition is
checked against the plain direct convolution of the same one-coordinate PLD (sums of non-negative
terms: relative accuracy at every δ, where the FFT has an absolute error), and against laws that must
hold: δ_d ≥ δ_1 (dropping coordinates is post-processing), lower ≤ upper, both non-increasing.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from checker.crossval.curve_conversions import composed_delta
from checker.crossval.secagg import secagg_curve, secagg_epsilon, secagg_loss_tails

EPS = [0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 40.0]
NS = [10, 16, 100]
DIGITS = 50


def _ih(n: int, x: mpmath.mpf, power: int) -> mpmath.mpf:
    """``Σ_k (−1)^k C(n,k) (x − k)_+^power / power!``: the Irwin–Hall CDF (power n) or density (n − 1)."""
    total = mpmath.mpf(0)
    for k in range(int(mpmath.floor(x)) + 1):
        if k > n:
            break
        total += (-1) ** k * mpmath.binomial(n, k) * (x - k) ** power
    return total / mpmath.factorial(power)


def exact_uniform(n: int, eps: float) -> mpmath.mpf:
    """δ(ε) of the uniform-entries pair (y, 1 + y), y the sum of n uniforms on [−½, ½] ([SecAgg-MIA]
    §4.2): on the unshifted variable x ∈ [0, n], P has density f(x), Q f(x − 1); the loss
    ``ln f(x) − ln f(x − 1)`` decreases (log-concavity), so δ = F(x*) − e^ε F(x* − 1) at its root x*
    (with the mass ``F(1)`` where Q = 0 included in F(x*))."""
    with mpmath.workdps(DIGITS + 2 * n):
        e = mpmath.mpf(eps)

        def loss(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.log(_ih(n, x, n - 1)) - mpmath.log(_ih(n, x - 1, n - 1))

        lo, hi = mpmath.mpf(1), mpmath.mpf(n)
        for _ in range(3 * DIGITS + 20):
            mid = (lo + hi) / 2
            if loss(mid) > e:
                lo = mid
            else:
                hi = mid
        x = (lo + hi) / 2
        return +(_ih(n, x, n) - mpmath.exp(e) * _ih(n, x - 1, n))


def exact_exponential(n: int, eps: float) -> mpmath.mpf:
    """δ(ε) of the exponential-entries pairs: ``max`` of (y, 4 + y) and (4 + y, y), y ~ Gamma(n, 1); the
    loss ``(n−1) ln(z/(z−4)) − 4`` decreases in z > 4 (and is +∞ on (0, 4])."""
    with mpmath.workdps(DIGITS + 10):
        e = mpmath.mpf(eps)

        def g(x: mpmath.mpf) -> mpmath.mpf:
            return mpmath.gammainc(n, 0, x, regularized=True) if x > 0 else mpmath.mpf(0)

        x = 4 / mpmath.expm1((e + 4) / (n - 1))  # z* − 4: L(z) > ε iff z < z*
        forward = g(4 + x) - mpmath.exp(e) * g(x)
        reverse = mpmath.mpf(0)
        if e < 4:
            xr = 4 / mpmath.expm1((-e + 4) / (n - 1))  # (4 + y, y): L' > ε iff z > z*(−ε)
            reverse = (1 - g(xr)) - mpmath.exp(e) * (1 - g(4 + xr))
        return max(forward, reverse, mpmath.mpf(0))


EXACT = {"uniform": exact_uniform, "exponential": exact_exponential}


@pytest.mark.slow
@pytest.mark.parametrize("entries", ["uniform", "exponential"])
@pytest.mark.parametrize("n", NS)
def test_d1_bracket_holds_the_exact_delta_everywhere(entries: str, n: int) -> None:
    curve = secagg_curve(entries, n, 1, EPS)  # type: ignore[arg-type]
    for eps, lo, up in zip(EPS, curve.bracket.lower, curve.bracket.upper, strict=True):
        exact = float(EXACT[entries](n, eps))
        assert lo <= exact * (1 + 1e-9) + 1e-300, (eps, lo, exact)
        assert exact <= up * (1 + 1e-9) + 1e-300, (eps, exact, up)
        assert up <= exact * 1.05 + 1e-300, (eps, up, exact)  # no floor: the upper follows the truth


def test_issue_points_lower_not_above_exact_and_the_upper_has_no_floor() -> None:
    curve = secagg_curve("uniform", 100, 1, [3.0, 4.0, 10.0])
    exact = [float(exact_uniform(100, e)) for e in (3.0, 4.0, 10.0)]
    assert exact[0] == pytest.approx(4.65e-16, rel=1e-2)
    for lo, up, ex in zip(curve.bracket.lower, curve.bracket.upper, exact, strict=True):
        assert lo <= ex * (1 + 1e-9) <= up * (1 + 2e-9)
        assert up <= 1.05 * ex
    assert curve.bracket.upper[2] < 1e-40  # was 5.5e-23 above ε ≈ 3.9 (thresholds cut at 1e-21)


def test_epsilon_of_delta_is_finite_where_the_true_one_is() -> None:
    """Exponential entries, n = 16, δ = 1e-5: the true ε is 38.03 (it was reported as ∞)."""
    got = secagg_epsilon("exponential", 16, 1, 1e-5)
    assert math.isfinite(got)
    assert float(exact_exponential(16, got)) <= 1e-5 * (1 + 1e-9)
    assert float(exact_exponential(16, got - 0.05)) > 1e-5
    assert got == pytest.approx(38.03, abs=0.02)


def _direct_power(masses: np.ndarray, times: int) -> np.ndarray:
    out = masses
    for _ in range(times - 1):
        out = np.convolve(out, masses)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("entries", ["uniform", "exponential"])
@pytest.mark.parametrize("n", NS)
def test_composition_matches_the_direct_convolution_at_every_delta(entries: str, n: int) -> None:
    """d = 4: the FFT composition, tilted where its round-off floor would hide δ, against the direct
    convolution of the same one-coordinate pessimistic PLD (cut at loss 60, the rest at +∞): the
    upper curve is never below the plain computation and within a factor 10 of it (its slack, the
    FFT round-off allowance after tilting, at most a factor 4 here at δ ≈ 1e-82: no floor)."""
    h, d = 0.01, 4
    for rev in ((False,) if entries == "uniform" else (False, True)):
        base = secagg_loss_tails(entries, n, h, reverse=rev).to_grid(h, True).cut_above(60.0)  # type: ignore[arg-type]
        ours = composed_delta(base, d, EPS)
        direct = _direct_power(base.grid_masses, d)
        losses = (d * base.start + np.arange(len(direct))) * h
        inf_mass = -math.expm1(d * math.log1p(-base.infinity_mass))
        for eps, got in zip(EPS, ours, strict=True):
            above = losses > eps
            ref = inf_mass + float(np.sum(direct[above] * -np.expm1(eps - losses[above])))
            assert got >= ref * (1 - 1e-9), (eps, got, ref)
            assert got <= ref * 10 + 1e-150, (eps, got, ref)  # its slack: no floor, within a factor 10


@pytest.mark.slow
@pytest.mark.parametrize("entries", ["uniform", "exponential"])
@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("d", [4, 100])
def test_composed_bracket_obeys_the_laws(entries: str, n: int, d: int) -> None:
    curve = secagg_curve(entries, n, d, EPS)  # type: ignore[arg-type]
    lo, up = curve.bracket.lower, curve.bracket.upper
    assert np.all(lo <= up * (1 + 1e-9))
    assert np.all(np.diff(up) <= 1e-12) and np.all(np.diff(lo) <= 1e-12)
    for eps, u in zip(EPS, up, strict=True):
        assert u >= float(EXACT[entries](n, eps)) * (1 - 1e-9)  # δ_d ≥ δ_1 (post-processing)
    positive = up[up > 0]
    assert len(positive) == len(up)  # never 0: the true δ is positive everywhere here
