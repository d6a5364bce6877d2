"""The CTL abstract syntax of flcheck's property language (IIIf MC theory, see ``spec/IIIF.md``).

Formulas are immutable, hashable values (frozen dataclasses compared structurally; source positions are
carried along but ignored by ``==``/``hash``), so a checker can memoise the satisfaction set of every
sub-formula. ``str(f)`` prints the formula in the concrete syntax of ``spec/grammar/ctl.lark`` and
``parse_formula(str(f)) == f`` (tested).

Operators (IIIf MC, all as sets of states):
``EX AX EF AF EG AG`` (:class:`Unary` subclasses), ``E[f U g]`` :class:`EU`, ``A[f U g]`` :class:`AU`,
``E[f R g]`` :class:`ER`, ``A[f R g]`` :class:`AR`, connectives :class:`Not`, n-ary :class:`And` /
:class:`Or`, :class:`Implies`, :class:`Iff`, constants :class:`TrueF` / :class:`FalseF`.

Probabilistic operators ([PCTL]; ``D`` from [dpCTL]), state formulas over a path formula
(:class:`PathFormula`: :class:`Eventually` ``F f`` / ``F<=k f``, :class:`Globally` ``G f`` / ``G<=k f``,
:class:`Next` ``X f``, :class:`Until` ``f U g`` / ``f U<=k g``):
:class:`ProbQuery` ``P=? [ψ]``, ``P>=p [ψ]`` (any of ``< <= > >=``), ``Pmin=?``, ``Pmax<=p``, ...
(the probability of the paths from a state that satisfy ψ; on an MDP its minimum or maximum over the
schedulers) and :class:`DPQuery` ``D{ε,δ}[ψ]`` (for neighbouring initial states s1, s2:
``Pr(s1 ⊨ ψ) <= e^ε Pr(s2 ⊨ ψ) + δ``; ε an :class:`Eps`, a number or ``ln(x)``). Their
:meth:`~Formula.children` are the state formulas inside the path, so :meth:`~Formula.subformulas`
and :func:`atoms_of` reach the atoms inside the brackets.

Atoms: :class:`Label` (a bare or quoted label / boolean observable), :class:`Compare`
(``term OP term`` with ``OP`` in ``== != < <= > >=``), :class:`Member` (``term in term``,
``term not in term``) and :class:`Enabled` (``enabled(rule)``: the state has an outgoing transition
whose action's rule is ``rule``). Terms: :class:`Ref` (an identifier: an observable if the structure has
one of that name, else a symbolic constant such as ``get_grad``), :class:`Const` (an exact
``Fraction``, a string or a boolean), :class:`VectorLit` ``(a, b)`` and :class:`SetLit` ``{a, b}``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction

from checker.errors import Position

KEYWORDS = frozenset({"EX", "AX", "EF", "AF", "EG", "AG", "E", "A", "U", "R", "in", "not", "and", "or",
                      "true", "false", "enabled", "F", "G", "X"})
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _name_text(name: str) -> str:
    """An identifier as written: bare when it lexes as a name, else quoted."""
    if _IDENT.match(name) and name not in KEYWORDS:
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --------------------------------------------------------------------------- terms
class Term:
    """A value in an atom: an observable reference or a constant."""


@dataclass(frozen=True)
class Ref(Term):
    """An identifier: the observable ``name`` when the structure has one, else the symbol ``name``."""

    name: str
    pos: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Const(Term):
    """A constant: an exact rational (``Fraction``), a string (quoted) or a boolean."""

    value: Fraction | str | bool

    def __str__(self) -> str:
        v = self.value
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, Fraction):
            return str(v) if v >= 0 or v.denominator == 1 else f"-{-v}"
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class VectorLit(Term):
    """A vector ``(a, b, ...)`` of at least two items (a 1-element vector value equals a scalar)."""

    items: tuple[Term, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ")"


@dataclass(frozen=True)
class SetLit(Term):
    """A finite set ``{a, b, ...}`` (possibly empty)."""

    items: tuple[Term, ...]

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.items)) + "}"


# --------------------------------------------------------------------------- formulas
class Formula:
    """Base class of CTL formulas."""

    def children(self) -> tuple[Formula, ...]:
        return ()

    def subformulas(self) -> Iterator[Formula]:
        """This formula and all its sub-formulas, pre-order (an explicit stack: formulas may nest
        thousands of operators deep)."""
        stack: list[Formula] = [self]
        while stack:
            f = stack.pop()
            yield f
            stack.extend(reversed(f.children()))


@dataclass(frozen=True)
class TrueF(Formula):
    def __str__(self) -> str:
        return "true"


@dataclass(frozen=True)
class FalseF(Formula):
    def __str__(self) -> str:
        return "false"


class Atom(Formula):
    """Base of atomic propositions (decided by one state's labels/observables/enabled actions)."""

    pos: Position | None


@dataclass(frozen=True)
class Label(Atom):
    """A label (``goal`` or ``"goal"``) or a boolean observable of that name."""

    name: str
    pos: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return _name_text(self.name)


COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class Compare(Atom):
    """``left OP right`` with ``OP`` one of ``== != < <= > >=``."""

    op: str
    left: Term
    right: Term
    pos: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True)
