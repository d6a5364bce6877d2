"""Noise in the user's terms (``rr … epsilon E``, ``laplace epsilon E``, ``gaussian sigma S clip C``), the
``r R`` reading (the ratio e^−ε, not a keep probability), no silent clamp (a positioned error, or an
explicit ``clip``), and the ``run`` statement (a run configuration: parsed, printed, checked)."""

from __future__ import annotations

import contextlib
import io
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from checker.cli.main import main
from flmodel.errors import ModelError
from flmodel.scenario import parse_scenario
from flmodel.scenario_build import mechanism_of

ONE = """scenario "one report"
locations ls, l1
links ls -- l1
server srv at ls
clients c1 at l1
policies default
data a = (1) -> {ya}
data b = (1) -> {yb}
dataset a
partition c1: {{a}}
model squared_nobias rate 1/2 initial (0)
noise {noise} on update
protocol fedavg_rounds traces drop
bounds rounds 1
neighbour swap: replace a with b
attacker eve at ls observes curmodpar
property dp: privacy epsilon <= 100 between swap
"""


def check(tmp_path: Path, noise: str, ya: int = 2, yb: int = 4) -> tuple[int, dict[str, Any], str]:
    """``flcheck check --json`` of the one-report scenario (updates: ya/2 and yb/2)."""
    path = tmp_path / "one.fl"
    path.write_text(ONE.format(noise=noise, ya=ya, yb=yb), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["check", str(path), "--json"])
    return code, (json.loads(out.getvalue()) if code != 2 else {}), err.getvalue()


@pytest.mark.parametrize("eps", ["1", "0.3", "5/2", "ln(3)"])
def test_formal_epsilon_of_one_report_with_rr_epsilon_is_e(tmp_path: Path, eps: str) -> None:
    code, doc, _ = check(tmp_path, f"rr grid {{0, 1, 2}} epsilon {eps}")
    assert code == 0
    value = doc["properties"][0]["value"]
    expected = math.log(3) if eps.startswith("ln") else float(Fraction(eps))
    assert value == pytest.approx(expected, rel=1e-12, abs=1e-12)
    if eps == "ln(3)":
        assert doc["properties"][0]["value_text"].startswith("ln(3)")


def test_laplace_epsilon_is_e_between_the_range_ends(tmp_path: Path) -> None:
    """Geometric base e^−E·S/(B−A): the two ends of the range are E apart (updates 0 and 2 on 0 .. 2)."""
    code, doc, _ = check(tmp_path, "laplace epsilon 3/2 range 0 .. 2", ya=0, yb=4)
    assert code == 0 and doc["properties"][0]["value"] == pytest.approx(1.5, rel=1e-12)


def test_gaussian_sigma_matches_the_truncated_discrete_gaussian(tmp_path: Path) -> None:
    """ε* of one report of ``gaussian sigma 2 clip 2``: max_v ln P(v | 1)/P(v | 2) of the discrete Gaussian
    of scale 2 restricted to −2 .. 2, computed here in floats."""
    code, doc, _ = check(tmp_path, "gaussian sigma 2 clip 2")
    assert code == 0

    def dist(u: int) -> list[float]:
        w = [math.exp(-((v - u) ** 2) / 8) for v in range(-2, 3)]
        return [x / sum(w) for x in w]

    p, q = dist(1), dist(2)
    expected = max(max(math.log(a / b), math.log(b / a)) for a, b in zip(p, q, strict=True))
    assert doc["properties"][0]["value"] == pytest.approx(expected, rel=1e-9)


def test_gaussian_clip_clips_explicitly(tmp_path: Path) -> None:
    code, doc, _ = check(tmp_path, "gaussian sigma 2 clip 1", ya=2, yb=8)  # updates 1 and 4 -> 1 and 1
    assert code == 0 and doc["properties"][0]["value"] == 0.0


