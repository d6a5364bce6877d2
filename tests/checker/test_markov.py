"""Tests for checker.markov: first passage, path sums, MDP min/max, observable distributions.

References: brute-force path enumeration, enumeration of all memoryless deterministic schedulers,
sympy's exact linear solver, closed forms."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.markov.distributions import bottom_absorption, observable_distribution, transient_distribution
from checker.markov.first_passage import reach_probabilities, reach_probability
from checker.markov.mdp import mdp_reach, mdp_reach_many, mdp_value_iteration
from checker.markov.models import dtmc_from_kripke, mdp_from_kripke
from checker.markov.pathsum import path_sum
from checker.markov.solve import solve_exact
from checker.mc.kripke import Kripke
from checker.mc.ts import Action
from tests.strategies import kripke_structures, mdp_structures

F = Fraction


def revisit_model() -> Kripke:
    """s0 -> s (1); s -> s0 (1/2), s -> end (1/2); end is a deadlock.  A run visits s 1, 2, 3, ...
    times with probabilities 1/2, 1/4, ...: first passage 1, expected visits (path sum) 2."""
    return Kripke.from_edges(3, [0], [0, 1, 1], [1, 0, 2], prob_exact=[F(1), F(1, 2), F(1, 2)],
                             state_names=["s0", "s", "end"])


def gambler(n: int, p: Fraction) -> Kripke:
    """Gambler's ruin on 0..n, start at 1, win with probability p; 0 and n absorbing deadlocks."""
    src, dst, pr = [], [], []
    for i in range(1, n):
        src += [i, i]
        dst += [i + 1, i - 1]
        pr += [p, 1 - p]
    return Kripke.from_edges(n + 1, [1], src, dst, prob_exact=pr)


def gambler_closed_form(n: int, p: Fraction, start: int = 1) -> Fraction:
    if p == F(1, 2):
        return F(start, n)
    r = (1 - p) / p
    return (1 - r**start) / (1 - r**n)


# ------------------------------------------------------------------------------ brute-force references


def enumerate_paths(k: Kripke, max_len: int):
    """All (path, probability) with path from an initial state (uniform initial distribution), at most
    max_len steps, under the uniform scheduler over choices (one choice per state here)."""
    dtmc = dtmc_from_kripke(k)
    rows = dtmc.rows_exact()
    out = []
    stack = [((s,), p) for s, p in dtmc.initial]
    while stack:
        path, pr = stack.pop()
        out.append((path, pr))
        if len(path) - 1 < max_len:
            for t, q in rows[path[-1]].items():
                stack.append(((*path, t), pr * q))
    return out


def sympy_reach(k: Kripke, target: np.ndarray) -> list[Fraction]:
    """Least solution of x = P x on non-target states by sympy (states that cannot reach target = 0)."""
    dtmc = dtmc_from_kripke(k)
    rows = dtmc.rows_exact()
    n = k.num_states
    # graph: can reach
    can = target.copy()
    changed = True
    while changed:
        changed = False
        for s in range(n):
            if not can[s] and any(can[t] for t, q in rows[s].items() if q > 0):
                can[s] = changed = True
    unk = [s for s in range(n) if can[s] and not target[s]]
    res = [F(int(target[s])) for s in range(n)]
    if unk:
        pos = {s: i for i, s in enumerate(unk)}
        a = sympy.zeros(len(unk), len(unk))
        b = sympy.zeros(len(unk), 1)
        for s in unk:
            a[pos[s], pos[s]] += 1
            for t, q in rows[s].items():
                if t in pos:
                    a[pos[s], pos[t]] -= sympy.Rational(q.numerator, q.denominator)
                elif target[t]:
                    b[pos[s]] += sympy.Rational(q.numerator, q.denominator)
        x = a.LUsolve(b)
        for s in unk:
            v = sympy.Rational(x[pos[s]])
            res[s] = F(int(v.p), int(v.q))
    return res


# ------------------------------------------------------------------------------ first passage


def test_gambler_closed_form_exact_and_float() -> None:
    for n, p in [(5, F(1, 2)), (6, F(2, 5)), (10, F(3, 4))]:
        k = gambler(n, p)
        d = dtmc_from_kripke(k)
        ex = reach_probability(d, [n], exact=True)
        fl = reach_probability(d, [n], exact=False)
        assert ex == gambler_closed_form(n, p)
        assert isinstance(fl, float) and abs(fl - float(ex)) < 1e-12


