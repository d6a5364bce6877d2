"""Where satellites and ground stations are: orbital elements, propagation, time and frames.

Frames and time
---------------
* **ECI** is the inertial frame of the orbital elements: Earth-centred, z along the true equator's
  pole, x towards the mean equinox of date. SGP4 returns positions in TEME (true equator, mean
  equinox) and the two-body propagator's elements are read in the same frame; precession and
  nutation between epochs are ignored, which is far below the accuracy a contact plan needs.
* **ECEF** is Earth-fixed: ``r_ecef = R3(θ_GMST) · r_eci``, the rotation about z by the Greenwich
  mean sidereal time (the IAU-82 formula of [Vallado], with UT1 taken equal to UTC; polar motion ignored,
  so ECEF here is Vallado's pseudo-Earth-fixed frame PEF, the frame TEME rotates into by GMST)::

      T = (JD_UT1 − 2451545.0) / 36525
      θ_GMST = 67310.54841 s + (876600 h + 8640184.812866 s) T + 0.093104 s T² − 6.2e−6 s T³

* **Time** is seconds since an epoch, a timezone-aware UTC ``datetime`` (leap seconds ignored);
  ``DEFAULT_EPOCH`` (2024-03-20 00:00 UTC, the epoch of the bundled element sets) keeps results
  reproducible.
* **Earth**: WGS-84 constants; ground stations are geodetic (latitude, longitude, height on the
  ellipsoid, [Vallado] algorithm SITE), lines of sight use a sphere of the equatorial radius.

Propagation
-----------
* ``KeplerOrbit``: two-body (Keplerian) motion, J2 and every other perturbation omitted. Kepler's
  third law gives the mean motion ``n = √(μ/a³)`` and the period ``2π/n``; the mean anomaly
  ``M = M₀ + n·(t − t₀)`` is solved for the eccentric anomaly with Newton's method on Kepler's
  equation ``M = E − e·sin E``, and the perifocal position ``(a(cos E − e), a√(1−e²) sin E)`` is
  rotated to ECI by ``R3(−Ω)·R1(−i)·R3(−ω)`` ([Vallado] algorithms KEPEQTNE and COE2RV).
* ``WalkerShell``: a Walker-delta constellation ``i:T/P/F`` ([Walker84]): ``T`` satellites on circular
  orbits of one altitude and inclination in ``P`` planes whose ascending nodes are spaced ``360°/P``;
  the ``S = T/P`` satellites of a plane are spaced ``360°/S`` in argument of latitude, and plane
  ``p`` is shifted by ``p·F·360°/T``.
* ``TleSatellite``: a two-line element set, propagated with SGP4 by the ``sgp4`` package (the
  optional extra ``flcheck[orbits]``); its mean elements also give a ``KeplerOrbit`` without it.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Protocol

import numpy as np
from flcheck_spec import resource

from flmodel.errors import ModelError

MU_EARTH_KM3_S2 = 398600.4418
"""Earth's gravitational parameter μ (WGS-84), km³/s²."""
EARTH_RADIUS_KM = 6378.137
"""Earth's equatorial radius (WGS-84), km."""
EARTH_FLATTENING = 1.0 / 298.257223563
"""Earth's flattening (WGS-84)."""
EARTH_ROTATION_RAD_S = 7.292115146706979e-5
"""Earth's sidereal rotation rate ω_E ([Vallado]), rad/s."""
J2000 = datetime(2000, 1, 1, 12, 0, 0, tzinfo=UTC)
"""The epoch J2000.0 (Julian date 2451545.0), read as UTC."""
J2000_JULIAN_DATE = 2451545.0
DEFAULT_EPOCH = datetime(2024, 3, 20, 0, 0, 0, tzinfo=UTC)
"""The epoch of the bundled element sets; the default epoch of contact plans."""

SGP4_EXTRA_HINT = "pip install 'flcheck[orbits]'"


class Satellite(Protocol):
    """Anything that can say where it is: ECI positions (km, shape ``(len(seconds), 3)``) at
    ``seconds`` after ``epoch``."""

    @property
    def name(self) -> str: ...

    def positions_eci(self, epoch: datetime, seconds: np.ndarray) -> np.ndarray: ...


