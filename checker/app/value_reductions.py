"""Value reductions of an FL system: the model (:class:`flmodel.system.FLSystem`) wrapped in a map ``h``
of its states that resets values no property reads, so that states differing only in them merge.

``h`` resets, in every state (initial and successors):

* ``reset_unready`` (the dead values): the gradient of every client of the set not in ``ready`` to its
  initial value. When every rule reads ``gradient G c`` only for ``c ∈ ready G`` and writes it whenever
  it inserts ``c`` into ``ready`` (:meth:`~flmodel.system.FLSystem.dead_gradient_clients`, from the
  rules' declarations), that value is overwritten before any rule reads it;
* ``forget`` (the cone of influence): ``curmodpar``, ``last`` and each ``gradient:c`` named, to their
  initial value (``last`` to ``"none"``), when no property reads them and no rule's guard or effect on
  what is read depends on them (:func:`checker.mc.cone.cone_of_influence`);
* ``sum_gradients`` (the partial sum): the ready clients' gradients replaced by their weighted sum
  ``S = Σ_{c ∈ ready} card (part c) · gradient c``, held by the first ready client ``c0`` with a
  non-empty part: the others' gradients set to their initial value ``i_c`` and ``gradient c0 = (S −
  Σ_{c ∈ ready, c ≠ c0} card (part c) · i_c) / card (part c0)``, when every rule reads the gradients only
  through that sum (:meth:`~flmodel.system.FLSystem.gradients_summed`).

Each ``h`` is a functional bisimulation of the model that preserves the actions, the probabilities and
every observable but the reset ones: ``successors(h(s)) = h(successors(s))`` step by step (outcomes of
one action that ``h`` makes equal are one step, their probabilities added), so every property,
distribution and probability that does not read the reset values is the same on the reduced system
(``tests/differential/test_laws.py`` checks both laws on generated scenarios; the check compares the
reduced and plain verdicts on the bundled ones). The wrapper constructs no model: the model's steps are
computed on the reduced states, which are states of the model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import Any

from flcheck_spec.vocab import Action

from flmodel.data import DataPoint
from flmodel.errors import ModelError
from flmodel.frozen import FrozenMap
from flmodel.infrastructure import Igraph, Infrastructure
from flmodel.learning import Vec, Vector
from flmodel.rules import RuleContext, RuleSet
from flmodel.system import ActionClass, Bounds, FLState, FLSystem, Successor
from flmodel.view import FLView

__all__ = ["ValueReduced", "forgettable", "reduce_values"]


def forgettable(fl: FLView) -> frozenset[str]:
    """The variables ``forget`` may name: ``curmodpar``, ``last`` and each ``gradient:c``."""
    return frozenset({"curmodpar", "last", *(f"gradient:{c}" for c in fl.clients)})


def reduce_values(fl: FLView, *, reset_unready: Iterable[str] = (), forget: Iterable[str] = (),
                  sum_gradients: bool = False) -> FLView:
    """``fl`` with these value reductions added to the ones it has (``fl`` itself when none is asked
    for); a reduction whose condition the rules do not state is refused (:class:`ModelError`)."""
    reset, forgotten = frozenset(reset_unready), frozenset(forget)
    if not reset and not forgotten and not sum_gradients:
        return fl
    if isinstance(fl, ValueReduced):
        return ValueReduced(fl.base, reset_unready=reset | set(fl.reset_unready),
                            forget=forgotten | fl.forgotten, sum_gradients=sum_gradients or fl.sums_gradients)
    if not isinstance(fl, FLSystem):
        raise TypeError(f"value reductions wrap an FLSystem, not {type(fl).__name__}")
    return ValueReduced(fl, reset_unready=reset, forget=forgotten, sum_gradients=sum_gradients)


class ValueReduced:
    """``base`` seen through ``h`` (the module docstring): an :class:`~flmodel.system.FLView`."""

    def __init__(self, base: FLSystem, *, reset_unready: Iterable[str] = (), forget: Iterable[str] = (),
                 sum_gradients: bool = False) -> None:
        reset = tuple(sorted(set(reset_unready)))
        unknown = set(reset) - set(base.clients)
        if unknown:
            raise ModelError(f"reset_unready names unknown clients {sorted(unknown)}")
        if reset and not set(reset) <= set(base.dead_gradient_clients()):
            raise ModelError("reset_unready: the rules do not state the gradient footprint that makes "
                             "an unready client's gradient dead (flmodel.rules.Rule.gradients)")
        forgotten = frozenset(forget)
        if not forgotten <= forgettable(base):
            raise ModelError(f"forget: {sorted(forgotten - forgettable(base))} cannot be forgotten "
                             f"(only {sorted(forgettable(base))})")
        if sum_gradients and not base.gradients_summed():
            raise ModelError("sum_gradients: the rules do not state that they read the gradients only "
                             "through their weighted sum (flmodel.rules.Rule.gradients)")
        self.base = base
        self._reset = reset
        self._forget = forgotten
        self._forget_grads = tuple(sorted(v.partition(":")[2] for v in forgotten
                                          if v.startswith("gradient:")))
        self._forget_model = "curmodpar" in forgotten
        self._forget_last = "last" in forgotten
        self._sum = bool(sum_gradients)
        self._memo: dict[tuple[object, ...], FrozenMap[str, Vector]] = {}
        self.initial = self._reset_values(base.initial)

    # -- the model's parameters, unchanged -----------------------------------------------------------
    @property
    def rules(self) -> RuleSet:
        return self.base.rules

    @property
    def ctx(self) -> RuleContext:
        return self.base.ctx

    @property
    def bounds(self) -> Bounds:
        return self.base.bounds

    @property
    def owner(self) -> Callable[[DataPoint], str] | None:
        return self.base.owner

    @property
    def initial_partitioned(self) -> bool:
        return self.base.initial_partitioned

    @property
    def clients(self) -> tuple[str, ...]:
        return self.base.clients

    @property
    def rule_names(self) -> tuple[str, ...]:
        return self.base.rule_names

    @property
    def reset_unready(self) -> tuple[str, ...]:
        """The clients whose gradient is reset outside ``ready`` (the dead values)."""
        return self._reset

    @property
    def forgotten(self) -> frozenset[str]:
        """The variables reset in every state (the cone of influence)."""
        return self._forget

    @property
    def sums_gradients(self) -> bool:
        """Whether the ready clients' gradients are kept as their weighted sum only."""
        return self._sum

    def observable_names(self) -> Sequence[str]:
        return self.base.observable_names()

    def observe(self, state: FLState, name: str) -> object:
        return self.base.observe(state, name)

    def variable_reads(self, name: str) -> frozenset[str] | None:
        return self.base.variable_reads(name)

    def describe(self) -> dict[str, object]:
        return self.base.describe()

    def enabled(self, state: FLState, rule: str) -> bool:
        """Whether some step of ``rule`` leaves ``state`` (``h`` keeps the actions: the model's)."""
        return self.base.enabled(state, rule)

    def bound_reached(self, state: FLState) -> bool:
        return self.base.bound_reached(state)

    def acyclic(self) -> bool:
        return self.base.acyclic()

    def dead_gradient_clients(self) -> tuple[str, ...]:
        return self.base.dead_gradient_clients()

    def gradients_summed(self) -> bool:
        return self.base.gradients_summed()

    def with_dataset(self, data: Iterable[DataPoint]) -> FLView:
        """The model on another initial dataset, with the same reductions."""
        base = self.base.with_dataset(data)
        if base is self.base:
            return self
        return ValueReduced(base, reset_unready=self._reset, forget=self._forget, sum_gradients=self._sum)

    def replace(self, *, initial: Infrastructure | None = None, **changes: Any) -> FLView:
        """The model with some parameters changed (:meth:`flmodel.system.FLSystem.replace`), with the
        same reductions."""
        base = self.base.replace(initial=initial, **changes)
        return ValueReduced(base, reset_unready=self._reset, forget=self._forget, sum_gradients=self._sum)

    # -- h -------------------------------------------------------------------------------------------
    def abstract(self, state: FLState) -> FLState:
        """``h`` of a state of the model (with the full trace set): the model's own abstraction
        (:meth:`flmodel.system.FLSystem.abstract`), then the values reset. It maps the successors of a
        state onto the successors of its image, so a path of the model lifts to a path of this system
        step by step."""
        state = self.base.abstract(state)
        infra = self._reset_values(state.infra)
        last = "none" if self._forget_last else state.last
        if infra is state.infra and last == state.last:
            return state
        return FLState(infra, state.round, state.events, last, state.partitioned)

    def _reset_values(self, infra: Infrastructure) -> Infrastructure:
        """``h`` on the published state (module docstring), memoized per ``(ready, gradient)`` (and the
        partition under the sum)."""
        g = infra.igra
        key: tuple[object, ...] = (g.ready, g.gradient, g.partition) if self._sum else (g.ready, g.gradient)
        memo = self._memo
        hit = memo.get(key)
        ig = self.base.initial.igra
        if hit is None:
            init = ig.gradient
            ready = g.ready
            grads = g.gradient
            for c in self._reset:
                if c not in ready and grads[c] != init[c]:
                    grads = grads.set(c, init[c])
            for c in self._forget_grads:
                if grads[c] != init[c]:
                    grads = grads.set(c, init[c])
            if self._sum and ready:
                grads = _summed(g, grads, init)
            hit = g.gradient if grads == g.gradient else grads
            if len(memo) > 1 << 16:
                memo.clear()
            memo[key] = hit
        model = ig.curmodpar if self._forget_model else g.curmodpar
        if hit is g.gradient and model is g.curmodpar:
            return infra
        return tuple.__new__(Infrastructure, (g._replace(gradient=hit, curmodpar=model), infra.prot,
                                              infra.poli))

    # -- the TransitionSystem protocol ---------------------------------------------------------------
    def initial_states(self) -> tuple[FLState, ...]:
        """``h`` of the model's initial state."""
        return tuple(FLState(self.initial, s.round, s.events, s.last, s.partitioned)
                     for s in self.base.initial_states())

    def successors(self, state: FLState, first_only: bool = False,
                   skip: frozenset[str] = frozenset()) -> list[Successor]:
        """The model's steps from ``state`` (those of the actors in ``skip`` left out) with ``h`` applied
        to their targets; outcomes of one action that ``h`` makes equal are one step (their
        probabilities added)."""
        new = tuple.__new__
        reset = self._reset_values
        forget_last = self._forget_last
        out: list[Successor] = []
        for act, t, p in self.base.successors(state, first_only, skip):
            infra = reset(t.infra)
            if infra is not t.infra or forget_last:
                t = new(FLState, (infra, t.round, t.events, "none" if forget_last else t.last, t.partitioned))
            out.append((act, t, p))
        if self._forget or self._sum:
            merged: dict[tuple[Action, FLState], Fraction] = {}
            for act, t, p in out:
                key = (act, t)
                merged[key] = merged[key] + p if key in merged else p
            if len(merged) < len(out):
                out = [(a, t, p) for (a, t), p in merged.items()]
        return out

    def action_classes(self) -> tuple[ActionClass, ...]:
        """The model's footprints (:meth:`flmodel.system.FLSystem.action_classes`); with the dead-value
        reset a step that writes ``ready`` without writing the gradients also resets every client's
        gradient (to a constant: it reads nothing)."""
        classes = self.base.action_classes()
        if not self._reset:
            return classes
        out = []
        for c in classes:
            eff = dict(c.effects)
            if any(v.startswith("ready:") for v in eff) and not any(v.startswith("gradient:") for v in eff):
                eff.update({f"gradient:{x}": frozenset() for x in self.clients})
                c = c._replace(writes=frozenset(eff), effects=tuple(sorted(eff.items())))
            out.append(c)
        return tuple(out)


def _summed(g: Igraph, grads: FrozenMap[str, Vector], init: FrozenMap[str, Vector]) -> FrozenMap[str, Vector]:
    """``grads`` with the ready clients' gradients replaced by their weighted sum (module docstring)."""
    weights = [(c, len(g.part(c))) for c in sorted(g.ready)]
    live = [(c, k) for c, k in weights if k]
    out = dict(grads.items_tuple)
    for c, _ in weights:
        out[c] = init[c]
    if live:
        # the others keep their initial gradient; the holder carries the rest of the sum
        c0, k0 = live[0]
        dim = len(g.curmodpar)
        rest = [sum((k * (grads[c][i] - (init[c][i] if c != c0 else 0)) for c, k in live), Fraction(0))
                for i in range(dim)]
        out[c0] = Vec(x / k0 for x in rest)
    return FrozenMap(out)
