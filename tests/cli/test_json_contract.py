"""Every command's ``--json`` output is in the envelope of :mod:`checker.cli.json_output` and valid
against its shipped JSON Schema (``spec/schema/<command>.schema.json``); the error object too."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import flcheck_spec
import jsonschema
import pytest

from checker import __version__
from checker.cli.json_output import ENVELOPE_KEYS, envelope
from checker.cli.main import main

SCHEMAS = Path(__file__).resolve().parents[2] / "spec" / "schema"


def run_json(argv: list[str]) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert out.getvalue().strip(), (code, err.getvalue())
    return code, json.loads(out.getvalue())


def validate(schema_name: str, doc: dict[str, Any]) -> None:
    schema = json.loads((SCHEMAS / f"{schema_name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(doc)


RUNS = [
    ("list", ["list", "--json"]),
    ("explore", ["explore", "moniteo", "--max-states", "500", "--json"]),
    ("ctl", ["ctl", "moniteo", "EF round >= 1", "--max-states", "20000", "--json"]),
    ("check", ["check", "seed_model", "--max-states", "20000", "--json"]),
    ("attack-tree", ["attack-tree", "moniteo", "--goal", "round >= 1", "--max-states", "2000", "--json"]),
    ("privacy", ["privacy", "example:seed", "--no-literal", "--json"]),
    ("privacy", ["privacy", "moniteo_link_loss", "--max-states", "500", "--json"]),
    ("dp", ["dp", "gaussian", "--mu", "1", "--eps", "0", "1", "3", "--json"]),
    ("dp", ["dp", "secagg", "--entries", "exponential", "--n", "3", "--d", "1", "--eps", "1", "--json"]),
    ("audit", ["audit", "gaussian:mu=1", "--trials", "300", "--json"]),
    ("attack", ["attack", "leakage", "--samples", "200", "--steps", "10", "--values", "1,2", "--json"]),
]


def test_export_json_matches_its_schema(tmp_path: Path) -> None:
    code, doc = run_json(["export", "isabelle", "moniteo", "-o", str(tmp_path / "theories"), "--json"])
    assert code == 0 and doc["command"] == "export isabelle" and doc["syntax_ok"] is True
    validate("export", doc)
    assert {Path(w["path"]).name for w in doc["written"]} >= {"ROOT", "Scenario_moniteo.thy"}


@pytest.mark.parametrize(("schema_name", "argv"), RUNS, ids=[" ".join(a[:2]) for _, a in RUNS])
def test_command_json_matches_its_schema(schema_name: str, argv: list[str]) -> None:
    code, doc = run_json(argv)
    assert code in (0, 1)
    assert list(doc)[:3] == list(ENVELOPE_KEYS)
    assert doc["flcheck"] == __version__ and doc["schema"] == 1
    assert doc["command"].split(" ")[0] == argv[0]
    validate(schema_name, doc)


def test_check_ctl_properties_carry_the_evidence_path_of_ctl() -> None:
    _, doc = run_json(["check", "seed_model", "--max-states", "20000", "--json"])
    ctl_results = [p for p in doc["properties"] if p["kind"] == "ctl"]
    assert ctl_results and all("evidence_path" in p for p in ctl_results)
    violated = next(p for p in ctl_results if p["verdict"] == "violated")
    path = violated["evidence_path"]
    assert path["kind"] == "counterexample" and path["steps"][0]["action"] is None
    assert all(step["action"] for step in path["steps"][1:])
    _, ctl_doc = run_json(["ctl", "seed_model", violated["formula"], "--max-states", "20000", "--json"])
    # check explores the reduced structure and replays its counterexample on the model's own states: the
    # same steps and values as ctl's on the literal structure, with the state ids of check's structure
    literal = ctl_doc["counterexample"]

    def seen(p: dict[str, Any]) -> list[tuple[Any, Any]]:
        return [(s["action"], s["changed"]) for s in p["steps"]]

    assert doc["reductions"]["applied"] and "replayed on the model's own states" in path["note"]
    assert seen(path) == seen(literal)
    assert (path["kind"], path["shows"]) == (literal["kind"], literal["shows"])


@pytest.mark.parametrize("argv", [["explore", "no_such_scenario", "--json"],
                                  ["dp", "gaussian", "--mu", "-1", "--json"],
                                  ["ctl", "moniteo", "EF (", "--json"],
                                  ["export", "isabelle", "-o", "{tmp}", "--json"]])
def test_error_object_matches_its_schema(argv: list[str], tmp_path: Path) -> None:
    code, doc = run_json([token.replace("{tmp}", str(tmp_path)) for token in argv])
    assert code == 2
    validate("error", doc)
    assert doc["command"].split(" ")[0] == argv[0]


def test_every_schema_is_draft_2020_12_and_requires_the_envelope() -> None:
    for path in SCHEMAS.glob("*.schema.json"):
        schema = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.Draft202012Validator.check_schema(schema)
        assert set(ENVELOPE_KEYS) <= set(schema["required"]), path.name
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.Draft202012Validator(schema).validate({"states": 1})


def test_envelope_refuses_a_payload_that_has_an_envelope_key() -> None:
    with pytest.raises(ValueError, match="schema"):
        envelope("explore", {"schema": 2})


#: Per bundled scenario, what ``check --json`` decides in the slow run: every property, but the swarm
#: at N = 3 and the Walker shells' two privacy pairs left out (15 s and 2 min; privacy JSON is
#: validated above).
SIZES = {"moniteo_swarm8": ["-D", "N=3"], "moniteo_published": ["-D", "E=2"]}
BUNDLED_CHECKS = {**SIZES,
                  "walker12_relay": ["--property", "round_almost_surely", "--property",
                                     "insider_copies_report", "--property", "copies_only_after_report"],
                  "walker32_relay": ["--property", "round_almost_surely", "--property",
                                     "insider_copies_report", "--property", "copies_only_after_report"]}
#: ``ctl``'s probability on the model as it is: walker32_relay's (more than 2^32 states, ``ctl``
#: explores without the reductions of ``check``) is bounded, and a probability on a partial structure
#: is refused (exit 2, the error document).
PCTL = {**SIZES, "walker32_relay": ["--max-states", "3000"]}
REFUSED = {"walker32_relay"}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(flcheck_spec.bundled_scenarios()))
def test_every_command_s_json_on_every_bundled_scenario_matches_its_schema(name: str) -> None:
    """``check``, ``explore``, ``ctl`` (CTL and PCTL) and ``attack-tree`` on each bundled scenario (the
    explorations bounded where a partial structure is a valid answer; probabilities need the whole)."""
    code, doc = run_json(["check", name, "--json", *BUNDLED_CHECKS.get(name, [])])
    assert code in (0, 1)
    validate("check", doc)
    assert doc["properties"] and all(p["verdict"] != "unknown" for p in doc["properties"])
    for schema_name, argv in [("explore", ["explore", name, "--json", "--max-states", "3000"]),
                              ("ctl", ["ctl", name, "EF round >= 1", "--json", "--max-states", "3000"]),
                              ("ctl", ["ctl", name, "P=? [F round >= 1]", "--json", *PCTL.get(name, [])]),
                              ("attack-tree", ["attack-tree", name, "--goal", "round >= 1", "--json",
                                               "--max-states", "3000"])]:
        code, doc = run_json(argv)
        if name in REFUSED and "P=? [F round >= 1]" in argv:
            assert code == 2, argv
            validate("error", doc)
            assert "probabilities need the whole state space" in doc["error"]["message"]
            continue
        assert code in (0, 1), argv
        validate(schema_name, doc)
