"""The seam between a model and the checker: a transition-system protocol (mirrors IIIf's ``state``
class, see ``spec/IIIF.md``, MC).

The checker asks a model only for
- its initial states,
- the successors of a state, each with the :class:`Action` that produced it and its probability, and
- the values of named observables on a state.

Probabilities: the steps leaving one state that carry the *same* action form one probability
distribution (their probabilities sum to exactly 1); different actions from one state are a
nondeterministic choice (an MDP). A non-probabilistic step has probability 1.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from fractions import Fraction
from typing import Generic, NamedTuple, Protocol, TypeVar, runtime_checkable

from flcheck_spec.vocab import Action

T = TypeVar("T", bound=Hashable)

#: Values an observable can take: exact numbers, names, sets/tuples of them, booleans.
ObservableValue = object


class Step(NamedTuple, Generic[T]):
    """One outgoing transition: ``action`` leads to ``target`` with ``probability``.

    A model that must not import the checker (flmodel) yields plain tuples
    ``(action, target, probability)``; its action objects only need to be hashable and to have the
    attributes ``rule``, ``actor``, ``location`` and ``detail`` (see :func:`as_action`)."""

    action: Action
    target: T
    probability: Fraction = Fraction(1)


def as_action(obj: object) -> Action:
    """Convert a model's action object (duck-typed: ``rule``, ``actor``, ``location``, ``detail``;
    or a plain string naming the rule) to a checker :class:`Action`."""
    if isinstance(obj, Action):
        return obj
    if isinstance(obj, str):
        return Action(obj)
    return Action(
        str(obj.rule),  # type: ignore[attr-defined]
        getattr(obj, "actor", None),
        getattr(obj, "location", None),
        str(getattr(obj, "detail", "") or ""),
    )


@runtime_checkable
class TransitionSystem(Protocol[T]):
    """What the checker needs of a model. States must be hashable (they are interned to ids)."""

    def initial_states(self) -> Iterable[T]:
        """The initial states (IIIf: the set ``init`` of the Kripke structure)."""
        ...

    def successors(self, state: T) -> Iterable[Step[T]]:
        """All steps from ``state``; empty for a deadlock state."""
        ...

    def observable_names(self) -> Sequence[str]:
        """Names of the observables this model offers (e.g. ``clients``, ``ready``, ``curmodpar``)."""
        ...

    def observe(self, state: T, name: str) -> ObservableValue:
        """Value of observable ``name`` on ``state``; raise ``KeyError`` for an unknown name."""
        ...


def check_distributions(state_label: str, steps: Sequence[Step[object]]) -> None:
    """Raise ``ValueError`` naming the state and action when the probabilities of one action's steps
    are negative or do not sum to exactly 1 (silent wrong answers on malformed models are the most
    common complaint about probabilistic checkers)."""
    totals: dict[Action, Fraction] = {}
    for step in steps:
        p = Fraction(step.probability)
        if p < 0:
            raise ValueError(f"state {state_label}: action {step.action} has negative probability {p}")
        totals[step.action] = totals.get(step.action, Fraction(0)) + p
    for action, total in totals.items():
        if total != 1:
            raise ValueError(
                f"state {state_label}: probabilities of action {action} sum to {total}, not 1"
            )
