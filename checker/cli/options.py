"""The command line's option types, in one place: every numeric and output option of every command is
read by one of these ``argparse`` ``type=`` functions (:class:`Real`, :class:`Integer`, :class:`Exact`:
ASCII numbers only, finite unless ``inf`` is meaningful, in a stated range, every integer bounded), so
bad values are refused while the command line is parsed (exit 2, one line naming the option and the
value) before any work starts. The limits' options (:func:`add_limit_options`) and the memory policy
of every command (:func:`default_memory_mb`) live here too.

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
argparse.ArgumentTypeError: '-5' is not an integer from 1 to 1,000,000,000
>>> memory_mb("512")
512.0
>>> positive_int("١٢")
Traceback (most recent call last):
argparse.ArgumentTypeError: '١٢' is not an integer from 1 to 1,000,000,000
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
    from checker.mc.exploration import Limits
from checker.io.files import check_output_path

__all__ = [
    "OBSERVE_HELP",
    "READING_CHOICES",
    "Exact",
    "Integer",
    "Parser",
    "Real",
    "UsageError",
    "add_limit_options",
    "comma_list",
    "confidence",
    "default_memory_mb",
    "exact_number",
    "finite_float",
    "job_limits",
    "limits_of",
    "matrix",
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
    "progress_interval",
    "seconds",
    "seed",
    "states",
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


_NEGATIVE = re.compile(r"^-(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+|[0-9]+/[0-9]+|inf(?:inity)?|nan)$",
                       re.IGNORECASE)


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors raise :class:`UsageError` (one line, no usage dump)
    instead of printing the usage and exiting; sub-command parsers inherit the class."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        # the deepest sub-command parsed sets it last: "dp gaussian", for messages and JSON errors
        self.set_defaults(flcheck_command=self.prog.partition(" ")[2] or None)
        # "-inf", "-1e5", "-1/2" are (refused) values of an option, not options: the option's type
        # refuses them by name instead of argparse's "unrecognized arguments"
        self._negative_number_matcher = _NEGATIVE

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


_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?(?:/[0-9]+)?")


def exact_number(text: str) -> Fraction:
    """``text`` as an exact rational: ASCII decimal, scientific or a fraction ``a/b`` (Unicode digits,
    which Python's ``int`` and ``Fraction`` would read, are refused: an option is typed in ASCII).
    Raises :class:`argparse.ArgumentTypeError`; a literal of more than 400 characters or an exponent
    beyond ±400 is refused before it is read (``1e999999999`` must not take minutes)."""
    word = text.strip()
    if len(word) > 400 or not _NUMBER.fullmatch(word):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number")
    exponent = re.search(r"[eE]([+-]?[0-9]+)", word)
    if exponent is not None and abs(int(exponent.group(1))) > 400:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range")
    try:
        return Fraction(word)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (a denominator of 0?)") from None


def _number(text: str, infinite: bool) -> float:
    """``text`` as a float (:func:`exact_number`); ``inf`` as spelled when ``infinite``. A finite literal
    that overflows a float (``1e400``) is refused rather than read as infinity."""
    word = text.strip().lower()
    if word in ("inf", "+inf", "infinity", "+infinity") and infinite:
        return math.inf
    try:
        return float(exact_number(text))
    except OverflowError:
        raise argparse.ArgumentTypeError(f"{text!r} is too large for a float") from None


def _bound_text(value: float) -> str:
    """A range's end as the messages show it (``0.1``, ``1,000,000,000``)."""
    return f"{int(value):,}" if float(value).is_integer() and abs(value) < 1e30 else f"{value:g}"


class Real:
    """The type of a real-valued option: a finite number (or ``inf`` where ``infinite``) in the range
    ``low`` (excluded when ``low_open``) to ``high`` (excluded when ``high_open``); ``None`` bounds are
    open ends. An instance is argparse's ``type=`` function and carries its range, so that the
    fuzz suite (``tests/fuzz/cli_options.py``) draws values inside and outside it for every option.

    >>> Real(0, 1)("1/4")
    0.25
    >>> Real(0, None, low_open=True)("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: '0' is not a number > 0
    """

    def __init__(self, low: float | None = None, high: float | None = None, *, low_open: bool = False,
                 high_open: bool = False, infinite: bool = False, what: str = "a number"):
        self.low, self.high = low, high
        self.low_open, self.high_open = low_open, high_open
        self.infinite = infinite
        parts = []
        if low is not None:
            parts.append(f"{'>' if low_open else '>='} {_bound_text(low)}")
        if high is not None:
            parts.append(f"{'<' if high_open else '<='} {_bound_text(high)}")
        self.wanted = what + (" " + " and ".join(parts) if parts else "") + (" or inf" if infinite else "")
        self.__name__ = "real"

    def accepts(self, value: float) -> bool:
        """Whether ``value`` is in the range (``inf`` only when ``infinite``)."""
        if math.isnan(value) or (math.isinf(value) and not (self.infinite and value > 0)):
            return False
        if math.isinf(value):
            return True
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        return not (self.high is not None and (value > self.high or (self.high_open and value == self.high)))

    def __call__(self, text: str) -> float:
        try:
            value = _number(text, self.infinite)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.wanted}") from None
        if not self.accepts(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.wanted}")
        return value

    def __repr__(self) -> str:
        return f"Real({self.wanted!r})"


