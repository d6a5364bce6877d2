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

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, cast

from checker.app.privacy_budget import (
    DEFAULT_DELTA_PRIME,
    DEFAULT_INTERVAL,
    BudgetReport,
    LevelFigures,
    SequenceFigures,
    decomposition_readings,
    rows_of,
)
from checker.app.privacy_observation import DEFAULT_LIMITS, ObservedSystem, Recorded, StepReducer
from checker.errors import ExplorationIncomplete
from checker.markov.models import dtmc_from_kripke, mdp_from_kripke
from checker.mc.exploration import Limits, check_limits
from checker.mc.explore import explore
from checker.privacy.ni_fl_dp import Eps, EpsilonResult, delta_for_epsilon, pure_epsilon
from checker.privacy.observed_pld import (
    SILENT,
    CyclicChain,
    ForwardPass,
    Level,
    ObservedChain,
    epsilon_for_delta,
    forward_pld,
    pld_delta,
    pld_pair,
)
from flmodel.data import DataPoint
from flmodel.system import FLState, FLSystem

__all__ = ["ENUMERATED_OUTCOMES", "MAX_ATOMS", "MAX_BELIEFS", "EmittingSystem", "ForwardPrivacy",
           "ObservedRun", "SeveralActions", "StreamPass", "cached_pass", "forward_budget", "forward_privacy",
           "observed_chain", "observed_levels", "pass_figures", "stream_pass"]

#: A state of :class:`EmittingSystem`: the FL state and what the step into it showed (``None``:
#: nothing; else the 1-tuple of the entry).
EmitState = tuple[FLState, tuple[Hashable] | None]


class SeveralActions(ValueError):
    """An exploration asked for one action per state (``one_action``) met a state with several: the
    record's distribution may depend on the scheduler, which the enumeration checks."""


class EmittingSystem:
    """The FL system observed by the attacker without its record (a transition system of
    :mod:`checker.mc.ts`): a state is ``(FL state, entry)``, the entry being what the step into it
    appends to the record (:meth:`ObservedSystem.seen_entry` for the sequence the attacker observes;
    the delivered update for ``client``'s updates), ``None`` when it appends nothing. The record of a
    run is the sequence of its entries, so the distribution of the record is that of
    :class:`ObservedSystem`'s (same steps, same probabilities, same entries)."""

    def __init__(self, observed: ObservedSystem, client: str | None = None, *,
                 one_action: bool = False) -> None:
        self.observed = observed
        self.client = client
        self.one_action = one_action

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
        if self.one_action and len({a for a, _, _ in out}) > 1:
            raise SeveralActions(f"{len({a for a, _, _ in out})} actions enabled in one state")
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
                   reducer: StepReducer | None = None, limits: Limits | None = None,
                   one_action: bool = False) -> ObservedRun:
    """The :class:`~checker.privacy.observed_pld.ObservedChain` of ``system`` (rebuilt for ``dataset``)
    under the uniform scheduler, each state labelled with what the step into it shows: the sequence of
    ``observing`` (default), or ``client``'s updates. ``reducer``: the reductions of the record's
    exploration (:meth:`StepReducer.steps` with what is recorded). ``one_action``: raise
    :class:`SeveralActions` at the first state with more than one action (where only a structure with
    one action per state is of use)."""
    sys_d = system if dataset is None else system.with_dataset(dataset)
    recorded = Recorded(tuple(observing), client is not None, False, None if client is None else (client,))
    step, applied = reducer.steps(sys_d, recorded) if reducer is not None else (None, {})
    ts = ObservedSystem(sys_d, record_updates=client is not None, observing=observing, observer=observer,
                        step=step, update_clients=None if client is None else (client,))
    k = explore(EmittingSystem(ts, client, one_action=one_action), limits=limits or DEFAULT_LIMITS,  # type: ignore[arg-type]  # plain (action, state, probability) steps
                observables=["entry"], probabilities=True, keep_states=False)
    if not k.complete:
        raise ExplorationIncomplete(f"the observed FL system is too large or unbounded ({k.limit_reason}); "
                                    "bound it with max_rounds / max_events", k.limit_reason)
    dtmc = dtmc_from_kripke(k)
    entries = list(k.observables["entry"])
    labels = [SILENT if e is None else cast("tuple[Hashable]", e)[0] for e in entries]
    chain = ObservedChain(dtmc.initial, dtmc.rows_exact(), labels)
    return ObservedRun(chain, k.num_states, k.num_transitions, applied, mdp_from_kripke(k).is_dtmc)


def observed_levels(r0: ObservedRun, r1: ObservedRun, limits: Limits | None = None) -> list[Level]:
    """The :class:`~checker.privacy.observed_pld.Level` of every prefix length of the record of two
    neighbouring runs (:func:`checker.privacy.observed_pld.forward_pld`, without bounds), under
    ``limits`` (their shared deadline, checked after each level)."""
    return forward_pld(r0.chain, r1.chain, progress=lambda _n, _s: check_limits(limits)).levels


