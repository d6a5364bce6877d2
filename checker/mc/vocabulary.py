"""The vocabulary of a model and the type check of a formula's atoms against it.

A :class:`Vocabulary` says what a property may name: the labels, the observables with their
:class:`ValueType` (an integer, a rational, a boolean, a vector of length ``k``, a name out of a
finite set, or a set of such names), the rule names ``enabled(...)`` may ask for and named sets of
names (clients, locations, rules, …). It is given by the application layer (which knows the model;
this engine does not) or read off an explicit structure
(:func:`checker.mc.satisfaction.vocabulary_of_kripke`).

:func:`check_formula` rejects, before any state is explored, every atom that could only be false
or an evaluation error: an unknown label, observable, rule or name, a comparison of values of
different types (``round != "1"``, a set against a number), a vector of the wrong length, an
ordering of names, an unknown name inside a set literal. The error names the atom's position, the
offending token and the nearest valid names (``did you mean eval_round?``).

    >>> vocab = Vocabulary(observables={"round": ValueType("int")}, rules=frozenset({"eval_round"}))
    >>> from checker.mc.ctl_parse import parse_formula
    >>> try:
    ...     check_formula(parse_formula("AG !enabled(eval_rond)"), vocab)
    ... except InputError as exc:
    ...     print(exc.message)
    unknown rule 'eval_rond' in 'enabled(eval_rond)'; did you mean eval_round?
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from checker.errors import InputError, Position
from checker.mc import ctl_ast

Kind = Literal["int", "rational", "bool", "vector", "name", "set", "any"]
_ORDERING = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class ValueType:
    """The type of an observable: ``kind`` ``int``/``rational``/``bool``; ``vector`` of ``length``
    rationals; ``name`` (one of ``names``) or ``set`` (a set of ``names``), ``what`` saying what the
    names are (``client``, ``rule``, …); ``any`` is not checked."""

    kind: Kind
    length: int | None = None
    names: frozenset[str] | None = None
    what: str = "name"

    def text(self) -> str:
        if self.kind == "vector":
            return f"a vector of length {self.length}"
        if self.kind == "name":
            return f"a {self.what} name"
        if self.kind == "set":
            return f"a set of {self.what} names"
        return {"int": "an integer", "rational": "a rational number", "bool": "a boolean",
                "any": "a value"}[self.kind]


@dataclass(frozen=True)
class Vocabulary:
    """What a formula may name on one model (see the module docstring). ``rules`` ``None``: the
    rule names are not known (``enabled(...)`` is not checked)."""

    labels: frozenset[str] = frozenset()
    observables: Mapping[str, ValueType] = field(default_factory=dict)
    rules: frozenset[str] | None = None
    names: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def boolean_names(self) -> list[str]:
        return sorted(self.labels | {n for n, t in self.observables.items() if t.kind in ("bool", "any")})


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean X?"`` for the closest candidate (difflib), else ``""``."""
    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def _listing(kind: str, names: Iterable[str]) -> str:
    items = sorted(set(names))
    if not items:
        return f"no {kind}s are defined"
    shown = ", ".join(items[:12]) + (", …" if len(items) > 12 else "")
    article = "an" if kind[0] in "aeiou" else "a"
    return f"{kind}: {shown}" if len(items) == 1 else f"{article} {kind}: {shown}"


