"""What the attacker of an FL system observes, and its distribution at the end of the runs.

[IIIf-FL], Section III-C (``NI_FL_DP``) compares what an attacker observes on neighbouring datasets.
Here the FL system (:class:`flmodel.system.FLSystem`) is extended by the attacker's record
(:class:`ObservedSystem`), explored, its nondeterminism resolved by the uniform scheduler, and the
distribution of the record at the end of the runs computed (:func:`observe_dataset`):

* ``sequence`` (default): the sequence of what the attacker observes (the scenario's ``attacker ...
  observes`` names, by default ``curmodpar``), one entry on every step that completes a round (a
  release) or changes an observed value, in the order of the run (the initial values are the set-up's
  and are not recorded; ``final`` sees them when nothing changes them);
* ``final``: the observed values at the end of the run only;
* ``curmodpar``: the sequence of released models, one per aggregation (round) — ``sequence`` of
  ``curmodpar``;
* ``trace``: the whole protocol trace — every event (``Put`` with its partition, ``Get c v``,
  ``Eval w``) in order;
* ``client:NAME``: the sequence of updates client ``NAME`` sends.

:func:`end_of_run_distribution` and :func:`scheduler_independent` are the two steps every NI-FL-DP
figure of flcheck goes through (also ``flcheck check``'s, on the scenario's own observables).

Observation window: a run ends when it deadlocks or, with ``stop_after_rounds`` (default), at the
last aggregation allowed by ``max_rounds`` (clients may keep reporting afterwards in the published
rules, but nothing further is released).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from checker.errors import ExplorationIncomplete, InputError
from checker.markov.distributions import ObservableDistribution, bottom_absorption, observable_distribution
from checker.markov.graph import bottom_components
from checker.markov.mdp import mdp_reach_many
from checker.markov.models import Dtmc, dtmc_from_kripke, mdp_from_kripke
from checker.mc.atoms import freeze
from checker.mc.explore import Limits, explore
from checker.mc.kripke import Kripke
from flmodel.data import DataPoint, Dataset
from flmodel.network import gra_status
from flmodel.system import FLState
from flmodel.view import FLView

__all__ = [
    "OBSERVE_MODES",
    "DatasetObservation",
    "ObservedSystem",
    "Recorded",
    "StepReducer",
    "end_of_run_distribution",
    "observe_dataset",
    "parse_observe",
    "scheduler_independent",
]

Number = Fraction | float
#: Default exploration limits per dataset: 200 000 states.  (No default memory limit: ``explore``
#: measures the process's PEAK resident set size, which a long-lived process — or one exec'ed from a
#: large parent — may already exceed; the CLI, a fresh process, passes ``--max-memory-mb``.)
DEFAULT_LIMITS = Limits(max_states=200_000)
Vector = tuple[Fraction, ...]
#: An observable event of the protocol trace: (kind, actor, value).
Event = tuple[str, str | None, Hashable]
#: A step of a reduced system: ``(action, target, probability)``, or ``(action, target, probability,
#: raw target)`` when the reduction maps targets after the record is read (:class:`ObservedSystem`).
ReducedStep = tuple[Any, FLState, Fraction] | tuple[Any, FLState, Fraction, FLState]


#: The observation modes of :func:`parse_observe` besides ``client:NAME``.
OBSERVE_MODES = ("sequence", "final", "curmodpar", "trace")


def parse_observe(text: str, clients: Sequence[str]) -> tuple[str, str | None]:
    """``"sequence"``, ``"final"``, ``"curmodpar"``, ``"trace"`` or ``"client:NAME"`` ->
    ``(mode, client)``; :class:`InputError` naming the expected forms otherwise."""
    if text in OBSERVE_MODES:
        return text, None
    if text.startswith("client:"):
        name = text.split(":", 1)[1]
        if name not in clients:
            raise InputError(f"unknown client {name!r} in --observe {text}", None,
                             f"one of client:{', client:'.join(clients)}")
        return "client", name
    raise InputError(f"unknown observation {text!r}", None,
                     "sequence, final, curmodpar, trace or client:NAME")


# ---------------------------------------------------------------------------------------------------
# The system observed by the attacker: a product with the record of released values
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ObsState:
    fl: FLState
    releases: tuple[Vector, ...]
    updates: tuple[tuple[Vector, ...], ...]  # per client (sorted), in order
    trace: tuple[Event, ...] | None
    seen: tuple[Hashable, ...] = ()


class ObservedSystem:
    """The product of an :class:`FLSystem` with the attacker's record (a transition system in the sense
    of :mod:`checker.mc.ts`).  Records are appended on the step that produces them: an aggregation
    appends the new ``curmodpar`` to ``releases``; a report by client ``c`` appends its update to
    ``updates[c]``; with ``record_trace`` every event is appended to ``trace``.  Probabilities and
    actions are those of the FL system, so the product is a refinement that only adds memory.

    ``observing`` (names read by ``observer``, default the FL system's own ``observe``): what the
    attacker observes; ``seen`` records its value (the value itself for one name, a tuple for several)
    on every step that completes a round or changes it, and the observable ``final`` is its current
    value.

    ``step`` replaces the FL system's ``successors`` (a reduced system's steps: one action per state,
    orbit representatives, summed gradients; :class:`StepReducer`). A step may carry a fourth element,
    the target before the reduction mapped it (the *raw* target): the record is read off the raw target
    and the reduced one is stored, so that a reduction may forget what the record has already taken
    (a reporting client's own gradient, once its update is recorded). ``update_clients``: the clients
    whose updates are recorded (default: all of them, with ``record_updates``)."""

    def __init__(self, system: FLView, *, record_trace: bool = False, record_updates: bool = True,
                 stop_after_rounds: bool = True, observing: Sequence[str] = ("curmodpar",),
                 observer: Callable[[FLState, str], object] | None = None,
                 step: Callable[[FLState], Sequence[ReducedStep]] | None = None,
                 update_clients: Sequence[str] | None = None) -> None:
        self.system = system
        self._step: Callable[[FLState], Sequence[ReducedStep]] = (
            step if step is not None else system.successors)
        self.observing = tuple(observing)
        self._observer = observer if observer is not None else system.observe
        self.clients = tuple(system.clients)
        self._index = {c: i for i, c in enumerate(self.clients)}
        self.record_trace = record_trace
        self.record_updates = record_updates
        self._recorded = frozenset(self.clients if update_clients is None else update_clients)
        self.stop_after_rounds = stop_after_rounds
        self._names = ("releases", "trace", "dataset", "partition", "curmodpar", "seen", "final",
                       *(f"updates:{c}" for c in self.clients))

    def seen_value(self, fl: FLState) -> Hashable:
        """What the attacker observes on ``fl``: the value of the one observed name, else the tuple."""
        vals = tuple(freeze(self._observer(fl, n)) for n in self.observing)
        return vals[0] if len(vals) == 1 else vals

    def initial_states(self) -> list[_ObsState]:
        return [_ObsState(s, (), tuple(() for _ in self.clients), () if self.record_trace else None)
                for s in self.system.initial_states()]

    def ended(self, fl: FLState) -> bool:
        """Whether a run ends in ``fl`` for the attacker (the last aggregation allowed was made)."""
        b = self.system.bounds
        return self.stop_after_rounds and b.max_rounds is not None and fl.round >= b.max_rounds

    def update(self, before: FLState, act: Any, after: FLState) -> tuple[str, Vector] | None:
        """The update a step from ``before`` to (the raw target) ``after`` delivers: ``(client, value)``
        for a report that arrives (not one lost in flight), else ``None``."""
        if after.round == before.round and act.actor in self._index \
                and str(self.system.observe(after, "last_kind")) == "get_grad" \
                and not _lost_now(before, after, act.actor):
            return act.actor, after.infra.igra.gradient[act.actor]
        return None

    def steps(self, fl: FLState) -> list[tuple[Any, FLState, Fraction, FLState]]:
        """The (reduced) steps from ``fl`` as ``(action, target, probability, raw target)``; none once
        the run has ended for the attacker (:meth:`ended`)."""
        if self.ended(fl):
            return []
        return [(step[0], step[1], step[2], step[3] if len(step) > 3 else step[1])
                for step in self._step(fl)]

    def seen_entry(self, before: FLState, before_seen: Hashable, raw: FLState) -> tuple[Hashable] | None:
        """What a step from ``before`` (whose observed value is ``before_seen``) to the raw target
        ``raw`` appends to the sequence the attacker observes: ``(value,)``, the observed value when
        the step completes a round or changes it, else ``None`` (nothing)."""
        now = self.seen_value(raw)
        return (now,) if raw.round > before.round or now != before_seen else None

    def successors(self, state: _ObsState) -> list[tuple[object, _ObsState, Fraction]]:
        out: list[tuple[object, _ObsState, Fraction]] = []
        before = self.seen_value(state.fl)
        for act, target, p, raw in self.steps(state.fl):
            kind = str(self.system.observe(raw, "last_kind"))
            g = raw.infra.igra
            releases, updates, trace = state.releases, state.updates, state.trace
            value: Hashable = None
            delivered = self.update(state.fl, act, raw)
            if raw.round > state.fl.round:
                releases = (*releases, g.curmodpar)
                value = g.curmodpar
            elif delivered is not None:
                value = delivered[1]
                if self.record_updates and act.actor in self._recorded:
                    i = self._index[act.actor]
                    updates = (*updates[:i], (*updates[i], value), *updates[i + 1:])
            elif kind == "put_part":
                value = g.partition
            if trace is not None:
                trace = (*trace, (kind, act.actor, value))
            seen = state.seen
            entry = self.seen_entry(state.fl, before, raw)
            if entry is not None:
                seen = (*seen, *entry)
            out.append((act, _ObsState(target, releases, updates, trace, seen), p))
        return out

    def observable_names(self) -> Sequence[str]:
        return self._names

    def observe(self, state: _ObsState, name: str) -> object:
        if name == "releases":
            return state.releases
        if name == "trace":
            return state.trace
        if name == "seen":
            return state.seen
        if name == "final":
            return self.seen_value(state.fl)
        if name == "dataset":
            return state.fl.infra.igra.dataset
        if name == "partition":
            return state.fl.infra.igra.partition
        if name == "curmodpar":
            return state.fl.infra.igra.curmodpar
        if name.startswith("updates:") and name[8:] in self._index:
            return state.updates[self._index[name[8:]]]
        raise KeyError(f"unknown observable {name!r}")


def _lost_now(before: FLState, after: FLState, client: str) -> bool:
    """Whether ``client``'s report was lost in flight on this step (it joined the network status's lost
    clients): the report was sent but not received, so it is no update (:mod:`flmodel.network`)."""
    lost = gra_status(after.infra.igra.gra).lost
    return client in lost and client not in gra_status(before.infra.igra.gra).lost


# ---------------------------------------------------------------------------------------------------
# Distributions for one dataset
# ---------------------------------------------------------------------------------------------------


@dataclass
class DatasetObservation:
    """What the attacker can observe when the system runs on ``dataset``: ``releases`` (distribution
    of the released-model sequence), ``updates[c]`` (of client ``c``'s update sequence), ``joint``
    (of all clients' update sequences together; ``None`` when not computed), ``trace`` (when
    recorded); ``states``/``transitions`` of the explored product; ``scheduler_independent``
    (``None``: not checked) and ``undetermined`` (mass of runs without an eventual observation);
    ``sequence`` and ``final`` (of the sequence of what the attacker observes, of its value at the end
    of the run; ``None`` when not computed)."""

    dataset: Dataset
    releases: dict[Hashable, Number]
    updates: dict[str, dict[Hashable, Number]]
    joint: dict[Hashable, Number] | None
    trace: dict[Hashable, Number] | None
    states: int
    transitions: int
    exact: bool
    scheduler_independent: bool | None = None
    undetermined: Number = 0
    kripke: Kripke | None = field(default=None, repr=False)
    sequence: dict[Hashable, Number] | None = None
    final: dict[Hashable, Number] | None = None
    reductions: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Recorded:
    """What the attacker's record of :class:`ObservedSystem` holds besides the releases: the names it
    observes (``observing``), the clients' updates (``updates``: those of ``clients``, every client's
    when ``None``), the protocol trace (``trace``); and whether what is read of the exploration depends
    on the interleaving (``interleavings``)."""

    observing: tuple[str, ...]
    updates: bool
    trace: bool
    clients: tuple[str, ...] | None = None
    #: what is read depends on the interleaving (each step's distribution, the states passed through),
    #: not only on the record at the end of the runs: one action per state would not keep it
    interleavings: bool = False

    def records_updates_of(self, client: str) -> bool:
        """Whether the record holds ``client``'s updates."""
        return self.updates and (self.clients is None or client in self.clients)


