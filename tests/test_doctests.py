"""The examples in the docstrings of every module of flmodel, checker and flcheck_spec run and pass.

Every module is imported and run through ``doctest.testmod``; the modules of :data:`DOCTEST_MODULES`
must moreover have at least one example, so that examples deleted or made invisible to doctest (e.g. by
a docstring that is no longer the first statement) fail here.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Source folder -> the top-level package it installs as (pyproject's package-dir).
PACKAGES: dict[str, str] = {"flmodel": "flmodel", "checker": "checker", "spec": "flcheck_spec"}

#: Modules that must have examples (at least one is attempted).
DOCTEST_MODULES: tuple[str, ...] = (
    "flmodel.data",
    "flmodel.frozen",
    "flmodel.learning",
    "flmodel.symmetry",
    "flmodel.system",
    "flmodel.training",
    "flmodel",
    "checker",
    "checker.api",
    "checker.app.reductions",
    "checker.app.sweep",
    "checker.cli.defines",
    "checker.crossval.accountant",
    "checker.crossval.audit",
    "checker.crossval.audit_one_run",
    "checker.crossval.gaussian",
    "checker.crossval.mia",
    "checker.crossval.privacy_curves",
    "checker.crossval.secagg",
    "checker.crossval.sratta",
    "checker.io.files",
    "checker.render",
    "checker.markov.first_passage",
    "checker.mc.ctl",
    "checker.mc.ctl_parse",
    "checker.io.prism",
    "checker.mc.explore",
    "checker.privacy.ni_fl_dp",
    "checker.privacy.schedulers",
    "checker.privacy.dp_query",
)

OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module_names() -> list[str]:
    names = []
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [package, *path.relative_to(ROOT / folder).parts]
            parts[-1] = parts[-1].removesuffix(".py")
            if parts[-1] == "__main__":  # running it is the program, importing it would start the CLI
                continue
            if parts[-1] == "__init__":
                parts.pop()
            names.append(".".join(parts))
    return names


MODULES = _module_names()


def test_listed_modules_exist() -> None:
    assert set(DOCTEST_MODULES) <= set(MODULES), sorted(set(DOCTEST_MODULES) - set(MODULES))


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)
    if name in DOCTEST_MODULES:
        assert result.attempted > 0, f"{name} is in DOCTEST_MODULES but has no example"
