"""CPU seconds of ``flcheck`` start-up, per command (prints a table; no assertions).

Usage: python bench/bench_startup.py [REPEATS]   (median of REPEATS runs, default 5)

Each row runs ``python -m checker ARGS`` in a fresh process and reads the child's user + system CPU
seconds (``resource.getrusage(RUSAGE_CHILDREN)``), so the figure includes the interpreter's own start
(about 0.02 s). ``ctl`` runs on a 10-state explicit model written to a temporary folder. The targets:
``--version`` at most 0.25 s, ``ctl`` on a 10-state explicit model at most 0.5 s. The last
column lists the heavy modules each command imported (``python -X importtime`` shows the rest).
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

#: Modules a command imports only when it needs them (their import costs tenths of a second each).
HEAVY = ("numpy", "scipy", "sympy", "matplotlib", "sklearn", "dask", "rich", "mpmath", "lark", "networkx")

PROBE = ("import os, sys\n"
         "from checker.cli.main import main\n"
         "main(sys.argv[1:])\n"
         "heavy = [m for m in {heavy!r} if m in sys.modules]\n"
         "sys.stdout.flush(); sys.stderr.write('HEAVY:' + ','.join(heavy) + '\\n'); sys.stderr.flush()\n"
         "os._exit(0)  # as the console script ends (checker.__main__.run)\n")


def write_explicit(folder: Path, n: int = 10) -> Path:
    """A 10-state cycle in the PRISM/Storm explicit format; returns the prefix."""
    base = folder / "cycle"
    lines = [f"{n} {n}"] + [f"{i} {(i + 1) % n} 1" for i in range(n)]
    base.with_suffix(".tra").write_text("\n".join(lines) + "\n")
    base.with_suffix(".lab").write_text('0="init" 1="goal"\n0: 0\n5: 1\n')
    return base


def cpu_of(args: list[str]) -> tuple[float, str]:
    """CPU seconds of one ``flcheck ARGS`` run in a fresh interpreter, and the heavy modules it imported."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *args], capture_output=True,
                          text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    heavy = next((line[6:] for line in done.stderr.splitlines() if line.startswith("HEAVY:")), "?")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), heavy


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as tmp:
        base = write_explicit(Path(tmp))
        rows = [
            ["--version"], ["--help"], ["list"], ["check", "--help"], ["ctl", "--help"],
            ["ctl", f"{base}.tra", f"{base}.lab", "AG (init -> EF goal)"],
            ["ctl", f"{base}.tra", f"{base}.lab", "P=? [F<=5 goal]"],
            ["explore", f"{base}.tra", f"{base}.lab"], ["explore", "seed_model"],
            ["dp", "gaussian", "--mu", "1", "--eps", "1"], ["privacy", "--help"], ["sweep", "--help"],
        ]
        print(f"{'command':58} {'CPU s (median)':>14} {'min':>6}  heavy modules imported")
        for args in rows:
            runs = [cpu_of(args) for _ in range(repeats)]
            cpus = [c for c, _ in runs]
            shown = " ".join(args).replace(tmp + "/", "")
            print(f"{shown:58} {statistics.median(cpus):14.3f} {min(cpus):6.3f}  {runs[-1][1] or '-'}",
                  flush=True)


if __name__ == "__main__":
    main()
