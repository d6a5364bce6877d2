"""Rounds, clients and budgets: the ε of what the attacker sees per round and per client, the exact ε
of the whole sequence, and the composition bounds a DP accountant gives, side by side.

Application layer: it reads the observations of the one privacy pipeline
(:func:`checker.app.privacy_fl.privacy_report`) for a declared neighbouring pair ``(D0, D1)``.

A sequence ``o = (o_1, …, o_k)`` of releases (the released models, one per round: what an attacker on
the ground link sees) or of one client's reports (its updates, ``gradient (igra s) c`` of [IIIf-FL]
III-C, one per report) has, for each round ``r``:

* the **marginal** ε of round ``r`` alone: ``ε*(P0(o_r), P1(o_r))`` (:data:`~checker.privacy.ni_fl_dp.END`
  when the run released nothing in round ``r``) — what the attacker sees in that round; "per report"
  for a client;
* the **conditional** ε, the round's mechanism: ``ε_r = max_h ε*(P0(o_r | h), P1(o_r | h))`` over the
  histories ``h = o_<r`` both datasets reach (:func:`checker.privacy.ni_fl_dp.per_round_epsilons`): round
  ``r`` is an ``ε_r``-DP mechanism adaptively composed with the earlier ones;
* the **exact** ε of rounds ``1..r`` together: ``ε*(P0(o_≤r), P1(o_≤r))``, and with a reference ε its
  exact ``δ(ε)`` (hockey-stick divergence, both directions);
* the bounds a DP accountant gives for rounds ``1..r`` knowing only that round ``i`` is ``ε_i``-DP:
  **basic** composition ``Σ_{i≤r} ε_i`` ([DworkRoth14] Thm. 3.16); **advanced** composition
  ([DRV10]; [DworkRoth14] Thm. 3.20) of ``r`` mechanisms each ``ε``-DP with ``ε = max_{i≤r} ε_i``: for
  every ``δ' ∈ (0, 1)`` the composition is ``(ε', δ')``-DP with
  ``ε' = sqrt(2 r ln(1/δ')) ε + r ε (e^ε − 1)``; and the **numerical PLD** composition: every pure
  ``ε_i``-DP pair is dominated by randomized response ``RR(ε_i) = ((e^ε_i, 1)/(1 + e^ε_i), (1, e^ε_i)/(1 +
  e^ε_i))`` ([KOV15]), so the convolution of their privacy-loss distributions
  (:class:`checker.crossval.privacy_curves.GridPLD`, pessimistic "connect the dots" grid [ConnectDots]
  with its slack) bounds ``δ(ε)`` of any adaptive composition; its ``ε(δ')`` is reported, and a bracket
  ``[optimistic, pessimistic]`` of its ``δ`` at the reference ε. The privacy loss of ``RR(ε_i)`` is
  ``±ε_i``, so the composed loss is at most ``Σ ε_i``: the PLD's ``ε(δ') ≤ Σ ε_i`` and, for a reference
  ``ε ≥ Σ ε_i``, its ``δ(ε) = 0`` exactly (reported as ``[0, 0]``, not as the grid's rounding) — with a
  pure budget (δ = 0) the PLD accountant agrees with basic composition.

Laws (tested): ``max_r marginal_r ≤ exact_k`` (post-processing: round ``r`` is a function of the
sequence), ``exact_r ≤ exact_{r+1}`` (the prefix is a function of the longer one), ``exact_r ≤ basic_r``
(the chain rule ``P(o) = Π_r P(o_r | o_<r)``), and the PLD ``ε(δ')`` is at most basic and advanced up to
the grid's error.

``NI_Decomposition`` ([IIIf-FL] III-C) is judged in two readings of its premise "every client's
``gradient`` is ε-DP" (:class:`DecompositionReading`): **per report** (each report alone: the largest
marginal ε of a constrained client's reports, as the seed writes it) and **per client sequence** (a
client's whole update sequence); the conclusion — the released sequence is ε-DP — is compared with
each. Over several rounds the per-report premise is met with a smaller ε than the rounds compose to;
the per-sequence premise may hold or not (on ``moniteo_rounds.fl`` it fails too: ln(31/8) < ln 4, a
client's later reports carry the released model; ``spec/SPEC.md`` R36). What always follows is the
conclusion from all clients' updates together (post-processing, ``DecompositionResult.joint_eps``).

A ``budget`` property (:func:`first_exceeded`) decides ``(ε_B, δ_B)`` on the exact figures: per round
(each round's marginal), over rounds (the release sequence through round ``r``), or per client over
rounds (each client's reports through report ``r``); it reports the first round (and client) at which
``δ(ε_B) > δ_B`` (``δ_B = 0``: ``ε* > ε_B``, decided exactly).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from checker.app.privacy_observation import DatasetObservation
from checker.app.privacy_results import PairResult, PrivacyReport, number_json
from checker.crossval.privacy_curves import DiscretePLD, GridPLD
from checker.privacy.ni_fl_dp import (
    END,
    Eps,
    EpsilonResult,
    compose_advanced,
    compose_basic,
    delta_for_epsilon,
    eps_within,
    per_round_epsilons,
    pure_epsilon,
    ratio_within,
)
from checker.privacy.observed_pld import epsilon_for_delta
from checker.render import number_text

__all__ = ["DEFAULT_DELTA_PRIME", "BudgetReport", "DecompositionReading", "Exceedance", "RoundFigures",
           "SequenceFigures", "budget_of_pair", "compose_plds", "declared_budgets",
           "first_exceeded", "prefix", "privacy_json", "rr_pair"]

Number = Fraction | float
Dist = Mapping[Hashable, Number]
#: The δ' of advanced and PLD composition when no budget δ is given.
DEFAULT_DELTA_PRIME = 1e-6
#: Grid interval of the PLD composition (the pessimistic grid's error is O(h²)).
DEFAULT_INTERVAL = 1e-3
Scope = Literal["round", "sequence", "client"]


def prefix(dist: Dist, r: int) -> dict[Hashable, Number]:
    """The distribution of the first ``r`` elements of a distribution over sequences (tuples)."""
    out: dict[Hashable, Number] = {}
    for o, p in dist.items():
        key = tuple(o[:r]) if isinstance(o, tuple) else o
        out[key] = out.get(key, 0) + p
    return out


def _element(dist: Dist, r: int) -> dict[Hashable, Number]:
    """The distribution of element ``r`` (from 0) of sequences, :data:`END` for shorter ones."""
    out: dict[Hashable, Number] = {}
    for o, p in dist.items():
        key = o[r] if isinstance(o, tuple) and len(o) > r else END
        out[key] = out.get(key, 0) + p
    return out


def _length(*dists: Dist) -> int:
    return max((len(o) for d in dists for o in d if isinstance(o, tuple)), default=0)


def rr_pair(eps: EpsilonResult | Eps) -> tuple[dict[Hashable, float], dict[Hashable, float]]:
    """Randomized response with ``e^ε``: the pair dominating every pure ε-DP pair ([KOV15])."""
    e = eps.as_eps() if isinstance(eps, EpsilonResult) else eps
    if e.infinite:
        return {0: 1.0}, {1: 1.0}
    x = e.exp_float()
    return {0: x / (1 + x), 1: 1 / (1 + x)}, {0: 1 / (1 + x), 1: x / (1 + x)}


def compose_plds(pairs: Sequence[tuple[Dist, Dist]], interval: float = DEFAULT_INTERVAL
                 ) -> tuple[GridPLD, GridPLD] | None:
    """The composition of the pairs ``(P_i, Q_i)`` as independent mechanisms by their privacy-loss
    distributions (:meth:`DiscretePLD.from_distributions`, gridded pessimistically and optimistically,
    convolved by :meth:`GridPLD.compose`): ``(pessimistic, optimistic)`` with ``optimistic.delta(ε) ≤
    δ_true(ε) ≤ pessimistic.delta(ε)`` up to the slack they carry; ``None`` for no pair."""
    out: list[GridPLD] = []
    for pessimistic in (True, False):
        acc: GridPLD | None = None
        for p, q in pairs:
            g = DiscretePLD.from_distributions(p, q).to_tails().to_grid(interval, pessimistic=pessimistic)
            acc = g if acc is None else acc.compose(g)
        if acc is None:
            return None
        out.append(acc)
    return out[0], out[1]


@dataclass(frozen=True)
class RoundFigures:
    """The figures of round (or report) ``round`` (from 1) of a sequence (see the module docstring):
    ``marginal``, ``conditional`` (the round's mechanism), ``exact`` (rounds 1..r together) and its
    ``exact_delta`` at the reference ε (``None`` without one); the accountant's bounds for rounds 1..r:
    ``basic`` (Σ conditional), ``advanced`` (ε' at δ', ``None`` when δ' ∉ (0, 1)), ``pld`` (ε(δ') of the
    PLD composition of the dominating pairs) and ``pld_delta`` (its ``(optimistic, pessimistic)`` δ at
    the reference ε)."""

    round: int
    marginal: EpsilonResult
    conditional: EpsilonResult
    exact: EpsilonResult
    exact_delta: Number | None
    basic: Eps
    advanced: float | None
    pld: float
    pld_delta: tuple[float, float] | None
    #: δ of the round's marginal at the reference ε (``None`` without one)
    marginal_delta: Number | None = None
    #: ``e^ε(δ')`` of rounds 1..r, the least ε with exact ``δ(ε) ≤ δ'`` (a rational; ``None``: ∞)
    exact_at_delta: Fraction | None = None
    #: whether the PLD of rounds 1..r is known (``exact_delta`` and ``exact_at_delta`` are then exact)
    pld_known: bool = True

    @property
    def advanced_tighter(self) -> bool:
        """Whether advanced composition bounds ε below basic composition (it is shown only then)."""
        return self.advanced is not None and self.advanced < float(self.basic)

    def exact_at_delta_eps(self) -> Eps | None:
        """ε(δ') of rounds 1..r as an :class:`Eps` (``None`` when the PLD is not known)."""
        if not self.pld_known:
            return None
        return Eps(infinite=True) if self.exact_at_delta is None else Eps(ratio=self.exact_at_delta)

    def json(self) -> dict[str, Any]:
        at = self.exact_at_delta_eps()
        return {"round": self.round, "marginal": self.marginal.json(), "marginal_exact": self.marginal.text(),
                "marginal_delta": None if self.marginal_delta is None else number_json(self.marginal_delta),
                "exact_epsilon_at_delta": None if at is None else at.json(),
                "exact_epsilon_at_delta_exact": None if at is None else _eps_text(at),
                "advanced_tighter": self.advanced_tighter,
                "conditional": self.conditional.json(), "conditional_exact": self.conditional.text(),
                "exact": self.exact.json(), "exact_text": self.exact.text(),
                "exact_delta": None if self.exact_delta is None else number_json(self.exact_delta),
                "basic": self.basic.json(), "basic_exact": self.basic.text(),
                "advanced": None if self.advanced is None else number_json(self.advanced),
                "pld": number_json(self.pld),
                "pld_delta": None if self.pld_delta is None else [number_json(x) for x in self.pld_delta]}


@dataclass(frozen=True)
class SequenceFigures:
    """The rows of one observed sequence: ``what`` is ``"releases"`` or ``"client NAME"``; ``p0``/``p1``
    the two distributions over sequences."""

    what: str
    rows: list[RoundFigures]
    p0: dict[Hashable, Number] = field(repr=False)
    p1: dict[Hashable, Number] = field(repr=False)
    #: why the rows stop before the end of the sequences (``None``: every round is there)
    stopped: str | None = None
    #: how the figures were computed: ``"enumeration"`` (of the sequences, ``p0``/``p1``) or
    #: ``"forward pass"`` (:mod:`checker.app.privacy_rounds`; ``p0``/``p1`` are then empty)
    method: str = "enumeration"
    #: the most atoms (distinct pairs of beliefs and ratio) a level of the forward pass held
    #: (``None``: enumerated)
    atoms: int | None = None

    @property
    def whole(self) -> EpsilonResult:
        """The exact ε of the whole sequence (of the rounds computed, when :attr:`stopped`)."""
        return self.rows[-1].exact if self.rows else pure_epsilon(self.p0, self.p1)

    def json(self) -> dict[str, Any]:
        return {"what": self.what, "epsilon": self.whole.json(), "epsilon_exact": self.whole.text(),
                "rounds": [r.json() for r in self.rows], "method": self.method, "stopped": self.stopped,
                "atoms": self.atoms}


@dataclass(frozen=True)
class DecompositionReading:
    """``NI_Decomposition`` in one reading of its premise: ``premise`` (the smallest ε the constrained
    clients' reports meet in that reading; ``None`` when no client is constrained), ``global_eps``
    (the released sequence) and whether the conclusion ``global ≤ premise`` holds."""

    reading: Literal["per report", "per client sequence"]
    premise: EpsilonResult | None
    global_eps: EpsilonResult
    holds: bool

    def json(self) -> dict[str, Any]:
        return {"reading": self.reading,
                "premise_epsilon": None if self.premise is None else self.premise.json(),
                "premise_exact": None if self.premise is None else self.premise.text(),
                "global_epsilon": self.global_eps.json(), "conclusion_holds": self.holds}


@dataclass(frozen=True)
class BudgetReport:
    """Per round and per client figures of one neighbouring pair (``label``), side by side with the
    composition bounds; ``decomposition``: ``NI_Decomposition`` per report and per client sequence
    (empty without the clients' updates)."""

    label: str
    delta_prime: float
    eps_ref: Eps | None
    releases: SequenceFigures
    clients: dict[str, SequenceFigures]
    decomposition: list[DecompositionReading]

    @property
    def rounds(self) -> int:
        return len(self.releases.rows)

    @property
    def readings_part(self) -> bool:
        """Whether the two readings of ``NI_Decomposition`` give different verdicts."""
        return len({d.holds for d in self.decomposition}) > 1

    def json(self) -> dict[str, Any]:
        return {"pair": self.label, "rounds": self.rounds, "delta_prime": self.delta_prime,
                "reference_epsilon": None if self.eps_ref is None else self.eps_ref.text(),
                "releases": self.releases.json(),
                "clients": {c: s.json() for c, s in self.clients.items()},
                "decomposition": [d.json() for d in self.decomposition],
                "decomposition_readings_part": self.readings_part}


def _eps_text(e: Eps) -> str:
    """``ln(r) ≈ x``, ``0`` or ``inf``, as :meth:`EpsilonResult.text`."""
    if e.infinite:
        return "inf"
    if e.ratio == 1:
        return "0"
    return f"ln({e.ratio}) ≈ {float(e):.6g}"


def _key(e: EpsilonResult) -> float:
    return math.inf if e.ratio is None else float(e.ratio)


def _le(a: EpsilonResult, b: EpsilonResult) -> bool:
    """``ε_a ≤ ε_b`` decided exactly."""
    return ratio_within(math.inf if a.ratio is None else a.ratio, b.as_eps())


@dataclass(frozen=True)
class LevelFigures:
    """The exact figures of round ``r`` of a sequence, however computed: the round's ``marginal`` ε and
    its δ at the reference ε, ``exact`` (rounds 1..r together) with ``exact_delta`` at the reference ε
    and ``at_delta`` (``e^ε(δ')``, ``None`` = ∞); ``pld_known`` false when the PLD of rounds 1..r is
    not known (then the δ and ``at_delta`` are not either)."""

    marginal: EpsilonResult
    marginal_delta: Number | None
    exact: EpsilonResult
    exact_delta: Number | None
    at_delta: Fraction | None
    pld_known: bool = True


def rows_of(levels: Sequence[LevelFigures], conditional: Sequence[EpsilonResult], *,
            delta_prime: float = DEFAULT_DELTA_PRIME, eps_ref: Eps | None = None,
            interval: float = DEFAULT_INTERVAL) -> list[RoundFigures]:
    """The :class:`RoundFigures` of rounds ``1..len(levels)``: the exact figures with the accountant's
    bounds from the rounds' ``conditional`` ε (the PLD composition of their dominating pairs built
    round by round)."""
    zero = pure_epsilon({0: Fraction(1)}, {0: Fraction(1)})
    rows: list[RoundFigures] = []
    pess = opt = None
    for r, lv in enumerate(levels, start=1):
        cond = list(conditional[:r]) + [zero] * (r - len(conditional))
        basic, _ = compose_basic([(c.as_eps(), 0) for c in cond])
        worst = max(cond, key=_key)
        advanced = None
        if 0 < delta_prime < 1:
            advanced = math.inf if worst.infinite else compose_advanced(worst.epsilon, 0.0, r, delta_prime)[0]
        step = compose_plds([rr_pair(cond[-1])], interval)
        assert step is not None
        pess = step[0] if pess is None else pess.compose(step[0])
        opt = step[1] if opt is None else opt.compose(step[1])
        # the composed loss of the dominating pairs never exceeds Σ ε_i, so ε(δ') ≤ basic and
        # δ(ε) = 0 exactly for ε ≥ Σ ε_i; the grid's rounding would put a small mass above either
        pld = min(pess.epsilon(delta_prime), float(basic))
        pld_delta: tuple[float, float] | None = None
        if eps_ref is not None:
            pld_delta = (0.0, 0.0) if eps_within(basic, eps_ref) else (
                float(opt.delta(float(eps_ref))[0]), float(pess.delta(float(eps_ref))[0]))
        rows.append(RoundFigures(r, lv.marginal, cond[-1], lv.exact, lv.exact_delta, basic, advanced, pld,
                                 pld_delta, lv.marginal_delta, lv.at_delta, lv.pld_known))
    return rows


def sequence_figures(what: str, p0: Dist, p1: Dist, *, delta_prime: float = DEFAULT_DELTA_PRIME,
                     eps_ref: Eps | None = None, interval: float = DEFAULT_INTERVAL) -> SequenceFigures:
    """The :class:`RoundFigures` of every round of the distributions ``p0``, ``p1`` over sequences
    (enumerated)."""
    k = _length(p0, p1)
    conditional = per_round_epsilons(p0, p1)  # type: ignore[arg-type]  # outcomes are sequences (tuples)
    levels: list[LevelFigures] = []
    for r in range(1, k + 1):
        a, b = prefix(p0, r), prefix(p1, r)
        e0, e1 = _element(p0, r - 1), _element(p1, r - 1)
        at = epsilon_for_delta(a, b, Fraction(str(delta_prime))) if _exact(a, b) else None  # type: ignore[arg-type]
        levels.append(LevelFigures(
            pure_epsilon(e0, e1), None if eps_ref is None else delta_for_epsilon(e0, e1, eps_ref),
            pure_epsilon(a, b), None if eps_ref is None else delta_for_epsilon(a, b, eps_ref), at,
            _exact(a, b)))
    rows = rows_of(levels, conditional, delta_prime=delta_prime, eps_ref=eps_ref, interval=interval)
    return SequenceFigures(what, rows, dict(p0), dict(p1))


def _exact(*dists: Dist) -> bool:
    return all(isinstance(v, Fraction | int) for d in dists for v in d.values())


def budget_of_pair(report: PrivacyReport, pair: PairResult, *, delta_prime: float = DEFAULT_DELTA_PRIME,
                   eps_ref: Eps | None = None, interval: float = DEFAULT_INTERVAL) -> BudgetReport:
    """The :class:`BudgetReport` of one judged pair of a :func:`~checker.app.privacy_fl.privacy_report`
    (its observations of ``D0`` and ``D1``; the clients' figures need it run with ``decomposition``)."""
    o0: DatasetObservation = report.observations.get(pair.d0, report.base)
    o1: DatasetObservation = report.observations[pair.d1]
    kw: dict[str, Any] = {"delta_prime": delta_prime, "eps_ref": eps_ref, "interval": interval}
    releases = sequence_figures("releases", o0.releases, o1.releases, **kw)
    clients = {c: sequence_figures(f"client {c}", o0.updates[c], o1.updates.get(c, {}), **kw)
               for c in o0.updates if o0.updates[c] or o1.updates.get(c)}
    d = pair.decomposition
    readings = decomposition_readings(releases, clients, None if d is None else d.partition_relation)
    return BudgetReport(pair.label, delta_prime, eps_ref, releases, clients, readings)


def decomposition_readings(releases: SequenceFigures, clients: Mapping[str, SequenceFigures],
                           relation: Mapping[str, str] | None) -> list[DecompositionReading]:
    """``NI_Decomposition`` in both readings of its premise (:class:`DecompositionReading`), from the
    figures of the releases and of the clients' reports; ``relation``: how each client's partition
    differs between the two datasets (none: no reading)."""
    readings: list[DecompositionReading] = []
    if relation is not None and clients:
        constrained = [c for c, rel in relation.items()
                       if rel in ("neighbours", "chosen by put_part") and c in clients]
        global_eps = releases.whole
        per_report = [row.marginal for c in constrained for row in clients[c].rows]
        per_sequence = [clients[c].whole for c in constrained]
        zero = pure_epsilon({0: Fraction(1)}, {0: Fraction(1)})
        for name, premises in (("per report", per_report), ("per client sequence", per_sequence)):
            premise = max(premises, key=_key) if premises else None
            readings.append(DecompositionReading(name, premise, global_eps,  # type: ignore[arg-type]
                                                 _le(global_eps, premise if premise is not None else zero)))
    return readings


@dataclass(frozen=True)
class Exceedance:
    """Where a budget ``(ε_B, δ_B)`` is first exceeded: ``round`` (from 1), ``client`` (``None`` for the
    releases), the exact ``epsilon`` there and its ``delta`` at ``ε_B``."""

    round: int
    client: str | None
    epsilon: EpsilonResult
    delta: Number | None

    def text(self) -> str:
        who = "" if self.client is None else f", client {self.client}"
        d = "not computed" if self.delta is None else _num(self.delta)
        return f"round {self.round}{who}: ε* = {self.epsilon.text()}, δ(ε_B) = {d}"


def _num(x: Number) -> str:
    return number_text(x)


def first_exceeded(report: BudgetReport, eps: Eps, delta: Number, scope: Scope
                   ) -> tuple[Exceedance | None, list[dict[str, Any]]]:
    """Decide the budget ``(ε_B, δ_B)`` on ``report`` (built with ``eps_ref = ε_B``) in ``scope``:
    ``round`` (each round's release alone), ``sequence`` (the releases through round ``r``) or
    ``client`` (each client's reports through report ``r``).  Returns the first exceedance (by round,
    then client name; ``None``: the budget is not exceeded in the rounds computed) and the figure of
    every round checked (for the JSON; ``"exceeded": None`` where δ(ε_B) is not known and ε* > ε_B)."""
    if report.eps_ref != eps:
        raise ValueError(f"the budget report is at ε = {report.eps_ref}, not at ε_B = {eps.text()}")
    seqs: list[tuple[str | None, SequenceFigures]]
    seqs = sorted(report.clients.items()) if scope == "client" else [(None, report.releases)]
    found: Exceedance | None = None
    rows: list[dict[str, Any]] = []
    k = max((len(s.rows) for _, s in seqs), default=0)
    for r in range(1, k + 1):
        for client, s in seqs:
            if r > len(s.rows):
                continue
            row = s.rows[r - 1]
            e, d = (row.marginal, row.marginal_delta) if scope == "round" else (row.exact, row.exact_delta)
            within = ratio_within(math.inf if e.ratio is None else e.ratio, eps)
            over: bool | None
            if delta == 0 or within:
                over = not within
            else:
                over = None if d is None else d > delta
            rows.append({"round": r, "client": client, "epsilon": e.json(), "epsilon_exact": e.text(),
                         "delta": None if d is None else number_json(d), "exceeded": over})
            if over and found is None:
                found = Exceedance(r, client, e, d)
    return found, rows


def declared_budgets(rep: PrivacyReport) -> list[BudgetReport]:
    """The per-round, per-client and composition figures (:func:`budget_of_pair`) of each declared pair
    of a multi-round model (none for one round), at the report's ε."""
    out = []
    for p in rep.pairs:
        if p.reading != "declared" or p.d1 not in rep.observations:
            continue
        b = budget_of_pair(rep, p, eps_ref=rep.eps)
        if b.rounds >= 2:
            out.append(b)
    return out


def privacy_json(rep: PrivacyReport, budgets: Sequence[BudgetReport] | None = None) -> dict[str, Any]:
    """The keys of ``flcheck privacy --json`` (and of the API's privacy result): the report's, and
    ``budget`` (:func:`declared_budgets`, computed unless given)."""
    out = rep.json()
    out["budget"] = [b.json() for b in (declared_budgets(rep) if budgets is None else budgets)]
    return out
