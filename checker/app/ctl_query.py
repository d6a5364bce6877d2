"""What ``flcheck ctl`` decides besides plain CTL, in one place for the command and the Python API.

* PCTL's ``P``/``Pmin``/``Pmax`` ([Storm]'s reading: first-passage probabilities): a query
  ``P=? [ψ]`` gives every state's probability (:func:`probability_values`); a bound ``P>=p [ψ]``, also
  inside CTL, a verdict (:func:`probabilistic_checker`: the CTL checker with the PCTL engine attached).
  On a scenario a plain ``P`` on an MDP is the uniform scheduler's; on an explicit MDP it needs ``Pmin``
  or ``Pmax``.
* dpCTL's ``D{ε,δ}[ψ]`` ([dpCTL]) between a scenario's dataset and a declared neighbour, over a
  scheduler class (:func:`dp_between`, the engine of :mod:`checker.app.privacy_dp`).

Results carry exactly what ``flcheck ctl --json`` prints (without the envelope and the timings).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from checker.errors import ExplorationIncomplete, InputError, Position, Undecided
from checker.markov.pctl import PctlEvaluator
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_ast import DPQuery, ProbQuery
from checker.mc.explore import Limits
from checker.mc.fixpoints import Semantics
from checker.mc.kripke import Kripke
from checker.privacy.schedulers import (
    SchedulerClass,
    canonical_class,
    scheduler_class_json,
    scheduler_class_text,
)

if TYPE_CHECKING:  # the model layer is imported by the functions that read a scenario: `ctl` on an
    # explicit model needs none of it
    from checker.app.privacy_dp import DPCheck
    from flmodel.readings import Reading
from checker.render import number_text

__all__ = ["DPBetween", "ProbabilityValues", "dp_between", "probabilistic_checker", "probability_values",
           "scenario_readings", "value_json", "value_text", "with_readings"]


def scenario_readings(scenario_path: Path | None, defines: Mapping[str, int] | None = None
                      ) -> tuple[Reading, ...] | None:
    """The readings of the published rules' ill-formed spots a check of this scenario relies on (empty
    for other rule sets; ``None`` for a model that is not a scenario)."""
    if scenario_path is None:
        return None
    from flmodel.readings import readings_of  # lazy: the model layer, for scenarios only
    from flmodel.scenario import load_scenario_system  # lazy: as the import above

    return readings_of(load_scenario_system(scenario_path, defines=defines)[1].fl.rules.name)


def with_readings(data: dict[str, Any], readings: tuple[Reading, ...] | None) -> dict[str, Any]:
    """``data`` with ``readings`` (the list of :meth:`Reading.json`) when the model is a scenario."""
    return data if readings is None else {**data, "readings": [r.json() for r in readings]}


def value_text(value: Fraction | float) -> str:
    """A probability as ``flcheck ctl`` prints it (exact where it is)."""
    return number_text(value, max_denominator=10**100)


def value_json(value: Fraction | float) -> dict[str, Any]:
    """A probability in JSON: ``value`` (a float) and ``exact`` (``"p/q"``, or ``None`` from a float
    computation)."""
    if isinstance(value, Fraction):
        return {"value": float(value), "exact": str(value)}
    return {"value": float(value), "exact": None}


def probabilistic_checker(kripke: Kripke, semantics: Semantics | str, *, scenario: bool,
                          limits: Limits | None = None) -> tuple[ModelChecker, PctlEvaluator]:
    """The CTL checker of ``kripke`` that decides ``P``/``Pmin``/``Pmax`` bounds by the PCTL engine, and
    that engine (on a scenario a plain ``P`` on an MDP is the uniform scheduler's; ``limits``: the
    engine's iterations stop at their time limit)."""
    mc = ModelChecker(kripke, semantics)
    evaluator = PctlEvaluator(kripke, mc.sat, limits=limits, default="uniform" if scenario else None,
                              total=mc.semantics is Semantics.TOTAL, ctmc=bool(kripke.stats.get("ctmc")))
    mc.probabilistic = evaluator.satisfying
    return mc, evaluator


@dataclass(frozen=True)
class ProbabilityValues:
    """A ``P=?``/``Pmin=?``/``Pmax=?`` query on a structure: ``values`` per state (exact ``Fraction`` s
    where the computation is exact), the initial states, and how the choices were resolved
    (``scheduler``: ``min``, ``max``, ``uniform`` for a scenario's ``P`` on an MDP, ``None`` on a
    Markov chain)."""

    formula: ProbQuery
    values: np.ndarray
    initial: tuple[int, ...]
    scheduler: str | None
    states: int
    transitions: int
    zero_probability_transitions: int

    @property
    def value(self) -> Fraction | float | None:
        """The probability at the initial state (``None`` with several initial states)."""
        return self.values[self.initial[0]] if len(self.initial) == 1 else None

    def json(self) -> dict[str, Any]:
        """The keys of ``flcheck ctl --json`` for a query (``seconds`` and ``written`` are the command's)."""
        at_init = [{"state": s, **value_json(self.values[s])} for s in self.initial]
        one = len(self.initial) == 1
        return {"formula": str(self.formula), "kind": "probability", "quantifier": self.formula.quantifier,
                "scheduler": self.scheduler, "states": self.states, "transitions": self.transitions,
                "initial": at_init, "value": at_init[0]["value"] if one else None,
                "exact": at_init[0]["exact"] if one else None,
                "zero_probability_transitions": self.zero_probability_transitions}


def probability_values(kripke: Kripke, formula: ProbQuery, semantics: Semantics | str, *,
                       scenario: bool, limits: Limits | None = None) -> ProbabilityValues:
    """Every state's probability of the query ``formula`` (``InputError`` when it is a bound)."""
    if not formula.is_query:
        raise InputError(f"{formula} is a condition, not a query", formula.pos,
                         f"{formula.quantifier}=? [..] for a probability")
    _, evaluator = probabilistic_checker(kripke, semantics, scenario=scenario, limits=limits)
    values = evaluator.values(formula)
    scheduler = {"P": "uniform" if scenario and not evaluator.mdp.is_dtmc else None,
                 "Pmin": "min", "Pmax": "max"}[formula.quantifier]
    return ProbabilityValues(formula, values, tuple(int(i) for i in kripke.initial), scheduler,
                             int(kripke.num_states), int(kripke.num_transitions),
                             int(kripke.stats.get("zero_probability_transitions", 0)))


@dataclass(frozen=True)
class DPBetween:
    """``D{ε,δ}[ψ]`` between a scenario and a neighbour: the check (``None`` when the class does not
    exist on the model, ``reason`` says why: verdict ``unknown``), the class as given and what the
    attacker observes."""

    formula: DPQuery
    neighbour: str
    scheduler: str
    observing: tuple[str, ...]
    check: DPCheck | None
    reason: str = ""

    @property
    def verdict(self) -> str:
        return "unknown" if self.check is None else str(self.check.verdict)

    def json(self) -> dict[str, Any]:
        """The keys of ``flcheck ctl --json`` for a ``D`` query (``seconds`` is the command's)."""
        head = {"kind": "dp", "scheduler": self.scheduler, "observing": list(self.observing)}
        if self.check is None:
            return {**head, "formula": str(self.formula), "neighbour": self.neighbour, "verdict": "unknown",
                    "scheduler_class": scheduler_class_json(self.scheduler), "reason": self.reason}
        return {**head, **self.check.to_json()}

    def text(self) -> str:
        if self.check is None:
            return (f"{self.formula} between {self.neighbour}: unknown ({self.reason})\n"
                    f"  {scheduler_class_text(self.scheduler)}")
        return self.check.text()


def dp_between(scenario_path: Path | None, formula: DPQuery, between: str | None, *,
               defines: Mapping[str, int] | None = None, scheduler: str = "adaptive",
               limits: Limits | None = None, where: str = "--between") -> DPBetween:
    """Decide ``formula`` between the scenario's dataset and its declared neighbour ``between`` over the
    ``scheduler`` class (``where``: how the caller names the neighbour option, ``--between`` or
    ``between=``, for the messages)."""
    # lazy: the model layer and the dpCTL pipeline, for D queries only
    from checker.app.privacy_dp import dp_check
    from checker.app.scenario_vocabulary import scenario_vocabulary  # lazy: as the import above
    from checker.mc.vocabulary import check_formula  # lazy: as the import above
    from flmodel.scenario import load_scenario_system  # lazy: as the import above
    from flmodel.scenario_build import neighbour_dataset  # lazy: as the import above

    option = f"{where}NAME" if where.endswith("=") else f"{where} NAME"
    if scenario_path is None:
        raise InputError("D{ε,δ} compares a scenario's dataset with a declared neighbour; this model is "
                         "not a scenario", None,
                         f"a scenario file or bundled scenario name with {option}")
    if between is None:
        raise InputError("D{ε,δ} compares the scenario's dataset with a neighbour", None, option)
    try:
        canonical_class(scheduler)
    except ValueError as exc:
        raise InputError(str(exc), None, "uniform, memoryless, adaptive, blind or worst") from None
    scenario, system = load_scenario_system(scenario_path, defines=defines)
    names = [n.name for n in scenario.neighbours]
    if between not in names:
        given = f"{where}{between!r}" if where.endswith("=") else f"{where} {between}"
        raise InputError(f"{given}: no such neighbour in {scenario_path}",
                         Position(str(scenario_path)),
                         ", ".join(names) if names else "a scenario that declares a neighbour")
    observing = tuple(n.name for n in scenario.attacker.observes) if scenario.attacker else ()
    observing = observing or ("curmodpar",)
    check_formula(formula, scenario_vocabulary(system))
    sched: SchedulerClass = scheduler  # type: ignore[assignment]  # checked by canonical_class above
    try:
        res = dp_check(system, system.with_dataset(neighbour_dataset(scenario, between)), formula, between,
                       observing=observing, schedulers=sched, limits=limits)
    except InputError:
        raise
    except (Undecided, ExplorationIncomplete) as exc:  # no scheduler of the class here, or a limit
        return DPBetween(formula, between, scheduler, observing, None, str(exc))
    return DPBetween(formula, between, scheduler, observing, res)
