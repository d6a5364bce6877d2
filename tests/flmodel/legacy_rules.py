"""The rules of ``→FL`` as they were written by hand before their declarations (:mod:`flmodel.rule_data`):
the published rules, ``fedavg_rounds``, the network transformer and per-client noise, each a procedure.
Kept as an independent reference: the declared rules' steps are compared with these, step for step and
in the same order, on generated scenarios (:mod:`tests.flmodel.test_rule_data`). (The network's lost
outcome is listed under every trace a step may extend, as fixed before the declarations.)"""

# ruff: noqa
# mypy: ignore-errors
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal

from flmodel.data import Dataset, Partition, partitions
from flmodel.errors import ModelError
from flmodel.infrastructure import Eval, Event, Get, Igraph, Infrastructure, Protocol, Put, Trace, insertp, partition_text, trace_text
from flmodel.learning import Vec, Vector, fedavg, grad_step, mean_gradient
from flmodel.network import ENVIRONMENT, Network, gra_status, renormalised_model, with_status
from flmodel.noise import Mechanism
from flmodel.steps import ELIDED_TRACE, RuleContext, Transition, abstract_evs

ONE = Fraction(1)

# --- helpers ------------------------------------------------------------------------------------

_MEMO_LIMIT = 1 << 17
_tnew = tuple.__new__


def abstract_evs(evs: frozenset[Trace]) -> frozenset[Trace]:
    """The ``"drop"`` abstraction of a trace set: keeps ``[]`` if present, and one marker trace
    ``[Elided]`` if any non-empty trace is present."""
    out: set[Trace] = set()
    for t in evs:
        if t:
            out.add(ELIDED_TRACE)  # type: ignore[arg-type]
        else:
            out.add(())
        if len(out) == 2:
            break
    return frozenset(out)


_DROP_WITH_EMPTY = Protocol(frozenset({(), ELIDED_TRACE}))  # type: ignore[arg-type]
_DROP_NO_EMPTY = Protocol(frozenset({ELIDED_TRACE}))  # type: ignore[arg-type]


def _dropped_after_step(evs: frozenset[Trace]) -> Protocol:
    """``Protocol (abstract_evs (insertp t evs))`` for a non-empty ``t`` (shared objects)."""
    return _DROP_WITH_EMPTY if () in evs else _DROP_NO_EMPTY


def _extend(ctx: RuleContext, event: Event, l: Trace, evs: frozenset[Trace]) -> Protocol:
    """``insertp (event # l) evs`` (abstracted in ``"drop"`` mode)."""
    if ctx.trace_mode == "drop":
        return _dropped_after_step(evs)
    return insertp((event, *l), evs)


def _choices(ctx: RuleContext, evs: frozenset[Trace]) -> list[tuple[Trace, str]]:
    """The traces ``l ∈ evs P`` a rule may extend, with the detail naming each. In ``"drop"`` mode
    one representative suffices (the successor igraph does not depend on ``l``)."""
    if not evs:
        return []
    if ctx.trace_mode == "drop":
        return [((), "")]
    if len(evs) == 1:
        (only,) = evs
        return [(only, "l=" + trace_text(only))]
    named = sorted((trace_text(t), t) for t in evs)
    return [(t, "l=" + text) for text, t in named]


def _gate(ctx: RuleContext, infra: Infrastructure, actor: str, kind: str) -> str | None:
    """The actor's location if the policy there enables ``kind`` (or no gating), else ``None``.
    Memoized on ``(poli, aloc, actor, kind)``: the only parts of the state a policy reads."""
    g = infra.igra
    key = ("gate", infra.poli, g.aloc, actor, kind)
    memo = ctx.memo
    if key in memo:
        return memo[key]  # type: ignore[return-value]
    loc = g.aloc.get(actor)
    if loc is not None and ctx.enforce_policies and not infra.poli.enables(g, loc, actor, kind):
        loc = None
    if len(memo) > _MEMO_LIMIT:
        memo.clear()
    memo[key] = loc
    return loc


