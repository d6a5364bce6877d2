"""Differential privacy of pairs of finite distributions: pure ε, δ(ε), NI-FL-DP decisions.

[IIIf-FL] Section III-C, ``definition NI_FL_DP I s0 s1 ε``: for states ``s0``, ``s1`` whose datasets
differ in one element, ``P(M ⊢F {curmodpar = curmodpar G0}) ≤ e^ε · P(M ⊢F {curmodpar = curmodpar G1})``.
Read over all outcomes ``o`` an attacker observes (and both orders of the pair, since ``◇1`` is
symmetric), this is pure ε-differential privacy of the two output distributions ``P0``, ``P1``:

* the smallest such ε is ``ε* = max_o |ln P0(o)/P1(o)|`` (``∞`` when the supports differ);
* for a given ε the smallest δ with ``P0(S) ≤ e^ε P1(S) + δ`` for all sets ``S`` (both directions) is the
  hockey-stick divergence ``δ(ε) = max(E_{e^ε}(P0‖P1), E_{e^ε}(P1‖P0))``, ``E_α(P‖Q) = Σ_o (P(o) − α Q(o))⁺``
  (Barthe & Olmedo, ICALP 2013; Balle et al., NeurIPS 2018).

Exactness.  Distributions may hold ``Fraction`` probabilities.  ε* is then reported as the logarithm of
an exact rational ratio (:class:`EpsilonResult.ratio` = ``e^ε*``).  A privacy parameter is an
:class:`Eps`: either ``ε`` rational (``Eps.of(Fraction(1, 2))``, or a decimal string, read exactly), or
``e^ε`` rational (``Eps.parse("ln(3)")``), or ``∞``.  Comparisons ``r ≤ e^ε`` between a rational ratio and
``e^ε`` are decided exactly: for rational ``ε ≠ 0`` and rational ``r ≠ 1`` the two sides are never equal
(Lindemann–Weierstrass: ``e^ε`` is transcendental), so a high-precision evaluation with growing precision
(mpmath) always decides.

This module is generic (it never imports ``flmodel``); the FL application is ``checker.app.privacy_fl``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, TypeVar

import mpmath

from checker.render import fraction_str
from checker.verdict import Verdict

__all__ = [
    "Distribution",
    "Eps",
    "EpsilonResult",
    "apply_channel",
    "compose_advanced",
    "compose_basic",
    "delta_for_epsilon",
    "eps_within",
    "hockey_stick",
    "ni_fl_dp",
    "per_round_epsilons",
    "post_process",
    "product_distribution",
    "pure_epsilon",
    "ratio_within",
    "validate_distribution",
    "worst_pair",
]

Number = Fraction | float
#: A finite (sub-)distribution: outcome -> probability (missing outcomes have probability 0).
Distribution = Mapping[Hashable, Number]
#: The outcome type of distributions whose outcomes are known to be more specific, e.g. sequences.
Outcome = TypeVar("Outcome", bound=Hashable)


def _is_exact(*dists: Mapping[Outcome, Number]) -> bool:
    return all(isinstance(v, (Fraction, int)) for d in dists for v in d.values())


def validate_distribution(p: Distribution, name: str = "P", *, allow_sub: bool = False,
                          tolerance: float = 1e-9) -> None:
    """Raise ``ValueError`` naming ``name`` and the outcome when ``p`` has a negative or non-finite
    probability or does not sum to 1 (exactly for ``Fraction`` values; ``allow_sub``: at most 1)."""
    for o, v in p.items():
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{name}: probability of {o!r} is {v}")
        if v < 0:
            raise ValueError(f"{name}: negative probability {v} for outcome {o!r}")
    total = sum(p.values(), Fraction(0)) if _is_exact(p) else math.fsum(float(v) for v in p.values())
    if isinstance(total, Fraction):
        bad = total > 1 if allow_sub else total != 1
    else:
        bad = total > 1 + tolerance if allow_sub else abs(total - 1) > tolerance
    if bad:
        raise ValueError(f"{name}: probabilities sum to {total}, expected {'at most ' if allow_sub else ''}1")


# ---------------------------------------------------------------------------------------------------
# Privacy parameters and exact comparisons with e^ε
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Eps:
    """A privacy parameter ε ≥ 0, known exactly: ``value`` (ε rational), or ``ratio`` (``e^ε``
    rational, ε = ln ratio), or ``infinite``."""

    value: Fraction | None = None
    ratio: Fraction | None = None
    infinite: bool = False

    def __post_init__(self) -> None:
        given = (self.value is not None) + (self.ratio is not None) + self.infinite
        if given != 1:
            raise ValueError("an Eps needs exactly one of value, ratio, infinite")
        if self.value is not None and self.value < 0:
            raise ValueError(f"ε must be >= 0, got {self.value}")
        if self.ratio is not None and self.ratio < 1:
            raise ValueError(f"e^ε must be >= 1, got {self.ratio}")

    @classmethod
    def of(cls, x: Eps | Fraction | int | float | str) -> Eps:
        """From an ``Eps``, a number (a float is read as the exact rational it is), or text
        (:meth:`parse`)."""
        if isinstance(x, Eps):
            return x
        if isinstance(x, str):
            return cls.parse(x)
        if isinstance(x, float):
            if math.isinf(x) and x > 0:
                return cls(infinite=True)
            if not math.isfinite(x):
                raise ValueError(f"ε must be a non-negative number, got {x}")
        return cls(value=Fraction(x))

    @classmethod
    def parse(cls, text: str) -> Eps:
        """``"0.5"``, ``"1/3"`` (ε, read exactly), ``"ln(3)"``/``"log(3/2)"`` (``e^ε`` rational),
        ``"inf"``.  Raises ``ValueError`` saying what was expected."""
        t = text.strip().lower().replace(" ", "")
        if t in ("inf", "infinity", "∞"):
            return cls(infinite=True)
        m = re.fullmatch(r"(?:ln|log)\((.+)\)", t)
        try:
            if m:
                return cls(ratio=Fraction(m.group(1)))
            return cls(value=Fraction(t))
        except (ValueError, ZeroDivisionError) as exc:
            raise ValueError(f"cannot read ε from {text!r}: expected a non-negative number such as 0.5 "
                             f"or 1/3, ln(RATIO) such as ln(3), or inf ({exc})") from None

    def __float__(self) -> float:
        if self.infinite:
            return math.inf
        if self.ratio is not None:
            return math.log(self.ratio)
        assert self.value is not None
        return float(self.value)

    def exp_float(self) -> float:
        """``e^ε`` as a float (``inf`` for ∞)."""
        if self.infinite:
            return math.inf
        if self.ratio is not None:
            return float(self.ratio)
        return math.exp(float(self))

    def exp_exact(self) -> Fraction | None:
        """``e^ε`` as a Fraction when it is rational (ratio given, or ε = 0), else ``None``."""
        if self.ratio is not None:
            return self.ratio
        if self.value == 0:
            return Fraction(1)
        return None

    def text(self) -> str:
        if self.infinite:
            return "inf"
        if self.ratio is not None:
            return f"ln({fraction_str(self.ratio)})"
        assert self.value is not None
        return fraction_str(self.value)

    def json(self) -> float | str:
        return "inf" if self.infinite else float(self)


def ratio_within(r: Fraction | float, eps: Eps | float | Fraction | str) -> bool:
    """Decide ``r ≤ e^ε`` exactly (``r`` a non-negative rational, or ``inf``).

    With ``e^ε`` rational this is a Fraction comparison; with ε rational and non-zero, ``e^ε`` is
    transcendental so ``r ≠ e^ε`` and evaluating ``ln r − ε`` at growing precision decides."""
    e = Eps.of(eps)
    if isinstance(r, float):
        if math.isinf(r):
            return e.infinite
        r = Fraction(r)
    if e.infinite:
        return True
    if r <= 0:
        return True
    exact = e.exp_exact()
    if exact is not None:
        return r <= exact
    if r == 1:
        return True  # e^ε > 1 for ε > 0
    assert e.value is not None
    dps = 40
    while True:
        with mpmath.workdps(dps):
            diff = mpmath.log(mpmath.mpf(r.numerator) / r.denominator) - (
                mpmath.mpf(e.value.numerator) / e.value.denominator)
            if abs(diff) > mpmath.mpf(10) ** (-(dps - 10)) * (1 + abs(mpmath.mpf(e.value.numerator)
                                                              / e.value.denominator)):
                return bool(diff < 0)
        dps *= 2
        if dps > 100_000:  # cannot happen for a transcendental e^ε; guard against misuse
            raise ArithmeticError(f"could not decide {r} <= e^{e.value}")


def eps_within(a: Eps, b: Eps) -> bool:
    """``ε_a ≤ ε_b`` for two privacy parameters, decided exactly when ``e^ε_a`` is rational
    (:func:`ratio_within`), else on rational ε or floats."""
    if b.infinite:
        return True
    if a.infinite:
        return False
    ea = a.exp_exact()
    if ea is not None:
        return ratio_within(ea, b)
    if a.value is not None and b.value is not None:
        return a.value <= b.value
    return float(a) <= float(b)


# ---------------------------------------------------------------------------------------------------
# Pure ε
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EpsilonResult:
    """The smallest pure ε with ``e^{-ε} ≤ P0(o)/P1(o) ≤ e^ε`` for all outcomes ``o``.

    ``ratio`` is ``e^ε`` (exact ``Fraction`` when the inputs are exact; ``None`` when ε = ∞);
    ``outcome`` realises the maximum; ``direction`` is 0 when ``P0(o) > P1(o)`` there (the bound
    ``P0 ≤ e^ε P1`` is the tight one), 1 when ``P1(o) > P0(o)``; ``p0``, ``p1`` are the two
    probabilities of ``outcome``."""

    epsilon: float
    ratio: Fraction | float | None
    outcome: Hashable | None
    direction: int
    p0: Number
    p1: Number
    exact: bool

    @property
    def infinite(self) -> bool:
        return self.ratio is None

    def as_eps(self) -> Eps:
        if self.ratio is None:
            return Eps(infinite=True)
        return Eps(ratio=Fraction(self.ratio))

    def text(self) -> str:
        """``ln(3) ≈ 1.0986`` or ``inf``."""
        if self.ratio is None:
            return "inf"
        if self.ratio == 1:
            return "0"
        return f"ln({self.ratio}) ≈ {self.epsilon:.6g}"

    def json(self) -> float | str:
        return "inf" if self.ratio is None else self.epsilon


def pure_epsilon(p0: Distribution, p1: Distribution) -> EpsilonResult:
    """``ε* = max_o |ln P0(o)/P1(o)|`` over outcomes charged by either distribution (0 for two equal
    distributions; ``∞`` when some outcome has positive probability under exactly one of them).

    >>> r = pure_epsilon({"yes": Fraction(3, 4), "no": Fraction(1, 4)},
    ...                  {"yes": Fraction(1, 4), "no": Fraction(3, 4)})
    >>> r.ratio, r.text()
    (Fraction(3, 1), 'ln(3) ≈ 1.09861')
    """
    exact = _is_exact(p0, p1)
    best: tuple[Fraction | float, Hashable | None, int, Number, Number] = (
        Fraction(1) if exact else 1.0, None, 0, Fraction(0), Fraction(0))
    for o in _outcomes(p0, p1):
        a = p0.get(o, 0)
        b = p1.get(o, 0)
        if a == 0 and b == 0:
            continue
        if a == 0 or b == 0:
            return EpsilonResult(math.inf, None, o, 0 if a > 0 else 1, a, b, exact)
        r = Fraction(a) / Fraction(b) if exact else float(a) / float(b)
        direction = 0
        if r < 1:
            r = 1 / r
            direction = 1
        if r > best[0] or best[1] is None:
            best = (r, o, direction, a, b)
    r, o, direction, a, b = best
    eps = math.log(r) if r != 1 else 0.0
    return EpsilonResult(eps, r, o, direction, a, b, exact)


def _outcomes(*dists: Mapping[Outcome, object]) -> list[Outcome]:
    """All outcomes (keys) of the distributions in a deterministic order (sorted when comparable)."""
    seen: dict[Outcome, None] = {}
    for d in dists:
        for o in d:
            seen.setdefault(o, None)
    keys = list(seen)
    try:
        return sorted(keys)  # type: ignore[type-var]  # outcomes need not be comparable: TypeError sorts by repr
    except TypeError:
        return sorted(keys, key=repr)


# ---------------------------------------------------------------------------------------------------
# δ(ε): hockey-stick divergence
# ---------------------------------------------------------------------------------------------------


def hockey_stick(p: Distribution, q: Distribution, eps: Eps | float | Fraction | str) -> Number:
    """``E_{e^ε}(P‖Q) = Σ_o (P(o) − e^ε Q(o))⁺``.

    Exact (a ``Fraction``) when both distributions are exact and ``e^ε`` is rational; otherwise the
    set of outcomes with a positive term is decided exactly (:func:`ratio_within`) and the sum is
    evaluated in 50-digit arithmetic and returned as a float.  ``ε = ∞``: the P-mass where ``Q = 0``."""
    e = Eps.of(eps)
    exact = _is_exact(p, q)
    if e.infinite:
        mass = [p.get(o, 0) for o in _outcomes(p, q) if q.get(o, 0) == 0]
        return sum(mass, Fraction(0)) if exact else math.fsum(float(v) for v in mass)
    alpha = e.exp_exact()
    if exact and alpha is not None:
        total = Fraction(0)
        for o in _outcomes(p, q):
            v = Fraction(p.get(o, 0)) - alpha * Fraction(q.get(o, 0))
            if v > 0:
                total += v
        return total
    positive = []
    for o in _outcomes(p, q):
        a, b = p.get(o, 0), q.get(o, 0)
        if a == 0:
            continue
        if b == 0:
            positive.append((a, b))
            continue
        ratio = Fraction(a) / Fraction(b)
        if not ratio_within(ratio, e):
            positive.append((a, b))
    with mpmath.workdps(50):
        if e.value is not None:
            ealpha = mpmath.exp(_mp(e.value))
        else:
            assert e.ratio is not None  # a finite ε is given by its value or by e^ε
            ealpha = _mp(e.ratio)
        total_mp = mpmath.mpf(0)
        for a, b in positive:
            total_mp += _mp(a) - ealpha * _mp(b)
        return max(float(total_mp), 0.0)


def _mp(x: Number) -> mpmath.mpf:
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)


def delta_for_epsilon(p0: Distribution, p1: Distribution, eps: Eps | float | Fraction | str,
                      direction: Literal["both", "forward"] = "both") -> Number:
    """``δ(ε) = max(E_{e^ε}(P0‖P1), E_{e^ε}(P1‖P0))`` (``direction="forward"``: only ``E(P0‖P1)``,
    the one inequality of the seed's definition for the ordered pair ``(s0, s1)``)."""
    fwd = hockey_stick(p0, p1, eps)
    if direction == "forward":
        return fwd
    bwd = hockey_stick(p1, p0, eps)
    return fwd if fwd >= bwd else bwd


def ni_fl_dp(p0: Distribution, p1: Distribution, eps: Eps | float | Fraction | str,
             delta: Number = 0, direction: Literal["both", "forward"] = "both") -> Verdict:
    """Decide NI-FL-DP ([IIIf-FL], III-C) on the two distributions for the given ε (and δ, 0 for the
    seed's pure definition): ``P0(S) ≤ e^ε P1(S) + δ`` for every set ``S`` of outcomes (and the
    converse with ``direction="both"``).  With δ = 0 this is the per-outcome ratio test, decided
    exactly; otherwise ``δ(ε) ≤ δ``."""
    e = Eps.of(eps)
    if delta == 0:
        res = pure_epsilon(p0, p1)
        if direction == "forward":
            worst: Fraction | float = Fraction(0) if _is_exact(p0, p1) else 0.0
            for o in _outcomes(p0, p1):
                a, b = p0.get(o, 0), p1.get(o, 0)
                if a and not b:
                    return Verdict.HOLDS if e.infinite else Verdict.VIOLATED
                if a:
                    r = Fraction(a) / Fraction(b) if _is_exact(p0, p1) else float(a) / float(b)
                    worst = max(worst, r)
            return Verdict.HOLDS if ratio_within(worst, e) else Verdict.VIOLATED
        if res.ratio is None:
            return Verdict.HOLDS if e.infinite else Verdict.VIOLATED
        return Verdict.HOLDS if ratio_within(res.ratio, e) else Verdict.VIOLATED
    d = delta_for_epsilon(p0, p1, e, direction)
    return Verdict.HOLDS if d <= delta else Verdict.VIOLATED


def worst_pair(
    results: Iterable[tuple[Hashable, EpsilonResult]],
) -> tuple[Hashable, EpsilonResult] | None:
    """The pair with the largest ε (first one on ties; ∞ beats every finite ε)."""
    best: tuple[Hashable, EpsilonResult] | None = None
    for key, res in results:
        if best is None:
            best = (key, res)
            continue
        b = best[1]
        if b.ratio is None:
            continue
        if res.ratio is None or res.ratio > b.ratio:
            best = (key, res)
    return best


# ---------------------------------------------------------------------------------------------------
# Post-processing and composition
# ---------------------------------------------------------------------------------------------------


def post_process(p: Distribution, f: Callable[[Hashable], Hashable]) -> dict[Hashable, Number]:
    """Distribution of ``f(o)`` (a deterministic post-processing); DP's post-processing theorem says
    ``ε*(f(P0), f(P1)) ≤ ε*(P0, P1)`` and likewise for ``δ(ε)``."""
    out: dict[Hashable, Number] = {}
    for o, v in p.items():
        k = f(o)
        out[k] = out.get(k, 0) + v
    return out


def apply_channel(p: Distribution,
                  kernel: Callable[[Hashable], Mapping[Hashable, Number]]) -> dict[Hashable, Number]:
    """Distribution of a randomised post-processing: ``Σ_o P(o) K(o)(y)``."""
    out: dict[Hashable, Number] = {}
    for o, v in p.items():
        for y, w in kernel(o).items():
            out[y] = out.get(y, 0) + v * w
    return out


def product_distribution(dists: Sequence[Distribution]) -> dict[tuple[Hashable, ...], Number]:
    """The joint distribution of independent outcomes (tuples)."""
    joint: dict[tuple[Hashable, ...], Number] = {(): Fraction(1) if _is_exact(*dists) else 1.0}
    for d in dists:
        joint = {(*k, o): v * w for k, v in joint.items() for o, w in d.items() if w}
    return joint


def compose_basic(params: Sequence[tuple[Eps | float | Fraction | str, Number]]) -> tuple[Eps, Number]:
    """Basic (adaptive) composition: ``k`` mechanisms, the i-th ``(ε_i, δ_i)``-DP, compose to
    ``(Σ ε_i, Σ δ_i)`` (Dwork & Roth 2014, Thm. 3.16).  Exact ratios multiply; rational ε add."""
    es = [Eps.of(e) for e, _ in params]
    delta: Number = sum((d for _, d in params), Fraction(0)) if all(
        isinstance(d, (Fraction, int)) for _, d in params) else math.fsum(float(d) for _, d in params)
    if any(e.infinite for e in es):
        return Eps(infinite=True), delta
    ratios = [r for r in (e.exp_exact() for e in es) if r is not None]
    if len(ratios) == len(es):
        return Eps(ratio=math.prod(ratios, start=Fraction(1))), delta
    values = [e.value for e in es if e.value is not None]
    if len(values) == len(es):
        return Eps(value=sum(values, Fraction(0))), delta
    return Eps(value=Fraction(math.fsum(float(e) for e in es))), delta


def compose_advanced(eps: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    """Advanced composition (Dwork, Rothblum, Vadhan 2010): ``k``-fold adaptive composition of
    ``(ε, δ)``-DP mechanisms is ``(ε', kδ + δ')``-DP with
    ``ε' = sqrt(2k ln(1/δ')) ε + k ε (e^ε − 1)``."""
    if not 0 < delta_prime < 1:
        raise ValueError("delta_prime must be in (0, 1)")
    ep = math.sqrt(2 * k * math.log(1 / delta_prime)) * eps + k * eps * math.expm1(eps)
    return ep, k * delta + delta_prime


#: Marks the end of a sequence outcome in :func:`per_round_epsilons`.
END = "<end>"


def per_round_epsilons(p0: Mapping[tuple[Hashable, ...], Number],
                       p1: Mapping[tuple[Hashable, ...], Number]) -> list[EpsilonResult]:
    """Per-round ε of two distributions over sequences (e.g. the released models of rounds 1..R).

    ``ε_r = max_h ε*(P0(·|h), P1(·|h))`` over the prefixes ``h`` of length ``r`` that both
    distributions charge, the conditional distributions being over the next element (or :data:`END`).
    By the chain rule ``P(o) = Π_r P(o_r | o_<r)``, so ``ε*(P0, P1) ≤ Σ_r ε_r``: the adaptive
    composition bound over rounds, computed on the model (each ``outcome`` is ``(h, next)``)."""
    exact = _is_exact(p0, p1)
    maxlen = max((len(o) for o in (*p0, *p1)), default=0)
    out: list[EpsilonResult] = []
    for r in range(maxlen):  # at r = maxlen every sequence has ended: ε = 0
        cond0: dict[tuple[Hashable, ...], dict[Hashable, Number]] = {}
        cond1: dict[tuple[Hashable, ...], dict[Hashable, Number]] = {}
        for dist, cond in ((p0, cond0), (p1, cond1)):
            for o, v in dist.items():
                if len(o) < r or not v:
                    continue
                nxt = o[r] if len(o) > r else END
                row = cond.setdefault(tuple(o[:r]), {})
                row[nxt] = row.get(nxt, 0) + v
        best: EpsilonResult | None = None
        for h in _outcomes(cond0, cond1):
            a, b = cond0.get(h), cond1.get(h)
            if not a or not b:
                continue
            ta = sum(a.values(), Fraction(0)) if exact else math.fsum(float(x) for x in a.values())
            tb = sum(b.values(), Fraction(0)) if exact else math.fsum(float(x) for x in b.values())
            res = pure_epsilon({k: v / ta for k, v in a.items()}, {k: v / tb for k, v in b.items()})
            res = EpsilonResult(res.epsilon, res.ratio, (h, res.outcome), res.direction, res.p0, res.p1,
                                exact)
            if best is None or (best.ratio is not None and (res.ratio is None or res.ratio > best.ratio)):
                best = res
        if best is not None:
            out.append(best)
    return out
