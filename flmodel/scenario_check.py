"""Semantic checks of a scenario (all problems collected, each with its position).

Checked ([IIIf-FL] III-B unless stated): locations are declared once and every link, actor, policy and
attacker location is declared; no link is given twice; actor names are unique, the server is not a
client, there is a server and at least one client; policies name known actors and the IIIf FL actions
``put_part``, ``get_grad``, ``eval_server``, and no two policy statements grant at the same location to
the same actors; data points are declared once with the same number of features; the dataset names
known points once each; an initial partition gives every client a part, only to clients, with parts
pairwise disjoint whose union is the dataset (``dataset G = ⋃•_{c} Part c``); the model's loss is
known, its rate positive and its initial parameter has the dimension the loss needs; noise mechanisms
are well-formed (randomized response and geometric bases in (0, 1], non-empty ranges, positive steps,
additive noise probabilities positive and summing to 1), name known clients; one noise statement is
for every client and no client is named in two client-specific ones; the protocol variant is
known; bounds are given once each and at least one bound keeps the state space finite; neighbouring
datasets (III-C) change the dataset by points that exist, are in (or out of) it as the change needs, and
whose new points have an owner when the data are partitioned; properties have unique names, refer to
declared neighbours, observe known observables and state sensible bounds (ε ≥ 0, probabilities in
[0, 1]); property options are given once each, and a ``crossval`` property's options are its own
(:data:`CROSSVAL_OPTIONS`, ``trials`` a positive integer, ``seed`` a non-negative integer). The
options of an ``attack`` are its experiment's parameters, checked by the experiment. ``attack_step``
statements name a rule of the built system (:func:`check_step_rules`) and a known actor (the
environment's ``cut_link`` steps are by ``environment``), once per rule and actor, with values >= 0
and probabilities <= 1; ``defence`` statements have unique names and remove by a rule, a known actor
or a known location.

A problem found in a family member says which (``in family i = 5: …``,
:func:`flmodel.scenario_family.diagnostic`); a repeated statement names the first one's position.
"""

from __future__ import annotations

import difflib
from collections import Counter
from fractions import Fraction
from typing import Any

from flcheck_spec.vocab import Position

from flmodel.errors import Diagnostic
from flmodel.network import ENVIRONMENT
from flmodel.scenario_ast import (
    Named,
    NeighbourDecl,
    Scenario,
    StepDecl,
)
from flmodel.scenario_check_base import Report, known_text
from flmodel.scenario_check_network import NetworkChecks
from flmodel.scenario_check_noise import NoiseChecks
from flmodel.scenario_properties import AttackProperty, CrossvalProperty, EpsSpec, neighbour_of, observing_of

ACTIONS = ("put_part", "get_grad", "eval_server")
LOSS_NAMES = ("squared", "squared_nobias", "hinge")
PROTOCOLS = ("published", "fedavg_rounds")
#: The options of a ``crossval`` property (``checker.app.check``): sampling trials and the random seed.
CROSSVAL_OPTIONS = ("trials", "seed")




def check_scenario(s: Scenario, extras: dict[str, Any] | None = None) -> list[Diagnostic]:
    """All semantic problems of ``s`` (empty list when it is fine).

    ``extras`` are the parser's positions of things the AST does not keep a position for:
    ``positions`` (statement tag -> position), ``policy_names`` and ``noise_names`` (the names of a
    policy or noise statement, each with its own position) and ``prop_extra`` (per property: the
    positions ``_nbpos`` of its neighbour and ``_boundpos`` of its bound)."""
    checks = _ScenarioChecks(s, extras or {})
    checks.check_locations()
    checks.check_links()
    checks.check_network()
    checks.check_actors()
    checks.check_policies()
    checks.check_data_points()
    checks.check_dataset()
    checks.check_partition()
    checks.check_model()
    checks.check_noise()
    checks.check_run()
    checks.check_protocol()
    checks.check_bounds()
    checks.check_neighbours()
    checks.check_attacker()
    checks.check_routes()
    checks.check_steps()
    checks.check_defences()
    checks.missing_locations()
    checks.check_properties()
    return checks.report.items