class Member(Atom):
    """``element in collection`` (``negated``: ``element not in collection``)."""

    element: Term
    collection: Term
    negated: bool = False
    pos: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.element} {'not in' if self.negated else 'in'} {self.collection}"


@dataclass(frozen=True)
class Enabled(Atom):
    """``enabled(rule)``: some outgoing transition's action has rule (or full text) ``rule``."""

    rule: str
    pos: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"enabled({_name_text(self.rule)})"


def _wrap(f: Formula) -> str:
    return f"({f})" if isinstance(f, And | Or | Implies | Iff) else str(f)


@dataclass(frozen=True)
class Not(Formula):
    arg: Formula

    def children(self) -> tuple[Formula, ...]:
        return (self.arg,)

    def __str__(self) -> str:
        inner = str(self.arg)
        if isinstance(self.arg, And | Or | Implies | Iff | Compare | Member):
            return f"!({inner})"
        return f"!{inner}"


@dataclass(frozen=True)
class And(Formula):
    """n-ary conjunction (n >= 2 from the parser; n = 0 is ``true``)."""

    args: tuple[Formula, ...]

    def children(self) -> tuple[Formula, ...]:
        return self.args

    def __str__(self) -> str:
        return " & ".join(map(_wrap, self.args)) if self.args else "true"


@dataclass(frozen=True)
class Or(Formula):
    """n-ary disjunction (n = 0 is ``false``)."""

    args: tuple[Formula, ...]

    def children(self) -> tuple[Formula, ...]:
        return self.args

    def __str__(self) -> str:
        return " | ".join(map(_wrap, self.args)) if self.args else "false"


@dataclass(frozen=True)
class Implies(Formula):
    left: Formula
    right: Formula

    def children(self) -> tuple[Formula, ...]:
        return (self.left, self.right)

    def __str__(self) -> str:
        return f"{_wrap(self.left)} -> {_wrap(self.right)}"


@dataclass(frozen=True)
class Iff(Formula):
    left: Formula
    right: Formula

    def children(self) -> tuple[Formula, ...]:
        return (self.left, self.right)

    def __str__(self) -> str:
        return f"{_wrap(self.left)} <-> {_wrap(self.right)}"


@dataclass(frozen=True)
class Unary(Formula):
    """Base of the unary temporal operators; ``OP`` is the keyword."""

    arg: Formula
    OP = "?"

    def children(self) -> tuple[Formula, ...]:
        return (self.arg,)

    def __str__(self) -> str:
        inner = str(self.arg)
        if isinstance(self.arg, And | Or | Implies | Iff | Compare | Member):
            inner = f"({inner})"
        return f"{self.OP} {inner}"


class EX(Unary):
    """``EX f = {s | some successor of s is in f}``."""

    OP = "EX"


class AX(Unary):
    """``AX f = {s | every successor of s is in f}`` (IIIf: true on a deadlock)."""

    OP = "AX"


class EF(Unary):
    """``EF f = lfp Z. f ∪ EX Z``."""

    OP = "EF"


