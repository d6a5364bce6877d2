"""Tests for checker.privacy.schedulers: worst-case δ(ε) and ε* over schedulers of two observable MDPs.

The reference values come from this file's own simulation of the two MDPs (never the engine's history
tree) and from checker.privacy.ni_fl_dp on the simulated outcome distributions.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Hashable, Mapping
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from checker.privacy.ni_fl_dp import Eps, hockey_stick
from checker.privacy.observable_mdp import ObservableMDP, build_history_tree
from checker.privacy.scheduler_bounds import OutcomeKind, finals_separate
from checker.privacy.schedulers import scheduler_privacy, worst_delta, worst_epsilon

F = Fraction
Dist = dict[Hashable, Fraction]
#: history -> distribution over actions
Policy = Callable[[tuple[Hashable, ...]], Mapping[str, Fraction]]

GENERATED: dict[str, int] = {"worst": 0, "memoryless": 0, "uniform": 0, "randomised": 0, "separate": 0,
                             "merged": 0}


def examples(count: int) -> settings:
    return settings(max_examples=count, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


# ---------------------------------------------------------------------------------------------------
# Random small models: layers of states, enabled actions a function of the observation
# ---------------------------------------------------------------------------------------------------


@st.composite
def distributions(draw: st.DrawFn, support: list[str]) -> dict[str, Fraction]:
    weights = draw(st.lists(st.integers(0, 3), min_size=len(support), max_size=len(support)))
    if sum(weights) == 0:
        weights[draw(st.integers(0, len(support) - 1))] = 1
    return {s: F(w, sum(weights)) for s, w in zip(support, weights, strict=True) if w}


OFFERS: list[tuple[str, ...]] = [("a",), ("b",), ("a", "b")]


@st.composite
def model_pairs(draw: st.DrawFn, max_depth: int = 2, offers: list[tuple[str, ...]] = OFFERS
                ) -> tuple[ObservableMDP, ObservableMDP]:
    """Two layered MDPs over the observations 0 and 1; the actions a state enables are those its
    observation offers (drawn from ``offers``)."""
    depth = draw(st.integers(1, max_depth))
    layers = [[f"s{k}{i}" for i in range(draw(st.integers(1, 2)))] for k in range(depth + 1)]
    offered = {o: draw(st.sampled_from(offers)) for o in (0, 1)}
    models = []
    for _ in range(2):
        observation = {s: draw(st.integers(0, 1)) for layer in layers for s in layer}
        transitions = {s: {a: draw(distributions(layers[k + 1])) for a in offered[observation[s]]}
                       for k in range(depth) for s in layers[k]}
        models.append(ObservableMDP(draw(distributions(layers[0])), transitions, observation))
    return models[0], models[1]


EPSILONS = st.sampled_from([Eps.of(0), Eps.parse("ln(2)"), Eps.parse("ln(3/2)"), Eps.of(F(1, 2))])


# ---------------------------------------------------------------------------------------------------
# The reference: direct simulation and enumeration of schedulers
# ---------------------------------------------------------------------------------------------------


def split(pairs: list[list[tuple[Hashable, Fraction]]], models: tuple[ObservableMDP, ObservableMDP]
          ) -> dict[Hashable, tuple[Dist, Dist]]:
    out: dict[Hashable, tuple[Dist, Dist]] = {}
    for side in (0, 1):
        for state, p in pairs[side]:
            target = out.setdefault(models[side].observe(state), ({}, {}))[side]
            target[state] = target.get(state, F(0)) + p
    return out


def step(masses: tuple[Dist, Dist], action: str, models: tuple[ObservableMDP, ObservableMDP]
         ) -> dict[Hashable, tuple[Dist, Dist]]:
    return split([[(t, w * F(p)) for s, w in masses[side].items()
                   for t, p in models[side].transitions[s][action].items()] for side in (0, 1)], models)


def enabled(masses: tuple[Dist, Dist], models: tuple[ObservableMDP, ObservableMDP]) -> tuple[str, ...]:
    for side in (0, 1):
        for state in masses[side]:
            return models[side].enabled(state)
    return ()


def key(history: tuple[Hashable, ...], outcome: str) -> Hashable:
    return history[0::2] if outcome == "sequence" else history[-1]


class Illegal(Exception):
    """A policy plays an action that is not enabled at a history it reaches."""


def simulate(d: ObservableMDP, dp: ObservableMDP, policy: Policy, outcome: str) -> tuple[Dist, Dist]:
    """Outcome distributions of D and D' under a (randomised) history-dependent policy; ``Illegal``
    when it plays an action with positive probability where that action is not enabled."""
    models = (d, dp)
    result: tuple[Dist, Dist] = ({}, {})

    def walk(history: tuple[Hashable, ...], masses: tuple[Dist, Dist], weight: Fraction) -> None:
        actions = enabled(masses, models)
        if not actions:
            o = key(history, outcome)
            for side in (0, 1):
                result[side][o] = result[side].get(o, F(0)) + weight * sum(masses[side].values(), F(0))
            return
        for action, p in policy(history).items():
            if p and action not in actions:
                raise Illegal(history, action)
            if p:
                for o, child in step(masses, action, models).items():
                    walk((*history, action, o), child, weight * p)

    for o, masses in split([[(s, F(p)) for s, p in m.initial.items()] for m in models], models).items():
        walk((o,), masses, F(1))
    return result


def follow(table: Mapping[Hashable, str], *, memoryless: bool = False) -> Policy:
    """The deterministic policy playing ``table[history]`` (``table[observation]`` if memoryless)."""
    def policy(history: tuple[Hashable, ...]) -> dict[str, Fraction]:
        return {table[history[-1] if memoryless else history]: F(1)}
    return policy


def all_deterministic(d: ObservableMDP, dp: ObservableMDP, outcome: str, limit: int
                      ) -> list[tuple[Dist, Dist]]:
    """Outcome distributions of every deterministic history-dependent scheduler (``[]`` beyond
    ``limit`` schedulers)."""
    models = (d, dp)

    def merge(parts: tuple[tuple[Dist, Dist], ...]) -> tuple[Dist, Dist]:
        merged: tuple[Dist, Dist] = ({}, {})
        for part in parts:
            for side in (0, 1):
                for o, p in part[side].items():
                    merged[side][o] = merged[side].get(o, F(0)) + p
        return merged

    def explore(history: tuple[Hashable, ...], masses: tuple[Dist, Dist]) -> list[tuple[Dist, Dist]]:
        actions = enabled(masses, models)
        if not actions:
            o = key(history, outcome)
            return [({o: sum(masses[0].values(), F(0))}, {o: sum(masses[1].values(), F(0))})]
        found: list[tuple[Dist, Dist]] = []
        for action in actions:
            options = [explore((*history, action, o), child)
                       for o, child in step(masses, action, models).items()]
            if math.prod(len(x) for x in options) + len(found) > limit:
                raise OverflowError
            found.extend(merge(combo) for combo in itertools.product(*options))
        return found

    roots = split([[(s, F(p)) for s, p in m.initial.items()] for m in models], models)
    try:
        options = [explore((o,), masses) for o, masses in roots.items()]
        if math.prod(len(x) for x in options) > limit:
            return []
        return [merge(combo) for combo in itertools.product(*options)]
    except OverflowError:
        return []


def all_memoryless(d: ObservableMDP, dp: ObservableMDP, outcome: str) -> list[tuple[Dist, Dist]]:
    offered: dict[Hashable, tuple[str, ...]] = {}
    for model in (d, dp):
        for state in model.transitions:
            if model.enabled(state):
                offered[model.observe(state)] = model.enabled(state)
    observations = sorted(offered, key=repr)
    found = []
    for actions in itertools.product(*(offered[o] for o in observations)):
        table = dict(zip(observations, actions, strict=True))
        found.append(simulate(d, dp, follow(table, memoryless=True), outcome))
    return found


def ratio(p: Fraction, q: Fraction) -> Fraction | float:
    return math.inf if q == 0 < p else (F(0) if q == 0 else p / q)


def max_ratio(first: Dist, second: Dist) -> Fraction | float:
    return max(ratio(first.get(o, F(0)), second.get(o, F(0))) for o in {*first, *second})


def close(x: Fraction | float, y: Fraction | float) -> bool:
    return math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-12)


# ---------------------------------------------------------------------------------------------------
# Generated models against brute force
# ---------------------------------------------------------------------------------------------------


@examples(150)
@given(model_pairs(), EPSILONS, st.sampled_from(["sequence", "final"]))
def test_worst_matches_all_deterministic_schedulers(pair: tuple[ObservableMDP, ObservableMDP], eps: Eps,
                                                    outcome: OutcomeKind) -> None:
    d, dp = pair
    candidates = all_deterministic(d, dp, outcome, limit=3000)
    assume(candidates)
    GENERATED["worst"] += 1
    tree = build_history_tree(d, dp)
    for direction in (0, 1):
        pairs = [(c[direction], c[1 - direction]) for c in candidates]
        expected_delta = max(hockey_stick(p, q, eps) for p, q in pairs)
        got = worst_delta(tree, eps, direction=direction, outcome=outcome)
        assert got.exact, got.note
        if eps.exp_exact() is not None:
            assert isinstance(got.value, Fraction) and got.value == expected_delta, (got, expected_delta)
        else:
            assert close(got.value, expected_delta), (got, expected_delta)
        # the reported scheduler attains the value
        table = got.scheduler.as_dict() if got.scheduler else {}
        attained = simulate(d, dp, follow(table), outcome)
        assert close(hockey_stick(attained[direction], attained[1 - direction], eps), got.value)
        # a branch and bound stopped after one node brackets the true value
        early = worst_delta(tree, eps, direction=direction, outcome=outcome, node_limit=1)
        assert float(early.value) <= float(expected_delta) + 1e-12 <= float(early.upper) + 2e-12, early
        assert early.exact or "node limit 1" in early.note

        expected_ratio = max(max_ratio(p, q) for p, q in pairs)
        got_eps = worst_epsilon(tree, direction=direction, outcome=outcome)
        assert got_eps.exact
        if expected_ratio == math.inf:
            assert got_eps.ratio is None and got_eps.value == math.inf
        else:
            assert got_eps.ratio == expected_ratio, (got_eps, expected_ratio)


@examples(100)
@given(model_pairs(max_depth=3), EPSILONS, st.sampled_from(["sequence", "final"]))
def test_memoryless_matches_all_memoryless_schedulers(pair: tuple[ObservableMDP, ObservableMDP], eps: Eps,
                                                      outcome: OutcomeKind) -> None:
    d, dp = pair
    GENERATED["memoryless"] += 1
    candidates = all_memoryless(d, dp, outcome)
    result = scheduler_privacy(d, dp, eps, schedulers="memoryless", outcome=outcome)
    for direction, got, got_eps in ((0, result.delta_forward, result.epsilon_forward),
                                    (1, result.delta_backward, result.epsilon_backward)):
        expected = max(hockey_stick(c[direction], c[1 - direction], eps) for c in candidates)
        assert got.exact and close(got.value, expected), (got, expected)
        if eps.exp_exact() is not None:
            assert got.value == expected
        expected_ratio = max(max_ratio(c[direction], c[1 - direction]) for c in candidates)
        assert got_eps.ratio == (None if expected_ratio == math.inf else expected_ratio), (
            got_eps, expected_ratio)
        assert got.scheduler is not None and got.scheduler.kind == "observation"


@examples(50)
@given(model_pairs(max_depth=3), EPSILONS, st.sampled_from(["sequence", "final"]))
def test_uniform_is_the_direct_computation(pair: tuple[ObservableMDP, ObservableMDP], eps: Eps,
                                           outcome: OutcomeKind) -> None:
    d, dp = pair
    GENERATED["uniform"] += 1
    models = (d, dp)

    def uniform(history: tuple[Hashable, ...]) -> dict[str, Fraction]:
        # the actions offered at a history are those of its current observation (by construction)
        for m in models:
            for s in m.transitions:
                if m.observe(s) == history[-1] and m.enabled(s):
                    return {a: F(1, len(m.enabled(s))) for a in m.enabled(s)}
        return {}

    p_d, p_dp = simulate(d, dp, uniform, outcome)
    result = scheduler_privacy(d, dp, eps, schedulers="uniform", outcome=outcome)
    assert result.delta_forward.value == hockey_stick(p_d, p_dp, eps) or (
        eps.exp_exact() is None and close(result.delta_forward.value, hockey_stick(p_d, p_dp, eps)))
    assert close(result.delta_backward.value, hockey_stick(p_dp, p_d, eps))
    r = max_ratio(p_d, p_dp)
    assert result.epsilon_forward.ratio == (None if r == math.inf else r)


@examples(50)
@given(model_pairs(), EPSILONS, st.sampled_from(["sequence", "final"]), st.integers(0, 2**32 - 1))
def test_worst_deterministic_dominates_randomised_schedulers(
        pair: tuple[ObservableMDP, ObservableMDP], eps: Eps, outcome: OutcomeKind, seed: int) -> None:
    """The convexity argument: no randomised history-dependent scheduler beats the worst deterministic
    one, for δ and for ε*."""
    d, dp = pair
    GENERATED["randomised"] += 1
    tree = build_history_tree(d, dp)
    worst = [worst_delta(tree, eps, direction=k, outcome=outcome) for k in (0, 1)]
    worst_eps = [worst_epsilon(tree, direction=k, outcome=outcome) for k in (0, 1)]
    rng = random.Random(seed)
    offered = {h: e for h, e in zip(tree.histories, tree.enabled, strict=True)}
    for _ in range(5):
        weights: dict[tuple[Hashable, ...], dict[str, Fraction]] = {}
        for h, actions in offered.items():
            if not actions:
                continue
            raw = [F(rng.randint(0, 4)) for _ in actions]
            if sum(raw) == 0:
                raw[0] = F(1)
            weights[h] = {a: w / sum(raw) for a, w in zip(actions, raw, strict=True)}
        dists = simulate(d, dp, weights.__getitem__, outcome)
        for k in (0, 1):
            sampled = hockey_stick(dists[k], dists[1 - k], eps)
            assert float(sampled) <= float(worst[k].value) + 1e-12, (sampled, worst[k])
            r = max_ratio(dists[k], dists[1 - k])
            bound = worst_eps[k].ratio
            assert bound is None or r <= bound, (r, worst_eps[k])


@examples(100)
@given(model_pairs(max_depth=3), EPSILONS)
def test_final_outcomes_per_leaf_equal_the_branch_and_bound(pair: tuple[ObservableMDP, ObservableMDP],
                                                           eps: Eps) -> None:
    """Where no deterministic scheduler reaches two leaves with one last observation
    (``finals_separate``), the bottom-up programme replaces the branch and bound: both give the same
    δ and ε*, and the condition holds on every deterministic scheduler's leaves (by simulation)."""
    d, dp = pair
    tree = build_history_tree(d, dp)
    separate = finals_separate(tree)
    GENERATED["separate" if separate else "merged"] += 1
    if separate:  # each deterministic scheduler reaches as many last observations as leaves
        schedulers = zip(all_deterministic(d, dp, "sequence", 3000), all_deterministic(d, dp, "final", 3000),
                         strict=True)
        assert all(len(by_leaf[0]) == len(by_final[0]) for by_leaf, by_final in schedulers)
    for direction in (0, 1):
        fast = [worst_delta(tree, eps, direction=direction, outcome="final"),
                worst_epsilon(tree, direction=direction, outcome="final")]
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("checker.privacy.scheduler_bounds.finals_separate", lambda *_a, **_k: False)
            plain = [worst_delta(tree, eps, direction=direction, outcome="final"),
                     worst_epsilon(tree, direction=direction, outcome="final")]
        assert all(p.exact for p in plain)
        assert close(fast[0].value, plain[0].value) and fast[1].ratio == plain[1].ratio
        if separate:
            assert "each final observation is one leaf" in fast[0].note