@pytest.mark.parametrize(("noise", "ya", "yb", "col"), [
    ("rr grid {0, 1, 2} epsilon 1", 3, 4, 7),        # 3/2: between grid points, strict form
    ("rr grid {0, 1} r 1/2", 2, 14, 7),              # 7: outside the grid (was silently 1)
    ("laplace epsilon 1 range 0 .. 2", 3, 4, 7),     # 3/2: off the lattice
    ("gaussian sigma 1 range -2 .. 2", 2, 14, 7),    # 7: outside, no clip
    ("geometric r 1/2 range 0 .. 2", 2, 14, 7),      # 7: outside the range (was clamped)
])
def test_a_value_off_the_grid_is_a_positioned_error(tmp_path: Path, noise: str, ya: int, yb: int,
                                                    col: int) -> None:
    code, _, err = check(tmp_path, noise, ya=ya, yb=yb)
    assert code == 2
    line = err.strip().splitlines()
    assert len(line) == 1 and f"one.fl:12:{col}:" in line[0] and "is not on" in line[0]


def test_base_rr_clip_keeps_the_old_clamp_explicitly(tmp_path: Path) -> None:
    code, doc, _ = check(tmp_path, "rr grid {0, 1} r 1/2 clip", ya=2, yb=14)  # 1 and 7 -> 1 and 1
    assert code == 0 and doc["properties"][0]["value"] == 0.0


def test_r_is_the_ratio_not_a_keep_probability() -> None:
    """``rr grid {0, 1, 2, 3} r 1/2`` keeps the value with probability 1/(1 + 3/2) = 2/5, reports each
    other point with 1/5 (LANGUAGE.md's old wording, keep with probability R, is not what is computed)."""
    s = parse_scenario(ONE.format(noise="rr grid {0, 1, 2, 3} r 1/2", ya=2, yb=4), "x.fl")
    mech = mechanism_of(s.noise[0].mechanism)
    assert mech is not None
    dist = dict(mech.scalar(Fraction(1)))
    assert dist[Fraction(1)] == Fraction(2, 5) and dist[Fraction(0)] == Fraction(1, 5)


RUN = "run noise_multiplier 1.1, rounds 100, sampling fixed 10 of 1000, clip 2, delta 1e-5"


def test_run_statement_parses_prints_and_changes_nothing_of_the_model() -> None:
    base = ONE.format(noise="rr grid {0, 1, 2} r 1/2", ya=2, yb=4)
    with_run = base.replace("protocol fedavg_rounds", RUN + "\nprotocol fedavg_rounds")
    s = parse_scenario(with_run, "x.fl")
    assert s.run is not None and s.run.sampling == "fixed" and (s.run.per_round, s.run.clients) == (10, 1000)
    assert s.run.noise_multiplier == Fraction(11, 10) and s.run.delta == Fraction(1, 100000)
    assert parse_scenario(s.to_text(), "y.fl") == s  # the printed form reads back
    plain = parse_scenario(base, "x.fl")
    from dataclasses import replace

    assert replace(s, run=None) == plain  # nothing but the run configuration differs


@pytest.mark.parametrize(("run", "message"), [
    ("run noise_multiplier 0", "noise_multiplier must be > 0"),
    ("run sampling poisson rate 3/2", "sampling rate must be in (0, 1]"),
    ("run sampling fixed 20 of 10", "needs 1 <= K <= N"),
    ("run sampling fixed", "needs 'K of N'"),
    ("run delta 1", "delta must be in (0, 1)"),
    ("run rounds 3, rounds 4", "second rounds"),
])
def test_run_statement_errors_are_positioned(run: str, message: str) -> None:
    text = ONE.format(noise="none", ya=2, yb=4).replace("protocol fedavg_rounds",
                                                        run + "\nprotocol fedavg_rounds")
    with pytest.raises(ModelError) as exc:
        parse_scenario(text, "x.fl")
    assert message in str(exc.value) and "x.fl:13:" in str(exc.value)
