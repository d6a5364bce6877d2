"""The fast CTL checker against the naive reference, dualities, IIIf deadlock corner cases, evidence,
vacuity and three-valued checking of incomplete structures."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.mc import ctl_ast
from checker.mc.ctl import ModelChecker, check
from checker.mc.ctl_parse import parse_formula
from checker.mc.kripke import Kripke
from checker.mc.reach import LEVELS_BEFORE_SCIPY
from checker.mc.ts import Action
from checker.verdict import Verdict
from tests.checker.ctl_reference import ReferenceChecker
from tests.strategies import kripke_structures

SEMANTICS = ("iiif", "total")
ATOMS = st.sampled_from(
    [ctl_ast.Label("p"), ctl_ast.Label("q"), ctl_ast.Label("r"), ctl_ast.TrueF(), ctl_ast.FalseF()]
)


def formulas(max_leaves: int = 12) -> st.SearchStrategy[ctl_ast.Formula]:
    def extend(children: st.SearchStrategy[ctl_ast.Formula]) -> st.SearchStrategy[ctl_ast.Formula]:
        unary = st.sampled_from(
            [ctl_ast.Not, ctl_ast.EX, ctl_ast.AX, ctl_ast.EF, ctl_ast.AF, ctl_ast.EG, ctl_ast.AG]
        )
        binary = st.sampled_from(
            [ctl_ast.EU, ctl_ast.AU, ctl_ast.ER, ctl_ast.AR, ctl_ast.Implies, ctl_ast.Iff]
        )
        return st.one_of(
            st.builds(lambda op, f: op(f), unary, children),
            st.builds(lambda op, f, g: op(f, g), binary, children, children),
            st.builds(lambda fs: ctl_ast.And(tuple(fs)), st.lists(children, min_size=2, max_size=4)),
            st.builds(lambda fs: ctl_ast.Or(tuple(fs)), st.lists(children, min_size=2, max_size=4)),
        )

    return st.recursive(ATOMS, extend, max_leaves=max_leaves)


def as_set(arr: np.ndarray) -> frozenset[int]:
    return frozenset(int(i) for i in np.flatnonzero(arr))


# ------------------------------------------------------------------ fast == reference
@settings(max_examples=250, deadline=None)
@given(k=kripke_structures(max_states=8), f=formulas(), semantics=st.sampled_from(SEMANTICS))
def test_fast_checker_equals_naive_reference(k: Kripke, f: ctl_ast.Formula, semantics: str) -> None:
    fast = ModelChecker(k, semantics)
    ref = ReferenceChecker(k, semantics)
    for sub in f.subformulas():
        assert as_set(fast.sat(sub)) == ref.sat(sub), f"{sub} under {semantics}"
    res = fast.check(f, vacuity=False)
    assert res.holds == ref.holds(f)
    assert res.verdict in (Verdict.HOLDS, Verdict.VIOLATED)


@settings(max_examples=60, deadline=None)
@given(k=kripke_structures(max_states=14, allow_deadlocks=False), f=formulas(8))
def test_semantics_agree_without_deadlocks(k: Kripke, f: ctl_ast.Formula) -> None:
    """On a total relation the two semantics coincide."""
    assert np.array_equal(ModelChecker(k, "iiif").sat(f), ModelChecker(k, "total").sat(f))


# ------------------------------------------------------------------ dualities
def dualities(f: ctl_ast.Formula, g: ctl_ast.Formula) -> list[tuple[ctl_ast.Formula, ctl_ast.Formula]]:
    n = ctl_ast.Not
    return [
        (ctl_ast.AG(f), n(ctl_ast.EF(n(f)))),
        (ctl_ast.AF(f), n(ctl_ast.EG(n(f)))),
        (ctl_ast.AX(f), n(ctl_ast.EX(n(f)))),
        (ctl_ast.AR(f, g), n(ctl_ast.EU(n(f), n(g)))),
        (ctl_ast.ER(f, g), n(ctl_ast.AU(n(f), n(g)))),
        (ctl_ast.EF(f), ctl_ast.EU(ctl_ast.TrueF(), f)),
        (ctl_ast.AF(f), ctl_ast.AU(ctl_ast.TrueF(), f)),
        (ctl_ast.EG(f), ctl_ast.ER(ctl_ast.FalseF(), f)),
        (ctl_ast.AG(f), ctl_ast.AR(ctl_ast.FalseF(), f)),
        (
            ctl_ast.EU(f, g),
            ctl_ast.Or((g, ctl_ast.And((f, ctl_ast.EX(ctl_ast.EU(f, g)))))),
        ),  # fixpoint unfolding
        (ctl_ast.AU(f, g), ctl_ast.Or((g, ctl_ast.And((f, ctl_ast.AX(ctl_ast.AU(f, g))))))),
        (ctl_ast.EG(f), ctl_ast.And((f, ctl_ast.EX(ctl_ast.EG(f))))),
        (ctl_ast.AG(f), ctl_ast.And((f, ctl_ast.AX(ctl_ast.AG(f))))),
    ]


@settings(max_examples=120, deadline=None)
@given(k=kripke_structures(max_states=10), f=formulas(5), g=formulas(5), semantics=st.sampled_from(SEMANTICS))
def test_dualities_and_unfoldings(k: Kripke, f: ctl_ast.Formula, g: ctl_ast.Formula, semantics: str) -> None:
    mc = ModelChecker(k, semantics)
    for lhs, rhs in dualities(f, g):
        assert np.array_equal(mc.sat(lhs), mc.sat(rhs)), f"{lhs} vs {rhs} ({semantics})"


def test_ag_ef_duality_at_the_initial_states_example() -> None:
    k = Kripke.from_edges(3, [0], [0, 1, 2], [1, 2, 2], labels={"goal": np.array([False, False, True])})
    assert check(k, "AG !goal").verdict is Verdict.VIOLATED
    assert check(k, "!EF goal").verdict is Verdict.VIOLATED
    assert check(k, "EF goal").verdict is Verdict.HOLDS


# ------------------------------------------------------------------ IIIf deadlock corner cases
def deadlock_pair() -> Kripke:
    """0 -> 1, state 1 is a deadlock; p holds nowhere."""
    return Kripke.from_edges(2, [0], [0], [1], labels={"p": np.array([False, False])})


@pytest.mark.parametrize(
    ("formula", "iiif", "total"),
    [
        ("AX false", [False, True], [False, False]),
        ("EX true", [True, False], [True, True]),
        ("AF p", [True, True], [False, False]),
        ("AF false", [True, True], [False, False]),
        ("EG true", [False, False], [True, True]),
        ("AG true", [True, True], [True, True]),
        ("EG !p", [False, False], [True, True]),
        ("A[true U p]", [True, True], [False, False]),
        ("A[p R false]", [False, False], [False, False]),
        ("E[p R true]", [False, False], [True, True]),
        ("AG AX false", [False, True], [False, False]),
        ("AX AX false", [True, True], [False, False]),
    ],
)
def test_deadlock_semantics(formula: str, iiif: list[bool], total: list[bool]) -> None:
    k = deadlock_pair()
    assert ModelChecker(k, "iiif").sat(formula).tolist() == iiif
    assert ModelChecker(k, "total").sat(formula).tolist() == total
    r = check(k, formula, semantics="total", vacuity=False)
    assert str(r.semantics) == "total" and r.to_json()["semantics"] == "total"


def test_every_result_names_its_semantics() -> None:
    r = check(deadlock_pair(), "AF p")
    assert r.to_json()["semantics"] == "iiif"
    assert "IIIf" in r.render()


# ------------------------------------------------------------------ n-ary connectives
@settings(max_examples=60, deadline=None)
@given(k=kripke_structures(max_states=8), fs=st.lists(formulas(4), min_size=2, max_size=5))
def test_nary_or_and_equal_nested_binary(k: Kripke, fs: list[ctl_ast.Formula]) -> None:
    mc = ModelChecker(k)
    nested_or, nested_and = fs[0], fs[0]
    for f in fs[1:]:
        nested_or = ctl_ast.Or((nested_or, f))
        nested_and = ctl_ast.And((nested_and, f))
    assert np.array_equal(mc.sat(ctl_ast.Or(tuple(fs))), mc.sat(nested_or))
    assert np.array_equal(mc.sat(ctl_ast.And(tuple(fs))), mc.sat(nested_and))


def test_parsed_chains_are_nary() -> None:
    assert parse_formula("p | q | r") == ctl_ast.Or(
        (ctl_ast.Label("p"), ctl_ast.Label("q"), ctl_ast.Label("r"))
    )
    assert parse_formula("p & q & r & p") == ctl_ast.And(
        (ctl_ast.Label("p"), ctl_ast.Label("q"), ctl_ast.Label("r"), ctl_ast.Label("p"))
    )


# ------------------------------------------------------------------ evidence
def _edge(k: Kripke, u: int, v: int) -> bool:
    return v in k.successors(u).tolist()


def _step_ok(k: Kripke, u: int, v: int, semantics: str) -> bool:
    if _edge(k, u, v):
        return True
    return semantics == "total" and u == v and len(k.successors(u)) == 0


@settings(max_examples=150, deadline=None)
@given(
    k=kripke_structures(max_states=9),
    f=formulas(5),
    g=formulas(5),
    semantics=st.sampled_from(SEMANTICS),
    op=st.sampled_from(["EX", "EF", "EG", "EU", "ER", "AX", "AG", "AF", "AU", "AR"]),
)
def test_witnesses_and_counterexamples_are_real_paths(
    k: Kripke, f: ctl_ast.Formula, g: ctl_ast.Formula, semantics: str, op: str
) -> None:
    formula: ctl_ast.Formula = (
        ctl_ast.UNARY_OPS[op](f) if op in ctl_ast.UNARY_OPS else ctl_ast.BINARY_OPS[(op[0], op[1])](f, g)
    )
    mc = ModelChecker(k, semantics)
    res = mc.check(formula, vacuity=False)
    ref = ReferenceChecker(k, semantics)
    trace = res.witness if res.holds else res.counterexample
    existential = op.startswith("E")
    if res.holds != existential:  # true universal / false existential: no path is promised
        return
    assert trace is not None, f"no evidence for {formula} ({res.verdict})"
    path = trace.states
    start = path[0]
    assert start in k.initial.tolist()
    for u, v in itertools.pairwise(path):
        assert _step_ok(k, u, v, semantics)
    if trace.loop_start is not None:
        assert _step_ok(k, path[-1], path[trace.loop_start], semantics)
    demo = parse_formula(trace.shows)
    # the demonstrated formula holds at the start and refutes/confirms the property
    assert start in ref.sat(demo)
    if not existential:
        assert ref.sat(demo).isdisjoint(ref.sat(formula))


def test_eg_lasso_through_a_cycle() -> None:
    # 0 -> 1 -> 2 -> 1, p everywhere
    k = Kripke.from_edges(3, [0], [0, 1, 2], [1, 2, 1], labels={"p": np.ones(3, dtype=bool)})
    r = check(k, "EG p")
    assert r.witness is not None
    assert r.witness.states == [0, 1, 2] and r.witness.loop_start == 1
    assert "back to s1" in r.witness.render()


def test_counterexample_prints_actions_and_changed_values() -> None:
    k = Kripke.from_edges(
        3,
        [0],
        [0, 1],
        [1, 2],
        action=[0, 1],
        actions=(Action("get_grad", "c1"), Action("eval_server", "server")),
        observables={
            "curmodpar": [Fraction(0), Fraction(0), Fraction(1, 2)],
            "ready": [frozenset(), frozenset({"c1"}), frozenset()],
        },
    )
    r = check(k, "AG curmodpar == 0")
    assert r.verdict is Verdict.VIOLATED
    assert r.counterexample is not None
    text = r.counterexample.render()
    assert "--get_grad(c1)--> s1: ready={c1}" in text
    assert "--eval_server(server)--> s2: curmodpar=1/2, ready={}" in text
    js = r.to_json()
    assert set(js) == {
        "formula",
        "verdict",
        "semantics",
        "states",
        "transitions",
        "satisfying_initial",
        "counterexample",
    }
    assert js["counterexample"]["steps"][2]["changed"] == {"curmodpar": "1/2", "ready": []}


# ------------------------------------------------------------------ vacuity
def test_vacuous_implication_reports_the_antecedent() -> None:
    k = Kripke.from_edges(
        2, [0], [0, 1], [1, 1], labels={"p": np.zeros(2, bool), "q": np.array([True, False])}
    )
    r = check(k, "AG (p -> q)")
    assert r.verdict is Verdict.HOLDS_VACUOUSLY
    assert r.vacuity is not None and "antecedent 'p'" in r.vacuity.reason
    assert r.to_json()["vacuity"]["subformula"] == "q"


def test_af_vacuous_under_iiif_deadlocks_only() -> None:
    # 0 -> 1 (deadlock), goal never holds: AF goal holds in IIIf only because of the deadlock
    k = Kripke.from_edges(2, [0], [0], [1], labels={"goal": np.zeros(2, bool)})
    r = check(k, "AF goal")
    assert r.verdict is Verdict.HOLDS_VACUOUSLY
    assert r.vacuity is not None and "deadlock" in r.vacuity.reason
    assert check(k, "AF goal", semantics="total").verdict is Verdict.VIOLATED


def test_non_vacuous_properties() -> None:
    k = Kripke.from_edges(
        3,
        [0],
        [0, 1, 2],
        [1, 2, 2],
        labels={"p": np.array([True, True, False]), "goal": np.array([False, False, True])},
    )
    for f in ("EF goal", "AG !(p & goal)", "A[p U goal]", "AG (p -> AF goal)"):
        assert check(k, f).verdict is Verdict.HOLDS, f


# ------------------------------------------------------------------ three-valued (incomplete)
@settings(max_examples=150, deadline=None)
@given(k=kripke_structures(max_states=9), f=formulas(8), semantics=st.sampled_from(SEMANTICS), data=st.data())
def test_incomplete_bounds_contain_every_completion(
    k: Kripke, f: ctl_ast.Formula, semantics: str, data: st.DataObject
) -> None:
    """Cut the successors of a random set of states (the frontier): the lower/upper bounds computed on
    the cut structure must enclose the true satisfaction set of the original (one completion)."""
    n = k.num_states
    frontier = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    src = k.edge_src
    keep = ~frontier[src]
    cut = Kripke.from_edges(
        n,
        k.initial,
        src[keep],
        k.succ_idx[keep],
        labels=k.labels,
        complete=not frontier.any(),
        frontier=frontier,
        limit_reason="test cut",
    )
    lo, hi = ModelChecker(cut, semantics).sat_bounds(f)
    truth = ModelChecker(k, semantics).sat(f)
    assert not (lo & ~truth).any(), f"lower bound too big for {f}"
    assert not (truth & ~hi).any(), f"upper bound too small for {f}"
    res = ModelChecker(cut, semantics).check(f, vacuity=False)
    truth_holds = bool(truth[k.initial].all())
    if res.verdict is Verdict.HOLDS:
        assert truth_holds
    elif res.verdict is Verdict.VIOLATED:
        assert not truth_holds


def test_unknown_unless_decided() -> None:
    # 0 -> 1 -> (frontier 2); goal at 1
    k = Kripke.from_edges(
        3,
        [0],
        [0, 1],
        [1, 2],
        labels={"goal": np.array([False, True, False])},
        complete=False,
        frontier=np.array([False, False, True]),
        limit_reason="limit",
    )
    assert check(k, "EF goal").verdict is Verdict.HOLDS  # a witness was found
    assert check(k, "AG !goal").verdict is Verdict.VIOLATED  # a counterexample was found
    assert check(k, "AG goal | !goal").verdict is Verdict.HOLDS
    assert check(k, "EG !goal").verdict is Verdict.VIOLATED  # every path passes through goal
    assert check(k, "AG EX true").verdict is Verdict.UNKNOWN  # is the frontier state a deadlock?
    assert check(k, "EX EX !goal").verdict is Verdict.HOLDS
    assert check(k, "AF goal").verdict is Verdict.HOLDS
    assert check(k, "EX EX EX true").verdict is Verdict.UNKNOWN
    assert check(k, "EX EX EX true").to_json()["limit_reason"] == "limit"


# ------------------------------------------------------------------ scale: deep structures
def test_deep_chain_uses_the_c_search() -> None:
    n = LEVELS_BEFORE_SCIPY * 40
    src = np.arange(n - 1)
    k = Kripke.from_edges(
        n, [0], src, src + 1, labels={"end": np.arange(n) == n - 1, "mid": np.arange(n) == n // 2}
    )
    mc = ModelChecker(k)
    assert mc.sat("EF end").all()
    assert mc.sat("AF end").all()
    assert mc.sat("E[!mid U end]").sum() == n - n // 2 - 1
    assert not mc.sat("EG true").any()
    assert ModelChecker(k, "total").sat("EG true").all()
    r = check(k, "EF end")
    assert r.witness is not None and len(r.witness.states) == n


def test_deep_cycle_eg() -> None:
    n = 5000
    src = np.arange(n)
    k = Kripke.from_edges(n, [0], src, (src + 1) % n, labels={"p": np.arange(n) != 7})
    mc = ModelChecker(k)
    assert not mc.sat("EG p").any()
    assert mc.sat("EG true").all()
    r = check(k, "AF !p")
    assert r.verdict is Verdict.HOLDS
