"""Attacker advantage for the decisional problem between two finite distributions.

[IIIf-FL] Section II-D: ``Adv(A) = P_{x∈D1}(A(x) = 1) − P_{x∈D0}(A(x) = 1)``; Lemma II.2:
``Adv(A) = 2·P_{x∈D_b, b∈{0,1}}(A(x) = b) − 1``; Section III-D, Definition III.1 (decisional NI-FL-DP) and
Theorem 1 (Adv-FL-DP-Eq), stated as ``P(A(x) = b) = 1 − 1/(2e^{-1})`` and derived in its proof from
``Adv = 1 − 1/e^ε``.

What is computed here, on explicit distributions ``D0``, ``D1`` over the attacker's observations:

* the advantage of any (possibly randomised) attacker, its success probability in the balanced game
  and whether the seed's symmetry assumption ``P_{D0}(A=0) = P_{D1}(A=1)`` holds for it;
* the best advantage over all attackers, the total variation distance ``TV(D0, D1) = Σ (D1 − D0)⁺``,
  attained by the likelihood-ratio attacker "guess 1 iff ``D1(x) > D0(x)``" (Neyman–Pearson);
* named simple attackers: the best threshold test on one numeric feature of the observation;
* the bounds on the advantage implied by ε (and δ) — :func:`bounds` — side by side with the model's
  best advantage: the seed's Theorem 1 as stated and as derived in its proof, the tight pure-DP bound
  ``(e^ε − 1)/(e^ε + 1)`` (Kairouz et al. 2015), the tight ``(ε, δ)`` bound ``(e^ε − 1 + 2δ)/(e^ε + 1)``
  (Humphries et al., CSF 2023) and the looser ``e^ε − 1`` (Yeom et al. 2018).

Exact (``Fraction``) whenever the distributions are exact and ``e^ε`` is rational.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from checker.privacy.ni_fl_dp import Distribution, Eps, Number, _is_exact, _outcomes

__all__ = [
    "AttackerResult",
    "Bound",
    "advantage",
    "best_advantage",
    "bounds",
    "likelihood_ratio_attacker",
    "seed_theorem1_stated_probability",
    "threshold_attacker",
    "total_variation",
]

#: An attacker maps an observation to the probability of answering 1 ("the observation is from D1");
#: a deterministic attacker returns 0 or 1.
Attacker = Callable[[Hashable], Number]


@dataclass(frozen=True)
class AttackerResult:
    """An attacker's performance: ``advantage`` ([IIIf-FL] II-D), ``p1_says1 = P_{D1}(A=1)``,
    ``p0_says0 = P_{D0}(A=0)``, ``correct = (p1_says1 + p0_says0)/2`` (balanced game), ``symmetric``:
    whether the seed's symmetry assumption ``P_{D0}(A=0) = P_{D1}(A=1)`` holds for this attacker;
    ``description`` of the decision rule."""

    name: str
    advantage: Number
    p1_says1: Number
    p0_says0: Number
    correct: Number
    symmetric: bool
    description: str = ""


def advantage(d0: Distribution, d1: Distribution, attacker: Attacker, name: str = "attacker",
              description: str = "") -> AttackerResult:
    """``Adv(A) = P_{D1}(A=1) − P_{D0}(A=1)`` for an attacker returning ``Pr[A(x) = 1]``."""
    exact = _is_exact(d0, d1)
    zero: Number = Fraction(0) if exact else 0.0
    p1 = sum((v * attacker(x) for x, v in d1.items()), zero)
    p0_1 = sum((v * attacker(x) for x, v in d0.items()), zero)
    total0 = sum(d0.values(), zero)
    p0_0 = total0 - p0_1
    adv = p1 - p0_1
    correct = (p1 + p0_0) / 2
    sym = (p0_0 == p1) if exact else abs(float(p0_0) - float(p1)) < 1e-12
    return AttackerResult(name, adv, p1, p0_0, correct, sym, description)


def total_variation(d0: Distribution, d1: Distribution) -> Number:
    """``TV(D0, D1) = Σ_x (D1(x) − D0(x))⁺ = ½ Σ_x |D1(x) − D0(x)|``."""
    exact = _is_exact(d0, d1)
    total: Number = Fraction(0) if exact else 0.0
    for x in _outcomes(d0, d1):
        v = d1.get(x, 0) - d0.get(x, 0)
        if v > 0:
            total += v
    return total


def likelihood_ratio_attacker(d0: Distribution, d1: Distribution) -> Attacker:
    """The Neyman–Pearson attacker: answer 1 iff ``D1(x) > D0(x)``; its advantage is ``TV(D0, D1)``,
    the largest of all attackers (any attacker's advantage is ``Σ_x (D1 − D0)(x) A(x) ≤ Σ (D1 − D0)⁺``)."""
    ones = {x for x in _outcomes(d0, d1) if d1.get(x, 0) > d0.get(x, 0)}
    return lambda x: 1 if x in ones else 0


def best_advantage(d0: Distribution, d1: Distribution) -> AttackerResult:
    """The likelihood-ratio attacker's result (its advantage equals :func:`total_variation`)."""
    return advantage(d0, d1, likelihood_ratio_attacker(d0, d1), "likelihood-ratio",
                     "answer 1 iff D1(x) > D0(x)")


def threshold_attacker(d0: Distribution, d1: Distribution, feature: Callable[[Hashable], float | Fraction],
                       name: str) -> AttackerResult:
    """The best attacker of the form "answer 1 iff ``feature(x) ≥ t``" or "iff ``feature(x) ≤ t``"
    over all thresholds ``t`` (both directions tried; ties in the feature value go together)."""
    exact = _is_exact(d0, d1)
    zero: Number = Fraction(0) if exact else 0.0
    by_value: dict[float | Fraction, Number] = {}
    for x in _outcomes(d0, d1):
        f = feature(x)
        by_value[f] = by_value.get(f, zero) + (d1.get(x, 0) - d0.get(x, 0))
    values = sorted(by_value)
    best_adv: Number = zero
    best: tuple[str, float | Fraction | None] = ("never", None)
    # answer 1 iff f >= t: advantage = suffix sum of (D1 - D0); iff f <= t: prefix sum
    suffix = zero
    for v in reversed(values):
        suffix += by_value[v]
        if suffix > best_adv:
            best_adv, best = suffix, (">=", v)
    prefix = zero
    for v in values:
        prefix += by_value[v]
        if prefix > best_adv:
            best_adv, best = prefix, ("<=", v)
    op, t = best
    rule = "always answer 0" if t is None else f"answer 1 iff {name} {op} {t}"

    def attacker(x: Hashable) -> int:
        if t is None:
            return 0
        f = feature(x)
        return int(f >= t) if op == ">=" else int(f <= t)

    res = advantage(d0, d1, attacker, f"threshold({name})", rule)
    assert res.advantage == best_adv or not exact
    return res


# ---------------------------------------------------------------------------------------------------
# Bounds implied by ε
# ---------------------------------------------------------------------------------------------------


def seed_theorem1_stated_probability() -> float:
    """[IIIf-FL] Theorem 1 as printed: ``P(A(x) = b) = 1 − 1/(2e^{-1}) = 1 − e/2 ≈ −0.359``: a
    constant that does not depend on ε and is not a probability."""
    return 1 - 1 / (2 * math.exp(-1))


@dataclass(frozen=True)
class Bound:
    """One bound on the advantage: ``value`` (the advantage it allows), ``kind`` ("upper bound" or
    "equality claim"), ``holds`` on the model (best advantage ≤ value, resp. = value),
    ``epsilon``/``delta`` used, ``formula`` and ``note``."""

    name: str
    value: Number
    kind: str
    holds: bool
    formula: str
    epsilon: float | str
    delta: Number | None = None
    note: str = ""

    def json(self) -> dict[str, object]:
        return {"value": _num_json(self.value), "holds": self.holds, "kind": self.kind,
                "formula": self.formula, "epsilon": self.epsilon,
                "delta": None if self.delta is None else _num_json(self.delta), "note": self.note}


def _num_json(x: Number) -> float | str:
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return float(x)


def bounds(best: Number, eps: Eps | float | Fraction | str, delta: Number = 0) -> list[Bound]:
    """The bounds on ``Adv`` implied by ``(ε, δ)``, each checked against the model's ``best`` advantage.

    * ``seed_theorem1_stated`` — the theorem's conclusion ``P(A(x)=b) = 1 − 1/(2e^{-1})`` turned into
      an advantage with Lemma II.2: ``Adv = 2P − 1 = 1 − e`` (< 0): an equality claim that never holds;
    * ``seed_theorem1_proof`` — the proof's ``Adv = 1 − 1/e^ε`` as an equality claim;
    * ``seed_theorem1_proof_as_bound`` — the same read as an upper bound (valid for pure ε-DP, loose);
    * ``tight_pure`` — ``(e^ε − 1)/(e^ε + 1) = tanh(ε/2)``, tight for pure ε-DP (valid only when the
      model is ε-DP: with δ(ε) > 0 it may fail);
    * ``tight_approx`` — ``(e^ε − 1 + 2δ)/(e^ε + 1)``, tight for ``(ε, δ)``-DP;
    * ``yeom`` — ``e^ε − 1`` (valid for pure ε-DP, loose; exceeds 1 for ε > ln 2).
    """
    e = Eps.of(eps)
    ratio = e.exp_exact()
    exact = isinstance(best, Fraction) and ratio is not None and isinstance(delta, (Fraction, int))
    eps_json = e.json()
    out: list[Bound] = []

    def mk(value_exact: Callable[[Fraction], Fraction], value_float: Callable[[float], float]) -> Number:
        if e.infinite:
            return value_float(math.inf)
        if exact and ratio is not None:  # exact implies a rational e^ε
            return value_exact(ratio)
        return value_float(e.exp_float())

    def eq(a: Number, b: Number) -> bool:
        if isinstance(a, Fraction) and isinstance(b, Fraction):
            return a == b
        return abs(float(a) - float(b)) <= 1e-12

    def le(a: Number, b: Number) -> bool:
        if isinstance(a, Fraction) and isinstance(b, Fraction):
            return a <= b
        return float(a) <= float(b) + 1e-12

    stated_p = seed_theorem1_stated_probability()
    stated_adv = 2 * stated_p - 1
    out.append(Bound("seed_theorem1_stated", stated_adv, "equality claim", eq(best, stated_adv),
                     "Adv = 2(1 - 1/(2e^{-1})) - 1 = 1 - e", eps_json,
                     note=f"as printed, P(A(x)=b) = 1 - 1/(2e^-1) = {stated_p:.6f} (not a probability, "
                          "independent of ε)"))
    proof = mk(lambda r: 1 - 1 / r, lambda a: 1 - 1 / a if a != math.inf else 1.0)
    out.append(Bound("seed_theorem1_proof", proof, "equality claim", eq(best, proof), "Adv = 1 - 1/e^ε",
                     eps_json, note="P(A(x)=b) = 1 - 1/(2e^ε) after the proof's last step"))
    out.append(Bound("seed_theorem1_proof_as_bound", proof, "upper bound", le(best, proof),
                     "Adv <= 1 - 1/e^ε", eps_json, note="valid for pure ε-DP, not tight for ε > 0"))
    tight = mk(lambda r: (r - 1) / (r + 1), lambda a: (a - 1) / (a + 1) if a != math.inf else 1.0)
    out.append(Bound("tight_pure", tight, "upper bound", le(best, tight), "(e^ε - 1)/(e^ε + 1)", eps_json,
                     note="tight for pure ε-DP (randomized response attains it)"))
    d = delta
    tight_d = mk(lambda r: (r - 1 + 2 * Fraction(d)) / (r + 1),
                 lambda a: (a - 1 + 2 * float(d)) / (a + 1) if a != math.inf else 1.0)
    out.append(Bound("tight_approx", tight_d, "upper bound", le(best, tight_d),
                     "(e^ε - 1 + 2δ)/(e^ε + 1)", eps_json, delta,
                     note="tight for (ε, δ)-DP (Humphries et al. 2023)"))
    yeom = mk(lambda r: r - 1, lambda a: a - 1)
    out.append(Bound("yeom", yeom, "upper bound", le(best, yeom), "e^ε - 1", eps_json,
                     note="valid for pure ε-DP, loose"))
    return out


def bounds_json(items: list[Bound]) -> dict[str, dict[str, object]]:
    """``{name: {"value", "holds", "kind", "formula", "epsilon", "delta", "note"}}``."""
    return {b.name: b.json() for b in items}


def attackers_from_features(
    d0: Distribution, d1: Distribution, features: Mapping[str, Callable[[Hashable], float | Fraction]],
) -> list[AttackerResult]:
    """The likelihood-ratio attacker plus the best threshold attacker on each named feature."""
    res = [best_advantage(d0, d1)]
    for name, f in features.items():
        res.append(threshold_attacker(d0, d1, f, name))
    return res
