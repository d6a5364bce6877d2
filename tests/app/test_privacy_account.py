"""``flcheck check`` on a scenario with Gaussian noise: the formal figure, the accountant's bracket of the
run it describes and (``--audit``) the one-run audit, as one table, in JSON and in the HTML report with a
plot of ε against the rounds (:mod:`checker.app.privacy_account`)."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any

from checker.app.privacy_account import run_of
from checker.cli.main import main
from checker.crossval.accountant import Run, epsilon_bracket
from checker.crossval.gaussian import gaussian_epsilon
from flmodel.scenario import load_scenario, parse_scenario
from tests.cli.test_json_contract import validate


def run_cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, out.getvalue()


def test_bundled_gaussian_scenario_json_has_the_accounting() -> None:
    code, out = run_cli(["check", "moniteo_gaussian", "--json"])
    doc: dict[str, Any] = json.loads(out)
    assert code == 0
    validate("check", doc)
    acc = doc["accounting"]
    expected = epsilon_bracket(Run(1.0, 0.1, 20), 1e-5)
    assert acc["epsilon_lower"] == expected.lower and acc["epsilon_upper"] == expected.upper
    assert acc["run"]["sampling"] == "poisson" and acc["audit_epsilon_lower"] is None
    names = {p["name"] for p in acc["properties"]}
    assert names == {"dp_report", "adv"}
    formal = {p["name"]: p["formal"] for p in acc["properties"]}
    dp = next(p for p in doc["properties"] if p["name"] == "dp_report")
    assert f"{dp['value']:.6g}" in formal["dp_report"]
    assert acc["curve"][0]["rounds"] == 1 and acc["curve"][-1]["rounds"] == 20
    ups = [c["epsilon_upper"] for c in acc["curve"]]
    assert ups == sorted(ups)  # ε grows with the rounds


def test_table_audit_and_html_report(tmp_path: Path) -> None:
    report = tmp_path / "r.html"
    code, out = run_cli(["check", "moniteo_gaussian", "--audit", "--report", str(report)])
    assert code == 0
    assert "accountant ε(δ=1e-05)" in out and "audit ε lower" in out and "formal (finite model)" in out
    line = next(row for row in out.splitlines() if row.startswith("dp_report") and "[" in row)
    audit = float(line.split("≥")[1].split()[0])
    assert 0 <= audit <= epsilon_bracket(Run(1.0, 0.1, 20), 1e-5).upper
    page = report.read_text(encoding="utf-8")
    assert "Privacy of the run" in page and "ε of the run against the rounds" in page
    assert page.count("data:image/png;base64,") >= 3


def test_a_scenario_without_gaussian_noise_has_no_accounting() -> None:
    code, out = run_cli(["check", "moniteo", "--property", "ni_fl_dp", "--json"])
    assert code == 0 and "accounting" not in json.loads(out)


def test_the_run_from_the_noise_when_there_is_no_run_statement() -> None:
    text = load_scenario("spec/scenarios/moniteo_gaussian.fl").to_text()
    lines = [x for x in text.splitlines() if not x.startswith("run ")]
    s = parse_scenario("\n".join(lines) + "\n", "g.fl")
    found = run_of(s)
    assert found is not None
    run, delta, source = found
    assert (run.noise_multiplier, run.sampling, run.rounds, delta) == (1.0, "all", 1, 1e-5)
    assert "Gaussian noise" in source
    assert epsilon_bracket(run, delta).upper == gaussian_epsilon(1.0, 1e-5) or math.isclose(
        epsilon_bracket(run, delta).upper, gaussian_epsilon(1.0, 1e-5), rel_tol=1e-12)
