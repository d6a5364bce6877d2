"""Attack-tree generation and validity re-check on seeded random Kripke structures of growing size.

Prints, per size, the median over 3 runs of: the backward distance search (EF), generation of a tree
with 5 alternatives (trace classes), generation with minimal attacks only, and the re-check ``⊢ A``.
Run: ``/work/venv/bin/python bench/bench_attack_trees.py [max_states]``. Figures depend on machine load.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from checker.attack_trees.generation import AttackFound, generate_attack_tree
from checker.attack_trees.graph_search import distance_to
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


def timed(fn) -> float:  # type: ignore[no-untyped-def]
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
            chk.append(timed(lambda: is_valid(res.tree, k)))  # type: ignore[union-attr] # noqa: B023
        assert isinstance(res, AttackFound) and is_valid(res.tree, k)
        ways = len(res.paths[0])
        print(f"{n:>9} {k.num_transitions:>9} {statistics.median(ef):>8.3f} {statistics.median(gen):>8.3f} "
              f"{statistics.median(mini):>11.3f} {statistics.median(chk):>9.4f} {ways:>5} "
              f"{res.paths[0][0].length:>4} {res.tree.size():>6}")
        n *= 10


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
