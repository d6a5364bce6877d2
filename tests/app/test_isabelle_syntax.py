"""The Isabelle-subset grammar and the syntax checker of exported theories.

Every check must be able to fail: each test feeds the checker a broken variant of a correct text and
asserts the specific complaint, besides asserting that the correct text passes.
"""

from __future__ import annotations

import re

import lark
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.app.isabelle.base import base_theory_text
from checker.app.isabelle.syntax import check_export_texts, check_root, check_theory
from checker.app.isabelle.syntax_declarations import MAIN_CONSTANTS
from checker.app.isabelle.syntax_parse import check_balance, parse, term_references

BASE = base_theory_text()
BASE_FILE = "FL_Infrastructure.thy"


def issues_of(text: str, file: str = BASE_FILE) -> list[str]:
    return [i.message for i in check_theory(text, file)[1]]


def test_base_theory_passes() -> None:
    iface, issues = check_theory(BASE, BASE_FILE)
    assert issues == []
    assert iface is not None
    # the nine igraph components, the three rules, the path notions and NI_FL_DP are declared
    for name in ("gra", "aloc", "server", "clients", "ready", "gradient", "curmodpar", "partition", "dataset",
                 "state_transition_FL", "path_set", "first_passage", "pmap", "NI_FL_DP", "EF", "AG"):
        assert name in iface.constants
    for fact in ("put_part", "get_grad", "eval_server", "state_transition_FL.get_grad", "check_EF_reach"):
        assert fact in iface.facts
    assert "NI_Decomposition" not in iface.facts  # stated with oops: not a fact


def test_base_theory_states_the_seed_rules_exactly() -> None:
    """The three rules carry the seed's premises (with the recorded readings)."""
    rules = BASE.split("inductive state_transition_FL ::")[1].split("definition fl_reach")[0]
    assert rules.count("G = igra I \\<Longrightarrow> P = prot I") == 3
    assert "[] \\<in> evs P" in rules and "insertp [Put [Part]] (evs P)" in rules
    assert "insertp (Get c Gradc # l) (evs P)" in rules and "insert c (ready G)" in rules
    assert "ready G = clients G" in rules and "n = card (dataset G)" in rules
    assert "Lgraph (gra G) (aloc G) (server G) (clients G) {} (gradient G) Newmodel" in rules
    assert "enables" not in rules  # the published rules have no policy premise


@pytest.mark.parametrize(
    ("old", "new", "complaint"),
    [
        ("P' = insertp (Get c Gradc # l)", "P' = insertq (Get c Gradc # l)", "'insertq'"),
        ("\\<Union>c\\<in>C. Part c\"", "\\<Union>c\\<in>C. Prt c\"",
         "constant 'Prt' used before it is defined"),
        ("(gradient: \"actor \\<Rightarrow> param\")", "(gradient: \"actor \\<Rightarrow> parm\")",
         "type 'parm' used before it is defined"),
        ("by (rule lfp_unfold [OF mono_EF_fun])", "by (rule lfp_unfold [OF mono_EF_fnu])",
         "fact 'mono_EF_fnu' cited before"),
        ("by (subst EF_unfold) blast", "by (subst EF_unfold) blastt", "unknown proof method blastt"),
        ("theory FL_Infrastructure", "theory FL_Infra", "differs from the file name"),
    ],
)
def test_checker_reports_mutations(old: str, new: str, complaint: str) -> None:
    assert old in BASE
    found = issues_of(BASE.replace(old, new, 1))
    assert any(complaint in m for m in found), found


def test_use_before_definition_is_reported() -> None:
    """Moving the definition of vsub after its first use (in get_grad) is caught."""
    block = re.search(r"definition vsub ::.*?\n\n", BASE, re.S)
    assert block
    moved = BASE.replace(block.group(0), "").replace("end\n", block.group(0) + "end\n")
    found = issues_of(moved)
    assert any("'vsub' used before it is defined" in m for m in found), found


def test_misspelt_variable_in_inductive_rule_is_reported() -> None:
    """A name occurring once in an intro rule is neither a constant nor a variable."""
    old = "c \\<in> clients G \\<Longrightarrow>\n      Gradc"
    mutated = BASE.replace(old, old.replace("clients G", "clients Gx"), 1)
    assert mutated != BASE
    assert any("'Gx'" in m and "used twice" in m for m in issues_of(mutated))


