"""``flcheck explore MODEL``: build (or load) a model's state space and print its size.

``--json`` prints ``{"states", "transitions", "deadlocks", "depth", "time", "initial", "complete",
"limit_reason", "explorer"}`` (plus ``"written"`` when files were written); ``explorer`` is ``batch`` when
the scenario's integer-coded view was explored (:mod:`checker.mc.explore_batch`), ``plain`` when its
states were explored one at a time (``--no-fast``, or a system without that view) and ``file`` for a
structure read from a file. ``--write-explicit``, ``--write-json``
and ``--write-dot`` also write the structure; an output path that is one of the model's files, a
directory or a special file is refused (exit 2) before anything is written. Exit 0 on a complete
exploration, 1 when a limit stopped it (the structure is partial: ``unknown``), 2 on bad input. The
limits default to those of every command that explores (:func:`checker.cli.options.add_limit_options`):
``explore`` shows the model's own state space, which the reductions of ``check`` do not shrink, so a
scenario whose properties let ``check`` explore a few thousand states may have millions here.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checker.cli.defines import add_define_option, defines_of
from checker.cli.options import (
    DEFAULT_MAX_SECONDS,
    DEFAULT_MAX_STATES,
    Integer,
    add_limit_options,
    limits_of,
    output_file,
)
from checker.errors import InputError
from checker.verdict import EXIT_HOLDS, EXIT_VIOLATED

if TYPE_CHECKING:
    from checker.mc.kripke import Kripke

MODEL_HELP = ("scenario file (.fl) or bundled scenario name (flcheck list), example:NAME, explicit model "
              "(base.tra base.lab, or the prefix base) or .json")


def model_files(model: Sequence[str]) -> list[Path]:
    """The files a MODEL argument reads: each path given, and for an explicit prefix ``base`` the
    ``base.tra``/``.lab``/``.sta`` files beside it; a bundled scenario's name stands for its file."""
    from checker.app.load import EXPLICIT_SUFFIXES, resolve_model_files  # lazy: it imports the model layer

    resolved = resolve_model_files(list(model))
    files = [Path(resolved)] if isinstance(resolved, str | Path) else [Path(m) for m in model]
    for m in model:
        files += [Path(m + suffix) for suffix in EXPLICIT_SUFFIXES]
    return files


def add_model_options(p: argparse.ArgumentParser) -> None:
    """MODEL (one or more paths) and the limits (:func:`checker.cli.options.add_limit_options`), shared
    by the model commands."""
    p.add_argument("model", nargs="+", metavar="MODEL", help=MODEL_HELP)
    add_limit_options(p)


#: What ``explore`` says when a limit stopped it (``check`` explores a scenario reduced for its
#: properties; ``explore`` shows the model's own state space).
INCOMPLETE_HINT = ("explore builds the model's whole state space, without the reductions check derives "
                   "from a scenario's properties (flcheck check explores far fewer states); raise "
                   "--max-states / --max-seconds to go further")


def clear_progress() -> None:
    """Erase the progress line that :func:`checker.mc.explore.stderr_progress` draws on a terminal."""
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


def explicit_notes(kripke: Kripke) -> None:
    """Notes on stderr about how an explicit file was read: zero-probability transitions dropped (as
    Storm and PRISM do), a CTMC read as its embedded chain."""
    dropped = int(kripke.stats.get("zero_probability_transitions", 0))
    if dropped:
        print(f"flcheck: note: {dropped} transition(s) of probability 0 dropped (as Storm and PRISM do)",
              file=sys.stderr)
    if kripke.stats.get("ctmc"):
        print("flcheck: note: a CTMC: untimed properties are checked on its embedded chain", file=sys.stderr)


def _outputs(args: argparse.Namespace) -> list[str]:
    """Every file the options ask to write (the explicit files as their possible names)."""
    from checker.app.load import EXPLICIT_SUFFIXES  # lazy: the loader imports the model layer
    from checker.io.prism import MANIFEST_SUFFIX  # lazy: as the import above

    out = []
    if args.write_explicit:
        out += [args.write_explicit + suffix for suffix in (*EXPLICIT_SUFFIXES, MANIFEST_SUFFIX)]
    if args.write_json:
        out.append(args.write_json)
    if args.write_dot:
        out.append(args.write_dot)
    return out


