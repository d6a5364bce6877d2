"""The seam to the checker: :class:`FLSystem`, a transition system over FL states.

It implements the checker's ``TransitionSystem`` protocol structurally (this package never imports the
checker): ``initial_states()``, ``successors(state)`` yielding ``(action, target, probability)``
tuples, ``observable_names()`` and ``observe(state, name)``. Its actions are the shared
:class:`flcheck_spec.vocab.Action` values, the same class the checker's ``checker.mc.ts`` uses.

States (:class:`FLState`) are the states of [IIIf-FL] III-B (``Infrastructure`` values) annotated
with bookkeeping the published relation does not have: the number of aggregations
so far (``round``), the number of steps (``events``, only counted when ``max_events`` is set), the
rule of the last step (``last``) and, for the ``fedavg_rounds`` variant only, whether the data have
been partitioned. The projection :meth:`FLSystem.project` maps every explored path onto a ``→FL``
path and, within the bounds, every ``→FL`` path lifts (tested), so the explored structure is a
bounded unfolding of ``Kripke {t. I →FL* t} {I}``.

Bounds keep state spaces finite: every rule is disabled once ``round = max_rounds`` (training is
over: the states after the last aggregation are final, so "``curmodpar`` after R rounds" is the value
in the deadlock states) or once ``events = max_events``. Such states are marked by the observable
``bound_reached``; they are deadlocks *of the bounded system*, not of ``→FL``.

Observables (values are hashable): ``clients``, ``ready`` (frozensets of names), ``curmodpar`` (tuple of
Fractions), ``dataset`` (frozenset of data points), ``server``, ``n`` (``card (dataset G)``), ``round``,
``events``, ``last`` (rule name of the last step, ``"none"`` initially), ``last_kind`` (the IIIf action
kind of the last step: ``put_part``/``get_grad``/``eval_server``/``none``), ``bound_reached``,
``trace_count`` (``card (evs P)``), ``partitioned`` (``fedavg_rounds`` only), and per client ``c``:
``gradient:c``, ``partition:c``, ``ready:c``; per rule name ``r``: ``enabled:r`` (some step of rule
``r`` leaves the state *in the bounded system*; the checker may equally derive it from action rules).

Value reductions are no part of the model: the checker wraps an :class:`FLSystem` in the maps that
reset dead, forgotten or summed values (``checker.app.value_reductions``). The model states the facts
they rest on: the rules' footprints (:meth:`FLSystem.action_classes`, :meth:`FLSystem.variable_reads`)
and which gradients the rules read only inside ``ready`` or only through their weighted sum
(:meth:`FLSystem.dead_gradient_clients`, :meth:`FLSystem.gradients_summed`). ``FLView`` is what a
system over FL states offers, the model and those wrappers alike (:mod:`flmodel.view`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

from flcheck_spec.vocab import Action

from flmodel.data import DataPoint, Dataset, partition_by
from flmodel.errors import MODEL_POSITION, Diagnostic, ModelError
from flmodel.frozen import FrozenMap
from flmodel.infrastructure import Infrastructure, Protocol, validate_igraph
from flmodel.learning import Loss, SquaredLoss, Vec, as_vec
from flmodel.noise import Mechanism
from flmodel.refusals import reports_never_refused
from flmodel.rule_data import Scope
from flmodel.rules import (
    PUBLISHED,
    RULE_SETS,
    NoiseTarget,
    RuleContext,
    RuleSet,
    TraceMode,
    abstract_evs,
)


class FLState(NamedTuple):
    """A state of the bounded FL system: the published state plus bookkeeping (see module docstring)."""

    infra: Infrastructure
    round: int
    events: int
    last: str
    partitioned: bool


@dataclass(frozen=True, slots=True)
class Bounds:
    """``max_rounds``: stop after this many aggregations; ``max_events``: stop after this many steps.
    ``None`` means unbounded (the state space may then be infinite)."""

    max_rounds: int | None = None
    max_events: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_rounds", "max_events"):
            v = getattr(self, name)
            if v is not None and v < 0:
                raise ModelError(f"{name} must be >= 0, got {v}")


class ActionClass(NamedTuple):
    """The actions of one rule taken by one actor, and what they touch (the footprint the checker's
    confluence test reads, :mod:`checker.mc.confluence`). Variables are named ``round``, ``events``,
    ``last``, ``partitioned``, ``curmodpar``, ``dataset``, ``evs``, ``aloc``, ``poli``, and per
    client ``c``: ``ready:c``, ``gradient:c``, ``partition:c``.

    ``reads``: what the actions' enabledness, probabilities and effects depend on; ``writes``: what
    they may change; ``guard``: necessary conditions ``(variable, value)`` of enabledness (``ready:c``
    is ``True`` or ``False``; ``partitioned`` likewise); ``commuting``: writes ``(variable, key)`` that
    commute with every write of the same variable under the same key, whatever the order, and
    neither enables nor disables the other action nor changes its effect (``last`` set to the same
    rule name; ``evs`` under the ``drop`` abstraction); ``single``: at most one action of the class is
    enabled in any state.

    Finer, for the cone of influence (``checker.app.value_reductions``): ``guard_reads`` are what the
    enabledness reads; ``effects`` maps each written variable to what its new value (its distribution,
    for a drawn one) depends on; ``reads`` is their union."""

    rule: str
    actor: str
    reads: frozenset[str]
    writes: frozenset[str]
    guard: frozenset[tuple[str, object]]
    commuting: frozenset[tuple[str, object]]
    single: bool
    aggregates: bool
    guard_reads: frozenset[str] = frozenset()
    effects: tuple[tuple[str, frozenset[str]], ...] = ()


Successor = tuple[Action, FLState, Fraction]
_CacheEntry = tuple[tuple[Action, Infrastructure, Fraction, bool, bool], ...]


class FLSystem:
    """The FL instance as a finite transition system ([IIIf-FL] III-B, ``→FL`` with bounds).

    Parameters: the initial infrastructure; the rule set (``PUBLISHED`` or ``FEDAVG_ROUNDS``, or their
    names); loss ``L`` and learning rate ``η``; an optional noise mechanism (``None``: the published
    deterministic ``get_grad``) and what it perturbs; bounds; trace mode (``"full"`` literal trace sets,
    or ``"drop"`` — the trace-history reduction, sound for properties that do not read traces); whether
    local policies gate steps; ``owner`` (data point -> client) used by :meth:`with_dataset`;
    ``partitioned``: whether the initial data are already deployed (``fedavg_rounds``).

    >>> from flmodel.examples import seed_model
    >>> sys = seed_model()
    >>> (s0,) = sys.initial_states()
    >>> sorted({a.rule for a, _, _ in sys.successors(s0)})
    ['get_grad', 'put_part']
    """

    def __init__(
        self,
        initial: Infrastructure,
        *,
        rules: RuleSet | str = PUBLISHED,
        loss: Loss | None = None,
        eta: Fraction | int | str = Fraction(1, 2),
        mechanism: Mechanism | None = None,
        noise_target: NoiseTarget = "update",
        per_client: FrozenMap[str, tuple[Mechanism | None, NoiseTarget]] | None = None,
        bounds: Bounds | None = None,
        trace_mode: TraceMode = "full",
        enforce_policies: bool = True,
        owner: Callable[[DataPoint], str] | None = None,
        partitioned: bool = False,
        cache_size: int = 1 << 12,
    ) -> None:
        if isinstance(rules, str):
            if rules not in RULE_SETS:
                raise ModelError(f"unknown rule set {rules!r}; expected one of {sorted(RULE_SETS)}")
            rules = RULE_SETS[rules]
        if trace_mode not in ("full", "drop"):
            raise ModelError(f"unknown trace mode {trace_mode!r}; expected 'full' or 'drop'")
        if noise_target not in ("update", "gradient"):
            raise ModelError(f"unknown noise target {noise_target!r}; expected 'update' or 'gradient'")
        problems = validate_igraph(initial.igra)
        if problems:
            raise ModelError([Diagnostic(MODEL_POSITION, p) for p in problems])
        self.rules: RuleSet = rules
        self.ctx = RuleContext(
            loss if loss is not None else SquaredLoss(),
            Fraction(eta),
            mechanism,
            noise_target,
            trace_mode,
            enforce_policies,
            per_client=per_client,
        )
        self.bounds = bounds if bounds is not None else Bounds()
        self.owner = owner
        self.initial_partitioned = bool(partitioned)
        g0 = initial.igra
        if type(g0.curmodpar) is not Vec or any(type(v) is not Vec for _, v in g0.gradient.items_tuple):
            # normalise vectors to Vec (tuples with a cached hash); values are unchanged
            g0 = g0.replace(
                curmodpar=as_vec(g0.curmodpar),
                gradient=FrozenMap({c: as_vec(v) for c, v in g0.gradient.items_tuple}),
            )
            initial = Infrastructure(g0, initial.prot, initial.poli)
        if trace_mode == "drop":
            initial = Infrastructure(initial.igra, Protocol(abstract_evs(initial.prot.evs)), initial.poli)
        self._facts: dict[tuple[str, str], bool] = {}
        self.initial = initial
        self._noisy = self.ctx.noisy
        self._rule_names = rules.rule_names(self._noisy)
        self._kind = {n: r.kind for n, r in zip(self._rule_names, rules.rules, strict=True)}
        self._clients = tuple(sorted(initial.igra.clients))
        self._cache: dict[tuple[FLState, str], frozenset[str]] = {}
        self._actions: dict[tuple[str, str, str, str], Action] = {}
        self._cache_size = cache_size
        self._datasets: dict[Dataset, FLSystem] = {}  # with_dataset's systems
        names = [
            "clients",
            "ready",
            "curmodpar",
            "dataset",
            "server",
            "n",
            "round",
            "events",
            "last",
            "last_kind",
            "bound_reached",
            "trace_count",
        ]
        if rules.tracks_partitioned:
            names.append("partitioned")
        for c in self._clients:
            names += [f"gradient:{c}", f"partition:{c}", f"ready:{c}"]
        names += [f"enabled:{r}" for r in self._rule_names]
        self._observables = tuple(names)

    # -- construction helpers ---------------------------------------------------------------------

    def _kwargs(self) -> dict[str, Any]:
        return {
            "rules": self.rules,
            "loss": self.ctx.loss,
            "eta": self.ctx.eta,
            "mechanism": self.ctx.mechanism,
            "noise_target": self.ctx.noise_target,
            "per_client": self.ctx.per_client,
            "bounds": self.bounds,
            "trace_mode": self.ctx.trace_mode,
            "enforce_policies": self.ctx.enforce_policies,
            "owner": self.owner,
            "partitioned": self.initial_partitioned,
            "cache_size": self._cache_size,
        }

    def replace(self, *, initial: Infrastructure | None = None, **changes: Any) -> FLSystem:
        """A system with some parameters changed (same keywords as the constructor)."""
        kw = self._kwargs()
        unknown = set(changes) - set(kw)
        if unknown:
            raise TypeError(f"unknown FLSystem parameters {sorted(unknown)}")
        kw.update(changes)
        return FLSystem(initial if initial is not None else self.initial, **kw)

    def with_dataset(self, data: Iterable[DataPoint]) -> FLSystem:
        """The same system whose initial dataset is ``data`` (for NI-FL-DP: one system per neighbouring
        dataset). The initial partition is ``partition_by(data, clients, owner)`` when the system has an
        ``owner``; otherwise every client starts with an empty part (``put_part`` deploys the data).
        Everything else (gradients, curmodpar, ready, policies, traces, parameters) is unchanged. The
        system of the own dataset is this one; the last eight others are kept (one system per
        neighbour however many properties read it)."""
        d: Dataset = frozenset(data)
        g = self.initial.igra
        if self.owner is not None:
            try:
                part = partition_by(d, g.clients, self.owner)
            except ValueError as exc:
                raise ModelError(str(exc)) from exc
        else:
            part = FrozenMap({c: frozenset() for c in g.clients})
        g2 = g.replace(dataset=d, partition=part)
        if g2 == g:  # the system's own dataset: this system
            return self
        hit = self._datasets.pop(d, None)  # the last few systems, most recent last
        if hit is None:
            hit = self.replace(initial=Infrastructure(g2, self.initial.prot, self.initial.poli))
            if len(self._datasets) >= 8:
                del self._datasets[next(iter(self._datasets))]
        self._datasets[d] = hit
        return hit

    # -- dead values ---------------------------------------------------------------------------------

    @staticmethod
    def dead_gradient_clients_of(rules: RuleSet, initial: Infrastructure) -> tuple[str, ...]:
        """The clients whose gradient is dead outside ``ready`` under ``rules`` (all clients when every
        rule states the footprint ``gradients="ready"`` or ``"sum"``, else none)."""
        if rules.rules and all(r.gradients in ("ready", "sum") for r in rules.rules):
            return tuple(sorted(initial.igra.clients))
        return ()

    def acyclic(self) -> bool:
        """Whether no run of this bounded system visits a state twice: under an events bound every step
        counts; under the round-based rules (without a network) with a rounds bound every step moves
        ``(round, partitioned, |ready|)`` forward (the partition is deployed once, a report adds its
        client to ``ready``, an aggregation starts the next round)."""
        if self.bounds.max_events is not None:
            return True
        return self.rules.name == "fedavg_rounds" and self.bounds.max_rounds is not None

    def reports_never_refused(self, client: str) -> bool:
        """Whether no report of ``client`` can meet a value its noise mechanism refuses (a strict or
        bounded grid, :attr:`flmodel.noise.Mechanism.refuses`), shown without exploring, for every part
        the client can hold (its initial part, or every subset of the data when a rule that can be
        enabled writes the partition; at most 2^12 of them), in one of two ways:

        * one round: the model is written only by aggregations and the rounds bound stops the system
          at the first one (every step is disabled once ``round = max_rounds``; runs start in round
          0), so every report is drawn at the initial model, which the mechanism accepts;
        * a box of models: every client's noise is on the update and outputs values in a range, the
          loss is squared (the update ``w − η∇L(w, P)`` affine in ``w``), every rule that writes a
          gradient is a report, and the data are not counted twice (``Σ_c |Part c| ≤ |dataset|``); then
          every model of every run is a combination with non-negative weights summing to at most 1
          (FedAvg, also renormalised over the reporters) of the initial model, the initial gradients
          and the reports, so it lies in the box ``B`` spanned by them, the reports' ranges and 0; a
          mechanism that refuses only values outside its range (not strict) then accepts every report
          iff it accepts the updates at the corners of ``B`` (the update is affine, the range convex).

        ``False`` when neither can be shown: whether a report exists may then depend on the model, and
        the cone of influence keeps what the report reads."""
        key = ("never_refused", client)
        hit = self._facts.get(key)
        if hit is None:
            hit = self._facts[key] = reports_never_refused(self, client)
        return hit

    def gradients_summed(self) -> bool:
        """Whether every rule reads the ready clients' gradients only through their weighted sum
        (``gradients="sum"``, :attr:`flmodel.rules.Rule.gradients`): the partial-sum reduction
        (``sum_gradients``) may then be used."""
        return bool(self.rules.rules) and all(r.gradients == "sum" for r in self.rules.rules)

    def dead_gradient_clients(self) -> tuple[str, ...]:
        """The clients whose ``gradient`` may be reset outside ``ready`` (see the module docstring)."""
        return self.dead_gradient_clients_of(self.rules, self.initial)

    @property
    def reset_unready(self) -> tuple[str, ...]:
        """The clients whose gradient is reset outside ``ready``: none (``flmodel.view.FLView``)."""
        return ()

    @property
    def forgotten(self) -> frozenset[str]:
        """The variables reset in every state: none (``flmodel.view.FLView``)."""
        return frozenset()

    @property
    def sums_gradients(self) -> bool:
        """Whether the ready clients' gradients are kept as their weighted sum: no
        (``flmodel.view.FLView``)."""
        return False

    def abstract(self, state: FLState) -> FLState:
        """The state of this system that a state with the full trace set stands for: under ``drop``
        the trace set abstracted (:func:`flmodel.rules.abstract_evs`), else ``state`` itself."""
        infra = state.infra
        if self.ctx.trace_mode == "drop" and infra.prot.evs != abstract_evs(infra.prot.evs):
            infra = Infrastructure(infra.igra, Protocol(abstract_evs(infra.prot.evs)), infra.poli)
            return FLState(infra, state.round, state.events, state.last, state.partitioned)
        return state

    # -- footprints ----------------------------------------------------------------------------------

    def action_classes(self) -> tuple[ActionClass, ...]:
        """Every class of actions this system may take (one per rule and actor), with its footprint
        (:class:`ActionClass`), derived from the rules' declarations (:mod:`flmodel.rule_data`:
        :meth:`~flmodel.rule_data.Rule.guard_reads`, :meth:`~flmodel.rule_data.Rule.written`,
        :meth:`~flmodel.rule_data.Rule.literals`, :meth:`~flmodel.rule_data.Rule.single`) and the
        bounded system's bookkeeping: every step reads the bounds' counters (``round`` under a rounds
        bound, ``events`` under an events bound), writes ``last`` (its rule name, commuting with itself)
        and ``events`` (under the bound), an aggregation writes ``round``, a deployment writes
        ``partitioned`` (in the round-based rules). Under ``drop`` a step's new trace set depends only
        on ``[] ∈ evs``, which no step removes: writes of ``evs`` commute. A rule that needs the data
        undeployed is left out when they start deployed: no rule undeploys them."""
        clients = self._clients
        drop = self.ctx.trace_mode == "drop"
        bounds = frozenset({*(("round",) if self.bounds.max_rounds is not None else ()),
                            *(("events",) if self.bounds.max_events is not None else ())})
        out: list[ActionClass] = []
        for rule, name in zip(self.rules.rules, self._rule_names, strict=True):
            for actor in rule.actors.names(self):
                scope = Scope(clients, actor, drop, self)
                literals = frozenset(rule.literals(scope))
                if self.initial_partitioned and ("partitioned", False) in literals:
                    continue
                when = frozenset(rule.guard_reads(scope)) | bounds
                eff = {v: frozenset(d) for v, d in rule.written(scope).items()}
                eff["last"] = frozenset()
                if self.bounds.max_events is not None:
                    eff["events"] = frozenset({"events"})
                if rule.aggregates:
                    eff["round"] = frozenset({"round"})
                if rule.deploys and self.rules.tracks_partitioned:
                    eff["partitioned"] = frozenset()
                dropped = (("evs", "drop"),) if drop and "evs" in eff else ()
                commuting = frozenset({("last", name), *dropped})
                out.append(ActionClass(name, actor, when.union(*eff.values()), frozenset(eff), literals,
                                       commuting, rule.single(scope), rule.aggregates, when,
                                       tuple(sorted(eff.items()))))
        return tuple(out)

    def variable_reads(self, name: str) -> frozenset[str] | None:
        """The variables (:class:`ActionClass`) observable ``name`` reads; ``None`` when it may read
        anything (``enabled:r``) or is unknown."""
        clients = self._clients
        fixed: dict[str, tuple[str, ...]] = {
            "clients": (), "server": (), "ready": tuple(f"ready:{c}" for c in clients),
            "curmodpar": ("curmodpar",), "dataset": ("dataset",), "n": ("dataset",), "round": ("round",),
            "events": ("events",), "last": ("last",), "last_kind": ("last",),
            "bound_reached": ("round", "events"), "trace_count": ("evs",), "partitioned": ("partitioned",)}
        if name in fixed:
            return frozenset(fixed[name])
        kind, _, arg = name.partition(":")
        if arg in clients and kind in ("gradient", "partition", "ready"):
            return frozenset({f"{kind}:{arg}"})
        return None

    # -- the TransitionSystem protocol -------------------------------------------------------------

    def initial_states(self) -> tuple[FLState, ...]:
        """The single initial state (``init = {I}``)."""
        return (FLState(self.initial, 0, 0, "none", self.initial_partitioned),)

    def _steps(self, infra: Infrastructure, partitioned: bool, first_only: bool = False,
               skip: frozenset[str] = frozenset()) -> _CacheEntry:
        out = []
        actions = self._actions
        first = None
        for rule in self.rules.rules:
            fired = rule.fire(self.ctx, infra, partitioned, skip) if skip else \
                rule.fire(self.ctx, infra, partitioned)
            for t in fired:
                akey = t[:4]  # (rule, actor, location, detail): Action objects are shared
                if first_only:
                    if first is None:
                        first = akey
                    elif akey != first:
                        return tuple(out)
                act = actions.get(akey)
                if act is None:
                    if len(actions) > 1 << 16:
                        actions.clear()
                    act = actions[akey] = Action(t.rule, t.actor, t.location, t.detail)
                out.append((act, t.target, t.probability, rule.aggregates, rule.deploys))
        return tuple(out)

    def successors(self, state: FLState, first_only: bool = False,
                   skip: frozenset[str] = frozenset()) -> list[Successor]:
        """All steps from ``state`` within the bounds: ``(action, target, probability)``; with
        ``first_only`` the steps of the first enabled action only (in the order of the rules, then of
        the clients' names: the steps of one action are consecutive), which resolves the choice by one
        fixed deterministic scheduler; the steps of the actors in ``skip`` left out (the counter
        abstraction's interchangeable clients, :mod:`checker.app.counter`)."""
        b = self.bounds
        if (b.max_events is not None and state.events >= b.max_events) or (
            b.max_rounds is not None and state.round >= b.max_rounds
        ):
            return []
        ev = state.events + 1 if b.max_events is not None else 0
        track = self.rules.tracks_partitioned
        rnd = state.round
        part0 = state.partitioned
        out: list[Successor] = []
        new = tuple.__new__  # FLState's constructor without Python-level argument binding
        for act, target, p, aggregates, deploys in self._steps(state.infra, part0, first_only, skip):
            last = act.rule
            if aggregates:
                out.append((act, new(FLState, (target, rnd + 1, ev, last, part0)), p))
            else:
                out.append((act, new(FLState, (target, rnd, ev, last, part0 or (deploys and track))), p))
        return out

    def observable_names(self) -> Sequence[str]:
        """See the module docstring."""
        return self._observables

    def observe(self, state: FLState, name: str) -> object:
        """Value of observable ``name`` on ``state`` (``KeyError`` for an unknown name)."""
        g = state.infra.igra
        if name == "curmodpar":
            return g.curmodpar
        if name == "ready":
            return g.ready
        if name == "clients":
            return g.clients
        if name == "round":
            return state.round
        if name == "last":
            return state.last
        if name == "dataset":
            return g.dataset
        if name == "server":
            return g.server
        if name == "n":
            return len(g.dataset)
        if name == "events":
            return state.events
        if name == "last_kind":
            return self._kind.get(state.last, "none")
        if name == "bound_reached":
            return self.bound_reached(state)
        if name == "trace_count":
            return len(state.infra.prot.evs)
        if name == "partitioned" and self.rules.tracks_partitioned:
            return state.partitioned
        kind, _, arg = name.partition(":")
        if arg:
            if kind == "gradient" and arg in self._clients:
                return g.gradient[arg]
            if kind == "partition" and arg in self._clients:
                return g.part(arg)
            if kind == "ready" and arg in self._clients:
                return arg in g.ready
            if kind == "enabled" and arg in self._kind:
                return self.enabled(state, arg)
        raise KeyError(f"unknown observable {name!r}; known: {', '.join(self._observables)}")

    # -- extras ------------------------------------------------------------------------------------

    @property
    def rule_names(self) -> tuple[str, ...]:
        """The rule names actions of this system carry."""
        return self._rule_names

    @property
    def clients(self) -> tuple[str, ...]:
        """The clients of the initial igraph (the rules never change ``clients``)."""
        return self._clients

    def enabled(self, state: FLState, rule: str) -> bool:
        """Whether some step of ``rule`` leaves ``state`` in the bounded system."""
        if rule not in self._kind:
            raise KeyError(f"unknown rule {rule!r}; rules of this system: {list(self._rule_names)}")
        key = (state, "enabled")
        hit = self._cache.get(key)
        if hit is None:
            hit = frozenset(a.rule for a, _, _ in self.successors(state))
            if len(self._cache) >= self._cache_size:
                self._cache.clear()
            self._cache[key] = hit
        return rule in hit

    def bound_reached(self, state: FLState) -> bool:
        """Whether a bound is exhausted in ``state`` (the events bound, or the rounds bound)."""
        b = self.bounds
        return (b.max_events is not None and state.events >= b.max_events) or (
            b.max_rounds is not None and state.round >= b.max_rounds
        )

    @staticmethod
    def project(state: FLState) -> Infrastructure:
        """The published state (``Infrastructure``, [IIIf-FL] III-B) of an FL state."""
        return state.infra

    def describe(self) -> dict[str, object]:
        """The system's parameters as plain data (for reports)."""
        m = self.ctx.mechanism
        per = self.ctx.per_client
        mechanism = "none (published get_grad)" if m is None else m.describe()
        if per is not None:
            each = [f"{c}: {'none' if pm is None else pm.describe()} on {t}" for c, (pm, t) in per.items()]
            mechanism = "per client: " + "; ".join(each)
        return {
            "rules": self.rules.name,
            "loss": self.ctx.loss.name,
            "eta": str(self.ctx.eta),
            "mechanism": mechanism,
            "noise_target": self.ctx.noise_target,
            "trace_mode": self.ctx.trace_mode,
            "enforce_policies": self.ctx.enforce_policies,
            "max_rounds": self.bounds.max_rounds,
            "max_events": self.bounds.max_events,
            "clients": list(self._clients),
            "server": self.initial.igra.server,
            "dataset_size": len(self.initial.igra.dataset),
        }


def build_system(
    infrastructure: Infrastructure,
    rules: RuleSet | str = PUBLISHED,
    mechanism: Mechanism | None = None,
    bounds: Bounds | None = None,
    **kwargs: Any,
) -> FLSystem:
    """Functional constructor: ``FLSystem(infrastructure, rules=…, mechanism=…, bounds=…, **kwargs)``."""
    return FLSystem(infrastructure, rules=rules, mechanism=mechanism, bounds=bounds, **kwargs)
