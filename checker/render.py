"""How values leave flcheck: one text formatter and one strict-JSON encoder for every command and report.

Model values are exact numbers (``Fraction``), names, booleans, tuples (vectors) and sets of them.

Text (:func:`value_text`): ``1/2``, ``true``, ``(1, 2)``, ``{sat1, sat2}`` (set members sorted); figures
(:func:`number_text`): ``9009``, ``2263/11664 ≈ 0.194016``, ``0.123457`` (one format in every command).

Terminal safety (:func:`terminal_text`, :func:`terminal_safe_output`): text that comes from the input
(a scenario's title, names, formulas, file names, labels of explicit files) may hold control characters:
an escape sequence could recolour, hide or overwrite what flcheck prints, set the window title or write
the clipboard. Everything the command line prints goes through :class:`TerminalSafeStream`, which shows
every control character as an escape (``\\x1b``, ``\\u202e``); the only sequences that pass are flcheck's
own: text built as :class:`TerminalText` (coloured tables) and :data:`CLEAR_LINE` at the start of a write
(the progress line). JSON escapes the same characters as ``\\uXXXX``.

JSON (:func:`json_value`, :func:`dumps`) is strict JSON (RFC 8259, no ``NaN``/``Infinity`` tokens):

- an integer-valued ``Fraction`` is a JSON integer, any other ``Fraction`` the string ``"p/q"``;
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

import contextlib
import io
import json
import math
import os
import re
import sys
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import IO, Any

import numpy as np

__all__ = ["CLEAR_LINE", "DIGITS", "SafeOutput", "TerminalSafeStream", "TerminalText", "dumps", "json_value",
           "number_text", "terminal_safe_output", "terminal_text", "value_text"]


def json_value(value: object) -> Any:
    """``value`` as a strict-JSON-compatible Python value (the convention of the module docstring)."""
    if isinstance(value, np.ndarray):
        return [json_value(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else str(value)
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
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)  # only inside strings: still JSON


#: Control characters a terminal may act on: C0 but tab and newline, DEL, C1, and the Unicode
#: bidirectional controls that reorder what is shown ("Trojan source").
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: str) -> str:
    r"""``text`` with every control character a terminal may act on shown as an escape (tab and newline
    kept).

    >>> terminal_text("title\x1b]0;pwned\x07 ok\tx\n\u202eevil")
    'title\\x1b]0;pwned\\x07 ok\tx\n\\u202eevil'
    """
    return _CONTROL.sub(_escape, text)


class TerminalText(str):
    """Text flcheck built for a terminal, whose control sequences are its own (a coloured table whose
    cells went through :func:`terminal_text`): :class:`TerminalSafeStream` writes it unchanged. Build it
    only from escaped text; ``print`` keeps the type (``__str__`` returns the object itself)."""

    __slots__ = ()

    def __str__(self) -> str:
        return self


#: Back to the start of the line and erase it: how a progress line is redrawn (the only control
#: sequence :class:`TerminalSafeStream` lets through at the start of a plain write; it can only erase
#: the current line, which holds at most a progress line).
CLEAR_LINE = TerminalText("\r\x1b[K")


class TerminalSafeStream:
    """A text stream that shows control characters as escapes (:func:`terminal_text`) in everything
    written to it, except :class:`TerminalText` and a leading :data:`CLEAR_LINE`; everything else
    (``isatty``, ``fileno``, ``buffer``, ...) is the wrapped stream's. A write or flush that fails (a full
    or read-only disk behind a redirection) is kept in ``failure`` and the rest of the output dropped:
    :func:`terminal_safe_output` reports it once the command is done."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.failure: OSError | None = None

    def write(self, text: str) -> int:
        if isinstance(text, TerminalText):
            safe: str = text
        elif text.startswith(CLEAR_LINE):
            safe = CLEAR_LINE + terminal_text(text[len(CLEAR_LINE):])
        else:
            safe = terminal_text(text)
        self._guard(lambda: self.stream.write(safe))
        return len(text)

    def flush(self) -> None:
        self._guard(self.stream.flush)

    def writelines(self, lines: Iterator[str]) -> None:
        for line in lines:
            self.write(line)

    def _guard(self, call: Any) -> None:
        if self.failure is not None:
            return
        try:
            call()
        except BrokenPipeError:
            raise  # the reader went away: the CLI stops quietly, as Unix tools do
        except OSError as exc:
            self.failure = exc

    def path(self) -> str:
        """The file behind the stream (``/proc/self/fd``), else its name (``<stdout>``)."""
        try:
            return os.readlink(f"/proc/self/fd/{self.stream.fileno()}")
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            return str(getattr(self.stream, "name", "the output stream"))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class SafeOutput:
    """What :func:`terminal_safe_output` yields: ``failed`` tells whether stdout or stderr could not be
    written (then the error is on stderr, where stderr still takes it)."""

    def __init__(self, out: TerminalSafeStream, err: TerminalSafeStream):
        self.out, self.err = out, err

    @property
    def failed(self) -> bool:
        return self.out.failure is not None or self.err.failure is not None


@contextlib.contextmanager
def terminal_safe_output() -> Iterator[SafeOutput]:
    """Route ``sys.stdout`` and ``sys.stderr`` through :class:`TerminalSafeStream` for the body; at its
    end, flush stdout and report a failed write of it on stderr (one line: the file and the reason)."""
    saved = sys.stdout, sys.stderr
    out, err = TerminalSafeStream(saved[0]), TerminalSafeStream(saved[1])
    sys.stdout, sys.stderr = out, err  # text streams by duck typing
    try:
        yield SafeOutput(out, err)
        with contextlib.suppress(BrokenPipeError, ValueError):
            out.flush()
        if out.failure is not None:
            from checker.errors import os_error  # lazy: the one error text of a failed write

            err.write(f"flcheck: error: {os_error(out.path(), out.failure)}\n")
            err.flush()
    finally:
        sys.stdout, sys.stderr = saved


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
            return str(x.numerator)
        if x.denominator > max_denominator:
            return f"{float(x):.{DIGITS}g}"
        return f"{x} ≈ {float(x):.{DIGITS}g}"
    if isinstance(x, int | np.integer):
        return str(int(x))
    return f"{float(x):.{DIGITS}g}"


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
    return str(value)
