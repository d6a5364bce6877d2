"""``flcheck check``: explore a scenario once and decide every property it names.

Application layer (imports flmodel and the engines). Each property kind is dispatched to its engine:

* ``ctl`` — :func:`checker.mc.ctl_parse.parse_formula` (with the formula's position in the scenario file)
  and :class:`checker.mc.ctl.ModelChecker` (IIIf deadlock semantics) on the explored Kripke structure;
* ``attack_tree`` — the goal's satisfaction set, then :func:`checker.attack_trees.core.generate_attack_tree`
  (IIIf AT: a valid tree iff ``EF goal``); ``exists`` holds iff a tree is found, ``absent`` iff the
  engine proves that no tree exists (an invariant avoiding the goal);
* ``privacy`` — NI-FL-DP ([IIIf-FL], III-C) between the scenario's dataset ``D0`` and a declared
  neighbour ``D1`` by :func:`checker.app.privacy_fl.privacy_report`, the one pipeline of
  ``flcheck privacy``, ``audit``, the reports and the Isabelle export: both systems are explored with
  the attacker's record, and the distributions of what the attacker observes — the sequence of what
  it sees, per release and per change (``observe="sequence"``, default), or its final value
  (``"final"``) — under the uniform scheduler are compared by
  :func:`checker.app.privacy_fl.assess_pair` (exact: ``e^ε`` decided exactly);
* ``advantage`` — on the same pair of distributions, by the same
  :func:`~checker.app.privacy_fl.assess_pair`: the best distinguishing advantage (total variation,
  [IIIf-FL] II-D / Theorem 1) against a number, the seed's Theorem-1 bound read as
  ``Adv ≤ 1 − e^{−ε}``, or the tight pure-DP bound ``tanh(ε/2)`` (:func:`checker.privacy.advantage.bounds`);
* ``probability`` — the first-passage probability of reaching the target set (IIIf ``Prob``, the
  well-defined reading of ``P(M ⊢F s)``): ``min``/``max`` over schedulers by
  :func:`checker.markov.core.mdp_reach`, ``uniform`` by :func:`checker.markov.core.reach_probability`;
* ``crossval`` — :func:`checker.crossval.crossval_scenario.cross_validate` on the pair of
  distributions, with the formal ε of :func:`~checker.app.privacy_fl.assess_pair`;
* ``attack`` — a :func:`checker.app.attacks.run_attack` experiment; it measures, it does not decide, so
  its verdict is ``unknown`` unless a ``max_<metric>`` option states what must hold.

``unknown`` is also the verdict of a property that an incomplete exploration does not decide. An engine
that fails raises: the failure is a bug to surface, not a verdict.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, cast

import flcheck_spec
import numpy as np

from checker.app.check_stop import Interruption, interruption_of, unexplored
from checker.app.lift import Replayer
from checker.app.load import resolve_scenario_path
from checker.app.privacy_dp import dp_check, history_text
from checker.app.privacy_fl import assess_pair, privacy_report
from checker.app.privacy_results import PairResult, outcome_text
from checker.app.reductions import Applied, ObservationReducer, Reductions, reduce_system, state_abstraction
from checker.app.scenario_formulas import formula_diagnostics, parse_property, validate_scenario
from checker.app.step_attributes import replayed_summary, step_table, summarise
from checker.attack_trees.generation import AttackFound, generate_attack_tree
from checker.errors import ExplorationIncomplete, InputError, Position, Undecided
from checker.io.render import json_value, number_text
from checker.markov.first_passage import reach_probability
from checker.markov.mdp import mdp_reach
from checker.markov.models import dtmc_from_kripke, mdp_from_kripke
from checker.markov.pctl import PctlEvaluator
from checker.mc import ctl_ast
from checker.mc.ctl import ModelChecker
from checker.mc.explore import LimitReached, Limits, Progress, ProgressCallback, Watchdog, explore
from checker.mc.kripke import Kripke
from checker.privacy.dp_query import SchedulerClass
from checker.privacy.ni_fl_dp import Eps, eps_within
from checker.verdict import Verdict
from flmodel.errors import ModelError
from flmodel.readings import Reading, readings_of
from flmodel.scenario import load_scenario_system
from flmodel.scenario_ast import PropertyDecl, Scenario
from flmodel.scenario_build import ScenarioSystem, build_system, neighbour_dataset

__all__ = ["CheckReport", "PropertyResult", "check_file", "check_scenario", "default_scenario"]

#: Default exploration limits of ``flcheck check`` (a scenario that hits them gets "unknown" verdicts).
DEFAULT_LIMITS = Limits(max_states=2_000_000, max_seconds=600)


@dataclass
class PropertyResult:
    """The outcome of one property: ``verdict``; ``value`` (the figure: ε, a probability, an advantage,
    a tree size — a number or ``None``) and ``value_text`` (its exact text, e.g. ``ln(9) ≈ 2.197``);
    ``evidence`` (one line: witness, counterexample, attack tree size, worst outcome); ``details``
    (JSON-able data for reports: traces, distributions, bounds); ``seconds``."""

    name: str
    kind: str
    verdict: Verdict
    value: float | None = None
    value_text: str = ""
    evidence: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    formula: str = ""

    def to_json(self) -> dict[str, Any]:
        """The result as strict-JSON data (:func:`checker.io.render.json_value`: ±∞ as ``"inf"``). A CTL
        property also has ``evidence_path``: its witness or counterexample as ``flcheck ctl --json``
        prints it (:meth:`checker.mc.evidence.Trace.to_json`: states, actions, changed values), or
        ``null`` when the check found none (a universal property that holds, an incomplete structure)."""
        out: dict[str, Any] = {
            "name": self.name, "kind": self.kind, "verdict": str(self.verdict), "value": self.value,
            "value_text": self.value_text, "evidence": self.evidence, "formula": self.formula,
            "seconds": round(self.seconds, 4), "details": self.details}
        if self.kind == "ctl":
            out["evidence_path"] = self.details.get("trace")
        data: dict[str, Any] = json_value(out)
        return data


@dataclass
class CheckReport:
    """Everything ``flcheck check`` found: the scenario, its explored structure and the results."""

    scenario_path: str
    scenario: Scenario
    kripke: Kripke
    results: list[PropertyResult]
    explore_seconds: float
    total_seconds: float = 0.0
    neighbour_structures: dict[str, tuple[int, int]] = field(default_factory=dict)
    artefacts: dict[str, Any] = field(default_factory=dict, repr=False)
    reductions: Applied = field(default_factory=Applied)
    #: why the check stopped before the end (Ctrl-C or a limit), ``None`` when it ran to the end
    interrupted: Interruption | None = None
    #: the scenario's system (unreduced), built once per check
    system: ScenarioSystem | None = field(default=None, repr=False)

    def _system(self) -> ScenarioSystem:
        if self.system is None:
            self.system = build_system(self.scenario)
        return self.system

    @property
    def exit_code(self) -> int:
        """0 when every property holds (also vacuously), else 1 (violated or unknown)."""
        return 0 if all(r.verdict.exit_code() == 0 for r in self.results) else 1

    @property
    def readings(self) -> tuple[Reading, ...]:
        """The readings of the published rules' ill-formed spots the check relied on (none for others)."""
        return readings_of(self._system().fl.rules.name)

    def to_json(self) -> dict[str, Any]:
        """The report as strict-JSON data (keys ``scenario``, ``states``, ``transitions``,
        ``properties``…)."""
        k = self.kripke
        return {
            "scenario": self.scenario_path,
            "name": self.scenario.name,
            "states": int(k.num_states),
            "transitions": int(k.num_transitions),
            "complete": bool(k.complete),
            "limit_reason": k.limit_reason,
            "explore_seconds": round(self.explore_seconds, 4),
            "seconds": round(self.total_seconds, 4),
            "system": json_value(self._system().describe()),
            "neighbours": {n: {"states": s, "transitions": t}
                           for n, (s, t) in self.neighbour_structures.items()},
            "properties": [r.to_json() for r in self.results],
            "exit_code": self.exit_code,
            "reductions": json_value(self.reductions.to_json(int(k.num_states))),
            "readings": [r.json() for r in self.readings],
            "interrupted": None if self.interrupted is None else self.interrupted.json(),
        }


