"""``spec/LANGUAGE.md`` tells the truth: its base scenario checks with every property holding, and each
documented misuse, applied to the base scenario, makes ``flcheck`` exit 2 with exactly the error line the
reference shows."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from checker.cli.main import main

DOC = Path(__file__).resolve().parents[1] / "spec" / "LANGUAGE.md"
TEXT = DOC.read_text(encoding="utf-8")
BASE = TEXT.split("<!-- base -->\n```\n", 1)[1].split("\n```", 1)[0] + "\n"
MISUSES = [(json.loads(m.group(1)), m.group(2))
           for m in re.finditer(r"<!-- misuse (\{.*?\}) -->\n```text\n(.*?)\n```", TEXT)]


def run(argv: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(cwd)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


def test_the_reference_covers_every_statement_and_property_kind() -> None:
    grammar = (DOC.parents[0] / "grammar" / "scenario.lark").read_text(encoding="utf-8")
    statements = re.search(r"\?statement: (.*?)\n\n", grammar, re.S)
    assert statements is not None
    names = {n.strip().replace("policies_mode", "policies")
             for n in statements.group(1).replace("\n", " ").split("|")}
    cases = {str(m["case"]) for m, _ in MISUSES}
    assert names <= cases | {"property"}, names - cases
    body = grammar.split("?prop_body:", 1)[1].split("\nEXPECT:", 1)[0]
    kinds = set(re.findall(r'^\s+[|:]? ?"(\w+)"', body, re.M))
    assert kinds == {"ctl", "attack_tree", "privacy", "advantage", "probability", "dp", "crossval",
                     "attack", "budget"}
    assert kinds <= cases
    for name in names - {"property"}:
        assert f"### {name}" in TEXT, name


def test_the_base_scenario_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "scenario.fl").write_text(BASE, encoding="utf-8")
    code, err = run(["check", "scenario.fl"], tmp_path, monkeypatch)
    assert code == 0, err


@pytest.mark.parametrize(("case", "expected"), MISUSES, ids=[m["case"] for m, _ in MISUSES])
def test_each_misuse_gives_the_documented_error(case: dict[str, object], expected: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    text = BASE
    old, new, args = str(case["replace"]), str(case["with"]), list(case["args"])  # type: ignore[call-overload]
    if old:
        assert text.count(old) == 1
        text = text.replace(old, new)
    (tmp_path / "scenario.fl").write_text(text, encoding="utf-8")
    argv = ["ctl", "scenario.fl", args[1]] if args[:1] == ["--ctl"] else ["check", "scenario.fl", *args]
    code, err = run(argv, tmp_path, monkeypatch)
    assert code == 2
    (line,) = err.splitlines()  # one line: the first problem, then where the others are
    assert re.sub(r" \(and \d+ more problems?: .*\)$", "", line) == expected


def test_there_are_misuses() -> None:
    assert len(MISUSES) >= 29