def client_update(ctx: RuleContext, g: Igraph, c: str) -> Vector:
    """``Gradc = curmodpar G − η·∇L(curmodpar G, partition G c)`` (rule ``get_grad``; memoized)."""
    return grad_step(ctx.loss, ctx.eta, g.curmodpar, g.part(c))


def update_distribution(ctx: RuleContext, g: Igraph, c: str) -> tuple[tuple[Vector, Fraction], ...]:
    """The distribution of the reported update of client ``c``: the point mass on ``Gradc`` without
    a mechanism; ``M(Gradc)`` with noise on the update; ``w − η·M(∇L)`` with noise on the gradient.
    Memoized on ``(curmodpar G, partition G c)``."""
    w = g.curmodpar
    part = g.part(c)
    key = ("upd", w, part)
    memo = ctx.memo
    hit = memo.get(key)
    if hit is not None:
        return hit  # type: ignore[return-value]
    dist: tuple[tuple[Vector, Fraction], ...]
    if ctx.mechanism is None:
        dist = ((grad_step(ctx.loss, ctx.eta, w, part), ONE),)
    elif ctx.noise_target == "update":
        dist = ctx.mechanism(grad_step(ctx.loss, ctx.eta, w, part))
    else:
        grad = mean_gradient(ctx.loss, w, part)
        dist = tuple(
            (Vec(wi - ctx.eta * ni for wi, ni in zip(w, noisy, strict=True)), p)
            for noisy, p in ctx.mechanism(grad)
        )
    if len(memo) > _MEMO_LIMIT:
        memo.clear()
    memo[key] = dist
    return dist


def new_model(g: Igraph) -> Vector:
    """``Newmodel = Σ_{c ∈ clients G} (card (partition G c) / n) * gradient G c`` with
    ``n = card (dataset G)`` and ``x/0 = 0`` (rule ``eval_server``; memoized)."""
    items = tuple((len(g.part(c)), g.gradient[c]) for c in sorted(g.clients))
    return fedavg(items, len(g.dataset), len(g.curmodpar))


# --- the published rules ------------------------------------------------------------------------


def put_part_enabled(ctx: RuleContext, infra: Infrastructure) -> bool:
    """Premises of ``put_part``: ``[] ∈ evs P`` and some ``Part`` with ``dataset G = ⋃• Part c``
    (exists unless there are no clients and the dataset is non-empty), plus the policy gate."""
    g = infra.igra
    if () not in infra.prot.evs:
        return False
    if not g.clients and g.dataset:
        return False
    return _gate(ctx, infra, g.server, "put_part") is not None


def put_part(ctx: RuleContext, infra: Infrastructure, *, rule: str = "put_part") -> Iterator[Transition]:
    """Rule ``put_part`` ([IIIf-FL] III-B): one transition per partition ``Part`` of ``dataset G``
    over ``clients G``; ``P' = insertp [Put [Part]] (evs P)``; ``G'`` replaces ``partition`` by
    ``Part`` and keeps every other component (``ready G`` and ``curmodpar G`` included)."""
    if not put_part_enabled(ctx, infra):
        return
    g = infra.igra
    loc = _gate(ctx, infra, g.server, "put_part")
    assert loc is not None
    evs = infra.prot.evs
    for part in _partitions_cached(g.dataset, g.clients):
        if ctx.trace_mode == "drop":
            prot = _dropped_after_step(evs)
        else:
            prot = insertp((Put((part,)),), evs)
        g2 = Igraph(g.gra, g.aloc, g.server, g.clients, g.ready, g.gradient, g.curmodpar, part, g.dataset)
        yield Transition(
            rule, g.server, loc, "Part=" + _part_text(part), Infrastructure(g2, prot, infra.poli), ONE
        )


def get_grad_enabled(ctx: RuleContext, infra: Infrastructure, c: str) -> bool:
    """Premises of ``get_grad`` for client ``c``: ``∃ l. l ∈ evs P`` and ``c ∈ clients G``, plus the
    policy gate. (No premise ``c ∉ ready G``, nor that ``put_part`` happened.)"""
    return bool(infra.prot.evs) and c in infra.igra.clients and _gate(ctx, infra, c, "get_grad") is not None


