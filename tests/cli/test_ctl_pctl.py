"""``flcheck ctl`` with PCTL operators: probabilities on explicit DTMCs/MDPs and on scenarios, checked
against stormpy on the example models stormpy ships, against brute force on random models, and the
CLI contract (JSON keys, --all-states, refusals)."""

from __future__ import annotations

import csv
import glob
import itertools
import json
import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.cli import main
from checker.errors import InputError
from checker.io.prism import read_explicit
from checker.markov.pctl import PctlEvaluator
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_ast import ProbQuery
from checker.mc.ctl_parse import parse_formula
from checker.mc.fixpoints import Semantics
from checker.mc.kripke import Kripke
from checker.mc.ts import Action


def _values(k: Kripke, text: str, *, total: bool = False) -> np.ndarray:
    mc = ModelChecker(k, Semantics.TOTAL if total else Semantics.IIIF)
    ev = PctlEvaluator(k, mc.sat, total=total)
    mc.probabilistic = ev.satisfying
    f = parse_formula(text)
    assert isinstance(f, ProbQuery)
    return np.array([float(v) for v in ev.values(f).tolist()])


# ------------------------------------------------------------------------------ stormpy agreement
def _storm_files() -> str | None:
    try:
        import stormpy.examples.files as files
    except ImportError:
        return None
    return os.path.join(os.path.dirname(files.__file__), "files")


STORM_MODELS = ["die", "crowds5_5", "leader4", "two_dice", "mdp_general", "dtmc_general", "pctl_general"]


def _labels(lab: str) -> list[str]:
    text = Path(lab).read_text().split("#END")[0]
    return [w for w in text.split() if w not in ("#DECLARATION", "init", "deadlock")]


def _sound(stormpy: object) -> object:
    """Storm's sound solver environment at precision 1e-10 (its default 1e-6 is the tolerance here)."""
    env = stormpy.environments.sound()  # type: ignore[attr-defined]  # stormpy has no type stubs
    solver = env.solver()
    solver.min_max().precision = stormpy.Rational("1/10000000000")  # type: ignore[attr-defined]
    solver.native().precision = stormpy.Rational("1/10000000000")  # type: ignore[attr-defined]
    return env


@pytest.mark.parametrize("name", STORM_MODELS)
def test_agrees_with_stormpy_on_its_example_models(name: str) -> None:
    stormpy = pytest.importorskip("stormpy")
    root = _storm_files()
    assert root is not None
    tra, lab = os.path.join(root, "tra", f"{name}.tra"), os.path.join(root, "lab", f"{name}.lab")
    model = stormpy.build_model_from_explicit(tra, lab)
    k = read_explicit([tra, lab])
    mdp = str(model.model_type).endswith("MDP")
    checked = 0
    for label in _labels(lab)[:4]:
        other = _labels(lab)[-1]
        for path in (f'F "{label}"', f'F<=4 "{label}"', f'G !"{label}"',
                     f'"{other}" | !"{label}" U "{label}"', f'!"{other}" U<=3 "{label}"',
                     f'X "{label}"'):  # Storm has no G<=k
            for q in (("Pmin", "Pmax") if mdp else ("P",)):
                text = f"{q}=? [{path}]"
                result = stormpy.model_checking(model, stormpy.parse_properties(text)[0],
                                                environment=_sound(stormpy))
                storm = np.array(list(result.get_value_vector()))
                ours = _values(k, text.replace('"', ""), total=True)
                assert np.max(np.abs(storm - ours)) < 1e-6, (name, text)
                checked += 1
    assert checked >= 7


