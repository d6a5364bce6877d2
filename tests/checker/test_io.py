"""Interchange formats (PRISM/Storm explicit, JSON, DOT), the shared FL benchmark family, and the
``flcheck ctl`` / ``flcheck explore`` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.cli import main
from checker.errors import InputError
from checker.io.dot import to_dot
from checker.io.kripke_json import kripke_from_json, kripke_to_json, read_json, write_json
from checker.io.prism import read_explicit, write_explicit
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_parse import parse_formula
from checker.mc.kripke import Kripke
from checker.mc.ts import Action
from tests.checker.ctl_reference import ReferenceChecker
from tests.strategies import kripke_structures

#: The shared benchmark generator: ``shared/`` lies beside the repository (also in CI's clone).
GEN = next(
    (p for p in (Path(__file__).resolve().parents[3] / "shared" / "bench" / "gen_fl_kripke.py",
                 Path("/work/shared/bench/gen_fl_kripke.py")) if p.exists()),
    Path("/work/shared/bench/gen_fl_kripke.py"),
)


def edge_set(k: Kripke) -> set[tuple[int, int, str]]:
    return {(int(s), int(t), str(k.actions[int(a)]))
            for s, t, a in zip(k.edge_src, k.succ_idx, k.edge_action, strict=True)}


def plain_edges(k: Kripke) -> set[tuple[int, int]]:
    return {(int(s), int(t)) for s, t in zip(k.edge_src, k.succ_idx, strict=True)}


# ------------------------------------------------------------------ explicit format round trips
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(k=kripke_structures(max_states=9, probabilistic=True), flavor=st.sampled_from(["storm", "prism"]))
def test_explicit_round_trip(tmp_path: Path, k: Kripke, flavor: str) -> None:
    write_explicit(k, tmp_path / "m", flavor=flavor)
    back = read_explicit(tmp_path / "m")
    back.validate()
    if flavor == "prism":
        assert back.num_states == k.num_states  # the PRISM header carries the state count
    else:
        # Storm's files cannot express trailing states that have no transition and no label
        assert back.num_states <= k.num_states
        assert not any(arr[back.num_states:].any() for arr in k.labels.values())
    assert plain_edges(back) == plain_edges(k)
    assert back.initial.tolist() == k.initial.tolist()
    for name, arr in k.labels.items():
        assert back.labels[name].tolist() == arr[: back.num_states].tolist()
    assert back.edge_prob is not None
    order_k = np.lexsort((k.succ_idx, k.edge_src))
    order_b = np.lexsort((back.succ_idx, back.edge_src))
    assert np.allclose(np.asarray(k.edge_prob)[order_k], back.edge_prob[order_b])


def test_mdp_round_trip_and_exact_rationals(tmp_path: Path) -> None:
    acts = (Action("a"), Action("b"))
    k = Kripke.from_edges(3, [0], [0, 0, 0, 1, 2], [1, 2, 2, 2, 2], action=[0, 0, 1, 0, 0], actions=acts,
                          prob_exact=[Fraction(1, 3), Fraction(2, 3), Fraction(1), Fraction(1), Fraction(1)],
                          labels={"goal": np.array([False, False, True])},
                          observables={"x": np.array([4, 5, 6])})
    k.validate()
    paths = write_explicit(k, tmp_path / "mdp", flavor="storm")
    assert [p.suffix for p in paths] == [".tra", ".lab", ".sta"]
    text = (tmp_path / "mdp.tra").read_text()
    # Storm reads no p/q: decimals (1/3 as the float that reads back as float(1/3))
    assert text.startswith("mdp\n") and "0 0 1 0.3333333333333333 a\n" in text and "0 1 2 1 b\n" in text
    back = read_explicit(tmp_path / "mdp")
    back.validate()
    assert back.edge_prob is not None and 1 / 3 in back.edge_prob.tolist()
    assert {str(a) for a in back.actions} == {"a [0]", "b [1]"}  # Storm's fifth field keeps the names
    assert list(back.observables["x"]) == [4, 5, 6]
    write_explicit(k, tmp_path / "pm", flavor="prism")
    assert (tmp_path / "pm.tra").read_text().startswith("3 4 5\n")
    exact = read_explicit(tmp_path / "pm").edge_prob_exact  # the PRISM flavour keeps p/q
    assert exact is not None and Fraction(1, 3) in exact
    assert plain_edges(read_explicit(tmp_path / "pm.tra")) == plain_edges(k)


def test_kripke_without_probabilities_is_written_as_uniform_dtmc(tmp_path: Path) -> None:
    k = Kripke.from_edges(3, [0], [0, 0, 1], [1, 2, 2])
    write_explicit(k, tmp_path / "u")
    assert "0 1 0.5\n" in (tmp_path / "u.tra").read_text() and "2 2 0\n" in (tmp_path / "u.tra").read_text()
    read_explicit(tmp_path / "u").validate()  # the deadlock's zero line keeps it a deadlock


# ------------------------------------------------------------------ malformed explicit files
@pytest.mark.parametrize(
    ("tra", "lab", "line", "message"),
    [
        ("dtmcx\n0 1 1\n", None, 1, "unrecognised header"),
        ("dtmc\n0 1 1\n1 x 1\n", None, 3, "field 2 is 'x'"),
        ("dtmc\n0 1 1\n\n1 1\n", None, 4, "2 fields"),
        ("dtmc\n0 1 1\n1 1 1 7\n", None, 3, "4 fields"),
        ("dtmc\n0 1 1\n1 1 abc\n", None, 3, "probability 'abc'"),
        ("dtmc\n0 1 1\n1 1 1\n", "#DECLARATION\ninit goal\n#END\n0 init\n1 gaol\n", 5,
         "undeclared label 'gaol'"),
        ("dtmc\n0 1 1\n1 1 1\n", "#DECLARATION\ninit\n#END\n0 init\nx init\n", 5, "state id"),
        ("dtmc\n0 1 1\n1 1 1\n", '0="init" 1="goal"\n0: 0\n1: 3\n', 3, "undeclared label index"),
        ("dtmc\n0 1 1\n1 1 1\n", "init goal\n", 1, "unrecognised label header"),
    ],
)
def test_malformed_explicit_files_name_file_and_line(tmp_path: Path, tra: str, lab: str | None, line: int,
                                                     message: str) -> None:
    (tmp_path / "m.tra").write_text(tra)
    bad = "m.tra"
    if lab is not None:
        (tmp_path / "m.lab").write_text(lab)
        bad = "m.lab"
    with pytest.raises(InputError) as info:
        read_explicit(tmp_path / "m")
    assert message in str(info.value)
    assert info.value.position is not None
    assert info.value.position.source.endswith(bad) and info.value.position.line == line


def test_out_of_range_ids_against_prism_header(tmp_path: Path) -> None:
    (tmp_path / "m.tra").write_text("2 2\n0 1 1\n1 5 1\n")
    with pytest.raises(InputError, match="out of range"):
        read_explicit(tmp_path / "m.tra")


# ------------------------------------------------------------------ JSON and DOT
def test_json_round_trip_with_observables(tmp_path: Path) -> None:
    k = Kripke.from_edges(3, [0], [0, 1, 1], [1, 2, 0], action=[0, 1, 1],
                          actions=(Action("get_grad", "c1"), Action("eval_server")),
                          prob_exact=[Fraction(1), Fraction(1, 4), Fraction(3, 4)],
                          labels={"goal": np.array([False, False, True])},
                          observables={"m": [Fraction(1, 2), 2, Fraction(-3, 7)],
                                       "ready": [frozenset(), frozenset({"c1"}), frozenset({"c1", "c2"})],
                                       "pos": [(1, 2), (3, 4), (5, 6)], "name": ["a", "b", "c"]},
                          state_names=["init", "mid", "end"])
    write_json(k, tmp_path / "k.json")
    back = read_json(tmp_path / "k.json")
    back.validate()
    assert edge_set(back) == edge_set(k)
    assert back.edge_prob_exact is not None and k.edge_prob_exact is not None
    assert sorted(back.edge_prob_exact) == sorted(k.edge_prob_exact)
    assert back.observables["m"] == [Fraction(1, 2), 2, Fraction(-3, 7)]
    assert back.observables["ready"][2] == frozenset({"c1", "c2"})
    assert back.observables["pos"][1] == (3, 4)
    assert list(back.state_names or []) == ["init", "mid", "end"]
    assert ModelChecker(back).sat('"c2" in ready').tolist() == [False, False, True]
    assert kripke_to_json(back) == kripke_to_json(k)


@settings(max_examples=40, deadline=None)
@given(k=kripke_structures(max_states=8))
def test_json_round_trip_random(k: Kripke) -> None:
    back = kripke_from_json(json.loads(json.dumps(kripke_to_json(k))))
    assert plain_edges(back) == plain_edges(k)
    assert {n: a.tolist() for n, a in back.labels.items()} == {n: a.tolist() for n, a in k.labels.items()}


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ('{"states": 2,\n "transitions": [[0, 1],]}', "invalid JSON", 2),
        ('{"states": 2, "transitions": [[0, 5]]}', "transitions[0].to", None),
        ('{"states": 2, "transitions": [[0, 1, "x"]]}', "probability 'x'", None),
        ('{"states": 2, "transitions": [[0, 1, "1/2"]]}', "sum to 1/2", None),
        ('{"transitions": []}', "states: missing key", None),
        ('{"states": 2, "transitions": [], "labels": {"g": [3]}}', "labels.g[0]", None),
    ],
)
def test_malformed_json(tmp_path: Path, text: str, message: str, line: int | None) -> None:
    (tmp_path / "k.json").write_text(text)
    with pytest.raises(InputError) as info:
        read_json(tmp_path / "k.json")
    assert message in str(info.value)
    assert str(info.value).startswith(str(tmp_path / "k.json"))
    if line is not None:
        assert info.value.position is not None and info.value.position.line == line


def test_dot_output() -> None:
    k = Kripke.from_edges(2, [0], [0], [1], actions=(Action("go"),), labels={"goal": np.array([False, True])})
    dot = to_dot(k)
    assert dot.startswith("digraph kripke {") and '0 -> 1 [label="go"];' in dot
    assert 'label="s1\\ngoal"' in dot and "penwidth" in dot


# ------------------------------------------------------------------ the shared FL benchmark family
def _generate(tmp_path: Path, k: int, r: int, v: int, flavor: str) -> Path:
    prefix = tmp_path / f"fl_{k}_{r}_{v}_{flavor}"
    subprocess.run([sys.executable, str(GEN), "-K", str(k), "-R", str(r), "-V", str(v), "-o", str(prefix),
                    "--flavor", flavor, "--sta"], check=True, capture_output=True)
    return prefix


@pytest.mark.skipif(not GEN.exists() and not os.environ.get("CI"),
                    reason="shared/bench/gen_fl_kripke.py not beside the repository (CI always has it)")
@pytest.mark.parametrize(("k", "r", "v", "flavor"),
                         [(2, 2, 3, "storm"), (3, 1, 2, "prism"), (2, 3, 2, "storm")])
def test_fl_family_loads_with_closed_form_sizes_and_reference_verdicts(tmp_path: Path, k: int, r: int, v: int,
                                                                      flavor: str) -> None:
    prefix = _generate(tmp_path, k, r, v, flavor)
    meta = json.loads(prefix.with_suffix(".json").read_text())
    model = read_explicit(prefix)
    model.validate()
    assert model.num_states == meta["closed_form"]["states"]
    assert model.num_transitions == meta["closed_form"]["transitions"]
    assert {n: int(a.sum()) for n, a in model.labels.items()} == meta["labels"]
    assert set(model.observables) == {"r", "mask", *(f"g{c}" for c in range(k)), "m"}
    for semantics in ("iiif", "total"):
        mc = ModelChecker(model, semantics)
        ref = ReferenceChecker(model, semantics)
        for f in ("EF goal", "AG !goal", "E[!clipped U goal]", "EG !goal", "AF done",
                  "AG (all_ready -> AX !all_ready)"):
            ff = parse_formula(f)
            assert set(np.flatnonzero(mc.sat(ff)).tolist()) == ref.sat(ff), (f, semantics)
    # observables from the .sta file are usable in formulas
    assert ModelChecker(model).check(f"EF (r == {r} & m == 0)", vacuity=False).holds


# ------------------------------------------------------------------ CLI
@pytest.fixture
def small_model(tmp_path: Path) -> Path:
    k = Kripke.from_edges(3, [0], [0, 1, 2], [1, 2, 2], labels={"goal": np.array([False, False, True])},
                          observables={"x": np.array([0, 1, 2])})
    write_explicit(k, tmp_path / "small")
    return tmp_path / "small"


def test_cli_ctl_exit_codes_and_json(small_model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ctl", str(small_model), "EF goal"]) == 0
    assert "holds" in capsys.readouterr().out
    assert main(["ctl", str(small_model) + ".tra", str(small_model) + ".lab", "AG !goal", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"flcheck", "schema", "command", "formula", "verdict", "semantics", "states",
                        "transitions", "satisfying_initial", "counterexample"}
    assert out["verdict"] == "violated" and out["semantics"] == "iiif" and out["states"] == 3
    assert out["counterexample"]["states"] == [0, 1, 2]
    assert out["counterexample"]["steps"][2]["changed"] == {"x": 2, "goal": True}
    assert main(["ctl", str(small_model), "EG !goal", "--semantics", "total", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["semantics"] == "total"
    assert main(["ctl", str(small_model), "EF x == 2", "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    assert js["verdict"] == "holds" and js["satisfying_initial"] == [0]
    assert js["witness"]["states"] == [0, 1, 2]


def test_cli_bad_input_exit_2(small_model: Path, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ctl", str(small_model), "EF (goal"]) == 2
    assert "<formula>:1:9" in capsys.readouterr().err
    assert main(["ctl", str(small_model), "EF gaol"]) == 2
    assert "unknown label 'gaol'" in capsys.readouterr().err
    assert main(["ctl", str(tmp_path / "missing.tra"), "EF goal"]) == 2
    (tmp_path / "bad.tra").write_text("dtmc\n0 1\n")
    assert main(["ctl", str(tmp_path / "bad.tra"), "EF goal"]) == 2
    assert "bad.tra:2" in capsys.readouterr().err
    assert main(["ctl", str(small_model), "EF goal", "--semantics", "nusmv"]) == 2


def test_cli_explore(small_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(small_model), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"states", "transitions", "deadlocks", "depth", "time"} <= set(out)
    assert (out["states"], out["transitions"], out["deadlocks"], out["depth"]) == (3, 3, 0, 2)
    k = Kripke.from_edges(2, [0], [0], [1])
    write_json(k, tmp_path / "k.json")
    assert main(["explore", str(tmp_path / "k.json")]) == 0
    assert "1 deadlocks" in capsys.readouterr().out


def test_cli_explore_writes_interchange_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    k = Kripke.from_edges(3, [0], [0, 0, 1], [1, 2, 2], action=[0, 1, 0],
                          actions=(Action("get_grad", "c1"), Action("eval_server")),
                          observables={"round": [0, 0, 1], "ready_c1": [False, True, True],
                                       "ready": [frozenset(), frozenset({"c1"}), frozenset({"c1"})]},
                          labels={"goal": np.array([False, False, True])})
    write_json(k, tmp_path / "k.json")
    assert main(["explore", str(tmp_path / "k.json"), "--write-explicit", str(tmp_path / "x"),
                 "--write-dot", str(tmp_path / "x.dot"), "--write-json", str(tmp_path / "y.json"),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["written"]) == 5
    back = read_explicit(tmp_path / "x")
    assert plain_edges(back) == plain_edges(k)
    assert back.labels["ready_c1"].tolist() == [False, True, True]  # boolean observable -> label
    assert list(back.observables["round"]) == [0, 0, 1]          # integer observable -> .sta
    assert "mdp" in (tmp_path / "x.tra").read_text().splitlines()[0]  # two actions in state 0
    assert edge_set(read_json(tmp_path / "y.json")) == edge_set(k)
    assert (tmp_path / "x.dot").read_text().startswith("digraph")
