"""What a check decides, per property, in a form two checks of one scenario can be compared by: the
reduced check and the plain one must give the same (:mod:`tests.differential.test_differential`)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from checker.render import fraction_str

#: details that count or show the explored structure's own states (a reduction merges states): a
#: witness path, the size of the invariant that blocks an attack or of an attack's goal set, a fallback
STRUCTURAL = ("trace", "invariant_states", "goal_states", "fallback", "reduced_by", "ways_replayed")
#: nested details that count the forward pass's own work: the most distinct (beliefs, ratio) atoms a
#: level held (beliefs are over the explored structure's states, so a reduced one merges more of them)
NESTED_STRUCTURAL = ("atoms",)
#: an attack tree built on the reduced structure (``attack_tree reduced``) has that structure's shape
QUOTIENT_TREE = ("tree_size", "ways", "shortest")


def figures(report: Any) -> list[tuple[Any, ...]]:
    """Everything a check decides, per property: verdict, figure, its exact text, the details (ε,
    δ(ε), advantage, bounds, probability, outcome counts, attack-tree attributes; not what
    :data:`STRUCTURAL` names) and, for privacy properties, the two output distributions themselves. A
    reduced attack tree's size is its quotient's: only its verdict and attributes are compared."""
    out = []
    for r in report.results:
        reduced_tree = r.kind == "attack_tree" and any(
            p.name == r.name and p.reduced for p in report.scenario.properties)
        skip = STRUCTURAL + (QUOTIENT_TREE if reduced_tree else ())
        details = _without({k: v for k, v in r.details.items() if k not in skip}, NESTED_STRUCTURAL)
        value: tuple[Any, ...] = (r.value, r.value_text)
        if "probability" in details:  # exact on a small structure, a float on a large one (the float
            # solver's sums in another order): the same value to 12 significant digits
            details["probability"] = _digits(float(Fraction(details["probability"])))
            value = (None if r.value is None else _digits(r.value), "")
        if "facts" in details:  # a reduced structure states fewer facts of its invariant: those it has
            details.pop("facts")  # are compared with the plain ones below
        dists = report.artefacts["privacy"].get(r.name)
        exact = None if dists is None else (_items(dists[0]), _items(dists[1]))
        if reduced_tree:
            value = (None, r.value_text.split(",", 1)[-1])
        out.append((r.name, str(r.verdict), *value, repr(details), exact))
    return out


def _items(dist: Any) -> list[tuple[str, str]]:
    """A distribution's (outcome, probability) pairs as exact texts, sorted (of any size)."""
    return sorted((repr(k), fraction_str(v) if isinstance(v, Fraction) else repr(v)) for k, v in dist.items())


def _digits(x: float) -> float:
    """``x`` to 12 significant digits."""
    return float(f"{x:.12g}")


def _without(data: Any, keys: tuple[str, ...]) -> Any:
    """``data`` with the mapping entries named ``keys`` removed at every depth."""
    if isinstance(data, dict):
        return {k: _without(v, keys) for k, v in data.items() if k not in keys}
    if isinstance(data, list):
        return [_without(v, keys) for v in data]
    return data


def facts_hold(reduced: Any, plain: Any) -> None:
    """Every fact a reduced check states of an invariant that blocks an attack is one the plain check
    states of its own."""
    for r, q in zip(reduced.results, plain.results, strict=True):
        if "facts" in r.details:
            assert set(r.details["facts"]) <= set(q.details.get("facts", ())), r.name