def test_first_passage_vs_path_sum_on_revisit() -> None:
    k = revisit_model()
    d = dtmc_from_kripke(k)
    ps = path_sum(d, [1], exact=True)
    assert ps.first_passage == 1
    assert ps.value == 2 and not ps.diverges and ps.differs_from_first_passage
    # brute force: the path sum up to length L equals the enumerated sum over paths ending in s
    for L in range(7):
        brute = sum((p for path, p in enumerate_paths(k, L) if path[-1] == 1), F(0))
        assert path_sum(d, [1], max_length=L, exact=True).value == brute
    # the truncated sums increase to 2; float agrees
    assert abs(path_sum(d, [1], exact=False).value - 2.0) < 1e-12
    # on the deadlock 'end' (visited at most once) both notions agree
    ps_end = path_sum(d, [2], exact=True)
    assert ps_end.value == ps_end.first_passage == 1 and not ps_end.differs_from_first_passage


def test_path_sum_diverges_on_recurrent_target() -> None:
    # 0 -> 1 (1/2), 0 -> 2 (1/2); 1 -> 1 (self-loop): state 1 is recurrent, visited forever
    k = Kripke.from_edges(3, [0], [0, 0, 1], [1, 2, 1], prob_exact=[F(1, 2), F(1, 2), F(1)])
    ps = path_sum(dtmc_from_kripke(k), [1], exact=True)
    assert ps.diverges and ps.value == float("inf") and ps.witness == 1 and ps.first_passage == F(1, 2)
    # a recurrent target that is unreachable does not make the sum diverge
    k2 = Kripke.from_edges(3, [0], [0, 1], [2, 1], prob_exact=[F(1), F(1)])
    ps2 = path_sum(dtmc_from_kripke(k2), [1], exact=True)
    assert not ps2.diverges and ps2.value == 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kripke_structures(max_states=5, probabilistic=True), st.data())
def test_first_passage_against_sympy_and_path_enumeration(k: Kripke, data: st.DataObject) -> None:
    n = k.num_states
    target = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    d = dtmc_from_kripke(k)
    ex = reach_probabilities(d, target, exact=True)
    fl = reach_probabilities(d, target, exact=False)
    ref = sympy_reach(k, target)
    assert list(ex) == ref
    assert np.max(np.abs(fl - np.array([float(v) for v in ref]))) < 1e-9
    # brute force first passage: paths that hit the target for the first time at their end
    init_val = reach_probability(d, target, exact=True)
    L = 7
    paths = enumerate_paths(k, L)
    first_hit = sum((p for path, p in paths if target[path[-1]] and not target[list(path[:-1])].any()),
                    F(0))
    alive = sum((p for path, p in paths if len(path) == L + 1 and not target[list(path)].any()), F(0))
    assert first_hit <= init_val <= first_hit + alive
    # path sum bounded by length L equals the brute-force sum over all paths ending in the target
    brute_ps = sum((p for path, p in paths if target[path[-1]]), F(0))
    assert path_sum(d, target, max_length=L, exact=True).value == brute_ps
    # path sum >= first passage; equal when no run can revisit the target
    ps = path_sum(d, target, exact=True)
    assert ps.diverges or ps.value >= ps.first_passage


@settings(max_examples=40, deadline=None)
@given(kripke_structures(max_states=5, probabilistic=True), st.data())
def test_path_sum_float_agrees_and_matches_truncation_limit(k: Kripke, data: st.DataObject) -> None:
    n = k.num_states
    target = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    d = dtmc_from_kripke(k)
    ex = path_sum(d, target, exact=True)
    fl = path_sum(d, target, exact=False)
    assert ex.diverges == fl.diverges
    if not ex.diverges:
        assert abs(float(ex.value) - fl.value) < 1e-9
        # truncated sums increase towards the limit
        t40 = path_sum(d, target, max_length=40, exact=False).value
        assert t40 <= float(ex.value) + 1e-9
    else:
        # the truncated sums grow without bound (at least linearly in the length)
        assert path_sum(d, target, max_length=60, exact=False).value > \
            path_sum(d, target, max_length=20, exact=False).value + 1e-3


