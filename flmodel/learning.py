"""Learning with exact numbers: vectors of Fractions, losses with exact (sub)gradients, the client
update ``w − η·∇L(w; P_k)`` and the FedAvg aggregation ([IIIf-FL] Section III-A, Algorithm 1, and
Section III-B, rules ``get_grad`` and ``eval_server``).

Conventions (recorded in ``spec/SPEC.md``):

* A model parameter ``w`` ([IIIf-FL]'s type variable ``α``) is a tuple of :class:`~fractions.Fraction`.
* The local objective is the mean loss ``F_k(w) = (1/n_k) Σ_{i ∈ P_k} f_i(w)`` of Section III-A.
  For an empty part (``n_k = 0``) the mean is undefined; we take ``∇F_k = 0`` (the gradient of the
  empty *sum*), so the client update of an empty part is ``w`` itself.
* Division by zero follows Isabelle/HOL's field convention ``x / 0 = 0``: in ``eval_server`` with
  ``n = card(dataset G) = 0`` every weight ``card(partition G c)/n`` is 0.
* All computations are memoized (``functools.lru_cache``): the model checker asks for the same
  ``(w, P_k)`` update in many states.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Protocol

from flmodel.data import DataPoint

#: A model parameter vector ([IIIf-FL]'s ``α :: num``), exact. Any tuple of Fractions is accepted;
#: results of this module are :class:`Vec` (a tuple with a cached hash).
Vector = tuple[Fraction, ...]


class Vec(tuple[Fraction, ...]):
    """A tuple of Fractions whose hash is computed once (hashing a Fraction is slow and model states
    are hashed whenever the explorer interns them). Equal to, and hashing like, the plain tuple."""

    def __hash__(self) -> int:
        d = self.__dict__
        h = d.get("h")
        if h is None:
            h = d["h"] = tuple.__hash__(self)
        return h

    def __reduce__(self) -> tuple[object, ...]:
        return (Vec, (tuple(self),))


def as_vec(v: Vector) -> Vec:
    """``v`` as a :class:`Vec` of Fractions (no copy when it already is one)."""
    if type(v) is Vec:
        return v
    return Vec(Fraction(x) for x in v)


ZERO = Fraction(0)
ONE = Fraction(1)


def vector(*xs: Fraction | int | str) -> Vector:
    """``vector(1, "1/2") == (Fraction(1), Fraction(1, 2))``."""
    return Vec(Fraction(x) for x in xs)


def zeros(d: int) -> Vector:
    """The zero vector of dimension ``d``."""
    return Vec((ZERO,) * d)


def vsub(u: Vector, v: Vector) -> Vector:
    """``u − v``."""
    if len(u) != len(v):
        raise ValueError(f"dimension mismatch: {len(u)} vs {len(v)}")
    return Vec(a - b for a, b in zip(u, v, strict=True))


def vscale(c: Fraction, v: Vector) -> Vector:
    """``c · v``."""
    return Vec(c * a for a in v)


def dot(u: Sequence[Fraction], v: Sequence[Fraction]) -> Fraction:
    """``u · v``."""
    if len(u) != len(v):
        raise ValueError(f"dimension mismatch: {len(u)} vs {len(v)}")
    return sum((a * b for a, b in zip(u, v, strict=True)), ZERO)


class Loss(Protocol):
    """A per-example loss ``f_i(w) = L(x_i, y_i; w)`` with an exact (sub)gradient. Losses are hashable
    values (they key the memo of client updates)."""

    @property
    def name(self) -> str:
        """The loss's name in scenarios and reports (``squared``, ``hinge``, …)."""
        ...

    def __hash__(self) -> int: ...

    def dim(self, n_features: int) -> int:
        """Dimension of ``w`` for data with ``n_features`` features."""
        ...

    def example_loss(self, w: Vector, p: DataPoint) -> Fraction:
        """``f_i(w)``."""
        ...

    def example_gradient(self, w: Vector, p: DataPoint) -> Vector:
        """``∇f_i(w)`` (a subgradient where ``f_i`` is not differentiable)."""
        ...


def _design(p: DataPoint, bias: bool) -> tuple[Fraction, ...]:
    return ((ONE, *p.features)) if bias else p.features


@dataclass(frozen=True, slots=True)
class SquaredLoss:
    """Squared loss for linear regression: ``f_i(w) = ½ (w·x̃_i − y_i)²`` with
    ``x̃_i = (1, x_i)`` when ``bias`` (so ``w_0`` is the intercept), else ``x̃_i = x_i``.

    ``∇f_i(w) = (w·x̃_i − y_i) x̃_i`` (the ½ makes the gradient free of a factor 2). This is the
    satellite temperature model: temperature ≈ w_0 + w_1·(location feature).
    """

    bias: bool = True
    name: str = "squared"

    def dim(self, n_features: int) -> int:
        return n_features + (1 if self.bias else 0)

    def example_loss(self, w: Vector, p: DataPoint) -> Fraction:
        r = dot(w, _design(p, self.bias)) - p.target
        return r * r / 2

    def example_gradient(self, w: Vector, p: DataPoint) -> Vector:
        x = _design(p, self.bias)
        r = dot(w, x) - p.target
        return tuple(r * xi for xi in x)


