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

Dead values (the hook of the checker's dead-value reduction; this module never decides whether to use
it): :meth:`FLSystem.dead_gradient_clients` are the clients whose gradient is *dead* outside
``ready``, derived from the rules' footprints (:attr:`flmodel.rules.Rule.gradients`): when every rule
reads ``gradient G c`` only for ``c ∈ ready G`` and writes it whenever it inserts ``c`` into ``ready``,
the value of ``gradient G c`` for ``c ∉ ready G`` is overwritten before any rule reads it. With
``reset_unready = S`` every state (initial and successors) has ``gradient G c`` reset to its initial
value for ``c ∈ S``, ``c ∉ ready G``. The map ``h`` doing that is a functional bisimulation that preserves
the actions, probabilities and every observable but ``gradient:c`` (``c ∈ S``): ``successors(h(s)) =
h(successors(s))`` step by step, so each reachable state of the reduced system is the image of the
reachable states it merges, and every property, distribution and probability that does not read
``gradient:c`` for ``c ∈ S`` is the same (the checker compares both on generated scenarios).
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
from flmodel.infrastructure import Igraph, Infrastructure, Protocol, validate_igraph
from flmodel.learning import Loss, SquaredLoss, Vec, Vector, as_vec
from flmodel.noise import Mechanism
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


def _reset(grads: FrozenMap[str, Vector], c: str, value: Vector) -> FrozenMap[str, Vector]:
    """``grads(c := value)``, the map itself when ``c`` already has that value."""
    old = grads[c]
    return grads if old is value or old == value else grads.set(c, value)


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

    Finer, for the cone of influence (:meth:`FLSystem.forgettable`): ``guard_reads`` are what the
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


