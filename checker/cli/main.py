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
from collections.abc import Sequence
from typing import Any, NamedTuple

from checker import __version__
from checker.cli.options import Parser, UsageError, job_limits
from checker.errors import ExplorationIncomplete, InputError, LimitReached, Position
from checker.mc.exploration import Watchdog
from checker.terminal import terminal_safe_output
from checker.verdict import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_VIOLATED, Verdict


class Command(NamedTuple):
    """A sub-command: the module of :mod:`checker.cli` that registers it and its line in ``--help``."""

    module: str
    help: str


#: The sub-commands, in the order of ``flcheck --help``. A command's module is imported only when that
#: command runs (or when its help is asked): ``flcheck --version`` and each command import what they
#: need, not every engine (``bench/bench_startup.py`` measures it).
COMMANDS: dict[str, Command] = {
    "check": Command("checker.cli.check",
                     "check every property of a scenario (default: the bundled Moniteo satellite swarm)"),
    "ctl": Command("checker.cli.ctl", "check a CTL property on a model (exit 0 holds, 1 not, 2 bad input)"),
    "explore": Command("checker.cli.explore", "build a model's state space and print its size"),
    "attack-tree": Command("checker.cli.attack_tree",
                           "generate an IIIf attack tree for a goal (or the invariant that blocks it)"),
    "privacy": Command("checker.cli.privacy",
                       "NI-FL-DP: ε, δ(ε), attacker advantage and bounds per neighbouring dataset"),
    "dp": Command("checker.cli.dp", "numerical differential-privacy curves ([SecAgg-MIA])"),
    "audit": Command("checker.cli.audit", "membership-inference audit: a confidence lower bound on ε"),
    "account": Command("checker.cli.account", "certified ε(δ) / δ(ε) brackets of a DP-SGD / DP-FedAvg run"),
    "attack": Command("checker.cli.attack",
                      "run an attack on a simulated FL training (SRATTA, MIA, MI leakage)"),
    "export": Command("checker.cli.export", "export scenarios (Isabelle/HOL theories)"),
    "sweep": Command("checker.cli.sweep",
                     "check a scenario on every instance of a grid of its constants, in parallel"),
    "contacts": Command("checker.cli.contacts",
                        "print a constellation's contact plan as scenario contact lines"),
    "list": Command("checker.cli.list", "list the bundled scenarios (usable by name in every command)"),
}

#: Sub-command modules, in the order their commands appear in ``flcheck --help``.
COMMAND_MODULES: tuple[str, ...] = tuple(c.module for c in COMMANDS.values())


class _Commands(argparse._SubParsersAction):
    """The sub-command action of ``flcheck``: a command's parser gets its ``--help`` line from
    :data:`COMMANDS` (its module gives the description and the options)."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if name in COMMANDS:
            kwargs.setdefault("help", COMMANDS[name].help)
        return super().add_parser(name, **kwargs)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``flcheck``: every command's (importing every command module), or with ``only``
    that command's in full and the others as names with their ``--help`` line (nothing imported)."""
    parser = Parser(
        prog="flcheck",
        description=(
            "Model checker for federated learning (IIIf FL model of [IIIf-FL]): CTL, attack trees, "
            "NI-FL-DP, attacker advantage, and numerical DP / attack cross-validation."
        ),
        epilog="Exit codes: 0 holds, 1 violated (or unknown), 2 bad input, 3 internal error; "
               f"{EXIT_INTERRUPTED} interrupted (Ctrl-C).",
    )
    parser.add_argument("--version", action="version", version=f"flcheck {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, print the traceback (exit 3 either way)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", action=_Commands)
    for name, command in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(command.module).register(sub)
        else:
            sub.add_parser(name, add_help=False)
    return parser


def _command_of(tokens: Sequence[str]) -> str | None:
    """The sub-command a command line names: its first word that is not an option of ``flcheck``
    itself (``None`` before any, or when that word is no command: the full parser reports it)."""
    for token in tokens:
        if token == "--":
            return None
        if token.startswith("-"):
            continue
        return token if token in COMMANDS else None
    return None