def default_scenario() -> Path:
    """The bundled Moniteo scenario (``spec/scenarios/moniteo.fl``)."""
    return flcheck_spec.resource("scenarios", "moniteo.fl")


# ------------------------------------------------------------------------------------------ helpers
def _compare(a: Fraction | float, op: str, b: Fraction | float) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
    return {"<=": a <= b, ">=": a >= b, "<": a < b, ">": a > b, "==": a == b}[op]


def _number_text(x: Fraction | float) -> str:
    """An exact figure with its decimal value (``2263/11664 ≈ 0.194016``), an integer as it is
    (:func:`checker.io.render.number_text`)."""
    return number_text(x, max_denominator=10**100)


def _trace_text(trace: Any, limit: int = 8) -> str:
    if trace is None:
        return ""
    acts = [s.action for s in trace.steps if s.action]
    more = f" … ({len(acts)} steps)" if len(acts) > limit else ""
    body = " ; ".join(acts[:limit]) if acts else "initial state"
    loop = " (then loops)" if trace.loop_start is not None else ""
    return f"{trace.kind}: {body}{more}{loop}"


class _Context:
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
        if p.observing:
            return tuple(n.name for n in p.observing)
        if self.scenario.attacker is not None and self.scenario.attacker.observes:
            return tuple(n.name for n in self.scenario.attacker.observes)
        return ("curmodpar",)

    def judged(self, p: PropertyDecl) -> tuple[PairResult | None, str | None]:
        """The neighbouring pair ``(D0, D1 = p.neighbour)`` judged by the privacy pipeline
        (:func:`checker.app.privacy_fl.privacy_report`, the one of ``flcheck privacy``) on what the
        attacker observes, as the sequence of what it sees (``observe="sequence"``) or its final
        value (``"final"``); or why it cannot be judged."""
        names = self.observing(p)
        scheduler = cast(SchedulerClass, (p.scheduler if p.kind == "privacy" else None) or "uniform")
        key = (p.neighbour or "", names, scheduler)
        if key not in self.pairs:
            self.pairs[key] = self._judge(p.neighbour, names, scheduler)
        return self.pairs[key]

    def _judge(self, neighbour: str | None, names: tuple[str, ...],
               scheduler: SchedulerClass) -> tuple[PairResult | None, str | None]:
        if neighbour is None:
            return None, "no neighbouring dataset named (between NAME)"
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


