"""The formal specification shipped with flcheck (installed as the package ``flcheck_spec``).

Holds the lark grammars (``grammar/``), the bundled scenario files (``scenarios/``), ``SPEC.md`` and
``IIIF.md``, the helpers both languages' parsers use (:func:`lalr_parser`, :func:`describe_terminals`,
:func:`unquote`) and, in :mod:`flcheck_spec.vocab`, the values the model and the checker share.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # lark is imported when a parser is built (``flcheck --version`` needs none)
    from lark import Lark, Token, Tree

ROOT = Path(__file__).resolve().parent

#: The deepest nesting a formula or a scenario expression may have: operators, parentheses and chains
#: (``a <-> b <-> c`` nests as ``(a <-> b) <-> c``). Deeper input is refused with its position
#: (:func:`too_deep`); the parsers, printers and structural equality of the syntax trees recurse once
#: per level, within a recursion limit raised to match (:func:`lalr_parser`).
MAX_NESTING = 1000


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
    scenario language (flmodel), which may not import each other. Raises the recursion limit to what
    :data:`MAX_NESTING` levels need (a dozen Python frames per level at most)."""
    from lark import Lark  # lazy: see the imports

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 12 * MAX_NESTING + 1_000))
    options = {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": maybe_placeholders}
    try:
        return Lark(grammar_text(name), cache=True, **options)
    except OSError:  # pragma: no cover - unwritable temp directory
        return Lark(grammar_text(name), **options)


def describe_terminals(parser: Lark, names: Iterable[str] | None, readable: Mapping[str, str]) -> list[str]:
    """Readable, sorted, de-duplicated descriptions of the terminals a parse error expected: the
    ``readable`` text of a named terminal, the quoted literal of an anonymous one, else its name."""
    from lark.lexer import PatternStr  # lazy: see the imports

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


def too_deep(tree: Tree[Token],
             chain: Callable[[Tree[Token]], bool] = lambda _node: False) -> Tree[Token] | None:
    """The first node (in document order) of ``tree`` nested deeper than :data:`MAX_NESTING`, or
    ``None``. The root is at depth 0 and a node one level below its parent; the operands of a node for
    which ``chain`` is true (an n-ary parse node that folds into nested binary ones, ``a <-> b <-> c``)
    are ``k - 1`` levels below it, ``k`` the number of operands; leaves (nodes of tokens only, such as a
    name) do not count. An explicit stack: no recursion however deep the input."""
    from lark import Tree  # lazy: see the imports

    stack: list[tuple[Tree[Token], int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        children = [c for c in node.children if isinstance(c, Tree)]
        if not children:
            continue
        if depth > MAX_NESTING:
            return node
        step = max(1, len(children) - 1) if chain(node) else 1
        stack.extend((child, depth + step) for child in reversed(children))
    return None
