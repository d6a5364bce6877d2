"""flmodel.orbits: contact plans from Walker shells and TLEs, checked against closed forms.

The expected values here are derived in the tests from spherical geometry and Kepler's third law
(not from the code's propagation): the visibility window of an equatorial orbit over an equatorial
station, the node and phase spacing of a Walker-delta shell [Walker84], GMST at J2000 [Vallado].
"""

from __future__ import annotations

import math
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import numpy as np
import pytest

from flmodel.errors import ModelError
from flmodel.orbits import (
    ContactPlan,
    GroundStation,
    KeplerOrbit,
    Node,
    Sampling,
    TleSatellite,
    WalkerShell,
    bundled_orbit_file,
    contact_plan,
    contact_text,
    default_naming,
    elevations_deg,
    format_ranges,
    load_ground_stations,
    load_tle_file,
    load_walker_shell,
    parse_contact_text,
)
from flmodel.orbits_motion import DEFAULT_EPOCH, gmst_rad
from flmodel.orbits_plot import plot_contact_windows

MU = 398600.4418  # km³/s², WGS-84
RADIUS = 6378.137  # km, WGS-84 equatorial radius
J2 = 1.08262668e-3  # Earth's second zonal harmonic [Vallado]
EARTH_RATE = 7.2921158553e-5  # rad/s, the rate of GMST (IAU-82)
J2000 = datetime(2000, 1, 1, 12, tzinfo=UTC)
GMST_AT_J2000_DEG = 280.46061837  # the IAU-82 GMST of [Vallado] at T = 0 (67310.54841 s of time)


def test_gmst_at_j2000_and_its_rate() -> None:
    gmst = gmst_rad(J2000, np.array([0.0, 86400.0]))
    assert math.degrees(gmst[0]) == pytest.approx(GMST_AT_J2000_DEG, abs=1e-6)
    # one solar day later the sidereal angle is ahead by 360° · 0.00273790935 (≈ 0.9856°)
    advance = math.degrees(gmst[1] - gmst[0]) % 360.0
    assert advance == pytest.approx(360.0 * 0.00273790935, abs=1e-6)


def test_equatorial_pass_over_an_equatorial_station_matches_the_closed_form() -> None:
    altitude, min_elevation = 800.0, 10.0
    a = RADIUS + altitude
    n = math.sqrt(MU / a**3)
    elevation = math.radians(min_elevation)
    # Central angle between the sub-satellite point and the station at which el = min elevation.
    half_width = math.acos(RADIUS / a * math.cos(elevation)) - elevation
    relative_rate = n - EARTH_RATE  # the sub-satellite point moves east at n − ω_E over the equator
    lead = math.radians(20.0)  # the satellite starts 20° west of the visibility circle
    station_longitude = 0.0
    # ECEF longitude of the satellite: u₀ + (n − ω_E) t − θ_GMST(0); choose u₀ for the lead above.
    start_argument = math.radians(GMST_AT_J2000_DEG + station_longitude) - half_width - lead
    orbit = KeplerOrbit("eq", a, 0.0, 0.0, 0.0, 0.0, math.degrees(start_argument) % 360.0, epoch=J2000)
    station = GroundStation("quito-ish", 0.0, station_longitude, 0.0, min_elevation)
    sample = 10.0
    synodic = 2.0 * math.pi / relative_rate
    sampling = Sampling(sample_seconds=sample, round_seconds=7200.0, steps_per_round=4, rounds=2)
    plan = contact_plan([orbit], [station], sampling=sampling, epoch=J2000)
    link = plan.windows(Node("satellite", 0), Node("station", 0))
    assert link is not None
    expected = []
    for k in range(3):
        start = (lead + k * 2.0 * math.pi) / relative_rate
        end = start + 2.0 * half_width / relative_rate
        if end < sampling.duration_seconds:
            expected.append((start, end))
    assert len(expected) == 3 and expected[1][0] - expected[0][0] == pytest.approx(synodic)
    assert len(link.passes) == len(expected)
    for (first, last), (start, end) in zip(link.passes, expected, strict=True):
        assert abs(first - start) <= sample and abs(last - end) <= sample


