"""The ``check`` properties decided on the explored structure: ``ctl`` (:class:`checker.mc.ctl.ModelChecker`,
IIIf deadlock semantics), ``attack_tree`` (the goal's satisfaction set, then
:func:`checker.attack_trees.generation.generate_attack_tree`: a valid tree iff ``EF goal``; ``exists``
holds iff a tree is found, ``absent`` iff the engine proves that no tree exists, an invariant avoiding
the goal) and ``probability`` (the first-passage probability of the target set, IIIf ``Prob``:
``min``/``max`` over schedulers by :func:`checker.markov.mdp.mdp_reach`, ``uniform`` by
:func:`checker.markov.first_passage.reach_probability`, or by Storm). On a reduced structure the
evidence is replayed on the model (:mod:`checker.app.lift`), else the property is decided on the plain
exploration."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Literal

import numpy as np

from checker.app.check_context import CheckContext, on_plain
from checker.app.check_results import PropertyResult, compare, exact_text, trace_text
from checker.app.scenario_formulas import parse_property
from checker.app.step_attributes import replayed_summary, step_table, summarise
from checker.attack_trees.generation import AttackFound, generate_attack_tree
from checker.markov.first_passage import reach_probability
from checker.markov.mdp import mdp_reach
from checker.markov.models import dtmc_from_kripke, mdp_from_kripke
from checker.mc import ctl_ast
from checker.verdict import Verdict
from flmodel.scenario_properties import AttackTreeProperty, CtlProperty, ProbabilityProperty

__all__ = ["check_attack_tree", "check_ctl", "check_probability"]


def check_ctl(ctx: CheckContext, p: CtlProperty) -> PropertyResult:
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
            return on_plain(ctx, p, "its witness or counterexample on the reduced structure does not "
                             "replay on the model")
    details: dict[str, Any] = {"semantics": str(res.semantics)}
    if ev is not None:
        details["trace"] = ev.to_json()
    if res.vacuity is not None:
        details["vacuity"] = res.vacuity.to_json()
    text = trace_text(ev)
    if res.vacuity is not None:
        text = f"vacuous: {res.vacuity.reason}" + (f"; {text}" if text else "")
    if not text and res.verdict is Verdict.HOLDS:
        text = f"no counterexample: checked on all {ctx.kripke.num_states} reachable states"
    if not ctx.kripke.complete and res.verdict is Verdict.UNKNOWN:
        text = f"exploration incomplete ({ctx.kripke.limit_reason})"
    return PropertyResult(p.name, p.kind, res.verdict, None, "", text, details, formula=str(f))



def _replay_ways(ctx: CheckContext, found: AttackFound, atoms: list[ctl_ast.Atom]) -> int | None:
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



def check_attack_tree(ctx: CheckContext, p: AttackTreeProperty) -> PropertyResult:
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
                return on_plain(ctx, p, "a way of the reduced structure's attack tree does not replay on "
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
                    return on_plain(ctx, p, "an attack of the reduced structure's tree does not replay on "
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



def _model_facts(ctx: CheckContext, facts: list[str], quotient: list[str]) -> list[str]:
    """The facts of an invariant that hold of the model: on a structure that forgets values or keeps one
    state per orbit, the values seen there are the reduced states' (a forgotten model looks constant, a
    representative names one client of its class), so only the goal's own emptiness is kept; under the
    dead-value reset alone, the facts about the gradients it resets are dropped."""
    if quotient:
        return [f for f in facts if f.startswith("no state")]
    if ctx.replayer is not None:
        return [f for f in facts if not f.startswith("gradient")]
    return list(facts)



def check_probability(ctx: CheckContext, p: ProbabilityProperty) -> PropertyResult:
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
    holds = compare(value, p.compare, p.bound)
    sname = {"min": "Pmin", "max": "Pmax", "uniform": "P (uniform scheduler)"}[sched]
    evidence = f"{sname}[◇ target] = {exact_text(value)} (first passage); required {p.compare} {p.bound}"
    return PropertyResult(p.name, p.kind, Verdict.HOLDS if holds else Verdict.VIOLATED, float(value),
                          exact_text(value), evidence,
                          {"scheduler": sched, "probability": str(value), "engine": ctx.engine},
                          formula=str(f))



def _storm_reach(ctx: CheckContext, target: np.ndarray, sched: str) -> Fraction:
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

