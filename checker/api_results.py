"""The typed results of the Python API (:mod:`checker.api`): each has ``to_json()`` (the JSON of the
matching ``flcheck`` command, without the envelope) and ``_repr_html_()`` (a small HTML table, shown by
Jupyter); ``raw`` is the engine's own result object for everything else.  Importing this module is
cheap: the engines are imported by the methods that need them."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from checker.errors import InputError

__all__ = [
    "AttackTreeResult",
    "CheckRun",
    "CtlResult",
    "DPResult",
    "Exploration",
    "ExportResult",
    "PrivacyResult",
    "ProbabilityResult",
    "PropertyOutcome",
]


def _with_readings(data: dict[str, Any], readings: Any) -> dict[str, Any]:
    from checker.app.ctl_query import with_readings  # lazy: the PCTL and dpCTL pipelines

    return with_readings(data, readings)


def _html_table(title: str, rows: Sequence[tuple[str, object]]) -> str:
    """A two-column HTML table (``key``, ``value``) under a bold title, every cell escaped."""
    body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                   for k, v in rows)
    return f"<div><b>{html.escape(title)}</b><table>{body}</table></div>"


def _grid(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """An HTML table with a header row, every cell escaped."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


@dataclass(frozen=True)
class Exploration:
    """The size of an explored state space (``flcheck explore --json``): states, transitions, deadlocks,
    breadth-first depth, initial states, whether the exploration completed, its CPU-independent wall
    time in seconds and who built it (``explorer``: ``batch``, ``plain`` or ``file``)."""

    source: str
    states: int
    transitions: int
    deadlocks: int
    depth: int
    initial: int
    complete: bool
    limit_reason: str | None
    seconds: float
    explorer: str = "plain"

    def to_json(self) -> dict[str, Any]:
        """The keys of ``flcheck explore --json`` (``time`` is :attr:`seconds`)."""
        return {"states": self.states, "transitions": self.transitions, "deadlocks": self.deadlocks,
                "depth": self.depth, "time": round(self.seconds, 6), "initial": self.initial,
                "complete": self.complete, "limit_reason": self.limit_reason, "explorer": self.explorer}

    def _repr_html_(self) -> str:
        return _html_table(f"explored {self.source}", [(k, v) for k, v in self.to_json().items()])


@dataclass(frozen=True)
class CtlResult:
    """``M ⊢ formula`` for one CTL/property-language formula ([IIIf-FL] ``⊢``: every initial state
    satisfies it): the verdict, and the witness or counterexample path as text and JSON."""

    formula: str
    verdict: str
    states: int
    satisfying_initial: int
    initial: int
    evidence: str
    raw: Any = field(repr=False, compare=False)
    #: on a scenario, the published rules' readings the check relied on (:mod:`flmodel.readings`)
    readings: Any = field(default=None, repr=False, compare=False)

    @property
    def holds(self) -> bool:
        """Whether the formula holds (also vacuously)."""
        return bool(self.raw.holds)

    def to_json(self) -> dict[str, Any]:
        """The keys of ``flcheck ctl --json``."""
        return _with_readings(self.raw.to_json(), self.readings)

    def __str__(self) -> str:
        return str(self.raw.render())

    def _repr_html_(self) -> str:
        rows: list[tuple[str, object]] = [
            ("verdict", self.verdict), ("states", self.states),
            ("initial states satisfying it", f"{self.satisfying_initial} of {self.initial}")]
        if self.evidence:
            rows.append(("evidence", self.evidence))
        return _html_table(self.formula, rows)


