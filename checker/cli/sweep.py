"""``flcheck sweep SCENARIO -D N=2..16 -D R=1,2 [--jobs K] [--dask-scheduler ADDRESS] [-o results.jsonl]``:
check every instance of a grid of scenario constants in parallel (:mod:`checker.app.sweep`).

The grid has at most :data:`MAX_INSTANCES` instances and ``--jobs`` is at most :data:`MAX_JOBS` (exit 2
naming the option past either). ``--dask-scheduler`` (a Dask cluster's address) and ``--executor``
(dask, processes or auto) were called ``--scheduler`` and ``--engine`` before, names that mean a
scheduler class and a probability engine in the other commands; the old spellings still work, with a
deprecation note on stderr.

Each finished instance is appended to the JSON-lines file ``-o`` at once (one record per line, in the
envelope of every ``--json`` output; ``spec/schema/sweep.schema.json``, ``records``); instances the file
already holds for the same scenario text and limits are skipped, so an interrupted sweep resumes. An
instance that fails (bad constants, an internal error, a worker that died) or hits an exploration limit
is recorded with its status and the others go on. Progress goes to stderr; the end is a table (stdout),
and a PNG with ε*, δ, states and seconds against each constant (``--plot``). Exit 0 when every instance
ran and all its properties hold, 1 when some property is violated or unknown or some instance
incomplete, failed or crashed, 2 on bad input.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Any

from checker.cli.defines import parse_define_values
from checker.cli.json_output import emit_json, envelope
from checker.cli.options import Integer, output_file, seconds, states
from checker.errors import InputError, Position
from checker.io.files import check_output_path, write_atomic
from checker.tables import table_text
from checker.verdict import EXIT_HOLDS, EXIT_VIOLATED

#: The most instances one sweep may run (the product of its -D grids), and the most worker processes.
MAX_INSTANCES = 10_000
MAX_JOBS = 256


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sweep``."""
    p = sub.add_parser(
        "sweep",
        description=(
            "Run 'flcheck check' on every combination of the given constant values (-D N=2..16 -D R=1,2), "
            "on a Dask cluster (a local one by default, or --dask-scheduler ADDRESS) or, without Dask, on "
            "local processes. Each result is appended to a JSON-lines file as it finishes; a rerun skips the "
            "instances already there. Ends with a table and plots of ε*, δ, states and time against each "
            "constant."),
        epilog="Exit codes: 0 every instance ran and all properties hold, 1 some property is violated or "
               "unknown or some instance did not finish, 2 bad input.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (.fl) or bundled scenario name")
    p.add_argument("-D", "--set", dest="sweep", action="append", type=parse_define_values, required=True,
                   metavar="NAME=VALUES",
                   help="the values of the constant NAME: integers and ranges A..B[:STEP], comma-separated "
                        f"(N=2..16, R=1,2); repeatable, the grid is every combination (at most "
                        f"{MAX_INSTANCES:,} instances)")
    p.add_argument("-o", "--output", metavar="FILE.jsonl", type=output_file, default=None,
                   help="results, one JSON line per instance (default: SCENARIO_sweep.jsonl here)")
    p.add_argument("--jobs", type=Integer(1, MAX_JOBS, what="a number of workers"), default=None, metavar="K",
                   help=f"worker processes (default: the CPUs available; at most {MAX_JOBS})")
    p.add_argument("--dask-scheduler", metavar="ADDRESS", default=None,
                   help="run on an existing Dask cluster (e.g. tcp://10.0.0.5:8786) instead of a local one")
    p.add_argument("--scheduler", dest="old_scheduler", metavar="ADDRESS", default=None,
                   help="deprecated spelling of --dask-scheduler (kept for scripts; --scheduler is a "
                        "scheduler class in privacy and ctl)")
    p.add_argument("--executor", choices=("auto", "dask", "processes"), default=None,
                   help="dask (needs the [sweep] extra), processes (concurrent.futures) or auto (dask when "
                        "installed; the default)")
    p.add_argument("--engine", dest="old_engine", choices=("auto", "dask", "processes"), default=None,
                   help="deprecated spelling of --executor (kept for scripts; --engine is the probability "
                        "engine in check)")
    p.add_argument("--max-states", type=states, default=None,
                   help="exploration limit per instance (default 2,000,000)")
    p.add_argument("--max-seconds", type=seconds, default=None,
                   help="time limit per instance, in CPU seconds of its worker (default 600)")
    p.add_argument("--observe", choices=("sequence", "final"), default="sequence",
                   help="privacy properties: what the attacker observes (as in check)")
    p.add_argument("--plot", metavar="FILE.png", type=output_file, default=None,
                   help="write the plots here (default: the results file with .png)")
    p.add_argument("--no-plot", action="store_true", help="write no plots")
    p.add_argument("--no-reduce", action="store_true",
                   help="check every instance without state-space reductions (the states column is then "
                        "the model's own count; the results never depend on it)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--json", action="store_true", help="print the summary and every record as JSON")
    p.set_defaults(func=run)


