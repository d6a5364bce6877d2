"""Every limit honoured, in every phase, with one clear line: deep operator chains are refused with
their position, never a crash;
step-bounded probabilities, attack-tree searches and the privacy pipeline stop at the time limit, in CPU
seconds; a loss that exact arithmetic cannot hold is refused before anything computes it; Ctrl-C at
start-up is one line and exit 130; ``check`` stopped by Ctrl-C or a limit prints what it decided.

The tests compare behaviour (stopped, exit code, partial result), not times, except a generous bound
where a run that ignored its limit would never end (``bench/bench_limits.py`` measures the stops)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import flcheck_spec
import numpy as np
import pytest

from checker.cli.main import main
from checker.errors import LimitReached
from checker.markov.models import mdp_from_kripke
from checker.markov.pctl import path_values
from checker.mc import ctl_ast
from checker.mc.exploration import Limits, Watchdog, cpu_clock, wall_clock
from checker.mc.kripke import Kripke
from checker.verdict import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_VIOLATED

MONITEO = flcheck_spec.bundled_scenarios()["moniteo"]
LINK_LOSS = flcheck_spec.bundled_scenarios()["moniteo_link_loss"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def flcheck(*argv: str, timeout: float = 300, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """``flcheck ARGV`` in its own process (a crash, a hang or a segfault stays there)."""
    return subprocess.run([sys.executable, "-m", "checker", *argv], capture_output=True, text=True,
                          timeout=timeout, check=False, **kwargs)  # type: ignore[call-overload]


def flcheck_formula(*argv: str, formula: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """``flcheck ARGV[0] ARGV[1] FORMULA ARGV[2:]`` in its own process, the formula read from a file (a
    command line holds at most 128 KiB per argument)."""
    path = folder / "formula.txt"
    path.write_text(formula, encoding="utf-8")
    code = ("import sys; from checker.cli.main import main; "
            f"a = {list(argv)!r}; sys.exit(main([*a[:2], open({str(path)!r}).read(), *a[2:]]))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          check=False)


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------------------------------------------
# deep operator chains
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("formula", [
    " <-> ".join(["round >= 0"] * 15_000),   # one parse node, folded into 15,000 nested Iff
    " -> ".join(["round >= 0"] * 15_000),
    "!" * 15_000 + "true",
    "EF " * 5_000 + "true",
    "P>=0 [F " + "!" * 2_000 + "true]",
])
def test_a_deep_formula_is_refused_with_its_position(formula: str, tmp_path: Path) -> None:
    """A chain of 15,000 '<->' was a segfault (exit 139): refused past 1,000 levels, with the position."""
    proc = flcheck_formula("ctl", "moniteo", formula=formula, folder=tmp_path)
    assert proc.returncode == EXIT_BAD_INPUT, (proc.returncode, proc.stderr[-500:])
    line = one_line(proc.stderr)
    assert line.startswith("flcheck: error: <formula>:1:") and "nested more than 1000 levels" in line


@pytest.mark.parametrize("formula", [
    " & ".join(["round >= 0"] * 15_000),      # n-ary: one level
    "(" * 15_000 + "round >= 0" + ")" * 15_000,
    " <-> ".join(["round >= 0"] * 1_000),
    "!" * 1_000 + "true",
])
def test_long_but_shallow_formulas_are_checked(formula: str, tmp_path: Path) -> None:
    proc = flcheck_formula("ctl", "moniteo", formula=formula, folder=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr[-500:]


def test_a_deep_scenario_expression_is_refused_with_its_position(tmp_path: Path) -> None:
    text = MONITEO.read_text(encoding="utf-8")
    at = text.index("\n", text.index('scenario "')) + 1
    for body in ("+".join(["1"] * 5_000), "-" * 5_000 + "1"):
        path = tmp_path / "deep.fl"
        path.write_text(text[:at] + f"const K = {body};\n" + text[at:], encoding="utf-8")
        proc = flcheck("explore", str(path), timeout=300)
        assert proc.returncode == EXIT_BAD_INPUT, proc.stderr[-500:]
        line = one_line(proc.stderr)
        assert line.startswith(f"flcheck: error: {path}:15:") and "nested more than 1000 levels" in line
    path.write_text(text[:at] + f"const K = {'+'.join(['1'] * 500)};\n" + text[at:], encoding="utf-8")
    assert flcheck("explore", str(path), "--max-states", "50").returncode == EXIT_VIOLATED


def test_implication_and_equivalence_spelled_with_equals(capsys: pytest.CaptureFixture[str]) -> None:
    """``=>`` and ``<=>`` are the documented spellings of ``->`` and ``<->`` (the lexer read ``=>`` as
    the comparison ``=`` followed by ``>``)."""
    from checker.mc.ctl_parse import parse_formula

    assert parse_formula("heads => true") == parse_formula("heads -> true")
    assert parse_formula("round >= 0 => round <= 1") == parse_formula("round >= 0 -> round <= 1")
    assert parse_formula("x == 1 <=> y") == parse_formula("x == 1 <-> y")
    assert parse_formula("x <= 1") == parse_formula("x<=1")
    code, out, _ = run(["ctl", "moniteo", "round = 1 => ready == clients"], capsys)
    assert code in (0, 1) and "round == 1 -> ready == clients" in out


# ------------------------------------------------------------------------------------------------
# the limits in every phase
# ------------------------------------------------------------------------------------------------

def test_a_loss_exact_arithmetic_cannot_hold_is_refused_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``retries 99999999`` needs (1/10)^100000000 exactly: one multiplication no limit can interrupt
    (14 GB, 90 s before). Refused at the loss statement; a smaller retry count still runs."""
    text = LINK_LOSS.read_text(encoding="utf-8")
    path = tmp_path / "retries.fl"
    path.write_text(text.replace("1/10 retries 1", "1/10 retries 99999999"), encoding="utf-8")
    code, _, err = run(["check", str(path), "--max-seconds", "5"], capsys)
    assert code == EXIT_BAD_INPUT
    line = one_line(err)
    assert line.startswith(f"flcheck: error: {path}:23:") and "retries 99999999" in line
    assert "at most retries 262,143" in line
    path.write_text(text.replace("1/10 retries 1", "1/10 retries 100"), encoding="utf-8")
    code, _, _ = run(["explore", str(path), "--max-states", "100"], capsys)
    assert code in (0, 1)


