"""Privacy auditing with one training run ([SNJ23]): an ε lower bound from m canaries, each included
independently with probability 1/2, and the auditor's guesses of which were included.

The auditor scores every canary, guesses "included" for the ``k_plus`` highest scores and "excluded"
for the ``k_minus`` lowest, and abstains on the rest: ``r = k_plus + k_minus`` guesses, ``v`` correct.
If the training is (ε, δ)-DP with respect to any one canary, [SNJ23] Thm. 5.2 / Cor. 5.4 bound the
probability of at least ``v`` correct guesses by

``p(ε, δ) = P[Binomial(r, e^ε/(1 + e^ε)) ≥ v] + 2 m δ · max_{1≤i≤v} P[v − i ≤ Binomial(r, ·) < v] / i``

(App. D's ``p_value_DP_audit``), so every ε with ``p(ε, δ) < 1 − confidence`` is rejected: the largest
such ε is a lower bound on the training's ε at that confidence (App. D's ``get_eps_audit``: bisection).
The guess counts are fixed before the scores are seen (a choice after seeing them would need a
correction), so the bound is valid as stated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = ["OneRunAudit", "epsilon_lower_bound", "one_run_audit", "p_value"]


def _check(m: int, r: int, v: int, delta: float) -> None:
    if not 0 <= v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got v={v}, r={r}, m={m}")
    if not 0 <= delta <= 1:
        raise ValueError(f"delta must be in [0, 1], got {delta!r}")


def p_value(m: int, r: int, v: int, eps: float, delta: float) -> float:
    """The probability of at least ``v`` correct guesses out of ``r`` under (ε, δ)-DP ([SNJ23] Cor. 5.4).

    >>> round(p_value(1000, 100, 75, 0.0, 0.0), 8) == round(float(stats.binom.sf(74, 100, 0.5)), 8)
    True
    """
    _check(m, r, v, delta)
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    q = 1.0 / (1.0 + math.exp(-eps))
    beta = float(stats.binom.sf(v - 1, r, q))
    if delta == 0 or v == 0:
        return min(beta, 1.0)
    pmf = stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)  # P[B = v − i], i = 1..v
    alpha = float(np.max(np.cumsum(pmf) / np.arange(1, v + 1)))
    return min(beta + alpha * delta * 2 * m, 1.0)


def epsilon_lower_bound(m: int, r: int, v: int, delta: float, confidence: float) -> float:
    """The largest ε rejected at level ``1 − confidence`` (bisection to 1e-9), 0 when none is.

    >>> round(epsilon_lower_bound(1000, 100, 75, 1e-4, 0.95), 3)  # [SNJ23] App. D, p. 46: 0.673
    0.673
    """
    _check(m, r, v, delta)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    beta = 1.0 - confidence
    if p_value(m, r, v, 0.0, delta) >= beta:
        return 0.0
    lo, hi = 0.0, 1.0
    while p_value(m, r, v, hi, delta) < beta:
        lo, hi = hi, hi + 1.0
        if hi > 200:
            return lo
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if p_value(m, r, v, mid, delta) < beta:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-9:
            break
    return lo


@dataclass(frozen=True)
class OneRunAudit:
    """The guesses and the bound: ``m`` canaries, ``r`` guesses (``k_plus`` included, ``k_minus``
    excluded), ``v`` correct, ``epsilon_lower`` at ``confidence`` for ``delta``."""

    m: int
    r: int
    v: int
    k_plus: int
    k_minus: int
    delta: float
    confidence: float
    epsilon_lower: float

    def to_json(self) -> dict[str, Any]:
        return {"canaries": self.m, "guesses": self.r, "correct": self.v, "guess_included": self.k_plus,
                "guess_excluded": self.k_minus, "delta": self.delta, "confidence": self.confidence,
                "epsilon_lower": self.epsilon_lower}


def one_run_audit(scores: ArrayLike, included: Sequence[bool] | ArrayLike, confidence: float, delta: float,
                  guesses: int | None = None) -> OneRunAudit:
    """Guess "included" for the ``guesses/2`` highest scores and "excluded" for the ``guesses/2`` lowest
    (``guesses`` default ``m/10``, fixed before the scores are seen) and bound ε ([SNJ23])."""
    s = np.asarray(scores, dtype=float)
    inc = np.asarray(included, dtype=bool)
    m = len(s)
    if inc.shape != s.shape or m == 0:
        raise ValueError("scores and inclusion bits must have the same non-zero length")
    if np.any(~np.isfinite(s)):
        raise ValueError("scores must be finite")
    r = max(2, m // 10) if guesses is None else guesses
    if not 1 <= r <= m:
        raise ValueError(f"guesses must be in 1..{m}, got {r}")
    k_plus = (r + 1) // 2
    k_minus = r - k_plus
    order = np.argsort(s, kind="stable")
    top, bottom = order[m - k_plus:], order[:k_minus]
    v = int(inc[top].sum() + (~inc[bottom]).sum())
    bound = epsilon_lower_bound(m, r, v, delta, confidence)
    return OneRunAudit(m, r, v, k_plus, k_minus, delta, confidence, bound)
