"""Plain-text tables for the terminal output of the commands."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["table_text"]


def table_text(rows: Sequence[Sequence[str]], *, rule: bool = False) -> str:
    """``rows`` as left-aligned columns two spaces apart (trailing blanks stripped); ``rule``: a line of
    dashes under the first row (the header).

    >>> print(table_text([("a", "bb"), ("ccc", "d")], rule=True))
    a    bb
    ---  --
    ccc  d
    """
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for j, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if rule and j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