class _Checker:
    def __init__(self, vocabulary: Vocabulary):
        self.vocab = vocabulary

    def error(self, atom: ctl_ast.Atom, message: str, expected: str | None = None,
              pos: Position | None = None, hint: str = "") -> InputError:
        return InputError(f"{message} in '{atom}'{hint}", atom.pos, expected)

    def unknown(self, atom: ctl_ast.Atom, kind: str, word: str, candidates: Iterable[str],
                pos: Position | None = None) -> InputError:
        cands = list(candidates)
        return self.error(atom, f"unknown {kind} {word!r}", _listing(kind, cands), pos,
                          did_you_mean(word, cands))

    # -------------------------------------------------------------------- atoms
    def atom(self, atom: ctl_ast.Atom) -> None:
        if isinstance(atom, ctl_ast.Label):
            self.label(atom)
        elif isinstance(atom, ctl_ast.Enabled):
            rules = self.vocab.rules
            if rules is not None and atom.rule not in rules:
                raise self.unknown(atom, "rule", atom.rule, rules)
        elif isinstance(atom, ctl_ast.Compare):
            self.compare(atom)
        elif isinstance(atom, ctl_ast.Member):
            self.member(atom)

    def label(self, atom: ctl_ast.Label) -> None:
        vocab = self.vocab
        if atom.name in vocab.labels:
            return
        obs = vocab.observables.get(atom.name)
        if obs is None:
            raise self.unknown(atom, "label", atom.name, vocab.boolean_names())
        if obs.kind not in ("bool", "any"):
            raise self.error(atom, f"observable {atom.name!r} is {obs.text()}, not a property",
                             f"a comparison such as '{atom.name} == value'")

    def _type_of(self, term: ctl_ast.Term) -> ValueType | None:
        if isinstance(term, ctl_ast.Ref):
            return self.vocab.observables.get(term.name)
        return None

    def compare(self, atom: ctl_ast.Compare) -> None:
        left, right = self._type_of(atom.left), self._type_of(atom.right)
        if left is None and right is None:
            refs = [t for t in (atom.left, atom.right) if isinstance(t, ctl_ast.Ref)]
            if refs:
                raise self.unknown(atom, "observable", refs[0].name, self.vocab.observables, refs[0].pos)
            raise self.error(atom, "neither side is an observable",
                             _listing("observable", self.vocab.observables))
        if left is not None and right is not None:
            self._same_type(atom, left, right)
            return
        obs_type, const = (left, atom.right) if left is not None else (right, atom.left)
        assert obs_type is not None
        self.conforms(atom, obs_type, const)
        if atom.op in _ORDERING and obs_type.kind in ("name", "bool", "vector") and obs_type.length != 1:
            raise self.error(atom, f"{atom.op!r} orders numbers or sets; "
                             f"{_observable(atom)} is {obs_type.text()}", "'==' or '!='")

    def _same_type(self, atom: ctl_ast.Compare, left: ValueType, right: ValueType) -> None:
        if "any" in (left.kind, right.kind):
            return
        numeric = {"int", "rational"}
        if left.kind in numeric and right.kind in numeric:
            return
        if left.kind != right.kind or (left.kind == "vector" and left.length != right.length):
            raise self.error(atom, f"{atom.left} is {left.text()} and {atom.right} is {right.text()}",
                             "two observables of the same type")

    def conforms(self, atom: ctl_ast.Atom, expected: ValueType, term: ctl_ast.Term) -> None:
        """Raise unless the constant ``term`` is a value of type ``expected``."""
        kind = expected.kind
        if kind == "any":
            return
        if isinstance(term, ctl_ast.Ref) and term.name in self.vocab.observables:
            return
        if kind in ("int", "rational"):
            if isinstance(term, ctl_ast.Const) and isinstance(term.value, Fraction):
                return
            self._mismatch(atom, expected, term)
        if kind == "bool":
            if isinstance(term, ctl_ast.Const) and isinstance(term.value, bool):
                return
            self._mismatch(atom, expected, term)
        if kind == "vector":
            if expected.length == 1 and isinstance(term, ctl_ast.Const) and isinstance(term.value, Fraction):
                return
            if isinstance(term, ctl_ast.VectorLit):
                if len(term.items) != expected.length:
                    raise self.error(atom, f"{term} has {len(term.items)} components, "
                                     f"{_observable(atom)} has {expected.length}",
                                     f"a vector of length {expected.length}")
                for item in term.items:
                    self.conforms(atom, ValueType("rational"), item)
                return
            self._mismatch(atom, expected, term)
        if kind == "name":
            self.name_in(atom, expected, term)
            return
        if kind == "set":
            if not isinstance(term, ctl_ast.SetLit):
                self._mismatch(atom, expected, term)
            else:
                element = ValueType("name", names=expected.names, what=expected.what)
                for item in term.items:
                    self.name_in(atom, element, item)

    def name_in(self, atom: ctl_ast.Atom, expected: ValueType, term: ctl_ast.Term) -> None:
        text = _name_of(term)
        if text is None:
            self._mismatch(atom, expected, term)
            return
        if expected.names is not None and text not in expected.names:
            pos = term.pos if isinstance(term, ctl_ast.Ref) else None
            if isinstance(term, ctl_ast.Ref) and not expected.names:
                raise self.unknown(atom, "observable", text, self.vocab.observables, pos)
            raise self.unknown(atom, expected.what, text, expected.names, pos)

    def _mismatch(self, atom: ctl_ast.Atom, expected: ValueType, term: ctl_ast.Term) -> None:
        if isinstance(term, ctl_ast.Ref):  # an unknown identifier where no name fits: a misspelt observable
            raise self.unknown(atom, "observable", term.name, self.vocab.observables, term.pos)
        raise self.error(atom, f"{term} is {_term_text(term)}, {_observable(atom)} is {expected.text()}",
                         expected.text())

    def member(self, atom: ctl_ast.Member) -> None:
        coll = self._type_of(atom.collection)
        element = self._type_of(atom.element)
        if coll is not None:
            if coll.kind == "any":
                return
            if coll.kind == "set":
                item = ValueType("name", names=coll.names, what=coll.what)
                if element is None:
                    self.name_in(atom, item, atom.element)
                elif element.kind not in ("name", "any"):
                    raise self.error(atom, f"{atom.element} is {element.text()}, not a {coll.what} name",
                                     f"a {coll.what} name")
                return
            if coll.kind == "vector":
                if element is None:
                    self.conforms(atom, ValueType("rational"), atom.element)
                return
            raise self.error(atom, f"{atom.collection} is {coll.text()}, not a collection",
                             "a set or vector observable, or a literal {a, b}")
        if element is not None:
            if not isinstance(atom.collection, ctl_ast.SetLit | ctl_ast.VectorLit):
                if isinstance(atom.collection, ctl_ast.Ref):
                    raise self.unknown(atom, "observable", atom.collection.name, self.vocab.observables,
                                       atom.collection.pos)
                raise self.error(atom, f"{atom.collection} is not a collection", "{a, b} or an observable")
            for member in atom.collection.items:
                self.conforms(atom, element, member)
            return
        refs = [t for t in (atom.element, atom.collection) if isinstance(t, ctl_ast.Ref)]
        if refs:
            raise self.unknown(atom, "observable", refs[-1].name, self.vocab.observables, refs[-1].pos)
        raise self.error(atom, "neither side is an observable",
                         _listing("observable", self.vocab.observables))


