"""Finite acyclic MDPs with observations, and the joint history tree of two of them.

An :class:`ObservableMDP` is the model of one run of a system on one dataset: an initial distribution
over states, for each state its enabled actions (names) and per action a distribution over successor
states, and an observation per state.  A scheduler resolves the nondeterminism seeing at most what an
observer of the system sees: the observations so far and its own actions, never the hidden states (an
adaptive scheduler sees both, a blind one only its own actions: :mod:`checker.privacy.schedulers`).
Two such MDPs (one per neighbouring dataset D, D') that share their action and observation vocabulary
are compared under ONE scheduler, as in the operator ``D{ε,δ}`` of [dpCTL] read over the scheduler
quantification of [HyperPCTL].

A *history* is ``h = (o0, a1, o1, ..., ak, ok)``.  Its *masses* are the sub-distributions over states
of D and D' reached along ``h`` when the scheduler plays ``a1, ..., ak`` there:
``m_D(o0) = init_D restricted to obs = o0`` and ``m_D(h a o)(t) = Σ_s m_D(h)(s) · P_D(s, a, t)`` over
``t`` with ``obs(t) = o``.  These masses depend on ``h`` only (the actions in ``h`` are the
scheduler's), which is what makes :mod:`checker.privacy.schedulers` work.  :func:`build_history_tree`
builds every history with positive mass in D or D' (breadth first) and checks that the enabled actions
are the same at all states of D and D' that a history can be in: a scheduler that sees only the
history must be offered one set of actions.

This module is generic (it never imports ``flmodel``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from checker.errors import Undecided
from checker.privacy.ni_fl_dp import Number, validate_distribution

__all__ = [
    "Action",
    "History",
    "HistoryTree",
    "ObservableMDP",
    "build_history_tree",
    "format_history",
    "ordered",
]

State = Hashable
Observation = Hashable
Action = str
#: ``(o0, a1, o1, ..., ak, ok)``: observations at even positions, the scheduler's actions at odd ones.
History = tuple[Hashable, ...]


def ordered(keys: Iterable[Hashable]) -> list[Hashable]:
    """The keys in a deterministic order: sorted when comparable, else by ``repr``."""
    unique = list(dict.fromkeys(keys))
    try:
        return sorted(unique)  # type: ignore[type-var]  # falls back to repr order when not comparable
    except TypeError:
        return sorted(unique, key=repr)


def format_history(history: History) -> str:
    """``o0 -a1-> o1 -a2-> o2`` in the model's terms (observation values and action names)."""
    text = str(history[0])
    for position in range(1, len(history), 2):
        text += f" -{history[position]}-> {history[position + 1]}"
    return text


@dataclass(frozen=True)
class ObservableMDP:
    """A finite acyclic MDP whose states carry observations.

    ``initial``: state -> probability.  ``transitions``: state -> action name -> successor -> probability
    (a state absent from ``transitions``, or mapped to no action, is terminal).  ``observation``: a mapping
    or a function state -> hashable observation.  Probabilities are exact (``Fraction``/``int``) or
    ``float``; :meth:`validate` checks distributions, observations and acyclicity.
    """

    # States are any hashable values; ``Any`` keys because ``Mapping`` is invariant in its key type
    # (a ``dict[str, Fraction]`` is not a ``Mapping[Hashable, Fraction]``).
    initial: Mapping[Any, Number]
    transitions: Mapping[Any, Mapping[Action, Mapping[Any, Number]]]
    observation: Mapping[Any, Observation] | Callable[[Any], Observation]

    def observe(self, state: State) -> Observation:
        if isinstance(self.observation, Mapping):
            if state not in self.observation:
                raise ValueError(f"state {state!r} has no observation")
            return self.observation[state]
        return self.observation(state)

    def enabled(self, state: State) -> tuple[Action, ...]:
        """The enabled actions of ``state``, sorted by name (empty: terminal)."""
        return tuple(sorted(self.transitions.get(state, {})))

    def probabilities(self) -> Iterable[Number]:
        yield from self.initial.values()
        for actions in self.transitions.values():
            for successors in actions.values():
                yield from successors.values()

    def validate(self, name: str = "MDP") -> None:
        """Raise ``ValueError`` naming ``name`` and the culprit when a distribution is not one, a state
        has no observation, or the transition graph has a cycle."""
        validate_distribution(self.initial, f"{name}: initial distribution")
        for state, actions in self.transitions.items():
            for action, successors in actions.items():
                if not isinstance(action, str):
                    raise ValueError(f"{name}: action {action!r} of state {state!r} is not a name (str)")
                validate_distribution(successors, f"{name}: state {state!r}, action {action!r}")
        states = set(self.initial) | set(self.transitions)
        for actions in self.transitions.values():
            for successors in actions.values():
                states.update(successors)
        for state in states:
            self.observe(state)
        self._check_acyclic(name, states)

    def _check_acyclic(self, name: str, states: set[State]) -> None:
        done: set[State] = set()
        for start in ordered(states):
            if start in done:
                continue
            on_path: set[State] = {start}
            stack: list[tuple[State, list[State]]] = [(start, self._successors(start))]
            while stack:
                state, pending = stack[-1]
                if not pending:
                    stack.pop()
                    on_path.discard(state)
                    done.add(state)
                    continue
                successor = pending.pop()
                if successor in on_path:
                    raise Undecided(f"{name}: the MDP is not acyclic: state {successor!r} reaches itself")
                if successor not in done:
                    on_path.add(successor)
                    stack.append((successor, self._successors(successor)))

    def _successors(self, state: State) -> list[State]:
        return [t for successors in self.transitions.get(state, {}).values() for t, p in successors.items()
                if p != 0]


