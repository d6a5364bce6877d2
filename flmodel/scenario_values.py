"""The values every part of the scenario AST uses: positions of nodes made in Python (:data:`NOPOS`),
exact numbers' text (:func:`num_text`), names with their position (:class:`Named`) and privacy parameters
written exactly (:class:`EpsSpec`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from flcheck_spec.vocab import Position

__all__ = ["NOPOS", "EpsSpec", "Named", "num_text"]

#: The position of a node built in Python rather than read from a file.
NOPOS = Position("<scenario>")


def num_text(x: Fraction) -> str:
    """``3``, ``-1/2`` (exact text a scenario file reads back to the same Fraction)."""
    return str(Fraction(x))


@dataclass(frozen=True)
class Named:
    """A name written at a position (a location, an item of a list)."""

    name: str
    pos: Position = field(default=NOPOS, compare=False, repr=False)


@dataclass(frozen=True)
class EpsSpec:
    """A privacy parameter written exactly: ``value`` is ε itself, or (``log``) ``ε = ln(value)``."""

    value: Fraction
    log: bool = False

    def text(self) -> str:
        return f"ln({num_text(self.value)})" if self.log else num_text(self.value)

    def as_float(self) -> float:
        return math.log(self.value) if self.log else float(self.value)
