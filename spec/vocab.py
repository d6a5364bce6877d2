"""Vocabulary shared by the model (``flmodel``) and the checker (installed as ``flcheck_spec.vocab``).

Both packages may import this module; neither may import the other. It holds the values that cross the
seam between them:

* :class:`Action` — what produced a transition (the label of a step of IIIf's ``state`` class, see
  ``spec/IIIF.md``, MC);
* :class:`Position` — where in an input (a scenario, a formula, a model file) something is;
* :class:`Diagnostic` — one problem in an input: a position and a message.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True, slots=True)
class Action:
    """What produced a transition: the rule (e.g. ``get_grad``), the actor performing it, its location,
    and a detail naming the nondeterministic choice (e.g. ``Part=…`` for ``put_part``, the sampled noisy
    update). Steps of one action leaving one state form one probability distribution.
    ``str(action)`` is the human reading, e.g. ``get_grad(c1@loc1) [l=…]``."""

    rule: str
    actor: str | None = None
    location: str | None = None
    detail: str = ""

    def __str__(self) -> str:
        text = self.rule
        if self.actor is not None:
            text += f"({self.actor}"
            if self.location is not None:
                text += f"@{self.location}"
            text += ")"
        if self.detail:
            text += f" [{self.detail}]"
        return text


@dataclass(frozen=True)
class Position:
    """A place in an input: ``source`` is a file name or a description such as ``"<formula>"``; ``line``
    and ``column`` are 1-based, ``None`` when unknown. ``str(position)`` reads ``source:line:column``
    (the unknown parts omitted)."""

    source: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = self.source
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return where


@dataclass(frozen=True)
class Diagnostic:
    """One problem in an input: where (:class:`Position`) and what. ``str(diagnostic)`` reads
    ``source:line:column: message``."""

    position: Position
    message: str

    @property
    def source(self) -> str:
        return self.position.source

    @property
    def line(self) -> int | None:
        return self.position.line

    @property
    def column(self) -> int | None:
        return self.position.column

    def __str__(self) -> str:
        return f"{self.position}: {self.message}"