def _wrap_deg(angle: float) -> float:
    """An angle difference in [-180°, 180°)."""
    return (angle + 180.0) % 360.0 - 180.0


def _argument_of_latitude_deg(position: np.ndarray, raan: float, inclination: float) -> float:
    """u from an ECI position on a circular orbit with known node and inclination."""
    node_direction = np.array([math.cos(raan), math.sin(raan), 0.0])
    along = position @ node_direction
    up = position[2] / math.sin(inclination)
    return math.degrees(math.atan2(up, along)) % 360.0


def test_walker_delta_geometry() -> None:
    shell = WalkerShell.from_notation("53:12/3/1", 550.0)
    assert (shell.total, shell.planes, shell.phasing, shell.inclination_deg) == (12, 3, 1, 53.0)
    assert shell.notation == "53:12/3/1"
    a = RADIUS + 550.0
    period = 2.0 * math.pi * math.sqrt(a**3 / MU)  # Kepler's third law
    times = np.array([0.0, 0.1, 1000.0, period])
    positions = {
        orbit_index: orbit.positions_eci(shell.epoch, times)
        for orbit_index, orbit in enumerate(shell.orbits())
    }
    raans, phases = [], []
    for index, track in positions.items():
        np.testing.assert_allclose(np.linalg.norm(track, axis=1), a, rtol=1e-12)
        np.testing.assert_allclose(track[-1], track[0], atol=1e-6 * a)  # back after one period
        assert shell.orbits()[index].period_s == pytest.approx(period, rel=1e-12)
        normal = np.cross(track[0], track[1])
        normal /= np.linalg.norm(normal)
        assert math.degrees(math.acos(normal[2])) == pytest.approx(53.0, abs=1e-9)
        raan = math.atan2(normal[0], -normal[1])
        raans.append(math.degrees(raan) % 360.0)
        phases.append(_argument_of_latitude_deg(track[0], raan, math.radians(53.0)))
    per_plane = 4
    for index in range(12):
        plane, slot = divmod(index, per_plane)
        assert _wrap_deg(raans[index] - plane * 360.0 / 3) == pytest.approx(0.0, abs=1e-7)
        expected_u = (slot * 360.0 / per_plane + plane * 1 * 360.0 / 12) % 360.0
        assert _wrap_deg(phases[index] - expected_u) == pytest.approx(0.0, abs=1e-7)


@pytest.mark.parametrize("notation", ["53:12/5/1", "53:12/3/3", "53-12-3-1", "53:0/1/0"])
def test_walker_rejects_bad_shells(notation: str) -> None:
    with pytest.raises(ModelError):
        WalkerShell.from_notation(notation, 550.0)


def test_bundled_files_load() -> None:
    shell = load_walker_shell(bundled_orbit_file("walker_53_12_3_1.toml"))
    assert shell == WalkerShell.from_notation("53:12/3/1", 550.0, epoch=DEFAULT_EPOCH)
    stations = load_ground_stations(bundled_orbit_file("stations.toml"))
    assert [s.name for s in stations] == ["kiruna", "toulouse", "hartebeesthoek"]
    satellites = load_tle_file(bundled_orbit_file("example.tle"))
    assert [s.name for s in satellites] == ["FLSAT-1", "FLSAT-2", "FLSAT-3", "FLSAT-4"]
    assert all(s.epoch == DEFAULT_EPOCH for s in satellites)
    assert satellites[0].bstar == pytest.approx(3e-5)


def test_tle_checksum_and_format_are_checked() -> None:
    good = load_tle_file(bundled_orbit_file("example.tle"))[0]
    broken = good.line2[:68] + str((int(good.line2[68]) + 1) % 10)
    with pytest.raises(ModelError, match="checksum"):
        TleSatellite.from_lines(good.line1, broken)
    with pytest.raises(ModelError, match="69 characters"):
        TleSatellite.from_lines(good.line1[:60], good.line2)