@dataclass(frozen=True, slots=True)
class HingeLoss:
    """Hinge loss for linear binary classification with labels ``y_i ∈ {−1, +1}``:
    ``f_i(w) = max(0, 1 − y_i · w·x̃_i)``.

    Subgradient (exact): ``−y_i x̃_i`` when ``y_i · w·x̃_i < 1``, else ``0`` (at the kink
    ``y_i · w·x̃_i = 1`` we choose the subgradient ``0``)."""

    bias: bool = True
    name: str = "hinge"

    def dim(self, n_features: int) -> int:
        return n_features + (1 if self.bias else 0)

    def example_loss(self, w: Vector, p: DataPoint) -> Fraction:
        self._check_label(p)
        m = p.target * dot(w, _design(p, self.bias))
        return max(ZERO, ONE - m)

    def example_gradient(self, w: Vector, p: DataPoint) -> Vector:
        self._check_label(p)
        x = _design(p, self.bias)
        if p.target * dot(w, x) < 1:
            return tuple(-p.target * xi for xi in x)
        return zeros(len(x))

    @staticmethod
    def _check_label(p: DataPoint) -> None:
        if p.target not in (ONE, -ONE):
            raise ValueError(f"hinge loss needs labels -1 or +1; data point {p} has {p.target}")


LOSSES: dict[str, Loss] = {"squared": SquaredLoss(), "hinge": HingeLoss()}


@lru_cache(maxsize=1 << 16)
def mean_loss(loss: Loss, w: Vector, points: frozenset[DataPoint]) -> Fraction:
    """``F_k(w) = (1/n_k) Σ_{i ∈ P_k} f_i(w)``; ``0`` for an empty part."""
    if not points:
        return ZERO
    return sum((loss.example_loss(w, p) for p in points), ZERO) / len(points)


@lru_cache(maxsize=1 << 16)
def mean_gradient(loss: Loss, w: Vector, points: frozenset[DataPoint]) -> Vector:
    """``∇F_k(w) = (1/n_k) Σ_{i ∈ P_k} ∇f_i(w)``; the zero vector for an empty part (see module
    docstring). The sum over a set of exact numbers does not depend on iteration order."""
    if not points:
        return zeros(len(w))
    total = list(zeros(len(w)))
    for p in points:
        g = loss.example_gradient(w, p)
        if len(g) != len(w):
            raise ValueError(f"model has dimension {len(w)} but data point {p} gives a gradient of {len(g)}")
        for i, gi in enumerate(g):
            total[i] += gi
    n = len(points)
    return Vec(t / n for t in total)


@lru_cache(maxsize=1 << 16)
def grad_step(loss: Loss, eta: Fraction, w: Vector, points: frozenset[DataPoint]) -> Vector:
    """The client update of [IIIf-FL] (Algorithm 1, ``ClientUpdate``; rule ``get_grad``):
    ``Gradc = w − η·∇L(w, P_c)``.

    >>> from flmodel.data import point
    >>> grad_step(SquaredLoss(), Fraction(1, 2), vector(0, 0), frozenset({point("a", 1, 2)}))
    (Fraction(1, 1), Fraction(1, 1))
    """
    g = mean_gradient(loss, w, points)
    return Vec(wi - eta * gi for wi, gi in zip(w, g, strict=True))


def fraction_div(a: Fraction | int, b: Fraction | int) -> Fraction:
    """``a / b`` with Isabelle/HOL's convention ``a / 0 = 0``."""
    if b == 0:
        return ZERO
    return Fraction(a) / Fraction(b)


def fedavg_weights(sizes: Mapping[str, int], n: int) -> dict[str, Fraction]:
    """The weights ``card(partition G c) / n`` of ``eval_server`` (``x/0 = 0``)."""
    return {c: fraction_div(k, n) for c, k in sizes.items()}


def aggregate(weighted: Iterable[tuple[Fraction, Vector]], dim: int) -> Vector:
    """``Σ_c weight_c · model_c`` (zero vector for an empty sum, of dimension ``dim``)."""
    total = list(zeros(dim))
    for weight, model in weighted:
        if len(model) != dim:
            raise ValueError(f"model {model} has dimension {len(model)}, expected {dim}")
        for i, m in enumerate(model):
            total[i] += weight * m
    return Vec(total)


def fedavg(items: tuple[tuple[int, Vector], ...], n: int, dim: int) -> Vector:
    """FedAvg aggregation ([IIIf-FL] III-A line 6 and III-B ``eval_server``):
    ``Newmodel = Σ_c (n_c / n) · w_c`` for ``items = ((n_c, w_c), ...)``, with ``x/0 = 0``.

    Computed as ``(Σ_c n_c · w_c) / n`` over a common denominator (the same rational, fewer gcds).
    Not memoized: in an exploration each aggregation state is expanded once. When
    ``Σ n_c = n > 0`` the weights sum to 1, so aggregating identical local models returns that model.

    >>> fedavg(((1, vector(2)), (3, vector(6))), 4, 1)
    (Fraction(5, 1),)
    """
    for _, w in items:
        if len(w) != dim:
            raise ValueError(f"model {w} has dimension {len(w)}, expected {dim}")
    if n == 0:
        return zeros(dim)
    live = [(k, w) for k, w in items if k]
    out = []
    for i in range(dim):
        # exact Σ k·(p/q) over a common denominator, normalised once (faster than adding Fractions)
        lcm = 1
        for _, w in live:
            lcm = math.lcm(lcm, w[i].denominator)
        num = 0
        for k, w in live:
            x = w[i]
            num += k * x.numerator * (lcm // x.denominator)
        out.append(Fraction(num, lcm * n))
    return Vec(out)
