"""The distribution ships every package and the specification files (the layering of the packages is
asserted on the import graph in tests/test_import_graph.py)."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for top in ("flmodel", "checker")
        for p in (ROOT / top).rglob("__init__.py")
    }
    assert found <= listed, f"packages missing from pyproject.toml: {sorted(found - listed)}"
    assert "flcheck_spec" in listed


def test_spec_resources_resolve() -> None:
    # by its installed name: spec/ is the package flcheck_spec only through pyproject's package-dir
    flcheck_spec = importlib.import_module("flcheck_spec")
    assert flcheck_spec.ROOT.is_dir()
    assert (flcheck_spec.ROOT / "grammar").is_dir()
