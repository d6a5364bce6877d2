"""Parametric scenarios: constants, tables, indexed names and families, expanded before the AST is built.

A scenario may declare integer constants (``const N = 8;``, overridden from outside by ``defines``,
e.g. ``flcheck explore FILE -D N=4``) and tables (``const t = [1, 2, 0];``, ``t[1] = 1``), write
indexed names (``sat[i]`` is the plain name ``sat3`` when ``i = 3``, so a family and the hand-written
file it replaces name the same actors, locations and points) and families (an item or statement
followed by ``for i in 1..N`` is written once for each integer of the range; an empty range writes
nothing). Expressions are exact rational arithmetic (``+ - * / %`` and parentheses) over numbers,
constants, table entries and family indices.

:func:`expand` rewrites the parse tree into the tree of the equivalent hand-written scenario: every
expression becomes a ``value`` node holding its :class:`~fractions.Fraction`, every indexed name a
plain ``NAME`` token, every family its members and every ``const`` statement disappears. Tokens
written inside a family are :class:`FamilyToken` s: the AST builder gives their nodes a
:class:`FamilyPosition`, and a problem found there reads ``file:12:1: in family i = 5: …``
(:func:`diagnostic`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from flcheck_spec.vocab import Position
from lark import Token, Tree

from flmodel.errors import Diagnostic, ModelError

#: At most this many family members in one scenario (a mistyped constant must not exhaust memory).
MAX_MEMBERS = 10_000

#: The expression rules of ``spec/grammar/scenario.lark``.
EXPRESSIONS = frozenset({"plus", "minus", "times", "divided", "modulo", "negated", "literal", "ref",
                         "lookup"})

#: Statements that take a family as a whole (``data … for i in 1..N``, ``policy … for i in 1..N``).
FAMILY_STATEMENTS = frozenset({"data", "policy", "contact", "loss", "route", "attack_step", "defence"})


@dataclass(frozen=True)
class FamilyPosition(Position):
    """The position of something written in a family, with the family member it belongs to
    (``family``: ``"i = 5"``; nested families ``"i = 2, j = 1"``)."""

    family: str = ""


class FamilyToken(Token):
    """A token of a family member: the written token's position and the member (``family``)."""

    family: str


def diagnostic(pos: Position, message: str) -> Diagnostic:
    """A diagnostic at ``pos``; a position inside a family prefixes the member (``in family i = 5: …``)."""
    if isinstance(pos, FamilyPosition) and pos.family:
        return Diagnostic(pos, f"in family {pos.family}: {message}")
    return Diagnostic(pos, message)


def integer_text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(value)


class _Invalid(Exception):
    """An expression that cannot be evaluated; the problem is recorded already."""


Constant = int | tuple[Fraction, ...]


