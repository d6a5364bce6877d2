"""The figures of a privacy loss distribution kept as atoms (merged prefixes of one loss): ε*, δ(ε),
ε(δ), exactly (:mod:`checker.privacy.observed_pld` builds the atoms).

An atom stands for prefixes of the same likelihood ratio ``P0(h)/P1(h)``; as every figure of a pair
of distributions depends on the outcomes only through their ratios and masses ([DworkRoth14] §3.5;
the privacy loss distribution of [KOV15]), the atoms' figures are those of the prefixes they stand
for. Generic: never imports ``flmodel``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from checker.privacy.ni_fl_dp import Eps, EpsilonResult, delta_for_epsilon, pure_epsilon

__all__ = ["Atom", "Ratio", "by_ratio", "epsilon_for_delta", "pld_delta", "pld_epsilon", "pld_pair",
           "ratio_key", "rep_before"]

#: ``None`` stands for an infinite ratio (``P1(h) = 0``).
Ratio = Fraction | None


def ratio_key(ratio: Ratio) -> Hashable:
    """The merge key of the exact pass within one pair of beliefs: the ratio itself (as its numerator
    and denominator, which hash faster than a ``Fraction``)."""
    return None if ratio is None else (ratio.numerator, ratio.denominator)


@dataclass
class Atom:
    """Merged prefixes: their ``ratio`` (``None`` = ∞), total masses ``m0``, ``m1``, how many prefixes
    (``count``), and a representative prefix ``rep`` (the least one in sort order, as the ranks of
    its observations: :attr:`Level.decode` gives the observations; ``whole``: a whole run, i.e. the
    prefixes ended there), whose own probabilities :attr:`Level.own` gives."""

    ratio: Ratio
    m0: Fraction
    m1: Fraction
    count: int
    rep: tuple[int, ...]
    whole: bool = False

    def merge(self, other: Atom) -> None:
        self.m0 += other.m0
        self.m1 += other.m1
        self.count += other.count
        if rep_before(other.rep, self.rep):
            self.rep, self.whole = other.rep, other.whole

    def child(self, o: int, p0: Fraction, p1: Fraction, factor: Ratio) -> Atom:
        """The prefixes extended by the observation of rank ``o`` with conditional probabilities
        ``p0``, ``p1`` (``factor`` = ``p0/p1``); by :data:`END` (rank -1), the prefixes as whole runs."""
        rep = self.rep if o < 0 else (*self.rep, o)
        return Atom(_times(self.ratio, factor), self.m0 * p0, self.m1 * p1, self.count, rep, o < 0)


def _times(r: Ratio, f: Ratio) -> Ratio:
    if r == 0 or f == 0:
        return Fraction(0)
    return None if r is None or f is None else r * f


def rep_before(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether representative ``a`` comes before ``b`` (the ranks follow the observations' order)."""
    return a < b


def by_ratio(atoms: Sequence[Atom]) -> list[Atom]:
    """The atoms merged by ratio (the least representative kept)."""
    merged: dict[Hashable, Atom] = {}
    for a in atoms:
        k = ratio_key(a.ratio)
        if k in merged:
            merged[k].merge(a)
        else:
            merged[k] = Atom(a.ratio, a.m0, a.m1, a.count, a.rep, a.whole)
    return list(merged.values())


def pld_pair(atoms: Sequence[Atom], decode: Callable[[tuple[int, ...]], tuple[Hashable, ...]] = tuple
             ) -> tuple[dict[Hashable, Fraction], dict[Hashable, Fraction]]:
    """The atoms as two distributions over their representatives (``decode``: the observations of a
    representative): the loss of each representative is that of every prefix it stands for, so every
    figure of the pair is that of the run."""
    p0: dict[Hashable, Fraction] = {decode(a.rep): a.m0 for a in atoms if a.m0}
    p1: dict[Hashable, Fraction] = {decode(a.rep): a.m1 for a in atoms if a.m1}
    return p0, p1


