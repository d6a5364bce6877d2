"""``flcheck ctl MODEL FORMULA`` and ``flcheck explore MODEL``.

``ctl`` answers whether every initial state satisfies the CTL formula (exit 0 holds — also vacuously —,
1 violated or unknown, 2 bad input); ``--json`` prints ``{"formula", "verdict", "semantics", "states",
"transitions", "satisfying_initial", "witness"|"counterexample"}`` (plus ``"vacuity"`` for a vacuous
verdict and ``"limit_reason"`` for an incomplete exploration).

``explore`` prints the size of the structure: ``{"states", "transitions", "deadlocks", "depth",
"time", "complete", "limit_reason", "initial"}`` with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from checker.app.load import load_model
from checker.io.explicit import write_dot, write_explicit, write_json
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_parse import parse_formula
from checker.mc.explore import Limits, depth_of_structure, stderr_progress
from checker.mc.fixpoints import Semantics
from checker.verdict import EXIT_HOLDS

MODEL_HELP = "scenario file (.fl), explicit model (base.tra base.lab, or the prefix base) or .json"


def _add_model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", nargs="+", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("--max-states", type=int, default=None, help="exploration limit on states")
    p.add_argument("--max-seconds", type=float, default=None, help="exploration time limit")
    p.add_argument("--max-memory", type=float, default=None, metavar="MB", help="exploration memory limit")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _limits(args: argparse.Namespace) -> Limits:
    return Limits(max_states=args.max_states, max_seconds=args.max_seconds, max_memory_mb=args.max_memory)


def _progress_done() -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


def run_ctl(args: argparse.Namespace) -> int:
    formula = parse_formula(args.formula, source="<formula>")
    t0 = time.perf_counter()
    progress = stderr_progress()
    kripke = load_model(args.model, limits=_limits(args), progress=progress, probabilities=False)
    if progress:
        _progress_done()
    t_load = time.perf_counter() - t0
    result = ModelChecker(kripke, args.semantics).check(formula, evidence=not args.no_evidence,
                                                         vacuity=not args.no_vacuity)
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        print(result.render())
        print(f"  time: load {t_load:.3f} s, check {result.seconds:.3f} s")
    return result.verdict.exit_code()


def run_explore(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    progress = stderr_progress()
    kripke = load_model(args.model, limits=_limits(args), progress=progress, probabilities=True)
    if progress:
        _progress_done()
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
    }
    written = []
    if args.write_explicit:
        written += [str(p) for p in write_explicit(kripke, args.write_explicit, flavor=args.flavor)]
    if args.write_json:
        written.append(str(write_json(kripke, args.write_json)))
    if args.write_dot:
        written.append(str(write_dot(kripke, args.write_dot, max_states=args.dot_max_states)))
    if written:
        info["written"] = written
    if args.json:
        print(json.dumps(info, indent=1))
    else:
        for path in written:
            print(f"wrote {path}")
        print(f"{kripke.source}: {info['states']:,} states, {info['transitions']:,} transitions, "
              f"{info['deadlocks']:,} deadlocks, depth {info['depth']}, {info['initial']} initial, "
              f"{elapsed:.3f} s" + ("" if kripke.complete else f" — INCOMPLETE: {kripke.limit_reason}"))
    return EXIT_HOLDS


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``ctl`` and ``explore``."""
    p = sub.add_parser("ctl", help="check a CTL property on a model (exit 0 holds, 1 not, 2 bad input)",
                       description="Check whether every initial state satisfies a CTL formula. "
                       "Formula syntax: spec/grammar/ctl.lark, e.g. 'EF goal', 'AG !goal', "
                       "'E[!clipped U goal]', 'AG (\"sat1\" in ready -> round >= 1)'.")
    p.add_argument("model", nargs="+", metavar="MODEL", help=MODEL_HELP)
    p.add_argument("formula", metavar="FORMULA", help="the CTL property")
    p.add_argument("--semantics", choices=[s.value for s in Semantics], default=Semantics.IIIF.value,
                   help="iiif (default: deadlocks satisfy AX/AF) or total (deadlocks loop, NuSMV style)")
    p.add_argument("--max-states", type=int, default=None, help="exploration limit on states")
    p.add_argument("--max-seconds", type=float, default=None, help="exploration time limit")
    p.add_argument("--max-memory", type=float, default=None, metavar="MB", help="exploration memory limit")
    p.add_argument("--no-evidence", action="store_true", help="skip witness/counterexample search")
    p.add_argument("--no-vacuity", action="store_true", help="skip the vacuity check")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run_ctl)
    e = sub.add_parser("explore", help="build a model's state space and print its size",
                       description="Explore (or load) a model and print states, transitions, deadlocks, "
                       "depth and time.")
    _add_model_options(e)
    e.add_argument("--write-explicit", metavar="PREFIX",
                   help="write PREFIX.tra/.lab(/.sta) in the PRISM/Storm explicit format")
    e.add_argument("--flavor", choices=["storm", "prism"], default="storm", help="explicit-format flavour")
    e.add_argument("--write-json", metavar="FILE", help="write the JSON Kripke format")
    e.add_argument("--write-dot", metavar="FILE", help="write Graphviz DOT")
    e.add_argument("--dot-max-states", type=int, default=5000, help="refuse DOT output above this size")
    e.set_defaults(func=run_explore)
