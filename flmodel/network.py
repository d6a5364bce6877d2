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
  attacker, at ``L`` or the link) copies it (the status's ``seen``; observable ``seen_c``), so attack
  trees show the attacker's action. The copy is urgent and takes no time: it comes right after the
  delivery, before any other step, and does not advance the clock (the protocol's probabilities and
  windows are those without the attacker). What it copied in the current round, client and report,
  is the observable ``copied`` of the scenario system.
* **Failures.** ``cut_link`` (actor ``environment``): a link listed in ``failure`` may be cut at any
  step (a nondeterministic choice of the environment or adversary; once cut it stays down).
* **Aggregation.** ``all`` keeps the base rule (``ready G = clients G``). ``quorum Q``: ``eval_quorum``
  aggregates once at least ``Q`` clients reported; ``deadline D``: ``eval_deadline`` aggregates the
  reporters once ``D`` steps of the round have passed or every client that has not reported is lost;
  reports after the deadline are refused. Both use FedAvg renormalised over the reporters ``R``:
  ``Newmodel = Σ_{c ∈ R} (|Part c| / Σ_{c' ∈ R} |Part c'|) · gradient G c`` (the model is kept when
  ``Σ = 0``). An aggregation resets the lost clients and the round's steps.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from itertools import pairwise
from typing import Literal, NamedTuple

from flmodel.infrastructure import Gra, Igraph, Infrastructure, Location
from flmodel.learning import Vector, fedavg
from flmodel.rules import Rule, RuleContext, RuleSet, Transition

Edge = tuple[Location, Location]
Aggregate = Literal["all", "quorum", "deadline"]

#: The actor of the environment's steps (``cut_link``).
ENVIRONMENT = "environment"
ONE = Fraction(1)


class NetStatus(NamedTuple):
    """The time-varying part of the topology (kept in ``gra``): aggregations so far, steps so far,
    steps in the current round (each saturating, see :class:`Network`), the clients whose report
    of this round was lost, those whose report of this round crossed the attacker's location, and
    those whose report the attacker copied (``eavesdrop``; kept across rounds)."""

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
                             status.seen)
        deadline = self.aggregate_at if self.aggregate == "deadline" else 0
        return status._replace(clock=clock, round_steps=min(status.round_steps + 1, deadline))


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


def networked(base: RuleSet, net: Network) -> RuleSet:
    """``base`` over the network ``net`` (see the module docstring): every rule advances the status;
    ``get_grad`` needs an up route and may lose the report; ``cut_link`` when links
    may fail; ``eval_quorum``/``eval_deadline`` instead of the base aggregation for partial rounds."""
    rules: list[Rule] = []
    for r in base.rules:
        if r.kind == "get_grad":
            rules.append(Rule(r.name, r.kind, _reports(r, net), r.aggregates, r.deploys))
        elif r.aggregates and net.aggregate != "all":
            name = f"eval_{net.aggregate}"
            rules.append(Rule(name, r.kind, _timed(_partial_eval(r, net, name), net, True), True))
        else:
            rules.append(Rule(r.name, r.kind, _timed(r.fire, net, r.aggregates), r.aggregates, r.deploys))
    if net.failures:
        rules.append(Rule("cut_link", "network", _cuts(net)))
    if net.attacker is not None and net.tapped:
        rules = [Rule(r.name, r.kind, _after_copies(r.fire), r.aggregates, r.deploys) for r in rules]
        rules.append(Rule("eavesdrop", "attack", _eavesdrop(net)))
    return RuleSet(base.name + "+network", tuple(rules), base.tracks_partitioned)


Fire = Callable[[RuleContext, Infrastructure, bool], Iterator[Transition]]


def _timed(fire: Fire, net: Network, aggregates: bool) -> Fire:
    """``fire`` with the network status advanced in every target (deploy and aggregation steps)."""

    def timed(ctx: RuleContext, infra: Infrastructure, partitioned: bool) -> Iterator[Transition]:
        gra = infra.igra.gra
        status = net.advance(gra_status(gra), aggregates)
        if net.aggregate == "deadline" and not aggregates and _past_deadline(net, infra):
            return
        for t in fire(ctx, infra, partitioned):
            yield t._replace(target=with_status(t.target, gra.edges, status))

    return timed


def _past_deadline(net: Network, infra: Infrastructure) -> bool:
    """Whether the round's deadline has passed (reports are refused then)."""
    return gra_status(infra.igra.gra).round_steps >= net.aggregate_at


def _reports(r: Rule, net: Network) -> Fire:
    """The ``get_grad`` steps over the network: the delivered outcomes and, with a loss, the lost one
    (the same action: one probabilistic choice)."""

    def fire(ctx: RuleContext, infra: Infrastructure, partitioned: bool) -> Iterator[Transition]:
        g = infra.igra
        status = gra_status(g.gra)
        if net.aggregate == "deadline" and _past_deadline(net, infra):
            return
        after = net.advance(status, False)
        server_loc = g.aloc[g.server]
        seen: set[str] = set()
        for t in r.fire(ctx, infra, partitioned):
            c = t.actor
            if c in status.lost:
                continue
            path = net.client_route(g.gra, c, g.aloc[c], server_loc)
            if path is None:
                continue
            q = net.delivery(path)
            sure = q == ONE
            if q:
                arrived = after
                if c in net.tapped and net.crosses(path):
                    arrived = after._replace(crossed=after.crossed | {c})
                yield t._replace(target=with_status(t.target, g.gra.edges, arrived),
                                 probability=t.probability if sure else t.probability * q)
            if not sure and c not in seen:
                seen.add(c)
                lost = after._replace(lost=after.lost | {c})
                yield t._replace(target=with_status(infra, g.gra.edges, lost), probability=1 - q)

    return fire


def _partial_eval(r: Rule, net: Network, name: str) -> Fire:
    """``eval_quorum`` / ``eval_deadline``: the base aggregation's premises except ``ready = clients``,
    replaced by the quorum or deadline condition, with FedAvg renormalised over the reporters."""

    def fire(ctx: RuleContext, infra: Infrastructure, partitioned: bool) -> Iterator[Transition]:
        g = infra.igra
        if not g.clients or not infra.prot.evs:
            return
        status = gra_status(g.gra)
        if net.aggregate == "quorum":
            if len(g.ready) < net.aggregate_at:
                return
        elif g.ready != g.clients and not (
                status.round_steps >= net.aggregate_at or g.clients - g.ready <= status.lost):
            return
        # the base rule's transition (its gate, location and protocol) with the reporters' model
        full = infra._replace(igra=g._replace(ready=g.clients))
        for t in r.fire(ctx, full, partitioned):
            m = renormalised_model(g, g.ready)
            g2 = t.target.igra._replace(curmodpar=m)
            detail = t.detail + ("; " if t.detail else "") + "reporters=" + ",".join(sorted(g.ready))
            yield t._replace(rule=name, detail=detail,
                             target=Infrastructure(g2, t.target.prot, t.target.poli))

    return fire


def _cuts(net: Network) -> Fire:
    """``cut_link``: the environment cuts one of the failing links still in ``gra``."""

    def fire(ctx: RuleContext, infra: Infrastructure, partitioned: bool) -> Iterator[Transition]:
        gra = infra.igra.gra
        if net.aggregate == "deadline" and _past_deadline(net, infra):
            return
        after = net.advance(gra_status(gra), False)
        for link in net.failures:
            if link & gra.edges:
                a, b = min(link)
                yield Transition("cut_link", ENVIRONMENT, a, f"{a}--{b}",
                                 with_status(infra, gra.edges - link, after), ONE)

    return fire


def _after_copies(fire: Fire) -> Fire:
    """``fire`` disabled while a report that crossed the attacker waits to be copied (``eavesdrop``
    is urgent: the attacker copies a report as it passes, before any other step)."""

    def wait(ctx: RuleContext, infra: Infrastructure, partitioned: bool) -> Iterator[Transition]:
        status = gra_status(infra.igra.gra)
        if status.crossed - status.seen:
            return
        yield from fire(ctx, infra, partitioned)

    return wait


def _eavesdrop(net: Network) -> Fire:
    """``eavesdrop``: the attacker copies a report of this round that crossed its location."""
    assert net.attacker is not None
    who, where = net.attacker

    def fire(ctx: RuleContext, infra: Infrastructure, partitioned: bool) -> Iterator[Transition]:
        gra = infra.igra.gra
        status = gra_status(gra)
        for c in sorted(status.crossed - status.seen):  # also past a deadline: a copy is no report
            copied = status._replace(seen=status.seen | {c})
            yield Transition("eavesdrop", who, where, f"report of {c}", with_status(infra, gra.edges, copied),
                             ONE)

    return fire