class AF(Unary):
    """``AF f = lfp Z. f ∪ AX Z``."""

    OP = "AF"


class EG(Unary):
    """``EG f = gfp Z. f ∩ EX Z``."""

    OP = "EG"


class AG(Unary):
    """``AG f = gfp Z. f ∩ AX Z``."""

    OP = "AG"


@dataclass(frozen=True)
class Binary(Formula):
    """Base of the path quantifier + until/release forms ``Q[left OP right]``."""

    left: Formula
    right: Formula
    Q = "?"
    OP = "?"

    def children(self) -> tuple[Formula, ...]:
        return (self.left, self.right)

    def __str__(self) -> str:
        return f"{self.Q}[{self.left} {self.OP} {self.right}]"


class EU(Binary):
    """``E[f U g] = lfp Z. g ∪ (f ∩ EX Z)``."""

    Q, OP = "E", "U"


class AU(Binary):
    """``A[f U g] = lfp Z. g ∪ (f ∩ AX Z)``."""

    Q, OP = "A", "U"


class ER(Binary):
    """``E[f R g] = gfp Z. g ∩ (f ∪ EX Z)``."""

    Q, OP = "E", "R"


class AR(Binary):
    """``A[f R g] = gfp Z. g ∩ (f ∪ AX Z)``."""

    Q, OP = "A", "R"


# --------------------------------------------------------------------------- probabilistic operators
def _operand(f: Formula) -> str:
    """A state formula inside a path formula: bracketed unless it is one token or prefix form."""
    text = str(f)
    return f"({text})" if isinstance(f, And | Or | Implies | Iff) else text


def _bound_text(bound: int | None) -> str:
    return "" if bound is None else f"<={bound}"


class PathFormula:
    """Base of the path formulas inside ``P``/``D`` (not state formulas: they hold on paths)."""

    def children(self) -> tuple[Formula, ...]:
        return ()


@dataclass(frozen=True)
class Eventually(PathFormula):
    """``F f`` (some state of the path satisfies ``f``); ``F<=k f``: one of the first ``k + 1`` states."""

    arg: Formula
    bound: int | None = None

    def children(self) -> tuple[Formula, ...]:
        return (self.arg,)

    def __str__(self) -> str:
        return f"F{_bound_text(self.bound)} {_operand(self.arg)}"


@dataclass(frozen=True)
class Globally(PathFormula):
    """``G f`` (every state of the path satisfies ``f``); ``G<=k f``: the first ``k + 1`` states."""

    arg: Formula
    bound: int | None = None

    def children(self) -> tuple[Formula, ...]:
        return (self.arg,)

    def __str__(self) -> str:
        return f"G{_bound_text(self.bound)} {_operand(self.arg)}"


@dataclass(frozen=True)
class Next(PathFormula):
    """``X f``: the path's second state satisfies ``f``."""

    arg: Formula

    def children(self) -> tuple[Formula, ...]:
        return (self.arg,)

    def __str__(self) -> str:
        return f"X {_operand(self.arg)}"


@dataclass(frozen=True)
class Until(PathFormula):
    """``f U g``: some state satisfies ``g`` and every earlier one ``f``; ``f U<=k g``: within ``k``
    steps."""

    left: Formula
    right: Formula
    bound: int | None = None

    def children(self) -> tuple[Formula, ...]:
        return (self.left, self.right)

    def __str__(self) -> str:
        return f"{_operand(self.left)} U{_bound_text(self.bound)} {_operand(self.right)}"


#: The comparison of a probability bound (``P>=p``), or ``"=?"`` for a query.
PROB_OPS = ("=?", "<", "<=", ">", ">=")
#: ``P`` (a Markov chain, or an MDP under its uniform scheduler), ``Pmin`` / ``Pmax`` (an MDP's
#: minimising / maximising scheduler).
PROB_QUANTIFIERS = ("P", "Pmin", "Pmax")


