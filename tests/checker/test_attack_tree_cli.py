"""``flcheck attack-tree``: formats, exit codes, the blocking invariant, bad input."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from checker import cli
from checker.cli import attack_tree as cmd
from checker.mc.explore import explore
from tests.checker.test_attack_tree_export import DOT
from tests.checker.test_attack_trees_fl import MiniFL


@pytest.fixture()
def mini(monkeypatch: pytest.MonkeyPatch) -> None:
    kripke = explore(MiniFL())
    monkeypatch.setattr(cmd, "_load", lambda path, args: (kripke, None))


def test_text_answer_exit_0(mini: None, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["attack-tree", "mini.fl", "--goal", '"sat2" in leaked'])
    out = capsys.readouterr().out
    assert code == 0
    assert "attack tree: valid" in out
    assert "sniff by eve at loc2 [sat2]: leaked {} -> {sat2}" in out
    assert "read_server by eve at hub" in out  # the second, genuinely different way (minimal attacks)


def test_json_has_valid_flag(mini: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["attack-tree", "m", "--goal", '"sat2" in leaked', "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["valid"] is True and data["attack_exists"] is True and data["tree"]["valid"] is True
    assert data["verdict"] == "holds" and len(data["alternatives"]["s0"]) >= 2


def test_file_outputs(mini: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dot = tmp_path / "t.dot"
    assert cli.main(["attack-tree", "m", "--goal", '"sat2" in leaked', "--format", "dot", "-o",
                     str(dot), "--all-attacks", "--max-attacks", "3"]) == 0
    assert "written to" in capsys.readouterr().out
    DOT.parse(dot.read_text())
    xml = tmp_path / "t.xml"
    assert cli.main(["attack-tree", "m", "--goal", '"sat2" in leaked', "--format", "adtool", "-o",
                     str(xml), "--max-depth", "4"]) == 0
    root = ET.parse(xml).getroot()
    assert root.tag == "adtree" and root.find("node").get("refinement") == "disjunctive"  # type: ignore[union-attr]


def test_no_attack_exit_1_with_invariant(mini: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["attack-tree", "m", "--goal", "round >= 2"]) == 1
    out = capsys.readouterr().out
    assert "no attack" in out and "blocking invariant: AG ¬(round >= 2)" in out
    assert "round only takes the values {0, 1} there" in out
    assert cli.main(["attack-tree", "m", "--goal", "round >= 2", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["valid"] is False and data["verdict"] == "violated"
    assert data["blocking_invariant"]["certificate_checked"] is True


def test_bad_input_exit_2(mini: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["attack-tree", "m", "--goal", "round >="]) == 2
    err = capsys.readouterr().err
    assert "--goal:1:" in err
    assert cli.main(["attack-tree", "m", "--goal", "round >= 1", "--max-attacks", "0"]) == 2
    assert cli.main(["attack-tree", "m", "--goal", "nosuchthing"]) == 2


def test_end_to_end_from_a_json_model_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No monkeypatching: the model goes through the application loader (JSON Kripke format)."""
    from checker.io.kripke_json import write_json

    path = tmp_path / "mini.json"
    write_json(explore(MiniFL()), path)
    out_file = tmp_path / "tree.json"
    assert cli.main(["attack-tree", str(path), "--goal", '"sat2" in leaked', "--json", "-o",
                     str(out_file)]) == 0
    data = json.loads(out_file.read_text())
    assert data["valid"] is True and data["tree"]["valid"] is True
    kinds = [n["kind"] for n in data["tree"]["nodes"]]
    assert kinds.count("and") >= 2 and kinds[-1] == "or"
    assert cli.main(["attack-tree", str(tmp_path / "missing.json"), "--goal", "true"]) == 2
    capsys.readouterr()


def test_check_reads_back_an_exported_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from checker.io.kripke_json import write_json

    model = tmp_path / "mini.json"
    write_json(explore(MiniFL()), model)
    tree_file = tmp_path / "t.json"
    goal = '"sat2" in leaked'
    assert cli.main(["attack-tree", str(model), "--goal", goal, "--json", "-o", str(tree_file)]) == 0
    assert cli.main(["attack-tree", str(model), "--check", str(tree_file), "--goal", goal]) == 0
    out = capsys.readouterr().out
    assert "valid" in out and "attack = (initial states" in out and ": yes" in out
    assert cli.main(["attack-tree", str(model), "--check", str(tree_file), "--goal", '"sat1" in leaked']) == 1
    doc = json.loads(tree_file.read_text())
    base = next(n for n in doc["tree"]["nodes"] if n["kind"] == "base")
    base["goal"] = base["initial"]  # a step that goes nowhere: no self-loops in this model
    tree_file.write_text(json.dumps(doc))
    assert cli.main(["attack-tree", str(model), "--check", str(tree_file)]) == 1
    assert "INVALID" in capsys.readouterr().out
    tree_file.write_text("{not json")
    assert cli.main(["attack-tree", str(model), "--check", str(tree_file)]) == 2
    assert cli.main(["attack-tree", str(model)]) == 2  # neither --goal nor --check