def _recorded_in_trace(c: ActionClass) -> ActionClass:
    """``c`` with the full trace set's dependencies completed: a step of a ``full`` trace set appends
    its event (``Put [Part]``, ``Get c Gradc``, ``Eval Newmodel``) to a trace, and the event carries the
    values the step computes, so the new ``evs`` (its traces, their number: ``trace_count``, and the
    actions that extend them) depends on everything any written variable's new value depends on. Steps
    that do not write ``evs`` are unchanged."""
    effects = dict(c.effects)
    if "evs" not in effects:
        return c
    effects["evs"] = frozenset({"evs"}).union(*effects.values())
    return c._replace(reads=c.reads | effects["evs"], effects=tuple(sorted(effects.items())))


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
        reset_unready: Iterable[str] = (),
        forget: Iterable[str] = (),
        sum_gradients: bool = False,
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
        reset = tuple(sorted(set(reset_unready)))
        unknown = set(reset) - set(initial.igra.clients)
        if unknown:
            raise ModelError(f"reset_unready names unknown clients {sorted(unknown)}")
        if reset and not set(reset) <= set(self.dead_gradient_clients_of(rules, initial)):
            raise ModelError("reset_unready: the rules do not state the gradient footprint that makes "
                             "an unready client's gradient dead (flmodel.rules.Rule.gradients)")
        self._reset = reset
        forgotten = frozenset(forget)
        if not forgotten <= self.forgettable_of(initial):
            raise ModelError(f"forget: {sorted(forgotten - self.forgettable_of(initial))} cannot be "
                             f"forgotten (only {sorted(self.forgettable_of(initial))})")
        self._forget = forgotten
        self._forget_grads = tuple(sorted(v.partition(":")[2] for v in forgotten
                                          if v.startswith("gradient:")))
        self._forget_model = "curmodpar" in forgotten
        self._forget_last = "last" in forgotten
        if sum_gradients and not (rules.rules and all(r.gradients == "sum" for r in rules.rules)):
            raise ModelError("sum_gradients: the rules do not state that they read the gradients only "
                             "through their weighted sum (flmodel.rules.Rule.gradients)")
        self._sum = bool(sum_gradients)
        self._canon_memo: dict[tuple[object, ...], FrozenMap[str, Vector]] = {}
        self.initial = initial
        if reset or forgotten or self._sum:
            self.initial = initial = self._dead_reset(initial)
        self._noisy = self.ctx.noisy
        self._rule_names = rules.rule_names(self._noisy)
        self._kind = {n: r.kind for n, r in zip(self._rule_names, rules.rules, strict=True)}
        self._clients = tuple(sorted(initial.igra.clients))
        self._cache: dict[tuple[FLState, str], frozenset[str]] = {}
        self._actions: dict[tuple[str, str, str, str], Action] = {}
        self._cache_size = cache_size
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
            "reset_unready": self._reset,
            "forget": tuple(sorted(self._forget)),
            "sum_gradients": self._sum,
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
        Everything else (gradients, curmodpar, ready, policies, traces, parameters) is unchanged."""
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
        return self.replace(initial=Infrastructure(g2, self.initial.prot, self.initial.poli))

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
        """The clients whose gradient this system resets outside ``ready`` (the dead-value reduction)."""
        return self._reset

    @staticmethod
    def _summed(g: Igraph, grads: FrozenMap[str, Vector], init: FrozenMap[str, Vector]
                ) -> FrozenMap[str, Vector]:
        """``grads`` with the ready clients' gradients replaced by their weighted sum (see
        :meth:`_dead_reset`)."""
        out = grads
        live: list[tuple[str, int]] = []
        for c in sorted(g.ready):
            k = len(g.part(c))
            if k:
                live.append((c, k))
            else:
                out = _reset(out, c, init[c])
        if live:
            # the others keep their initial gradient; the holder carries the rest of the sum
            c0, k0 = live[0]
            rest = [k0 * x for x in grads[c0]]
            for c, k in live[1:]:
                gc, ic = grads[c], init[c]
                if gc is not ic and gc != ic:  # a client at its initial gradient adds nothing
                    rest = [r + k * (x - y) for r, x, y in zip(rest, gc, ic, strict=True)]
                    out = out.set(c, ic)
            total = Vec(x / k0 for x in rest)
            out = _reset(out, c0, total)
        return out

    @staticmethod
    def forgettable_of(initial: Infrastructure) -> frozenset[str]:
        """The variables ``forget`` may name: ``curmodpar``, ``last`` and each ``gradient:c``."""
        return frozenset({"curmodpar", "last", *(f"gradient:{c}" for c in initial.igra.clients)})

    def forgettable(self) -> frozenset[str]:
        """The variables this system can forget (reset to their initial value in every state)."""
        return self.forgettable_of(self.initial)

    @property
    def forgotten(self) -> frozenset[str]:
        """The variables this system resets in every state (the cone-of-influence reduction)."""
        return self._forget

    def abstract(self, state: FLState) -> FLState:
        """The state of this system that a state of the same system without its reductions (full trace
        sets, every value kept) stands for: the trace set abstracted under ``drop``, dead, forgotten and
        summed values reset as :meth:`_dead_reset` does, the last rule forgotten. It maps the successors
        of a state onto the successors of its image (the reductions are functional bisimulations), so a
        path of this system lifts to a path of the unreduced one step by step."""
        infra = state.infra
        if self.ctx.trace_mode == "drop" and infra.prot.evs != abstract_evs(infra.prot.evs):
            infra = Infrastructure(infra.igra, Protocol(abstract_evs(infra.prot.evs)), infra.poli)
        if self._reset or self._forget or self._sum:
            infra = self._dead_reset(infra)
        last = "none" if self._forget_last else state.last
        return FLState(infra, state.round, state.events, last, state.partitioned)

    @property
    def sums_gradients(self) -> bool:
        """Whether this system keeps the ready clients' gradients as their weighted sum only."""
        return self._sum

    def _dead_reset(self, infra: Infrastructure) -> Infrastructure:
        """``h(infra)``: the gradient of every client of ``reset_unready`` not in ``ready``, and every
        forgotten gradient and model, set to its initial value; with ``sum_gradients``, the ready
        clients' gradients replaced by their weighted sum ``S = Σ_{c ∈ ready} card (part c) · gradient c``
        held by the first ready client ``c0`` with a non-empty part: the others' gradients set to their
        initial value ``i_c`` and ``gradient c0 = (S − Σ_{c ∈ ready, c ≠ c0} card (part c) · i_c) /
        card (part c0)``, so the sum, all that every rule stating ``gradients="sum"`` reads, is unchanged
        (memoized per ``(ready, gradient, partition)``)."""
        g = infra.igra
        key: tuple[object, ...] = (g.ready, g.gradient, g.partition) if self._sum else (g.ready, g.gradient)
        memo = self._canon_memo
        hit = memo.get(key)
        ig = self.initial.igra
        if hit is None:
            init = ig.gradient
            ready = g.ready
            grads = g.gradient
            for c in self._reset:
                if c not in ready:
                    v = init[c]
                    x = grads[c]
                    if x is not v and x != v:
                        grads = grads.set(c, v)
            for c in self._forget_grads:
                v = init[c]
                x = grads[c]
                if x is not v and x != v:
                    grads = grads.set(c, v)
            if self._sum and ready:
                grads = self._summed(g, grads, init)
            hit = g.gradient if grads == g.gradient else grads
            if len(memo) > 1 << 16:
                memo.clear()
            memo[key] = hit
        grads = hit
        model = ig.curmodpar if self._forget_model else g.curmodpar
        if grads is g.gradient and model is g.curmodpar:
            return infra
        return tuple.__new__(Infrastructure, (g._replace(gradient=grads, curmodpar=model), infra.prot,
                                              infra.poli))

    # -- footprints ----------------------------------------------------------------------------------

    def action_classes(self) -> tuple[ActionClass, ...]:
        """Every class of actions this system may take (one per rule and actor), with its footprint
        (:class:`ActionClass`), derived from the rules' declarations (:mod:`flmodel.rule_data`:
        :meth:`~flmodel.rule_data.Rule.guard_reads`, :meth:`~flmodel.rule_data.Rule.written`,
        :meth:`~flmodel.rule_data.Rule.literals`, :meth:`~flmodel.rule_data.Rule.single`) and the
        bounded system's bookkeeping: every step reads the bounds' counters (``round`` under a rounds
        bound, ``events`` under an events bound), writes ``last`` (its rule name, commuting with itself)
        and ``events`` (under the bound), an aggregation writes ``round``, a deployment writes
        ``partitioned`` (in the round-based rules), and with the dead-value reset an aggregation resets
        every client's gradient. Under ``drop`` a step's new trace set depends only on ``[] ∈ evs``,
        which no step removes: writes of ``evs`` commute. A rule that needs the data undeployed is left
        out when they start deployed: no rule undeploys them."""
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
                if self._reset and any(v.startswith("ready:") for v in eff) and not any(
                        v.startswith("gradient:") for v in eff):
                    eff.update({f"gradient:{c}": frozenset() for c in clients})
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
                target = self._dead_reset(t.target) if self._reset or self._forget or self._sum else t.target
                out.append((act, target, t.probability, rule.aggregates, rule.deploys))
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
        forget_last = self._forget_last
        for act, target, p, aggregates, deploys in self._steps(state.infra, part0, first_only, skip):
            last = "none" if forget_last else act.rule
            if aggregates:
                out.append((act, new(FLState, (target, rnd + 1, ev, last, part0)), p))
            else:
                out.append((act, new(FLState, (target, rnd, ev, last, part0 or (deploys and track))), p))
        if self._forget or self._sum:  # outcomes of one action that h makes equal: one step
            merged: dict[tuple[Action, FLState], Fraction] = {}
            for act, t, p in out:
                key = (act, t)
                merged[key] = merged[key] + p if key in merged else p
            if len(merged) < len(out):
                out = [(a, t, p) for (a, t), p in merged.items()]
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
