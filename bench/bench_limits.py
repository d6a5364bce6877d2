"""Do the limits stop flcheck in time, in every phase? (prints a table; no assertions)

Usage: python bench/bench_limits.py [--quick] [NAME ...]   (only the workloads NAME when given)

Each workload is one ``flcheck`` command run in its own process under a time limit (``--max-seconds``,
CPU seconds) or a memory limit (``--max-memory``, MB) that it cannot finish within. The table gives the
limit asked, what the run did (exit code, the verdict line on stderr), the process's CPU seconds (user +
system, interpreter start-up and imports included: ``start s`` is that share, measured by the same
command with ``--help``… no, by ``flcheck --version`` plus the command's imports, see ``base s``), the
CPU seconds past the limit (``over s`` = CPU − limit − base), its wall seconds and its peak resident
memory (``os.wait4``'s ``ru_maxrss``) against the memory limit. The targets: a time limit
stops within 2 s of CPU (``over s`` ≤ 2), a memory limit within 10 % (peak ≤ 1.1 × limit).

Workloads (each hits its limit in a different phase): a 128-satellite generated swarm
(``bench/swarm_models.py``) checked under 20 CPU s; walker32_relay under 20 CPU s and under 500 MB;
``explore moniteo_swarm8 -D N=20`` (exploration) under 10 CPU s and 400 MB; a step-bounded
``P=? [F<=1000000 …]`` on an exact chain that never converges (a million exact iterations) under 5 CPU s;
the privacy pipeline of walker32_relay (``privacy --eps 'ln(2)'``) under 20 CPU s; an attack tree
enumerating every attack of the 8-satellite swarm (``--all-attacks --max-attacks 1000000``) under 2 CPU s.
``base s`` is the CPU seconds of the same command under a limit it hits at once (``--max-seconds 0.001``,
the imports and the first checks): what the process costs before the limit's clock means anything.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from swarm_models import swarm_scenario  # the bench folder's generator


@dataclass(frozen=True)
class Workload:
    name: str
    phase: str
    args: tuple[str, ...]
    seconds: float | None = None
    memory: float | None = None

    def argv(self, folder: Path, seconds: float | None = None) -> list[str]:
        limit = self.seconds if seconds is None else seconds
        extra = [*(("--max-seconds", f"{limit:g}") if limit is not None else ()),
                 *(("--max-memory", f"{self.memory:g}") if self.memory is not None else ())]
        return [a.replace("{tmp}", str(folder)) for a in self.args] + extra


def workloads(quick: bool) -> list[Workload]:
    big = 32 if quick else 128
    return [
        Workload(f"swarm{big} check", "exploration and properties", ("check", "{tmp}/swarm.fl"),
                 seconds=20),
        Workload("walker32 check (time)", "exploration (slow states)", ("check", "walker32_relay"),
                 seconds=20),
        Workload("walker32 check (memory)", "exploration", ("check", "walker32_relay"), memory=500),
        Workload("swarm8 N=20 explore (time)", "exploration",
                 ("explore", "moniteo_swarm8", "-D", "N=20", "--max-states", "1000000000"), seconds=10),
        Workload("swarm8 N=20 explore (memory)", "exploration",
                 ("explore", "moniteo_swarm8", "-D", "N=20", "--no-fast"), memory=400),
        Workload("P=? [F<=1e6] exact", "step-bounded probability",
                 ("ctl", "{tmp}/geo.tra", "{tmp}/geo.lab", "P=? [F<=1000000 goal]"), seconds=5),
        Workload("walker32 privacy", "privacy pipeline", ("privacy", "walker32_relay", "--eps", "ln(2)"),
                 seconds=20),
        Workload("attack tree, all attacks", "attack-tree search",
                 ("attack-tree", "moniteo_swarm8", "--goal", "round = 1", "--all-attacks", "--max-attacks",
                  "1000000", "--max-depth", "40"), seconds=2),
    ]


def prepare(folder: Path, quick: bool) -> None:
    (folder / "swarm.fl").write_text(swarm_scenario(32 if quick else 128, 1, 3), encoding="utf-8")
    # a chain that reaches its goal with probability 1 - 2^-k after k steps: exact values never repeat
    (folder / "geo.tra").write_text("2 3\n0 0 1/2\n0 1 1/2\n1 1 1\n", encoding="utf-8")
    (folder / "geo.lab").write_text('0="init" 1="goal"\n0: 0\n1: 1\n', encoding="utf-8")


@dataclass(frozen=True)
class Run:
    code: int
    cpu: float
    wall: float
    peak_mb: float
    said: str


def measured(argv: list[str], timeout: float = 900.0) -> Run:
    """``flcheck ARGV`` in a fresh process: exit code, its own CPU seconds and peak RSS (``os.wait4``),
    wall seconds and the last line of its stderr."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "checker", *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = b""
    deadline = t0 + timeout
    os.set_blocking(proc.stderr.fileno(), False)
    while True:
        chunk = proc.stderr.read()
        if chunk:
            err += chunk
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
        time.sleep(0.05)
    rest = proc.stderr.read()
    err += rest or b""
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    lines = [ln for ln in err.decode("utf-8", "replace").splitlines() if ln.strip()]
    return Run(code, usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024,
               lines[-1][:70] if lines else "")


def main() -> None:
    quick = "--quick" in sys.argv
    names = [a for a in sys.argv[1:] if not a.startswith("--")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        prepare(folder, quick)
        print(f"{'workload':30} {'phase':26} {'limit':>8} {'exit':>4} {'CPU s':>7} {'base s':>6} "
              f"{'over s':>6} {'wall s':>7} {'peak MB':>8}  stderr")
        for w in workloads(quick):
            if names and not any(n in w.name for n in names):
                continue
            r = measured(w.argv(folder))
            if w.seconds is not None:
                base = measured(w.argv(folder, seconds=0.001)).cpu
                limit = f"{w.seconds:g} s"
                over = f"{r.cpu - w.seconds - base:6.2f}"
            else:
                base = 0.0
                limit = f"{w.memory:g} MB"
                over = "-"
            print(f"{w.name:30} {w.phase:26} {limit:>8} {r.code:>4} {r.cpu:7.2f} {base:6.2f} {over:>6} "
                  f"{r.wall:7.2f} {r.peak_mb:8.0f}  {r.said}", flush=True)


if __name__ == "__main__":
    main()
