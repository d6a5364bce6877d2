"""Contact plans from orbits: which links of a satellite swarm are up in which rounds and steps.

Satellites (``KeplerOrbit``, ``WalkerShell.orbits()``, ``TleSatellite``; see ``flmodel.orbits_motion``
for elements, propagation, frames and time) are sampled every ``Sampling.sample_seconds`` from the
plan's epoch, over ``rounds`` rounds of ``round_seconds`` each cut into ``steps_per_round`` steps.

Visibility ([Vallado], topocentric elevation and the SIGHT algorithm):

* **satellite – ground station**: with ``ρ = r_sat − r_gs`` in ECEF and ``û`` the station's geodetic
  zenith, the elevation is ``el = arcsin(ρ·û / |ρ|)``; the link is up when ``el ≥`` the station's
  minimum elevation.
* **satellite – satellite** (only when ``max_isl_range_km`` is given): up when the range
  ``|r₂ − r₁| ≤ max_isl_range_km`` and the segment between them clears a sphere of radius
  ``R_E + atmosphere_margin_km``: the closest point of ``r₁ + s(r₂ − r₁)``, ``s ∈ [0, 1]`` to the
  Earth's centre, at ``s* = clip(−r₁·(r₂ − r₁) / |r₂ − r₁|², 0, 1)``, is farther than that radius.

A link is up in a step (a round) when it is up at any sample in it (``up_when="any"``) or at every
sample in it (``up_when="all"``). Rounds and steps are numbered from 1 (step ``k`` of the plan is
step ``(k − 1) mod steps_per_round + 1`` of round ``⌈k / steps_per_round⌉``); satellites and
stations by their 0-based position in the input.

Text output, one line per link, windows merged into ranges::

    contact orbit[3] -- ground in rounds 1, 3;
    contact orbit[3] -- orbit[4] in steps 2..5, 9;

Names come from a naming function of a ``Node``; the default names satellite ``i`` ``orbit[i]``
and the stations ``ground`` (when there is one) or ``gs[k]``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import numpy as np

from flmodel.errors import ModelError
from flmodel.orbits_motion import (
    DEFAULT_EPOCH,
    EARTH_RADIUS_KM,
    GroundStation,
    KeplerOrbit,
    Satellite,
    TleSatellite,
    WalkerShell,
    bundled_orbit_file,
    eci_to_ecef,
    gmst_rad,
    load_ground_stations,
    load_tle_file,
    load_walker_shell,
    require_utc,
)

__all__ = [
    "DEFAULT_EPOCH",
    "ContactPlan",
    "GroundStation",
    "KeplerOrbit",
    "LinkWindows",
    "Node",
    "Sampling",
    "TleSatellite",
    "WalkerShell",
    "bundled_orbit_file",
    "contact_plan",
    "contact_text",
    "default_naming",
    "elevations_deg",
    "format_ranges",
    "line_of_sight_clear",
    "load_ground_stations",
    "load_tle_file",
    "load_walker_shell",
    "parse_contact_text",
]

Unit = Literal["rounds", "steps"]


@dataclass(frozen=True, order=True)
class Node:
    """An end of a link: satellite ``index`` or ground station ``index`` (0-based, input order)."""

    kind: Literal["satellite", "station"]
    index: int


@dataclass(frozen=True)
class Sampling:
    """How a plan is sampled: a sample every ``sample_seconds``; ``rounds`` rounds of
    ``round_seconds``, each of ``steps_per_round`` equal steps; a link is up in a step or round when
    it is up at ``"any"`` or at ``"all"`` of its samples."""

    sample_seconds: float
    round_seconds: float
    steps_per_round: int = 1
    rounds: int = 1
    up_when: Literal["any", "all"] = "any"

    def __post_init__(self) -> None:
        if self.sample_seconds <= 0.0 or self.round_seconds <= 0.0:
            raise ModelError("sampling: the sample time step and the round length must be positive")
        if self.steps_per_round < 1 or self.rounds < 1:
            raise ModelError("sampling: at least one round and one step per round")
        if self.sample_seconds > self.step_seconds:
            raise ModelError(
                f"sampling: sample step {self.sample_seconds} s is longer than a protocol step "
                f"({self.step_seconds} s); every step needs a sample"
            )
        if self.up_when not in ("any", "all"):
            raise ModelError(f"sampling: up_when must be 'any' or 'all', not {self.up_when!r}")

    @property
    def step_seconds(self) -> float:
        return self.round_seconds / self.steps_per_round

    @property
    def duration_seconds(self) -> float:
        return self.round_seconds * self.rounds

    def sample_times(self) -> np.ndarray:
        """Sample times (s from the epoch): ``0, Δt, 2Δt, …`` below the plan's duration."""
        count = math.ceil(self.duration_seconds / self.sample_seconds - 1e-9)
        return np.arange(count, dtype=np.float64) * self.sample_seconds

    def step_of_sample(self, times: np.ndarray) -> np.ndarray:
        """0-based plan step of each sample time."""
        steps = np.floor(times / self.step_seconds + 1e-9).astype(np.int64)
        return np.minimum(steps, self.steps_per_round * self.rounds - 1)


