"""``flcheck account``: the JSON contract (keys as the issue spells them, the schema), the mismatch of a
scenario's sampling named with both figures, the inverse, and bad input (exit 2 naming the option)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from checker.cli.main import main
from tests.cli.test_json_contract import validate

BASE = ["account", "--noise-multiplier", "1.1", "--sampling-rate", "0.01", "--rounds", "10000",
        "--delta", "1e-5"]


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def run_json(argv: list[str]) -> dict[str, Any]:
    code, out, err = run([*argv, "--json"])
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    validate("account", doc)
    return doc


def test_issue_query_json_keys_and_bracket() -> None:
    doc = run_json(BASE)
    for key in ("epsilon_lower", "epsilon_upper", "delta", "noise_multiplier", "sampling_rate", "sampling",
                "rounds"):
        assert key in doc
    assert doc["sampling"] == "poisson" and doc["rounds"] == 10000 and doc["delta"] == 1e-5
    assert doc["epsilon_lower"] <= doc["epsilon_upper"] <= 1.01 * doc["epsilon_lower"]
    assert doc["width"] == pytest.approx(doc["epsilon_upper"] - doc["epsilon_lower"])


def test_delta_query_and_clients_per_round() -> None:
    doc = run_json(["account", "--noise-multiplier", "1.1", "--clients", "1000", "--per-round", "10",
                    "--rounds", "1000", "--epsilon", "2", "--sampling", "fixed"])
    assert doc["sampling_rate"] == pytest.approx(0.01) and doc["neighbouring"] == "replace one"
    assert 0 <= doc["delta_lower"] <= doc["delta_upper"] <= 1


def test_target_epsilon_gives_the_smallest_z_within_one_percent() -> None:
    doc = run_json(["account", "--target-epsilon", "2", "--sampling-rate", "0.01", "--rounds", "10000",
                    "--delta", "1e-5"])
    assert 1.98 <= doc["epsilon_upper"] <= 2.0 and doc["target_epsilon"] == 2.0
    code, out, _ = run([*BASE[:1], "--noise-multiplier", str(doc["noise_multiplier"]), *BASE[3:], "--json"])
    assert code == 0 and json.loads(out)["epsilon_upper"] <= 2.0


SCENARIO = """scenario "a fixed-size run"
locations ls, l1
links ls -- l1
server srv at ls
clients c1 at l1
policies default
data a = (1) -> 2
dataset a
partition c1: {a}
model squared_nobias rate 1/2 initial (0)
run noise_multiplier 1.1, rounds 1000, sampling fixed 10 of 1000, delta 1e-5
protocol fedavg_rounds traces drop
bounds rounds 1
"""


def test_from_scenario_names_the_mismatch_and_shows_both_figures(tmp_path: Path) -> None:
    path = tmp_path / "run.fl"
    path.write_text(SCENARIO, encoding="utf-8")
    own = run_json(["account", "--from", str(path)])
    assert own["sampling"] == "fixed" and own["assumption"]["matches"] is True
    doc = run_json(["account", "--from", str(path), "--sampling", "poisson"])
    a = doc["assumption"]
    assert a["matches"] is False and a["run"] == "fixed" and a["accountant"] == "poisson"
    assert "fixed" in a["message"] and "poisson" in a["message"]
    assert a["run_lower"] == pytest.approx(own["epsilon_lower"])
    assert a["run_upper"] == pytest.approx(own["epsilon_upper"])
    assert doc["epsilon_upper"] < a["run_lower"]  # Poisson accounting understates the fixed-size run
    code, out, _ = run(["account", "--from", str(path), "--sampling", "poisson"])
    assert code == 0 and "assumption mismatch" in out and "run samples fixed" in out


@pytest.mark.parametrize(("option", "value"), [
    ("--noise-multiplier", "0"), ("--noise-multiplier", "-1"), ("--noise-multiplier", "nan"),
    ("--noise-multiplier", "inf"), ("--sampling-rate", "0"), ("--sampling-rate", "1.5"),
    ("--sampling-rate", "nan"), ("--rounds", "0"), ("--rounds", "99999999999999999999999"),
    ("--rounds", "1.5"), ("--delta", "0"), ("--delta", "1"), ("--delta", "nan"), ("--delta", "1e999"),
])
def test_bad_input_exits_2_naming_the_option(option: str, value: str) -> None:
    argv = list(BASE)
    argv[argv.index(option) + 1] = value
    code, out, err = run(argv)
    assert code == 2 and out == ""
    assert option in err and len(err.strip().splitlines()) == 1


def test_missing_and_conflicting_options_exit_2() -> None:
    code, _, err = run(["account", "--noise-multiplier", "1", "--rounds", "10", "--delta", "1e-5"])
    assert code == 2 and "--sampling-rate" in err
    code, _, err = run([*BASE, "--epsilon", "1"])
    assert code == 2 and "--epsilon" in err
    code, _, err = run(["account", "--noise-multiplier", "1", "--clients", "10", "--per-round", "20",
                        "--rounds", "10", "--delta", "1e-5"])
    assert code == 2 and "--per-round" in err
