"""A bracket of a mechanism's privacy curve, and the conversions between curves.

Conversions ([GDP] Prop. 2.12 and 2.5; Humphries et al., CSF 2023 for the advantage):
δ(ε) ↔ ε(δ) ↔ trade-off ``f(α)`` ↔ best advantage. The privacy-loss distributions themselves are in
:mod:`checker.crossval.privacy_curves`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from checker.crossval.pld_fft import saddle_tilt
from checker.crossval.privacy_curves import AtomicPLD, FloatArray, GridPLD, LossTails

__all__ = [
    "CurveBracket",
    "advantage_from_eps_delta",
    "best_advantage",
    "compose_bracket",
    "composed_delta",
    "composed_epsilon",
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


#: Tilts tried where the plain composition's round-off floor hides δ: the two levels around an ε's
#: saddle point, from a geometric ladder of ratio 2^(1/16) (a tilt other than the saddle point's still
#: gives a valid bound, only a wider one; the ladder lets nearby ε share one composition).
TILTS = tuple(2.0 ** (k / 16) for k in range(-80, 113))
#: A composed δ below this multiple of its slack is refined by tilted compositions.
FLOOR_FACTOR = 1e3


def _cut_for(eps: float) -> float:
    """Where a base PLD is cut before tilting towards ``eps`` (:meth:`GridPLD.cut_above`): a little above
    ``eps``, so that one coordinate's loss beyond it (mass ≤ δ₁(ε + 2)/(1 − e^{−2}), far below the
    composed δ at ε) moves to +∞, while the tilted distribution is not dominated by the far tail of
    the loss (whose moment generating function is infinite for SecAgg's pairs)."""
    return max(eps, 0.0) + 2.0


def _tilt_groups(base: GridPLD, times: int, eps: FloatArray) -> dict[float, float]:
    """Tilt of :data:`TILTS` (the levels just below and above each ε's saddle point on the cut base)
    -> the cut to use."""
    groups: dict[float, float] = {}
    for e in eps.tolist():
        cut = _cut_for(e)
        b = base.cut_above(cut)
        theta = saddle_tilt(b.losses, b.grid_masses, times, e)
        if theta <= 0:
            continue
        k = bisect.bisect_right(TILTS, theta)
        for level in TILTS[max(k - 1, 0):k + 1]:
            groups[level] = max(groups.get(level, cut), cut)
    return groups


def composed_delta(base: GridPLD, times: int, eps: ArrayLike, tail_mass: float = 1e-15) -> FloatArray:
    """δ(ε) of the ``times``-fold composition of ``base`` (pessimistic: an upper bound; optimistic: a
    lower bound, each with its slack). Where the plain FFT composition's slack (its round-off floor)
    is within a factor :data:`FLOOR_FACTOR` of the value, tilted compositions
    (:mod:`checker.crossval.pld_fft`) of the base cut above a loss (:func:`_cut_for`) are computed as
    well and the best valid bound is kept: the smallest upper or the largest lower."""
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    plain = base.self_compose(times, tail_mass)
    d = plain.delta(e)
    if times == 1 or base.pessimistic is None:
        return d
    raw = d - plain.slack_at(e) if base.pessimistic else d + plain.slack_at(e)
    need = raw < FLOOR_FACTOR * plain.slack_at(e)
    for theta, cut in _tilt_groups(base, times, e[need]).items():
        dt = base.cut_above(cut).self_compose(times, tail_mass, tilt=theta).delta(e)
        d = np.minimum(d, dt) if base.pessimistic else np.maximum(d, dt)
    return d


def composed_epsilon(base: GridPLD, times: int, delta: float, tail_mass: float = 1e-15) -> float:
    """ε(δ) of the ``times``-fold composition of a pessimistic ``base`` (a certified upper bound; of an
    optimistic one, a lower bound), with tilted compositions where δ is near the plain one's slack
    (as :func:`composed_delta`): the tilt is taken at the saddle point of the current estimate of ε and
    the estimate refined a few times; every estimate is a valid bound and the best is kept."""
    plain = base.self_compose(times, tail_mass)
    best = plain.epsilon(delta)
    if times == 1 or base.pessimistic is None or delta >= FLOOR_FACTOR * plain.slack:
        return best
    guess = plain.epsilon(FLOOR_FACTOR * plain.slack)  # where the plain curve is still reliable
    for _ in range(4):
        if not math.isfinite(guess):
            break
        cut = _cut_for(guess)
        b = base.cut_above(cut)
        theta = saddle_tilt(b.losses, b.grid_masses, times, guess)
        if theta <= 0:
            break
        got = b.self_compose(times, tail_mass, tilt=theta).epsilon(delta)
        best = min(best, got) if base.pessimistic else max(best, got)
        if not math.isfinite(got) or abs(got - guess) <= 1e-3 * max(1.0, got):
            break
        guess = got if math.isfinite(got) else 2.0 * guess
    return best


def compose_bracket(
    pairs: Sequence[LossTails],
    times: int,
    eps: ArrayLike,
    interval: float,
    tail_mass: float = 1e-15,
    optimistic: bool = True,
) -> tuple[CurveBracket, list[GridPLD]]:
    """Bracket of ``max_pairs δ(ε)`` for the ``times``-fold composition of each pair (one pair per ordered
    worst-case input pair: eq. 4 restricted to them), tilted where the plain composition's floor hides
    δ (:func:`composed_delta`). Returns the bracket and the pessimistic single-step PLDs."""
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    upper = np.zeros_like(e)
    lower = np.zeros_like(e)
    plds: list[GridPLD] = []
    for tails in pairs:
        pess = tails.to_grid(interval, pessimistic=True)
        plds.append(pess)
        upper = np.maximum(upper, composed_delta(pess, times, e, tail_mass))
        if optimistic:
            opt = tails.to_grid(interval, pessimistic=False)
            lower = np.maximum(lower, composed_delta(opt, times, e, tail_mass))
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
