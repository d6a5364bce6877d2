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