def test_exact_solver_no_fill_on_chain_and_large_float_agreement() -> None:
    # a 1500-state random chain with back edges: every state reaches the end almost surely (Prob1),
    # although hitting times are astronomically long (a naive float solve returns ~1e-101 here)
    rng = np.random.default_rng(7)
    n = 1500
    src, dst, pr = [], [], []
    for s in range(n - 1):
        back = int(rng.integers(0, s + 1))
        src += [s, s]
        dst += [s + 1, back]
        q = F(int(rng.integers(1, 9)), 10)
        pr += [q, 1 - q]
    k = Kripke.from_edges(n, [0], src, dst, prob_exact=pr)
    d = dtmc_from_kripke(k)
    ex = reach_probabilities(d, [n - 1], exact=True)
    fl = reach_probabilities(d, [n - 1], exact=False)
    assert all(v == 1 for v in ex) and np.all(fl == 1.0)
    # with a trap (probability 1/20 from every state) the values are non-trivial: exact = float
    n = 200
    src, dst, pr = [], [], []
    trap = n
    for s in range(n - 1):
        back = int(rng.integers(0, s + 1))
        q = F(int(rng.integers(1, 9)), 10) * F(19, 20)
        src += [s, s, s]
        dst += [s + 1, back, trap]
        pr += [q, F(19, 20) - q, F(1, 20)]
    k = Kripke.from_edges(n + 1, [0], src, dst, prob_exact=pr)
    d = dtmc_from_kripke(k)
    ex = reach_probabilities(d, [n - 1], exact=True)
    fl = reach_probabilities(d, [n - 1], exact=False)
    assert 0 < ex[0] < 1
    assert np.max(np.abs(fl - np.array([float(v) for v in ex]))) < 1e-9


def test_solve_exact_small_system() -> None:
    # x0 = 1/2 x1 + 1/4 ; x1 = 1/3 x0 + 1/3
    sol = solve_exact({0: {1: F(1, 2)}, 1: {0: F(1, 3)}}, {0: F(1, 4), 1: F(1, 3)}, [0, 1])
    assert sol[0] == F(1, 2) * sol[1] + F(1, 4) and sol[1] == F(1, 3) * sol[0] + F(1, 3)


# ------------------------------------------------------------------------------ schedulers and MDPs


def all_deterministic_schedulers(k: Kripke):
    mdp = mdp_from_kripke(k)
    counts = np.diff(mdp.choice_ptr).tolist()
    ranges = [range(c) if c else [None] for c in counts]
    for combo in itertools.product(*ranges):
        yield {s: c for s, c in enumerate(combo) if c is not None}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mdp_structures(max_states=5, max_choices=3))
def test_mdp_min_max_against_all_schedulers(k: Kripke) -> None:
    target = k.labels["goal"]
    mdp = mdp_from_kripke(k)
    vals = []
    for sched in all_deterministic_schedulers(k):
        d = mdp.induced_dtmc(sched)
        vals.append(reach_probabilities(d, target, exact=True))
    best = [max(v[s] for v in vals) for s in range(k.num_states)]
    worst = [min(v[s] for v in vals) for s in range(k.num_states)]
    rmax = mdp_reach(mdp, target, "max", exact=True)
    rmin = mdp_reach(mdp, target, "min", exact=True)
    assert list(rmax.values) == best
    assert list(rmin.values) == worst
    # float policy iteration and value iteration agree
    for obj, ref in (("max", best), ("min", worst)):
        flp = mdp_reach(mdp, target, obj, exact=False)
        vi = mdp_value_iteration(mdp, target, obj)
        refa = np.array([float(x) for x in ref])
        assert np.max(np.abs(flp.values - refa)) < 1e-9
        assert np.max(np.abs(vi.values - refa)) < 1e-6
    # the returned policy attains the optimum
    d = mdp.induced_dtmc({s: int(c) for s, c in enumerate(rmax.policy.tolist()) if c >= 0})
    assert list(reach_probabilities(d, target, exact=True)) == best
    # MDP min <= DTMC (uniform scheduler) <= MDP max
    uni = reach_probabilities(mdp.induced_dtmc("uniform"), target, exact=True)
    assert all(worst[s] <= uni[s] <= best[s] for s in range(k.num_states))
    assert rmin.initial_value <= reach_probability(mdp.induced_dtmc("uniform"), target) <= rmax.initial_value


