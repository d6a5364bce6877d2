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

Each rule is declared once in the vocabulary of :mod:`flmodel.rule_data` (who takes it, its premises,
choice, draw and writes); its steps, footprint and Isabelle clause are derived from that declaration.
"""

from __future__ import annotations

from dataclasses import dataclass

from flmodel.infrastructure import Infrastructure
from flmodel.rule_data import Rule, Write
from flmodel.rule_parts import (
    AllReady,
    Chosen,
    Cleared,
    Deployed,
    Drawn,
    EachClient,
    EmptyTraceIn,
    Event,
    Inserted,
    NewModel,
    PartitionChoice,
    Ready,
    Report,
    Server,
    SomeClients,
    TraceChoice,
)
from flmodel.steps import (
    ELIDED_TRACE,
    Elided,
    NoiseTarget,
    RuleContext,
    TraceMode,
    Transition,
    abstract_evs,
    dropped_after_step,
    insertp,
    new_model,
    partition_options,
    trace_choices,
    update_distribution,
)

__all__ = ["ELIDED_TRACE", "EVAL_ROUND", "EVAL_SERVER", "FEDAVG_ROUNDS", "GET_GRAD", "GET_GRAD_ROUND",
           "PUBLISHED", "PUT_PART", "PUT_PART_ONCE", "RULE_SETS", "Elided", "NoiseTarget", "Rule",
           "RuleContext", "RuleSet", "TraceMode", "Transition", "abstract_evs", "dropped_after_step",
           "fl_step", "insertp", "new_model", "partition_options", "trace_choices", "update_distribution"]


# --- the published rules and the round-based variant, declared once (flmodel.rule_data) -----------

_PUT = (Write("partition", Chosen()), Write("evs", Event("put", Chosen())))
_GET = (Write("ready", Inserted()), Write("gradient", Drawn()), Write("evs", Event("get", Drawn())))
_EVAL = (Write("ready", Cleared()), Write("curmodpar", NewModel()), Write("evs", Event("eval", NewModel())))

PUT_PART = Rule("put_part", "put_part", Server("put_part"), (EmptyTraceIn(),), PartitionChoice(),
                writes=_PUT, deploys=True)
"""``put_part`` ([IIIf-FL] III-B): ``[] ∈ evs P``; one step per partition ``Part`` of ``dataset G``
over ``clients G``; ``P' = insertp [Put [Part]] (evs P)``; ``G'`` replaces ``partition`` by ``Part`` and
keeps every other component (``ready G`` and ``curmodpar G`` included: SPEC.md's readings)."""

GET_GRAD = Rule("get_grad", "get_grad", EachClient("get_grad"), (), TraceChoice(), Report(), _GET, noisy=True)
"""``get_grad`` ([IIIf-FL] III-B), for every client ``c`` and trace ``l ∈ evs P``: ``Gradc =
curmodpar G − η∇L(curmodpar G, partition G c)`` (with a noise mechanism, flcheck's ``get_grad_noisy``:
one outcome per value of ``M(Gradc)``), ``P' = insertp (Get c Gradc # l) (evs P)``, ``G' =
G(ready := insert c (ready G), gradient := (gradient G)(c := Gradc))``. No premise ``c ∉ ready G``."""

EVAL_SERVER = Rule("eval_server", "eval_server", Server("eval_server"), (AllReady(),), TraceChoice(),
                   writes=_EVAL, aggregates=True)
"""``eval_server`` ([IIIf-FL] III-B): ``ready G = clients G`` (also when both are empty), ``l ∈ evs P``,
``Newmodel = Σ_c (card (partition G c)/n) * gradient G c``, ``P' = insertp (Eval Newmodel # l) (evs
P)``, ``G' = G(ready := ∅, curmodpar := Newmodel)``."""

PUT_PART_ONCE = Rule("put_part_once", "put_part", Server("put_part"), (Deployed(False), EmptyTraceIn()),
                     PartitionChoice(), writes=_PUT, deploys=True)
"""``fedavg_rounds``: ``put_part`` enabled only while no partition has been deployed."""

GET_GRAD_ROUND = Rule("get_grad_round", "get_grad", EachClient("get_grad"), (Deployed(True), Ready(False)),
                      TraceChoice(), Report(), _GET, noisy=True)
"""``fedavg_rounds``: ``get_grad`` only after the partition and only for ``c ∉ ready G`` (each client
reports once per round)."""

EVAL_ROUND = Rule("eval_round", "eval_server", Server("eval_server"), (AllReady(), SomeClients()),
                  TraceChoice(), writes=_EVAL, aggregates=True)
"""``fedavg_rounds``: aggregate when ``ready G = clients G ≠ ∅``."""


@dataclass(frozen=True, slots=True)
class RuleSet:
    """A transition relation: a name and its rules (:class:`flmodel.rule_data.Rule`, each declared once).
    ``tracks_partitioned``: whether the state records that a partition has been deployed (needed by
    ``fedavg_rounds`` only; the published relation does not, so its states are not split by that flag)."""

    name: str
    rules: tuple[Rule, ...]
    tracks_partitioned: bool = False

    def rule_names(self, noisy: bool) -> tuple[str, ...]:
        """The action rule names this set produces (a report becomes ``<name>_noisy`` under noise)."""
        return tuple(r.name + ("_noisy" if noisy and r.noisy else "") for r in self.rules)


PUBLISHED = RuleSet("published", (PUT_PART, GET_GRAD, EVAL_SERVER))
"""The relation ``→FL`` exactly as published in [IIIf-FL] III-B."""

FEDAVG_ROUNDS = RuleSet("fedavg_rounds", (PUT_PART_ONCE, GET_GRAD_ROUND, EVAL_ROUND), tracks_partitioned=True)
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


