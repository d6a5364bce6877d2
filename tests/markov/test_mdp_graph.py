"""The graph precomputations of MDPs (:mod:`checker.markov.graph`: ``Prob0A``, ``Prob0E``, ``Prob1A``,
``Prob1E`` as backward passes over predecessor arrays) against the plain set fixpoints of
``tests/markov/mdp_reference.py``, flcheck's previous fixpoint, the values of every deterministic
scheduler, and Storm; and the schedulers they return."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from checker.markov import storm
from checker.markov.first_passage import reach_probabilities
from checker.markov.graph import MdpGraph, prob0a, prob0e, prob1a, prob1e
from checker.markov.mdp import graph_precomputation, mdp_reach
from checker.markov.models import Mdp, mdp_from_kripke
from checker.mc.kripke import Kripke
from checker.mc.ts import Action
from tests.markov import mdp_reference as ref
from tests.strategies import mdp_structures

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _sets(mdp: Mdp, target: np.ndarray) -> dict[str, np.ndarray]:
    g = MdpGraph.of(mdp)
    zero_min, _ = prob0e(g, target)
    one_max, _ = prob1e(g, target)
    return {"max_zero": prob0a(g, target), "min_zero": zero_min, "max_one": one_max,
            "min_one": prob1a(g, target)}


def _reference(mdp: Mdp, target: np.ndarray) -> dict[str, np.ndarray]:
    return {"max_zero": ref.max_zero(mdp, target), "min_zero": ref.min_zero(mdp, target),
            "max_one": ref.max_one(mdp, target), "min_one": ref.min_one(mdp, target)}


def _induced(mdp: Mdp, choice: np.ndarray) -> dict[int, int]:
    return {s: int(c) for s, c in enumerate(choice.tolist()) if c >= 0}


def random_mdp(n: int, seed: int, *, back: bool = True) -> Kripke:
    """``n`` states in a line, each with 1-3 choices: forward, a jump back (``back``), a trap, a loop;
    targets every state ``≡ 0 mod 17`` past the middle. Deep (about ``n`` layers) and branching."""
    rng = np.random.default_rng(seed)
    src: list[int] = []
    dst: list[int] = []
    act: list[int] = []
    probs: list[Fraction] = []
    for s in range(n):
        options = [[(min(n - 1, s + 1), Fraction(3, 4)), (n, Fraction(1, 4))],
                   [(max(0, s - int(rng.integers(1, 5))) if back else s, Fraction(1, 2)),
                    (min(n - 1, s + 2), Fraction(1, 2))],
                   [(s, Fraction(1))]]
        for a in sorted(rng.choice(3, size=int(rng.integers(1, 4)), replace=False).tolist()):
            for t, p in options[a]:
                src.append(s)
                dst.append(t)
                act.append(a)
                probs.append(p)
    goal = np.zeros(n + 1, dtype=bool)
    goal[[s for s in range(n // 2, n) if s % 17 == 0]] = True
    actions = tuple(Action(f"a{i}") for i in range(3))
    return Kripke.from_edges(n + 1, [0], src, dst, action=act, actions=actions, prob_exact=probs,
                             labels={"goal": goal})


@SETTINGS
@given(mdp_structures(max_states=8, max_choices=3))
def test_sets_equal_the_plain_fixpoints(k: Kripke) -> None:
    mdp = mdp_from_kripke(k)
    target = k.labels["goal"]
    got, want = _sets(mdp, target), _reference(mdp, target)
    for name in want:
        assert np.array_equal(got[name], want[name]), name
    assert np.array_equal(got["min_zero"], ref.previous_prob0(mdp, target, "min"))
    # the value-1 and value-0 sets are disjoint, the target is in both value-1 sets
    assert not (got["max_one"] & got["max_zero"]).any() and not (got["min_one"] & got["min_zero"]).any()
    assert (got["min_one"] <= got["max_one"]).all() and (got["max_zero"] <= got["min_zero"]).all()
    assert got["min_one"][target].all()


@pytest.mark.parametrize("n,seed,back", [(60, 1, True), (300, 2, True), (300, 3, False), (1200, 4, True)])
def test_deep_models_equal_the_plain_fixpoints(n: int, seed: int, back: bool) -> None:
    """Hundreds of layers (the previous fixpoint's iterations), the searches past the point where
    :mod:`checker.mc.reach` hands over to scipy."""
    k = random_mdp(n, seed, back=back)
    mdp = mdp_from_kripke(k)
    target = k.labels["goal"]
    got, want = _sets(mdp, target), _reference(mdp, target)
    for name in want:
        assert np.array_equal(got[name], want[name]), name
    assert np.array_equal(got["min_zero"], ref.previous_prob0(mdp, target, "min"))


def _all_schedulers(mdp: Mdp) -> list[dict[int, int]]:
    counts = np.diff(mdp.choice_ptr).tolist()
    ranges = [range(c) if c else [None] for c in counts]
    return [{s: c for s, c in enumerate(combo) if c is not None} for combo in itertools.product(*ranges)]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mdp_structures(max_states=5, max_choices=3))
def test_sets_are_where_the_optimum_is_zero_or_one(k: Kripke) -> None:
    """Against the exact values of every deterministic memoryless scheduler (they attain both optima)."""
    mdp = mdp_from_kripke(k)
    target = k.labels["goal"]
    values = [reach_probabilities(mdp.induced_dtmc(s), target, exact=True) for s in _all_schedulers(mdp)]
    best = np.array([max(v[s] for v in values) for s in range(mdp.num_states)], dtype=object)
    worst = np.array([min(v[s] for v in values) for s in range(mdp.num_states)], dtype=object)
    got = _sets(mdp, target)
    assert np.array_equal(got["max_zero"], best == 0) and np.array_equal(got["max_one"], best == 1)
    assert np.array_equal(got["min_zero"], worst == 0) and np.array_equal(got["min_one"], worst == 1)


@SETTINGS
@given(mdp_structures(max_states=8, max_choices=3))
def test_the_returned_schedulers_attain_zero_and_one(k: Kripke) -> None:
    """``Prob1E``'s choices reach the target almost surely from every state of its set, ``Prob0E``'s never
    reach it (whatever the other states choose), and ``mdp_reach``'s policy attains both optima."""
    mdp = mdp_from_kripke(k)
    target = k.labels["goal"]
    g = MdpGraph.of(mdp)
    one, choice = prob1e(g, target)
    assert ((choice >= 0) == (one & ~target)).all()
    values = reach_probabilities(mdp.induced_dtmc(_induced(mdp, choice)), target, exact=True)
    assert all(values[s] == 1 for s in np.flatnonzero(one).tolist())
    zero, avoid = prob0e(g, target)
    assert ((avoid >= 0) == (zero & (np.diff(mdp.choice_ptr) > 0))).all()
    values = reach_probabilities(mdp.induced_dtmc(_induced(mdp, avoid)), target, exact=True)
    assert all(values[s] == 0 for s in np.flatnonzero(zero).tolist())
    for objective in ("min", "max"):
        res = mdp_reach(mdp, target, objective, exact=True)
        attained = reach_probabilities(mdp.induced_dtmc(_induced(mdp, res.policy)), target, exact=True)
        assert list(attained) == list(res.values), objective


def test_min_policy_avoids_the_target_where_pmin_is_zero() -> None:
    """State 0 may go to the target (choice 0) or stay away forever (choice 1): ``Pmin = 0`` there, and the
    policy returned must be the one that stays away (the previous precomputation left choice 0)."""
    acts = (Action("go"), Action("stay"))
    k = Kripke.from_edges(2, [0], [0, 0], [1, 0], action=[0, 1], actions=acts, prob_exact=[Fraction(1)] * 2)
    res = mdp_reach(mdp_from_kripke(k), [1], "min", exact=True)
    assert res.initial_value == 0 and res.policy[0] == 1


def test_max_policy_leaves_an_end_component_where_pmax_is_one() -> None:
    """States 0 and 1 may loop between each other forever or leave to the target: ``Pmax = 1`` on both, and
    the policy returned must leave (a loop also has value 1 in the Bellman equations)."""
    acts = (Action("loop"), Action("leave"))
    k = Kripke.from_edges(3, [0], [0, 0, 1, 1], [1, 0, 0, 2], action=[0, 1, 0, 1], actions=acts,
                          prob_exact=[Fraction(1), Fraction(1), Fraction(1), Fraction(1)])
    mdp = mdp_from_kripke(k)
    pre = graph_precomputation(mdp, np.array([False, False, True]), "max")
    assert pre.one.all()
    res = mdp_reach(mdp, [2], "max", exact=True)
    d = mdp.induced_dtmc(_induced(mdp, res.policy))
    assert list(reach_probabilities(d, [2], exact=True)) == [1, 1, 1]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mdp_structures(max_states=8, max_choices=3))
def test_sets_agree_with_storm(k: Kripke) -> None:
    """Storm's exact ``Pmin``/``Pmax`` are 0 and 1 exactly on the sets (deadlocks looped: Storm's
    reading; a deadlock off the target is in both value-0 sets either way)."""
    pytest.importorskip("stormpy")
    mdp = mdp_from_kripke(k)
    target = k.labels["goal"]
    model = storm.from_mdp(mdp, {"goal": target}, exact=True)
    got = _sets(mdp, target)
    for objective in ("min", "max"):
        values = storm.reach_probabilities(model, "goal", objective=objective).values
        assert np.array_equal(got[f"{objective}_zero"], values == 0), objective
        assert np.array_equal(got[f"{objective}_one"], values == 1), objective