class _ScenarioChecks(NetworkChecks, NoiseChecks):
    """One method per part of a scenario, run in file-section order by :func:`check_scenario`; a
    method may rely on the names the methods before it collected (locations, actors, points, …)."""

    # --- locations and links (gra) ----------------------------------------------------------------
    def check_locations(self) -> None:
        for n in self.s.locations:
            if n.name in self.locs:
                self.report.add(n.pos, f"location {n.name!r} declared twice")
            self.locs.add(n.name)

    def missing_locations(self) -> None:
        """Without a ``locations`` statement every use of a location is unknown: one message, at the
        first use, naming the locations used (a statement that would declare them)."""
        if not self.undeclared:
            return
        names = list(self.undeclared)
        shown = ", ".join(names[:10]) + (", …" if len(names) > 10 else "")
        self.report.add(next(iter(self.undeclared.values())),
                        f"no locations statement, but the scenario uses {len(names)} location(s); expected "
                        f"'locations {shown}' before the first use")

    def check_links(self) -> None:
        first: dict[tuple[str, str], Position] = {}
        for lk in self.s.links:
            self._need_location(lk.a, lk.pos, "a link")
            self._need_location(lk.b, lk.pos, "a link")
            if lk.a == lk.b:
                self.report.add(lk.pos, f"link from {lk.a!r} to itself")
            edges = [(lk.a, lk.b)] if lk.directed else [(lk.a, lk.b), (lk.b, lk.a)]
            given = [first[e] for e in edges if e in first]
            if given:
                self.report.add(lk.pos, f"link {lk.text()} given twice; the first is at {given[0]}")
            for e in edges:
                first.setdefault(e, lk.pos)
        self.link_edges = dict(first)

    # --- actors (aloc) ----------------------------------------------------------------------------
    def check_actors(self) -> None:
        s = self.s
        placed = ([s.server] if s.server else []) + list(s.clients) + list(s.actors)
        for p in placed:
            if p.actor in self.actor_locs:
                self.report.add(p.pos, f"actor {p.actor!r} declared twice "
                                "(each actor has one location: aloc)")
            self.actor_locs[p.actor] = p.location
            self._need_location(p.location, p.pos, f"the placement of {p.actor!r}")
        if s.server is None:
            self.report.add(None, "no server declared; expected a statement 'server NAME at LOCATION'")
        if not s.clients:
            self.report.add(None, "no clients declared; expected a statement 'clients NAME at LOCATION, …'")

    # --- policies (poli) --------------------------------------------------------------------------
    def check_policies(self) -> None:
        s = self.s
        if s.policies_mode is not None and s.policies:
            self.report.add(self.positions.get("policies_mode"), f"'policies {s.policies_mode}' together "
                            "with explicit 'policy' statements; use one or the other")
        names_of = {id(decl): (who, acts) for decl, who, acts in self.extras.get("policy_names", [])}
        first: dict[tuple[str, frozenset[str] | None], Position] = {}
        for pol in s.policies:
            self._need_location(pol.location, pol.pos, "a policy")
            key = (pol.location, None if pol.actors is None else frozenset(pol.actors))
            if key in first:
                self.report.add(pol.pos, f"second policy at {pol.location!r} for the same actors; the first "
                                f"is at {first[key]} (list every action in one statement)")
            first.setdefault(key, pol.pos)
            who, acts = names_of.get(id(pol), (None, ()))
            if pol.actors is not None:
                for n in who or tuple(Named(a, pol.pos) for a in pol.actors):
                    if n.name not in self.actor_locs:
                        self.report.add(n.pos, f"policy at {pol.location!r} names unknown actor {n.name!r}; "
                                        f"{known_text(set(self.actor_locs))}")
            for a in acts or tuple(Named(a, pol.pos) for a in pol.actions):
                if a.name not in ACTIONS:
                    self.report.add(a.pos, f"unknown action {a.name!r} in a policy; expected one of "
                                    f"{', '.join(ACTIONS)}")

    # --- data, dataset, partition -----------------------------------------------------------------
    def check_data_points(self) -> None:
        counts = Counter(len(p.features) for p in self.s.data)
        self.features = counts.most_common(1)[0][0] if counts else None
        for p in self.s.data:
            if p.name in self.points:
                self.report.add(p.pos, f"data point {p.name!r} declared twice")
            self.points[p.name] = p
            if self.features is not None and len(p.features) != self.features:
                self.report.add(p.pos, f"data point {p.name!r} has {len(p.features)} features; the others "
                                f"have {self.features}")
            if p.owner is not None and p.owner not in self.clients:
                self.report.add(p.pos, f"data point {p.name!r} is observed by {p.owner!r}, which is not a "
                                f"client; {known_text(self.clients)}")

    def check_dataset(self) -> None:
        if self.s.dataset is None:
            self.dataset = set(self.points)
            return
        for n in self.s.dataset:
            if n.name not in self.points:
                self.report.add(n.pos, f"dataset names unknown data point {n.name!r}; "
                                f"{known_text(set(self.points))}")
            if n.name in self.dataset:
                self.report.add(n.pos, f"data point {n.name!r} listed twice in the dataset "
                                "(a dataset is a set)")
            self.dataset.add(n.name)

    def check_partition(self) -> None:
        """``dataset G = ⋃•_{c} Part c``: one part per client, only to clients, pairwise disjoint,
        covering the dataset."""
        s = self.s
        if s.partition is None:
            return
        given: set[str] = set()
        owner_of: dict[str, str] = {}
        for part in s.partition:
            if part.client not in self.clients:
                what = "the server" if s.server and part.client == s.server.actor else "not a client"
                self.report.add(part.pos, f"partition gives a part to {part.client!r}, which is {what}")
            if part.client in given:
                self.report.add(part.pos, f"client {part.client!r} has two parts in the partition")
            given.add(part.client)
            for n in part.points:
                if n.name not in self.points:
                    self.report.add(n.pos, f"partition names unknown data point {n.name!r}")
                    continue
                if n.name not in self.dataset:
                    self.report.add(n.pos, f"partition puts {n.name!r}, which is not in the dataset, "
                                    f"on {part.client!r}")
                if n.name in owner_of:
                    self.report.add(n.pos, f"parts overlap: {n.name!r} is in the parts of both "
                                    f"{owner_of[n.name]!r} and {part.client!r} "
                                    "(put_part needs disjoint parts)")
                else:
                    owner_of[n.name] = part.client
        where = self.positions.get("partition")
        for c in s.clients:
            if c.actor not in given:
                self.report.add(where, f"client {c.actor!r} has no part in the partition (write "
                                f"'{c.actor}: {{}}' for an empty part)")
        missing = sorted(self.dataset - set(owner_of))
        if missing:
            self.report.add(where, f"the partition does not cover the dataset: {', '.join(missing)} "
                            "on no client (put_part needs dataset = the disjoint union of the parts)")
        for name, p in self.points.items():
            if name in owner_of and p.owner is not None and p.owner != owner_of[name]:
                self.report.add(p.pos, f"data point {name!r} is observed by {p.owner!r} but the partition "
                                f"gives it to {owner_of[name]!r}")

    # --- model ------------------------------------------------------------------------------------
    def check_model(self) -> None:
        m = self.s.model
        if m is None:
            self.report.add(None, "no learning model; expected 'model LOSS rate ETA initial (W, …)'")
            return
        if m.loss not in LOSS_NAMES:
            self.report.add(m.pos, f"unknown loss {m.loss!r}; expected one of {', '.join(LOSS_NAMES)}")
        else:
            if self.features is not None:
                need = self.features + (0 if m.loss == "squared_nobias" else 1)
                if len(m.initial) != need:
                    self.report.add(m.pos, f"initial model has dimension {len(m.initial)}; loss {m.loss} on "
                                    f"data with {self.features} feature(s) needs {need}")
            if m.loss == "hinge":
                for p in self.s.data:
                    if p.target not in (1, -1):
                        self.report.add(p.pos, f"hinge loss needs labels -1 or +1; {p.name!r} has {p.target}")
        if m.rate <= 0:
            self.report.add(m.pos, f"learning rate must be positive, got {m.rate}")

    # --- protocol and bounds ----------------------------------------------------------------------
    def check_protocol(self) -> None:
        prot = self.s.protocol
        if prot is not None and prot.variant not in PROTOCOLS:
            self.report.add(prot.pos, f"unknown protocol variant {prot.variant!r}; expected one of "
                            f"{', '.join(PROTOCOLS)}")

    def check_bounds(self) -> None:
        kinds: dict[str, Position] = {}
        for b in self.s.bounds:
            if b.kind in kinds:
                self.report.add(b.pos, f"bound {b.kind} given twice; the first is at {kinds[b.kind]}")
            kinds.setdefault(b.kind, b.pos)
        if not self.s.bounds:
            self.report.add(None, "no bounds: the state space of →FL is infinite without them; expected "
                            "'bounds rounds N' and/or 'bounds events N'")

    # --- neighbours ([IIIf-FL] III-C) ------------------------------------------------------------
    def check_neighbours(self) -> None:
        for nb in self.s.neighbours:
            if nb.name in self.neighbour_names:
                self.report.add(nb.pos, f"neighbour {nb.name!r} declared twice")
            self.neighbour_names.add(nb.name)
            self._neighbour_changes(nb)

    def _neighbour_changes(self, nb: NeighbourDecl) -> None:
        """The changes of ``nb`` apply to the dataset in order and give a different dataset."""
        current = set(self.dataset)
        for ch in nb.changes:
            for name in (ch.old, ch.new):
                if name is not None and name not in self.points:
                    self.report.add(ch.pos, f"neighbour {nb.name!r} names unknown data point {name!r}")
            if ch.old is not None and ch.old in self.points:
                if ch.old not in current:
                    self.report.add(ch.pos, f"neighbour {nb.name!r}: {ch.old!r} is not in the dataset")
                current.discard(ch.old)
            if ch.new is not None and ch.new in self.points:
                if ch.new in current:
                    self.report.add(ch.pos, f"neighbour {nb.name!r}: {ch.new!r} is already in the dataset")
                current.add(ch.new)
                if self.s.partition is not None and ch.kind == "add" and self.points[ch.new].owner is None:
                    self.report.add(ch.pos, f"neighbour {nb.name!r} adds {ch.new!r}, which has no owner; "
                                    "the data are partitioned, so write 'observed by CLIENT' in its data "
                                    "statement")
        if current == self.dataset:
            self.report.add(nb.pos, f"neighbour {nb.name!r} equals the dataset (D ◇1 D' needs D ≠ D')")

    # --- attributes of attack steps, defences -----------------------------------------------------
    def _step_actors(self) -> set[str]:
        """The actors whose steps can be annotated: the placed actors, an eavesdropping attacker and,
        when links may fail, the environment."""
        known = set(self.actor_locs)
        if self.s.attacker is not None:
            known.add(self.s.attacker.name)
        if self.s.failures:
            known.add(ENVIRONMENT)
        return known

    def check_steps(self) -> None:
        known = self._step_actors()
        first: dict[tuple[str, str | None], Position] = {}
        for d in self.s.steps:
            who = _step_text(d)
            key = (d.rule, d.actor)
            if key in first:
                self.report.add(d.pos, f"second attack_step for {who}; the first is at {first[key]} "
                                "(declare every attribute in one statement)")
            first.setdefault(key, d.pos)
            if d.actor is not None and d.actor not in known:
                self.report.add(d.actor_pos, f"attack_step names unknown actor {d.actor!r}; expected an "
                                f"actor, {known_text(known)}")
            where = dict(d.value_pos)
            for name, value in d.values().items():
                if value < 0:
                    self.report.add(where.get(name, d.pos), f"{name} {value} of attack_step {who} is "
                                    "negative; expected a number >= 0")
                elif name == "probability" and value > 1:
                    self.report.add(where.get(name, d.pos), f"probability {value} of attack_step {who} is "
                                    "more than 1; expected a probability in [0, 1]")

    def check_defences(self) -> None:
        known = self._step_actors()
        first: dict[str, Position] = {}
        for d in self.s.defences:
            if d.name in first:
                self.report.add(d.pos, f"defence {d.name!r} declared twice; the first is at {first[d.name]}")
            first.setdefault(d.name, d.pos)
            where = dict(d.parts_pos)
            if d.rule is None and d.actor is None and d.location is None and not d.links:
                self.report.add(d.pos, f"defence {d.name!r} removes nothing; expected 'remove RULE', "
                                "'remove by ACTOR', 'remove at LOCATION' or 'remove link A -- B'")
            for lk in d.links:
                edges = [(lk.a, lk.b)] if lk.directed else [(lk.a, lk.b), (lk.b, lk.a)]
                if not all(e in self.declared_edges for e in edges):
                    self.report.add(lk.pos, f"defence {d.name!r} removes link {lk.text()}, which is not a "
                                    "declared link (links or contact)")
            if d.budget is not None and d.budget < 0:
                self.report.add(where.get("budget", d.pos), f"budget {d.budget} of defence {d.name!r} is "
                                "negative; expected a cost >= 0")
            if d.actor is not None and d.actor not in known:
                self.report.add(where.get("actor", d.pos), f"defence {d.name!r} names unknown actor "
                                f"{d.actor!r}; expected an actor, {known_text(known)}")
            self._need_location(d.location, where.get("location", d.pos), f"defence {d.name!r}")

    # --- properties -------------------------------------------------------------------------------
    def check_properties(self) -> None:
        names: set[str] = set()
        positions_of = self.extras.get("prop_extra", {})
        for p in self.s.properties:
            where = positions_of.get(id(p), {})
            if p.name in names:
                self.report.add(p.pos, f"property {p.name!r} declared twice")
            names.add(p.name)
            neighbour = neighbour_of(p)
            if neighbour is not None and neighbour not in self.neighbour_names:
                self.report.add(where.get("_nbpos", p.pos),
                                f"property {p.name!r} refers to unknown neighbour {neighbour!r}; "
                                f"{known_text(self.neighbour_names)}")
            bound = p.bound if p.kind in ("probability", "advantage") else None
            if isinstance(bound, Fraction) and not 0 <= bound <= 1:
                self.report.add(where.get("_boundpos", p.pos),
                                f"property {p.name!r}: bound {bound} is not in [0, 1]")
            eps = p.bound if p.kind == "advantage" else p.eps if p.kind in ("privacy", "budget") else None
            if isinstance(eps, EpsSpec):
                if eps.log and eps.value < 1:
                    self.report.add(p.pos, f"property {p.name!r}: ε = ln({eps.value}) is negative; "
                                    "expected ln(r) with r >= 1")
                if not eps.log and eps.value < 0:
                    self.report.add(p.pos, f"property {p.name!r}: ε must be >= 0, got {eps.value}")
            if p.kind == "budget" and not 0 <= p.delta <= 1:
                self.report.add(where.get("_deltapos", p.pos),
                                f"property {p.name!r}: δ = {p.delta} is not in [0, 1]; expected a "
                                "probability such as 1e-6")
            if p.kind in ("crossval", "attack"):
                self._check_options(p)

    def _check_options(self, p: CrossvalProperty | AttackProperty) -> None:
        """Each option once; a crossval property's options known, ``trials`` positive and ``seed`` a
        non-negative integer."""
        first: dict[str, Position] = {}
        for o in p.options:
            if o.key in first:
                self.report.add(o.pos, f"option {o.key!r} given twice; the first is at {first[o.key]}")
                continue
            first[o.key] = o.pos
            if not isinstance(p, CrossvalProperty):
                continue
            if o.key not in CROSSVAL_OPTIONS:
                close = difflib.get_close_matches(o.key, CROSSVAL_OPTIONS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                self.report.add(o.pos, f"unknown option {o.key!r}{hint}; a crossval property takes "
                                f"{', '.join(CROSSVAL_OPTIONS)}")
                continue
            least = 1 if o.key == "trials" else 0
            value = o.value
            if not isinstance(value, Fraction) or value.denominator != 1 or value < least:
                need = "a positive integer" if least else "a non-negative integer"
                self.report.add(o.pos, f"option {o.key} must be {need}, got {o.text().split(' = ', 1)[1]}")


def _step_text(d: StepDecl) -> str:
    return f"{d.rule} by {d.actor}" if d.actor is not None else f"{d.rule} (every actor)"


def check_step_rules(s: Scenario, rules: tuple[str, ...] | list[str]) -> list[Diagnostic]:
    """``attack_step`` and ``defence`` statements name rules the built system has (``rules``: the rule
    names its steps carry, e.g. ``get_grad_round_noisy`` under fedavg_rounds with noise)."""
    report = Report(Position(s.source, 1, 1))
    expected = "expected a rule of this system: " + ", ".join(rules)
    for d in s.steps:
        if d.rule not in rules:
            close = difflib.get_close_matches(d.rule, rules, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            report.add(d.pos, f"unknown rule {d.rule!r} in attack_step{hint}; {expected}")
    for f in s.defences:
        if f.rule is not None and f.rule not in rules:
            report.add(dict(f.parts_pos).get("rule", f.pos), f"defence {f.name!r} removes unknown rule "
                       f"{f.rule!r}; {expected}")
    return report.items


def check_observables(s: Scenario, known: set[str]) -> list[Diagnostic]:
    """Observed names (attacker, ``observing``) that the system does not offer."""
    report = Report(Position(s.source, 1, 1))
    named: list[Named] = []
    if s.attacker is not None:
        named.extend(s.attacker.observes)
    for p in s.properties:
        named.extend(observing_of(p))
    for n in named:
        if n.name not in known:
            report.add(n.pos, f"unknown observable {n.name!r}; {known_text(known)}")
    return report.items
