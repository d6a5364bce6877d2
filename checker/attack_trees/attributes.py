"""Attributes of attacks: cost, success probability and time of the base steps of an IIIf attack tree,
evaluated bottom-up along its and/or structure, and the Pareto front of its alternatives.

Attributes are declared per ``(rule, actor)`` pair of the Kripke structure's actions, with a default per
rule under ``(rule, None)`` (:data:`StepAttributes`)::

    {("get_grad", "sat3"): {"cost": 5, "probability": Fraction(1, 2), "time": 2},
     ("get_grad", None): {"cost": 1}}

Each attribute of a step is looked up under ``(rule, actor)``, then under ``(rule, None)``; a step with no
declaration of an attribute gets that attribute's neutral value (cost 0, probability 1, time 0), which
makes the step free for the attacker: the safe side for a defender, and :attr:`Evaluation.undeclared`
names such steps. Values are non-negative, probabilities at most 1; integers and fractions stay exact
``Fraction`` values, floats stay floats.

Domains (:class:`Domain`), in IIIf's node kinds ([IIIf], theory ``AT``): a :class:`BaseAttack` is one step
and carries the attribute of its action; an :class:`AndAttack` is *sequential* refinement (the goal of
each sub-attack is the start of the next, rule [att_and]) and an :class:`OrAttack` is a choice between
alternatives. IIIf's ``attree`` has no parallel conjunction, so every conjunction is sequential.

* cost: min over an or-attack, sum over an and-attack;
* probability of success: max over an or-attack (the attacker commits to one alternative), product over
  an and-attack — assuming the steps succeed *independently* of each other;
* time: min over an or-attack, sum over an and-attack (sequential composition; a parallel conjunction,
  which IIIf trees do not have, would take the max).

An empty and- or or-attack ``[] ⊕ (I, s)`` is valid only when ``I ⊆ s``: nothing to do, the neutral values.
The value of a tree is the optimum over the alternatives it holds; a generated tree holds the alternatives
the search kept (:func:`checker.attack_trees.generation.generate_attack_tree`, ``truncated`` says whether
a bound cut it). With ``distinguish="paths"`` and ``max_depth`` at least ``num_states - 1`` it holds every
first-hitting simple path, and the optimum is the optimum over all attacks of the structure: a path that
revisits a state or passes the goal early is never better (values are non-negative, probabilities ≤ 1).

    >>> from checker.mc.kripke import Kripke
    >>> from checker.mc.ts import Action
    >>> from checker.attack_trees.generation import generate_attack_tree
    >>> k = Kripke.from_edges(3, [0], [0, 0, 1], [1, 2, 2], action=[0, 1, 0],
    ...                       actions=(Action("get_grad", "sat1"), Action("hack", "eve")))
    >>> steps = {("get_grad", None): {"cost": 1, "probability": Fraction(9, 10), "time": 1},
    ...          ("hack", "eve"): {"cost": 5, "probability": Fraction(1, 2), "time": 1}}
    >>> found = generate_attack_tree(k, [2], distinguish="paths")
    >>> result = evaluate(found.tree, steps)
    >>> result.cost.value, result.probability.value, result.time.value
    (Fraction(2, 1), Fraction(81, 100), Fraction(1, 1))
    >>> [(str(p.cost), str(p.probability), str(p.time), p.text()) for p in pareto_front(found.tree, steps)]
    [('2', '81/100', '2', 'get_grad by sat1; get_grad by sat1'), ('5', '1/2', '1', 'hack by eve')]
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, NamedTuple, TypedDict

from checker.attack_trees.tree import AttackTree, BaseAttack
from checker.mc.ts import Action

Number = Fraction | float
AttributeName = Literal["cost", "probability", "time"]
ATTRIBUTE_NAMES: tuple[AttributeName, ...] = ("cost", "probability", "time")


class AttributeValues(TypedDict, total=False):
    """The attributes of one kind of step; a missing one falls back to the rule's default, then to the
    neutral value."""

    cost: int | Fraction | float
    probability: int | Fraction | float
    time: int | Fraction | float


StepKey = tuple[str, str | None]
"""``(rule, actor)``; ``(rule, None)`` holds the rule's default."""

StepAttributes = Mapping[StepKey, AttributeValues]


class Vector(NamedTuple):
    """The attributes of a step or of an alternative."""

    cost: Number
    probability: Number
    time: Number


NEUTRAL = Vector(Fraction(0), Fraction(1), Fraction(0))


