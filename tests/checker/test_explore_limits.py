"""Limits that cover a whole job (:class:`checker.mc.explore.Limits` deadline, :class:`Watchdog`) and
progress lines: an exploration stops at the shared deadline, a computation past it is interrupted,
``flcheck check`` reports ``unknown`` for the properties it could not decide and exits 1."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from checker.app.check import check_scenario
from checker.app.load import resolve_scenario_path
from checker.mc.exploration import Stops
from checker.mc.explore import LimitReached, Limits, Progress, Watchdog, explore
from checker.mc.ts import Action, Step
from checker.verdict import Verdict
from flmodel.scenario import load_scenario


class Line:
    """States 0, 1, 2, ... without end."""

    def initial_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> list[Step[int]]:
        return [Step(Action("inc"), s + 1)]

    def observable_names(self) -> list[str]:
        return []

    def observe(self, s: int, name: str) -> object:
        raise KeyError(name)


def test_sharing_sets_one_deadline() -> None:
    """``max_seconds`` counts CPU seconds from now, ``max_wall_seconds`` wall seconds from ``start``."""
    before = time.process_time()
    lim = Limits(max_seconds=10, max_wall_seconds=20).sharing(100.0)
    assert before + 10 <= lim.deadline <= time.process_time() + 10  # type: ignore[operator]  # set
    assert lim.wall_deadline == 120.0
    again = lim.sharing(200.0)
    assert (again.deadline, again.wall_deadline) == (lim.deadline, 120.0)  # already shared: unchanged
    stops = lim.stops()
    assert stops.cpu == lim.deadline and stops.wall == 120.0  # the job's deadlines come first
    assert Limits().sharing(1.0).deadline is None and Limits().stops() == Stops(None, None)
    assert lim.json()["clock"] == "cpu"


def test_exploration_stops_at_a_passed_deadline() -> None:
    lim = Limits(max_seconds=100, deadline=time.process_time() - 1, check_every=16)
    k = explore(Line(), limits=lim)
    assert not k.complete and k.limit_reason == "time limit of 100 CPU s reached"
    assert k.num_states <= 17
    wall = Limits(max_wall_seconds=100, wall_deadline=time.perf_counter() - 1, check_every=16)
    k = explore(Line(), limits=wall)
    assert not k.complete and k.limit_reason == "wall-clock limit of 100 s reached"


def test_watchdog_interrupts_a_computation_and_reports() -> None:
    lines: list[str] = []
    lim = Limits(max_seconds=0.3).sharing()
    t0 = time.perf_counter()
    with pytest.raises(LimitReached) as info:
        with Watchdog(lim, report=lines.append, interval=0.1, grace=0.0, tick=0.02) as watch:
            watch.phase("spinning")
            watch.check()
            while time.perf_counter() - t0 < 30:
                pass
    assert info.value.reason == "time limit of 0.3 CPU s reached"
    assert time.perf_counter() - t0 < 10
    assert lines and all(line.startswith("spinning;") and "time limit in" in line for line in lines)


def test_watchdog_lets_an_exploration_stop_itself() -> None:
    """Within its grace (1 s past the deadline) the watchdog leaves the exploration to stop itself with a
    partial structure."""
    lim = Limits(max_seconds=0.2, check_every=64).sharing()
    with Watchdog(lim, interval=0.05, tick=0.02) as watch, watch.exploring():
        k = explore(Line(), limits=lim)
    assert not k.complete and k.limit_reason == "time limit of 0.2 CPU s reached"


def test_check_after_the_deadline_is_unknown() -> None:
    scenario = load_scenario(resolve_scenario_path("moniteo"))
    lim = Limits(max_seconds=100, deadline=time.process_time() - 10)
    report = check_scenario(scenario, limits=lim)
    assert not report.kripke.complete
    assert all(r.verdict is Verdict.UNKNOWN for r in report.results)
    first, *rest = report.results
    assert first.evidence == "time limit of 100 CPU s reached while checking it"
    assert all(r.evidence == "not checked: time limit of 100 CPU s reached before it" for r in rest)
    assert report.exit_code == 1


def test_cli_time_limit_and_progress_lines() -> None:
    # 2 CPU s: the start-up (imports, the scenario) takes most of one on a loaded machine
    proc = subprocess.run([sys.executable, "-m", "checker", "check", "moniteo_swarm8", "-D", "N=8",
                           "--no-reduce", "--max-seconds", "2", "--progress", "--progress-interval", "0.3"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "unknown" in proc.stdout
    progress = [line for line in proc.stderr.splitlines() if line.startswith("flcheck: exploring;")]
    assert all("time limit in" in line for line in progress), proc.stderr


def test_progress_line_names_phase_states_rate_and_time_left() -> None:
    watch = Watchdog(Limits(max_seconds=60).sharing(), interval=1.0)
    watch.phase("exploring")
    watch.explored(Progress(states=1200, expanded=1000, frontier=200, transitions=5000, seconds=2.0,
                            rate=600.0, depth=3))
    line = watch.line()
    assert line.startswith("exploring; explored 1200 states (200 in frontier), 5000 transitions")
    assert "600 states/s" in line and "time limit in" in line and "s elapsed" in line


def test_privacy_uses_the_same_limits() -> None:
    """``flcheck privacy`` has check's limits (no hidden state limit; a time budget for the whole job)."""
    proc = subprocess.run([sys.executable, "-m", "checker", "privacy", "moniteo_swarm8", "-D", "N=8",
                           "--no-literal", "--max-seconds", "1"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "unknown" in proc.stderr and "time limit of 1 CPU s reached" in proc.stderr
    helped = subprocess.run([sys.executable, "-m", "checker", "privacy", "--help"], capture_output=True,
                            text=True, timeout=120).stdout
    assert "default 2,000,000" in helped and "--max-seconds" in helped and "CPU seconds" in helped
