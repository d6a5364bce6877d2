"""What a base attack does in the model's terms: the action of its Kripke edge and the observables (and
labels) whose value changes, plus the text of observable values used by every attack-tree display."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from checker.io.render import value_text
from checker.mc.kripke import Kripke
from checker.mc.ts import Action


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


def counter_observables(kripke: Kripke, sample: int = 20_000) -> set[str]:
    """Numeric observables that change on every step between distinct states (step counters, trace
    lengths): they say nothing about *what* happened, so labels leave them out by default. Decided on
    the first ``sample`` such edges."""
    moving = np.flatnonzero(kripke.edge_src != kripke.succ_idx)[:sample]
    if not len(moving):
        return set()
    src, dst = kripke.edge_src[moving].tolist(), kripke.succ_idx[moving].tolist()
    out = set()
    for name, values in kripke.observables.items():
        first = values[src[0]]
        if isinstance(first, np.generic):
            first = first.item()
        if isinstance(first, bool) or not isinstance(first, int | Fraction | float):
            continue
        if all(not _same_value(values[a], values[b]) for a, b in zip(src, dst, strict=True)):
            out.add(name)
    return out


def step_label(kripke: Kripke, source: int, target: int, edge: int | None = None,
               observables: Iterable[str] | None = None) -> StepLabel:
    """Label of the step ``source -> target``: the action of edge ``edge`` (else of the first edge between
    the two states) and every label/observable (restricted to ``observables`` when given) whose value
    changes."""
    action: Action | None = None
    if edge is None:
        lo, hi = int(kripke.succ_ptr[source]), int(kripke.succ_ptr[source + 1])
        hits = np.flatnonzero(kripke.succ_idx[lo:hi] == target)
        edge = lo + int(hits[0]) if len(hits) else None
    if edge is not None:
        action = kripke.actions[int(kripke.edge_action[edge])]
    changes: list[Change] = []
    shown = None if observables is None else set(observables)
    for name in sorted(kripke.observables):
        if shown is not None and name not in shown:
            continue
        values = kripke.observables[name]
        before, after = values[source], values[target]
        if not _same_value(before, after):
            changes.append(Change(name, value_text(before), value_text(after)))
    for name in sorted(kripke.labels):
        if name in kripke.observables or (shown is not None and name not in shown):
            continue
        arr = kripke.labels[name]
        if bool(arr[source]) != bool(arr[target]):
            changes.append(Change(name, value_text(bool(arr[source])), value_text(bool(arr[target]))))
    return StepLabel(action, tuple(changes), kripke.state_name(source), kripke.state_name(target))
