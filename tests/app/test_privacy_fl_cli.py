"""``flcheck privacy``: exit codes, JSON keys, table, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.cli import main

REQUIRED = {"epsilon", "delta", "worst_pair", "advantage", "bounds", "vacuous"}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["privacy", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_keys_and_violated_exit(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "example:moniteo", "--json", "--eps", "ln(3)", "--no-literal")
    assert code == 1
    data = json.loads(out)
    assert REQUIRED <= set(data)
    assert data["epsilon"] == "inf" and data["vacuous"] is False and data["verdict"] == "violated"
    assert set(data["advantage"]) == {"best", "attackers", "checked"}
    assert "likelihood-ratio" in data["advantage"]["attackers"]
    assert isinstance(data["delta"], float)
    for name in ("seed_theorem1_stated", "seed_theorem1_proof", "tight_pure", "tight_approx"):
        assert set(data["bounds"][name]) >= {"value", "holds"}
    assert data["bounds"]["tight_approx"]["holds"] is True
    assert data["worst_pair"]["reading"] in ("replace_one", "add_remove_one")


def test_holds_exit_zero_on_one_client_view(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "example:moniteo", "--observe", "client:sat1", "--eps", "ln(9)", "--json",
                       "--no-literal", "--reading", "replace_one")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "holds"
    assert data["epsilon"] == pytest.approx(__import__("math").log(3))
    # exact decision at the boundary: ln(3) holds, a rational ε just below ln 3 does not
    code, _, _ = run(capsys, "example:moniteo", "--observe", "client:sat1", "--eps", "1.0986122886",
                     "--no-literal", "--reading", "replace_one")
    assert code == 1
    code, _, _ = run(capsys, "example:moniteo", "--observe", "client:sat1", "--eps", "1.0986122887",
                     "--no-literal", "--reading", "replace_one")
    assert code == 0


def test_vacuous_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "example:moniteo:extra=0", "--reading", "replace_one", "--no-literal")
    assert code == 0 and "holds vacuously" in out
    code, out, _ = run(capsys, "example:moniteo", "--eps", "ln(3)")
    assert code == 1
    assert "neighbour pair" in out and "tight_approx" in out and "NI_Decomposition" in out
    assert "holds vacuously" in out  # the literal single-Kripke reading
    assert "path sum" in out


@pytest.mark.parametrize("args, msg", [
    (["example:moniteo", "--eps", "abc"], "cannot read ε"),
    (["example:moniteo", "--observe", "client:nobody"], "unknown client"),
    (["example:nothing"], "unknown example"),
    (["example:moniteo:k=x"], "must be an integer"),
    (["example:moniteo:bogus=1"], "unknown example option"),
    (["no_such_file.fl"], "not found"),
    ([], "no model given"),
])
def test_bad_input_exit_two(capsys: pytest.CaptureFixture[str], args: list[str], msg: str) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2 and msg in err


def test_theory_only(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--theory", "--json")
    assert code == 0
    steps = {s["id"]: s for s in json.loads(out)["theory"]}
    assert steps["T1-8"]["verdict"] == "violated" and steps["II.2-5"]["verdict"] == "holds"


def test_scenario_declared_neighbour(capsys: pytest.CaptureFixture[str]) -> None:
    """spec/scenarios/moniteo.fl declares `neighbour hot: replace loc_c with loc_c_hot`; loc_c and
    loc_c_hot both belong to sat3, whose RR report is ln 9-DP: the released model is ln 6-DP."""
    path = Path(__file__).resolve().parents[2] / "spec" / "scenarios" / "moniteo.fl"
    code, out, _ = run(capsys, str(path), "--reading", "declared", "--eps", "ln(9)", "--json", "--no-literal")
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "holds"
    assert data["pairs_per_reading"] == {"declared": 1}
    (pair,) = data["pairs"]
    assert pair["reading"] == "declared" and pair["epsilon_exact"].startswith("ln(6)")
    assert pair["decomposition"]["conclusion_holds"] is True


@pytest.mark.parametrize("args", [("moniteo_swarm8", "-D", "N=3"), ("moniteo_rounds",)])
def test_reductions_keep_every_figure(capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> None:
    """``flcheck privacy`` applies check's reductions of the privacy explorations (dead values, gradient
    sum, symmetry, one order of commuting reports): every figure of the JSON is the one of
    ``--no-reduce``; only the literal reading's state count and the reductions it lists may differ."""
    outputs = []
    for extra in ((), ("--no-reduce",)):
        code, out, _ = run(capsys, *args, "--json", *extra)
        doc = json.loads(out)
        doc["literal"].pop("states"), doc["literal"].pop("explanation"), doc["literal"].pop("reductions")
        explored = doc.pop("explorations")
        outputs.append((code, doc, sum(e["states"] for e in explored)))
    (code, reduced, fewer), (plain_code, plain, more) = outputs
    assert (code, reduced) == (plain_code, plain) and fewer < more