def require_utc(moment: datetime, what: str) -> datetime:
    """``moment`` as UTC; a naive datetime is an error (its time zone would be a guess)."""
    if moment.tzinfo is None:
        raise ModelError(f"{what} must be timezone-aware (UTC), got {moment.isoformat()}")
    return moment.astimezone(UTC)


def days_since_j2000(epoch: datetime, seconds: np.ndarray) -> np.ndarray:
    """Days from J2000.0 to ``seconds`` after ``epoch`` (float64, exact to microseconds at the epoch)."""
    offset = (require_utc(epoch, "epoch") - J2000) / timedelta(days=1)
    return offset + np.asarray(seconds, dtype=np.float64) / 86400.0


def gmst_rad(epoch: datetime, seconds: np.ndarray) -> np.ndarray:
    """Greenwich mean sidereal time (IAU-82, [Vallado]) in radians in [0, 2π)."""
    days = days_since_j2000(epoch, seconds)
    centuries = days / 36525.0
    # 876600 h·3600 s/h · T is 86400 s · 36525 T = 86400 s · days: keep that term as whole turns
    # plus a fraction, so that large day counts keep their precision.
    fraction_of_day = days - np.floor(days)
    seconds_of_time = (
        67310.54841
        + 86400.0 * fraction_of_day
        + 8640184.812866 * centuries
        + 0.093104 * centuries**2
        - 6.2e-6 * centuries**3
    )
    return np.mod(seconds_of_time, 86400.0) * (2.0 * math.pi / 86400.0)


def eci_to_ecef(positions: np.ndarray, gmst: np.ndarray) -> np.ndarray:
    """Rotate ECI positions (``(..., n, 3)``) to ECEF by ``R3(θ)`` with θ the GMST of each of the
    ``n`` times: ``x' = cos θ x + sin θ y``, ``y' = −sin θ x + cos θ y``, ``z' = z``."""
    cos_t, sin_t = np.cos(gmst), np.sin(gmst)
    x, y, z = positions[..., 0], positions[..., 1], positions[..., 2]
    return np.stack([cos_t * x + sin_t * y, -sin_t * x + cos_t * y, z], axis=-1)


@dataclass(frozen=True)
class GroundStation:
    """A ground station: geodetic latitude and longitude (degrees, east positive), height above the
    WGS-84 ellipsoid (km) and the minimum elevation (degrees) at which it sees a satellite."""

    name: str
    latitude_deg: float
    longitude_deg: float
    altitude_km: float = 0.0
    min_elevation_deg: float = 10.0

    def __post_init__(self) -> None:
        if not -90.0 <= self.latitude_deg <= 90.0:
            raise ModelError(f"station {self.name}: latitude {self.latitude_deg} outside [-90, 90]")
        if not -90.0 <= self.min_elevation_deg <= 90.0:
            raise ModelError(
                f"station {self.name}: minimum elevation {self.min_elevation_deg} outside [-90, 90]"
            )

    def position_ecef(self) -> np.ndarray:
        """ECEF position (km), [Vallado] algorithm SITE: ``C = a/√(1 − e² sin²φ)``, ``S = C(1 − e²)``,
        ``r = ((C+h) cos φ cos λ, (C+h) cos φ sin λ, (S+h) sin φ)``."""
        lat, lon = math.radians(self.latitude_deg), math.radians(self.longitude_deg)
        e2 = EARTH_FLATTENING * (2.0 - EARTH_FLATTENING)
        c = EARTH_RADIUS_KM / math.sqrt(1.0 - e2 * math.sin(lat) ** 2)
        s = c * (1.0 - e2)
        h = self.altitude_km
        return np.array(
            [
                (c + h) * math.cos(lat) * math.cos(lon),
                (c + h) * math.cos(lat) * math.sin(lon),
                (s + h) * math.sin(lat),
            ]
        )

    def up_ecef(self) -> np.ndarray:
        """The local vertical: the unit normal of the ellipsoid at the station (geodetic zenith)."""
        lat, lon = math.radians(self.latitude_deg), math.radians(self.longitude_deg)
        return np.array([math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat)])