def _geometric(tmp_path: Path) -> tuple[Path, Path]:
    """A chain reaching its goal with probability 1 - 2^-k within k steps: exact values never repeat."""
    tra, lab = tmp_path / "geo.tra", tmp_path / "geo.lab"
    tra.write_text("2 3\n0 0 1/2\n0 1 1/2\n1 1 1\n", encoding="utf-8")
    lab.write_text('0="init" 1="goal"\n0: 0\n1: 1\n', encoding="utf-8")
    return tra, lab


def test_a_step_bounded_probability_stops_at_the_time_limit(tmp_path: Path) -> None:
    """A million exact iterations: stopped by ``--max-seconds`` (CPU), unknown, exit 1, one line."""
    tra, lab = _geometric(tmp_path)
    proc = flcheck("ctl", str(tra), str(lab), "P=? [F<=1000000 goal]", "--max-seconds", "1", timeout=120)
    assert proc.returncode == EXIT_VIOLATED, proc.stderr
    assert one_line(proc.stderr) == ("flcheck: unknown: time limit of 1 CPU s reached before anything was "
                                     "decided")
    proc = flcheck("ctl", str(tra), str(lab), "P=? [F<=1000000 goal]", "--max-seconds", "1", "--json",
                   timeout=120)
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "unknown" and doc["limit_reason"] == "time limit of 1 CPU s reached"


