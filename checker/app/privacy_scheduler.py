"""NI-FL-DP of what the attacker observes when an adversary schedules the protocol.

The privacy pipeline (:mod:`checker.app.privacy_fl`) compares, for neighbouring datasets ``D0`` and
``D1``, the distributions ``P_D(o)`` of the attacker's observation ``o`` at the end of the runs
(:mod:`checker.app.privacy_observation`: the sequence of what it sees, its final value, the released
models, the trace, a client's updates).  The FL rules leave choices open — the order of the reports,
which partition is put, who reports before a deadline — and the uniform scheduler resolves them with
equal probabilities.  The seed's insider ([IIIf-FL], Section III) may instead control them.  Here ONE
scheduler σ, which sees the actions taken and what the attacker has observed so far but never the
data, resolves the choices in both systems (the scheduler quantification of [HyperPCTL] over
the ``D{ε,δ}`` operator of [dpCTL]), and

* ``ε*_C = max_{σ ∈ C} max_o |ln P_D0^σ(o) / P_D1^σ(o)|``,
* ``δ_C(ε) = max_{σ ∈ C} max(Σ_o (P_D0^σ(o) − e^ε P_D1^σ(o))⁺, the same with D0 and D1 swapped)``,
* ``Adv_C = δ_C(0)``: the best distinguisher's advantage ``TV(P_D0^σ, P_D1^σ)`` ([IIIf-FL], III-D:
  the likelihood-ratio attacker under equal priors) under the worst σ,

for the classes ``C`` of :mod:`checker.privacy.schedulers`: ``uniform`` (one scheduler, the pipeline's
figures), ``memoryless`` (deterministic, a function of the current observation), ``adaptive`` (alias
``worst``: deterministic and history-dependent, which by multilinearity is also the worst of all
randomised schedulers) and ``blind`` ([dpCTL]'s query schedulers: a function of its own past actions
only, :mod:`checker.privacy.blind`).  The observation of a state is the attacker's *record* so far (the
pipeline's observable of the chosen mode, e.g. ``seen`` for ``sequence``) and the actions on offer; the
attacker's outcome is the record at the end of the run (``final`` outcomes of the history tree).  So an
adaptive scheduler sees its own steps, the steps on offer and the attacker's record; a memoryless one
the current record and the steps on offer; a blind one its own steps only, and it may take a step only
where it is on offer in every run it cannot tell apart.  Under ``uniform`` every figure equals the
pipeline's, which :func:`scheduled_pair` re-checks, and ``uniform ≤ memoryless, blind ≤ adaptive``
holds by inclusion of the classes (uniform is blind where the steps on offer depend only on the steps
taken).

This module joins the FL pipeline's explored structures to the generic scheduler engine; the
engine itself (:mod:`checker.privacy.schedulers`) knows nothing of FL.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, cast

from checker.app.privacy_observation import DatasetObservation
from checker.app.privacy_results import number_json, outcome_text
from checker.mc.kripke import Kripke
from checker.privacy.ni_fl_dp import Eps, EpsilonResult, Number, pure_epsilon, ratio_within
from checker.privacy.observable_mdp import HistoryTree, ObservableMDP, build_history_tree
from checker.privacy.schedulers import (
    Scheduler,
    SchedulerClass,
    WorstCase,
    scheduler_class_json,
    worst_delta,
    worst_epsilon,
)

__all__ = ["ScheduledPair", "kripke_observable_mdps", "record_observable", "scheduled_pair"]


def record_observable(mode: str, client: str | None) -> str:
    """The observable of :class:`~checker.app.privacy_observation.ObservedSystem` whose end-of-run
    value is the attacker's outcome in observation ``mode`` (:func:`parse_observe`'s result)."""
    names = {"sequence": "seen", "final": "final", "curmodpar": "releases", "trace": "trace"}
    if mode == "client":
        return f"updates:{client}"
    return names[mode]


def kripke_observable_mdps(structures: Sequence[Kripke], values: Sequence[Sequence[Hashable]]
                           ) -> tuple[list[ObservableMDP], list[Hashable]]:
    """The :class:`ObservableMDP` of each explored structure with probabilities, and the table that
    decodes their observations.

    States are the state ids, the initial distribution is uniform over ``k.initial`` (IIIf's
    ``Kripke S I``), the edges of a state that share an action form one choice (as in
    :func:`checker.markov.models.build_mdp`), a deadlock is terminal, and state ``s`` of structure
    ``i`` is observed as ``(code of values[i][s], its enabled actions)``: the scheduler knows what it
    may choose from (at a terminal state: none).  The codes are shared by all structures
    (``decode[code]`` is the value), so observations compare as small integers.  Two distinct actions
    whose names coincide are told apart by their action index (``name#i``)."""
    table: dict[Hashable, int] = {}
    decode: list[Hashable] = []
    out = []
    for k, vals in zip(structures, values, strict=True):
        codes = []
        for v in vals:
            code = table.get(v)
            if code is None:
                code = table[v] = len(decode)
                decode.append(v)
            codes.append(code)
        out.append(_observable_mdp(k, codes))
    return out, decode


def _observable_mdp(k: Kripke, codes: Sequence[int]) -> ObservableMDP:
    if k.edge_prob is None and k.edge_prob_exact is None:
        raise RuntimeError("the scheduler search needs a structure explored with probabilities")
    names = [str(a) for a in k.actions]
    clash = {n for n in names if names.count(n) > 1}
    label = [f"{n}#{i}" if n in clash else n for i, n in enumerate(names)]
    initial = [int(s) for s in k.initial]
    init: dict[Any, Number] = {s: Fraction(initial.count(s), len(initial)) for s in dict.fromkeys(initial)}
    transitions: dict[Any, dict[str, dict[Any, Number]]] = {}
    for s in range(k.num_states):
        lo, hi = int(k.succ_ptr[s]), int(k.succ_ptr[s + 1])
        if lo == hi:
            continue
        acts: dict[str, dict[Any, Number]] = {}
        for e in range(lo, hi):
            p = k.probability(e)
            assert p is not None
            dist = acts.setdefault(label[int(k.edge_action[e])], {})
            t = int(k.succ_idx[e])
            dist[t] = dist.get(t, 0) + p
        transitions[s] = acts
    observation = [(codes[s], tuple(sorted(transitions.get(s, {})))) for s in range(k.num_states)]
    return ObservableMDP(init, transitions, observation.__getitem__)


@dataclass(frozen=True)
class ScheduledPair:
    """One neighbouring pair judged over a scheduler class.

    ``p0``/``p1``: the outcome distributions under ``scheduler`` — the scheduler attaining ε*_C (its
    choices in model terms; ``None`` for ``uniform``); ``epsilon``: ε* of these distributions, which is
    ε*_C when ``epsilon_case.exact``; ``epsilon_case``, ``delta_case`` (δ_C at ``eps_checked``),
    ``advantage_case`` (δ_C(0)): the engine's results in the worse direction, each with its bracket
    ``[value, upper]`` when the search stopped at a limit; ``uniform_epsilon``: ε* under the uniform
    scheduler, for comparison; ``histories``: the size of the joint history tree."""

    schedulers: SchedulerClass
    observe: str
    p0: dict[Hashable, Number]
    p1: dict[Hashable, Number]
    epsilon: EpsilonResult
    eps_checked: Eps
    epsilon_case: WorstCase
    delta_case: WorstCase
    advantage_case: WorstCase
    uniform_epsilon: EpsilonResult
    scheduler: Scheduler | None
    histories: int
    decode: Sequence[Hashable] = ()

    @property
    def exact(self) -> bool:
        return self.epsilon_case.exact and self.delta_case.exact and self.advantage_case.exact

    def epsilon_within(self, eps: Eps) -> bool | None:
        """Whether ε*_C ≤ ``eps``: decided from the bracket (``None`` when it straddles ``eps``)."""
        best = self.epsilon.ratio
        if best is None:
            return eps.infinite
        if not ratio_within(best, eps):
            return False
        if self.epsilon_case.exact:
            return True
        upper = self.epsilon_case.upper
        if upper == float("inf"):
            return None
        return None if float(upper) > float(eps) + 1e-12 else True

    def choices_text(self, limit: int = 8) -> list[str]:
        """The scheduler's choices in model terms, one line each: ``after <steps so far> (seen <what the
        attacker has observed>): <step>`` (adaptive), ``on seeing <observation>: <step>`` (memoryless)
        or ``after <steps so far>: <step>`` (blind); at most ``limit`` lines and a count of the rest."""
        if self.scheduler is None:
            return []
        out = []
        for key, action in self.scheduler.choices[:limit]:
            if self.scheduler.kind == "actions":
                steps = cast(tuple[str, ...], key)
                out.append(f"after {', '.join(steps) if steps else 'the start'}: {action}")
            elif self.scheduler.kind == "history":
                history = cast(tuple[Hashable, ...], key)
                acts = [str(a) for a in history[1::2]]
                seen = outcome_text(self.decode[cast(tuple[int, ...], history[-1])[0]], self.observe)
                out.append(f"after {', '.join(acts) if acts else 'the start'} (seen {seen}): {action}")
            else:
                seen = outcome_text(self.decode[cast(tuple[int, ...], key)[0]], self.observe)
                out.append(f"on seeing {seen}: {action}")
        if len(self.scheduler.choices) > limit:
            out.append(f"… {len(self.scheduler.choices) - limit} more choice(s)")
        return out

    def json(self) -> dict[str, Any]:
        def case(c: WorstCase) -> dict[str, Any]:
            return {"value": number_json(c.value), "upper": number_json(c.upper), "exact": c.exact,
                    "direction": list(c.direction), "note": c.note}
        return {
            "class": self.schedulers,
            "scheduler_class": scheduler_class_json(self.schedulers),
            "epsilon": case(self.epsilon_case),
            "delta": case(self.delta_case),
            "delta_at_epsilon": self.eps_checked.text(),
            "advantage": case(self.advantage_case),
            "uniform_epsilon": self.uniform_epsilon.json(),
            "uniform_epsilon_exact": self.uniform_epsilon.text(),
            "histories": self.histories,
            "choices": self.choices_text(limit=10_000),
        }


def _distributions(tree: HistoryTree, choice: Mapping[int, str] | None, decode: Sequence[Hashable]
                   ) -> tuple[dict[Hashable, Number], dict[Hashable, Number]]:
    """The outcome distributions (the decoded last observation of the complete histories) in D and
    D' under the deterministic scheduler ``choice`` (node -> action), or the uniform one when ``None``."""
    zero: Number = Fraction(0) if tree.exact else 0.0
    out: tuple[dict[Hashable, Number], dict[Hashable, Number]] = ({}, {})
    stack: list[tuple[int, Number]] = [(r, Fraction(1) if tree.exact else 1.0) for r in tree.roots]
    while stack:
        node, weight = stack.pop()
        if tree.is_leaf(node):
            o = decode[cast(tuple[int, ...], tree.outcome(node, "final"))[0]]
            for side in (0, 1):
                m = tree.mass[node][side] * weight
                if m:
                    out[side][o] = out[side].get(o, zero) + m
            continue
        actions = tree.enabled[node] if choice is None else (choice[node],)
        share = weight / len(actions) if len(actions) > 1 else weight
        for a in actions:
            stack.extend((child, share) for child in tree.children[node][a])
    return out


def _choice(tree: HistoryTree, scheduler: Scheduler) -> dict[int, str]:
    """The node -> action map of a deterministic scheduler on every inner node of ``tree``
    (histories it never reaches get their first enabled action: they carry no mass under it)."""
    table = scheduler.as_dict()
    out: dict[int, str] = {}
    for node in range(len(tree)):
        if tree.is_leaf(node):
            continue
        action = table.get(scheduler.key(tree.histories[node]))
        out[node] = str(action) if action is not None else tree.enabled[node][0]
    return out


def _same(p: Mapping[Hashable, Number], q: Mapping[Hashable, Number]) -> bool:
    """Equal distributions (outcomes of probability 0 ignored): exactly for rationals, within 1e-9
    for floats."""
    keys = {o for o, v in p.items() if v} | {o for o, v in q.items() if v}
    for o in keys:
        a, b = p.get(o, 0), q.get(o, 0)
        if isinstance(a, float) or isinstance(b, float):
            if abs(float(a) - float(b)) > 1e-9:
                return False
        elif a != b:
            return False
    return True


def _same_ratio(a: Number | None, b: Number | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)))
    return Fraction(a) == Fraction(b)