def test_duplicates_and_shadowing_are_reported() -> None:
    dup = BASE.replace("end\n", "definition pmap :: \"nat\" where \"pmap \\<equiv> 0\"\n\nend\n")
    assert any("'pmap' declared twice" in m for m in issues_of(dup))
    shadow = BASE.replace("end\n", "definition card :: \"nat\" where \"card \\<equiv> 0\"\n\nend\n")
    assert any("shadows the Main constant" in m for m in issues_of(shadow))
    assert "card" in MAIN_CONSTANTS


def test_syntax_error_has_a_position() -> None:
    broken = BASE.replace("inductive state_transition_FL ::", "inductive state_transition_FL :::", 1)
    _, issues = check_theory(broken, BASE_FILE)
    assert issues and issues[0].line > 1 and "syntax error" in issues[0].message
    line = broken.splitlines()[issues[0].line - 1]
    assert "state_transition_FL" in line


def test_inner_syntax_error_points_into_the_term() -> None:
    old = "\"vscale a v \\<equiv> map (\\<lambda>x. a * x) v\""
    broken = BASE.replace(old, old.replace("a * x", "a * * x"))
    _, issues = check_theory(broken, BASE_FILE)
    assert len(issues) == 1 and "inner syntax error" in issues[0].message
    line = broken.splitlines()[issues[0].line - 1]
    assert line[issues[0].column - 1] == "*"


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("f (a", "'(' not closed"),
        ("f a)", "unbalanced ')'"),
        ("text \\<open>abc", "cartouche '\\<open>' not closed"),
        ("abc \\<close>", "never opened"),
        ("(* comment", "comment '(*' not closed"),
        ("\"x (y\"", "not closed inside the quoted term"),
        ("\"open", "quote"),
        ("{[}]", "unbalanced"),
    ],
)
def test_balance(text: str, complaint: str) -> None:
    found = [i.message for i in check_balance(text, "t.thy")]
    assert any(complaint in m for m in found), found


def test_balance_ignores_brackets_in_comments_and_cartouches() -> None:
    assert check_balance("(* ( [ *) text \\<open> ) ] \\<close> f (x)", "t.thy") == []
    assert check_balance("(* nested (* ( *) *) \"a (b) c\"", "t.thy") == []


def test_root_check() -> None:
    root = "session FLcheck = HOL +\n  theories\n    FL_Infrastructure\n    Scenario_a\n"
    assert check_root(root, ["FL_Infrastructure", "Scenario_a"]) == []
    assert any("not listed" in i.message for i in check_root(root, ["FL_Infrastructure", "Scenario_a", "X"]))
    assert any("no .thy file" in i.message for i in check_root(root, ["FL_Infrastructure"]))
    twice = root + "    Scenario_a\n"
    assert any("listed 2 times" in i.message for i in check_root(twice, ["FL_Infrastructure", "Scenario_a"]))
    assert any("syntax error" in i.message for i in check_root("session = HOL", []))


def test_imports_must_be_part_of_the_export() -> None:
    thy = "theory Scenario_x\n  imports FL_Missing\nbegin\nend\n"
    found = check_export_texts({"Scenario_x.thy": thy, "ROOT": "session S = HOL +\n  theories Scenario_x\n"})
    assert any("not part of the export" in i.message for i in found)


def test_scenario_names_resolve_through_imports_and_locales() -> None:
    thy = (
        "theory Scenario_x\n  imports FL_Infrastructure\nbegin\n\n"
        "locale scen =\n  fixes x_loc :: \"location\"\n  defines x_loc_def: \"x_loc \\<equiv> Location 0\"\n"
        "  fixes x_set :: \"location set\"\n  defines x_set_def: \"x_set \\<equiv> {x_loc}\"\n\n"
        "context scen\nbegin\n\nlemma x_in: \"x_loc \\<in> x_set\"\n  unfolding x_set_def by simp\n\nend\n\n"
        "lemma outside: \"x_loc \\<in> {}\"\n  oops\n\nend\n"
    )
    root = "session S = HOL +\n  theories FL_Infrastructure Scenario_x\n"
    found = check_export_texts({BASE_FILE: BASE, "Scenario_x.thy": thy, "ROOT": root})
    # x_loc is visible inside the locale context only; outside it is a free name used once
    assert [i.line for i in found] == [thy.splitlines().index("lemma outside: \"x_loc \\<in> {}\"") + 1]