class Integer:
    """The type of an integer option in ``low``..``high`` (both included; every integer option has an
    upper bound, so that no value reaches an engine that cannot size it). ASCII digits only.

    >>> Integer(1, 10)("7")
    7
    >>> Integer(1, 10)("11")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: '11' is not an integer from 1 to 10
    """

    def __init__(self, low: int, high: int, *, what: str = "an integer"):
        self.low, self.high = low, high
        self.wanted = f"{what} from {_bound_text(low)} to {_bound_text(high)}"
        self.__name__ = "integer"

    def __call__(self, text: str) -> int:
        word = text.strip()
        if not re.fullmatch(r"[+-]?[0-9]+", word):
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.wanted}")
        if len(word.lstrip("+-0")) > len(str(self.high)) + 1:  # before int(): a huge literal stays cheap
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.wanted}")
        value = int(word)
        if not self.low <= value <= self.high:
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.wanted}")
        return value

    def __repr__(self) -> str:
        return f"Integer({self.low}, {self.high})"


class Exact(Real):
    """A :class:`Real` read as an exact rational (``Fraction``), e.g. a cost budget ``5/2``."""

    def __call__(self, text: str) -> Fraction:  # type: ignore[override]  # the exact value of the same range
        try:
            value = exact_number(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.wanted}") from None
        try:
            as_float = float(value)
        except OverflowError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.wanted}") from None
        if not self.accepts(as_float):
            raise argparse.ArgumentTypeError(f"{text!r} is not {self.wanted}")
        return value


#: The largest model a limit may name (states), and the longest time (seconds) and largest memory (MB).
MAX_STATES_CAP = 10**15
MAX_SECONDS_CAP = 10**7
MAX_MEMORY_CAP = 10**8
#: ``--progress-interval``: at least this many seconds between progress lines (a smaller one would
#: spend the job printing).
MIN_PROGRESS_INTERVAL = 0.1

finite_float = Real()
nonneg_float = Real(0)
positive_float = Real(0, low_open=True)
#: ε and similar quantities for which ``inf`` is meaningful (no guarantee); NaN and negatives are not.
nonneg_float_or_inf = Real(0, infinite=True)
probability = Real(0, 1, what="a probability")
probability_below_one = Real(0, 1, high_open=True)
confidence = Real(0, 1, low_open=True, high_open=True, what="a confidence level")
seconds = Real(0, MAX_SECONDS_CAP, low_open=True, what="a number of seconds")
memory_mb = Real(0, MAX_MEMORY_CAP, low_open=True, what="a memory size in MB")
progress_interval = Real(MIN_PROGRESS_INTERVAL, 3600, what="a number of seconds")
states = Integer(1, MAX_STATES_CAP, what="a number of states")
#: A seed of numpy's generators.
seed = Integer(0, 2**32 - 1, what="a seed")
nonneg_int = Integer(0, 10**9)
positive_int = Integer(1, 10**9)


def comma_list(item: Callable[[str], float]) -> Callable[[str], list[float]]:
    """A type function for a comma-separated list (``inf,200,10``), each entry read by ``item``.

    >>> comma_list(nonneg_float_or_inf)("inf, 200,10")
    [inf, 200.0, 10.0]
    """

    def parse(text: str) -> list[float]:
        values = [item(part) for part in text.split(",") if part.strip()]
        if not values:
            raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers")
        return values

    parse.__name__ = "comma_list"
    parse.item = item  # type: ignore[attr-defined]  # read by the option fuzz
    return parse