# ------------------------------------------------------------------------------------------ kinds
def _on_plain(ctx: _Context, p: PropertyDecl, why: str) -> PropertyResult:
    """``p`` decided on the plain exploration because ``why`` (a replay on the model failed)."""
    assert ctx.plain is not None  # set whenever a replayer is
    return ctx.plain(p, why)


def _ctl(ctx: _Context, p: PropertyDecl) -> PropertyResult:
    f = parse_property(p)
    if not ctx.kripke.complete and ctl_ast.has_probabilistic(f):
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", "exploration incomplete "
                              f"({ctx.kripke.limit_reason}): probabilities need the whole state space",
                              formula=str(f))
    res = ctx.mc.check(f)
    ev = res.evidence
    if ev is not None and ctx.replayer is not None:
        ev = ctx.replayer.trace(ev, ctl_ast.atoms_of(f))
        if ev is None:
            return _on_plain(ctx, p, "its witness or counterexample on the reduced structure does not "
                             "replay on the model")
    details: dict[str, Any] = {"semantics": str(res.semantics)}
    if ev is not None:
        details["trace"] = ev.to_json()
    if res.vacuity is not None:
        details["vacuity"] = res.vacuity.to_json()
    text = _trace_text(ev)
    if res.vacuity is not None:
        text = f"vacuous: {res.vacuity.reason}" + (f"; {text}" if text else "")
    if not text and res.verdict is Verdict.HOLDS:
        text = f"no counterexample: checked on all {ctx.kripke.num_states} reachable states"
    if not ctx.kripke.complete and res.verdict is Verdict.UNKNOWN:
        text = f"exploration incomplete ({ctx.kripke.limit_reason})"
    return PropertyResult(p.name, p.kind, res.verdict, None, "", text, details, formula=str(f))


def _replay_ways(ctx: _Context, found: AttackFound, atoms: list[ctl_ast.Atom]) -> int | None:
    """How many ways of ``found`` (paths of the reduced structure) replay as paths of the model with the
    goal's atoms unchanged along them (:class:`checker.app.lift.Replayer`): all of them, or ``None``
    when one does not (the reduction did not keep what the tree reads)."""
    assert ctx.replayer is not None
    done = 0
    for paths in found.paths.values():
        for way in paths:
            if ctx.replayer.way(way.states, way.edges, atoms) is None:
                return None
            done += 1
    return done


def _attack_tree(ctx: _Context, p: PropertyDecl) -> PropertyResult:
    f = parse_property(p)
    goal = ctx.mc.sat(f)
    result = generate_attack_tree(ctx.kripke, goal, minimal_only=True)  # the defaults of flcheck attack-tree
    details: dict[str, Any] = {"expect": p.expect, "goal_states": int(np.count_nonzero(goal))}
    if isinstance(result, AttackFound):
        tree = result.tree
        size = tree.size()
        shortest = min((len(ps[0].edges) for ps in result.paths.values() if ps), default=0)
        ways: int = sum((len(ps) for ps in result.paths.values()), start=0)
        evidence = f"attack tree: {size} nodes, {ways} way(s), shortest {shortest} step(s)"
        if result.truncated:
            evidence += " (search of alternatives truncated)"
        details.update({"tree_size": size, "ways": ways, "shortest": shortest})
        quotient = ctx.quotient()
        atoms = list(ctl_ast.atoms_of(f))
        if quotient:  # attack_tree reduced: the reduced structure's ways, each replayed on the model
            replayed = _replay_ways(ctx, result, atoms)
            if replayed is None:
                return _on_plain(ctx, p, "a way of the reduced structure's attack tree does not replay on "
                                 "the model")
            details.update({"reduced_by": quotient, "ways_replayed": replayed})
            evidence += f"; ways of the structure reduced by {' and '.join(quotient)}, " \
                        f"{replayed} of {ways} replayed on the model"
        table = step_table(ctx.scenario)
        if table is not None:
            summary = summarise(tree, table, ctx.kripke, goal)
            evidence += f"; {summary.optimum_text()}"
            if ctx.replayer is None:
                details["attributes"] = summary.to_json()
            else:
                replayer = ctx.replayer
                shown = replayed_summary(summary, table, lambda states: replayer.way(states, None, atoms))
                if shown is None:
                    return _on_plain(ctx, p, "an attack of the reduced structure's tree does not replay on "
                                     "the model with the same attributes")
                details["attributes"] = shown
        ctx.artefacts["attack_trees"][p.name] = (tree, str(f))
        verdict = Verdict.HOLDS if p.expect == "exists" else Verdict.VIOLATED
        if not ctx.kripke.complete and p.expect == "absent":
            verdict = Verdict.VIOLATED  # a found attack is an attack even in a partial structure
        value = f"{size} nodes" + (f", min cost {summary.cost_text()}" if table is not None else "")
        return PropertyResult(p.name, p.kind, verdict, float(size), value, evidence, details,
                              formula=str(f))
    conclusive = result.conclusive
    inv = result.invariant_size
    quotient = ctx.quotient()
    details.update({"invariant_states": inv, "facts": _model_facts(ctx, result.facts, quotient)})
    reduced = f" of the structure reduced by {' and '.join(quotient)}" if quotient else ""
    if quotient:
        details["reduced_by"] = quotient
    evidence = f"no attack: invariant of {inv} states{reduced} avoids the goal (AG ¬goal)"
    if details["facts"]:
        evidence += "; " + "; ".join(details["facts"][:2])
    if not conclusive:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", "exploration incomplete: "
                              "no attack found in the explored part", details, formula=str(f))
    verdict = Verdict.HOLDS if p.expect == "absent" else Verdict.VIOLATED
    return PropertyResult(p.name, p.kind, verdict, 0.0, "no tree", evidence, details, formula=str(f))


