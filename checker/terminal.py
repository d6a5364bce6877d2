"""Terminal safety: text that comes from the input (a scenario's title, names, formulas, file names,
labels of explicit files) may hold control characters: an escape sequence could recolour, hide or
overwrite what flcheck prints, set the window title or write the clipboard. Everything the command line
prints goes through :class:`TerminalSafeStream`, which shows every control character as an escape
(``\\x1b``, ``\\u202e``); the only sequences that pass are flcheck's own: text built as
:class:`TerminalText` (coloured tables) and :data:`CLEAR_LINE` at the start of a write (the progress
line). Imported by every command at start-up: no numpy here.

>>> terminal_text("a\\x1b[2Jb")
'a\\\\x1b[2Jb'
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Iterator
from typing import IO, Any

__all__ = ["CLEAR_LINE", "CONTROL", "SafeOutput", "TerminalSafeStream", "TerminalText",
           "terminal_safe_output", "terminal_text"]


#: Control characters a terminal may act on: C0 but tab and newline, DEL, C1, and the Unicode
#: bidirectional controls that reorder what is shown ("Trojan source").
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: str) -> str:
    r"""``text`` with every control character a terminal may act on shown as an escape (tab and newline
    kept).

    >>> terminal_text("title\x1b]0;pwned\x07 ok\tx\n\u202eevil")
    'title\\x1b]0;pwned\\x07 ok\tx\n\\u202eevil'
    """
    return CONTROL.sub(_escape, text)


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
