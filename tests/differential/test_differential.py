"""The differential comparison of reduced and plain checks (issue #26): generated scenarios over the
whole scenario language (:mod:`tests.differential.generate`) are checked with the reductions and
without them, and every verdict and figure must be the same (:func:`tests.differential.compare.figures`).
A fixed-seed sample runs in the quick suite, 500 scenarios in the slow one (a fixed sample too: every run
of .ci/run checks the same scenarios, and a failure reproduces); every failure found becomes a
regression case in ``regressions/`` (checked in the quick suite)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from checker.app.check import check_scenario
from checker.app.reductions import Reductions
from checker.mc.explore import Limits
from flmodel.errors import ModelError
from flmodel.scenario import parse_scenario
from tests.differential.compare import facts_hold, figures
from tests.differential.generate import bundled_variants, scenarios

LIMITS = Limits(max_states=60_000, max_seconds=60)
REGRESSIONS = sorted((Path(__file__).parent / "regressions").glob("*.fl"))


def agree(text: str, source: str = "<generated>") -> None:
    """Check ``text`` with every reduction and without any; the same figures, or the reason not."""
    scenario = parse_scenario(text, source=source)
    try:
        plain = check_scenario(scenario, limits=LIMITS, reductions=Reductions.none())
    except ModelError as exc:  # bad input found while exploring (a value off a strict noise grid):
        with pytest.raises(ModelError) as reduced:  # the reduced check finds it too, no verdict
            check_scenario(scenario, limits=LIMITS)
        assert str(reduced.value) == str(exc)
        return
    if not plain.kripke.complete or any("limit" in r.evidence for r in plain.results):
        return  # too large to compare here: the plain check decides nothing for sure
    reduced = check_scenario(scenario, limits=LIMITS)
    assert figures(reduced) == figures(plain), text
    facts_hold(reduced, plain)


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_regressions(path: Path) -> None:
    agree(path.read_text(), str(path))


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(scenarios())
def test_generated_sample(text: str) -> None:
    agree(text)


@pytest.mark.slow
@settings(max_examples=500, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(scenarios())
def test_generated_many(text: str) -> None:
    agree(text)


@settings(max_examples=4, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(bundled_variants())
def test_bundled_variants_sample(text: str) -> None:
    """The bundled scenarios (at sizes the plain check reaches) with generated properties and attack
    steps in place of their own."""
    agree(text)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(bundled_variants())
def test_bundled_variants_many(text: str) -> None:
    agree(text)