def _model_facts(ctx: _Context, facts: list[str], quotient: list[str]) -> list[str]:
    """The facts of an invariant that hold of the model: on a structure that forgets values or keeps one
    state per orbit, the values seen there are the reduced states' (a forgotten model looks constant, a
    representative names one client of its class), so only the goal's own emptiness is kept; under the
    dead-value reset alone, the facts about the gradients it resets are dropped."""
    if quotient:
        return [f for f in facts if f.startswith("no state")]
    if ctx.replayer is not None:
        return [f for f in facts if not f.startswith("gradient")]
    return list(facts)


def _pair(ctx: _Context, p: PropertyDecl) -> tuple[dict[Hashable, Any], dict[Hashable, Any], str | None]:
    """The observation distributions ``(P0, P1)`` of the property's pair (:meth:`_Context.judged`)."""
    pair, problem = ctx.judged(p)
    if pair is None:
        return {}, {}, problem
    return pair.p0, pair.p1, None


def _eps_of(p: PropertyDecl) -> Eps:
    assert p.eps is not None
    return Eps(ratio=p.eps.value) if p.eps.log else Eps(value=p.eps.value)


def _observed_text(ctx: _Context, names: tuple[str, ...]) -> str:
    """How the attacker's observation was read, for the evidence."""
    what = ", ".join(names)
    if ctx.observe == "final":
        return f"observing {what} at the end of runs"
    return f"observing the sequence of {what} (one entry per release or change, in run order)"


def _privacy(ctx: _Context, p: PropertyDecl) -> PropertyResult:
    d0, d1, problem = _pair(ctx, p)
    names = ctx.observing(p)
    if problem:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", problem)
    eps = _eps_of(p)
    pair = assess_pair(d0, d1, eps)
    res, verdict = pair.epsilon, pair.verdict
    judged, _ = ctx.judged(p)
    schedule = None if judged is None else judged.schedule
    value = math.inf if res.infinite else res.epsilon
    worst = "" if res.outcome is None else (
        f"worst outcome {outcome_text(res.outcome, ctx.observe)}: P0 = {res.p0}, P1 = {res.p1}")
    if schedule is None:
        note = ctx.scheduler_note(p.neighbour or "", names)
    else:
        within = schedule.epsilon_within(eps)
        verdict = Verdict.UNKNOWN if within is None else (Verdict.HOLDS if within else Verdict.VIOLATED)
        bracket = "" if schedule.epsilon_case.exact else (
            f", ε* in [{res.text()}, {schedule.epsilon_case.upper}] (search stopped)")
        note = (f"worst case over {schedule.schedulers} schedulers{bracket} (uniform scheduler: ε* = "
                f"{schedule.uniform_epsilon.text()}); the scheduler: "
                + "; ".join(schedule.choices_text(3)))
    evidence = (f"ε* = {res.text()} vs ε = {eps.text()}; " + worst +
                f"; {_observed_text(ctx, names)}, {note}, {len(d0)}/{len(d1)} outcomes")
    details: dict[str, Any] = {
        "epsilon_bound": eps.text(), "epsilon": res.json(),
        "ratio": None if res.ratio is None else str(res.ratio), "observing": list(names),
        "observe": ctx.observe, "neighbour": p.neighbour, "outcomes": [len(d0), len(d1)],
        "scheduler": "uniform" if schedule is None else schedule.schedulers,
        "scheduler_independent": ctx.independent.get((p.neighbour or "", names), [None, None])}
    if schedule is not None:
        details["schedule"] = schedule.json()
    ctx.artefacts["privacy"][p.name] = (d0, d1, names, eps, res)
    return PropertyResult(p.name, p.kind, verdict, value, res.text(), evidence, details)


def _advantage(ctx: _Context, p: PropertyDecl) -> PropertyResult:
    d0, d1, problem = _pair(ctx, p)
    if problem:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", problem)
    pair = assess_pair(d0, d1, None if p.bound_kind == "number" else _eps_of(p))
    best = pair.best
    adv = best.advantage
    eps_model = pair.epsilon
    details: dict[str, Any] = {"advantage": str(adv), "correct": str(best.correct),
                               "symmetric": best.symmetric, "observe": ctx.observe,
                               "model_epsilon": eps_model.json(), "neighbour": p.neighbour}
    if p.bound_kind == "number":
        assert p.bound is not None
        bound_value: Fraction | float = p.bound
        bound_text = str(p.bound)
    else:
        name = "seed_theorem1_proof_as_bound" if p.bound_kind == "theorem1" else "tight_pure"
        (b,) = [b for b in pair.bounds if b.name == name]
        bound_value = b.value
        bound_text = f"{b.formula} at ε = {pair.eps_checked.text()} = {_number_text(b.value)}"
        details["bounds"] = {x.name: x.json() for x in pair.bounds}
    holds = _compare(adv, "<=", bound_value)
    evidence = (f"best attacker (likelihood ratio): Adv = {_number_text(adv)} vs bound {bound_text}; "
                f"P(correct) = {_number_text(best.correct)}; model ε* = {eps_model.text()}")
    ctx.artefacts["privacy"].setdefault(p.name, None)
    return PropertyResult(p.name, p.kind, Verdict.HOLDS if holds else Verdict.VIOLATED, float(adv),
                          _number_text(adv), evidence, details)


