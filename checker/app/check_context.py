"""What the properties of one ``flcheck check`` share (:class:`CheckContext`): the explored structure and
its model checker, the neighbours' structures and the judged pairs of observation distributions, the
reductions applied and how a property falls back to the plain exploration."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from fractions import Fraction
from typing import Any

import numpy as np

from checker.app.check_results import PropertyResult
from checker.app.lift import Replayer
from checker.app.privacy_fl import privacy_report
from checker.app.privacy_results import PairResult
from checker.app.reductions import ObservationReducer, Reductions
from checker.errors import ExplorationIncomplete, InputError
from checker.markov.pctl import PctlEvaluator
from checker.mc import ctl_ast
from checker.mc.ctl import ModelChecker
from checker.mc.explore import Limits, explore
from checker.mc.kripke import Kripke
from checker.privacy.dp_query import SchedulerClass
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import ScenarioSystem, neighbour_dataset
from flmodel.scenario_properties import (
    AdvantageProperty,
    CrossvalProperty,
    PrivacyProperty,
    PropertyDecl,
    observing_of,
)

__all__ = ["CheckContext", "Judged", "on_plain"]

#: The properties judged on a pair of observation distributions.
Judged = PrivacyProperty | AdvantageProperty | CrossvalProperty


class CheckContext:
    """Caches shared between properties: the model checker, neighbour structures, distributions."""

    def __init__(self, scenario: Scenario, system: ScenarioSystem, kripke: Kripke, limits: Limits,
                 observe: str = "sequence"):
        self.scenario = scenario
        self.system = system
        self.kripke = kripke
        self.limits = limits
        self.mc = ModelChecker(kripke)
        self.mc.probabilistic = self._pctl
        self._pctl_evaluator: PctlEvaluator | None = None
        self.structures: dict[str, Kripke] = {"": kripke}
        self.pairs: dict[tuple[str, tuple[str, ...], str], tuple[PairResult | None, str | None]] = {}
        self.observe = observe
        self.mdp: Any = None
        self.engine = "flcheck"
        self.reductions = Reductions()
        self.explorations: list[dict[str, Any]] = []
        #: replays evidence of the reduced structure on the model's own states (``None``: not reduced)
        self.replayer: Replayer | None = None
        #: decides a property on the plain exploration (set with :attr:`replayer`)
        self.plain: Callable[[PropertyDecl, str], PropertyResult] | None = None
        #: the reductions applied to the explored structure
        self.applied: list[str] = []
        self.independent: dict[tuple[str, tuple[str, ...]], list[bool | None]] = {}
        self.artefacts: dict[str, Any] = {"attack_trees": {}, "privacy": {}}
        #: the forward passes of the budget properties (:func:`checker.app.privacy_rounds.forward_budget`)
        self.streams: dict[Hashable, Any] = {}

    def quotient(self) -> list[str]:
        """The applied reductions that merge states of the explored structure (``attack_tree reduced``
        trees are the merged structure's)."""
        return [n for n in self.applied if n in ("symmetry", "cone")]

    def _pctl(self, f: ctl_ast.ProbQuery | ctl_ast.DPQuery) -> np.ndarray:
        """A ``P``/``Pmin``/``Pmax`` operator inside a ``ctl`` property, decided on the explored structure
        (a plain ``P`` under the uniform scheduler, as ``flcheck ctl`` on a scenario)."""
        if isinstance(f, ctl_ast.DPQuery):
            raise InputError("a D{eps,delta} query is a property of its own", f.pos,
                             "property NAME: dp D{...}[...] between NEIGHBOUR")
        if self._pctl_evaluator is None:
            self._pctl_evaluator = PctlEvaluator(self.kripke, self.mc.sat, default="uniform")
        return self._pctl_evaluator.satisfying(f)

    def structure(self, neighbour: str) -> Kripke:
        if neighbour not in self.structures:
            ts = self.system.with_dataset(neighbour_dataset(self.scenario, neighbour))
            self.structures[neighbour] = explore(ts, limits=self.limits, source=f"{self.scenario.source} "
                                                 f"(neighbour {neighbour})")
        return self.structures[neighbour]

    def observing(self, p: PropertyDecl) -> tuple[str, ...]:
        """What the attacker observes for ``p``: its ``observing`` list, else the attacker's declared
        observation, else ``curmodpar``."""
        if observing_of(p):
            return tuple(n.name for n in observing_of(p))
        if self.scenario.attacker is not None and self.scenario.attacker.observes:
            return tuple(n.name for n in self.scenario.attacker.observes)
        return ("curmodpar",)

    def judged(self, p: Judged) -> tuple[PairResult | None, str | None]:
        """The neighbouring pair ``(D0, D1 = p.neighbour)`` judged by the privacy pipeline
        (:func:`checker.app.privacy_fl.privacy_report`, the one of ``flcheck privacy``) on what the
        attacker observes, as the sequence of what it sees (``observe="sequence"``) or its final
        value (``"final"``); or why it cannot be judged."""
        names = self.observing(p)
        scheduler: SchedulerClass = (p.scheduler if p.kind == "privacy" else None) or "uniform"
        key = (p.neighbour, names, scheduler)
        if key not in self.pairs:
            self.pairs[key] = self._judge(p.neighbour, names, scheduler)
        return self.pairs[key]

    def _judge(self, neighbour: str, names: tuple[str, ...],
               scheduler: SchedulerClass) -> tuple[PairResult | None, str | None]:
        try:
            reducer = ObservationReducer(self.scenario, self.system.secrets, choice=self.reductions)
            rep = privacy_report(self.system, observe=self.observe, observing=names, readings=(),
                                 declared=[(neighbour, neighbour_dataset(self.scenario, neighbour))],
                                 limits=self.limits, literal=False, decomposition=False, exact=True,
                                 scheduler=scheduler, reducer=reducer)
        except ExplorationIncomplete as exc:
            return None, ("exploration incomplete: the output distributions need the whole state space "
                          f"({exc})")
        (pair,) = rep.pairs
        self.explorations.append({
            "neighbour": neighbour, "observing": list(names), "scheduler": scheduler,
            **{side: {"states": o.states, "transitions": o.transitions, "reductions": o.reductions}
               for side, o in (("D0", rep.base), ("D1", rep.observations[pair.d1]))}})
        self.independent[(neighbour, names)] = [rep.base.scheduler_independent,
                                                rep.observations[pair.d1].scheduler_independent]
        missing = [1 - sum(d.values(), Fraction(0)) for d in (pair.p0, pair.p1)]
        if any(abs(m) > 1e-12 for m in missing):
            return None, f"runs without a final value (missing mass {missing[0]}, {missing[1]})"
        return pair, None

    def scheduler_note(self, neighbour: str, names: tuple[str, ...]) -> str:
        """Whether the distributions depend on how nondeterminism is resolved (Pmin = Pmax of each
        observation over all schedulers on ``D0``,
        :func:`~checker.app.privacy_observation.scheduler_independent`)."""
        flags = self.independent.get((neighbour, names), [None])
        if all(f is True for f in flags):
            return "uniform scheduler (the distributions are the same under every scheduler)"
        if any(f is False for f in flags):
            return "uniform scheduler (WARNING: the distributions depend on the scheduler)"
        return "uniform scheduler (scheduler dependence not checked)"


def on_plain(ctx: CheckContext, p: PropertyDecl, why: str) -> PropertyResult:
    """``p`` decided on the plain exploration because ``why`` (a replay on the model failed)."""
    assert ctx.plain is not None  # set whenever a replayer is
    return ctx.plain(p, why)
