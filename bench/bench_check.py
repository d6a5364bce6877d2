"""Timings of ``flcheck check`` on the bundled scenarios (prints a table; no assertions).

Usage: python bench/bench_check.py [REPEATS] [NAME ...]   (median of REPEATS runs, default 3; the swarm
and walker32_relay once; only the bundled scenarios NAME when given). Wall and CPU seconds, and the
peak resident memory of the process so far.
"""

from __future__ import annotations

import resource
import statistics
import sys
import time

import flcheck_spec

from checker.app.check import check_file


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    names = set(sys.argv[2:])
    print(f"{'scenario':20} {'states':>8} {'transitions':>11} {'explore s':>9} {'total s':>8} {'CPU s':>8} "
          f"{'peak MB':>8}  verdicts")
    for name, path in flcheck_spec.bundled_scenarios().items():
        if names and name not in names:
            continue
        runs = []
        n = 1 if "swarm" in name or name == "walker32_relay" else repeats
        for _ in range(n):
            t0, c0 = time.perf_counter(), time.process_time()
            rep = check_file(path)
            runs.append((time.perf_counter() - t0, rep.explore_seconds, rep, time.process_time() - c0))
        total = statistics.median(r[0] for r in runs)
        expl = statistics.median(r[1] for r in runs)
        cpu = statistics.median(r[3] for r in runs)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rep = runs[-1][2]
        counts: dict[str, int] = {}
        for r in rep.results:
            counts[str(r.verdict)] = counts.get(str(r.verdict), 0) + 1
        verdicts = ", ".join(f"{v} {k}" for k, v in counts.items())
        k = rep.kripke
        print(f"{name:20} {k.num_states:8d} {k.num_transitions:11d} {expl:9.2f} {total:8.2f} {cpu:8.2f} "
              f"{peak:8.0f}  {verdicts}", flush=True)


if __name__ == "__main__":
    main()