def _probability(ctx: _Context, p: PropertyDecl) -> PropertyResult:
    f = parse_property(p)
    target = ctx.mc.sat(f)
    k = ctx.kripke
    if not k.complete:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "",
                              f"exploration incomplete ({k.limit_reason})", formula=str(f))
    sched = p.scheduler or "min"
    value: Fraction | float
    if ctx.engine == "storm":
        value = _storm_reach(ctx, target, sched)
    elif sched == "uniform":
        value = reach_probability(dtmc_from_kripke(k, "uniform"), target)
    else:
        if ctx.mdp is None:
            ctx.mdp = mdp_from_kripke(k)
        objective: Literal["min", "max"] = "max" if sched == "max" else "min"  # the grammar's SCHEDULER
        value = mdp_reach(ctx.mdp, target, objective).initial_value
    assert p.bound is not None and p.compare is not None
    holds = _compare(value, p.compare, p.bound)
    sname = {"min": "Pmin", "max": "Pmax", "uniform": "P (uniform scheduler)"}[sched]
    evidence = f"{sname}[◇ target] = {_number_text(value)} (first passage); required {p.compare} {p.bound}"
    return PropertyResult(p.name, p.kind, Verdict.HOLDS if holds else Verdict.VIOLATED, float(value),
                          _number_text(value), evidence,
                          {"scheduler": sched, "probability": str(value), "engine": ctx.engine},
                          formula=str(f))


def _dp(ctx: _Context, p: PropertyDecl) -> PropertyResult:
    """``D{ε,δ}[ψ]`` ([dpCTL]) between ``D0`` and the declared neighbour, over the property's scheduler
    class (:func:`checker.app.privacy_dp.dp_check`); the figure is the larger of the two directions'
    ``Pr_first(ψ) − e^ε Pr_second(ψ)`` under the worst scheduler found, to be compared with ``δ``."""
    f = parse_property(p)
    assert isinstance(f, ctl_ast.DPQuery) and p.neighbour is not None  # formula_diagnostics
    sched: SchedulerClass = "worst" if p.scheduler is None else p.scheduler  # type: ignore[assignment]
    neighbour = ctx.system.with_dataset(neighbour_dataset(ctx.scenario, p.neighbour))
    try:
        res = dp_check(ctx.system, neighbour, f, p.neighbour, observing=ctx.observing(p), schedulers=sched,
                       limits=ctx.limits)
    except (Undecided, ExplorationIncomplete) as exc:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", f"not decided: {exc}",
                              {"scheduler": sched}, formula=str(f))
    decisive = max(res.directions, key=lambda r: float(r.value))
    worst = decisive.value
    first, second = decisive.direction
    evidence = (f"Pr_{first}(ψ) = {_number_text(decisive.probabilities[0])}, Pr_{second}(ψ) = "
                f"{_number_text(decisive.probabilities[1])}: Pr_{first} − e^ε Pr_{second} = "
                f"{_number_text(worst)} vs δ = {_number_text(f.delta)} ({sched} scheduler, "
                f"{decisive.note})")
    if decisive.holds is False and decisive.witness is not None:
        evidence += f"; witness run: {history_text(decisive.witness)}"
    details = {"scheduler": sched, "text": res.text(), **res.to_json()}
    return PropertyResult(p.name, p.kind, res.verdict, float(worst), _number_text(worst), evidence,
                          details, formula=str(f))


