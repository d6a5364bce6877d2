"""How flcheck scales on swarms: Moniteo swarm variants with N satellites, R rounds and the noise grid
{0 .. V-1} (``bench/swarm_models.py``), each measured in its own process (prints a table; no assertions).

Columns: states and transitions of the explored structure; for R = 1 the closed form (V+1)^N + V^N;
``priv. red.``: the states of the privacy pipeline's own explorations (both neighbouring systems, with
their reductions, from ``check --json``'s ``reductions.explorations``);
CPU seconds and states per CPU second of the exploration alone, by the plain explorer (``expl CPU s``:
one state object at a time, ``explore(..., fast=False)``; up to 500000 states) and by the batch explorer
(``batch s``: integer-coded states a slice of the queue at a time, ``checker.mc.explore_batch``, the
default where the scenario allows it; the same structure); ``load s``: CPU seconds of ``load_model``
(parse, semantic checks, build and exploration by the default engine); CPU seconds and peak RSS of the
full ``flcheck check`` process (interpreter start-up included); with stormpy installed, the time to
build the Storm MDP of the explored structure (``checker.markov.storm.from_mdp``), Storm's Pmin of
reaching ``round = 1`` (the figure of the ``round_almost_surely`` property), the state count and build
time of the same swarm written in the PRISM language (``swarm_models.swarm_prism``: the same states and
probabilities) and built by Storm's PRISM parser (parse and build, CPU seconds), and the ratios of the
batch exploration and of the whole load to that build (Storm's library and flcheck's grammar are
loaded before the clocks start).
Figures are medians of ``--repeats`` runs where one run takes under 10 s, else of one run.

The check columns are measured twice: with the reductions ``flcheck check`` applies by default
(``states red.``: the reduced structure's states, ``check CPU s``) and with ``--no-reduce``
(``plain CPU s``); each check runs under ``--max-seconds`` (``--check-seconds``), so an over-budget run
ends with exit 1 (``unknown``) instead of occupying the machine. ``--bundled`` prints instead the
reduction factor of every bundled scenario (states with and without the reductions, in process; and,
``ctl/P red.``, with the scenario's ctl and probability properties alone, the only kinds the symmetry
reduction serves); with ``--family NAME`` only of the bundled parametric scenario NAME at ``N`` in
``--sizes`` (``--no-plain``: without the unreduced exploration), and with ``--checks`` the whole
``flcheck check`` of it at each ``N`` in its own process (exit code, CPU seconds, peak RSS, the states of
the explored structure and of every privacy exploration, the verdicts) under ``--check-seconds`` and
``--check-memory``.

Usage: python bench/bench_scale.py [--satellites 2-6] [--rounds 1-2] [--values 2-3] [--repeats 3]
                                   [--timeout 900] [--check-seconds 300] [--no-check] [--no-storm]
                                   [--no-plain] [--bundled [--family NAME --sizes 2-8 [--checks]]]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swarm_models import closed_form_states, swarm_prism, swarm_scenario

from checker.app.load import load_model
from checker.markov import storm
from checker.markov.models import mdp_from_kripke
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_parse import parse_formula
from checker.mc.explore import explore
from flmodel.scenario import load_scenario
from flmodel.scenario_build import build_system

REPEAT_BELOW_SECONDS = 10.0
#: Largest structure the plain explorer (one state at a time, about 35k states/s) is timed on.
PLAIN_CAP = 500_000
HERE = Path(__file__).resolve().parent


def _int_range(text: str) -> list[int]:
    """``"2-6"``, ``"2,4,8"`` or ``"2-8,16,32"`` as a list of integers."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