def test_sgp4_and_kepler_agree_over_one_orbit() -> None:
    pytest.importorskip("sgp4")
    for satellite in load_tle_file(bundled_orbit_file("example.tle")):
        kepler = satellite.kepler_orbit()
        a = kepler.semi_major_axis_km
        times = np.linspace(0.0, kepler.period_s, 400)
        sgp4_track = satellite.positions_eci(DEFAULT_EPOCH, times)
        kepler_track = kepler.positions_eci(DEFAULT_EPOCH, times)
        # The two-body model omits J2, whose relative size is κ = (3/2) J2 (R/a)² (≈ 1.4e-3 in LEO):
        # SGP4's short-period terms move the osculating position by O(κ a) (≈ 10 km) and the
        # secular drift of node, perigee and mean anomaly, O(κ n) per unit time, accumulates O(2π κ a)
        # along one orbit (drag over one orbit is metres at these B*). Tolerance: (1 + 2π) κ a ≈ 70 km,
        # 0.16 % of the ≈ 43,000 km travelled.
        kappa = 1.5 * J2 * (RADIUS / a) ** 2
        distance = np.linalg.norm(sgp4_track - kepler_track, axis=1)
        assert distance.max() < (1.0 + 2.0 * math.pi) * kappa * a
        radius_gap = np.abs(np.linalg.norm(sgp4_track, axis=1) - np.linalg.norm(kepler_track, axis=1))
        assert radius_gap.max() < kappa * a


