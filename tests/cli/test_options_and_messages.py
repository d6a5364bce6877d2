"""Messages, exit codes and options: option values that gave exit 3 are exit 2 naming the option,
every error is one line, every
option has help text, the commands say what they mean (``ctl`` with two formulas, ``attack-tree
--defence``, the Isabelle export's summary, the published theorem's errata under the literal reading),
and ``flcheck --version`` imports no engine."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import flcheck_spec
import pytest

from checker.cli.main import build_parser, main
from checker.verdict import EXIT_BAD_INPUT, EXIT_HOLDS, EXIT_VIOLATED

LINK_LOSS = flcheck_spec.bundled_scenarios()["moniteo_link_loss"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


#: Option values that once gave exit 3 (an engine's OverflowError, MemoryError, ValueError)
#: or ran for minutes, and those the option fuzz (tests/fuzz/cli_options.py) found beside them.
EXIT_3_BEFORE = [
    (["dp", "gaussian", "--cov", "1e400", "--eps", "1"], "--cov"),
    (["dp", "secagg", "--entries", "uniform", "--n", "10", "--eps", "1", "--interval", "1000"], "--interval"),
    (["dp", "secagg", "--entries", "uniform", "--n", "10", "--eps", "1", "--interval", "1e-7"], "--interval"),
    (["dp", "secagg", "--entries", "uniform", "--n", "9" * 30, "--eps", "1"], "--n"),
    (["dp", "secagg", "--entries", "uniform", "--n", "10", "--d", "9" * 30, "--eps", "1"], "--d"),
    (["dp", "fig1", "--n", "9" * 30], "--n"),
    (["dp", "fig1", "--dims", "9" * 30], "--dims"),
    (["dp", "fig1", "--interval", "1e308"], "--interval"),
    (["contacts", "--sample-seconds", "1e-7"], "--sample-seconds"),
    (["contacts", "--isl-km", "1e308"], "--isl-km"),
    (["contacts", "--rounds", "9" * 30], "--rounds"),
    (["contacts", "--round-seconds", "1e308"], "--round-seconds"),
    (["sweep", "moniteo_swarm8", "-D", "N=1", "--jobs", "9" * 30], "--jobs"),
    (["check", "moniteo", "--progress-interval", "1e-7"], "--progress-interval"),
    (["dp", "gaussian", "--mu", "1", "--eps", "1", "--width", "abc"], "--width"),
    (["explore", "moniteo", "--max-states", "\u0661\u0662"], "--max-states"),
    (["audit", "rr:p=3/4", "--trials", "\u0663"], "--trials"),
    (["privacy", "moniteo", "--eps", "ln(\u0662)"], "--eps"),
    (["dp", "gaussian", "--mu", "1", "--eps", "1", "--delta", "-inf"], "--delta"),
]


@pytest.mark.parametrize("argv, option", EXIT_3_BEFORE,
                         ids=[" ".join(a[:2]) + " " + o for a, o in EXIT_3_BEFORE])
def test_odd_option_values_are_one_line_naming_the_option(argv: list[str], option: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == EXIT_BAD_INPUT and out == ""
    assert one_line(err).startswith(f"flcheck: error: argument {option}")


def test_errors_under_json_are_an_error_object(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["dp", "secagg", "--entries", "uniform", "--n", "9" * 30, "--eps", "1", "--json"],
                       capsys)
    assert code == EXIT_BAD_INPUT and json.loads(out)["error"]["message"].startswith("argument --n:")


def test_several_problems_are_one_line_that_locates_the_others(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    text = LINK_LOSS.read_text(encoding="utf-8")
    path = tmp_path / "typos.fl"
    typos = text.replace("sat1 at orbit1", "sat1 at nowhere1").replace("sat2 at orbit2", "sat2 at nowhere2")
    path.write_text(typos, encoding="utf-8")
    code, _, err = run(["check", str(path)], capsys)
    line = one_line(err)
    assert code == EXIT_BAD_INPUT and line.startswith(f"flcheck: error: {path}:")
    assert "more problem" in line and f"{path}:" in line.split("more problem", 1)[1]
    code, out, _ = run(["check", str(path), "--json"], capsys)
    error = json.loads(out)["error"]
    assert error["file"] == str(path) and error["more"]
    assert all(m.startswith(f"{path}:") for m in error["more"])


def test_every_option_has_help_text() -> None:
    """Walks every parser (sub-commands of sub-commands too)."""
    missing = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*words, name])
            elif not action.help and action.help is not argparse.SUPPRESS:
                missing.append(f"flcheck {' '.join(words)} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), [])
    assert not missing, missing


def test_version_imports_no_engine() -> None:
    """``flcheck --version`` (0.83 s of CPU before: every command module and most engines) imports none of
    the heavy modules; ``ctl`` on an explicit model imports no scipy, sympy or model layer."""
    probe = ("import sys; from checker.cli.main import main; code = main(sys.argv[1:]); "
             "print(sorted(m for m in ('numpy', 'scipy', 'sympy', 'matplotlib', 'sklearn', 'dask', 'rich', "
             "'mpmath', 'lark', 'networkx', 'flmodel', 'checker.mc.explore', 'checker.app.check') "
             "if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", probe, "--version"], capture_output=True, text=True,
                          check=True)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout
    proc = subprocess.run([sys.executable, "-c", probe, "list"], capture_output=True, text=True, check=True)
    assert "scipy" not in proc.stdout and "sympy" not in proc.stdout


def test_ctl_on_an_explicit_model_imports_no_scipy(tmp_path: Path) -> None:
    tra, lab = tmp_path / "c.tra", tmp_path / "c.lab"
    tra.write_text("3 3\n0 1 1\n1 2 1\n2 0 1\n", encoding="utf-8")
    lab.write_text('0="init" 1="goal"\n0: 0\n2: 1\n', encoding="utf-8")
    probe = ("import sys; from checker.cli.main import main; code = main(sys.argv[1:]); "
             "print(sorted(m for m in ('scipy', 'sympy', 'matplotlib', 'flmodel', 'checker.app.check') "
             "if m in sys.modules))")
    for formula in ("AG (init -> EF goal)", "P=? [F<=5 goal]"):
        proc = subprocess.run([sys.executable, "-c", probe, "ctl", str(tra), str(lab), formula],
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0 and proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout


def test_two_formulas_to_ctl_are_named_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    """``ctl moniteo 'EF round = 1' 'AG true'`` said "moniteo: not found … did you mean moniteo"."""
    code, _, err = run(["ctl", "moniteo", "EF round = 1", "AG true"], capsys)
    line = one_line(err)
    assert code == EXIT_BAD_INPUT and "'EF round = 1' and 'AG true' are both formulas" in line
    assert "did you mean" not in line and "once per formula" in line


def test_an_unknown_dp_query_is_json_without_python_reprs(capsys: pytest.CaptureFixture[str]) -> None:
    """A ``D{}`` query that ends ``unknown`` printed text under ``--json``, with ``Fraction(0, 1)``."""
    code, out, _ = run(["ctl", "moniteo", "D{ln(3),0}[F curmodpar == (0, 2/3)]", "--between", "hot",
                        "--scheduler", "memoryless", "--json"], capsys)
    doc = json.loads(out)
    assert code == EXIT_VIOLATED and doc["verdict"] == "unknown" and doc["kind"] == "dp"
    assert "no memoryless scheduler exists" in doc["reason"] and "Fraction(" not in out


def test_attack_tree_defence_exit_code_is_the_defences_verdict(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """0 when the defence blocks every attack (within the budget), 1 when an attack remains (it was 0
    whenever an attack existed)."""
    code, out, _ = run(["attack-tree", str(LINK_LOSS), "--goal", "seen_sat3", "--defence", "revoke_sat3"],
                       capsys)
    assert code == EXIT_HOLDS and "blocks every attack" in out
    path = tmp_path / "weak.fl"
    path.write_text(LINK_LOSS.read_text(encoding="utf-8")
                    + "defence revoke_sat1: remove get_grad_round_noisy by sat1\n", encoding="utf-8")
    code, out, _ = run(["attack-tree", str(path), "--goal", "seen_sat3", "--defence", "revoke_sat1"], capsys)
    assert code == EXIT_VIOLATED and "does not block" in out
    code, out, _ = run(["attack-tree", str(path), "--goal", "seen_sat3", "--defence", "revoke_sat1",
                        "--json"], capsys)
    assert code == EXIT_VIOLATED and json.loads(out)["defence"]["blocks"] is False
    code, out, _ = run(["attack-tree", "--help"], capsys)
    assert "1 an attack remains" in " ".join(out.split())


def test_the_isabelle_summary_names_the_properties_not_stated(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["export", "isabelle", "moniteo", "-o", str(tmp_path / "t")], capsys)
    assert code == EXIT_HOLDS
    line = next(ln for ln in out.splitlines() if "Scenario_moniteo.thy" in ln)
    assert "8 of 11 properties not stated in Isabelle" in line and "ni_fl_dp" in line
    assert "eavesdrop_secret_report" not in line.split("not stated", 1)[1]  # stated, with its proof
    code, out, _ = run(["export", "isabelle", "moniteo", "-o", str(tmp_path / "j"), "--json"], capsys)
    theory = next(w for w in json.loads(out)["written"] if w["path"].endswith("Scenario_moniteo.thy"))
    assert theory["properties"] == 11 and len(theory["not_stated"]) == 8


def test_the_published_theorems_errata_only_under_the_literal_reading(capsys: pytest.CaptureFixture[str]
                                                                       ) -> None:
    code, out, _ = run(["privacy", "moniteo"], capsys)
    assert code == EXIT_HOLDS
    table, literal = out.split("seed's definition literally", 1)
    assert "seed_theorem1_stated" not in table and "seed_theorem1_proof " not in table
    assert "seed_theorem1_proof_as_bound" in table  # an upper bound: a figure, not an erratum
    assert "seed_theorem1_stated: the published claim" in literal
    code, out, _ = run(["privacy", "moniteo", "--no-literal"], capsys)
    assert "seed_theorem1_stated" not in out
    code, out, _ = run(["privacy", "moniteo", "--json"], capsys)
    names = {b["name"] for b in json.loads(out)["worst"]["bounds"]} if "worst" in json.loads(out) else set()
    assert not names or "seed_theorem1_stated" in names  # the JSON keeps every bound (a contract)


def test_the_dask_options_have_their_own_names(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["sweep", "--help"], capsys)
    text = " ".join(out.split())
    assert code == 0 and "--dask-scheduler ADDRESS" in text and "--executor" in text
    assert "deprecated spelling of --dask-scheduler" in text and "deprecated spelling of --executor" in text
