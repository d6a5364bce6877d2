"""A scenario's ``attack_step`` and ``defence`` statements as the attack-tree engines' values.

flmodel keeps them as plain data (:meth:`flmodel.scenario_ast.Scenario.step_attributes`, ``(rule,
actor)`` -> attribute -> ``Fraction``; :class:`flmodel.scenario_ast.DefenceDecl`); this module turns
them into :class:`checker.attack_trees.attributes.StepTable` and
:class:`checker.attack_trees.defences.Defence`, and summarises an attack tree under them: the optimum
of each domain of :mod:`checker.attack_trees.attributes` (min cost = min over or, sum over and; max
probability of success = max over or, product over and, steps independent; min time = min over or,
sum over and), the Pareto front over the tree's alternatives, and the best attack over every path of
the structure in each domain (a label-setting search, :func:`checker.attack_trees.defences.best_attack`),
which a tree of bounded alternatives may miss.

A defence that removes steps is judged on the explored structure without them; a defence that removes
links changes how reports are routed, so the scenario without the links
(:meth:`flmodel.scenario_ast.Scenario.without_links`) is built and explored again, the goal evaluated
on that structure and the cheapest attack searched there (:func:`judge_defence`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from checker.app.load import model_kind, resolve_scenario_path
from checker.attack_trees.attributes import (
    DOMAINS,
    MAX_PROBABILITY,
    MIN_COST,
    MIN_TIME,
    NEUTRAL,
    Domain,
    Evaluation,
    Number,
    Optimum,
    ParetoPoint,
    StepTable,
    evaluate,
    pareto_front,
)
from checker.attack_trees.defences import Cut, Defence, best_attack, cuts, removing, removing_links
from checker.attack_trees.labels import StepLabel
from checker.attack_trees.tree import AttackTree
from checker.errors import InputError, Position
from checker.mc import ctl_ast
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_parse import parse_formula
from checker.mc.explore import Limits, ProgressCallback, explore
from checker.mc.kripke import Kripke
from checker.mc.ts import Action
from checker.render import value_text
from flmodel.scenario import load_scenario
from flmodel.scenario_ast import DefenceDecl, Scenario
from flmodel.scenario_build import build_system


def scenario_of(model: str | Sequence[str], defines: Mapping[str, int] | None = None) -> Scenario | None:
    """The scenario a ``MODEL`` argument names (a ``.fl`` file or a bundled scenario), or ``None`` for
    an explicit or JSON model, which declares no attributes."""
    paths = [model] if isinstance(model, str) else list(model)
    if len(paths) != 1 or paths[0].startswith("example:"):
        return None
    path = resolve_scenario_path(paths[0])
    if model_kind(str(path)) != "scenario":
        return None
    return load_scenario(path, defines=defines)


def step_table(scenario: Scenario | None) -> StepTable | None:
    """The scenario's ``attack_step`` declarations as a :class:`StepTable` (``None`` when it has none)."""
    if scenario is None or not scenario.steps:
        return None
    return StepTable(scenario.step_attributes())  # type: ignore[arg-type]


def attack_goal(kripke: Kripke, text: str, source: str = "--goal") -> tuple[np.ndarray, list[str]]:
    """The states that certainly satisfy the goal formula ``text`` (its satisfaction set's lower bound on
    an incomplete structure) and the observables it mentions (shown in the tree's step labels)."""
    formula = parse_formula(text, source=source)
    lower, _upper = ModelChecker(kripke).sat_bounds(formula)
    names: list[str] = []
    for atom in ctl_ast.atoms_of(formula):
        terms = [getattr(atom, f, None) for f in ("left", "right", "element", "collection")]
        for term in terms:
            if isinstance(term, ctl_ast.Ref) and term.name in kripke.observables and term.name not in names:
                names.append(term.name)
        if isinstance(atom, ctl_ast.Label) and atom.name in kripke.observables and atom.name not in names:
            names.append(atom.name)
    return lower, names