def get_grad(
    ctx: RuleContext, infra: Infrastructure, *, rule: str | None = None, unready_only: bool = False
) -> Iterator[Transition]:
    """Rule ``get_grad`` ([IIIf-FL] III-B), for every client ``c`` and trace ``l ∈ evs P``:
    ``Gradc = curmodpar G − η∇L(curmodpar G, partition G c)``,
    ``P' = insertp (Get c Gradc # l) (evs P)``,
    ``G' = G(ready := insert c (ready G), gradient := (gradient G)(c := Gradc))``.

    With ``ctx.mechanism`` this is flcheck's probabilistic ``get_grad_noisy``: one step per outcome.
    ``unready_only`` restricts to ``c ∉ ready G`` (used by the ``fedavg_rounds`` variant only)."""
    name = rule or ("get_grad" if ctx.mechanism is None else "get_grad_noisy")
    g = infra.igra
    evs = infra.prot.evs
    if not evs:
        return
    choices = _choices(ctx, evs)
    ready = g.ready
    poli = infra.poli
    for c in sorted(g.clients) if ctx.only_client is None else (ctx.only_client,):
        if (unready_only and c in ready) or c not in g.clients:
            continue
        loc = _gate(ctx, infra, c, "get_grad")
        if loc is None:
            continue
        ready2 = ready if c in ready else ready | {c}
        gra, aloc, server, clients, _, grads, w, part, data = g
        drop = ctx.trace_mode == "drop"
        for v, p in update_distribution(ctx, g, c):
            # tuple.__new__ is the named tuples' constructor without the Python-level argument binding
            g2 = _tnew(Igraph, (gra, aloc, server, clients, ready2, grads.set(c, v), w, part, data))
            if drop:
                yield _tnew(
                    Transition,
                    (name, c, loc, "", _tnew(Infrastructure, (g2, _dropped_after_step(evs), poli)), p),
                )
                continue
            ev = Get(c, v)
            for l, detail in choices:
                yield Transition(name, c, loc, detail, Infrastructure(g2, _extend(ctx, ev, l, evs), poli), p)


def eval_server_enabled(ctx: RuleContext, infra: Infrastructure) -> bool:
    """Premises of ``eval_server``: ``∃ l. l ∈ evs P`` and ``ready G = clients G`` (also when both are
    empty), plus the policy gate."""
    g = infra.igra
    if not infra.prot.evs or g.ready != g.clients:
        return False
    return _gate(ctx, infra, g.server, "eval_server") is not None


def eval_server(
    ctx: RuleContext, infra: Infrastructure, *, rule: str = "eval_server"
) -> Iterator[Transition]:
    """Rule ``eval_server`` ([IIIf-FL] III-B): ``Newmodel = Σ_c (card (partition G c)/n) * gradient G c``,
    ``P' = insertp (Eval Newmodel # l) (evs P)``, ``G' = G(ready := ∅, curmodpar := Newmodel)``."""
    if not eval_server_enabled(ctx, infra):
        return
    g = infra.igra
    loc = _gate(ctx, infra, g.server, "eval_server")
    assert loc is not None
    m = new_model(g)
    g2 = Igraph(g.gra, g.aloc, g.server, g.clients, frozenset(), g.gradient, m, g.partition, g.dataset)
    ev = Eval(m)
    evs = infra.prot.evs
    for l, detail in _choices(ctx, evs):
        yield Transition(
            rule, g.server, loc, detail, Infrastructure(g2, _extend(ctx, ev, l, evs), infra.poli), ONE
        )


# --- the round-based FedAvg variant --------------------------------------------------------------


def put_part_once(ctx: RuleContext, infra: Infrastructure, partitioned: bool) -> Iterator[Transition]:
    """Variant ``fedavg_rounds``: ``put_part`` enabled only while no partition has been deployed."""
    if partitioned:
        return
    yield from put_part(ctx, infra, rule="put_part_once")


