"""The parts the rules of ``→FL`` are declared with ([IIIf-FL] III-B; the vocabulary and what is derived
from a declaration: :mod:`flmodel.rule_data`): who takes a step and the policy gate (:class:`Server`,
:class:`EachClient`), the premises (``[] ∈ evs P``, ``c ∉ ready G``, ``ready G = clients G``, ``clients G
≠ {}``, the deployment flag of the round-based rules), the choices (the trace ``l ∈ evs P`` a step
extends, the partition ``Part`` ``put_part`` deploys), the reported update (:class:`Report`) and the
values written (``insert c (ready G)``, ``{}``, ``Gradc``, ``Part``, ``Newmodel``, the event appended to
a trace). Each part states what it reads, computes its value and prints its Isabelle text."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from flmodel.infrastructure import Eval, Get, Infrastructure, Put
from flmodel.learning import Vector
from flmodel.rule_data import Actors, Candidate, Choice, Dialect, Draw, Premise, Scope, Value, gate
from flmodel.steps import (
    dropped_after_step,
    insertp,
    new_model,
    partition_options,
    trace_choices,
    update_distribution,
)

__all__ = ["AllReady", "Chosen", "Cleared", "Deployed", "Drawn", "EachClient", "EmptyTraceIn", "Event",
           "Inserted", "NewModel", "PartitionChoice", "Ready", "Report", "Server", "SomeClients",
           "TraceChoice"]


@dataclass(frozen=True)
class Server(Actors):
    """The server, at its location, when the policy there enables ``kind``."""

    gate_kind: str

    def names(self, system: Any) -> tuple[str, ...]:
        return (system.initial.igra.server,)

    def candidates(self, ctx: Any, infra: Infrastructure, skip: frozenset[str] = frozenset()
                   ) -> Iterator[tuple[str, str]]:
        server = infra.igra.server
        loc = gate(ctx, infra, server, self.gate_kind)
        if loc is not None:
            yield server, loc

    def isabelle(self, dialect: Dialect) -> tuple[str, str]:
        return "(server G)", (f"(gate \\<longrightarrow> enables I (aloc G (server G)) (server G) "
                              f"act_{self.gate_kind})")


@dataclass(frozen=True)
class EachClient(Actors):
    """Every client ``c`` in name order (one client only under a client-specific context,
    ``RuleContext.only_client``), at its location, when the policy there enables ``kind``."""

    gate_kind: str

    def names(self, system: Any) -> tuple[str, ...]:
        return tuple(system.clients)

    def candidates(self, ctx: Any, infra: Infrastructure, skip: frozenset[str] = frozenset()
                   ) -> Iterator[tuple[str, str]]:
        clients = infra.igra.clients
        if ctx.only_client is None:
            order = ctx.memo.get(("sorted", clients))
            if order is None:
                order = ctx.memo[("sorted", clients)] = tuple(sorted(clients))
        else:
            order = (ctx.only_client,)
        for c in order:
            if c in clients and c not in skip:
                loc = gate(ctx, infra, c, self.gate_kind)
                if loc is not None:
                    yield c, loc

    def isabelle(self, dialect: Dialect) -> tuple[str, str]:
        return "c", f"(gate \\<longrightarrow> enables I (aloc G c) c act_{self.gate_kind})"


# --------------------------------------------------------------------------------------------- premises
@dataclass(frozen=True)
class EmptyTraceIn(Premise):
    """``[] ∈ evs P``."""

    order = 0

    def reads(self, scope: Scope) -> Iterable[str]:
        return ("evs",)

    def holds(self, c: Candidate) -> bool:
        return () in c.infra.prot.evs

    def isabelle(self, dialect: Dialect) -> str | None:
        return "[] \\<in> evs P"


@dataclass(frozen=True)
class Ready(Premise):
    """``c ∈ ready G`` (``value``) or ``c ∉ ready G`` of the acting client."""

    value: bool

    def reads(self, scope: Scope) -> Iterable[str]:
        return (f"ready:{scope.actor}",)

    def literals(self, scope: Scope) -> Iterable[tuple[str, object]]:
        return ((f"ready:{scope.actor}", self.value),)

    def holds(self, c: Candidate) -> bool:
        return (c.actor in c.g.ready) == self.value

    def isabelle(self, dialect: Dialect) -> str | None:
        return "c \\<in> ready G" if self.value else "c \\<notin> ready G"


@dataclass(frozen=True)
class AllReady(Premise):
    """``ready G = clients G``."""

    def reads(self, scope: Scope) -> Iterable[str]:
        return tuple(f"ready:{c}" for c in scope.clients)

    def literals(self, scope: Scope) -> Iterable[tuple[str, object]]:
        return tuple((f"ready:{c}", True) for c in scope.clients)

    def holds(self, c: Candidate) -> bool:
        return c.g.ready == c.g.clients

    def isabelle(self, dialect: Dialect) -> str | None:
        return "ready G = clients G"


@dataclass(frozen=True)
class SomeClients(Premise):
    """``clients G ≠ {}`` (no rule changes the clients: it reads nothing that varies)."""

    def holds(self, c: Candidate) -> bool:
        return bool(c.g.clients)

    def isabelle(self, dialect: Dialect) -> str | None:
        return "clients G \\<noteq> {}"


@dataclass(frozen=True)
class Deployed(Premise):
    """Whether the data have been deployed (the round-based rules' flag ``partitioned``)."""

    value: bool

    def reads(self, scope: Scope) -> Iterable[str]:
        return ("partitioned",)

    def literals(self, scope: Scope) -> Iterable[tuple[str, object]]:
        return (("partitioned", self.value),)

    def holds(self, c: Candidate) -> bool:
        return c.partitioned == self.value


# --------------------------------------------------------------------------------------------- choices
@dataclass(frozen=True)
class TraceChoice(Choice):
    """``l ∈ evs P``: the trace the step extends (one per trace of the literal trace set, named
    ``l=…``; one representative under the ``drop`` abstraction, whose successor does not depend on it).
    No trace: no step."""

    order = 0

    def reads(self, scope: Scope) -> Iterable[str]:
        return ("evs",)

    def options(self, c: Candidate) -> Iterable[tuple[Any, str]]:
        return trace_choices(c.ctx, c.infra.prot.evs)

    def single(self, scope: Scope) -> bool:
        return scope.drop

    def isabelle(self, dialect: Dialect) -> str | None:
        return "l \\<in> evs P"


@dataclass(frozen=True)
class PartitionChoice(Choice):
    """``Part`` with ``dataset G = ⋃• Part c`` over ``clients G`` (every such partition, named
    ``Part=…``; none when there are no clients and some data)."""

    def reads(self, scope: Scope) -> Iterable[str]:
        return ("dataset",)

    def options(self, c: Candidate) -> Iterable[tuple[Any, str]]:
        return partition_options(c.g.dataset, c.g.clients)

    def isabelle(self, dialect: Dialect) -> str | None:
        return "dataset G = dunion Part (clients G) \\<Longrightarrow> partition_of Part (clients G)"


# --------------------------------------------------------------------------------------------- draws
@dataclass(frozen=True)
class Report(Draw):
    """The acting client's reported update: ``Gradc = curmodpar G − η·∇L(curmodpar G, partition G c)``
    as published, or the distribution of its noise mechanism (flcheck's ``get_grad_noisy``, the
    client's own mechanism under per-client noise): one outcome per value."""

    def reads(self, scope: Scope) -> Iterable[str]:
        return ("curmodpar", f"partition:{scope.actor}")

    def guard_reads(self, scope: Scope) -> Iterable[str]:
        """A mechanism that refuses some values (a strict grid) makes whether the report exists depend
        on the value it noises, unless the system shows that no report meets a refused value
        (:meth:`flmodel.system.FLSystem.reports_never_refused`)."""
        system = scope.system
        mechanism = None if system is None else system.ctx.noise_of(scope.actor)[0]
        if mechanism is None or not mechanism.refuses or system.reports_never_refused(scope.actor):
            return ()
        return self.reads(scope)

    def outcomes(self, c: Candidate) -> Iterable[tuple[str, Any, Fraction]]:
        return (("", v, p) for v, p in update_distribution(c.ctx, c.g, c.actor))

    def isabelle(self, dialect: Dialect) -> str | None:
        if dialect == "published":
            return "Gradc = vsub (curmodpar G) (vscale (eta Lr) (gradL Lr (curmodpar G) (partition G c)))"
        return "Gradc \\<in> Sup c (curmodpar G) (gradL Lr (curmodpar G) (partition G c))"


# --------------------------------------------------------------------------------------------- values
@dataclass(frozen=True)
class Inserted(Value):
    """``insert c (ready G)``: the acting client joins ``ready``."""

    def variables(self, scope: Scope) -> tuple[str, ...]:
        return (f"ready:{scope.actor}",)

    def compute(self, c: Candidate, drawn: Any, chosen: Any) -> Any:
        ready = c.g.ready
        return ready if c.actor in ready else ready | {c.actor}

    def isabelle(self, dialect: Dialect) -> tuple[str, tuple[str, ...]]:
        return "(insert c (ready G))", ()


@dataclass(frozen=True)
class Cleared(Value):
    """``{}``: no client is ready."""

    def variables(self, scope: Scope) -> tuple[str, ...]:
        return tuple(f"ready:{c}" for c in scope.clients)

    def compute(self, c: Candidate, drawn: Any, chosen: Any) -> Any:
        return frozenset()

    def isabelle(self, dialect: Dialect) -> tuple[str, tuple[str, ...]]:
        return "{}", ()


@dataclass(frozen=True)
class Drawn(Value):
    """The draw's outcome (``Gradc``)."""

    uses_draw = True

    def compute(self, c: Candidate, drawn: Any, chosen: Any) -> Any:
        return drawn

    def isabelle(self, dialect: Dialect) -> tuple[str, tuple[str, ...]]:
        return "Gradc", ()


@dataclass(frozen=True)
class Chosen(Value):
    """The chosen alternative (``Part``)."""

    uses_choice = True

    def compute(self, c: Candidate, drawn: Any, chosen: Any) -> Any:
        return chosen

    def isabelle(self, dialect: Dialect) -> tuple[str, tuple[str, ...]]:
        return "Part", ()


@dataclass(frozen=True)
class NewModel(Value):
    """``Newmodel = Σ_{c ∈ clients G} (card (partition G c) / n) · gradient G c``, ``n = card (dataset
    G)`` (``x/0 = 0``): FedAvg of every client (ready, by the rule's premise)."""

    gradient_reads: Literal["sum"] | None = "sum"

    def reads(self, scope: Scope) -> Iterable[str]:
        return (*(f"gradient:{c}" for c in scope.clients), *(f"partition:{c}" for c in scope.clients),
                "dataset")

    def compute(self, c: Candidate, drawn: Any, chosen: Any) -> Vector:
        return new_model(c.g)

    def isabelle(self, dialect: Dialect) -> tuple[str, tuple[str, ...]]:
        return "Newmodel", ("n = card (dataset G)", "Newmodel = weighted_sum G n")


@dataclass(frozen=True)
class Event(Value):
    """The event a step appends to the trace it extends (``P' = insertp (e # l) (evs P)``): ``Put
    [Part]`` (a new trace of its own), ``Get c Gradc`` or ``Eval Newmodel``; under the ``drop``
    abstraction the new trace set is the abstraction after a step. The event carries ``of``'s value, so
    the new trace set depends on what ``of`` depends on."""

    kind: Literal["put", "get", "eval"]
    of: Value

    @property
    def gradient_reads(self) -> Literal["sum"] | None:  # type: ignore[override]
        return self.of.gradient_reads

    def reads(self, scope: Scope) -> Iterable[str]:
        return ("evs", *self.of.reads(scope))

    def dependencies(self, scope: Scope, choice: set[str], draw: set[str]) -> set[str]:
        """Under ``drop`` the new trace set depends only on ``[] ∈ evs``; literally on the trace set,
        the trace extended (or the partition put) and what the event carries."""
        if scope.drop:
            return {"evs"}
        return {"evs"} | choice | self.of.dependencies(scope, choice, draw)

    def compute(self, c: Candidate, drawn: Any, chosen: Any) -> Any:
        evs = c.infra.prot.evs
        if c.ctx.trace_mode == "drop":
            return dropped_after_step(evs)
        if self.kind == "put":
            return insertp((Put((chosen,)),), evs)
        value = self.of.compute(c, drawn, chosen)
        event = Get(c.actor, value) if self.kind == "get" else Eval(value)
        return insertp((event, *chosen), evs)

    def isabelle(self, dialect: Dialect) -> tuple[str, tuple[str, ...]]:
        term, defs = self.of.isabelle(dialect)
        text = {"put": f"insertp [Put [{term}]] (evs P)", "get": f"insertp (Get c {term} # l) (evs P)",
                "eval": f"insertp (Eval {term} # l) (evs P)"}[self.kind]
        return text, defs


