"""``flcheck contacts [--walker SHELL.toml | --tle FILE.tle] [--stations FILE.toml] [--station NAME]
[--isl-km KM] [--rounds R] [--round-seconds S] [--steps K] [--sample-seconds DT] [--unit rounds|steps]
[-o FILE] [--plot FILE.png]``: the contact plan of a constellation (:mod:`flmodel.orbits`) as the
scenario language's ``contact`` lines.

The satellites are a Walker-delta shell (a TOML file: ``notation``, ``altitude_km``, ...; default the
bundled ``walker_53_12_3_1.toml``) or two-line element sets propagated with ``sgp4`` (the ``orbits``
extra); the ground stations come from a TOML file (default the bundled ``stations.toml``), all of them or
those named by ``--station``. The plan is sampled every ``--sample-seconds`` over ``--rounds`` rounds of
``--round-seconds``, each cut into ``--steps`` steps; inter-satellite links are considered up to
``--isl-km``. The lines name satellite ``i`` ``orbit[i]`` and each station by its name in the stations
file (a character a scenario name cannot hold becomes ``_``), or by the location ``AS`` of
``--station NAME=AS`` (the bundled Walker scenarios' lines are ``--station toulouse=ground``'s). A bare
file name that is not a file is looked up among the bundled orbit files (``spec/orbits/``). The plan is
sampled at most :data:`MAX_SAMPLES` times (``--rounds`` × ``--round-seconds`` / ``--sample-seconds``).
Exit 0 (the lines are printed or written), 2 on bad input.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checker.cli.options import Integer, Real, output_file, plot_file
from checker.errors import InputError, Position
from checker.verdict import EXIT_HOLDS

if TYPE_CHECKING:
    from flmodel.orbits import ContactPlan, Node
    from flmodel.orbits_motion import GroundStation

DEFAULT_SHELL = "walker_53_12_3_1.toml"
DEFAULT_STATIONS = "stations.toml"
#: The most samples a plan may take (every satellite and station is propagated at each).
MAX_SAMPLES = 1_000_000


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``contacts``."""
    p = sub.add_parser(
        "contacts",
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
    p.add_argument("--station", action="append", metavar="NAME[=AS]", default=None,
                   help="only this station of the file (repeatable; default: every station); NAME=AS names "
                        "its location AS in the lines (default: the station's own name)")
    p.add_argument("--isl-km", type=Real(0, 100_000, low_open=True, what="a range in km"), default=None,
                   metavar="KM", help="inter-satellite links up to this range (default: none; at most "
                                      "100,000)")
    p.add_argument("--rounds", type=Integer(1, 10_000, what="a number of rounds"), default=1,
                   help="rounds (default 1)")
    p.add_argument("--round-seconds", type=Real(1, 10**7, what="a number of seconds"), default=3600.0,
                   metavar="S", help="length of a round in seconds (default 3600)")
    p.add_argument("--steps", type=Integer(1, 10_000, what="a number of steps"), default=1, metavar="K",
                   help="steps per round (default 1)")
    p.add_argument("--sample-seconds", type=Real(0.01, 10**7, what="a number of seconds"), default=60.0,
                   metavar="DT", help="sampling step in seconds, at most a protocol step (default 60; at "
                                      f"most {MAX_SAMPLES:,} samples in the plan)")
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
    from flmodel.orbits_motion import bundled_orbit_file  # lazy: the orbits module imports numpy

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


def _requested(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """The ``--station NAME[=AS]`` options as ``(NAME, AS or None)``."""
    out = []
    for item in args.station or ():
        name, sep, alias = item.partition("=")
        if sep and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", alias.strip()):
            raise InputError(f"--station {item}: {alias.strip()!r} is not a scenario name",
                             Position("--station"),
                             "NAME=AS with AS a letter or _ followed by letters, digits or _")
        out.append((name.strip(), alias.strip() if sep else None))
    return out


def _stations(args: argparse.Namespace) -> tuple[tuple[GroundStation, ...], tuple[str, ...]]:
    """The stations of the plan and the name of each one's location in the lines."""
    from flmodel.orbits_motion import load_ground_stations  # lazy: the orbits module imports numpy

    path = _orbit_file(args.stations, "ground-station")
    stations = load_ground_stations(path)
    requested = _requested(args)
    if not requested:
        return stations, tuple(_location_name(s.name) for s in stations)
    known = {s.name: s for s in stations}
    missing = [n for n, _ in requested if n not in known]
    if missing:
        raise InputError(f"no station {missing[0]!r} in {path.name}", Position(str(path)),
                         "one of " + ", ".join(sorted(known)))
    return (tuple(known[n] for n, _ in requested),
            tuple(alias or _location_name(n) for n, alias in requested))


def _location_name(name: str) -> str:
    """A station's name as a scenario location name (``Cape Town`` -> ``Cape_Town``).

    >>> _location_name("cape town-2")
    'cape_town_2'
    """
    text = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return text if re.match(r"[A-Za-z_]", text) else "gs_" + text


def _naming(locations: tuple[str, ...]) -> Callable[[Node], str]:
    """``orbit[i]`` for satellite ``i``, the location name of station ``k`` (:func:`_stations`)."""

    def name(node: Node) -> str:
        return f"orbit[{node.index}]" if node.kind == "satellite" else locations[node.index]

    return name


def _check_sampling(args: argparse.Namespace) -> None:
    """The sampling options together: a sample within each protocol step, at most :data:`MAX_SAMPLES`
    samples (refused before anything is allocated), each naming the option."""
    step = args.round_seconds / args.steps
    if args.sample_seconds > step:
        raise InputError(f"--sample-seconds {args.sample_seconds:g} is longer than a protocol step "
                         f"(--round-seconds / --steps = {step:g} s)", Position("--sample-seconds"),
                         "a sample in every step: --sample-seconds at most the step")
    samples = args.rounds * args.round_seconds / args.sample_seconds
    if samples > MAX_SAMPLES:
        raise InputError(f"--sample-seconds {args.sample_seconds:g} gives {samples:,.0f} samples over "
                         f"--rounds {args.rounds} of --round-seconds {args.round_seconds:g}",
                         Position("--sample-seconds"), f"at most {MAX_SAMPLES:,} samples")


def build_plan(args: argparse.Namespace) -> tuple[ContactPlan, tuple[str, ...]]:
    """The contact plan the options describe, and the location name of each of its stations."""
    # lazy: the orbit generator imports numpy (and sgp4 for TLEs)
    from flmodel.orbits import Sampling, contact_plan
    from flmodel.orbits_motion import (  # lazy: as the import above
        Satellite,
        WalkerShell,
        load_tle_file,
        load_walker_shell,
    )

    _check_sampling(args)
    satellites: WalkerShell | tuple[Satellite, ...]
    epoch = _epoch(args.epoch)
    if args.tle is not None:
        satellites = load_tle_file(_orbit_file(args.tle, "TLE"))
    else:
        satellites = load_walker_shell(_orbit_file(args.walker or DEFAULT_SHELL, "Walker shell"))
        epoch = epoch or satellites.epoch
    sampling = Sampling(args.sample_seconds, args.round_seconds, args.steps, args.rounds, args.up_when)
    kwargs: dict[str, Any] = {} if epoch is None else {"epoch": epoch}
    stations, locations = _stations(args)
    return contact_plan(satellites, stations, sampling=sampling, max_isl_range_km=args.isl_km,
                        **kwargs), locations


def run(args: argparse.Namespace) -> int:
    from checker.io.files import write_atomic  # lazy: as the import above
    from flmodel.orbits import contact_text  # lazy: as the import above

    plan, locations = build_plan(args)
    text = contact_text(plan, args.unit, naming=_naming(locations))
    if args.output is not None:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    if args.plot is not None:
        from checker.crossval.plots import save_figure  # lazy: matplotlib, only for a plot
        from flmodel.orbits_plot import plot_contact_windows  # lazy: matplotlib, only for a plot

        save_figure(plot_contact_windows(plan, naming=_naming(locations)), args.plot)
    return EXIT_HOLDS