def test_min_needs_prob0a() -> None:
    # state 0: action a loops on itself forever (avoids goal), action b goes to goal; Pmin = 0, Pmax = 1
    acts = (Action("a"), Action("b"))
    k = Kripke.from_edges(2, [0], [0, 0], [0, 1], action=[0, 1], actions=acts, prob_exact=[F(1), F(1)])
    mdp = mdp_from_kripke(k)
    assert mdp_reach(mdp, [1], "min").initial_value == 0
    assert mdp_reach(mdp, [1], "max").initial_value == 1
    # scheduler by action
    d = mdp.induced_dtmc({0: Action("b")})
    assert reach_probability(d, [1]) == 1
    assert reach_probability(mdp.induced_dtmc("uniform"), [1]) == 1  # uniform leaves the loop a.s.
    with pytest.raises(ValueError, match="no choice with action"):
        mdp.induced_dtmc({0: Action("zzz")})


def test_non_probabilistic_kripke_is_an_mdp_of_edges() -> None:
    k = Kripke.from_edges(3, [0], [0, 0], [1, 2])
    mdp = mdp_from_kripke(k)
    assert not mdp.is_dtmc
    assert reach_probability(dtmc_from_kripke(k), [1], exact=True) == F(1, 2)
    assert mdp_reach(mdp, [1], "max").initial_value == 1 and mdp_reach(mdp, [1], "min").initial_value == 0


def test_incomplete_structure_rejected() -> None:
    k = Kripke.from_edges(2, [0], [0], [1], prob_exact=[F(1)], complete=False, limit_reason="max_states")
    with pytest.raises(ValueError, match="incomplete"):
        mdp_from_kripke(k)


# ------------------------------------------------------------------------------ observables


def test_observable_distribution_bounded_and_terminal() -> None:
    # two coin flips, observable = number of heads at the end; deadlock after two flips
    src, dst, pr = [], [], []
    # states: 0 start; 1 = H, 2 = T after one flip; 3 HH, 4 HT/TH, 5 TT
    for s, (h, t) in {0: (1, 2), 1: (3, 4), 2: (4, 5)}.items():
        src += [s, s]
        dst += [h, t]
        pr += [F(1, 2), F(1, 2)]
    k = Kripke.from_edges(6, [0], src, dst, prob_exact=pr)
    heads = [0, 1, 0, 2, 1, 0]
    d = dtmc_from_kripke(k)
    end = observable_distribution(d, heads, exact=True)
    assert end.dist == {2: F(1, 4), 1: F(1, 2), 0: F(1, 4)} and end.missing == 0
    one = observable_distribution(d, heads, steps=1, exact=True)
    assert one.dist == {1: F(1, 2), 0: F(1, 2)}
    five = observable_distribution(d, heads, steps=5, exact=True)  # deadlocks absorb
    assert five.dist == end.dist
    fl = observable_distribution(d, heads, exact=False)
    assert all(abs(fl.dist[v] - float(p)) < 1e-12 for v, p in end.dist.items())
    tr = transient_distribution(d, 2, exact=True)
    assert sum(tr) == 1


def test_observable_distribution_cyclic_with_missing_mass() -> None:
    k = revisit_model()
    d = dtmc_from_kripke(k)
    res = observable_distribution(d, ["a", "b", "c"], exact=True)
    assert res.dist == {"c": 1} and res.missing == 0
    # a model that may loop forever: 0 -> 0 (1/2), 0 -> 1 (1/4), 0 -> 2 (1/4); 2 -> 2 forever
    k2 = Kripke.from_edges(3, [0], [0, 0, 0, 2], [0, 1, 2, 2],
                           prob_exact=[F(1, 2), F(1, 4), F(1, 4), F(1)])
    r2 = observable_distribution(dtmc_from_kripke(k2), ["x", "end", "loop"], exact=True)
    assert r2.dist == {"end": F(1, 2), "loop": F(1, 2)} and r2.missing == 0
    # a closed cycle on which the value changes: its mass is 'missing' (no eventual value)
    k3 = Kripke.from_edges(4, [0], [0, 0, 2, 3], [1, 2, 3, 2], prob_exact=[F(1, 3), F(2, 3), F(1), F(1)])
    r3 = observable_distribution(dtmc_from_kripke(k3), ["x", "end", "u", "v"], exact=True)
    assert r3.dist == {"end": F(1, 3)} and r3.missing == F(2, 3)
    r3f = observable_distribution(dtmc_from_kripke(k3), ["x", "end", "u", "v"], exact=False)
    assert abs(r3f.dist["end"] - 1 / 3) < 1e-12 and abs(r3f.missing - 2 / 3) < 1e-12


