"""The formal specification shipped with flcheck (installed as the package ``flcheck_spec``).

Holds the lark grammars (``grammar/``), the bundled scenario files (``scenarios/``) and ``SPEC.md``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent


def resource(*parts: str) -> Path:
    """Path of a file shipped in the specification, e.g. ``resource("grammar", "ctl.lark")``."""
    path = ROOT.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"flcheck specification file not found: {path}")
    return path


def grammar_text(name: str) -> str:
    """Text of the lark grammar ``spec/grammar/NAME``."""
    return resource("grammar", name).read_text(encoding="utf-8")


def bundled_scenarios() -> dict[str, Path]:
    """The bundled scenario files, by stem (file name without ``.fl``)."""
    return {p.stem: p for p in sorted((ROOT / "scenarios").glob("*.fl"))}
