"""What a base attack does in the model's terms: the action of its Kripke edge and the observables (and
labels) whose value changes, plus the text of observable values used by every attack-tree display.

Observable values are read one state at a time (:class:`StateValues`): the observables of an explored
system are computed lazily (:class:`checker.mc.explore.LazyObservables`), and a column costs one
``observe`` call per state, while a label or the step-counter test needs only the few states it looks at.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from checker.mc.explore import LazyObservables
from checker.mc.kripke import Kripke
from checker.mc.ts import Action
from checker.render import value_text


@dataclass(frozen=True)
class Change:
    """An observable (or label) whose value differs between the two states of a step."""

    name: str
    before: str
    after: str

    def __str__(self) -> str:
        return f"{self.name} {self.before} -> {self.after}"


@dataclass(frozen=True)
class StepLabel:
    """What a base attack does in terms of the model: the action of the Kripke edge and the observables
    that changed. ``source``/``target`` are the state names (used when nothing observable changed)."""

    action: Action | None
    changes: tuple[Change, ...] = ()
    source: str = ""
    target: str = ""

    def action_text(self) -> str:
        """``rule by actor at location [detail]``."""
        if self.action is None:
            return "step"
        action = self.action
        text = action.rule
        if action.actor is not None:
            text += f" by {action.actor}"
        if action.location is not None:
            text += f" at {action.location}"
        if action.detail:
            text += f" [{action.detail}]"
        return text

    def text(self, sep: str = "; ", head: str = ": ") -> str:
        """``action: change; change`` (``sep`` between changes, ``head`` after the action)."""
        text = self.action_text()
        if self.changes:
            return text + head + sep.join(map(str, self.changes))
        if self.source or self.target:
            return text + head + f"{self.source} -> {self.target}"
        return text

    def __str__(self) -> str:
        return self.text()


def _same_value(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    try:
        return bool(a == b)
    except Exception:  # pragma: no cover - exotic values without a boolean equality
        return a is b


class StateValues:
    """The value ``v(name, s)`` of an observable on one state, each read once: from the stored column
    when the structure has it (a plain mapping, or a column of a :class:`LazyObservables` already
    evaluated), else from the model (``LazyObservables.value``, one ``observe`` call) without
    evaluating the column. The same values as ``kripke.observables[name][s]``."""

    def __init__(self, kripke: Kripke):
        self.observables = kripke.observables
        self._columns: dict[str, Sequence[object] | None] = {}
        self._memo: dict[tuple[str, int], object] = {}

    def __call__(self, name: str, state: int) -> object:
        if name not in self._columns:
            observables = self.observables
            lazy = isinstance(observables, LazyObservables) and name not in observables.evaluated()
            self._columns[name] = None if lazy else observables[name]
        column = self._columns[name]
        if column is not None:
            return column[state]
        key = (name, state)
        if key not in self._memo:
            observables = self.observables
            assert isinstance(observables, LazyObservables)
            self._memo[key] = observables.value(name, state)
        return self._memo[key]


def counter_observables(kripke: Kripke, sample: int = 20_000,
                        values: StateValues | None = None) -> set[str]:
    """Numeric observables that change on every step between distinct states (step counters, trace
    lengths): they say nothing about *what* happened, so labels leave them out by default. Decided on
    the first ``sample`` such edges ``(a_1, b_1), ..., (a_m, b_m)`` (``a_j != b_j``): ``v`` is a counter
    iff ``v(a_1)`` is a number (not a boolean) and ``v(a_j) != v(b_j)`` for every ``j``.

    The edges are visited in order and an observable is dropped at the first edge where its value does
    not change, reading only the states visited (:class:`StateValues`): most observables fail on the
    first edge, and only the counters are read on all ``m`` edges."""
    moving = np.flatnonzero(kripke.edge_src != kripke.succ_idx)[:sample]
    if not len(moving):
        return set()
    src, dst = kripke.edge_src[moving].tolist(), kripke.succ_idx[moving].tolist()
    value = StateValues(kripke) if values is None else values
    out = set()
    for name in kripke.observables:
        first = value(name, src[0])
        if isinstance(first, np.generic):
            first = first.item()
        if isinstance(first, bool) or not isinstance(first, int | Fraction | float):
            continue
        if all(not _same_value(value(name, a), value(name, b)) for a, b in zip(src, dst, strict=True)):
            out.add(name)
    return out


def step_label(kripke: Kripke, source: int, target: int, edge: int | None = None,
               observables: Iterable[str] | None = None, values: StateValues | None = None) -> StepLabel:
    """Label of the step ``source -> target``: the action of edge ``edge`` (else of the first edge between
    the two states) and every label/observable (restricted to ``observables`` when given) whose value
    changes. ``values`` (shared by the labels of one tree) reads the observables on the two states."""
    action: Action | None = None
    if edge is None:
        lo, hi = int(kripke.succ_ptr[source]), int(kripke.succ_ptr[source + 1])
        hits = np.flatnonzero(kripke.succ_idx[lo:hi] == target)
        edge = lo + int(hits[0]) if len(hits) else None
    if edge is not None:
        action = kripke.actions[int(kripke.edge_action[edge])]
    changes: list[Change] = []
    shown = None if observables is None else set(observables)
    value = StateValues(kripke) if values is None else values
    for name in sorted(kripke.observables):
        if shown is not None and name not in shown:
            continue
        before, after = value(name, source), value(name, target)
        if not _same_value(before, after):
            changes.append(Change(name, value_text(before), value_text(after)))
    for name in sorted(kripke.labels):
        if name in kripke.observables or (shown is not None and name not in shown):
            continue
        arr = kripke.labels[name]
        if bool(arr[source]) != bool(arr[target]):
            changes.append(Change(name, value_text(bool(arr[source])), value_text(bool(arr[target]))))
    return StepLabel(action, tuple(changes), kripke.state_name(source), kripke.state_name(target))
