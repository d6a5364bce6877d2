"""The Storm bridge (``checker.markov.storm``) against flcheck's own Markov engine: random DTMCs and MDPs
(deadlocks, self-loops, unreachable goals), Storm-style explicit models read by flcheck's reader, and the
explored structures of every bundled scenario."""

from __future__ import annotations

import dataclasses
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Literal

import flcheck_spec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.app.check import check_scenario
from checker.io.prism import read_explicit
from checker.markov import storm
from checker.markov.first_passage import reach_probabilities
from checker.markov.graph import can_reach
from checker.markov.mdp import mdp_reach
from checker.markov.models import Dtmc, Mdp, dtmc_from_edges, dtmc_from_kripke, mdp_from_kripke
from checker.markov.pathsum import path_sum
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_parse import parse_formula
from checker.mc.kripke import Kripke
from flmodel.scenario import load_scenario
from tests.strategies import kripke_structures, mdp_structures

pytest.importorskip("stormpy")

TOLERANCE = 1e-6
OBJECTIVES: tuple[Literal["min", "max"], ...] = ("min", "max")
BUNDLED = flcheck_spec.bundled_scenarios()


# ------------------------------------------------------------------------------------------ references
def cut(kripke: Kripke, stop: np.ndarray) -> Kripke:
    """``kripke`` with every edge leaving a ``stop`` state removed (those states become deadlocks)."""
    keep = ~stop[kripke.edge_src]
    exact = None if kripke.edge_prob_exact is None else [
        p for p, k in zip(kripke.edge_prob_exact, keep.tolist(), strict=True) if k]
    return Kripke.from_edges(kripke.num_states, kripke.initial, kripke.edge_src[keep], kripke.succ_idx[keep],
                             action=kripke.edge_action[keep], actions=kripke.actions, prob_exact=exact,
                             labels=kripke.labels)


def bounded_dtmc_reference(dtmc: Dtmc, goal: np.ndarray, bound: int) -> list[Fraction]:
    """``Pr_s[◇≤bound goal]`` for every state ``s`` by flcheck's bounded path sum on the chain where the
    goal states are deadlocks (so every path ending in the goal hits it for the first time)."""
    src = np.repeat(np.arange(dtmc.num_states), np.diff(dtmc.ptr))
    keep = ~goal[src]
    assert dtmc.prob_exact is not None
    exact = [p for p, k in zip(dtmc.prob_exact, keep.tolist(), strict=True) if k]
    absorbed = dtmc_from_edges(dtmc.num_states, src[keep], dtmc.idx[keep], dtmc.prob[keep], exact,
                               dtmc.initial)
    out = []
    for s in range(dtmc.num_states):
        start = dataclasses.replace(absorbed, initial=((s, Fraction(1)),))
        value = path_sum(start, goal, max_length=bound, exact=True).value
        assert isinstance(value, Fraction)
        out.append(value)
    return out


def bounded_mdp_reference(mdp: Mdp, goal: np.ndarray, bound: int, objective: str) -> np.ndarray:
    """``Pmin``/``Pmax`` of reaching ``goal`` within ``bound`` steps by ``bound`` Bellman backups from
    ``1_goal`` (a deadlock keeps its value)."""
    edge_choice = np.repeat(np.arange(mdp.num_choices), np.diff(mdp.edge_ptr))
    x = goal.astype(np.float64)
    pick = max if objective == "max" else min
    for _ in range(bound):
        choice_value = np.bincount(edge_choice, weights=mdp.edge_prob * x[mdp.edge_dst],
                                   minlength=mdp.num_choices)
        new = x.copy()
        for s in np.flatnonzero(~goal).tolist():
            lo, hi = int(mdp.choice_ptr[s]), int(mdp.choice_ptr[s + 1])
            if hi > lo:
                new[s] = pick(choice_value[lo:hi].tolist())
        x = new
    return x


