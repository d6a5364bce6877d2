"""A bracket of a mechanism's privacy curve, and the conversions between curves.

Conversions ([GDP] Prop. 2.12 and 2.5; Humphries et al., CSF 2023 for the advantage):
δ(ε) ↔ ε(δ) ↔ trade-off ``f(α)`` ↔ best advantage. The privacy-loss distributions themselves are in
:mod:`checker.crossval.privacy_curves`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from checker.crossval.privacy_curves import AtomicPLD, FloatArray, GridPLD, LossTails

__all__ = [
    "CurveBracket",
    "advantage_from_eps_delta",
    "best_advantage",
    "compose_bracket",
    "curve_from_plds",
    "delta_from_tradeoff",
    "epsilon_for_delta",
    "tradeoff_from_delta_curve",
]


@dataclass(frozen=True)
class CurveBracket:
    """``lower ≤ δ_true(ε) ≤ upper`` at each ``eps`` (``error = upper − lower`` is the reported error)."""

    eps: FloatArray
    upper: FloatArray
    lower: FloatArray

    @property
    def error(self) -> float:
        return float(np.max(self.upper - self.lower)) if len(self.eps) else 0.0


def compose_bracket(
    pairs: Sequence[LossTails],
    times: int,
    eps: ArrayLike,
    interval: float,
    tail_mass: float = 1e-15,
    optimistic: bool = True,
) -> tuple[CurveBracket, list[GridPLD]]:
    """Bracket of ``max_pairs δ(ε)`` for the ``times``-fold composition of each pair (one pair per ordered
    worst-case input pair: eq. 4 restricted to them). Returns the bracket and the pessimistic PLDs."""
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    upper = np.zeros_like(e)
    lower = np.zeros_like(e)
    plds: list[GridPLD] = []
    for tails in pairs:
        pess = tails.to_grid(interval, pessimistic=True).self_compose(times, tail_mass)
        plds.append(pess)
        upper = np.maximum(upper, pess.delta(e))
        if optimistic:
            opt = tails.to_grid(interval, pessimistic=False).self_compose(times, tail_mass)
            lower = np.maximum(lower, opt.delta(e))
    return CurveBracket(e, upper, lower), plds


def epsilon_for_delta(eps: ArrayLike, deltas: ArrayLike, delta: float) -> float:
    """``ε(δ)`` from a sampled non-increasing δ-curve: the smallest sampled ε with ``δ(ε) ≤ δ`` (an upper
    bound on the true ε(δ) when the curve is an upper bound); ``inf`` if none."""
    e = np.asarray(eps, dtype=float)
    d = np.asarray(deltas, dtype=float)
    ok = np.nonzero(d <= delta)[0]
    return float(e[ok].min()) if len(ok) else math.inf


def tradeoff_from_delta_curve(eps: ArrayLike, deltas: ArrayLike, alpha: ArrayLike) -> FloatArray:
    """The trade-off function implied by a family of (ε, δ(ε)) guarantees (Dong et al. Prop. 2.12 for a
    symmetric curve): ``f(α) = max_i max{0, 1 − δ_i − e^{ε_i} α, e^{−ε_i}(1 − δ_i − α)}``."""
    e = np.asarray(eps, dtype=float)[:, None]
    d = np.asarray(deltas, dtype=float)[:, None]
    a = np.atleast_1d(np.asarray(alpha, dtype=float))[None, :]
    with np.errstate(over="ignore", invalid="ignore"):
        v1 = 1.0 - d - np.exp(e) * a
        v2 = np.exp(-e) * (1.0 - d - a)
    v = np.maximum(np.nan_to_num(v1, nan=-np.inf), np.nan_to_num(v2, nan=-np.inf))
    return np.maximum(v.max(axis=0), 0.0)


def delta_from_tradeoff(alpha: ArrayLike, f_values: ArrayLike, eps: ArrayLike) -> FloatArray:
    """``δ(ε) = sup_α 1 − e^ε α − f(α)`` (the conjugate of a symmetric trade-off function, Dong et al.
    Prop. 2.12), maximised over the supplied points; exact when f is piecewise linear with those
    breakpoints."""
    a = np.asarray(alpha, dtype=float)[None, :]
    f = np.asarray(f_values, dtype=float)[None, :]
    e = np.atleast_1d(np.asarray(eps, dtype=float))[:, None]
    return np.clip((1.0 - np.exp(e) * a - f).max(axis=1), 0.0, 1.0)


def best_advantage(alpha: ArrayLike, f_values: ArrayLike) -> float:
    """Best distinguishing advantage ``max_α (1 − α − f(α))`` (= total variation = δ(0))."""
    a = np.asarray(alpha, dtype=float)
    f = np.asarray(f_values, dtype=float)
    return float(max(0.0, (1.0 - a - f).max()))


def advantage_from_eps_delta(eps: float, delta: float) -> float:
    """Tight advantage bound of (ε, δ)-DP, ``(e^ε − 1 + 2δ)/(e^ε + 1)`` (Humphries et al., CSF 2023);
    ``tanh(ε/2)`` when δ = 0.

    >>> advantage_from_eps_delta(math.log(3), 0.0), advantage_from_eps_delta(0.0, 0.25)
    (0.5, 0.25)
    """
    if math.isinf(eps):
        return 1.0
    return min(1.0, (math.expm1(eps) + 2 * delta) / (math.exp(eps) + 1.0))


def curve_from_plds(plds: Sequence[AtomicPLD], eps: ArrayLike) -> FloatArray:
    """Pointwise maximum of several PLD curves (the supremum over ordered input pairs in eq. 4)."""
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    out = np.zeros_like(e)
    for p in plds:
        out = np.maximum(out, p.delta(e))
    return out
