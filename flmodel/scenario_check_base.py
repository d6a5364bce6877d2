"""What the semantic checks of a scenario share (:mod:`flmodel.scenario_check`): the report of problems
with positions, the names collected so far (:class:`ChecksBase`) and the text of known names."""

from __future__ import annotations

from typing import Any

from flcheck_spec.vocab import Position

from flmodel.errors import Diagnostic
from flmodel.scenario_ast import DataDecl, Scenario
from flmodel.scenario_family import diagnostic

__all__ = ["MAX_EXACT_BITS", "ChecksBase", "Report", "known_text"]

#: The largest exact number a statement may ask for (bits of a numerator or denominator): a loss with
#: ``retries K`` needs ``P^(K+1)`` exactly, and a number of a hundred million digits would take minutes in
#: one arithmetic operation that no time limit can interrupt.
MAX_EXACT_BITS = 1 << 20


class Report:
    """The problems found so far; a problem without a known position is reported at ``default``."""

    def __init__(self, default: Position):
        self.items: list[Diagnostic] = []
        self.default = default

    def add(self, pos: Position | None, message: str) -> None:
        where = pos if pos is not None and pos.line is not None else self.default
        self.items.append(diagnostic(where, message))


def known_text(known: list[str] | set[str] | tuple[str, ...]) -> str:
    """``known: a, b, …`` (the first ten names), for a message about an unknown name."""
    items = sorted(known)
    if not items:
        return "none declared"
    if len(items) > 10:
        items = [*items[:10], "…"]
    return "known: " + ", ".join(items)


class ChecksBase:
    """The scenario, the report and the names the checks collect in file-section order (locations,
    links, actors, points, …): a check may rely on what the checks before it collected."""

    def __init__(self, s: Scenario, extras: dict[str, Any]):
        self.s = s
        self.extras = extras
        self.positions: dict[str, Position] = extras.get("positions", {})
        self.report = Report(Position(s.source, 1, 1))
        self.locs: set[str] = set()
        self.undeclared: dict[str, Position] = {}  # location -> first use, when none is declared
        self.link_edges: dict[tuple[str, str], Position] = {}
        self.declared_edges: dict[tuple[str, str], Position] = {}  # static links and contacts
        self.actor_locs: dict[str, str] = {}
        self.clients = {c.actor for c in s.clients}
        self.points: dict[str, DataDecl] = {}
        self.features: int | None = None  # the number of features most data points have
        self.dataset: set[str] = set()
        self.neighbour_names: set[str] = set()

    def _need_location(self, name: str | None, pos: Position, what: str) -> None:
        if name is None or name in self.locs:
            return
        if not self.s.locations:  # no locations statement at all: one message, see missing_locations
            self.undeclared.setdefault(name, pos)
            return
        self.report.add(pos, f"unknown location {name!r} in {what}; {known_text(self.locs)}")
