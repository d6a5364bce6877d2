"""The command line's option types, in one place: every numeric and output option of every command is
read by one of these ``argparse`` ``type=`` functions, so bad values are refused while the command
line is parsed (exit 2, one line naming the option and the value) before any work starts.

A type function raises :class:`argparse.ArgumentTypeError`; :class:`Parser` turns the parse error
into the single line ``flcheck: error: argument --eps: ...`` (no usage dump) by raising
:class:`UsageError`, which :func:`checker.cli.main.main` reports (also as JSON under ``--json``).

>>> finite_float("1/4")
0.25
>>> nonneg_float("nan")
Traceback (most recent call last):
argparse.ArgumentTypeError: 'nan' is not a number >= 0
>>> positive_int("-5")
Traceback (most recent call last):
argparse.ArgumentTypeError: '-5' is not an integer >= 1
>>> memory_mb("512")
512.0
"""

from __future__ import annotations

import argparse
import math
import os
import re
import stat
from collections.abc import Callable, Iterable
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from checker.errors import InputError

if TYPE_CHECKING:
    from checker.app.reductions import Reductions
from checker.io.files import check_output_path

__all__ = [
    "OBSERVE_HELP",
    "READING_CHOICES",
    "Parser",
    "UsageError",
    "comma_list",
    "confidence",
    "finite_float",
    "memory_mb",
    "nonneg_float",
    "nonneg_float_or_inf",
    "nonneg_int",
    "output_directory",
    "output_file",
    "plot_file",
    "positive_float",
    "positive_int",
    "probability",
    "probability_below_one",
    "seconds",
]


class UsageError(Exception):
    """A command line that does not parse: ``message`` (argparse's, e.g. ``argument --eps: ...``) and
    ``prog`` (the command, e.g. ``flcheck dp gaussian``)."""

    def __init__(self, message: str, prog: str):
        super().__init__(message)
        self.message = message
        self.prog = prog

    @property
    def command(self) -> str | None:
        """The sub-command named in ``prog`` (``"dp gaussian"``), ``None`` for ``flcheck`` itself."""
        return self.prog.partition(" ")[2] or None


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors raise :class:`UsageError` (one line, no usage dump)
    instead of printing the usage and exiting; sub-command parsers inherit the class."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        # the deepest sub-command parsed sets it last: "dp gaussian", for messages and JSON errors
        self.set_defaults(flcheck_command=self.prog.partition(" ")[2] or None)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.prog)

    def format_help(self) -> str:
        """The help text without the docstrings' reST markup (:func:`plain_help`)."""
        return plain_help(super().format_help())


_ROLE_ALONE = re.compile(r"\s*\((?::\w+:`[^`]+`[,;\s]*)+\)")
_ROLE = re.compile(r":\w+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``|`([^`]+)`")


def plain_help(text: str) -> str:
    """``text`` (help built from docstrings) as plain text: a parenthesis holding only cross-references
    to internal names (``(:func:`checker.app.x.f`)``) is dropped, another cross-reference becomes its
    last name, and reST literals (````x````, ```x```) lose their backticks.

    >>> plain_help("the pipeline of ``check`` (:func:`checker.app.privacy_fl.privacy_report`): same")
    'the pipeline of check: same'
    >>> plain_help("see :class:`~checker.errors.InputError` and `x`")
    'see InputError and x'
    """
    text = _ROLE_ALONE.sub("", text)
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    return _LITERAL.sub(lambda m: m.group(1) or m.group(2), text)


def _number(text: str) -> float:
    """``text`` as a float: decimal, scientific or a fraction ``a/b``; ``inf`` and ``nan`` as spelled.
    A finite literal that overflows a float (``1e400``) is refused rather than read as infinity."""
    word = text.strip().lower()
    if word in ("inf", "+inf", "infinity", "+infinity"):
        return math.inf
    if word in ("-inf", "-infinity"):
        return -math.inf
    if word == "nan":
        return math.nan
    try:
        exact = Fraction(word)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    try:
        return float(exact)
    except OverflowError:
        raise argparse.ArgumentTypeError(f"{text!r} is too large for a float") from None