def exact_number(value: object, what: str) -> Number:
    """``value`` as a ``Fraction`` (integers, fractions, decimals) or a finite float; ``ValueError`` for
    anything else (booleans, NaN, infinities, strings)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what}: {value!r} is not a number")
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    as_float = float(value)
    if not math.isfinite(as_float):
        raise ValueError(f"{what}: {value!r} is not finite")
    return as_float


def _checked(name: AttributeName, value: object, key: StepKey) -> Number:
    what = f"{name} of {key[0]} by {key[1] if key[1] is not None else 'any actor'}"
    number = exact_number(value, what)
    if number < 0:
        raise ValueError(f"{what}: {value!r} is negative")
    if name == "probability" and number > 1:
        raise ValueError(f"{what}: {value!r} is more than 1")
    return number


class StepTable:
    """The declared attributes resolved per action (``(rule, actor)``, then ``(rule, None)``, then the
    neutral value), with the steps that used a neutral value recorded in :attr:`undeclared`."""

    def __init__(self, attributes: StepAttributes):
        self._declared: dict[StepKey, dict[AttributeName, Number]] = {}
        for key, values in attributes.items():
            unknown = sorted(set(values) - set(ATTRIBUTE_NAMES))
            if unknown:
                raise ValueError(f"unknown attribute(s) {', '.join(unknown)} for {key}; known: "
                                 + ", ".join(ATTRIBUTE_NAMES))
            checked: dict[AttributeName, Number] = {}
            for name in ATTRIBUTE_NAMES:
                if name in values:
                    checked[name] = _checked(name, values[name], key)
            self._declared[key] = checked
        self._cache: dict[StepKey, tuple[Vector, tuple[AttributeName, ...]]] = {}
        self.undeclared: set[tuple[StepKey, AttributeName]] = set()

    def vector(self, action: Action, *, record: bool = True) -> Vector:
        """The attributes of ``action``'s steps; ``record``: note the neutral ones in
        :attr:`undeclared` (a search over every action of a structure passes ``False``: only the steps of
        the attacks it reports are the caller's to record)."""
        key: StepKey = (action.rule, action.actor)
        found = self._cache.get(key)
        if found is None:
            own = self._declared.get(key, {})
            rule_default = self._declared.get((action.rule, None), {})
            values: list[Number] = []
            neutral_names: list[AttributeName] = []
            for name, neutral in zip(ATTRIBUTE_NAMES, NEUTRAL, strict=True):
                if name in own:
                    values.append(own[name])
                elif name in rule_default:
                    values.append(rule_default[name])
                else:
                    neutral_names.append(name)
                    values.append(neutral)
            found = (Vector(*values), tuple(neutral_names))
            self._cache[key] = found
        if record:
            self.undeclared.update((key, name) for name in found[1])
        return found[0]

    def step(self, node: BaseAttack) -> Vector:
        if node.label is None or node.label.action is None:
            raise ValueError(f"base attack {sorted(node.pre)} -> {sorted(node.post)} has no action label: "
                             "generate the tree with labels=True")
        return self.vector(node.label.action)


def as_table(attributes: StepAttributes | StepTable) -> StepTable:
    return attributes if isinstance(attributes, StepTable) else StepTable(attributes)


@dataclass(frozen=True)
class Domain:
    """An attribute domain: ``choose`` picks the better of two alternatives (or-attack), ``sequence``
    combines sub-attacks done one after the other (and-attack)."""

    attribute: AttributeName
    title: str
    better: Callable[[Number, Number], bool]
    sequence: Callable[[Number, Number], Number]
    maximise: bool = False

    def value(self, vector: Vector) -> Number:
        value: Number = getattr(vector, self.attribute)
        return value

    def key(self, value: Number) -> Number:
        """A sort key under which the better value is the smaller one."""
        return -value if self.maximise else value


MIN_COST = Domain("cost", "minimal cost", operator.lt, operator.add)
MAX_PROBABILITY = Domain("probability", "maximal probability of success", operator.gt, operator.mul, True)
MIN_TIME = Domain("time", "minimal time", operator.lt, operator.add)
DOMAINS: tuple[Domain, ...] = (MIN_COST, MAX_PROBABILITY, MIN_TIME)

Alternative = tuple[BaseAttack, ...]


def alternative_text(steps: Sequence[BaseAttack]) -> str:
    """``rule by actor; rule by actor`` (the actions of the steps, in order)."""
    if not steps:
        return "nothing to do (already in the goal)"
    return "; ".join(s.label.action_text() if s.label is not None else "step" for s in steps)


@dataclass(frozen=True)
class Optimum:
    """The best value of a domain over the alternatives of a tree, with one alternative reaching it
    (its base steps in order)."""

    value: Number
    alternative: Alternative

    def text(self) -> str:
        return alternative_text(self.alternative)


def optimum(tree: AttackTree, attributes: StepAttributes | StepTable, domain: Domain,
            blocked: Callable[[BaseAttack], bool] | None = None,
            order: Sequence[AttackTree] | None = None) -> Optimum | None:
    """The best ``domain`` value over the alternatives of ``tree`` (``None`` when every alternative uses
    a ``blocked`` step). Bottom-up over the shared DAG, each node once: the first best child of an
    or-attack, the sequence of the children of an and-attack. ``order`` is ``tree.postorder()``, when
    the caller already has it."""
    table = as_table(attributes)
    memo: dict[int, Optimum | None] = {}
    neutral = domain.value(NEUTRAL)
    better, sequence = domain.better, domain.sequence
    for node in tree.postorder() if order is None else order:
        result: Optimum | None
        if isinstance(node, BaseAttack):
            result = (None if blocked is not None and blocked(node)
                      else Optimum(domain.value(table.step(node)), (node,)))
        elif not node.children:
            result = Optimum(neutral, ())
        elif node.kind == "and":
            value = neutral
            steps: Alternative = ()
            for child in node.children:
                found = memo[id(child)]
                if found is None:
                    result = None
                    break
                value, steps = sequence(value, found.value), steps + found.alternative
            else:
                result = Optimum(value, steps)
        else:
            result = None
            for child in node.children:
                found = memo[id(child)]
                if found is not None and (result is None or better(found.value, result.value)):
                    result = found
        memo[id(node)] = result
    return memo[id(tree)]


def _unblocked(found: Optimum | None) -> Optimum:
    """Without blocked steps every node has an optimum (an empty node has the neutral one)."""
    assert found is not None
    return found


@dataclass(frozen=True)
class Evaluation:
    """:func:`evaluate`: the optimum of each domain and the ``(rule, actor)`` attributes that were not
    declared and counted as neutral."""

    cost: Optimum
    probability: Optimum
    time: Optimum
    undeclared: tuple[tuple[StepKey, AttributeName], ...]


def evaluate(tree: AttackTree, attributes: StepAttributes | StepTable) -> Evaluation:
    """Minimal cost, maximal probability of success and minimal time of ``tree`` (see the module
    docstring for the domains)."""
    table = as_table(attributes)
    order = tree.postorder()
    cost, probability, time = (_unblocked(optimum(tree, table, domain, order=order)) for domain in DOMAINS)
    return Evaluation(cost, probability, time, tuple(sorted(table.undeclared, key=str)))


@dataclass(frozen=True)
class ParetoPoint:
    """A point of the Pareto front: the attributes of one alternative that no other alternative
    dominates, and that alternative."""

    vector: Vector
    alternative: Alternative

    @property
    def cost(self) -> Number:
        return self.vector.cost

    @property
    def probability(self) -> Number:
        return self.vector.probability

    @property
    def time(self) -> Number:
        return self.vector.time

    def text(self) -> str:
        return alternative_text(self.alternative)


def dominates(a: Vector, b: Vector) -> bool:
    """``a`` is at least as good as ``b`` in every attribute (cost and time no higher, probability no
    lower) and better in one."""
    return a != b and a.cost <= b.cost and a.probability >= b.probability and a.time <= b.time


def non_dominated(points: Iterable[ParetoPoint]) -> list[ParetoPoint]:
    """The points no other point dominates, one per vector (the first given), by increasing cost.

    Sorted by (cost, −probability, time), a point can only be dominated by an earlier one, and a point
    dominated by a dropped point is dominated by what dominated that one; so each point is compared
    with the kept ones only."""
    ordered = sorted(points, key=lambda p: (p.cost, -p.probability, p.time))
    kept: list[ParetoPoint] = []
    seen: set[Vector] = set()
    for point in ordered:
        if point.vector in seen:
            continue
        if not any(dominates(other.vector, point.vector) for other in kept):
            kept.append(point)
            seen.add(point.vector)
    return kept


def _sequence(first: Vector, second: Vector) -> Vector:
    return Vector(first.cost + second.cost, first.probability * second.probability, first.time + second.time)


def pareto_front(tree: AttackTree, attributes: StepAttributes | StepTable) -> list[ParetoPoint]:
    """The non-dominated (cost, probability, time) vectors over the alternatives of ``tree``, each with
    one alternative that has it, by increasing cost. Bottom-up: an or-attack keeps the non-dominated
    points of its children, an and-attack the non-dominated sequences of one point per child (sequencing
    is monotone, so a dominated part never makes a non-dominated whole)."""
    table = as_table(attributes)
    memo: dict[int, list[ParetoPoint]] = {}
    for node in tree.postorder():
        front: list[ParetoPoint]
        if isinstance(node, BaseAttack):
            front = [ParetoPoint(table.step(node), (node,))]
        elif not node.children:
            front = [ParetoPoint(NEUTRAL, ())]
        elif node.kind == "and":
            front = [ParetoPoint(NEUTRAL, ())]
            for child in node.children:
                front = non_dominated(ParetoPoint(_sequence(left.vector, right.vector),
                                                  left.alternative + right.alternative)
                                      for left in front for right in memo[id(child)])
        else:
            front = non_dominated(point for child in node.children for point in memo[id(child)])
        memo[id(node)] = front
    return memo[id(tree)]
