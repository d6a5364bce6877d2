"""Loading scenario files through helper E's API (``flmodel.scenario.load_scenario``) and exploring
them; skipped while that API or the bundled scenarios are not available."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.app.load import load_model, model_kind
from checker.cli import main
from checker.explore import Limits
from checker.verdict import Verdict

scenario_mod = pytest.importorskip("flmodel.scenario")


def _scenarios() -> list[Path]:
    import flcheck_spec

    return list(flcheck_spec.bundled_scenarios().values())


def test_model_kind_dispatch(tmp_path: Path) -> None:
    assert model_kind("x.fl") == "scenario"
    assert model_kind("x.json") == "json"
    assert model_kind(["a.tra", "a.lab"]) == "explicit"


@pytest.mark.parametrize("path", _scenarios()[:3], ids=lambda p: p.stem)
def test_bundled_scenarios_explore_and_check(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from checker.ctl import check

    kripke = load_model(path, limits=Limits(max_states=20_000, max_seconds=20))
    kripke.validate()
    assert kripke.num_states >= 1 and len(kripke.initial) >= 1
    res = check(kripke, "EF true", vacuity=False)
    assert res.verdict is Verdict.HOLDS
    assert main(["explore", str(path), "--json", "--max-states", "20000"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["states"] == kripke.num_states