def solve_kepler(mean_anomaly: np.ndarray, eccentricity: float) -> np.ndarray:
    """The eccentric anomaly E with ``M = E − e·sin E`` (Newton's method, vectorised; elliptic e < 1)."""
    if not 0.0 <= eccentricity < 1.0:
        raise ModelError(f"eccentricity {eccentricity} is not elliptic (0 <= e < 1)")
    mean = np.mod(mean_anomaly, 2.0 * math.pi)
    eccentric = mean + eccentricity * np.sin(mean) if eccentricity < 0.8 else np.full_like(mean, math.pi)
    for _ in range(50):
        step = (eccentric - eccentricity * np.sin(eccentric) - mean) / (
            1.0 - eccentricity * np.cos(eccentric)
        )
        eccentric = eccentric - step
        if float(np.max(np.abs(step), initial=0.0)) < 1e-13:
            return np.asarray(eccentric)
    raise ModelError(f"Kepler's equation did not converge for e = {eccentricity}")


@dataclass(frozen=True)
class KeplerOrbit:
    """Classical orbital elements at ``epoch`` for two-body propagation (no J2, no drag). Angles in
    degrees, the semi-major axis in km; ``mean_anomaly_deg`` is M₀ at the epoch. For a circular
    orbit (e = 0) the argument of perigee is conventionally 0 and M₀ is the argument of latitude."""

    name: str
    semi_major_axis_km: float
    eccentricity: float
    inclination_deg: float
    raan_deg: float
    arg_perigee_deg: float
    mean_anomaly_deg: float
    epoch: datetime = DEFAULT_EPOCH

    def __post_init__(self) -> None:
        if not 0.0 <= self.eccentricity < 1.0:
            raise ModelError(f"orbit {self.name}: eccentricity {self.eccentricity} is not elliptic")
        if self.semi_major_axis_km * (1.0 - self.eccentricity) <= EARTH_RADIUS_KM:
            raise ModelError(f"orbit {self.name}: perigee below the Earth's surface")
        require_utc(self.epoch, f"orbit {self.name}: epoch")

    @property
    def mean_motion_rad_s(self) -> float:
        """Kepler's third law: ``n = √(μ/a³)``."""
        return math.sqrt(MU_EARTH_KM3_S2 / self.semi_major_axis_km**3)

    @property
    def period_s(self) -> float:
        """The orbital period ``2π/n = 2π·√(a³/μ)``."""
        return 2.0 * math.pi / self.mean_motion_rad_s

    def positions_eci(self, epoch: datetime, seconds: np.ndarray) -> np.ndarray:
        """ECI positions (km) at ``seconds`` after ``epoch`` (COE2RV, see the module docstring)."""
        since_elements = (require_utc(epoch, "epoch") - self.epoch) / timedelta(seconds=1)
        elapsed = since_elements + np.asarray(seconds, dtype=np.float64)
        mean = math.radians(self.mean_anomaly_deg) + self.mean_motion_rad_s * elapsed
        e, a = self.eccentricity, self.semi_major_axis_km
        eccentric = solve_kepler(mean, e)
        x_perifocal = a * (np.cos(eccentric) - e)
        y_perifocal = a * math.sqrt(1.0 - e * e) * np.sin(eccentric)
        raan, inc = math.radians(self.raan_deg), math.radians(self.inclination_deg)
        argp = math.radians(self.arg_perigee_deg)
        cos_o, sin_o, cos_w, sin_w = math.cos(raan), math.sin(raan), math.cos(argp), math.sin(argp)
        cos_i, sin_i = math.cos(inc), math.sin(inc)
        towards_perigee = np.array(
            [cos_o * cos_w - sin_o * sin_w * cos_i, sin_o * cos_w + cos_o * sin_w * cos_i, sin_w * sin_i]
        )
        in_plane_normal = np.array(
            [-cos_o * sin_w - sin_o * cos_w * cos_i, -sin_o * sin_w + cos_o * cos_w * cos_i, cos_w * sin_i]
        )
        return np.asarray(np.outer(x_perifocal, towards_perigee) + np.outer(y_perifocal, in_plane_normal))


