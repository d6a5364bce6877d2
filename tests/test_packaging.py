"""The distribution ships every package and the specification files."""

from __future__ import annotations

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
    import flcheck_spec

    assert flcheck_spec.ROOT.is_dir()
    assert (flcheck_spec.ROOT / "grammar").is_dir()


def test_engines_do_not_import_flmodel() -> None:
    """DESIGN: generic engines in checker/ never import flmodel (only cli, commands, app may)."""
    allowed = {"cli.py", "__main__.py"}
    offenders = []
    for path in (ROOT / "checker").rglob("*.py"):
        rel = path.relative_to(ROOT / "checker")
        if rel.parts[0] in {"cli", "app"} or (rel.name in allowed and len(rel.parts) == 1):
            continue
        text = path.read_text()
        if "import flmodel" in text or "from flmodel" in text:
            offenders.append(str(rel))
    assert not offenders, f"engine modules importing flmodel: {offenders}"


def test_flmodel_does_not_import_checker() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "flmodel").rglob("*.py")
        if "import checker" in p.read_text() or "from checker" in p.read_text()
    ]
    assert not offenders, f"flmodel modules importing checker: {offenders}"
