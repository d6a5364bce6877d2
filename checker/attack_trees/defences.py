"""Defences against attacks: removing the transitions whose action a predicate selects (a policy
revocation, a link removal), and whether that blocks every attack within a cost budget.

A :class:`Defence` is a predicate over the Kripke structure's :class:`~checker.mc.ts.Action` labels
(:func:`removing` selects by rule, actor and location). :func:`cuts` answers, for a structure, by
recomputing the cheapest attack on the structure without the removed transitions (a shortest-path
search: costs are non-negative, so the cheapest walk is a simple path and the search is exact); for a
tree, by the cheapest alternative of the tree that uses no removed step
(:func:`checker.attack_trees.attributes.optimum`).

    >>> from checker.mc.kripke import Kripke
    >>> from checker.mc.ts import Action
    >>> k = Kripke.from_edges(3, [0], [0, 0, 1], [1, 2, 2], action=[0, 1, 0],
    ...                       actions=(Action("get_grad", "sat3"), Action("hack", "eve")))
    >>> steps = {("get_grad", None): {"cost": 1}, ("hack", "eve"): {"cost": 9}}
    >>> print(cuts(k, removing(rule="get_grad", actor="sat3"), 5, steps, goal=[2]))
    removing transitions of rule get_grad by sat3 blocks every attack of cost <= 5
    >>> print(cuts(k, removing(rule="hack"), 5, steps, goal=[2]))
    removing transitions of rule hack does not block every attack of cost <= 5: get_grad by sat3; \
get_grad by sat3 (cost 2) remains
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from checker.attack_trees.attributes import (
    MIN_COST,
    Number,
    Optimum,
    StepAttributes,
    StepTable,
    as_table,
    exact_number,
    optimum,
)
from checker.attack_trees.labels import step_label
from checker.attack_trees.tree import AttackTree, BaseAttack
from checker.io.render import value_text
from checker.markov.models import state_mask
from checker.mc.kripke import Kripke
from checker.mc.ts import Action


@dataclass(frozen=True)
class Defence:
    """Remove every transition whose action ``removes`` selects; ``description`` says which, in words
    (``transitions of rule get_grad by sat3``)."""

    removes: Callable[[Action], bool]
    description: str

    def __str__(self) -> str:
        return f"removing {self.description}"


def removing(rule: str | None = None, actor: str | None = None, location: str | None = None) -> Defence:
    """The transitions whose action has the given rule, actor and location (``None``: any)."""
    if rule is None and actor is None and location is None:
        raise ValueError("a defence needs a rule, an actor or a location")

    def removes(action: Action) -> bool:
        return ((rule is None or action.rule == rule) and (actor is None or action.actor == actor)
                and (location is None or action.location == location))

    words = ["transitions"]
    if rule is not None:
        words.append(f"of rule {rule}")
    if actor is not None:
        words.append(f"by {actor}")
    if location is not None:
        words.append(f"at {location}")
    return Defence(removes, " ".join(words))


@dataclass(frozen=True)
class Cut:
    """:func:`cuts`: ``blocks`` is true when no attack of cost ``<= budget`` remains (and the answer is
    ``conclusive``: on an incomplete exploration an attack may go through unexplored states);
    ``remaining`` is the cheapest remaining attack within the budget, if any. ``scope`` says what was
    searched (``""`` for the whole structure, ``" in the tree"`` for a tree's alternatives)."""

    defence: Defence
    budget: Number
    blocks: bool
    remaining: Optimum | None
    conclusive: bool = True
    scope: str = ""

    def __str__(self) -> str:
        claim = f"every attack{self.scope} of cost <= {value_text(self.budget)}"
        if self.remaining is not None:
            return (f"{self.defence} does not block {claim}: {self.remaining.text()} "
                    f"(cost {value_text(self.remaining.value)}) remains")
        if not self.conclusive:
            return (f"{self.defence} blocks {claim} through the explored states; the exploration is "
                    "incomplete, so nothing is proved")
        return f"{self.defence} blocks {claim}"


def cheapest_attack(kripke: Kripke, goal: Iterable[int] | np.ndarray,
                    attributes: StepAttributes | StepTable, *,
                    initial: Iterable[int] | np.ndarray | None = None,
                    removed: Callable[[Action], bool] | None = None,
                    budget: Number | None = None) -> tuple[Optimum | None, bool]:
    """The cheapest path from an initial state into ``goal`` over the transitions whose action
    ``removed`` does not select (Dijkstra's search; a path of cost above ``budget`` is not searched).
    Returns ``(cheapest, conclusive)``: ``cheapest`` is ``None`` when no such path exists (within the
    budget); ``conclusive`` is false when the search met a frontier state of an incomplete exploration
    within the budget. The steps of the path are labelled base attacks."""
    table = as_table(attributes)
    goal_mask = state_mask(goal, kripke.num_states)
    init_mask = kripke.initial_mask() if initial is None else state_mask(initial, kripke.num_states)
    action_cost = [table.vector(a).cost for a in kripke.actions]
    action_open = [removed is None or not removed(a) for a in kripke.actions]
    best: dict[int, Number] = {}
    parent: dict[int, tuple[int, int]] = {}
    heap: list[tuple[Number, int]] = [(Fraction(0), int(s)) for s in np.flatnonzero(init_mask).tolist()]
    for _, s in heap:
        best[s] = Fraction(0)
    heapq.heapify(heap)
    conclusive = True
    frontier = kripke.frontier
    ptr, idx, edge_action = kripke.succ_ptr, kripke.succ_idx, kripke.edge_action
    while heap:
        cost, state = heapq.heappop(heap)
        if cost > best[state]:
            continue
        if goal_mask[state]:
            edges: list[int] = []
            while state in parent:
                state, edge = parent[state]
                edges.append(edge)
            edges.reverse()
            steps = tuple(BaseAttack({int(kripke.edge_src[e])}, {int(idx[e])},
                                     step_label(kripke, int(kripke.edge_src[e]), int(idx[e]), e))
                          for e in edges)
            return Optimum(cost, steps), conclusive
        if frontier is not None and frontier[state]:
            conclusive = False
        for edge in range(int(ptr[state]), int(ptr[state + 1])):
            action = int(edge_action[edge])
            if not action_open[action]:
                continue
            target, reached = int(idx[edge]), cost + action_cost[action]
            if budget is not None and reached > budget:
                continue
            if target not in best or reached < best[target]:
                best[target] = reached
                parent[target] = (state, edge)
                heapq.heappush(heap, (reached, target))
    return None, conclusive


def cuts(target: AttackTree | Kripke, defence: Defence, budget: int | Fraction | float,
         attributes: StepAttributes | StepTable, *, goal: Iterable[int] | np.ndarray | None = None,
         initial: Iterable[int] | np.ndarray | None = None) -> Cut:
    """Does ``defence`` block every attack of cost ``<= budget``? On a structure (``goal`` required,
    ``initial`` defaults to its initial states) the cheapest attack is recomputed without the removed
    transitions; on a tree, the cheapest alternative of the tree without a removed step is taken."""
    limit = exact_number(budget, "budget")
    table = as_table(attributes)
    if isinstance(target, Kripke):
        if goal is None:
            raise ValueError("cuts on a structure needs the goal states")
        found, conclusive = cheapest_attack(target, goal, table, initial=initial, removed=defence.removes,
                                            budget=limit)
        return Cut(defence, limit, found is None and conclusive, found, conclusive)

    def blocked(node: BaseAttack) -> bool:
        return node.label is not None and node.label.action is not None and defence.removes(node.label.action)

    cheapest = optimum(target, table, MIN_COST, blocked)
    remaining = cheapest if cheapest is not None and cheapest.value <= limit else None
    return Cut(defence, limit, remaining is None, remaining, True, " in the tree")