@settings(max_examples=60, deadline=None)
@given(kripke_structures(max_states=6, probabilistic=True), st.data())
def test_bottom_absorption_against_first_passage(k: Kripke, data: st.DataObject) -> None:
    """Absorption masses agree with first-passage probabilities into each bottom component, sum to 1,
    and exact agrees with float."""
    d = dtmc_from_kripke(k)
    ex = bottom_absorption(d, exact=True)
    fl = bottom_absorption(d, exact=False)
    assert sum(m for _, m in ex) == 1
    for (comp, m), (comp2, mf) in zip(ex, fl, strict=True):
        assert comp == comp2 and abs(float(m) - mf) < 1e-9
        assert m == reach_probability(d, comp, exact=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mdp_structures(max_states=5, max_choices=3), st.data())
def test_mdp_reach_many_agrees_with_policy_iteration(k: Kripke, data: st.DataObject) -> None:
    n = k.num_states
    cols = data.draw(st.lists(st.lists(st.booleans(), min_size=n, max_size=n), min_size=1, max_size=3))
    targets = np.array(cols, dtype=bool).T
    mdp = mdp_from_kripke(k)
    for obj in ("min", "max"):
        many = mdp_reach_many(mdp, targets, obj)
        for j in range(targets.shape[1]):
            ref = mdp_reach(mdp, targets[:, j], obj, exact=True).values
            assert np.max(np.abs(many[:, j] - np.array([float(v) for v in ref]))) < 1e-6


def test_policy_iteration_does_not_switch_on_ties() -> None:
    """Regression: with a float tolerance 0.0, Fraction(1/3) > 1/3 + 0.0 made policy iteration switch
    to an equally valued self-loop (value 0 under that policy) and cycle forever."""
    acts = tuple(Action(f"a{i}") for i in range(3))
    k = Kripke.from_edges(4, [0], [0, 0, 0, 0, 0, 0, 1, 1], [1, 2, 3, 0, 0, 2, 0, 1],
                          action=[0, 0, 0, 1, 2, 2, 0, 0], actions=acts,
                          prob_exact=[F(2, 5), F(2, 5), F(1, 5), F(1), F(1, 3), F(2, 3), F(2, 3), F(1, 3)])
    res = mdp_reach(mdp_from_kripke(k), [3], "max", exact=True)
    assert res.initial_value == F(1, 3) and res.iterations == 1 and res.policy[0] == 0


@st.composite
def _acyclic_chains(draw: st.DrawFn) -> Kripke:
    """A random acyclic chain: every edge leads to a larger id; some states are deadlocks."""
    n = draw(st.integers(2, 25))
    src: list[int] = []
    dst: list[int] = []
    probs: list[F] = []
    for s in range(n - 1):
        targets = sorted(draw(st.sets(st.integers(s + 1, n - 1), max_size=3)))
        weights = draw(st.lists(st.integers(1, 5), min_size=len(targets), max_size=len(targets)))
        for t, w in zip(targets, weights, strict=True):
            src.append(s)
            dst.append(t)
            probs.append(F(w, sum(weights)))
    initial = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=2)))
    return Kripke.from_edges(n, initial, src, dst, prob_exact=probs)


@settings(max_examples=60, deadline=None)
@given(_acyclic_chains())
def test_bottom_absorption_on_acyclic_chains_is_first_passage(k: Kripke) -> None:
    """On acyclic chains the masses flow forward without a solve; each deadlock's mass is its exact
    first-passage probability (a linear solve), they sum to 1, and the float flow agrees."""
    d = dtmc_from_kripke(k)
    ex = bottom_absorption(d, exact=True)
    fl = bottom_absorption(d, exact=False)
    assert all(len(c) == 1 for c, _ in ex) and sum(m for _, m in ex) == 1
    for (comp, m), (comp2, mf) in zip(ex, fl, strict=True):
        assert comp == comp2 and isinstance(m, F) and abs(float(m) - mf) < 1e-12
        assert m == reach_probability(d, comp, exact=True)
