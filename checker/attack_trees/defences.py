"""Defences against attacks: removing the transitions whose action a predicate selects (a policy
revocation, an actor or a location cut off), or a structure rebuilt without some links, and whether that
blocks every attack within a cost budget; and the best attack over every path of a structure in each
attribute domain.

A :class:`Defence` is a predicate over the Kripke structure's :class:`~checker.mc.ts.Action` labels
(:func:`removing` selects by rule, actor and location), or (:func:`removing_links`) a change of the
model itself that the caller applies by exploring the model without the links (the structure handed to
:func:`cuts` is then the defended one, and no transition of it is removed). :func:`cuts` answers, for a
structure, by recomputing the cheapest attack on the structure without the removed transitions; for a
tree, by the cheapest alternative of the tree that uses no removed step
(:func:`checker.attack_trees.attributes.optimum`).

:func:`best_attack` is a label-setting (Dijkstra) search for the best path from an initial state into
the goal in one domain of :mod:`checker.attack_trees.attributes`: min cost and min time add
non-negative values, max probability multiplies values in [0, 1]. In each, extending a path never makes
it better (a sum of non-negative terms does not decrease, a product of factors <= 1 does not increase),
which is what makes the label-setting search exact and the best walk a simple path; so it is the
optimum over every attack path, which a tree of bounded alternatives may miss. Values stay exact
(``Fraction``) when the attributes are; a zero-probability step gives a path of probability 0, still an
attack.

    >>> from checker.mc.kripke import Kripke
    >>> from checker.mc.ts import Action
    >>> k = Kripke.from_edges(3, [0], [0, 0, 1], [1, 2, 2], action=[0, 1, 0],
    ...                       actions=(Action("get_grad", "sat3"), Action("hack", "eve")))
    >>> steps = {("get_grad", None): {"cost": 1, "probability": Fraction(9, 10)},
    ...          ("hack", "eve"): {"cost": 9, "probability": Fraction(1, 2)}}
    >>> print(cuts(k, removing(rule="get_grad", actor="sat3"), 5, steps, goal=[2]))
    removing transitions of rule get_grad by sat3 blocks every attack of cost <= 5
    >>> print(cuts(k, removing(rule="hack"), 5, steps, goal=[2]))
    removing transitions of rule hack does not block every attack of cost <= 5: get_grad by sat3; \
get_grad by sat3 (cost 2) remains
    >>> best, _ = best_attack(k, [2], steps, MAX_PROBABILITY)
    >>> best.value, best.text()
    (Fraction(81, 100), 'get_grad by sat3; get_grad by sat3')
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from checker.attack_trees.attributes import (
    MAX_PROBABILITY,
    MIN_COST,
    NEUTRAL,
    Domain,
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
from checker.markov.models import state_mask
from checker.mc.kripke import Kripke
from checker.mc.ts import Action
from checker.render import value_text


@dataclass(frozen=True)
class Defence:
    """Remove every transition whose action ``removes`` selects; ``description`` says which, in words
    (``transitions of rule get_grad by sat3``). ``rebuilds``: the defence changes the model (links
    removed), so it is judged on the structure explored without them, where it removes no transition."""

    removes: Callable[[Action], bool]
    description: str
    rebuilds: bool = False

    def __str__(self) -> str:
        return f"removing {self.description}"


def removing_links(links: Iterable[str]) -> Defence:
    """The links named (``ground_station -- orbit3``): a defence judged on the model explored without
    them (:attr:`Defence.rebuilds`)."""
    names = list(links)
    if not names:
        raise ValueError("a link defence needs a link")
    word = "link" if len(names) == 1 else "links"
    return Defence(lambda _action: False, f"{word} {', '.join(names)}", rebuilds=True)


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
    """:func:`cuts`: ``blocks`` is true when no attack of cost ``<= budget`` (``None``: of any cost)
    remains (and the answer is ``conclusive``: on an incomplete exploration an attack may go through
    unexplored states); ``remaining`` is the cheapest remaining attack within the budget, if any.
    ``scope`` says what was searched (``""`` for the whole structure, ``" in the tree"`` for a tree's
    alternatives)."""

    defence: Defence
    budget: Number | None
    blocks: bool
    remaining: Optimum | None
    conclusive: bool = True
    scope: str = ""

    def __str__(self) -> str:
        claim = f"every attack{self.scope}" + (
            " of any cost" if self.budget is None else f" of cost <= {value_text(self.budget)}")
        if self.remaining is not None:
            return (f"{self.defence} does not block {claim}: {self.remaining.text()} "
                    f"(cost {value_text(self.remaining.value)}) remains")
        if not self.conclusive:
            return (f"{self.defence} blocks {claim} through the explored states; the exploration is "
                    "incomplete, so nothing is proved")
        return f"{self.defence} blocks {claim}"


def best_attack(kripke: Kripke, goal: Iterable[int] | np.ndarray, attributes: StepAttributes | StepTable,
                domain: Domain = MIN_COST, *, initial: Iterable[int] | np.ndarray | None = None,
                removed: Callable[[Action], bool] | None = None,
                budget: Number | None = None) -> tuple[Optimum | None, bool]:
    """The best path in ``domain`` from an initial state into ``goal`` over the transitions whose action
    ``removed`` does not select (a label-setting search, see the module docstring; with ``budget``, for
    the cost domain only, a path of cost above it is not searched). Returns ``(best, conclusive)``:
    ``best`` is ``None`` when no such path exists (within the budget); ``conclusive`` is false when the
    search met a frontier state of an incomplete exploration (within the budget). The steps of the path
    are labelled base attacks."""
    if budget is not None and domain is not MIN_COST:
        raise ValueError("a budget bounds the cost domain only")
    table = as_table(attributes)
    goal_mask = state_mask(goal, kripke.num_states)
    init_mask = kripke.initial_mask() if initial is None else state_mask(initial, kripke.num_states)
    action_value = [domain.value(table.vector(a, record=False)) for a in kripke.actions]
    action_open = [removed is None or not removed(a) for a in kripke.actions]
    start: Number = Fraction(domain.value(NEUTRAL))
    best: dict[int, Number] = {}
    parent: dict[int, tuple[int, int]] = {}
    heap: list[tuple[Number, int, int]] = []  # (key, insertion number, state): ties never compare states
    pushed = 0
    for s in np.flatnonzero(init_mask).tolist():
        best[int(s)] = start
        heap.append((domain.key(start), pushed, int(s)))
        pushed += 1
    heapq.heapify(heap)
    conclusive = True
    frontier = kripke.frontier
    ptr, idx, edge_action = kripke.succ_ptr, kripke.succ_idx, kripke.edge_action
    better, sequence = domain.better, domain.sequence
    done: set[int] = set()
    while heap:
        _key, _, state = heapq.heappop(heap)
        if state in done:
            continue
        done.add(state)
        value = best[state]
        if goal_mask[state]:
            edges: list[int] = []
            while state in parent:
                state, edge = parent[state]
                edges.append(edge)
            edges.reverse()
            steps = tuple(BaseAttack({int(kripke.edge_src[e])}, {int(idx[e])},
                                     step_label(kripke, int(kripke.edge_src[e]), int(idx[e]), e))
                          for e in edges)
            return Optimum(value, steps), conclusive
        if frontier is not None and frontier[state]:
            conclusive = False
        for edge in range(int(ptr[state]), int(ptr[state + 1])):
            action = int(edge_action[edge])
            if not action_open[action]:
                continue
            target, reached = int(idx[edge]), sequence(value, action_value[action])
            if budget is not None and reached > budget:
                continue
            if target not in done and (target not in best or better(reached, best[target])):
                best[target] = reached
                parent[target] = (state, edge)
                heapq.heappush(heap, (domain.key(reached), pushed, target))
                pushed += 1
    return None, conclusive


def cheapest_attack(kripke: Kripke, goal: Iterable[int] | np.ndarray,
                    attributes: StepAttributes | StepTable, *,
                    initial: Iterable[int] | np.ndarray | None = None,
                    removed: Callable[[Action], bool] | None = None,
                    budget: Number | None = None) -> tuple[Optimum | None, bool]:
    """:func:`best_attack` in the cost domain."""
    return best_attack(kripke, goal, attributes, MIN_COST, initial=initial, removed=removed, budget=budget)


def most_probable_attack(kripke: Kripke, goal: Iterable[int] | np.ndarray,
                         attributes: StepAttributes | StepTable, *,
                         initial: Iterable[int] | np.ndarray | None = None,
                         removed: Callable[[Action], bool] | None = None) -> tuple[Optimum | None, bool]:
    """:func:`best_attack` in the probability domain (steps succeeding independently)."""
    return best_attack(kripke, goal, attributes, MAX_PROBABILITY, initial=initial, removed=removed)


def cuts(target: AttackTree | Kripke, defence: Defence, budget: int | Fraction | float | None,
         attributes: StepAttributes | StepTable, *, goal: Iterable[int] | np.ndarray | None = None,
         initial: Iterable[int] | np.ndarray | None = None) -> Cut:
    """Does ``defence`` block every attack of cost ``<= budget`` (``None``: of any cost)? On a structure
    (``goal`` required, ``initial`` defaults to its initial states) the cheapest attack is recomputed
    without the removed transitions; for a defence that :attr:`~Defence.rebuilds` the model, the structure
    must be the one explored without its links. On a tree, the cheapest alternative of the tree without a
    removed step is taken (not for a rebuilding defence: the tree of another structure says nothing)."""
    limit = None if budget is None else exact_number(budget, "budget")
    table = as_table(attributes)
    if isinstance(target, Kripke):
        if goal is None:
            raise ValueError("cuts on a structure needs the goal states")
        found, conclusive = cheapest_attack(target, goal, table, initial=initial, removed=defence.removes,
                                            budget=limit)
        return Cut(defence, limit, found is None and conclusive, found, conclusive)
    if defence.rebuilds:
        raise ValueError(f"{defence} changes the model: judge it on the structure explored without it")

    def blocked(node: BaseAttack) -> bool:
        return node.label is not None and node.label.action is not None and defence.removes(node.label.action)

    cheapest = optimum(target, table, MIN_COST, blocked)
    remaining = cheapest if cheapest is not None and (limit is None or cheapest.value <= limit) else None
    return Cut(defence, limit, remaining is None, remaining, True, " in the tree")
