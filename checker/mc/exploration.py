"""What every explorer shares: the limits (:class:`Limits`: states, CPU and wall-clock seconds, memory),
their cooperative checks (:func:`stop_reason`, :func:`check_limits`, :func:`check_size`) and the
:class:`Watchdog` that enforces them in every phase of a job, progress reports (:class:`Progress`), the
observables of an explored structure evaluated on first use (:class:`LazyObservables`) and the
process's memory readings.

:mod:`checker.mc.explore` (one state object at a time) and :mod:`checker.mc.explore_batch` (whole
layers of integer-coded states) both build their :class:`~checker.mc.kripke.Kripke` structures with
these, so that their limits, reports and observables behave alike.
"""

from __future__ import annotations

import resource
import signal
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from types import FrameType, TracebackType
from typing import Any, Protocol

from checker.errors import LimitReached


class Observer(Protocol):
    """What :class:`LazyObservables` asks of an explored system: the value of an observable on a state
    (:meth:`checker.mc.ts.TransitionSystem.observe`)."""

    def observe(self, state: Any, name: str) -> object:
        """Value of observable ``name`` on ``state``; ``KeyError`` for an unknown name."""
        ...


#: The clock ``max_seconds`` counts: the CPU time of the process (every thread), so that a stop does not
#: depend on how loaded the machine is; ``max_wall_seconds`` counts wall-clock time.
cpu_clock = time.process_time
wall_clock = time.perf_counter

#: Wall seconds between two checks of the limits while exploring (a state costs microseconds to
#: milliseconds: a count of states alone would check too rarely on slow systems, too often on fast ones).
CHECK_SECONDS = 0.05


@dataclass(frozen=True)
class Limits:
    """Limits of an exploration or of a whole job (``None``: unlimited).

    ``max_seconds`` counts **CPU seconds** of the process (:data:`cpu_clock`, every thread),
    ``max_wall_seconds`` wall-clock seconds; ``max_memory_mb`` bounds the process's current resident
    set size (``/proc/self/statm``). Explorations look at the clock every :attr:`check_every` states
    (every state by default: a state of a 128-satellite swarm takes a quarter of a second) and check the
    limits when :data:`CHECK_SECONDS` have passed (they stop with a
    partial structure); other long computations call :func:`check_limits` where their cost
    is, and a :class:`Watchdog` stops what does neither.

    ``deadline`` (a :data:`cpu_clock` instant) and ``wall_deadline`` (a :data:`wall_clock` instant) are
    shared by every exploration and computation of one job (a check explores the scenario, then the
    structures of its neighbours and observations): an exploration stops at the earlier of its own
    ``start + max_seconds`` and the deadline, so a job's explorations together never exceed its
    budget (:meth:`sharing`)."""

    max_states: int | None = None
    max_transitions: int | None = None
    max_seconds: float | None = None
    max_memory_mb: float | None = None
    check_every: int = 1
    deadline: float | None = None
    max_wall_seconds: float | None = None
    wall_deadline: float | None = None

    def sharing(self, start: float | None = None) -> Limits:
        """These limits with ``deadline = now + max_seconds`` (CPU) and ``wall_deadline = start +
        max_wall_seconds`` (``start``: a :data:`wall_clock` instant, default now), for a job whose
        explorations and computations share one budget; a deadline already set is kept."""
        out = self
        if self.max_seconds is not None and self.deadline is None:
            out = replace(out, deadline=cpu_clock() + self.max_seconds)
        if self.max_wall_seconds is not None and self.wall_deadline is None:
            begin = wall_clock() if start is None else start
            out = replace(out, wall_deadline=begin + self.max_wall_seconds)
        return out

    def stops(self) -> Stops:
        """The instants an exploration starting now must stop at (:func:`stop_reason`)."""
        cpu = [t for t in (None if self.max_seconds is None else cpu_clock() + self.max_seconds,
                           self.deadline) if t is not None]
        wall = [t for t in (None if self.max_wall_seconds is None else wall_clock() + self.max_wall_seconds,
                            self.wall_deadline) if t is not None]
        return Stops(min(cpu) if cpu else None, min(wall) if wall else None)

    def json(self) -> dict[str, object]:
        """The limits as the ``--json`` outputs state them (``clock`` names what ``max_seconds`` counts)."""
        return {"max_states": self.max_states, "max_seconds": self.max_seconds, "clock": "cpu",
                "max_wall_seconds": self.max_wall_seconds, "max_memory_mb": self.max_memory_mb}


