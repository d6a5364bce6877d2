"""FFT self-composition of a privacy-loss distribution on a grid, with exponential tilting.

A grid PLD (:class:`checker.crossval.privacy_curves.GridPLD`) holds P-masses ``m_k`` at the losses
``L_k = k·h``; the PLD of the ``T``-fold composition is the ``T``-fold convolution ``m^{*T}`` ([KJH20],
[KH21]), computed here by one real FFT and the ``T``-th power of the spectrum.

Error terms (all enter the *slack* of the result: pessimistic curves add it, optimistic subtract it):

* *window*: the output window ``[b, a]`` comes from Chernoff's inequality ``P(ΣL ≥ a) ≤ e^{−ta} M(t)^T``
  so that at most ``tail_mass`` lies outside on each side; the circular aliasing of that mass moves at
  most ``2·tail_mass`` of probability, and δ is 1-Lipschitz in moved mass;
* *round-off*: the float FFT's error, bounded by the standard normwise estimate
  ``4 u T log2(n) √n`` (``u`` the unit round-off): a heuristic allowance, not a proof (~1e-12 in
  practice), the one ingredient of the brackets that is not rigorous.

Both are absolute errors on the masses, so the computed δ(ε) cannot resolve values below them: a
*floor* (about 1e-14 for d = 100 SecAgg coordinates). **Tilting** removes that floor: for ``θ ≥ 0``
the Esscher transform ``m̃_k = m_k e^{θ L_k} / M(θ)`` (``M(θ) = Σ m_k e^{θ L_k}``) commutes with
convolution, ``(m^{*T})_k = M(θ)^T e^{−θ L_k} (m̃^{*T})_k``, so composing ``m̃`` and tilting back turns
an absolute error ``e`` of the tilted masses into ``e·M(θ)^T e^{−θ L_k}`` at loss ``L_k``. Since δ(ε)
only sums masses at losses ``> ε``, its error is at most ``e_total · M(θ)^T e^{−θ ε}``: an ε-dependent
slack, smallest around the saddle point ``T·(ln M)'(θ) = ε`` (:func:`saddle_tilt`), where the tilted
composition has its bulk. ``θ = 0`` is the plain composition with a constant slack.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.fft
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

__all__ = ["PowerResult", "chernoff_window", "fft_power", "log_mgf", "roundoff_allowance", "saddle_tilt"]


def roundoff_allowance(n: int, times: int) -> float:
    """Heuristic bound on the effect of floating-point FFT round-off on δ (not a proof): relative
    error ~ u·log2(n) per entry, accumulated over ``times`` multiplications and √n entries."""
    u = np.finfo(float).eps
    return float(4.0 * u * times * max(1.0, math.log2(max(n, 2))) * math.sqrt(n))


def log_mgf(losses: FloatArray, masses: FloatArray, t: float) -> float:
    """``ln Σ_k m_k e^{t L_k}`` over the atoms with positive mass (``-inf`` when there are none)."""
    pos = masses > 0
    if not np.any(pos):
        return -math.inf
    v = np.log(masses[pos]) + t * losses[pos]
    mx = float(v.max())
    return mx + math.log(float(np.exp(v - mx).sum()))


def chernoff_window(losses: FloatArray, masses: FloatArray, times: int,
                    tail_mass: float) -> tuple[float, float]:
    """Bounds ``[b, a]`` with ``P(ΣL < b), P(ΣL > a) ≤ tail_mass`` by Chernoff's inequality over a grid
    of orders t (sub-probability masses allowed)."""
    pos = masses > 0
    ls = losses[pos]
    ts = np.geomspace(1e-3, 50.0, 80)
    log_tau = math.log(tail_mass)
    a = min((times * log_mgf(losses, masses, float(t)) - log_tau) / t for t in ts)
    b = max((times * log_mgf(losses, masses, float(-t)) - log_tau) / (-t) for t in ts)
    a = min(a, times * float(ls[-1]))
    b = max(b, times * float(ls[0]))
    return b, a


def saddle_tilt(losses: FloatArray, masses: FloatArray, times: int, eps: float,
                max_tilt: float = 60.0) -> float:
    """The tilt ``θ ∈ [0, max_tilt]`` whose tilted ``times``-fold composition has its mean at ``eps``
    (``times · Σ m̃_k L_k = eps``; 0 when the untilted mean is already above ``eps``): the θ that makes
    the tilted slack ``e^{T ln M(θ) − θ ε}`` smallest (it is the Chernoff exponent's minimiser)."""
    pos = masses > 0
    ls, lm = losses[pos], np.log(masses[pos])

    def mean(t: float) -> float:
        v = lm + t * ls
        w = np.exp(v - v.max())
        return float((w * ls).sum() / w.sum())

    if not len(ls) or times * mean(0.0) >= eps:
        return 0.0
    if times * mean(max_tilt) <= eps:
        return max_tilt
    lo, hi = 0.0, max_tilt
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if times * mean(mid) < eps:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class PowerResult:
    """The composed masses from grid index ``start`` on, the constant slack and the tilted slack
    ``exp(tilt_log_slack − tilt·ε)`` (``-inf``: none)."""

    start: int
    masses: FloatArray
    const_slack: float
    tilt: float
    tilt_log_slack: float


def fft_power(
    losses: FloatArray,
    masses: FloatArray,
    interval: float,
    start: int,
    times: int,
    tail_mass: float = 1e-15,
    tilt: float = 0.0,
) -> PowerResult:
    """``masses^{*times}`` on the grid ``(start + i)·interval`` by one FFT (module docstring); with
    ``tilt > 0`` the tilted masses are composed and the result tilted back."""
    h = interval
    k0 = start
    log_m = 0.0
    m = masses
    if tilt > 0:
        log_m = log_mgf(losses, masses, tilt)
        with np.errstate(divide="ignore"):
            logs = np.log(np.where(masses > 0, masses, 1.0))
            m = np.where(masses > 0, np.exp(logs + tilt * losses - log_m), 0.0)
    lo_abs, hi_abs = chernoff_window(losses, m, times, tail_mass)
    lo = max(math.floor(lo_abs / h), times * k0)
    hi = min(math.ceil(hi_abs / h), times * (k0 + len(m) - 1))
    n_out = hi - lo + 1
    n_fft = scipy.fft.next_fast_len(n_out, real=True)
    if len(m) > n_fft:
        folded = np.zeros(n_fft)
        np.add.at(folded, np.arange(len(m)) % n_fft, m)
    else:
        folded = m
    spec = scipy.fft.rfft(folded, n_fft)
    res = scipy.fft.irfft(spec**times, n_fft)
    shift = (lo - times * k0) % n_fft
    out = np.maximum(np.roll(res, -shift)[:n_out], 0.0)
    truncated = 0.0 if n_out >= times * (len(m) - 1) + 1 else 2.0 * tail_mass
    error = truncated + roundoff_allowance(n_fft, times)
    if tilt <= 0:
        return PowerResult(lo, out, error, 0.0, -math.inf)
    grid = (lo + np.arange(n_out)) * h
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        logs = np.log(np.where(out > 0, out, 1.0))
        back = np.where(out > 0, np.exp(logs + times * log_m - tilt * grid), 0.0)
    # A mass that underflows is below 1e-308: at most n_out of them, far below any slack kept.
    return PowerResult(lo, back, n_out * 1e-300, tilt, math.log(error) + times * log_m)
