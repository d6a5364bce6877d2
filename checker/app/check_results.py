"""The result of one property of ``flcheck check`` (:class:`PropertyResult`) and the figures' texts and
comparisons every kind shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from checker.render import json_value, number_text
from checker.verdict import Verdict

__all__ = ["PropertyResult", "compare", "exact_text", "trace_text"]


@dataclass
class PropertyResult:
    """The outcome of one property: ``verdict``; ``value`` (the figure: ε, a probability, an advantage,
    a tree size — a number or ``None``) and ``value_text`` (its exact text, e.g. ``ln(9) ≈ 2.197``);
    ``evidence`` (one line: witness, counterexample, attack tree size, worst outcome); ``details``
    (JSON-able data for reports: traces, distributions, bounds); ``seconds``."""

    name: str
    kind: str
    verdict: Verdict
    value: float | None = None
    value_text: str = ""
    evidence: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    formula: str = ""

    def to_json(self) -> dict[str, Any]:
        """The result as strict-JSON data (:func:`checker.render.json_value`: ±∞ as ``"inf"``). A CTL
        property also has ``evidence_path``: its witness or counterexample as ``flcheck ctl --json``
        prints it (:meth:`checker.mc.evidence.Trace.to_json`: states, actions, changed values), or
        ``null`` when the check found none (a universal property that holds, an incomplete structure)."""
        out: dict[str, Any] = {
            "name": self.name, "kind": self.kind, "verdict": str(self.verdict), "value": self.value,
            "value_text": self.value_text, "evidence": self.evidence, "formula": self.formula,
            "seconds": round(self.seconds, 4), "details": self.details}
        if self.kind == "ctl":
            out["evidence_path"] = self.details.get("trace")
        data: dict[str, Any] = json_value(out)
        return data




def compare(a: Fraction | float, op: str, b: Fraction | float) -> bool:
    """``a op b`` (``op``: ``<=``, ``>=``, ``<``, ``>``, ``==``), exactly unless one side is a float."""
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
    return {"<=": a <= b, ">=": a >= b, "<": a < b, ">": a > b, "==": a == b}[op]


def exact_text(x: Fraction | float) -> str:
    """An exact figure with its decimal value (``2263/11664 ≈ 0.194016``), an integer as it is
    (:func:`checker.render.number_text`)."""
    return number_text(x, max_denominator=10**100)


def trace_text(trace: Any, limit: int = 8) -> str:
    """A witness or counterexample in one line: its kind and first ``limit`` actions."""
    if trace is None:
        return ""
    acts = [s.action for s in trace.steps if s.action]
    more = f" … ({len(acts)} steps)" if len(acts) > limit else ""
    body = " ; ".join(acts[:limit]) if acts else "initial state"
    loop = " (then loops)" if trace.loop_start is not None else ""
    return f"{trace.kind}: {body}{more}{loop}"
