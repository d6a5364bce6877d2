"""The infrastructure types of [IIIf-FL] Section III-B, as immutable, hashable values.

[IIIf-FL] (III-B)::

    datatype igraph = Lgraph gra: location set  aloc: actor ⇒ location  server: actor
                             clients: actor set  ready: actor set  gradient: actor ⇒ α :: num
                             curmodpar: α  partition: actor ⇒ data set  dataset: data set
    datatype protocol = Protocol evs: event list set
    datatype infrastructure = Infrastructure igra: igraph prot: Protocol
                                             poli: [igraph, location] ⇒ policy set

Encoding (see ``spec/SPEC.md``):

* locations and actors are strings; ``gra`` is :class:`Gra` — the location set of [IIIf-FL], plus an
  optional set of edges (the text calls ``gra`` "the actual topology"; no rule reads it);
* the total functions ``aloc``, ``gradient``, ``partition`` are :class:`~flmodel.frozen.FrozenMap`
  on a finite domain (all actors for ``aloc``; all clients for ``gradient`` and ``partition``);
* ``α`` is :data:`flmodel.learning.Vector` (a tuple of Fractions);
* events are :class:`Put`, :class:`Get`, :class:`Eval`; a trace is a tuple of events with the
  *most recent event first* (Isabelle's list cons ``e # l`` is ``(e, *l)``);
* ``poli`` is :class:`Poli`: per location a tuple of :class:`Policy` ``(actors, actions)`` pairs, as in
  IIIf's ``policy = (actor ⇒ bool) × action set``, with the predicate given as a set of actors (or
  all) and an optional "actor is at that location in the current igraph" condition — which is how
  ``poli`` depends on the igraph.

Hashes of :class:`Igraph` and :class:`Infrastructure` are computed once, at construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from flmodel.data import DataPoint, Dataset, Partition
from flmodel.frozen import FrozenMap
from flmodel.learning import Vector, as_vec

Location = str
Actor = str

#: The action names IIIf policies grant in the FL instance: the three kinds of FL step.
ACTION_KINDS: tuple[str, ...] = ("put_part", "get_grad", "eval_server")


class Gra(NamedTuple):
    """``gra``: the set of locations (seed type ``location set``) and, optionally, the topology's
    edges (pairs of locations) and, for a time-varying topology only, its status
    (:class:`flmodel.network.NetStatus`: clock, round, lost reports; ``None`` for the static ``gra``
    of [IIIf-FL]). Checked by :func:`validate_igraph`."""

    locations: frozenset[Location]
    edges: frozenset[tuple[Location, Location]] = frozenset()
    status: object = None


@dataclass(frozen=True, slots=True)
class Policy:
    """One IIIf policy ``(p, e)``: actors satisfying ``p`` may perform the actions in ``e``.

    ``actors = None`` means every actor (``p = λ a. True``); ``at_location`` additionally requires the
    actor to be located at the policy's location in the current igraph (``aloc G a = l``)."""

    actors: frozenset[Actor] | None
    actions: frozenset[str]
    at_location: bool = True

    def allows(self, igraph: Igraph, location: Location, actor: Actor, action: str) -> bool:
        """``action ∈ e ∧ p actor`` (with the location condition, if any)."""
        if action not in self.actions:
            return False
        if self.actors is not None and actor not in self.actors:
            return False
        return not self.at_location or igraph.aloc.get(actor) == location