class _Expander:
    """One expansion: the constants declared so far, the family indices in scope, the problems."""

    def __init__(self, source: str, defines: Mapping[str, int]):
        self.source = source
        self.defines = dict(defines)
        self.constants: dict[str, Constant] = {}
        self.declared_at: dict[str, Position] = {}
        self.diags: list[Diagnostic] = []
        self.members = 0

    # --- positions and problems -------------------------------------------------------------------
    def _pos(self, tok: Token, scope: Mapping[str, int]) -> Position:
        if scope:
            return FamilyPosition(self.source, tok.line, tok.column, _family_text(scope))
        return Position(self.source, tok.line, tok.column)

    def _fail(self, tok: Token, scope: Mapping[str, int], message: str) -> _Invalid:
        self.diags.append(diagnostic(self._pos(tok, scope), message))
        return _Invalid()

    def _token(self, tok: Token, scope: Mapping[str, int], value: str | None = None,
               type_: str | None = None) -> Token:
        """``tok`` (or a token with its position, ``type_`` and ``value``), marked with the family member."""
        if not scope and value is None:
            return tok
        if not scope:
            return Token.new_borrow_pos(type_ or tok.type, value, tok)
        out = FamilyToken.new_borrow_pos(type_ or tok.type, tok.value if value is None else value, tok)
        out.family = _family_text(scope)
        return out

    # --- expressions ------------------------------------------------------------------------------
    def evaluate(self, node: Tree[Token], scope: Mapping[str, int]) -> Fraction:
        kind = node.data
        args = node.children
        if kind == "literal":
            return Fraction(str(args[0]))
        if kind == "ref":
            name = args[0]
            assert isinstance(name, Token)
            if name in scope:
                return Fraction(scope[str(name)])
            value = self.constants.get(str(name))
            if isinstance(value, int):
                return Fraction(value)
            if value is not None:
                raise self._fail(name, scope, f"{name!s} is a table; write {name!s}[INDEX]")
            raise self._fail(name, scope, f"unknown name {name!s} in an expression; {self._known(scope)}")
        if kind == "lookup":
            name, index_node = args
            assert isinstance(name, Token) and isinstance(index_node, Tree)
            table = self.constants.get(str(name))
            if not isinstance(table, tuple):
                what = "an integer constant" if table is not None else "not declared"
                raise self._fail(name, scope, f"{name!s}[…] needs a table; {name!s} is {what}; "
                                 f"{self._known(scope)}")
            index = self.evaluate(index_node, scope)
            if index.denominator != 1 or not 1 <= index <= len(table):
                raise self._fail(name, scope, f"table {name!s} has {len(table)} entries; index "
                                 f"{integer_text(index)} is not one of 1..{len(table)}")
            return table[int(index) - 1]
        if kind == "negated":
            inner = args[0]
            assert isinstance(inner, Tree)
            return -self.evaluate(inner, scope)
        left_node, right_node = args
        assert isinstance(left_node, Tree) and isinstance(right_node, Tree)
        left, right = self.evaluate(left_node, scope), self.evaluate(right_node, scope)
        if kind == "plus":
            return left + right
        if kind == "minus":
            return left - right
        if kind == "times":
            return left * right
        if right == 0:
            what = "division" if kind == "divided" else "remainder"
            raise self._fail(_first_token(right_node), scope, f"{what} by zero")
        return left / right if kind == "divided" else left % right

    def _integer(self, node: Tree[Token], scope: Mapping[str, int], what: str) -> int:
        value = self.evaluate(node, scope)
        if value.denominator != 1:
            raise self._fail(_first_token(node), scope, f"{what} must be an integer, got {value}")
        return int(value)

    def _known(self, scope: Mapping[str, int]) -> str:
        names = sorted(self.constants) + [f"{n} (family index)" for n in scope]
        return "known: " + (", ".join(names) if names else "none declared")

    # --- statements -------------------------------------------------------------------------------
    def const(self, node: Tree[Token]) -> None:
        name, body = node.children
        assert isinstance(name, Token) and isinstance(body, Tree)
        pos = Position(self.source, name.line, name.column)
        if str(name) in self.declared_at:
            self.diags.append(Diagnostic(pos, f"second declaration of constant {name!s}; the first is at "
                                              f"{self.declared_at[str(name)]}"))
            return
        self.declared_at[str(name)] = pos
        try:
            if body.data == "table":
                if str(name) in self.defines:
                    self.diags.append(Diagnostic(pos, f"{name!s} is a table; a definition from outside "
                                                      "sets an integer constant"))
                    return
                entries = [self.evaluate(e, {}) for e in body.children if isinstance(e, Tree)]
                self.constants[str(name)] = tuple(entries)
            elif str(name) in self.defines:
                self.constants[str(name)] = self.defines[str(name)]
            else:
                self.constants[str(name)] = self._integer(body, {}, f"constant {name!s}")
        except _Invalid:
            return

    def rewrite(self, node: Tree[Token] | Token, scope: Mapping[str, int]) -> list[Tree[Token] | Token]:
        """The nodes that replace ``node`` (several for a family, none for an empty one)."""
        if isinstance(node, Token):
            return [self._token(node, scope)]
        try:
            if node.data in EXPRESSIONS:
                return [Tree("value", [self.evaluate(node, scope)], node.meta)]  # type: ignore[list-item]  # a value node holds its Fraction
            if node.data == "indexed":
                return [self._indexed(node, scope)]
            if node.data == "family_item":
                item, family = node.children
                return self._members(item, family, scope)
            if node.data in FAMILY_STATEMENTS and node.children and _is_family(node.children[-1]):
                body = Tree(node.data, node.children[:-1], node.meta)
                return self._members(body, node.children[-1], scope)
        except _Invalid:
            return []
        children: list[Tree[Token] | Token] = []
        for child in node.children:
            if isinstance(child, Tree) and child.data == "const":
                self.const(child)
                continue
            children.extend(self.rewrite(child, scope))
        return [Tree(node.data, children, node.meta)]

    def _indexed(self, node: Tree[Token], scope: Mapping[str, int]) -> Token:
        base, index_node = node.children
        assert isinstance(base, Token) and isinstance(index_node, Tree)
        index = self._integer(index_node, scope, f"the index of {base!s}[…]")
        if index < 0:
            raise self._fail(base, scope, f"the index of {base!s}[…] must not be negative, got {index}")
        return self._token(base, scope, f"{base!s}{index}", "NAME")

    def _members(self, item: Tree[Token] | Token, family: Tree[Token] | Token,
                 scope: Mapping[str, int]) -> list[Tree[Token] | Token]:
        assert isinstance(family, Tree)
        var, lo_node, hi_node = family.children
        assert isinstance(var, Token) and isinstance(lo_node, Tree) and isinstance(hi_node, Tree)
        if str(var) in scope or str(var) in self.constants:
            raise self._fail(var, scope, f"family index {var!s} is already a "
                             f"{'family index' if str(var) in scope else 'constant'}; choose another name")
        lo = self._integer(lo_node, scope, "the start of a family range")
        hi = self._integer(hi_node, scope, "the end of a family range")
        self.members += max(0, hi - lo + 1)
        if self.members > MAX_MEMBERS:
            raise self._fail(var, scope, f"families with more than {MAX_MEMBERS} members in all "
                             f"(for {var!s} in {lo}..{hi})")
        out: list[Tree[Token] | Token] = []
        for value in range(lo, hi + 1):
            out.extend(self.rewrite(item, {**scope, str(var): value}))
        return out