@dataclass(frozen=True)
class ProbabilityResult:
    """A probability query ``P=? [ψ]``, ``Pmin=? [ψ]`` or ``Pmax=? [ψ]`` (``flcheck ctl``): first-passage
    probabilities, ``value`` at the initial state (``None`` with several: see ``initial``), ``exact`` the
    same as a fraction ``"p/q"`` (``None`` from a float computation), and how the choices were resolved
    (``scheduler``: ``min``, ``max``, ``uniform`` for a scenario's ``P`` on an MDP, ``None`` on a Markov
    chain). ``values``: every state's probability."""

    formula: str
    quantifier: str
    scheduler: str | None
    value: float | None
    exact: str | None
    initial: tuple[tuple[int, float, str | None], ...]
    raw: Any = field(repr=False, compare=False)
    #: a query has a value, no verdict (``flcheck ctl`` exits 0)
    verdict: None = None
    readings: Any = field(default=None, repr=False, compare=False)

    @property
    def values(self) -> Any:
        """Every state's probability (a numpy array, exact ``Fraction`` s where the computation is)."""
        return self.raw.values

    def to_json(self) -> dict[str, Any]:
        """The keys of ``flcheck ctl --json`` for a query (without ``seconds``)."""
        return _with_readings(self.raw.json(), self.readings)

    def __str__(self) -> str:
        """As ``flcheck ctl`` prints it: ``formula = value`` per initial state."""
        from checker.app.ctl_query import value_text  # lazy: the PCTL pipeline

        several = len(self.initial) > 1
        return "\n".join(f"{self.formula} = {value_text(self.values[s])}"
                         + (f"  (state {s})" if several else "") for s, _, _ in self.initial)

    def _repr_html_(self) -> str:
        rows: list[tuple[str, object]] = [(f"state {s}", exact or value) for s, value, exact in self.initial]
        return _html_table(self.formula, [("scheduler", self.scheduler), *rows])


@dataclass(frozen=True)
class DPResult:
    """dpCTL's ``D{ε,δ}[ψ]`` between a scenario and a declared neighbour over a scheduler class
    (``flcheck ctl … --between NAME --scheduler C``): the verdict, the class (``scheduler_class``: its name,
    the name as given and what its schedulers see) and per direction the probabilities under the worst
    scheduler found (``to_json()['directions']``); ``reason`` when the class does not exist on the model
    (verdict ``unknown``)."""

    formula: str
    neighbour: str
    verdict: str
    scheduler_class: dict[str, str]
    reason: str
    raw: Any = field(repr=False, compare=False)
    readings: Any = field(default=None, repr=False, compare=False)

    @property
    def holds(self) -> bool:
        return self.verdict == "holds"

    def to_json(self) -> dict[str, Any]:
        """The keys of ``flcheck ctl --json`` for a ``D`` query (without ``seconds``)."""
        return _with_readings(self.raw.json(), self.readings)

    def __str__(self) -> str:
        return str(self.raw.text())

    def _repr_html_(self) -> str:
        rows: list[tuple[str, object]] = [("verdict", self.verdict), ("between", self.neighbour),
                                          ("scheduler class", self.scheduler_class["name"])]
        if self.reason:
            rows.append(("reason", self.reason))
        return _html_table(self.formula, rows)


@dataclass(frozen=True)
class PropertyOutcome:
    """One property of a scenario as ``flcheck check`` decided it: name, kind, verdict, its figure
    (``value``, exact text in ``value_text``), the formula and a one-line evidence."""

    name: str
    kind: str
    verdict: str
    value: float | None
    value_text: str
    formula: str
    evidence: str
    seconds: float


@dataclass(frozen=True)
class CheckRun:
    """Every property of a scenario decided on one exploration (``flcheck check``); ``exit_code`` is the
    command's (0 all hold, 1 some violated or unknown)."""

    scenario: str
    states: int
    transitions: int
    properties: tuple[PropertyOutcome, ...]
    exit_code: int
    raw: Any = field(repr=False, compare=False)

    def __getitem__(self, name: str) -> PropertyOutcome:
        """The outcome of the property called ``name`` (``KeyError`` when there is none)."""
        for p in self.properties:
            if p.name == name:
                return p
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        """The keys of ``flcheck check --json``."""
        data: dict[str, Any] = self.raw.to_json()
        return data

    def __str__(self) -> str:
        from checker.app.report import render_table  # lazy: the report module imports the tree renderer

        return render_table(self.raw)

    def _repr_html_(self) -> str:
        rows = [(p.name, p.kind, p.verdict, p.value_text, p.formula, p.evidence) for p in self.properties]
        head = f"<b>{html.escape(self.scenario)}</b>: {self.states} states, {self.transitions} transitions"
        header = ("property", "kind", "verdict", "figure", "formula", "evidence")
        return f"<div>{head}{_grid(header, rows)}</div>"