def _observable(atom: ctl_ast.Atom) -> str:
    terms = (atom.left, atom.right) if isinstance(atom, ctl_ast.Compare) else (
        (atom.element, atom.collection) if isinstance(atom, ctl_ast.Member) else ())
    refs = [t.name for t in terms if isinstance(t, ctl_ast.Ref)]
    return refs[0] if refs else "the observable"


def _name_of(term: ctl_ast.Term) -> str | None:
    if isinstance(term, ctl_ast.Ref):
        return term.name
    if isinstance(term, ctl_ast.Const) and isinstance(term.value, str):
        return term.value
    return None


def _term_text(term: ctl_ast.Term) -> str:
    if isinstance(term, ctl_ast.Const):
        if isinstance(term.value, bool):
            return "a boolean"
        return "a number" if isinstance(term.value, Fraction) else "a string"
    if isinstance(term, ctl_ast.VectorLit):
        return f"a vector of length {len(term.items)}"
    if isinstance(term, ctl_ast.SetLit):
        return "a set"
    return "a name"


def check_formula(formula: ctl_ast.Formula, vocabulary: Vocabulary) -> None:
    """Raise :class:`InputError` at the first atom of ``formula`` that ``vocabulary`` rejects."""
    checker = _Checker(vocabulary)
    for atom in ctl_ast.atoms_of(formula):
        checker.atom(atom)


__all__ = ["ValueType", "Vocabulary", "check_formula", "did_you_mean"]