def defence_decl(scenario: Scenario | None, name: str, where: str = "--defence") -> DefenceDecl:
    """The declaration of the defence ``name`` (:class:`InputError` when the scenario declares no such
    defence)."""
    known = [] if scenario is None else [d.name for d in scenario.defences]
    if scenario is None or name not in known:
        raise InputError(f"unknown defence {name!r}", Position(where),
                         "a defence declared in the scenario (" + (", ".join(known) or "none declared")
                         + ")")
    return scenario.defence(name)


def defence_of(scenario: Scenario | None, name: str, where: str = "--defence") -> Defence:
    """The defence ``name`` of the scenario as a :class:`Defence`: the steps it removes, or the links
    (a defence judged on the model explored without them)."""
    decl = defence_decl(scenario, name, where)
    if decl.links:
        return removing_links(lk.text() for lk in decl.links)
    return removing(decl.rule, decl.actor, decl.location)


def _key_text(key: tuple[str, str | None]) -> str:
    return f"{key[0]} by {key[1]}" if key[1] is not None else f"{key[0]} (every actor)"


def steps_json(found: Optimum) -> list[str]:
    """The steps of an attack as text (``rule by actor at location [detail]``)."""
    return [s.label.action_text() if s.label is not None else "step" for s in found.alternative]


def _optimum_json(found: Optimum) -> dict[str, Any]:
    return {"value": found.value, "steps": steps_json(found)}


