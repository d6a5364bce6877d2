"""The ``flcheck`` command line (also ``python -m checker``).

Exit codes are a contract: 0 the property holds (or the job succeeded), 1 it is violated (or unknown),
2 bad input (malformed model, formula, scenario or option), 3 an internal error (a bug in flcheck: one
line on stderr, the traceback with ``--debug``). Every command lives in the module of ``checker.cli``
named after it, which exposes ``register(subparsers)``; the parser it adds sets ``func`` to a function
``args -> int`` (the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from checker import __version__
from checker.errors import InputError
from checker.verdict import EXIT_BAD_INPUT, EXIT_INTERNAL
from flmodel.errors import ModelError

#: Sub-command modules, in the order their commands appear in ``flcheck --help``.
COMMAND_MODULES: tuple[str, ...] = (
    "checker.cli.check",
    "checker.cli.ctl",
    "checker.cli.explore",
    "checker.cli.attack_tree",
    "checker.cli.privacy",
    "checker.cli.dp",
    "checker.cli.audit",
    "checker.cli.attack",
    "checker.cli.export",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flcheck",
        description=(
            "Model checker for federated learning (IIIf FL model of [IIIf-FL]): CTL, attack trees, "
            "NI-FL-DP, attacker advantage, and numerical DP / attack cross-validation."
        ),
        epilog="Exit codes: 0 holds, 1 violated (or unknown), 2 bad input, 3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"flcheck {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, print the traceback (exit 3 either way)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        return int(args.func(args))
    except (InputError, ModelError) as exc:
        print(f"flcheck: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except FileNotFoundError as exc:
        print(f"flcheck: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("flcheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: stop quietly, as Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as exc:  # an engine failure is a bug in flcheck: surface it, never a verdict
        if args.debug:
            traceback.print_exc()
        message = str(exc).splitlines()[0] if str(exc) else ""
        print(f"flcheck: internal error: {type(exc).__name__}{': ' + message if message else ''} "
              "(run with --debug for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