def test_step_bounded_values_equal_the_plain_iteration() -> None:
    """The early exit at a fixpoint of the bounded iteration gives the plain iteration's values
    (a reference written here: every step done, exact), on random chains and bounds past convergence."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(2, 7))
        src, dst, prob = [], [], []
        for s in range(n):
            targets = sorted(set(rng.integers(0, n, int(rng.integers(1, 3))).tolist()))
            weights = [Fraction(int(w), 1) for w in rng.integers(1, 4, len(targets))]
            total = sum(weights, Fraction(0))
            for t, w in zip(targets, weights, strict=True):
                src.append(s)
                dst.append(t)
                prob.append(w / total)
        goal = np.zeros(n, dtype=bool)
        goal[int(rng.integers(0, n))] = True
        k = Kripke.from_edges(n, [0], src, dst, prob_exact=prob, labels={"goal": goal})
        mdp = mdp_from_kripke(k)
        for bound in (0, 1, 3, 40):
            got = path_values(mdp, ctl_ast.Eventually(ctl_ast.Label("goal"), bound),
                              lambda _f, g=goal: g, "max", exact=True)
            x = [Fraction(int(v)) for v in goal]
            for _ in range(bound):
                x = [Fraction(1) if goal[s] else sum((p * x[t] for a, t, p in zip(src, dst, prob, strict=True)
                                                     if a == s), Fraction(0)) for s in range(n)]
            assert list(got) == x


def test_an_attack_tree_search_stops_at_the_time_limit() -> None:
    from checker.attack_trees.generation import generate_attack_tree

    n = 60  # a complete graph: more simple paths than the search could ever list
    src = [s for s in range(n) for t in range(n) if s != t]
    dst = [t for s in range(n) for t in range(n) if s != t]
    k = Kripke.from_edges(n, [0], src, dst, action=list(range(len(src))))
    goal = np.zeros(n, dtype=bool)
    goal[n - 1] = True
    past = Limits(max_seconds=100, deadline=cpu_clock() - 1)
    with pytest.raises(LimitReached, match="time limit of 100 CPU s reached"):
        generate_attack_tree(k, goal, max_depth=20, max_attacks=10**6, budget=10**9, limits=past,
                             distinguish="paths")


def test_the_privacy_pipeline_stops_with_one_line() -> None:
    """walker32_relay under a small time limit: unknown, exit 1, one line (it printed a 66-line
    traceback: the memory watchdog fired again while the first error was handled)."""
    proc = flcheck("privacy", "walker32_relay", "--eps", "ln(2)", "--max-seconds", "3", timeout=300)
    assert proc.returncode == EXIT_VIOLATED
    line = one_line(proc.stderr)
    assert line.startswith("flcheck: unknown: ") and "time limit of 3 CPU s reached" in line


def test_every_command_has_the_same_memory_policy() -> None:
    """Three quarters of the machine unless --max-memory (privacy had its own 3,072 MB); the old
    spelling --max-memory-mb is the same option."""
    from checker.cli.main import build_parser
    from checker.cli.options import default_memory_mb, job_limits

    for command in (["check"], ["ctl", "m", "f"], ["explore", "m"], ["attack-tree", "m"], ["privacy", "m"],
                    ["dp", "gaussian", "--eps", "1"], ["list"]):
        args = build_parser(command[0]).parse_args(command)
        assert job_limits(args).max_memory_mb == default_memory_mb(), command
    for spelling in ("--max-memory", "--max-memory-mb"):
        args = build_parser("privacy").parse_args(["privacy", "m", spelling, "700"])
        assert job_limits(args).max_memory_mb == 700


def test_cpu_and_wall_clock_limits() -> None:
    """``--max-seconds`` counts CPU seconds: a job that waits does not spend them;
    ``--max-wall-seconds`` counts the clock on the wall."""
    with Watchdog(Limits(max_seconds=0.2).sharing(), tick=0.02):
        time.sleep(0.6)  # waiting: no CPU
    t0 = wall_clock()
    with pytest.raises(LimitReached, match=r"wall-clock limit of 0\.2 s reached"):
        with Watchdog(Limits(max_wall_seconds=0.2).sharing(), tick=0.02):
            time.sleep(30)
    assert wall_clock() - t0 < 20


def test_a_caught_stop_fires_again_and_a_nested_watchdog_restores_the_outer_timer() -> None:
    caught = 0
    with pytest.raises(LimitReached):
        with Watchdog(Limits(max_wall_seconds=0.1).sharing(), tick=0.02):
            for _ in range(300):  # a library that swallows the first stop does not run on unbounded
                try:
                    time.sleep(0.05)
                except LimitReached:
                    if caught:
                        raise
                    caught += 1
    assert caught == 1
    outer = Watchdog(Limits(), tick=0.05)
    with outer:
        with Watchdog(Limits(), tick=0.02):
            pass
        assert signal.getitimer(signal.ITIMER_REAL)[1] == pytest.approx(0.05)
        assert signal.getsignal(signal.SIGALRM) == outer._tick  # the handler is back
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.parametrize("value", ["1e-7", "0", "1e308", "abc"])
def test_progress_interval_out_of_range_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--progress-interval 1e-7`` livelocked (a progress line every tick)."""
    for command in (["check", "moniteo"], ["explore", "moniteo"]):
        code, _, err = run([*command, "--progress", "--progress-interval", value], capsys)
        assert code == EXIT_BAD_INPUT and "argument --progress-interval" in one_line(err)


