"""Evidence in the model's own states: a witness or counterexample found on a reduced structure (the
reductions of :mod:`checker.app.reductions`) replayed on the unreduced system.

Every reduction of the explored structure is a map ``h`` from the system's states onto the reduced
ones with ``h(succ(s)) = succ(h(s))`` (functional bisimulations: the trace abstraction, dead and
forgotten values, the gradient sum; the symmetry quotient composes ``h`` with the orbit
representative). So a path ``t0 → t1 → … → tk`` of the reduced structure lifts: from the system's initial
state ``s0`` with ``h(s0) = t0``, each step takes a successor ``s_{i+1}`` of ``s_i`` with
``h(s_{i+1}) = t_{i+1}`` (one exists by the bisimulation; a step of the same rule and actor is preferred,
the first in the system's order otherwise). The lifted path shows the model's own values (the models,
the updates, the traces that the reduced states forget or abstract) and the model's own actions; it
satisfies the same formulas, since ``h`` keeps every atom the properties read. A lasso (a cycle of the
reduced structure) is not lifted: its concrete states need not close the cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from checker.mc.evidence import Step, Trace
from checker.mc.kripke import Kripke
from checker.mc.ts import TransitionSystem

__all__ = ["lift_trace"]


def lift_trace(trace: Trace, reduced: Kripke, system: TransitionSystem[Any],
               abstract: Callable[[Any], Hashable], observables: list[str]) -> Trace | None:
    """``trace`` (a path of ``reduced``, whose states are kept) replayed on ``system`` through
    ``abstract`` (module docstring), with the changed values of ``observables`` read off the system's
    own states; ``None`` when it cannot be lifted (a lasso, no kept states, a step without a
    counterpart, which would contradict the bisimulation)."""
    states = reduced.states
    if trace.loop_start is not None or states is None or not trace.states:
        return None
    current = next((s for s in system.initial_states() if abstract(s) == states[trace.states[0]]), None)
    if current is None:
        return None
    path = [current]
    actions: list[str | None] = [None]
    for step in trace.steps[1:]:
        want = states[step.state]
        matches = [(a, t) for a, t, *_ in system.successors(current) if abstract(t) == want]
        if not matches:
            return None
        label = (step.action or "").split(" [", 1)[0]
        act, current = next(((a, t) for a, t in matches if str(a).split(" [", 1)[0] == label), matches[0])
        path.append(current)
        actions.append(str(act))
    steps: list[Step] = []
    prev: dict[str, object] = {}
    for i, (state, action, old) in enumerate(zip(path, actions, trace.steps, strict=True)):
        values = {n: system.observe(state, n) for n in observables}
        changed = dict(values) if i == 0 else {n: v for n, v in values.items() if prev.get(n) != v}
        steps.append(Step(old.state, old.name, action, changed))
        prev = values
    note = "; ".join(x for x in (trace.note, "replayed on the model's own states from the reduced structure")
                     if x)
    return Trace(trace.kind, trace.shows, steps, None, None, note, list(trace.states), list(trace.then))
