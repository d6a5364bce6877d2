"""The ill-formed spots of the published rules (flmodel.readings): one list, the one SPEC.md argues and
the Isabelle base theory cites; ``check``, ``privacy`` and ``ctl`` say once (text: one line; JSON:
``readings``) that they read them, when they run the published rules and only then."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from checker.cli.main import main
from flmodel.readings import PUBLISHED_READINGS, readings_line, readings_of

ROOT = Path(__file__).resolve().parents[2]
SPEC = (ROOT / "spec" / "SPEC.md").read_text(encoding="utf-8")
THEORY = (ROOT / "spec" / "isabelle" / "FL_Infrastructure.thy").read_text(encoding="utf-8")
NOTE = readings_line(PUBLISHED_READINGS)


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    return code, out.getvalue()


def test_the_list_is_spec_mds() -> None:
    """Every reading is SPEC.md's item of that number, under its rule's heading, and the base theory
    cites it at that rule; the three spots the issue names are there."""
    section = SPEC.split("## 2.", 1)[1].split("## 3.", 1)[0]
    rules = r"\*\*(put_part|get_grad|eval_server)\*\*"
    headings = {m.group(1): m.start() for m in re.finditer(rules, section)}
    assert set(headings) == {"put_part", "get_grad", "eval_server"}
    order = sorted(headings, key=headings.__getitem__)
    for r in PUBLISHED_READINGS:
        at = section.index(f"**{r.id}**")
        owner = max((h for h in order if headings[h] < at), key=headings.__getitem__)
        assert owner == r.rule, r
        after = THEORY.split(f"\n{r.rule}:", 1)[1]
        cited = re.split(r"\n(?:put_part:|get_grad:|eval_server:|The rules name)", after)[0]
        assert re.search(rf"\b{r.id}\b", cited), (r, cited)
    ids = {r.id for r in PUBLISHED_READINGS}
    assert {"R1", "R7", "R11"} <= ids and "R6" not in ids  # R6 is well-formed
    assert "8 arguments" in PUBLISHED_READINGS[0].spot
    assert readings_of("published") == readings_of("published+network") == PUBLISHED_READINGS
    assert readings_of("fedavg_rounds") == readings_of("fedavg_rounds+network") == ()


def _json(argv: list[str]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(run([*argv, "--json"])[1])
    return doc


@pytest.mark.parametrize("argv", [["check", "seed_model", "--property", "repartition_twice"],
                                  ["privacy", "seed_model", "--no-literal", "--no-decomposition"],
                                  ["ctl", "seed_model", "EF round = 1"],
                                  ["ctl", "seed_model", "P=? [F round = 1]"]])
def test_published_rules_say_so_once(argv: list[str]) -> None:
    _, text = run(argv)
    assert text.count(NOTE) == 1, text
    doc = _json(argv)
    assert [r["id"] for r in doc["readings"]] == [r.id for r in PUBLISHED_READINGS]
    first = doc["readings"][0]
    assert first == {"id": "R1", "rule": "put_part", "spot": PUBLISHED_READINGS[0].spot,
                     "reading": "ready G, unchanged"}


@pytest.mark.parametrize("argv", [["check", "moniteo", "--property", "round_can_complete"],
                                  ["privacy", "moniteo_deadline", "--no-literal", "--no-decomposition"],
                                  ["ctl", "moniteo_deadline", "EF round = 1"]])
def test_other_rule_sets_do_not(argv: list[str]) -> None:
    _, text = run(argv)
    assert "ill-formed" not in text
    assert _json(argv)["readings"] == []
