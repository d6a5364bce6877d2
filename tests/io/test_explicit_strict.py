"""The explicit-model reader is strict where Storm is (every state named by the transitions, labels and
valuations only on those states) and lenient where the formats are (comments, zero-probability lines,
action-labelled MDP lines, CTMC rates); the writer's files load in Storm and back in flcheck."""

from __future__ import annotations

import glob
import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.cli import main
from checker.errors import InputError
from checker.io.prism import read_explicit, write_explicit
from checker.mc.ctl import ModelChecker
from checker.mc.kripke import Kripke
from checker.mc.ts import Action

LAB = "#DECLARATION\ninit goal\n#END\n0 init\n1 goal\n"


def _model(tmp_path: Path, tra: str, lab: str = LAB, sta: str | None = None) -> Path:
    (tmp_path / "m.tra").write_text(tra)
    (tmp_path / "m.lab").write_text(lab)
    if sta is not None:
        (tmp_path / "m.sta").write_text(sta)
    return tmp_path / "m"


def _error(prefix: Path) -> str:
    with pytest.raises(InputError) as info:
        read_explicit(prefix)
    return str(info.value)


def test_storm_label_for_a_state_the_transitions_do_not_name_is_positioned(tmp_path: Path) -> None:
    message = _error(_model(tmp_path, "dtmc\n0 1 1\n1 1 1\n", LAB + "7 goal\n"))
    assert "m.lab:6:" in message and "state id 7 out of range" in message and "m.tra names" in message
    # an init label there would start the model in a state that does not exist
    assert "m.lab:5:" in _error(_model(tmp_path, "dtmc\n0 0 1\n", LAB + "3 init\n"))


def test_cli_exit_2_for_the_absent_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefix = _model(tmp_path, "dtmc\n0 1 1\n1 1 1\n", LAB + "7 goal\n")
    assert main(["ctl", f"{prefix}.tra", f"{prefix}.lab", "EF goal"]) == 2
    assert main(["explore", f"{prefix}.tra", f"{prefix}.lab"]) == 2
    assert capsys.readouterr().err.count("m.lab:6:") == 2


def test_sta_out_of_range_ids_name_the_line(tmp_path: Path) -> None:
    for sta in ("(x)\n0:(1)\n1:(2)\n5:(3)\n", "(x,y)\n0:(1,true)\n9:(2,false)\n"):
        message = _error(_model(tmp_path, "dtmc\n0 1 1\n1 1 1\n", sta=sta))
        assert "m.sta:" in message and "out of range" in message
    assert "m.sta:4:" in _error(_model(tmp_path, "dtmc\n0 1 1\n1 1 1\n", sta="(x)\n0:(1)\n1:(2)\n5:(3)\n"))


def test_full_line_comments_in_tra_and_lab(tmp_path: Path) -> None:
    tra = "# a model\ndtmc\n# rows\n0 1 1/2\n0 0 1/2\n  # indented\n1 1 1\n"
    lab = "#DECLARATION\ninit goal\n#END\n# labels\n0 init\n1 goal\n"
    k = read_explicit(_model(tmp_path, tra, lab))
    assert k.num_states == 2 and k.num_transitions == 3
    assert ModelChecker(k).check("EF goal").verdict.exit_code() == 0
    prism = read_explicit(_model(tmp_path, "2 3\n# c\n0 1 0.5\n0 0 0.5\n1 1 1\n",
                                 '0="init" 1="goal"\n# c\n0: 0\n1: 1\n'))
    assert prism.num_states == 2
    # a line after the comments is still reported at its own line
    assert "m.tra:5:" in _error(_model(tmp_path, "dtmc\n# c\n0 1 1\n# c\n1 1 nan\n"))


def test_zero_probability_transitions_are_dropped_and_counted(tmp_path: Path) -> None:
    k = read_explicit(_model(tmp_path, "dtmc\n0 1 0.0\n0 0 1\n1 1 1\n"))
    assert k.num_transitions == 2 and k.stats["zero_probability_transitions"] == 1
    assert ModelChecker(k).check("EF goal").verdict.exit_code() == 1  # 0 1 0.0 is no edge
    # a state whose lines all have probability 0 is a deadlock; a trailing one is still a state
    k = read_explicit(_model(tmp_path, "dtmc\n0 1 1\n1 2 1\n2 2 0\n", LAB + "2 goal\n"))
    assert k.num_states == 3 and bool(k.deadlocks[2])


def test_a_tiny_positive_probability_is_not_a_zero(tmp_path: Path) -> None:
    assert "sum to" in _error(_model(tmp_path, "dtmc\n0 1 1e-400\n1 1 1\n"))


def test_storm_action_labelled_mdp_lines(tmp_path: Path) -> None:
    tra = "mdp\n0 0 1 0.5 go\n0 0 0 0.5 go\n0 1 1 1 jump\n1 0 1 1\n"
    k = read_explicit(_model(tmp_path, tra))
    assert {str(a) for a in k.actions} == {"go [0]", "jump [1]", "choice [0]"}
    result = ModelChecker(k).check("EX goal")
    assert "--go [0]-->" in result.render()  # the witness names the action
    # written back with the names, and read again the same
    write_explicit(k, tmp_path / "w")
    assert "0 1 1 1.0 jump" in (tmp_path / "w.tra").read_text()
    again = read_explicit(tmp_path / "w")
    assert {str(a) for a in again.actions} == {str(a) for a in k.actions}