def floats(values: np.ndarray) -> np.ndarray:
    return np.array([float(v) for v in values], dtype=np.float64)


def close(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.max(np.abs(floats(a) - floats(b)), initial=0.0) <= TOLERANCE)


# ------------------------------------------------------------------------------------------ random models
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kripke_structures(max_states=6, probabilistic=True), st.integers(0, 4))
def test_random_dtmc_matches_first_passage_bounded_and_until(k: Kripke, bound: int) -> None:
    dtmc = dtmc_from_kripke(k)
    goal, left = k.labels["p"], k.labels["q"]
    model = storm.from_dtmc(dtmc, k.labels)
    exact_model = storm.from_dtmc(dtmc, k.labels, exact=True)
    ours = reach_probabilities(dtmc, goal, exact=True)
    assert close(storm.reach_probabilities(model, "p").values, ours)
    exact_result = storm.reach_probabilities(exact_model, "p")
    assert list(exact_result.values) == list(ours)
    assert exact_result.initial_value == sum((w * ours[s] for s, w in dtmc.initial), Fraction(0))
    assert close(storm.reach_probabilities(model, "p", bound=bound).values,
                 np.array(bounded_dtmc_reference(dtmc, goal, bound), dtype=object))
    until_ours = reach_probabilities(dtmc_from_kripke(cut(k, ~left | goal)), goal, exact=True)
    assert list(storm.until_probabilities(exact_model, "q", "p").values) == list(until_ours)
    assert np.array_equal(storm.can_reach(model, "p"), can_reach(dtmc, goal))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mdp_structures(max_states=6), st.integers(0, 4))
def test_random_mdp_matches_min_max_bounded_and_until(k: Kripke, bound: int) -> None:
    mdp = mdp_from_kripke(k)
    goal = k.labels["goal"]
    labels = {"goal": goal, "left": np.arange(k.num_states) % 2 == 0}
    model = storm.from_mdp(mdp, labels)
    exact_model = storm.from_mdp(mdp, labels, exact=True)
    for objective in OBJECTIVES:
        ours = mdp_reach(mdp, goal, objective, exact=True)
        theirs = storm.reach_probabilities(exact_model, "goal", objective=objective)
        assert list(theirs.values) == list(ours.values)
        assert theirs.initial_value == ours.initial_value
        assert close(storm.reach_probabilities(model, "goal", objective=objective).values, ours.values)
        assert close(storm.reach_probabilities(model, "goal", bound=bound, objective=objective).values,
                     bounded_mdp_reference(mdp, goal, bound, objective))
        until_ours = mdp_reach(mdp_from_kripke(cut(k, ~labels["left"] | goal)), goal, objective, exact=True)
        until_theirs = storm.until_probabilities(exact_model, "left", "goal", objective=objective)
        assert list(until_theirs.values) == list(until_ours.values)
    assert np.array_equal(storm.can_reach(model, "goal"), ~(mdp_reach(mdp, goal, "max").values == 0))


@settings(max_examples=20, deadline=None)
@given(kripke_structures(max_states=6, probabilistic=False))
def test_non_probabilistic_structure_every_edge_a_choice(k: Kripke) -> None:
    model = storm.from_kripke(k)
    mdp = mdp_from_kripke(k)
    assert model.model.nr_choices == mdp.num_choices + int(np.sum(np.diff(mdp.choice_ptr) == 0))
    for objective in OBJECTIVES:
        assert close(storm.reach_probabilities(model, "p", objective=objective).values,
                     mdp_reach(mdp, k.labels["p"], objective, exact=True).values)


