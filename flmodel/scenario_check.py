"""Semantic checks of a scenario (all problems collected, each with its position).

Checked (seed 004, III-B unless stated): locations are declared once and every link, actor, policy and
attacker location is declared; actor names are unique, the server is not a client, there is a server
and at least one client; policies name known actors and the IIIf FL actions ``put_part``, ``get_grad``,
``eval_server``; data points are declared once with the same number of features; the dataset names
known points once each; an initial partition gives every client a part, only to clients, with parts
pairwise disjoint whose union is the dataset (``dataset G = ⋃•_{c} Part c``); the model's loss is
known, its rate positive and its initial parameter has the dimension the loss needs; noise mechanisms
are well-formed (randomized response and geometric bases in (0, 1], non-empty ranges, positive steps,
additive noise probabilities positive and summing to 1), name known clients and give no client two
different mechanisms in client-specific statements; the protocol variant is
known; bounds are given once each and at least one bound keeps the state space finite; neighbouring
datasets (III-C) change the dataset by points that exist, are in (or out of) it as the change needs, and
whose new points have an owner when the data are partitioned; properties have unique names, refer to
declared neighbours, observe known observables and state sensible bounds (ε ≥ 0, probabilities in
[0, 1]).
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

from flmodel.errors import Diagnostic
from flmodel.scenario_ast import Named, Pos, Scenario

ACTIONS = ("put_part", "get_grad", "eval_server")
LOSS_NAMES = ("squared", "squared_nobias", "hinge")
PROTOCOLS = ("published", "fedavg_rounds")


class _Diags:
    def __init__(self, default: Pos):
        self.items: list[Diagnostic] = []
        self.default = default

    def add(self, pos: Pos | None, message: str) -> None:
        p = pos if pos is not None and pos.line is not None else self.default
        self.items.append(Diagnostic(p.source, p.line, p.column, message))


def _close(name: str, known: list[str] | set[str] | tuple[str, ...]) -> str:
    items = sorted(known)
    if not items:
        return "none declared"
    if len(items) > 10:
        items = [*items[:10], "…"]
    return "known: " + ", ".join(items)


def check_scenario(s: Scenario, extras: dict[str, Any] | None = None) -> list[Diagnostic]:
    """All semantic problems of ``s`` (empty list when it is fine)."""
    extras = extras or {}
    positions: dict[str, Pos] = extras.get("positions", {})
    d = _Diags(Pos(s.source, 1, 1))

    # --- locations and links (gra) --------------------------------------------------------------
    locs: set[str] = set()
    for n in s.locations:
        if n.name in locs:
            d.add(n.pos, f"location {n.name!r} declared twice")
        locs.add(n.name)

    def need_loc(name: str | None, pos: Pos, what: str) -> None:
        if name is not None and name not in locs:
            d.add(pos, f"unknown location {name!r} in {what}; {_close(name, locs)}")

    for lk in s.links:
        need_loc(lk.a, lk.pos, "a link")
        need_loc(lk.b, lk.pos, "a link")
        if lk.a == lk.b:
            d.add(lk.pos, f"link from {lk.a!r} to itself")

    # --- actors (aloc) ----------------------------------------------------------------------------
    actors: dict[str, str] = {}
    placed = ([s.server] if s.server else []) + list(s.clients) + list(s.actors)
    for p in placed:
        if p.actor in actors:
            d.add(p.pos, f"actor {p.actor!r} declared twice (each actor has one location: aloc)")
        actors[p.actor] = p.location
        need_loc(p.location, p.pos, f"the placement of {p.actor!r}")
    clients = {c.actor for c in s.clients}
    if s.server is None:
        d.add(None, "no server declared; expected a statement 'server NAME at LOCATION'")
    if not s.clients:
        d.add(None, "no clients declared; expected a statement 'clients NAME at LOCATION, …'")

    # --- policies (poli) ----------------------------------------------------------------------------
    if s.policies_mode is not None and s.policies:
        d.add(positions.get("policies_mode"), f"'policies {s.policies_mode}' together with explicit "
              "'policy' statements; use one or the other")
    who_names = {id(decl): (who, acts) for decl, who, acts in extras.get("policy_names", [])}
    for pol in s.policies:
        need_loc(pol.location, pol.pos, "a policy")
        who, acts = who_names.get(id(pol), (None, ()))
        if pol.actors is not None:
            named = who or tuple(Named(a, pol.pos) for a in pol.actors)
            for n in named:
                if n.name not in actors:
                    d.add(n.pos, f"policy at {pol.location!r} names unknown actor {n.name!r}; "
                          f"{_close(n.name, set(actors))}")
        acts = acts or tuple(Named(a, pol.pos) for a in pol.actions)
        for a in acts:
            if a.name not in ACTIONS:
                d.add(a.pos, f"unknown action {a.name!r} in a policy; expected one of {', '.join(ACTIONS)}")

    # --- data, dataset, partition ----------------------------------------------------------------
    points: dict[str, Any] = {}
    nfeat = Counter(len(p.features) for p in s.data)
    common = nfeat.most_common(1)[0][0] if nfeat else None
    for p in s.data:
        if p.name in points:
            d.add(p.pos, f"data point {p.name!r} declared twice")
        points[p.name] = p
        if common is not None and len(p.features) != common:
            d.add(p.pos, f"data point {p.name!r} has {len(p.features)} features; the others have {common}")
        if p.owner is not None and p.owner not in clients:
            d.add(p.pos, f"data point {p.name!r} is observed by {p.owner!r}, which is not a client; "
                  f"{_close(p.owner, clients)}")
    if s.dataset is not None:
        seen: set[str] = set()
        for n in s.dataset:
            if n.name not in points:
                d.add(n.pos, f"dataset names unknown data point {n.name!r}; {_close(n.name, set(points))}")
            if n.name in seen:
                d.add(n.pos, f"data point {n.name!r} listed twice in the dataset (a dataset is a set)")
            seen.add(n.name)
        dataset = seen
    else:
        dataset = set(points)
    if s.partition is not None:
        given: dict[str, Any] = {}
        owner_of: dict[str, str] = {}
        for part in s.partition:
            if part.client not in clients:
                what = "the server" if s.server and part.client == s.server.actor else "not a client"
                d.add(part.pos, f"partition gives a part to {part.client!r}, which is {what}")
            if part.client in given:
                d.add(part.pos, f"client {part.client!r} has two parts in the partition")
            given[part.client] = part
            for n in part.points:
                if n.name not in points:
                    d.add(n.pos, f"partition names unknown data point {n.name!r}")
                    continue
                if n.name not in dataset:
                    d.add(n.pos, f"partition puts {n.name!r}, which is not in the dataset, "
                          f"on {part.client!r}")
                if n.name in owner_of:
                    d.add(n.pos, f"parts overlap: {n.name!r} is in the parts of both {owner_of[n.name]!r} "
                          f"and {part.client!r} (put_part needs disjoint parts)")
                else:
                    owner_of[n.name] = part.client
        ppos = positions.get("partition")
        for c in s.clients:
            if c.actor not in given:
                d.add(ppos, f"client {c.actor!r} has no part in the partition (write '{c.actor}: {{}}' "
                      "for an empty part)")
        missing = sorted(dataset - set(owner_of))
        if missing:
            d.add(ppos, f"the partition does not cover the dataset: {', '.join(missing)} "
                  "on no client (put_part needs dataset = the disjoint union of the parts)")
        for name, p in points.items():
            if name in owner_of and p.owner is not None and p.owner != owner_of[name]:
                d.add(p.pos, f"data point {name!r} is observed by {p.owner!r} but the partition gives it "
                      f"to {owner_of[name]!r}")

    # --- model ---------------------------------------------------------------------------------
    if s.model is None:
        d.add(None, "no learning model; expected 'model LOSS rate ETA initial (W, …)'")
    else:
        m = s.model
        if m.loss not in LOSS_NAMES:
            d.add(m.pos, f"unknown loss {m.loss!r}; expected one of {', '.join(LOSS_NAMES)}")
        else:
            if common is not None:
                need = common + (0 if m.loss == "squared_nobias" else 1)
                if len(m.initial) != need:
                    d.add(m.pos, f"initial model has dimension {len(m.initial)}; loss {m.loss} on data with "
                          f"{common} feature(s) needs {need}")
            if m.loss == "hinge":
                for p in s.data:
                    if p.target not in (1, -1):
                        d.add(p.pos, f"hinge loss needs labels -1 or +1; {p.name!r} has {p.target}")
        if m.rate <= 0:
            d.add(m.pos, f"learning rate must be positive, got {m.rate}")

    # --- noise ---------------------------------------------------------------------------------
    mechs: dict[str, tuple[Any, Pos]] = {}
    noise_names = {id(decl): cl for decl, cl in extras.get("noise_names", [])}
    for nd in s.noise:
        _check_mechanism(nd.mechanism, nd.pos, d)
        named = noise_names.get(id(nd)) or (tuple(Named(c, nd.pos) for c in nd.clients)
                                            if nd.clients is not None else None)
        if named is None:  # "noise MECH": every client (later "noise for" statements refine it)
            continue
        for n in named:
            if n.name not in clients:
                d.add(n.pos, f"noise for {n.name!r}, which is not a client; {_close(n.name, clients)}")
            key = (nd.mechanism.kind, nd.mechanism.base, nd.mechanism.grid, nd.mechanism.lo,
                   nd.mechanism.hi, nd.mechanism.step, nd.mechanism.table, nd.target)
            if n.name in mechs and mechs[n.name][0] != key:
                d.add(n.pos, f"client {n.name!r} gets two different noise mechanisms "
                      f"(the other at line {mechs[n.name][1].line})")
            mechs[n.name] = (key, nd.pos)

    # --- protocol and bounds ------------------------------------------------------------------------
    if s.protocol is not None and s.protocol.variant not in PROTOCOLS:
        d.add(s.protocol.pos, f"unknown protocol variant {s.protocol.variant!r}; expected one of "
              f"{', '.join(PROTOCOLS)}")
    kinds_seen: set[str] = set()
    for b in s.bounds:
        if b.kind in kinds_seen:
            d.add(b.pos, f"bound {b.kind} given twice")
        kinds_seen.add(b.kind)
    if not s.bounds:
        d.add(None, "no bounds: the state space of →FL is infinite without them; expected "
              "'bounds rounds N' and/or 'bounds events N'")

    # --- neighbours ----------------------------------------------------------------------------------
    nb_names: set[str] = set()
    for nb in s.neighbours:
        if nb.name in nb_names:
            d.add(nb.pos, f"neighbour {nb.name!r} declared twice")
        nb_names.add(nb.name)
        current = set(dataset)
        for ch in nb.changes:
            for nm in (ch.old, ch.new):
                if nm is not None and nm not in points:
                    d.add(ch.pos, f"neighbour {nb.name!r} names unknown data point {nm!r}")
            if ch.old is not None and ch.old in points:
                if ch.old not in current:
                    d.add(ch.pos, f"neighbour {nb.name!r}: {ch.old!r} is not in the dataset")
                current.discard(ch.old)
            if ch.new is not None and ch.new in points:
                if ch.new in current:
                    d.add(ch.pos, f"neighbour {nb.name!r}: {ch.new!r} is already in the dataset")
                current.add(ch.new)
                if s.partition is not None and ch.kind == "add" and points[ch.new].owner is None:
                    d.add(ch.pos, f"neighbour {nb.name!r} adds {ch.new!r}, which has no owner; the data are "
                          f"partitioned, so write 'observed by CLIENT' in its data statement")
        if current == set(dataset):
            d.add(nb.pos, f"neighbour {nb.name!r} equals the dataset (D ◇1 D' needs D ≠ D')")

    # --- attacker ------------------------------------------------------------------------------------
    if s.attacker is not None:
        a = s.attacker
        if a.location is not None:
            need_loc(a.location, a.pos, "the attacker's placement")
            if a.name in actors and actors[a.name] != a.location:
                d.add(a.pos, f"attacker {a.name!r} is placed at {actors[a.name]!r}, not {a.location!r}")
        elif a.name not in actors:
            d.add(a.pos, f"attacker {a.name!r} is not an actor; declare it or write 'attacker {a.name} at "
                  "LOCATION observes …'")

    # --- properties ----------------------------------------------------------------------------------
    pnames: set[str] = set()
    prop_extra = extras.get("prop_extra", {})
    for p in s.properties:
        ex = prop_extra.get(id(p), {})
        if p.name in pnames:
            d.add(p.pos, f"property {p.name!r} declared twice")
        pnames.add(p.name)
        if p.neighbour is not None and p.neighbour not in nb_names:
            d.add(ex.get("_nbpos", p.pos),
                  f"property {p.name!r} refers to unknown neighbour {p.neighbour!r}; "
                  f"{_close(p.neighbour, nb_names)}")
        if p.bound is not None and p.kind in ("probability", "advantage") and not 0 <= p.bound <= 1:
            d.add(ex.get("_boundpos", p.pos), f"property {p.name!r}: bound {p.bound} is not in [0, 1]")
        if p.eps is not None:
            if p.eps.log and p.eps.value < 1:
                d.add(p.pos, f"property {p.name!r}: ε = ln({p.eps.value}) is negative; "
                      "expected ln(r) with r >= 1")
            if not p.eps.log and p.eps.value < 0:
                d.add(p.pos, f"property {p.name!r}: ε must be >= 0, got {p.eps.value}")
    return d.items


def check_observables(s: Scenario, known: set[str]) -> list[Diagnostic]:
    """Observed names (attacker, ``observing``) that the system does not offer."""
    d = _Diags(Pos(s.source, 1, 1))
    named: list[Named] = []
    if s.attacker is not None:
        named.extend(s.attacker.observes)
    for p in s.properties:
        named.extend(p.observing)
    for n in named:
        if n.name not in known:
            d.add(n.pos, f"unknown observable {n.name!r}; {_close(n.name, known)}")
    return d.items


def _check_mechanism(m: Any, pos: Pos, d: _Diags) -> None:
    p = m.pos if m.pos.line is not None else pos
    if m.kind == "none":
        return
    if m.kind == "additive":
        total = sum((q for _, q in m.table), Fraction(0))
        if any(q <= 0 for _, q in m.table):
            d.add(p, "additive noise: every probability must be positive")
        if total != 1:
            d.add(p, f"additive noise: the probabilities sum to {total}, not 1")
        if len({z for z, _ in m.table}) != len(m.table):
            d.add(p, "additive noise: a noise value is listed twice")
        return
    base: Fraction = m.base
    if m.kind == "rr":
        if not 0 < base <= 1:
            d.add(p, f"randomized response needs 0 < r <= 1, got {base}")
        if len(set(m.grid)) != len(m.grid):
            d.add(p, "randomized response grid has repeated values")
        return
    if not 0 < base < 1:
        d.add(p, f"{m.kind} mechanism needs 0 < {'r' if m.kind == 'geometric' else 'q'} < 1, got {base}")
    if m.lo is not None and m.hi is not None and m.lo > m.hi:
        d.add(p, f"empty range {m.lo} .. {m.hi}")
    if m.step is not None and m.step <= 0:
        d.add(p, f"step must be positive, got {m.step}")
    elif m.lo is not None and m.hi is not None:
        step = m.step if m.step is not None else Fraction(1)
        k = (m.hi - m.lo) / step
        if k.denominator != 1:
            d.add(p, f"range {m.lo} .. {m.hi} is not a whole number of steps of {step}")
