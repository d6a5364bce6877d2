"""Regression inputs found by the fuzz tests (``corpus/corpus.json``, one folder of files per case):
each must end in its expected outcome class. Cases that fail today carry ``open`` (what is wrong) and
run as ``xfail(strict=True)``: a fix makes them pass, and the strict mark then fails the suite until
the ``open`` entry is removed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import flcheck_spec
import pytest

from tests.fuzz.contract import OPTION, POSITIONED, VERDICT, classify, run_cli

CORPUS = Path(__file__).parent / "corpus"
EXPECTED_CLASSES = (POSITIONED, OPTION, VERDICT)


def _cases() -> list[Any]:
    cases = json.loads((CORPUS / "corpus.json").read_text(encoding="utf-8"))
    params = []
    for case in cases:
        marks = [pytest.mark.xfail(strict=True, reason=case["open"])] if case.get("open") else []
        params.append(pytest.param(case, id=case["id"], marks=marks))
    return params


def _substitute(word: str, folder: Path) -> str:
    """``{dir}`` is the case's folder (copied); ``{bundled:NAME}`` a copy of a bundled scenario."""
    for name, path in flcheck_spec.bundled_scenarios().items():
        marker = "{bundled:" + name + "}"
        if marker in word:
            copy = folder / f"{name}.fl"
            if not copy.exists():
                shutil.copyfile(path, copy)
            word = word.replace(marker, str(copy))
    return word.replace("{dir}", str(folder))


def test_corpus_manifest_is_well_formed() -> None:
    cases = json.loads((CORPUS / "corpus.json").read_text(encoding="utf-8"))
    ids = [case["id"] for case in cases]
    assert len(ids) == len(set(ids))
    for case in cases:
        assert case["expect"] in EXPECTED_CLASSES, case["id"]
        assert case["expect"] != VERDICT or case.get("exit") in (0, 1), case["id"]
        folder = CORPUS / case["id"]
        for file in folder.iterdir() if folder.is_dir() else ():  # every file is an input of the case
            assert any(f"{{dir}}/{file.name}" in word for word in case["argv"]), (case["id"], file.name)
    folders = {p.name for p in CORPUS.iterdir() if p.is_dir()}
    assert folders <= set(ids), folders - set(ids)


@pytest.mark.parametrize("case", _cases())
def test_corpus_case(case: dict[str, Any], tmp_path: Path) -> None:
    source = CORPUS / case["id"]
    folder = tmp_path / "case"
    if source.is_dir():
        shutil.copytree(source, folder)
    else:
        folder.mkdir()
    argv = [_substitute(word, folder) for word in case["argv"]]
    inputs = sorted(p for p in folder.iterdir() if p.is_file())
    outcome = run_cli(argv, inputs)
    sources = None if case["expect"] == OPTION else ["<formula>", *(str(p) for p in inputs)]
    outcome_class = classify(outcome, sources)
    assert outcome_class == case["expect"], outcome.describe()
    if case["expect"] == VERDICT:
        assert outcome.code == case["exit"], outcome.describe()
