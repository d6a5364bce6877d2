"""``-D NAME=VALUE`` / ``--set NAME=VALUE`` (``checker.cli.defines``): the bundled swarm with ``-D N=4``
explores exactly as a hand-written 4-satellite file, a sweep over ``N`` follows the closed form of one
round, and every scenario command takes the option."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from checker.cli.defines import add_define_option, defines_of
from checker.cli.main import main
from checker.verdict import EXIT_BAD_INPUT, EXIT_HOLDS

SWARM4 = """scenario "Moniteo: swarm of 4 satellites, by hand"
locations ground_station, orbit1, orbit2, orbit3, orbit4
links ground_station -- orbit1, ground_station -- orbit2, ground_station -- orbit3, ground_station -- orbit4
server ground at ground_station
clients sat1 at orbit1, sat2 at orbit2, sat3 at orbit3, sat4 at orbit4
policies default
data loc1 = (1) -> 1
data loc2 = (1) -> 2
data loc3 = (1) -> 1
data loc4 = (1) -> 1 secret
data loc_hot = (1) -> 3 secret observed by sat4
dataset loc1, loc2, loc3, loc4
partition sat1: {loc1}, sat2: {loc2}, sat3: {loc3}, sat4: {loc4}
model squared_nobias rate 1/2 initial (0)
noise rr grid {0, 1, 2} r 1/2 on update
protocol fedavg_rounds traces drop
bounds rounds 1
neighbour hot: replace loc4 with loc_hot
attacker eve at ground_station observes curmodpar
property round_can_complete: ctl AG (round < 1 -> EF round = 1);
"""

FIGURES = ("states", "transitions", "deadlocks", "depth", "initial", "complete")


def _explore(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, object]:
    assert main(["explore", *argv, "--json"]) == EXIT_HOLDS
    out = json.loads(capsys.readouterr().out)
    return {k: out[k] for k in FIGURES}


def test_define_explores_like_the_hand_written_file(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    hand = tmp_path / "swarm4.fl"
    hand.write_text(SWARM4, encoding="utf-8")
    assert _explore(capsys, ["moniteo_swarm8", "-D", "N=4"]) == _explore(capsys, [str(hand)])


def test_sweep_follows_the_closed_form(capsys: pytest.CaptureFixture[str]) -> None:
    """One round (R = 1) of N satellites with V = 3 grid values (the bundled swarm's): every satellite
    not yet reported or one of V reports, then the V^N evaluated states."""
    values = 3
    for n in range(1, 6):
        got = _explore(capsys, ["moniteo_swarm8", "--set", f"N={n}"])
        assert got["states"] == (values + 1) ** n + values ** n, n
        assert got["deadlocks"] == values ** n and got["complete"] is True


@pytest.mark.parametrize("argv", [
    ["ctl", "moniteo_swarm8", "EF round = 1", "-D", "N=2"],
    ["attack-tree", "moniteo_swarm8", "--goal", "round = 1", "-D", "N=2"],
    ["check", "moniteo_swarm8", "--property", "round_can_complete", "-D", "N=2"],
    ["privacy", "moniteo_swarm8", "--reading", "declared", "--no-literal", "-D", "N=2"],
])
def test_scenario_commands_take_the_option(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(argv)
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    assert "sat3" not in captured.out  # two satellites: sat1, sat2


@pytest.mark.parametrize(("argv", "message"), [
    (["explore", "moniteo_swarm8", "-D", "N"], "expected NAME=INTEGER"),
    (["explore", "moniteo_swarm8", "-D", "N=1.5"], "expected NAME=INTEGER"),
    (["explore", "moniteo_swarm8", "-D", "M=3"],
     "not a constant of the scenario: M; its integer constants: N"),
    (["explore", "moniteo_swarm8", "-D", "N=2", "-D", "N=3"], "-D N given twice"),
    (["explore", "example:seed", "-D", "N=2"], "sets constants of a scenario"),
])
def test_bad_definitions_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_defines_of_reads_the_option() -> None:
    parser = argparse.ArgumentParser()
    add_define_option(parser)
    assert defines_of(parser.parse_args([])) == {}
    assert defines_of(parser.parse_args(["-D", "N=4", "--set", " K = -2 "])) == {"N": 4, "K": -2}
