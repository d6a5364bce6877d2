"""A sweep's results file and processes under faults: one sweep per results file (the second is refused,
naming the file and the holder), a cut last line removed before resuming (never appended to), workers
that die with a sweep killed by SIGKILL (both engines), and a Dask cluster with nothing on port 8787."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from flcheck_spec import resource

from checker.app.sweep import SweepSpec, run_sweep
from checker.cli.main import main
from checker.errors import InputError
from checker.io.files import exclusive_lock

FAMILY = resource("scenarios", "moniteo_swarm8.fl").read_text(encoding="utf-8")


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "swarm.fl"
    path.write_text(FAMILY, encoding="utf-8")
    return path


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _argv(scenario: Path, out: Path, grid: str = "N=1..2", engine: str = "processes") -> list[str]:
    return ["sweep", str(scenario), "-D", grid, "--executor", engine, "--jobs", "2", "-o", str(out),
            "--no-plot", "--quiet"]


# ------------------------------------------------------------------------------------------ the lock
def test_a_second_sweep_on_one_file_is_refused(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    with exclusive_lock(out, "flcheck sweep"):  # another sweep holds it
        code, _, err = run(_argv(scenario, out))
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert f"{out} is in use: flcheck sweep (pid {os.getpid()}" in err and f"{out}.lock" in err
        assert not out.exists()
    code, _, err = run(_argv(scenario, out))  # released: it runs, and leaves no lock file
    assert code in (0, 1), err
    assert len(out.read_text().splitlines()) == 2 and not Path(f"{out}.lock").exists()


def test_a_killed_holder_leaves_no_lock(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom checker.io.files import "
                               "exclusive_lock\nwith exclusive_lock(sys.argv[1], 'test holder'):\n"
                               "    print('held', flush=True)\n    time.sleep(60)\n", str(out)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with pytest.raises(InputError, match=rf"is in use: test holder \(pid {holder.pid}"):
        with exclusive_lock(out, "second"):
            pass
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert Path(f"{out}.lock").exists()  # the file stays, the lock died with its holder
    with exclusive_lock(out, "third") as lock:
        assert "third" in lock.read_text()


def test_two_sweeps_started_together(scenario: Path, tmp_path: Path) -> None:
    """Two real sweeps on one file at once: one runs, the other is refused; each instance once."""
    out = tmp_path / "r.jsonl"
    argv = [sys.executable, "-m", "checker", *_argv(scenario, out, "N=1..4")]
    procs = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes[0] in (0, 1) and codes[1] == 2, results
    assert "is in use: flcheck sweep" in next(err for code, err in results if code == 2)
    instances = [json.loads(line)["instance"] for line in out.read_text().splitlines()]
    assert sorted(instances) == [f"N={n}" for n in range(1, 5)]


# ------------------------------------------------------------------------------------------ cut lines
def test_a_cut_last_line_is_removed_before_resuming(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    assert run(_argv(scenario, out, "N=1"))[0] in (0, 1)
    whole = out.read_text()
    cut = '{"flcheck": "0.1.0", "schema": 1, "command": "sweep", "instance": "N=2", "defines": {"N"'
    out.write_text(whole + cut)  # a full disk (or a kill) in the middle of N=2's line
    code, text, err = run([*_argv(scenario, out, "N=1..2")[:-1]])
    assert code in (0, 1), err
    assert f"{out} ended in a cut record ({len(cut)} bytes" in err
    lines = out.read_text().splitlines()
    assert [json.loads(line)["instance"] for line in lines] == ["N=1", "N=2"]  # every line whole
    assert "ran 1, skipped 1" in text


# ------------------------------------------------------------------------------------------ SIGKILL
def _descendants(pid: int, timeout: float, at_least: int) -> list[psutil.Process]:
    """The processes under ``pid`` once there are ``at_least`` of them (and they have run a moment)."""
    deadline = time.monotonic() + timeout
    parent = psutil.Process(pid)
    while time.monotonic() < deadline:
        kids = parent.children(recursive=True)
        if len(kids) >= at_least:
            time.sleep(1.0)
            return parent.children(recursive=True)
        time.sleep(0.1)
    raise AssertionError(f"fewer than {at_least} worker processes after {timeout} s")


def _alive(processes: list[psutil.Process]) -> list[int]:
    out = []
    for p in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p.pid)
    return out


def sigkill_leaves_no_workers(scenario: Path, tmp_path: Path, engine: str, workers: int) -> None:
    out = tmp_path / f"{engine}.jsonl"
    argv = [sys.executable, "-m", "checker", *_argv(scenario, out, "N=1..8", engine)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        kids = _descendants(proc.pid, 120, workers)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 15
    while _alive(kids) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _alive(kids)
    for pid in left:  # not to leave them to the next test
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"{engine}: worker processes {left} outlived the killed sweep"


def test_sigkill_leaves_no_process_pool_workers(scenario: Path, tmp_path: Path) -> None:
    sigkill_leaves_no_workers(scenario, tmp_path, "processes", 2)


@pytest.mark.slow
def test_sigkill_leaves_no_dask_workers(scenario: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    sigkill_leaves_no_workers(scenario, tmp_path, "dask", 3)  # the nannies (their workers below them)


# ------------------------------------------------------------------------------------------ Dask network
def _listening(processes: list[psutil.Process]) -> list[tuple[int, str, int]]:
    out = []
    for p in processes:
        with contextlib.suppress(psutil.Error):
            out += [(p.pid, c.laddr.ip, c.laddr.port) for c in p.net_connections(kind="inet")
                    if c.status == psutil.CONN_LISTEN]
    return out


def test_dask_sweep_listens_only_on_loopback_and_not_on_8787(scenario: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """While a Dask sweep runs: no socket of its processes listens on 8787 (the dashboard's port) or
    beyond loopback. The cause is checked too, where it is independent of other programs holding 8787:
    the scheduler's HTTP server is asked for a loopback address, not the default port."""
    distributed = pytest.importorskip("distributed")
    asked: list[Any] = []
    original = distributed.Scheduler.start_http_server

    def spy(self: Any, routes: Any, dashboard_address: Any, default_port: int = 0, **kw: Any) -> Any:
        asked.append(dashboard_address)
        return original(self, routes, dashboard_address, default_port=default_port, **kw)

    monkeypatch.setattr(distributed.Scheduler, "start_http_server", spy)
    seen: list[list[tuple[int, str, int]]] = []

    def look(record: dict[str, Any], finished: int, total: int) -> None:
        me = psutil.Process()
        seen.append(_listening([me, *me.children(recursive=True)]))

    run_sweep(SweepSpec.of(scenario), {"N": (1, 2)}, tmp_path / "d.jsonl", engine="dask", jobs=1,
              progress=look)
    assert seen and all(seen)
    for sockets in seen:
        assert all(port != 8787 for _, _, port in sockets), sockets
        assert all(ip == "127.0.0.1" for _, ip, _ in sockets), sockets
    assert asked == ["127.0.0.1:0"], asked
