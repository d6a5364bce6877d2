"""What every explorer shares: the exploration limits (:class:`Limits`) and the text of a stop at the
time limit, progress reports (:class:`Progress`), the observables of an explored structure evaluated on
first use (:class:`LazyObservables`) and the process's memory readings.

:mod:`checker.mc.explore` (one state object at a time) and :mod:`checker.mc.explore_batch` (whole
layers of integer-coded states) both build their :class:`~checker.mc.kripke.Kripke` structures with
these, so that their limits, reports and observables behave alike.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol


class Observer(Protocol):
    """What :class:`LazyObservables` asks of an explored system: the value of an observable on a state
    (:meth:`checker.mc.ts.TransitionSystem.observe`)."""

    def observe(self, state: Any, name: str) -> object:
        """Value of observable ``name`` on ``state``; ``KeyError`` for an unknown name."""
        ...


@dataclass(frozen=True)
class Limits:
    """Exploration limits (``None``: unlimited). ``max_memory_mb`` bounds the process's current
    resident set size (``/proc/self/statm``), checked every :attr:`check_every` states.

    ``deadline`` is an absolute :func:`time.perf_counter` instant shared by every exploration of one
    job (a check explores the scenario, then the structures of its neighbours and observations): an
    exploration stops at ``min(start + max_seconds, deadline)``, so a job's explorations together
    never exceed its time budget (:meth:`sharing`)."""

    max_states: int | None = None
    max_transitions: int | None = None
    max_seconds: float | None = None
    max_memory_mb: float | None = None
    check_every: int = 1024
    deadline: float | None = None

    def sharing(self, start: float | None = None) -> Limits:
        """These limits with ``deadline = start + max_seconds`` (``start``: now), for a job whose
        explorations and computations share one time budget; unchanged without ``max_seconds`` or
        when a deadline is already set."""
        if self.max_seconds is None or self.deadline is not None:
            return self
        return replace(self, deadline=(time.perf_counter() if start is None else start) + self.max_seconds)

    def stop_at(self, start: float) -> float | None:
        """The instant an exploration started at ``start`` must stop (``None``: no time limit)."""
        ends = [t for t in (None if self.max_seconds is None else start + self.max_seconds, self.deadline)
                if t is not None]
        return min(ends) if ends else None


def time_limit_text(limits: Limits) -> str:
    """The reason of a stop at the time limit (``time limit of 120 s reached``)."""
    if limits.max_seconds is None:
        return "time limit (deadline) reached"
    return f"time limit of {limits.max_seconds:g} s reached"


def stop_reason(limits: Limits, stop_at: float | None, now: float) -> str | None:
    """Why an exploration must stop at ``now``: past its time limit (``stop_at``, from
    :meth:`Limits.stop_at`) or over its memory limit; ``None`` when it may go on."""
    if stop_at is not None and now > stop_at:
        return time_limit_text(limits)
    if limits.max_memory_mb is not None and current_rss_mb() > limits.max_memory_mb:
        return f"memory limit of {limits.max_memory_mb:g} MB reached"
    return None


@dataclass(frozen=True)
class Progress:
    """A progress report: states discovered, states expanded, frontier size (discovered − expanded),
    transitions, elapsed seconds, rate (states discovered per second)."""

    states: int
    expanded: int
    frontier: int
    transitions: int
    seconds: float
    rate: float
    depth: int

    def text(self) -> str:
        return (f"explored {self.states} states ({self.frontier} in frontier), "
                f"{self.transitions} transitions, depth {self.depth}, {self.rate:.0f} states/s")


ProgressCallback = Callable[[Progress], None]


def progress_report(states: int, expanded: int, transitions: int, seconds: float, depth: int) -> Progress:
    return Progress(states, expanded, states - expanded, transitions, seconds,
                    states / seconds if seconds > 0 else 0.0, depth)


class LazyObservables(dict[str, list[object]]):
    """``Kripke.observables`` of an explored system, evaluated on first use: reading a column calls
    ``ts.observe(state, name)`` once per state (in id order) and stores the list, so an observable
    that no formula mentions costs nothing. Behaves as a ``dict`` name -> per-state values (all names
    are always listed; iteration over values/items evaluates every column). ``columns(name)``, when
    given, computes a whole column at once (``None``: it cannot, and the states are observed one by
    one)."""

    def __init__(self, ts: Observer, states: Sequence[Hashable], names: Sequence[str],
                 columns: Callable[[str], list[object] | None] | None = None):
        super().__init__()
        self._ts = ts
        self._states = states
        self._names = list(dict.fromkeys(names))
        self._columns = columns

    def __getitem__(self, name: str) -> list[object]:
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        if name not in self._names:
            raise KeyError(name)
        col = None if self._columns is None else self._columns(name)
        if col is None:
            observe = self._ts.observe
            col = [observe(s, name) for s in self._states]
        dict.__setitem__(self, name, col)
        return col

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def keys(self) -> list[str]:  # type: ignore[override]  # all names, evaluated or not (dict's would list the stored columns only)
        return list(self._names)

    def values(self) -> list[list[object]]:  # type: ignore[override]  # all names, evaluated or not (dict's would list the stored columns only)
        return [self[n] for n in self._names]

    def items(self) -> list[tuple[str, list[object]]]:  # type: ignore[override]  # all names, evaluated or not (dict's would list the stored columns only)
        return [(n, self[n]) for n in self._names]

    def get(self, name: str, default: object = None) -> object:  # type: ignore[override]  # evaluates the column
        return self[name] if name in self._names else default

    def value(self, name: str, index: int) -> object:
        """One state's value, without evaluating the whole column (used for witness display)."""
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)[index]
        if name not in self._names:
            raise KeyError(name)
        return self._ts.observe(self._states[index], name)

    def evaluated(self) -> list[str]:
        """Names of the columns computed so far."""
        return [n for n in self._names if dict.__contains__(self, n)]

    def __repr__(self) -> str:
        return f"LazyObservables({self._names!r}, evaluated={self.evaluated()!r})"


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (for the statistics)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


_PAGE_MB = resource.getpagesize() / (1024.0 * 1024.0)


def current_rss_mb() -> float:
    """Current resident set size (Linux ``/proc/self/statm``; the peak where that is unavailable).

    The memory limit compares against the *current* size: the peak (``ru_maxrss``) survives ``exec``
    and never falls, so a process started by a large parent, or a long-lived one that explores many
    models, would stop at once."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE_MB
    except (OSError, IndexError, ValueError):
        return peak_rss_mb()
