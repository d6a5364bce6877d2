"""Python's garbage collector during ``flcheck check``: before and after :mod:`checker.mc.collector` (prints a
table, asserts nothing).

Each workload runs twice, each time in a fresh process: ``before`` with the collector handled as flcheck's
previous release did (paused during the exploration loops only: ``bench/bench_gc.py`` patches
:func:`checker.mc.collector.exploring` back to that), ``after`` as it is now (explored data frozen out of
the collector's reach). Printed per run: CPU seconds of the check, the collections of each generation and
the CPU seconds spent in them (``gc.callbacks``), the objects they freed, the most objects frozen at a
collection of an older generation, the peak resident memory of the process, and whether the verdicts and
values are the same in both runs.

Workloads: ``walker32_relay`` (the bundled scenario) and the generated Moniteo swarm
(``bench/swarm_models.py``) at N satellites × R rounds.

Usage: ``python bench/bench_gc.py [--quick]`` (``--quick``: the swarm at 16 × 1 and 16 × 2 only).
"""

from __future__ import annotations

import gc
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from swarm_models import swarm_scenario


@contextmanager
def _previous() -> Iterator[Any]:
    """The previous release's handling: the collector paused during the exploration loop, nothing frozen."""
    from checker.mc.collector import Frozen

    was = gc.isenabled()
    gc.disable()
    try:
        yield Frozen(False)
    finally:
        if was:
            gc.enable()


def run_one(mode: str, target: str) -> None:
    """One check in this process; prints its figures as one JSON line."""
    import flcheck_spec

    from checker.app.check import check_file
    from checker.mc import explore, explore_batch
    from checker.mc.explore import Limits

    if mode == "before":
        explore.exploring = _previous  # type: ignore[assignment]
        explore_batch.exploring = _previous  # type: ignore[assignment]
    stats = {g: [0, 0.0, 0] for g in range(3)}
    started: list[float] = []

    frozen = [0]  # the most objects frozen at a collection of the older generations

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(time.process_time())
            return
        s = stats[info["generation"]]
        s[0] += 1
        s[1] += time.process_time() - started.pop()
        s[2] += info["collected"]
        if info["generation"] > 0:  # get_freeze_count walks the permanent generation: sampled, not timed
            frozen[0] = max(frozen[0], gc.get_freeze_count())

    path = flcheck_spec.bundled_scenarios().get(target, target)
    gc.callbacks.append(watch)
    c0 = time.process_time()
    report = check_file(path, limits=Limits(max_states=2_000_000, max_seconds=3600.0))
    cpu = time.process_time() - c0
    gc.callbacks.remove(watch)
    results = [[r.name, str(r.verdict), r.value_text] for r in report.results]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"cpu": cpu, "gc": stats, "peak_mb": peak, "frozen": frozen[0], "results": results}))


def main() -> None:
    quick = "--quick" in sys.argv
    with tempfile.TemporaryDirectory() as tmp:
        workloads: list[tuple[str, str]] = []
        sizes = [(16, 1), (16, 2)] if quick else [(32, 1), (32, 2), (64, 1)]
        for n, r in sizes:
            path = Path(tmp) / f"swarm_{n}x{r}.fl"
            path.write_text(swarm_scenario(n, r, 3))
            workloads.append((f"swarm {n} x {r}", str(path)))
        if not quick:
            workloads.append(("walker32_relay", "walker32_relay"))
        print(f"{'workload':16} {'mode':7} {'CPU s':>8} {'gc s':>7} {'gc %':>5} {'gen0':>6} {'gen1':>5} "
              f"{'gen2':>5} {'freed':>7} {'frozen':>9} {'peak MB':>8}  same results")
        for name, target in workloads:
            runs: dict[str, dict[str, Any]] = {}
            for mode in ("before", "after"):
                res = subprocess.run([sys.executable, __file__, "--run", mode, target], capture_output=True,
                                     text=True, check=False)
                if res.returncode != 0:
                    print(f"{name:16} {mode:7} failed: {(res.stderr.strip().splitlines() or ['?'])[-1]}")
                    continue
                out = runs[mode] = json.loads(res.stdout.strip().splitlines()[-1])
                gen = {int(k): v for k, v in out["gc"].items()}
                spent = sum(v[1] for v in gen.values())
                same = "" if mode == "before" or "before" not in runs else \
                    ("yes" if runs["before"]["results"] == out["results"] else "NO")
                print(f"{name:16} {mode:7} {out['cpu']:8.1f} {spent:7.1f} {100 * spent / out['cpu']:5.0f} "
                      f"{gen[0][0]:6d} {gen[1][0]:5d} {gen[2][0]:5d} {sum(v[2] for v in gen.values()):7d} "
                      f"{out['frozen']:9d} {out['peak_mb']:8.0f}  {same}", flush=True)
            if len(runs) == 2:
                b, a = runs["before"], runs["after"]
                print(f"{'':16} {'ratio':7} {b['cpu'] / a['cpu']:8.2f}x CPU, peak memory "
                      f"{a['peak_mb'] / b['peak_mb']:.2f}x", flush=True)


if __name__ == "__main__":
    if "--run" in sys.argv:
        i = sys.argv.index("--run")
        run_one(sys.argv[i + 1], sys.argv[i + 2])
    else:
        main()