def _values(args: argparse.Namespace) -> dict[str, tuple[int, ...]]:
    out: dict[str, tuple[int, ...]] = {}
    for name, vals in args.sweep:
        if name in out:
            raise InputError(f"-D {name} given twice", Position("<command line>"), f"one -D for {name}")
        out[name] = vals
    count = math.prod(len(v) for v in out.values())
    if count > MAX_INSTANCES:
        raise InputError(f"-D: the grid has {count:,} instances", Position("-D"),
                         f"at most {MAX_INSTANCES:,} (the product of the -D value counts)")
    return out


def _deprecated(args: argparse.Namespace) -> None:
    """The old spellings ``--scheduler`` and ``--engine``: their values, with a note on stderr."""
    for old, new in (("scheduler", "dask_scheduler"), ("engine", "executor")):
        value = getattr(args, f"old_{old}")
        if value is None:
            continue
        if getattr(args, new) is not None:
            raise InputError(f"--{old} and --{new.replace('_', '-')} given together", Position(f"--{old}"),
                             f"--{new.replace('_', '-')} alone (--{old} is its deprecated spelling)")
        print(f"flcheck: note: sweep --{old} is deprecated; use --{new.replace('_', '-')}", file=sys.stderr)
        setattr(args, new, value)


def _progress(quiet: bool) -> Any:
    tty = sys.stderr.isatty()

    def show(record: dict[str, Any], finished: int, total: int) -> None:
        if quiet:
            return
        extra = record.get("error") or f"{record.get('states', '?')} states"
        line = (f"[{finished}/{total}] {record['instance']}: {record['status']} "
                f"({extra}, {record['seconds']:.2f} s)")
        sys.stderr.write(("\r\x1b[K" + line) if tty else line + "\n")
        sys.stderr.flush()

    return show


def run(args: argparse.Namespace) -> int:
    # lazy: the sweep engine imports the check pipeline's loader
    from checker.app.sweep import SweepSpec, check_swept_names, plot_png, run_sweep, table_rows

    _deprecated(args)
    values = _values(args)
    spec = SweepSpec.of(args.scenario, max_states=args.max_states, max_seconds=args.max_seconds,
                        observe=args.observe, reduce=not args.no_reduce)
    check_swept_names(spec, list(values))
    out = Path(args.output or f"{Path(spec.scenario).stem}_sweep.jsonl")
    check_output_path(out, [spec.scenario])
    plot = None if args.no_plot else Path(args.plot or out.with_suffix(".png"))
    if plot is not None:
        check_output_path(plot, [spec.scenario, out])
    executor = args.executor or "auto"
    if args.dask_scheduler is not None and executor == "processes":
        raise InputError("--dask-scheduler is a Dask cluster's address; --executor processes runs local "
                         "processes", Position("--dask-scheduler"), "--executor dask or auto")
    jobs = args.jobs or _cpus()

    def wrap(record: dict[str, Any]) -> dict[str, Any]:
        return envelope(args.flcheck_command, record)

    try:
        summary = run_sweep(spec, values, out, engine="dask" if args.dask_scheduler else executor, jobs=jobs,
                            scheduler=args.dask_scheduler, progress=_progress(args.quiet or args.json),
                            envelope=wrap)
    finally:
        if sys.stderr.isatty() and not args.quiet:
            sys.stderr.write("\r\x1b[K")
    if summary.repaired:
        print(f"flcheck: note: {out} ended in a cut record ({summary.repaired} bytes: a killed sweep or a "
              "full disk); it was removed and its instance ran again", file=sys.stderr)
    names = list(values)
    if plot is not None:
        write_atomic(plot, plot_png(summary.records, names, f"flcheck sweep {Path(spec.scenario).name}"),
                     inputs=[spec.scenario, out])
    bad = any(r["status"] != "ok" or r.get("exit_code") != 0 for r in summary.records)
    if args.json:
        emit_json(args.flcheck_command, {
            "scenario": spec.scenario, "results": str(out), "plot": None if plot is None else str(plot),
            "engine": summary.engine, "instances": len(summary.records), "ran": summary.ran,
            "skipped": summary.skipped, "statuses": summary.statuses, "seconds": round(summary.seconds, 3),
            "records": summary.records})
    else:
        print(table_text(table_rows(summary.records, names), rule=True))
        counts = ", ".join(f"{n} {s}" for s, n in summary.statuses.items())
        print(f"\n{len(summary.records)} instances ({counts}); ran {summary.ran}, skipped {summary.skipped} "
              f"already in {out}; engine {summary.engine}, {summary.seconds:.1f} s")
        print(f"results: {out}" + ("" if plot is None else f"; plots: {plot}"))
    return EXIT_VIOLATED if bad else EXIT_HOLDS
