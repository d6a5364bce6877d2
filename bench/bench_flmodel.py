#!/usr/bin/env python3
"""Successor-generation throughput of flcheck's FL model (``flmodel``), without the checker.

A plain breadth-first search with a dict for interning (the minimum any explorer does) over the
example instances of ``flmodel.examples``; prints states, transitions, seconds, states/s and
transitions/s, with the garbage collector on and off (a long exploration creates millions of
container objects, and CPython's cyclic GC then rescans them repeatedly; explorers should disable or
freeze it while exploring). Where the system has an integer coding (``flmodel.fast``: the round-based
rules with the data deployed), the row ``batch`` is the checker's batch explorer
(``checker.mc.explore_batch``, a slice of the queue at a time, no Python object per state) on that
coding, up to the same number of states.

Usage::

    python bench/bench_flmodel.py                 # default cases, cap 200k states each
    python bench/bench_flmodel.py --cap 1000000   # bigger
"""

from __future__ import annotations

import argparse
import gc
import time
from collections import deque
from collections.abc import Callable

from checker.mc.explore import Limits
from checker.mc.explore_batch import explore_batch
from flmodel.examples import moniteo_like, seed_model
from flmodel.fast import batch_view
from flmodel.system import FLSystem

CASES: list[tuple[str, Callable[[], FLSystem]]] = [
    ("seed_model() [full traces, 4 events]", lambda: seed_model()),
    (
        "seed_model(drop, rounds=2, events=6)",
        lambda: seed_model(trace_mode="drop", max_rounds=2, max_events=6),
    ),
    ("moniteo_like(4, 1, 'rr')", lambda: moniteo_like(4, 1, "rr")),
    ("moniteo_like(4, 2, 'geometric')", lambda: moniteo_like(4, 2, "geometric")),
    ("moniteo_like(5, 1, 'rr')", lambda: moniteo_like(5, 1, "rr")),
]


def bfs(system: FLSystem, cap: int) -> tuple[int, int]:
    """States and transitions found (stops once ``cap`` states are interned)."""
    init = list(system.initial_states())
    seen = {s: i for i, s in enumerate(init)}
    queue = deque(init)
    edges = 0
    while queue:
        s = queue.popleft()
        for _a, t, _p in system.successors(s):
            edges += 1
            if t not in seen:
                seen[t] = len(seen)
                queue.append(t)
                if len(seen) >= cap:
                    return len(seen), edges
    return len(seen), edges


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cap", type=int, default=200_000, help="stop each case at this many states")
    args = ap.parse_args(argv)
    print(
        f"{'model':>40} {'gc':>4} {'states':>9} {'transitions':>12} {'s':>7} {'states/s':>9} {'trans/s':>9}"
    )
    for name, make in CASES:
        for gc_on in (True, False):
            system = make()  # fresh caches each run
            gc.collect()
            if not gc_on:
                gc.disable()
            t0 = time.perf_counter()
            n, e = bfs(system, args.cap)
            dt = time.perf_counter() - t0
            gc.enable()
            capped = "+" if n >= args.cap else " "
            print(
                f"{name:>40} {'on' if gc_on else 'off':>4} {n:>8,}{capped} {e:>12,} {dt:>7.2f} "
                f"{n / dt:>9,.0f} {e / dt:>9,.0f}"
            )
        view = batch_view(make())
        if isinstance(view, str):
            continue
        t0 = time.perf_counter()
        k = explore_batch(view, limits=Limits(max_states=args.cap), keep_states=False, observables=())
        dt = time.perf_counter() - t0
        capped = " " if k.complete else "+"
        print(f"{name:>40} {'batch':>4} {k.num_states:>8,}{capped} {k.num_transitions:>12,} {dt:>7.2f} "
              f"{k.num_states / dt:>9,.0f} {k.num_transitions / dt:>9,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