@dataclass(frozen=True)
class HistoryTree:
    """Every history with positive mass in D or D', breadth first (a parent before its children).

    Node ``n`` has ``histories[n]``, ``enabled[n]`` (empty: a leaf), ``children[n][a]`` (the nodes
    ``h a o``, one per next observation ``o``) and ``mass[n] = (P_D(h), P_D'(h))``, the total masses.
    ``roots`` are the histories ``(o0,)``; ``exact`` says that every probability is a ``Fraction``.
    """

    histories: tuple[History, ...]
    enabled: tuple[tuple[Action, ...], ...]
    children: tuple[Mapping[Action, tuple[int, ...]], ...]
    mass: tuple[tuple[Number, Number], ...]
    roots: tuple[int, ...]
    exact: bool

    def __len__(self) -> int:
        return len(self.histories)

    def observation(self, node: int) -> Observation:
        """The current (last) observation of the node's history."""
        return self.histories[node][-1]

    def is_leaf(self, node: int) -> bool:
        return not self.enabled[node]

    def outcome(self, node: int, kind: str) -> Hashable:
        """What the attacker sees of a complete history: the observation sequence (``"sequence"``)
        or the last observation (``"final"``)."""
        if kind == "sequence":
            return self.histories[node][0::2]
        if kind == "final":
            return self.histories[node][-1]
        raise ValueError(f"unknown outcome {kind!r}: expected 'sequence' or 'final'")

    def leaves(self) -> list[int]:
        return [n for n in range(len(self)) if not self.enabled[n]]


def build_history_tree(d: ObservableMDP, d_prime: ObservableMDP, *,
                       max_histories: int | None = 1_000_000) -> HistoryTree:
    """Validate both MDPs and build their joint :class:`HistoryTree`.

    Raises ``ValueError`` when a model is invalid (see :meth:`ObservableMDP.validate`), when the
    states that one history can be in (in D or in D') do not all enable the same actions (the message
    names the history), or when there are more than ``max_histories`` histories.
    """
    d.validate("D")
    d_prime.validate("D'")
    exact = all(isinstance(p, (Fraction, int)) for m in (d, d_prime) for p in m.probabilities())
    zero: Number = Fraction(0) if exact else 0.0

    def number(p: Number) -> Number:
        return Fraction(p) if exact else float(p)

    histories: list[History] = []
    enabled: list[tuple[Action, ...]] = []
    children: list[dict[Action, tuple[int, ...]]] = []
    mass: list[tuple[Number, Number]] = []
    Masses = tuple[dict[State, Number], dict[State, Number]]
    pending: list[Masses] = []

    def add(history: History, masses: Masses) -> int:
        if max_histories is not None and len(histories) >= max_histories:
            raise Undecided(f"more than {max_histories} histories; raise max_histories or shrink the model")
        histories.append(history)
        enabled.append(_common_enabled(history, masses, d, d_prime))
        children.append({})
        mass.append((sum(masses[0].values(), zero), sum(masses[1].values(), zero)))
        pending.append(masses)
        return len(histories) - 1

    def group(steps: list[list[tuple[State, Number]]]) -> dict[Observation, Masses]:
        """Sum the weighted states of each side by their observation."""
        by_observation: dict[Observation, Masses] = {}
        for side, mdp in ((0, d), (1, d_prime)):
            for state, p in steps[side]:
                if p == 0:
                    continue
                target = by_observation.setdefault(mdp.observe(state), ({}, {}))[side]
                target[state] = target.get(state, zero) + p
        return {o: by_observation[o] for o in ordered(by_observation)}

    roots = group([[(s, number(p)) for s, p in m.initial.items()] for m in (d, d_prime)])
    root_ids = tuple(add((o,), masses) for o, masses in roots.items())
    node = 0
    while node < len(histories):
        masses = pending[node]
        pending[node] = ({}, {})
        history = histories[node]
        for action in enabled[node]:
            successors = group([[(t, weight * number(p)) for s, weight in masses[side].items()
                                 for t, p in mdp.transitions[s][action].items()]
                                for side, mdp in ((0, d), (1, d_prime))])
            children[node][action] = tuple(add((*history, action, o), m) for o, m in successors.items())
        node += 1
    return HistoryTree(tuple(histories), tuple(enabled), tuple(children), tuple(mass), root_ids, exact)


def _common_enabled(history: History, masses: tuple[dict[State, Number], dict[State, Number]],
                    d: ObservableMDP, d_prime: ObservableMDP) -> tuple[Action, ...]:
    """The one set of actions enabled at every state that ``history`` can be in; ``ValueError``
    naming the history when they differ."""
    seen: dict[tuple[Action, ...], tuple[str, State]] = {}
    for name, mdp, side in (("D", d, masses[0]), ("D'", d_prime, masses[1])):
        for state, weight in side.items():
            if weight != 0:
                seen.setdefault(mdp.enabled(state), (name, state))
    if len(seen) > 1:
        listed = "; ".join(f"{name} state {state!r} enables {{{', '.join(actions)}}}"
                           for actions, (name, state) in seen.items())
        raise Undecided(f"the enabled actions differ at history {format_history(history)}: {listed} "
                         "(a scheduler sees only the history, so it must be offered one set of actions)")
    return next(iter(seen)) if seen else ()
