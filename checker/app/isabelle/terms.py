"""Isabelle text of flcheck values: identifiers, string literals, rationals, vectors, finite sets,
actors, quoted terms and comment-safe ASCII text, and the Isabelle symbols the exported terms use."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

EQUIV = "\\<equiv>"
IN = "\\<in>"
NOTIN = "\\<notin>"
TURNSTILE = "\\<turnstile>"
#: reflexive transitive closure of a predicate (``R\<^sup>*\<^sup>* s t``)
RTC = "\\<^sup>*\\<^sup>*"
SUBSETEQ = "\\<subseteq>"
FUN_ARROW = "\\<Rightarrow>"
TIMES = "\\<times>"
NOT = "\\<not>"
INTER = "\\<inter>"
NEQ = "\\<noteq>"


class Untranslatable(Exception):
    """A property (or part of it) has no counterpart in the exported Isabelle model."""


_STRING_OK = re.compile(r"[A-Za-z0-9_ .:+\-/()\[\]=<>,#@!?*&%$~^|{}]*\Z")


def ident(text: str, prefix: str = "") -> str:
    """An Isabelle identifier made of ``text``: letters, digits and ``_`` (others become ``_``),
    starting with a letter (``prefix`` is put in front, default ``x`` when needed).

    >>> ident("sat-1", "loc_")
    'loc_sat_1'
    """
    body = re.sub(r"[^A-Za-z0-9_]", "_", text)
    out = prefix + body
    if not out or not out[0].isalpha():
        out = "x" + out
    return out


def prefixed_ident(text: str, prefix: str) -> str:
    """``ident(text, prefix)`` unless ``text`` already starts with ``prefix``."""
    return ident(text) if text.startswith(prefix) else ident(text, prefix)


def theory_name(scenario: str) -> str:
    """The theory (and file) name of a scenario: ``Scenario_<name>``."""
    return ident(scenario, "Scenario_")


def isa_string(text: str) -> str:
    """An Isabelle string literal ``''text''``; raises :class:`ValueError` for characters the export
    cannot write inside one (quotes, backslashes, non-ASCII)."""
    if not _STRING_OK.match(text) or "''" in text:
        raise ValueError(f"name {text!r} cannot be written as an Isabelle string literal")
    return "''" + text + "''"


def rat(number: Fraction | int) -> str:
    """An exact rational as an Isabelle term: ``3``, ``(3 / 10)``, ``(- 2)``, ``(- (1 / 2))``."""
    number = Fraction(number)
    mag = abs(number)
    body = str(mag.numerator) if mag.denominator == 1 else f"({mag.numerator} / {mag.denominator})"
    return body if number >= 0 else f"(- {body})"


def vec(v: Sequence[Fraction]) -> str:
    """A parameter vector as a ``rat list`` term."""
    return "[" + ", ".join(rat(x) for x in v) + "]"


def set_term(items: Iterable[str]) -> str:
    """A finite set term of already-written items, sorted for determinism."""
    xs = sorted(set(items))
    return "{" + ", ".join(xs) + "}" if xs else "{}"


def actor(name: str) -> str:
    """``Actor ''name''``."""
    return f"Actor {isa_string(name)}"


def quoted(term: str) -> str:
    """Quote an inner-syntax term for outer syntax."""
    if '"' in term:
        raise ValueError(f"term contains a double quote: {term!r}")
    return f'"{term}"'


#: ASCII spellings of the mathematical characters that property texts and descriptions use.
ASCII_SPELLINGS = {"◇": "<>", "ε": "eps", "δ": "delta", "η": "eta", "≤": "<=", "≥": ">=", "−": "-", "·": "*",
                   "≈": "~", "→": "->", "⟹": "==>", "∈": "in", "∉": "notin", "∅": "{}", "×": "x", "≠": "!=",
                   "∇": "grad ", "Σ": "sum ", "ℓ": "l", "°": " deg"}


def ascii_text(text: str) -> str:
    """Isabelle theory files are ASCII (symbols are written \\<name>): replace the usual mathematical
    characters by ASCII spellings and any other non-ASCII character by '?'."""
    return "".join(ch if ord(ch) < 128 else ASCII_SPELLINGS.get(ch, "?") for ch in text)


def comment_safe(text: str) -> str:
    """Text safe inside a cartouche or comment: ASCII, no cartouche or comment delimiters, no double
    quotes."""
    return ascii_text(
        text.replace("\\<open>", "<").replace("\\<close>", ">").replace("(*", "( *").replace("*)", "* )")
        .replace('"', "'")
    )


@dataclass
class TheoryLines:
    """The lines of a theory text being written."""

    lines: list[str] = field(default_factory=list)

    def add(self, *xs: str) -> None:
        self.lines.extend(xs)

    def text(self, body: str) -> None:
        """A ``text`` block (made comment-safe) and an empty line."""
        body = comment_safe(body)
        self.lines.append(f"text \\<open>{body}\\<close>")
        self.lines.append("")