# ------------------------------------------------------------------------------------------ explicit files
KNUTH_YAO_TRA = """dtmc
0 1 1/2
0 2 1/2
1 3 1/2
1 4 1/2
2 5 1/2
2 6 1/2
3 1 1/2
3 7 1/2
4 8 1/2
4 9 1/2
5 10 1/2
5 11 1/2
6 2 1/2
6 12 1/2
7 7 1
8 8 1
9 9 1
10 10 1
11 11 1
12 12 1
13 13 1
"""
KNUTH_YAO_LAB = """#DECLARATION
init done one six unreachable
#END
0 init
7 done one
8 done
9 done
10 done
11 done
12 done six
13 unreachable
"""
# Two players pick a coin (fair, or biased 1/4 towards heads) in state 0; state 3 is a deadlock.
COIN_MDP_TRA = """mdp
0 0 1 1/2
0 0 2 1/2
0 1 1 1/4
0 1 2 3/4
1 0 1 1/2
1 0 4 1/2
1 1 3 1
2 0 0 1
4 0 4 1
"""
COIN_MDP_LAB = """#DECLARATION
init heads stuck goal
#END
0 init
1 heads
3 stuck
4 goal
"""


def _explicit(tmp_path: Path, name: str, tra: str, lab: str) -> Kripke:
    (tmp_path / f"{name}.tra").write_text(tra)
    (tmp_path / f"{name}.lab").write_text(lab)
    return read_explicit(tmp_path / name)


def test_knuth_yao_die(tmp_path: Path) -> None:
    k = _explicit(tmp_path, "die", KNUTH_YAO_TRA, KNUTH_YAO_LAB)
    model = storm.from_kripke(k, scheduler="uniform", exact=True)
    dtmc = dtmc_from_kripke(k)
    for label in ("one", "six", "done", "unreachable"):
        ours = reach_probabilities(dtmc, k.labels[label], exact=True)
        assert list(storm.reach_probabilities(model, label).values) == list(ours)
    assert storm.reach_probabilities(model, "one").initial_value == Fraction(1, 6)
    assert storm.reach_probabilities(model, "unreachable").initial_value == 0
    assert storm.reach_probabilities(model, "done", bound=3).initial_value == Fraction(3, 4)
    assert list(storm.reach_probabilities(model, "done", bound=5).values) == bounded_dtmc_reference(
        dtmc, k.labels["done"], 5)
    assert not storm.can_reach(model, "unreachable")[:13].any()


def test_coin_mdp_with_deadlock(tmp_path: Path) -> None:
    k = _explicit(tmp_path, "coin", COIN_MDP_TRA, COIN_MDP_LAB)
    mdp = mdp_from_kripke(k)
    model = storm.from_mdp(mdp, k.labels, exact=True)
    for objective in OBJECTIVES:
        ours = mdp_reach(mdp, k.labels["goal"], objective, exact=True)
        assert list(storm.reach_probabilities(model, "goal", objective=objective).values) == list(ours.values)
    # Pmax: from 1 take choice 0 (goal w.p. 1/2, else stay in 1): 1; Pmin: from 1 run into the deadlock
    assert storm.reach_probabilities(model, "goal", objective="max").initial_value == 1
    assert storm.reach_probabilities(model, "goal", objective="min").initial_value == 0
    # within 2 steps: 0 -> 1 (1/2 by the fair coin) -> goal (1/2)
    assert storm.reach_probabilities(model, "goal", bound=2, objective="max").initial_value == Fraction(1, 4)
    for bound in (2, 6):
        assert close(storm.reach_probabilities(model, "goal", bound=bound, objective="min").values,
                     bounded_mdp_reference(mdp, k.labels["goal"], bound, "min"))
    assert list(storm.can_reach(model, "goal")) == [True, True, True, False, True]


# ------------------------------------------------------------------------------------------ scenarios
def _observable_labels(k: Kripke, most: int = 4) -> dict[str, np.ndarray]:
    """``name = value`` masks for up to ``most`` values of a few observables (each value but the most
    common one, held by more than one state); the structure computes only the columns asked for."""
    labels: dict[str, np.ndarray] = {}
    for name in ("ready", "curmodpar", "round"):
        if name not in k.observables:
            continue
        column = list(k.observables[name])
        counts = Counter(column)
        for value, count in counts.most_common()[1:]:
            if count > 1 and len(labels) < most:
                labels[f"{name} = {value!r}"] = np.array([v == value for v in column], dtype=bool)
    return labels


