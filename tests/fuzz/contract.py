"""Run ``flcheck`` in-process and sort each run into an outcome class of the CLI contract.

The contract: exit 0 holds, 1 violated or unknown, 2 bad input, with a one-line message on stderr
that is positioned (``file:line[:col]: ...``) where the input has positions; 3 is an internal error
(a bug). Never a traceback, never a hang, never an output file that replaced an input.

Outcome classes (:func:`classify`): ``VERDICT`` (exit 0/1), ``POSITIONED`` (exit 2 with one stderr line,
``flcheck: error: FILE:LINE[:COL]: ...``, positioned in one of the inputs: the README promises one line,
the further problems are located on it), ``OPTION`` (exit 2 on input without positions: one
``flcheck: error:`` line); anything else is a contract violation and its class says what went wrong. No
output ever shows a Python object's representation (``Fraction(0, 1)``, ``np.float64(...)``).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import signal
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from checker.cli import main

VERDICT = "verdict"
POSITIONED = "exit 2 positioned"
OPTION = "exit 2 option"
#: The classes a run may end in without breaking the contract.
CONFORMING = frozenset({VERDICT, POSITIONED, OPTION})

#: Outcome classes per input kind, for the summary the fuzz conftest prints at the end of the run.
STATS: Counter[tuple[str, str]] = Counter()

#: Wall-clock bound on one in-process run (the CLI's own --max-seconds bounds exploration; this
#: catches a run that ignores it).
HANG_SECONDS = 120.0


class Hang(BaseException):
    """Raised by the watchdog; a BaseException so that the CLI's ``except Exception`` cannot turn it
    into an exit code."""


@dataclass
class Outcome:
    argv: list[str]
    code: int | None
    stdout: str
    stderr: str
    exception: BaseException | None = None
    changed_inputs: list[str] = field(default_factory=list)

    def json(self) -> dict[str, object]:
        """The stdout of a ``--json`` run."""
        data = json.loads(self.stdout)
        assert isinstance(data, dict)
        return data

    def describe(self) -> str:
        exc = f" exception={type(self.exception).__name__}: {self.exception}" if self.exception else ""
        return (f"flcheck {' '.join(self.argv)!s}\n  exit={self.code}{exc}\n  stderr={self.stderr[-800:]!r}"
                f"\n  stdout={self.stdout[:300]!r}\n  changed inputs={self.changed_inputs}")


def digest(path: Path) -> str:
    """A fingerprint of a path: its kind and, for a regular file, the hash of its bytes."""
    if path.is_symlink():
        return "link:" + str(path.readlink())
    if path.is_dir():
        return "dir"
    if path.is_fifo():
        return "fifo"
    if not path.exists():
        return "absent"
    return "file:" + hashlib.sha256(path.read_bytes()).hexdigest()


@contextlib.contextmanager
def _watchdog(seconds: float) -> Iterator[None]:
    def expire(_signum: int, _frame: object) -> None:
        raise Hang(f"no exit after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(argv: Sequence[str], inputs: Sequence[Path] = ()) -> Outcome:
    """Run ``flcheck ARGV`` through :func:`checker.cli.main`, capturing stdout and stderr, and note
    which of ``inputs`` changed (kind or bytes)."""
    before = {p: digest(p) for p in inputs}
    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    exception: BaseException | None = None
    try:
        with _watchdog(HANG_SECONDS), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    except (Exception, Hang, SystemExit, RecursionError) as exc:  # an escaped exception is an outcome
        exception = exc
    changed = [str(p) for p in inputs if digest(p) != before[p]]
    return Outcome(list(argv), code, out.getvalue(), err.getvalue(), exception, changed)


#: Lines of a bad-input message: one (the README's promise; the further problems are located on it).
MAX_MESSAGE_LINES = 1

#: Python representations that must never reach a user (a value printed with repr instead of its text).
_REPR = re.compile(r"\bFraction\(|\bnp\.\w+\(|\bnumpy\.\w+\(|<[\w.]+ object at 0x")


def positioned_line(line: str, sources: Sequence[str], *, first: bool) -> bool:
    """Whether ``line`` is ``flcheck: error: SOURCE:LINE[:COL]: message`` for one of ``sources``
    (the ``flcheck: error:`` prefix only on the first line: the others continue the list)."""
    prefix = "flcheck: error: "
    if first and not line.startswith(prefix):
        return False
    rest = line.removeprefix(prefix)
    for source in sources:
        if rest.startswith(source + ":") and re.match(r":\d+(?::\d+)?: \S", rest[len(source):]):
            return True
    return False


def _option_message(lines: list[str]) -> bool:
    return len(lines) == 1 and lines[0].startswith("flcheck: error: ")


def classify(outcome: Outcome, sources: Sequence[str] | None) -> str:
    """The outcome class of a run. ``sources`` are the names a positioned message may cite (the input
    files as given on the command line, ``<formula>``); ``None`` for input without positions."""
    if outcome.changed_inputs:
        return "input file changed"
    if outcome.exception is not None:
        return f"uncaught {type(outcome.exception).__name__}"
    if "Traceback" in outcome.stderr or "Traceback" in outcome.stdout:
        return "traceback printed"
    if _REPR.search(outcome.stderr) or _REPR.search(outcome.stdout):
        return "a Python repr printed"
    if outcome.code in (0, 1):
        return VERDICT
    if outcome.code == 3:
        match = re.search(r"internal error: (\w+)", outcome.stderr)
        return f"exit 3 {match.group(1) if match else ''}".rstrip()
    if outcome.code != 2:
        return f"exit {outcome.code}"
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    if not lines:
        return "exit 2 silent"
    if sources is None:
        return OPTION if _option_message(lines) else "exit 2 malformed message"
    if len(lines) > MAX_MESSAGE_LINES:
        return "exit 2 with too many lines"
    if all(positioned_line(line, sources, first=i == 0) for i, line in enumerate(lines)):
        return POSITIONED
    return "exit 2 unpositioned"


def record(kind: str, outcome_class: str) -> None:
    STATS[(kind, outcome_class)] += 1


def summary() -> str:
    """Counts per outcome class per input kind, as a small table."""
    kinds = sorted({kind for kind, _ in STATS})
    rows = []
    for kind in kinds:
        classes = {cls: n for (k, cls), n in STATS.items() if k == kind}
        total = sum(classes.values())
        parts = ", ".join(f"{cls}: {n}" for cls, n in sorted(classes.items()))
        rows.append(f"  {kind:<22} {total:>6} runs  ({parts})")
    return "\n".join(rows)
