"""Bad input gets exit 2 with a positioned one-line message: typed atoms checked against the model's
vocabulary, deeply nested formulas, explicit files whose ids, bytes or probabilities are wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.cli.main import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize(("formula", "needle"), [
    ("AG !enabled(eval_rond)", "did you mean eval_round?"),
    ('AG round != "1"', "round is an integer"),
    ("AG ready == 3", "set of client names"),
    ("AG curmodpar == (1, 2, 3)", "has 3 components"),
    ('AG ready == {"sat1", "satx"}', "unknown client 'satx'"),
    ("AG !gaol", "unknown label 'gaol'"),
])
def test_ill_typed_atoms_on_a_scenario_exit_2(capsys: pytest.CaptureFixture[str], formula: str,
                                               needle: str) -> None:
    code, err = _run(capsys, "ctl", "moniteo", formula)
    assert code == 2
    assert needle in err and "<formula>:1:" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def _files(tmp_path: Path, name: str, tra: bytes, lab: bytes | None = None) -> str:
    (tmp_path / f"{name}.tra").write_bytes(tra)
    if lab is not None:
        (tmp_path / f"{name}.lab").write_bytes(lab)
    return str(tmp_path / f"{name}.tra")


@pytest.mark.parametrize(("tra", "lab", "needle"), [
    (b"2 2\n0 1 1\n1 1 1\n", b"#DECLARATION\ninit goal\n#END\n0 goal\n5 init\n", "m.lab:5: state id 5"),
    (b"dtmc\n0 100000000000 1\n", None, "m.tra:2: state id 100000000000 out of range"),
    (b"dtmc\n0 300000000 1\n", None, "m.tra:2: state id 300000000 out of range"),
    (b"dtmc\n0 123456789012345678901234 1\n", None, "m.tra:2:"),
    (b"dtmc\n0 0 1\n", b"#DECLARATION\ninit\n#END\n100000000000 init\n", "m.lab:4: state id 100000000000"),
    (b"dtmc\n0 1 1\xff\n1 1 1\n", None, "m.tra:2: byte 0xff is not UTF-8"),
    (b"dtmc\n0 1 1e400\n0 0 1/2\n1 1 1\n", None, "m.tra:2: probability 1e400"),
    (b"4 1\n0 3000000000 1\n", None, "m.tra:2: state id 3000000000"),
])
def test_bad_explicit_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], tra: bytes,
                                   lab: bytes | None, needle: str) -> None:
    code, err = _run(capsys, "ctl", _files(tmp_path, "m", tra, lab), "EF true")
    assert code == 2
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("tra", [
    b"\xef\xbb\xbfdtmc\r\n0 1 1/2\r\n0 0 1/2\r\n1 1 1\r\n",
    b"dtmc\n0 1 1/3\n0 0 2/3\n1 1 1\n",
    b"dtmc\n0 1 0.3333333333\n0 0 0.6666666667\n1 1 1\n",
    b"3 2\n0 1 1\n1 1 1\n",
])
def test_well_formed_explicit_files_still_load(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               tra: bytes) -> None:
    code, err = _run(capsys, "ctl", _files(tmp_path, "m", tra), "EF true")
    assert code == 0, err


def test_unknown_label_of_an_explicit_model_suggests_one(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = _files(tmp_path, "m", b"dtmc\n0 1 1\n1 1 1\n", b"#DECLARATION\ninit goal\n#END\n0 init\n1 goal\n")
    code, err = _run(capsys, "ctl", path, "EF gaol")
    assert code == 2 and "did you mean goal?" in err


@pytest.mark.parametrize("prefix", ["!", "EX ", "AG ", "EF "])
def test_a_thousand_nested_operators_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                prefix: str) -> None:
    lab = b"#DECLARATION\ninit goal\n#END\n0 init goal\n1 goal\n"
    path = _files(tmp_path, "m", b"dtmc\n0 1 1\n1 1 1\n", lab)
    assert main(["ctl", path, prefix * 1000 + "goal", "--no-vacuity"]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


def test_too_deep_a_formula_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _files(tmp_path, "m", b"dtmc\n0 0 1\n")
    code, err = _run(capsys, "ctl", path, "!" * 10_001 + "p")
    assert code == 2 and "<formula>:1:" in err and "formula nested more than 1000 levels" in err
    assert "Traceback" not in err