def _budget(ctx: _Context, p: PropertyDecl) -> PropertyResult:
    """A privacy budget ``(ε_B, δ_B)`` between ``D0`` and the declared neighbour, decided on the exact
    figures of :mod:`checker.app.privacy_budget` (the observations of the one privacy pipeline): it
    holds when ``δ(ε_B) ≤ δ_B`` (``δ_B = 0``: ``ε* ≤ ε_B``) in every round of the scope — each round's
    release alone (``per round``), the releases through each round (``over rounds``), each client's
    reports through each round (``per client over rounds``); a violation names the first round (and
    client).  The details add the per-round table and the rounds at which a DP accountant's basic,
    advanced and PLD composition bounds first exceed ``ε_B``."""
    from checker.app.privacy_budget import (  # lazy: scipy's FFT (PLD composition), for budgets only
        DEFAULT_DELTA_PRIME,
        budget_of_pair,
        first_exceeded,
    )

    assert p.neighbour is not None and p.eps is not None  # the grammar
    eps = _eps_of(p)
    delta = p.delta or Fraction(0)
    scope = p.budget_scope or "sequence"
    try:
        rep = privacy_report(ctx.system, observe="sequence", observing=ctx.observing(p), readings=(),
                             declared=[(p.neighbour, neighbour_dataset(ctx.scenario, p.neighbour))],
                             limits=ctx.limits, literal=False, decomposition=True, exact=True)
    except ExplorationIncomplete as exc:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", f"exploration incomplete ({exc})")
    (pair,) = rep.pairs
    dprime = float(delta) if 0 < delta < 1 else DEFAULT_DELTA_PRIME
    table = budget_of_pair(rep, pair, delta_prime=dprime, eps_ref=eps)
    found, rows = first_exceeded(table, eps, delta, scope)  # type: ignore[arg-type]  # the grammar's scopes
    seqs = list(table.clients.values()) if scope == "client" else [table.releases]
    accountant: dict[str, Any] = {}
    composed = (("basic", lambda r: not eps_within(r.basic, eps)),
                ("advanced", lambda r: r.advanced is None or r.advanced > float(eps)),
                ("pld", lambda r: r.pld_delta is None or r.pld_delta[1] > float(delta)))
    for name, over in composed if scope != "round" else ():  # per round: no composition to bound
        first = [(r.round, s.what) for s in seqs for r in s.rows if over(r)]
        accountant[name] = None if not first else {"round": min(first)[0], "what": min(first)[1]}
    scope_text = {"round": "per round", "sequence": "over rounds", "client": "per client over rounds"}[scope]
    budget_text = f"(ε, δ) = ({eps.text()}, {_number_text(delta)}) {scope_text}"
    if found is None:
        verdict = Verdict.HOLDS
        worst = max((r for r in rows), key=lambda r: math.inf if r["epsilon"] == "inf" else r["epsilon"],
                    default=None)
        head = f"budget {budget_text} never exceeded in {table.rounds} rounds"
        value = None if worst is None else (math.inf if worst["epsilon"] == "inf" else worst["epsilon"])
        value_text = "" if worst is None else worst["epsilon_exact"]
    else:
        verdict = Verdict.VIOLATED
        head = f"budget {budget_text} first exceeded at {found.text()}"
        value = math.inf if found.epsilon.infinite else found.epsilon.epsilon
        value_text = found.epsilon.text()
    acc = "; ".join(f"{n} composition exceeds it from round {v['round']}" if v else f"{n} composition never"
                    for n, v in accountant.items())
    evidence = f"{head}; a DP accountant's bounds: {acc} (δ' = {dprime:g})" if accountant else head
    details: dict[str, Any] = {
        "scope": scope, "epsilon_bound": eps.text(), "delta_bound": float(delta), "neighbour": p.neighbour,
        "exceeded": None if found is None else {
            "round": found.round, "client": found.client, "epsilon": found.epsilon.json(),
            "epsilon_exact": found.epsilon.text(), "delta": float(found.delta)},
        "rounds": rows, "accountant_first_exceeded": accountant, "budget": table.json()}
    return PropertyResult(p.name, p.kind, verdict, value, value_text, evidence, details)


def _storm_reach(ctx: _Context, target: np.ndarray, sched: str) -> Fraction:
    """The first-passage probability of ``target`` computed by Storm (``--engine storm``,
    :mod:`checker.markov.storm`) on the same explored (reduced) structure, exactly (Storm's
    ``Rational``): ``Pmin``/``Pmax`` on its MDP, ``P`` on the chain of the uniform scheduler."""
    from checker.markov import storm  # lazy: stormpy is an optional native extension

    labels = {"target": target}
    if sched == "uniform":
        model = storm.from_dtmc(dtmc_from_kripke(ctx.kripke, "uniform"), labels, exact=True)
        result = storm.reach_probabilities(model, "target")
    else:
        if ctx.mdp is None:
            ctx.mdp = mdp_from_kripke(ctx.kripke)
        model = storm.from_mdp(ctx.mdp, labels, exact=True)
        result = storm.reach_probabilities(model, "target", objective="max" if sched == "max" else "min")
    return Fraction(result.initial_value)


def _crossval(ctx: _Context, p: PropertyDecl) -> PropertyResult:
    from checker.crossval.crossval_scenario import cross_validate  # lazy: scipy, a second to import

    d0, d1, problem = _pair(ctx, p)
    if problem:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", problem)
    opts = {o.key: o.value for o in p.options}
    trials = int(opts.get("trials", 20_000))  # the scenario checker refuses trials < 1 and seed < 0
    seed = int(opts.get("seed", 0))
    formal = assess_pair(d0, d1, None).epsilon
    cv = cross_validate(d0, d1, formal_eps=math.inf if formal.infinite else formal.epsilon, trials=trials,
                        seed=seed, name=p.name)
    evidence = (f"numerical ε = {cv.numerical_eps:.6g}, formal ε = {formal.text()}, audited ε ≥ "
                f"{cv.audit.eps_lower:.4g} ({cv.audit.trials} trials); "
                + "; ".join(f"{c.name}: {c.verdict}" for c in cv.checks))
    return PropertyResult(p.name, p.kind, cv.verdict, cv.numerical_eps, f"{cv.numerical_eps:.6g}", evidence,
                          {"crossval": cv.to_json()})


