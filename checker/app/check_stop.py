"""What ``flcheck check`` reports when it is stopped before the end: by Ctrl-C (SIGINT) or by a limit
(time, memory) that a property's engine or the exploration passed.

The properties decided before the stop keep their verdicts; the property being decided and every later
one are ``unknown`` ("not checked: … before it"). :class:`Interruption` records the cause (``sigint``
or ``limit``), the reason and the phase, and is the report's ``interrupted`` key under ``--json``
(``null`` when the check ran to the end). ``flcheck check`` prints the table either way and exits 130
after Ctrl-C, 1 after a limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from checker.errors import LimitReached
from checker.mc.kripke import Kripke

__all__ = ["INTERRUPT_REASON", "Interruption", "interruption_of", "unexplored"]

#: The reason of a stop by Ctrl-C.
INTERRUPT_REASON = "interrupted (Ctrl-C)"


@dataclass(frozen=True)
class Interruption:
    """Why a check stopped early: ``cause`` ``sigint`` (Ctrl-C) or ``limit``; ``reason`` (``time limit of
    60 CPU s reached``); ``during`` (the phase: ``exploring``, ``checking NAME``)."""

    cause: Literal["sigint", "limit"]
    reason: str
    during: str
    #: the stopped computation's frames (its explored states among them), freed with the report
    frames: object = field(default=None, repr=False, compare=False)

    def json(self) -> dict[str, Any]:
        return {"cause": self.cause, "reason": self.reason, "during": self.during}


def interruption_of(exc: BaseException, during: str) -> Interruption:
    """The :class:`Interruption` of a ``KeyboardInterrupt`` or :class:`~checker.errors.LimitReached`."""
    if isinstance(exc, LimitReached):
        return Interruption("limit", exc.reason, during, exc.__traceback__)
    return Interruption("sigint", INTERRUPT_REASON, during, exc.__traceback__)


def unexplored(source: str, reason: str) -> Kripke:
    """The empty, incomplete structure of a check stopped before its exploration ended."""
    return Kripke(num_states=0, initial=np.zeros(0, dtype=np.int64), succ_ptr=np.zeros(1, dtype=np.int64),
                  succ_idx=np.zeros(0, dtype=np.int64), edge_action=np.zeros(0, dtype=np.int32),
                  complete=False, limit_reason=reason, source=source)
