"""The network variant's rules, declared in the vocabulary of :mod:`flmodel.rule_data`: a rule-set
transformer (:func:`networked`) that adds to each rule of the published relation or of
``fedavg_rounds`` the premises, draws and effects of a time-varying topology (:mod:`flmodel.network`),
and the environment's and the attacker's own rules. Every piece states what it reads and writes, so the
transformed rules' footprints, like their steps, are derived from these declarations alone.

The pieces (the semantics is :mod:`flmodel.network`'s module docstring):

* :class:`Routed`: a report needs an up route from its client to the server, and a client whose report
  of this round was lost sends nothing more (reads the route's variables and ``lost:c``);
* :class:`Delivery`: the report's outcomes arrive with the route's probability ``q``; one more outcome,
  lost with ``1 − q``, leaves the state as it was but for ``lost:c`` (the report's writes belong to
  the delivered outcomes only);
* :class:`BeforeDeadline`: past a deadline no step but the aggregation is taken (reads ``net:steps``);
* :class:`Reporters` and :class:`ReportersModel`: a quorum or deadline round aggregates the clients
  that reported, FedAvg renormalised over them;
* :class:`NoCopyDue`: while a report that crossed the attacker waits to be copied, every rule but the
  attacker's ``eavesdrop`` waits;
* the effects :class:`Clock` (every step advances the status; an aggregation starts a new round),
  :class:`Crossed` and :class:`Lost` (a report's route crossed the attacker, or the report was lost),
  :class:`Cut` (``cut_link``) and :class:`Copy` (``eavesdrop``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from flmodel.errors import ModelError
from flmodel.infrastructure import Infrastructure
from flmodel.network import (
    ENVIRONMENT,
    STEPS,
    NetStatus,
    Network,
    crossed_var,
    gra_status,
    link_var,
    lost_var,
    renormalised_model,
    seen_var,
    with_status,
)
from flmodel.rule_data import (
    Actors,
    Candidate,
    Choice,
    Dialect,
    Draw,
    Premise,
    Rule,
    Scope,
    StepEffect,
    Value,
    Write,
)
from flmodel.rule_parts import AllReady, Event, NewModel, Report, SomeClients
from flmodel.rules import RuleSet

__all__ = ["networked"]


def _past_deadline(net: Network, infra: Infrastructure) -> bool:
    """Whether the round's deadline has passed (reports are refused then)."""
    return net.aggregate == "deadline" and gra_status(infra.igra.gra).round_steps >= net.aggregate_at


# --------------------------------------------------------------------------------------------- premises
@dataclass(frozen=True)
class BeforeDeadline(Premise):
    """Not past the round's deadline (a deadline round only)."""

    net: Network

    def reads(self, scope: Scope) -> Iterable[str]:
        return (STEPS,) if self.net.variables.steps else ()

    def holds(self, c: Candidate) -> bool:
        return not _past_deadline(self.net, c.infra)


@dataclass(frozen=True)
class NoCopyDue(Premise):
    """No report that crossed the attacker waits to be copied (``eavesdrop`` is urgent)."""

    net: Network

    def reads(self, scope: Scope) -> Iterable[str]:
        return self.net.variables.wait

    def holds(self, c: Candidate) -> bool:
        status = gra_status(c.infra.igra.gra)
        return not status.crossed - status.seen


@dataclass(frozen=True)
class Routed(Premise):
    """The acting client's report has an up route to the server's location and was not lost this round
    (the route is kept for the draw and the effects)."""

    net: Network

    def reads(self, scope: Scope) -> Iterable[str]:
        v = self.net.variables
        return (*v.route, *((lost_var(scope.actor),) if v.lose else ()))

    def literals(self, scope: Scope) -> Iterable[tuple[str, object]]:
        return ((lost_var(scope.actor), False),) if self.net.variables.lose else ()

    def holds(self, c: Candidate) -> bool:
        g = c.g
        if c.actor in gra_status(g.gra).lost:
            return False
        path = self.net.client_route(g.gra, c.actor, g.aloc[c.actor], g.aloc[g.server])
        c.scratch["route"] = path
        return path is not None


@dataclass(frozen=True)
class Reporters(Premise):
    """The partial round's condition instead of ``ready G = clients G``: at least ``Q`` reporters
    (quorum), or ``D`` steps of the round passed or every client that has not reported lost (deadline).
    Partial aggregation is defined for the ``drop`` trace mode only."""

    net: Network

    def reads(self, scope: Scope) -> Iterable[str]:
        v = self.net.variables
        ready = tuple(f"ready:{c}" for c in scope.clients)
        if self.net.aggregate != "deadline":
            return ready
        return (*ready, STEPS, *(lost_var(c) for c in scope.clients if v.lose))

    def holds(self, c: Candidate) -> bool:
        if c.ctx.trace_mode != "drop":
            raise ModelError(f"eval_{self.net.aggregate} needs the drop trace mode (traces drop)")
        g = c.g
        if self.net.aggregate == "quorum":
            return len(g.ready) >= self.net.aggregate_at
        status = gra_status(g.gra)
        return g.ready == g.clients or status.round_steps >= self.net.aggregate_at \
            or g.clients - g.ready <= status.lost