def get_grad_round(ctx: RuleContext, infra: Infrastructure, partitioned: bool) -> Iterator[Transition]:
    """Variant ``fedavg_rounds``: ``get_grad`` only after the partition and only for ``c ∉ ready G``
    (each client reports once per round)."""
    if not partitioned:
        return
    name = "get_grad_round" if ctx.mechanism is None else "get_grad_round_noisy"
    yield from get_grad(ctx, infra, rule=name, unready_only=True)


def eval_round(ctx: RuleContext, infra: Infrastructure, partitioned: bool) -> Iterator[Transition]:
    """Variant ``fedavg_rounds``: aggregate when ``ready G = clients G ≠ ∅``."""
    if not infra.igra.clients:
        return
    yield from eval_server(ctx, infra, rule="eval_round")


# --- rule sets ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule as a procedure ``fire(ctx, infra, partitioned)`` and its flags."""

    name: str
    kind: str
    fire: Callable[[RuleContext, Infrastructure, bool], Iterator[Transition]]
    aggregates: bool = False
    deploys: bool = False
    gradients: Literal["ready", "sum"] | None = None
    footprint: str | None = None


@dataclass(frozen=True, slots=True)
class RuleSet:
    """A transition relation: a name and its rules. ``tracks_partitioned``: whether the state records
    that a partition has been deployed (needed by ``fedavg_rounds`` only; the published relation does
    not, so its states are not split by that flag)."""

    name: str
    rules: tuple[Rule, ...]
    tracks_partitioned: bool = False

    def rule_names(self, noisy: bool) -> tuple[str, ...]:
        """The action rule names this set produces (``get_grad`` becomes ``get_grad_noisy`` with a
        mechanism)."""
        out = []
        for r in self.rules:
            out.append(r.name + ("_noisy" if noisy and r.kind == "get_grad" else ""))
        return tuple(out)


PUBLISHED = RuleSet(
    "published",
    (
        Rule("put_part", "put_part", lambda ctx, i, _p: put_part(ctx, i), deploys=True, gradients="ready",
             footprint="put_part"),
        Rule("get_grad", "get_grad", lambda ctx, i, _p: get_grad(ctx, i), gradients="ready",
             footprint="get_grad"),
        Rule("eval_server", "eval_server", lambda ctx, i, _p: eval_server(ctx, i), aggregates=True,
             gradients="ready", footprint="eval"),
    ),
)
"""The relation ``→FL`` exactly as published in [IIIf-FL] III-B."""

FEDAVG_ROUNDS = RuleSet(
    "fedavg_rounds",
    (
        Rule("put_part_once", "put_part", put_part_once, deploys=True, gradients="sum",
             footprint="put_part_once"),
        Rule("get_grad_round", "get_grad", get_grad_round, gradients="sum", footprint="get_grad_round"),
        Rule("eval_round", "eval_server", eval_round, aggregates=True, gradients="sum", footprint="eval"),
    ),
    tracks_partitioned=True,
)
"""flcheck's round-based FedAvg variant (not the published relation)."""

RULE_SETS: dict[str, RuleSet] = {"published": PUBLISHED, "fedavg_rounds": FEDAVG_ROUNDS}



