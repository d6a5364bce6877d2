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

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import flcheck_spec

from checker.app.check_attack import check_attack
from checker.app.check_context import CheckContext
from checker.app.check_pairs import check_advantage, check_budget, check_crossval, check_dp, check_privacy
from checker.app.check_results import PropertyResult
from checker.app.check_stop import Interruption, interruption_of, unexplored
from checker.app.check_structure import check_attack_tree, check_ctl, check_probability
from checker.app.lift import Replayer
from checker.app.load import resolve_scenario_path
from checker.app.reductions import Applied, Reductions, reduce_system, state_abstraction
from checker.app.scenario_formulas import formula_diagnostics, validate_scenario
from checker.errors import InputError, Position
from checker.mc.explore import LimitReached, Limits, Progress, ProgressCallback, Watchdog, explore
from checker.mc.kripke import Kripke
from checker.render import json_value
from checker.verdict import Verdict
from flmodel.errors import ModelError
from flmodel.readings import Reading, readings_of
from flmodel.scenario import load_scenario_system
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import ScenarioSystem, build_system
from flmodel.scenario_properties import (
    AdvantageProperty,
    AttackProperty,
    AttackTreeProperty,
    BudgetProperty,
    CrossvalProperty,
    CtlProperty,
    DpProperty,
    PrivacyProperty,
    ProbabilityProperty,
    PropertyDecl,
)

__all__ = ["CheckReport", "PropertyResult", "check_file", "check_scenario", "decide", "default_scenario"]

#: Default exploration limits of ``flcheck check`` (a scenario that hits them gets "unknown" verdicts).
DEFAULT_LIMITS = Limits(max_states=2_000_000, max_seconds=600)


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



def decide(ctx: CheckContext, p: PropertyDecl) -> PropertyResult:
    """Property ``p`` decided by the engine of its kind (one typed record per kind,
    :mod:`flmodel.scenario_properties`)."""
    match p:
        case CtlProperty():
            return check_ctl(ctx, p)
        case AttackTreeProperty():
            return check_attack_tree(ctx, p)
        case ProbabilityProperty():
            return check_probability(ctx, p)
        case PrivacyProperty():
            return check_privacy(ctx, p)
        case AdvantageProperty():
            return check_advantage(ctx, p)
        case DpProperty():
            return check_dp(ctx, p)
        case BudgetProperty():
            return check_budget(ctx, p)
        case CrossvalProperty():
            return check_crossval(ctx, p)
        case AttackProperty():
            return check_attack(ctx, p)


class _PlainDecider:
    """Decides a property on the plain exploration of the scenario (explored once, when first needed,
    under the check's limits) when the reduced structure's evidence fails to replay on the model
    (:mod:`checker.app.lift`): a reduction that cannot show its condition is not trusted. The result
    says why (``details["fallback"]``, and under the check's ``reductions``: ``fallback``)."""

    def __init__(self, reduced: CheckContext, plain: ScenarioSystem, vocabulary: Any, fast: bool,
                 applied: Applied) -> None:
        self.reduced = reduced
        self.system = plain
        self.vocabulary = vocabulary
        self.fast = fast
        self.applied = applied
        self.ctx: CheckContext | None = None

    def __call__(self, p: PropertyDecl, why: str) -> PropertyResult:
        r = self.reduced
        if self.ctx is None:
            kripke = explore(self.system, limits=r.limits, source=f"{r.scenario.source} (unreduced)",
                             fast=self.fast)
            kripke.vocabulary = self.vocabulary
            ctx = CheckContext(r.scenario, r.system, kripke, r.limits, r.observe)
            ctx.engine, ctx.reductions = r.engine, r.reductions
            ctx.pairs, ctx.independent, ctx.artefacts = r.pairs, r.independent, r.artefacts
            self.ctx = ctx
        res = decide(self.ctx, p)
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
    ctx = CheckContext(scenario, own, kripke, lim, observe)
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
            res = decide(ctx, p)
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

