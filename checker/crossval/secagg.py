"""Secure aggregation as a noise mechanism ([SecAgg-MIA] §4): ``M(x_0) = x_0 + Σ_{i=1}^n x_i``.

The other users' sum ``y = Σ x_i`` is the noise. Two cases of [SecAgg-MIA] Fig. 1, each coordinate
independent (so the d-dimensional curve is the d-fold composition of one coordinate, Corollary 1):

* **exponential entries**: ``x_ij ~ Exp(1)`` so ``y_j ~ Gamma(n, 1)``; ``x_0j`` truncated to ``[0, 4]``.
  Dominating pair per coordinate (Corollary 1): ``P = 0 + y_j``, ``Q = 4 + y_j``; privacy loss
  ``L(z) = (n−1) ln(z/(z−4)) − 4`` for z > 4 and ``+∞`` on ``(0, 4]`` (mass ``P(y_j < 4)``).
* **uniform entries**: ``x_ij ~ U[−1/2, 1/2]`` so ``y_j`` is the shifted Irwin–Hall law with PDF
  ``(1/(n−1)!) Σ_k (−1)^k C(n,k) [(y + n/2 − k)⁺]^{n−1}``; ``x_0j ∈ [−1/2, 1/2]``, so ``P = y_j``,
  ``Q = 1 + y_j``.

The alternating sum is useless in floating point for large n (terms ~1e55 cancel to 1e-12), so the
Irwin–Hall density is evaluated on a lattice by the B-spline recursion
``M_k(x) = (x M_{k−1}(x) + (k − x) M_{k−1}(x − 1))/(k − 1)`` (positive terms only, relative accuracy
~k·u), and the CDF by ``F_n(x) = Σ_{j≥0} M_{n+1}(x − j)`` (also positive terms; the upper tail by
symmetry). Exact tails at the lattice thresholds are then discretised pessimistically / optimistically
(see :mod:`checker.crossval.privacy_curves`).

Gaussian approximation (Theorem 4.1): ``y ≈ N(E y, Σ_y)`` with ``Σ_y = n Var(x) I``, so the worst pair
gives ``μ = √d · width / √(n Var(x))``: ``4√(d/n)`` (exponential) and ``√(12 d / n)`` (uniform).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from checker.crossval.curve_conversions import CurveBracket, compose_bracket, composed_epsilon
from checker.crossval.gaussian import gaussian_delta
from checker.crossval.privacy_curves import DiscretePLD, GridPLD, LossTails

FloatArray = NDArray[np.float64]
Entries = Literal["exponential", "uniform"]

__all__ = [
    "SecAggCurve",
    "irwin_hall_lattice",
    "secagg_curve",
    "secagg_epsilon",
    "secagg_gaussian_mu",
    "secagg_loss_tails",
]

#: Width of the input range of x_0 per coordinate ([SecAgg-MIA] §4.2).
WIDTH = {"exponential": 4.0, "uniform": 1.0}
#: Variance of one entry.
VARIANCE = {"exponential": 1.0, "uniform": 1.0 / 12.0}


def _check(entries: str, n: int, d: int = 1) -> None:
    if entries not in WIDTH:
        raise ValueError(f"entries must be 'exponential' or 'uniform', not {entries!r}")
    if n < 1 or d < 1:
        raise ValueError("n and d must be >= 1")


def irwin_hall_lattice(n: int, m: int) -> tuple[FloatArray, FloatArray]:
    """Density ``M_n`` and CDF ``F_n`` of the (unshifted) Irwin–Hall law of n uniforms on the lattice
    ``x = i/m``, ``i = 0..n·m``, by the stable B-spline recursion (module docstring)."""
    if n < 1 or m < 1:
        raise ValueError("n and m must be >= 1")
    size = (n + 1) * m + 1
    cur = np.zeros(size)
    cur[:m] = 1.0  # M_1 = 1 on [0, 1)
    x = np.arange(size) / m
    dens = cur.copy()
    tmp = np.empty(size)
    for k in range(2, n + 2):
        top = k * m + 1  # M_k vanishes beyond x = k
        prev = cur
        cur = np.zeros(size)
        np.multiply(x[:top], prev[:top], out=cur[:top])
        np.subtract(k, x[m:top], out=tmp[: top - m])
        tmp[: top - m] *= prev[: top - m]
        cur[m:top] += tmp[: top - m]
        cur[:top] *= 1.0 / (k - 1)
        cur[0] = 0.0
        if k == n:
            dens = cur.copy()
    # F_n(i/m) = Σ_j M_{n+1}((i − j m)/m): cumulative sums along each residue class mod m
    pad = (-size) % m
    arr = np.concatenate([cur, np.zeros(pad)]).reshape(-1, m)
    cdf = np.cumsum(arr, axis=0).ravel()[:size]
    # upper half by symmetry F_n(x) = 1 − F_n(n − x) (keeps relative accuracy of the upper tail)
    nm = n * m
    cdf = cdf[: nm + 1]
    half = nm // 2
    idx = np.arange(half + 1, nm + 1)
    cdf[half + 1 :] = 1.0 - cdf[nm - idx]
    if n == 1:
        dens = np.zeros(nm + 1)
        dens[:m] = 1.0
    return dens[: nm + 1], np.clip(cdf, 0.0, 1.0)


def _uniform_tails(n: int, interval: float, tail: float) -> LossTails:
    """Exact tails of the uniform-entries pair ``(y, 1 + y)`` at the lattice thresholds."""
    if n == 1:  # supports [−½, ½] and [½, 3/2] are disjoint: L = +∞ with mass 1
        return LossTails(np.array([0.0]), np.array([1.0]), np.array([0.0]), 1.0)
    slope = 12.0 / n  # |dL/dz| near the centre (= width / Var y)
    m = int(max(64, math.ceil(4.0 * slope / interval)))  # lattice spacing in ε ≈ h/4
    dens, cdf = irwin_hall_lattice(n, m)
    nm = n * m
    i = np.arange(m + 1, nm)  # Q density > 0 needs x > 1, P density > 0 needs x < n
    with np.errstate(divide="ignore"):
        lp = np.log(dens[i])
        lq = np.log(dens[i - m])
    ok = np.isfinite(lp) & np.isfinite(lq)
    p_tail = cdf[i]
    q_tail = cdf[i - m]
    # every lattice point where both densities are positive: cutting the high-loss end (small
    # P-tails) would put δ at the last threshold into the +∞ atom, a floor under the upper curve
    ok &= (p_tail > 0) & (1.0 - p_tail > 0) & (cdf[nm - i] > tail * 1e-3)
    i = i[ok]
    losses = lp[ok] - lq[ok]
    return LossTails(losses, p_tail[ok], q_tail[ok], float(cdf[m]))


def _gamma_x(eps: FloatArray, n: int) -> FloatArray:
    """Inverse of ``L(z) = (n−1) ln(z/(z−4)) − 4`` as ``x = z − 4 = 4/(r − 1)``, ``r = e^{(ε+4)/(n−1)}``
    (``z − 4`` directly: ``4 + x`` would lose ``x`` once it is below ~1e-16)."""
    with np.errstate(divide="ignore"):  # ε = −4 (the reverse pair's top): x = inf, both tails 0
        return np.asarray(4.0 / np.expm1((eps + 4.0) / (n - 1)), dtype=np.float64)


def _gamma_loss(x: float, n: int) -> float:
    """``L`` at ``z = 4 + x``: ``(n−1)(ln(4 + x) − ln x) − 4``."""
    return (n - 1) * (math.log(4.0 + x) - math.log(x)) - 4.0


def _exponential_tails(n: int, interval: float, tail: float, reverse: bool) -> LossTails:
    """Exact tails of the exponential-entries pair ``(y, 4 + y)`` (or reversed) on the grid."""
    if n == 1:  # L = +∞ on (0, 4], −4 beyond: two atoms
        p0 = math.exp(-4.0)
        pld = DiscretePLD(np.array([-4.0]), np.array([p0]), 1.0 - p0)
        if reverse:
            # reverse pair (4 + y, y): P' has no mass where Q' = 0; L' = 4 with P'-mass 1
            pld = DiscretePLD(np.array([4.0]), np.array([1.0]), 0.0)
        return pld.to_tails()
    g = stats.gamma(n)
    x_hi = g.isf(tail) - 4.0  # P(z > 4 + x_hi) <= tail
    x_lo = g.ppf(tail)  # Q(z < 4 + x_lo) <= tail
    e_lo, e_hi = _gamma_loss(x_hi, n), _gamma_loss(x_lo, n)
    if reverse:
        e_lo, e_hi = -e_hi, -e_lo
    k = np.arange(math.floor(e_lo / interval) - 1, math.ceil(e_hi / interval) + 2)
    e: FloatArray = np.asarray(k * interval, dtype=np.float64)
    if not reverse:
        # above e_hi the finite part of δ is below ~tail, but not 0: coarser thresholds up to the loss
        # where Q's tail reaches 1e-300 keep it out of the +∞ atom (no floor under the upper curve)
        e_far = _gamma_loss(max(float(g.ppf(1e-300)), 1e-300), n)
        if e_far > e[-1]:
            step = max(interval, (e_far - e[-1]) / 20000)
            e = np.concatenate([e, e[-1] + step * np.arange(1, math.ceil((e_far - e[-1]) / step) + 1)])
        e = e[e > -4.0]
        x = _gamma_x(e, n)
        return LossTails(e, g.cdf(4.0 + x), g.cdf(x), float(g.cdf(4.0)))
    # reverse: P' = 4 + y, Q' = y, L' = −L(z); L' > ε  iff  z > z*(−ε) (needs −ε > −4)
    e = np.concatenate([e[e < 4.0], [4.0]])  # L' < 4: at 4 both tails are 0 (nothing left for +∞)
    x = _gamma_x(-e, n)
    return LossTails(e, g.sf(x), g.sf(4.0 + x), 0.0)


def secagg_loss_tails(
    entries: Entries, n: int, interval: float = 3e-4, reverse: bool = False, tail: float = 1e-18
) -> LossTails:
    """Exact tails of the one-coordinate dominating pair (``reverse`` swaps P and Q)."""
    _check(entries, n)
    if entries == "uniform":
        return _uniform_tails(n, interval, tail)  # symmetric: the reverse pair has the same PLD
    return _exponential_tails(n, interval, tail, reverse)


def secagg_gaussian_mu(entries: Entries, n: int, d: int) -> float:
    """μ of the Gaussian mechanism with the same covariance (Theorem 4.1 / Proposition 1).

    >>> secagg_gaussian_mu("exponential", 16, 1), round(secagg_gaussian_mu("uniform", 100, 100), 6)
    (1.0, 3.464102)
    """
    _check(entries, n, d)
    return math.sqrt(d) * WIDTH[entries] / math.sqrt(n * VARIANCE[entries])


@dataclass(frozen=True)
class SecAggCurve:
    """δ(ε) of SecAgg with ``lower ≤ δ ≤ upper`` and the Gaussian approximation beside it."""

    entries: str
    n: int
    d: int
    interval: float
    bracket: CurveBracket
    gaussian: FloatArray
    gaussian_mu: float
    plds: tuple[GridPLD, ...]

    @property
    def eps(self) -> FloatArray:
        return self.bracket.eps

    @property
    def delta(self) -> FloatArray:
        """The pessimistic (upper) curve: a certified upper bound."""
        return self.bracket.upper

    def epsilon(self, delta: float) -> float:
        """Certified upper bound on ε(δ): the d-fold composition of each input order's pessimistic
        one-coordinate PLD (``plds``), tilted where δ is below the plain composition's floor."""
        return max(composed_epsilon(p, self.d, delta) for p in self.plds)