def networked(base: RuleSet, net: Network) -> RuleSet:
    """``base`` over the network ``net`` (see the module docstring): every rule advances the status;
    ``get_grad`` needs an up route and may lose the report; ``cut_link`` when links
    may fail; ``eval_quorum``/``eval_deadline`` instead of the base aggregation for partial rounds.
    Each rule keeps its base rule's footprints and restates its action classes (module docstring)."""
    rules: list[Rule] = []
    for r in base.rules:
        if r.kind == "get_grad":
            rules.append(Rule(r.name, r.kind, _reports(r, net), r.aggregates, r.deploys, r.gradients))
        elif r.aggregates and net.aggregate != "all":
            name = f"eval_{net.aggregate}"
            rules.append(Rule(name, r.kind, _timed(_partial_eval(r, net, name), net, True), True, False,
                              r.gradients))
        else:
            rules.append(Rule(r.name, r.kind, _timed(r.fire, net, r.aggregates), r.aggregates, r.deploys,
                              r.gradients))
    # cut_link reads and writes no gradient, ready client or part: it states the base rules' common
    # dead-value footprint; eavesdrop copies a ready client's own report (``copied`` reads it)
    shared = {r.gradients for r in base.rules}
    gradients = shared.pop() if len(shared) == 1 else None
    if net.failures:
        rules.append(Rule("cut_link", "network", _cuts(net), gradients=gradients))
    if net.attacker is not None and net.tapped:
        rules = [replace(r, fire=_after_copies(r.fire)) for r in rules]
        copies: Literal["ready"] | None = None if gradients is None else "ready"
        rules.append(Rule("eavesdrop", "attack", _eavesdrop(net), gradients=copies))
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
        seen: set[tuple[str, str]] = set()  # the actions (client, trace extended) given a lost outcome
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
            if not sure and (c, t.detail) not in seen:
                seen.add((c, t.detail))
                lost = after._replace(lost=after.lost | {c})
                yield t._replace(target=with_status(infra, g.gra.edges, lost), probability=1 - q)

    return fire


def _partial_eval(r: Rule, net: Network, name: str) -> Fire:
    """``eval_quorum`` / ``eval_deadline``: the base aggregation's premises except ``ready = clients``,
    replaced by the quorum or deadline condition, with FedAvg renormalised over the reporters."""

    def fire(ctx: RuleContext, infra: Infrastructure, partitioned: bool) -> Iterator[Transition]:
        g = infra.igra
        if ctx.trace_mode != "drop":
            raise ModelError(f"{name} needs the drop trace mode (traces drop)")
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

def per_client_noise(base: RuleSet, mechs: dict[str, Mechanism | None], targets: dict[str, str]) -> RuleSet:
    """``base`` with its ``get_grad`` rule taken by each client ``c`` with its own mechanism and noise
    target (flcheck's probabilistic ``get_grad_noisy`` of :mod:`flmodel.rules` with a per-client
    :class:`RuleContext`); the action keeps the rule name ``<get_grad rule>_noisy`` for every client,
    also for a client without noise (a point mass)."""
    rules: list[Rule] = []
    for r in base.rules:
        if r.kind != "get_grad":
            rules.append(r)
            continue
        name = r.name + "_noisy"

        contexts: dict[tuple[int, str], RuleContext] = {}

        def fire(ctx: RuleContext, infra: Infrastructure, partitioned: bool, _r: Rule = r,
                 _name: str = name, _ctxs: dict[tuple[int, str], RuleContext] = contexts,
                 ) -> Iterator[Transition]:
            for c in sorted(infra.igra.clients):
                ctx_c = _ctxs.get((id(ctx), c))
                if ctx_c is None:  # own memo: the rules' memo keys do not name the mechanism
                    ctx_c = _ctxs[(id(ctx), c)] = dataclasses.replace(
                        ctx, mechanism=mechs.get(c), noise_target=targets.get(c, "update"),  # type: ignore[arg-type]
                        memo={}, only_client=c)
                for t in _r.fire(ctx_c, infra, partitioned):
                    if t.actor == c:
                        yield t._replace(rule=_name)

        # the client's own mechanism changes the update distribution only: the footprints stay the rule's
        rules.append(Rule(r.name, r.kind, fire, r.aggregates, r.deploys, r.gradients, r.footprint))
    return RuleSet(base.name, tuple(rules), base.tracks_partitioned)



# --- memoized helpers -----------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _partitions_cached(data: Dataset, clients: frozenset[str]) -> tuple[Partition, ...]:
    """All partitions of ``data`` over ``clients`` (memoized: ``put_part`` asks in every state)."""
    return tuple(partitions(data, clients))


@lru_cache(maxsize=1 << 14)
def _part_text(part: Partition) -> str:
    return partition_text(part)
