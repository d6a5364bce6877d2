"""Cross-validation of formal values against the numerical curve and the audit."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from checker.crossval.crossval_scenario import cross_validate
from checker.crossval.gaussian import rr_delta
from checker.verdict import Verdict

P0 = {"yes": Fraction(3, 4), "no": Fraction(1, 4)}
P1 = {"yes": Fraction(1, 4), "no": Fraction(3, 4)}


def test_consistent_formal_value_holds_and_reports_tightness() -> None:
    cv = cross_validate(P0, P1, formal_eps=math.log(3), trials=20_000, seed=1)
    assert cv.verdict is Verdict.HOLDS
    assert cv.numerical_eps == math.log(3)
    assert cv.tightness == 1.0
    assert cv.audit_tightness is not None and 0.8 < cv.audit_tightness <= 1.0
    np.testing.assert_allclose(cv.numerical_delta, rr_delta(0.75, cv.eps_grid), atol=1e-12)
    assert {"eps", "fpr", "fnr", "eps_lower", "delta"} <= set(cv.to_json())


def test_loose_formal_value_is_consistent_but_not_tight() -> None:
    cv = cross_validate(P0, P1, formal_eps=2 * math.log(3), trials=5000)
    assert cv.verdict is Verdict.HOLDS
    assert cv.tightness == 0.5


def test_understated_formal_value_is_flagged() -> None:
    cv = cross_validate(P0, P1, formal_eps=0.5, trials=20_000, seed=2)
    assert cv.verdict is Verdict.VIOLATED
    names = {c.name: c.verdict for c in cv.checks}
    assert names["numerical ≤ formal"] is Verdict.VIOLATED
    assert names["audit ≤ formal"] is Verdict.VIOLATED  # the attack alone refutes ε = 0.5
    assert names["audit ≤ numerical"] is Verdict.HOLDS


def test_formal_delta_curve_checked() -> None:
    grid = np.linspace(0, 2, 11)
    good = rr_delta(0.75, grid)
    assert cross_validate(P0, P1, formal_delta=good, eps_grid=grid, trials=1000).verdict is Verdict.HOLDS
    bad = good * 0.9
    cv = cross_validate(P0, P1, formal_delta=bad, eps_grid=grid, trials=1000)
    assert cv.verdict is Verdict.VIOLATED


def test_disjoint_supports_infinite_epsilon() -> None:
    cv = cross_validate({"a": Fraction(1)}, {"b": Fraction(1)}, formal_eps=math.inf, trials=500)
    assert cv.numerical_eps == math.inf
    # perfect distinguisher: zero errors, bounded only by the Clopper–Pearson bound for 0 of 500 at
    # level (1 − 0.95)/(2 · 2 thresholds)
    u = 1 - (0.05 / 4) ** (1 / 500)
    assert cv.audit.fpr == cv.audit.fnr == 0.0
    assert abs(cv.audit.eps_lower - math.log((1 - u) / u)) < 1e-9
    assert cv.verdict is Verdict.HOLDS
