"""The transition relation ``→FL`` of [IIIf-FL] Section III-B (``inductive state_transition_FL``), as
published, and the round-based FedAvg variant beside it.

Published rules (literal; each ill-formed spot and its reading is recorded in ``spec/SPEC.md``)::

  put_part:    G = igra I ⟹ P = prot I ⟹ [] ∈ evs P ⟹ dataset G = ⋃•_{c ∈ clients G} (Part c) ⟹
               P' = insertp [Put [Part]] (evs P) ⟹
               G' = Lgraph (gra G)(aloc G)(server G)(clients G) (gradient G)(curmodpar) Part (dataset G)
               ⟹ I →FL Infrastructure G' P' (poli I)
  get_grad:    G = igra I ⟹ P = prot I ⟹ l ∈ evs P ⟹ c ∈ clients G ⟹
               Gradc = (curmodpar G) − η * ∇L(curmodpar G, partition c)
               P' = insertp (Get c Gradc # l) (evs P) ⟹
               G' = Lgraph … (insert c (ready G)) (gradient G(c := Gradc)) (curmodpar G) … ⟹ I →FL …
  eval_server: G = igra I ⟹ P = prot I ⟹ l ∈ evs G ⟹ ready G = clients G ⟹ n = card(dataset G)
               Newmodel = Σ_{c ∈ clients G} (card (partition G c) / n) * gradient G c
               P' = insertp (Eval Newmodel # l) (evs P) ⟹
               G' = Lgraph … ∅ (gradient G) Newmodel (partition G)(dataset G) ⟹ I →FL …

Readings (see SPEC.md): ``Part`` is existentially quantified (every partition of the dataset over the
clients gives one transition); put_part's ``G'`` lacks ``ready`` (kept: ``ready G``) and writes
``curmodpar`` for ``curmodpar G``; the missing ``⟹`` are read as premise separators; ``partition c``
is ``partition G c``; ``l ∈ evs G`` is ``l ∈ evs P``; ``x/0 = 0`` (Isabelle); ``∇L`` over an empty part
is 0.

Policy gate (IIIf convention, not a premise of the published rules): the step is taken by an actor at
its location — ``put_part`` and ``eval_server`` by the server, ``get_grad`` by client ``c`` — and is
enabled only if ``enables (poli I) G (aloc G actor) actor kind`` holds. With
:meth:`flmodel.infrastructure.Poli.permissive` the gated relation is exactly the published one.

Probabilistic extension (flcheck's, not in [IIIf-FL]): ``get_grad_noisy`` reports ``M(Gradc)`` for a
mechanism ``M`` of :mod:`flmodel.noise`; each outcome ``v`` with probability ``p`` is a step with
``Get c v`` and ``gradient G(c := v)``; all outcomes share one action.

Trace modes: ``"full"`` keeps the set of traces (the literal ``evs``; every ``l ∈ evs P`` is a separate
nondeterministic choice, named in the action's detail); ``"drop"`` replaces ``evs`` by its abstraction
:func:`abstract_evs` — ``evs ∩ {[]}`` plus the marker trace ``[Elided]`` when a non-empty trace exists —
which is sound for every property that does not read the traces, because (i) the rules' premises read
``evs`` only through ``[] ∈ evs P`` and ``∃ l. l ∈ evs P``, both preserved by the abstraction, and (ii)
the successor igraph does not depend on the chosen ``l`` (a functional bisimulation; tested).

Variant ``fedavg_rounds`` (flcheck's, clearly not the published relation): the data are partitioned
once (``put_part_once``, enabled only before any partition was deployed), each client reports once per
round (``get_grad_round``: requires the data partitioned and ``c ∉ ready G``), and the server
aggregates when every client has reported (``eval_round``: ``ready G = clients G ≠ ∅``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from flmodel.data import Dataset, Partition, partitions
from flmodel.infrastructure import (
    Eval,
    Event,
    Get,
    Igraph,
    Infrastructure,
    Protocol,
    Put,
    Trace,
    insertp,
    partition_text,
    trace_text,
)
from flmodel.learning import Loss, Vec, Vector, fedavg, grad_step, mean_gradient
from flmodel.noise import Mechanism

TraceMode = Literal["full", "drop"]
#: The rules whose footprint :meth:`flmodel.system.FLSystem.action_classes` knows: ``put_part`` (any
#: time ``[] ∈ evs``), ``put_part_once``, ``get_grad`` (any client, any time), ``get_grad_round``
#: (a client not yet ready, after the partition) and ``eval`` (``eval_server``/``eval_round``).
FootprintKind = Literal["put_part", "put_part_once", "get_grad", "get_grad_round", "eval"]
FOOTPRINT_KINDS: tuple[FootprintKind, ...] = (
    "put_part", "put_part_once", "get_grad", "get_grad_round", "eval")
NoiseTarget = Literal["update", "gradient"]

ONE = Fraction(1)


@dataclass(frozen=True, slots=True, order=True)
class Elided:
    """Marker event of the ``"drop"`` trace mode: ``[Elided]`` stands for "some non-empty traces whose
    content was dropped" (not a seed event; never appears in ``"full"`` mode)."""

    def __str__(self) -> str:
        return "…"


