"""The computations the rules' declarations are made of (:mod:`flmodel.rule_data`, :mod:`flmodel.rules`):
the context of ``→FL`` (loss, learning rate, noise, trace mode, policies), a step's record, the trace
sets and their ``drop`` abstraction, the traces a step may extend, the partitions ``put_part`` may
deploy, a client's reported update and FedAvg's new model ([IIIf-FL] III-B)."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Literal, NamedTuple

from flmodel.data import Dataset, Partition, partitions
from flmodel.frozen import FrozenMap
from flmodel.infrastructure import (
    Igraph,
    Infrastructure,
    Protocol,
    Trace,
    insertp,
    partition_text,
    trace_text,
)
from flmodel.learning import Loss, Vec, Vector, fedavg, grad_step, mean_gradient
from flmodel.noise import Mechanism

__all__ = ["ELIDED_TRACE", "Elided", "NoiseTarget", "RuleContext", "TraceMode", "Transition", "abstract_evs",
           "dropped_after_step", "insertp", "new_model", "partition_options", "trace_choices",
           "update_distribution"]

TraceMode = Literal["full", "drop"]
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
    mode, and whether policies gate the steps. ``per_client``: each client's own mechanism and what it
    perturbs, when the clients' differ (then a report is ``get_grad_noisy`` for every client, a point
    mass for a client without noise). ``memo`` caches pure computations (client update distributions,
    policy decisions); it takes no part in equality or hashing. ``only_client`` restricts the clients'
    rules to one client."""

    loss: Loss
    eta: Fraction
    mechanism: Mechanism | None = None
    noise_target: NoiseTarget = "update"
    trace_mode: TraceMode = "full"
    enforce_policies: bool = True
    memo: dict[object, object] = field(default_factory=dict, compare=False, hash=False, repr=False)
    only_client: str | None = None
    per_client: FrozenMap[str, tuple[Mechanism | None, NoiseTarget]] | None = None

    @property
    def noisy(self) -> bool:
        """Whether reports are drawn from a noise mechanism (their rule is ``<name>_noisy``)."""
        return self.mechanism is not None or self.per_client is not None

    def noise_of(self, client: str) -> tuple[Mechanism | None, NoiseTarget]:
        """The mechanism and noise target of ``client``'s reports."""
        if self.per_client is not None:
            return self.per_client.get(client, (None, "update"))
        return self.mechanism, self.noise_target


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


def dropped_after_step(evs: frozenset[Trace]) -> Protocol:
    """``Protocol (abstract_evs (insertp t evs))`` for a non-empty ``t`` (shared objects)."""
    return _DROP_WITH_EMPTY if () in evs else _DROP_NO_EMPTY


def trace_choices(ctx: RuleContext, evs: frozenset[Trace]) -> list[tuple[Trace, str]]:
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


def update_distribution(ctx: RuleContext, g: Igraph, c: str) -> tuple[tuple[Vector, Fraction], ...]:
    """The distribution of the reported update of client ``c``: the point mass on ``Gradc =
    curmodpar G − η·∇L(curmodpar G, partition G c)`` without a mechanism; ``M(Gradc)`` with noise on
    the update; ``w − η·M(∇L)`` with noise on the gradient (``c``'s own under per-client noise).
    Memoized on ``(curmodpar G, partition G c)`` (and ``c`` under per-client noise)."""
    w = g.curmodpar
    part = g.part(c)
    key = ("upd", w, part) if ctx.per_client is None else ("upd", c, w, part)
    memo = ctx.memo
    hit = memo.get(key)
    if hit is not None:
        return hit  # type: ignore[return-value]
    mechanism, target = ctx.noise_of(c)
    dist: tuple[tuple[Vector, Fraction], ...]
    if mechanism is None:
        dist = ((grad_step(ctx.loss, ctx.eta, w, part), ONE),)
    elif target == "update":
        dist = mechanism(grad_step(ctx.loss, ctx.eta, w, part))
    else:
        grad = mean_gradient(ctx.loss, w, part)
        dist = tuple(
            (Vec(wi - ctx.eta * ni for wi, ni in zip(w, noisy, strict=True)), p)
            for noisy, p in mechanism(grad)
        )
    if len(memo) > _MEMO_LIMIT:
        memo.clear()
    memo[key] = dist
    return dist


def new_model(g: Igraph) -> Vector:
    """``Newmodel = Σ_{c ∈ clients G} (card (partition G c) / n) * gradient G c`` with
    ``n = card (dataset G)`` and ``x/0 = 0`` (rule ``eval_server``)."""
    items = tuple((len(g.part(c)), g.gradient[c]) for c in sorted(g.clients))
    return fedavg(items, len(g.dataset), len(g.curmodpar))


# --- memoized helpers -----------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def partition_options(data: Dataset, clients: frozenset[str]) -> tuple[tuple[Partition, str], ...]:
    """Every partition ``Part`` of ``data`` over ``clients`` with the detail naming it (``Part=…``),
    memoized: ``put_part`` asks in every state."""
    return tuple((part, "Part=" + partition_text(part)) for part in partitions(data, clients))
