"""``flcheck contacts``: the orbit generator's contact plan as scenario lines, from the command line
(:mod:`checker.cli.contacts`). The bundled Walker case study's contact lines are this command's output;
windows in steps and in rounds agree; the plot and the file are written; bad input is exit 2."""

from __future__ import annotations

from pathlib import Path

import flcheck_spec
import pytest

from checker.cli.main import main
from checker.verdict import EXIT_BAD_INPUT, EXIT_HOLDS
from flmodel.orbits import parse_contact_text

WALKER = flcheck_spec.bundled_scenarios()["walker12_relay"]


def test_the_walker_case_study_is_the_commands_output(capsys: pytest.CaptureFixture[str]) -> None:
    """walker12_relay's contact lines (one hour at 60 s samples, Toulouse as the location 'ground', links
    up to 3000 km); without '=ground' the station is named by its name."""
    assert main(["contacts", "--station", "toulouse=ground", "--isl-km", "3000"]) == EXIT_HOLDS
    out = capsys.readouterr().out
    lines = [ln for ln in WALKER.read_text(encoding="utf-8").splitlines() if ln.startswith("contact ")]
    assert out.splitlines() == lines and len(lines) == 15
    assert main(["contacts", "--station", "toulouse", "--isl-km", "3000"]) == EXIT_HOLDS
    assert capsys.readouterr().out.splitlines() == [ln.replace(" ground ", " toulouse ") for ln in lines]


def test_steps_refine_rounds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two rounds of 30 minutes in 3 steps each over every bundled station: a link is up in a round
    exactly when it is up in one of the round's steps; the plot and the file are written."""
    common = ["contacts", "--rounds", "2", "--round-seconds", "1800", "--steps", "3", "--isl-km", "2500"]
    assert main([*common, "-o", str(tmp_path / "rounds.txt")]) == EXIT_HOLDS
    assert main([*common, "--unit", "steps", "--plot", str(tmp_path / "w.png")]) == EXIT_HOLDS
    rounds = parse_contact_text((tmp_path / "rounds.txt").read_text(encoding="utf-8"))
    steps = parse_contact_text(capsys.readouterr().out)
    assert rounds.keys() == steps.keys()
    assert {b for _, b in rounds if not b.startswith("orbit[")} <= {"kiruna", "toulouse", "hartebeesthoek"}
    assert not any("gs[" in b or b == "ground" for _, b in rounds)  # every station by its own name
    for link, (_, numbers) in steps.items():
        assert rounds[link] == ("rounds", tuple(sorted({(k - 1) // 3 + 1 for k in numbers})))
    assert (tmp_path / "w.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv, message", [
    (["--station", "nowhere"], "no station 'nowhere'"),
    (["--walker", "no_such_shell.toml"], "no Walker shell file"),
    (["--epoch", "2024-01-01"], "no UTC offset"),
    (["--sample-seconds", "7200"], "--sample-seconds 7200 is longer than a protocol step"),
    (["--isl-km", "-1"], "argument --isl-km: '-1' is not a range in km > 0"),
    (["--isl-km", "1e308"], "argument --isl-km"),
    (["--sample-seconds", "1e-7"], "argument --sample-seconds"),
    (["--sample-seconds", "0.5", "--rounds", "1000"], "--sample-seconds 0.5 gives 7,200,000 samples"),
    (["--station", "toulouse=2x"], "'2x' is not a scenario name"),
])
def test_bad_input_is_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["contacts", *argv]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