@dataclass(frozen=True)
class ProbQuery(Formula):
    """``P=? [path]`` (``op == "=?"``, ``bound is None``: the probability itself, a query allowed only
    at the top of a property) or ``P op bound [path]`` (the states whose probability of ``path``
    compares so with ``bound``); ``quantifier`` ``P``, ``Pmin`` or ``Pmax``."""

    op: str
    bound: Fraction | None
    path: PathFormula
    quantifier: str = "P"
    pos: Position | None = field(default=None, compare=False, repr=False)

    def children(self) -> tuple[Formula, ...]:
        return self.path.children()

    @property
    def is_query(self) -> bool:
        """``True`` for ``=?`` (a number per state, not a set of states)."""
        return self.op == "=?"

    def __str__(self) -> str:
        if self.bound is None:
            return f"{self.quantifier}=? [{self.path}]"
        head = f"{self.quantifier}{self.op}{Const(self.bound)}"
        return f"{head} [{self.path}]"


@dataclass(frozen=True)
class Eps:
    """The ε of ``D{ε,δ}``: ``value`` itself, or ``ln(value)`` when ``log`` (``e^ε = value`` exactly)."""

    value: Fraction
    log: bool = False

    def __float__(self) -> float:
        return math.log(self.value) if self.log else float(self.value)

    @property
    def exp(self) -> Fraction | None:
        """``e^ε`` as an exact rational when ``ε = ln(value)`` (``None``: irrational)."""
        return self.value if self.log else (Fraction(1) if self.value == 0 else None)

    def __str__(self) -> str:
        return f"ln({Const(self.value)})" if self.log else str(Const(self.value))


@dataclass(frozen=True)
class DPQuery(Formula):
    """``D{eps,delta}[path]`` ([dpCTL]): holds when for every neighbour pair of initial states
    ``(s1, s2)`` (both directions) ``Pr(s1 ⊨ path) <= e^eps · Pr(s2 ⊨ path) + delta``. Needs the pairs:
    a scenario checked with ``--between``; an explicit model has none."""

    eps: Eps
    delta: Fraction
    path: PathFormula
    pos: Position | None = field(default=None, compare=False, repr=False)

    def children(self) -> tuple[Formula, ...]:
        return self.path.children()

    def __str__(self) -> str:
        return f"D{{{self.eps}, {Const(self.delta)}}}[{self.path}]"


PROBABILISTIC = (ProbQuery, DPQuery)


def has_probabilistic(f: Formula) -> bool:
    """Whether ``f`` contains a ``P`` or ``D`` operator."""
    return any(isinstance(g, PROBABILISTIC) for g in f.subformulas())


def _cache_hash(cls: type) -> None:
    """Make ``cls``'s structural hash computed once per value: a formula is hashed at every memo
    look-up, and recomputing it would cost its whole depth each time."""
    structural: Callable[[object], int] = cls.__hash__  # type: ignore[assignment]  # the class attribute, called unbound with the instance

    def cached_hash(self: object) -> int:
        got = self.__dict__.get("_hash")
        if got is None:
            got = structural(self)
            object.__setattr__(self, "_hash", got)  # frozen dataclass: bypass the read-only setattr
        return int(got)

    cls.__hash__ = cached_hash  # type: ignore[assignment,method-assign]  # same signature as the generated one


for _cls in (Ref, Const, VectorLit, SetLit, TrueF, FalseF, Label, Compare, Member, Enabled, Not, And, Or,
             Implies, Iff, EX, AX, EF, AF, EG, AG, EU, AU, ER, AR, Eventually, Globally, Next, Until,
             ProbQuery, Eps, DPQuery):
    _cache_hash(_cls)


UNARY_OPS: dict[str, type[Unary]] = {c.OP: c for c in (EX, AX, EF, AF, EG, AG)}
BINARY_OPS: dict[tuple[str, str], type[Binary]] = {(c.Q, c.OP): c for c in (EU, AU, ER, AR)}
EXISTENTIAL = (EX, EF, EG, EU, ER)
UNIVERSAL = (AX, AF, AG, AU, AR)


def atoms_of(f: Formula) -> list[Atom]:
    """The atom occurrences of ``f`` (pre-order)."""
    return [g for g in f.subformulas() if isinstance(g, Atom)]
