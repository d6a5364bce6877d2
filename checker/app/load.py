"""Load a model for checking: a scenario file (``.fl``, explored through the flmodel transition system),
a PRISM/Storm explicit model (``base.tra``/``base.lab``[/``base.sta``], given as either path, the pair,
or the common prefix ``base``), or a JSON Kripke file (``.json``).

This is application-layer code (it may import ``flmodel``); the generic engines stay model-agnostic.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from checker.errors import InputError, Position
from checker.io.kripke_json import read_json
from checker.io.prism import read_explicit
from checker.mc.explore import Limits, ProgressCallback, explore
from checker.mc.kripke import Kripke

EXPLICIT_SUFFIXES = (".tra", ".lab", ".sta")


def model_kind(path_or_paths: str | Path | Sequence[str | Path]) -> str:
    """``"scenario"``, ``"explicit"`` or ``"json"`` (raises :class:`InputError` when unrecognised)."""
    if isinstance(path_or_paths, str | Path):
        paths = [Path(path_or_paths)]
    else:
        paths = [Path(p) for p in path_or_paths]
    if not paths:
        raise InputError("no model given", None, "a scenario (.fl), a .tra/.lab pair or a .json file")
    first = paths[0]
    if first.suffix == ".fl":
        return "scenario"
    if first.suffix == ".json":
        return "json"
    if first.suffix in EXPLICIT_SUFFIXES or first.with_name(first.name + ".tra").exists():
        return "explicit"
    if not first.exists():
        raise FileNotFoundError(f"model file not found: {first}")
    raise InputError(f"unrecognised model file type {first.suffix or '(no suffix)'!r}", Position(str(first)),
                     "a scenario (.fl), an explicit model (.tra/.lab or their common prefix) or .json")


def load_scenario_ts(path: str | Path) -> object:
    """The transition system of a scenario file, via ``flmodel.scenario.load_scenario(path)
    .transition_system()`` (helper E's API)."""
    try:
        from flmodel.scenario import load_scenario  # type: ignore[import-not-found]
    except ImportError as exc:  # pragma: no cover - depends on the scenario package being present
        raise InputError(f"scenario files are not supported in this build ({exc})",
                         Position(str(path))) from None
    scenario = load_scenario(path)
    return scenario.transition_system()


def load_model(
    path_or_paths: str | Path | Sequence[str | Path],
    *,
    limits: Limits | None = None,
    progress: ProgressCallback | None = None,
    probabilities: bool = True,
    observables: Sequence[str] | None = None,
) -> Kripke:
    """Load ``path_or_paths`` as a :class:`Kripke` structure.

    Scenario files are explored breadth-first under ``limits`` (the result may be incomplete);
    ``progress`` receives exploration progress. ``probabilities=False`` skips the probability column of
    explicit files (CTL needs only the graph). ``observables`` restricts which scenario observables
    are recorded per state (default all)."""
    kind = model_kind(path_or_paths)
    if kind == "scenario":
        path = Path(path_or_paths if isinstance(path_or_paths, str | Path) else path_or_paths[0])
        if not path.exists():
            raise FileNotFoundError(f"scenario file not found: {path}")
        ts = load_scenario_ts(path)
        return explore(ts, limits=limits, progress=progress, observables=observables,  # type: ignore[arg-type]
                       source=str(path))
    if kind == "json":
        path = Path(path_or_paths if isinstance(path_or_paths, str | Path) else path_or_paths[0])
        if not path.exists():
            raise FileNotFoundError(f"model file not found: {path}")
        return read_json(path)
    return read_explicit(path_or_paths, probabilities=probabilities)
