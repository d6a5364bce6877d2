"""What an export is made of: a scenario file (its properties, with the verdicts of the quantitative
ones from ``flcheck check``) or an flmodel example system with the properties exported for it, resolved
from a command-line ``SCENARIO`` by :func:`checker.app.load.resolve_model_spec`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import flcheck_spec

from checker.app.check import check_scenario
from checker.app.isabelle.terms import theory_name
from checker.app.isabelle.theory import PropertySpec, ScenarioExport
from checker.app.load import EXAMPLES, ExampleModel, resolve_example, resolve_model_spec
from checker.mc import ctl_ast
from checker.mc.ctl_parse import parse_formula
from checker.mc.explore import Limits
from flmodel.scenario import load_scenario
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import build_system
from flmodel.scenario_properties import EpsSpec, PropertyDecl

#: Properties exported for the flmodel example systems (``example:NAME``, by NAME): the questions a
#: careful reader of [IIIf-FL] asks of the published rules.
EXAMPLE_PROPERTIES: dict[str, tuple[tuple[str, str], ...]] = {
    "seed": (
        ("c1_reports", 'EF "c1" in ready'),
        ("all_ready_reachable", "EF (ready == clients & clients != {})"),
        ("model_changes", "EF curmodpar != (0, 0)"),
        ("ready_within_clients_fails", "AG ready == clients"),
        ("clients_fixed", "AG clients == {c1, c2}"),
    ),
    "moniteo_rr": (
        ("round_completes", "EF (ready == clients & clients != {})"),
        ("model_changes", "EF curmodpar != (0, 0)"),
    ),
    "moniteo": (
        ("round_completes", "EF (ready == clients & clients != {})"),
        ("model_changes", "EF curmodpar != (0, 0)"),
        ("clients_fixed", "AG clients == {sat1, sat2}"),
    ),
}

#: Property kinds whose verdicts the export takes from ``flcheck check`` (checker.app.check); the CTL and
#: attack-tree kinds are re-checked here (their evidence becomes proof scripts); cross-validation and
#: attack simulations are not run by the export.
QUANTITATIVE_KINDS = ("privacy", "advantage", "probability", "budget", "dp")


def _ctl_properties(pairs: Sequence[tuple[str, str]]) -> tuple[PropertySpec, ...]:
    return tuple(PropertySpec(name, "ctl", text, parse_formula(text)) for name, text in pairs)


def example_export(example: ExampleModel | str) -> ScenarioExport:
    """The export of an flmodel example system (given resolved, or as ``example:NAME[:key=value,...]``)
    with the properties of :data:`EXAMPLE_PROPERTIES`."""
    model = resolve_example(example) if isinstance(example, str) else example
    return ScenarioExport(model.label, model.system, _ctl_properties(EXAMPLE_PROPERTIES[model.name]),
                          source=model.spec)


def _property_from_scenario(decl: PropertyDecl) -> PropertySpec:
    """A :class:`PropertySpec` of a scenario's property: ``ctl`` properties keep their formula; an
    ``attack_tree`` goal ``g`` becomes ``EF g`` (IIIf AT: a valid attack tree exists iff ``EF g``;
    "expect absent" is the claim that it does not hold); the other kinds keep their text."""
    formula: ctl_ast.Formula | None = None
    if decl.kind == "ctl" and decl.formula.text:
        formula = parse_formula(decl.formula.text)
    elif decl.kind == "attack_tree" and decl.formula.text:
        formula = ctl_ast.EF(parse_formula(decl.formula.text))
    eps = decl.eps if decl.kind in ("privacy", "budget") else decl.bound if decl.kind == "advantage" else None
    value = f"epsilon {eps.text()}" if isinstance(eps, EpsSpec) else None
    return PropertySpec(decl.name, decl.kind, decl.text(), formula, None, value,
                        decl.expect if decl.kind == "attack_tree" else None)


def _quantitative_results(scenario: Scenario, limits: Limits | None) -> dict[str, tuple[str, str]]:
    """``{name: (verdict, figure)}`` of the scenario's quantitative properties, decided by
    :func:`checker.app.check.check_scenario` (an engine failure propagates)."""
    names = [p.name for p in scenario.properties if p.kind in QUANTITATIVE_KINDS]
    if not names:
        return {}
    report = check_scenario(scenario, limits=limits, only=names)
    # the figure only (not the free-text evidence), floats cut to 4 significant digits: float summation
    # order may differ between processes, and the export must be byte-stable
    return {r.name: (str(r.verdict), round_floats(r.value_text)) for r in report.results}


def round_floats(text: str) -> str:
    """Numbers with more than 4 significant digits (floats) rounded to 4, e.g. ``2.1972245773`` ->
    ``2.197``; exact numbers such as ``1/2`` or ``9`` are unchanged."""

    def four_digits(match: re.Match[str]) -> str:
        return f"{float(match.group()):.4g}"

    return re.sub(r"-?\d+\.\d{4,}(?:e-?\d+)?|-?\d\.\d+e-?\d+", four_digits, text)


def _with_result(spec: PropertySpec, decided: tuple[str, str] | None) -> PropertySpec:
    if decided is None:
        return spec
    verdict, figure = decided
    value = "; ".join(x for x in (spec.value, figure) if x) or None
    return PropertySpec(spec.name, spec.kind, spec.text, spec.formula, verdict, value, spec.expect)


def scenario_export(path: str | Path, limits: Limits | None = None) -> ScenarioExport:
    """The export of a scenario file; its properties are checked on the scenario's transition system
    (``flmodel.scenario_build.build_system``)."""
    scenario = load_scenario(path)
    system = build_system(scenario)
    decided = _quantitative_results(scenario, limits)
    props = tuple(_with_result(_property_from_scenario(p), decided.get(p.name)) for p in scenario.properties)
    return ScenarioExport(Path(path).stem, system.fl, props, source=Path(path).name, limits=limits,
                          checked=system, path=Path(path), scenario=scenario)


def load_export(spec: str, *, limits: Limits | None = None) -> ScenarioExport:
    """The export of a command-line ``SCENARIO`` (:func:`checker.app.load.resolve_model_spec`):
    ``example:NAME[:key=value,...]``, a path to a ``.fl`` file, or the name of a bundled scenario."""
    model = resolve_model_spec(spec)
    if isinstance(model, ExampleModel):
        return example_export(model)
    return scenario_export(model.path, limits)


def export_source(spec: str) -> tuple[str, str, object]:
    """The theory file name, the source as shown and its identity (a resolved path, or the example's
    spec) of a command-line ``SCENARIO``, without loading or checking it (for
    :func:`checker.app.isabelle.export_files.distinct_theories` before the work starts)."""
    model = resolve_model_spec(spec)
    if isinstance(model, ExampleModel):
        return f"{theory_name(model.label)}.thy", model.spec, model.spec
    return f"{theory_name(model.path.stem)}.thy", str(model.path), model.path.resolve()


def golden_specs() -> list[str]:
    """The scenarios whose exports are committed under ``theories/``: every bundled scenario file and
    every flmodel example (``example:NAME``), in a fixed order."""
    return [*sorted(flcheck_spec.bundled_scenarios()), *(f"example:{name}" for name in sorted(EXAMPLES))]
