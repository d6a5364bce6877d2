"""``flcheck check``: expected verdicts of every bundled scenario, figures cross-checked against
independent computations, CLI table / JSON / reports, and errors pointing into the scenario file."""

from __future__ import annotations

import itertools
import json
import math
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import flcheck_spec
import pytest

import checker.app.check_pairs as check_pairs
from checker.app.check import check_file
from checker.cli import main
from checker.verdict import Verdict

BUNDLED = flcheck_spec.bundled_scenarios()
H, V, HV = Verdict.HOLDS, Verdict.VIOLATED, Verdict.HOLDS_VACUOUSLY


@pytest.fixture(scope="module")
def moniteo():  # type: ignore[no-untyped-def]
    return check_file(BUNDLED["moniteo"])


def _verdicts(report) -> dict[str, Verdict]:  # type: ignore[no-untyped-def]
    return {r.name: r.verdict for r in report.results}


def test_moniteo_expected_verdicts(moniteo) -> None:  # type: ignore[no-untyped-def]
    assert _verdicts(moniteo) == {
        "round_can_complete": H, "no_stuck_round": H, "eval_needs_all": H, "dataset_fixed": H,
        "secret_stays": H, "eavesdrop_secret_report": H, "ni_fl_dp": H, "adv_theorem1": H,
        "adv_tight": H, "round_almost_surely": H, "crossval_ni_fl_dp": H,
    }
    assert moniteo.exit_code == 0
    assert moniteo.kripke.complete


def _rr(u: Fraction, grid: list[Fraction], r: Fraction) -> dict[Fraction, Fraction]:
    """k-ary randomized response, written independently of flmodel.noise: snap to the nearest grid
    point (ties to the smaller point, as ``RandomizedResponse.snap`` documents), keep it with probability
    1/(1+(m-1)r), any other point with r/(1+(m-1)r)."""
    snapped = min(grid, key=lambda g: (abs(g - u), g))
    z = 1 + (len(grid) - 1) * r
    return {g: (1 / z if g == snapped else r / z) for g in grid}


def _moniteo_release(points: list[tuple[Fraction, Fraction]]) -> dict[tuple[Fraction, ...], Fraction]:
    """Brute force: each satellite's update (w0 = 0, eta = 1/2, squared loss with intercept, one point)
    is (y/2)(1, x); each coordinate goes through RR on {0,1,2,3} with r = 1/3 independently; the
    released model is the average of the three noisy updates (equal weights 1/3)."""
    grid = [Fraction(g) for g in range(4)]
    per_client = []
    for x, y in points:
        upd = (y / 2, y * x / 2)
        d0, d1 = _rr(upd[0], grid, Fraction(1, 3)), _rr(upd[1], grid, Fraction(1, 3))
        per_client.append({(a, b): pa * pb for a, pa in d0.items() for b, pb in d1.items()})
    out: dict[tuple[Fraction, ...], Fraction] = defaultdict(Fraction)
    for combo in itertools.product(*(c.items() for c in per_client)):
        v = tuple(sum(val[i] for val, _ in combo) / 3 for i in range(2))
        p = math.prod((q for _, q in combo), start=Fraction(1))
        out[v] += p
    return dict(out)


def test_moniteo_privacy_figures_match_brute_force(moniteo) -> None:  # type: ignore[no-untyped-def]
    f = Fraction
    d0 = _moniteo_release([(f(0), f(3)), (f(1), f(2)), (f(2), f(1))])
    d1 = _moniteo_release([(f(0), f(3)), (f(1), f(2)), (f(2), f(3))])
    assert sum(d0.values()) == 1 and sum(d1.values()) == 1
    ratio = max(max(d0[o] / d1[o], d1[o] / d0[o]) for o in d0)
    assert set(d0) == set(d1)
    res = {r.name: r for r in moniteo.results}
    assert res["ni_fl_dp"].details["ratio"] == str(ratio)
    assert res["ni_fl_dp"].details["scheduler_independent"] == [True, True]
    assert res["ni_fl_dp"].value == pytest.approx(math.log(ratio))
    tv = sum(max(d1[o] - d0[o], 0) for o in d0)
    assert res["adv_theorem1"].details["advantage"] == str(tv)
    assert tv <= 1 - Fraction(1, 9)  # Theorem 1 read as a bound at eps = ln 9
    # the numerical privacy-loss distribution (checker.crossval) agrees with the exact ratio
    assert res["crossval_ni_fl_dp"].value == pytest.approx(math.log(ratio), rel=1e-9)
    # the engine's distributions are exactly the brute-force ones
    e0, e1, names, _eps, _ = moniteo.artefacts["privacy"]["ni_fl_dp"]
    assert names == ("curmodpar",)  # observed as the sequence of releases: one release in one round
    assert {tuple(k[0]): v for k, v in e0.items()} == d0 and {tuple(k[0]): v for k, v in e1.items()} == d1