def test_cli_json_agrees_with_stormpy_on_die_and_leader(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    stormpy = pytest.importorskip("stormpy")
    root = _storm_files()
    assert root is not None
    for name, text, storm_text in [("die", "P=? [F one]", 'P=? [F "one"]'),
                                   ("leader4", "Pmax=? [F<=20 elected]", 'Pmax=? [F<=20 "elected"]'),
                                   ("leader4", "Pmin=? [F elected]", 'Pmin=? [F "elected"]')]:
        tra, lab = os.path.join(root, "tra", f"{name}.tra"), os.path.join(root, "lab", f"{name}.lab")
        out = tmp_path / f"{name}.csv"
        assert main(["ctl", tra, lab, text, "--json", "--all-states", str(out)]) == 0
        data = json.loads(capsys.readouterr().out)
        model = stormpy.build_model_from_explicit(tra, lab)
        result = stormpy.model_checking(model, stormpy.parse_properties(storm_text)[0],
                                        environment=_sound(stormpy))
        storm = list(result.get_value_vector())
        assert data["command"] == "ctl" and data["kind"] == "probability"
        assert abs(data["value"] - storm[model.initial_states[0]]) < 1e-6
        rows = list(csv.DictReader(out.open()))
        assert len(rows) == model.nr_states
        assert max(abs(float(r["value"]) - storm[int(r["state"])]) for r in rows) < 1e-6


# ------------------------------------------------------------------------------ brute force
@st.composite
def models(draw: st.DrawFn) -> tuple[Kripke, list[list[dict[int, Fraction]]]]:
    """A random MDP (1..3 choices per state; some deadlocks) with exact probabilities, and its rows."""
    n = draw(st.integers(1, 5))
    rows: list[list[dict[int, Fraction]]] = []
    src, dst, act, prob = [], [], [], []
    for s in range(n):
        choices: list[dict[int, Fraction]] = []
        for c in range(0 if draw(st.integers(0, 4)) == 0 else draw(st.integers(1, 3))):
            targets = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True))
            weights = draw(st.lists(st.integers(1, 4), min_size=len(targets), max_size=len(targets)))
            dist = {t: Fraction(w, sum(weights)) for t, w in zip(targets, weights, strict=True)}
            choices.append(dist)
            for t, p in dist.items():
                src.append(s)
                dst.append(t)
                act.append(c)
                prob.append(p)
        rows.append(choices)
    labels = {name: np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
              for name in ("a", "b")}
    k = Kripke.from_edges(n, [0], src, dst, action=act, actions=(Action("x"), Action("y"), Action("z")),
                          prob_exact=prob, labels=labels)
    return k, rows


def _brute(rows: list[list[dict[int, Fraction]]], left: np.ndarray, right: np.ndarray, bound: int | None,
           objective: str) -> list[float]:
    """``opt_σ Pr_σ[left U<=bound right]`` over every deterministic memoryless scheduler σ (bounded:
    the exact sum over the paths of length <= bound, which memoryless schedulers also optimise step by
    step only in the limit, so bounded paths enumerate every scheduler per step)."""
    n = len(rows)
    if bound is not None:  # history-dependent optimum: dynamic programming over the remaining steps
        x = [Fraction(int(right[s])) for s in range(n)]
        for _ in range(bound):
            nxt: list[Fraction] = []
            for s in range(n):
                if right[s]:
                    nxt.append(Fraction(1))
                elif not left[s] or not rows[s]:
                    nxt.append(Fraction(0))
                else:
                    vals = [sum((p * x[t] for t, p in d.items()), Fraction(0)) for d in rows[s]]
                    nxt.append(max(vals) if objective == "max" else min(vals))
            x = nxt
        return [float(v) for v in x]
    best: list[float] | None = None
    for sigma in itertools.product(*[range(max(len(r), 1)) for r in rows]):
        v: np.ndarray = np.zeros(n)
        for _ in range(3000):  # the least fixpoint from 0 (float value iteration)
            y = np.array([1.0 if right[s] else 0.0 if not left[s] or not rows[s]
                          else sum(float(p) * v[t] for t, p in rows[s][sigma[s]].items()) for s in range(n)])
            if np.max(np.abs(y - v)) < 1e-13:
                break
            v = y
        best = [float(a) for a in v] if best is None else [
            max(a, b) if objective == "max" else min(a, b) for a, b in zip(best, v.tolist(), strict=True)]
    assert best is not None
    return best


@settings(max_examples=150, deadline=None)
@given(m=models(), objective=st.sampled_from(["min", "max"]), bound=st.sampled_from([None, 0, 1, 3]),
       kind=st.sampled_from(["F", "U", "G", "X"]))
