"""Gaussian mechanism (incl. correlated noise) and the other closed-form mechanisms used as references.

[SecAgg-MIA] Theorem 4.2 and Proposition 1: for ``G(x) = x + N(0, Σ)`` the test between ``N(x, Σ)`` and
``N(x', Σ)`` has trade-off function ``Φ(Φ⁻¹(1 − α) − Δ_{x,x'})`` with the Mahalanobis distance
``Δ_{x,x'} = ‖Σ^{-1/2}(x − x')‖``; the worst pair maximises ``Δ`` and gives the optimal f-LDP curve
``f_G(α) = Φ(Φ⁻¹(1−α) − Δ)`` and optimal LDP curve (Balle & Wang 2018, Thm. 8 with μ = Δ)
``δ_G(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``.

Also: the Laplace mechanism (scale b, sensitivity s, μ = s/b):
``δ(ε) = 1 − e^{(ε − μ)/2}`` for ``0 ≤ ε ≤ μ`` and 0 beyond; randomized response on one bit with
truth probability p ≥ 1/2: ``δ(ε) = max(0, p − e^ε (1 − p))``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

from checker.crossval.privacy_curves import LossTails

FloatArray = NDArray[np.float64]

__all__ = [
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_grid",
    "gaussian_loss_tails",
    "gaussian_mu",
    "gaussian_tradeoff",
    "laplace_delta",
    "laplace_loss_tails",
    "mahalanobis",
    "mixture_loss",
    "mixture_loss_range",
    "mixture_loss_tails",
    "mixture_tail_values",
    "rr_delta",
    "rr_matrix",
    "worst_case_delta",
]


def _log_ndtr_diff(a: FloatArray, b: FloatArray, eps: FloatArray) -> FloatArray:
    """``Φ(a) − e^ε Φ(b)`` computed stably (a > b + ... whenever the value is positive)."""
    la = special.log_ndtr(a)
    lb = special.log_ndtr(b) + eps
    with np.errstate(over="ignore", invalid="ignore"):
        # Φ(a) (1 − e^{lb − la}); -expm1 keeps relative accuracy when the two are close
        val = np.exp(la) * -np.expm1(np.minimum(lb - la, 0.0))
    return np.where(lb >= la, 0.0, val)


#: Enough halvings of [0, 1] to reach the smallest subnormal float, so that a bracket starting at 0 also
#: resolves a tiny root (e.g. μ ≈ 2.5e-300 for ε = 0, δ = 1e-300).
_BISECTION_STEPS = 1100


def _check_mu(mu: float) -> None:
    if not mu >= 0:  # also rejects NaN
        raise ValueError(f"mu must be >= 0, got {mu!r}")


def _check_delta(delta: float) -> None:
    if not 0 <= delta <= 1:  # also rejects NaN
        raise ValueError(f"delta must be in [0, 1], got {delta!r}")


def gaussian_delta(mu: float, eps: ArrayLike) -> FloatArray:
    """Optimal δ(ε) of the μ-Gaussian mechanism: ``Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` ([SecAgg-MIA]
    Thm. 4.2, [AnalyticGauss] Thm. 8).

    Edge cases: ``mu = 0`` (identical distributions) gives ``max(0, 1 − e^ε)``; ``mu = inf`` (mutually
    singular distributions) gives 1 for every ε; for finite ``mu`` the curve reaches 1 at ``ε = −inf``
    and 0 at ``ε = inf``. A negative or NaN ``mu`` and a NaN ``ε`` raise ``ValueError``.

    >>> round(float(gaussian_delta(1.0, 0.0)[0]), 6)
    0.382925
    >>> gaussian_delta(1.0, [float("-inf"), float("inf")]).tolist()
    [1.0, 0.0]
    >>> gaussian_delta(0.0, [0.0, 1.0]).tolist(), gaussian_delta(float("inf"), [0.0, 1.0]).tolist()
    ([0.0, 0.0], [1.0, 1.0])
    """
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    _check_mu(mu)
    if np.isnan(e).any():
        raise ValueError(f"eps must not be NaN, got {e.tolist()!r}")
    if mu == 0:
        return np.where(e >= 0, 0.0, -np.expm1(e))
    if math.isinf(mu):
        return np.ones_like(e)
    finite = np.where(np.isposinf(e), 0.0, e)  # ε = inf: δ = 0, kept out of the log-space arithmetic
    value = np.clip(_log_ndtr_diff(-finite / mu + mu / 2, -finite / mu - mu / 2, finite), 0.0, 1.0)
    return np.where(np.isposinf(e), 0.0, value)


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest ε ≥ 0 with ``δ_G(ε) ≤ delta`` for the μ-Gaussian mechanism (bisection on the strictly
    decreasing closed form :func:`gaussian_delta`, to 1e-15 absolute below ε = 1 and relative above).

    Edge cases: 0 when ``δ_G(0) ≤ delta`` (``mu = 0``, ``delta = 1``, or a small ``mu``); ``inf`` when no
    finite ε reaches ``delta`` (``delta = 0`` with ``mu > 0``, or ``mu = inf`` with ``delta < 1``).

    >>> round(gaussian_epsilon(1.0, 1e-5), 6)
    4.377178
    >>> gaussian_epsilon(1.0, 0.0), gaussian_epsilon(0.0, 0.0), gaussian_epsilon(float("inf"), 0.5)
    (inf, 0.0, inf)
    """
    _check_mu(mu)
    _check_delta(delta)
    if gaussian_delta(mu, 0.0)[0] <= delta:
        return 0.0
    if delta == 0 or math.isinf(mu):
        return math.inf
    lo, hi = 0.0, 1.0
    while gaussian_delta(mu, hi)[0] > delta:  # ends: δ_G(ε) → 0 as ε → inf, and δ_G(inf) = 0
        hi *= 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if gaussian_delta(mu, mid)[0] > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * max(1.0, hi):
            break
    return hi


def gaussian_mu(eps: float, delta: float) -> float:
    """Largest μ whose Gaussian curve satisfies ``δ_G(ε) ≤ delta`` (bisection to a relative 1e-12; δ_G(ε)
    increases with μ): the calibration inverse of :func:`gaussian_delta` beside :func:`gaussian_epsilon`.

    Edge cases: ``inf`` when every μ satisfies it (``eps = inf`` or ``delta = 1``); 0 when only μ = 0 does
    (``delta = 0`` with a finite ``eps``). A negative or NaN ``eps`` raises ``ValueError``.

    >>> mu = gaussian_mu(1.0, 1e-5)
    >>> round(mu, 6), abs(float(gaussian_delta(mu, 1.0)[0]) - 1e-5) < 1e-12
    (0.268051, True)
    >>> gaussian_mu(float("inf"), 1e-5), gaussian_mu(1.0, 1.0), gaussian_mu(1.0, 0.0)
    (inf, inf, 0.0)
    """
    if not eps >= 0:  # also rejects NaN
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    _check_delta(delta)
    if math.isinf(eps) or delta == 1:
        return math.inf
    if delta == 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while gaussian_delta(hi, eps)[0] <= delta:
        lo, hi = hi, hi * 2
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if gaussian_delta(mid, eps)[0] <= delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return lo


def gaussian_tradeoff(mu: float, alpha: ArrayLike) -> FloatArray:
    """``f_G(α) = Φ(Φ⁻¹(1 − α) − μ)`` ([SecAgg-MIA] Proposition 1)."""
    a = np.clip(np.atleast_1d(np.asarray(alpha, dtype=float)), 0.0, 1.0)
    return stats.norm.cdf(stats.norm.ppf(1.0 - a) - mu)


def mahalanobis(x: ArrayLike, x_prime: ArrayLike, cov: ArrayLike) -> float:
    """``Δ_{x,x'} = sqrt((x − x')ᵀ Σ⁻¹ (x − x'))`` ([SecAgg-MIA] Proposition 1), via a Cholesky solve."""
    diff = np.atleast_1d(np.asarray(x, dtype=float) - np.asarray(x_prime, dtype=float))
    covariance = np.atleast_2d(np.asarray(cov, dtype=float))
    if covariance.shape != (diff.size, diff.size):
        raise ValueError(f"covariance must be {diff.size}x{diff.size}")
    chol = np.linalg.cholesky(covariance)
    z = np.linalg.solve(chol, diff)
    return float(np.sqrt(z @ z))


def worst_case_delta(
    lower: ArrayLike, upper: ArrayLike, cov: ArrayLike
) -> tuple[float, FloatArray, FloatArray]:
    """``Δ = max_{x,x' ∈ [lower, upper]} Δ_{x,x'}`` over a box (eq. 10) and a maximising pair.

    A convex quadratic form is maximised over the difference box ``[−w, w]`` at a vertex: exact for a
    diagonal Σ (all coordinates at opposite ends) and by enumeration of the ``2^{d−1}`` sign patterns for
    d ≤ 16; for larger non-diagonal Σ a local optimum (eigenvector signs + single-flip search).
    """
    lo = np.atleast_1d(np.asarray(lower, dtype=float))
    hi = np.atleast_1d(np.asarray(upper, dtype=float))
    covariance = np.atleast_2d(np.asarray(cov, dtype=float))
    d = lo.size
    w = hi - lo
    prec = np.linalg.inv(covariance)
    if np.allclose(covariance, np.diag(np.diag(covariance))):
        signs = np.ones(d)
    elif d <= 16:
        best, signs = -1.0, np.ones(d)
        for pattern in itertools.product((1.0, -1.0), repeat=d - 1):
            s = np.array((1.0, *pattern))
            v = (s * w) @ prec @ (s * w)
            if v > best:
                best, signs = v, s
    else:
        # d > 16, non-diagonal: maximise sᵀ A s over sign vectors (A = W Σ⁻¹ W, NP-hard in general) by
        # the signs of A's principal eigenvector followed by single-flip local search. Any pair is a
        # valid audit pair, so a non-optimal one only weakens the audit.
        a_mat = (w[:, None] * prec) * w[None, :]
        _, vecs = np.linalg.eigh(a_mat)
        signs = np.where(vecs[:, -1] >= 0, 1.0, -1.0)
        improved = True
        while improved:
            improved = False
            gain = -4.0 * signs * (a_mat @ signs - np.diag(a_mat) * signs)  # change of sᵀAs when flipping i
            i = int(np.argmax(gain))
            if gain[i] > 1e-12:
                signs[i] = -signs[i]
                improved = True
    x = np.where(signs > 0, lo, hi)
    xp = np.where(signs > 0, hi, lo)
    return mahalanobis(x, xp, covariance), x, xp


def gaussian_loss_tails(mu: float, eps: ArrayLike) -> LossTails:
    """Exact tails of ``L = ln dN(0,1)/dN(μ,1)`` at thresholds ``eps``: ``L = μ²/2 − μ z`` so
    ``P(L > ε) = Φ(μ/2 − ε/μ)`` and ``Q(L > ε) = Φ(−μ/2 − ε/μ)``."""
    if not mu > 0 or math.isinf(mu):
        raise ValueError("mu must be finite and > 0")
    e = np.asarray(eps, dtype=float)
    return LossTails(e, special.ndtr(mu / 2 - e / mu), special.ndtr(-mu / 2 - e / mu), 0.0)


def gaussian_grid(mu: float, interval: float, tail: float = 1e-16) -> FloatArray:
    """Grid thresholds ``k·interval`` covering the loss of the μ-Gaussian pair up to ``tail`` mass."""
    z = -stats.norm.ppf(tail)
    lo = mu * mu / 2 - mu * z
    hi = mu * mu / 2 + mu * z
    k = np.arange(math.floor(lo / interval) - 1, math.ceil(hi / interval) + 2)
    return k * interval


def laplace_delta(mu: float, eps: ArrayLike) -> FloatArray:
    """Optimal δ(ε) of the Laplace mechanism with ``μ = sensitivity/scale``: ``1 − e^{(ε−μ)/2}`` on
    ``[0, μ]``, 0 beyond (and ``1 − e^{ε}`` … by symmetry the curve for ε < 0 is ``1 − e^ε (1 − δ(−ε))``)."""
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    pos = np.where(e >= mu, 0.0, -np.expm1((np.minimum(e, mu) - mu) / 2))
    neg = -np.expm1(e) + np.exp(e) * np.where(-e >= mu, 0.0, -np.expm1((np.minimum(-e, mu) - mu) / 2))
    return np.where(e >= 0, pos, neg)


def laplace_loss_tails(mu: float, eps: ArrayLike) -> LossTails:
    """Exact tails of ``L = ln dLap(0,1)/dLap(μ,1) = |z − μ| − |z|`` at thresholds ``eps``.

    ``L = μ`` for z ≤ 0 (mass 1/2 under P), ``μ − 2z`` on [0, μ], ``−μ`` for z ≥ μ; ``L > ε`` iff
    ``z < (μ − ε)/2`` for ε ∈ [−μ, μ)."""
    e = np.asarray(eps, dtype=float)
    zstar = np.clip((mu - e) / 2, 0.0, mu)
    p = np.where(e >= mu, 0.0, np.where(e < -mu, 1.0, stats.laplace.cdf(zstar)))
    q = np.where(e >= mu, 0.0, np.where(e < -mu, 1.0, stats.laplace.cdf(zstar - mu)))
    return LossTails(e, p, q, 0.0)


def rr_matrix(p: float) -> FloatArray:
    """Randomized response on one bit: report the truth with probability p (rows: input, cols: output)."""
    if not 0 <= p <= 1:
        raise ValueError("p must be in [0, 1]")
    return np.array([[p, 1 - p], [1 - p, p]])


def rr_delta(p: float, eps: ArrayLike) -> FloatArray:
    """Optimal δ(ε) of randomized response: ``(p − e^ε (1 − p))⁺ + ((1 − p) − e^ε p)⁺`` (for ε ≥ 0 at
    most one term is positive: ``max(0, p − e^ε (1 − p))`` when p ≥ 1/2)."""
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    x = np.exp(e)
    return np.maximum(p - x * (1 - p), 0.0) + np.maximum((1 - p) - x * p, 0.0)


# ---------------------------------------------------------------------------------------------------
# Subsampled Gaussian pairs (DP-SGD / DP-FedAvg accounting, checker.crossval.accountant)
# ---------------------------------------------------------------------------------------------------

#: Standard-normal quantile beyond which a pair's thresholds stop (P-mass ≤ 1e-30 outside).
TAIL_Z = 11.5


def mixture_loss(mu: float, q: float, x: ArrayLike) -> FloatArray:
    """``ln((1−q) + q e^{μx − μ²/2})``: the privacy loss at ``x`` of the Poisson-subsampled Gaussian
    pair ``((1−q)N(0,1) + q N(μ,1), N(0,1))`` ([ZDW22] Prop. 30, [KJH20] §6); increasing in x."""
    t = mu * np.asarray(x, dtype=float) - mu * mu / 2
    if q >= 1:
        return np.asarray(t, dtype=float)
    return np.logaddexp(math.log1p(-q), math.log(q) + t)


def mixture_loss_tails(mu: float, q: float, eps: ArrayLike, remove: bool = False) -> LossTails:
    """Exact tails of the Poisson-subsampled Gaussian pair at thresholds ``eps``.

    ``remove=False`` (a record added): ``P = (1−q)N(0,1) + qN(μ,1)``, ``Q = N(0,1)``, ``L > ε`` iff
    ``x > x*(ε) = (ln((e^ε − 1 + q)/q) + μ²/2)/μ`` (every x when ``ε ≤ ln(1−q)``), so
    ``P(L > ε) = (1−q)Φ̄(x*) + qΦ̄(x* − μ)`` and ``Q(L > ε) = Φ̄(x*)``. ``remove=True`` swaps P and Q:
    ``L > ε`` iff ``x < x*(−ε)`` (no x when ``ε ≥ −ln(1−q)``), ``P(L > ε) = Φ(x*)``,
    ``Q(L > ε) = (1−q)Φ(x*) + qΦ(x* − μ)``. Φ̄ is evaluated as ``Φ(−x)`` (relative accuracy in the tails).
    """
    e = np.asarray(eps, dtype=float)
    p, qq = mixture_tail_values(mu, q, e, remove)
    return LossTails(e, p, qq, 0.0)


def mixture_tail_values(mu: float, q: float, eps: ArrayLike,
                        remove: bool = False) -> tuple[FloatArray, FloatArray]:
    """``(P(L > ε), Q(L > ε))`` of :func:`mixture_loss_tails`'s pair, aligned with ``eps`` (unsorted)."""
    if not (mu > 0 and math.isfinite(mu)) or not 0 < q <= 1:
        raise ValueError("need 0 < mu < inf and 0 < q <= 1")
    e = np.asarray(eps, dtype=float)
    s = -e if remove else e
    with np.errstate(divide="ignore", invalid="ignore"):
        arg = np.expm1(s) + q
        x = np.where(arg > 0, (np.log(np.where(arg > 0, arg, 1.0)) - math.log(q) + mu * mu / 2) / mu, -np.inf)
    if not remove:
        return (1 - q) * special.ndtr(-x) + q * special.ndtr(mu - x), special.ndtr(-x)
    p = special.ndtr(x)
    return p, (1 - q) * p + q * special.ndtr(x - mu)


def mixture_loss_range(mu: float, q: float, remove: bool = False) -> tuple[float, float]:
    """An interval holding the loss of :func:`mixture_loss_tails`'s pair but for P-mass ≤ ~1e-30."""
    lo = float(mixture_loss(mu, q, -TAIL_Z - mu))
    hi = float(mixture_loss(mu, q, TAIL_Z + mu))
    if q < 1:
        lo = min(lo, math.log1p(-q))
    return (-hi, -lo) if remove else (lo, hi)
