"""Witnesses and counterexamples as paths of a Kripke structure.

A :class:`Trace` is a finite path ``s0 → s1 → … → sk`` (a *lasso* when ``loop_start`` is set: the last
state steps back to ``states[loop_start]``). It is printed as the sequence of actions and, per step,
the observables and labels that CHANGED (concrete values, e.g. ``curmodpar: 0 → 1/2``), starting from
the full valuation of ``s0``.

Which path demonstrates what (``s`` satisfies the existential formula, lower bounds only):
- ``EX f``: ``s → t`` with ``t ⊨ f``;
- ``EF f`` / ``E[f U g]``: a shortest path through ``f``-states to a ``g``-state;
- ``EG f``: a lasso through ``f``-states into a cycle of the ``f``-subgraph (a self-loop, an implicit
  deadlock self-loop under total semantics, or a shortest cycle inside a strongly connected component);
- ``E[f R g]``: a path for ``E[g U (f ∧ g)]`` or a lasso for ``EG g``.
A counterexample to a universal formula is a witness of its existential dual
(``¬AX f = EX ¬f``, ``¬AG f = EF ¬f``, ``¬AF f = EG ¬f``, ``¬A[f R g] = E[¬f U ¬g]``,
``¬A[f U g] = E[¬g U (¬f ∧ ¬g)] ∨ EG ¬g``).

A finite path ends in a state that satisfies the operator's target (``f`` of ``EX f`` / ``EF f``, ``g``
of ``E[f U g]``, ``f ∧ g`` of ``E[f R g]``). When the target is itself temporal (``EF (p ∧ EX q)``, or
the ``p ∧ EX ¬q`` that a counterexample of ``AG (p → AX q)`` reaches), the path goes on with the
evidence of the target at that state, as NuSMV's traces do: the witness of ``EF (p ∧ EX q)`` ends with
the step into the ``q`` state, the counterexample of ``AG (p → AX q)`` with the successor that breaks
``AX q``. A lasso is not extended (its end repeats forever).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from checker.mc import ctl_ast, reach
from checker.mc.atoms import freeze
from checker.mc.satisfaction import SatisfactionSets
from checker.render import json_value, value_text


@dataclass
class Step:
    """One state of a trace: the action that led here (``None`` for the first state) and the
    observables/labels whose value differs from the previous state (all of them for the first)."""

    state: int
    name: str
    action: str | None
    changed: dict[str, object]


@dataclass
class Trace:
    """A witness (``kind="witness"``) or counterexample (``kind="counterexample"``) path."""

    kind: str
    shows: str
    steps: list[Step]
    loop_start: int | None = None
    loop_action: str | None = None
    note: str = ""
    states: list[int] = field(default_factory=list)
    then: list[tuple[int, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-able form: ``{"kind", "shows", "states", "steps": [{"state", "name", "action",
        "changed"}], "loop_start", "loop_action", "then": [{"step", "shows"}]}``; ``then`` lists the
        nested operators whose evidence continues the path, from step ``step`` on."""
        return {
            "kind": self.kind,
            "shows": self.shows,
            "states": list(self.states),
            "steps": [{"state": s.state, "name": s.name, "action": s.action,
                       "changed": {k: json_value(v) for k, v in s.changed.items()}} for s in self.steps],
            "loop_start": self.loop_start,
            "loop_action": self.loop_action,
            "then": [{"step": i, "shows": text} for i, text in self.then],
            **({"note": self.note} if self.note else {}),
        }

    def render(self) -> str:
        """Multi-line text: actions and changed values, one step per line."""
        lines = [f"{self.kind} ({self.shows}):"]
        nested = dict(self.then)
        for i, s in enumerate(self.steps):
            vals = ", ".join(f"{k}={value_text(v)}" for k, v in s.changed.items())
            if i == 0:
                lines.append(f"  {s.name}: {vals}" if vals else f"  {s.name}")
            else:
                lines.append(f"  --{s.action}--> {s.name}" + (f": {vals}" if vals else ""))
            if i in nested:
                lines.append(f"  [{s.name} satisfies {nested[i]}; the next steps show it]")
        if self.loop_start is not None:
            lines.append(f"  --{self.loop_action}--> back to {self.steps[self.loop_start].name} "
                         f"(step {self.loop_start}; the cycle repeats forever)")
        if self.note:
            lines.append(f"  ({self.note})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class _Valuation:
    """Reads the observables and labels of states (frozen values), for the changed-values display."""

    def __init__(self, mc: SatisfactionSets):
        k = mc.kripke
        self.k = k
        self.obs: Mapping[str, Any] = k.observables
        self.labels = k.labels

    def of(self, s: int) -> dict[str, object]:
        out: dict[str, object] = {}
        single = getattr(self.obs, "value", None)  # LazyObservables: read one state only
        for name in self.obs:
            out[name] = freeze(single(name, s) if single is not None else self.obs[name][s])
        for name, arr in self.labels.items():
            if name not in out:
                out[name] = bool(arr[s])
        return out


def _edge_action(mc: SatisfactionSets, u: int, v: int) -> str:
    k = mc.kripke
    lo, hi = int(k.succ_ptr[u]), int(k.succ_ptr[u + 1])
    succ = np.asarray(k.succ_idx[lo:hi])
    hit = np.flatnonzero(succ == v)
    if len(hit):
        return str(k.actions[int(k.edge_action[lo + int(hit[0])])])
    return "(stutter: deadlock self-loop, total semantics)"


def make_trace(mc: SatisfactionSets, kind: str, shows: str, path: list[int], loop_start: int | None = None,
               note: str = "", then: Sequence[tuple[int, str]] = ()) -> Trace:
    """Build a :class:`Trace` of ``path`` (a lasso if ``loop_start`` is given; ``then``: the nested
    operators whose evidence continues the path, as ``(step, formula)``)."""
    val = _Valuation(mc)
    steps: list[Step] = []
    prev: dict[str, object] | None = None
    for i, s in enumerate(path):
        cur = val.of(s)
        if prev is None:
            changed = dict(cur)
            action = None
        else:
            changed = {k: v for k, v in cur.items() if prev.get(k) != v}
            action = _edge_action(mc, path[i - 1], s)
        steps.append(Step(s, mc.kripke.state_name(s), action, changed))
        prev = cur
    loop_action = _edge_action(mc, path[-1], path[loop_start]) if loop_start is not None else None
    return Trace(kind, shows, steps, loop_start, loop_action, note, list(path), list(then))


# ------------------------------------------------------------------------------ path search
def _lasso(mc: SatisfactionSets, s: int, f: np.ndarray) -> tuple[list[int], int] | None:
    """A lasso from ``s`` staying in ``f`` forever (``s ⊨ EG f``, lower bound)."""
    g = mc.graph
    seeds, labels = g.cycle_seeds(f, optimistic=False)
    stem = reach.shortest_path(g.ptr, g.dst, s, seeds, f)
    if stem is None:
        return None
    u = stem[-1]
    if g.stutter[u]:
        return stem, len(stem) - 1
    assert labels is not None
    comp = (labels == labels[u]) & f
    order, pred = reach.search_tree(g.ptr, g.dst, [u], expand=comp)
    reached = np.zeros(g.n, dtype=bool)
    reached[order] = True
    pptr, pidx = g.transpose
    preds = np.asarray(pidx[pptr[u]:pptr[u + 1]])
    cands = preds[reached[preds] & comp[preds]]
    if not len(cands):  # pragma: no cover - u lies on a cycle of its SCC
        return None
    v = int(cands[0])
    cycle = [v]
    while cycle[-1] != u:
        cycle.append(int(pred[cycle[-1]]))
    cycle.reverse()  # u … v
    path = stem + cycle[1:]
    return path, len(stem) - 1


def path_target(f: ctl_ast.Formula) -> ctl_ast.Formula | None:
    """What the last state of :func:`witness_path`'s finite path for ``f`` satisfies (``None`` for
    ``EG``, whose evidence is a lasso)."""
    if isinstance(f, ctl_ast.EX | ctl_ast.EF):
        return f.arg
    if isinstance(f, ctl_ast.EU):
        return f.right
    if isinstance(f, ctl_ast.ER):
        return ctl_ast.And((f.left, f.right))
    return None


class Evidence(NamedTuple):
    """What :func:`explain` found: the formula the path demonstrates (``shown``), the path, where its
    lasso loops back (``loop_start``), and the nested operators whose evidence continues it
    (``then``: ``(step, formula)``, the step at which that operator's part begins)."""

    shown: str
    path: list[int]
    loop_start: int | None
    then: tuple[tuple[int, str], ...] = ()


def _extended(mc: SatisfactionSets, f: ctl_ast.Formula, found: tuple[list[int], int | None]) -> Evidence:
    """``found`` (a path for the existential ``f``) followed by the evidence of ``f``'s target at the
    path's last state, when the target is temporal."""
    path, loop = found
    target = path_target(f)
    if target is None:
        return Evidence(str(f), path, loop)
    if loop is not None:
        # a deadlock's stutter step (total semantics): the target holds at the same state, whose
        # every path is that stutter, so its evidence begins at step 0 and adds no state
        more = explain(mc, target, path[-1], True) if len(path) == 1 else None
        if more is None:
            return Evidence(str(f), path, loop)
        return Evidence(str(f), path, loop, ((0, more.shown), *more.then))
    more = explain(mc, target, path[-1], True)
    if more is None:
        return Evidence(str(f), path, loop)
    offset = len(path) - 1
    then = ((offset, more.shown), *((offset + i, text) for i, text in more.then))
    return Evidence(str(f), path + more.path[1:],
                    None if more.loop_start is None else offset + more.loop_start, then)


def witness_path(mc: SatisfactionSets, f: ctl_ast.Formula, s: int) -> tuple[list[int], int | None] | None:
    """A path from ``s`` demonstrating the existential formula ``f`` (``s`` in its lower bound), as
    ``(states, loop_start)``; ``None`` if ``f`` is not existential-temporal or ``s`` does not satisfy it."""
    g = mc.graph
    if isinstance(f, ctl_ast.EX):
        target = mc.sat(f.arg)
        succ = mc.kripke.successors(s)
        hit = succ[target[succ]]
        if len(hit):
            return [s, int(hit[0])], None
        if g.stutter[s] and target[s]:
            return [s], 0
        return None
    if isinstance(f, ctl_ast.EF):
        p = reach.shortest_path(g.ptr, g.dst, s, mc.sat(f.arg), np.ones(g.n, dtype=bool))
        return (p, None) if p else None
    if isinstance(f, ctl_ast.EU):
        p = reach.shortest_path(g.ptr, g.dst, s, mc.sat(f.right), mc.sat(f.left))
        return (p, None) if p else None
    if isinstance(f, ctl_ast.EG):
        lasso = _lasso(mc, s, mc.sat(f.arg))
        return lasso
    if isinstance(f, ctl_ast.ER):
        fs, gs = mc.sat(f.left), mc.sat(f.right)
        p = reach.shortest_path(g.ptr, g.dst, s, fs & gs, gs)
        if p:
            return p, None
        return _lasso(mc, s, gs)
    return None


def negate(f: ctl_ast.Formula) -> ctl_ast.Formula:
    """``¬f`` without a double negation."""
    return f.arg if isinstance(f, ctl_ast.Not) else ctl_ast.Not(f)


def existential_dual(f: ctl_ast.Formula) -> ctl_ast.Formula | None:
    """The existential formula equivalent to ``¬f`` for a universal temporal ``f``."""
    if isinstance(f, ctl_ast.AX):
        return ctl_ast.EX(negate(f.arg))
    if isinstance(f, ctl_ast.AG):
        return ctl_ast.EF(negate(f.arg))
    if isinstance(f, ctl_ast.AF):
        return ctl_ast.EG(negate(f.arg))
    if isinstance(f, ctl_ast.AR):
        return ctl_ast.EU(negate(f.left), negate(f.right))
    if isinstance(f, ctl_ast.AU):
        nl, nr = negate(f.left), negate(f.right)
        return ctl_ast.Or((ctl_ast.EU(nr, ctl_ast.And((nl, nr))), ctl_ast.EG(nr)))
    return None


def explain(mc: SatisfactionSets, f: ctl_ast.Formula, s: int, want: bool) -> Evidence | None:
    """Evidence that state ``s`` satisfies ``f`` (``want=True``) or violates it (``want=False``):
    ``(shown formula, path, loop_start, then)``, descending through boolean connectives to the temporal
    operator that decides, and on from the end of its path into a temporal target; ``None`` when no path
    is meaningful (e.g. an atom)."""
    if isinstance(f, ctl_ast.Not):
        return explain(mc, f.arg, s, not want)
    if isinstance(f, ctl_ast.And | ctl_ast.Or):
        # And true / Or false: every operand matters; explain the first temporal one.
        # And false / Or true: explain one operand that decides.
        deciding = [a for a in f.args if bool(mc.sat(a)[s]) == want]
        for a in deciding:
            got = explain(mc, a, s, want)
            if got:
                return got
        return None
    if isinstance(f, ctl_ast.Implies):
        return explain(mc, ctl_ast.Or((ctl_ast.Not(f.left), f.right)), s, want)
    if isinstance(f, ctl_ast.Iff):
        return None
    if want and isinstance(f, ctl_ast.EXISTENTIAL):
        p = witness_path(mc, f, s)
        return _extended(mc, f, p) if p else None
    if not want and isinstance(f, ctl_ast.UNIVERSAL):
        dual = existential_dual(f)
        assert dual is not None
        if isinstance(dual, ctl_ast.Or):
            for d in dual.args:
                if mc.sat(d)[s]:
                    p = witness_path(mc, d, s)
                    if p:
                        return _extended(mc, d, p)
            return None
        p = witness_path(mc, dual, s)
        return _extended(mc, dual, p) if p else None
    return None