_WALKER_NOTATION = re.compile(r"^\s*([0-9.]+)\s*°?\s*:\s*(\d+)\s*/\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class WalkerShell:
    """A Walker-delta shell ``i:T/P/F`` ([Walker84]) of circular orbits at ``altitude_km`` above the
    equatorial radius. ``raan0_deg`` and ``phase0_deg`` place plane 0's node and its first satellite;
    satellite ``k = p·S + s`` is slot ``s`` of plane ``p`` (both from 0)."""

    total: int
    planes: int
    phasing: int
    altitude_km: float
    inclination_deg: float
    raan0_deg: float = 0.0
    phase0_deg: float = 0.0
    epoch: datetime = DEFAULT_EPOCH

    def __post_init__(self) -> None:
        if self.total < 1 or self.planes < 1 or self.total % self.planes:
            raise ModelError(
                f"Walker shell: T = {self.total} satellites do not split into P = {self.planes} planes"
            )
        if not 0 <= self.phasing < self.planes:
            raise ModelError(f"Walker shell: phasing F = {self.phasing} outside 0 .. P-1 = {self.planes - 1}")
        if self.altitude_km <= 0.0:
            raise ModelError(f"Walker shell: altitude {self.altitude_km} km is not above the surface")
        require_utc(self.epoch, "Walker shell: epoch")

    @classmethod
    def from_notation(
        cls,
        notation: str,
        altitude_km: float,
        *,
        raan0_deg: float = 0.0,
        phase0_deg: float = 0.0,
        epoch: datetime = DEFAULT_EPOCH,
    ) -> WalkerShell:
        """A shell from Walker's notation ``"i:T/P/F"``, e.g. ``"53:12/3/1"``."""
        match = _WALKER_NOTATION.match(notation)
        if match is None:
            raise ModelError(f"Walker notation {notation!r} is not of the form i:T/P/F (e.g. 53:12/3/1)")
        inclination, total, planes, phasing = match.groups()
        return cls(
            int(total),
            int(planes),
            int(phasing),
            altitude_km,
            float(inclination),
            raan0_deg,
            phase0_deg,
            epoch,
        )

    @property
    def notation(self) -> str:
        return f"{self.inclination_deg:g}:{self.total}/{self.planes}/{self.phasing}"

    @property
    def per_plane(self) -> int:
        return self.total // self.planes

    def orbits(self) -> tuple[KeplerOrbit, ...]:
        """The ``T`` circular orbits: plane ``p`` has node ``Ω₀ + p·360°/P``; slot ``s`` has argument
        of latitude ``u₀ + s·360°/S + p·F·360°/T`` at the epoch."""
        radius = EARTH_RADIUS_KM + self.altitude_km
        orbits = []
        for plane in range(self.planes):
            for slot in range(self.per_plane):
                orbits.append(
                    KeplerOrbit(
                        name=f"walker-{plane}-{slot}",
                        semi_major_axis_km=radius,
                        eccentricity=0.0,
                        inclination_deg=self.inclination_deg,
                        raan_deg=(self.raan0_deg + plane * 360.0 / self.planes) % 360.0,
                        arg_perigee_deg=0.0,
                        mean_anomaly_deg=(
                            self.phase0_deg
                            + slot * 360.0 / self.per_plane
                            + plane * self.phasing * 360.0 / self.total
                        )
                        % 360.0,
                        epoch=self.epoch,
                    )
                )
        return tuple(orbits)


def _tle_checksum(line: str) -> int:
    """The modulo-10 checksum of a TLE line: the sum of its digits, a minus sign counting 1."""
    return sum(int(ch) if ch.isdigit() else ch == "-" for ch in line[:68]) % 10


def _tle_exponent_field(field: str) -> float:
    """A TLE field with an assumed decimal point and an exponent, e.g. ``" 30000-4"`` = 0.30000e-4."""
    text = field.strip()
    if not text:
        return 0.0
    sign = -1.0 if text[0] == "-" else 1.0
    text = text.lstrip("+-")
    mantissa, exponent = text[:-2], text[-2:]
    return sign * float(f"0.{mantissa}") * 10.0 ** int(exponent)


@dataclass(frozen=True)
class TleSatellite:
    """A satellite given by a two-line element set (the NORAD format, [Vallado]). The parsed
    mean elements are kept beside the lines; propagation uses SGP4 (``sgp4`` package)."""

    name: str
    line1: str
    line2: str
    epoch: datetime
    inclination_deg: float
    raan_deg: float
    eccentricity: float
    arg_perigee_deg: float
    mean_anomaly_deg: float
    mean_motion_rev_day: float
    bstar: float

    @classmethod
    def from_lines(cls, line1: str, line2: str, name: str | None = None) -> TleSatellite:
        """Parse and check (line numbers, lengths, checksums, matching catalogue numbers) one set."""
        line1, line2 = line1.rstrip(), line2.rstrip()
        label = name or line1[2:7].strip() or "TLE"
        for number, line in (("1", line1), ("2", line2)):
            if len(line) != 69 or not line.startswith(number + " "):
                raise ModelError(
                    f"{label}: TLE line {number} must be 69 characters starting with '{number} '"
                )
            if _tle_checksum(line) != int(line[68]):
                raise ModelError(f"{label}: TLE line {number} checksum {line[68]} != {_tle_checksum(line)}")
        if line1[2:7] != line2[2:7]:
            raise ModelError(f"{label}: the two TLE lines name different catalogue numbers")
        try:
            year = int(line1[18:20])
            day_of_year = float(line1[20:32])
            epoch = datetime(2000 + year if year < 57 else 1900 + year, 1, 1, tzinfo=UTC) + timedelta(
                days=day_of_year - 1.0
            )
            return cls(
                name=label,
                line1=line1,
                line2=line2,
                epoch=epoch,
                inclination_deg=float(line2[8:16]),
                raan_deg=float(line2[17:25]),
                eccentricity=float("0." + line2[26:33].strip()),
                arg_perigee_deg=float(line2[34:42]),
                mean_anomaly_deg=float(line2[43:51]),
                mean_motion_rev_day=float(line2[52:63]),
                bstar=_tle_exponent_field(line1[53:61]),
            )
        except ValueError as err:
            raise ModelError(f"{label}: malformed TLE field ({err})") from err

    def kepler_orbit(self) -> KeplerOrbit:
        """Two-body orbit from the mean elements (``a`` from the mean motion by Kepler's third law).
        Without J2 the node and perigee stay fixed: see ``tests/flmodel/test_orbits.py`` for how far
        this drifts from SGP4 over an orbit."""
        n = self.mean_motion_rev_day * 2.0 * math.pi / 86400.0
        return KeplerOrbit(
            name=self.name,
            semi_major_axis_km=(MU_EARTH_KM3_S2 / n**2) ** (1.0 / 3.0),
            eccentricity=self.eccentricity,
            inclination_deg=self.inclination_deg,
            raan_deg=self.raan_deg,
            arg_perigee_deg=self.arg_perigee_deg,
            mean_anomaly_deg=self.mean_anomaly_deg,
            epoch=self.epoch,
        )

    def positions_eci(self, epoch: datetime, seconds: np.ndarray) -> np.ndarray:
        """TEME positions (km) by SGP4 at ``seconds`` after ``epoch``; a propagation error (e.g. a
        decayed orbit) is a ``ModelError`` naming the satellite."""
        sgp4_api = _sgp4_api()
        satrec = sgp4_api.Satrec.twoline2rv(self.line1, self.line2)
        days = days_since_j2000(epoch, seconds) + J2000_JULIAN_DATE
        whole = np.floor(days)
        errors, positions, _velocities = satrec.sgp4_array(whole, days - whole)
        failed = np.flatnonzero(errors)
        if failed.size:
            code = int(errors[failed[0]])
            raise ModelError(
                f"{self.name}: SGP4 failed at t = {float(np.asarray(seconds)[failed[0]])} s: "
                f"{sgp4_api.SGP4_ERRORS.get(code, code)}"
            )
        return np.asarray(positions, dtype=np.float64)


def _sgp4_api() -> ModuleType:
    """The ``sgp4.api`` module, or an error naming the extra that installs it."""
    # sgp4 is an optional dependency (extra [orbits]), needed only to propagate TLEs: import it lazily.
    try:
        from sgp4 import api
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            f"propagating two-line element sets needs the sgp4 package: {SGP4_EXTRA_HINT}"
        ) from err
    return api


