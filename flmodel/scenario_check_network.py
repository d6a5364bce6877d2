"""Semantic checks of a scenario's time-varying topology (:mod:`flmodel.network`): contact windows,
losses and failures, the attacker's place and taps, routes, and which routes cross the attacker."""

from __future__ import annotations

from itertools import pairwise

from flcheck_spec.vocab import Position

from flmodel.errors import Diagnostic
from flmodel.infrastructure import Gra
from flmodel.network import Network
from flmodel.scenario_ast import (
    Named,
    Scenario,
)
from flmodel.scenario_build import attacker_taps, link_edges, routes_of, scenario_edges
from flmodel.scenario_check_base import MAX_EXACT_BITS, ChecksBase, Report
from flmodel.scenario_properties import observing_of

__all__ = ["NetworkChecks", "check_attacker_routes"]


class NetworkChecks(ChecksBase):
    """The network's part of the semantic checks (:func:`flmodel.scenario_check.check_scenario`)."""

    # --- time-varying topology (flmodel.network) ----------------------------------------------------
    def check_network(self) -> None:
        """Contact links are not also static links (a contact declares its link), each has one
        contact statement; losses and failures name declared links once each, with a probability in
        [0, 1); partial aggregation is a fedavg_rounds variant with a quorum within the clients or a
        positive deadline."""
        s = self.s
        contact_at: dict[tuple[str, str], Position] = {}
        for c in s.contacts:
            lk = c.link
            self._need_location(lk.a, lk.pos, "a contact")
            self._need_location(lk.b, lk.pos, "a contact")
            if lk.a == lk.b:
                self.report.add(lk.pos, f"contact from {lk.a!r} to itself")
            edges = [(lk.a, lk.b)] if lk.directed else [(lk.a, lk.b), (lk.b, lk.a)]
            for e in edges:
                if e in self.link_edges:
                    self.report.add(lk.pos, f"contact {lk.text()} is also a static link at "
                                    f"{self.link_edges[e]} (a contact declares its link; drop one)")
                    break
                if e in contact_at:
                    self.report.add(lk.pos, f"second contact statement for {lk.text()}; the first is at "
                                    f"{contact_at[e]} (list every window in one statement)")
                    break
            for e in edges:
                contact_at.setdefault(e, lk.pos)
        declared = {**self.link_edges, **contact_at}
        self.declared_edges = declared
        for kind, links in (("loss", [lo.link for lo in s.losses]), ("failure", list(s.failures))):
            seen: dict[tuple[str, str], Position] = {}
            for lk in links:
                edges = [(lk.a, lk.b)] if lk.directed else [(lk.a, lk.b), (lk.b, lk.a)]
                if not all(e in declared for e in edges):
                    self.report.add(lk.pos, f"{kind} on {lk.text()}, which is not a declared link (links "
                                    "or contact)")
                if any(e in seen for e in edges):
                    self.report.add(lk.pos, f"second {kind} statement for {lk.text()}; the first is at "
                                    f"{next(seen[e] for e in edges if e in seen)}")
                for e in edges:
                    seen.setdefault(e, lk.pos)
        for lo in s.losses:
            if not 0 <= lo.probability < 1:
                self.report.add(lo.pos, f"loss probability must be in [0, 1), got {lo.probability}")
                continue
            size = max(lo.probability.numerator.bit_length(), lo.probability.denominator.bit_length())
            if (lo.retries + 1) * size > MAX_EXACT_BITS:  # refused before anything computes P^(K+1)
                most = MAX_EXACT_BITS // max(size, 1) - 1
                self.report.add(lo.pos, f"retries {lo.retries} makes the exact delivery probability "
                                f"1 - ({lo.probability})^{lo.retries + 1} a number of about "
                                f"{(lo.retries + 1) * size:,} bits; at most retries {most:,} for this "
                                "probability (flcheck's probabilities are exact)")
        prot = s.protocol
        if prot is None or prot.aggregate is None:
            return
        where = prot.pos
        if prot.aggregate == "all":
            if prot.aggregate_at is not None:
                self.report.add(where, "'aggregate all' takes no number")
            return
        if prot.variant != "fedavg_rounds":
            self.report.add(where, f"'aggregate {prot.aggregate}' is a variant of fedavg_rounds, not of "
                            f"{prot.variant}")
        if prot.traces == "full":
            self.report.add(where, f"'aggregate {prot.aggregate}' needs 'traces drop'")
        n = prot.aggregate_at
        if n is None:
            self.report.add(where, f"'aggregate {prot.aggregate}' needs a number: 'aggregate "
                            f"{prot.aggregate} N'")
        elif prot.aggregate == "quorum" and not 1 <= n <= len(s.clients):
            self.report.add(where, f"quorum {n} is not within 1..{len(s.clients)} (the clients)")
        elif prot.aggregate == "deadline" and n < 1:
            self.report.add(where, f"deadline must be at least 1 step, got {n}")

    # --- attacker ---------------------------------------------------------------------------------
    def check_attacker(self) -> None:
        a = self.s.attacker
        if a is None:
            return
        if a.location is not None:
            self._need_location(a.location, a.pos, "the attacker's placement")
            if a.name in self.actor_locs and self.actor_locs[a.name] != a.location:
                self.report.add(a.pos, f"attacker {a.name!r} is placed at {self.actor_locs[a.name]!r}, "
                                f"not {a.location!r}")
        elif a.link is not None:
            lk = a.link
            if not all(e in self.declared_edges for e in link_edges(lk)):
                self.report.add(lk.pos, f"attacker {a.name!r} on {lk.text()}, which is not a declared link "
                                "(links or contact)")
        elif a.name not in self.actor_locs:
            self.report.add(a.pos, f"attacker {a.name!r} is not an actor; declare it or write 'attacker "
                            f"{a.name} at LOCATION observes …'")

    # --- routes ---------------------------------------------------------------------------------------
    def check_routes(self) -> None:
        """A given route runs from its client's location to the server's over declared links (static or
        contact, in the link's direction); one route per client."""
        s = self.s
        first: dict[str, Position] = {}
        server_loc = s.server.location if s.server is not None else None
        for r in s.routes:
            if r.client not in self.clients:
                self.report.add(r.pos, f"route for {r.client!r}, which is not a client")
                continue
            if r.client in first:
                self.report.add(r.pos, f"second route for {r.client}; the first is at {first[r.client]}")
                continue
            first[r.client] = r.pos
            start = self.actor_locs.get(r.client)
            if r.path[0] != start:
                self.report.add(r.pos, f"the route of {r.client} starts at {r.path[0]!r}, not at its "
                                f"location {start!r}")
            if server_loc is not None and r.path[-1] != server_loc:
                self.report.add(r.pos, f"the route of {r.client} ends at {r.path[-1]!r}, not at the server's "
                                f"location {server_loc!r}")
            for a, b in pairwise(r.path):
                if (a, b) not in self.declared_edges:
                    self.report.add(r.pos, f"the route of {r.client} takes {a} -> {b}, which is not a "
                                    "declared link (links or contact)")


