"""Tables for the terminal output of the commands: plain text, or coloured (rich) on a terminal.

:func:`use_colour` decides: a terminal that is not ``TERM=dumb``, and no ``NO_COLOR`` in the environment
(https://no-color.org); piped output is always plain text, so scripts and tests read the same columns.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Sequence
from typing import IO

from checker.terminal import TerminalText, terminal_text

__all__ = ["VERDICT_STYLES", "table_text", "use_colour"]

#: The colour of each verdict word (and of the sweep statuses) in a coloured table.
VERDICT_STYLES = {"holds": "green", "holds vacuously": "cyan", "violated": "bold red", "unknown": "yellow",
                  "ok": "green", "incomplete": "yellow", "error": "bold red", "failed": "bold red",
                  "crashed": "bold red"}


def use_colour(stream: IO[str]) -> bool:
    """Whether to colour output to ``stream``: a terminal, ``NO_COLOR`` unset, ``TERM`` not ``dumb``."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def table_text(rows: Sequence[Sequence[str]], *, rule: bool = False, colour: bool = False) -> str:
    """``rows`` as left-aligned columns two spaces apart (trailing blanks stripped); ``rule``: a line of
    dashes under the first row (the header). ``colour``: a rich table for a terminal instead (bold
    header, verdict words coloured by :data:`VERDICT_STYLES`, long cells wrapped to the terminal's
    width, never cut).

    >>> print(table_text([("a", "bb"), ("ccc", "d")], rule=True))
    a    bb
    ---  --
    ccc  d
    """
    if colour:
        return _rich_table(rows, header=rule)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for j, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if rule and j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _rich_table(rows: Sequence[Sequence[str]], *, header: bool) -> str:
    from rich.console import Console  # lazy: only a terminal needs it
    from rich.table import Table  # lazy: with the console
    from rich.text import Text  # lazy: with the console

    table = Table(show_header=header, header_style="bold", box=None, pad_edge=False, padding=(0, 1))
    body = rows[1:] if header else rows
    for cell in rows[0] if header else range(len(rows[0])):
        table.add_column(terminal_text(str(cell)) if header else "", overflow="fold")
    for row in body:
        table.add_row(*(Text(terminal_text(c), style=VERDICT_STYLES.get(c, "")) for c in row))
    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system="standard", highlight=False,
            width=shutil.get_terminal_size((160, 24)).columns).print(table)
    return TerminalText(out.getvalue().rstrip("\n"))  # its colours are its own; the cells are escaped