# ------------------------------------------------------------------------------------------ worker side
def _cpu() -> float:
    return time.process_time()


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def worker(scenario: Path, prism: Path | None, with_storm: bool,
           plain_cap: int = PLAIN_CAP) -> dict[str, Any]:
    """Explore ``scenario`` and (``with_storm``) hand the structure to Storm; figures as a dict: the CPU
    seconds of ``load_model`` (parse, semantic checks, build and exploration by the default engine:
    ``load_cpu``), of the batch explorer's exploration alone (``batch_cpu``) and of the plain explorer's
    (``explore_cpu``, one state at a time; only up to ``plain_cap`` states)."""
    load_scenario(scenario)  # the grammar loads once per process, before the clocks (stormpy is imported too)
    t0 = _cpu()
    kripke = load_model(scenario)
    out: dict[str, Any] = {"states": kripke.num_states, "transitions": kripke.num_transitions,
                           "load_cpu": _cpu() - t0, "explore_rss_mb": _peak_rss_mb(),
                           "complete": kripke.complete, "batch": bool(kripke.stats.get("batch"))}
    system = build_system(load_scenario(scenario))
    if out["batch"]:
        t0 = _cpu()
        explore(system)
        out["batch_cpu"] = _cpu() - t0
    if kripke.num_states <= plain_cap:
        t0 = _cpu()
        explore(system, fast=False)
        out["explore_cpu"] = _cpu() - t0
    if not with_storm:
        return out
    stormpy = storm.require_stormpy()  # imported before the clock starts
    goal = ModelChecker(kripke).sat(parse_formula("round = 1"))
    mdp = mdp_from_kripke(kripke)
    t0 = _cpu()
    model = storm.from_mdp(mdp, {"round1": goal})
    out["storm_build_cpu"] = _cpu() - t0
    result = storm.reach_probabilities(model, "round1", objective="min")
    out["storm_pmin"] = float(result.initial_value)
    out["storm_check_s"] = result.seconds
    if prism is not None:
        t0 = _cpu()
        built = stormpy.build_model(stormpy.parse_prism_program(str(prism)))
        out["prism_build_cpu"] = _cpu() - t0
        out["prism_states"] = int(built.nr_states)
    return out