class StepReducer(Protocol):
    """Reduces the steps of one neighbouring FL system for :func:`observe_dataset` (e.g.
    :class:`checker.app.reductions.ObservationReducer`), given what is recorded: the reduced successor
    function (``None``: the system's own) and what was applied, as JSON-able data; and says which
    clients are interchangeable."""

    def steps(self, fl: FLView, recorded: Recorded
              ) -> tuple[Callable[[FLState], Sequence[ReducedStep]] | None, dict[str, Any]]: ...

    def interchangeable(self, fl: FLView) -> list[tuple[str, ...]]:
        """Classes of clients whose records have the same distribution in ``fl`` (every client's own
        class when nothing is known)."""
        ...


def observe_dataset(system: FLView, dataset: Iterable[DataPoint] | None = None, *,
                    record_trace: bool = False, record_updates: bool = True, limits: Limits | None = None,
                    check_scheduler: bool = True, keep_kripke: bool = False,
                    stop_after_rounds: bool = True, exact: bool | None = None,
                    observing: Sequence[str] | None = None,
                    observer: Callable[[FLState, str], object] | None = None,
                    reducer: StepReducer | None = None,
                    update_clients: Sequence[str] | None = None) -> DatasetObservation:
    """Explore ``system`` (rebuilt for ``dataset`` when given) observed by the attacker, resolve the
    nondeterminism with the uniform scheduler, and return the distributions of the observations at the
    end of the runs (:func:`checker.markov.core.observable_distribution`, eventual values).

    ``check_scheduler``: also decide whether the release distribution depends on the scheduler, by
    comparing ``Pmin`` and ``Pmax`` over all schedulers of each release sequence (vectorised float
    value iteration, :func:`checker.markov.core.mdp_reach_many`, tolerance 1e-9).  ``keep_kripke``: keep the
    explored product in the result (memory). ``observing``/``observer``: what the attacker observes
    (:class:`ObservedSystem`); when given, the ``sequence`` and ``final`` distributions are computed
    and the scheduler check is made on the sequence. ``reducer``: the reductions that keep these
    distributions exactly (listed in the result's ``reductions``); a reduction to one action per
    state makes the scheduler check trivially true, as the confluence it rests on proves.
    ``update_clients``: record the updates of these clients only (``updates`` then has theirs, and
    ``joint`` is ``None``)."""
    sys_d = system if dataset is None else system.with_dataset(dataset)
    only = None if update_clients is None else tuple(update_clients)
    recorded = Recorded(tuple(observing or ("curmodpar",)), record_updates, record_trace, only)
    step, applied = reducer.steps(sys_d, recorded) if reducer is not None else (None, {})
    ts = ObservedSystem(sys_d, record_trace=record_trace, record_updates=record_updates,
                        stop_after_rounds=stop_after_rounds, observing=observing or ("curmodpar",),
                        observer=observer, step=step, update_clients=only)
    names = ["releases", *(f"updates:{c}" for c in ts.clients)] + (["trace"] if record_trace else [])
    if observing is not None:
        names += ["seen", "final"]
    k = explore(ts, limits=limits or DEFAULT_LIMITS, observables=names,  # type: ignore[arg-type]  # ObservedSystem yields plain (action, state, probability) tuples, which explore reads as Steps
                probabilities=True, keep_states=False)
    if not k.complete:
        hint = "" if not record_updates else "; try without the decomposition (fewer recorded updates)"
        raise ExplorationIncomplete(f"the observed FL system is too large or unbounded ({k.limit_reason}); "
                                    f"bound it with max_rounds / max_events{hint}", k.limit_reason)
    dtmc = dtmc_from_kripke(k)
    absorbed = bottom_absorption(dtmc, exact=dtmc.is_exact if exact is None else exact)

    def dist_of(values: Sequence[Hashable]) -> ObservableDistribution:
        return end_of_run_distribution(k, values, exact=exact, dtmc=dtmc, absorbed=absorbed)

    rel = dist_of(list(k.observables["releases"]))
    upd = {c: dist_of(list(k.observables[f"updates:{c}"])).dist for c in (only or ts.clients)}
    joint = None if only is not None else dist_of(
        list(zip(*(k.observables[f"updates:{c}"] for c in ts.clients), strict=True))).dist
    tr = dist_of(list(k.observables["trace"])).dist if record_trace else None
    obs = DatasetObservation(frozenset(sys_d.initial.igra.dataset), dict(rel.dist), upd, joint, tr,
                             k.num_states, k.num_transitions, rel.exact, undetermined=rel.missing,
                             kripke=k if keep_kripke else None, reductions=applied)
    if observing is not None:
        seq = dist_of(list(k.observables["seen"]))
        obs.sequence, obs.final = dict(seq.dist), dict(dist_of(list(k.observables["final"])).dist)
        obs.undetermined = seq.missing
    if check_scheduler:
        watched = "seen" if observing is not None else "releases"
        obs.scheduler_independent = scheduler_independent(k, list(k.observables[watched]))
    return obs


