"""The verdict words used everywhere in flcheck (CLI text, JSON, reports)."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """Outcome of checking one property.

    ``UNKNOWN`` is used on incomplete structures (a limit was hit) when the partial structure does not
    already decide the property.
    """

    HOLDS = "holds"
    VIOLATED = "violated"
    HOLDS_VACUOUSLY = "holds vacuously"
    UNKNOWN = "unknown"

    def exit_code(self) -> int:
        """0 holds (also vacuously), 1 violated; unknown counts as not shown to hold (1)."""
        return 0 if self in (Verdict.HOLDS, Verdict.HOLDS_VACUOUSLY) else 1

    def __str__(self) -> str:
        return self.value


EXIT_HOLDS = 0
EXIT_VIOLATED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
#: Exit code after Ctrl-C (SIGINT), as shells report a process it ended (128 + 2).
EXIT_INTERRUPTED = 130