def test_moniteo_distribution_agrees_with_privacy_observation(moniteo) -> None:  # type: ignore[no-untyped-def]
    from checker.app import privacy_fl
    from flmodel.scenario import load_scenario
    from flmodel.scenario_build import build_system, neighbour_dataset

    s = load_scenario(BUNDLED["moniteo"])
    fl = build_system(s).fl
    obs0 = privacy_fl.observe_dataset(fl)
    obs1 = privacy_fl.observe_dataset(fl, neighbour_dataset(s, "hot"))
    e0, e1, *_ = moniteo.artefacts["privacy"]["ni_fl_dp"]
    for ours, theirs in ((e0, obs0.releases), (e1, obs1.releases)):
        expected = {tuple(map(tuple, k)): v for k, v in theirs.items()}
        assert {tuple(map(tuple, k)): v for k, v in ours.items()} == expected
    # the order of the reports does not change the release distribution (decided, not skipped)
    assert obs0.scheduler_independent is True


def test_seed_model_expected_verdicts() -> None:
    rep = check_file(BUNDLED["seed_model"])
    assert _verdicts(rep) == {
        "repartition_twice": H, "client_reports_twice": H, "one_report_per_round": V,
        "eval_when_ready": H, "eval_only_when_ready": H, "dataset_never_changes": H,
        "eval_before_put_part": H, "ready_reset": H, "ni_fl_dp_no_noise": V,
    }
    res = {r.name: r for r in rep.results}
    assert res["one_report_per_round"].evidence.startswith("counterexample: get_grad(c1")
    assert res["ni_fl_dp_no_noise"].value == math.inf
    # put_part's choice of partition is nondeterministic: the release depends on the scheduler
    assert res["ni_fl_dp_no_noise"].details["scheduler_independent"] == [False, False]
    assert "WARNING" in res["ni_fl_dp_no_noise"].evidence
    assert rep.exit_code == 1


@pytest.mark.slow
def test_link_loss_expected_verdicts() -> None:
    rep = check_file(BUNDLED["moniteo_link_loss"])
    assert _verdicts(rep) == {
        "round_can_complete": V, "stuck_mid_round": H, "link_gone_after_step_2": H,
        "sat3_reports_in_time": H, "report_lost_in_flight": H, "no_partial_aggregate": H,
        "eve_copies_sat3": H, "completes_uniform": H, "completes_worst": H, "completes_best": H,
        "ni_fl_dp": H,
    }
    res = {r.name: r for r in rep.results}
    assert res["completes_uniform"].details["probability"] == "33/50"  # 2/3 · (1 − (1/10)^2), see the file
    assert res["completes_worst"].value == 0
    trace = res["stuck_mid_round"].details["trace"]
    assert [s["action"] for s in trace["steps"][1:]] == [
        "get_grad_round_noisy(sat1@orbit1)", "get_grad_round_noisy(sat2@orbit2)"]


@pytest.mark.slow
def test_swarm8_expected_verdicts() -> None:
    rep = check_file(BUNDLED["moniteo_swarm8"])
    assert _verdicts(rep) == {
        "round_can_complete": H, "no_stuck_round": H, "eval_needs_all": H, "round_almost_surely": H,
        "ni_fl_dp": H, "adv_theorem1": H, "ni_fl_dp_strict": V,
    }
    res = {r.name: r for r in rep.results}
    assert res["ni_fl_dp"].details["ratio"] == "2"  # sat8's single report is the worst case
    # 72,097 states unreduced; the ctl and probability properties read rounds, ready and enabledness
    # (the cone forgets the models and updates), the privacy properties explore on their own; the
    # counter abstraction takes one step per occupied local state of a class (the same 46 states)
    assert rep.reductions.names == ["dead_values", "cone", "symmetry", "counter"]
    assert rep.kripke.num_states == 46


# ------------------------------------------------------------------------------------------ CLI
def test_cli_default_is_moniteo_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "Moniteo" in out and "moniteo.fl" in out
    header = next(line for line in out.splitlines() if line.startswith("property"))
    assert header.split() == ["property", "kind", "verdict", "figure", "evidence"]
    assert "ni_fl_dp" in out and "ln(6)" in out and "11 holds" in out


@pytest.mark.slow
def test_cli_json_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(BUNDLED["moniteo_link_loss"]), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert {"scenario", "states", "transitions", "properties"} <= set(data)
    assert data["states"] == 7026  # 10338 unreduced: the network rules state the dead-value footprint
    for p in data["properties"]:
        assert {"name", "kind", "verdict", "value", "evidence"} <= set(p)
        assert p["verdict"] in {v.value for v in Verdict}
    assert {p["name"]: p["verdict"] for p in data["properties"]}["round_can_complete"] == "violated"