class Poli(NamedTuple):
    """``poli : [igraph, location] ⇒ policy set`` as a table location -> policies.

    ``enables(G, l, a, x)`` is IIIf's ``enables``: ``∃ (p, e) ∈ poli G l. x ∈ e ∧ p a``."""

    table: FrozenMap[Location, tuple[Policy, ...]]

    def policies(self, igraph: Igraph, location: Location) -> tuple[Policy, ...]:
        """``poli G l`` (the table does not depend on ``G``; a policy's condition may)."""
        return self.table.get(location, ())

    def enables(self, igraph: Igraph, location: Location, actor: Actor, action: str) -> bool:
        """IIIf ``enables``: some policy at ``location`` allows ``actor`` to perform ``action``."""
        return any(p.allows(igraph, location, actor, action) for p in self.table.get(location, ()))

    @staticmethod
    def permissive(locations: Iterable[Location], actions: Iterable[str] = ACTION_KINDS) -> Poli:
        """Every actor located at a location may perform every FL action there (with this ``poli``
        the gated relation equals the published one, whose rules have no policy premise)."""
        pol = (Policy(None, frozenset(actions), True),)
        return Poli(FrozenMap({loc: pol for loc in locations}))

    @staticmethod
    def fl_default(igraph: Igraph) -> Poli:
        """The natural FL policy: at the server's location the server may ``put_part`` and
        ``eval_server``; at each client's location that client may ``get_grad``."""
        table: dict[Location, list[Policy]] = {}
        srv_loc = igraph.aloc[igraph.server]
        table.setdefault(srv_loc, []).append(
            Policy(frozenset({igraph.server}), frozenset({"put_part", "eval_server"}), True)
        )
        for c in sorted(igraph.clients):
            table.setdefault(igraph.aloc[c], []).append(Policy(frozenset({c}), frozenset({"get_grad"}), True))
        return Poli(FrozenMap({loc: tuple(ps) for loc, ps in table.items()}))


# --- events and the protocol ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class Put:
    """``Put [Part]``: the deployment of a partition ([IIIf-FL]'s event carries a *list* of
    partitions; ``put_part`` records the one-element list ``[Part]``)."""

    parts: tuple[Partition, ...]

    def __str__(self) -> str:
        return "Put[" + "; ".join(partition_text(p) for p in self.parts) + "]"


@dataclass(frozen=True, slots=True, order=True)
class Get:
    """``Get c Gradc``: client ``c`` reports its update ``Gradc``."""

    client: Actor
    value: Vector

    def __str__(self) -> str:
        return f"Get({self.client},{vector_text(self.value)})"


@dataclass(frozen=True, slots=True, order=True)
class Eval:
    """``Eval Newmodel``: the server aggregates a new global model."""

    model: Vector

    def __str__(self) -> str:
        return f"Eval({vector_text(self.model)})"


Event = Put | Get | Eval
#: A trace: most recent event first (``e # l``).
Trace = tuple[Event, ...]


def vector_text(v: Vector) -> str:
    """``(1/2,3)`` style text of a vector."""
    return "(" + ",".join(str(x) for x in v) + ")"


def partition_text(p: Partition) -> str:
    """``c1:{a b},c2:{}`` style text of a partition."""
    return ",".join(f"{c}:{{{' '.join(sorted(str(x) for x in part))}}}" for c, part in p.items_tuple)


def trace_text(trace: Trace) -> str:
    """Human text of a trace, oldest event first (``[]`` for the empty trace)."""
    if not trace:
        return "[]"
    return "[" + " . ".join(str(e) for e in reversed(trace)) + "]"


class Protocol(NamedTuple):
    """``Protocol evs``: the set of protocol traces recorded so far ([IIIf-FL] III-B)."""

    evs: frozenset[Trace]

    def __str__(self) -> str:
        return "{" + ", ".join(sorted(trace_text(t) for t in self.evs)) + "}"


def insertp(trace: Trace, evs: frozenset[Trace]) -> Protocol:
    """``insertp x (evs P)``: the protocol whose traces are ``evs P ∪ {x}`` ([IIIf-FL] III-B, used by
    all three rules; the result is a ``Protocol``, the ``P'`` of the rules)."""
    return Protocol(evs | {trace})


EMPTY_PROTOCOL = Protocol(frozenset({()}))
"""The initial protocol ``Protocol {[]}``: only the empty trace (so ``[] ∈ evs P`` holds)."""


# --- igraph and infrastructure ------------------------------------------------------------------


