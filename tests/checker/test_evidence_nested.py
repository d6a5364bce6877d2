"""Witnesses and counterexamples go on through nested temporal operators (:mod:`checker.mc.evidence`):
the counterexample of ``AG (p -> AX q)`` ends with the successor that breaks ``AX q``, the witness of
``EF (p & EX q)`` with the step into the ``q`` state, and every part named in ``then`` holds where it
starts — all checked against the naive reference checker (``tests/checker/ctl_reference.py``) on random
structures."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.mc import ctl_ast
from checker.mc.ctl import ModelChecker, check
from checker.mc.ctl_parse import parse_formula
from checker.mc.kripke import Kripke
from tests.checker.ctl_reference import ReferenceChecker
from tests.strategies import kripke_structures

SEMANTICS = ("iiif", "total")


def edge_ok(k: Kripke, u: int, v: int, semantics: str) -> bool:
    succ = k.successors(u).tolist()
    return v in succ or (semantics == "total" and u == v and not succ)


def assert_real_path(k: Kripke, states: list[int], semantics: str) -> None:
    for u, v in itertools.pairwise(states):
        assert edge_ok(k, u, v, semantics), (u, v)


@settings(max_examples=200, deadline=None)
@given(k=kripke_structures(max_states=8), semantics=st.sampled_from(SEMANTICS))
def test_ag_implies_ax_counterexample_shows_the_breaking_successor(k: Kripke, semantics: str) -> None:
    res = ModelChecker(k, semantics).check("AG (p -> AX q)", vacuity=False)
    ref = ReferenceChecker(k, semantics)
    assert res.holds == (ref.initial <= ref.sat(parse_formula("AG (p -> AX q)")))
    if res.holds:
        return
    trace = res.counterexample
    assert trace is not None
    path = trace.states
    assert_real_path(k, path, semantics)
    # the path reaches a p state with a successor outside q, and takes that step
    if trace.loop_start is None:
        last, before = path[-1], path[-2]
    else:  # total semantics: a deadlock p state stutters into itself, outside q
        assert semantics == "total" and trace.loop_start == len(path) - 1 and not len(k.successors(path[-1]))
        last = before = path[-1]
    assert bool(k.labels["p"][before]) and not bool(k.labels["q"][last])
    assert [i for i, _ in trace.then] == [path.index(before, len(path) - 2)]
    assert before in ref.sat(parse_formula(trace.then[0][1]))


@settings(max_examples=200, deadline=None)
@given(k=kripke_structures(max_states=8), semantics=st.sampled_from(SEMANTICS))
def test_ef_and_ex_witness_shows_the_q_step(k: Kripke, semantics: str) -> None:
    formula = "EF (p & EX q)"
    res = ModelChecker(k, semantics).check(formula, vacuity=False)
    ref = ReferenceChecker(k, semantics)
    first = int(k.initial[0])
    assert res.holds == (ref.initial <= ref.sat(parse_formula(formula)))
    if not res.holds:
        return
    trace = res.witness
    assert trace is not None and trace.states[0] == first
    path = trace.states
    assert_real_path(k, path, semantics)
    if trace.loop_start is None:  # the q step is a real step
        assert bool(k.labels["p"][path[-2]]) and bool(k.labels["q"][path[-1]])
    else:  # a deadlock p ∧ q state stutters under total semantics: the step is its self-loop
        assert semantics == "total" and path[-1] == path[trace.loop_start]
    step, shown = trace.then[0]
    assert path[step] in ref.sat(parse_formula(shown))


@settings(max_examples=150, deadline=None)
@given(k=kripke_structures(max_states=7), semantics=st.sampled_from(SEMANTICS),
       outer=st.sampled_from(["EF", "EX", "EU"]), inner=st.sampled_from(["EX", "EF", "EG", "EU"]))
def test_every_nested_part_holds_where_it_starts(k: Kripke, semantics: str, outer: str, inner: str) -> None:
    p, q, r = (ctl_ast.Label(a) for a in "pqr")
    nested = (ctl_ast.UNARY_OPS[inner](q) if inner != "EU" else ctl_ast.EU(q, r))
    target = ctl_ast.And((p, nested))
    formula = ctl_ast.UNARY_OPS[outer](target) if outer != "EU" else ctl_ast.EU(r, target)
    res = check(k, formula, semantics=semantics, vacuity=False)
    ref = ReferenceChecker(k, semantics)
    if not res.holds:
        return
    trace = res.witness
    assert trace is not None
    assert_real_path(k, trace.states, semantics)
    assert trace.states[0] in ref.sat(parse_formula(trace.shows))
    for step, shown in trace.then:
        assert trace.states[step] in ref.sat(parse_formula(shown))
    assert trace.then, "a witness of a nested existential formula names the nested part"
    assert trace.to_json()["then"] == [{"step": s, "shows": t} for s, t in trace.then]


def test_render_marks_the_nested_part() -> None:
    # 0 -p-> 1 (p) -> 2 (q): AG (p -> AX !q) fails at 1 because of the step 1 -> 2
    labels = {"p": np.array([False, True, False]), "q": np.array([False, False, True])}
    k = Kripke.from_edges(3, [0], [0, 1], [1, 2], labels=labels)
    res = check(k, "AG (p -> AX !q)")
    assert res.counterexample is not None
    assert res.counterexample.states == [0, 1, 2]
    text = res.counterexample.render()
    assert "s1 satisfies EX q; the next steps show it" in text
    assert text.index("s1 satisfies") < text.index("--> s2")