@dataclass(frozen=True)
class LinkWindows:
    """When one link is up: its 1-based ``rounds`` and ``steps``, and its ``passes`` as
    (first, last) sample times in seconds of each run of consecutive up samples."""

    ends: tuple[Node, Node]
    rounds: tuple[int, ...]
    steps: tuple[int, ...]
    passes: tuple[tuple[float, float], ...]

    def numbers(self, unit: Unit) -> tuple[int, ...]:
        return self.rounds if unit == "rounds" else self.steps


@dataclass(frozen=True)
class ContactPlan:
    """The links that are up at least once, in a fixed order (stations first, then inter-satellite
    links, each by node order), with the sampling and the objects they refer to."""

    epoch: datetime
    sampling: Sampling
    satellite_names: tuple[str, ...]
    stations: tuple[GroundStation, ...]
    sample_count: int
    links: tuple[LinkWindows, ...]

    def windows(self, first: Node, second: Node) -> LinkWindows | None:
        """The windows of the link between two nodes (either order), None when it is never up."""
        ends = tuple(sorted((first, second)))
        return next((link for link in self.links if link.ends == ends), None)

    @property
    def contact_count(self) -> int:
        """The number of passes (runs of consecutive up samples) over all links."""
        return sum(len(link.passes) for link in self.links)

    def text(self, unit: Unit = "rounds", naming: Callable[[Node], str] | None = None) -> str:
        return contact_text(self, unit, naming)


def elevations_deg(satellites_ecef: np.ndarray, station: GroundStation) -> np.ndarray:
    """Elevation (degrees) of ECEF positions ``(..., 3)`` seen from ``station``:
    ``arcsin(ρ·û/|ρ|)`` with ``ρ = r − r_gs`` and ``û`` the geodetic zenith."""
    relative = satellites_ecef - station.position_ecef()
    sine = (relative @ station.up_ecef()) / np.linalg.norm(relative, axis=-1)
    return np.degrees(np.arcsin(np.clip(sine, -1.0, 1.0)))


def line_of_sight_clear(first: np.ndarray, second: np.ndarray, radius_km: float) -> np.ndarray:
    """Whether the segments ``first → second`` (positions ``(..., 3)``, Earth-centred) stay outside
    the sphere of ``radius_km`` about the centre ([Vallado], algorithm SIGHT)."""
    chord = second - first
    length2 = np.einsum("...k,...k->...", chord, chord)
    along = -np.einsum("...k,...k->...", first, chord) / np.where(length2 > 0.0, length2, 1.0)
    closest = first + np.clip(along, 0.0, 1.0)[..., None] * chord
    return np.asarray(np.linalg.norm(closest, axis=-1) > radius_km)


