#!/usr/bin/env python3
"""Contact-plan generation time of ``flmodel.orbits`` for Walker shells and the bundled TLEs.

Each case samples the satellites over a number of one-hour rounds and collects ground-station
and (where given) inter-satellite links; prints satellites, stations, samples, links, contacts
(passes: runs of consecutive up samples over all links) and seconds.

Usage::

    python bench/bench_orbits.py                   # 30 s samples over 6 rounds of an hour
    python bench/bench_orbits.py --sample 10 --rounds 24
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Sequence
from dataclasses import dataclass

from flmodel.orbits import (
    GroundStation,
    Sampling,
    WalkerShell,
    bundled_orbit_file,
    contact_plan,
    load_ground_stations,
    load_tle_file,
)
from flmodel.orbits_motion import Satellite


@dataclass(frozen=True)
class Case:
    label: str
    satellites: Sequence[Satellite]
    station_count: int
    max_isl_range_km: float | None


def cases() -> list[Case]:
    found = [
        Case("Walker 53:12/3/1, 550 km", WalkerShell.from_notation("53:12/3/1", 550.0).orbits(), 1, None),
        Case(
            "Walker 53:12/3/1 + ISL 4000 km",
            WalkerShell.from_notation("53:12/3/1", 550.0).orbits(),
            3,
            4000.0,
        ),
        Case(
            "Walker 86.4:66/6/2 + ISL 5000 km",
            WalkerShell.from_notation("86.4:66/6/2", 780.0).orbits(),
            3,
            5000.0,
        ),
        Case(
            "Walker 53:288/18/1 + ISL 2000 km",
            WalkerShell.from_notation("53:288/18/1", 550.0).orbits(),
            3,
            2000.0,
        ),
    ]
    if importlib.util.find_spec("sgp4") is not None:
        tles = load_tle_file(bundled_orbit_file("example.tle"))
        found.append(Case("bundled TLEs (SGP4) + ISL 5000 km", tles, 3, 5000.0))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sample", type=float, default=30.0, help="sample time step in seconds")
    parser.add_argument("--rounds", type=int, default=6, help="number of one-hour rounds")
    parser.add_argument("--steps", type=int, default=6, help="steps per round")
    args = parser.parse_args(argv)
    sampling = Sampling(args.sample, 3600.0, args.steps, args.rounds)
    stations: tuple[GroundStation, ...] = load_ground_stations(bundled_orbit_file("stations.toml"))
    columns = ("satellites", "stations", "samples", "links", "contacts", "seconds")
    print(f"{'case':36} " + " ".join(f"{column:>10}" for column in columns))
    for case in cases():
        started = time.perf_counter()
        plan = contact_plan(
            case.satellites,
            stations[: case.station_count],
            sampling=sampling,
            max_isl_range_km=case.max_isl_range_km,
        )
        seconds = time.perf_counter() - started
        print(
            f"{case.label:36} {len(case.satellites):>10} {case.station_count:>10} {plan.sample_count:>10} "
            f"{len(plan.links):>10} {plan.contact_count:>10} {seconds:>10.3f}"
        )
    if importlib.util.find_spec("sgp4") is None:
        print("(bundled TLEs skipped: pip install 'flcheck[orbits]' for SGP4)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
