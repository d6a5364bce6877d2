"""Rules declared once (:mod:`flmodel.rule_data`): the steps derived from the declarations are the
hand-written rules' (:mod:`tests.flmodel.legacy_rules`), step for step and in order, on generated
scenarios over the whole language; the footprints are derived (the reductions' laws check them state by
state, :mod:`tests.differential.test_laws`); a rule declared once gets its steps, footprint, fast coding
decision and Isabelle clause from that declaration alone."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from fractions import Fraction

from hypothesis import HealthCheck, given, settings

from checker.mc.explore import Limits, explore
from flmodel.rule_data import Scope, Write, lgraph
from flmodel.rule_parts import Drawn, EachClient, Event, Ready, Report, TraceChoice
from flmodel.rules import FEDAVG_ROUNDS, PUBLISHED, RuleSet
from flmodel.scenario import parse_scenario
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import build_fl_system, client_noise, network_of
from flmodel.system import FLSystem
from tests.differential.generate import Draft, drafts
from tests.flmodel import legacy_rules as legacy


def _legacy(scenario: Scenario, system: FLSystem) -> FLSystem:
    """``system`` with the hand-written rules of its scenario in place of the declared ones."""
    variant = scenario.protocol.variant if scenario.protocol is not None else "published"
    rules = legacy.RULE_SETS[variant]
    mechanism, target = system.ctx.mechanism, system.ctx.noise_target
    if system.ctx.per_client is not None:
        mechs, targets = client_noise(scenario)
        rules = legacy.per_client_noise(rules, mechs, targets)
        mechanism = next(m for m in mechs.values() if m is not None)
    if scenario.networked:
        rules = legacy.networked(rules, network_of(scenario))
    return system.replace(rules=rules, per_client=None, mechanism=mechanism, noise_target=target)


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(drafts())
def test_declared_steps_are_the_hand_written_ones(draft: Draft) -> None:
    scenario = parse_scenario(draft.text(), source="<rules>")
    declared = build_fl_system(scenario)
    written = _legacy(scenario, declared)
    k = explore(declared, limits=Limits(max_states=3000), fast=False)  # type: ignore[arg-type]
    assert k.states is not None
    # a network under the literal trace sets lists a lost report after every delivered outcome of the
    # first value (the hand-written transformer after each trace's first one): the same steps
    ordered = not (scenario.networked and declared.ctx.trace_mode == "full")
    for state in k.states:
        mine, theirs = declared.successors(state), written.successors(state)  # type: ignore[arg-type]
        assert (mine == theirs) if ordered else (Counter(mine) == Counter(theirs)), state


def test_the_published_rules_print_their_isabelle_clauses() -> None:
    """The premises and the successor of ``get_grad`` as [IIIf-FL] III-B publishes it (SPEC.md's
    readings), and in flcheck's extended relation (the policy gate, the noise support)."""
    get_grad = PUBLISHED.rules[1]
    premises, terms, prot = get_grad.isabelle("published")
    step = "Gradc = vsub (curmodpar G) (vscale (eta Lr) (gradL Lr (curmodpar G) (partition G c)))"
    assert premises == ["l \\<in> evs P", "c \\<in> clients G", step]
    assert prot == "insertp (Get c Gradc # l) (evs P)"
    assert lgraph(terms) == ("Lgraph (gra G) (aloc G) (server G) (clients G) (insert c (ready G)) "
                             "(fun_upd (gradient G) c Gradc) (curmodpar G) (partition G) (dataset G)")
    extended, _, _ = get_grad.isabelle("extended")
    assert "(gate \\<longrightarrow> enables I (aloc G c) c act_get_grad)" in extended


def test_a_toy_rule_declared_once() -> None:
    """A new rule, declared once, has steps, a footprint (with its guard literal and what its writes
    depend on), a dead-value statement, no integer coding (the batch explorer refuses a changed rule
    set) and an Isabelle clause, with nothing written a second time: a client that reports once
    more while ready (``get_grad`` for ready clients only, writing nothing but the trace)."""
    import flcheck_spec

    from flmodel.fast import batch_view
    from flmodel.scenario import load_scenario

    again = replace(FEDAVG_ROUNDS.rules[1], name="report_again", premises=(Ready(True),),
                    writes=(Write("evs", Event("get", Drawn())),))
    rules = RuleSet("fedavg_rounds", (*FEDAVG_ROUNDS.rules, again), tracks_partitioned=True)
    base = build_fl_system(load_scenario(flcheck_spec.resource("scenarios", "moniteo.fl")))
    system = base.replace(rules=rules)
    (s0,) = system.initial_states()
    state = s0
    for _ in range(2):  # two reports
        state = next(t for a, t, _ in system.successors(state) if a.rule.startswith("get_grad_round"))
    assert any(a.rule.startswith("report_again") for a, _, _ in system.successors(state))
    classes = {(c.rule, c.actor): c for c in system.action_classes()}
    mine = next(c for (r, _), c in classes.items() if r.startswith("report_again"))
    assert (f"ready:{mine.actor}", True) in mine.guard
    assert dict(mine.effects)["evs"] == frozenset({"evs"})  # drop: the trace set's abstraction only
    assert again.gradients == "sum"
    assert isinstance(batch_view(system), str)
    premises, _, prot = again.isabelle("rounds")
    assert "c \\<in> ready G" in premises and prot == "insertp (Get c Gradc # l) (evs P)"
    assert isinstance(again.actors, EachClient) and isinstance(again.choice, TraceChoice)
    assert isinstance(again.draw, Report)
    # the footprint of a literal trace set: the event carries the report, read off the declaration
    full = again.written(Scope(system.clients, system.clients[0], False, system))
    assert full["evs"] >= {"curmodpar", f"partition:{system.clients[0]}"}
    assert Fraction(1) == sum(p for a, _, p in system.successors(state) if a.rule.startswith("report_again")
                              and a.actor == mine.actor)
