"""``flcheck attack`` outputs that keep figures honest: the covariance baseline apart from the MI
estimates, clamped MI estimates named, SRATTA warnings on a model at chance or a V-measure on little."""

from __future__ import annotations

import json

import numpy as np
import pytest

from checker.app.attacks import _sratta_warnings
from checker.cli.main import main
from checker.crossval.sratta import SrattaMetrics


def test_leakage_json_separates_the_covariance_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["attack", "leakage", "--values", "1,2", "--samples", "300", "--steps", "15", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and set(out["mi"]) == {"mine", "hmine"}
    assert len(out["covariance_baseline"]) == 2 and "not a mutual information" in out["notes"][0]
    for k, values in out["mi"].items():
        assert all(v >= 0 for v in values)
        raw = [p[f"{k}_raw"] for p in out["points"]]
        assert out["clamped"][k] == [p["batch"] for p, r in zip(out["points"], raw, strict=True) if r < 0]
    assert out["config"]["networks"] == "small"


def test_leakage_table_labels_the_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["attack", "leakage", "--values", "1", "--samples", "300", "--steps", "10"]) == 0
    text = capsys.readouterr().out
    assert "covariance baseline (not an MI)" in text and "note: covariance_baseline" in text


def _metrics(rho: float, v: float) -> SrattaMetrics:
    return SrattaMetrics(rho, 0.0, 0.0, v, 1.0, v, 0.0, v, 10, 0, 0, 10)


def test_sratta_warnings() -> None:
    history = np.zeros((2, 3, 4))
    assert _sratta_warnings(history, 0.9, 10, 1.0, _metrics(0.5, 0.6)) == []
    chance = _sratta_warnings(history, 0.106, 10, 1.0, _metrics(0.5, 0.6))
    assert len(chance) == 1 and "at chance" in chance[0]
    little = _sratta_warnings(history, 0.9, 10, 1.0, _metrics(0.002, 1.0))
    assert len(little) == 1 and "0.2%" in little[0]
    history[1, 0, 0] = np.nan
    assert "non-finite" in _sratta_warnings(history, 0.1, 10, 1.0, _metrics(0.5, 0.6))[0]
