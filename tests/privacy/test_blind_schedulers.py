"""Tests for the blind scheduler class (checker.privacy.blind, and its use by schedulers and dp_query).

The reference is this file's own: every map from action words to actions (up to the models' depth) is
tried as a scheduler by simulating the two MDPs directly, a map being legal when every action it plays
at a reached history is enabled there; never the engine's history or word tree.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Hashable, Mapping
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from checker.privacy.blind import maximal_words, word_tree
from checker.privacy.dp_query import dp_query
from checker.privacy.ni_fl_dp import Eps, hockey_stick
from checker.privacy.observable_mdp import ObservableMDP, build_history_tree
from checker.privacy.scheduler_bounds import OutcomeKind
from checker.privacy.schedulers import canonical_class, scheduler_privacy, worst_delta, worst_epsilon
from tests.privacy.test_schedulers import (
    EPSILONS,
    Illegal,
    close,
    lost_report,
    max_ratio,
    model_pairs,
    simulate,
)

F = Fraction
#: models where both actions are often offered everywhere (as in [dpCTL]'s reactive MDPs), and others
PAIRS = st.one_of(model_pairs(max_depth=3, offers=[("a", "b")]),
                  model_pairs(max_depth=3, offers=[("a", "b"), ("a", "b"), ("a",)]), model_pairs(max_depth=3))
Dist = dict[Hashable, Fraction]
Word = tuple[str, ...]
#: word -> distribution over actions (a randomised blind scheduler)
Blind = Mapping[Word, Mapping[str, Fraction]]

def examples(count: int) -> settings:
    """``count`` generated cases, the same ones on every run (the counts below are then fixed)."""
    return settings(max_examples=count, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


#: generated cases by what they exercised
SEEN: dict[str, int] = {"refused": 0, "blind below adaptive": 0, "several blind schedulers": 0}


def simulate_blind(d: ObservableMDP, dp: ObservableMDP, scheduler: Blind, outcome: str) -> tuple[Dist, Dist]:
    """Outcome distributions of D and D' when ``scheduler[word]`` is played at every history of that word;
    ``Illegal`` when an action with positive probability is not enabled where it is played."""
    return simulate(d, dp, lambda history: scheduler[history[1::2]], outcome)  # type: ignore[index]  # action words


def words_up_to(depth: int, actions: tuple[str, ...] = ("a", "b")) -> list[Word]:
    return [w for n in range(depth) for w in itertools.product(actions, repeat=n)]


def all_blind(d: ObservableMDP, dp: ObservableMDP, outcome: str, depth: int = 3) -> list[tuple[Dist, Dist]]:
    """The outcome distributions of every legal deterministic blind scheduler: every table from the
    words of length < ``depth`` to ``{a, b}``, the illegal ones dropped."""
    words = words_up_to(depth)
    found = []
    for actions in itertools.product("ab", repeat=len(words)):
        table = {w: {a: F(1)} for w, a in zip(words, actions, strict=True)}
        try:
            found.append(simulate_blind(d, dp, table, outcome))
        except Illegal:
            continue
    return found


# ---------------------------------------------------------------------------------------------------
# Generated models against brute force
# ---------------------------------------------------------------------------------------------------


@examples(150)
@given(PAIRS, EPSILONS, st.sampled_from(["sequence", "final"]))
def test_blind_matches_every_blind_scheduler(pair: tuple[ObservableMDP, ObservableMDP], eps: Eps,
                                             outcome: OutcomeKind) -> None:
    """δ(ε) and ε* over blind schedulers equal the maxima over the brute-force enumeration, the scheduler
    reported attains them, and no legal blind scheduler means a refusal."""
    d, dp = pair
    candidates = all_blind(d, dp, outcome)
    tree = build_history_tree(d, dp)
    if not candidates:
        SEEN["refused"] += 1
        with pytest.raises(ValueError, match="no blind scheduler exists"):
            worst_delta(tree, eps, schedulers="blind", outcome=outcome)
        return
    SEEN["several blind schedulers"] += len({repr(c) for c in candidates}) > 1
    for direction in (0, 1):
        pairs = [(c[direction], c[1 - direction]) for c in candidates]
        expected = max(hockey_stick(p, q, eps) for p, q in pairs)
        got = worst_delta(tree, eps, direction=direction, schedulers="blind", outcome=outcome)
        assert got.exact and got.schedulers == "blind"
        assert got.value == expected if eps.exp_exact() is not None else close(got.value, expected)
        assert got.scheduler is not None and got.scheduler.kind == "actions"
        table = {w: {a: F(1)} for w, a in got.scheduler.choices}
        table.update({w: {"a": F(1)} for w in words_up_to(4) if w not in table})  # unreached words
        attained = simulate_blind(d, dp, table, outcome)
        assert close(hockey_stick(attained[direction], attained[1 - direction], eps), got.value)

        expected_ratio = max(max_ratio(p, q) for p, q in pairs)
        got_eps = worst_epsilon(tree, direction=direction, schedulers="blind", outcome=outcome)
        assert got_eps.ratio == (None if expected_ratio == math.inf else expected_ratio), (got_eps,
                                                                                           expected_ratio)


@examples(100)
@given(PAIRS, EPSILONS, st.sampled_from(["sequence", "final"]), st.integers(0, 2**32 - 1))
def test_blind_between_uniform_and_adaptive_and_randomised_do_no_better(
        pair: tuple[ObservableMDP, ObservableMDP], eps: Eps, outcome: OutcomeKind, seed: int) -> None:
    """blind ⊆ adaptive; uniform is blind where the actions offered depend only on the word; no legal
    randomised blind scheduler beats the worst deterministic one (δ and ε*)."""
    d, dp = pair
    assume(all_blind(d, dp, outcome))
    blind = scheduler_privacy(d, dp, eps, schedulers="blind", outcome=outcome)
    adaptive = scheduler_privacy(d, dp, eps, schedulers="adaptive", outcome=outcome)
    for b, a in ((blind.delta_forward, adaptive.delta_forward),
                 (blind.delta_backward, adaptive.delta_backward)):
        assert float(b.value) <= float(a.value) + 1e-12
        SEEN["blind below adaptive"] += float(b.value) < float(a.value) - 1e-12
    for b, a in ((blind.epsilon_forward, adaptive.epsilon_forward),
                 (blind.epsilon_backward, adaptive.epsilon_backward)):
        assert b.value <= a.value
    tree = build_history_tree(d, dp)
    offered: dict[tuple[Hashable, ...], set[tuple[str, ...]]] = {}
    for h, acts in zip(tree.histories, tree.enabled, strict=True):
        if acts:
            offered.setdefault(h[1::2], set()).add(acts)
    rng = random.Random(seed)
    for _ in range(4):
        table: dict[Word, dict[str, Fraction]] = {}
        for w in words_up_to(4):
            weights = [F(rng.randint(0, 3)) for _ in "ab"]
            if sum(weights) == 0:
                weights[rng.randint(0, 1)] = F(1)
            table[w] = {a: x / sum(weights) for a, x in zip("ab", weights, strict=True)}
        try:
            dists = simulate_blind(d, dp, table, outcome)
        except Illegal:
            continue
        for k, worst, worst_eps in ((0, blind.delta_forward, blind.epsilon_forward),
                                    (1, blind.delta_backward, blind.epsilon_backward)):
            assert float(hockey_stick(dists[k], dists[1 - k], eps)) <= float(worst.value) + 1e-12
            assert worst_eps.ratio is None or max_ratio(dists[k], dists[1 - k]) <= worst_eps.ratio
    if all(len(sets) == 1 for sets in offered.values()):  # the uniform scheduler is a blind one
        uniform = scheduler_privacy(d, dp, eps, schedulers="uniform", outcome=outcome)
        assert float(uniform.delta_forward.value) <= float(blind.delta_forward.value) + 1e-12
        assert uniform.epsilon_forward.value <= blind.epsilon_forward.value


@examples(100)
@given(PAIRS, EPSILONS)
def test_blind_dp_query_matches_every_blind_scheduler(pair: tuple[ObservableMDP, ObservableMDP],
                                                      eps: Eps) -> None:
    """``max_σ Pr_D(ψ) − e^ε Pr_D'(ψ)`` over blind σ (ψ: the run ends on observation 1): the word
    programme equals the brute force; between the uniform and the adaptive values."""
    d, dp = pair
    candidates = all_blind(d, dp, "final")
    assume(candidates)
    tree = build_history_tree(d, dp)

    def event(node: int) -> bool:
        return tree.observation(node) == 1

    alpha = eps.exp_float()
    for direction in (0, 1):
        values = [float(c[direction].get(1, F(0))) - alpha * float(c[1 - direction].get(1, F(0)))
                  for c in candidates]
        got = dp_query(tree, event, eps, 0, direction=direction, schedulers="blind")
        assert got.exact and math.isclose(float(got.value), max(values), rel_tol=1e-9, abs_tol=1e-12)
        adaptive = dp_query(tree, event, eps, 0, direction=direction, schedulers="worst")
        assert float(got.value) <= float(adaptive.value) + 1e-12
        SEEN["blind below adaptive"] += float(got.value) < float(adaptive.value) - 1e-12
        assert got.scheduler is not None and got.scheduler.kind == "actions"


def test_enough_cases_were_exercised() -> None:
    if not all(SEEN.values()):
        pytest.skip("counts the generative tests of this module; run the whole module")
    assert SEEN["several blind schedulers"] >= 20 and SEEN["blind below adaptive"] >= 5, SEEN


# ---------------------------------------------------------------------------------------------------
# By hand
# ---------------------------------------------------------------------------------------------------


def peek_then_choose(bit: int) -> ObservableMDP:
    """The first step tosses a fair coin whose face is observed (the same in D and D'); the second either
    asks the target (``ask``: yes w.p. 3/4 if its bit is 1, 1/4 if 0) or tosses a second coin (``skip``:
    yes w.p. 1/2 whatever the data); the answer is observed."""
    yes = F(3, 4) if bit else F(1, 4)
    second = {"ask": {"y": yes, "n": 1 - yes}, "skip": {"y": F(1, 2), "n": F(1, 2)}}
    return ObservableMDP(
        {"s": F(1)}, {"s": {"go": {"heads": F(1, 2), "tails": F(1, 2)}}, "heads": second, "tails": second},
        {"s": "start", "heads": "heads", "tails": "tails", "y": "yes", "n": "no"})


def test_adaptive_beats_blind_by_hand() -> None:
    """ψ = "heads then yes, or tails then no", ε = 0, D against D'.  After heads, ``ask`` adds
    1/2·(3/4 − 1/4) = 1/4 to Pr_D(ψ) − Pr_D'(ψ) and ``skip`` 0; after tails ``ask`` adds
    1/2·(1/4 − 3/4) = −1/4 and ``skip`` 0.  The adaptive scheduler sees the face: ask after heads, skip
    after tails, 1/4.  A blind one plays one word whatever the face: go-ask gives 1/4 − 1/4 = 0, go-skip
    0.  So D{0,0}[ψ] is violated over adaptive schedulers and holds over blind ones; the other direction
    is the mirror image (1/4 and 0).  Both classes agree on ε* = ln 3 (any single answer sequence can be
    targeted blindly) and on δ(0) = 1/2."""
    d, dp = peek_then_choose(1), peek_then_choose(0)
    tree = build_history_tree(d, dp)

    def psi(node: int) -> bool:
        h = tree.histories[node]
        return tree.is_leaf(node) and (h[2], h[-1]) in {("heads", "yes"), ("tails", "no")}

    for direction in (0, 1):
        adaptive = dp_query(tree, psi, 0, 0, direction=direction, schedulers="adaptive")
        blind = dp_query(tree, psi, 0, 0, direction=direction, schedulers="blind")
        assert (adaptive.value, adaptive.holds) == (F(1, 4), False)
        assert (blind.value, blind.holds) == (F(0), True)
        assert adaptive.scheduler is not None and blind.scheduler is not None
        assert len({a for _, a in adaptive.scheduler.choices if _ != ("start",)}) == 2  # ask and skip
        assert blind.scheduler.kind == "actions"
    for schedulers in ("adaptive", "blind"):
        both = scheduler_privacy(d, dp, 0, schedulers=schedulers)  # type: ignore[arg-type]  # a class name
        assert both.epsilon.ratio == 3 and both.delta.value == F(1, 2)


def test_blind_needs_a_common_step() -> None:
    """The runs a blind scheduler cannot tell apart (same steps so far) offer disjoint steps: refused,
    naming them; the adaptive class exists."""
    d = ObservableMDP({"s": F(1)}, {"s": {"go": {"u": F(1, 2), "v": F(1, 2)}},
                                    "u": {"a": {"z": F(1)}}, "v": {"b": {"z": F(1)}}},
                      {"s": 0, "u": 1, "v": 2, "z": 3})
    tree = build_history_tree(d, d)
    with pytest.raises(ValueError, match=r"no blind scheduler exists: after go .*offers \{a\}"):
        worst_delta(tree, 0, schedulers="blind")
    assert worst_delta(tree, 0, schedulers="adaptive").value == 0


def test_blind_limit_is_an_explicit_refusal() -> None:
    """Past the limit nothing is computed: the count of blind schedulers is in the message."""
    tree = build_history_tree(lost_report(1), lost_report(0))
    assert word_tree(tree).schedulers == 2
    assert len(list(maximal_words(word_tree(tree), 2))) == 2
    with pytest.raises(ValueError, match=r"2 blind schedulers .* exceed the limit of 1"):
        worst_delta(tree, 0, schedulers="blind", blind_limit=1)
    assert worst_delta(tree, 0, schedulers="blind", blind_limit=2).value == F(1, 2)


def test_worst_is_the_adaptive_alias() -> None:
    assert canonical_class("worst") == "adaptive"
    with pytest.raises(ValueError, match="alias worst"):
        canonical_class("best")
    tree = build_history_tree(lost_report(1), lost_report(0))
    assert worst_delta(tree, 0, schedulers="worst") == worst_delta(tree, 0, schedulers="adaptive")