def _attack(ctx: _Context, p: PropertyDecl) -> PropertyResult:
    from checker.app.attacks import run_attack  # lazy: the FL training simulations import scipy and sklearn

    opts: dict[str, Any] = {}
    limits: dict[str, float] = {}
    for o in p.options:
        v: Any = o.value
        if isinstance(v, Fraction):
            v = int(v) if v.denominator == 1 else float(v)
        if o.key.startswith("max_"):
            limits[o.key[4:]] = float(v)
        else:
            opts[o.key] = v
    out = run_attack(p.attack or "", **opts)
    found = _find_metrics(out)
    figures = ", ".join(f"{k} = {v:.4g}" for k, v in list(found.items())[:4])
    if not limits:
        return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "",
                              f"experiment ran ({figures}); no max_<metric> option states what must hold",
                              {"result": json_value(out)})
    bad = []
    for metric, lim in limits.items():
        vals = [v for k, v in found.items() if k.split(".")[-1] == metric]
        if not vals:
            return PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "",
                                  f"the attack reports no metric {metric!r} (has: {', '.join(found)})")
        if max(vals) > lim:
            bad.append(f"{metric} = {max(vals):.4g} > {lim}")
    worst = max(v for k, v in found.items() if k.split(".")[-1] in limits)
    verdict = Verdict.VIOLATED if bad else Verdict.HOLDS
    return PropertyResult(p.name, p.kind, verdict, worst, f"{worst:.4g}",
                          "; ".join(bad) if bad else f"all within bounds ({figures})",
                          {"result": json_value(out)})


def _find_metrics(obj: Any, prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_find_metrics(v, f"{prefix}{k}."))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(_find_metrics(v, f"{prefix}{i}."))
    elif isinstance(obj, int | float) and not isinstance(obj, bool) and math.isfinite(obj):
        out[prefix.rstrip(".")] = float(obj)
    return out


KINDS = {"ctl": _ctl, "attack_tree": _attack_tree, "privacy": _privacy, "advantage": _advantage,
         "probability": _probability, "dp": _dp, "crossval": _crossval, "attack": _attack,
         "budget": _budget}


class _PlainDecider:
    """Decides a property on the plain exploration of the scenario (explored once, when first needed,
    under the check's limits) when the reduced structure's evidence fails to replay on the model
    (:mod:`checker.app.lift`): a reduction that cannot show its condition is not trusted. The result
    says why (``details["fallback"]``, and under the check's ``reductions``: ``fallback``)."""

    def __init__(self, reduced: _Context, plain: ScenarioSystem, vocabulary: Any, fast: bool,
                 applied: Applied) -> None:
        self.reduced = reduced
        self.system = plain
        self.vocabulary = vocabulary
        self.fast = fast
        self.applied = applied
        self.ctx: _Context | None = None

    def __call__(self, p: PropertyDecl, why: str) -> PropertyResult:
        r = self.reduced
        if self.ctx is None:
            kripke = explore(self.system, limits=r.limits, source=f"{r.scenario.source} (unreduced)",
                             fast=self.fast)
            kripke.vocabulary = self.vocabulary
            ctx = _Context(r.scenario, r.system, kripke, r.limits, r.observe)
            ctx.engine, ctx.reductions = r.engine, r.reductions
            ctx.pairs, ctx.independent, ctx.artefacts = r.pairs, r.independent, r.artefacts
            self.ctx = ctx
        res = KINDS[p.kind](self.ctx, p)
        res.details["fallback"] = {"reason": why, "states": int(self.ctx.kripke.num_states)}
        res.evidence = f"decided on the unreduced structure ({why}); {res.evidence}"
        self.applied.details.setdefault("fallback", {"applied": True, "properties": {}})
        self.applied.details["fallback"]["properties"][p.name] = why
        return res


# ------------------------------------------------------------------------------------------ entry points
def check_scenario(scenario: Scenario, *, limits: Limits | None = None, path: str | None = None,
                   only: Sequence[str] | None = None, progress: ProgressCallback | None = None,
                   status: Callable[[str], None] | None = None, observe: str = "sequence",
                   reductions: Reductions | None = None, progress_line: Callable[[str], None] | None = None,
                   progress_interval: float = 5.0, engine: str = "flcheck", fast: bool = True,
                   system: ScenarioSystem | None = None) -> CheckReport:
    """Explore ``scenario`` once and decide each property (``only``: a subset by name).

    The limits bound the whole check: ``max_seconds`` is one budget shared by every exploration and
    property (:meth:`Limits.sharing`), and a :class:`~checker.mc.explore.Watchdog` stops a property
    that passes the deadline or ``max_memory_mb``: it and every later one are ``unknown``, naming the
    limit. ``progress_line`` receives a line (phase, states, rate, time left) every
    ``progress_interval`` seconds. ``reductions``: :func:`checker.app.reductions.reduce_system`
    (default: all that the scenario admits). ``engine``: ``flcheck`` (default) or ``storm``, which hands
    the probability properties' reachability queries on the explored structure to stormpy. ``fast``:
    :func:`checker.mc.explore.explore`'s (``False``: explore one state at a time).

    ``observe``: how privacy properties read the attacker's observation: ``sequence`` (what it sees,
    per release and per change, in run order) or ``final`` (the values at the end of the runs).

    ``progress`` receives the exploration's progress; ``status`` a short message before each property
    is checked (the CLI shows both on a terminal). ``system``: the scenario's system when the caller
    has it (:func:`flmodel.scenario.load_scenario_system`), else it is built here: once per check, the
    reductions wrap it (:mod:`checker.app.value_reductions`) and the plain decisions explore it."""
    t0 = time.perf_counter()
    lim = (limits or DEFAULT_LIMITS).sharing(t0)
    if system is None:
        system = build_system(scenario)
    with Watchdog(lim, report=progress_line, interval=progress_interval) as watch:
        try:
            return _check(scenario, system, lim, watch, t0, path=path, only=only, progress=progress,
                          status=status, observe=observe, reductions=reductions, engine=engine, fast=fast)
        except (LimitReached, KeyboardInterrupt) as exc:  # before any property: every one is unknown
            watch.finish()
            stop = interruption_of(exc, watch.current_phase)
            selected = [p for p in scenario.properties if only is None or p.name in only]
            results = [PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "",
                                      f"not checked: {stop.reason} while {stop.during}") for p in selected]
            report = CheckReport(path or scenario.source, scenario, unexplored(scenario.source, stop.reason),
                                 results, time.perf_counter() - t0, interrupted=stop, system=system)
            report.total_seconds = report.explore_seconds
            return report


