"""Bad input never gets a verdict: every option is validated while the command line is parsed (exit 2,
one line naming the option and the value, no traceback), bad output destinations are refused before
any work, errors under ``--json`` are a JSON object, exit codes tell the truth (an incomplete
exploration is exit 1), and every command reads bundled scenarios by name."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import flcheck_spec
import pytest

from checker import __version__
from checker.cli import audit as audit_cli
from checker.cli.main import main
from checker.cli.options import comma_list, nonneg_float_or_inf, output_directory, plot_file
from checker.verdict import EXIT_BAD_INPUT, EXIT_HOLDS, EXIT_VIOLATED

BUNDLED = flcheck_spec.bundled_scenarios()
LINK_LOSS = str(BUNDLED["moniteo_link_loss"])


def _one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``argv``; assert exit 2 with exactly one line on stderr and no traceback; return the line."""
    code = main(argv)
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == EXIT_BAD_INPUT, (argv, captured.err)
    assert len(lines) == 1, (argv, captured.err)
    assert "Traceback" not in captured.err + captured.out
    assert lines[0].startswith("flcheck: error: ")
    return lines[0]


@pytest.mark.parametrize(("argv", "option", "value"), [
    (["dp", "gaussian", "--mu", "1", "--eps", "nan"], "--eps", "nan"),
    (["dp", "gaussian", "--mu", "1", "--eps", "inf"], "--eps", "inf"),
    (["dp", "gaussian", "--mu", "1", "--eps", "-1"], "--eps", "-1"),
    (["dp", "gaussian", "--mu", "1", "--eps", "1e400"], "--eps", "1e400"),
    (["dp", "gaussian", "--mu", "nan", "--eps", "1"], "--mu", "nan"),
    (["dp", "gaussian", "--mu", "1", "--eps", "1", "--delta", "2"], "--delta", "2"),
    (["dp", "secagg", "--entries", "uniform", "--n", "0", "--eps", "1"], "--n", "0"),
    (["dp", "secagg", "--entries", "uniform", "--n", "3", "--eps", "1", "--interval", "nan"], "--interval",
     "nan"),
    (["dp", "fig1", "--dims", "0"], "--dims", "0"),
    (["ctl", LINK_LOSS, "EF true", "--max-seconds", "nan"], "--max-seconds", "nan"),
    (["explore", LINK_LOSS, "--max-memory", "nan"], "--max-memory", "nan"),
    (["explore", LINK_LOSS, "--max-states", "-5"], "--max-states", "-5"),
    (["explore", LINK_LOSS, "--max-states", "many"], "--max-states", "many"),
    (["attack-tree", LINK_LOSS, "--goal", "true", "--max-depth", "-1"], "--max-depth", "-1"),
    (["attack-tree", LINK_LOSS, "--goal", "true", "--max-attacks", "0"], "--max-attacks", "0"),
    (["check", LINK_LOSS, "--max-seconds", "-3"], "--max-seconds", "-3"),
    (["privacy", "example:seed", "--eps", "nan"], "--eps", "nan"),
    (["privacy", "example:seed", "--eps", "-1"], "--eps", "-1"),
    (["privacy", "example:seed", "--eps", "100000000000000000"], "--eps", "100000000000000000"),
    (["privacy", "example:seed", "--max-memory-mb", "inf"], "--max-memory-mb", "inf"),
    (["audit", "rr:p=3/4", "--formal-eps", "nan"], "--formal-eps", "nan"),
    (["audit", "rr:p=3/4", "--seed", "-1"], "--seed", "-1"),
    (["audit", "rr:p=3/4", "--trials", "0"], "--trials", "0"),
    (["audit", "rr:p=3/4", "--confidence", "1"], "--confidence", "1"),
    (["export", "isabelle", "seed_model", "-o", "out", "--max-states", "0"], "--max-states", "0"),
    (["attack", "mia", "--epsilons", "inf,nan"], "--epsilons", "nan"),
    (["attack", "sratta", "--seed", "-2"], "--seed", "-2"),
])
def test_bad_option_values_are_refused_while_parsing(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                     option: str, value: str) -> None:
    line = _one_line_error(capsys, argv)
    assert option in line and repr(value).strip("'") in line