@pytest.mark.slow
def test_cli_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    md = tmp_path / "out" / "r.md"
    assert main(["check", str(BUNDLED["moniteo_link_loss"]), "--report", str(md)]) == 1
    text = md.read_text()
    assert "| round_can_complete | ctl | `AG (round < 1 -> EF (round == 1))` | **violated** |" in text
    pictures = sorted((tmp_path / "out").glob("r_locations.*.png"))  # named after their content
    assert len(pictures) == 1 and pictures[0].read_bytes()[:4] == b"\x89PNG"
    assert f"![Location graph and actors](<{pictures[0].name}>)" in text
    html = tmp_path / "r.html"
    assert main(["check", "--report", str(html), "--property", "eavesdrop_secret_report",
                 "--property", "ni_fl_dp"]) == 0
    page = html.read_text()
    assert page.count("data:image/png;base64,") == 3  # locations, attack tree, privacy figure
    assert not list(tmp_path.glob(".r.html.*"))  # atomic write leaves no temporary file
    assert main(["check", "--report", str(tmp_path / "r.txt")]) == 2


def test_cli_bad_scenario_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = BUNDLED["moniteo"].read_text()
    bad = tmp_path / "bad.fl"
    bad.write_text(text.replace("clients sat1 at orbit1", "clients sat1 at orbit9"))
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err
    line = 1 + next(i for i, ln in enumerate(text.splitlines()) if ln.startswith("clients sat1"))
    assert f"{bad}:{line}:9:" in err and "unknown location 'orbit9'" in err


def test_formula_errors_point_into_the_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = BUNDLED["moniteo_link_loss"].read_text()
    lines = text.splitlines()
    idx = next(i for i, ln in enumerate(lines) if ln.startswith("property sat3_reports_in_time"))
    lines[idx] = "property sat3_reports_in_time: ctl AG (!ready_sat3 &);"
    jdx = next(i for i, ln in enumerate(lines) if ln.startswith("property stuck_mid_round"))
    lines[jdx] = "property stuck_mid_round: ctl EF no_such_thing;"
    bad = tmp_path / "f.fl"
    bad.write_text("\n".join(lines) + "\n")
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err
    col = lines[idx].index("&") + 2
    assert f"{bad}:{idx + 1}:{col}:" in err
    assert f"{bad}:{jdx + 1}:" in err and "no_such_thing" in err


def test_unknown_property_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(BUNDLED["moniteo_link_loss"]), "--property", "nope"]) == 2


def test_attack_without_criterion_is_unknown_not_a_guess(tmp_path: Path) -> None:
    from checker.app.check import check_scenario
    from flmodel.scenario import parse_scenario

    text = BUNDLED["moniteo_link_loss"].read_text() + "property atk: attack nosuch\n"
    s = parse_scenario(text, "atk.fl")
    from flmodel.errors import ModelError

    line = text.count("\n")
    with pytest.raises(ModelError, match=f"atk.fl:{line}:10: property 'atk': unknown attack 'nosuch'"):
        check_scenario(s, only=["atk"])


def test_attack_property_decides_only_with_a_stated_criterion() -> None:
    """Helper G's SRATTA experiment: ``max_rho_recovered`` states what must hold; the verdict follows
    the measured figure (reported in the details), and without a criterion it is "unknown"."""
    from checker.app.check import check_scenario
    from flmodel.scenario import parse_scenario

    opts = "n_clients = 2 per_client = 10 hidden = 100 rounds = 5"
    text = (BUNDLED["moniteo_link_loss"].read_text()
            + f"property loose: attack sratta {opts} max_rho_recovered = 0.95\n"
            + f"property strict: attack sratta {opts} max_rho_recovered = 0.05\n"
            + f"property measure: attack sratta {opts}\n")
    rep = check_scenario(parse_scenario(text, "atk.fl"), only=["loose", "strict", "measure"])
    res = {r.name: r for r in rep.results}
    rho = res["loose"].details["result"]["rho_recovered"]
    assert res["strict"].details["result"]["rho_recovered"] == rho  # seeded: same experiment
    assert res["loose"].verdict is (H if rho <= 0.95 else V)
    assert res["strict"].verdict is (H if rho <= 0.05 else V)
    assert res["measure"].verdict is Verdict.UNKNOWN and "no max_<metric>" in res["measure"].evidence