#: Defaults of the forward pass (:func:`checker.privacy.observed_pld.forward_pld`): past this many
#: atoms in a level the PLD is no longer kept (ε*, the elements and conditionals stay exact), and a
#: level with more pairs of beliefs (what is observed does not reveal the state) is not extended.
MAX_ATOMS = 50_000
MAX_BELIEFS = 1_000
#: Up to this many observed sequences on each side, a privacy property of ``flcheck check`` is decided
#: on the enumerated distributions (cheap there, and the reports plot them); beyond, by the forward pass.
ENUMERATED_OUTCOMES = 10_000


@dataclass(frozen=True)
class StreamPass:
    """The forward pass of one observed stream (the sequence the attacker observes, or one client's
    updates) of a neighbouring pair, with the two explorations behind it."""

    result: ForwardPass
    runs: tuple[ObservedRun, ObservedRun]
    #: figures already computed from the levels (δ at an ε, ε at a δ), for the other properties
    memo: dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)


def stream_pass(system: Any, d0: frozenset[DataPoint], d1: frozenset[DataPoint], *, client: str | None,
                observing: Sequence[str], reducer: StepReducer | None, limits: Limits | None = None,
                max_atoms: int | None = MAX_ATOMS, max_beliefs: int | None = MAX_BELIEFS,
                one_action: bool = False) -> StreamPass:
    """:func:`observed_chain` on ``d0`` and ``d1`` (``one_action``: as it says) and the forward pass
    over them. ``system``: a scenario's system (its FL system as ``fl``, its observables as
    ``observe``) or an FL system."""
    fl, observer = (system.fl, system.observe) if hasattr(system, "fl") else (system, None)
    runs = tuple(observed_chain(fl, d, client=client, observing=observing, observer=observer,
                                reducer=reducer, limits=limits, one_action=one_action) for d in (d0, d1))
    result = forward_pld(runs[0].chain, runs[1].chain, max_atoms=max_atoms, max_beliefs=max_beliefs,
                         progress=lambda _n, _s: check_limits(limits))
    return StreamPass(result, (runs[0], runs[1]))


def pass_figures(what: str, sp: StreamPass, *, delta_prime: float = DEFAULT_DELTA_PRIME,
                 eps_ref: Eps | None = None, interval: float = DEFAULT_INTERVAL) -> SequenceFigures:
    """The :class:`~checker.app.privacy_budget.SequenceFigures` of a stream from its forward pass:
    every figure of :func:`~checker.app.privacy_budget.sequence_figures` on the enumerated
    sequences, exactly (δ and ε(δ') only for the levels whose PLD was kept)."""
    levels: list[LevelFigures] = []
    memo = sp.memo
    for i, lv in enumerate(sp.result.levels):
        e0, e1 = lv.element
        exact_delta = at = None
        if lv.atoms is not None:
            if eps_ref is not None:
                if ("delta", i, eps_ref) not in memo:
                    memo[("delta", i, eps_ref)] = pld_delta(lv.atoms, eps_ref)
                exact_delta = memo[("delta", i, eps_ref)]
            if ("at", i, delta_prime) not in memo:
                p0: dict[Hashable, Fraction] = {j: a.m0 for j, a in enumerate(lv.atoms) if a.m0}
                p1: dict[Hashable, Fraction] = {j: a.m1 for j, a in enumerate(lv.atoms) if a.m1}
                memo[("at", i, delta_prime)] = epsilon_for_delta(p0, p1, Fraction(str(delta_prime)))
            at = memo[("at", i, delta_prime)]
        levels.append(LevelFigures(pure_epsilon(e0, e1),
                                   None if eps_ref is None else delta_for_epsilon(e0, e1, eps_ref),
                                   lv.epsilon, exact_delta, at, lv.atoms is not None))
    conditional = [lv.conditional for lv in sp.result.levels if lv.conditional is not None]
    rows = rows_of(levels, conditional, delta_prime=delta_prime, eps_ref=eps_ref, interval=interval)
    stopped = None if sp.result.complete else f"figures through round {len(levels)}: {sp.result.stopped}"
    most = max((lv.situations for lv in sp.result.levels), default=0)
    return SequenceFigures(what, rows, {}, {}, stopped=stopped, method="forward pass", atoms=most)