def test_random_mdps_agree_with_brute_force(m: tuple[Kripke, list[list[dict[int, Fraction]]]], objective: str,
                                            bound: int | None, kind: str) -> None:
    k, rows = m
    a, b = k.labels["a"], k.labels["b"]
    q = "Pmax" if objective == "max" else "Pmin"
    b_text = "" if bound is None else f"<={bound}"
    true = np.ones(k.num_states, dtype=bool)
    if kind == "F":
        text, expected = f"{q}=? [F{b_text} b]", _brute(rows, true, b, bound, objective)
    elif kind == "U":
        text, expected = f"{q}=? [a U{b_text} b]", _brute(rows, a, b, bound, objective)
    elif kind == "G":
        flip = "min" if objective == "max" else "max"
        text, expected = f"{q}=? [G{b_text} a]", [1 - v for v in _brute(rows, true, ~a, bound, flip)]
    else:
        text = f"{q}=? [X a]"
        expected = [0.0 if not r else (max if objective == "max" else min)(
            sum(float(p) for t, p in d.items() if a[t]) for d in r) for r in rows]
    got = _values(k, text)
    assert np.max(np.abs(got - np.array(expected))) < 1e-6, (text, got, expected)


def test_exact_values_on_an_exact_chain() -> None:
    k = Kripke.from_edges(3, [0], [0, 0, 1, 1], [1, 2, 0, 2],
                          prob_exact=[Fraction(1, 3), Fraction(2, 3), Fraction(1, 2), Fraction(1, 2)],
                          labels={"goal": np.array([False, False, True])})
    mc = ModelChecker(k)
    ev = PctlEvaluator(k, mc.sat)
    f = parse_formula("P=? [F goal]")
    assert isinstance(f, ProbQuery)
    assert ev.values(f).tolist() == [Fraction(1), Fraction(1), Fraction(1)]
    g = parse_formula("P=? [X goal]")
    assert isinstance(g, ProbQuery)
    assert ev.values(g).tolist() == [Fraction(2, 3), Fraction(1, 2), Fraction(0)]  # state 2: a deadlock


# ------------------------------------------------------------------------------ the CLI contract
LAB = "#DECLARATION\ninit goal\n#END\n0 init\n2 goal\n"


def _files(tmp_path: Path, tra: str, lab: str = LAB) -> list[str]:
    (tmp_path / "m.tra").write_text(tra)
    (tmp_path / "m.lab").write_text(lab)
    return [str(tmp_path / "m.tra"), str(tmp_path / "m.lab")]


