"""Cross-validation of a formal privacy verdict against the numerical engine and an audit.

For one mechanism/observation of a formal model, given as the two exact finite output distributions
``P0`` (dataset D) and ``P1`` (neighbouring dataset D'), put side by side

* the **formal** upper value reported by the privacy checker (ε, optionally δ(ε) values),
* the **numerical** optimal curve of the pair ([SecAgg-MIA] eq. 4, both orders of the pair, exact for finite
  distributions) and its pure ε = ``max |ln P0/P1|``,
* the **audited** lower bound ([SecAgg-MIA] eq. 8–9, likelihood-ratio attack, Clopper–Pearson confidence).

Consistency requires ``audited ε_lower ≤ numerical ε ≤ formal ε`` (up to a tolerance), and the formal δ(ε)
at each ε no smaller than the numerical δ(ε). A violation means that the formal model, the privacy
checker or this engine is wrong. Tightness is reported as ``numerical ε / formal ε`` and
``ε_lower / formal ε``. Generic: no model import; the distributions come from the caller.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from checker.crossval.audit import AuditResult, DiscreteMechanism, audit
from checker.crossval.privacy_curves import DiscretePLD, Outcome, exact_epsilon
from checker.verdict import Verdict

FloatArray = NDArray[np.float64]

__all__ = ["Check", "CrossValidation", "cross_validate"]


@dataclass(frozen=True)
class Check:
    """One consistency check: its name, verdict and a sentence explaining the numbers."""

    name: str
    verdict: Verdict
    message: str


@dataclass(frozen=True)
class CrossValidation:
    """Side-by-side formal / numerical / audited values and the consistency checks."""

    name: str
    eps_grid: FloatArray
    numerical_delta: FloatArray
    numerical_eps: float
    formal_eps: float | None
    formal_delta: FloatArray | None
    audit: AuditResult
    checks: tuple[Check, ...]

    @property
    def verdict(self) -> Verdict:
        """``violated`` if any check is violated, ``holds`` otherwise."""
        bad = any(c.verdict is Verdict.VIOLATED for c in self.checks)
        return Verdict.VIOLATED if bad else Verdict.HOLDS

    @property
    def tightness(self) -> float | None:
        """``numerical ε / formal ε`` (1 = the formal bound is the exact value)."""
        if self.formal_eps is None or self.formal_eps == 0 or math.isinf(self.formal_eps):
            return None
        return self.numerical_eps / self.formal_eps

    @property
    def audit_tightness(self) -> float | None:
        """``audited ε_lower / formal ε``."""
        if self.formal_eps is None or self.formal_eps == 0 or math.isinf(self.formal_eps):
            return None
        return self.audit.eps_lower / self.formal_eps

    def rows(self) -> list[tuple[str, str, str]]:
        """Table rows ``(quantity, source, value)`` for the CLI / report."""

        def fmt(v: float | None) -> str:
            return "—" if v is None else ("inf" if math.isinf(v) else f"{v:.6g}")

        rows = [
            ("ε (upper)", "formal (privacy checker)", fmt(self.formal_eps)),
            ("ε (exact)", "numerical (eq. 4, exact)", fmt(self.numerical_eps)),
            (
                f"ε lower @δ={self.audit.delta:g}",
                f"audit ({self.audit.trials} trials, {self.audit.confidence:g} conf.)",
                fmt(self.audit.eps_lower),
            ),
            ("tightness", "numerical / formal", fmt(self.tightness)),
            ("audit tightness", "audited / formal", fmt(self.audit_tightness)),
        ]
        for c in self.checks:
            rows.append((c.name, str(c.verdict), c.message))
        return rows

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "verdict": str(self.verdict),
            "eps": self.numerical_eps if not math.isinf(self.numerical_eps) else "inf",
            "formal_eps": self.formal_eps,
            "eps_grid": self.eps_grid.tolist(),
            "delta": self.numerical_delta.tolist(),
            "formal_delta": None if self.formal_delta is None else self.formal_delta.tolist(),
            "fpr": self.audit.fpr,
            "fnr": self.audit.fnr,
            "eps_lower": self.audit.eps_lower,
            "tightness": self.tightness,
            "audit_tightness": self.audit_tightness,
            "checks": [
                {"name": c.name, "verdict": str(c.verdict), "message": c.message} for c in self.checks
            ],
        }


def cross_validate(
    p0: Mapping[Outcome, Fraction | float],
    p1: Mapping[Outcome, Fraction | float],
    formal_eps: float | None = None,
    formal_delta: ArrayLike | None = None,
    eps_grid: ArrayLike | None = None,
    trials: int = 20_000,
    confidence: float = 0.95,
    delta: float = 0.0,
    seed: int = 0,
    name: str = "observation",
    tol: float = 1e-9,
) -> CrossValidation:
    """Cross-validate a formal ε (and optionally δ(ε) at ``eps_grid``) for the pair ``(P0, P1)``."""
    f0: dict[Hashable, Fraction] = {k: Fraction(v) for k, v in p0.items()}
    f1: dict[Hashable, Fraction] = {k: Fraction(v) for k, v in p1.items()}
    grid = np.asarray(eps_grid if eps_grid is not None else np.linspace(0.0, 3.0, 31), dtype=float)
    plds = (DiscretePLD.from_distributions(f0, f1), DiscretePLD.from_distributions(f1, f0))
    num_delta = np.maximum(plds[0].delta(grid), plds[1].delta(grid))
    num_eps = max(exact_epsilon(f0, f1), exact_epsilon(f1, f0))
    num_eps_at_delta = max(p.epsilon(delta) for p in plds)
    mech = DiscreteMechanism(name, f0, f1, lambda d: max(p.epsilon(d) for p in plds))
    res = audit(mech, trials=trials, confidence=confidence, delta=delta, seed=seed)
    checks: list[Check] = []
    ok = res.eps_lower <= num_eps_at_delta + tol
    checks.append(
        Check(
            "audit ≤ numerical",
            Verdict.HOLDS if ok else Verdict.VIOLATED,
            f"audited ε_lower={res.eps_lower:.6g} vs numerical ε({delta:g})={num_eps_at_delta:.6g}"
            + ("" if ok else ": the engine is wrong"),
        )
    )
    fd = None
    if formal_eps is not None:
        ok = res.eps_lower <= formal_eps + tol
        checks.append(
            Check(
                "audit ≤ formal",
                Verdict.HOLDS if ok else Verdict.VIOLATED,
                f"audited ε_lower={res.eps_lower:.6g} vs formal ε={formal_eps:.6g}"
                + ("" if ok else ": the formal model or checker under-states the leakage"),
            )
        )
        ok = num_eps <= formal_eps + tol * max(1.0, abs(formal_eps))
        checks.append(
            Check(
                "numerical ≤ formal",
                Verdict.HOLDS if ok else Verdict.VIOLATED,
                f"exact ε={num_eps:.6g} vs formal ε={formal_eps:.6g}"
                + ("" if ok else ": the formal upper value is below the exact one"),
            )
        )
    if formal_delta is not None:
        fd = np.asarray(formal_delta, dtype=float)
        if fd.shape != grid.shape:
            raise ValueError("formal_delta must have one value per eps_grid point")
        gap = float(np.max(num_delta - fd))
        ok = gap <= tol
        checks.append(
            Check(
                "δ(ε): numerical ≤ formal",
                Verdict.HOLDS if ok else Verdict.VIOLATED,
                f"max over ε of numerical − formal δ = {gap:.3g}",
            )
        )
    return CrossValidation(name, grid, num_delta, num_eps, formal_eps, fd, res, tuple(checks))
