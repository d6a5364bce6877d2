"""``D{ε,δ}[ψ]`` ([dpCTL]) on a scenario: for the declared neighbour pair ``(D, D')`` (both
directions) and every scheduler of a class (``uniform``, ``memoryless``, ``adaptive`` (alias
``worst``), ``blind``: :mod:`checker.privacy.dp_query`), ``Pr_D^σ(ψ) ≤ e^ε Pr_D'^σ(ψ) + δ`` at the
initial states.

Both systems are explored (:func:`checker.mc.explore.explore`, with probabilities); the atoms of ψ are
decided on each structure by :class:`checker.mc.ctl.ModelChecker`; the path formula is followed by a
monitor (:func:`_monitor_step`: the verdict of ``F``, ``G``, ``X``, ``U`` and their step-bounded forms
on the finite runs of the bounded model, IIIf deadlock semantics: a run ends at a deadlock).  The
observation of a state is what the attacker observes (the scenario's ``attacker … observes``, default
``curmodpar``), never the data: an adaptive scheduler sees its own steps and these observations so far
([dpCTL]'s semantics read over a scheduler that sees what the attacker sees), a memoryless one the
current observation, a blind one only its own steps ([dpCTL]'s query schedulers, the same sequence of
steps in both systems whatever happens).  ψ's verdict joins the observation of the run's last state
only, where no choice is left.  A violation names the direction, the scheduler (its choices in model
terms, :func:`checker.render.value_text`), both probabilities and a witness run satisfying ψ.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

import numpy as np

from checker.app.scenario_vocabulary import scenario_vocabulary
from checker.errors import ExplorationIncomplete
from checker.mc import ctl_ast
from checker.mc.atoms import freeze
from checker.mc.ctl import ModelChecker
from checker.mc.explore import Limits, explore
from checker.mc.kripke import Kripke
from checker.privacy.dp_query import DPQueryResult, SchedulerClass, dp_query
from checker.privacy.ni_fl_dp import Eps
from checker.privacy.observable_mdp import ObservableMDP, build_history_tree
from checker.privacy.schedulers import Scheduler, scheduler_class_json, scheduler_class_text
from checker.render import value_text
from checker.verdict import Verdict
from flmodel.scenario_build import ScenarioSystem

__all__ = ["DPCheck", "dp_check", "history_text"]

#: A monitor state: ``("open", steps)`` while ψ is undecided, ``("done", verdict)`` once decided.
Monitor = tuple[str, Any]


@dataclass(frozen=True)
class DPCheck:
    """``D{ε,δ}[ψ]`` between ``D`` and a neighbour: ``verdict``, the two directions and the size of
    the joint history tree."""

    formula: str
    neighbour: str
    verdict: Verdict
    directions: tuple[DPQueryResult, DPQueryResult]
    histories: int
    scheduler: str = "adaptive"

    def to_json(self) -> dict[str, Any]:
        """``formula``, ``neighbour``, ``verdict``, ``histories``, ``scheduler_class`` (the class, as
        given and by its own name, and what its schedulers see) and per direction its
        ``probabilities``, ``value`` (``Pr_first − e^ε Pr_second``), ``upper``, ``exact``, ``holds``,
        ``note``, the worst scheduler's ``choices`` and the ``witness`` run (exact numbers as text)."""
        directions = []
        for r in self.directions:
            choices = [] if r.scheduler is None else [
                {"history": _key_text(r.scheduler, k), "action": str(a)} for k, a in r.scheduler.choices]
            directions.append({
                "direction": list(r.direction), "probabilities": [str(x) for x in r.probabilities],
                "value": str(r.value), "upper": str(r.upper), "exact": r.exact, "holds": r.holds,
                "note": r.note, "choices": choices,
                "witness": None if r.witness is None else history_text(r.witness)})
        return {"formula": self.formula, "neighbour": self.neighbour, "verdict": str(self.verdict),
                "histories": self.histories, "scheduler_class": scheduler_class_json(self.scheduler),
                "directions": directions}

    def text(self) -> str:
        """The verdict, the scheduler class, then one line per direction: the probabilities, the gap
        against δ and, when violated, the scheduler's choices and a witness run."""
        lines = [f"{self.formula} between {self.neighbour}: {self.verdict}",
                 f"  {scheduler_class_text(self.scheduler)}"]
        for r in self.directions:
            first, second = r.direction
            lines.append(f"  Pr_{first}(ψ) = {value_text(r.probabilities[0])}, Pr_{second}(ψ) = "
                         f"{value_text(r.probabilities[1])}; worst Pr_{first} − e^ε Pr_{second} = "
                         f"{value_text(r.value)} ({r.note})")
            if r.holds is False and r.scheduler is not None:
                for key, action in r.scheduler.choices:
                    lines.append(f"    scheduler: {_key_text(r.scheduler, key)}  =>  {action}")
                if r.witness is not None:
                    lines.append(f"    witness run: {history_text(r.witness)}")
        return "\n".join(lines)


def history_text(history: Sequence[Hashable]) -> str:
    """A history ``(o0, a1, o1, …)`` in model terms, ``o0 -a1-> o1 …`` (ψ's verdict shown as
    ``[ψ]``/``[¬ψ]`` on the last observation)."""
    def obs(o: Hashable) -> str:
        if isinstance(o, tuple) and len(o) == 3 and o[0] == "end":
            return f"{value_text(o[1])} [{'ψ' if o[2] else '¬ψ'}]"
        return value_text(o)

    text = obs(history[0])
    for i in range(1, len(history), 2):
        text += f" -{history[i]}-> {obs(history[i + 1])}"
    return text