def test_per_client_noise() -> None:
    """Only sat3 (holding the secret point) adds noise: its report is released almost unmixed, so the
    released model is exactly as private as sat3's report: e^ε* = 3·3 = 9 (two coordinates, RR ratio 3
    each), worse than ln 6 when every satellite adds noise."""
    from checker.app.check import check_scenario
    from flmodel.scenario import parse_scenario
    from flmodel.scenario_build import build_system

    text = BUNDLED["moniteo"].read_text().replace(
        "noise rr grid {0, 1, 2, 3} r 1/3 on update",
        "noise rr grid {0, 1, 2, 3} r 1/3 on update\nnoise for sat1, sat2: none")
    s = parse_scenario(text, "per_client.fl")
    ts = build_system(s)
    (s0,) = ts.initial_states()
    outcomes: dict[str, int] = defaultdict(int)
    for action, _, _ in ts.successors(s0):
        outcomes[action.actor] += 1
    assert outcomes == {"sat1": 1, "sat2": 1, "sat3": 16}
    rep = check_scenario(s, only=["ni_fl_dp", "adv_tight"])
    res = {r.name: r for r in rep.results}
    assert res["ni_fl_dp"].details["ratio"] == "9" and res["ni_fl_dp"].verdict is H
    # sat3's report alone: TV of two products of RR(1/2 keep, 1/6 other) differing in both coordinates
    keep, other = Fraction(1, 2), Fraction(1, 6)
    # update (y/2)(1, x): D0 (x=2, y=1) -> (1/2, 1) snapped to (0, 1) (ties down); D1 (y=3) -> (1, 3)
    p = {(a, b): (keep if a == 0 else other) * (keep if b == 1 else other)
         for a in range(4) for b in range(4)}
    q = {(a, b): (keep if a == 1 else other) * (keep if b == 3 else other)
         for a in range(4) for b in range(4)}
    tv = sum(max(q[o] - p[o], 0) for o in p)
    assert res["adv_tight"].details["advantage"] == str(tv)


def test_probability_schedulers_on_moniteo() -> None:
    """First-passage probabilities: the round completes under every scheduler; whether sat1 reports
    first depends on the scheduler (Pmin = 0, Pmax = 1, uniform = 1/3 by symmetry of the 3 satellites)."""
    from checker.app.check import check_scenario
    from flmodel.scenario import parse_scenario

    text = BUNDLED["moniteo"].read_text() + (
        'property u: probability uniform == 1 reach round = 1;\n'
        'property first_min: probability min <= 0 reach ready == {"sat1"};\n'
        'property first_max: probability max >= 1 reach ready == {"sat1"};\n'
        'property first_uni: probability uniform == 1/3 reach ready == {"sat1"};\n'
        'property first_uni_wrong: probability uniform > 1/3 reach ready == {"sat1"};\n')
    rep = check_scenario(parse_scenario(text, "p.fl"), only=["u", "first_min", "first_max", "first_uni",
                                                             "first_uni_wrong"])
    assert _verdicts(rep) == {"u": H, "first_min": H, "first_max": H, "first_uni": H, "first_uni_wrong": V}


def test_incomplete_exploration_gives_unknown_not_guesses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--max-states", "500", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["complete"] is False and data["states"] <= 500 + 64
    verdicts = {p["name"]: p["verdict"] for p in data["properties"]}
    # a found attack is an attack also in a partial structure; the privacy figures come from their own
    # explorations, complete within the limit (reduced to one order of the reports); everything else
    # is undecided
    assert verdicts.pop("eavesdrop_secret_report") == "holds"
    for side in ("D0", "D1"):
        assert data["reductions"]["explorations"][0][side]["states"] <= 500
    decided = ("ni_fl_dp", "adv_theorem1", "adv_tight", "crossval_ni_fl_dp")
    assert {verdicts.pop(n) for n in decided} == {"holds"}
    assert set(verdicts.values()) == {"unknown"}


def test_a_failure_inside_the_model_is_an_internal_error(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A bug while building the FL system (not bad input the model finds) is exit 3 with one line, not
    exit 2 blaming the scenario file."""
    import flmodel.scenario_build as scenario_build

    def broken(_s: object) -> object:
        raise TypeError("unsupported operand")

    monkeypatch.setattr(scenario_build, "build_fl_system", broken)
    assert main(["check", "moniteo"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "internal error" in err[0]


def test_an_engine_failure_in_dp_is_an_internal_error(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    """A ``ValueError`` inside the D{ε,δ} engine is a bug (exit 3), not an ``unknown`` verdict; the
    engine's stated refusals (no memoryless scheduler, an incomplete exploration) stay ``unknown``."""
    def broken(*_a: object, **_k: object) -> object:
        raise ValueError("math domain error")

    from tests.strategies import star_scenario_text

    path = tmp_path / "dp.fl"
    path.write_text(star_scenario_text([1, 2], noise="rr grid {0, 1, 2, 3, 4} r 1/2", hot=True,
                                       properties=["dp D{ln(2), 0}[F curmodpar == 1] between hot;"]))
    assert main(["check", str(path)]) in (0, 1)
    monkeypatch.setattr(check_pairs, "dp_check", broken)
    assert main(["check", str(path)]) == 3
