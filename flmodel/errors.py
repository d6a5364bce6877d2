"""Errors raised by flmodel for bad input (malformed scenarios, inconsistent models).

:class:`Diagnostic` (one problem: a position and a message) is the shared vocabulary's
(``flcheck_spec.vocab``), re-exported here."""

from __future__ import annotations

from flcheck_spec.vocab import Diagnostic, Position

__all__ = ["Diagnostic", "ModelError"]

#: Where a problem of a model built in Python (not read from a file) is reported.
MODEL_POSITION = Position("<model>")


class ModelError(ValueError):
    """A model or scenario is malformed or inconsistent. Carries every problem found
    (``diagnostics``), so that all of them are reported at once."""

    def __init__(self, diagnostics: list[Diagnostic] | str):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic(MODEL_POSITION, diagnostics)]
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))