def matrix(item: Callable[[str], float]) -> Callable[[str], list[list[float]]]:
    """A type function for a matrix ``a,b;c,d`` (rows separated by ``;``), each entry read by ``item``;
    rows of different lengths are refused.

    >>> matrix(finite_float)("1, 0; 0, 1/2")
    [[1.0, 0.0], [0.0, 0.5]]
    """

    def parse(text: str) -> list[list[float]]:
        rows = [comma_list(item)(row) for row in text.split(";")]
        if len({len(r) for r in rows}) != 1:
            raise argparse.ArgumentTypeError(f"{text!r}: rows of different lengths (expected a rectangular "
                                             "matrix 'a,b;c,d')")
        return rows

    parse.__name__ = "matrix"
    parse.item = item  # type: ignore[attr-defined]  # read by the option fuzz
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
    "counter": "let every interchangeable client take its own steps, not one client per local state of "
               "its class (the orbit quotient without the counter abstraction)",
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
    """The memory limit of every command without ``--max-memory``: three quarters of the machine's
    physical memory (a model larger than that stops with ``unknown`` instead of exhausting the machine).
    One policy for every command (:func:`job_limits`)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8192.0
    return float(int(0.75 * total / 2**20))


#: The default limits of every command that explores (``check``, ``ctl``, ``explore``, ``attack-tree``,
#: ``privacy``, each ``sweep`` instance): states, and CPU seconds of the whole job.
DEFAULT_MAX_STATES = 2_000_000
DEFAULT_MAX_SECONDS = 600.0

#: What ``--max-seconds`` counts, for the help of every command.
CPU_TIME_HELP = ("CPU seconds of the flcheck process (user + system, every thread; not wall-clock time, so "
                 "a loaded machine does not shorten the budget)")


def add_limit_options(p: argparse.ArgumentParser, *,
                      scope: str = "of the whole job (every exploration and computation)",
                      progress: bool = True, max_states: int | None = DEFAULT_MAX_STATES) -> None:
    """``--max-states``, ``--max-seconds`` (CPU time), ``--max-wall-seconds``, ``--max-memory`` (alias
    ``--max-memory-mb``) and, with ``progress``, ``--progress`` / ``--progress-interval``, read by
    :func:`limits_of`; ``max_states`` is the default of ``--max-states``."""
    default = "none" if max_states is None else f"{max_states:,}"
    p.add_argument("--max-states", type=states, default=max_states, metavar="N",
                   help=f"states per exploration (default {default}; at most {MAX_STATES_CAP:,})")
    p.add_argument("--max-seconds", type=seconds, default=DEFAULT_MAX_SECONDS, metavar="S",
                   help=f"time limit {scope}, in {CPU_TIME_HELP} (default {DEFAULT_MAX_SECONDS:g}); a job "
                        "past it stops within 2 s with unknown (exit 1)")
    p.add_argument("--max-wall-seconds", type=seconds, default=None, metavar="S",
                   help=f"also a wall-clock time limit {scope} (default none)")
    p.add_argument("--max-memory", "--max-memory-mb", dest="max_memory", type=memory_mb, default=None,
                   metavar="MB",
                   help=f"resident memory limit {scope} (default: three quarters of the machine's memory, "
                        f"{default_memory_mb():.0f} MB here); --max-memory-mb is the same option")
    p.set_defaults(job_limits=True)
    if progress:
        p.add_argument("--progress", action="store_true",
                       help="print a progress line to stderr every few seconds (phase, states, rate, CPU "
                            "seconds, time left)")
        p.add_argument("--progress-interval", type=progress_interval, default=5.0, metavar="S",
                       help=f"seconds between --progress lines (default 5; from {MIN_PROGRESS_INTERVAL:g} "
                            "to 3600)")


def limits_of(args: argparse.Namespace) -> Limits:
    """The limits of :func:`add_limit_options`' options, with the job's shared deadlines (set once per
    command by :func:`checker.cli.main.main` in ``args.limits``)."""
    shared = getattr(args, "limits", None)
    if shared is not None:
        return shared  # set by main from these options
    from checker.mc.exploration import Limits  # lazy: light, but only the commands with limits need it

    return Limits(max_states=getattr(args, "max_states", None),
                  max_seconds=getattr(args, "max_seconds", None),
                  max_wall_seconds=getattr(args, "max_wall_seconds", None),
                  max_memory_mb=getattr(args, "max_memory", None) or default_memory_mb())


def job_limits(args: argparse.Namespace) -> Limits:
    """The limits the whole command runs under (:class:`~checker.mc.exploration.Watchdog` in
    :func:`checker.cli.main.main`): those of its options, or, for a command without limit options, the
    memory policy of every command (:func:`default_memory_mb`), with their deadlines from now."""
    from checker.mc.exploration import Limits  # lazy: see limits_of

    if getattr(args, "job_limits", False):
        return limits_of(args).sharing()
    return Limits(max_memory_mb=default_memory_mb())