def run(args: argparse.Namespace) -> int:
    # lazy: the loader, the explorers and the writers import numpy, scipy and the model layer
    from checker.app.load import load_model
    from checker.cli.json_output import emit_json  # lazy: as the import above
    from checker.io.dot import write_dot  # lazy: as the import above
    from checker.io.files import check_output_path  # lazy: as the import above
    from checker.io.kripke_json import write_json  # lazy: as the import above
    from checker.io.prism import write_explicit  # lazy: as the import above
    from checker.mc.explore import (  # lazy: as the import above
        depth_of_structure,
        explorer_of,
        stderr_progress,
    )

    inputs = model_files(args.model)
    for path in _outputs(args):  # refuse before exploring: an output must never replace an input
        check_output_path(path, inputs)
    t0 = time.perf_counter()
    progress = None if args.progress else stderr_progress()
    with args.watchdog.exploring():  # the exploration stops itself at the limits: a partial structure
        kripke = load_model(args.model, limits=limits_of(args), progress=progress or args.watchdog.explored,
                            probabilities=True, defines=defines_of(args), fast=not args.no_fast)
    args.watchdog.finish()  # explored (or stopped with a partial structure): the rest is its size
    args.keep.append(kripke)
    if progress:
        clear_progress()
    explicit_notes(kripke)
    elapsed = time.perf_counter() - t0
    info: dict[str, Any] = {
        "states": kripke.num_states,
        "transitions": kripke.num_transitions,
        "deadlocks": int(kripke.deadlocks.sum()),
        "depth": depth_of_structure(kripke),
        "time": round(elapsed, 6),
        "initial": len(kripke.initial),
        "complete": kripke.complete,
        "limit_reason": kripke.limit_reason,
        "explorer": explorer_of(kripke),
        "limits": limits_of(args).json(),
    }
    if args.write_dot and kripke.num_states > args.dot_max_states:  # before writing anything
        raise InputError(f"{kripke.num_states} states is too many for DOT output", None,
                         f"at most --dot-max-states {args.dot_max_states} states (raise it, or use "
                         "--write-json / --write-explicit)")
    written = []
    if args.write_explicit:
        written += [str(p) for p in write_explicit(kripke, args.write_explicit, flavor=args.flavor,
                                                   inputs=inputs)]
    if args.write_json:
        written.append(str(write_json(kripke, args.write_json)))
    if args.write_dot:
        written.append(str(write_dot(kripke, args.write_dot, max_states=args.dot_max_states)))
    if written:
        info["written"] = written
    if args.json:
        emit_json(args.flcheck_command, info, indent=1)
    else:
        for path in written:
            print(f"wrote {path}")
        print(f"{kripke.source}: {info['states']} states, {info['transitions']} transitions, "
              f"{info['deadlocks']} deadlocks, depth {info['depth']}, {info['initial']} initial, "
              f"{elapsed:.3f} s" + ("" if kripke.complete else f" — INCOMPLETE: {kripke.limit_reason}"))
    if not kripke.complete and not args.json:
        print(f"flcheck: note: {INCOMPLETE_HINT}", file=sys.stderr)
    return EXIT_HOLDS if kripke.complete else EXIT_VIOLATED


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``explore``."""
    e = sub.add_parser("explore",
                       description="Explore (or load) a model and print states, transitions, deadlocks, "
                       "depth and time. The model's own state space is explored, without the reductions "
                       f"flcheck check derives from a scenario's properties; by default at most "
                       f"{DEFAULT_MAX_STATES:,} states and {DEFAULT_MAX_SECONDS:g} CPU seconds (as every "
                       "command that explores), with a progress line on a terminal (--progress: also "
                       "when stderr is not one).",
                       epilog="Exit codes: 0 explored completely, 1 stopped by a limit (incomplete), "
                       "2 bad input.")
    add_model_options(e)
    e.add_argument("--json", action="store_true", help="print the result as JSON")
    e.add_argument("--write-explicit", metavar="PREFIX",
                   help="write PREFIX.tra/.lab(/.sta) in the PRISM/Storm explicit format, as one set with "
                        "the manifest PREFIX.sha256 (an interrupted write leaves the old set or the new)")
    e.add_argument("--flavor", choices=["storm", "prism"], default="storm", help="explicit-format flavour")
    e.add_argument("--write-json", metavar="FILE", type=output_file, help="write the JSON Kripke format")
    e.add_argument("--write-dot", metavar="FILE", type=output_file, help="write Graphviz DOT")
    e.add_argument("--dot-max-states", type=Integer(1, 10**7), default=5000,
                   help="refuse DOT output above this size")
    e.add_argument("--no-fast", action="store_true",
                   help="explore one state at a time, also where the scenario's states can be coded as "
                        "integers and expanded a whole slice at a time (the same structure)")
    add_define_option(e)
    e.set_defaults(func=run)
