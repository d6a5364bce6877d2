"""One system per check: ``flcheck check`` parses and builds the scenario once, parses each formula once
and constructs the model (:class:`flmodel.system.FLSystem`) at most twice (the scenario's dataset and a
neighbour's); the reductions wrap the model (:mod:`checker.app.value_reductions`) without rebuilding it."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

import checker.app.scenario_formulas as scenario_formulas
import flmodel.scenario as scenario_module
import flmodel.scenario_build as scenario_build
from checker.app.check import check_file
from checker.app.scenario_formulas import validate_scenario
from checker.app.value_reductions import ValueReduced, reduce_values
from checker.mc.ctl_parse import parse_formula
from flmodel.errors import ModelError
from flmodel.scenario import parse_scenario
from flmodel.scenario_build import build_system
from flmodel.scenario_properties import FormulaProperty
from flmodel.system import FLSystem
from tests.strategies import star_scenario_text

pytestmark = pytest.mark.usefixtures("counted")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts of the model's constructions, scenario parses, system builds and formula parses."""
    calls: Counter[str] = Counter()

    def counting(name: str, function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(FLSystem, "__init__", counting("FLSystem", FLSystem.__init__))
    monkeypatch.setattr(scenario_module, "_parse", counting("scenario", scenario_module._parse))
    monkeypatch.setattr(scenario_module, "build_system", counting("build", scenario_build.build_system))
    monkeypatch.setattr(scenario_formulas, "parse_formula", counting("formula", parse_formula))
    scenario_formulas._parsed.cache_clear()
    yield calls
    scenario_formulas._parsed.cache_clear()


@pytest.mark.parametrize("name", ["moniteo", "moniteo_deadline"])
def test_check_builds_the_model_at_most_twice(name: str, counted: Counter[str]) -> None:
    report = check_file(name)
    json.dumps(report.to_json())  # the report's system and readings come from the same build
    formulas = sum(1 for p in report.scenario.properties if isinstance(p, FormulaProperty))
    assert formulas >= 1
    assert counted["scenario"] == 1 and counted["build"] == 1
    assert counted["formula"] == formulas
    assert counted["FLSystem"] <= 2, counted
    # the check did decide privacy properties on a neighbour's exploration: the second model
    assert report.neighbour_structures or report.reductions.explorations


def test_value_reductions_wrap_without_rebuilding(counted: Counter[str]) -> None:
    system = build_system(parse_scenario(_STAR))
    fl = system.fl
    assert isinstance(fl, FLSystem)
    before = counted["FLSystem"]
    reduced = reduce_values(fl, reset_unready=fl.clients)
    both = reduce_values(reduced, sum_gradients=True)
    assert isinstance(both, ValueReduced) and both.base is fl
    assert both.reset_unready == fl.clients and both.sums_gradients
    assert reduce_values(fl) is fl
    assert fl.with_dataset(fl.initial.igra.dataset) is fl  # the system's own dataset: itself
    assert counted["FLSystem"] == before
    with pytest.raises(ModelError, match="cannot be forgotten"):
        reduce_values(fl, forget={"dataset"})


def test_formula_errors_are_reported_at_every_request() -> None:
    """The parse cache keeps formulas, not failures: a bad formula is refused each time it is read."""
    bad = star_scenario_text([1, 2], properties=["ctl AG (round <)"])
    for _ in range(2):
        with pytest.raises(ModelError, match="property 'p0'"):
            scenario = parse_scenario(bad)
            validate_scenario(scenario, build_system(scenario))


_STAR = star_scenario_text([1, 2], properties=["ctl AG true"])