def _key_text(scheduler: Scheduler, key: Hashable) -> str:
    """What a scheduler's choice is keyed by, in model terms: a history, an observation, or the steps
    taken so far (blind)."""
    if scheduler.kind == "actions":
        steps = cast(tuple[str, ...], key)
        return f"after {', '.join(steps)}" if steps else "at the start"
    if scheduler.kind == "history":
        return history_text(cast(Sequence[Hashable], key))
    return value_text(key)  # an observation (a tuple when several names are observed)


def _monitor_step(path: ctl_ast.PathFormula, sat: dict[ctl_ast.Formula, np.ndarray], state: int,
                  mon: Monitor, terminal: bool) -> Monitor:
    """The monitor after visiting ``state`` (``mon`` holds the steps taken before it)."""
    if mon[0] == "done":
        return mon
    steps: int = mon[1]
    bound = getattr(path, "bound", None)
    if isinstance(path, ctl_ast.Eventually):
        if sat[path.arg][state]:
            return ("done", True)
        if terminal or (bound is not None and steps >= bound):
            return ("done", False)
    elif isinstance(path, ctl_ast.Globally):
        if not sat[path.arg][state]:
            return ("done", False)
        if terminal or (bound is not None and steps >= bound):
            return ("done", True)
    elif isinstance(path, ctl_ast.Next):
        if steps == 1:
            return ("done", bool(sat[path.arg][state]))
        if terminal:
            return ("done", False)
    elif isinstance(path, ctl_ast.Until):
        if sat[path.right][state]:
            return ("done", True)
        if not sat[path.left][state] or terminal or (bound is not None and steps >= bound):
            return ("done", False)
    else:
        raise TypeError(f"unknown path formula {path!r}")
    return ("open", steps + 1)


def _observable_mdp(k: Kripke, path: ctl_ast.PathFormula, observing: Sequence[str]) -> ObservableMDP:
    """The structure with ψ's monitor: states ``(state id, monitor)``, actions the model's, the
    observation what the attacker observes, with ψ's verdict at the end of a run."""
    mc = ModelChecker(k)
    sat = {f: mc.sat(f) for f in path.children()}
    cols = [k.observables[n] for n in observing]
    deadlock = k.deadlocks

    def seen(s: int) -> Hashable:
        vals = tuple(freeze(c[s]) for c in cols)
        return vals[0] if len(vals) == 1 else vals

    initial: dict[Any, Any] = {}
    for s in k.initial:
        node = (int(s), _monitor_step(path, sat, int(s), ("open", 0), bool(deadlock[s])))
        initial[node] = initial.get(node, 0) + 1
    total = sum(initial.values())
    initial = {n: Fraction(c, total) for n, c in initial.items()}  # IIIf: uniform over the initial states
    transitions: dict[Any, dict[str, dict[Any, Any]]] = {}
    observation: dict[Any, Hashable] = {}
    stack = list(initial)
    while stack:
        node = stack.pop()
        if node in observation:
            continue
        s, mon = node
        if deadlock[s]:
            observation[node] = ("end", seen(s), bool(mon[1]))
            continue
        observation[node] = seen(s)
        acts: dict[str, dict[Any, Any]] = {}
        for e in range(int(k.succ_ptr[s]), int(k.succ_ptr[s + 1])):
            t = int(k.succ_idx[e])
            p = k.probability(e)
            target = (t, _monitor_step(path, sat, t, mon, bool(deadlock[t])))
            dist = acts.setdefault(str(k.actions[int(k.edge_action[e])]), {})
            dist[target] = dist.get(target, 0) + (1 if p is None else p)
            stack.append(target)
        transitions[node] = acts
    return ObservableMDP(initial, transitions, observation)


def dp_check(system: Any, neighbour_system: Any, formula: ctl_ast.DPQuery, neighbour: str, *,
             observing: Sequence[str] = ("curmodpar",), schedulers: SchedulerClass = "adaptive",
             limits: Limits | None = None) -> DPCheck:
    """Decide ``D{ε,δ}[ψ]`` between the systems of ``D`` (``system``) and ``D'`` (``neighbour_system``,
    e.g. :func:`flmodel.scenario_build.neighbour_system`) over ``schedulers``."""
    structures = [explore(ts, limits=limits, probabilities=True) for ts in (system, neighbour_system)]
    for k, ts in zip(structures, (system, neighbour_system), strict=True):
        if isinstance(ts, ScenarioSystem):  # the rules a formula may name are the system's, taken or not
            k.vocabulary = scenario_vocabulary(ts)
        if not k.complete:
            raise ExplorationIncomplete(f"exploration incomplete ({k.limit_reason}): D{{ε,δ}} needs every "
                                        "run", k.limit_reason)
    mdps = [_observable_mdp(k, formula.path, observing) for k in structures]
    tree = build_history_tree(mdps[0], mdps[1])

    def event(node: int) -> bool:
        o = tree.observation(node)
        return isinstance(o, tuple) and len(o) == 3 and o[0] == "end" and bool(o[2])

    eps = Eps(ratio=formula.eps.value) if formula.eps.log else Eps(value=formula.eps.value)
    results = (dp_query(tree, event, eps, formula.delta, direction=0, schedulers=schedulers),
               dp_query(tree, event, eps, formula.delta, direction=1, schedulers=schedulers))
    if all(r.holds is True for r in results):
        verdict = Verdict.HOLDS
    elif any(r.holds is False for r in results):
        verdict = Verdict.VIOLATED
    else:
        verdict = Verdict.UNKNOWN
    return DPCheck(str(formula), neighbour, verdict, results, len(tree), schedulers)
