"""The results of the NI-FL-DP analysis of an FL system and their JSON form (``flcheck privacy --json``).

[IIIf-FL], Section III-C (``NI_FL_DP``, ``NI_Decomposition``) and III-D (Definition III.1, Theorem 1);
the analysis that fills them is :mod:`checker.app.privacy_fl`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from checker.app.privacy_observation import DatasetObservation
from checker.privacy.advantage import AttackerResult, Bound
from checker.privacy.ni_fl_dp import Eps, EpsilonResult
from checker.privacy.schedulers import scheduler_class_json
from checker.render import value_text
from checker.verdict import Verdict
from flmodel.data import Dataset
from flmodel.readings import Reading

if TYPE_CHECKING:
    from checker.app.privacy_scheduler import ScheduledPair

__all__ = [
    "DecompositionResult",
    "LiteralCheck",
    "PairAssessment",
    "PairResult",
    "PrivacyReport",
    "number_json",
    "outcome_text",
]

Number = Fraction | float


@dataclass
class PairAssessment:
    """The figures of one pair of observation distributions ``(P0, P1)``: ``epsilon`` (ε*, pure),
    ``eps_checked`` (the ε decided: the one asked for, else ε* or 0 when ε* is infinite), ``delta``
    (δ at ``eps_checked``), ``verdict`` (NI-FL-DP at the ε asked for; without one, whether ε* is
    finite), ``attackers`` (the likelihood-ratio attacker first, then threshold attackers) and the
    advantage ``bounds`` at ``(eps_checked, delta)``."""

    epsilon: EpsilonResult
    eps_checked: Eps
    delta: Number
    verdict: Verdict
    attackers: list[AttackerResult]
    bounds: list[Bound]

    @property
    def best(self) -> AttackerResult:
        """The best attacker (likelihood ratio: its advantage is the total variation)."""
        return self.attackers[0]


@dataclass
class DecompositionResult:
    """``NI_Decomposition`` ([IIIf-FL], III-C) on one neighbouring pair.

    ``client_eps[c]``: ε* of client ``c``'s update distribution; ``partition_relation[c]``: ``"equal"``,
    ``"neighbours"`` (``partition G0 c ◇1 partition G1 c`` in the pair's reading), ``"other"``, or
    ``"chosen by put_part"`` (the data are not yet deployed: counted as constrained);
    ``premise_eps``: the smallest ε meeting the theorem's premise (max ε* over clients whose partitions
    are neighbours; 0 when none is); ``global_eps``: ε* of the released models; ``conclusion_holds``:
    ``global ≤ premise_eps`` (the theorem, instantiated with the smallest ε its premise allows);
    ``max_rule_holds``: the seed's "ε = max of the local ε" (global ≤ max over all clients);
    ``sum_bound``: Σ_c ε_c; ``joint_eps``: ε* of all clients' updates together, ``post_processing_holds``:
    global ≤ joint — it FAILS when the release is not a function of the updates alone, which is the
    case whenever the FedAvg weights ``card (partition G c) / card (dataset G)`` differ between the two
    datasets (add/remove-one, or a replaced point that moves to another client); ``rounds``: per-round
    conditional ε of the releases, ``composition_holds``: global ≤ Σ rounds (the chain rule: always
    true, a check of the computation)."""

    client_eps: dict[str, EpsilonResult]
    partition_relation: dict[str, str]
    premise_eps: EpsilonResult | None
    global_eps: EpsilonResult
    conclusion_holds: bool
    max_rule_holds: bool
    sum_bound: Eps
    sum_bound_holds: bool
    joint_eps: EpsilonResult
    post_processing_holds: bool
    rounds: list[EpsilonResult]
    composition_holds: bool

    def json(self) -> dict[str, object]:
        return {
            "client_epsilon": {c: e.json() for c, e in self.client_eps.items()},
            "partition_relation": self.partition_relation,
            "premise_epsilon": None if self.premise_eps is None else self.premise_eps.json(),
            "global_epsilon": self.global_eps.json(),
            "conclusion_holds": self.conclusion_holds,
            "max_rule_holds": self.max_rule_holds,
            "sum_of_client_epsilons": self.sum_bound.json(),
            "sum_bound_holds": self.sum_bound_holds,
            "joint_updates_epsilon": self.joint_eps.json(),
            "post_processing_holds": self.post_processing_holds,
            "per_round_epsilon": [r.json() for r in self.rounds],
            "composition_over_rounds_holds": self.composition_holds,
        }


@dataclass
class PairResult:
    """One neighbouring pair ``(D0, D1)`` in one reading: ε*, δ(ε) at the checked ε, the verdict,
    the attackers' advantages and the bounds, and ``NI_Decomposition`` on the pair."""

    reading: str
    label: str
    d0: Dataset
    d1: Dataset
    p0: dict[Hashable, Number]
    p1: dict[Hashable, Number]
    epsilon: EpsilonResult
    eps_checked: Eps
    delta: Number
    verdict: Verdict
    best: AttackerResult
    attackers: list[AttackerResult]
    bounds: list[Bound]
    decomposition: DecompositionResult | None
    #: the pair judged over a scheduler class other than ``uniform`` (then ``p0``/``p1``, ``epsilon``,
    #: ``best`` and ``attackers`` are those of the scheduler attaining ε*_C; ``delta`` and ``verdict``
    #: the worst case over the class; ``bounds`` are evaluated at that δ and checked against the worst
    #: advantage over the class, :attr:`advantage`)
    schedule: ScheduledPair | None = None

    @property
    def advantage(self) -> Number:
        """The best attacker's advantage: under a scheduler class, the worst case over the class
        (``δ_C(0)``, which may exceed ``best.advantage`` of the ε*-attaining scheduler); the figure the
        bounds are checked against."""
        return self.best.advantage if self.schedule is None else self.schedule.advantage_case.value

    def json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "reading": self.reading,
            "pair": self.label,
            "epsilon": self.epsilon.json(),
            "epsilon_exact": self.epsilon.text(),
            "worst_outcome": outcome_text(self.epsilon.outcome),
            "worst_outcome_probabilities": [number_json(self.epsilon.p0), number_json(self.epsilon.p1)],
            "delta": number_json(self.delta),
            "verdict": str(self.verdict),
            "advantage": {"best": number_json(self.best.advantage),
                          "attackers": {a.name: number_json(a.advantage) for a in self.attackers},
                          "checked": number_json(self.advantage)},
            "bounds": {b.name: b.json() for b in self.bounds},
            "outcomes": [len(self.p0), len(self.p1)],
            "decomposition": None if self.decomposition is None else self.decomposition.json(),
        }
        if self.schedule is not None:
            out["scheduler"] = self.schedule.json()
        return out


