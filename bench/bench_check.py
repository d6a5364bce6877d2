"""Timings of ``flcheck check`` on the bundled scenarios (prints a table; no assertions).

Usage: python bench/bench_check.py [REPEATS]   (median of REPEATS runs, default 3; the swarm once)
"""

from __future__ import annotations

import statistics
import sys
import time

import flcheck_spec

from checker.app.check import check_file


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    print(f"{'scenario':20} {'states':>8} {'transitions':>11} {'explore s':>9} {'total s':>8}  verdicts")
    for name, path in flcheck_spec.bundled_scenarios().items():
        runs = []
        n = 1 if "swarm" in name else repeats
        for _ in range(n):
            t0 = time.perf_counter()
            rep = check_file(path)
            runs.append((time.perf_counter() - t0, rep.explore_seconds, rep))
        total = statistics.median(r[0] for r in runs)
        expl = statistics.median(r[1] for r in runs)
        rep = runs[-1][2]
        counts: dict[str, int] = {}
        for r in rep.results:
            counts[str(r.verdict)] = counts.get(str(r.verdict), 0) + 1
        verdicts = ", ".join(f"{v} {k}" for k, v in counts.items())
        k = rep.kripke
        print(f"{name:20} {k.num_states:8d} {k.num_transitions:11d} {expl:9.2f} {total:8.2f}  {verdicts}")


if __name__ == "__main__":
    main()
