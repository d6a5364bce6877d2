"""Outputs under interruption: ``explore --write-explicit``, ``export isabelle``, ``check --report`` and
``sweep`` stopped at random points leave, every time, the old outputs or the new ones (never a mix that
flcheck would read), and a sweep resumed after its interruptions has every instance exactly once.

A run is stopped at a random one of its file-system steps (:mod:`tests.fuzz.faults`): killed there as
SIGKILL would (then a reader of the outputs, flcheck's own, looks at them: it completes a write that had
committed) or interrupted with Ctrl-C (then no reader is needed: the command's clean-up leaves a whole
set). The quick suite draws a fixed-seed sample; the slow variants stop each command 100 times. The
expensive part of each command (exploring, checking) is computed once and reused by every stopped run,
so that each run only writes.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flcheck_spec import resource

import checker.app.check
import checker.app.isabelle.sources
from checker.app.isabelle.export_files import MANIFEST_NAME
from checker.app.sweep import read_records
from checker.cli import main
from checker.io.files import read_manifest, settle_unit, sha256_file
from checker.io.prism import MANIFEST_SUFFIX, read_explicit
from tests.fuzz.faults import KILLED, litter, restore, run_stopped_at, run_together, snapshot

QUICK_RUNS, SLOW_RUNS = 4, 100


def _quiet(argv: list[str]) -> int:
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull), \
            contextlib.redirect_stderr(devnull):
        return main(argv)


@dataclass
class Case:
    """One command writing a set of outputs into ``folder`` over an older set: ``old`` and ``new``
    command lines, the reader that looks at the outputs after a kill, and the view of the set that must
    be the old one or the new one."""

    name: str
    old: list[str]
    new: list[str]
    read: Callable[[Path], None]
    view: Callable[[Path], dict[str, str]]


def _explicit_view(folder: Path) -> dict[str, str]:
    """The set as its manifest names it (a stale ``.sta`` the new set has not is outside it)."""
    listed = read_manifest(folder / f"m{MANIFEST_SUFFIX}") or {}
    return snapshot(folder, [*listed, f"m{MANIFEST_SUFFIX}"])


def _export_view(folder: Path) -> dict[str, str]:
    listed = read_manifest(folder / MANIFEST_NAME) or {}
    return snapshot(folder, [*listed, MANIFEST_NAME])


def _report_view(folder: Path) -> dict[str, str]:
    """The report and the pictures it links to; each picture must exist and carry its content's hash in
    its name (a report never links to another report's picture)."""
    report = folder / "r.md"
    names = re.findall(r"\]\(<([^>]+)>\)", report.read_text(encoding="utf-8"))
    for name in names:
        picture = folder / name
        assert picture.exists(), f"r.md links to a missing picture {name}"
        assert name.split(".")[-2] == sha256_file(picture)[:12], f"{name} is not its content"
    return snapshot(folder, ["r.md", *names])


def _small_json(folder: Path) -> str:
    path = folder.parent / "small.json"
    path.write_text(json.dumps({"states": 3, "initial": [0], "transitions": [[0, 1], [1, 2], [2, 2]],
                                "labels": {"goal": [2]}}))
    return str(path)


def cases(folder: Path) -> dict[str, Case]:
    return {
        "write-explicit": Case("write-explicit", ["explore", "seed_model", "--max-states", "500",
                                                  "--write-explicit", f"{folder}/m"],
                               ["explore", "moniteo", "--max-states", "2000", "--write-explicit",
                                f"{folder}/m"],
                               lambda f: read_explicit(f / "m") and None, _explicit_view),
        "write-explicit, fewer files": Case(
            "write-explicit, fewer files", ["explore", "moniteo", "--max-states", "2000", "--write-explicit",
                                            f"{folder}/m"],
            ["explore", _small_json(folder), "--write-explicit", f"{folder}/m"],
            lambda f: read_explicit(f / "m") and None, _explicit_view),
        "export isabelle": Case("export isabelle", ["export", "isabelle", "example:seed", "-o", str(folder)],
                                ["export", "isabelle", "example:moniteo_rr", "-o", str(folder), "--clean"],
                                lambda f: settle_unit(f / MANIFEST_NAME) and None, _export_view),
        "check --report": Case("check --report", ["check", "seed_model", "--property", "repartition_twice",
                                                  "--report", f"{folder}/r.md"],
                               ["check", "moniteo", "--property", "eavesdrop_secret_report", "--report",
                                f"{folder}/r.md"], lambda f: None, _report_view),
    }


#: Arguments that differ from run to run without changing the result (the limits carry the run's own
#: deadlines; progress and the watchdog are the run's).
_PER_RUN = frozenset({"limits", "progress", "watchdog", "watch"})


def _memo(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` computed once per argument list (keyed by its text: the arguments are lists, not
    hashable; the per-run arguments left out)."""
    seen: dict[str, Any] = {}

    def once(*args: Any, **kwargs: Any) -> Any:
        key = repr((args, sorted((k, v) for k, v in kwargs.items() if k not in _PER_RUN)))
        if key not in seen:
            seen[key] = function(*args, **kwargs)
        return seen[key]

    return once


@pytest.fixture(scope="module")
def reuse_the_checks() -> Any:
    """Every stopped run reuses the check and the export computed by the first (only writing is
    exercised again), through the attributes the commands look up when they run."""
    sources = checker.app.isabelle.sources  # `export` imports load_export from it when it runs
    saved = checker.app.check.check_file, sources.load_export
    checker.app.check.check_file = _memo(saved[0])
    sources.load_export = _memo(saved[1])
    yield
    checker.app.check.check_file, sources.load_export = saved


def stop_randomly(case: Case, tmp_path: Path, runs: int, seed: int) -> dict[str, int]:
    """Write the old set, then stop the new command ``runs`` times at random steps (killed or
    interrupted), each time from the old set; returns how often each outcome was seen."""
    folder = tmp_path / "out"
    folder.mkdir(parents=True, exist_ok=True)
    assert _quiet(case.old) in (0, 1)
    old_saved = tmp_path / "old"
    restore(old_saved, folder)
    old = case.view(folder)
    assert _quiet(case.new) in (0, 1)  # here: the checks are computed once, for every stopped run
    new = case.view(folder)
    restore(folder, old_saved)
    whole = run_stopped_at(case.new, None)
    assert whole.status in (0, 1), whole
    assert case.view(folder) == new and new != old and not litter(folder)
    rng = random.Random(seed)
    seen = {"old": 0, "new": 0}
    for _ in range(runs):
        restore(folder, old_saved)
        at = rng.randint(1, whole.steps)
        how = rng.choice(["kill", "kill", "interrupt"])
        stopped = run_stopped_at(case.new, at, how=how)
        assert stopped.status == (KILLED if how == "kill" else 130), (at, how, stopped)
        if how == "kill":
            case.read(folder)  # flcheck's reader completes a committed write
        else:
            assert not litter(folder), (at, litter(folder))  # Ctrl-C: the command cleans up itself
        view = case.view(folder)
        assert view in (old, new), f"{case.name} stopped at step {at} ({how}): a mixed set {view}"
        seen["old" if view == old else "new"] += 1
    restore(folder, old_saved)  # a write after any interruption: the new set and no litter
    assert run_stopped_at(case.new, None).status in (0, 1)
    assert case.view(folder) == new and not litter(folder)
    return seen


@pytest.mark.parametrize("name", ["write-explicit", "write-explicit, fewer files", "export isabelle",
                                  "check --report"])
def test_interrupted_writes_quick_sample(tmp_path: Path, name: str, reuse_the_checks: Any) -> None:
    seen = stop_randomly(cases(tmp_path / "out")[name], tmp_path, QUICK_RUNS, seed=30)
    assert sum(seen.values()) == QUICK_RUNS


@pytest.mark.slow
@pytest.mark.parametrize("name", ["write-explicit", "write-explicit, fewer files", "export isabelle",
                                  "check --report"])
def test_interrupted_writes_100_times(tmp_path: Path, name: str, reuse_the_checks: Any) -> None:
    seen = stop_randomly(cases(tmp_path / "out")[name], tmp_path, SLOW_RUNS, seed=3000)
    assert seen["old"] and seen["new"], seen  # both sides of the commit point were hit


def test_every_step_of_an_explicit_write(tmp_path: Path) -> None:
    """Not a sample: the write stopped at each of its steps in turn, killed and interrupted."""
    case = cases(tmp_path / "out")["write-explicit, fewer files"]
    folder = tmp_path / "out"
    folder.mkdir(parents=True)
    assert _quiet(case.old) in (0, 1)
    restore(tmp_path / "old", folder)
    old = case.view(folder)
    whole = run_stopped_at(case.new, None)
    new = case.view(folder)
    for at in range(1, whole.steps + 1):
        for how in ("kill", "interrupt"):
            restore(folder, tmp_path / "old")
            run_stopped_at(case.new, at, how=how)
            case.read(folder)
            assert case.view(folder) in (old, new), (at, how)


@pytest.mark.parametrize("name", ["write-explicit", "export isabelle"])
def test_concurrent_writers_leave_one_whole_set(tmp_path: Path, name: str, reuse_the_checks: Any) -> None:
    """Two commands writing one set at the same moment, twice: afterwards flcheck reads one of the two
    sets, whole (the writers of a folder take turns; :mod:`tests.io.test_files` races four writers of a
    set 20 times each)."""
    case = cases(tmp_path / "out")[name]
    if name == "export isabelle":  # each export the whole session (else its ROOT lists the other's too)
        case.old, case.new = [*case.old, "--clean"], [*case.new[:-1], "--clean"]
    folder = tmp_path / "out"
    folder.mkdir()
    views = []
    for argv in (case.old, case.new):
        assert _quiet(argv) in (0, 1)  # computes the checks once, here
        views.append(case.view(folder))
    for _ in range(2):
        assert run_together([case.old, case.new]) in ([0, 0], [0, 1], [1, 0], [1, 1])
        case.read(folder)
        assert case.view(folder) in views and not litter(folder)


# ------------------------------------------------------------------------------------------ sweeps
FAMILY = resource("scenarios", "moniteo_swarm8.fl").read_text(encoding="utf-8")


def _sweep_argv(scenario: Path, out: Path, grid: str) -> list[str]:
    return ["sweep", str(scenario), "-D", grid, "--executor", "processes", "--jobs", "1", "-o", str(out),
            "--no-plot", "--quiet"]


def _every_instance_once(out: Path, grid: list[str]) -> None:
    lines = out.read_bytes().split(b"\n")
    assert lines[-1] == b"", "the file ends in a cut line"
    records = [json.loads(line) for line in lines[:-1]]  # every line a whole record
    instances = [r["instance"] for r in records]
    assert sorted(instances) == sorted(grid), instances
    assert all(r["status"] == "ok" for r in records)
    assert len(read_records(out)) == len(grid)


def kill_sweeps(tmp_path: Path, kills: int, seed: int, sizes: tuple[int, int] = (1, 4),
                *options: str) -> dict[str, int]:
    """Run a sweep of the swarm at ``sizes`` (N from, to) in a subprocess and kill it with SIGKILL at a
    random moment (up to the time a whole run takes), ``kills`` times, each run resuming where the file
    stands; a file that the runs completed is checked (every instance exactly once) and started anew, so
    that the kills keep landing mid-sweep. A last run completes the file. Returns where the kills landed:
    before any record, between records, after the last one."""
    scenario = tmp_path / "swarm.fl"
    scenario.write_text(FAMILY, encoding="utf-8")
    out = tmp_path / "r.jsonl"
    grid = [f"N={n}" for n in range(sizes[0], sizes[1] + 1)]
    argv = [sys.executable, "-m", "checker", *_sweep_argv(scenario, out, f"N={sizes[0]}..{sizes[1]}"),
            *options]
    rng = random.Random(seed)
    first, last, whole = _record_times(argv, out)  # when a whole run writes its records, here and now
    out.unlink()
    landed = {"before": 0, "between": 0, "after": 0}
    for k in range(kills):
        before = out.read_bytes().count(b"\n") if out.exists() else 0
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # every other kill anywhere in the run, the others while it writes its records
        time.sleep(rng.uniform(0.0, whole) if k % 2 else rng.uniform(0.8 * first, last + 0.2))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        after = out.read_bytes().count(b"\n") if out.exists() else 0
        landed["before" if after == before else "after" if after == len(grid) else "between"] += 1
        if after == len(grid) and out.read_bytes().endswith(b"\n"):
            _every_instance_once(out, grid)
            out.unlink()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    _every_instance_once(out, grid)
    return landed


def _record_times(argv: list[str], out: Path) -> tuple[float, float, float]:
    """Seconds from the start of a whole run to its first record, to its last one, and to its end."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: list[float] = []
    lines = 0
    while proc.poll() is None:
        now = out.read_bytes().count(b"\n") if out.exists() else 0
        seen += [time.perf_counter() - started] * (now - lines)
        lines = now
        time.sleep(0.01)
    whole = time.perf_counter() - started
    return (seen[0], seen[-1], whole) if seen else (0.0, whole, whole)


def test_a_killed_sweep_resumes_quick(tmp_path: Path) -> None:
    kill_sweeps(tmp_path, 2, seed=30)


@pytest.mark.slow
def test_a_sweep_killed_100_times(tmp_path: Path) -> None:
    # unreduced, the instances take 0.5 to 2 s each (a reduced one takes 0.05 s): room between records
    landed = kill_sweeps(tmp_path, SLOW_RUNS, 3000, (4, 6), "--no-reduce")
    assert landed["between"] >= 10, landed  # the kills fell between records, not only around them


def test_a_sweep_cut_mid_line_resumes(tmp_path: Path) -> None:
    """The sweep's own process stopped while appending a record, half of its bytes written (a full disk
    or a kill mid-write), at each append in turn: the resume repairs the file and records every instance
    exactly once; a Ctrl-C there leaves no cut line at all."""
    scenario = tmp_path / "swarm.fl"
    scenario.write_text(FAMILY, encoding="utf-8")
    grid = [f"N={n}" for n in range(1, 4)]
    out = tmp_path / "r.jsonl"
    whole = run_stopped_at(_sweep_argv(scenario, out, "N=1..3"), None)
    assert whole.status in (0, 1)
    steps = list(range(1, whole.steps + 1))
    rng = random.Random(30)
    for how in ("kill", "interrupt"):
        at = rng.choice(steps)
        out.unlink()
        run_stopped_at(_sweep_argv(scenario, out, "N=1..3"), at, how=how)
        if how == "interrupt" and out.exists():
            assert out.read_bytes().endswith(b"\n") or not out.read_bytes()
        assert _quiet(_sweep_argv(scenario, out, "N=1..3")) in (0, 1)
        _every_instance_once(out, grid)

