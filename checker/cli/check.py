"""``flcheck check [SCENARIO] [--json] [--report FILE.md|FILE.html]``: check every property of a scenario
(a path or a bundled scenario's name; default: the bundled Moniteo satellite swarm). Exit 0 all hold, 1
some violated or unknown, 2 bad input (also a ``--report`` path that cannot be written, refused before
the scenario is explored), 130 after Ctrl-C.

A check stopped by Ctrl-C or by a limit (:mod:`checker.app.check_stop`) still prints its table: the
properties decided before the stop with their verdicts, the others ``unknown``; under ``--json`` the key
``interrupted`` says why (``null`` when the check ran to the end).
"""

from __future__ import annotations

import argparse
import sys

from checker.cli.defines import add_define_option, defines_of
from checker.cli.options import (
    OBSERVE_HELP,
    REDUCTION_HELP,
    add_limit_options,
    add_reduction_options,
    limits_of,
    output_file,
    reductions_of,
)
from checker.errors import InputError
from checker.verdict import EXIT_INTERRUPTED


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``check`` sub-command."""
    p = sub.add_parser(
        "check",
        description="Explore the scenario once and decide each named property (CTL, attack trees, "
                    "NI-FL-DP, probability and advantage bounds, cross-validation, attacks). Prints a "
                    "table; exit 0 when all hold, 1 when some is violated or unknown, 2 on bad input.",
    )
    p.add_argument("scenario", nargs="?",
                   help="scenario file (.fl) or bundled scenario name (flcheck list); default: moniteo")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p.add_argument("--audit", action="store_true",
                   help="with Gaussian noise or a run statement: also audit the run in one training "
                        "([SNJ23])")
    p.add_argument("--report", metavar="FILE", type=output_file, action="append",
                   help="also write a Markdown (.md) or HTML (.html) report (repeatable: every file is "
                        "written)")
    p.add_argument("--wide", action="store_true",
                   help="never cut the evidence column (by default it is cut at 90 characters)")
    p.add_argument("--property", action="append", metavar="NAME",
                   help="check only this property (repeatable)")
    add_limit_options(p, scope="of the whole check (every exploration and property)")
    p.add_argument("--engine", choices=("flcheck", "storm"), default="flcheck",
                   help="who computes the probability properties on the explored structure: flcheck "
                        "(default) or Storm (stormpy, the extra flcheck[storm]; exact rationals)")
    add_reduction_options(p, REDUCTION_HELP)
    p.add_argument("--no-fast", action="store_true",
                   help="explore the scenario one state at a time, also where its states can be coded as "
                        "integers and expanded a whole slice at a time (the same structure)")
    p.add_argument("--observe", choices=("sequence", "final"), default="sequence",
                   help=f"privacy properties: {OBSERVE_HELP}")
    add_define_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # lazy: the check pipeline imports every engine (scipy, sympy among them), seconds of start-up
    from checker.app.check import check_file, scenario_path
    from checker.app.privacy_account import privacy_account_of  # lazy: with the pipeline
    from checker.app.report import render_table, write_report  # lazy: with the pipeline
    from checker.cli.json_output import emit_json
    from checker.io.files import check_output_path  # lazy: as the import above
    from checker.mc.explore import stderr_progress  # lazy: as the import above
    from checker.tables import table_text, use_colour  # lazy: as the import above
    from flmodel.readings import readings_line  # lazy: with the pipeline

    for path in args.report or ():
        if not path.lower().endswith((".md", ".html", ".htm")):
            raise InputError(f"--report {path}: expected a file name ending in .md or .html")
    scenario = scenario_path(args.scenario)
    for path in args.report or ():  # refused before exploring: a report must never replace the scenario
        check_output_path(path, [scenario])

    if args.engine == "storm":
        import importlib.util

        if importlib.util.find_spec("stormpy") is None:
            raise InputError("--engine storm needs stormpy: pip install 'flcheck[storm]'")

    limits = limits_of(args)
    reductions = reductions_of(args, REDUCTION_HELP)
    progress_line = None
    if args.progress:

        def progress_line(line: str) -> None:
            sys.stderr.write("flcheck: " + line + "\n")
            sys.stderr.flush()

    progress = None if args.progress else stderr_progress()
    status = None
    if progress is not None:  # a terminal: show exploration progress, then which property runs

        def status(message: str) -> None:
            sys.stderr.write("\r\x1b[K" + message)
            sys.stderr.flush()

    try:
        report = check_file(scenario, limits=limits, only=args.property, progress=progress,
                            status=status, defines=defines_of(args), observe=args.observe,
                            reductions=reductions, progress_line=progress_line, engine=args.engine,
                            progress_interval=args.progress_interval, fast=not args.no_fast)
    finally:
        if progress is not None:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
    args.watchdog.finish()  # decided or stopped: what is left is printing the table
    args.keep.append(report)
    if args.property:
        missing = sorted(set(args.property) - {r.name for r in report.results})
        if missing:
            raise InputError(f"no property named {', '.join(missing)}; the scenario has: "
                             f"{', '.join(p.name for p in report.scenario.properties)}")
    account = privacy_account_of(report, args.audit)  # the run's accountant (and audit) beside the figures
    if args.json:
        extra = {"accounting": account.to_json()} if account is not None else {}
        emit_json(args.flcheck_command, {**report.to_json(), "limits": limits.json(), **extra})
    else:
        print(render_table(report, evidence_width=None if args.wide else 90, colour=use_colour(sys.stdout)))
        if account is not None:
            print("\n" + account.caption() + "\n" + table_text(account.table(), rule=True))
        if report.readings:
            print(readings_line(report.readings))
    if args.json:  # the table shows why a property holds vacuously; under JSON, stderr does
        for result in report.results:
            vacuity = result.details.get("vacuity")
            if vacuity is not None:
                print(f"flcheck: note: {result.name} holds vacuously: {vacuity['reason']}", file=sys.stderr)
    for path in args.report or ():
        files = write_report(report, path, inputs=[report.scenario_path])
        if not args.json:
            print("report written: " + ", ".join(str(f) for f in files))
    stop = report.interrupted
    if stop is not None:  # the table shows what was decided before the stop
        print(f"flcheck: {stop.reason} while {stop.during}: the properties not decided are unknown",
              file=sys.stderr)
        if stop.cause == "sigint":
            return EXIT_INTERRUPTED
    return report.exit_code
