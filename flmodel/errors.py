"""Errors raised by flmodel for bad input (malformed scenarios, inconsistent models)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Diagnostic:
    """One problem in a scenario: where (file, 1-based line and column, when known) and what."""

    source: str
    line: int | None
    column: int | None
    message: str

    def __str__(self) -> str:
        where = self.source
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"


class ModelError(ValueError):
    """A model or scenario is malformed or inconsistent. Carries every problem found
    (``diagnostics``), so that all of them are reported at once."""

    def __init__(self, diagnostics: list[Diagnostic] | str):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic("<model>", None, None, diagnostics)]
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))
