"""Breadth-first exploration of a :class:`checker.mc.ts.TransitionSystem` into a :class:`Kripke` structure
(IIIf MC: the Kripke structure of a scenario is the set of states reachable from the initial ones).

States are interned to integer ids in BFS order (initial states first); the relation is collected into
flat integer arrays and stored in CSR form; the observables are evaluated once per state when it is
discovered (so frontier states of an incomplete exploration have known observables); actions are
converted with :func:`checker.mc.ts.as_action` once per distinct action object; probabilities are kept
exactly (``Fraction``) in ``edge_prob_exact`` and as floats in ``edge_prob`` when the system is
probabilistic (some step has a probability other than 1, or ``probabilities=True``).

Limits (:class:`Limits`) on states, transitions, seconds and resident memory stop the exploration
cleanly: the returned structure has ``complete=False``, ``limit_reason`` says which limit, and
``frontier`` marks the discovered states whose successors were not (or not completely) computed — a
state being expanded when a limit hits is rolled back to the frontier, so every non-frontier state has
exactly its true successors. Progress is reported through a callback (never printed here).

Example::

    >>> from checker.mc.ts import Step
    >>> class Counter:
    ...     def initial_states(self): return [0]
    ...     def successors(self, s): return [Step("inc", (s + 1) % 3)]
    ...     def observable_names(self): return ["value"]
    ...     def observe(self, s, name): return s
    >>> k = explore(Counter())
    >>> k.num_states, k.num_transitions, list(k.observables["value"])
    (3, 3, [0, 1, 2])
"""

from __future__ import annotations

import sys
import time
from array import array
from collections.abc import Hashable, Sequence
from fractions import Fraction
from typing import TypeVar

import numpy as np

from checker.errors import LimitReached
from checker.mc import reach
from checker.mc.collector import exploring
from checker.mc.exploration import (
    CHECK_SECONDS,
    EXPLORATION_MEMORY_SHARE,
    LazyObservables,
    Limits,
    Progress,
    ProgressCallback,
    Watchdog,
    stop_reason,
)
from checker.mc.exploration import peak_rss_mb as _peak_rss_mb
from checker.mc.exploration import progress_report as _progress
from checker.mc.explore_batch import BatchTransitionSystem, explore_batch
from checker.mc.kripke import Kripke
from checker.mc.ts import Action, TransitionSystem, as_action

__all__ = ["LimitReached", "Limits", "Progress", "ProgressCallback", "Watchdog", "depth_of_structure",
           "explore", "explorer_of", "stderr_progress"]

#: The state type of the explored transition system.
State = TypeVar("State", bound=Hashable)


def stderr_progress(interval: float = 0.5) -> ProgressCallback | None:
    """A callback drawing a one-line progress display on stderr, or ``None`` when stderr is not a
    terminal (so redirected output stays clean). For the CLI; library code never prints."""
    if not sys.stderr.isatty():
        return None

    def show(p: Progress) -> None:
        sys.stderr.write("\r\x1b[K" + p.text())
        sys.stderr.flush()

    return show


_ONE = 1


