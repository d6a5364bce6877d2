"""A scenario's ``attack_step`` and ``defence`` statements as the attack-tree engines' values.

flmodel keeps them as plain data (:meth:`flmodel.scenario_ast.Scenario.step_attributes`, ``(rule,
actor)`` -> attribute -> ``Fraction``; :class:`flmodel.scenario_ast.DefenceDecl`); this module turns
them into :class:`checker.attack_trees.attributes.StepTable` and
:class:`checker.attack_trees.defences.Defence`, and summarises an attack tree under them: the optimum
of each domain of :mod:`checker.attack_trees.attributes` (min cost = min over or, sum over and; max
probability of success = max over or, product over and, steps independent; min time = min over or,
sum over and), the Pareto front over the tree's alternatives, and the cheapest attack over every path
of the structure (Dijkstra, :func:`checker.attack_trees.defences.cheapest_attack`), which a tree of
bounded alternatives may miss.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from checker.app.load import model_kind, resolve_scenario_path
from checker.attack_trees.attributes import (
    Evaluation,
    Optimum,
    ParetoPoint,
    StepTable,
    evaluate,
    pareto_front,
)
from checker.attack_trees.defences import Defence, cheapest_attack, removing
from checker.attack_trees.tree import AttackTree
from checker.errors import InputError, Position
from checker.io.render import value_text
from checker.mc.kripke import Kripke
from flmodel.scenario import load_scenario
from flmodel.scenario_ast import Scenario


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


def defence_of(scenario: Scenario | None, name: str, where: str = "--defence") -> Defence:
    """The defence ``name`` of the scenario as a :class:`Defence` (:class:`InputError` when the
    scenario declares no such defence)."""
    known = [] if scenario is None else [d.name for d in scenario.defences]
    if scenario is None or name not in known:
        raise InputError(f"unknown defence {name!r}", Position(where),
                         "a defence declared in the scenario (" + (", ".join(known) or "none declared")
                         + ")")
    decl = scenario.defence(name)
    return removing(decl.rule, decl.actor, decl.location)


def _key_text(key: tuple[str, str | None]) -> str:
    return f"{key[0]} by {key[1]}" if key[1] is not None else f"{key[0]} (every actor)"


@dataclass(frozen=True)
class AttributeSummary:
    """An attack tree under the declared attributes: the optimum of each domain over its alternatives,
    their Pareto front, the cheapest attack over every path of the structure (``None`` when the goal
    is unreachable; ``cheapest_conclusive`` false when the exploration is incomplete), and the
    ``(rule, actor)`` attributes that were not declared and counted as neutral."""

    evaluation: Evaluation
    front: list[ParetoPoint]
    cheapest: Optimum | None
    cheapest_conclusive: bool

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
        if self.cheapest is not None:
            note = "" if self.cheapest_conclusive else " (exploration incomplete: in the explored states)"
            cost = value_text(self.cheapest.value)
            out.append(f"  cheapest attack over every path of the model: cost {cost}{note}: "
                       f"{self.cheapest.text()}")
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
        """JSON-ready (numbers exact: an integer or ``"p/q"``, :mod:`checker.io.render`)."""
        e = self.evaluation

        def optimum_json(found: Optimum) -> dict[str, Any]:
            return {"value": found.value, "steps": [s.label.action_text() if s.label is not None else "step"
                                                    for s in found.alternative]}

        out: dict[str, Any] = {
            "min_cost": optimum_json(e.cost),
            "max_probability": optimum_json(e.probability),
            "min_time": optimum_json(e.time),
            "pareto_front": [{"cost": p.cost, "probability": p.probability, "time": p.time,
                              "steps": optimum_json(Optimum(p.cost, p.alternative))["steps"]}
                             for p in self.front],
            "cheapest_attack": (None if self.cheapest is None else
                                {**optimum_json(self.cheapest), "conclusive": self.cheapest_conclusive}),
            "undeclared": self.undeclared(),
        }
        return out


def summarise(tree: AttackTree, table: StepTable, kripke: Kripke, goal: np.ndarray) -> AttributeSummary:
    """:class:`AttributeSummary` of ``tree`` (generated for ``goal`` on ``kripke``) under ``table``; the
    undeclared attributes are those of the tree's steps."""
    evaluation = evaluate(tree, table)
    front = pareto_front(tree, table)
    cheapest, conclusive = cheapest_attack(kripke, goal, table)
    return AttributeSummary(evaluation, front, cheapest, conclusive)
