"""Discretisation of a pair's exact loss tails (:class:`checker.crossval.privacy_curves.LossTails`) onto
a regular grid: pessimistic by connect-the-dots, optimistic by merging cells or rounding losses down
(the guarantees are stated in :mod:`checker.crossval.privacy_curves`'s docstring)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from checker.crossval.privacy_curves import LossTails

__all__ = ["Grid", "cells", "connect_dots", "merge", "round_down"]

FloatArray = NDArray[np.float64]
#: A discretised pair: ``(start, masses, infinity_mass, slack)``, the P-masses at ``(start + i)·h``
#: (:class:`checker.crossval.privacy_curves.GridPLD` is built from it).
Grid = tuple[int, FloatArray, float, float]



def connect_dots(t: LossTails, h: float) -> Grid:
    """Pessimistic discretisation by connect-the-dots ([ConnectDots]): a dominating pair on the grid."""
    # Stage 1: every cell (t_{i-1}, t_i] of the exact thresholds is split onto its two end points so
    # that both its P-mass and its Q-mass are kept (the chord of the convex curve x -> δ(ln x)); the
    # cell below t_0 goes to t_0 and to a Q-only atom (loss −∞), the finite part above t_m to t_m and
    # to +∞. All quantities are non-negative sums: no second differences, no cancellation.
    th = t.eps
    x = np.exp(th)
    dp = np.maximum(-np.diff(t.p_tail), 0.0)
    dq = np.maximum(-np.diff(t.q_tail), 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        up = (dp - x[:-1] * dq) / (x[:-1] * np.expm1(np.diff(th)))
    up = np.clip(np.nan_to_num(up, nan=0.0, posinf=0.0), 0.0, dq)
    qmass = np.zeros(len(th))
    qmass[1:] += up
    qmass[:-1] += dq - up
    qmass[0] += (1.0 - t.p_tail[0]) / x[0]
    qmass[-1] += t.q_tail[-1]
    inf_mass = float(max(t.p_tail[-1] - x[-1] * t.q_tail[-1], t.infinity_mass))
    # Stage 2: each atom (loss λ, Q-mass w) is split onto the grid points k·h ≤ λ < (k+1)·h keeping
    # both masses (again a chord, hence dominating); exact when λ is a grid point.
    kf = th / h
    k = np.floor(kf + 1e-9)
    frac = np.clip(th - k * h, 0.0, h)
    upper_q = qmass * np.expm1(frac) / np.expm1(h)
    lower_q = qmass - upper_q
    k = k.astype(np.int64)
    k_lo = int(k[0])
    n = int(k[-1]) - k_lo + 2
    masses = np.zeros(n)
    np.add.at(masses, k - k_lo, lower_q * np.exp(k * h))
    np.add.at(masses, k - k_lo + 1, upper_q * np.exp((k + 1) * h))
    return k_lo, masses, inf_mass, 0.0


def round_down(t: LossTails, h: float) -> Grid:
    """Optimistic discretisation by rounding every loss down to the grid (first order)."""
    e = t.eps
    cell = np.empty(len(e))
    cell[:-1] = t.p_tail[:-1] - t.p_tail[1:]  # P(eps_i < L <= eps_{i+1})
    cell[-1] = t.p_tail[-1] - t.infinity_mass  # finite part above the last threshold
    cell = np.maximum(cell, 0.0)
    kk = np.floor(e / h).astype(np.int64)
    k_lo = int(kk[0]) - 1
    k_hi = int(kk[-1])
    masses = np.zeros(k_hi - k_lo + 1)
    np.add.at(masses, kk - k_lo, cell)
    masses[0] += t.lower_mass  # L <= eps[0], unbounded below: placed at one cell lower (slack)
    return k_lo, masses, t.infinity_mass, t.lower_mass


def cells(t: LossTails) -> tuple[FloatArray, FloatArray, FloatArray]:
    """P- and Q-masses of the quantisation cells ``(t_0, t_1], …, (t_{m−1}, t_m], (t_m, ∞)`` (finite
    part) and the lowest loss each cell can hold (its lower threshold). The cell ``(−∞, t_0]`` is
    left out: its mass ``1 − P(L > t_0)`` is a difference of numbers close to 1 (absolute error
    ~1e-16, far above its true size when the thresholds cover the distribution), and leaving a
    P-mass out only lowers every composed δ (each term of the composed δ is ≥ 0)."""
    p = np.concatenate([-np.diff(t.p_tail), [t.p_tail[-1] - t.infinity_mass]])
    q = np.concatenate([-np.diff(t.q_tail), [t.q_tail[-1]]])
    return np.maximum(p, 0.0), np.maximum(q, 0.0), t.eps.copy()


def merge(t: LossTails, h: float) -> Grid:
    """Optimistic discretisation by quantisation and merging (second order): a dominated pair."""
    # 1. Quantise the outcome by the thresholds (a deterministic post-processing: the cell pair is
    #    dominated by the true pair) and merge all cells whose loss ln(p/q) falls in the same grid
    #    cell [k h, (k+1) h) (post-processing again). A cell whose Q-mass is 0 in floating point
    #    (tails that underflow, or differences lost to rounding) is not given the loss +∞: its
    #    loss is at least its lower threshold, and lowering a loss at fixed P-mass only lowers δ
    #    (pointwise coupling), so it is put there. Only ``infinity_mass`` is a genuine +∞.
    p, q, floor = cells(t)
    # the cell (t_{i−1}, t_i] holds losses in that interval, so its ratio p/q lies in
    # [e^{t_{i−1}}, e^{t_i}]: a float ratio outside (rounding) is clipped into it
    ceil = np.concatenate([floor[1:], [np.inf]])
    keep = p > 0
    p, q, floor, ceil = p[keep], q[keep], floor[keep], ceil[keep]
    if len(p) == 0:
        return 0, np.zeros(1), t.infinity_mass, 0.0
    with np.errstate(divide="ignore"):
        lam = np.where(q > 0, np.log(p) - np.log(np.where(q > 0, q, 1.0)), floor)
    lam = np.clip(lam, floor, ceil)
    q = p * np.exp(-lam)
    keep = q > 0  # a Q-mass that underflows (losses beyond ~700): dropped, which only lowers δ
    p, q, lam = p[keep], q[keep], lam[keep]
    if len(p) == 0:
        return 0, np.zeros(1), t.infinity_mass, 0.0
    k = np.floor(lam / h + 1e-12).astype(np.int64)
    k_lo, k_hi = int(k.min()), int(k.max())
    n = k_hi - k_lo + 1
    cp = np.zeros(n)
    cq = np.zeros(n)
    np.add.at(cp, k - k_lo, p)
    np.add.at(cq, k - k_lo, q)
    nz = np.nonzero(cp > 0)[0]
    ap, aq = cp[nz].tolist(), cq[nz].tolist()
    out: dict[int, float] = {}

    def put(kk: int, mass: float) -> None:
        out[kk] = out.get(kk, 0.0) + mass

    # 2. Build atoms exactly on grid points, sweeping upwards: a remainder R below grid point g is
    #    merged with the fraction u of the next atom A above g such that Σ (p − e^{g} q) = 0, i.e. the
    #    merged atom has loss exactly g; (1 − u)·A is the next remainder. If A's excess is too small,
    #    A is absorbed into R (merging) and the sweep goes on. (Where the masses decrease, u drifts
    #    from its fixed point and absorptions happen, but only where the mass is small.)
    r_p, r_q = ap[0], aq[0]
    for i in range(1, len(ap)):
        a_p, a_q = ap[i], aq[i]
        g = math.ceil(math.log(r_p / r_q) / h - 1e-12)
        xg = math.exp(g * h)
        deficit = xg * r_q - r_p
        excess = a_p - xg * a_q
        if deficit <= 0:  # R is on the grid point already
            put(g, r_p)
            r_p, r_q = a_p, a_q
        elif excess >= deficit:
            u = deficit / excess
            put(g, r_p + u * a_p)
            r_p, r_q = (1 - u) * a_p, (1 - u) * a_q
        else:
            r_p, r_q = r_p + a_p, r_q + a_q
    # 3. The last remainder (top of the loss range, tiny mass) is rounded down to the grid: by the
    #    pointwise coupling this only lowers the curve.
    if r_p > 0:
        put(math.floor(math.log(r_p / r_q) / h + 1e-12), r_p)
    ks = np.array(sorted(out), dtype=np.int64)
    masses = np.zeros(int(ks[-1] - ks[0]) + 1)
    masses[ks - ks[0]] = [out[int(kk)] for kk in ks]
    k_lo = int(ks[0])
    return k_lo, masses, t.infinity_mass, 0.0
