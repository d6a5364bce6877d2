"""Symmetry among interchangeable clients: detection and the quotient system.

The group. A permutation ``π`` of the clients acts on a state of the bounded FL system together with
an induced permutation ``λ`` of the locations and ``δ`` of the data points: ``(π·s)`` has
``ready' = π(ready)``, ``gradient' (π c) = gradient c``, ``partition' (π c) = δ(partition c)``, every
trace event renamed (``Get c v ↦ Get (π c) v``, ``Put [Part] ↦ Put [π·Part]``) and, with a
time-varying topology (:mod:`flmodel.network`), the status's sets of lost, crossed and copied reports
renamed by ``π`` and the links still up renamed by ``λ`` (they change only when links may be cut);
``aloc``, the locations, ``poli``, ``dataset``, ``curmodpar``, ``clients`` and the bookkeeping (round,
clock, steps of the round, events, last rule, partitioned) are fixed by every element of the group
(checked by :func:`detect_symmetry`, so they are left as they are). :func:`detect_symmetry` accepts a
transposition ``(c d)`` only when

* ``c`` and ``d`` have the same noise mechanism and noise target;
* they share a location (``λ = id``), or each sits alone at its own location (``λ = (aloc c  aloc d)``);
* their initial parts have the same multiset of ``(features, target)`` (``δ`` pairs the points in the
  order of that multiset; without an initial partition both parts are empty and ``δ = id``);
* the policy table is invariant under ``(π, λ)``, and so is the link graph ``gra`` unless the
  topology is a network whose links never fail (next item);
* with a time-varying topology: neither is the attacker and ``λ`` fixes the attacker's location (or
  tapped link); the reports the attacker taps are permuted among themselves; when links may fail,
  contact windows, losses and the set of links that may fail are invariant under ``λ`` (a state's
  links are then renamed); and in every configuration the
  network can be in (a set of cut links, the saturated round and clock: all of them are enumerated)
  the route of every client ``x``'s report decides the same as the route of ``π x``'s in the renamed
  configuration: whether there is one, the probability ``q`` that the report arrives and whether it
  crosses the attacker (the only things the report step reads of a route; routes break ties by name,
  so the paths themselves need not be renamed onto each other). When no link may fail, the links,
  windows and losses are read by no rule but through these routes (a link observable ``link_a_b``
  depends on the round and clock alone, which every element of the group fixes), so the comparison of
  what the routes decide replaces the graph automorphism: satellites of a Walker shell whose sites no
  automorphism of the inter-satellite links maps onto each other are interchangeable when their
  reports' routes decide the same;

and refuses the rest (a rule set other than ``published``/``fedavg_rounds`` with or without a network;
more network configurations than :data:`MAX_ROUTE_CHECKS` allows to enumerate). The rules are then
equivariant, ``succ(π·s) = π·succ(s)`` with the same probabilities (every rule quantifies over
``clients G`` as a set, ``eval_server``'s ``Σ_c (|part c|/n)·gradient c`` and the renormalised FedAvg
of partial rounds are symmetric, the policy gate reads only invariant components, the network's report
step reads a route only through what it decides, the quorum and deadline conditions count), which the
tests check state by state. Valid transpositions compose to automorphisms, so the connected components
of the valid transpositions are the symmetry classes and the group is the product of the full
symmetric groups on the classes.

The quotient. :class:`SymmetricSystem` replaces every state by a representative of its orbit:
within each class the clients are sorted by a key of their own components (ready, gradient, the
``δ``-invariant description of their part, whether their report is lost, crossed or copied, how many
of their location's links are cut) and renamed onto the class's names in sorted order, the
same permutation applied to every component that names a client. A representative is always a
member of the orbit; when keys tie, two members of one orbit may both be kept, which costs states, not
soundness. Outgoing steps of a representative are its own steps with targets replaced by their
representatives, and the probabilities of one action's outcomes that land in the same representative
summed: the lumped Markov decision process of the orbit partition.

Theorems used (symmetric atoms: atoms whose value is the same on ``s`` and ``π·s`` for every ``π`` of the
group). [ES96] and [CEFJ96]: the orbit relation of an automorphism group of a Kripke structure is a
bisimulation, so a CTL formula over symmetric atoms holds in ``s`` iff it holds in the representative of ``s``
in the quotient. [KNP06]: for an MDP whose transition function is invariant under the group, the orbit
relation is a probabilistic bisimulation, so minimal and maximal (and, for a symmetric scheduler such as the
uniform one, the induced) reachability probabilities of symmetric targets are the same in the quotient,
exactly. Which atoms are symmetric (those that name no client, location or data point a permutation of the
group moves) is decided by the checker's application layer, which shrinks the classes accordingly (``fixed``
of :func:`detect_symmetry`).

Example::

    >>> from flmodel.scenario import load_scenario
    >>> from flmodel.scenario_build import build_system
    >>> import flcheck_spec
    >>> s = load_scenario(flcheck_spec.resource("scenarios", "moniteo_swarm8.fl"), defines={"N": 3})
    >>> sym, reason = detect_symmetry(build_system(s))
    >>> sym.classes if sym else reason
    (('sat1', 'sat3'),)
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from flmodel.data import DataPoint, Dataset, Partition
from flmodel.frozen import FrozenMap
from flmodel.infrastructure import Get, Gra, Igraph, Infrastructure, Location, Policy, Protocol, Put, Trace
from flmodel.network import Edge, NetStatus, Network
from flmodel.scenario_build import ScenarioSystem, client_noise
from flmodel.system import FLState

__all__ = ["ClientSymmetry", "SymmetricSystem", "detect_symmetry", "permute_state"]

_tnew = tuple.__new__


@dataclass(frozen=True)
class ClientSymmetry:
    """The detected group: ``classes`` (sorted tuples of at least two interchangeable clients, the
    group is the product of their symmetric groups), per client of a class its ``location`` when the
    class's clients sit at distinct locations (``λ`` maps ``location[c]`` to ``location[π c]``; absent
    when the class shares one location) and its ``reference`` part (its initial part in the order of
    the ``(features, target)`` multiset: ``δ`` maps ``reference[c][k]`` to ``reference[π c][k]``).
    ``edges`` are the initial links when the environment may cut some (``failure``): the state's
    links are then renamed by ``λ``; empty otherwise (the links never change)."""

    classes: tuple[tuple[str, ...], ...]
    location: Mapping[str, str]
    reference: Mapping[str, tuple[DataPoint, ...]]
    edges: frozenset[Edge] = frozenset()

    def clients(self) -> frozenset[str]:
        """The clients some permutation of the group moves."""
        return frozenset(c for cls in self.classes for c in cls)

    def data_map(self, perm: Mapping[str, str]) -> dict[DataPoint, DataPoint]:
        """``δ_π`` on the points it moves (a point not listed is fixed)."""
        out: dict[DataPoint, DataPoint] = {}
        for c, d in perm.items():
            if c != d:
                for x, y in zip(self.reference[c], self.reference[d], strict=True):
                    if x != y:
                        out[x] = y
        return out

    def location_map(self, perm: Mapping[str, str]) -> dict[Location, Location]:
        """``λ_π`` on the locations it moves (a location not listed is fixed)."""
        loc = self.location
        return {loc[c]: loc[d] for c, d in perm.items() if c != d and c in loc}


def _point_key(x: DataPoint) -> tuple[Any, ...]:
    return (x.features, x.target, x.name)


def _profile(part: Iterable[DataPoint]) -> tuple[tuple[tuple[Fraction, ...], Fraction], ...]:
    return tuple(sorted((x.features, x.target) for x in part))


def _rename_policies(pols: Sequence[Policy], perm: Mapping[str, str]) -> frozenset[Policy]:
    return frozenset(
        p if p.actors is None
        else Policy(frozenset(perm.get(a, a) for a in p.actors), p.actions, p.at_location)
        for p in pols)


class _UnionFind:
    def __init__(self, items: Iterable[str]) -> None:
        self.parent = {x: x for x in items}

    def find(self, x: str) -> str:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


#: At most this many (network configuration, client) pairs are routed to verify that the routes
#: follow the permutations (:func:`_route_table`); beyond it a network scenario gets no symmetry.
MAX_ROUTE_CHECKS = 200_000


def _rename_edges(edges: Iterable[Edge], lam: Mapping[Location, Location]) -> frozenset[Edge]:
    return frozenset((lam.get(a, a), lam.get(b, b)) for a, b in edges)


#: What a report's route decides (:func:`flmodel.network.networked`'s report step): none when there is
#: no route, else the probability that the report arrives and whether it crosses the attacker.
RouteEffect = tuple[Fraction, bool] | None
_Config = tuple[frozenset[int], int, int]


def _route_table(system: ScenarioSystem, net: Network) -> tuple[dict[_Config, dict[str, RouteEffect]], str]:
    """What the route of every client's report decides (:data:`RouteEffect`) in every configuration
    the network can be in: a set of cut ``failure`` links (by index), the saturated ``round`` and
    ``clock``. Empty with a reason when there are more than :data:`MAX_ROUTE_CHECKS` (configuration,
    client) pairs."""
    g0 = system.fl.initial.igra
    clients = sorted(g0.clients)
    configs = net.configuration_count()
    if configs * max(len(clients), 1) > MAX_ROUTE_CHECKS:
        return {}, f"{configs} network configurations are too many to verify that the " \
                   f"routes follow the permutations"
    server_loc = g0.aloc[g0.server]
    table: dict[_Config, dict[str, RouteEffect]] = {}
    for cut, r, t, gra in net.configurations(g0.gra):
        row: dict[str, RouteEffect] = {}
        for c in clients:
            path = net.client_route(gra, c, g0.aloc[c], server_loc)
            row[c] = None if path is None else (net.delivery(path), net.crosses(path))
        table[(cut, r, t)] = row
    return table, ""


def _network_valid(net: Network, perm: Mapping[str, str], lam: Mapping[Location, Location],
                   routes: Mapping[_Config, Mapping[str, RouteEffect]]) -> bool:
    """Whether the network is invariant under ``(π, λ)``: the attacker stays (itself and its
    location), the reports it taps are permuted among themselves, when links may fail the contact
    windows, losses and the failing links are renamed onto themselves, and what every route decides
    follows the permutation in every configuration: ``effect(λ·config, π x) = effect(config, x)``
    (the report step reads a route only through its :data:`RouteEffect`; routes are chosen by name,
    so the paths themselves need not be renamed onto each other)."""
    if net.attacker is not None:
        who, where = net.attacker
        if who in perm or lam.get(where, where) != where or _rename_edges(net.tap, lam) != net.tap:
            return False
    if frozenset(perm.get(c, c) for c in net.tapped) != net.tapped:
        return False
    if net.failures and (
            {(lam.get(a, a), lam.get(b, b)): w for (a, b), w in net.windows.items()} != dict(net.windows)
            or {(lam.get(a, a), lam.get(b, b)): v for (a, b), v in net.losses.items()} != dict(net.losses)):
        return False
    index = {link: i for i, link in enumerate(net.failures)}
    image: dict[int, int] = {}
    for link, i in index.items():
        j = index.get(_rename_edges(link, lam))
        if j is None:
            return False
        image[i] = j
    for (cut, r, t), effects in routes.items():
        there = routes[(frozenset(image[i] for i in cut), r, t)]
        if any(there[perm.get(x, x)] != e for x, e in effects.items()):
            return False
    return True


def detect_symmetry(system: ScenarioSystem, fixed: Iterable[str] = (),
                    colours: Mapping[str, Hashable] | None = None) -> tuple[ClientSymmetry | None, str]:
    """The symmetry classes of ``system``'s clients, no client of ``fixed`` moved and no two clients of
    different ``colours`` swapped (a client without a colour has the colour ``None``; what the caller
    reads of a client beyond the system, e.g. the attributes of its attack steps), see the module
    docstring for the conditions, and a reason when there is none (``(None, reason)``)."""
    s = system.scenario
    fl = system.fl
    if s is None:
        return None, "the system has no scenario to derive the symmetry from"
    g0: Igraph = fl.initial.igra
    net = system.network
    if net is None and (s.networked or g0.gra.status is not None):
        return None, "the topology has a status the symmetry detection does not handle"
    if net is not None and g0.gra.status != NetStatus():
        return None, "the initial network status is not the built one"
    base_rules = fl.rules.name.removesuffix("+network") if net is not None else fl.rules.name
    if base_rules not in ("published", "fedavg_rounds"):
        return None, f"rule set {fl.rules.name!r} is not one the symmetry detection knows"
    if len(set(g0.gradient.values())) > 1 or g0.ready or len(fl.initial.prot.evs) != 1 \
            or () not in fl.initial.prot.evs:
        return None, "the initial state is not the built one (equal gradients, ready empty, traces {[]})"
    routes: dict[_Config, dict[str, RouteEffect]] = {}
    if net is not None:
        routes, reason = _route_table(system, net)
        if reason:
            return None, reason
    mechs, targets = client_noise(s)
    clients = sorted(g0.clients)
    fixed_set = set(fixed)
    others = {a: loc for a, loc in g0.aloc.items_tuple if a not in g0.clients}
    crowd: dict[str, int] = {}
    for _, loc in g0.aloc.items_tuple:
        crowd[loc] = crowd.get(loc, 0) + 1
    data = g0.dataset
    parts = {c: g0.part(c) for c in clients}
    if any(not p <= data for p in parts.values()):
        return None, "an initial part holds a point outside the dataset"
    reference = {c: tuple(sorted(parts[c], key=_point_key)) for c in clients}
    table = g0.gra.edges
    poli = fl.initial.poli.table

    paint = colours or {}

    def valid(c: str, d: str) -> bool:
        if paint.get(c) != paint.get(d):
            return False
        if (mechs.get(c), targets.get(c)) != (mechs.get(d), targets.get(d)):
            return False
        if _profile(parts[c]) != _profile(parts[d]):
            return False
        lc, ld = g0.aloc[c], g0.aloc[d]
        loc_perm: dict[str, str] = {}
        if lc != ld:
            if crowd[lc] != 1 or crowd[ld] != 1 or lc in others.values() or ld in others.values():
                return False
            loc_perm = {lc: ld, ld: lc}
        perm = {c: d, d: c}
        if (net is None or net.failures) and _rename_edges(table, loc_perm) != table:
            return False
        locations = set(poli) | set(loc_perm)
        for loc in locations:
            here = _rename_policies(poli.get(loc, ()), perm)
            if here != frozenset(poli.get(loc_perm.get(loc, loc), ())):
                return False
        return net is None or _network_valid(net, perm, loc_perm, routes)

    uf = _UnionFind(clients)
    movable = [c for c in clients if c not in fixed_set]
    for i, c in enumerate(movable):
        for d in movable[i + 1:]:
            if uf.find(c) != uf.find(d) and valid(c, d):
                uf.union(c, d)
    groups: dict[str, list[str]] = {}
    for c in movable:
        groups.setdefault(uf.find(c), []).append(c)
    classes = tuple(sorted(tuple(sorted(v)) for v in groups.values() if len(v) > 1))
    if not classes:
        return None, "no two clients are interchangeable"
    location = {c: g0.aloc[c] for cls in classes for c in cls
                if len({g0.aloc[x] for x in cls}) > 1}
    cut = table if net is not None and net.failures and location else frozenset()
    return ClientSymmetry(classes, location, {c: reference[c] for cls in classes for c in cls}, cut), ""


# --- the group action ------------------------------------------------------------------------------


def _map_partition(part: Partition, perm: Mapping[str, str],
                   delta: Mapping[DataPoint, DataPoint]) -> Partition:
    if delta:
        return FrozenMap({perm.get(c, c): frozenset(delta.get(x, x) for x in ps)
                          for c, ps in part.items_tuple})
    return FrozenMap({perm.get(c, c): ps for c, ps in part.items_tuple})


def _map_trace(t: Trace, perm: Mapping[str, str], delta: Mapping[DataPoint, DataPoint]) -> Trace:
    out: list[Any] = []
    for e in t:
        if type(e) is Get:
            out.append(Get(perm.get(e.client, e.client), e.value))
        elif type(e) is Put:
            out.append(Put(tuple(_map_partition(p, perm, delta) for p in e.parts)))
        else:  # Eval, Elided: name no client
            out.append(e)
    return tuple(out)


def _map_status(gra: Gra, perm: Mapping[str, str], sym: ClientSymmetry) -> Gra:
    """``gra`` with the network status's client sets renamed by ``π`` and, when links may be cut,
    its links by ``λ``."""
    st = gra.status
    if not isinstance(st, NetStatus):
        return gra
    if st.lost or st.crossed or st.seen:
        def rename(cs: frozenset[str]) -> frozenset[str]:
            return frozenset(perm.get(c, c) for c in cs)

        st = st._replace(lost=rename(st.lost), crossed=rename(st.crossed), seen=rename(st.seen))
    edges = gra.edges
    if sym.edges and edges != sym.edges:
        edges = _rename_edges(edges, sym.location_map(perm))
    return Gra(gra.locations, edges, st)


def permute_state(state: FLState, perm: Mapping[str, str], sym: ClientSymmetry) -> FLState:
    """``π·state`` for the client permutation ``perm`` (a dict client -> client, identity where
    absent) of the group ``sym``: every component that names a client renamed by ``π`` (``ready``,
    ``gradient``, ``partition``, the traces' events and the network status's lost, crossed and copied
    reports), data points by ``δ`` and, when links may be cut, the state's links by ``λ`` (no other
    component a state stores names a location the group moves)."""
    delta = sym.data_map(perm)
    infra = state.infra
    g = infra.igra
    ready = frozenset(perm.get(c, c) for c in g.ready)
    grads = FrozenMap({perm.get(c, c): v for c, v in g.gradient.items_tuple})
    part = _map_partition(g.partition, perm, delta)
    evs = infra.prot.evs
    if any(t and any(type(e) in (Get, Put) for e in t) for t in evs):
        evs = frozenset(_map_trace(t, perm, delta) for t in evs)
        prot = Protocol(evs)
    else:
        prot = infra.prot
    data: Dataset = g.dataset if not delta else frozenset(delta.get(x, x) for x in g.dataset)
    gra = g.gra if g.gra.status is None else _map_status(g.gra, perm, sym)
    g2 = _tnew(Igraph, (gra, g.aloc, g.server, g.clients, ready, grads, g.curmodpar, part, data))
    return _tnew(FLState, (_tnew(Infrastructure, (g2, prot, infra.poli)), *state[1:]))


def _no_status(c: str) -> tuple[()]:
    return ()


class SymmetricSystem(ScenarioSystem):
    """The quotient of ``base`` by the group ``sym`` (module docstring): states are orbit
    representatives, each action's outcomes lumped per representative. Same observables as ``base``;
    a neighbour system (:meth:`with_dataset`) is the unreduced one of ``base``."""

    def __init__(self, base: ScenarioSystem, sym: ClientSymmetry) -> None:
        super().__init__(base.fl, base.secrets, base.scenario)
        self.base = base
        self.symmetry = sym
        self._owner: dict[DataPoint, str] = {x: c for c, ref in sym.reference.items() for x in ref}
        self._memo: dict[FLState, FLState] = {}
        self._parts: dict[tuple[str, frozenset[DataPoint]], int] = {}
        self._ranks: dict[object, int] = {}

    def _rank(self, value: object) -> int:
        """A number per value, fixed once given (sorting by it is as canonical as by the value, and
        cheaper than comparing vectors of fractions)."""
        r = self._ranks.get(value)
        if r is None:
            r = self._ranks[value] = len(self._ranks)
        return r

    def _part_key(self, c: str, ps: frozenset[DataPoint]) -> int:
        """The rank (:meth:`_rank`) of a description of ``ps`` (the part of ``c``) that ``δ`` and ``π``
        leave unchanged (memoized; sorting compares small integers, not the points' fractions)."""
        hit = self._parts.get((c, ps))
        if hit is None:
            hit = self._parts[(c, ps)] = self._rank(self._describe_part(c, ps))
        return hit

    def _describe_part(self, c: str, ps: frozenset[DataPoint]) -> tuple[Any, ...]:
        own = self._owner
        ref = self.symmetry.reference
        out: list[tuple[Any, ...]] = []
        for x in ps:
            o = own.get(x)
            if o is None:
                out.append((0, x.name, 0))
            else:
                out.append((1 if o == c else 2, _point_key(x)[:2], ref[o].index(x)))
        return tuple(sorted(out))

    def _status_key(self, gra: Gra) -> Any:
        """Per client, what the network status says of it and its location (invariant under the
        group): lost, crossed, copied, and how many of its location's initial links are cut."""
        st = gra.status
        if not isinstance(st, NetStatus):
            return _no_status
        cut = self.symmetry.edges - gra.edges
        loc = self.symmetry.location
        return lambda c: (c in st.lost, c in st.crossed, c in st.seen,
                          sum(1 for e in cut if loc.get(c) in e) if cut else 0)

    def canonical(self, state: FLState) -> FLState:
        """The representative of ``state``'s orbit (memoized per state)."""
        hit = self._memo.get(state)
        if hit is not None:
            return hit
        g = state.infra.igra
        net = self._status_key(g.gra)
        perm: dict[str, str] = {}
        for cls in self.symmetry.classes:
            keyed = sorted(cls, key=lambda c: (c in g.ready, self._rank(g.gradient[c]),
                                               self._part_key(c, g.part(c)), net(c), c))
            for src, dst in zip(keyed, cls, strict=True):
                if src != dst:
                    perm[src] = dst
        out = state if not perm else permute_state(state, perm, self.symmetry)
        if len(self._memo) > 1 << 18:
            self._memo.clear()
        self._memo[state] = out
        return out

    def initial_states(self) -> tuple[FLState, ...]:
        return tuple(dict.fromkeys(self.canonical(s) for s in self.base.initial_states()))

    def successors(self, state: FLState) -> list[Any]:
        merged: dict[tuple[object, FLState], Fraction] = {}
        canonical = self.canonical
        for act, target, p in self.base.successors(state):
            key = (act, canonical(target))
            merged[key] = merged[key] + p if key in merged else p
        return [(a, t, p) for (a, t), p in merged.items()]

    def with_dataset(self, data: Iterable[DataPoint]) -> ScenarioSystem:
        return self.base.with_dataset(data)