def test_enough_models_were_generated() -> None:
    if not all(GENERATED.values()):
        pytest.skip("counts the generative tests of this module; run the whole module")
    total = sum(GENERATED.values())
    assert total >= 300, f"only {total} generated models: {GENERATED}"


# ---------------------------------------------------------------------------------------------------
# A hand-made example where the scheduler matters
# ---------------------------------------------------------------------------------------------------


def lost_report(bit: int) -> ObservableMDP:
    """Two clients send a report; an insider loses one, the attacker sees the other.  Client 1 answers
    by randomised response on the target's bit (``yes`` w.p. 3/4 if the bit is 1, 1/4 if 0), client 2
    answers ``yes`` w.p. 1/2 whatever the data."""
    yes = F(3, 4) if bit else F(1, 4)
    return ObservableMDP(
        {"start": F(1)},
        {"start": {"lose_report_1": {"yes2": F(1, 2), "no2": F(1, 2)},
                   "lose_report_2": {"yes1": yes, "no1": 1 - yes}}},
        {"start": "sent", "yes1": "yes", "yes2": "yes", "no1": "no", "no2": "no"})


def test_insider_choosing_the_lost_report_beats_the_uniform_scheduler() -> None:
    """By hand.  Losing report 2 shows client 1's answer: P_D(yes) = 3/4, P_D'(yes) = 1/4, so
    ε* = ln((3/4)/(1/4)) = ln 3 and δ(0) = 3/4 − 1/4 = 1/2.  Losing report 1 shows client 2's answer,
    the same under D and D' (ε* = 0).  The uniform scheduler mixes both: P_D(yes) = (3/4 + 1/2)/2 = 5/8,
    P_D'(yes) = (1/4 + 1/2)/2 = 3/8, so ε* = ln(5/3) < ln 3 and δ(0) = 5/8 − 3/8 = 1/4 < 1/2.
    With ε = ln 2: worst δ = 3/4 − 2·1/4 = 1/4, uniform δ = 5/8 − 2·3/8 < 0, i.e. 0."""
    d, dp = lost_report(1), lost_report(0)
    worst = scheduler_privacy(d, dp, 0)
    uniform = scheduler_privacy(d, dp, 0, schedulers="uniform")
    assert worst.epsilon.ratio == 3 and uniform.epsilon.ratio == F(5, 3)
    assert worst.epsilon.value > uniform.epsilon.value
    assert worst.delta.value == F(1, 2) and uniform.delta.value == F(1, 4)
    assert worst.epsilon_forward.scheduler is not None
    assert worst.epsilon_forward.scheduler.as_dict() == {("sent",): "lose_report_2"}
    assert worst.epsilon_forward.scheduler.text() == "sent  =>  lose_report_2"
    assert (worst.epsilon_forward.p_d, worst.epsilon_forward.p_d_prime) == (F(3, 4), F(1, 4))
    assert worst.epsilon_forward.outcome == ("sent", "yes")
    assert scheduler_privacy(d, dp, "ln(2)").delta.value == F(1, 4)
    assert scheduler_privacy(d, dp, "ln(2)", schedulers="uniform").delta.value == 0
    for outcome in ("final", "sequence"):
        memoryless = scheduler_privacy(d, dp, 0, schedulers="memoryless", outcome=outcome)
        assert memoryless.epsilon.ratio == 3 and memoryless.delta.value == F(1, 2)