def _passes(up: np.ndarray, times: np.ndarray) -> tuple[tuple[float, float], ...]:
    """Runs of consecutive True samples as (first, last) sample times."""
    edges = np.diff(np.concatenate(([0], up.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    return tuple((float(times[s]), float(times[e])) for s, e in zip(starts, ends, strict=True))


def _up_intervals(
    up: np.ndarray, interval_of_sample: np.ndarray, intervals: int, up_when: str
) -> tuple[int, ...]:
    """1-based intervals (steps or rounds) in which ``up`` holds at any / all of their samples."""
    up_count = np.bincount(interval_of_sample, weights=up, minlength=intervals)
    if up_when == "any":
        chosen = up_count > 0
    else:
        chosen = (up_count == np.bincount(interval_of_sample, minlength=intervals)) & (up_count > 0)
    return tuple(int(k) + 1 for k in np.flatnonzero(chosen))


def contact_plan(
    satellites: Sequence[Satellite] | WalkerShell,
    stations: Iterable[GroundStation] = (),
    *,
    sampling: Sampling,
    epoch: datetime = DEFAULT_EPOCH,
    max_isl_range_km: float | None = None,
    atmosphere_margin_km: float = 100.0,
) -> ContactPlan:
    """Sample the satellites and stations and collect the contact plan (see the module docstring).

    Inter-satellite links are considered only when ``max_isl_range_km`` is given; their line of
    sight must clear ``R_E + atmosphere_margin_km``."""
    epoch = require_utc(epoch, "contact plan epoch")
    members: Sequence[Satellite] = satellites.orbits() if isinstance(satellites, WalkerShell) else satellites
    stations = tuple(stations)
    if not members:
        raise ModelError("contact plan: no satellites")
    if max_isl_range_km is not None and max_isl_range_km <= 0.0:
        raise ModelError("contact plan: the maximum inter-satellite range must be positive")
    times = sampling.sample_times()
    step_of_sample = sampling.step_of_sample(times)
    round_of_sample = step_of_sample // sampling.steps_per_round
    total_steps = sampling.steps_per_round * sampling.rounds

    def windows(ends: tuple[Node, Node], up: np.ndarray) -> LinkWindows:
        return LinkWindows(
            ends=ends,
            rounds=_up_intervals(up, round_of_sample, sampling.rounds, sampling.up_when),
            steps=_up_intervals(up, step_of_sample, total_steps, sampling.up_when),
            passes=_passes(up, times),
        )

    eci = np.stack([member.positions_eci(epoch, times) for member in members])  # (satellites, samples, 3)
    found: list[LinkWindows] = []
    if stations:
        ecef = eci_to_ecef(eci, gmst_rad(epoch, times))
        for k, station in enumerate(stations):
            visible = elevations_deg(ecef, station) >= station.min_elevation_deg
            found.extend(
                windows((Node("satellite", int(i)), Node("station", k)), visible[i])
                for i in np.flatnonzero(visible.any(axis=1))
            )
    if max_isl_range_km is not None:
        clear_radius = EARTH_RADIUS_KM + atmosphere_margin_km
        for i in range(len(members) - 1):
            others = eci[i + 1 :]
            chord = others - eci[i]
            up = np.einsum("...k,...k->...", chord, chord) <= max_isl_range_km**2
            # the line-of-sight test only where the range allows a link (most pairs are far apart)
            which_other, which_sample = np.nonzero(up)
            up[which_other, which_sample] = line_of_sight_clear(
                eci[i, which_sample], others[which_other, which_sample], clear_radius
            )
            found.extend(
                windows((Node("satellite", i), Node("satellite", i + 1 + int(j))), up[j])
                for j in np.flatnonzero(up.any(axis=1))
            )
    return ContactPlan(
        epoch=epoch,
        sampling=sampling,
        satellite_names=tuple(member.name for member in members),
        stations=stations,
        sample_count=int(times.size),
        links=tuple(found),
    )


def default_naming(station_count: int) -> Callable[[Node], str]:
    """``orbit[i]`` for satellite ``i``; ``ground`` for a single station, else ``gs[k]``."""

    def name(node: Node) -> str:
        if node.kind == "satellite":
            return f"orbit[{node.index}]"
        return "ground" if station_count == 1 else f"gs[{node.index}]"

    return name


def format_ranges(numbers: Iterable[int]) -> str:
    """Sorted numbers with runs of two or more merged: ``[1, 2, 3, 5]`` → ``"1..3, 5"``."""
    ordered = sorted(set(numbers))
    parts: list[str] = []
    start = 0
    for k in range(1, len(ordered) + 1):
        if k == len(ordered) or ordered[k] != ordered[k - 1] + 1:
            first, last = ordered[start], ordered[k - 1]
            parts.append(str(first) if first == last else f"{first}..{last}")
            start = k
    return ", ".join(parts)


def contact_text(
    plan: ContactPlan, unit: Unit = "rounds", naming: Callable[[Node], str] | None = None
) -> str:
    """The plan as scenario lines, one per link that is up in some round (``unit="rounds"``) or step
    (``unit="steps"``): ``contact A -- B in rounds 1..3, 5;`` (satellite end first)."""
    if unit not in ("rounds", "steps"):
        raise ModelError(f"contact text: unit must be 'rounds' or 'steps', not {unit!r}")
    name = naming or default_naming(len(plan.stations))
    lines = [
        f"contact {name(link.ends[0])} -- {name(link.ends[1])} in {unit} {format_ranges(link.numbers(unit))};"
        for link in plan.links
        if link.numbers(unit)
    ]
    return "".join(line + "\n" for line in lines)


_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:\[[0-9]+\])?"
_NUMBER_OR_RANGE = r"[0-9]+(?:\s*\.\.\s*[0-9]+)?"
_CONTACT_LINE = re.compile(
    rf"^\s*contact\s+({_NAME})\s*--\s*({_NAME})\s+in\s+(rounds|steps)\s+"
    rf"({_NUMBER_OR_RANGE}(?:\s*,\s*{_NUMBER_OR_RANGE})*)\s*;\s*$"
)


def parse_contact_text(text: str) -> dict[tuple[str, str], tuple[Unit, tuple[int, ...]]]:
    """Read back ``contact_text``'s lines: ``(name, name) → (unit, sorted numbers)``. Blank lines and
    ``#`` comments are skipped; anything else, or a link given twice, is a ``ModelError``."""
    parsed: dict[tuple[str, str], tuple[Unit, tuple[int, ...]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _CONTACT_LINE.match(line)
        if match is None:
            raise ModelError(
                f"contact line {number}: not of the form 'contact A -- B in rounds|steps 1..3, 5;'"
            )
        first, second, unit, ranges = match.groups()
        values: set[int] = set()
        for part in ranges.split(","):
            low, _, high = part.partition("..")
            low_value, high_value = int(low), int(high or low)
            if high_value < low_value:
                raise ModelError(f"contact line {number}: empty range {part.strip()}")
            values.update(range(low_value, high_value + 1))
        if (first, second) in parsed:
            raise ModelError(f"contact line {number}: link {first} -- {second} given twice")
        parsed[(first, second)] = ("rounds" if unit == "rounds" else "steps", tuple(sorted(values)))
    return parsed