ELIDED_TRACE: tuple[Elided] = (Elided(),)


@dataclass(frozen=True, slots=True)
class RuleContext:
    """The parameters of ``→FL`` that are not part of the state: the loss ``L``, the learning rate
    ``η``, the optional noise mechanism (``None``: the published deterministic ``get_grad``), what the
    noise perturbs (the reported update ``Gradc``, or the gradient ``∇L`` before the step), the trace
    mode, and whether policies gate the steps. ``memo`` caches pure computations (client update
    distributions, policy decisions); it takes no part in equality or hashing. ``only_client``
    restricts ``get_grad`` to one client (a client-specific context, see
    :func:`flmodel.scenario_build.per_client_noise`)."""

    loss: Loss
    eta: Fraction
    mechanism: Mechanism | None = None
    noise_target: NoiseTarget = "update"
    trace_mode: TraceMode = "full"
    enforce_policies: bool = True
    memo: dict[object, object] = field(default_factory=dict, compare=False, hash=False, repr=False)
    only_client: str | None = None


class Transition(NamedTuple):
    """One step ``I →FL I'``: rule name, acting actor and its location, a detail distinguishing
    nondeterministic choices (the partition ``Part``, the trace ``l``), target and probability."""

    rule: str
    actor: str
    location: str
    detail: str
    target: Infrastructure
    probability: Fraction


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
    """A rule of a rule set: its name, the IIIf action kind its policy gate checks, whether it
    starts a new round (an aggregation) or deploys a partition, and its transitions
    ``fire(ctx, infra, partitioned)``.

    ``gradients`` states how the rule uses the clients' gradients (the footprint the dead-value
    reduction of :class:`flmodel.system.FLSystem` relies on): ``"ready"`` — it reads ``gradient G c``
    only for ``c ∈ ready G``, it writes ``gradient G c`` whenever it inserts ``c`` into ``ready``, and
    nothing else it computes (enabledness, actions, probabilities, the other components) depends on a
    gradient; ``"sum"`` — as ``"ready"``, and moreover it reads the gradients of the ready clients
    only through ``Σ_{c ∈ ready G} card (partition G c) · gradient G c`` (the aggregation, plain or
    renormalised over the reporters), never writes the gradient of a ready client, and changes no part
    while a client is ready (so the sum's weights stay put: the partial-sum reduction of
    :class:`flmodel.system.FLSystem`); ``None`` — unknown (no reduction). A rule built around another
    one keeps ``None`` unless it states its own footprint.

    ``footprint`` names which of the published or round-based rules this rule is, so that
    :meth:`flmodel.system.FLSystem.action_classes` can state what each of its actions reads, writes
    and requires (:data:`FOOTPRINT_KINDS`); ``None`` — unknown (the system then states no action
    classes unless ``restate`` does).

    ``restate`` states the action classes of a rule built around another one (or of a new rule):
    ``restate(system, base)`` gets the :class:`flmodel.system.FLSystem` and the classes
    (:class:`flmodel.system.ActionClass`) of its ``footprint`` kind (empty when that is ``None``) and
    returns the rule's own, with what the transformation adds to or changes in each
    (e.g. :func:`flmodel.network.networked`: the network status it reads and writes)."""

    name: str
    kind: str
    fire: Callable[[RuleContext, Infrastructure, bool], Iterator[Transition]]
    aggregates: bool = False
    deploys: bool = False
    gradients: Literal["ready", "sum"] | None = None
    footprint: FootprintKind | None = None
    restate: Callable[[Any, tuple[Any, ...]], tuple[Any, ...]] | None = None


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


def fl_step(
    ctx: RuleContext, infra: Infrastructure, rules: RuleSet = PUBLISHED, partitioned: bool = False
) -> list[Transition]:
    """All transitions of ``infra`` under ``rules`` (no bounds)."""
    out: list[Transition] = []
    for r in rules.rules:
        out.extend(r.fire(ctx, infra, partitioned))
    return out


# --- memoized helpers -----------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _partitions_cached(data: Dataset, clients: frozenset[str]) -> tuple[Partition, ...]:
    """All partitions of ``data`` over ``clients`` (memoized: ``put_part`` asks in every state)."""
    return tuple(partitions(data, clients))


@lru_cache(maxsize=1 << 14)
def _part_text(part: Partition) -> str:
    return partition_text(part)