# ---------------------------------------------------------------------------------------------------
# Edge cases and bad input
# ---------------------------------------------------------------------------------------------------


def test_infinite_epsilon_and_float_models() -> None:
    d = ObservableMDP({"s": 1}, {"s": {"a": {"x": 1.0}, "b": {"y": 0.5, "x": 0.5}}}, {"s": 0, "x": 1, "y": 2})
    dp = ObservableMDP({"s": 1}, {"s": {"a": {"x": 1.0}, "b": {"x": 1.0}}}, {"s": 0, "x": 1, "y": 2})
    result = scheduler_privacy(d, dp, 1.0)
    assert result.epsilon_forward.ratio is None and result.epsilon_forward.value == math.inf
    assert result.epsilon_backward.ratio == 2.0
    assert result.delta_forward.value == pytest.approx(0.5)
    assert scheduler_privacy(d, dp, "inf").delta_forward.value == pytest.approx(0.5)
    assert scheduler_privacy(d, dp, "inf", outcome="final").delta_forward.value == pytest.approx(0.5)


def test_cycle_is_rejected() -> None:
    d = ObservableMDP({"s": F(1)}, {"s": {"a": {"t": F(1)}}, "t": {"a": {"s": F(1)}}}, {"s": 0, "t": 1})
    with pytest.raises(ValueError, match="not acyclic"):
        build_history_tree(d, d)


