r"""The syntax-level checks of an exported theory: the Isabelle-subset grammar
(``spec/grammar/isabelle_subset.lark``, outer syntax and inner-syntax ``term`` / ``type``), the balance of
brackets, cartouches, comments and quotes on the raw text, and the free names of inner-syntax terms."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import flcheck_spec
import lark
from lark import Token, Tree

#: Symbols declared by mixfix annotations in the exported theories -> the constant they denote.
NOTATION_OPERATORS = {"turnstile_rel": "\\<turnstile>"}


@dataclass(frozen=True, order=True)
class SyntaxIssue:
    """One problem found in an exported file, with its 1-based position."""

    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"



@lru_cache(maxsize=1)
def _parser() -> lark.Lark:
    return lark.Lark(
        flcheck_spec.grammar_text("isabelle_subset.lark"),
        parser="lalr",
        start=["theory_file", "root_file", "term", "type"],
        propagate_positions=True,
        maybe_placeholders=False,
    )


def parse(text: str, start: str) -> Tree:
    """Parse ``text`` with start symbol ``theory_file``, ``root_file``, ``term`` or ``type``; raises
    ``lark.exceptions.LarkError`` on a syntax error."""
    return _parser().parse(text, start=start)



_OPENERS = {"(": ")", "[": "]", "{": "}", "\\<lbrakk>": "\\<rbrakk>", "\\<open>": "\\<close>"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
_BAL_TOKEN = re.compile(r"\(\*|\*\)|\\<open>|\\<close>|\\<lbrakk>|\\<rbrakk>|''|\"|[()\[\]{}]")


def check_balance(text: str, file: str) -> list[SyntaxIssue]:
    """Parentheses, brackets, braces, ``\\<lbrakk>\\<rbrakk>``, cartouches, ``(* *)`` comments (nested,
    as in Isabelle) and double quotes balance; brackets inside comments and cartouches are not counted,
    and ``(``/``)`` etc. must also balance inside each quoted term."""
    issues: list[SyntaxIssue] = []
    stack: list[tuple[str, int]] = []  # (opener, offset)
    comment_depth = 0
    cartouche_depth = 0
    in_quote = False
    quote_start = 0

    def pos(offset: int) -> tuple[int, int]:
        line = text.count("\n", 0, offset) + 1
        col = offset - (text.rfind("\n", 0, offset) + 1) + 1
        return line, col

    for m in _BAL_TOKEN.finditer(text):
        tok, off = m.group(), m.start()
        if comment_depth:
            if tok == "(*":
                comment_depth += 1
            elif tok == "*)":
                comment_depth -= 1
            continue
        if cartouche_depth:
            if tok == "\\<open>":
                cartouche_depth += 1
            elif tok == "\\<close>":
                cartouche_depth -= 1
            continue
        if tok == "(*" and not in_quote:
            comment_depth = 1
            continue
        if tok == "*)" and not in_quote:
            issues.append(SyntaxIssue(file, *pos(off), "comment closed by '*)' but never opened"))
            continue
        if tok == '"':
            if in_quote:
                while stack and stack[-1][1] > quote_start:
                    opener, o = stack.pop()
                    issues.append(SyntaxIssue(file, *pos(o), f"'{opener}' not closed inside the quoted term"))
            in_quote = not in_quote
            quote_start = off
            continue
        if tok == "''":
            continue
        if tok == "\\<open>" and not in_quote:
            cartouche_depth = 1
            continue
        if tok == "\\<close>":
            issues.append(SyntaxIssue(file, *pos(off), "cartouche closed by '\\<close>' but never opened"))
            continue
        if tok in _OPENERS:
            stack.append((tok, off))
        elif tok in _CLOSERS:
            if not stack or stack[-1][0] != _CLOSERS[tok]:
                issues.append(SyntaxIssue(file, *pos(off), f"unbalanced '{tok}'"))
            else:
                stack.pop()
    if comment_depth:
        issues.append(SyntaxIssue(file, *pos(len(text)), "comment '(*' not closed"))
    if cartouche_depth:
        issues.append(SyntaxIssue(file, *pos(len(text)), "cartouche '\\<open>' not closed"))
    if in_quote:
        issues.append(SyntaxIssue(file, *pos(quote_start), 'quote \'"\' not closed'))
    for opener, off in stack:
        issues.append(SyntaxIssue(file, *pos(off), f"'{opener}' not closed"))
    return issues


_BINDER_RULES = {"lam", "quant"}


def _bvar_name(t: Tree) -> tuple[str, Tree | None]:
    name = t.children[0]
    typ = t.children[1] if len(t.children) > 1 else None
    return str(name), typ


def term_references(
    tree: Tree | Token, bound: frozenset[str] = frozenset()
) -> Iterator[tuple[str, Tree | Token]]:
    """Yield ``(name, node)`` for every free name occurrence in an inner-syntax term tree (names bound
    by ``\\<lambda>``, quantifiers, big operators, set comprehension and ``let`` are not free), plus
    ``("type:" + name, node)`` for type constructors in type annotations and ``("op:" + symbol, node)``
    for mixfix operators."""
    if isinstance(tree, Token):
        return
    data = tree.data
    kids = tree.children
    if data == "const":
        name = str(kids[0])
        if name not in bound:
            yield name, tree
        return
    if data in _BINDER_RULES:
        new = set(bound)
        body = kids[-1]
        for k in kids[:-1]:
            if isinstance(k, Tree) and k.data in ("bvar", "bvar_typed"):
                n, typ = _bvar_name(k)
                new.add(n)
                if typ is not None:
                    yield from type_references(typ)
        yield from term_references(body, frozenset(new))
        return
    if data in ("bounded_quant", "big_op_in", "big_op_less"):
        bv, dom, body = kids[-3], kids[-2], kids[-1]
        n, typ = _bvar_name(bv)
        if typ is not None:
            yield from type_references(typ)
        yield from term_references(dom, bound)
        yield from term_references(body, bound | {n})
        return
    if data == "set_compr":
        yield from term_references(kids[1], bound | {str(kids[0])})
        return
    if data == "let_in":
        cur = set(bound)
        for k in kids[:-1]:
            assert isinstance(k, Tree)
            yield from term_references(k.children[1], frozenset(cur))
            cur.add(str(k.children[0]))
        yield from term_references(kids[-1], frozenset(cur))
        return
    if data == "typed":
        yield from term_references(kids[0], bound)
        yield from type_references(kids[1])
        return
    if data in NOTATION_OPERATORS:
        yield "op:" + NOTATION_OPERATORS[data], tree
    for k in kids:
        yield from term_references(k, bound)


def type_references(tree: Tree | Token) -> Iterator[tuple[str, Tree | Token]]:
    """Yield ``("type:" + name, node)`` for every type constructor in a type tree."""
    if isinstance(tree, Token):
        return
    if tree.data == "tcon":
        yield "type:" + str(tree.children[0]), tree
        return
    if tree.data in ("tapp", "tapp_multi"):
        yield "type:" + str(tree.children[-1]), tree
        for k in tree.children[:-1]:
            yield from type_references(k)
        return
    for k in tree.children:
        yield from type_references(k)