def test_missing_sgp4_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    satellite = load_tle_file(bundled_orbit_file("example.tle"))[0]
    monkeypatch.setitem(sys.modules, "sgp4", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'flcheck\[orbits\]'"):
        satellite.positions_eci(DEFAULT_EPOCH, np.array([0.0]))


def test_elevation_overhead_and_at_the_horizon() -> None:
    station = GroundStation("s", 30.0, 45.0)
    zenith = station.position_ecef() + 500.0 * station.up_ecef()
    assert elevations_deg(zenith, station) == pytest.approx(90.0)
    east = np.array([-math.sin(math.radians(45.0)), math.cos(math.radians(45.0)), 0.0])
    assert elevations_deg(station.position_ecef() + 100.0 * east, station) == pytest.approx(0.0, abs=1e-9)


def _shell_plan(max_isl_range_km: float | None = None) -> tuple[WalkerShell, Sampling, ContactPlan]:
    shell = load_walker_shell(bundled_orbit_file("walker_53_12_3_1.toml"))
    toulouse = load_ground_stations(bundled_orbit_file("stations.toml"))[1]
    sampling = Sampling(sample_seconds=20.0, round_seconds=3600.0, steps_per_round=6, rounds=6)
    return (
        shell,
        sampling,
        contact_plan(shell, [toulouse], sampling=sampling, max_isl_range_km=max_isl_range_km),
    )


def test_twelve_satellite_shell_gives_ground_windows() -> None:
    shell, _, plan = _shell_plan()
    assert plan.sample_count == 6 * 3600 / 20
    assert plan.links and all(link.ends[1] == Node("station", 0) for link in plan.links)
    a = RADIUS + shell.altitude_km
    elevation = math.radians(10.0)
    half_width = math.acos(RADIUS / a * math.cos(elevation)) - elevation
    # The ground track moves at least n − ω_E relative to the station, along a chord of the
    # visibility circle (at most 2ψ long): an upper bound on a pass.
    longest = 2.0 * half_width / (math.sqrt(MU / a**3) - EARTH_RATE)
    for link in plan.links:
        for first, last in link.passes:
            assert 0.0 <= last - first <= longest
        for step in link.steps:
            assert 1 <= step <= 36 and (step - 1) // 6 + 1 in link.rounds
        assert set(link.rounds) == {(step - 1) // 6 + 1 for step in link.steps}


def test_all_samples_is_stricter_than_any_sample() -> None:
    _, _, any_plan = _shell_plan()
    shell = load_walker_shell(bundled_orbit_file("walker_53_12_3_1.toml"))
    toulouse = load_ground_stations(bundled_orbit_file("stations.toml"))[1]
    strict = Sampling(20.0, 3600.0, 6, 6, up_when="all")
    all_plan = contact_plan(shell, [toulouse], sampling=strict)
    for link in all_plan.links:
        loose = any_plan.windows(*link.ends)
        assert loose is not None and set(link.steps) <= set(loose.steps) and link.passes == loose.passes
        assert not link.rounds  # no 10-minute pass fills an hour


def test_inter_satellite_links_need_range_and_line_of_sight() -> None:
    a = RADIUS + 550.0
    neighbours = [KeplerOrbit(f"s{k}", a, 0.0, 53.0, 0.0, 0.0, u) for k, u in enumerate((0.0, 30.0, 180.0))]
    chord = 2.0 * a * math.sin(math.radians(15.0))
    sampling = Sampling(60.0, 600.0, 2, 3)
    plan = contact_plan(neighbours, sampling=sampling, max_isl_range_km=chord + 1.0)
    near = plan.windows(Node("satellite", 0), Node("satellite", 1))
    assert near is not None and near.steps == tuple(range(1, 7)) and near.passes == ((0.0, 1740.0),)
    assert plan.windows(Node("satellite", 0), Node("satellite", 2)) is None
    far = contact_plan(neighbours, sampling=sampling, max_isl_range_km=3.0 * a)  # range is no limit
    assert far.windows(Node("satellite", 0), Node("satellite", 2)) is None  # the Earth is in the way
    assert far.windows(Node("satellite", 1), Node("satellite", 0)) is not None
    short = contact_plan(neighbours, sampling=sampling, max_isl_range_km=chord - 1.0)
    assert not short.links


@pytest.mark.parametrize("unit", ["rounds", "steps"])
def test_contact_text_parses_back(unit: Literal["rounds", "steps"]) -> None:
    _, _, plan = _shell_plan(max_isl_range_km=4000.0)
    name = default_naming(len(plan.stations))
    text = contact_text(plan, unit)
    assert text.splitlines()[0].startswith("contact orbit[")
    assert " -- ground in " in text and "orbit[" in text.split(" -- ", 2)[1]
    expected = {
        (name(link.ends[0]), name(link.ends[1])): (unit, link.numbers(unit))
        for link in plan.links
        if link.numbers(unit)
    }
    assert parse_contact_text(text) == expected


def test_format_and_parse_ranges() -> None:
    assert format_ranges([5, 1, 2, 3, 9, 10]) == "1..3, 5, 9..10"
    assert format_ranges([4]) == "4"
    text = (
        "contact orbit[3] -- ground in rounds 1, 3;\n# a comment\ncontact orbit[3] -- gs[1] in steps 2..5;\n"
    )
    assert parse_contact_text(text) == {
        ("orbit[3]", "ground"): ("rounds", (1, 3)),
        ("orbit[3]", "gs[1]"): ("steps", (2, 3, 4, 5)),
    }
    for bad in ("contact a -- b in rounds;", "contact a -- b in hours 1;", "contact a -- b in steps 3..1;"):
        with pytest.raises(ModelError):
            parse_contact_text(bad)


def test_naming_function_is_used() -> None:
    _, _, plan = _shell_plan()
    text = plan.text("steps", naming=lambda node: f"{node.kind}{node.index}")
    assert text.startswith("contact satellite") and "-- station0 in steps" in text


def test_sampling_is_validated() -> None:
    with pytest.raises(ModelError):
        Sampling(sample_seconds=700.0, round_seconds=3600.0, steps_per_round=6)
    with pytest.raises(ModelError):
        contact_plan([], sampling=Sampling(10.0, 100.0))
    with pytest.raises(ModelError):
        contact_plan(
            WalkerShell.from_notation("53:4/2/1", 550.0),
            sampling=Sampling(10.0, 100.0),
            epoch=datetime(2024, 1, 1),
        )


def test_plot_returns_a_figure(tmp_path: Path) -> None:
    _, _, plan = _shell_plan(max_isl_range_km=4000.0)
    figure = plot_contact_windows(plan)
    (axes,) = figure.axes
    assert len(axes.get_yticklabels()) == len(plan.links)
    figure.savefig(tmp_path / "windows.png")
    assert (tmp_path / "windows.png").stat().st_size > 0