def test_cli_query_bound_and_nested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path, "dtmc\n0 1 1/2\n0 2 1/2\n1 1 1\n2 2 1\n")
    assert main(["ctl", *files, "P=? [F goal]", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["exact"] == "1/2" and data["value"] == 0.5 and data["initial"] == [
        {"state": 0, "value": 0.5, "exact": "1/2"}]
    assert main(["ctl", *files, "P>=0.5 [F goal]"]) == 0
    assert main(["ctl", *files, "P>0.5 [F goal]"]) == 1
    assert main(["ctl", *files, "EF P>=1 [G goal]"]) == 0
    capsys.readouterr()
    out = tmp_path / "all.json"
    assert main(["ctl", *files, "P=? [F goal]", "--all-states", str(out)]) == 0
    rows = json.loads(out.read_text())["states"]
    assert [r["exact"] for r in rows] == ["1/2", "0", "1"]


def test_cli_zero_probability_note_and_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path, "dtmc\n0 1 1\n0 2 0.0\n1 1 1\n2 2 1\n")
    assert main(["ctl", *files, "EF goal"]) == 1  # the zero line is no edge
    assert "1 transition(s) of probability 0 dropped" in capsys.readouterr().err
    mdp = _files(tmp_path, "mdp\n0 0 1 1 a\n0 1 2 1 b\n1 0 1 1\n2 0 2 1\n")
    assert main(["ctl", *mdp, "P=? [F goal]"]) == 2
    assert "Pmin or Pmax" in capsys.readouterr().err
    assert main(["ctl", *mdp, "Pmax=? [F goal]", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 1
    assert main(["ctl", *mdp, "D{ln(3), 0}[F goal]"]) == 2
    assert "--between" in capsys.readouterr().err
    ctmc = _files(tmp_path, "ctmc\n0 1 3\n0 2 1\n1 1 1\n2 2 1\n")
    assert main(["ctl", *ctmc, "P=? [F goal]", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 0.25
    assert main(["ctl", *ctmc, "P=? [F<=3 goal]"]) == 2
    assert "time-bounded CSL" in capsys.readouterr().err
    assert main(["ctl", *files, "EF goal", "--all-states", str(tmp_path / "x.csv")]) == 2
    assert main(["ctl", *files, "AG P=? [F goal]"]) == 2
    assert "is a query" in capsys.readouterr().err


def test_ctmc_untimed_queries_agree_with_stormpy(tmp_path: Path) -> None:
    """Untimed P on a CTMC is P on its embedded chain: a rate r from s is the probability r / E(s), E(s)
    the exit rate with self-loops counted (state 2, the goal: rates 1, 3 (itself) and 4 give X goal =
    3/8; state 0: rates 2 and 6 (to the goal) give 6/8)."""
    stormpy = pytest.importorskip("stormpy")
    files = _files(tmp_path, "ctmc\n0 1 2\n0 2 6\n1 1 1\n2 0 1\n2 2 3\n2 1 4\n")
    model = stormpy.build_model_from_explicit(*files)
    k = read_explicit(files)
    assert str(model.model_type).endswith("CTMC")
    for text in ("P=? [F goal]", "P=? [X goal]", "P=? [!goal U goal]", "P=? [G !goal]", "P=? [init U goal]"):
        quoted = text.replace("goal", '"goal"').replace("init", '"init"')
        storm = stormpy.model_checking(model, stormpy.parse_properties(quoted)[0])
        ours = _values(k, text, total=True)
        assert np.max(np.abs(np.array(list(storm.get_value_vector())) - ours)) < 1e-9, text
    assert _values(k, "P=? [X goal]", total=True).tolist() == [0.75, 0.0, 0.375]


@pytest.mark.slow
def test_cli_on_a_scenario_uses_its_markov_model(capsys: pytest.CaptureFixture[str]) -> None:
    import flcheck_spec

    from checker.app.check import check_scenario
    from flmodel.scenario import load_scenario

    assert main(["ctl", "moniteo_link_loss", "P=? [F round = 1]", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    report = check_scenario(load_scenario(flcheck_spec.bundled_scenarios()["moniteo_link_loss"]))
    uniform = [r for r in report.results if r.name == "completes_uniform"]
    if uniform:  # the scenario's own probability property under the uniform scheduler
        assert uniform[0].value is not None and abs(data["value"] - uniform[0].value) < 1e-9
    assert 0 < data["value"] < 1 and data["scheduler"] == "uniform"
    assert main(["ctl", "moniteo_link_loss", "Pmin=? [F round = 1]", "--json"]) == 0
    pmin = json.loads(capsys.readouterr().out)["value"]
    assert pmin <= data["value"]


def test_cli_type_checks_before_exploring(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    import checker.mc.explore

    def no_exploring(*args: object, **kwargs: object) -> None:
        raise AssertionError("explored before checking the formula")

    monkeypatch.setattr(checker.mc.explore, "explore", no_exploring)
    assert main(["ctl", "moniteo", "EF rond = 1"]) == 2
    assert "did you mean round" in capsys.readouterr().err
    assert main(["ctl", "moniteo", "P=? [F rond = 1]"]) == 2


def test_inputerror_for_incomplete_structures(tmp_path: Path) -> None:
    k = Kripke.from_edges(2, [0], [0], [1], prob_exact=[Fraction(1)])
    k.complete, k.limit_reason = False, "max_states"
    with pytest.raises(InputError, match="whole state space"):
        PctlEvaluator(k, ModelChecker(k).sat)


def test_storm_file_list() -> None:
    root = _storm_files()
    if root is None:
        pytest.skip("stormpy not installed")
    assert all(os.path.exists(os.path.join(root, "tra", f"{m}.tra")) for m in STORM_MODELS)
    assert glob.glob(os.path.join(root, "lab", "*.lab"))


def test_probability_json_matches_the_ctl_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    import flcheck_spec

    schema = json.loads((Path(flcheck_spec.__file__).parent / "schema" / "ctl.schema.json").read_text())
    files = _files(tmp_path, "mdp\n0 0 1 1/2 a\n0 0 2 1/2 a\n0 1 2 1 b\n1 0 1 1\n2 0 2 1\n")
    for argv in (["ctl", *files, "Pmin=? [F goal]", "--json", "--all-states", str(tmp_path / "v.json")],
                 ["ctl", *files, "Pmax>=1 [F goal]", "--json"],
                 ["ctl", "moniteo", "P=? [F round = 1]", "--json"]):
        assert main(argv) in (0, 1)
        doc = json.loads(capsys.readouterr().out)
        jsonschema.Draft202012Validator(schema).validate(doc)
    assert json.loads((tmp_path / "v.json").read_text())["states"][0]["exact"] == "1/2"