def _is_family(node: Tree[Token] | Token) -> bool:
    return isinstance(node, Tree) and node.data == "family"


def _family_text(scope: Mapping[str, int]) -> str:
    return ", ".join(f"{name} = {value}" for name, value in scope.items())


def _first_token(node: Tree[Token]) -> Token:
    for tok in node.scan_values(lambda v: isinstance(v, Token)):
        return tok
    raise ValueError("an expression without a token")  # pragma: no cover - the grammar forbids it


def expand(tree: Tree[Token], source: str, defines: Mapping[str, int] | None = None,
           ) -> tuple[Tree[Token], dict[str, int]]:
    """The parse tree of the hand-written scenario ``tree`` stands for, and its integer constants (as
    defined: ``defines`` override the defaults). Raises :class:`ModelError` with every problem: an
    expression that cannot be evaluated, an index that is not a non-negative integer, a constant
    declared twice, a definition naming no constant of the scenario (the message lists them)."""
    defines = dict(defines or {})
    for name, value in defines.items():
        if not isinstance(value, int) or isinstance(value, bool):
            raise ModelError([Diagnostic(Position(source), f"the definition of {name} must be an integer, "
                                                           f"got {value!r}")])
    expander = _Expander(source, defines)
    (expanded,) = expander.rewrite(tree, {})
    unknown = sorted(set(defines) - set(expander.declared_at))
    if unknown:
        names = sorted(n for n, v in expander.constants.items() if isinstance(v, int))
        expander.diags.append(Diagnostic(Position(source), f"defined from outside but not a constant of the "
                                                           f"scenario: {', '.join(unknown)}; its integer "
                                                           f"constants: {', '.join(names) or 'none'}"))
    if expander.diags:
        raise ModelError(expander.diags)
    assert isinstance(expanded, Tree)
    integers = {n: v for n, v in expander.constants.items() if isinstance(v, int)}
    return expanded, integers