def check_attacker_routes(s: Scenario) -> list[Diagnostic]:
    """An attacker observes what reaches it along the links ([IIIf-FL]: security follows from the
    infrastructure): ``gradient_c`` only when the route of ``c``'s report (the route given for ``c``,
    else the shortest path of links from ``c``'s location to the server's, every link of a contact
    plan counted) crosses the attacker's location or uses the link it taps; ``partition_c`` only at
    ``c``'s location; ``curmodpar`` at the server's location or on the route of the model's broadcast
    to some client. ``copied`` (what it copies) may stay empty; other observables are protocol state
    (round, who reported) and are not bound to the graph. Names observed by the attacker and by
    ``observing`` clauses are checked."""
    a = s.attacker
    attacker, _, tap = attacker_taps(s)
    if a is None or attacker is None or s.server is None:
        return []
    report = Report(Position(s.source, 1, 1))
    edges = scenario_edges(s)
    locations = frozenset(n.name for n in s.locations)
    net = Network(routes=routes_of(s), attacker=attacker, tap=tap)
    gra = Gra(locations, edges)
    server_loc = s.server.location
    where = attacker[1]
    spot = f"on {a.link.text()}" if a.link is not None else f"at {where!r}"
    placed = {c.actor: c.location for c in s.clients}
    named: list[Named] = list(a.observes)
    for p in s.properties:
        named.extend(observing_of(p))
    for n in named:
        kind, _, client = n.name.partition("_")
        if kind == "gradient" and client in placed:
            path = net.client_route(gra, client, placed[client], server_loc)
            if path is None:
                report.add(n.pos, f"attacker {a.name!r} {spot} observes {n.name}, but {client}'s "
                           f"report has no route from {placed[client]!r} to the server at {server_loc!r}")
            elif not net.crosses(path):
                report.add(n.pos, f"attacker {a.name!r} {spot} observes {n.name}, but {client}'s "
                           f"report travels {' -> '.join(path)} and never "
                           f"{'uses ' + a.link.text() if a.link is not None else f'reaches {where!r}'}")
        elif kind == "partition" and client in placed and where != placed[client]:
            report.add(n.pos, f"attacker {a.name!r} {spot} observes {n.name}, which never leaves "
                       f"{placed[client]!r}")
        elif n.name == "curmodpar" and where != server_loc:
            paths = [net.route(gra, server_loc, loc) for loc in placed.values()]
            if not any(path is not None and net.crosses(path) for path in paths):
                report.add(n.pos, f"attacker {a.name!r} {spot} observes curmodpar, but no route of the "
                           f"model from the server at {server_loc!r} to a client "
                           f"{'uses ' + a.link.text() if a.link is not None else f'crosses {where!r}'}")
    return report.items
