"""``flcheck check --engine storm``: the probability properties of every bundled scenario (and of
generated ones naming satellites, under every scheduler) get the same exact value and verdict from
Storm (stormpy, exact rationals) as from flcheck's own engine, on the reduced and the plain structure."""

from __future__ import annotations

from fractions import Fraction

import flcheck_spec
import pytest

from checker.app.check import check_scenario
from checker.app.reductions import Reductions
from checker.mc.explore import Limits
from flmodel.scenario import load_scenario, parse_scenario
from flmodel.scenario_ast import Scenario

pytest.importorskip("stormpy")

LIMITS = Limits(max_states=200_000, max_seconds=600)
DEFINES = {"moniteo_swarm8": {"N": 3}, "moniteo_published": {"E": 2}}


def _probabilities(scenario: Scenario, engine: str,
                   reductions: Reductions) -> list[tuple[str, str, Fraction, bool]]:
    """(name, verdict, value, whether the value is an exact rational) per probability property."""
    only = [p.name for p in scenario.properties if p.kind == "probability"]
    report = check_scenario(scenario, limits=LIMITS, only=only, engine=engine, reductions=reductions)
    assert all(r.details["engine"] == engine for r in report.results)
    return [(r.name, str(r.verdict), Fraction(r.details["probability"]), "." not in r.details["probability"])
            for r in report.results]


def _agree(scenario: Scenario, *, plain: bool = True) -> None:
    """Same verdicts; the same value exactly where flcheck's is exact (a rational), else within the
    error bound of its float pipeline (1e-9); on the plain structure too unless not ``plain``."""
    for reductions in (Reductions(), Reductions.none()) if plain else (Reductions(),):
        ours = _probabilities(scenario, "flcheck", reductions)
        theirs = _probabilities(scenario, "storm", reductions)
        assert ours and [(n, v) for n, v, _, _ in theirs] == [(n, v) for n, v, _, _ in ours]
        for (_, _, a, a_exact), (_, _, b, b_exact) in zip(ours, theirs, strict=True):
            assert b_exact  # Storm solves over its exact rationals
            if a_exact:
                assert a == b
            else:
                assert abs(a - b) <= Fraction(1, 10**9)


#: The bundled scenarios whose plain structure no explicit exploration holds (more than 2^32 states):
#: compared on the reduced structure only.
REDUCED_ONLY = ("walker32_relay",)
#: The bundled scenarios; all but moniteo and the small swarm take a minute or more here: slow.
BUNDLED = [name if name in ("moniteo", "moniteo_swarm8") else pytest.param(name, marks=pytest.mark.slow)
           for name in sorted(p.stem for p in flcheck_spec.resource("scenarios").glob("*.fl"))]


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_engines_agree(name: str) -> None:
    scenario = load_scenario(flcheck_spec.resource("scenarios", f"{name}.fl"), defines=DEFINES.get(name))
    if not any(p.kind == "probability" for p in scenario.properties):
        pytest.skip(f"{name} has no probability property")
    _agree(scenario, plain=name not in REDUCED_ONLY)


@pytest.mark.parametrize("sched", ["min", "max", "uniform"])
def test_generated_engines_agree(sched: str) -> None:
    text = "\n".join([
        'scenario "two satellites"',
        "locations ground, o1, o2",
        "links ground -- o1, ground -- o2",
        "server srv at ground",
        "clients sat1 at o1, sat2 at o2",
        "policies default",
        "data d1 = (1) -> 1",
        "data d2 = (1) -> 2 secret",
        "dataset d1, d2",
        "partition sat1: {d1}, sat2: {d2}",
        "model squared_nobias rate 1/2 initial (0)",
        "noise rr grid {0, 1, 2} r 1/2 on update",
        "protocol published traces drop",
        "bounds rounds 1, events 4",
        f"property p1: probability {sched} >= 0 reach ready_sat1 & !ready_sat2;",
        f"property p2: probability {sched} >= 0 reach round = 1;",
        f"property p3: probability {sched} >= 0 reach curmodpar == (1, 1) | round = 1 & ready_sat2;",
    ]) + "\n"
    _agree(parse_scenario(text.replace(" curmodpar == (1, 1) |", ""), source="<generated>"))