def test_explore_has_the_default_limits_and_says_why_it_stopped(capsys: pytest.CaptureFixture[str]) -> None:
    from checker.cli.main import build_parser

    args = build_parser("explore").parse_args(["explore", "moniteo_published"])
    assert (args.max_states, args.max_seconds) == (2_000_000, 600.0)
    code, out, err = run(["explore", "--help"], capsys)
    assert code == 0 and "2,000,000 states and 600 CPU seconds" in " ".join(out.split())
    code, out, err = run(["explore", "moniteo_published", "--max-states", "2000"], capsys)
    assert code == EXIT_VIOLATED and "INCOMPLETE: state limit of 2000 reached" in out
    assert "without the reductions check derives" in err


@pytest.mark.parametrize("argv, option", [
    (["-D", "N=1..200", "-D", "X=1..100"], "-D"),
    (["-D", "N=1", "--jobs", "9" * 30], "--jobs"),
    (["-D", "N=1", "--jobs", "257"], "--jobs"),
])
def test_sweep_caps_its_grid_and_jobs(argv: list[str], option: str, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "swarm_x.fl"
    text = flcheck_spec.bundled_scenarios()["moniteo_swarm8"].read_text(encoding="utf-8")
    scenario.write_text(text.replace("const N = 8;", "const N = 8;\nconst X = 1;"), encoding="utf-8")
    code, _, err = run(["sweep", str(scenario), "-o", str(tmp_path / "s.jsonl"), *argv], capsys)
    assert code == EXIT_BAD_INPUT
    line = one_line(err)
    assert option in line and ("at most 10,000" in line or "from 1 to 256" in line)


def test_sweep_keeps_the_old_option_spellings_with_a_note(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.jsonl"
    code, _, err = run(["sweep", "moniteo_swarm8", "-D", "N=1", "--engine", "processes", "--jobs", "1",
                        "-o", str(out), "--no-plot", "--quiet"], capsys)
    assert code in (0, 1) and "sweep --engine is deprecated; use --executor" in err
    code, _, err = run(["sweep", "moniteo_swarm8", "-D", "N=1", "--engine", "processes", "--executor",
                        "processes", "-o", str(out), "--no-plot"], capsys)
    assert code == EXIT_BAD_INPUT and "--engine and --executor given together" in one_line(err)


def test_ctrl_c_during_start_up_is_one_line_and_exit_130() -> None:
    """SIGINT while flcheck loads the command's modules (the console script's entry point has started,
    as in ``bin/flcheck``): no traceback, one line, exit 130."""
    start = ("import sys; from checker.__main__ import run; sys.argv = ['flcheck', 'check', 'moniteo']; "
             "print('ready', flush=True); sys.exit(run())")
    interrupted = 0
    for delay in (0.0, 0.05, 0.2, 0.5):
        proc = subprocess.Popen([sys.executable, "-c", start], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        if proc.returncode == 0:  # finished before the signal
            continue
        interrupted += 1
        assert proc.returncode == EXIT_INTERRUPTED, err
        assert "Traceback" not in err and one_line(err).startswith("flcheck: interrupted")
    assert interrupted


# ------------------------------------------------------------------------------------------------
# check stopped: the table of what was decided
# ------------------------------------------------------------------------------------------------

def _interrupt_at(monkeypatch: pytest.MonkeyPatch, kind: str, exc: BaseException, after: int = 0) -> None:
    """Make the ``after``-th property of ``kind`` (and only it) raise ``exc``."""
    import checker.app.check as check

    real = check.decide
    seen = [0]

    def stop(ctx: check.CheckContext, p: check.PropertyDecl) -> check.PropertyResult:
        if p.kind == kind:
            seen[0] += 1
            if seen[0] == after + 1:
                raise exc
        return real(ctx, p)

    monkeypatch.setattr(check, "decide", stop)


def test_ctrl_c_during_check_prints_what_was_decided(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _interrupt_at(monkeypatch, "attack_tree", KeyboardInterrupt())
    code, out, err = run(["check", "moniteo"], capsys)
    assert code == EXIT_INTERRUPTED
    assert "round_can_complete       ctl          holds" in out  # decided before the interrupt
    assert "secret_stays             attack_tree  unknown" in out
    assert "crossval_ni_fl_dp        crossval     unknown" in out
    assert one_line(err).startswith("flcheck: interrupted (Ctrl-C) while checking secret_stays")
    _interrupt_at(monkeypatch, "attack_tree", KeyboardInterrupt())
    code, out, _ = run(["check", "moniteo", "--json"], capsys)
    doc = json.loads(out)
    assert code == EXIT_INTERRUPTED and doc["interrupted"] == {
        "cause": "sigint", "reason": "interrupted (Ctrl-C)", "during": "checking secret_stays"}
    verdicts = {p["name"]: p["verdict"] for p in doc["properties"]}
    assert verdicts["dataset_fixed"] == "holds" and verdicts["ni_fl_dp"] == "unknown"


def test_a_limit_during_check_prints_what_was_decided(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _interrupt_at(monkeypatch, "privacy", LimitReached("time limit of 9 CPU s reached"))
    code, out, _ = run(["check", "moniteo", "--json"], capsys)
    doc = json.loads(out)
    assert code == EXIT_VIOLATED
    assert doc["interrupted"] == {"cause": "limit", "reason": "time limit of 9 CPU s reached",
                                  "during": "checking ni_fl_dp"}
    verdicts = {p["name"]: p["verdict"] for p in doc["properties"]}
    assert verdicts["eavesdrop_secret_report"] == "holds"
    assert [verdicts[n] for n in ("ni_fl_dp", "adv_theorem1", "crossval_ni_fl_dp")] == ["unknown"] * 3
    code, out, _ = run(["check", "moniteo", "--json"], capsys)
    assert code == 0 and json.loads(out)["interrupted"] is None


def test_a_limit_before_the_properties_still_prints_the_table(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A limit while exploring (outside the exploration's own checks): every property unknown, the
    table printed, ``interrupted`` says during what."""
    import checker.app.check as check

    def stopped(*_args: object, **_kwargs: object) -> None:
        raise LimitReached("memory limit of 77 MB reached")

    monkeypatch.setattr(check, "explore", stopped)
    code, out, err = run(["check", "moniteo", "--json"], capsys)
    doc = json.loads(out)
    assert code == EXIT_VIOLATED and doc["interrupted"]["during"] == "exploring"
    assert {p["verdict"] for p in doc["properties"]} == {"unknown"} and len(doc["properties"]) == 11
    assert doc["properties"][0]["evidence"] == "not checked: memory limit of 77 MB reached while exploring"
    assert "memory limit of 77 MB reached while exploring" in one_line(err)


def test_sigint_to_a_running_check_prints_the_table() -> None:
    """A real Ctrl-C (SIGINT) to ``flcheck check``: the table, exit 130."""
    proc = subprocess.Popen([sys.executable, "-m", "checker", "check", "moniteo_rounds", "--progress",
                             "--progress-interval", "0.1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stderr is not None
    for line in proc.stderr:  # wait until the properties are being checked
        if "checking " in line and "of 7" in line:
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the check ended before the signal")
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "property" in out and "unknown" in out and "Traceback" not in err
