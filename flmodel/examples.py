"""Ready-made FL instances: the published [IIIf-FL] model and a parametric satellite-swarm (Moniteo-like)
model.

* :func:`seed_model` — [IIIf-FL] Section III-B as published: a server and clients, a small regression
  dataset that ``put_part`` deploys, the published rules, full trace sets, small bounds.
* :func:`moniteo_like` — [IIIf-FL] Section IV (Moniteo): ``k`` geo-stationary satellites ``sat1 …
  satk``, each initially equipped with its part ``Part_σ`` of (location, temperature) data, a ground
  server learning ``temperature ≈ w0 + w1·x`` by FedAvg; parametric in clients, rounds and the noise
  mechanism, for benchmarks and privacy checks. Default rule set ``fedavg_rounds`` with trace history
  dropped.

Both return an :class:`~flmodel.system.FLSystem`; ``system.with_dataset(D)`` rebuilds it for another
dataset (Moniteo has an ``owner`` function, so the partition follows the data).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction

from flmodel.data import DataPoint, Dataset, partition_by, point
from flmodel.frozen import FrozenMap
from flmodel.infrastructure import EMPTY_PROTOCOL, Gra, Igraph, Infrastructure, Poli
from flmodel.learning import HingeLoss, Loss, SquaredLoss, Vector, as_vec, zeros
from flmodel.noise import Mechanism, geometric, randomized_response
from flmodel.rules import FEDAVG_ROUNDS, PUBLISHED, NoiseTarget, RuleSet, TraceMode
from flmodel.system import Bounds, FLSystem


def fl_infrastructure(
    clients: Sequence[str],
    data: Iterable[DataPoint],
    *,
    server: str = "server",
    partition: FrozenMap[str, frozenset[DataPoint]] | None = None,
    curmodpar: Vector | None = None,
    dim: int | None = None,
    locations: dict[str, str] | None = None,
    poli: Poli | None = None,
    star_topology: bool = True,
) -> Infrastructure:
    """A standard FL infrastructure: each actor at its own location (``loc_<actor>`` unless
    ``locations`` says otherwise), a star topology server–clients, ``ready = ∅``, every client's
    ``gradient`` equal to ``curmodpar`` (default: the zero vector of dimension ``dim``), the given
    partition (default: empty parts), protocol ``{[]}`` and the default FL policy
    (:meth:`Poli.fl_default`)."""
    d: Dataset = frozenset(data)
    cs = tuple(sorted(set(clients)))
    locs = {a: f"loc_{a}" for a in (server, *cs)}
    if locations:
        locs.update(locations)
    if curmodpar is None:
        if dim is None:
            n_features = len(next(iter(sorted(d))).features) if d else 1
            dim = n_features + 1
        curmodpar = zeros(dim)
    curmodpar = as_vec(curmodpar)
    if partition is None:
        partition = FrozenMap({c: frozenset() for c in cs})
    srv_loc = locs[server]
    edges = frozenset((srv_loc, locs[c]) for c in cs) | frozenset((locs[c], srv_loc) for c in cs)
    gra = Gra(frozenset(locs.values()), edges if star_topology else frozenset())
    g = Igraph(
        gra,
        FrozenMap(locs),
        server,
        frozenset(cs),
        frozenset(),
        FrozenMap({c: curmodpar for c in cs}),
        curmodpar,
        partition,
        d,
    )
    return Infrastructure(g, EMPTY_PROTOCOL, poli if poli is not None else Poli.fl_default(g))


def seed_dataset() -> Dataset:
    """Three one-feature regression points ``y = 1 + 2x`` at ``x = 0, 1, 2``."""
    return frozenset({point("a", 0, 1), point("b", 1, 3), point("c", 2, 5)})


def seed_model(
    n_clients: int = 2,
    data: Iterable[DataPoint] | None = None,
    *,
    max_rounds: int | None = 1,
    max_events: int | None = 4,
    trace_mode: TraceMode = "full",
    mechanism: Mechanism | None = None,
    eta: Fraction | int | str = Fraction(1, 2),
    loss: Loss | None = None,
    rules: RuleSet | str = PUBLISHED,
) -> FLSystem:
    """The FL model of [IIIf-FL] III-B as published: clients ``c1 … cn``, server ``server``,
    the dataset of :func:`seed_dataset` (or ``data``) not yet deployed, ``curmodpar = 0``, protocol
    ``{[]}``, the published rules with literal trace sets, bounded by ``max_rounds`` aggregations and
    ``max_events`` steps (the literal trace sets grow with every step)."""
    clients = [f"c{i}" for i in range(1, n_clients + 1)]
    infra = fl_infrastructure(clients, seed_dataset() if data is None else data)
    return FLSystem(
        infra,
        rules=rules,
        loss=loss,
        eta=eta,
        mechanism=mechanism,
        bounds=Bounds(max_rounds, max_events),
        trace_mode=trace_mode,
    )


def moniteo_points(n: int) -> list[DataPoint]:
    """``n`` ground locations ``loc1 … locn`` with feature ``x = i`` (a coarse latitude band) and an
    integer temperature following ``20 − 2·x`` with a small deterministic wobble."""
    wobble = (0, 1, -1, 0, 1)
    return [point(f"loc{i}", i, 20 - 2 * i + wobble[i % len(wobble)]) for i in range(1, n + 1)]


def moniteo_owner(k_clients: int) -> Callable[[DataPoint], str]:
    """The owner function of :func:`moniteo_like`: ``loc<i>`` is observed by satellite
    ``sat<((i−1) mod k)+1>``; any other point by ``sat1``."""

    def owner(p: DataPoint) -> str:
        name = p.name
        if name.startswith("loc") and name[3:].isdigit():
            return f"sat{(int(name[3:]) - 1) % k_clients + 1}"
        return "sat1"

    return owner


def moniteo_universe(k_clients: int, points_per_client: int = 1, extra: int = 1) -> list[DataPoint]:
    """Candidate data points for neighbour generation: the points of :func:`moniteo_like` and
    ``extra`` further locations (e.g. a private site whose presence the attacker wants to detect)."""
    return moniteo_points(k_clients * points_per_client + extra)


def moniteo_like(
    k_clients: int = 3,
    rounds: int = 1,
    mechanism: Mechanism | str | None = None,
    *,
    points_per_client: int = 1,
    data: Iterable[DataPoint] | None = None,
    eta: Fraction | int | str = Fraction(1, 8),
    rules: RuleSet | str = FEDAVG_ROUNDS,
    trace_mode: TraceMode = "drop",
    noise_target: NoiseTarget = "update",
    max_events: int | None = None,
) -> FLSystem:
    """A Moniteo-like satellite swarm ([IIIf-FL] IV): satellites ``sat1 … satk`` at orbits
    ``orbit1 … orbitk``, server ``ground`` at ``ground_station``, squared loss on
    (location, temperature) data, each satellite initially holding its part (``partitioned=True``),
    FedAvg rounds bounded by ``rounds``.

    ``mechanism``: a :class:`~flmodel.noise.Mechanism`, ``None``, or one of the shorthands
    ``"rr"`` (randomized response on the grid ``{0, 1, 2, 3}`` with ``r = 1/3``), ``"geometric"``
    (clamped geometric on ``0 … 4`` with ``r = 1/2``) and ``"none"``; the mechanism is applied to each
    coordinate of the reported local model.
    """
    if k_clients < 1:
        raise ValueError("k_clients must be >= 1")
    sats = [f"sat{i}" for i in range(1, k_clients + 1)]
    pts = moniteo_points(k_clients * points_per_client) if data is None else list(data)
    owner = moniteo_owner(k_clients)
    part = partition_by(frozenset(pts), sats, owner)
    locations = {"ground": "ground_station", **{s: f"orbit{i}" for i, s in enumerate(sats, 1)}}
    infra = fl_infrastructure(sats, pts, server="ground", partition=part, dim=2, locations=locations)
    mech: Mechanism | None
    if isinstance(mechanism, str):
        if mechanism == "rr":
            mech = randomized_response([0, 1, 2, 3], Fraction(1, 3))
        elif mechanism == "geometric":
            mech = geometric(Fraction(1, 2), 0, 4)
        elif mechanism == "none":
            mech = None
        else:
            raise ValueError(f"unknown mechanism shorthand {mechanism!r}; expected 'rr', 'geometric', 'none'")
    else:
        mech = mechanism
    return FLSystem(
        infra,
        rules=rules,
        loss=SquaredLoss(),
        eta=eta,
        mechanism=mech,
        noise_target=noise_target,
        bounds=Bounds(rounds, max_events),
        trace_mode=trace_mode,
        owner=owner,
        partitioned=True,
    )


def hinge_model(n_clients: int = 2, *, max_rounds: int = 1, trace_mode: TraceMode = "drop") -> FLSystem:
    """A small classification instance (hinge loss, labels ±1) with the round-based variant and the
    data deployed by ``put_part_once``."""
    data = [point("p1", 1, 1), point("p2", -1, -1), point("p3", 2, 1)]
    infra = fl_infrastructure([f"c{i}" for i in range(1, n_clients + 1)], data)
    return FLSystem(
        infra,
        rules=FEDAVG_ROUNDS,
        loss=HingeLoss(),
        eta=Fraction(1, 2),
        bounds=Bounds(max_rounds, None),
        trace_mode=trace_mode,
    )