# ------------------------------------------------------------------------------------------------
# Inner syntax: a hypothesis cross-check of parsing and of the free-name computation
# ------------------------------------------------------------------------------------------------

VARS = ["a", "b", "x", "y"]
CONSTS = ["f", "g", "card", "insert"]


@st.composite
def terms(draw: st.DrawFn, depth: int = 3, bound: frozenset[str] = frozenset()) -> tuple[str, frozenset[str]]:
    """A random term in the exporter's style and the set of its free names (computed independently of
    the grammar, while generating)."""
    if depth == 0:
        choice = draw(st.sampled_from(["name", "num", "str", "empty"]))
        if choice == "name":
            n = draw(st.sampled_from(VARS + CONSTS))
            return n, frozenset() if n in bound else frozenset({n})
        if choice == "num":
            return str(draw(st.integers(0, 99))), frozenset()
        if choice == "str":
            return "''" + draw(st.sampled_from(["c1", "sat2", "loc"])) + "''", frozenset()
        return "{}", frozenset()
    kind = draw(st.sampled_from(["app", "op", "lam", "compr", "set", "list", "tuple", "if", "all", "sum",
                                 "leaf"]))
    sub = terms(depth - 1, bound)
    if kind == "leaf":
        return draw(terms(0, bound))
    if kind == "app":
        (f, ff), (x, fx) = draw(sub), draw(sub)
        return f"({f}) ({x})", ff | fx
    if kind == "op":
        op = draw(st.sampled_from(["=", "\\<in>", "\\<union>", "\\<inter>", "+", "-", "*", "/", "#", "@",
                                   "\\<and>", "\\<or>", "\\<longrightarrow>", "\\<le>", "<", "\\<noteq>"]))
        (a, fa), (b, fb) = draw(sub), draw(sub)
        return f"({a}) {op} ({b})", fa | fb
    v = draw(st.sampled_from(VARS))
    inner = terms(depth - 1, bound | {v})
    if kind == "lam":
        body, fb = draw(inner)
        return f"(\\<lambda>{v}. {body})", fb
    if kind == "compr":
        body, fb = draw(inner)
        return f"{{{v}. {body}}}", fb
    if kind == "all":
        (dom, fd), (body, fb) = draw(sub), draw(inner)
        return f"(\\<forall>{v}\\<in>{dom}. {body})", fd | fb
    if kind == "sum":
        (dom, fd), (body, fb) = draw(sub), draw(inner)
        return f"(\\<Sum>{v}\\<in>{dom}. {body})", fd | fb
    items = draw(st.lists(sub, min_size=1, max_size=3))
    free = frozenset().union(*(fi for _, fi in items))
    texts = ", ".join(t for t, _ in items)
    if kind == "set":
        return "{" + texts + "}", free
    if kind == "list":
        return "[" + texts + "]", free
    if kind == "tuple":
        if len(items) == 1:
            return f"({texts})", free
        return f"({texts})", free
    (c, fc), (a, fa), (b, fb) = draw(sub), draw(sub), draw(sub)
    return f"(if {c} then {a} else {b})", fc | fa | fb


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(terms())
def test_free_names_of_random_terms(t: tuple[str, frozenset[str]]) -> None:
    text, free = t
    tree = parse(text, "term")
    got = {n for n, _ in term_references(tree) if not n.startswith(("type:", "op:"))}
    assert got == set(free)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, len(BASE) - 1))
def test_deleting_a_bracket_never_passes(pos: int) -> None:
    """Deleting one bracket, brace, or cartouche delimiter from the base theory (outside comments and
    text, where brackets are free prose) is always reported."""
    prose = [m.span() for m in re.finditer(r"\(\*.*?\*\)|\\<open>.*?\\<close>", BASE, re.S)]
    m = re.compile(r"[()\[\]{}]|\\<open>|\\<close>").search(BASE, pos)
    if m is None or any(a < m.start() < b - len(m.group()) for a, b in prose):
        return
    broken = BASE[: m.start()] + BASE[m.end():]
    try:
        _, issues = check_theory(broken, BASE_FILE)
    except lark.exceptions.LarkError as exc:  # the checker must report, not raise
        pytest.fail(f"checker raised {exc!r}")
    assert issues