def _compare_on_scenario(name: str) -> None:
    scenario = load_scenario(BUNDLED[name])
    probability = [p for p in scenario.properties if p.kind == "probability"]
    report = check_scenario(scenario, only=[p.name for p in probability])
    k = report.kripke
    checker = ModelChecker(k)
    labels = _observable_labels(k)
    for p in probability:
        assert p.formula is not None
        labels[p.name] = checker.sat(parse_formula(p.formula.text))
    mdp = mdp_from_kripke(k)
    model = storm.from_mdp(mdp, labels)
    assert model.num_states == k.num_states
    dtmc = mdp.induced_dtmc("uniform")
    uniform = storm.from_dtmc(dtmc, labels)
    for p in probability:  # the figure of `flcheck check`: Storm's Pmin / Pmax, or P on the uniform chain
        result = next(r for r in report.results if r.name == p.name)
        assert p.scheduler in (None, "min", "max", "uniform")
        if p.scheduler == "uniform":
            theirs = storm.reach_probabilities(uniform, p.name)
        else:
            objective: Literal["min", "max"] = "max" if p.scheduler == "max" else "min"
            theirs = storm.reach_probabilities(model, p.name, objective=objective)
        assert result.value is not None and abs(theirs.initial_value - result.value) <= TOLERANCE
    optimised = [*list(labels)[:2], *(p.name for p in probability)]  # policy iteration is the slow part
    for label, goal in labels.items():
        for objective in OBJECTIVES if label in optimised else ():
            ours = mdp_reach(mdp, goal, objective, exact=False)
            theirs_optimum = storm.reach_probabilities(model, label, objective=objective)
            assert close(theirs_optimum.values, ours.values), label
        theirs_uniform = storm.reach_probabilities(uniform, label)
        assert close(theirs_uniform.values, reach_probabilities(dtmc, goal, exact=False)), label
        graph_reach = can_reach(dtmc, goal)  # the uniform chain has every edge of the MDP
        assert np.array_equal(storm.can_reach(model, label), graph_reach), label
        assert np.array_equal(storm.can_reach(uniform, label), graph_reach), label


#: Bundled scenarios whose check takes more than a few seconds: compared in the slow run.
SLOW_SCENARIOS = ("moniteo_swarm8", "walker32_relay")


@pytest.mark.parametrize("name", sorted(n for n in BUNDLED if n not in SLOW_SCENARIOS))
def test_bundled_scenarios(name: str) -> None:
    _compare_on_scenario(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW_SCENARIOS)
def test_slow_bundled_scenarios(name: str) -> None:
    _compare_on_scenario(name)


# ------------------------------------------------------------------------------------------ errors
def test_missing_stormpy_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "stormpy", None)
    with pytest.raises(ImportError, match=r"pip install 'flcheck\[storm\]'"):
        storm.require_stormpy()


def test_objective_and_labels_are_checked() -> None:
    k = Kripke.from_edges(2, [0], [0], [1], prob_exact=[Fraction(1)], labels={"g": np.array([False, True])})
    dtmc_model = storm.from_kripke(k, scheduler="uniform")
    mdp_model = storm.from_kripke(k)
    with pytest.raises(ValueError, match="no objective"):
        storm.reach_probabilities(dtmc_model, "g", objective="max")
    with pytest.raises(ValueError, match="'min' or 'max'"):
        storm.reach_probabilities(mdp_model, "g")
    with pytest.raises(KeyError, match="known labels: g"):
        storm.reach_probabilities(dtmc_model, "h")
    with pytest.raises(ValueError, match="shape"):
        storm.from_dtmc(dtmc_from_kripke(k), {"g": np.array([True])})
