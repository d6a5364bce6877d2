"""Evidence in the model's own states: a witness, counterexample or attack way found on a reduced
structure (the reductions of :mod:`checker.app.reductions`) replayed on the unreduced system, and checked
there.

Every reduction of the explored structure is meant to be a map ``h`` from the system's states onto the
reduced ones with ``h(succ(s)) = succ(h(s))`` (functional bisimulations: the trace abstraction, dead and
forgotten values, the gradient sum; the symmetry quotient composes ``h`` with the orbit representative)
that keeps every atom the properties read. So a path ``t0 → t1 → … → tk`` of the reduced structure lifts:
from the system's initial state ``s0`` with ``h(s0) = t0``, each step takes a successor ``s_{i+1}`` of
``s_i`` with ``h(s_{i+1}) = t_{i+1}`` (one exists by the bisimulation; a step of the same rule and actor
is preferred, the first in the system's order otherwise). The lifted path shows the model's own values
and actions.

The replay is a check, not a formality: :func:`replay` fails when a step has no counterpart, and
:func:`atoms_disagree` compares, state by state, every atom a property reads on the model's path with the
reduced path (``enabled(...)`` on the model's own successors). A reduction whose condition was wrongly
shown (a footprint that misses a dependency, a symmetry that ignores what a property reads) shows up as
a failed replay or a disagreeing atom; the check then decides the property on the plain exploration
instead (:mod:`checker.app.check`). A lasso (a cycle of the reduced structure) is not lifted: its
concrete states need not close the cycle, and the property is decided on the plain exploration.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from fractions import Fraction
from itertools import pairwise
from typing import Any

import numpy as np

from checker.mc import ctl_ast
from checker.mc.atoms import AtomEvaluator
from checker.mc.evidence import Step, Trace
from checker.mc.explore import Limits, explore
from checker.mc.kripke import Kripke
from checker.mc.ts import Step as Move
from checker.mc.ts import TransitionSystem, as_action

__all__ = ["Replayer", "atoms_disagree", "lift_trace", "replay"]


def _rule_actor(text: str | None) -> str:
    """An action's text without its detail (``get_grad(sat1@o1)``)."""
    return (text or "").split(" [", 1)[0]


def replay(states: Sequence[int], actions: Sequence[str | None], reduced: Kripke,
           system: TransitionSystem[Any], abstract: Callable[[Any], Hashable]
           ) -> tuple[list[Any], list[Any]] | None:
    """The model's path whose image under ``abstract`` is the reduced path ``states`` (ids of
    ``reduced``, whose states are kept), with the model's action objects (``None`` for the first state);
    ``actions`` are the reduced path's (a step of the same rule and actor is preferred). ``None`` when
    no initial state or no step has a counterpart."""
    kept = reduced.states
    if kept is None or not states:
        return None
    current = next((s for s in system.initial_states() if abstract(s) == kept[states[0]]), None)
    if current is None:
        return None
    path = [current]
    shown: list[Any] = [None]
    for sid, label in zip(states[1:], actions[1:], strict=True):
        want = kept[sid]
        matches = [(a, t) for a, t, *_ in system.successors(current) if abstract(t) == want]
        if not matches:
            return None
        act, current = next(((a, t) for a, t in matches if _rule_actor(str(a)) == _rule_actor(label)),
                            matches[0])
        path.append(current)
        shown.append(act)
    return path, shown


class _Neighbourhood:
    """A path of a system and the direct successors of its states, as a transition system (so that the
    atoms, ``enabled(...)`` included, are evaluated on the path's states as the system has them)."""

    def __init__(self, system: TransitionSystem[Any], path: Sequence[Any], actions: Sequence[Any]):
        self.system = system
        self.path = path
        self.actions = actions

    def initial_states(self) -> tuple[tuple[int, Any], ...]:
        return ((0, self.path[0]),)

    def successors(self, state: tuple[int, Any]) -> list[Move[tuple[int, Any]]]:
        i, s = state
        if i < 0:
            return []
        nxt = i + 1 < len(self.path)
        out: list[Move[tuple[int, Any]]] = []
        on_path = False
        for a, t, *p in self.system.successors(s):
            here = nxt and not on_path and t == self.path[i + 1] and a == self.actions[i + 1]
            on_path |= here
            out.append(Move(as_action(a), (i + 1 if here else -1, t), p[0] if p else Fraction(1)))
        return out

    def observable_names(self) -> Sequence[str]:
        return self.system.observable_names()

    def observe(self, state: tuple[int, Any], name: str) -> object:
        return self.system.observe(state[1], name)


