"""Privacy over many rounds without enumerating the observed sequences: the FL application of the
merged forward pass (:mod:`checker.privacy.observed_pld`).

The attacker's record of :class:`~checker.app.privacy_observation.ObservedSystem` (the sequence of what
it observes, or one client's updates) makes every observed sequence a state of its own, so that
exploration grows with the number of sequences, exponentially in the rounds. Here the FL system (with
the reductions of :class:`~checker.app.reductions.ObservationReducer`, which keep the record's
distribution exactly) is explored with only what the step into a state *shows* the attacker
(:class:`EmittingSystem`: the entry the record would append, read off the step exactly as the record
reads it), the uniform scheduler turns it into a chain (:func:`checker.markov.models.dtmc_from_kripke`),
and the forward pass over the two neighbouring chains gives the exact privacy loss distribution of the
record per prefix length: ε*, δ(ε), ε(δ), each round's marginal and conditional ε
(:func:`observed_levels`). Every figure equals the one of the enumerated record
(:func:`~checker.app.privacy_observation.observe_dataset`; tests compare them); a model whose runs
have cycles is refused (:class:`~checker.privacy.observed_pld.CyclicChain`) and the caller uses the
enumeration.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from checker.app.privacy_observation import DEFAULT_LIMITS, ObservedSystem, Recorded, StepReducer
from checker.errors import ExplorationIncomplete
from checker.markov.models import dtmc_from_kripke, mdp_from_kripke
from checker.mc.exploration import Limits, check_limits
from checker.mc.explore import explore
from checker.privacy.observed_pld import SILENT, Level, ObservedChain, forward_pld
from flmodel.data import DataPoint
from flmodel.system import FLState, FLSystem

__all__ = ["EmittingSystem", "ObservedRun", "observed_chain", "observed_levels"]

#: A state of :class:`EmittingSystem`: the FL state and what the step into it showed (``None``:
#: nothing; else the 1-tuple of the entry).
EmitState = tuple[FLState, tuple[Hashable] | None]


class EmittingSystem:
    """The FL system observed by the attacker without its record (a transition system of
    :mod:`checker.mc.ts`): a state is ``(FL state, entry)``, the entry being what the step into it
    appends to the record (:meth:`ObservedSystem.seen_entry` for the sequence the attacker observes;
    the delivered update for ``client``'s updates), ``None`` when it appends nothing. The record of a
    run is the sequence of its entries, so the distribution of the record is that of
    :class:`ObservedSystem`'s (same steps, same probabilities, same entries)."""

    def __init__(self, observed: ObservedSystem, client: str | None = None) -> None:
        self.observed = observed
        self.client = client

    def initial_states(self) -> list[EmitState]:
        return [(s, None) for s in self.observed.system.initial_states()]

    def successors(self, state: EmitState) -> list[tuple[object, EmitState, Fraction]]:
        fl = state[0]
        obs = self.observed
        before = obs.seen_value(fl) if self.client is None else None
        out: list[tuple[object, EmitState, Fraction]] = []
        for act, target, p, raw in obs.steps(fl):
            entry: tuple[Hashable] | None
            if self.client is None:
                entry = obs.seen_entry(fl, before, raw)
            else:
                delivered = obs.update(fl, act, raw)
                entry = (delivered[1],) if delivered is not None and delivered[0] == self.client else None
            out.append((act, (target, entry), p))
        return out

    def observable_names(self) -> Sequence[str]:
        return ("entry",)

    def observe(self, state: EmitState, name: str) -> object:
        if name != "entry":
            raise KeyError(f"unknown observable {name!r}")
        return state[1]


@dataclass(frozen=True)
class ObservedRun:
    """The chain of one neighbouring system (:func:`observed_chain`): ``chain``, the explored
    ``states``/``transitions``, the ``reductions`` applied and whether the explored structure has one
    action per state (``one_action``: the record's distribution is then the same under every
    scheduler, by the confluence the partial-order reduction rests on)."""

    chain: ObservedChain
    states: int
    transitions: int
    reductions: dict[str, Any]
    one_action: bool


def observed_chain(system: FLSystem, dataset: Sequence[DataPoint] | frozenset[DataPoint] | None = None, *,
                   client: str | None = None, observing: Sequence[str] = ("curmodpar",),
                   observer: Callable[[FLState, str], object] | None = None,
                   reducer: StepReducer | None = None, limits: Limits | None = None) -> ObservedRun:
    """The :class:`~checker.privacy.observed_pld.ObservedChain` of ``system`` (rebuilt for ``dataset``)
    under the uniform scheduler, each state labelled with what the step into it shows: the sequence of
    ``observing`` (default), or ``client``'s updates. ``reducer``: the reductions of the record's
    exploration (:meth:`StepReducer.steps` with what is recorded)."""
    sys_d = system if dataset is None else system.with_dataset(dataset)
    recorded = Recorded(tuple(observing), client is not None, False, None if client is None else (client,))
    step, applied = reducer.steps(sys_d, recorded) if reducer is not None else (None, {})
    ts = ObservedSystem(sys_d, record_updates=client is not None, observing=observing, observer=observer,
                        step=step, update_clients=None if client is None else (client,))
    k = explore(EmittingSystem(ts, client), limits=limits or DEFAULT_LIMITS,  # type: ignore[arg-type]  # plain (action, state, probability) steps
                observables=["entry"], probabilities=True, keep_states=False)
    if not k.complete:
        raise ExplorationIncomplete(f"the observed FL system is too large or unbounded ({k.limit_reason}); "
                                    "bound it with max_rounds / max_events", k.limit_reason)
    dtmc = dtmc_from_kripke(k)
    entries = list(k.observables["entry"])
    labels = [SILENT if e is None else e[0] for e in entries]
    chain = ObservedChain(dtmc.initial, dtmc.rows_exact(), labels)
    return ObservedRun(chain, k.num_states, k.num_transitions, applied, mdp_from_kripke(k).is_dtmc)


def observed_levels(r0: ObservedRun, r1: ObservedRun, limits: Limits | None = None) -> list[Level]:
    """The :class:`~checker.privacy.observed_pld.Level` of every prefix length of the record of two
    neighbouring runs (:func:`checker.privacy.observed_pld.forward_pld`), under ``limits`` (their
    shared deadline, checked after each level)."""
    return forward_pld(r0.chain, r1.chain, progress=lambda _n, _s: check_limits(limits))