class Igraph(NamedTuple):
    """``Lgraph gra aloc server clients ready gradient curmodpar partition dataset``
    ([IIIf-FL] III-B). A named tuple: construction and hashing run in C, which is what makes state
    exploration fast (a plain 9-tuple with the same components compares equal)."""

    gra: Gra
    aloc: FrozenMap[Actor, Location]
    server: Actor
    clients: frozenset[Actor]
    ready: frozenset[Actor]
    gradient: FrozenMap[Actor, Vector]
    curmodpar: Vector
    partition: Partition
    dataset: Dataset

    def replace(self, **changes: object) -> Igraph:
        """A copy with some components changed (the ``Lgraph (gra G) … `` of a rule's ``G'``)."""
        values: dict[str, object] = {
            "gra": self.gra,
            "aloc": self.aloc,
            "server": self.server,
            "clients": self.clients,
            "ready": self.ready,
            "gradient": self.gradient,
            "curmodpar": self.curmodpar,
            "partition": self.partition,
            "dataset": self.dataset,
        }
        unknown = set(changes) - set(values)
        if unknown:
            raise TypeError(f"unknown igraph components {sorted(unknown)}")
        values.update(changes)
        return Igraph(**values)  # type: ignore[arg-type]

    def part(self, c: Actor) -> frozenset[DataPoint]:
        """``partition G c`` (empty for an actor outside the map: Isabelle functions are total)."""
        return self.partition.get(c, frozenset())


def lgraph(
    gra: Gra,
    aloc: Mapping[Actor, Location],
    server: Actor,
    clients: Iterable[Actor],
    ready: Iterable[Actor],
    gradient: Mapping[Actor, Vector],
    curmodpar: Vector,
    partition: Mapping[Actor, Iterable[DataPoint]],
    dataset: Iterable[DataPoint],
) -> Igraph:
    """The constructor ``Lgraph`` with plain Python arguments (converted to the frozen types)."""
    if not isinstance(gradient, FrozenMap):
        gradient = FrozenMap({k: as_vec(v) for k, v in gradient.items()})
    parts: FrozenMap[Actor, frozenset[DataPoint]]
    if isinstance(partition, FrozenMap):
        parts = partition
    else:
        parts = FrozenMap({k: frozenset(v) for k, v in partition.items()})
    return Igraph(
        gra,
        aloc if isinstance(aloc, FrozenMap) else FrozenMap(aloc),
        server,
        frozenset(clients),
        frozenset(ready),
        gradient,
        as_vec(curmodpar),
        parts,
        frozenset(dataset),
    )


class Infrastructure(NamedTuple):
    """``Infrastructure igra prot poli`` ([IIIf-FL] III-B): a state of ``→FL`` (a named tuple)."""

    igra: Igraph
    prot: Protocol
    poli: Poli


def validate_igraph(g: Igraph) -> list[str]:
    """Well-formedness problems of an igraph (empty list when fine): actors located at known
    locations, server not a client, ``ready ⊆ clients``, ``gradient`` defined on every client with the
    dimension of ``curmodpar``, ``partition`` defined only on clients."""
    problems: list[str] = []
    bad = sorted(e for e in g.gra.edges if e[0] not in g.gra.locations or e[1] not in g.gra.locations)
    if bad:
        problems.append(f"edges {bad} join locations outside {sorted(g.gra.locations)}")
    for a, loc in g.aloc.items_tuple:
        if loc not in g.gra.locations:
            problems.append(f"actor {a!r} is placed at unknown location {loc!r}")
    for a in sorted(g.clients | {g.server}):
        if a not in g.aloc:
            problems.append(f"actor {a!r} has no location (aloc is total in [IIIf-FL])")
    if g.server in g.clients:
        problems.append(f"the server {g.server!r} is also a client")
    if not g.ready <= g.clients:
        problems.append(f"ready {sorted(g.ready)} is not a subset of clients {sorted(g.clients)}")
    d = len(g.curmodpar)
    for c in sorted(g.clients):
        if c not in g.gradient:
            problems.append(f"gradient has no value for client {c!r}")
        elif len(g.gradient[c]) != d:
            problems.append(f"gradient of {c!r} has dimension {len(g.gradient[c])}, curmodpar has {d}")
    for c in g.partition:
        if c not in g.clients:
            problems.append(f"partition gives a part to {c!r}, which is not a client")
    return problems
