"""Parser of the property language (grammar ``spec/grammar/ctl.lark``) into the AST of
:mod:`checker.mc.ctl_ast`.

A parse error raises :class:`checker.errors.InputError` whose position names the source, line and
column of the offending token and whose ``expected`` lists what would have been accepted there. A caller
that embeds formulas in a larger file (e.g. a scenario file) passes ``source``, ``line`` and ``column``
(the 1-based position of the formula's first character in that file); errors and atom positions are
then reported in the coordinates of the embedding file.

Example::

    >>> from checker.mc.ctl_parse import parse_formula
    >>> str(parse_formula('AG ("sat1" in ready -> round >= 1/2)'))
    'AG ("sat1" in ready -> round >= 1/2)'
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import lark
from flcheck_spec import MAX_NESTING, describe_terminals, lalr_parser, too_deep, unquote
from lark import Lark, Token, Transformer, v_args

from checker.errors import InputError, Position
from checker.mc import ctl_ast

#: Readable names of the grammar's named terminals (anonymous ones are shown as their literal text).
_TERMINAL_TEXT = {
    "NAME": "a name",
    "STRING": "a quoted string",
    "SIGNED_NUMBER_TOKEN": "a number",
    "INT_TOKEN": "an integer",
    "COMPARE_OP": "a comparison (== != < <= > >=)",
    "_IFF": "'<->'",
    "_IMPLIES": "'->'",
    "_OR": "'|'",
    "_AND": "'&'",
    "_NOT": "'!'",
    "$END": "end of formula",
    "PROB": "a probability operator (P=? [..], P>=p [..], Pmin/Pmax)",
    "DP": "D{eps, delta}[..]",
}


#: The deepest nesting of operators a formula may have (:data:`flcheck_spec.MAX_NESTING`; an exit-2 error
#: beyond, with the position: real properties nest a few dozen deep at most, while the AST's structural
#: equality, hashing and printing recurse per level).
MAX_FORMULA_DEPTH = MAX_NESTING


def _is_chain(node: lark.Tree[Token]) -> bool:
    """``a <-> b <-> c`` is one parse node that :meth:`_ToAst.iff` folds into nested ``Iff`` nodes."""
    return node.data == "iff"


def _parser() -> Lark:
    return lalr_parser("ctl.lark", maybe_placeholders=True)


def _expected_text(names: set[str] | frozenset[str] | None) -> str | None:
    texts = describe_terminals(_parser(), names, _TERMINAL_TEXT)
    if not texts:
        return None
    return "one of " + ", ".join(texts) if len(texts) > 1 else texts[0]


def _acceptable(exc: lark.exceptions.UnexpectedToken) -> set[str]:
    """The terminals that can really come next where ``exc`` was raised. LALR tables merge the
    look-aheads of all contexts, so ``exc.expected`` lists tokens that only follow a formula nested in
    brackets (``U``, ``R``, ``]``...); feeding each candidate to a copy of the parser keeps those it
    accepts after its reductions."""
    parser = exc.interactive_parser
    if parser is None:  # pragma: no cover - lark always attaches one for LALR errors
        return set(exc.expected)
    try:
        return set(parser.accepts()) or set(exc.expected)
    except lark.exceptions.LarkError:  # pragma: no cover - a candidate whose reductions fail
        return set(exc.expected)


class _Offsets:
    def __init__(self, source: str, line: int, column: int):
        self.source, self.line, self.column = source, line, column

    def position(self, line: int | None, column: int | None) -> Position:
        if line is None:
            return Position(self.source, None, None)
        col = column
        if col is not None and line == 1:
            col += self.column - 1
        return Position(self.source, line + self.line - 1, col)


def _number(tokens: list[Token]) -> Fraction:
    num = Fraction(str(tokens[0]))
    if len(tokens) > 1 and tokens[1] is not None:
        den = Fraction(int(str(tokens[1])))
        if den == 0:
            raise ZeroDivisionError
        num = num / den
    return num


class _ToAst(Transformer[Any, Any]):
    def __init__(self, offsets: _Offsets):
        super().__init__()
        self.off = offsets

    def _pos(self, meta: Any) -> Position | None:
        if getattr(meta, "empty", True):
            return None
        return self.off.position(meta.line, meta.column)

    # connectives -------------------------------------------------------------------------
    def iff(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        out = items[0]
        for nxt in items[1:]:
            out = ctl_ast.Iff(out, nxt)
        return out

    def implies(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.Implies(items[0], items[1])

    def or_(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.Or(tuple(items))

    def and_(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.And(tuple(items))

    def not_(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.Not(items[0])

    def ex(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.EX(items[0])

    def ax(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.AX(items[0])

    def ef(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.EF(items[0])

    def af(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.AF(items[0])

    def eg(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.EG(items[0])

    def ag(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.AG(items[0])

    def eu(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.EU(items[0], items[1])

    def au(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.AU(items[0], items[1])

    def er(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.ER(items[0], items[1])

    def ar(self, items: list[ctl_ast.Formula]) -> ctl_ast.Formula:
        return ctl_ast.AR(items[0], items[1])

    # probabilistic operators ---------------------------------------------------------------
    def _step_bound(self, op: Token, k: Token) -> int:
        if str(op) != "<=":
            raise InputError(f"unexpected step bound {str(op)!r}", self.off.position(op.line, op.column),
                             "'<=' followed by a number of steps (F<=k, G<=k, U<=k)")
        return int(str(k))

    @v_args(meta=True)
    def prob_query(self, meta: Any, items: list[Any]) -> ctl_ast.Formula:
        quantifier, op, path = items
        if str(op) not in ("=", "=="):
            raise InputError(f"unexpected {str(op)!r} before '?'", self.off.position(op.line, op.column),
                             f"'{quantifier}=?' (a query) or a bound such as '{quantifier}>=0.5'")
        return ctl_ast.ProbQuery("=?", None, path, str(quantifier), pos=self._pos(meta))

    @v_args(meta=True)
    def prob_bound(self, meta: Any, items: list[Any]) -> ctl_ast.Formula:
        quantifier, op, bound, path = items
        if str(op) not in ("<", "<=", ">", ">="):
            raise InputError(f"unexpected probability bound {str(op)!r}",
                             self.off.position(op.line, op.column),
                             "one of < <= > >= (or '=?' for the probability itself)")
        value = bound.value
        if not 0 <= value <= 1:
            raise InputError(f"probability bound {bound} outside [0, 1]", self._pos(meta),
                             "a probability between 0 and 1")
        return ctl_ast.ProbQuery(str(op), value, path, str(quantifier), pos=self._pos(meta))

    @v_args(meta=True)
    def dp_query(self, meta: Any, items: list[Any]) -> ctl_ast.Formula:
        _, eps, delta, path = items
        if not 0 <= delta.value <= 1:
            raise InputError(f"delta {delta} outside [0, 1]", self._pos(meta), "a delta between 0 and 1")
        return ctl_ast.DPQuery(eps, delta.value, path, pos=self._pos(meta))

    @v_args(meta=True)
    def eps_value(self, meta: Any, items: list[ctl_ast.Const]) -> ctl_ast.Eps:
        value = items[0].value
        assert isinstance(value, Fraction)
        if value < 0:
            raise InputError(f"epsilon {items[0]} is negative", self._pos(meta), "an epsilon >= 0")
        return ctl_ast.Eps(value)

    @v_args(meta=True)
    def eps_log(self, meta: Any, items: list[ctl_ast.Const]) -> ctl_ast.Eps:
        value = items[0].value
        assert isinstance(value, Fraction)
        if value < 1:
            raise InputError(f"ln({items[0]}) is negative or undefined", self._pos(meta),
                             "ln(x) with x >= 1 (an epsilon >= 0)")
        return ctl_ast.Eps(value, log=True)

    def path_f(self, items: list[ctl_ast.Formula]) -> ctl_ast.PathFormula:
        return ctl_ast.Eventually(items[0])

    def path_f_bounded(self, items: list[Any]) -> ctl_ast.PathFormula:
        return ctl_ast.Eventually(items[2], self._step_bound(items[0], items[1]))

    def path_g(self, items: list[ctl_ast.Formula]) -> ctl_ast.PathFormula:
        return ctl_ast.Globally(items[0])

    def path_g_bounded(self, items: list[Any]) -> ctl_ast.PathFormula:
        return ctl_ast.Globally(items[2], self._step_bound(items[0], items[1]))

    def path_x(self, items: list[ctl_ast.Formula]) -> ctl_ast.PathFormula:
        return ctl_ast.Next(items[0])

    def path_u(self, items: list[ctl_ast.Formula]) -> ctl_ast.PathFormula:
        return ctl_ast.Until(items[0], items[1])

    def path_u_bounded(self, items: list[Any]) -> ctl_ast.PathFormula:
        return ctl_ast.Until(items[0], items[3], self._step_bound(items[1], items[2]))

    # atoms ---------------------------------------------------------------------------------
    @v_args(meta=True)
    def enabled(self, meta: Any, items: list[Token]) -> ctl_ast.Formula:
        tok = items[0]
        name = unquote(str(tok)) if tok.type == "STRING" else str(tok)
        return ctl_ast.Enabled(name, pos=self._pos(meta))

    @v_args(meta=True)
    def compare(self, meta: Any, items: list[Any]) -> ctl_ast.Formula:
        left, op, right = items
        op_text = "==" if str(op) == "=" else str(op)
        return ctl_ast.Compare(op_text, left, right, pos=self._pos(meta))

    @v_args(meta=True)
    def member(self, meta: Any, items: list[ctl_ast.Term]) -> ctl_ast.Formula:
        return ctl_ast.Member(items[0], items[1], False, pos=self._pos(meta))

    @v_args(meta=True)
    def not_member(self, meta: Any, items: list[ctl_ast.Term]) -> ctl_ast.Formula:
        return ctl_ast.Member(items[0], items[1], True, pos=self._pos(meta))

    @v_args(meta=True)
    def bare(self, meta: Any, items: list[ctl_ast.Term]) -> ctl_ast.Formula:
        term = items[0]
        if isinstance(term, ctl_ast.Ref):
            return ctl_ast.Label(term.name, pos=self._pos(meta))
        if isinstance(term, ctl_ast.Const) and isinstance(term.value, bool):
            return ctl_ast.TrueF() if term.value else ctl_ast.FalseF()
        if isinstance(term, ctl_ast.Const) and isinstance(term.value, str):
            return ctl_ast.Label(term.value, pos=self._pos(meta))
        pos = self._pos(meta)
        raise InputError(f"{term} is a value, not a property", pos,
                         "a comparison such as 'x == value' or a label")

    # terms ---------------------------------------------------------------------------------
    @v_args(meta=True)
    def ref(self, meta: Any, items: list[Token]) -> ctl_ast.Term:
        return ctl_ast.Ref(str(items[0]), pos=self._pos(meta))

    def string(self, items: list[Token]) -> ctl_ast.Term:
        return ctl_ast.Const(unquote(str(items[0])))

    def true(self, items: list[Any]) -> ctl_ast.Term:
        return ctl_ast.Const(True)

    def false(self, items: list[Any]) -> ctl_ast.Term:
        return ctl_ast.Const(False)

    @v_args(meta=True)
    def number(self, meta: Any, items: list[Token]) -> ctl_ast.Term:
        try:
            return ctl_ast.Const(_number(items))
        except ZeroDivisionError:
            raise InputError("division by zero in a number", self._pos(meta),
                             "a non-zero denominator") from None

    def vector(self, items: list[ctl_ast.Term]) -> ctl_ast.Term:
        return ctl_ast.VectorLit(tuple(items))

    def set_lit(self, items: list[ctl_ast.Term | None]) -> ctl_ast.Term:
        return ctl_ast.SetLit(tuple(i for i in items if i is not None))


def _end_position(text: str) -> tuple[int, int]:
    """1-based line and column just after the last non-blank character of ``text``."""
    body = text.rstrip()
    lines = body.split("\n")
    return len(lines), len(lines[-1]) + 1


def parse_formula(text: str, *, source: str = "<formula>", line: int = 1, column: int = 1) -> ctl_ast.Formula:
    """Parse ``text`` into a :class:`checker.mc.ctl_ast.Formula`.

    ``source``, ``line`` and ``column`` locate ``text`` inside an embedding file: a token at line ``l``,
    column ``c`` of ``text`` is reported at line ``line + l - 1`` and column ``c + column - 1`` when
    ``l == 1`` (else ``c``). Raises :class:`InputError` on a syntax error, naming the position and what
    was expected there.
    """
    off = _Offsets(source, line, column)
    try:
        tree = _parser().parse(text)
    except lark.exceptions.UnexpectedToken as exc:
        tok = exc.token
        if tok.type == "$END":
            line_no, col_no = _end_position(text)
            raise InputError("unexpected end of formula", off.position(line_no, col_no),
                             _expected_text(_acceptable(exc))) from None
        raise InputError(f"unexpected {str(tok)!r}", off.position(exc.line, exc.column),
                         _expected_text(_acceptable(exc))) from None
    except lark.exceptions.UnexpectedCharacters as exc:
        pos = exc.pos_in_stream
        ch = text[pos] if pos is not None and pos < len(text) else "?"
        raise InputError(f"unexpected character {ch!r}", off.position(exc.line, exc.column),
                         _expected_text(exc.allowed)) from None
    except lark.exceptions.UnexpectedEOF as exc:
        line_no, col_no = _end_position(text)
        raise InputError("unexpected end of formula", off.position(line_no, col_no),
                         _expected_text(set(exc.expected))) from None
    deep = too_deep(tree, _is_chain)
    if deep is not None:
        meta = deep.meta
        where = off.position(None if meta.empty else meta.line, None if meta.empty else meta.column)
        raise InputError(f"formula nested more than {MAX_FORMULA_DEPTH} levels deep here", where,
                         f"at most {MAX_FORMULA_DEPTH} nested operators, parentheses or chained '<->'")
    try:
        result = _ToAst(off).transform(tree)
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, InputError):
            raise exc.orig_exc from None
        raise
    if isinstance(result, ctl_ast.Term):  # pragma: no cover - the grammar wraps terms in atoms
        raise InputError("a value is not a property", off.position(1, 1))
    return result


__all__ = ["parse_formula"]
