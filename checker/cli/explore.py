"""``flcheck explore MODEL``: build (or load) a model's state space and print its size.

``--json`` prints ``{"states", "transitions", "deadlocks", "depth", "time", "initial", "complete",
"limit_reason", "explorer"}`` (plus ``"written"`` when files were written); ``explorer`` is ``batch`` when
the scenario's integer-coded view was explored (:mod:`checker.mc.explore_batch`), ``plain`` when its
states were explored one at a time (``--no-fast``, or a system without that view) and ``file`` for a
structure read from a file. ``--write-explicit``, ``--write-json``
and ``--write-dot`` also write the structure; an output path that is one of the model's files, a
directory or a special file is refused (exit 2) before anything is written. Exit 0 on a complete
exploration, 1 when a limit stopped it (the structure is partial: ``unknown``), 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checker.app.load import EXPLICIT_SUFFIXES, load_model, resolve_model_files
from checker.cli.defines import add_define_option, defines_of
from checker.cli.json_output import emit_json
from checker.cli.options import default_memory_mb, memory_mb, output_file, positive_int, seconds
from checker.errors import InputError
from checker.io.dot import write_dot
from checker.io.files import check_output_path
from checker.io.kripke_json import write_json
from checker.io.prism import MANIFEST_SUFFIX, write_explicit
from checker.mc.explore import Limits, depth_of_structure, explorer_of, stderr_progress
from checker.mc.kripke import Kripke
from checker.verdict import EXIT_HOLDS, EXIT_VIOLATED

MODEL_HELP = ("scenario file (.fl) or bundled scenario name (flcheck list), example:NAME, explicit model "
              "(base.tra base.lab, or the prefix base) or .json")


def model_files(model: Sequence[str]) -> list[Path]:
    """The files a MODEL argument reads: each path given, and for an explicit prefix ``base`` the
    ``base.tra``/``.lab``/``.sta`` files beside it; a bundled scenario's name stands for its file."""
    resolved = resolve_model_files(list(model))
    files = [Path(resolved)] if isinstance(resolved, str | Path) else [Path(m) for m in model]
    for m in model:
        files += [Path(m + suffix) for suffix in EXPLICIT_SUFFIXES]
    return files


def add_model_options(p: argparse.ArgumentParser) -> None:
    """MODEL (one or more paths) and the exploration limits, shared by the model commands."""
    p.add_argument("model", nargs="+", metavar="MODEL", help=MODEL_HELP)
    add_limit_options(p)


def add_limit_options(p: argparse.ArgumentParser) -> None:
    """``--max-states``, ``--max-seconds`` and ``--max-memory`` (read by :func:`limits_of`)."""
    p.add_argument("--max-states", type=positive_int, default=None, help="exploration limit on states")
    p.add_argument("--max-seconds", type=seconds, default=None, help="exploration time limit")
    p.add_argument("--max-memory", type=memory_mb, default=default_memory_mb(), metavar="MB",
                   help="exploration memory limit (default: three quarters of the machine's memory, "
                        f"{default_memory_mb():.0f} MB here)")


def limits_of(args: argparse.Namespace) -> Limits:
    """The exploration limits given by :func:`add_model_options`' options."""
    return Limits(max_states=args.max_states, max_seconds=args.max_seconds, max_memory_mb=args.max_memory)


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
    out = []
    if args.write_explicit:
        out += [args.write_explicit + suffix for suffix in (*EXPLICIT_SUFFIXES, MANIFEST_SUFFIX)]
    if args.write_json:
        out.append(args.write_json)
    if args.write_dot:
        out.append(args.write_dot)
    return out


def run(args: argparse.Namespace) -> int:
    inputs = model_files(args.model)
    for path in _outputs(args):  # refuse before exploring: an output must never replace an input
        check_output_path(path, inputs)
    t0 = time.perf_counter()
    progress = stderr_progress()
    kripke = load_model(args.model, limits=limits_of(args), progress=progress, probabilities=True,
                        defines=defines_of(args), fast=not args.no_fast)
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
    return EXIT_HOLDS if kripke.complete else EXIT_VIOLATED


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``explore``."""
    e = sub.add_parser("explore", help="build a model's state space and print its size",
                       description="Explore (or load) a model and print states, transitions, deadlocks, "
                       "depth and time.",
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
    e.add_argument("--dot-max-states", type=positive_int, default=5000,
                   help="refuse DOT output above this size")
    e.add_argument("--no-fast", action="store_true",
                   help="explore one state at a time, also where the scenario's states can be coded as "
                        "integers and expanded a whole slice at a time (the same structure)")
    add_define_option(e)
    e.set_defaults(func=run)