@dataclass
class LiteralCheck:
    """[IIIf-FL]'s definitions read literally inside ONE Kripke structure
    (:mod:`checker.app.privacy_literal`), and the published definition's flaws on the judged pair:
    ``published_form`` (R32: the published two-outcome form's ε beside the DP form's ε*),
    ``reversed_inequality`` (R33: III-C's claimed equivalence at the checked ε), ``free_variables``
    (R34/R35: variable, definition, reading), ``decomposition_premise`` (``NI_Decomposition``'s
    per-client premise across the two systems) and ``flaws`` (one line of text for each); ``states`` are
    those of the explored structure, reduced as ``reductions`` says (``{}``: none)."""

    states: int
    complete: bool
    reachable_datasets: int
    dataset_neighbour_pairs: dict[str, int]
    premise_satisfiable: dict[str, bool]
    reachable_partitions: int
    partition_premise_pairs: dict[str, int]
    verdict: Verdict
    path_sums: list[dict[str, object]]
    explanation: str
    published_form: dict[str, object] | None = None
    reversed_inequality: dict[str, object] | None = None
    free_variables: list[dict[str, str]] = field(default_factory=list)
    decomposition_premise: dict[str, object] | None = None
    flaws: list[str] = field(default_factory=list)
    reductions: dict[str, Any] = field(default_factory=dict)

    def json(self) -> dict[str, object]:
        return {
            "states": self.states, "complete": self.complete,
            "reachable_datasets": self.reachable_datasets,
            "dataset_neighbour_pairs": self.dataset_neighbour_pairs,
            "premise_satisfiable": self.premise_satisfiable,
            "reachable_partitions": self.reachable_partitions,
            "decomposition_partition_premise_pairs": self.partition_premise_pairs,
            "verdict": str(self.verdict), "path_sums": self.path_sums, "explanation": self.explanation,
            "published_form": self.published_form, "reversed_inequality": self.reversed_inequality,
            "free_variables": self.free_variables,
            "decomposition_premise_across_systems": self.decomposition_premise, "flaws": self.flaws,
            "reductions": self.reductions,
        }