def pld_epsilon(atoms: Sequence[Atom], decode: Callable[[tuple[int, ...]], tuple[Hashable, ...]] = tuple,
                own: Callable[[Atom], tuple[Fraction, Fraction]] | None = None) -> EpsilonResult:
    """ε* of a PLD: the largest ``|ln ratio|``, with the representative prefix of the worst atom (the
    least among the atoms of that loss) and, with ``own``, its own probabilities (else the atom's
    masses), as :func:`~checker.privacy.ni_fl_dp.pure_epsilon` reports an outcome."""
    best: Atom | None = None
    size: Fraction | float = 1
    for a in atoms:
        r = a.ratio
        this: Fraction | float = math.inf if r is None or r == 0 else (r if r >= 1 else 1 / r)
        if best is None or this > size or (this == size and rep_before(a.rep, best.rep)):
            best, size = a, this
    if best is None:
        return pure_epsilon({}, {})
    p0, p1 = own(best) if own is not None else (best.m0, best.m1)
    if size == 1:
        return EpsilonResult(0.0, Fraction(1), decode(best.rep), 0, p0, p1, True)
    direction = 0 if best.ratio is None or best.ratio > 1 else 1
    if size == math.inf:
        return EpsilonResult(math.inf, None, decode(best.rep), direction, p0, p1, True)
    return EpsilonResult(math.log(size), size, decode(best.rep), direction, p0, p1, True)


def pld_delta(atoms: Sequence[Atom], eps: Eps) -> Fraction | float:
    """``δ(ε)`` of a PLD (both directions): ``Σ_{ratio > e^ε} (m0 − e^ε m1)`` and its mirror, exact
    when ``e^ε`` is rational, else :func:`~checker.privacy.ni_fl_dp.delta_for_epsilon` over the
    atoms."""
    alpha = None if eps.infinite else eps.exp_exact()
    if alpha is None and not eps.infinite:
        p0: dict[Hashable, Fraction | float] = {i: a.m0 for i, a in enumerate(atoms) if a.m0}
        p1: dict[Hashable, Fraction | float] = {i: a.m1 for i, a in enumerate(atoms) if a.m1}
        return delta_for_epsilon(p0, p1, eps)
    fwd = bwd = Fraction(0)
    for a in atoms:
        if alpha is None:  # ε = ∞: the mass the other side does not charge
            fwd += a.m0 if not a.m1 else 0
            bwd += a.m1 if not a.m0 else 0
            continue
        v = a.m0 - alpha * a.m1
        if v > 0:
            fwd += v
        w = a.m1 - alpha * a.m0
        if w > 0:
            bwd += w
    return max(fwd, bwd)


def epsilon_for_delta(p0: Mapping[Hashable, Fraction], p1: Mapping[Hashable, Fraction],
                      delta: Fraction) -> Ratio:
    """The least ``e^ε ≥ 1`` with ``δ(ε) ≤ delta`` (both directions): a rational, as ``E_α(P‖Q) =
    Σ_{P/Q > α} (P − α Q)`` is piecewise linear in ``α`` with rational pieces; ``None`` (ε = ∞) when
    the mass of outcomes ``Q`` does not charge exceeds ``delta``.

    >>> epsilon_for_delta({"a": Fraction(3, 4), "b": Fraction(1, 4)},
    ...                   {"a": Fraction(1, 4), "b": Fraction(3, 4)}, Fraction(1, 4))
    Fraction(2, 1)
    """
    best = Fraction(1)
    for p, q in ((p0, p1), (p1, p0)):
        a = sum((p[o] for o in p if not q.get(o)), Fraction(0))  # the outcomes of ratio ∞
        if a > delta:
            return None
        b = Fraction(0)
        finite = sorted(((p[o], q[o]) for o in p if q.get(o) and p[o]), key=lambda x: x[0] / x[1],
                        reverse=True)
        alpha = Fraction(0)
        for x, y in finite:
            r = x / y
            # E_α = a − α b on the segment below the previous ratio and above r (a, b: ratios > α)
            if a - r * b > delta:
                alpha = (a - delta) / b
                break
            a += x
            b += y
        else:
            alpha = (a - delta) / b if b and a > delta else Fraction(0)
        best = max(best, alpha)
    return best
