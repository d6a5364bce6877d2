"""Benchmark of checker.privacy.schedulers: prints figures, asserts nothing.

Random layered pairs of observable MDPs of growing size.  Columns: depth, states per model, histories
of the joint history tree, deterministic history-dependent schedulers, seconds of the dynamic programme
(worst δ(ε), observation sequences), of the branch and bound (final observations), and of brute-force
enumeration of all deterministic schedulers (skipped beyond 20 000 schedulers).

Run: ``python bench/bench_schedulers.py [--quick]``.  Figures measured on a shared, loaded machine are
indicative only.
"""

from __future__ import annotations

import itertools
import math
import random
import sys
import time
from fractions import Fraction

from checker.privacy.ni_fl_dp import Eps, hockey_stick
from checker.privacy.observable_mdp import HistoryTree, ObservableMDP, build_history_tree
from checker.privacy.schedulers import worst_delta

BRUTE_FORCE_LIMIT = 20_000


def random_pair(rng: random.Random, depth: int, width: int, actions: int, observations: int
                ) -> tuple[ObservableMDP, ObservableMDP]:
    names = [f"a{i}" for i in range(actions)]
    layers = [[f"s{k}_{i}" for i in range(width)] for k in range(depth + 1)]
    models = []
    for _ in range(2):
        observation = {s: rng.randrange(observations) for layer in layers for s in layer}

        def distribution(support: list[str]) -> dict[str, Fraction]:
            weights = [rng.randint(0, 3) for _ in support]
            weights[rng.randrange(len(support))] += 1
            return {s: Fraction(w, sum(weights)) for s, w in zip(support, weights, strict=True) if w}

        transitions = {s: {a: distribution(layers[k + 1]) for a in names}
                       for k in range(depth) for s in layers[k]}
        models.append(ObservableMDP(distribution(layers[0]), transitions, observation))
    return models[0], models[1]


def scheduler_count(tree: HistoryTree) -> int:
    count = [1] * len(tree)
    for node in reversed(range(len(tree))):
        if not tree.is_leaf(node):
            count[node] = sum(math.prod(count[c] for c in kids) for kids in tree.children[node].values())
    return math.prod(count[r] for r in tree.roots)


def brute_force(tree: HistoryTree, eps: Eps) -> Fraction | float:
    """The largest δ over every deterministic scheduler, each evaluated on its own."""
    def schedulers(node: int) -> list[dict[int, str]]:
        if tree.is_leaf(node):
            return [{}]
        found = []
        for action, kids in tree.children[node].items():
            for combo in itertools.product(*(schedulers(c) for c in kids)):
                choice = {node: action}
                for part in combo:
                    choice.update(part)
                found.append(choice)
        return found

    best: Fraction | float = 0
    for combo in itertools.product(*(schedulers(r) for r in tree.roots)):
        choice = {k: v for part in combo for k, v in part.items()}
        p_d: dict[object, Fraction | float] = {}
        p_dp: dict[object, Fraction | float] = {}
        stack = list(tree.roots)
        while stack:
            node = stack.pop()
            if tree.is_leaf(node):
                p_d[tree.histories[node]] = tree.mass[node][0]
                p_dp[tree.histories[node]] = tree.mass[node][1]
            else:
                stack.extend(tree.children[node][choice[node]])
        best = max(best, hockey_stick(p_d, p_dp, eps))
    return best


def main() -> None:
    quick = "--quick" in sys.argv
    rng = random.Random(7)
    eps = Eps.parse("ln(2)")
    sizes = [(1, 2, 2, 2), (2, 2, 2, 2), (2, 3, 2, 2), (3, 2, 2, 2), (3, 3, 2, 3), (4, 2, 2, 2), (4, 3, 3, 2)]
    if quick:
        sizes = sizes[:4]
    print(f"{'depth':>5} {'states':>6} {'histories':>9} {'schedulers':>12} {'DP s':>8} {'B&B final s':>11} "
          f"{'brute s':>8}  agree")
    for depth, width, actions, observations in sizes:
        d, dp = random_pair(rng, depth, width, actions, observations)
        tree = build_history_tree(d, dp)
        count = scheduler_count(tree)
        start = time.perf_counter()
        dp_result = worst_delta(tree, eps)
        dp_seconds = time.perf_counter() - start
        start = time.perf_counter()
        final = worst_delta(tree, eps, outcome="final", node_limit=20_000, time_limit=30)
        bb_seconds = time.perf_counter() - start
        bb_text = f"{bb_seconds:11.4f}" if final.exact else f"{'limit':>11}"
        if count <= BRUTE_FORCE_LIMIT:
            start = time.perf_counter()
            expected = brute_force(tree, eps)
            brute_text = f"{time.perf_counter() - start:8.4f}"
            agree = "yes" if expected == dp_result.value else f"NO ({expected} vs {dp_result.value})"
        else:
            brute_text, agree = f"{'-':>8}", "-"
        states = (depth + 1) * width
        print(f"{depth:>5} {states:>6} {len(tree):>9} {count:>12.4g} {dp_seconds:8.4f} {bb_text} "
              f"{brute_text}  {agree}")


if __name__ == "__main__":
    main()
