"""Privacy curves: hockey-stick divergence, privacy-loss distributions, composition, conversions.

The mathematics is that of [SecAgg-MIA] (§4.2): the hockey-stick divergence
``E_α(P‖Q) = sup_E P(E) − α Q(E)``, the optimal privacy curve of a mechanism (eq. 4)
``δ_M(ε) = sup_{x≠x'} E_{e^ε}(M(x)‖M(x'))``, dominating pairs (eq. 5) and the privacy-loss random variable
``L = ln dP/dQ (y), y ~ P`` with ``E_{e^ε}(P‖Q) = E[(1 − e^{ε−L})⁺] = δ_L(ε)`` (eq. 6).

Three representations of a privacy-loss distribution (PLD) are used:

* :class:`DiscretePLD` — atoms at arbitrary real losses plus an atom at ``+∞`` (the P-mass where Q = 0).
  Built exactly from two finite distributions (:meth:`DiscretePLD.from_distributions`).
* :class:`LossTails` — the exact tail functions ``P(L > ε)`` and ``Q(L > ε)`` of a continuous pair at a
  finite set of thresholds (closed forms for Gaussian, Laplace, Gamma; a stable lattice for Irwin–Hall).
* :class:`GridPLD` — atoms on a regular grid ``L_k = k·h`` so that composition is a convolution (FFT).

A :class:`LossTails` is turned into a :class:`GridPLD` in two ways whose curves bracket the truth:

* *pessimistic* ("connect the dots", Doroshenko et al., PETS 2022): the curve ``x ↦ δ(ln x)`` is convex in
  ``x = e^ε``; the grid PLD whose curve is the chord interpolation of exact values is a dominating pair
  (its hockey-stick curve is ≥ the true one for every ε ∈ ℝ, hence its trade-off function is ≤ the true
  one) and dominance is preserved by composition. The error is O(h²).
* *optimistic*: the outcome is quantised by the thresholds and cells are merged so that every merged
  atom has a loss exactly on the grid (proportional splitting is lossless, merging is post-processing,
  so the result is a dominated pair and stays dominated under composition); the last remainder of the
  sweep is rounded *down* to the grid, which by the pointwise coupling ``L̃ ≤ L`` and the
  monotonicity of ``(1 − e^{ε−ℓ})⁺`` in ℓ only lowers the composed curve. The error is O(h²).
  (``method="round"`` rounds every loss down instead: simpler, O(h).)

Each :class:`GridPLD` carries a ``slack``: a bound on the error of the numerical steps that are not exact
by construction (tail truncation of a composition — a Chernoff bound, rigorous; the lower-tail cell of
the ``method="round"`` estimate; a round-off allowance for the FFT — heuristic, ~1e-12 in practice).
Pessimistic curves add it, optimistic curves subtract it, so ``optimistic ≤ true ≤ pessimistic`` holds for
the reported numbers up to floating-point evaluation of the exact tails (relative ~1e-15, not counted).

The bracket of a composed curve and the conversions δ(ε) ↔ ε(δ) ↔ trade-off ↔ advantage are in
:mod:`checker.crossval.curve_conversions`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeVar

import numpy as np
import scipy.signal
from numpy.typing import ArrayLike, NDArray

from checker.crossval import pld_grids
from checker.crossval.pld_fft import roundoff_allowance

FloatArray = NDArray[np.float64]
#: The outcome type of a finite distribution given as ``outcome -> probability``.
Outcome = TypeVar("Outcome", bound=Hashable)

__all__ = [
    "AtomicPLD",
    "DiscretePLD",
    "GridPLD",
    "LossTails",
    "exact_epsilon",
    "hockey_stick",
    "hockey_stick_exact",
    "mechanism_delta",
]


# ---------------------------------------------------------------------------------------------------
# Hockey-stick divergence of finite distributions (exact)
# ---------------------------------------------------------------------------------------------------


def hockey_stick(p: ArrayLike, q: ArrayLike, alpha: float) -> float:
    """``E_α(P‖Q) = Σ_y (p(y) − α q(y))⁺`` for two finite distributions on the same outcomes ([SecAgg-MIA]
    §4.2). ``alpha = inf`` gives the P-mass where ``q = 0``.

    >>> hockey_stick([0.75, 0.25], [0.25, 0.75], 1.0)
    0.5
    """
    pa = np.asarray(p, dtype=float)
    qa = np.asarray(q, dtype=float)
    if pa.shape != qa.shape:
        raise ValueError("p and q must have the same shape")
    if alpha < 0:
        raise ValueError("alpha must be >= 0")
    if math.isinf(alpha):
        return math.fsum(pa[qa == 0].tolist())
    return math.fsum(np.maximum(pa - alpha * qa, 0.0).tolist())


def hockey_stick_exact(
    p: Mapping[Outcome, Fraction], q: Mapping[Outcome, Fraction], alpha: Fraction
) -> Fraction:
    """Exact rational ``E_α(P‖Q)`` for distributions given as ``outcome -> Fraction`` (missing = 0)."""
    if alpha < 0:
        raise ValueError("alpha must be >= 0")
    total = Fraction(0)
    for y in set(p) | set(q):
        v = Fraction(p.get(y, 0)) - alpha * Fraction(q.get(y, 0))
        if v > 0:
            total += v
    return total


def exact_epsilon(p: Mapping[Outcome, Fraction], q: Mapping[Outcome, Fraction]) -> float:
    """The smallest ε with ``E_{e^ε}(P‖Q) = 0``, i.e. ``max_y ln p(y)/q(y)`` (``inf`` when P charges an
    outcome Q does not; ``-inf`` never, since both are distributions the value is ≥ 0).

    >>> from fractions import Fraction as F
    >>> round(exact_epsilon({0: F(3, 4), 1: F(1, 4)}, {0: F(1, 4), 1: F(3, 4)}), 6)
    1.098612
    >>> exact_epsilon({0: F(1)}, {1: F(1)})
    inf
    """
    best = -math.inf
    for y, py in p.items():
        py = Fraction(py)
        if py == 0:
            continue
        qy = Fraction(q.get(y, 0))
        if qy == 0:
            return math.inf
        r = py / qy  # exact ratio; log of big integers is exact to rounding
        best = max(best, math.log(r.numerator) - math.log(r.denominator))
    return max(best, 0.0)


def mechanism_delta(matrix: ArrayLike, eps: ArrayLike) -> FloatArray:
    """Optimal privacy curve (eq. 4) of a finite mechanism: ``matrix[x, y] = Pr[M(x) = y]``; the supremum
    over all ordered pairs of distinct inputs of ``E_{e^ε}(M(x)‖M(x'))``."""
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] < 2:
        raise ValueError("matrix must be 2-D with at least two inputs (rows)")
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    out = np.zeros_like(e)
    for i in range(m.shape[0]):
        for j in range(m.shape[0]):
            if i != j:
                pld = DiscretePLD.from_arrays(m[i], m[j])
                out = np.maximum(out, pld.delta(e))
    return out


# ---------------------------------------------------------------------------------------------------
# Evaluation of a PLD given by atoms
# ---------------------------------------------------------------------------------------------------


def _suffix_sums(losses: FloatArray, masses: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``S1[j] = Σ_{k≥j} m_k`` and ``S2[j] = Σ_{k≥j} m_k e^{−L_k}`` (length n+1, last entry 0)."""
    with np.errstate(divide="ignore"):
        qm = np.where(masses > 0, np.exp(np.log(np.where(masses > 0, masses, 1.0)) - losses), 0.0)
    s1 = np.concatenate([np.cumsum(masses[::-1])[::-1], [0.0]])
    s2 = np.concatenate([np.cumsum(qm[::-1])[::-1], [0.0]])
    return s1, s2


def _delta_atoms(
    losses: FloatArray, s1: FloatArray, s2: FloatArray, inf_mass: float, eps: FloatArray
) -> FloatArray:
    """``δ_L(ε) = ω_∞ + Σ_{L_k > ε} m_k (1 − e^{ε − L_k})`` (eq. 6) for sorted atoms."""
    j = np.searchsorted(losses, eps, side="right")
    with np.errstate(over="ignore", invalid="ignore"):
        tail = s1[j] - np.exp(eps) * s2[j]
    tail = np.where(np.isposinf(eps), 0.0, tail)
    tail = np.where(np.isneginf(eps), s1[0], tail)
    return np.clip(inf_mass + np.maximum(tail, 0.0), 0.0, 1.0)


def _epsilon_atoms(
    losses: FloatArray, s1: FloatArray, s2: FloatArray, inf_mass: float, delta: float, min_eps: float
) -> float:
    """Smallest ε ≥ ``min_eps`` with ``δ_L(ε) ≤ delta``; exact for the atoms (δ is ``A − e^ε B`` between
    consecutive atoms)."""
    if delta < 0:
        raise ValueError("delta must be >= 0")
    if delta < inf_mass:
        return math.inf
    at = _delta_atoms(losses, s1, s2, inf_mass, np.array([min_eps]))[0]
    if at <= delta:
        return min_eps
    # δ at the atoms (right-continuous: value at L_k counts atoms > L_k only)
    vals = _delta_atoms(losses, s1, s2, inf_mass, losses)
    k = int(np.searchsorted(-vals, -delta, side="left"))  # first atom with value <= delta
    if k >= len(losses):
        return math.inf
    a = inf_mass + s1[k]
    b = s2[k]
    if b <= 0 or a - delta <= 0:
        eps = losses[k - 1] if k > 0 else losses[k]
    else:
        eps = math.log((a - delta) / b)
        lo = losses[k - 1] if k > 0 else -math.inf
        eps = min(max(eps, lo), float(losses[k]))
    return max(float(eps), min_eps)


def _tradeoff_atoms(losses: FloatArray, masses: FloatArray, inf_mass: float, alpha: FloatArray) -> FloatArray:
    """Trade-off function ``T(P,Q)(α)`` (Dong et al.: α = type-I error under P, β = type-II under Q) of the
    pair encoded by the atoms: Neyman–Pearson tests reject P on the lowest losses first."""
    with np.errstate(divide="ignore"):
        qm = np.where(masses > 0, np.exp(np.log(np.where(masses > 0, masses, 1.0)) - losses), 0.0)
    q_res = max(0.0, 1.0 - float(qm.sum()))  # Q-mass where P = 0 (loss −∞), rejected first for free
    pa = np.concatenate([[0.0], masses, [inf_mass]])
    qa = np.concatenate([[q_res], qm, [0.0]])
    a_pts = np.concatenate([[0.0], np.cumsum(pa)])
    b_pts = 1.0 - np.concatenate([[0.0], np.cumsum(qa)])
    a_pts = a_pts / a_pts[-1]
    b_pts = np.clip(b_pts, 0.0, 1.0)
    return np.interp(np.asarray(alpha, dtype=float), a_pts, b_pts)


class AtomicPLD:
    """Shared evaluation for PLDs stored as sorted atoms ``(losses, masses)`` plus ``infinity_mass``."""

    losses: FloatArray
    masses: FloatArray
    infinity_mass: float
    slack: float
    pessimistic: bool | None
    _s: tuple[FloatArray, FloatArray]

    def slack_at(self, eps: ArrayLike) -> FloatArray:
        """The error bound of the numerical steps at each ε: the constant ``slack`` plus, for a tilted
        composition (:mod:`checker.crossval.pld_fft`), ``exp(tilt_log_slack − tilt·ε)``."""
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        out = np.full(e.shape, float(self.slack))
        log_slack = float(getattr(self, "tilt_log_slack", -math.inf))
        if log_slack > -math.inf:
            with np.errstate(over="ignore"):
                out = out + np.exp(np.minimum(log_slack - float(getattr(self, "tilt", 0.0)) * e, 700.0))
        return out

    def delta(self, eps: ArrayLike) -> FloatArray:
        """``δ_L(ε)`` (eq. 6), vectorised; a pessimistic estimate adds its slack (:meth:`slack_at`), an
        optimistic one subtracts it."""
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        d = _delta_atoms(self.losses, *self._s, self.infinity_mass, e)
        if self.pessimistic is not None:
            slack = self.slack_at(e)
            d = d + slack if self.pessimistic else d - slack
        return np.clip(d, 0.0, 1.0)

    def epsilon(self, delta: float, min_eps: float = 0.0) -> float:
        """``ε(δ) = inf{ε ≥ min_eps : δ_L(ε) ≤ δ}`` (slack included as in :meth:`delta`)."""
        if float(getattr(self, "tilt_log_slack", -math.inf)) > -math.inf and self.pessimistic is not None:
            return self._epsilon_by_search(delta, min_eps)
        shift = 0.0
        if self.slack and self.pessimistic is not None:
            shift = -self.slack if self.pessimistic else self.slack
        target = delta + shift
        if target < 0:
            return math.inf
        return _epsilon_atoms(self.losses, *self._s, self.infinity_mass, target, min_eps)

    def _epsilon_by_search(self, delta: float, min_eps: float) -> float:
        """:meth:`epsilon` for an ε-dependent slack: δ(ε) ± slack(ε) is non-increasing in ε for the
        pessimistic estimate (both terms are); the first atom at or below ``delta`` is found on the
        atoms and the crossing refined by bisection inside its cell."""
        if self.delta([min_eps])[0] <= delta:
            return min_eps
        pts = self.losses[self.losses > min_eps]
        if not len(pts):
            return math.inf
        vals = self.delta(pts)
        ok = np.nonzero(vals <= delta)[0]
        if not len(ok):
            return math.inf
        k = int(ok[0])
        lo = float(pts[k - 1]) if k > 0 else min_eps
        hi = float(pts[k])
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self.delta([mid])[0] <= delta:
                hi = mid
            else:
                lo = mid
        return hi

    def tradeoff(self, alpha: ArrayLike) -> FloatArray:
        """Trade-off function of the pair (slack not included)."""
        return _tradeoff_atoms(self.losses, self.masses, self.infinity_mass, np.atleast_1d(alpha))

    def mean_loss(self) -> float:
        """``E[L]`` over the finite atoms (the KL divergence for a genuine pair when ``ω_∞ = 0``)."""
        return float(np.dot(self.losses, self.masses)) if self.infinity_mass == 0 else math.inf


# ---------------------------------------------------------------------------------------------------
# Discrete PLD: atoms at arbitrary losses
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DiscretePLD(AtomicPLD):
    """Privacy-loss distribution with atoms at arbitrary finite losses (sorted ascending) and a P-mass
    ``infinity_mass`` at ``L = +∞``. Exact for finite mechanisms."""

    losses: FloatArray
    masses: FloatArray
    infinity_mass: float = 0.0
    slack: float = 0.0
    pessimistic: bool | None = None
    _s: tuple[FloatArray, FloatArray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        order = np.argsort(self.losses, kind="stable")
        losses = np.asarray(self.losses, dtype=float)[order]
        masses = np.asarray(self.masses, dtype=float)[order]
        if np.any(masses < 0) or not np.all(np.isfinite(losses)):
            raise ValueError("masses must be >= 0 and losses finite")
        object.__setattr__(self, "losses", losses)
        object.__setattr__(self, "masses", masses)
        object.__setattr__(self, "_s", _suffix_sums(losses, masses))

    @classmethod
    def from_arrays(cls, p: ArrayLike, q: ArrayLike) -> DiscretePLD:
        """The PLD of ``(P, Q)`` for two probability vectors on the same outcomes (eq. 6 exactly).

        >>> pld = DiscretePLD.from_arrays([0.75, 0.25], [0.25, 0.75])
        >>> round(float(pld.delta([0.0])[0]), 12), round(pld.epsilon(0.0), 6)
        (0.5, 1.098612)
        """
        pa = np.asarray(p, dtype=float)
        qa = np.asarray(q, dtype=float)
        if pa.shape != qa.shape or pa.ndim != 1:
            raise ValueError("p and q must be 1-D of the same length")
        if np.any(pa < 0) or np.any(qa < 0):
            raise ValueError("probabilities must be >= 0")
        both = (pa > 0) & (qa > 0)
        inf_mass = math.fsum(pa[(pa > 0) & (qa == 0)].tolist())
        return cls(np.log(pa[both]) - np.log(qa[both]), pa[both], inf_mass)

    @classmethod
    def from_distributions(
        cls, p: Mapping[Outcome, Fraction | float], q: Mapping[Outcome, Fraction | float]
    ) -> DiscretePLD:
        """The PLD of two finite distributions given as ``outcome -> probability`` mappings."""
        keys = sorted(set(p) | set(q), key=repr)
        return cls.from_arrays([float(p.get(k, 0)) for k in keys], [float(q.get(k, 0)) for k in keys])

    def compose(self, other: DiscretePLD) -> DiscretePLD:
        """Exact composition (product pair): losses add, masses multiply (size grows multiplicatively)."""
        losses = np.add.outer(self.losses, other.losses).ravel()
        masses = np.multiply.outer(self.masses, other.masses).ravel()
        inf_mass = 1.0 - (1.0 - self.infinity_mass) * (1.0 - other.infinity_mass)
        return DiscretePLD(losses, masses, inf_mass)

    def to_tails(self) -> LossTails:
        """The exact tails at every atom (and just below the smallest), for discretisation."""
        s1, s2 = self._s
        lo = self.losses[0] - 1.0 if len(self.losses) else -1.0
        eps = np.concatenate([[lo], self.losses])
        j = np.searchsorted(self.losses, eps, side="right")
        return LossTails(eps, self.infinity_mass + s1[j], s2[j], self.infinity_mass)


# ---------------------------------------------------------------------------------------------------
# Exact tails of a continuous pair
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LossTails:
    """Exact tail values of the privacy loss of a pair ``(P, Q)`` at thresholds ``eps`` (ascending):
    ``p_tail = P(L > ε)`` (including the atom at ``+∞``) and ``q_tail = Q(L > ε)``, so that
    ``δ(ε) = p_tail − e^ε q_tail`` exactly at the thresholds. ``infinity_mass = P(L = +∞)``.

    The thresholds must cover the loss distribution: ``1 − p_tail[0]`` (the mass at or below the lowest
    threshold) is reported as ``lower_mass`` and enters the optimistic estimate's slack.
    """

    eps: FloatArray
    p_tail: FloatArray
    q_tail: FloatArray
    infinity_mass: float = 0.0

    def __post_init__(self) -> None:
        e = np.asarray(self.eps, dtype=float)
        order = np.argsort(e, kind="stable")
        object.__setattr__(self, "eps", e[order])
        object.__setattr__(self, "p_tail", np.asarray(self.p_tail, dtype=float)[order])
        object.__setattr__(self, "q_tail", np.asarray(self.q_tail, dtype=float)[order])
        if len(self.eps) == 0:
            raise ValueError("need at least one threshold")

    @property
    def lower_mass(self) -> float:
        """``P(L ≤ eps[0])``."""
        return max(0.0, 1.0 - float(self.p_tail[0]))

    def delta(self) -> FloatArray:
        """Exact ``δ(ε)`` at the thresholds."""
        return np.clip(self.p_tail - np.exp(self.eps) * self.q_tail, 0.0, 1.0)

    def to_grid(self, interval: float, pessimistic: bool, method: str = "merge") -> GridPLD:
        """Discretise on the grid ``k·interval``: pessimistic by connect-the-dots (a dominating pair),
        optimistic by quantisation and merging (``method="merge"``, second order) or by rounding the
        loss down (``method="round"``, first order). See the module docstring."""
        h = float(interval)
        if not h > 0:
            raise ValueError("interval must be > 0")
        if pessimistic:
            start, masses, inf_mass, slack = pld_grids.connect_dots(self, h)
        elif method == "round":
            start, masses, inf_mass, slack = pld_grids.round_down(self, h)
        elif method == "merge":
            start, masses, inf_mass, slack = pld_grids.merge(self, h)
        else:
            raise ValueError("method must be 'merge' or 'round'")
        return GridPLD(h, start, masses, inf_mass, slack=slack, pessimistic=pessimistic)

# ---------------------------------------------------------------------------------------------------
# Grid PLD and FFT composition
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GridPLD(AtomicPLD):
    """PLD on the regular grid ``L_k = (start + i)·interval``, ``masses[i]`` the P-mass there, plus
    ``infinity_mass`` at ``+∞``. ``pessimistic`` says which side of the truth the estimate is on and
    ``slack`` bounds the error of non-exact numerical steps (see the module docstring)."""

    interval: float
    start: int
    grid_masses: FloatArray
    infinity_mass: float = 0.0
    slack: float = 0.0
    pessimistic: bool | None = None
    tilt: float = 0.0
    tilt_log_slack: float = -math.inf
    losses: FloatArray = field(init=False, repr=False)
    masses: FloatArray = field(init=False, repr=False)
    _s: tuple[FloatArray, FloatArray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        m = np.asarray(self.grid_masses, dtype=float)
        nz = np.nonzero(m > 0)[0]
        if len(nz) == 0:
            m = np.zeros(1)
            start = self.start
        else:
            start = self.start + int(nz[0])
            m = m[nz[0] : nz[-1] + 1]
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "grid_masses", m)
        object.__setattr__(self, "masses", m)
        object.__setattr__(self, "losses", (start + np.arange(len(m))) * self.interval)
        object.__setattr__(self, "_s", _suffix_sums(self.losses, m))

    def compose(self, other: GridPLD) -> GridPLD:
        """Composition with another grid PLD of the same interval (independent pair; losses add)."""
        if not math.isclose(self.interval, other.interval, rel_tol=1e-12):
            raise ValueError("grid intervals differ")
        if self.pessimistic != other.pessimistic:
            raise ValueError("cannot compose a pessimistic with an optimistic estimate")
        if self.tilt_log_slack > -math.inf or other.tilt_log_slack > -math.inf:
            raise ValueError("a tilted composition is final: compose the untilted PLDs and tilt once")
        conv = scipy.signal.fftconvolve(self.grid_masses, other.grid_masses)
        n = len(conv)
        roundoff = roundoff_allowance(n, 2)
        conv = np.maximum(conv, 0.0)
        inf_mass = 1.0 - (1.0 - self.infinity_mass) * (1.0 - other.infinity_mass)
        return GridPLD(
            self.interval,
            self.start + other.start,
            conv,
            inf_mass,
            slack=self.slack + other.slack + roundoff,
            pessimistic=self.pessimistic,
        )

    def cut_above(self, loss: float) -> GridPLD:
        """The atoms above ``loss`` moved to +∞ (pessimistic: a loss only rises, δ only grows) or dropped
        (optimistic: every composed δ only falls). Composition then adds at most ``times`` times their
        P-mass to δ: the price of a finite moment generating function for tilting."""
        above = self.losses > loss
        if not np.any(above):
            return self
        moved = float(self.grid_masses[above].sum())
        kept = np.where(above, 0.0, self.grid_masses)
        inf_mass = self.infinity_mass + (moved if self.pessimistic else 0.0)
        return GridPLD(self.interval, self.start, kept, min(inf_mass, 1.0), slack=self.slack,
                       pessimistic=self.pessimistic)

    def self_compose(self, times: int, tail_mass: float = 1e-15, tilt: float = 0.0) -> GridPLD:
        """``times``-fold composition with itself by one FFT (:func:`checker.crossval.pld_fft.fft_power`):
        the output window is chosen from Chernoff bounds so that at most ``tail_mass`` lies outside on
        each side, and the aliasing and round-off error enters the slack.

        ``tilt = θ > 0`` composes the exponentially tilted masses ``m_k e^{θ L_k}`` instead
        (the Esscher transform commutes with convolution) and tilts back: the FFT's absolute error,
        ~1e-16 of the largest entry, then becomes a *relative* error near the losses the tilt centres on
        (:func:`checker.crossval.pld_fft.saddle_tilt`), so tiny δ far in the tail are not lost under
        the round-off floor. Its slack decreases as ``e^{−θ ε}`` (see :meth:`slack_at`)."""
        from checker.crossval.pld_fft import fft_power  # the FFT engine lives in its own module

        if times < 1:
            raise ValueError("times must be >= 1")
        if times == 1:
            return self
        res = fft_power(self.losses, self.grid_masses, self.interval, self.start, times, tail_mass, tilt)
        inf_mass = -math.expm1(times * math.log1p(-self.infinity_mass)) if self.infinity_mass < 1 else 1.0
        return GridPLD(self.interval, res.start, res.masses, inf_mass,
                       slack=times * self.slack + res.const_slack, pessimistic=self.pessimistic,
                       tilt=res.tilt, tilt_log_slack=res.tilt_log_slack)
