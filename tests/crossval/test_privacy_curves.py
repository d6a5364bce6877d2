"""Privacy curves of finite pairs and grid PLDs against brute force and closed forms
([SecAgg-MIA] eq. 4-6)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.crossval.curve_conversions import (
    advantage_from_eps_delta,
    best_advantage,
    delta_from_tradeoff,
    epsilon_for_delta,
    tradeoff_from_delta_curve,
)
from checker.crossval.gaussian import rr_delta, rr_matrix
from checker.crossval.privacy_curves import (
    DiscretePLD,
    GridPLD,
    exact_epsilon,
    hockey_stick,
    hockey_stick_exact,
    mechanism_delta,
)

weights = st.lists(st.integers(0, 20), min_size=2, max_size=6)


@st.composite
def pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(2, 6))
    p = np.array(draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)), dtype=float)
    q = np.array(draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)), dtype=float)
    p[0] += 1
    q[-1] += 1
    return p / p.sum(), q / q.sum()


def brute_hockey(p: np.ndarray, q: np.ndarray, alpha: float) -> float:
    """sup over events E of P(E) − α Q(E), by enumerating all events."""
    best = 0.0
    for r in range(len(p) + 1):
        for ev in itertools.combinations(range(len(p)), r):
            idx = list(ev)
            best = max(best, p[idx].sum() - alpha * q[idx].sum())
    return best


@settings(max_examples=60, deadline=None)
@given(pairs(), st.floats(-3, 3))
def test_hockey_stick_is_sup_over_events(pq: tuple[np.ndarray, np.ndarray], eps: float) -> None:
    p, q = pq
    a = math.exp(eps)
    assert hockey_stick(p, q, a) == pytest.approx(brute_hockey(p, q, a), abs=1e-12)
    assert DiscretePLD.from_arrays(p, q).delta(eps)[0] == pytest.approx(brute_hockey(p, q, a), abs=1e-12)


def test_hockey_stick_exact_rational() -> None:
    p = {"a": Fraction(1, 2), "b": Fraction(1, 3), "c": Fraction(1, 6)}
    q = {"a": Fraction(1, 6), "b": Fraction(1, 3), "c": Fraction(1, 2)}
    assert hockey_stick_exact(p, q, Fraction(2)) == Fraction(1, 6)
    assert hockey_stick_exact(p, q, Fraction(1)) == Fraction(1, 3)
    assert exact_epsilon(p, q) == pytest.approx(math.log(3), abs=1e-15)
    assert exact_epsilon({"a": Fraction(1)}, {"b": Fraction(1)}) == math.inf
    assert hockey_stick([1.0, 0.0], [0.0, 1.0], math.inf) == 1.0


@settings(max_examples=60, deadline=None)
@given(pairs())
def test_delta_non_increasing_and_convex_in_exp_eps(pq: tuple[np.ndarray, np.ndarray]) -> None:
    pld = DiscretePLD.from_arrays(*pq)
    x = np.linspace(0.05, 8.0, 400)
    d = pld.delta(np.log(x))
    assert np.all(np.diff(d) <= 1e-12)
    # convexity in x = e^eps: second differences on a uniform x grid are >= 0
    assert np.all(np.diff(d, 2) >= -1e-12)


@settings(max_examples=60, deadline=None)
@given(pairs(), st.floats(0.0, 0.9))
def test_epsilon_inverts_delta(pq: tuple[np.ndarray, np.ndarray], target: float) -> None:
    pld = DiscretePLD.from_arrays(*pq)
    e = pld.epsilon(target)
    if math.isinf(e):
        assert pld.infinity_mass > target
        return
    assert pld.delta(e)[0] <= target + 1e-9
    if e > 0:
        assert pld.delta(e - 1e-6)[0] > target - 1e-9


@settings(max_examples=60, deadline=None)
@given(pairs())
def test_tradeoff_is_a_tradeoff_function_and_dual_to_delta(pq: tuple[np.ndarray, np.ndarray]) -> None:
    p, q = pq
    pld = DiscretePLD.from_arrays(p, q)
    alpha = np.linspace(0, 1, 501)
    f = pld.tradeoff(alpha)
    assert np.all(f <= 1 - alpha + 1e-12)
    assert np.all(np.diff(f) <= 1e-12)
    assert np.all(np.diff(f, 2) >= -1e-9)  # convex
    assert f[-1] == pytest.approx(0.0, abs=1e-12)
    # continuity: refining the grid tenfold changes no value by more than the local slope allows
    fine = pld.tradeoff(np.linspace(0, 1, 5001))
    np.testing.assert_allclose(fine[::10], f, atol=1e-12)
    # Neyman-Pearson brute force: every deterministic test (event E rejecting P) is above f
    for r in range(len(p) + 1):
        for ev in itertools.combinations(range(len(p)), r):
            idx = list(ev)
            a, b = p[idx].sum(), 1 - q[idx].sum()
            assert pld.tradeoff(a)[0] <= b + 1e-9
    # conjugacy: E_{e^eps}(Q||P) = sup_alpha 1 - e^eps alpha - T(P,Q)(alpha)
    # (exact when the sup runs over f's breakpoints: the cumulative P-mass in likelihood-ratio order)
    rev = DiscretePLD.from_arrays(q, p)
    eps = np.linspace(-2, 2, 21)
    with np.errstate(divide="ignore", invalid="ignore"):
        order = np.argsort(np.log(p) - np.log(q), kind="stable")
    kinks = np.concatenate([[0.0], np.cumsum(p[order]), alpha])
    np.testing.assert_allclose(
        delta_from_tradeoff(kinks, pld.tradeoff(kinks), eps), rev.delta(eps), atol=1e-9
    )


def test_tradeoff_exact_breakpoints() -> None:
    p = np.array([0.75, 0.25])
    q = np.array([0.25, 0.75])
    pld = DiscretePLD.from_arrays(p, q)
    # RR(3/4): f(alpha) = max(0, 1 - 3 alpha, (1 - alpha)/3)
    a = np.linspace(0, 1, 101)
    np.testing.assert_allclose(
        pld.tradeoff(a), np.maximum.reduce([np.zeros_like(a), 1 - 3 * a, (1 - a) / 3]), atol=1e-12
    )
    assert best_advantage(a, pld.tradeoff(a)) == pytest.approx(0.5, abs=1e-12)
    assert advantage_from_eps_delta(math.log(3), 0.0) == pytest.approx(0.5, abs=1e-12)
    assert advantage_from_eps_delta(0.0, 0.0) == 0.0


def test_rr_closed_form_to_1e12() -> None:
    eps = np.linspace(-1, 3, 81)
    for p in (0.5, 0.6, 0.75, 0.9, 0.999):
        np.testing.assert_allclose(mechanism_delta(rr_matrix(p), eps), rr_delta(p, eps), atol=1e-12, rtol=0)


def test_tradeoff_from_delta_curve_of_pure_dp() -> None:
    eps = math.log(3)
    a = np.linspace(0, 1, 11)
    f = tradeoff_from_delta_curve([eps], [0.0], a)
    np.testing.assert_allclose(f, np.maximum.reduce([np.zeros_like(a), 1 - 3 * a, (1 - a) / 3]), atol=1e-12)
    assert epsilon_for_delta([0, 1, 2], [0.5, 0.1, 0.0], 0.1) == 1
    assert epsilon_for_delta([0, 1], [0.5, 0.2], 0.1) == math.inf


@settings(max_examples=40, deadline=None)
@given(pairs(), pairs())
def test_discrete_composition_is_product(
    a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]
) -> None:
    comp = DiscretePLD.from_arrays(*a).compose(DiscretePLD.from_arrays(*b))
    prod_p = np.multiply.outer(a[0], b[0]).ravel()
    prod_q = np.multiply.outer(a[1], b[1]).ravel()
    direct = DiscretePLD.from_arrays(prod_p, prod_q)
    eps = np.linspace(-1, 4, 26)
    np.testing.assert_allclose(comp.delta(eps), direct.delta(eps), atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(0, 30), min_size=1, max_size=8),
    st.integers(-5, 5),
    st.integers(2, 6),
    st.floats(0.0, 0.2),
)
def test_grid_self_compose_equals_exact_convolution(w: list[int], start: int, times: int, inf: float) -> None:
    m = np.array(w, dtype=float) + 1.0
    m = m / m.sum() * (1 - inf)
    h = 0.1
    g = GridPLD(h, start, m, inf)
    exact = DiscretePLD(g.losses, g.masses, inf)
    for _ in range(times - 1):
        exact = exact.compose(DiscretePLD(g.losses, g.masses, inf))
    eps = np.linspace(-1, 3, 41)
    got = g.self_compose(times, tail_mass=1e-30)
    np.testing.assert_allclose(got.delta(eps), exact.delta(eps), atol=1e-9)
    two = g.compose(g)
    np.testing.assert_allclose(two.delta(eps), g.self_compose(2, 1e-30).delta(eps), atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(pairs())
def test_best_advantage_is_total_variation(pq: tuple[np.ndarray, np.ndarray]) -> None:
    """max_α 1 − α − T(P,Q)(α) = TV(P, Q) = E_1(P‖Q) = δ(0); and the (ε, δ(ε)) advantage bound holds."""
    p, q = pq
    pld = DiscretePLD.from_arrays(p, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        order = np.argsort(np.log(p) - np.log(q), kind="stable")
    kinks = np.concatenate([[0.0], np.cumsum(p[order]), np.linspace(0, 1, 11)])
    tv = 0.5 * float(np.abs(p - q).sum())
    assert best_advantage(kinks, pld.tradeoff(kinks)) == pytest.approx(tv, abs=1e-12)
    assert pld.delta(0.0)[0] == pytest.approx(tv, abs=1e-12)
    for eps in (0.0, 0.5, 2.0):
        d = max(pld.delta(eps)[0], DiscretePLD.from_arrays(q, p).delta(eps)[0])
        assert tv <= advantage_from_eps_delta(eps, d) + 1e-12
