"""How values leave flcheck: one text formatter and one strict-JSON encoder for every command and report.

Model values are exact numbers (``Fraction``), names, booleans, tuples (vectors) and sets of them.

Text (:func:`value_text`): ``1/2``, ``true``, ``(1, 2)``, ``{sat1, sat2}`` (set members sorted); figures
(:func:`number_text`): ``9009``, ``2263/11664 ≈ 0.194016``, ``0.123457`` (one format in every command).

Terminal safety is :mod:`checker.terminal`'s (no numpy: every command's start-up imports it); JSON
escapes the same control characters as ``\\uXXXX``.

JSON (:func:`json_value`, :func:`dumps`) is strict JSON (RFC 8259, no ``NaN``/``Infinity`` tokens):

- an integer-valued ``Fraction`` is a JSON integer, any other ``Fraction`` the string ``"p/q"``
  (:func:`fraction_str`: exact whatever its size; an integer past Python's 4,300-digit conversion limit is
  a string of its digits);
- a finite float is a JSON number; ``+∞``, ``−∞`` and NaN are the strings ``"inf"``, ``"-inf"``, ``"nan"``;
- tuples and lists are arrays, sets are arrays sorted by their JSON text, mappings are objects with
  string keys, numpy scalars and arrays are converted to Python values first;
- any other object is its ``str``.

>>> from fractions import Fraction
>>> dumps({"eps": float("inf"), "p": Fraction(1, 3), "n": Fraction(4), "s": {"b", "a"}})
'{"eps": "inf", "p": "1/3", "n": 4, "s": ["a", "b"]}'
>>> value_text((Fraction(1, 2), frozenset({"sat2", "sat1"}), True))
'(1/2, {sat1, sat2}, true)'
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from checker.terminal import CONTROL

__all__ = ["DIGITS", "dumps", "fraction_str", "int_str", "json_value", "number_text", "value_text"]


#: Digits of one chunk of :func:`int_str` (below the interpreter's ``int`` ↔ ``str`` conversion limit).
_CHUNK = 4000


def int_str(n: int) -> str:
    """The decimal digits of ``n``, exact whatever its size (``str`` refuses integers of more than 4,300
    digits: an exact ratio of a long composition can have more), by chunks of :data:`_CHUNK` digits.

    >>> int_str(-12), len(int_str(10**5000)), int_str(10**5000)[:3]
    ('-12', 5001, '100')
    """
    if n < 0:
        return "-" + int_str(-n)
    if n.bit_length() < 13000:  # < 10^3913: within the limit
        return str(n)
    base = 10**_CHUNK
    chunks: list[int] = []
    while n:
        n, r = divmod(n, base)
        chunks.append(r)
    return str(chunks[-1]) + "".join(f"{c:0{_CHUNK}d}" for c in reversed(chunks[:-1]))


def fraction_str(x: Fraction) -> str:
    """``x`` exactly as ``p/q`` (``p`` alone when ``q = 1``): ``str(x)``, for fractions of any size.

    >>> fraction_str(Fraction(3, 4)), fraction_str(Fraction(10**5000, 3))[-4:]
    ('3/4', '00/3')
    """
    if x.denominator == 1:
        return int_str(x.numerator)
    return f"{int_str(x.numerator)}/{int_str(x.denominator)}"


def json_value(value: object) -> Any:
    """``value`` as a strict-JSON-compatible Python value (the convention of the module docstring)."""
    if isinstance(value, np.ndarray):
        return [json_value(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if value.bit_length() < 13000 else int_str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, Fraction):
        return json_value(value.numerator) if value.denominator == 1 else fraction_str(value)
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [json_value(v) for v in value]
    if isinstance(value, set | frozenset):
        items = [json_value(v) for v in value]
        return sorted(items, key=lambda x: json.dumps(x, sort_keys=True))
    return str(value)


def dumps(obj: object, *, indent: int | None = None) -> str:
    r"""``obj`` as strict JSON text (UTF-8 characters kept, ``allow_nan=False`` as a guarantee; the control
    characters JSON itself leaves raw, DEL, C1 and the bidirectional overrides, written as ``\uXXXX``).

    >>> dumps({"t": "a\x1b[2Jb\x9b\u202e"})
    '{"t": "a\\u001b[2Jb\\u009b\\u202e"}'
    """
    text = json.dumps(json_value(obj), indent=indent, ensure_ascii=False, allow_nan=False)
    return CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)  # only inside strings: still JSON


#: Significant digits of every approximate figure flcheck prints (terminal tables, evidence, reports).
DIGITS = 6


def number_text(x: Fraction | float | int, *, max_denominator: int = 10**12) -> str:
    """A figure as every command prints it: an integer as it is (no thousands separators); an exact
    rational as ``p/q ≈ d`` with :data:`DIGITS` significant digits (the decimal alone when the
    denominator exceeds ``max_denominator``); a float with :data:`DIGITS` significant digits; ``inf``.

    >>> number_text(Fraction(2263, 11664)), number_text(Fraction(9009)), number_text(0.1234567)
    ('2263/11664 ≈ 0.194016', '9009', '0.123457')
    """
    if isinstance(x, Fraction):
        if x.denominator == 1:
            return int_str(x.numerator)
        if x.denominator > max_denominator or x.numerator.bit_length() > 400:
            return _approx(x)
        return f"{x} ≈ {_approx(x)}"
    if isinstance(x, int | np.integer):
        return int_str(int(x))
    return f"{float(x):.{DIGITS}g}"


def _approx(x: Fraction) -> str:
    """``x`` to :data:`DIGITS` significant digits, also past a float's range.

    >>> _approx(Fraction(1, 3)), _approx(Fraction(3 * 10**400, 7)), _approx(Fraction(-(10**400)))
    ('0.333333', '4.28571e+399', '-1.00000e+400')
    """
    try:
        return f"{float(x):.{DIGITS}g}"
    except OverflowError:  # |x| > 1.8e308: the mantissa and the decimal exponent, exactly
        sign, mant = ("-", -x) if x < 0 else ("", x)
        digits = math.floor((mant.numerator.bit_length() - mant.denominator.bit_length()) * math.log10(2))
        mant /= Fraction(10) ** digits
        while mant >= 10:
            mant, digits = mant / 10, digits + 1
        while mant < 1:
            mant, digits = mant * 10, digits - 1
        return f"{sign}{float(mant):.{DIGITS - 1}f}e+{digits}"


def value_text(value: object) -> str:
    """Human text of a model value (``1/2``, ``{sat1, sat2}``, ``(1, 2)``, ``true``; numpy arrays as
    tuples)."""
    if isinstance(value, np.ndarray):
        value = tuple(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(sorted(value_text(v) for v in value)) + "}"
    if isinstance(value, tuple | list):
        return "(" + ", ".join(value_text(v) for v in value) + ")"
    if isinstance(value, Fraction):
        return fraction_str(value)
    return str(value)