@dataclass
class PrivacyReport:
    """Everything ``flcheck privacy`` prints: the pairs, the worst one, the verdict, the literal
    check, and the parameters used."""

    observe: str
    eps: Eps | None
    pairs: list[PairResult]
    worst: PairResult | None
    verdict: Verdict
    vacuous: bool
    literal: LiteralCheck | None
    base: DatasetObservation
    readings: dict[str, int]
    scheduler: str = "uniform"
    notes: list[str] = field(default_factory=list)
    observing: tuple[str, ...] = ("curmodpar",)
    observations: dict[Dataset, DatasetObservation] = field(default_factory=dict, repr=False)
    #: the readings of the published rules' ill-formed spots the explorations relied on
    rule_readings: tuple[Reading, ...] = ()

    def json(self) -> dict[str, Any]:
        w = self.worst
        out: dict[str, Any] = {
            "epsilon": w.epsilon.json() if w else 0.0,
            "delta": number_json(w.delta) if w else 0.0,
            "worst_pair": None if w is None else {"reading": w.reading, "pair": w.label,
                                                  "outcome": outcome_text(w.epsilon.outcome, self.observe),
                                                  "epsilon_exact": w.epsilon.text()},
            "advantage": ({"best": number_json(w.best.advantage),
                           "attackers": {a.name: number_json(a.advantage) for a in w.attackers},
                           "checked": number_json(w.advantage)}
                          if w else {"best": 0.0, "attackers": {}, "checked": 0.0}),
            "bounds": {b.name: b.json() for b in w.bounds} if w else {},
            "vacuous": self.vacuous,
            "verdict": str(self.verdict),
            "observe": self.observe,
            "observing": list(self.observing),
            "pairs_judged": [p.label for p in self.pairs],
            "eps_checked": None if self.eps is None else self.eps.json(),
            "scheduler": self.scheduler,
            "scheduler_class": scheduler_class_json(self.scheduler),
            "scheduler_independent": self.base.scheduler_independent,
            "exact": self.base.exact,
            "pairs_per_reading": self.readings,
            "pairs": [p.json() for p in self.pairs],
            "literal": None if self.literal is None else self.literal.json(),
            "notes": self.notes,
            "readings": [r.json() for r in self.rule_readings],
            "explorations": [{"dataset": sorted(p.name for p in d), "states": o.states,
                              "transitions": o.transitions, "reductions": o.reductions}
                             for d, o in self.observations.items()],
        }
        return out


def number_json(x: Number) -> float | str:
    """A probability or advantage in the JSON of this module: a float, ``"inf"`` for +∞."""
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return float(x)


def outcome_text(outcome: object, observe: str = "final") -> str:
    """An outcome as text (:func:`checker.render.value_text`), at most 300 characters; a sequence
    (``observe`` ``sequence`` or ``curmodpar``) in run order, ``v1 then v2`` (``nothing`` if empty)."""
    if observe in ("sequence", "curmodpar") and isinstance(outcome, tuple):
        text = " then ".join(value_text(v) for v in outcome) or "nothing"
    else:
        text = value_text(outcome)
    return text if len(text) <= 300 else text[:297] + "..."