def secagg_curve(
    entries: Entries,
    n: int,
    d: int,
    eps: ArrayLike,
    interval: float = 3e-4,
    optimistic: bool = True,
    tail_mass: float = 1e-15,
) -> SecAggCurve:
    """δ(ε) of SecAgg with n other users and model size d at the given ε values.

    Both orders of the worst input pair are composed d times (the exponential case is asymmetric) and
    the maximum is taken (eq. 4 restricted to the pairs of Corollary 1). ``optimistic=False`` skips the
    lower estimate (then ``lower`` is 0).
    """
    _check(entries, n, d)
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    directions = (False,) if entries == "uniform" else (False, True)
    tails = [secagg_loss_tails(entries, n, interval, reverse=rev) for rev in directions]
    bracket, plds = compose_bracket(tails, d, e, interval, tail_mass, optimistic)
    mu = secagg_gaussian_mu(entries, n, d)
    return SecAggCurve(entries, n, d, interval, bracket, gaussian_delta(mu, e), mu, tuple(plds))


def secagg_epsilon(entries: Entries, n: int, d: int, delta: float, interval: float = 1e-3) -> float:
    """Certified upper bound on ε(δ) of SecAgg (pessimistic PLDs of both input orders, composed d times).

    It lies above the Gaussian approximation's ε (Theorem 4.1) for few users:

    >>> from checker.crossval.gaussian import gaussian_epsilon
    >>> certified = secagg_epsilon("uniform", 100, 1, 1e-5)
    >>> round(certified, 4), certified >= gaussian_epsilon(secagg_gaussian_mu("uniform", 100, 1), 1e-5)
    (1.3575, True)
    """
    _check(entries, n, d)
    directions = (False,) if entries == "uniform" else (False, True)
    best = 0.0
    for rev in directions:
        pld = secagg_loss_tails(entries, n, interval, reverse=rev).to_grid(interval, True)
        best = max(best, composed_epsilon(pld, d, delta))
    return best
