"""The ``flcheck`` command line (also ``python -m checker``).

Exit codes are a contract: 0 the property holds (or the job succeeded), 1 it is violated (or unknown),
2 bad input (malformed model, formula, scenario or option), 3 an internal error (a bug in flcheck: one
line on stderr, the traceback with ``--debug``). Every command lives in the module of ``checker.cli``
named after it, which exposes ``register(subparsers)``; the parser it adds sets ``func`` to a function
``args -> int`` (the exit code). Under ``--json`` every command prints one JSON object that begins with
the envelope ``{"flcheck": VERSION, "schema": 1, "command": NAME}`` (:mod:`checker.cli.json_output`;
layouts in ``spec/schema/``, policy in ``spec/JSON.md``).

An exploration stopped by a limit before anything is decided (:class:`checker.errors.ExplorationIncomplete`)
is ``unknown``: exit 1, ``flcheck: unknown: REASON`` on stderr (under ``--json`` also
``{"flcheck", "schema", "command", "verdict": "unknown", "limit_reason", "reason"}`` on stdout).
Errors are one line on stderr, ``flcheck: error: MESSAGE``; under ``--json`` the command also prints
the JSON object ``{"flcheck": VERSION, "schema": 1, "command": NAME, "error": {"message", "file",
"line", "column"}}`` on stdout (:func:`error_json`), for option errors found while parsing too.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from checker import __version__
from checker.cli.json_output import envelope, json_text
from checker.cli.options import Parser, UsageError
from checker.errors import ExplorationIncomplete, InputError, Position
from checker.io.render import dumps, terminal_safe_output
from checker.verdict import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_VIOLATED, Verdict
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
    "checker.cli.account",
    "checker.cli.attack",
    "checker.cli.export",
    "checker.cli.sweep",
    "checker.cli.contacts",
    "checker.cli.list",
)

def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
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


def error_json(command: str | None, message: str, position: Position | None = None) -> dict[str, Any]:
    """The JSON object a command prints on stdout under ``--json`` when it fails with bad input."""
    return envelope(command, {
        "error": {
            "message": message,
            "file": position.source if position is not None else None,
            "line": position.line if position is not None else None,
            "column": position.column if position is not None else None,
        },
    })


def _wants_json(argv: Sequence[str]) -> bool:
    """Whether the command line asks for JSON output (``--json`` before any ``--``)."""
    for token in argv:
        if token == "--":
            return False
        if token == "--json":
            return True
    return False


def _bad_input(exc: Exception) -> tuple[str, Position | None]:
    """The message and position of a bad-input exception (the first diagnostic of a ModelError)."""
    if isinstance(exc, InputError):
        text = exc.message + (f" (expected {exc.expected})" if exc.expected else "")
        return text, exc.position
    if isinstance(exc, ModelError) and exc.diagnostics:
        first = exc.diagnostics[0]
        return first.message, first.position
    return str(exc), None


def _report_bad_input(exc: Exception, command: str | None, json_output: bool) -> int:
    print(f"flcheck: error: {exc}", file=sys.stderr)
    if json_output:
        message, position = _bad_input(exc)
        print(dumps(error_json(command, message, position), indent=2))
    return EXIT_BAD_INPUT


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code. Everything it prints shows the control characters of text
    from the input as escapes (:func:`checker.io.render.terminal_safe_output`); output that cannot be
    written (a full disk behind ``>``) is exit 2 with the file and the reason."""
    with terminal_safe_output() as output:
        code = _main(argv)
    return EXIT_BAD_INPUT if output.failed else code  # stdout on a full disk: bad environment


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    tokens = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(tokens)
    except UsageError as exc:  # a malformed command line or a bad option value: one line, exit 2
        print(f"flcheck: error: {exc.message} (see `{exc.prog} --help`)", file=sys.stderr)
        if _wants_json(tokens):
            print(dumps(error_json(exc.command, exc.message, Position("<command line>")), indent=2))
        return EXIT_BAD_INPUT
    except SystemExit as exc:  # argparse: --help or --version
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    json_output = bool(getattr(args, "json", False))
    try:
        return int(args.func(args))
    except ExplorationIncomplete as exc:  # a limit stopped the exploration: nothing is decided
        print(f"flcheck: unknown: {exc}", file=sys.stderr)
        if json_output:
            print(json_text(args.flcheck_command, {"verdict": str(Verdict.UNKNOWN),
                                                   "limit_reason": exc.limit_reason,
                                                   "reason": exc.message}))
        return EXIT_VIOLATED
    except (InputError, ModelError, FileNotFoundError) as exc:
        try:
            return _report_bad_input(exc, args.flcheck_command, json_output)
        except BrokenPipeError:
            return _quiet_stdout(EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        print("flcheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader (e.g. `| head`) went away: stop quietly, as Unix tools do
        return _quiet_stdout(141)
    except Exception as exc:  # an engine failure is a bug in flcheck: surface it, never a verdict
        if args.debug:
            traceback.print_exc()
        message = str(exc).splitlines()[0] if str(exc) else ""
        print(f"flcheck: internal error: {type(exc).__name__}{': ' + message if message else ''} "
              "(run with --debug for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL


def _quiet_stdout(code: int) -> int:
    """Point stdout at ``/dev/null`` (its reader has gone) so that the interpreter's final flush
    cannot fail, and return ``code``."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return code


if __name__ == "__main__":
    raise SystemExit(main())