# --------------------------------------------------------------------------------------------- the draw
@dataclass(frozen=True)
class Delivery(Draw):
    """A report sent along its route (:class:`Routed`): each outcome of the client's report arrives
    with probability ``q`` (the product over the route's hops of ``1 − p^(k+1)``), labelled
    ``delivered``; one outcome ``lost`` with ``1 − q`` (after the first delivered one), when the route
    may lose it."""

    net: Network
    report: Draw
    labels: tuple[str, ...] = ("delivered", "lost")

    def reads(self, scope: Scope) -> Iterable[str]:
        return (*self.net.variables.route, *self.report.reads(scope))

    def label_reads(self, scope: Scope) -> Iterable[str]:
        return self.net.variables.route

    def guard_reads(self, scope: Scope) -> Iterable[str]:
        return self.report.guard_reads(scope)

    def outcomes(self, c: Candidate) -> Iterator[tuple[str, Any, Fraction]]:
        q = self.net.delivery(c.scratch["route"])
        sure = q == 1
        lost = False
        for _, v, p in self.report.outcomes(c):
            if q:
                yield "delivered", v, p if sure else p * q
            if not sure and not lost:
                lost = True
                yield "lost", None, 1 - q

    def isabelle(self, dialect: Dialect) -> str | None:
        return None


# --------------------------------------------------------------------------------------------- values
@dataclass(frozen=True)
class ReportersModel(Value):
    """FedAvg renormalised over the reporters ``R = ready G``: ``Σ_{c ∈ R} (|Part c| / Σ_{c' ∈ R} |Part
    c'|) · gradient G c`` (the current model when they hold no data)."""

    gradient_reads = "sum"

    def reads(self, scope: Scope) -> Iterable[str]:
        return ("curmodpar", *(f"{k}:{c}" for c in scope.clients for k in ("ready", "gradient", "partition")))

    def compute(self, c: Candidate, drawn: Any, chosen: Any) -> Any:
        return renormalised_model(c.g, c.g.ready)

    def isabelle(self, dialect: Dialect) -> tuple[str, tuple[str, ...]]:
        return "Newmodel", ()


# --------------------------------------------------------------------------------------------- effects
def _status_of(target: Infrastructure) -> NetStatus:
    return gra_status(target.igra.gra)


@dataclass(frozen=True)
class Clock(StepEffect):
    """Every step advances the status from the state it leaves (:meth:`Network.advance`); an
    aggregation starts a new round."""

    net: Network
    aggregates: bool

    def apply(self, c: Candidate, label: str, chosen: Any, target: Infrastructure) -> Infrastructure:
        status = self.net.advance(gra_status(c.infra.igra.gra), self.aggregates)
        return with_status(target, target.igra.gra.edges, status)

    def written(self, scope: Scope) -> Mapping[str, Iterable[str]]:
        return self.net.variables.advance(scope.clients, self.aggregates)


@dataclass(frozen=True)
class Crossed(StepEffect):
    """A delivered report whose route crosses the attacker is marked as crossed (the attacker copies
    it next)."""

    net: Network

    def apply(self, c: Candidate, label: str, chosen: Any, target: Infrastructure) -> Infrastructure:
        if label != "delivered" or c.actor not in self.net.tapped or not self.net.crosses(c.scratch["route"]):
            return target
        status = _status_of(target)
        return with_status(target, target.igra.gra.edges, status._replace(crossed=status.crossed | {c.actor}))

    def written(self, scope: Scope) -> Mapping[str, Iterable[str]]:
        if scope.actor not in self.net.variables.tapped:
            return {}
        return {crossed_var(scope.actor): self.net.variables.route}


@dataclass(frozen=True)
class Lost(StepEffect):
    """A lost report's client joins the round's lost clients."""

    net: Network

    def apply(self, c: Candidate, label: str, chosen: Any, target: Infrastructure) -> Infrastructure:
        if label != "lost":
            return target
        status = _status_of(target)
        return with_status(target, target.igra.gra.edges, status._replace(lost=status.lost | {c.actor}))

    def written(self, scope: Scope) -> Mapping[str, Iterable[str]]:
        return {lost_var(scope.actor): self.net.variables.route} if self.net.variables.lose else {}


@dataclass(frozen=True)
class Cut(StepEffect):
    """``cut_link``: the chosen failing link leaves ``gra``'s edges."""

    net: Network
    single: bool = False

    def apply(self, c: Candidate, label: str, chosen: Any, target: Infrastructure) -> Infrastructure:
        return with_status(target, target.igra.gra.edges - chosen, _status_of(target))

    def written(self, scope: Scope) -> Mapping[str, Iterable[str]]:
        links = [link_var(lk) for lk in self.net.failures]
        return {lk: (lk,) for lk in links}