@dataclass(frozen=True)
class PrivacyResult:
    """NI-FL-DP ([IIIf-FL] III-C) of a model against its neighbouring datasets (``flcheck privacy``): the
    worst pair's ε* (``math.inf`` when no finite ε bounds the log-ratio), its δ at the checked ε, the best
    attacker's advantage and the verdict."""

    verdict: str
    epsilon: float
    epsilon_text: str
    delta: float
    advantage: float
    pairs: int
    raw: Any = field(repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The keys of ``flcheck privacy --json``."""
        from checker.app.privacy_budget import privacy_json  # lazy: the PLD accountant's scipy

        return privacy_json(self.raw)

    def _repr_html_(self) -> str:
        return _html_table("NI-FL-DP", [("verdict", self.verdict), ("ε*", self.epsilon_text),
                                         ("δ", self.delta), ("advantage", self.advantage),
                                         ("pairs judged", self.pairs)])


@dataclass(frozen=True)
class AttackTreeResult:
    """An IIIf attack tree for ``EF goal`` ([IIIf-FL] attack trees: valid iff ``EF goal``), or the
    invariant ``AG ¬goal`` proving none exists. ``found``: a valid tree was generated; ``text`` is the
    tree as ``flcheck attack-tree`` prints it. ``attributes``: the tree under the scenario's
    ``attack_step`` declarations (:class:`checker.app.step_attributes.AttributeSummary`: min cost, max
    probability, min time, the Pareto front, the best attack over every path; ``None`` without
    declarations); ``defence``: the verdict of the defence asked for
    (:class:`checker.app.step_attributes.DefenceVerdict`)."""

    goal: str
    found: bool
    conclusive: bool
    size: int
    text: str
    raw: Any = field(repr=False, compare=False)
    kripke: Any = field(repr=False, compare=False)
    attributes: Any = field(default=None, repr=False, compare=False)
    defence: Any = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The keys of ``flcheck attack-tree --json``."""
        from checker.attack_trees.export import result_to_json  # lazy: with the tree engine
        from checker.render import json_value  # lazy: with the writers

        data: dict[str, Any] = result_to_json(self.raw, self.kripke, goal_text=self.goal)
        if self.attributes is not None:
            data["attributes"] = json_value(self.attributes.to_json())
        if self.defence is not None:
            data["defence"] = json_value(self.defence.to_json())
        return data

    def render(self, fmt: str = "text") -> str:
        """The tree in one of :data:`checker.attack_trees.export.FORMATS` (``text``, ``json``, ``dot``,
        ``adtool``, ``adtool-sand``); only a found tree can be rendered."""
        if not self.found:
            raise InputError(f"no attack tree for {self.goal}: the goal is unreachable", None,
                             "a reachable goal")
        from checker.attack_trees.export import render  # lazy: with the tree engine

        return render(self.raw.tree, self.kripke, fmt, goal_text=self.goal)

    def __str__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        state = "attack exists" if self.found else ("no attack" if self.conclusive else "unknown")
        rows: list[tuple[str, object]] = [("result", state), ("nodes", self.size)]
        if self.attributes is not None:
            rows.append(("optimum", self.attributes.optimum_text()))
        if self.defence is not None:
            rows.append(("defence", self.defence.text()))
        return _html_table(f"attack tree for {self.goal}", rows) + f"<pre>{html.escape(self.text)}</pre>"


@dataclass(frozen=True)
class ExportResult:
    """Files an export wrote (``format``: ``explicit``, ``json``, ``dot`` or ``isabelle``); for Isabelle
    also the syntax check's issues (``ok``: none)."""

    format: str
    written: tuple[str, ...]
    issues: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.issues

    def to_json(self) -> dict[str, Any]:
        return {"format": self.format, "written": list(self.written), "issues": list(self.issues),
                "syntax_ok": self.ok}

    def _repr_html_(self) -> str:
        return _html_table(f"export ({self.format})", [("written", ", ".join(self.written)),
                                                      ("issues", len(self.issues))])