@dataclass(frozen=True)
class Stops:
    """When a computation must stop: a :data:`cpu_clock` and a :data:`wall_clock` instant (``None``:
    no such limit)."""

    cpu: float | None = None
    wall: float | None = None


def time_limit_text(limits: Limits, clock: str = "cpu") -> str:
    """The reason of a stop at the time limit (``time limit of 120 CPU s reached``, ``wall-clock limit
    of 60 s reached``)."""
    if clock == "wall":
        if limits.max_wall_seconds is None:
            return "wall-clock limit (deadline) reached"
        return f"wall-clock limit of {limits.max_wall_seconds:g} s reached"
    if limits.max_seconds is None:
        return "time limit (deadline) reached"
    return f"time limit of {limits.max_seconds:g} CPU s reached"


def memory_limit_text(limits: Limits) -> str:
    return f"memory limit of {limits.max_memory_mb:g} MB reached"


#: An exploration stops at this share of the memory limit: building the structure it returns (the CSR
#: arrays, the probabilities) needs the rest.
EXPLORATION_MEMORY_SHARE = 0.85


def stop_reason(limits: Limits, stops: Stops, memory_share: float = 1.0) -> str | None:
    """Why a computation must stop now: past its CPU or wall-clock stop (``stops``, from
    :meth:`Limits.stops`) or over ``memory_share`` of its memory limit; ``None`` when it may go on."""
    if stops.cpu is not None and cpu_clock() > stops.cpu:
        return time_limit_text(limits)
    if stops.wall is not None and wall_clock() > stops.wall:
        return time_limit_text(limits, "wall")
    if limits.max_memory_mb is not None and current_rss_mb() > limits.max_memory_mb * memory_share:
        return memory_limit_text(limits)
    return None


def check_limits(limits: Limits | None, stops: Stops | None = None) -> None:
    """Raise :class:`~checker.errors.LimitReached` when ``limits`` (their shared deadlines, or
    ``stops``) are passed: the cooperative check of a long loop that is no exploration (a step-bounded
    probability, an attack tree's search, a model too large to build)."""
    if limits is None:
        return
    reason = stop_reason(limits, stops if stops is not None else Stops(limits.deadline, limits.wall_deadline))
    if reason is not None:
        raise LimitReached(reason)


def check_size(limits: Limits | None, what: str, count: int, bytes_each: float) -> None:
    """Refuse, before allocating it, a structure of ``count`` items of about ``bytes_each`` bytes that
    would by itself pass the memory limit (:class:`~checker.errors.LimitReached`), or the state limit
    when ``what`` is ``"states"``."""
    if limits is None:
        return
    if what == "states" and limits.max_states is not None and count > limits.max_states:
        raise LimitReached(f"state limit of {limits.max_states} reached ({count} states needed)")
    if limits.max_memory_mb is not None:
        need = count * bytes_each / 2**20
        if current_rss_mb() + need > limits.max_memory_mb:
            raise LimitReached(f"{memory_limit_text(limits)} ({count} {what} need about {need:,.0f} MB)")


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


#: Seconds a :class:`Watchdog` waits after raising before it raises again.
REFIRE_SECONDS = 1.0


