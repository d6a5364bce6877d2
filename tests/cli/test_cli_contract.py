"""The command line's contract: one module per command, exit 3 on an engine failure (with ``--debug``
for the traceback), no output file over an input, and output files with the umask's mode."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import flcheck_spec
import pytest

from checker.cli.main import COMMAND_MODULES, build_parser, main
from checker.verdict import EXIT_BAD_INPUT, EXIT_INTERNAL

LINK_LOSS = flcheck_spec.bundled_scenarios()["moniteo_link_loss"]


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_command_lives_in_the_module_named_after_it() -> None:
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]  # argparse internals
    assert list(commands) == ["check", "ctl", "explore", "attack-tree", "privacy", "dp", "audit", "account",
                              "attack", "export", "sweep", "contacts", "list"]
    modules = [m.rsplit(".", 1)[1] for m in COMMAND_MODULES]
    assert modules == [c.replace("-", "_") for c in commands]
    for name in COMMAND_MODULES:  # each module registers exactly its own command
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(name).register(sub)
        assert [c.replace("-", "_") for c in sub.choices] == [name.rsplit(".", 1)[1]]


def test_engine_failure_is_exit_3_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import checker.app.load

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("engine exploded\nsecond line")

    monkeypatch.setattr(checker.app.load, "load_model", broken)
    assert main(["explore", str(LINK_LOSS)]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err == ("flcheck: internal error: RuntimeError: engine exploded "
                   "(run with --debug for the traceback)\n")
    assert main(["--debug", "explore", str(LINK_LOSS)]) == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "in broken" in err
    assert err.rstrip().endswith("(run with --debug for the traceback)")


def test_bad_input_stays_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "no-such-model.fl"]) == EXIT_BAD_INPUT
    assert "internal error" not in capsys.readouterr().err


def test_explore_never_writes_over_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "x.fl"
    model.write_bytes(LINK_LOSS.read_bytes())
    before = model.read_bytes()
    for option in ("--write-json", "--write-dot"):
        assert main(["explore", str(model), option, str(model)]) == EXIT_BAD_INPUT
        assert "one of this command's inputs" in capsys.readouterr().err
        assert model.read_bytes() == before
    # the same file under another name (a relative path from its folder) is refused too
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert main(["explore", str(model), "--write-json", "x.fl"]) == EXIT_BAD_INPUT
    finally:
        os.chdir(cwd)
    assert model.read_bytes() == before


def test_audit_plot_never_writes_over_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dists = tmp_path / "d.json"
    dists.write_text(json.dumps({"p0": {"a": "1/2", "b": "1/2"}, "p1": {"a": "1/4", "b": "3/4"}}))
    before = dists.read_bytes()
    code = main(["audit", str(dists), "--trials", "100", "--plot", str(dists)])
    assert code == EXIT_BAD_INPUT
    assert dists.read_bytes() == before


@pytest.mark.slow
def test_written_files_have_the_umask_mode(tmp_path: Path, umask_022: None,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    runs = [
        ["explore", str(LINK_LOSS), "--write-json", str(out / "k.json"), "--write-dot", str(out / "k.dot"),
         "--dot-max-states", "100000"],
        ["check", str(LINK_LOSS), "--report", str(out / "r.md"), "--report", str(out / "r.html")],
        ["attack-tree", str(LINK_LOSS), "--goal", "\"sat1\" in ready", "-o", str(out / "tree.dot"),
         "--format", "dot"],
        ["dp", "gaussian", "--mu", "1", "--eps", "1", "--plot", str(out / "g.png")],
    ]
    for argv in runs:
        assert main(argv) in (0, 1), argv
    capsys.readouterr()
    written = sorted(p for p in out.iterdir())
    names = {p.name for p in written}
    assert {"k.json", "k.dot", "r.md", "r.html", "tree.dot", "g.png"} <= names
    assert any(n.startswith("r_") and n.endswith(".png") for n in names)  # the Markdown report's pictures
    assert {p.name: oct(_mode(p)) for p in written} == {p.name: oct(0o644) for p in written}


def test_reports_state_every_property_s_formula_or_statement(tmp_path: Path) -> None:
    """The formula column: a CTL property's parsed formula, any other kind's statement as declared."""
    from checker.app.check import check_scenario
    from checker.app.report import statement_text
    from flmodel.scenario import parse_scenario
    from tests.test_language_reference import BASE

    report = check_scenario(parse_scenario(BASE, "base.fl"))
    said = {r.name: statement_text(report, r) for r in report.results}
    assert said == {"live": "AG (round < 1 -> EF (round == 1))",
                    "reach": 'attack_tree exists "sat1" in ready',
                    "dp": "privacy epsilon <= ln(2) between hot",
                    "adv": "advantage <= theorem1(ln(2)) between hot",
                    "sure": "probability min >= 1 reach round = 1"}
    for r in report.results:  # each statement reads back as the property it came from
        if r.kind != "ctl":
            again = parse_scenario(BASE + f"property again: {said[r.name]}\n", "again.fl").property("again")
            assert again.text().split(": ", 1)[1] == report.scenario.property(r.name).text().split(": ", 1)[1]