def parse_tle_text(text: str, source: str = "<tle>") -> tuple[TleSatellite, ...]:
    """Element sets from text: each a name line (optional) followed by lines 1 and 2; blank lines and
    lines starting with ``#`` are skipped."""
    lines = [
        line.rstrip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    satellites = []
    index, name = 0, None
    while index < len(lines):
        line = lines[index]
        if line.startswith("1 ") and index + 1 < len(lines) and lines[index + 1].startswith("2 "):
            satellites.append(TleSatellite.from_lines(line, lines[index + 1], name))
            index, name = index + 2, None
        elif name is None:
            name = line.strip()
            index += 1
        else:
            raise ModelError(f"{source}: expected TLE line 1 after the name {name!r}, got {line!r}")
    if name is not None:
        raise ModelError(f"{source}: the name {name!r} has no element lines")
    return tuple(satellites)


def bundled_orbit_file(name: str) -> Path:
    """A file of ``spec/orbits/`` (e.g. ``"example.tle"``, ``"walker_53_12_3_1.toml"``)."""
    return resource("orbits", name)


def load_tle_file(path: Path) -> tuple[TleSatellite, ...]:
    """The element sets of a TLE file (see ``parse_tle_text``)."""
    return parse_tle_text(path.read_text(encoding="utf-8"), str(path))


def _read_toml(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise ModelError(f"{path}: {err}") from err


def load_walker_shell(path: Path) -> WalkerShell:
    """A Walker shell from TOML: ``notation = "i:T/P/F"``, ``altitude_km``, optional ``raan0_deg``,
    ``phase0_deg`` and ``epoch`` (a TOML date-time with offset)."""
    table = _read_toml(path)
    try:
        notation, altitude = table["notation"], table["altitude_km"]
    except KeyError as err:
        raise ModelError(f"{path}: missing key {err}") from err
    if not isinstance(notation, str) or not isinstance(altitude, int | float):
        raise ModelError(f"{path}: notation must be a string and altitude_km a number")
    placement: dict[str, float] = {}
    for key in ("raan0_deg", "phase0_deg"):
        value = table.get(key, 0.0)
        if not isinstance(value, int | float):
            raise ModelError(f"{path}: {key} must be a number")
        placement[key] = float(value)
    epoch = table.get("epoch", DEFAULT_EPOCH)
    if not isinstance(epoch, datetime):
        raise ModelError(f"{path}: epoch must be a TOML date-time")
    return WalkerShell.from_notation(
        notation,
        float(altitude),
        raan0_deg=placement["raan0_deg"],
        phase0_deg=placement["phase0_deg"],
        epoch=epoch,
    )


def load_ground_stations(path: Path) -> tuple[GroundStation, ...]:
    """Ground stations from TOML: ``[[station]]`` tables with ``name``, ``latitude_deg``,
    ``longitude_deg`` and optional ``altitude_km``, ``min_elevation_deg``."""
    entries = _read_toml(path).get("station", [])
    if not isinstance(entries, list):
        raise ModelError(f"{path}: 'station' must be an array of tables ([[station]])")
    stations = []
    for entry in entries:
        try:
            stations.append(GroundStation(**entry))
        except TypeError as err:
            raise ModelError(f"{path}: station {entry.get('name', '?')}: {err}") from err
    return tuple(stations)
