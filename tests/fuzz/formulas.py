"""Random CTL formulas: an AST of plain tuples rendered to the syntax of ``spec/grammar/ctl.lark``
(fully parenthesised), and converted to :mod:`checker.mc.ctl_ast` for the reference checker.

A formula is ``("label", name)``, ``("true",)``, ``("false",)``, ``(op, arg)`` for the unary operators
``!``, ``EX``, ``AX``, ``EF``, ``AF``, ``EG``, ``AG``, ``(op, (arg, ...))`` for n-ary ``&``/``|``,
``(op, left, right)`` for ``->``, ``<->`` and the path operators ``EU``, ``AU``, ``ER``, ``AR``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from checker.mc import ctl_ast

Formula = tuple[Any, ...]

UNARY = ("!", "EX", "AX", "EF", "AF", "EG", "AG")
NARY = ("&", "|")
BINARY = ("->", "<->")
PATH = ("EU", "AU", "ER", "AR")
_UNARY_AST = {"!": ctl_ast.Not, "EX": ctl_ast.EX, "AX": ctl_ast.AX, "EF": ctl_ast.EF, "AF": ctl_ast.AF,
              "EG": ctl_ast.EG, "AG": ctl_ast.AG}
_BINARY_AST = {"->": ctl_ast.Implies, "<->": ctl_ast.Iff, "EU": ctl_ast.EU, "AU": ctl_ast.AU,
               "ER": ctl_ast.ER, "AR": ctl_ast.AR}


def render(formula: Formula) -> str:
    """The formula as text (iteratively for unary chains, so that deep formulas render too)."""
    prefix: list[str] = []
    while formula[0] in UNARY:
        prefix.append("!" if formula[0] == "!" else formula[0] + " ")
        formula = formula[1]
    head = formula[0]
    if head == "label":
        core = formula[1]
    elif head in ("true", "false"):
        core = head
    elif head in NARY:
        core = "(" + f" {head} ".join(render(arg) for arg in formula[1]) + ")"
    elif head in BINARY:
        core = f"({render(formula[1])} {head} {render(formula[2])})"
    else:  # path operators: E[a U b], A[a R b]
        core = f"{head[0]}[{render(formula[1])} {head[1]} {render(formula[2])}]"
    return "".join(prefix) + core


def to_ast(formula: Formula) -> ctl_ast.Formula:
    """The formula as a :mod:`checker.mc.ctl_ast` tree (for ``tests/checker/ctl_reference.py``)."""
    chain: list[str] = []
    while formula[0] in UNARY:
        chain.append(formula[0])
        formula = formula[1]
    head = formula[0]
    node: ctl_ast.Formula
    if head == "label":
        node = ctl_ast.Label(formula[1])
    elif head == "true":
        node = ctl_ast.TrueF()
    elif head == "false":
        node = ctl_ast.FalseF()
    elif head == "&":
        node = ctl_ast.And(tuple(to_ast(arg) for arg in formula[1]))
    elif head == "|":
        node = ctl_ast.Or(tuple(to_ast(arg) for arg in formula[1]))
    else:
        node = _BINARY_AST[head](to_ast(formula[1]), to_ast(formula[2]))
    for op in reversed(chain):
        node = _UNARY_AST[op](node)
    return node


def depth(formula: Formula) -> int:
    """Nesting depth (an atom has depth 0)."""
    head = formula[0]
    if head in ("label", "true", "false"):
        return 0
    if head in UNARY:
        return 1 + depth(formula[1])
    if head in NARY:
        return 1 + max(depth(arg) for arg in formula[1])
    return 1 + max(depth(formula[1]), depth(formula[2]))


def formulas(labels: list[str], max_leaves: int = 12) -> st.SearchStrategy[Formula]:
    """Random formulas over ``labels`` (n-ary conjunctions and disjunctions of up to 5 arguments)."""
    atoms = st.one_of(st.sampled_from(labels).map(lambda name: ("label", name)),
                      st.sampled_from([("true",), ("false",)]))

    def extend(sub: st.SearchStrategy[Formula]) -> st.SearchStrategy[Formula]:
        return st.one_of(
            st.tuples(st.sampled_from(UNARY), sub),
            st.tuples(st.sampled_from(NARY), st.lists(sub, min_size=2, max_size=5).map(tuple)),
            st.tuples(st.sampled_from(BINARY + PATH), sub, sub),
        )

    return st.recursive(atoms, extend, max_leaves=max_leaves)


@st.composite
def deep_formulas(draw: st.DrawFn, labels: list[str], min_depth: int, max_depth: int) -> Formula:
    """A chain of ``min_depth``..``max_depth`` prefix operators (and occasional binary nodes whose
    left side is a small formula) above a small formula."""
    formula = draw(formulas(labels, max_leaves=3))
    for _ in range(draw(st.integers(min_depth, max_depth))):
        if draw(st.integers(0, 9)) == 0:
            formula = (draw(st.sampled_from(BINARY + PATH)), draw(formulas(labels, max_leaves=2)), formula)
        else:
            formula = (draw(st.sampled_from(UNARY)), formula)
    return formula


def nested_parentheses(text: str, count: int) -> str:
    return "(" * count + text + ")" * count
