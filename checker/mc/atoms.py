"""Evaluation of the property language's atoms on a :class:`checker.mc.kripke.Kripke` structure.

An atom is decided by one state's labels, observables and enabled actions. Evaluation is vectorised:
an observable stored as a numpy array is compared with numpy; an observable stored as a sequence of
Python values is *factorised* once (distinct values + one integer code per state) and a predicate is
evaluated once per distinct value (or distinct pair of values) and broadcast back through the codes.

Value semantics (exact, as the seed's definitions compare model values exactly):
- numbers compare as exact rationals (``Fraction``; a float value is compared by its exact binary value);
- a string constant or a symbol (an identifier that is not an observable, e.g. ``get_grad``) equals a
  string value with that text, or an object whose ``rule`` or ``name`` attribute or ``str()`` is that text;
- a vector ``(a, b)`` equals a tuple/list value elementwise; a 1-element vector value equals a scalar;
- a set ``{a, b}`` equals a set value with matching elements; ``x in coll`` asks whether some element of
  the collection value matches ``x``; ``<=``/``<``/``>=``/``>`` on two sets are (proper) sub/superset;
- a bare name is a label if the structure has one, else a boolean observable.

Three-valued evaluation on an incomplete structure: labels and observables are known on frontier states
(they are observed when a state is discovered), ``enabled(r)`` is not (its upper bound is true there).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from fractions import Fraction
from numbers import Rational
from typing import Any

import numpy as np

from checker.errors import InputError
from checker.mc import ctl_ast
from checker.mc.kripke import Kripke

Bounds = tuple[np.ndarray, np.ndarray]

_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


class _Symbol(str):
    """A constant written as a bare identifier (``get_grad``)."""


def freeze(value: object) -> object:
    """A hashable version of an observable value (lists -> tuples, sets -> frozensets, dicts -> sorted
    item tuples, numpy scalars -> Python scalars)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        return tuple(freeze(v) for v in value.tolist())
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted(((freeze(k), freeze(v)) for k, v in value.items()), key=repr))
    return value


def _is_number(v: object) -> bool:
    if isinstance(v, bool | np.bool_):
        return False
    return isinstance(v, int | float | Rational | np.integer | np.floating)


def _as_fraction(v: object) -> Fraction:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float | str):
        return Fraction(v)
    if isinstance(v, int | Rational):
        return Fraction(v)
    raise TypeError(f"{v!r} is not a number")


def _text_of(v: object) -> set[str]:
    out = {str(v)}
    for attr in ("rule", "name"):
        a = getattr(v, attr, None)
        if isinstance(a, str):
            out.add(a)
    return out


def matches(value: object, const: object) -> bool:
    """Whether an observable ``value`` equals a constant (see the module docstring)."""
    if isinstance(value, tuple | list) and len(value) == 1 and not (
        isinstance(const, tuple) and len(const) == 1
    ):
        return matches(value[0], const)
    if isinstance(const, bool):
        return isinstance(value, bool | np.bool_) and bool(value) == const
    if isinstance(const, Fraction):
        return _is_number(value) and _as_fraction(value) == const
    if isinstance(const, str):
        if isinstance(value, str):
            return value == const
        if value is None or _is_number(value) or isinstance(value, bool | tuple | list | frozenset | set):
            return False
        return const in _text_of(value)
    if isinstance(const, tuple):
        if isinstance(value, tuple | list | np.ndarray) and len(value) == len(const):
            return all(matches(v, c) for v, c in zip(value, const, strict=True))
        return False
    if isinstance(const, frozenset):
        if not isinstance(value, set | frozenset | tuple | list):
            return False
        vals = list(value)
        return (all(any(matches(v, c) for v in vals) for c in const)
                and all(any(matches(v, c) for c in const) for v in vals))
    return bool(value == const)


