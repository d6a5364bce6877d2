"""``Model.check`` accepts every formula ``flcheck ctl`` accepts, with the same result: each bundled
scenario's ``ctl`` and ``probability`` properties (the latter as a bound and as a query), a set of PCTL
formulas, and dpCTL's ``D{ε,δ}`` with ``between`` over each scheduler class; and its messages are the
command's (a query where a condition is expected only when it is nested; ``between`` when it is
missing)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

import checker
from checker.cli.main import main
from checker.errors import InputError
from checker.mc.explore import Limits
from flmodel.scenario import load_scenario
from spec import bundled_scenarios

#: Formulas every scenario can read (``round`` is an observable of every FL system).
PCTL = ["P=? [F round = 1]", "Pmax=? [F<=3 round = 1]", "Pmin=? [F round = 1]", "P>=1/2 [F round = 1]",
        "Pmin>0 [X true]", "AG (round = 0 -> P>=0 [F round = 1])", "EF round = 1"]
#: Scenarios whose unreduced state space ``ctl`` explores within a second; the others (seed_model,
#: walker12_relay, moniteo_swarm8, and those that need check's reductions: moniteo_published,
#: walker32_relay) are compared in the slow run, the last two under a state limit.
QUICK = ["moniteo", "moniteo_deadline", "moniteo_rounds", "walker_family"]
LIMITED = {"moniteo_published": 20_000, "walker32_relay": 20_000}


def cli_json(argv: list[str]) -> tuple[int, dict[str, Any]]:
    """Exit code and JSON document of a command run in this process (the envelope and timings dropped)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    doc: dict[str, Any] = json.loads(out.getvalue())
    for key in ("flcheck", "schema", "command", "seconds"):
        doc.pop(key, None)
    return code, doc


def scenario_formulas(name: str) -> list[str]:
    """The scenario's ``ctl`` properties, its ``probability`` properties as a bound and as a query, and
    :data:`PCTL`."""
    out = []
    for p in load_scenario(bundled_scenarios()[name]).properties:
        if p.kind == "ctl":
            out.append(p.formula.text)
        elif p.kind == "probability":
            q = {"min": "Pmin", "max": "Pmax", "uniform": "P"}[p.scheduler or "min"]
            out += [f"{q}{p.compare}{p.bound} [F {p.formula.text}]", f"{q}=? [F {p.formula.text}]"]
    return out + PCTL


def agree(name: str, formulas: list[str], max_states: int | None = None) -> int:
    """Every formula through the API and through ``flcheck ctl --json``: the same document, or the same
    error; returns how many formulas were compared."""
    limits = None if max_states is None else Limits(max_states=max_states)
    model = checker.load(name, limits=limits)
    extra = [] if max_states is None else ["--max-states", str(max_states)]
    for formula in formulas:
        code, doc = cli_json(["ctl", name, formula, "--json", *extra])
        try:
            api = model.check(formula).to_json()
        except InputError as exc:
            assert code == 2, (name, formula, exc)
            assert doc["error"]["message"] in str(exc), (name, formula, doc, exc)
            continue
        assert code != 2, (name, formula, doc)
        assert api == doc, (name, formula)
    return len(formulas)


@pytest.mark.parametrize("name", QUICK)
def test_bundled_properties_and_pctl_equal_cli(name: str) -> None:
    assert agree(name, scenario_formulas(name)) >= len(PCTL)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(bundled_scenarios()) - set(QUICK)))
def test_every_other_bundled_scenario_equals_cli(name: str) -> None:
    assert agree(name, scenario_formulas(name), LIMITED.get(name)) >= len(PCTL)


def test_every_bundled_scenario_is_covered() -> None:
    assert set(QUICK) | set(LIMITED) <= set(bundled_scenarios())
    assert len(bundled_scenarios()) >= 10


@pytest.mark.parametrize("scheduler", ["adaptive", "worst", "blind", "memoryless", "uniform"])
def test_dp_query_equals_cli(scheduler: str) -> None:
    formula = "D{ln(3),0}[F curmodpar == (0, 1/2)]"
    res = checker.load("moniteo_deadline").check(formula, between="hot", scheduler=scheduler)
    code, doc = cli_json(["ctl", "moniteo_deadline", formula, "--between", "hot", "--scheduler", scheduler,
                          "--json"])
    assert isinstance(res, checker.DPResult)
    assert res.to_json() == doc
    assert res.verdict == doc["verdict"] and code == (0 if res.holds else 1)
    if scheduler == "memoryless":  # observing curmodpar, one observation offers different reports
        assert res.verdict == "unknown" and "no memoryless scheduler exists" in res.reason
    assert res.scheduler_class["given"] == scheduler
    assert res.scheduler_class["name"] == ("adaptive" if scheduler == "worst" else scheduler)
    assert "scheduler class" in str(res)


def test_probability_query_result() -> None:
    res = checker.check("moniteo_deadline", "P=? [F round = 1]")
    assert isinstance(res, checker.ProbabilityResult) and res.verdict is None
    assert checker.load("moniteo_deadline").probability("P=? [F round = 1]").to_json() == res.to_json()
    with pytest.raises(InputError, match="not a probability query"):
        checker.load("moniteo_deadline").probability("EF round = 1")
    assert (res.value, res.exact, res.scheduler) == (1.0, "1", "uniform")
    assert str(res) == "P=? [F round == 1] = 1"
    assert "uniform" in res._repr_html_()


def test_messages_say_what_is_wrong() -> None:
    """No contradictory messages: a query at the top is answered, not refused; ``D`` without a
    neighbour asks for ``between``; a ``D`` nested in a formula says it stands alone; ``between`` on a
    formula without ``D`` says what it is for."""
    model = checker.load("moniteo")
    with pytest.raises(InputError, match=r"compares the scenario's dataset with a neighbour.*between=NAME"):
        model.check("D{ln(3),0}[F round = 1]")
    with pytest.raises(InputError, match=r"between='cold': no such neighbour.*expected hot"):
        model.check("D{ln(3),0}[F round = 1]", between="cold")
    with pytest.raises(InputError, match="it is a whole property, not part of a formula"):
        model.check("AG D{ln(3),0}[F round = 1]")
    with pytest.raises(InputError, match=r"P=\? is a query, not a condition.*at the top of the property"):
        model.check("AG P=? [F round = 1]")
    with pytest.raises(InputError, match="between names the neighbour of a D"):
        model.check("EF round = 1", between="hot")
    with pytest.raises(InputError, match="unknown scheduler class 'best'"):
        model.check("D{ln(3),0}[F round = 1]", between="hot", scheduler="best")


def test_explicit_model_equals_cli(tmp_path: Path) -> None:
    """The same on the PRISM/Storm files of a scenario: ``Pmin``/``Pmax`` queries and bounds agree, a
    plain ``P`` on the MDP is refused alike, and ``D`` says it needs a scenario."""
    checker.load("moniteo_deadline").export(tmp_path / "m", "explicit")
    files = [str(tmp_path / "m.tra"), str(tmp_path / "m.lab")]
    model = checker.load(files)
    for formula in ["Pmax=? [F bound_reached]", "Pmin>=1/2 [F bound_reached]", "P=? [F bound_reached]",
                    "AG (init -> EF bound_reached)"]:
        code, doc = cli_json(["ctl", *files, formula, "--json"])
        try:
            api = model.check(formula).to_json()
        except InputError as exc:
            assert code == 2 and doc["error"]["message"] in str(exc), (formula, doc)
            continue
        assert api == doc, formula
    with pytest.raises(InputError, match="this model is not a scenario"):
        model.check("D{0,0}[F bound_reached]", between="hot")
