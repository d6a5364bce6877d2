"""Time-varying topology: contact windows, messages lost in flight, links the environment cuts, and
rounds that aggregate the clients that did report (flcheck's variants; not in [IIIf-FL]).

[IIIf-FL] keeps ``gra`` (locations and links) static and no rule of ``→FL`` reads it. A *network*
(:class:`Network`) makes the topology matter, as a rule-set transformer (:func:`networked`) applied to
the published relation or to ``fedavg_rounds`` — the seed's rule set stays literal, the transformed set
has its own name (``<base>+network``):

* **Status.** The time-varying part of the topology is kept in ``gra`` (:class:`NetStatus` in
  :class:`~flmodel.infrastructure.Gra`): the number of aggregations ``round``, the global step
  ``clock`` (steps taken so far), the steps taken in the current round, and the clients whose report
  of this round was lost. Counters saturate where no window or deadline can tell larger values apart
  (they stay 0 when nothing reads them), so they split states only as far as the semantics needs.
  A cut link is removed from ``gra``'s edges (IIIf: the actual topology changed).
* **Up links.** A link is up in step ``clock + 1`` of round ``round + 1`` when it is in ``gra``'s
  edges and, if it has contact windows, that round (``in rounds``) or step (``in steps``) is listed.
* **Routes.** A report of client ``c`` travels from ``aloc c`` to the server's location along the route
  given for ``c``, or else the shortest path of up links (breadth-first, neighbours in name order);
  ``get_grad`` is enabled only when such a route is up (in addition to its premises and the policy
  gate). A client at the server's location needs no link.
* **Loss.** Each hop ``h`` with ``loss h p retries k`` delivers with probability ``1 − p^(k+1)``
  (independent attempts, each retried up to ``k`` times), so the report arrives with probability
  ``q = Π_h (1 − p_h^(k_h+1))``. The ``get_grad`` step splits (one action, one probabilistic choice):
  each outcome ``v`` of the report with probability ``P(v)·q`` as the published step, and one outcome
  with probability ``1 − q`` where the report was sent but not received: the igraph is unchanged and
  ``c`` joins the lost clients (observable ``lost``), who send nothing more this round.
* **Attacker.** An attacker at location ``L`` (or tapping the link ``a -- b``: :attr:`Network.tap`)
  that observes ``gradient_c`` or the reports it copies (``copied``; ``tapped`` are those clients)
  sees the reports whose route crosses ``L`` (uses a hop of the link): a delivered report of ``c``
  over such a route is marked as crossed, and the attacker's own step ``eavesdrop`` (actor the
  attacker, at ``L`` or the link) copies it (the status's ``seen``; observable ``seen_c``: copied in
  the current round), so attack trees show the attacker's action, in every round. The copy is urgent
  and takes no time: it comes right after the delivery, before any other step, and does not advance
  the clock (the protocol's probabilities and windows are those without the attacker). What it
  copied in the current round, client and report, is the observable ``copied`` of the scenario
  system.
* **Failures.** ``cut_link`` (actor ``environment``): a link listed in ``failure`` may be cut at any
  step (a nondeterministic choice of the environment or adversary; once cut it stays down).
* **Aggregation.** ``all`` keeps the base rule (``ready G = clients G``). ``quorum Q``: ``eval_quorum``
  aggregates once at least ``Q`` clients reported; ``deadline D``: ``eval_deadline`` aggregates the
  reporters once ``D`` steps of the round have passed or every client that has not reported is lost;
  reports after the deadline are refused. Both use FedAvg renormalised over the reporters ``R``:
  ``Newmodel = Σ_{c ∈ R} (|Part c| / Σ_{c' ∈ R} |Part c'|) · gradient G c`` (the model is kept when
  ``Σ = 0``). An aggregation resets the lost clients, the crossed and copied reports and the round's
  steps. Partial aggregation is
  defined for the ``drop`` trace mode (the scenario checks require it).

Footprints (:class:`flmodel.system.ActionClass`, :attr:`flmodel.rules.Rule.restate`). The status is
named as variables: ``net:round``, ``net:clock``, ``net:steps`` (the steps of the round), per client
``c`` ``lost:c``, ``crossed:c`` and ``seen:c`` (``kind:client``, as ``ready:c``), and per link that
may fail ``link:a--b`` (the static links never change). A counter that stays constant in a scenario
is not written (``net:round`` without round windows, ``net:clock`` without step windows,
``net:steps`` without a deadline; ``lost:c`` without a positive loss; ``crossed:c`` and ``seen:c``
only for the clients the attacker copies). A report's route reads the links that may fail and the
counters its windows read (:attr:`StatusVariables.route`). Each transformed rule restates the
classes of its base rule: ``get_grad`` of ``c`` also reads the route and ``lost:c`` (guard: ``c`` not
lost) and writes ``lost:c`` and ``crossed:c``; with a loss the lost outcome leaves the report's
variables as they were, so their new values also depend on the route and on their old values (the
delivery and the loss are outcomes of one action); every step but ``eavesdrop`` advances the clock
and the round's steps, and past a deadline every step but the aggregation is refused (reads
``net:steps``); an aggregation resets the round's status; while a copy is due every rule but
``eavesdrop`` waits (reads ``crossed:c`` and ``seen:c``); ``cut_link`` reads and writes the failing
links; ``eavesdrop`` reads ``crossed:c`` and ``seen:c`` and writes ``seen:c`` (one copy at a time: a
delivery that crosses the attacker disables every other rule until the copy). The dead-value
footprint of the base rules carries over (:attr:`flmodel.rules.Rule.gradients`): a lost report
inserts nothing into ``ready`` and writes no gradient, partial aggregation reads the reporters'
gradients only (through their weighted sum), ``cut_link`` reads and writes no gradient, client or
part; ``eavesdrop`` copies a ready client's own report (``copied`` reads the gradients of clients that
crossed this round, which are in ``ready``), so it states ``"ready"`` only.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from itertools import combinations, pairwise
from typing import Literal, NamedTuple

from flmodel.infrastructure import Gra, Igraph, Infrastructure, Location
from flmodel.learning import Vector, fedavg

Edge = tuple[Location, Location]
Aggregate = Literal["all", "quorum", "deadline"]

#: The actor of the environment's steps (``cut_link``).
ENVIRONMENT = "environment"
ONE = Fraction(1)


class NetStatus(NamedTuple):
    """The time-varying part of the topology (kept in ``gra``): aggregations so far, steps so far,
    steps in the current round (each saturating, see :class:`Network`), the clients whose report
    of this round was lost, those whose report of this round crossed the attacker's location, and
    those whose report of this round the attacker copied (``eavesdrop``)."""

    round: int = 0
    clock: int = 0
    round_steps: int = 0
    lost: frozenset[str] = frozenset()
    crossed: frozenset[str] = frozenset()
    seen: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Window:
    """When a link with a contact plan is up: the listed rounds or steps (inclusive ranges, from 1)."""

    unit: Literal["rounds", "steps"]
    ranges: tuple[tuple[int, int], ...]

    def up(self, round_no: int, step_no: int) -> bool:
        """Whether the window contains round ``round_no`` / step ``step_no`` (both 1-based)."""
        n = round_no if self.unit == "rounds" else step_no
        return any(lo <= n <= hi for lo, hi in self.ranges)

    @property
    def last(self) -> int:
        return max(hi for _, hi in self.ranges)


@dataclass(frozen=True)
class Network:
    """A network over ``gra``: contact windows and losses per directed edge (an undirected link gives
    both directions), links the environment may cut (as sets of directed edges), given routes per
    client (location sequences from the client's location to the server's) and the aggregation rule
    (``aggregate_at``: the quorum ``Q`` or deadline ``D``); the attacker (its name and where it is: a
    location, or the text ``a--b`` of the link whose directed edges ``tap`` holds) and the clients
    whose reports it copies (``tapped``)."""

    windows: Mapping[Edge, tuple[Window, ...]] = field(default_factory=dict)
    losses: Mapping[Edge, tuple[Fraction, int]] = field(default_factory=dict)
    failures: tuple[frozenset[Edge], ...] = ()
    routes: Mapping[str, tuple[Location, ...]] = field(default_factory=dict)
    aggregate: Aggregate = "all"
    aggregate_at: int = 0
    attacker: tuple[str, Location] | None = None
    tapped: frozenset[str] = frozenset()
    tap: frozenset[Edge] = frozenset()
    cache: dict[object, object] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @cached_property
    def round_horizon(self) -> int:
        """Rounds beyond this one are alike for every window (``round`` saturates here)."""
        ends = [w.last for ws in self.windows.values() for w in ws if w.unit == "rounds"]
        return max(ends, default=0)

    @cached_property
    def step_horizon(self) -> int:
        """Steps beyond this one are alike for every window (``clock`` saturates here)."""
        ends = [w.last for ws in self.windows.values() for w in ws if w.unit == "steps"]
        return max(ends, default=0)

    @cached_property
    def variables(self) -> StatusVariables:
        """The status as footprint variables (module docstring)."""
        return StatusVariables.of(self)

    def observable_reads(self, name: str, clients: Iterable[str], edge: Edge | None = None,
                         ) -> frozenset[str] | None:
        """The variables the network observable ``name`` reads (``lost``, ``lost_c``, ``step``,
        ``seen``, ``seen_c`` (none when ``c``'s report is not copied: always false), ``copied``;
        ``link_a_b`` with its directed ``edge``); ``None`` for another name."""
        v = self.variables
        cs = tuple(clients)
        if name == "lost":
            return frozenset(lost_var(c) for c in cs)
        if name.startswith("lost_") and name[5:] in cs:
            return frozenset({lost_var(name[5:])})
        if name == "step":
            return frozenset({CLOCK})
        if name == "seen":
            return frozenset(seen_var(c) for c in v.tapped)
        if name.startswith("seen_") and name[5:] in v.tapped:
            return frozenset({seen_var(name[5:])})
        if name.startswith("seen_") and name[5:] in cs:  # a report that never crosses the attacker
            return frozenset()
        if name == "copied":  # (c, gradient c) for c crossed and seen
            return frozenset(x for c in v.tapped for x in (crossed_var(c), seen_var(c), f"gradient:{c}"))
        if edge is not None and name.startswith("link_"):
            units = {w.unit for w in self.windows.get(edge, ())}
            return frozenset({*(link_var(lk) for lk in self.failures if edge in lk),
                              *((ROUND,) if "rounds" in units else ()),
                              *((CLOCK,) if "steps" in units else ())})
        return None

    def configurations(self, gra: Gra) -> Iterator[tuple[frozenset[int], int, int, Gra]]:
        """Every configuration the network can be in from the links of ``gra``: a set of cut failing
        links (by index into :attr:`failures`), the saturated ``round`` and ``clock``, and the graph in
        that configuration (``2^|failures| · (round_horizon + 1) · (step_horizon + 1)`` of them)."""
        n = len(self.failures)
        for k in range(n + 1):
            for cut in combinations(range(n), k):
                edges = gra.edges.difference(*(self.failures[i] for i in cut))
                for r in range(self.round_horizon + 1):
                    for t in range(self.step_horizon + 1):
                        yield frozenset(cut), r, t, Gra(gra.locations, edges, NetStatus(r, t))

    def configuration_count(self) -> int:
        """How many configurations :meth:`configurations` enumerates."""
        return 2 ** len(self.failures) * (self.round_horizon + 1) * (self.step_horizon + 1)

    def may_cross(self, gra: Gra, sources: Mapping[str, Location], target: Location,
                  limit: int = 200_000) -> frozenset[str]:
        """The clients of ``sources`` (client -> location) whose report's route to ``target`` crosses
        the attacker (:meth:`crosses`) in some configuration (:meth:`configurations`): the only reports
        the attacker can copy. Every client of ``sources`` when more than ``limit`` routes would have
        to be computed."""
        if self.configuration_count() * max(len(sources), 1) > limit:
            return frozenset(sources)
        out: set[str] = set()
        for _, _, _, g in self.configurations(gra):
            for c, loc in sources.items():
                if c not in out:
                    path = self.client_route(g, c, loc, target)
                    if path is not None and self.crosses(path):
                        out.add(c)
        return frozenset(out)

    def edge_up(self, edges: frozenset[Edge], e: Edge, status: NetStatus) -> bool:
        """Whether the directed edge ``e`` is up in the next step (see the module docstring)."""
        if e not in edges:
            return False
        ws = self.windows.get(e)
        return ws is None or any(w.up(status.round + 1, status.clock + 1) for w in ws)

    def route(self, gra: Gra, source: Location, target: Location) -> tuple[Location, ...] | None:
        """The shortest path of up links from ``source`` to ``target`` (``(source,)`` when they are
        equal), ``None`` when there is none."""
        status = gra_status(gra)
        if source == target:
            return (source,)
        succ: dict[Location, list[Location]] = {}
        for a, b in gra.edges:
            if self.edge_up(gra.edges, (a, b), status):
                succ.setdefault(a, []).append(b)
        parent: dict[Location, Location] = {source: source}
        queue = deque([source])
        while queue:
            here = queue.popleft()
            for nxt in sorted(succ.get(here, ())):
                if nxt in parent:
                    continue
                parent[nxt] = here
                if nxt == target:
                    path = [nxt]
                    while path[-1] != source:
                        path.append(parent[path[-1]])
                    return tuple(reversed(path))
                queue.append(nxt)
        return None

    def client_route(self, gra: Gra, client: str, source: Location, target: Location,
                     ) -> tuple[Location, ...] | None:
        """The route of ``client``'s report now: its given route if every hop is up, else ``None``;
        without a given route the shortest path (:meth:`route`). Memoized on what it reads."""
        status = gra_status(gra)
        key = (gra.edges, status.round, status.clock, client, source, target)
        hit = self.cache.get(key, False)
        if hit is not False:
            return hit  # type: ignore[return-value]
        if len(self.cache) > 1 << 16:
            self.cache.clear()
        path = self.cache[key] = self._client_route(gra, client, source, target)
        return path

    def _client_route(self, gra: Gra, client: str, source: Location, target: Location,
                      ) -> tuple[Location, ...] | None:
        given = self.routes.get(client)
        if given is None:
            return self.route(gra, source, target)
        status = gra_status(gra)
        hops = list(pairwise(given))
        return given if all(self.edge_up(gra.edges, h, status) for h in hops) else None

    def crosses(self, path: tuple[Location, ...]) -> bool:
        """Whether a message along ``path`` passes the attacker: it uses a hop of the tapped link, or
        (an attacker at a location) it visits that location."""
        if self.attacker is None:
            return False
        if self.tap:
            return any(hop in self.tap for hop in pairwise(path))
        return self.attacker[1] in path

    def delivery(self, path: tuple[Location, ...]) -> Fraction:
        """``q = Π_hops (1 − p^(k+1))``: the probability a report sent along ``path`` arrives
        (memoized per path)."""
        key = ("delivery", path)
        hit = self.cache.get(key)
        if hit is not None:
            return hit  # type: ignore[return-value]
        q = ONE
        for hop in pairwise(path):
            p, k = self.losses.get(hop, (Fraction(0), 0))
            q *= 1 - p ** (k + 1)
        if len(self.cache) > 1 << 16:
            self.cache.clear()
        self.cache[key] = q
        return q

    def advance(self, status: NetStatus, aggregates: bool) -> NetStatus:
        """The status after one step (an aggregation starts a new round)."""
        clock = min(status.clock + 1, self.step_horizon)
        if aggregates:
            return NetStatus(min(status.round + 1, self.round_horizon), clock, 0, frozenset(), frozenset(),
                             frozenset())
        deadline = self.aggregate_at if self.aggregate == "deadline" else 0
        return status._replace(clock=clock, round_steps=min(status.round_steps + 1, deadline))


ROUND = "net:round"
CLOCK = "net:clock"
STEPS = "net:steps"


def lost_var(c: str) -> str:
    """The footprint variable of ``c ∈ lost``."""
    return f"lost:{c}"


def crossed_var(c: str) -> str:
    """The footprint variable of ``c ∈ crossed``."""
    return f"crossed:{c}"


def seen_var(c: str) -> str:
    """The footprint variable of ``c ∈ seen``."""
    return f"seen:{c}"


def link_var(link: frozenset[Edge]) -> str:
    """The footprint variable of a link that may fail (its directed edges): ``link:a--b``."""
    a, b = min(link)
    return f"link:{a}--{b}"


@dataclass(frozen=True)
class StatusVariables:
    """Which status variables a network writes (module docstring: a counter that stays constant is
    not written): ``round``, ``clock``, ``steps`` (``net:steps``, with a deadline), ``lose`` (some
    loss is positive: ``lost:c``), ``tapped`` (the clients with ``crossed:c`` and ``seen:c``); what
    a route reads (``route``); what every rule but ``eavesdrop`` reads while a copy is due
    (``wait``)."""

    round: bool
    clock: bool
    steps: bool
    lose: bool
    tapped: tuple[str, ...]
    route: frozenset[str]
    wait: frozenset[str]

    @classmethod
    def of(cls, net: Network) -> StatusVariables:
        tapped = tuple(sorted(net.tapped)) if net.attacker is not None else ()
        route = frozenset({*(link_var(lk) for lk in net.failures),
                           *((ROUND,) if net.round_horizon else ()), *((CLOCK,) if net.step_horizon else ())})
        return cls(net.round_horizon > 0, net.step_horizon > 0, net.aggregate == "deadline",
                   any(p > 0 for p, _ in net.losses.values()), tapped, route,
                   frozenset(x for c in tapped for x in (crossed_var(c), seen_var(c))))

    def advance(self, clients: Iterable[str], aggregates: bool) -> dict[str, frozenset[str]]:
        """What :meth:`Network.advance` writes, each with what its new value depends on."""
        out: dict[str, frozenset[str]] = {}
        if self.clock:
            out[CLOCK] = frozenset({CLOCK})
        if not aggregates:
            if self.steps:
                out[STEPS] = frozenset({STEPS})
            return out
        if self.round:
            out[ROUND] = frozenset({ROUND})
        if self.steps:
            out[STEPS] = frozenset()
        if self.lose:
            out.update({lost_var(c): frozenset() for c in clients})
        out.update({crossed_var(c): frozenset() for c in self.tapped})
        out.update({seen_var(c): frozenset() for c in self.tapped})
        return out


def gra_status(gra: Gra) -> NetStatus:
    """The network status kept in ``gra`` (the initial one when none is kept)."""
    status = gra.status
    return status if isinstance(status, NetStatus) else NetStatus()


def with_status(infra: Infrastructure, edges: frozenset[Edge], status: NetStatus) -> Infrastructure:
    """``infra`` with ``gra``'s edges and network status replaced."""
    g = infra.igra
    gra = Gra(g.gra.locations, edges, status)
    return Infrastructure(g._replace(gra=gra), infra.prot, infra.poli)


def renormalised_model(g: Igraph, reporters: frozenset[str]) -> Vector:
    """FedAvg over the reporters: ``Σ_{c ∈ R} (|Part c| / Σ_{c' ∈ R} |Part c'|) · gradient G c``; the
    current model when the reporters hold no data."""
    items = tuple((len(g.part(c)), g.gradient[c]) for c in sorted(reporters))
    total = sum(n for n, _ in items)
    if total == 0:
        return g.curmodpar
    return fedavg(items, total, len(g.curmodpar))