# ------------------------------------------------------------------------------------------ driver side
def _run_measured(cmd: list[str], timeout: float) -> tuple[int, float, float, str, str]:
    """Run ``cmd``; ``(exit code, CPU seconds, peak RSS MB, stdout, last line of stderr)`` of that
    process alone (``wait4``).  Exit code ``-9`` when it was killed after ``timeout`` seconds."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=HERE.parent)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        out.seek(0)
        err.seek(0)
        last_error = (err.read().strip().splitlines() or [""])[-1]
        cpu = usage.ru_utime + usage.ru_stime
        return os.waitstatus_to_exitcode(status), cpu, usage.ru_maxrss / 1024, out.read(), last_error


def _median_runs(run: Callable[[], dict[str, Any]], repeats: int, seconds_key: str) -> dict[str, Any]:
    """``run()`` once, and ``repeats - 1`` more times when it took under 10 s; the median of every
    numeric figure (the others from the first run)."""
    runs = [run()]
    if runs[0].get(seconds_key, REPEAT_BELOW_SECONDS) < REPEAT_BELOW_SECONDS:
        runs += [run() for _ in range(repeats - 1)]
    merged = dict(runs[0])
    for key, value in runs[0].items():
        if isinstance(value, float):
            merged[key] = statistics.median(r[key] for r in runs)
    return merged


def measure(satellites: int, rounds: int, values: int, folder: Path, *, repeats: int, timeout: float,
            with_check: bool, with_storm: bool, check_seconds: float = 300.0,
            with_plain: bool = True, with_explore: bool = True) -> dict[str, Any]:
    name = f"swarm_n{satellites}_r{rounds}_v{values}"
    scenario = folder / f"{name}.fl"
    scenario.write_text(swarm_scenario(satellites, rounds, values))
    prism = None
    if with_storm:
        prism = folder / f"{name}.prism"
        prism.write_text(swarm_prism(satellites, values, rounds=rounds))
    worker_cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(scenario)]
    if with_storm:
        worker_cmd.append("--storm")
    if prism is not None:
        worker_cmd += ["--prism", str(prism)]

    def explore_once() -> dict[str, Any]:
        code, _, _, stdout, last_error = _run_measured(worker_cmd, timeout)
        if code != 0:
            return {"error": "timeout" if code == -9 else f"exit {code}: {last_error}"}
        figures: dict[str, Any] = json.loads(stdout)
        return figures

    row: dict[str, Any] = {"N": satellites, "R": rounds, "V": values}
    row.update(_median_runs(explore_once, repeats, "load_cpu") if with_explore else
               {"states": None, "transitions": None, "explore_cpu": None})
    if with_check and "error" not in row:
        check_cmd = [sys.executable, "-m", "checker", "check", str(scenario), "--json",
                     "--max-seconds", str(check_seconds)]

        def check_once(extra: list[str], prefix: str) -> dict[str, Any]:
            code, cpu, rss, stdout, _ = _run_measured(check_cmd + extra, timeout)
            out: dict[str, Any] = {f"{prefix}_exit": code, f"{prefix}_cpu": cpu, f"{prefix}_rss_mb": rss}
            try:
                data = json.loads(stdout)
                out[f"{prefix}_states"] = int(data["states"])
                out[f"{prefix}_priv_states"] = sum(int(e[side]["states"]) for e in
                                                   data["reductions"].get("explorations", ())
                                                   for side in ("D0", "D1"))
            except (ValueError, KeyError, TypeError):
                out[f"{prefix}_states"] = None
            return out

        row.update(_median_runs(lambda: check_once([], "check"), repeats, "check_cpu"))
        if with_plain:
            row.update(_median_runs(lambda: check_once(["--no-reduce"], "plain"), repeats, "plain_cpu"))
    return row


def _cell(row: dict[str, Any], key: str, spec: str) -> str:
    value = row.get(key)
    return "-" if value is None else format(value, spec)


def print_header(with_storm: bool) -> None:
    head = (f"{'N':>2} {'R':>1} {'V':>1} {'states':>9} {'closed':>9} {'trans':>10} {'expl CPU s':>10} "
            f"{'states/s':>9} {'batch s':>8} {'batch st/s':>10} {'load s':>7} "
            f"{'states red.':>11} {'priv. red.':>10} {'check CPU s':>11} {'exit':>4} "
            f"{'peak MB':>8} "
            f"{'plain CPU s':>11} {'exit':>4} {'peak MB':>8}")
    if with_storm:
        head += (f" {'Storm build s':>13} {'Pmin':>5} {'Storm chk s':>11} {'PRISM states':>12} "
                 f"{'PRISM s':>7} {'batch/PRISM':>11} {'load/PRISM':>10}")
    print(head, flush=True)


def _ratio(row: dict[str, Any], key: str, base: str) -> str:
    a, b = row.get(key), row.get(base)
    return "-" if a is None or not b else f"{a / b:.2f}"


def print_row(row: dict[str, Any], with_storm: bool) -> None:
    if "error" in row:
        print(f"{row['N']:>2} {row['R']:>1} {row['V']:>1}  {row['error']}", flush=True)
        return
    closed = closed_form_states(row["N"], row["V"]) if row["R"] == 1 else None
    rate, batch_rate = (row["states"] / row[key] if row["states"] is not None and row.get(key) else None
                        for key in ("explore_cpu", "batch_cpu"))
    line = (f"{row['N']:>2} {row['R']:>1} {row['V']:>1} {_cell(row, 'states', 'd'):>9} "
            f"{'-' if closed is None else closed:>9} {_cell(row, 'transitions', 'd'):>10} "
            f"{_cell(row, 'explore_cpu', '.2f'):>10} {'-' if rate is None else f'{rate:.0f}':>9} "
            f"{_cell(row, 'batch_cpu', '.3f'):>8} {'-' if batch_rate is None else f'{batch_rate:.0f}':>10} "
            f"{_cell(row, 'load_cpu', '.3f'):>7} "
            f"{_cell(row, 'check_states', 'd'):>11} {_cell(row, 'check_priv_states', 'd'):>10} "
            f"{_cell(row, 'check_cpu', '.2f'):>11} {_cell(row, 'check_exit', 'd'):>4} "
            f"{_cell(row, 'check_rss_mb', '.0f'):>8} {_cell(row, 'plain_cpu', '.2f'):>11} "
            f"{_cell(row, 'plain_exit', 'd'):>4} {_cell(row, 'plain_rss_mb', '.0f'):>8}")
    if with_storm:
        line += (f" {_cell(row, 'storm_build_cpu', '.3f'):>13} {_cell(row, 'storm_pmin', '.3g'):>5} "
                 f"{_cell(row, 'storm_check_s', '.3f'):>11} {_cell(row, 'prism_states', 'd'):>12} "
                 f"{_cell(row, 'prism_build_cpu', '.3f'):>7} "
                 f"{_ratio(row, 'batch_cpu', 'prism_build_cpu'):>11} "
                 f"{_ratio(row, 'load_cpu', 'prism_build_cpu'):>10}")
    print(line, flush=True)


def bundled_factors(family: str | None = None, sizes: list[int] | None = None, *, plain: bool = True) -> None:
    """The reduction factor of every bundled scenario (or of the bundled ``family`` at ``N`` in
    ``sizes``): states explored without (unless not ``plain``) and with the reductions ``flcheck check``
    derives (:func:`checker.app.reductions.reduce_system`)."""
    import flcheck_spec

    from checker.app.reductions import SYMMETRIC_KINDS, Reductions, reduce_system
    from checker.mc.explore import Limits, explore
    from flmodel.scenario import load_scenario
    from flmodel.scenario_build import build_system

    print(f"{'scenario':<20} {'states':>9} {'reduced':>9} {'factor':>7} {'expl CPU s':>10} "
          f"{'red. CPU s':>10} {'applied':<20} {'ctl/P red.':>10} {'factor':>7} {'CPU s':>7} applied",
          flush=True)
    paths = sorted(flcheck_spec.resource("scenarios").glob("*.fl"))
    runs: list[tuple[str, Path, dict[str, int] | None]] = [(p.stem, p, None) for p in paths]
    if family is not None:
        path = flcheck_spec.resource("scenarios", f"{family}.fl")
        runs = [(f"{family} N={n}", path, {"N": n}) for n in sizes or [2]]
    for label, path, defines in runs:
        scenario = load_scenario(path, defines=defines)
        system = build_system(scenario)
        limits = Limits(max_states=2_000_000, max_seconds=300)
        t0 = _cpu()
        unreduced = explore(system, limits=limits, keep_states=False).num_states if plain else None
        t1 = _cpu()
        reduced_system, applied = reduce_system(system, scenario, Reductions())
        reduced = explore(reduced_system, limits=limits, keep_states=False)
        t2 = _cpu()
        factor = f"{unreduced / reduced.num_states:>7.2f}" if unreduced else f"{'-':>7}"
        # the symmetry applies only when every property is ctl or probability: the same scenario
        # with just those properties
        symmetric = dataclasses.replace(scenario, properties=tuple(
            p for p in scenario.properties if p.kind in SYMMETRIC_KINDS))
        sym_system, sym_applied = reduce_system(build_system(symmetric), symmetric, Reductions())
        sym = explore(sym_system, limits=limits, keep_states=False)
        t3 = _cpu()
        sym_factor = f"{unreduced / sym.num_states:>7.2f}" if unreduced else f"{'-':>7}"
        print(f"{label:<20} {unreduced if unreduced else '-':>9} {reduced.num_states:>9d} {factor} "
              f"{t1 - t0:>10.2f} {t2 - t1:>10.2f} {','.join(applied.names) or '-':<20} "
              f"{sym.num_states:>10d} {sym_factor} {t3 - t2:>7.2f} "
              f"{','.join(sym_applied.names) or '-'}", flush=True)


def family_checks(family: str, sizes: list[int], *, seconds: float, memory_mb: int, timeout: float) -> None:
    """``flcheck check`` of the bundled ``family`` at every ``N`` of ``sizes``, each in its own process
    under ``--max-seconds`` and ``--max-memory``: exit code, CPU seconds, peak RSS, the explored
    structure's states, the states of each privacy exploration (``D0``/``D1`` of every neighbouring
    pair, :class:`checker.app.reductions.ObservationReducer`) with the reductions applied to them, and
    the verdicts."""
    import flcheck_spec

    path = flcheck_spec.resource("scenarios", f"{family}.fl")
    print(f"{'scenario':<20} {'exit':>4} {'CPU s':>8} {'RSS MB':>7} {'states':>8} {'privacy D0/D1':>17} "
          f"{'privacy reductions':<24} verdicts", flush=True)
    for n in sizes:
        cmd = [sys.executable, "-m", "checker", "check", str(path), "-D", f"N={n}", "--json",
               "--max-seconds", str(seconds), "--max-memory", str(memory_mb)]
        code, cpu, rss, stdout, last_error = _run_measured(cmd, timeout)
        try:
            report = json.loads(stdout)
        except ValueError:
            print(f"{family + f' N={n}':<20} {code:>4} {cpu:>8.1f} {rss:>7.0f} {last_error}", flush=True)
            continue
        red = report.get("reductions") or {}
        pairs = red.get("explorations") or []
        sizes_text = ",".join(f"{p['D0']['states']}/{p['D1']['states']}" for p in pairs) or "-"
        applied = sorted({k for p in pairs for k, v in p["D0"]["reductions"].items() if v.get("applied")})
        verdicts = " ".join(f"{p['name']}={p['verdict']}" for p in report.get("properties", []))
        print(f"{family + f' N={n}':<20} {code:>4} {cpu:>8.1f} {rss:>7.0f} {red.get('states', '-')!s:>8} "
              f"{sizes_text:>17} {','.join(applied) or '-':<24} {verdicts}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--satellites", default="2-6", help="N values: '2-6' or '2,4,8' (default 2-6)")
    parser.add_argument("--rounds", default="1-2", help="R values (default 1-2)")
    parser.add_argument("--values", default="2-3", help="V values, the noise grid size (default 2-3)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure when under 10 s (default 3)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per process (default 900)")
    parser.add_argument("--no-check", action="store_true", help="skip the full `flcheck check` runs")
    parser.add_argument("--no-storm", action="store_true", help="skip the Storm columns")
    parser.add_argument("--check-seconds", type=float, default=300.0,
                        help="--max-seconds of each flcheck check run (default 300)")
    parser.add_argument("--no-plain", action="store_true", help="skip the --no-reduce check runs")
    parser.add_argument("--no-explore", action="store_true", help="skip the unreduced exploration worker")
    parser.add_argument("--bundled", action="store_true",
                        help="print the reduction factors of the bundled scenarios instead")
    parser.add_argument("--family", metavar="NAME",
                        help="with --bundled: only the bundled scenario NAME at every N of --sizes")
    parser.add_argument("--sizes", default="2-8", help="N values of --family (default 2-8)")
    parser.add_argument("--checks", action="store_true",
                        help="with --bundled --family: run flcheck check at every N instead (CPU, RSS, "
                             "states of the structure and of the privacy explorations, verdicts)")
    parser.add_argument("--check-memory", type=int, default=8192,
                        help="--max-memory of each flcheck check run of --checks, MB (default 8192)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--prism", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--storm", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.prism, args.storm)))
        return
    if args.bundled:
        if args.family is not None and args.checks:
            family_checks(args.family, _int_range(args.sizes), seconds=args.check_seconds,
                          memory_mb=args.check_memory, timeout=args.timeout)
            return
        bundled_factors(args.family, _int_range(args.sizes), plain=not args.no_plain)
        return
    with_storm = not args.no_storm and importlib.util.find_spec("stormpy") is not None
    if not args.no_storm and not with_storm:
        print("stormpy is not installed (pip install 'flcheck[storm]'): no Storm columns", file=sys.stderr)
    print_header(with_storm)
    with tempfile.TemporaryDirectory(prefix="flcheck-scale-") as tmp:
        for rounds in _int_range(args.rounds):
            for values in _int_range(args.values):
                for satellites in _int_range(args.satellites):
                    print_row(measure(satellites, rounds, values, Path(tmp), repeats=args.repeats,
                                      timeout=args.timeout, with_check=not args.no_check,
                                      with_storm=with_storm and not args.no_explore,
                                      check_seconds=args.check_seconds, with_plain=not args.no_plain,
                                      with_explore=not args.no_explore), with_storm)


if __name__ == "__main__":
    main()
