"""``-D NAME=VALUE`` / ``--set NAME=VALUE``: integer constants of a parametric scenario set from the command
line (they override the ``const NAME = …;`` defaults, see :mod:`flmodel.scenario_family`).

:func:`add_define_option` adds the repeatable option to a command's parser (bad syntax: argparse's
exit 2); :func:`defines_of` reads the definitions back as a dict, which the commands pass to the
scenario loader (a name that is not a constant of the scenario is reported there, with the scenario's
constants).
"""

from __future__ import annotations

import argparse
import re

from checker.errors import InputError, Position

_DEFINE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([+-]?[0-9]+)\s*")


def parse_define(text: str) -> tuple[str, int]:
    """``"N=4"`` -> ``("N", 4)``; anything else raises :class:`argparse.ArgumentTypeError`."""
    match = _DEFINE.fullmatch(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"expected NAME=INTEGER (e.g. N=4), got {text!r}")
    return match.group(1), int(match.group(2))


#: The most values one ``-D NAME=A..B`` of ``flcheck sweep`` may give (a mistyped bound must not
#: schedule millions of instances).
MAX_SWEEP_VALUES = 10_000

_VALUES = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+?)\s*")
_ITEM = re.compile(r"\s*([+-]?[0-9]+)\s*(?:\.\.\s*([+-]?[0-9]+)\s*(?::\s*([0-9]+)\s*)?)?")


def parse_define_values(text: str) -> tuple[str, tuple[int, ...]]:
    """``flcheck sweep``'s ``-D``: a constant and the values it takes, a comma-separated list of integers
    and inclusive ranges ``A..B`` (optionally with a step, ``A..B:S``), in the order written, duplicates
    dropped; anything else raises :class:`argparse.ArgumentTypeError`.

    >>> parse_define_values("N=2..5")
    ('N', (2, 3, 4, 5))
    >>> parse_define_values("R=1,2, 8..12:2")
    ('R', (1, 2, 8, 10, 12))
    """
    match = _VALUES.fullmatch(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUES (e.g. N=2..16 or R=1,2), got {text!r}")
    values: dict[int, None] = {}  # ordered, without duplicates
    for part in match.group(2).split(","):
        item = _ITEM.fullmatch(part)
        if item is None:
            raise argparse.ArgumentTypeError(f"{match.group(1)}: expected an integer or a range A..B[:STEP], "
                                             f"got {part.strip()!r}")
        low = int(item.group(1))
        high = low if item.group(2) is None else int(item.group(2))
        step = 1 if item.group(3) is None else int(item.group(3))
        if high < low or step < 1:
            raise argparse.ArgumentTypeError(f"{match.group(1)}: empty range {part.strip()!r} "
                                             "(expected A..B with A <= B and a step >= 1)")
        if (high - low) // step + 1 + len(values) > MAX_SWEEP_VALUES:
            raise argparse.ArgumentTypeError(f"{match.group(1)}: more than {MAX_SWEEP_VALUES} values")
        values.update(dict.fromkeys(range(low, high + 1, step)))
    return match.group(1), tuple(values)


def add_define_option(parser: argparse.ArgumentParser) -> None:
    """Add ``-D NAME=VALUE`` / ``--set NAME=VALUE`` (repeatable) to ``parser``."""
    parser.add_argument("-D", "--set", dest="defines", action="append", type=parse_define, default=None,
                        metavar="NAME=VALUE",
                        help="set the scenario's integer constant NAME (its 'const NAME = ...;' default), "
                             "e.g. -D N=4; repeatable")


def defines_of(args: argparse.Namespace) -> dict[str, int]:
    """The definitions given by :func:`add_define_option`'s option (empty when none); one name given
    twice with different values is an :class:`InputError`."""
    out: dict[str, int] = {}
    for name, value in args.defines or ():
        if name in out and out[name] != value:
            raise InputError(f"-D {name} given twice ({out[name]} and {value})", Position("<command line>"),
                             f"one value for {name}")
        out[name] = value
    return out
