"""Rules as data: the small typed vocabulary every rule of ``→FL`` is declared in once, and what is
derived from a declaration — its steps, its footprint and its Isabelle clause.

A rule (:class:`Rule`) is declared by

* who takes its steps and the policy gate ([IIIf-FL] III-B, the IIIf convention): :class:`Server` or
  :class:`EachClient` with the IIIf action kind the gate asks for (or an actor of the network: the
  environment, the attacker);
* its premises (:class:`Premise`): conditions on the state, each stating what it reads and, where it
  fixes a variable's value, that literal (``c ∉ ready G`` fixes ``ready:c`` to false);
* a nondeterministic choice (:class:`Choice`: the trace ``l ∈ evs P`` a step extends, the partition
  ``Part`` ``put_part`` deploys), each alternative a separate action;
* a probabilistic draw (:class:`Draw`: the reported update ``Gradc`` and its noise), the outcomes of
  one action;
* its writes (:class:`Write`): per written component, the value (:class:`Value`) it computes and
  from what (the chosen alternative, the drawn outcome, ``Newmodel``, …); a write may belong to some
  outcomes of the draw only (a report lost on the network writes nothing but ``lost:c``).

From one declaration this module derives the successor function (:meth:`Rule.fire`: every actor,
premise, outcome and alternative, in this order), the footprint the reductions trust
(:meth:`Rule.classes`: what enabling reads, which literals it needs, per written variable what its new
value depends on — a write that only some outcomes make also depends on what decides the outcome and
on its own old value), the dead-value footprint (:attr:`Rule.gradients`) and the premises of the
rule's Isabelle ``inductive`` clause (:meth:`Rule.isabelle`). A footprint can no longer disagree with
its rule: there is no second place to write it.

Variables (the names of :class:`flmodel.system.ActionClass`): ``curmodpar``, ``dataset``, ``evs``,
``aloc``, ``poli``, ``partitioned``, per client ``ready:c``, ``gradient:c``, ``partition:c``; the
bookkeeping ``round``, ``events`` and ``last`` is the bounded system's (:mod:`flmodel.system`); the
network's status variables are :mod:`flmodel.network`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from flmodel.infrastructure import Igraph, Infrastructure
from flmodel.steps import (
    RuleContext,
    Transition,
)

#: The Isabelle relations a declaration is printed for: the published ``state_transition_FL``, flcheck's
#: gated and noisy ``state_transition_FLx`` and the round-based ``state_transition_rounds``.
Dialect = Literal["published", "extended", "rounds"]
#: ``None`` for every outcome of a draw, else the outcomes (labels) a write belongs to.
When = str | None
ONE = Fraction(1)



@dataclass
class Candidate:
    """One actor about to take a step of a rule from one state: the context (:class:`RuleContext`), the
    state's infrastructure and deployment flag, the actor and the location the gate found; ``scratch``
    keeps what a premise computed for the parts after it (a report's route)."""

    ctx: RuleContext
    infra: Infrastructure
    partitioned: bool
    actor: str
    location: str
    scratch: dict[str, Any] = field(default_factory=dict)

    @property
    def g(self) -> Igraph:
        return self.infra.igra


@dataclass(frozen=True)
class Scope:
    """What the footprint of one class of actions knows: the clients, the acting actor, the trace mode,
    and the system itself (for a part that needs more, e.g. the network's variables)."""

    clients: tuple[str, ...]
    actor: str
    drop: bool
    system: Any


class Premise:
    """A condition a step needs (a premise of the rule). ``reads``: what deciding it reads;
    ``literals``: ``(variable, value)`` pairs it forces; ``holds``; ``isabelle``: its text in a dialect
    (``None``: not a premise of that relation's clause), printed after the parts of lower ``order``
    (the traces 0, the partition 1, the actor's membership 2, the rest 3)."""

    order = 3

    def reads(self, scope: Scope) -> Iterable[str]:
        return ()

    def literals(self, scope: Scope) -> Iterable[tuple[str, object]]:
        return ()

    def holds(self, c: Candidate) -> bool:
        raise NotImplementedError

    def isabelle(self, dialect: Dialect) -> str | None:
        return None


class Choice:
    """A nondeterministic choice: ``options`` yields ``(value, detail)`` per alternative (each a separate
    action, named by its detail); ``reads`` what the alternatives depend on; ``order`` as a premise's."""

    order = 1

    def reads(self, scope: Scope) -> Iterable[str]:
        return ()

    def options(self, c: Candidate) -> Iterable[tuple[Any, str]]:
        raise NotImplementedError

    def single(self, scope: Scope) -> bool:
        """Whether there is at most one alternative in every state."""
        return False

    def location(self, chosen: Any, default: str) -> str:
        """Where the step of an alternative is taken (default: the actor's location)."""
        return default

    def isabelle(self, dialect: Dialect) -> str | None:
        return None


class Draw:
    """A probabilistic choice among the outcomes of one action: ``outcomes`` yields ``(label, value,
    probability)``; ``reads`` what the outcomes and their probabilities depend on; ``labels`` the
    outcome labels it may yield (a write belongs to some of them)."""

    labels: tuple[str, ...] = ("",)

    def reads(self, scope: Scope) -> Iterable[str]:
        return ()

    def label_reads(self, scope: Scope) -> Iterable[str]:
        """What decides which label an outcome has (a write of some labels only depends on it)."""
        return self.reads(scope)

    def guard_reads(self, scope: Scope) -> Iterable[str]:
        """What decides whether the draw has outcomes at all (or refuses its input with an error)."""
        return ()

    def outcomes(self, c: Candidate) -> Iterable[tuple[str, Any, Fraction]]:
        raise NotImplementedError

    def isabelle(self, dialect: Dialect) -> str | None:
        return None


class Value:
    """How a written value is computed: ``compute`` from the candidate, the drawn outcome's value and the
    chosen alternative's; ``reads`` what it depends on (besides the choice and the draw, see
    ``uses_choice``/``uses_draw``); ``gradient_reads``: how it reads the clients' gradients (``None``:
    not at all; ``"sum"``: only through FedAvg's weighted sum of ready clients); ``isabelle``: its term
    and the premises that define it."""

    uses_choice = False
    uses_draw = False
    gradient_reads: Literal["sum"] | None = None

    def reads(self, scope: Scope) -> Iterable[str]:
        return ()

    def dependencies(self, scope: Scope, choice: set[str], draw: set[str]) -> set[str]:
        """What the value depends on: its reads, and what the choice's alternatives and the draw's
        outcomes depend on where it uses them (``choice``, ``draw``)."""
        deps = set(self.reads(scope))
        return deps | (choice if self.uses_choice else set()) | (draw if self.uses_draw else set())

    def compute(self, c: Candidate, drawn: Any, chosen: Any) -> Any:
        raise NotImplementedError

    def isabelle(self, dialect: Dialect) -> tuple[str, tuple[str, ...]]:
        raise NotImplementedError


@dataclass(frozen=True)
class Write:
    """``component := value`` in the outcomes ``when`` names (``None``: in every outcome).
    Components: ``ready`` (the actor inserted, or cleared), ``gradient`` (the actor's), ``curmodpar``,
    ``partition``, ``evs`` (the trace set; the value is the event appended), and the components a
    network declares (:mod:`flmodel.network`)."""

    component: str
    value: Value
    when: tuple[str, ...] | None = None

    def variables(self, scope: Scope) -> tuple[str, ...]:
        """The footprint variables this write changes (the value says which, where it knows better:
        ``ready`` the actor's or every client's)."""
        own = getattr(self.value, "variables", None)
        if own is not None:
            return tuple(own(scope))
        if self.component == "gradient":
            return (f"gradient:{scope.actor}",)
        if self.component == "partition":
            return tuple(f"partition:{c}" for c in scope.clients)
        return (self.component,)


# --------------------------------------------------------------------------------------------- actors
class Actors:
    """Who takes a rule's steps: ``candidates`` yields ``(actor, location)`` (the gate passed)."""

    gate_kind: str | None = None

    def names(self, system: Any) -> tuple[str, ...]:
        raise NotImplementedError

    def candidates(self, ctx: Any, infra: Infrastructure, skip: frozenset[str] = frozenset()
                   ) -> Iterator[tuple[str, str]]:
        """``(actor, location)`` of every actor whose gate passes (those of ``skip`` may be left out)."""
        raise NotImplementedError

    def isabelle(self, dialect: Dialect) -> tuple[str, str]:
        """The actor's term and the gate premise of the extended relations."""
        raise NotImplementedError


def gate(ctx: Any, infra: Infrastructure, actor: str, kind: str) -> str | None:
    """The actor's location if the policy there enables ``kind`` (or policies are not enforced), else
    ``None``: IIIf's ``enables (poli I) G (aloc G a) a kind`` (memoized on the ``poli`` and ``aloc``
    it reads)."""
    g = infra.igra
    memo = ctx.memo
    last = memo.get("gate:last")  # the table of the last (poli, aloc): states share these objects
    if last is None or last[0] is not infra.poli or last[1] is not g.aloc:
        last = memo["gate:last"] = (infra.poli, g.aloc, {})
    table = last[2]
    hit = table.get((actor, kind), table)
    if hit is not table:
        return hit
    key = ("gate", infra.poli, g.aloc, actor, kind)
    if key in memo:
        table[(actor, kind)] = memo[key]
        return memo[key]
    loc = g.aloc.get(actor)
    if loc is not None and ctx.enforce_policies and not infra.poli.enables(g, loc, actor, kind):
        loc = None
    if len(memo) > 1 << 17:
        memo.clear()
    memo[key] = table[(actor, kind)] = loc
    return loc


@dataclass(frozen=True)
class Exact(Draw):
    """No probabilistic choice: one outcome of probability 1."""

    def outcomes(self, c: Candidate) -> Iterable[tuple[str, Any, Fraction]]:
        return (("", None, ONE),)


# --------------------------------------------------------------------------------------------- rules
#: The igraph's components in ``Lgraph`` order, for the Isabelle clause (those no rule writes are kept).
IGRAPH = ("gra", "aloc", "server", "clients", "ready", "gradient", "curmodpar", "partition", "dataset")


@dataclass(frozen=True)
class Rule:
    """A rule of a rule set, declared once (module docstring): its ``name`` (the actions' rule name;
    ``noisy_name`` with a noise mechanism), the IIIf action ``kind`` its gate checks, ``actors``,
    ``premises``, ``choice``, ``draw``, ``writes``; whether it starts a new round (``aggregates``) or
    deploys a partition (``deploys``); ``detail``: a text added to each action's detail (``None``:
    none); ``step``: a transformation of each step, applied in order (a network's: the status the step
    leaves), with its own footprint (:class:`StepEffect`)."""

    name: str
    kind: str
    actors: Actors
    premises: tuple[Premise, ...] = ()
    choice: Choice | None = None
    draw: Draw = Exact()
    writes: tuple[Write, ...] = ()
    aggregates: bool = False
    deploys: bool = False
    detail: Callable[[Candidate], str] | None = None
    effects: tuple[StepEffect, ...] = ()
    noisy: bool = False

    def action_name(self, ctx: Any) -> str:
        """The actions' rule name: ``<name>_noisy`` for a report under noise (flcheck's
        ``get_grad_noisy``)."""
        return self.name + "_noisy" if self.noisy and ctx.noisy else self.name

    # -- the successor function -------------------------------------------------------------------
    def fire(self, ctx: Any, infra: Infrastructure, partitioned: bool,
             skip: frozenset[str] = frozenset()) -> Iterator[Transition]:
        """The rule's steps from ``infra``: per actor whose premises hold (and not in ``skip``), per
        outcome of the draw, per alternative of the choice, the target (the writes of that outcome
        applied, then the step's effects) with the outcome's probability."""
        name = self.action_name(ctx)
        for actor, loc in self.actors.candidates(ctx, infra, skip):
            if actor in skip:
                continue
            c = Candidate(ctx, infra, partitioned, actor, loc)
            if not all(p.holds(c) for p in self.premises):
                continue
            options = list(self.choice.options(c)) if self.choice is not None else [(None, "")]
            if not options:
                continue
            extra = "" if self.detail is None else self.detail(c)
            for label, drawn, p in self.draw.outcomes(c):
                for chosen, detail in options:
                    target = self._target(c, label, drawn, chosen)
                    for effect in self.effects:
                        target = effect.apply(c, label, chosen, target)
                    text = detail + ("; " if detail and extra else "") + extra
                    where = loc if self.choice is None else self.choice.location(chosen, loc)
                    yield Transition(name, actor, where, text, target, p)

    def _target(self, c: Candidate, label: str, drawn: Any, chosen: Any) -> Infrastructure:
        g = c.g
        ready, gradient, model, part, prot = g.ready, g.gradient, g.curmodpar, g.partition, c.infra.prot
        for w in self.writes:
            if w.when is not None and label not in w.when:
                continue
            value = w.value.compute(c, drawn, chosen)
            comp = w.component
            if comp == "ready":
                ready = value
            elif comp == "gradient":
                gradient = gradient.set(c.actor, value)
            elif comp == "curmodpar":
                model = value
            elif comp == "partition":
                part = value
            elif comp == "evs":
                prot = value
            else:  # pragma: no cover - a declaration error
                raise ValueError(f"rule {self.name}: unknown component {comp!r}")
        if ready is g.ready and gradient is g.gradient and model is g.curmodpar and part is g.partition \
                and prot is c.infra.prot:
            return c.infra
        g2 = tuple.__new__(Igraph, (g.gra, g.aloc, g.server, g.clients, ready, gradient, model, part,
                                    g.dataset))
        return tuple.__new__(Infrastructure, (g2, prot, c.infra.poli))

    # -- the footprint ------------------------------------------------------------------------------
    def guard_reads(self, scope: Scope) -> set[str]:
        """What deciding whether the rule is enabled for ``scope``'s actor reads."""
        out: set[str] = set()
        if self.actors.gate_kind is not None:
            out |= {"aloc", "poli"}
        for p in self.premises:
            out.update(p.reads(scope))
        if self.choice is not None:
            out.update(self.choice.reads(scope))
        out.update(self.draw.guard_reads(scope))
        for e in self.effects:
            out.update(e.guard_reads(scope))
        return out

    def written(self, scope: Scope) -> dict[str, set[str]]:
        """Per variable the rule writes for ``scope``'s actor, what its new value depends on: the
        value's reads, the choice's and the draw's where the value uses them, and, for a write only some
        outcomes make, the draw's reads and the variable's old value."""
        choice = set(self.choice.reads(scope)) if self.choice is not None else set()
        draw = set(self.draw.reads(scope))
        label = set(self.draw.label_reads(scope))
        out: dict[str, set[str]] = {}
        for w in self.writes:
            deps = w.value.dependencies(scope, choice, draw)
            for v in w.variables(scope):
                extra = {v} | label if w.when is not None else set()
                out.setdefault(v, set()).update(deps | extra)
        for e in self.effects:
            for v, needs in e.written(scope).items():
                out.setdefault(v, set()).update(needs)
        return out

    def literals(self, scope: Scope) -> set[tuple[str, object]]:
        out: set[tuple[str, object]] = set()
        for p in self.premises:
            out.update(p.literals(scope))
        for e in self.effects:
            out.update(e.literals(scope))
        return out

    def single(self, scope: Scope) -> bool:
        """Whether at most one action of the class is enabled in any state: one alternative at most, and
        the effects name none of their own."""
        return (self.choice is None or self.choice.single(scope)) and all(e.single for e in self.effects)

    @property
    def gradients(self) -> Literal["ready", "sum"] | None:
        """How the rule uses the clients' gradients (the footprint the dead values and the gradient sum
        rest on), read off the declaration's footprint for a client ``x`` of two: ``"ready"`` when every
        value that reads a gradient is a weighted sum of ready clients' gradients (FedAvg: ``NewModel``
        under ``ready G = clients G``, the reporters' model), nothing else reads one, and ``gradient x``
        is written exactly when ``x`` joins ``ready`` (in the same outcomes); ``"sum"`` when moreover
        ``gradient x`` is written only for an unready ``x`` (literal ``ready:x`` false), parts are
        deployed only before the data are (literal ``partitioned`` false) and a client joins ``ready``
        only after (literal ``partitioned`` true), so the weights of the ready clients' sum stay put;
        ``None`` otherwise (no reduction relies on it)."""
        probe = Scope(("x", "y"), "x", True, None)
        if any(w.value.gradient_reads not in (None, "sum") for w in self.writes):
            return None
        reads = [*(r for p in self.premises for r in p.reads(probe)),
                 *(r for w in self.writes if w.value.gradient_reads is None for r in w.value.reads(probe))]
        if any(r.startswith("gradient:") for r in reads) or any(not e.keeps_gradients for e in self.effects):
            return None
        written = self.written(probe)
        joins = {w.when for w in self.writes if w.variables(probe) == ("ready:x",)}  # x joins (no clearing)
        grads = {w.when for w in self.writes for v in w.variables(probe) if v == "gradient:x"}
        if "gradient:x" in written and ("ready:y" in written or joins != grads):
            return None
        literals = self.literals(probe)
        sums = ("gradient:x" not in written or ("ready:x", False) in literals) \
            and (not any(v.startswith("partition:") for v in written) or ("partitioned", False) in literals) \
            and (not joins or ("partitioned", True) in literals)
        return "sum" if sums else "ready"

    # -- the Isabelle clause ------------------------------------------------------------------------
    def isabelle(self, dialect: Dialect) -> tuple[list[str], dict[str, str], str]:
        """The clause's premises (after ``G = igra I`` and ``P = prot I``) in ``dialect``, the written
        igraph components' terms (``ready`` → ``(insert c (ready G))``, …) and ``P'``'s term."""
        actor, gate_text = self.actors.isabelle(dialect)
        ordered: list[tuple[int, str]] = []
        if self.choice is not None and (text := self.choice.isabelle(dialect)) is not None:
            ordered.append((self.choice.order, text))
        if actor == "c":
            ordered.append((2, "c \\<in> clients G"))
        ordered += [(p.order, text) for p in self.premises if (text := p.isabelle(dialect)) is not None]
        premises = [text for _, text in sorted(ordered, key=lambda x: x[0])]
        if dialect != "published":
            premises.append(gate_text)
        if (text := self.draw.isabelle(dialect)) is not None:
            premises.append(text)
        terms: dict[str, str] = {}
        prot = "evs P"
        for w in self.writes:
            term, defs = w.value.isabelle(dialect)
            premises += [d for d in defs if d not in premises]
            if w.component == "evs":
                prot = term
            elif w.component == "gradient":
                terms["gradient"] = f"(fun_upd (gradient G) c {term})"
            else:
                terms[w.component] = term
        return premises, terms, prot


class StepEffect:
    """A transformation of a rule's steps declared beside its writes (a network's status: the clock, a
    report's route and loss, the attacker's copies): ``apply`` changes a step's target; its footprint
    is ``guard_reads``, ``literals`` and ``written`` (per variable what its new value depends on);
    ``single`` false when it adds alternatives of its own; ``keeps_gradients`` false when it reads or
    writes gradients beyond the rule's own writes."""

    single = True
    keeps_gradients = True

    def apply(self, c: Candidate, label: str, chosen: Any, target: Infrastructure) -> Infrastructure:
        return target

    def guard_reads(self, scope: Scope) -> Iterable[str]:
        return ()

    def literals(self, scope: Scope) -> Iterable[tuple[str, object]]:
        return ()

    def written(self, scope: Scope) -> Mapping[str, Iterable[str]]:
        return {}


def lgraph(terms: Mapping[str, str]) -> str:
    """``Lgraph (gra G) (aloc G) … `` with the written components' terms in their places."""
    return "Lgraph " + " ".join(terms.get(comp, f"({comp} G)") for comp in IGRAPH)


__all__ = ["IGRAPH", "Actors", "Candidate", "Choice", "Dialect", "Draw", "Exact", "Premise", "Rule", "Scope",
           "StepEffect", "Value", "Write", "gate", "lgraph"]
