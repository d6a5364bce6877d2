"""Reading a model file whatever its format: a JSON Kripke structure or a PRISM/Storm explicit model."""

from __future__ import annotations

from pathlib import Path

from checker.io.kripke_json import read_json
from checker.io.prism import read_explicit
from checker.mc.kripke import Kripke


def read_model_file(path: str | Path, *, probabilities: bool = True) -> Kripke:
    """Read a ``.json`` Kripke file or an explicit model (prefix or any of its files)."""
    p = Path(path)
    if p.suffix == ".json":
        return read_json(p)
    return read_explicit(p, probabilities=probabilities)