def atoms_disagree(path: Sequence[Any], actions: Sequence[Any], system: TransitionSystem[Any],
                   states: Sequence[int], reduced: Kripke, atoms: Iterable[ctl_ast.Atom]) -> str | None:
    """Where an atom has another value on the model's ``path`` (with its ``actions``, from
    :func:`replay`) than on the reduced path ``states``: a text naming the first such atom and step,
    or ``None`` when every atom agrees at every step. ``enabled(...)`` is compared only where the
    reduced state was expanded."""
    todo = list(dict.fromkeys(atoms))
    if not todo:
        return None
    mini = explore(_Neighbourhood(system, path, actions), limits=Limits(max_states=1_000_000), fast=False)
    assert mini.states is not None
    ids = {st: i for i, st in enumerate(mini.states)}
    where = np.asarray([ids[(i, s)] for i, s in enumerate(path)], dtype=np.int64)
    mine, theirs = AtomEvaluator(mini), AtomEvaluator(reduced)
    at = np.asarray(states, dtype=np.int64)
    expanded = np.ones(len(at), dtype=bool) if reduced.frontier is None else ~reduced.frontier[at]
    for atom in todo:
        model = mine.evaluate(atom)[0][where]
        lower, upper = theirs.evaluate(atom)
        same = (model == lower[at]) & (model == upper[at])
        if isinstance(atom, ctl_ast.Enabled):
            same |= ~expanded
        if not same.all():
            step = int(np.flatnonzero(~same)[0])
            return (f"{atom} is {bool(model[step])} at step {step} of the model's path and "
                    f"{not bool(model[step])} on the reduced structure")
    return None


def lift_trace(trace: Trace, reduced: Kripke, system: TransitionSystem[Any],
               abstract: Callable[[Any], Hashable], observables: list[str],
               atoms: Iterable[ctl_ast.Atom] = ()) -> Trace | None:
    """``trace`` (a path of ``reduced``, whose states are kept) replayed on ``system`` through
    ``abstract`` (module docstring), with the changed values of ``observables`` read off the system's
    own states; ``None`` when it cannot be lifted (a lasso, no kept states, a step without a
    counterpart) or when one of ``atoms`` has another value on the model's path than on the trace's
    (:func:`atoms_disagree`): both contradict the reductions' bisimulation."""
    if trace.loop_start is not None or reduced.states is None or not trace.states:
        return None
    ids = [s.state for s in trace.steps]
    replayed = replay(ids, [s.action for s in trace.steps], reduced, system, abstract)
    if replayed is None:
        return None
    path, actions = replayed
    if atoms_disagree(path, actions, system, ids, reduced, atoms) is not None:
        return None
    steps: list[Step] = []
    prev: dict[str, object] = {}
    for i, (state, action, old) in enumerate(zip(path, actions, trace.steps, strict=True)):
        values = {n: system.observe(state, n) for n in observables}
        changed = dict(values) if i == 0 else {n: v for n, v in values.items() if prev.get(n) != v}
        steps.append(Step(old.state, old.name, None if action is None else str(action), changed))
        prev = values
    note = "; ".join(x for x in (trace.note, "replayed on the model's own states from the reduced structure")
                     if x)
    return Trace(trace.kind, trace.shows, steps, None, None, note, list(trace.states), list(trace.then))


class Replayer:
    """Replays paths of the reduced structure ``reduced`` on the unreduced ``system`` (``abstract``
    maps its states onto the reduced ones): witnesses and counterexamples as traces in the model's own
    states (:meth:`trace`), attack ways as the model's actions (:meth:`way`); ``None`` whenever a
    replay fails or an atom disagrees (module docstring)."""

    def __init__(self, reduced: Kripke, system: TransitionSystem[Any], abstract: Callable[[Any], Hashable],
                 observables: list[str]):
        self.reduced = reduced
        self.system = system
        self.abstract = abstract
        self.observables = observables

    def trace(self, trace: Trace, atoms: Iterable[ctl_ast.Atom] = ()) -> Trace | None:
        """:func:`lift_trace` of ``trace``."""
        return lift_trace(trace, self.reduced, self.system, self.abstract, self.observables, atoms)

    def way(self, states: Sequence[int], edges: Sequence[int] | None = None,
            atoms: Iterable[ctl_ast.Atom] = ()) -> list[Any] | None:
        """The model's actions (its action objects) of a path of the reduced structure (its state ids
        and, when known, the edges taken; else the first edge joining consecutive states), or ``None``
        (:func:`replay`, :func:`atoms_disagree`)."""
        k = self.reduced
        labels: list[str | None] = [None]
        for i, (a, b) in enumerate(pairwise(states)):
            if edges is not None:
                e = int(edges[i])
            else:
                lo, hi = int(k.succ_ptr[a]), int(k.succ_ptr[a + 1])
                found = [x for x in range(lo, hi) if int(k.succ_idx[x]) == b]
                if not found:
                    return None
                e = found[0]
            labels.append(str(k.actions[int(k.edge_action[e])]))
        replayed = replay(states, labels, k, self.system, self.abstract)
        if replayed is None:
            return None
        path, actions = replayed
        if atoms_disagree(path, actions, self.system, states, k, atoms) is not None:
            return None
        return [a for a in actions[1:] if a is not None]
