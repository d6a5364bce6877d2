"""Two independent engines agree: this numerical engine and the formal privacy checker
(checker.privacy.ni_fl_dp) on exact finite distributions (δ(ε) of eq. 4 in both directions, pure ε)."""

from __future__ import annotations

import math
from collections.abc import Hashable
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.crossval.privacy_curves import DiscretePLD, exact_epsilon
from checker.privacy import ni_fl_dp


@st.composite
def exact_pairs(draw: st.DrawFn) -> tuple[dict[Hashable, Fraction], dict[Hashable, Fraction]]:
    n = draw(st.integers(1, 5))
    w0 = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    w1 = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    w0[0] += 1
    w1[-1] += 1
    s0, s1 = sum(w0), sum(w1)
    keys = [f"o{i}" for i in range(n)]
    return (
        {k: Fraction(w, s0) for k, w in zip(keys, w0, strict=True) if w},
        {k: Fraction(w, s1) for k, w in zip(keys, w1, strict=True) if w},
    )


@settings(max_examples=80, deadline=None)
@given(exact_pairs(), st.sampled_from([0.0, 0.1, 0.5, 1.0, math.log(2), 2.5]))
def test_delta_and_pure_epsilon_agree(
    pair: tuple[dict[Hashable, Fraction], dict[Hashable, Fraction]], eps: float
) -> None:
    p0, p1 = pair
    ours = max(
        DiscretePLD.from_distributions(p0, p1).delta(eps)[0],
        DiscretePLD.from_distributions(p1, p0).delta(eps)[0],
    )
    theirs = float(ni_fl_dp.delta_for_epsilon(p0, p1, eps))
    assert ours == pytest.approx(theirs, abs=1e-12)
    e_ours = max(exact_epsilon(p0, p1), exact_epsilon(p1, p0))
    e_theirs = ni_fl_dp.pure_epsilon(p0, p1).epsilon
    assert (math.isinf(e_ours) and math.isinf(e_theirs)) or e_ours == pytest.approx(e_theirs, abs=1e-12)
    # ε(δ) of our curve at δ = theirs(ε) is at most ε
    if theirs < 1 and not math.isinf(e_ours):
        inv = max(
            p.epsilon(theirs)
            for p in (DiscretePLD.from_distributions(p0, p1), DiscretePLD.from_distributions(p1, p0))
        )
        assert inv <= eps + 1e-9