@dataclass(frozen=True)
class Copy(StepEffect):
    """``eavesdrop``: the chosen report is copied (joins the status's ``seen``)."""

    net: Network

    def apply(self, c: Candidate, label: str, chosen: Any, target: Infrastructure) -> Infrastructure:
        status = _status_of(target)
        return with_status(target, target.igra.gra.edges, status._replace(seen=status.seen | {chosen}))

    def written(self, scope: Scope) -> Mapping[str, Iterable[str]]:
        return {seen_var(c): (seen_var(c), crossed_var(c)) for c in self.net.variables.tapped}


# ----------------------------------------------------------------------------------- choices, actors
@dataclass(frozen=True)
class LinkChoice(Choice):
    """A failing link still in ``gra`` (the step named ``a--b``, at ``a``)."""

    net: Network

    def reads(self, scope: Scope) -> Iterable[str]:
        return tuple(link_var(lk) for lk in self.net.failures)

    def options(self, c: Candidate) -> Iterable[tuple[Any, str]]:
        edges = c.infra.igra.gra.edges
        return [(link, "{}--{}".format(*min(link))) for link in self.net.failures if link & edges]

    def location(self, chosen: Any, default: str) -> str:
        return str(min(chosen)[0])

    def single(self, scope: Scope) -> bool:
        return len(self.net.failures) == 1


@dataclass(frozen=True)
class CopyChoice(Choice):
    """A report of this round that crossed the attacker and is not yet copied (named ``report of c``;
    at most one is due at a time: a delivery that crosses disables every other rule until the copy)."""

    net: Network

    def reads(self, scope: Scope) -> Iterable[str]:
        return self.net.variables.wait

    def options(self, c: Candidate) -> Iterable[tuple[Any, str]]:
        status = gra_status(c.infra.igra.gra)
        return [(x, f"report of {x}") for x in sorted(status.crossed - status.seen)]

    def single(self, scope: Scope) -> bool:
        return True


@dataclass(frozen=True)
class Named(Actors):
    """One named actor of the network at a fixed place, without a policy gate: the environment (whose
    steps are placed at the link they cut) or the attacker."""

    actor: str
    location: str

    def names(self, system: Any) -> tuple[str, ...]:
        return (self.actor,)

    def candidates(self, ctx: Any, infra: Infrastructure, skip: frozenset[str] = frozenset()
                   ) -> Iterator[tuple[str, str]]:
        yield self.actor, self.location

    def isabelle(self, dialect: Dialect) -> tuple[str, str]:
        return self.actor, "True"


# ----------------------------------------------------------------------------------- the transformer
def networked(base: RuleSet, net: Network) -> RuleSet:
    """``base`` over the network ``net`` (module docstring): every rule advances the status; a report
    needs an up route and may be lost; ``eval_quorum``/``eval_deadline`` instead of the base
    aggregation for partial rounds; ``cut_link`` when links may fail; while a copy is due every rule
    waits for the attacker's ``eavesdrop``."""
    v = net.variables
    copies = net.attacker is not None and bool(net.tapped)
    wait: tuple[Premise, ...] = (NoCopyDue(net),) if copies else ()
    deadline: tuple[Premise, ...] = (BeforeDeadline(net),) if net.aggregate == "deadline" else ()
    rules: list[Rule] = []
    for r in base.rules:
        if isinstance(r.draw, Report):
            when = ("delivered",) if v.lose else None
            rules.append(replace(r, premises=(*r.premises, *deadline, Routed(net), *wait),
                                 draw=Delivery(net, r.draw),
                                 writes=tuple(replace(w, when=when) for w in r.writes),
                                 effects=(Clock(net, False), Crossed(net), Lost(net))))
        elif r.aggregates and net.aggregate != "all":
            premises = (*(p for p in r.premises if not isinstance(p, AllReady | SomeClients)), SomeClients(),
                        Reporters(net), *wait)
            writes = tuple(_reporters(w) for w in r.writes)
            rules.append(replace(r, name=f"eval_{net.aggregate}", premises=premises, writes=writes,
                                 detail=_reporters_detail, effects=(Clock(net, True),)))
        else:
            rules.append(replace(r, premises=(*r.premises, *(() if r.aggregates else deadline), *wait),
                                 effects=(Clock(net, r.aggregates),)))
    if net.failures:
        rules.append(Rule("cut_link", "network", Named(ENVIRONMENT, ""), (*deadline, *wait), LinkChoice(net),
                          effects=(Cut(net), Clock(net, False))))
    if copies:
        assert net.attacker is not None
        who, where = net.attacker
        rules.append(Rule("eavesdrop", "attack", Named(who, where), (), CopyChoice(net),
                          effects=(Copy(net),)))
    return RuleSet(base.name + "+network", tuple(rules), base.tracks_partitioned)


def _reporters(w: Write) -> Write:
    """A write of the base aggregation with the reporters' FedAvg for ``Newmodel``."""
    if isinstance(w.value, NewModel):
        return replace(w, value=ReportersModel())
    if isinstance(w.value, Event) and isinstance(w.value.of, NewModel):
        return replace(w, value=Event(w.value.kind, ReportersModel()))
    return w


def _reporters_detail(c: Candidate) -> str:
    return "reporters=" + ",".join(sorted(c.g.ready))
