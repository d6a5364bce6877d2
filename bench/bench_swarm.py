"""The full ``flcheck check`` of the generated swarm (``bench/swarm_models.py``: N satellites, R rounds,
the noise grid {0, 1, 2}) at the sizes of issue #28, each in its own process (prints a table; no
assertions; tests compare values, never times).

Columns: N, R; ``states``: the explored structure after the reductions (``reductions.states`` of
``check --json``) and ``stored``: how the counter abstraction stores them (``counters``,
``representatives`` or ``-`` when it was not applied); ``priv. states``: the privacy pipeline's
exploration of D0 (``reductions.explorations``); ``closed``: for R = 1 the closed form of the reduced
count, ``∏_k (|class k| + 1) + 1`` (how many clients of each symmetry class have reported, and the
evaluated state); ``CPU s`` and ``peak MiB`` of the whole process (interpreter start-up included);
``exit``; ``verdicts``: one letter per property (h holds, v violated, u unknown). With ``--before DIR``
the same runs of a source tree ``DIR`` (e.g. the main branch extracted with ``git archive``) are
printed beside, and their ratio. Every run is under ``--max-seconds`` (CPU) and ``--max-memory``.

Usage: python bench/bench_swarm.py [--sizes 8x1,16x1,32x1,64x1,32x2,128x1,128x2,256x1]
                                   [--max-seconds 600] [--max-memory 6000] [--before DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_scale import _run_measured
from swarm_models import swarm_scenario

HERE = Path(__file__).resolve().parent
LETTER = {"holds": "h", "violated": "v", "unknown": "u", "holds vacuously": "h"}


def _classes(satellites: int, values: int) -> list[int]:
    """The sizes of the symmetry classes of the swarm's clients: satellites with the same target
    (``(i + 1) mod V``), the secret's satellite apart (the attacker observes it through ``hot``:
    it is in its own class only when its data differs, which the generator does not do)."""
    sizes = [0] * values
    for i in range(satellites):
        sizes[(i + 1) % values] += 1
    return [k for k in sizes if k]


def closed_form(satellites: int, values: int = 3) -> int:
    """States of one round after the dead values, the cone and the counter abstraction: per class how
    many clients are ready, and the evaluated state."""
    return math.prod(k + 1 for k in _classes(satellites, values)) + 1


def run_check(path: Path, source: Path | None, seconds: float, memory: int) -> dict[str, Any]:
    """One ``check --json`` process (of the source tree ``source`` when given, else of this one)."""
    prefix = [] if source is None else ["env", f"PYTHONPATH={source}"]
    cmd = [*prefix, sys.executable, "-P", "-m", "checker", "check", str(path), "--json", "--max-seconds",
           str(seconds), "--max-memory", str(memory)]
    code, cpu, mib, text, last = _run_measured(cmd, 3 * seconds + 60)
    row: dict[str, Any] = {"exit": code, "cpu": cpu, "mib": mib, "error": last}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return row
    red = data.get("reductions") or {}
    row["states"] = red.get("states")
    row["stored"] = (red.get("counter") or {}).get("stored", "-")
    explorations = red.get("explorations") or []
    row["priv"] = explorations[0]["D0"]["states"] if explorations else None
    row["verdicts"] = "".join(LETTER.get(p["verdict"], "?") for p in data.get("properties", []))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="8x1,16x1,32x1,64x1,32x2,128x1,128x2,256x1")
    ap.add_argument("--values", type=int, default=3)
    ap.add_argument("--max-seconds", type=float, default=600)
    ap.add_argument("--max-memory", type=int, default=6000)
    ap.add_argument("--before", type=Path, default=None, help="a source tree to compare with")
    args = ap.parse_args()
    head = f"{'N':>4} {'R':>2} {'states':>8} {'closed':>8} {'stored':>15} {'priv. states':>12} " \
           f"{'CPU s':>8} {'peak MiB':>9} {'exit':>4} {'verdicts':>8}"
    if args.before is not None:
        head += f" | {'before CPU s':>12} {'MiB':>7} {'exit':>4} {'verdicts':>8} {'ratio':>6}"
    print(head, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes.split(","):
            n, r = (int(x) for x in size.split("x"))
            path = Path(tmp) / f"swarm{n}x{r}.fl"
            path.write_text(swarm_scenario(n, r, args.values))
            now = run_check(path, None, args.max_seconds, args.max_memory)
            closed = closed_form(n, args.values) if r == 1 else None
            line = (f"{n:>4} {r:>2} {now.get('states') or '-':>8} {closed or '-':>8} "
                    f"{now.get('stored', '-'):>15} "
                    f"{now.get('priv') or '-':>12} {now['cpu']:>8.1f} {now['mib']:>9.0f} {now['exit']:>4} "
                    f"{now.get('verdicts', now['error'][:8]):>8}")
            if args.before is not None:
                old = run_check(path, args.before, args.max_seconds, args.max_memory)
                line += (f" | {old['cpu']:>12.1f} {old['mib']:>7.0f} {old['exit']:>4} "
                         f"{old.get('verdicts', old['error'][:8]):>8} {old['cpu'] / now['cpu']:>6.1f}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