def _check(scenario: Scenario, plain: ScenarioSystem, lim: Limits, watch: Watchdog, t0: float, *,
           path: str | None,
           only: Sequence[str] | None, progress: ProgressCallback | None,
           status: Callable[[str], None] | None, observe: str, reductions: Reductions | None,
           engine: str = "flcheck", fast: bool = True) -> CheckReport:
    def explored(p: Progress) -> None:
        watch.explored(p)
        if progress is not None:
            progress(p)

    system, applied = reduce_system(plain, scenario, reductions)
    vocabulary = validate_scenario(scenario, system)
    watch.phase("exploring")
    with watch.exploring():  # the exploration stops itself at the limits, with a partial structure
        kripke = explore(system, limits=lim, source=scenario.source, progress=explored, fast=fast)
    kripke.vocabulary = vocabulary
    t1 = time.perf_counter()
    watch.phase(f"evaluating atoms on {kripke.num_states} states")
    with watch.exploring():  # the atoms on the structure (reported together): the properties need them
        diags = formula_diagnostics(scenario, kripke, vocabulary)
    if diags:
        raise ModelError(diags)
    # the trace abstraction, the cone of influence and the symmetry quotient serve the explored
    # structure's properties only; the others get the system with its dead values reset alone
    choice = reductions or Reductions()
    own, _ = reduce_system(plain, scenario, Reductions.dead_values_only(choice))
    ctx = _Context(scenario, own, kripke, lim, observe)
    ctx.engine = engine
    ctx.reductions = reductions or Reductions()
    ctx.applied = list(applied.names)
    if applied.names:
        ctx.replayer = Replayer(kripke, plain, state_abstraction(system), list(plain.observable_names()))
        ctx.plain = _PlainDecider(ctx, plain, vocabulary, fast, applied)
    results: list[PropertyResult] = []
    selected = [p for p in scenario.properties if only is None or p.name in only]
    stopped: str | None = None
    interrupted: Interruption | None = None
    for i, p in enumerate(selected, 1):
        message = f"checking {p.name} ({p.kind}, {i} of {len(selected)})"
        if status is not None:
            status(message)
        s0 = time.perf_counter()
        if stopped is not None:
            results.append(PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "",
                                          f"not checked: {stopped} before it"))
            continue
        try:
            watch.phase(message)
            watch.check()
            res = KINDS[p.kind](ctx, p)  # the grammar admits only the kinds of KINDS
        except (LimitReached, KeyboardInterrupt) as exc:  # the rest is unknown (checker.app.check_stop)
            watch.finish()
            interrupted = interruption_of(exc, f"checking {p.name}")
            stopped = interrupted.reason
            res = PropertyResult(p.name, p.kind, Verdict.UNKNOWN, None, "", f"{stopped} while checking it")
        res.seconds = time.perf_counter() - s0
        results.append(res)
    report = CheckReport(path or scenario.source, scenario, kripke, results, t1 - t0, interrupted=interrupted,
                         system=plain)
    report.reductions = applied
    applied.explorations = ctx.explorations
    watch.finish()
    report.neighbour_structures = {n: (int(k.num_states), int(k.num_transitions))
                                   for n, k in ctx.structures.items() if n}
    report.artefacts = ctx.artefacts
    report.total_seconds = time.perf_counter() - t0
    return report


def scenario_path(spec: str | Path | None) -> Path:
    """The scenario file ``check`` reads for ``spec``: the bundled Moniteo when ``None``, else a path
    or a bundled scenario's name. An ``example:NAME`` system is refused: it declares no properties."""
    if spec is None:
        return default_scenario()
    if str(spec).startswith("example:"):
        raise InputError("an example system declares no properties to check", Position(str(spec)),
                         "a scenario file (.fl) or a bundled scenario (flcheck list)")
    return resolve_scenario_path(spec)


def check_file(path: str | Path | None = None, *, limits: Limits | None = None,
               only: Sequence[str] | None = None, progress: ProgressCallback | None = None,
               status: Callable[[str], None] | None = None,
               defines: Mapping[str, int] | None = None, observe: str = "sequence",
               reductions: Reductions | None = None, progress_line: Callable[[str], None] | None = None,
               progress_interval: float = 5.0, engine: str = "flcheck", fast: bool = True) -> CheckReport:
    """Load the scenario file ``path`` (default: the bundled Moniteo; a bundled scenario's name stands
    for its file, :func:`checker.app.load.resolve_scenario_path`) with its constants set by ``defines``
    and :func:`check_scenario` it."""
    p = scenario_path(path)
    scenario, system = load_scenario_system(p, defines=defines)
    return check_scenario(scenario, limits=limits, path=str(p), only=only, progress=progress,
                          status=status, observe=observe, reductions=reductions,
                          progress_line=progress_line, progress_interval=progress_interval, engine=engine,
                          fast=fast, system=system)
