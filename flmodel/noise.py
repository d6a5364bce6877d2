"""Noise mechanisms as finite distributions with exact probabilities over client updates.

The published rules of [IIIf-FL] (Section III-B) are deterministic; probabilities enter through the
probabilistic extension of IIIf used by NI-FL-DP (Section III-C). flcheck's probabilistic step
``get_grad_noisy`` (see :mod:`flmodel.rules`) reports ``M(Gradc)`` instead of ``Gradc`` for a
mechanism ``M`` of this module. A mechanism maps an update (a vector of Fractions) to a tuple of
``(value, probability)`` pairs whose probabilities are positive Fractions summing to exactly 1, with
distinct values, sorted by value (deterministic).

Vectors are perturbed coordinate-wise and independently (product distribution).

Exact parameters. ``e^{−ε}`` is irrational for rational ``ε > 0``, so every mechanism takes the
*base* ``r = e^{−ε}`` (or ``q = e^{−1/(2σ²)}``) as a Fraction; the privacy parameter it realises is
``ε = −ln r`` exactly (``epsilon_of(r)``); :func:`base_from_epsilon` gives a rational approximation of
``e^{−ε}`` when one starts from ``ε``.

Mechanisms (each on the lattice ``lo, lo+step, …, hi``, or on a finite grid for RR):

* :class:`NoNoise` — the point mass on the update.
* :class:`RandomizedResponse` — k-ary randomized response on a finite grid: the value is first
  rounded to the nearest grid point, kept with probability ``1/(1+(m−1)r)`` and replaced by each of
  the ``m−1`` other grid points with probability ``r/(1+(m−1)r)``; ratio of any two output
  probabilities between two inputs ≤ ``1/r`` (ε-DP with ``ε = −ln r``).
* :class:`GeometricMechanism` — the two-sided geometric (discrete Laplace) mechanism of Ghosh,
  Roughgarden and Sundararajan (2009), with its output *clamped* to ``[lo, hi]``:
  ``Z`` with ``P(Z = k) = (1−r)/(1+r) · r^{|k|}``, output ``clamp(u + Z)``; the clamped tails have the
  closed forms ``P(Z ≥ k) = r^k/(1+r)`` (``k ≥ 1``) and ``P(Z ≤ −k) = r^k/(1+r)`` (``k ≥ 1``).
  Clamping (post-processing) keeps ε-DP with ``ε = Δ·(−ln r)`` for sensitivity ``Δ`` lattice steps.
* :class:`TruncatedDiscreteGaussian` — the discrete Gaussian of Canonne, Kamath and Steinke (2020)
  restricted to the fixed output range: ``P(v) ∝ q^{(v−u)²}`` for lattice points ``v ∈ [lo, hi]``
  (``u`` and ``v`` in lattice units), renormalised over the range. The range does not depend on the
  input, so the support is the same for neighbouring inputs.

Inputs off the lattice are rounded to the nearest lattice point (ties upward) and clamped into the
range first; inputs off a randomized-response grid are snapped to the nearest grid point (ties to the
smaller point). This deterministic pre-processing is part of the mechanism built in Python. Built
from a scenario's ``noise`` statement a mechanism is ``bounded``: a value outside its range (below the
grid's smallest point or above its largest) is an error at the statement's position (``where``),
never clamped; the statements that name ε or σ are ``strict`` as well: a value between grid points is
an error too. With ``clip`` a lattice mechanism first clips the value into its range (an explicit
part of the statement, as DP-SGD clips).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from flmodel.errors import Diagnostic, ModelError, Position
from flmodel.learning import Vec, Vector

#: A finite distribution over values: ``((value, probability), ...)``.
ScalarDistribution = tuple[tuple[Fraction, Fraction], ...]
VectorDistribution = tuple[tuple[Vector, Fraction], ...]

ONE = Fraction(1)
#: Numbers accepted by the convenience constructors.
Num = Fraction | int | str


def epsilon_of(r: Fraction) -> float:
    """``ε = −ln r`` realised by the base ``r = e^{−ε}`` (``inf`` for ``r = 0``)."""
    if r <= 0:
        return math.inf
    return -math.log(r)


def base_from_epsilon(epsilon: float, max_denominator: int = 1000) -> Fraction:
    """A rational approximation of ``e^{−ε}`` (the mechanism then realises ``ε' = −ln r``, which differs
    from ``ε`` by the approximation; use :func:`epsilon_of` on the result for the exact value)."""
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    return Fraction(math.exp(-epsilon)).limit_denominator(max_denominator)


def _floor_half_up(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2))


class Mechanism(ABC):
    """A noise mechanism: a finite distribution per input value, applied coordinate-wise."""

    name: str

    @abstractmethod
    def scalar(self, u: Fraction) -> ScalarDistribution:
        """Distribution of the noisy value of one coordinate ``u``."""

    def __call__(self, update: Vector) -> VectorDistribution:
        """Product distribution over the coordinates of ``update`` (memoized)."""
        return _apply(self, tuple(update))

    def describe(self) -> str:
        """A short human-readable description."""
        return self.name

    @property
    def output_range(self) -> tuple[Fraction, Fraction] | None:
        """The least and largest value the mechanism outputs (``None``: not bounded by a range)."""
        return None

    @property
    def refuses(self) -> bool:
        """Whether some input values are refused with a positioned error instead of noised (a strict or
        bounded mechanism of a scenario's noise statement, not clipping): whether a report exists then
        depends on the value it noises."""
        return bool(getattr(self, "strict", False) or (getattr(self, "bounded", False)
                                                        and not getattr(self, "clip", False)))


@lru_cache(maxsize=1 << 16)
def _scalar_cached(mech: Mechanism, u: Fraction) -> ScalarDistribution:
    dist: dict[Fraction, Fraction] = {}
    for v, p in mech.scalar(u):
        if p < 0:
            raise ValueError(f"{mech.describe()}: negative probability {p} for {v}")
        if p:
            dist[v] = dist.get(v, Fraction(0)) + p
    return tuple(sorted(dist.items()))


@lru_cache(maxsize=1 << 16)
def _apply(mech: Mechanism, update: Vector) -> VectorDistribution:
    out: list[tuple[Vector, Fraction]] = [((), ONE)]
    for u in update:
        nxt: list[tuple[Vector, Fraction]] = []
        for v, p in _scalar_cached(mech, u):
            for prefix, q in out:
                nxt.append(((*prefix, v), q * p))
        out = nxt
    out.sort()
    return tuple((Vec(v), p) for v, p in out)


@dataclass(frozen=True)
class NoNoise(Mechanism):
    """The point mass on the update itself (the published, noise-free rule)."""

    name: str = "none"

    def scalar(self, u: Fraction) -> ScalarDistribution:
        return ((u, ONE),)


def _check_unit_interval(what: str, x: Fraction, *, zero_ok: bool, one_ok: bool) -> None:
    lo_ok = x > 0 or (zero_ok and x == 0)
    hi_ok = x < 1 or (one_ok and x == 1)
    if not (lo_ok and hi_ok):
        lo = "[0" if zero_ok else "(0"
        hi = "1]" if one_ok else "1)"
        raise ModelError(f"{what} must lie in {lo}, {hi}, got {x}")


@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    """k-ary randomized response over ``grid`` with base ``r = e^{−ε}``: keep the (rounded) value with
    probability ``1/(1+(m−1)r)``, report each other grid point with probability ``r/(1+(m−1)r)``."""

    grid: tuple[Fraction, ...]
    r: Fraction
    name: str = "randomized_response"
    strict: bool = False
    bounded: bool = False
    clip: bool = False
    where: Position | None = field(default=None, compare=False)

    @property
    def output_range(self) -> tuple[Fraction, Fraction] | None:
        return self.grid[0], self.grid[-1]

    def __post_init__(self) -> None:
        grid = tuple(sorted({Fraction(g) for g in self.grid}))
        if not grid:
            raise ModelError("randomized response needs a non-empty grid")
        object.__setattr__(self, "grid", grid)
        object.__setattr__(self, "r", Fraction(self.r))
        _check_unit_interval("randomized-response base r", self.r, zero_ok=True, one_ok=True)

    def snap(self, u: Fraction) -> Fraction:
        """The grid point nearest to ``u`` (ties to the smaller point)."""
        return min(self.grid, key=lambda g: (abs(g - u), g))

    def scalar(self, u: Fraction) -> ScalarDistribution:
        m = len(self.grid)
        z = 1 + (m - 1) * self.r
        if self.clip:
            u = min(max(u, self.grid[0]), self.grid[-1])
        if (self.strict and u not in self.grid) or (self.bounded and not self.grid[0] <= u <= self.grid[-1]):
            _off_grid(self.where, u, "the grid {" + ", ".join(str(g) for g in self.grid) + "}")
        s = self.snap(u)
        return tuple((g, (ONE if g == s else self.r) / z) for g in self.grid)

    def describe(self) -> str:
        return f"randomized_response(grid={[str(g) for g in self.grid]}, r={self.r})"


def _off_grid(where: Position | None, u: Fraction, grid: str) -> None:
    """The error of a strict mechanism given a value off its grid."""
    raise ModelError([Diagnostic(where or Position("<model>"),
                                 f"reported value {u} is not on {grid} of this noise statement (a value "
                                 "off the grid is not rounded: widen the grid or change the data)")])


@dataclass(frozen=True)
class _Lattice(Mechanism):
    lo: Fraction
    hi: Fraction
    step: Fraction
    strict: bool = False
    clip: bool = False
    bounded: bool = False
    where: Position | None = field(default=None, compare=False)

    @property
    def output_range(self) -> tuple[Fraction, Fraction] | None:
        return self.lo, self.hi

    def _validate_lattice(self) -> None:
        for f in ("lo", "hi", "step"):
            object.__setattr__(self, f, Fraction(getattr(self, f)))
        if self.step <= 0:
            raise ModelError(f"lattice step must be > 0, got {self.step}")
        if self.hi < self.lo:
            raise ModelError(f"empty output range: lo={self.lo} > hi={self.hi}")
        if (self.hi - self.lo) % self.step != 0:
            raise ModelError(f"hi - lo = {self.hi - self.lo} is not a multiple of step {self.step}")

    @property
    def size(self) -> int:
        """Number of lattice points in ``[lo, hi]``."""
        return int((self.hi - self.lo) / self.step) + 1

    def index(self, u: Fraction) -> int:
        """Lattice index (0 … size−1) of ``u`` rounded to the nearest point (ties upward) and
        clamped."""
        u = Fraction(u)
        if self.clip:
            u = min(max(u, self.lo), self.hi)
        pos = (u - self.lo) / self.step
        outside = not self.lo <= u <= self.hi
        if (self.strict and pos.denominator != 1) or ((self.strict or self.bounded) and outside):
            _off_grid(self.where, u, f"the lattice {self.lo} .. {self.hi} step {self.step}")
        k = _floor_half_up((u - self.lo) / self.step)
        return min(max(k, 0), self.size - 1)

    def value(self, k: int) -> Fraction:
        """The lattice point with index ``k``."""
        return self.lo + k * self.step


@dataclass(frozen=True)
class GeometricMechanism(_Lattice):
    """Two-sided geometric (discrete Laplace) noise with base ``r``, output clamped to ``[lo, hi]``.

    For input index ``a`` and output index ``v`` (``0 ≤ v ≤ m−1``):
    ``P(v) = (1−r)/(1+r) · r^{|v−a|}`` inside, ``P(0) = r^a/(1+r)``, ``P(m−1) = r^{m−1−a}/(1+r)``
    (for ``m = 1`` the single point has probability 1)."""

    r: Fraction = Fraction(1, 2)
    name: str = "geometric"

    def __post_init__(self) -> None:
        self._validate_lattice()
        object.__setattr__(self, "r", Fraction(self.r))
        _check_unit_interval("geometric base r", self.r, zero_ok=False, one_ok=False)

    def scalar(self, u: Fraction) -> ScalarDistribution:
        m = self.size
        a = self.index(u)
        r = self.r
        if m == 1:
            return ((self.value(0), ONE),)
        out = []
        inner = (1 - r) / (1 + r)
        for v in range(m):
            if v == 0:
                p = r**a / (1 + r)
            elif v == m - 1:
                p = r ** (m - 1 - a) / (1 + r)
            else:
                p = inner * r ** abs(v - a)
            out.append((self.value(v), p))
        return tuple(out)

    def describe(self) -> str:
        return f"geometric(r={self.r}, range=[{self.lo},{self.hi}], step={self.step})"


@dataclass(frozen=True)
class TruncatedDiscreteGaussian(_Lattice):
    """Discrete Gaussian with ``q = e^{−1/(2σ²)}`` truncated to the fixed range ``[lo, hi]``:
    ``P(v) = q^{(v−a)²} / Σ_{w ∈ [0, m)} q^{(w−a)²}`` (indices in lattice units).
    ``σ² = −1/(2 ln q)`` (see :meth:`sigma`)."""

    q: Fraction = Fraction(1, 2)
    name: str = "discrete_gaussian"

    def __post_init__(self) -> None:
        self._validate_lattice()
        object.__setattr__(self, "q", Fraction(self.q))
        _check_unit_interval("discrete-Gaussian base q", self.q, zero_ok=False, one_ok=True)

    def sigma(self) -> float:
        """``σ`` (in lattice units) realised by ``q``: ``σ² = −1/(2 ln q)``."""
        if self.q == 1:
            return math.inf
        return math.sqrt(-1 / (2 * math.log(self.q)))

    def scalar(self, u: Fraction) -> ScalarDistribution:
        m = self.size
        a = self.index(u)
        weights = [self.q ** ((v - a) ** 2) for v in range(m)]
        z = sum(weights, Fraction(0))
        return tuple((self.value(v), w / z) for v, w in enumerate(weights))

    def describe(self) -> str:
        return f"discrete_gaussian(q={self.q}, range=[{self.lo},{self.hi}], step={self.step})"


def randomized_response(grid: Sequence[Num], r: Num, strict: bool = False, bounded: bool = False,
                        clip: bool = False, where: Position | None = None) -> RandomizedResponse:
    """Build :class:`RandomizedResponse` from plain numbers (``strict``, ``bounded``: a value off the grid,
    or outside its range, is an error at ``where``; ``clip``: a value outside the range is clipped to
    its nearest end first)."""
    return RandomizedResponse(tuple(Fraction(g) for g in grid), Fraction(r), strict=strict, bounded=bounded,
                              clip=clip, where=where)


def geometric(r: Num, lo: Num, hi: Num, step: Num = 1, strict: bool = False, clip: bool = False,
              bounded: bool = False, where: Position | None = None) -> GeometricMechanism:
    """Build :class:`GeometricMechanism` from plain numbers (``strict``/``clip``/``bounded``: module
    docstring)."""
    return GeometricMechanism(Fraction(lo), Fraction(hi), Fraction(step), strict=strict, clip=clip,
                              bounded=bounded, where=where, r=Fraction(r))


def discrete_gaussian(q: Num, lo: Num, hi: Num, step: Num = 1, strict: bool = False, clip: bool = False,
                      bounded: bool = False, where: Position | None = None) -> TruncatedDiscreteGaussian:
    """Build :class:`TruncatedDiscreteGaussian` from plain numbers (``strict``/``clip``/``bounded``:
    module docstring)."""
    return TruncatedDiscreteGaussian(Fraction(lo), Fraction(hi), Fraction(step), strict=strict, clip=clip,
                                     bounded=bounded, where=where, q=Fraction(q))


def rational_exp(x: float, max_denominator: int = 10**12) -> Fraction:
    """A rational approximation of ``e^{x}`` (continued fractions, denominator ≤ ``max_denominator``):
    the exact base of a mechanism whose parameter is given as ε or σ; the mechanism then realises
    ``ln`` of the result, equal to ``x`` to float precision."""
    return Fraction(math.exp(x)).limit_denominator(max_denominator)


MECHANISM_KINDS = ("none", "randomized_response", "geometric", "discrete_gaussian")