def forward_budget(system: Any, d0: frozenset[DataPoint], d1: frozenset[DataPoint], label: str, *,
                   observing: Sequence[str], reducer: StepReducer | None, relation: Mapping[str, str] | None,
                   limits: Limits | None = None, delta_prime: float = DEFAULT_DELTA_PRIME,
                   eps_ref: Eps | None = None, cache: dict[Hashable, StreamPass] | None = None,
                   max_atoms: int | None = MAX_ATOMS, max_beliefs: int | None = MAX_BELIEFS) -> BudgetReport:
    """The :class:`~checker.app.privacy_budget.BudgetReport` of the pair ``(d0, d1)`` from forward
    passes (:func:`stream_pass`) over the sequence the attacker observes and each client's updates,
    as :func:`~checker.app.privacy_budget.budget_of_pair` gives it from the enumerated sequences.
    ``cache``: the passes already made (keyed by datasets, what is observed and the stream), filled;
    ``max_atoms``, ``max_beliefs``: the bounds of :func:`~checker.privacy.observed_pld.forward_pld`."""
    fl = system.fl if hasattr(system, "fl") else system

    def get(client: str | None) -> StreamPass:
        return cached_pass(cache, system, d0, d1, client=client, observing=observing, reducer=reducer,
                           limits=limits, max_atoms=max_atoms, max_beliefs=max_beliefs)

    kw: dict[str, Any] = {"delta_prime": delta_prime, "eps_ref": eps_ref}
    releases = pass_figures("releases", get(None), **kw)
    clients = {}
    for c in fl.clients:
        figs = pass_figures(f"client {c}", get(c), **kw)
        if figs.rows:
            clients[c] = figs
    return BudgetReport(label, delta_prime, eps_ref, releases, clients,
                        decomposition_readings(releases, clients, relation))


def cached_pass(cache: dict[Hashable, StreamPass] | None, system: Any, d0: frozenset[DataPoint],
                d1: frozenset[DataPoint], *, client: str | None, observing: Sequence[str],
                reducer: StepReducer | None, limits: Limits | None = None, max_atoms: int | None = MAX_ATOMS,
                max_beliefs: int | None = MAX_BELIEFS, one_action: bool = False) -> StreamPass:
    """:func:`stream_pass`, kept in ``cache`` (keyed by the datasets, what is observed and the
    stream) for the other figures of the same pair (a pass made with ``one_action`` is the same pass)."""
    k = (d0, d1, tuple(observing), client, max_atoms, max_beliefs)
    bounds: dict[str, Any] = {"max_atoms": max_atoms, "max_beliefs": max_beliefs, "one_action": one_action}
    if cache is None:
        return stream_pass(system, d0, d1, client=client, observing=observing, reducer=reducer, limits=limits,
                           **bounds)
    if k not in cache:
        cache[k] = stream_pass(system, d0, d1, client=client, observing=observing, reducer=reducer,
                               limits=limits, **bounds)
    return cache[k]


@dataclass(frozen=True)
class ForwardPrivacy:
    """NI-FL-DP of the sequence the attacker observes from the forward pass: ``epsilon`` (ε* of the
    whole sequence, with a worst outcome and its probabilities), ``outcomes`` (how many sequences
    each dataset charges), ``pair`` (the PLD as two distributions over representative sequences,
    ``None`` when not kept), ``independent`` (per dataset: ``True`` when the explored structure has
    one action per state, so every scheduler gives the same distribution; ``None``: not checked) and
    ``explorations`` (the two explorations, for the JSON)."""

    epsilon: EpsilonResult
    outcomes: tuple[int, int]
    pair: tuple[dict[Hashable, Fraction], dict[Hashable, Fraction]] | None
    independent: list[bool | None]
    explorations: dict[str, Any]


def forward_privacy(system: Any, d0: frozenset[DataPoint], d1: frozenset[DataPoint], *,
                    observing: Sequence[str], reducer: StepReducer | None, limits: Limits | None = None,
                    cache: dict[Hashable, StreamPass] | None = None,
                    one_action: bool = False) -> ForwardPrivacy:
    """ε* of the sequence the attacker observes on ``d0`` against ``d1`` under the uniform scheduler,
    from the forward pass (:func:`cached_pass`; ``one_action``: only over structures with one action
    per state, else :class:`SeveralActions` at the first state with several). Raises
    :class:`~checker.privacy.observed_pld.CyclicChain` where it does not apply."""
    sp = cached_pass(cache, system, d0, d1, client=None, observing=observing, reducer=reducer, limits=limits,
                     one_action=one_action)
    levels = sp.result.levels
    if not sp.result.complete:
        raise CyclicChain(f"the forward pass stopped: {sp.result.stopped}")
    if levels:
        last = levels[-1]
        eps, outcomes = last.epsilon, last.outcomes
        pair = None if last.atoms is None else pld_pair(last.atoms, last.decode)
    else:  # nothing is ever observed: one empty sequence on each side
        eps = pure_epsilon({(): Fraction(1)}, {(): Fraction(1)})
        outcomes, pair = (1, 1), ({(): Fraction(1)}, {(): Fraction(1)})
    explorations = {side: {"states": r.states, "transitions": r.transitions, "reductions": r.reductions,
                           "record": "forward pass"} for side, r in zip(("D0", "D1"), sp.runs, strict=True)}
    independent: list[bool | None] = [True if r.one_action else None for r in sp.runs]
    return ForwardPrivacy(eps, outcomes, pair, independent, explorations)
