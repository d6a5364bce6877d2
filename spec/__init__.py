"""The formal specification shipped with flcheck (installed as the package ``flcheck_spec``).

Holds the lark grammars (``grammar/``), the bundled scenario files (``scenarios/``), ``SPEC.md`` and
``IIIF.md``, the helpers both languages' parsers use (:func:`lalr_parser`, :func:`describe_terminals`,
:func:`unquote`) and, in :mod:`flcheck_spec.vocab`, the values the model and the checker share.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

from lark import Lark
from lark.lexer import PatternStr

ROOT = Path(__file__).resolve().parent


def resource(*parts: str) -> Path:
    """Path of a file shipped in the specification, e.g. ``resource("grammar", "ctl.lark")``."""
    path = ROOT.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"flcheck specification file not found: {path}")
    return path


def grammar_text(name: str) -> str:
    """Text of the lark grammar ``spec/grammar/NAME``."""
    return resource("grammar", name).read_text(encoding="utf-8")


def bundled_scenarios() -> dict[str, Path]:
    """The bundled scenario files, by stem (file name without ``.fl``)."""
    return {p.stem: p for p in sorted((ROOT / "scenarios").glob("*.fl"))}


@functools.cache
def lalr_parser(name: str, *, maybe_placeholders: bool = False) -> Lark:
    """The LALR parser of grammar ``spec/grammar/NAME`` with positions, built once per process.

    lark caches the parse tables in the temp directory (keyed by grammar and options); an
    unwritable temp directory only costs the cache. Shared by the property language (checker) and the
    scenario language (flmodel), which may not import each other."""
    options = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": maybe_placeholders}
    try:
        return Lark(grammar_text(name), cache=True, **options)
    except OSError:  # pragma: no cover - unwritable temp directory
        return Lark(grammar_text(name), **options)


def describe_terminals(parser: Lark, names: Iterable[str] | None, readable: Mapping[str, str]) -> list[str]:
    """Readable, sorted, de-duplicated descriptions of the terminals a parse error expected: the
    ``readable`` text of a named terminal, the quoted literal of an anonymous one, else its name."""

    def describe(name: str) -> str:
        if name in readable:
            return readable[name]
        try:
            pattern = parser.get_terminal(name).pattern
        except KeyError:
            return name
        return repr(pattern.value) if isinstance(pattern, PatternStr) else name

    return sorted({describe(n) for n in names or ()})


def unquote(literal: str) -> str:
    """The text of a quoted string token of the grammars (``"a\\"b"`` -> ``a"b``): the quotes dropped,
    ``\\n`` and ``\\t`` read as newline and tab, any other escaped character as itself."""
    body = literal[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append({"n": "\n", "t": "\t"}.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)