def end_of_run_distribution(k: Kripke, values: Sequence[Hashable], *, exact: bool | None = None,
                            dtmc: Dtmc | None = None,
                            absorbed: Sequence[tuple[list[int], Number]] | None = None,
                            ) -> ObservableDistribution:
    """The distribution of ``values[s]`` (one observation per state of ``k``) at the end of the runs of
    ``k`` under the uniform scheduler over the enabled actions
    (:func:`checker.markov.core.observable_distribution`, eventual values).

    ``exact``: rationals (default: when the chain's probabilities are exact). ``dtmc`` and ``absorbed``
    (:func:`checker.markov.core.bottom_absorption`) may be passed when several observations of the same
    structure are needed, to solve the chain once."""
    chain = dtmc if dtmc is not None else dtmc_from_kripke(k, "uniform")
    use_exact = chain.is_exact if exact is None else exact
    return observable_distribution(chain, values, exact=use_exact, absorbed=absorbed)


def scheduler_independent(k: Kripke, values: Sequence[Hashable]) -> bool | None:
    """Whether the distribution of ``values`` at the end of the runs is the same under every scheduler:
    ``Pmin = Pmax`` (over all schedulers, within 1e-9) for every eventual value; ``None`` (not checked)
    when runs may end in cycles or states × outcomes exceeds 4·10⁶."""
    mdp = mdp_from_kripke(k)
    if mdp.is_dtmc:
        return True
    comps = bottom_components(mdp.induced_dtmc("uniform"))
    if any(len(c) > 1 for c in comps):
        return None
    ends: dict[Hashable, list[int]] = {}
    for (t,) in comps:
        ends.setdefault(values[t], []).append(t)
    if k.num_states * len(ends) > 4_000_000:  # dense states × outcomes matrices: not checked
        return None
    targets = np.zeros((k.num_states, len(ends)), dtype=bool)
    for j, ts in enumerate(ends.values()):
        targets[ts, j] = True
    lo = mdp_reach_many(mdp, targets, "min")
    hi = mdp_reach_many(mdp, targets, "max")
    init = [s for s, _ in mdp.initial]
    return bool(np.max(np.abs(hi[init] - lo[init]), initial=0.0) <= 1e-9)
