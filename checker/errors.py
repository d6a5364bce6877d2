"""Errors that the CLI turns into exit code 2 ("bad input") with a precise message."""

from __future__ import annotations

import errno
import os

from flcheck_spec.vocab import Position

__all__ = ["ExplorationIncomplete", "InputError", "LimitReached", "Position", "Undecided", "os_error"]


class InputError(ValueError):
    """Bad input: a malformed model file, formula, option or scenario.

    ``str(err)`` reads ``file:line:col: message`` (position parts omitted when unknown), and
    ``expected`` says what would have been accepted there.
    """

    def __init__(self, message: str, position: Position | None = None, expected: str | None = None):
        self.message = message
        self.position = position
        self.expected = expected
        super().__init__(self.__str__())

    def __str__(self) -> str:
        text = self.message
        if self.expected:
            text += f" (expected {self.expected})"
        return f"{self.position}: {text}" if self.position else text


class LimitReached(BaseException):
    """A limit (time, memory) was passed outside an exploration that stops itself at it (while a
    model was built, a property decided, a tree generated): the watchdog of
    :class:`checker.mc.explore.Watchdog` raises it in the main thread, and cooperative loops
    (:func:`checker.mc.exploration.check_limits`) raise it where the cost is. ``reason`` names the limit
    like ``Kripke.limit_reason`` does (``time limit of 120 CPU s reached``). A ``BaseException`` (like
    ``KeyboardInterrupt``), so that no ``except Exception`` of an engine swallows it."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class ExplorationIncomplete(RuntimeError):
    """An exploration stopped by a limit before the result could be decided: the verdict is
    ``unknown`` (exit 1), not bad input. ``limit_reason`` says which limit (e.g. ``state limit of 5
    reached``); ``str(err)`` is the whole explanation."""

    def __init__(self, message: str, limit_reason: str | None = None):
        self.message = message
        self.limit_reason = limit_reason
        super().__init__(message)


class Undecided(ValueError):
    """A well-formed query that an engine cannot decide for a reason it states (e.g. no memoryless
    scheduler exists for the observations): the verdict is ``unknown`` (exit 1). Any other exception of
    an engine is a bug (exit 3)."""


def os_error(path: str | os.PathLike[str], exc: OSError, verb: str = "write") -> InputError:
    """The one-line bad-input error of a failed ``verb`` (write, read, lock) of ``path``: the path and
    the system's reason (``cannot write out.md: No space left on device [ENOSPC]``)."""
    reason = exc.strerror or str(exc)
    code = errno.errorcode.get(exc.errno or 0)
    return InputError(f"cannot {verb} {path}: {reason}" + (f" [{code}]" if code else ""))
