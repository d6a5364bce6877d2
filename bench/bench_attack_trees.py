"""Attack-tree generation and validity re-check on seeded random Kripke structures of growing size.

Prints, per size, the median over 3 runs of: the backward distance search (EF), generation of a tree
with 5 alternatives (trace classes), generation with minimal attacks only, and the re-check ``⊢ A``.
Then one row for attributes on a large tree (50 initial states, up to 100 paths each, on 100 000
states): evaluation of min cost / max probability / min time, the Pareto front, and ``cuts`` of a
defence on the structure (a budget-bounded shortest-path search).
Run: ``/work/venv/bin/python bench/bench_attack_trees.py [max_states]``. Figures depend on machine load.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from checker.attack_trees.attributes import StepAttributes, evaluate, pareto_front
from checker.attack_trees.defences import cuts, removing
from checker.attack_trees.generation import AttackFound, generate_attack_tree
from checker.attack_trees.graph_search import distance_to, ef_mask
from checker.attack_trees.validity import is_valid
from checker.mc.kripke import Kripke
from checker.mc.ts import Action


def structure(n: int, seed: int) -> tuple[Kripke, np.ndarray]:
    rng = np.random.default_rng(seed)
    m = 4 * n
    acts = tuple(Action(f"a{i}", f"p{i}") for i in range(20))
    k = Kripke.from_edges(n, [0], rng.integers(0, n, m), rng.integers(0, n, m),
                          action=rng.integers(0, 20, m), actions=acts)
    goal = np.zeros(n, dtype=bool)
    goal[rng.integers(0, n, max(1, n // 10_000))] = True
    return k, goal


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(max_states: int = 1_000_000) -> None:
    print(f"{'states':>9} {'edges':>9} {'EF (s)':>8} {'gen (s)':>8} {'minimal (s)':>11} "
          f"{'check (s)':>9} {'ways':>5} {'len':>4} {'nodes':>6}")
    n = 1_000
    while n <= max_states:
        k, goal = structure(n, seed=n)
        ef, gen, mini, chk = [], [], [], []
        res = None
        for _ in range(3):
            ef.append(timed(lambda: distance_to(k, goal)))  # noqa: B023
            t = time.perf_counter()
            res = generate_attack_tree(k, goal, max_attacks=5)
            gen.append(time.perf_counter() - t)
            mini.append(timed(lambda: generate_attack_tree(k, goal, max_attacks=5,  # noqa: B023
                                                           minimal_only=True)))
            assert isinstance(res, AttackFound)
            tree = res.tree
            chk.append(timed(lambda: is_valid(tree, k)))  # noqa: B023
        assert isinstance(res, AttackFound) and is_valid(res.tree, k)
        ways = len(res.paths[0])
        print(f"{n:>9} {k.num_transitions:>9} {statistics.median(ef):>8.3f} {statistics.median(gen):>8.3f} "
              f"{statistics.median(mini):>11.3f} {statistics.median(chk):>9.4f} {ways:>5} "
              f"{res.paths[0][0].length:>4} {res.tree.size():>6}")
        n *= 10



def attributes_row(n: int = 100_000) -> None:
    k, goal = structure(n, seed=7)
    rng = np.random.default_rng(1)
    initial = rng.choice(np.flatnonzero(ef_mask(k, goal)), 50, replace=False)
    found = generate_attack_tree(k, goal, initial, distinguish="paths", max_attacks=100)
    assert isinstance(found, AttackFound)
    steps: StepAttributes = {(f"a{i}", None): {"cost": i % 7, "probability": Fraction(1, 1 + i % 5),
                                                "time": 1 + i % 3} for i in range(20)}
    evaluation, front, cut = [], [], []
    for _ in range(3):
        evaluation.append(timed(lambda: evaluate(found.tree, steps)))
        front.append(timed(lambda: pareto_front(found.tree, steps)))
        cut.append(timed(lambda: cuts(k, removing(rule="a3"), 10, steps, goal=goal, initial=initial)))
    print(f"\n{'states':>9} {'nodes':>6} {'expanded':>8} {'evaluate (s)':>12} {'pareto (s)':>10} "
          f"{'points':>6} {'cuts (s)':>8}")
    print(f"{n:>9} {found.tree.size():>6} {found.tree.tree_size():>8} {statistics.median(evaluation):>12.3f} "
          f"{statistics.median(front):>10.3f} {len(pareto_front(found.tree, steps)):>6} "
          f"{statistics.median(cut):>8.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
    attributes_row()