def test_too_many_audit_trials_are_refused_with_the_memory_estimate(capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    line = _one_line_error(capsys, ["audit", "rr:p=3/4", "--trials", "100000000000"])
    assert "100000000000 trials need about" in line and "available" in line
    # a stated amount of memory: the estimate is compared with it, before any sample is drawn
    monkeypatch.setattr(audit_cli, "available_memory", lambda: 10 * audit_cli.audit_bytes(1000))

    def never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the audit ran")

    monkeypatch.setattr("checker.crossval.audit.audit", never)
    line = _one_line_error(capsys, ["audit", "gaussian:mu=1", "--trials", "20000"])
    assert "at most about 10000 trials" in line


def test_trials_zero_in_a_crossval_property_is_bad_input(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    text = BUNDLED["moniteo"].read_text(encoding="utf-8")
    scenario = tmp_path / "zero.fl"
    scenario.write_text(text + "\nproperty zero_trials: crossval between hot trials = 0\n", encoding="utf-8")
    code = main(["check", str(scenario), "--property", "zero_trials"])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT and "Traceback" not in err
    assert len(err.splitlines()) == 1 and f"{scenario}:71:" in err and "trials" in err and "0" in err


@pytest.mark.parametrize("argv", [
    ["dp", "gaussian", "--mu", "1", "--eps", "1", "--plot", "{tmp}"],
    ["dp", "gaussian", "--mu", "1", "--eps", "1", "--plot", "{tmp}/out.txt"],
    ["attack-tree", LINK_LOSS, "--goal", "true", "-o", "{tmp}"],
    ["explore", LINK_LOSS, "--write-json", "{tmp}"],
    ["explore", LINK_LOSS, "--write-dot", "{tmp}/file.txt/k.dot"],
    ["export", "isabelle", "seed_model", "-o", "{tmp}/file.txt"],
    ["check", LINK_LOSS, "--report", "{tmp}"],
    ["audit", "rr:p=3/4", "--plot", "{tmp}/plot"],
])
def test_bad_output_destinations_are_refused_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        argv: list[str]) -> None:
    (tmp_path / "file.txt").write_text("not a directory\n")

    def never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the command started working")

    # the commands import their engines when they run: import them first, so that no module imported
    # while the patches are on keeps a patched name after the test
    for module in ("checker.app.check", "checker.app.isabelle.export_files", "checker.app.isabelle.theory",
                   "checker.cli.attack_tree", "checker.cli.audit"):
        importlib.import_module(module)
    for target in ("checker.app.load.load_model", "checker.app.check.check_scenario",
                   "checker.app.isabelle.sources.load_export"):
        monkeypatch.setattr(target, never)
    line = _one_line_error(capsys, [a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert str(tmp_path) in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_errors_under_json_are_a_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["dp", "gaussian", "--mu", "1", "--eps", "nan", "--json"])
    captured = capsys.readouterr()
    assert code == EXIT_BAD_INPUT and len(captured.err.splitlines()) == 1
    doc = json.loads(captured.out)
    assert doc["flcheck"] == __version__ and doc["schema"] == 1 and doc["command"] == "dp gaussian"
    assert "--eps" in doc["error"]["message"] and set(doc["error"]) >= {"message", "file", "line", "column"}
    # an error found by the command: the position of the input
    code = main(["ctl", LINK_LOSS, "EF (", "--json"])
    captured = capsys.readouterr()
    assert code == EXIT_BAD_INPUT and captured.err.startswith("flcheck: error: <formula>:1:")
    doc = json.loads(captured.out)
    assert doc["command"] == "ctl" and doc["error"]["file"] == "<formula>" and doc["error"]["line"] == 1
    assert isinstance(doc["error"]["column"], int)
    code = main(["check", LINK_LOSS, "--report", "r.txt", "--json"])
    captured = capsys.readouterr()
    assert code == EXIT_BAD_INPUT and json.loads(captured.out)["command"] == "check"
    assert captured.err == "flcheck: error: --report r.txt: expected a file name ending in .md or .html\n"
    code = main(["explore", "no_such_scenario", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == EXIT_BAD_INPUT and doc["command"] == "explore"
    assert doc["error"]["file"] == "no_such_scenario"


def test_incomplete_exploration_is_exit_1_in_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "moniteo", "--max-states", "5"]) == EXIT_VIOLATED
    assert "INCOMPLETE" in capsys.readouterr().out
    assert main(["explore", "moniteo", "--max-states", "5", "--json"]) == EXIT_VIOLATED
    assert json.loads(capsys.readouterr().out)["complete"] is False
    assert main(["ctl", "moniteo", "AG true", "--max-states", "5", "--json"]) == EXIT_VIOLATED
    assert json.loads(capsys.readouterr().out)["verdict"] == "unknown"
    assert main(["attack-tree", "moniteo", "--goal", "false", "--max-states", "5"]) == EXIT_VIOLATED
    assert main(["explore", "moniteo_link_loss"]) == EXIT_HOLDS
    capsys.readouterr()
    # privacy and audit explore the observed system: a limit there is 'unknown' too, not bad input
    assert main(["privacy", "seed_model", "--max-states", "5"]) == EXIT_VIOLATED
    captured = capsys.readouterr()
    assert captured.err.startswith("flcheck: unknown: ") and "state limit" in captured.err
    assert main(["privacy", "seed_model", "--max-states", "5", "--json"]) == EXIT_VIOLATED
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "unknown" and doc["command"] == "privacy"
    assert "state limit" in doc["limit_reason"]


def test_holding_vacuously_names_the_subformula_on_stderr_under_json(
        capsys: pytest.CaptureFixture[str]) -> None:
    formula = "AG (false -> round >= 1)"
    assert main(["ctl", "moniteo_link_loss", formula]) == EXIT_HOLDS
    out = capsys.readouterr().out
    assert "vacuous" in out and "never satisfied" in out
    assert main(["ctl", "moniteo_link_loss", formula, "--json"]) == EXIT_HOLDS
    captured = capsys.readouterr()
    assert json.loads(captured.out)["verdict"] == "holds vacuously"
    assert captured.err.startswith("flcheck: note: holds vacuously: ") and "never satisfied" in captured.err


@pytest.mark.parametrize("argv", [
    ["explore", "{name}", "--json"],
    ["ctl", "{name}", "EF true", "--json"],
    ["attack-tree", "{name}", "--goal", "true", "--json"],
])
@pytest.mark.slow
def test_model_commands_read_bundled_names(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    outputs = []
    for model in ("moniteo_link_loss", LINK_LOSS):
        assert main([a.replace("{name}", model) for a in argv]) == EXIT_HOLDS
        doc = json.loads(capsys.readouterr().out)
        outputs.append({k: v for k, v in doc.items() if k not in ("time", "seconds", "model")})
    assert outputs[0] == outputs[1]


def test_every_command_names_the_bundled_scenarios_for_an_unknown_name(
        capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["explore", "monitoe"], ["ctl", "monitoe", "EF true"],
                 ["attack-tree", "monitoe", "--goal", "true"], ["check", "monitoe"],
                 ["privacy", "monitoe"], ["audit", "monitoe"],
                 ["export", "isabelle", "monitoe", "-o", "unused"]):
        line = _one_line_error(capsys, argv)
        assert "did you mean moniteo" in line, argv
        assert all(name in line for name in BUNDLED), argv


@pytest.mark.slow
def test_check_privacy_and_export_read_bundled_names(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "moniteo_link_loss", "--json"]) in (EXIT_HOLDS, EXIT_VIOLATED)
    assert json.loads(capsys.readouterr().out)["scenario"] == LINK_LOSS
    assert main(["privacy", "seed_model", "--json", "--no-literal", "--no-decomposition"]) in (EXIT_HOLDS,
                                                                                               EXIT_VIOLATED)
    assert "pairs" in json.loads(capsys.readouterr().out)
    code = main(["export", "isabelle", "seed_model", "-o", str(tmp_path / "thy")])
    assert code == EXIT_HOLDS and (tmp_path / "thy" / "Scenario_seed_model.thy").exists()
    capsys.readouterr()


def test_privacy_reads_examples_through_the_one_resolver(capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_line_error(capsys, ["privacy", "example:nothing"])
    assert "unknown example 'nothing'" in line and "example:moniteo_rr" in line  # the resolver's list
    line = _one_line_error(capsys, ["privacy", "example:moniteo:bogus=1"])
    assert "unknown example option(s) bogus" in line


def test_list_prints_the_bundled_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == EXIT_HOLDS
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == sorted(BUNDLED)
    assert any(line.split(maxsplit=1)[1] == "Moniteo: swarm of 8 satellites" for line in lines)
    assert main(["list", "--json"]) == EXIT_HOLDS
    doc = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in doc["scenarios"]] == sorted(BUNDLED)
    assert all(Path(s["path"]) == BUNDLED[s["name"]] and s["title"] for s in doc["scenarios"])


def test_option_types() -> None:
    import argparse

    assert comma_list(nonneg_float_or_inf)("inf,1/2") == [float("inf"), 0.5]
    with pytest.raises(argparse.ArgumentTypeError, match="1e400"):
        nonneg_float_or_inf("1e400")
    with pytest.raises(argparse.ArgumentTypeError, match="not a directory"):
        output_directory(__file__)
    with pytest.raises(argparse.ArgumentTypeError, match="unknown image extension"):
        plot_file("figure.txt")