def _real(condition: Callable[[float], bool], wanted: str) -> Callable[[str], float]:
    """A type function for the floats satisfying ``condition`` (NaN never does); ``wanted`` names
    them in the message (``"a number >= 0"``)."""

    def parse(text: str) -> float:
        value = _number(text)
        if math.isnan(value) or not condition(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not {wanted}")
        return value

    return parse


def _integer(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer >= {minimum}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer >= {minimum}")
        return value

    return parse


finite_float = _real(math.isfinite, "a finite number")
nonneg_float = _real(lambda v: math.isfinite(v) and v >= 0, "a number >= 0")
positive_float = _real(lambda v: math.isfinite(v) and v > 0, "a number > 0")
#: ε and similar quantities for which ``inf`` is meaningful (no guarantee); NaN and negatives are not.
nonneg_float_or_inf = _real(lambda v: v >= 0, "a number >= 0 or inf")
probability = _real(lambda v: 0 <= v <= 1, "a probability in [0, 1]")
probability_below_one = _real(lambda v: 0 <= v < 1, "a number in [0, 1)")
confidence = _real(lambda v: 0 < v < 1, "a confidence level in (0, 1)")
seconds = _real(lambda v: math.isfinite(v) and v > 0, "a number of seconds > 0")
memory_mb = _real(lambda v: math.isfinite(v) and v > 0, "a memory size in MB > 0")
nonneg_int = _integer(0)
positive_int = _integer(1)


def comma_list(item: Callable[[str], float]) -> Callable[[str], list[float]]:
    """A type function for a comma-separated list (``inf,200,10``), each entry read by ``item``.

    >>> comma_list(nonneg_float_or_inf)("inf, 200,10")
    [inf, 200.0, 10.0]
    """

    def parse(text: str) -> list[float]:
        return [item(part) for part in text.split(",") if part.strip()]

    return parse


def output_file(text: str) -> str:
    """A path flcheck may write a file to (:func:`checker.io.files.check_output_path`: not a directory,
    not a special file, its parent a directory). That it is none of the command's inputs is checked
    by the command, which knows them."""
    try:
        check_output_path(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def plot_file(text: str) -> str:
    """An :func:`output_file` whose extension names an image format matplotlib writes."""
    # lazy: matplotlib is slow to import, and only --plot needs its list of image formats
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    output_file(text)
    supported = FigureCanvasAgg.get_supported_filetypes()
    suffix = Path(text).suffix.lower().lstrip(".")
    if suffix not in supported:
        raise argparse.ArgumentTypeError(
            f"cannot write a plot to {text}: unknown image extension {'.' + suffix if suffix else '(none)'} "
            f"(expected {', '.join('.' + s for s in sorted(supported))})")
    return text


def output_directory(text: str) -> str:
    """A directory flcheck may write files into: an existing directory, or a path it can create (no
    part of it an existing non-directory)."""
    path = Path(text)
    for part in (path, *path.parents):
        if part.exists():
            if not stat.S_ISDIR(part.stat().st_mode):
                raise argparse.ArgumentTypeError(f"cannot write into {text}: {part} is not a directory")
            break
    return text


#: ``--observe``: how the privacy pipeline reads the attacker's observation (``check``, ``privacy``,
#: ``audit`` share the default, the sequence; ``privacy`` and ``audit`` also take the legacy forms).
OBSERVE_HELP = ("what the attacker observes: sequence (default: the sequence of the scenario's attacker "
                "observation, one entry per release or change, in run order), final (its values at the "
                "end of the run)")

#: ``--reading``: which neighbouring pairs the privacy pipeline judges (default: the declared ones, or
#: every reading for a model that declares none).
READING_CHOICES = ("declared", "replace_one", "add_remove_one", "all")


#: One switch per reduction of :mod:`checker.app.reductions` (``--no-<name>``), for the commands that
#: apply them.
REDUCTION_HELP = {
    "dead_values": "keep dead values (a client's gradient outside ready) instead of resetting them",
    "traces": "keep the protocol's trace sets in full instead of abstracting them when no property reads "
              "them (ctl and Pmin/Pmax properties only)",
    "cone": "keep the values no ctl or probability property reads (directly or through the rules) instead "
            "of resetting them",
    "symmetry": "store every state, not one representative per permutation of interchangeable clients",
    "gradient_sum": "keep every ready client's gradient in the privacy explorations, not only their "
                    "weighted sum (applied only when the rules read them through that sum alone)",
    "partial_order": "explore every interleaving behind a privacy figure, not one order of commuting "
                     "actions (applied only when the rules' footprints show that the actions commute)",
}
#: The reductions of the privacy pipeline's explorations (``flcheck privacy``).
PRIVACY_REDUCTIONS = ("dead_values", "gradient_sum", "symmetry", "partial_order")


def add_reduction_options(p: argparse.ArgumentParser, names: Iterable[str]) -> None:
    """``--no-reduce`` and ``--no-<name>`` for each reduction of ``names`` (:data:`REDUCTION_HELP`)."""
    p.add_argument("--no-reduce", action="store_true",
                   help="explore without any state-space reduction (the reductions never change a result)")
    for name in names:
        p.add_argument(f"--no-{name.replace('_', '-')}", action="store_true", help=REDUCTION_HELP[name])


def reductions_of(args: argparse.Namespace, names: Iterable[str]) -> Reductions:
    """The reductions the options of :func:`add_reduction_options` leave on (those not in ``names`` off)."""
    from checker.app.reductions import Reductions  # lazy: the reductions import the model layer

    if args.no_reduce:
        return Reductions.none()
    on = set(names)
    return Reductions(**{name: name in on and not getattr(args, f"no_{name}") for name in REDUCTION_HELP})


def default_memory_mb() -> float:
    """The default memory limit of the commands that explore: three quarters of the machine's physical
    memory (a model larger than that stops with a partial structure instead of exhausting the machine)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8192.0
    return float(int(0.75 * total / 2**20))