def error_json(command: str | None, message: str, position: Position | None = None,
               more: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON object a command prints on stdout under ``--json`` when it fails with bad input
    (``more``: the other problems found, each ``file:line:col: message``)."""
    from checker.cli.json_output import envelope  # lazy: the JSON encoder imports numpy

    error: dict[str, Any] = {
        "message": message,
        "file": position.source if position is not None else None,
        "line": position.line if position is not None else None,
        "column": position.column if position is not None else None,
    }
    if more:
        error["more"] = list(more)
    return envelope(command, {"error": error})


def _wants_json(argv: Sequence[str]) -> bool:
    """Whether the command line asks for JSON output (``--json`` before any ``--``)."""
    for token in argv:
        if token == "--":
            return False
        if token == "--json":
            return True
    return False


def one_line(text: str) -> str:
    """``text`` on one line: its lines joined by ``; `` (messages are one line, as the README promises).

    >>> one_line("a" + chr(10) + "  b" + chr(10))
    'a; b'
    """
    return "; ".join(part.strip() for part in text.splitlines() if part.strip())


def _bad_input(exc: Exception) -> tuple[str, Position | None, list[str]]:
    """The message and position of a bad-input exception (the first diagnostic of a ModelError) and
    the other problems it carries."""
    from flmodel.errors import ModelError  # lazy: flmodel is imported by the commands that need it

    if isinstance(exc, InputError):
        text = exc.message + (f" (expected {exc.expected})" if exc.expected else "")
        return one_line(text), exc.position, []
    if isinstance(exc, ModelError) and exc.diagnostics:
        first, *rest = exc.diagnostics
        return one_line(first.message), first.position, [one_line(str(d)) for d in rest]
    return one_line(str(exc)), None, []


#: At most this many further problems are told on the one error line (all of them under ``--json``).
MORE_SHOWN = 3


def error_line(exc: Exception) -> str:
    """The one line ``flcheck: error: ...`` of a bad-input exception: its (first) problem with its
    position, then the further problems, if any (the first :data:`MORE_SHOWN` with their positions)."""
    message, position, more = _bad_input(exc)
    text = f"{position}: {message}" if position is not None else message
    if more:
        shown = "; ".join(more[:MORE_SHOWN])
        text += f" (and {len(more)} more problem{'s' if len(more) > 1 else ''}: {shown}"
        text += "; …)" if len(more) > MORE_SHOWN else ")"
    return f"flcheck: error: {text}"


def _report_bad_input(exc: Exception, command: str | None, json_output: bool) -> int:
    from checker.render import dumps  # lazy: numpy

    print(error_line(exc), file=sys.stderr)
    if json_output:
        message, position, more = _bad_input(exc)
        print(dumps(error_json(command, message, position, more), indent=2))
    return EXIT_BAD_INPUT


def _report_unknown(reason: str, limit_reason: str | None, args: argparse.Namespace,
                    json_output: bool) -> int:
    """A limit stopped the command before anything was decided: ``unknown``, exit 1 (under ``--json``
    also the limits it ran under: ``max_seconds`` counts CPU seconds)."""
    print(f"flcheck: unknown: {one_line(reason)}", file=sys.stderr)
    if json_output:
        from checker.cli.json_output import json_text  # lazy: numpy

        limits = getattr(args, "limits", None)
        print(json_text(args.flcheck_command, {"verdict": str(Verdict.UNKNOWN), "limit_reason": limit_reason,
                                               "reason": one_line(reason),
                                               "limits": None if limits is None else limits.json()}))
    return EXIT_VIOLATED


def main(argv: Sequence[str] | None = None, *, keep: list[object] | None = None) -> int:
    """Run the CLI; returns the exit code. Everything it prints shows the control characters of text
    from the input as escapes (:func:`checker.terminal.terminal_safe_output`); output that cannot be
    written (a full disk behind ``>``) is exit 2 with the file and the reason. ``keep`` receives the
    command's large results (an explored structure, a report, the frames of a computation a limit
    stopped): the console script ends the process without freeing them object by object
    (:func:`checker.__main__.run`)."""
    with terminal_safe_output() as output:
        code = _main(argv, keep)
    return EXIT_BAD_INPUT if output.failed else code  # stdout on a full disk: bad environment


def _main(argv: Sequence[str] | None, keep: list[object] | None) -> int:
    tokens = list(sys.argv[1:] if argv is None else argv)
    command = _command_of(tokens)
    try:
        parser = build_parser(only=command or "")
        args = parser.parse_args(tokens)
    except UsageError as exc:  # a malformed command line or a bad option value: one line, exit 2
        print(f"flcheck: error: {one_line(exc.message)} (see `{exc.prog} --help`)", file=sys.stderr)
        if _wants_json(tokens):
            from checker.render import dumps  # lazy: numpy

            print(dumps(error_json(exc.command, one_line(exc.message), Position("<command line>")), indent=2))
        return EXIT_BAD_INPUT
    except SystemExit as exc:  # argparse: --help or --version
        return int(exc.code or 0)
    except KeyboardInterrupt:
        print("flcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    json_output = bool(getattr(args, "json", False))
    args.keep = [] if keep is None else keep
    try:
        return _run(args)
    except ExplorationIncomplete as exc:  # a limit stopped the exploration: nothing is decided
        args.keep.append(exc)
        return _report_unknown(str(exc), exc.limit_reason, args, json_output)
    except LimitReached as exc:  # a limit stopped a computation outside an exploration
        args.keep.append(exc)
        return _report_unknown(f"{exc.reason} before anything was decided", exc.reason, args, json_output)
    except KeyboardInterrupt as exc:
        args.keep.append(exc)
        print("flcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError:  # an allocation the machine refused: the memory limit of the machine itself
        return _report_unknown("out of memory (an allocation failed) before anything was decided",
                               "out of memory", args, json_output)
    except BrokenPipeError:  # the reader (e.g. `| head`) went away: stop quietly, as Unix tools do
        return _quiet_stdout(141)
    except Exception as exc:
        if _is_bad_input(exc):
            try:
                return _report_bad_input(exc, args.flcheck_command, json_output)
            except BrokenPipeError:
                return _quiet_stdout(EXIT_BAD_INPUT)
        # an engine failure is a bug in flcheck: surface it, never a verdict
        if args.debug:
            import traceback

            traceback.print_exc()
        message = str(exc).splitlines()[0] if str(exc) else ""
        print(f"flcheck: internal error: {type(exc).__name__}{': ' + message if message else ''} "
              "(run with --debug for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command under its limits (:func:`checker.cli.options.job_limits`: its options', or
    the memory policy of every command), enforced in every phase by a watchdog that also prints the
    ``--progress`` lines."""
    args.limits = job_limits(args)
    report = _progress_line if getattr(args, "progress", False) else None
    with Watchdog(args.limits, report=report, interval=getattr(args, "progress_interval", 5.0)) as watch:
        args.watchdog = watch
        watch.phase(f"flcheck {args.flcheck_command}")
        code = int(args.func(args))
        watch.finish()
    return code


def _progress_line(line: str) -> None:
    sys.stderr.write(f"flcheck: {line}\n")
    sys.stderr.flush()


def _is_bad_input(exc: Exception) -> bool:
    """Whether ``exc`` is bad input (exit 2): an :class:`InputError`, a ``ModelError`` or a missing file."""
    if isinstance(exc, InputError | FileNotFoundError):
        return True
    model_errors = sys.modules.get("flmodel.errors")  # imported by whoever raised one
    return model_errors is not None and isinstance(exc, model_errors.ModelError)


def _quiet_stdout(code: int) -> int:
    """Point stdout at ``/dev/null`` (its reader has gone) so that the interpreter's final flush
    cannot fail, and return ``code``."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return code


if __name__ == "__main__":
    raise SystemExit(main())