def canonical(value: object) -> object:
    """Canonical form used to compare two observable values with each other."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if _is_number(value):
        return _as_fraction(value)
    if isinstance(value, tuple | list | np.ndarray):
        items = tuple(canonical(v) for v in value)
        return items[0] if len(items) == 1 else items
    if isinstance(value, set | frozenset):
        return frozenset(canonical(v) for v in value)
    if value is None or isinstance(value, str):
        return value
    for attr in ("name", "rule"):
        a = getattr(value, attr, None)
        if isinstance(a, str):
            return a
    return value


def _order(value: object, const: object, op: str) -> bool:
    if _is_number(value) and isinstance(const, Fraction):
        return _ORDER[op](_as_fraction(value), const)
    if isinstance(value, tuple | list) and len(value) == 1:
        return _order(value[0], const, op)
    if isinstance(value, set | frozenset) and isinstance(const, frozenset):
        return _ORDER[op](frozenset(canonical(v) for v in value), const)
    raise TypeError(f"cannot order {value!r} and {const!r} with {op}")


def _member(element: object, collection: object) -> bool:
    if isinstance(collection, set | frozenset | tuple | list):
        return any(matches(v, element) for v in collection)
    if isinstance(collection, str) and isinstance(element, str):
        return element in collection
    return False


class AtomEvaluator:
    """Evaluates atoms of a formula on one :class:`Kripke` structure, caching per observable the
    factorisation (distinct values, codes) and per atom the resulting bounds."""

    def __init__(self, kripke: Kripke):
        self.k = kripke
        self._factor: dict[str, tuple[list[object], np.ndarray]] = {}
        self._cache: dict[ctl_ast.Atom, Bounds] = {}

    # -------------------------------------------------------------------- helpers
    def _err(self, atom: ctl_ast.Atom, message: str, expected: str | None = None) -> InputError:
        return InputError(f"{message} (in '{atom}')", atom.pos, expected)

    def _known(self) -> str:
        labels = ", ".join(sorted(self.k.labels)) or "none"
        obs = ", ".join(sorted(self.k.observables)) or "none"
        return f"labels: {labels}; observables: {obs}"

    def factorise(self, name: str) -> tuple[list[object], np.ndarray]:
        """Distinct values of observable ``name`` and each state's code into them."""
        if name not in self._factor:
            values = self.k.observables[name]
            if isinstance(values, np.ndarray):
                uniq, codes = np.unique(values, return_inverse=True)
                self._factor[name] = ([u.item() for u in uniq], codes.astype(np.int64).reshape(-1))
            else:
                index: dict[object, int] = {}
                uniq_list: list[object] = []
                codes_list = []
                same: dict[int, int] = {}  # the code of a value object met before (the column keeps it alive)
                for v in values:
                    c = same.get(id(v))
                    if c is None:
                        fv = freeze(v)
                        c = index.get(fv)
                        if c is None:
                            c = index[fv] = len(uniq_list)
                            uniq_list.append(fv)
                        same[id(v)] = c
                    codes_list.append(c)
                self._factor[name] = (uniq_list, np.asarray(codes_list, dtype=np.int64))
        return self._factor[name]

    def _const(self, term: ctl_ast.Term) -> object:
        if isinstance(term, ctl_ast.Const):
            return term.value
        if isinstance(term, ctl_ast.Ref):
            return _Symbol(term.name)
        if isinstance(term, ctl_ast.VectorLit):
            return tuple(self._const(t) for t in term.items)
        if isinstance(term, ctl_ast.SetLit):
            return frozenset(self._const(t) for t in term.items)
        raise TypeError(term)

    def _is_obs(self, term: ctl_ast.Term) -> bool:
        return isinstance(term, ctl_ast.Ref) and term.name in self.k.observables

    def _per_value(self, name: str, pred: Callable[[object], bool]) -> np.ndarray:
        uniq, codes = self.factorise(name)
        table = np.fromiter((pred(u) for u in uniq), dtype=bool, count=len(uniq))
        return table[codes] if len(codes) else np.zeros(0, dtype=bool)

    def _per_pair(self, a: str, b: str, pred: Callable[[object, object], bool],
                  prepare: Callable[[object], object] | None = None) -> np.ndarray:
        """``pred`` of the two observables' values per state, evaluated once per distinct pair of
        values (``prepare``: applied once per distinct value of each side first)."""
        ua, ca = self.factorise(a)
        ub, cb = self.factorise(b)
        if prepare is not None:
            ua, ub = [prepare(u) for u in ua], [prepare(u) for u in ub]
        key = ca * max(len(ub), 1) + cb
        keys, inv = np.unique(key, return_inverse=True)
        table = np.fromiter((pred(ua[k // max(len(ub), 1)], ub[k % max(len(ub), 1)]) for k in keys.tolist()),
                            dtype=bool, count=len(keys))
        return table[inv.reshape(-1)] if len(key) else np.zeros(0, dtype=bool)

    # -------------------------------------------------------------------- evaluation
    def evaluate(self, atom: ctl_ast.Atom) -> Bounds:
        """(lower, upper) boolean arrays of the states satisfying ``atom`` (equal unless ``atom`` is
        ``enabled(...)`` on an incomplete structure)."""
        if atom not in self._cache:
            self._cache[atom] = self._evaluate(atom)
        return self._cache[atom]

    def _evaluate(self, atom: ctl_ast.Atom) -> Bounds:
        if isinstance(atom, ctl_ast.Enabled):
            return self._enabled(atom)
        try:
            if isinstance(atom, ctl_ast.Label):
                arr = self._label(atom)
            elif isinstance(atom, ctl_ast.Compare):
                arr = self._compare(atom)
            elif isinstance(atom, ctl_ast.Member):
                arr = self._membership(atom)
            else:  # pragma: no cover
                raise TypeError(atom)
        except TypeError as exc:
            raise self._err(atom, str(exc)) from None
        arr = np.ascontiguousarray(arr, dtype=bool)
        return arr, arr

    def _label(self, atom: ctl_ast.Label) -> np.ndarray:
        if atom.name in self.k.labels:
            return self.k.labels[atom.name]
        if atom.name in self.k.observables:
            uniq, _ = self.factorise(atom.name)
            if not all(isinstance(u, bool | np.bool_) for u in uniq):
                raise self._err(atom, f"observable {atom.name!r} is not boolean (values like {uniq[0]!r})",
                                f"a comparison such as '{atom.name} == value'")
            return self._per_value(atom.name, lambda v: bool(v))
        raise self._err(atom, f"unknown label {atom.name!r}", self._known())

    def _enabled(self, atom: ctl_ast.Enabled) -> Bounds:
        k = self.k
        act_ok = np.fromiter((atom.rule in (a.rule, str(a)) for a in k.actions), dtype=bool,
                             count=len(k.actions))
        lo = np.zeros(k.num_states, dtype=bool)
        if k.num_transitions and act_ok.any():
            edge_ok = act_ok[k.edge_action]
            lo[k.edge_src[edge_ok]] = True
        hi = lo if k.frontier is None else lo | k.frontier
        return lo, hi

    def _numeric_fast(self, name: str, op: str, const: object) -> np.ndarray | None:
        values = self.k.observables[name]
        if not (isinstance(values, np.ndarray) and values.dtype.kind in "iu" and isinstance(const, Fraction)):
            return None
        num, den = const.numerator, const.denominator
        scaled = values.astype(np.int64) * den if den != 1 else values
        if op == "==":
            return np.asarray(scaled == num, dtype=bool)
        if op == "!=":
            return np.asarray(scaled != num, dtype=bool)
        return np.asarray(_ORDER[op](scaled, num), dtype=bool)

    def _compare(self, atom: ctl_ast.Compare) -> np.ndarray:
        left, right, op = atom.left, atom.right, atom.op
        lo, ro = self._is_obs(left), self._is_obs(right)
        if not lo and not ro:
            names = [t.name for t in (left, right) if isinstance(t, ctl_ast.Ref)]
            what = f"unknown observable {names[0]!r}" if names else "neither side is an observable"
            raise self._err(atom, what, self._known())
        if lo and ro:
            assert isinstance(left, ctl_ast.Ref) and isinstance(right, ctl_ast.Ref)
            if op in ("==", "!="):
                eq = self._per_pair(left.name, right.name, lambda a, b: a == b, prepare=canonical)
                return eq if op == "==" else ~eq
            return self._per_pair(left.name, right.name,
                                  lambda a, b: _order(a, canonical(b) if not _is_number(b)
                                                      else _as_fraction(b), op))
        if not lo:  # constant OP observable: mirror
            left, right = right, left
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
        assert isinstance(left, ctl_ast.Ref)
        const = self._const(right)
        fast = self._numeric_fast(left.name, op, const)
        if fast is not None:
            return fast
        if isinstance(const, _Symbol):
            self._check_symbol(left.name, const)
        if op in ("==", "!="):
            eq = self._per_value(left.name, lambda v: matches(v, const))
            return eq if op == "==" else ~eq
        if isinstance(const, _Symbol):
            raise TypeError(f"unknown observable {str(const)!r} (symbols cannot be ordered)")
        return self._per_value(left.name, lambda v: _order(v, const, op))

    def _check_symbol(self, name: str, symbol: str) -> None:
        """A bare identifier that is not an observable is a symbol (``last == get_grad``); comparing
        one with an observable that never holds names (numbers, sets, vectors) is almost surely a
        misspelt observable, reported as such."""
        uniq, _ = self.factorise(name)
        if uniq and all(v is None or _is_number(v) or isinstance(v, bool | np.bool_ | tuple | frozenset)
                        for v in uniq):
            raise TypeError(f"unknown observable {symbol!r} (observable {name!r} holds no names)")

    def _membership(self, atom: ctl_ast.Member) -> np.ndarray:
        el, coll = atom.element, atom.collection
        eo, co = self._is_obs(el), self._is_obs(coll)
        if co and isinstance(coll, ctl_ast.Ref):
            if eo:
                assert isinstance(el, ctl_ast.Ref)
                res = self._per_pair(el.name, coll.name, lambda e, c: _member(canonical(e), c))
            else:
                const = self._const(el)
                res = self._per_value(coll.name, lambda c: _member(const, c))
        elif eo and isinstance(el, ctl_ast.Ref):
            cconst = self._const(coll)
            if not isinstance(cconst, frozenset | tuple):
                raise TypeError(f"{coll} is not a collection (write {{a, b}} or an observable)")
            res = self._per_value(el.name, lambda e: any(matches(e, c) for c in cconst))
        else:
            name = coll.name if isinstance(coll, ctl_ast.Ref) else str(coll)
            raise TypeError(f"unknown observable {name!r}")
        return ~res if atom.negated else res


def observable_names(kripke: Kripke) -> Sequence[str]:
    return sorted(kripke.observables)