@dataclass(frozen=True)
class AttributeSummary:
    """An attack tree under the declared attributes: the optimum of each domain over its alternatives,
    their Pareto front, the best attack over every path of the structure in each domain (``cheapest``,
    ``most_probable``, ``fastest``; ``None`` when the goal is unreachable; ``cheapest_conclusive`` false
    when the exploration is incomplete), and the ``(rule, actor)`` attributes that were not declared and
    counted as neutral."""

    evaluation: Evaluation
    front: list[ParetoPoint]
    cheapest: Optimum | None
    cheapest_conclusive: bool
    most_probable: Optimum | None = None
    fastest: Optimum | None = None

    def undeclared(self) -> dict[str, list[str]]:
        """Undeclared attributes by step (``rule by actor``)."""
        out: dict[str, list[str]] = {}
        for key, name in self.evaluation.undeclared:
            out.setdefault(_key_text(key), []).append(name)
        return out

    def cost_text(self) -> str:
        """The tree's minimal cost as exact text."""
        return value_text(self.evaluation.cost.value)

    def optimum_text(self) -> str:
        """``min cost 2, max probability 81/100, min time 1`` (over the tree's alternatives)."""
        e = self.evaluation
        return (f"min cost {value_text(e.cost.value)}, max probability {value_text(e.probability.value)}, "
                f"min time {value_text(e.time.value)}")

    def lines(self) -> list[str]:
        """The summary as text lines."""
        e = self.evaluation
        out = ["attributes (declared by attack_step; or = choice, and = sequence, steps independent):"]
        for title, found in (("min cost", e.cost), ("max probability of success", e.probability),
                             ("min time", e.time)):
            out.append(f"  {title} {value_text(found.value)} in the tree: {found.text()}")
        note = "" if self.cheapest_conclusive else " (exploration incomplete: in the explored states)"
        for title, best in (("cheapest attack", self.cheapest), ("most probable attack", self.most_probable),
                            ("fastest attack", self.fastest)):
            if best is not None:
                what = {"cheapest attack": "cost", "most probable attack": "probability",
                        "fastest attack": "time"}[title]
                out.append(f"  {title} over every path of the model: {what} {value_text(best.value)}{note}: "
                           f"{best.text()}")
        out.append("  Pareto front over the tree's alternatives (cost, probability, time), "
                   f"{len(self.front)} point(s):")
        out += [f"    {value_text(p.cost)}, {value_text(p.probability)}, {value_text(p.time)}: {p.text()}"
                for p in self.front]
        undeclared = self.undeclared()
        if undeclared:
            out.append("  undeclared (neutral: cost 0, probability 1, time 0): "
                       + "; ".join(f"{k} ({', '.join(v)})" for k, v in undeclared.items()))
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready (numbers exact: an integer or ``"p/q"``, :mod:`checker.render`)."""
        e = self.evaluation

        def over_paths(found: Optimum | None) -> dict[str, Any] | None:
            return None if found is None else {**_optimum_json(found), "conclusive": self.cheapest_conclusive}

        return {
            "min_cost": _optimum_json(e.cost),
            "max_probability": _optimum_json(e.probability),
            "min_time": _optimum_json(e.time),
            "pareto_front": [{"cost": p.cost, "probability": p.probability, "time": p.time,
                              "steps": steps_json(Optimum(p.cost, p.alternative))}
                             for p in self.front],
            "cheapest_attack": over_paths(self.cheapest),
            "most_probable_attack": over_paths(self.most_probable),
            "fastest_attack": over_paths(self.fastest),
            "undeclared": self.undeclared(),
        }


Way = Callable[[Sequence[int]], "Sequence[Action] | None"]


def _replayed(alternative: Sequence[Any], values: Sequence[tuple[Domain, Number]], table: StepTable,
              way: Way) -> list[str] | None:
    """The model's steps of an attack (a sequence of base attacks of the reduced structure, each from
    one state to one state) replayed by ``way``, when they replay and have the given ``values`` in
    their domains; else ``None``."""
    if not alternative:
        return []
    if any(len(s.pre) != 1 or len(s.post) != 1 for s in alternative):
        return None
    actions = way([min(alternative[0].pre), *(min(s.post) for s in alternative)])
    if actions is None:
        return None
    for domain, expected in values:
        value: Number = domain.value(NEUTRAL)
        for a in actions:
            value = domain.sequence(value, domain.value(table.vector(a, record=False)))
        if value != expected:
            return None
    return [StepLabel(a).action_text() for a in actions]


def replayed_summary(summary: AttributeSummary, table: StepTable, way: Way) -> dict[str, Any] | None:
    """``summary.to_json()`` of an attack tree built on a reduced structure, with the steps of every
    attack it names (the optimum of each domain, the Pareto front, the best attack over every path)
    replaced by the model's own steps (``way`` replays a path of the reduced structure on the model,
    :class:`checker.app.lift.Replayer`); ``None`` when one of them does not replay or has other
    attributes on the model (the reduction did not keep the steps' attributes)."""
    out = summary.to_json()
    e = summary.evaluation
    named = [("min_cost", e.cost, MIN_COST), ("max_probability", e.probability, MAX_PROBABILITY),
             ("min_time", e.time, MIN_TIME), ("cheapest_attack", summary.cheapest, MIN_COST),
             ("most_probable_attack", summary.most_probable, MAX_PROBABILITY),
             ("fastest_attack", summary.fastest, MIN_TIME)]
    for key, found, domain in named:
        if found is None:
            continue
        steps = _replayed(found.alternative, [(domain, found.value)], table, way)
        if steps is None:
            return None
        out[key]["steps"] = steps
    for point, entry in zip(summary.front, out["pareto_front"], strict=True):
        steps = _replayed(point.alternative, [(d, d.value(point.vector)) for d in DOMAINS], table, way)
        if steps is None:
            return None
        entry["steps"] = steps
    return out


def summarise(tree: AttackTree, table: StepTable, kripke: Kripke, goal: np.ndarray) -> AttributeSummary:
    """:class:`AttributeSummary` of ``tree`` (generated for ``goal`` on ``kripke``) under ``table``; the
    undeclared attributes are those of the tree's steps."""
    evaluation = evaluate(tree, table)
    front = pareto_front(tree, table)
    cheapest, conclusive = best_attack(kripke, goal, table, MIN_COST)
    most_probable, _ = best_attack(kripke, goal, table, MAX_PROBABILITY)
    fastest, _ = best_attack(kripke, goal, table, MIN_TIME)
    return AttributeSummary(evaluation, front, cheapest, conclusive, most_probable, fastest)


@dataclass(frozen=True)
class DefenceVerdict:
    """:func:`judge_defence`: the defence's :class:`Cut` (on the structure without the removed steps,
    or on the structure explored without the removed links), with the size of that structure and
    whether the goal is reachable there at all (any cost)."""

    name: str
    cut: Cut
    links: tuple[str, ...]
    states: int
    goal_reachable: bool
    static_links: bool = False

    def text(self) -> str:
        """``defence: removing … blocks every attack of cost <= 5`` (and, for links, the structure it was
        judged on)."""
        out = f"defence {self.name}: {self.cut}"
        if self.links:
            reach = ("the goal is still reachable" if self.goal_reachable
                     else "the goal is no longer reachable" if self.cut.conclusive
                     else "the goal is not reached in the explored states")
            out += (f" (the model explored again without the {'link' if len(self.links) == 1 else 'links'}: "
                    f"{self.states} states; {reach})")
        if self.static_links:
            out += ("; note: the scenario's links are static (no contact, loss, failure or partial "
                    "aggregation), no rule reads them, so removing one changes no step")
        return out

    def to_json(self) -> dict[str, Any]:
        remaining = self.cut.remaining
        return {"name": self.name, "removes": self.cut.defence.description, "budget": self.cut.budget,
                "blocks": self.cut.blocks, "conclusive": self.cut.conclusive,
                "remaining": None if remaining is None else {"cost": remaining.value,
                                                             "steps": steps_json(remaining)},
                "links": list(self.links), "states": self.states, "goal_reachable": self.goal_reachable,
                "static_links": self.static_links}


def defended_structure(scenario: Scenario, decl: DefenceDecl, *, limits: Limits | None = None,
                       progress: ProgressCallback | None = None) -> Kripke:
    """The scenario without the links ``decl`` removes, built and explored (under ``limits``) as the
    scenario itself is: reports are routed over the links that remain (:mod:`flmodel.network`), and an
    attacker sees what still crosses its location."""
    defended = scenario.without_links(decl.links)
    return explore(build_system(defended), limits=limits, progress=progress,
                   source=f"{scenario.source} without {', '.join(lk.text() for lk in decl.links)}")


def judge_defence(scenario: Scenario | None, name: str, kripke: Kripke,
                  goal_of: Callable[[Kripke], np.ndarray], table: StepTable | None,
                  budget: Number | None = None, *, limits: Limits | None = None,
                  progress: ProgressCallback | None = None) -> DefenceVerdict:
    """Does the scenario's defence ``name`` block every attack on ``goal_of(structure)`` of cost
    ``<= budget`` (default: the statement's budget; ``None`` there too: of any cost), with the
    ``attack_step`` costs in ``table`` (none: every step free)? A defence of steps is judged on
    ``kripke`` without them; a defence of links on the scenario explored again without them."""
    decl = defence_decl(scenario, name)
    assert scenario is not None  # defence_decl refuses a model without a scenario
    defence = defence_of(scenario, name)
    limit: Number | None = budget if budget is not None else decl.budget
    costs = table if table is not None else StepTable({})
    structure = defended_structure(scenario, decl, limits=limits, progress=progress) if decl.links else kripke
    goal = goal_of(structure)
    cut = cuts(structure, defence, limit, costs, goal=goal)
    reachable = (cut.remaining is not None
                 or best_attack(structure, goal, costs, removed=defence.removes)[0] is not None)
    links = tuple(lk.text() for lk in decl.links)
    static = bool(decl.links) and not scenario.networked
    return DefenceVerdict(name, cut, links, int(structure.num_states), reachable, static)