def explore(
    ts: TransitionSystem[State],
    *,
    limits: Limits | None = None,
    observables: Sequence[str] | None = None,
    probabilities: bool | None = None,
    keep_states: bool = True,
    lazy_observables: bool = True,
    progress: ProgressCallback | None = None,
    progress_interval: float = 0.5,
    source: str = "<model>",
    fast: bool = True,
) -> Kripke:
    """Explore ``ts`` breadth-first from its initial states.

    Parameters
    ----------
    ts:
        The transition system (``initial_states``, ``successors``, ``observable_names``, ``observe``).
    limits:
        Stop at these limits and return a partial structure (``complete=False``).
    observables:
        Names to evaluate per state (default: all of ``ts.observable_names()``; ``()`` for none).
    lazy_observables:
        With ``keep_states`` (default), ``Kripke.observables`` is a :class:`LazyObservables` that
        evaluates a column once per state when it is first read; else every observable is evaluated
        when its state is discovered.
    probabilities:
        Keep probabilities (``edge_prob_exact`` / ``edge_prob``): ``None`` = only if some step's
        probability differs from 1.
    keep_states:
        Keep the Python state objects in ``Kripke.states`` (for display and re-exploration).
    progress:
        Called about every ``progress_interval`` seconds and once at the end.
    fast:
        When ``ts`` offers an integer-coded view of itself (a method ``batch_system()`` returning a
        :class:`~checker.mc.explore_batch.BatchTransitionSystem`, or the reason it refuses one),
        explore that view with :func:`~checker.mc.explore_batch.explore_batch`: the same structure,
        a whole slice of the queue at a time. ``False``: always one state at a time.

    Returns
    -------
    Kripke
        With ``stats`` = ``{"seconds", "states_per_second", "depth", "max_rss_mb"}`` (and
        ``"batch": 1.0`` when the batch explorer ran).
    """
    if fast:
        offer = getattr(ts, "batch_system", None)
        batch = offer() if callable(offer) else None
        if isinstance(batch, BatchTransitionSystem):
            return explore_batch(batch, limits=limits, observables=observables,
                                 probabilities=probabilities, keep_states=keep_states,
                                 lazy_observables=lazy_observables, progress=progress,
                                 progress_interval=progress_interval, source=source)
    lim = limits or Limits()
    names = list(ts.observable_names()) if observables is None else list(observables)
    t0 = time.perf_counter()
    index: dict[State, int] = {}
    states: list[State] = []
    depth_of = array("i")
    lazy = lazy_observables and keep_states
    obs_values: list[list[object]] = [] if lazy else [[] for _ in names]
    eager_names = [] if lazy else names
    observe = ts.observe

    def discover(state: State, depth: int) -> int:
        sid = len(states)
        index[state] = sid
        states.append(state)
        depth_of.append(depth)
        for col, name in zip(obs_values, eager_names, strict=True):
            col.append(observe(state, name))
        return sid

    initial: list[int] = []
    for s in ts.initial_states():
        sid = index.get(s)
        if sid is None:
            sid = discover(s, 0)
        initial.append(sid)

    dst = array("q")
    act = array("i")
    probs: list[Fraction] = []
    ptr = array("q", [0])
    action_ids: dict[object, int] = {}
    actions: list[Action] = []
    action_index: dict[Action, int] = {}
    nontrivial_prob = False
    reason: str | None = None
    expanded = 0
    next_progress = t0 + progress_interval
    next_check = t0
    stops = lim.stops()
    successors = ts.successors
    index_setdefault = index.setdefault
    states_append, depth_append = states.append, depth_of.append
    action_ids_get = action_ids.get
    dst_append, act_append, probs_append = dst.append, act.append, probs.append
    max_states = lim.max_states
    max_trans = lim.max_transitions

    n_before = e_before = 0

    def roll_back() -> None:
        """Undo the partial expansion of the state being expanded: it stays on the frontier."""
        for s in states[n_before:]:
            index.pop(s, None)
        del states[n_before:]
        del depth_of[n_before:]
        for col in obs_values:
            del col[n_before:]
        del dst[e_before:]
        del act[e_before:]
        del probs[e_before:]

    # the collector neither pauses the loop nor, afterwards, traverses what it explored
    # (checker.mc.collector)
    with exploring() as frozen:
        try:
            while expanded < len(states):
                n_before, e_before = len(states), len(dst)
                if expanded % lim.check_every == 0 and expanded and time.perf_counter() >= next_check:
                    now = time.perf_counter()
                    next_check = now + CHECK_SECONDS
                    reason = stop_reason(lim, stops, EXPLORATION_MEMORY_SHARE)
                    if reason is not None:
                        break
                    if progress is not None and now >= next_progress:
                        next_progress = now + progress_interval
                        progress(_progress(len(states), expanded, len(dst), now - t0, depth_of[expanded]))
                state = states[expanded]
                d = depth_of[expanded] + 1
                overflow = None
                for step in successors(state):
                    if len(step) == 3:
                        a_obj, target, p = step
                    else:  # (action, target): probability 1
                        a_obj, target = step
                        p = 1
                    fresh = len(states)
                    tid = index_setdefault(target, fresh)  # one hash per step, new or not
                    if tid == fresh:
                        if max_states is not None and fresh >= max_states:
                            del index[target]
                            overflow = f"state limit of {max_states} reached"
                            break
                        states_append(target)
                        depth_append(d)
                        if eager_names:
                            for col, name in zip(obs_values, eager_names, strict=True):
                                col.append(observe(target, name))
                    aid = action_ids_get(a_obj)
                    if aid is None:
                        action = as_action(a_obj)
                        aid = action_index.get(action)
                        if aid is None:
                            aid = action_index[action] = len(actions)
                            actions.append(action)
                        action_ids[a_obj] = aid
                    dst_append(tid)
                    act_append(aid)
                    if p is not _ONE and p != 1:
                        nontrivial_prob = True
                    probs_append(p)
                if overflow is None and max_trans is not None and len(dst) > max_trans:
                    overflow = f"transition limit of {max_trans} reached"
                if overflow is not None:
                    roll_back()
                    reason = overflow
                    break
                ptr.append(len(dst))
                expanded += 1
        except LimitReached as exc:  # the watchdog stopped a state's expansion: the structure so far
            roll_back()
            reason = exc.reason

    n = len(states)
    ptr_arr = np.frombuffer(ptr, dtype=np.int64).copy()
    if expanded < n:  # unexpanded states have no recorded successors
        ptr_arr = np.concatenate([ptr_arr, np.full(n - expanded, ptr_arr[-1], dtype=np.int64)])
    frontier = None
    if reason is not None:
        frontier = np.zeros(n, dtype=bool)
        frontier[expanded:] = True
    itype = np.int32 if n < 2**31 - 1 else np.int64
    keep_prob = nontrivial_prob if probabilities is None else probabilities
    # most probabilities already are Fractions: re-wrapping each one costs ~15 % of exploration time
    exact = [p if type(p) is Fraction else Fraction(p) for p in probs] if keep_prob else None
    elapsed = time.perf_counter() - t0
    kripke = Kripke(
        num_states=n,
        initial=np.unique(np.asarray(initial, dtype=np.int64)),
        succ_ptr=ptr_arr,
        succ_idx=np.frombuffer(dst, dtype=np.int64).astype(itype),
        edge_action=np.frombuffer(act, dtype=np.int32).copy(),
        actions=tuple(actions) or (Action("step"),),
        observables=(LazyObservables(ts, states, names) if lazy
                     else {name: col for name, col in zip(names, obs_values, strict=True)}),
        edge_prob=None if exact is None else np.array([p.numerator / p.denominator for p in exact],
                                                      dtype=np.float64),
        edge_prob_exact=exact,
        states=states if keep_states else None,
        state_names=None,
        complete=reason is None,
        limit_reason=reason,
        frontier=frontier,
        source=source,
        stats={"seconds": elapsed, "states_per_second": n / elapsed if elapsed > 0 else float("inf"),
               "depth": float(max(depth_of) if len(depth_of) else 0), "max_rss_mb": _peak_rss_mb()},
    )
    if progress is not None:
        progress(_progress(n, expanded, len(dst), elapsed, int(max(depth_of) if len(depth_of) else 0)))
    frozen.tie(kripke)
    return kripke


def explorer_of(kripke: Kripke) -> str:
    """Who built a structure: ``batch`` (:func:`checker.mc.explore_batch.explore_batch`), ``plain``
    (:func:`explore`, one state at a time) or ``file`` (read, not explored)."""
    if kripke.stats.get("batch"):
        return "batch"
    return "plain" if "states_per_second" in kripke.stats else "file"


def depth_of_structure(kripke: Kripke) -> int:
    """Largest breadth-first distance from the initial states (the ``depth`` of ``flcheck explore``)."""
    if kripke.num_states == 0 or not len(kripke.initial):
        return 0
    return int(reach.distances(kripke.succ_ptr, kripke.succ_idx, np.unique(kripke.initial)).max())