def test_ctmc_rates_become_the_embedded_chain(tmp_path: Path) -> None:
    k = read_explicit(_model(tmp_path, "ctmc\n0 0 2\n0 1 6\n1 1 1\n1 0 0\n"))
    assert k.stats["ctmc"] == 1 and k.stats["zero_probability_transitions"] == 1
    assert k.edge_prob is not None
    probs = {int(d): float(p) for d, p in zip(k.succ_idx[:2], k.edge_prob[:2], strict=True)}
    assert probs == {0: 0.25, 1: 0.75}
    assert "negative rate" in _error(_model(tmp_path, "ctmc\n0 1 -1\n1 1 1\n"))


def test_ma_files_are_refused_clearly(tmp_path: Path) -> None:
    assert "Markov automata" in _error(_model(tmp_path, "ma\n0 ! \n* 0 1\n"))


# ---------------------------------------------------------------------------------- the writer
def _random_kripke(draw: st.DrawFn) -> Kripke:
    n = draw(st.integers(1, 6))
    src, dst, act, prob = [], [], [], []
    for s in range(n):
        if draw(st.booleans()) and s:  # a deadlock (also the last state)
            continue
        for a in range(draw(st.integers(1, 2))):
            targets = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True))
            for t in targets:
                src.append(s)
                dst.append(t)
                act.append(a)
                prob.append(Fraction(1, len(targets)))
    labels = {"goal": np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)}
    return Kripke.from_edges(n, [0], src, dst, action=act, actions=(Action("a"), Action("b")),
                             prob_exact=prob, labels=labels)


@st.composite
def kripkes(draw: st.DrawFn) -> Kripke:
    return _random_kripke(draw)


@settings(max_examples=40, deadline=None)
@given(k=kripkes(), flavor=st.sampled_from(["storm", "prism"]))
def test_written_models_read_back_with_their_deadlocks(tmp_path_factory: pytest.TempPathFactory, k: Kripke,
                                                        flavor: str) -> None:
    folder = tmp_path_factory.mktemp("w")
    write_explicit(k, folder / "m", flavor=flavor)
    back = read_explicit(folder / "m")
    assert back.num_states == k.num_states and back.num_transitions == k.num_transitions
    assert np.array_equal(back.deadlocks, k.deadlocks)
    assert np.array_equal(back.labels["goal"], k.labels["goal"])


def test_storm_loads_what_flcheck_writes(tmp_path: Path) -> None:
    stormpy = pytest.importorskip("stormpy")
    # a trailing deadlock (state 3, named by no transition but labelled), a middle one (state 1)
    k = Kripke.from_edges(4, [0], [0, 0, 2], [1, 2, 2], action=[0, 1, 0],
                          actions=(Action("go"), Action("stay")),
                          prob_exact=[Fraction(1), Fraction(1), Fraction(1)],
                          labels={"goal": np.array([False, True, False, True])})
    for flavor_k in (k, Kripke.from_edges(3, [0], [0, 0], [1, 2], prob_exact=[Fraction(1, 4), Fraction(3, 4)],
                                          labels={"goal": np.array([False, False, True])})):
        write_explicit(flavor_k, tmp_path / "m")
        model = stormpy.build_model_from_explicit(str(tmp_path / "m.tra"), str(tmp_path / "m.lab"))
        assert model.nr_states == flavor_k.num_states
        assert model.nr_transitions == flavor_k.num_transitions  # the '0' lines are no transitions
        goal = {s.id for s in model.states if "goal" in s.labels}
        assert goal == set(np.flatnonzero(flavor_k.labels["goal"]).tolist())
        for state in model.states:  # a deadlock is an empty row in Storm too
            mass = sum(t.value for a in state.actions for t in a.transitions)
            assert mass == pytest.approx(0.0 if flavor_k.deadlocks[state.id] else float(len(state.actions)))


def _storm_examples() -> list[tuple[str, str]]:
    try:
        import stormpy.examples.files as files
    except ImportError:
        return []
    root = os.path.join(os.path.dirname(files.__file__), "files")
    labs = {os.path.basename(p)[:-4]: p for p in glob.glob(os.path.join(root, "lab", "*.lab"))}
    return [(t, labs[os.path.basename(t)[:-4]]) for t in sorted(glob.glob(os.path.join(root, "tra", "*.tra")))
            if os.path.basename(t)[:-4] in labs]


@pytest.mark.parametrize(("tra", "lab"), _storm_examples(), ids=lambda p: os.path.basename(p))
def test_storm_example_files_load_as_storm_loads_them(tra: str, lab: str) -> None:
    stormpy = pytest.importorskip("stormpy")
    try:
        model = stormpy.build_model_from_explicit(tra, lab)
    except RuntimeError:
        model = None
    if Path(tra).read_text().split()[0].lower() == "ma":  # refused by design, with the file's position
        with pytest.raises(InputError, match="Markov automat") as refused:
            read_explicit([tra, lab])
        assert refused.value.position is not None and refused.value.position.line is not None
        return
    try:
        k = read_explicit([tra, lab])
    except InputError as exc:  # flcheck rejects only what Storm rejects or non-distributions
        assert model is None or "sum to" in str(exc), exc
        assert exc.position is not None and exc.position.line is not None
        return
    assert model is not None
    assert k.num_states == model.nr_states and k.num_transitions == model.nr_transitions
    for name in model.labeling.get_labels():
        storm_states = {s.id for s in model.states if name in s.labels}
        ours = set(np.flatnonzero(k.labels.get(name, np.zeros(k.num_states, dtype=bool))).tolist())
        assert ours == storm_states, name
