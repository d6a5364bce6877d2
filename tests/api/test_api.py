"""The Python API (:mod:`checker.api`): each result equals the matching command's ``--json`` output, the
explicit export round-trips, bad input raises like the CLI's exit 2, ``import checker`` stays cheap, the
example script runs and the API docs build from the docstrings."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import checker
from checker.cli.main import main
from checker.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SWARM = {"N": 2}


def cli_json(argv: list[str]) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(argv)
    doc: dict[str, Any] = json.loads(out.getvalue())
    for key in ("flcheck", "schema", "command"):
        doc.pop(key)
    return doc


@pytest.fixture(scope="module")
def swarm() -> checker.Model:
    return checker.load("moniteo_swarm8", defines=SWARM)


def test_explore_equals_cli(swarm: checker.Model) -> None:
    api = swarm.explore().to_json()
    cli = cli_json(["explore", "moniteo_swarm8", "-D", "N=2", "--json"])
    api.pop("time")
    cli.pop("time")
    cli.pop("limits")  # the limits the command ran under (the API's are the caller's)
    assert api == cli


@pytest.mark.parametrize("formula", ["AG (round < 1 -> EF round = 1)", "EF round = 1", "AG round = 0",
                                     "EX EX true"])
def test_ctl_equals_cli(swarm: checker.Model, formula: str) -> None:
    res = swarm.check(formula)
    assert res.to_json() == cli_json(["ctl", "moniteo_swarm8", formula, "-D", "N=2", "--json"])
    assert res.holds == (res.verdict.startswith("holds"))
    assert res.formula in res._repr_html_() or "&" in res._repr_html_()


def test_check_all_equals_cli() -> None:
    run = checker.check_all("moniteo_swarm8", defines=SWARM)
    cli = cli_json(["check", "moniteo_swarm8", "-D", "N=2", "--json"])
    api = run.to_json()
    cli.pop("limits")  # the limits the command ran under (the API's are the caller's)
    for doc in (api, cli):  # timings differ between runs
        doc.pop("seconds"), doc.pop("explore_seconds")
        for p in doc["properties"]:
            p.pop("seconds")
    assert api == cli
    assert run.exit_code == 1 and run["ni_fl_dp_strict"].verdict == "violated"
    assert [p.name for p in run.properties] == [p["name"] for p in cli["properties"]]
    assert "ni_fl_dp_strict" in str(run) and "<table>" in run._repr_html_()
    with pytest.raises(KeyError):
        run["nonexistent"]


def test_privacy_equals_cli(swarm: checker.Model) -> None:
    res = swarm.privacy(eps="ln(2)")
    cli = cli_json(["privacy", "moniteo_swarm8", "-D", "N=2", "--eps", "ln(2)", "--json"])
    assert res.to_json() == cli
    assert res.verdict == "holds" and res.epsilon == pytest.approx(0.6931471805599453)
    assert "ε*" in res._repr_html_()


def test_attack_tree_equals_cli(swarm: checker.Model) -> None:
    res = swarm.attack_tree("round = 1")
    cli = cli_json(["attack-tree", "moniteo_swarm8", "-D", "N=2", "--goal", "round = 1", "--json"])
    api = res.to_json()
    api.pop("model", None), cli.pop("model", None)
    assert api == cli
    assert res.found and res.size > 0 and "OR" in str(res)
    assert "<adtree" in res.render("adtool")
    none = swarm.attack_tree("round = 2")
    assert not none.found and none.conclusive and none.size == 0
    with pytest.raises(InputError):
        none.render()


def test_attack_tree_attributes_and_defences_equal_cli(tmp_path: Path) -> None:
    from tests.attack_trees.test_link_defences import RELAY

    path = tmp_path / "relay.fl"
    path.write_text(RELAY + "defence reroute: remove link relay -- orbit2 budget 10\n", encoding="utf-8")
    res = checker.load(path).attack_tree("seen_sat2", defence="reroute")
    cli = cli_json(["attack-tree", str(path), "--goal", "seen_sat2", "--defence", "reroute", "--json"])
    api = res.to_json()
    api.pop("model", None), cli.pop("model", None)
    assert api == cli
    assert res.attributes.optimum_text() == "min cost 4, max probability 9/20, min time 2"
    assert res.defence.cut.blocks and "reroute" in res._repr_html_()
    kept = checker.load(path).attack_tree("seen_sat2", defence="reroute", budget="3").defence
    assert kept.cut.budget == 3 and kept.cut.blocks


def test_explicit_export_round_trips(swarm: checker.Model, tmp_path: Path) -> None:
    written = swarm.export(tmp_path / "m", "explicit")
    assert [Path(w).suffix for w in written.written] == [".tra", ".lab", ".sta"]
    again = checker.load(tmp_path / "m")
    a, b = swarm.explore(), again.explore()
    assert (a.states, a.transitions, a.deadlocks, a.depth) == (b.states, b.transitions, b.deadlocks, b.depth)
    assert again.check("EF bound_reached").verdict == swarm.check("EF bound_reached").verdict == "holds"
    deadlock = "EF !(EX true)"
    assert again.check(deadlock).to_json()["satisfying_initial"] == swarm.check(deadlock).to_json()[
        "satisfying_initial"]
    with pytest.raises(InputError, match="needs a scenario"):
        again.check_all()
    with pytest.raises(InputError, match="needs an FL model"):
        checker.load([tmp_path / "m.tra", tmp_path / "m.lab"]).privacy()
    as_json = checker.load(tmp_path / "m").export(tmp_path / "m.json", "json")
    assert as_json.written == (str(tmp_path / "m.json"),)


def test_isabelle_export(tmp_path: Path) -> None:
    res = checker.load("example:seed").export(tmp_path)
    assert res.ok and {Path(w).name for w in res.written} >= {"ROOT", "FL_Infrastructure.thy"}
    assert res.to_json()["syntax_ok"] is True


def test_bad_input_raises() -> None:
    with pytest.raises(InputError, match="bundled scenario"):
        checker.load("no_such_scenario")
    with pytest.raises(InputError):
        checker.load("seed_model").check("EF (")
    with pytest.raises(InputError, match="unknown export format"):
        checker.load("seed_model").export("x", "pdf")


def test_import_checker_is_cheap() -> None:
    code = ("import sys, checker, flmodel; print(sorted(m for m in sys.modules if m.startswith(('checker.', "
            "'flmodel.', 'numpy', 'scipy', 'lark'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert set(checker.API_NAMES) <= set(dir(checker.api))  # every exported name exists
    with pytest.raises(AttributeError):
        checker.no_such_name  # noqa: B018


def test_example_script_runs(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "api_tour.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ni_fl_dp_strict (privacy): violated" in proc.stdout
    assert "read back 25 states" in proc.stdout


def test_api_docs_build(tmp_path: Path) -> None:
    pytest.importorskip("pdoc")
    proc = subprocess.run([sys.executable, "-m", "pdoc", "--docformat", "restructuredtext", "-o",
                           str(tmp_path), "checker", "checker.api", "flmodel"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "checker" / "api.html").read_text(encoding="utf-8")
    for name in checker.API_NAMES:
        assert name in page
    assert "witness or counterexample" in page  # docstrings, not only names
