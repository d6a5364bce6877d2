"""``flcheck contacts [--walker SHELL.toml | --tle FILE.tle] [--stations FILE.toml] [--station NAME]
[--isl-km KM] [--rounds R] [--round-seconds S] [--steps K] [--sample-seconds DT] [--unit rounds|steps]
[-o FILE] [--plot FILE.png]``: the contact plan of a constellation (:mod:`flmodel.orbits`) as the
scenario language's ``contact`` lines.

The satellites are a Walker-delta shell (a TOML file: ``notation``, ``altitude_km``, ...; default the
bundled ``walker_53_12_3_1.toml``) or two-line element sets propagated with ``sgp4`` (the ``orbits``
extra); the ground stations come from a TOML file (default the bundled ``stations.toml``), all of them or
those named by ``--station``. The plan is sampled every ``--sample-seconds`` over ``--rounds`` rounds of
``--round-seconds``, each cut into ``--steps`` steps; inter-satellite links are considered up to
``--isl-km``. The lines name satellite ``i`` ``orbit[i]`` and the stations ``ground`` (one) or ``gs[k]``,
as the bundled Walker scenario does. A bare file name that is not a file is looked up among the bundled
orbit files (``spec/orbits/``). Exit 0 (the lines are printed or written), 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from checker.cli.options import output_file, plot_file, positive_float, positive_int
from checker.errors import InputError, Position
from checker.io.files import write_atomic
from checker.verdict import EXIT_HOLDS
from flmodel.orbits import ContactPlan, Sampling, contact_plan, contact_text
from flmodel.orbits_motion import (
    GroundStation,
    Satellite,
    WalkerShell,
    bundled_orbit_file,
    load_ground_stations,
    load_tle_file,
    load_walker_shell,
)

DEFAULT_SHELL = "walker_53_12_3_1.toml"
DEFAULT_STATIONS = "stations.toml"


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``contacts``."""
    p = sub.add_parser(
        "contacts",
        help="print a constellation's contact plan as scenario contact lines",
        description=(
            "Sample a Walker-delta shell or two-line element sets against ground stations (and, with "
            "--isl-km, between satellites) and print the links that are up in some round or step as "
            "'contact A -- B in rounds 1..3;' lines for a scenario file. Bare file names are looked up "
            "among the bundled orbit files too (walker_53_12_3_1.toml, example.tle, stations.toml)."),
        epilog="Exit codes: 0 the plan was printed or written, 2 bad input.",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--walker", metavar="SHELL.toml", default=None,
                        help=f"a Walker-delta shell (default: the bundled {DEFAULT_SHELL})")
    source.add_argument("--tle", metavar="FILE.tle", default=None,
                        help="two-line element sets, propagated with sgp4 (the orbits extra)")
    p.add_argument("--stations", metavar="FILE.toml", default=DEFAULT_STATIONS,
                   help=f"ground stations (default: the bundled {DEFAULT_STATIONS})")
    p.add_argument("--station", action="append", metavar="NAME", default=None,
                   help="only this station of the file (repeatable; default: every station)")
    p.add_argument("--isl-km", type=positive_float, default=None, metavar="KM",
                   help="inter-satellite links up to this range (default: none)")
    p.add_argument("--rounds", type=positive_int, default=1, help="rounds (default 1)")
    p.add_argument("--round-seconds", type=positive_float, default=3600.0, metavar="S",
                   help="length of a round in seconds (default 3600)")
    p.add_argument("--steps", type=positive_int, default=1, metavar="K", help="steps per round (default 1)")
    p.add_argument("--sample-seconds", type=positive_float, default=60.0, metavar="DT",
                   help="sampling step in seconds, at most a protocol step (default 60)")
    p.add_argument("--up-when", choices=("any", "all"), default="any",
                   help="a link is up in a round or step when it is up at any (default) or all its samples")
    p.add_argument("--unit", choices=("rounds", "steps"), default="rounds",
                   help="windows in rounds (default) or in steps")
    p.add_argument("--epoch", default=None, metavar="ISO",
                   help="start of the plan, an ISO date-time with its UTC offset (default: the shell's "
                        "epoch, else 2024-03-20T00:00:00Z)")
    p.add_argument("-o", "--output", type=output_file, default=None, metavar="FILE",
                   help="write the lines to FILE instead of printing them")
    p.add_argument("--plot", type=plot_file, default=None, metavar="FILE.png",
                   help="also draw the windows (one row per link, a bar per pass) to FILE.png")
    p.set_defaults(func=run)


def _orbit_file(text: str, what: str) -> Path:
    """``text`` as a path, or the bundled orbit file of that name; :class:`InputError` when neither."""
    path = Path(text)
    if path.is_file():
        return path
    if path.name == text:
        try:
            bundled = bundled_orbit_file(text)
        except (FileNotFoundError, KeyError, ValueError):
            bundled = None
        if bundled is not None and bundled.is_file():
            return bundled
    raise InputError(f"no {what} file {text!r}", Position(text), "a file path or a bundled orbit file "
                     "(walker_53_12_3_1.toml, example.tle, stations.toml)")


def _epoch(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"--epoch {text!r} is not an ISO date-time", None,
                         "e.g. 2024-03-20T00:00:00Z") from None
    if moment.tzinfo is None:
        raise InputError(f"--epoch {text!r} has no UTC offset", None, "e.g. 2024-03-20T00:00:00Z")
    return moment


def _stations(args: argparse.Namespace) -> tuple[GroundStation, ...]:
    path = _orbit_file(args.stations, "ground-station")
    stations = load_ground_stations(path)
    if args.station is None:
        return stations
    known = {s.name: s for s in stations}
    missing = [n for n in args.station if n not in known]
    if missing:
        raise InputError(f"no station {missing[0]!r} in {path.name}", Position(str(path)),
                         "one of " + ", ".join(sorted(known)))
    return tuple(known[n] for n in args.station)


def build_plan(args: argparse.Namespace) -> ContactPlan:
    """The contact plan the options describe."""
    satellites: WalkerShell | tuple[Satellite, ...]
    epoch = _epoch(args.epoch)
    if args.tle is not None:
        satellites = load_tle_file(_orbit_file(args.tle, "TLE"))
    else:
        satellites = load_walker_shell(_orbit_file(args.walker or DEFAULT_SHELL, "Walker shell"))
        epoch = epoch or satellites.epoch
    sampling = Sampling(args.sample_seconds, args.round_seconds, args.steps, args.rounds, args.up_when)
    kwargs: dict[str, Any] = {} if epoch is None else {"epoch": epoch}
    return contact_plan(satellites, _stations(args), sampling=sampling, max_isl_range_km=args.isl_km,
                        **kwargs)


def run(args: argparse.Namespace) -> int:
    plan = build_plan(args)
    text = contact_text(plan, args.unit)
    if args.output is not None:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    if args.plot is not None:
        from checker.crossval.plots import save_figure  # lazy: matplotlib, only for a plot
        from flmodel.orbits_plot import plot_contact_windows  # lazy: matplotlib, only for a plot

        save_figure(plot_contact_windows(plan), args.plot)
    return EXIT_HOLDS