def test_bad_distribution_is_rejected() -> None:
    d = ObservableMDP({"s": F(1)}, {"s": {"a": {"t": F(1, 2)}}}, {"s": 0, "t": 1})
    with pytest.raises(ValueError, match="action 'a'"):
        build_history_tree(d, d)


def test_enabled_actions_must_agree_at_a_history() -> None:
    d = ObservableMDP({"s": F(1)}, {"s": {"a": {"t": F(1)}, "b": {"t": F(1)}}}, {"s": 0, "t": 1})
    dp = ObservableMDP({"s": F(1)}, {"s": {"a": {"t": F(1)}}}, {"s": 0, "t": 1})
    with pytest.raises(ValueError, match=r"differ at history 0: D state 's' enables \{a, b\}"):
        build_history_tree(d, dp)
    hidden = ObservableMDP({"u": F(1, 2), "v": F(1, 2)},
                           {"u": {"a": {"t": F(1)}}, "v": {"b": {"t": F(1)}}}, {"u": 0, "v": 0, "t": 1})
    with pytest.raises(ValueError, match="differ at history 0"):
        build_history_tree(hidden, hidden)


def test_memoryless_needs_one_action_set_per_observation() -> None:
    d = ObservableMDP({"s": F(1)}, {"s": {"a": {"t": F(1)}, "b": {"t": F(1)}}, "t": {"c": {"z": F(1)}}},
                      {"s": 0, "t": 0, "z": 1})
    with pytest.raises(ValueError, match="observation 0 offers different actions"):
        worst_delta(build_history_tree(d, d), 0, schedulers="memoryless")
    assert worst_delta(build_history_tree(d, d), 0).value == 0


def test_unknown_class_or_outcome() -> None:
    tree = build_history_tree(lost_report(1), lost_report(0))
    with pytest.raises(ValueError, match="unknown scheduler class"):
        worst_delta(tree, 0, schedulers="best")  # type: ignore[arg-type]  # deliberately not a scheduler class
    with pytest.raises(ValueError, match="unknown outcome"):
        worst_epsilon(tree, outcome="last")  # type: ignore[arg-type]  # deliberately not an outcome kind