def _worse(a: WorstCase, b: WorstCase) -> WorstCase:
    return max(a, b, key=lambda c: (float(c.upper), float(c.value)))


def scheduled_pair(o0: DatasetObservation, o1: DatasetObservation, observe: str, client: str | None,
                   eps: Eps | None, *, schedulers: SchedulerClass,
                   uniform: Mapping[str, Mapping[Hashable, Number]], node_limit: int = 100_000,
                   time_limit: float | None = None, blind_limit: int = 100_000) -> ScheduledPair:
    """Judge the pair ``(o0, o1)`` (each explored with ``keep_kripke=True``) over ``schedulers``.

    ``observe``/``client``: the observation mode (:func:`~checker.app.privacy_observation.parse_observe`,
    whose record observable :func:`record_observable` names); ``eps``: the ε at which δ is
    evaluated (``None``: at the ε* found, 0 when it is infinite); ``uniform``: the pipeline's
    uniform-scheduler distributions ``{"p0": …, "p1": …}``,
    which the uniform scheduler of the history tree must reproduce exactly (else
    ``RuntimeError``, an internal error).  ``ValueError`` when the two systems offer different
    actions after the same history (no scheduler that sees only the history exists), when no blind
    scheduler exists, or past ``blind_limit`` blind schedulers (their exact worst case is refused)."""
    observable = record_observable(observe, client)
    structures = []
    for o in (o0, o1):
        if o.kripke is None:
            raise RuntimeError("scheduled_pair needs the explored structures (keep_kripke=True)")
        structures.append(o.kripke)
    mdps, decode = kripke_observable_mdps(structures, [list(k.observables[observable]) for k in structures])
    tree = build_history_tree(mdps[0], mdps[1])
    u0, u1 = _distributions(tree, None, decode)
    if not (_same(u0, uniform["p0"]) and _same(u1, uniform["p1"])):
        raise RuntimeError("the uniform scheduler of the history tree disagrees with the uniform "
                            "end-of-run distribution of the privacy pipeline")
    uniform_eps = pure_epsilon(u0, u1)
    def delta_at(at: Eps) -> WorstCase:
        return _worse(*(worst_delta(tree, at, direction=d, schedulers=schedulers, outcome="final",
                                    node_limit=node_limit, time_limit=time_limit, blind_limit=blind_limit)
                         for d in (0, 1)))

    decisive = _worse(*(worst_epsilon(tree, direction=d, schedulers=schedulers, outcome="final",
                                      node_limit=node_limit, time_limit=time_limit, blind_limit=blind_limit)
                        for d in (0, 1)))
    if decisive.scheduler is None:
        p0, p1 = u0, u1
    else:
        p0, p1 = _distributions(tree, _choice(tree, decisive.scheduler), decode)
    found = pure_epsilon(p0, p1)
    if decisive.exact and not _same_ratio(decisive.ratio, found.ratio):
        raise RuntimeError(f"the worst scheduler's distributions give ε* = {found.text()}, the search "
                           f"reported e^ε* = {decisive.ratio}")
    checked = eps if eps is not None else (
        found.as_eps() if not found.infinite else Eps(value=Fraction(0)))
    return ScheduledPair(schedulers, observe, dict(p0), dict(p1), found, checked, decisive,
                         delta_at(checked),
                         delta_at(Eps(value=Fraction(0))), uniform_eps, decisive.scheduler, len(tree),
                         decode)
