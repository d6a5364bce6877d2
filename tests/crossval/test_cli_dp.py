"""The ``flcheck dp`` and ``flcheck audit`` commands."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from checker.cli import main
from checker.crossval.gaussian import gaussian_delta


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_dp_gaussian_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "dp", "gaussian", "--mu", "1", "--eps", "0", "1", "--delta", "1e-5", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["eps"] == [0.0, 1.0]
    assert data["delta"] == pytest.approx(gaussian_delta(1.0, [0.0, 1.0]).tolist(), abs=1e-15)
    assert "1e-05" in data["eps_for_delta"]


def test_dp_secagg_json_and_plot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    png = tmp_path / "sub" / "curve.png"
    code, out, _ = run(
        capsys,
        "dp",
        "secagg",
        "--entries",
        "uniform",
        "--n",
        "20",
        "--d",
        "5",
        "--eps",
        "0.5",
        "1",
        "--interval",
        "2e-3",
        "--json",
        "--plot",
        str(png),
    )
    assert code == 0
    data = json.loads(out)
    assert len(data["delta"]) == 2 and all(
        lo <= up for lo, up in zip(data["delta_lower"], data["delta"], strict=True)
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in png.parent.iterdir()] == ["curve.png"]  # no temporary file left behind


def test_audit_mechanism(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(
        capsys,
        "audit",
        "rr:p=3/4",
        "--trials",
        "4000",
        "--confidence",
        "0.9",
        "--json",
        "--plot",
        str(tmp_path / "a.png"),
    )
    assert code == 0
    data = json.loads(out)
    for key in ("eps", "delta", "fpr", "fnr", "eps_lower"):
        assert key in data
    assert data["eps"] == pytest.approx(math.log(3))
    assert 0 < data["eps_lower"] <= data["eps"]
    assert (tmp_path / "a.png").exists()


def test_audit_distribution_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "obs.json"
    f.write_text(
        json.dumps({"p0": {"a": "3/4", "b": "1/4"}, "p1": {"a": "1/4", "b": 0.75}, "formal_eps": 0.5})
    )
    code, out, _ = run(capsys, "audit", str(f), "--trials", "20000", "--json")
    assert code == 1  # formal ε = 0.5 < ln 3: flagged
    assert json.loads(out)["verdict"] == "violated"
    code, out, _ = run(capsys, "audit", str(f), "--trials", "2000", "--formal-eps", "1.2")
    assert code == 0 and "holds" in out


@pytest.mark.parametrize(
    "argv,needle",
    [
        (("audit", "gaussian:mu=x"), "<mechanism>:1:13"),
        (("audit", "nonexistent_file.fl"), "no such file"),
        (("audit", "rr:p=3/4", "--confidence", "1.5"), "--confidence"),
        (("dp", "gaussian", "--mu", "-1", "--eps", "0"), "--mu"),
        (("dp", "secagg", "--entries", "uniform", "--n", "0", "--eps", "1"), "--n"),
    ],
)
def test_bad_input_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], needle: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert needle in err


def test_bad_json_file_position(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "bad.json"
    f.write_text('{"p0": {"a": 1},\n "p1": }')
    code, _, err = run(capsys, "audit", str(f))
    assert code == 2
    assert "bad.json:2:" in err


def test_dp_fig1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    png = tmp_path / "fig1.png"
    code, out, _ = run(
        capsys,
        "dp",
        "fig1",
        "--n",
        "50",
        "--dims",
        "1",
        "10",
        "--eps",
        "1",
        "--interval",
        "5e-3",
        "--json",
        "--plot",
        str(png),
    )
    assert code == 0
    data = json.loads(out)
    by = {(c["entries"], c["d"]): c["delta"][0] for c in data["curves"]}
    assert by[("uniform", 10)] > by[("uniform", 1)] and by[("exponential", 10)] > by[("exponential", 1)]
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_audit_bad_scenario_is_a_clear_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A scenario that cannot be audited (privacy layer missing, or a malformed file) is bad input (exit 2)
    with an error naming the file."""
    f = tmp_path / "model.fl"
    f.write_text("this is not a scenario\n")
    code, _, err = run(capsys, "audit", str(f))
    assert code == 2
    assert "model.fl" in err


def test_dp_gaussian_correlated_noise(capsys: pytest.CaptureFixture[str]) -> None:
    """Theorem 4.2 / Proposition 1: with Σ = [[1, .5], [.5, 1]] on [0,1]², the worst pair moves the two
    coordinates in opposite directions and Δ = sqrt((1,−1) Σ⁻¹ (1,−1)ᵀ) = 2."""
    code, out, _ = run(
        capsys, "dp", "gaussian", "--cov", "1,1/2;1/2,1", "--width", "1,1", "--eps", "1", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["mu"] == pytest.approx(2.0, abs=1e-12)
    assert data["delta"][0] == pytest.approx(float(gaussian_delta(2.0, 1.0)[0]), abs=1e-15)
    code, _, err = run(capsys, "dp", "gaussian", "--cov", "1,2;2,1", "--eps", "1")
    assert code == 2 and "positive definite" in err


def test_dp_secagg_eps_for_delta(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "dp",
        "secagg",
        "--entries",
        "exponential",
        "--n",
        "50",
        "--d",
        "4",
        "--eps",
        "1",
        "--delta",
        "1e-4",
        "--interval",
        "1e-3",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    e = data["eps_for_delta"]["0.0001"]
    # the certified curve at that ε is at most δ, and just below it is above
    code, out, _ = run(
        capsys,
        "dp",
        "secagg",
        "--entries",
        "exponential",
        "--n",
        "50",
        "--d",
        "4",
        "--eps",
        str(e),
        str(e - 0.01),
        "--interval",
        "1e-3",
        "--json",
    )
    d = json.loads(out)["delta"]
    assert d[0] <= 1e-4 + 1e-12 < d[1]


def test_audit_model_through_privacy_layer(capsys: pytest.CaptureFixture[str]) -> None:
    """``flcheck audit example:seed``: the worst neighbouring pair of the formal model is audited and
    cross-validated against its formal ε (:func:`checker.app.privacy_fl.privacy_report`)."""
    code, out, err = run(capsys, "audit", "example:seed", "--trials", "2000", "--json")
    assert code in (0, 1), err
    data = json.loads(out)
    for key in ("eps", "fpr", "fnr", "eps_lower", "checks"):
        assert key in data
    assert data["verdict"] == "holds"  # the formal ε* is the exact ε of the same distributions