class Watchdog:
    """Enforces a job's :class:`Limits` in every phase, and reports its progress.

    Inside ``with Watchdog(limits, report=..., interval=...)`` a timer (``SIGALRM``, main thread only;
    elsewhere the watchdog only reports when asked) fires every ``tick`` seconds: it raises
    :class:`~checker.errors.LimitReached` once the CPU ``deadline`` or the ``wall_deadline`` of
    ``limits`` has passed or the resident memory exceeds ``max_memory_mb``, and every ``interval``
    seconds passes a line to ``report``: the phase set by :meth:`phase`, the last exploration
    :class:`Progress` fed to :meth:`explored`, the elapsed time and the time left before the deadline.

    Inside :meth:`exploring` (an exploration that stops itself at the limits with a partial
    structure), it waits ``grace`` seconds past the deadline and ``memory_grace`` (a fraction) above
    the memory limit before it raises, so that the exploration's own stop comes first. After raising
    it leaves the error :data:`REFIRE_SECONDS` to be handled (:meth:`check`). A timer set before it
    (an outer watchdog's) keeps firing through it and goes on when it ends.

    Library code never prints: ``report`` is the CLI's (e.g. a line on stderr)."""

    def __init__(self, limits: Limits, *, report: Callable[[str], None] | None = None,
                 interval: float = 5.0, grace: float = 1.2, tick: float = 0.1, memory_grace: float = 0.08):
        self.limits = limits
        self.report = report
        self.interval = interval
        self.tick = min(tick, interval)
        self.grace = grace
        self.memory_grace = memory_grace
        self.start = wall_clock()
        self.cpu_start = cpu_clock()
        self._next_report = self.start + interval
        self._phase = "starting"
        self._progress: Progress | None = None
        self._armed = False
        self._previous: Any = None
        self._previous_timer: tuple[float, float] = (0.0, 0.0)
        self._outer_due: float | None = None
        self._exploring = False
        self._finished = False
        self._fired: float | None = None

    def phase(self, text: str) -> None:
        """Name what the job does now (``checking ni_fl_dp (privacy, 5 of 7)``)."""
        self._phase = text
        self._progress = None

    @property
    def current_phase(self) -> str:
        """What the job does now (:meth:`phase`)."""
        return self._phase

    @contextmanager
    def exploring(self) -> Iterator[None]:
        """Inside: an exploration that stops itself at the limits (returning a partial structure), so
        the timer gives it a grace before it stops the job."""
        self._exploring = True
        try:
            yield
        finally:
            self._exploring = False

    def finish(self) -> None:
        """The job is done (or stopped): the timer neither checks nor reports any more."""
        self._finished = True

    def explored(self, p: Progress) -> None:
        """A :data:`ProgressCallback` for the explorations of the job."""
        self._progress = p

    def line(self) -> str:
        """The progress line: phase, exploration figures, elapsed and CPU seconds, time left."""
        parts = [self._phase]
        if self._progress is not None:
            parts.append(self._progress.text())
        parts.append(f"{wall_clock() - self.start:.0f} s elapsed, {cpu_clock() - self.cpu_start:.0f} CPU s")
        if self.limits.deadline is not None:
            parts.append(f"time limit in {max(0.0, self.limits.deadline - cpu_clock()):.0f} CPU s")
        if self.limits.wall_deadline is not None:
            parts.append(f"wall-clock limit in {max(0.0, self.limits.wall_deadline - wall_clock()):.0f} s")
        return "; ".join(parts)

    def reason(self) -> str | None:
        """Which limit is passed now (with the grace of an exploration), ``None`` when none is."""
        lim = self.limits
        grace = self.grace if self._exploring else 0.0
        if lim.deadline is not None and cpu_clock() > lim.deadline + grace:
            return time_limit_text(lim)
        if lim.wall_deadline is not None and wall_clock() > lim.wall_deadline + grace:
            return time_limit_text(lim, "wall")
        if lim.max_memory_mb is not None:
            cap = lim.max_memory_mb * (1 + self.memory_grace if self._exploring else 1)
            if current_rss_mb() > cap:
                return memory_limit_text(lim)
        return None

    def check(self) -> None:
        """Raise :class:`~checker.errors.LimitReached` when a limit is passed. After raising it waits
        :data:`REFIRE_SECONDS` before raising again (the error is being handled, a table printed; a
        handler that is done calls :meth:`finish`), so that a code path that caught the first one does
        not run on unbounded."""
        if self._finished or (self._fired is not None and wall_clock() < self._fired + REFIRE_SECONDS):
            return
        reason = self.reason()
        if reason is not None:
            self._fired = wall_clock()
            raise LimitReached(reason)

    def _tick(self, signum: int, frame: FrameType | None) -> None:
        if self._outer_due is not None and wall_clock() >= self._outer_due:  # an outer timer is due
            self._outer_due = None if not self._previous_timer[1] else wall_clock() + self._previous_timer[1]
            if callable(self._previous):
                self._previous(signum, frame)
        if self._finished:
            return
        self.check()
        if self.report is not None and wall_clock() >= self._next_report:
            self._next_report = wall_clock() + self.interval
            self.report(self.line())

    def __enter__(self) -> Watchdog:
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
            self._previous = signal.signal(signal.SIGALRM, self._tick)
            self._previous_timer = signal.setitimer(signal.ITIMER_REAL, self.tick, self.tick)
            delay = self._previous_timer[0]
            nested = isinstance(getattr(self._previous, "__self__", None), Watchdog)  # it does that job
            self._outer_due = wall_clock() + delay if delay and not nested else None
            self._armed = True
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._finished = True
        if self._armed:
            signal.setitimer(signal.ITIMER_REAL, 0, 0)
            signal.signal(signal.SIGALRM, self._previous)
            delay, interval = self._previous_timer
            if self._outer_due is not None:  # the outer timer goes on where it was
                signal.setitimer(signal.ITIMER_REAL, max(self._outer_due - wall_clock(), 1e-3), interval)
            elif delay:  # an outer watchdog's ticks
                signal.setitimer(signal.ITIMER_REAL, delay, interval)
            self._armed = False
