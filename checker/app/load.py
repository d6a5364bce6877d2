"""Load a model for checking, and resolve a model named on the command line.

:func:`load_model` loads a scenario file (``.fl``, explored through the flmodel transition system), a
PRISM/Storm explicit model (``base.tra``/``base.lab``[/``base.sta``], given as either path, the pair, or
the common prefix ``base``), a JSON Kripke file (``.json``), a bundled scenario by name, or an flmodel
example system ``example:NAME[:key=value,...]``.

One resolver serves every command: :func:`resolve_model_spec` reads the ``MODEL``/``SCENARIO``
argument (``example:NAME[:key=value,...]`` is an flmodel example system, :data:`EXAMPLES`, the same
system for every command; anything else a file, by path or, when no such file exists, by the name of
a bundled scenario, ``flcheck_spec.bundled_scenarios()``); :func:`resolve_scenario_path` is its
file-only form and :func:`unknown_model` the error for a name that is neither (listing the bundled
scenarios, with a "did you mean" from :mod:`difflib`). :func:`load_fl_model` gives the FL system of
such an argument with its universe of data points and declared neighbours (``privacy``, ``audit``).

This is application-layer code (it may import ``flmodel``); the generic engines stay model-agnostic.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import flcheck_spec

from checker.errors import InputError, Position
from checker.mc.exploration import Limits, ProgressCallback

if TYPE_CHECKING:  # the model layer and the readers are imported where they are used (start-up time)
    from checker.mc.kripke import Kripke
    from flmodel.data import DataPoint, Dataset
    from flmodel.noise import Mechanism
    from flmodel.system import FLSystem

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
        raise unknown_model(str(first))
    raise InputError(f"unrecognised model file type {first.suffix or '(no suffix)'!r}", Position(str(first)),
                     "a scenario (.fl), an explicit model (.tra/.lab or their common prefix) or .json")


def load_model(
    path_or_paths: str | Path | Sequence[str | Path],
    *,
    limits: Limits | None = None,
    progress: ProgressCallback | None = None,
    probabilities: bool = True,
    observables: Sequence[str] | None = None,
    defines: Mapping[str, int] | None = None,
    fast: bool = True,
) -> Kripke:
    """Load ``path_or_paths`` as a :class:`Kripke` structure.

    Scenario files are explored breadth-first under ``limits`` (the result may be incomplete);
    ``progress`` receives exploration progress. ``probabilities=False`` skips the probability column of
    explicit files (CTL needs only the graph). ``observables`` restricts which scenario observables
    are recorded per state (default all). ``defines`` set a scenario's constants (``-D NAME=VALUE``);
    they need a scenario. ``fast=False``: explore one state at a time even where the system offers
    its integer-coded view (:func:`checker.mc.explore.explore`)."""
    from checker.mc.explore import explore  # lazy: the explorers import numpy and scipy

    if defines and not _names_scenario(path_or_paths):
        raise InputError("-D NAME=VALUE sets constants of a scenario; this model is not one",
                         Position(str(path_or_paths)), "a scenario file (.fl) or a bundled scenario")
    if isinstance(path_or_paths, str) and path_or_paths.startswith("example:"):
        example = resolve_example(path_or_paths)
        return explore(example.system, limits=limits, progress=progress,  # type: ignore[arg-type]  # FLSystem yields plain (action, state, probability) tuples, which explore reads as Steps
                       observables=observables, source=example.spec, fast=fast)
    path_or_paths = resolve_model_files(path_or_paths)
    kind = model_kind(path_or_paths)
    if kind == "scenario":
        path = Path(path_or_paths if isinstance(path_or_paths, str | Path) else path_or_paths[0])
        if not path.exists():
            raise unknown_model(str(path))
        from checker.app.scenario_formulas import validate_scenario  # lazy: the model layer
        from flmodel.scenario import load_scenario_system  # lazy: as the import above

        scenario, system = load_scenario_system(path, defines=defines)  # parsed and built once
        vocabulary = validate_scenario(scenario, system)  # a typo in a property is refused here too
        kripke = explore(system, limits=limits, progress=progress, observables=observables, source=str(path),
                         fast=fast)
        kripke.vocabulary = vocabulary
        return kripke
    if kind == "json":
        path = Path(path_or_paths if isinstance(path_or_paths, str | Path) else path_or_paths[0])
        if not path.exists():
            raise unknown_model(str(path))
        from checker.io.kripke_json import read_json  # lazy: numpy

        return read_json(path, max_memory_mb=limits.max_memory_mb if limits else None)
    from checker.io.prism import read_explicit  # lazy: numpy

    return read_explicit(path_or_paths, probabilities=probabilities,
                         max_memory_mb=limits.max_memory_mb if limits else None)


# ------------------------------------------------------------------------------------------------
# example:NAME[:key=value,...] and scenario names
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExampleModel:
    """An flmodel example system named ``example:NAME[:key=value,...]``: the system, and the candidate
    data points from which neighbouring datasets are generated (``universe``)."""

    spec: str
    name: str
    options: tuple[tuple[str, str], ...]
    system: FLSystem
    universe: tuple[DataPoint, ...]

    @property
    def label(self) -> str:
        """``example_NAME`` followed by the options as given, e.g. ``example_moniteo_k_3``: a name
        that tells different option values apart (file and theory names are derived from it)."""
        return "_".join(["example", self.name, *(part for kv in self.options for part in kv)])


@dataclass(frozen=True)
class ScenarioFile:
    """A scenario file named by its path or, when no such file exists, by a bundled scenario's name."""

    spec: str
    path: Path


ResolvedModel = ExampleModel | ScenarioFile


@dataclass(frozen=True)
class ExampleFamily:
    """An example system with integer and text options (``defaults``: every accepted key)."""

    description: str
    defaults: Mapping[str, int | str]
    build: Callable[[Mapping[str, int | str], str], tuple[FLSystem, list[DataPoint]]]


def _moniteo(options: Mapping[str, int | str], where: str) -> tuple[FLSystem, list[DataPoint]]:
    from flmodel import examples  # lazy: the model layer

    k, points = int(options["k"]), int(options["points"])
    try:
        system = examples.moniteo_like(k, int(options["rounds"]), str(options["mechanism"]),
                                       points_per_client=points)
    except ValueError as exc:
        raise InputError(str(exc), Position(where), "valid example options") from None
    return system, examples.moniteo_universe(k, points, int(options["extra"]))


def _seed(options: Mapping[str, int | str], where: str) -> tuple[FLSystem, list[DataPoint]]:
    from flmodel import examples  # lazy: the model layer
    from flmodel.data import point
    from flmodel.noise import geometric, randomized_response  # lazy: as the import above

    mechanisms: dict[str, Mechanism | None] = {
        "none": None,
        "rr": randomized_response([0, 1, 2, 3], Fraction(1, 3)),
        "geometric": geometric(Fraction(1, 2), 0, 4),
    }
    mechanism = str(options["mechanism"])
    if mechanism not in mechanisms:
        raise InputError(f"unknown mechanism {mechanism!r}", Position(where), "none, rr or geometric")
    extra = int(options["extra"])
    system = examples.seed_model(int(options["clients"]), max_rounds=int(options["rounds"]),
                                 max_events=int(options["events"]), trace_mode="drop",
                                 mechanism=mechanisms[mechanism])
    universe = [*sorted(examples.seed_dataset()),
                *(point(f"x{i}", 2 + i, 3 + 2 * i) for i in range(1, extra + 1))]
    return system, universe


#: The example systems, by name. ``example:NAME`` means the same system in every command.
EXAMPLES: dict[str, ExampleFamily] = {
    "moniteo": ExampleFamily(
        "the Moniteo satellite swarm of [IIIf-FL] IV (flmodel.examples.moniteo_like): k satellites, "
        "FedAvg rounds, noise on the reported models",
        {"k": 2, "rounds": 1, "mechanism": "rr", "points": 1, "extra": 1}, _moniteo),
    "moniteo_rr": ExampleFamily(
        "the Moniteo swarm with one satellite and randomized response (example:moniteo:k=1)",
        {"k": 1, "rounds": 1, "mechanism": "rr", "points": 1, "extra": 1}, _moniteo),
    "seed": ExampleFamily(
        "the rules of [IIIf-FL] III-B as published (flmodel.examples.seed_model), trace-history reduced",
        {"clients": 2, "rounds": 1, "events": 4, "mechanism": "none", "extra": 1}, _seed),
}


def resolve_example(spec: str) -> ExampleModel:
    """The example system of ``example:NAME[:key=value,...]`` (raises :class:`InputError` for an unknown
    name, option or value)."""
    if not spec.startswith("example:"):
        raise InputError(f"not an example: {spec!r}", Position("<command line>"), "example:NAME")
    name, _, rest = spec[len("example:"):].partition(":")
    where = spec
    family = EXAMPLES.get(name)
    if family is None:
        raise InputError(f"unknown example {name!r}", Position(where),
                         " or ".join(f"example:{n}" for n in sorted(EXAMPLES)))
    given: list[tuple[str, str]] = []
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise InputError(f"bad example option {item!r}", Position(where), "key=value")
        given.append((key.strip(), value.strip()))
    unknown = sorted({k for k, _v in given} - set(family.defaults))
    if unknown:
        raise InputError(f"unknown example option(s) {', '.join(unknown)}", Position(where),
                         f"the options of example:{name}: {', '.join(family.defaults)}")
    options: dict[str, int | str] = dict(family.defaults)
    for key, value in given:
        if isinstance(family.defaults[key], int):
            try:
                options[key] = int(value)
            except ValueError:
                raise InputError(f"example option {key} must be an integer", Position(where),
                                 "an integer") from None
        else:
            options[key] = value
    system, universe = family.build(options, where)
    return ExampleModel(spec, name, tuple(given), system, tuple(universe))


def resolve_model_spec(spec: str) -> ResolvedModel:
    """Resolve a command-line model: ``example:NAME[:key=value,...]`` (:func:`resolve_example`), an
    existing path, or the name of a bundled scenario (a path that exists wins). Raises
    :func:`unknown_model`'s :class:`InputError` for anything else."""
    if spec.startswith("example:"):
        return resolve_example(spec)
    return ScenarioFile(spec, resolve_scenario_path(spec))


def resolve_scenario_path(spec: str | Path) -> Path:
    """The file named by ``spec``: the path itself when it exists, else the bundled scenario of that
    name (:class:`InputError` from :func:`unknown_model` when it is neither)."""
    path = Path(spec)
    if path.exists():
        return path
    bundled = flcheck_spec.bundled_scenarios()
    if str(spec) in bundled:
        return bundled[str(spec)]
    raise unknown_model(str(spec))


ModelPaths = str | Path | Sequence[str | Path]


def resolve_model_files(path_or_paths: ModelPaths) -> ModelPaths:
    """The model files of a ``MODEL`` argument: a single name that is no file, no explicit prefix
    (``base`` of ``base.tra``) and names a bundled scenario becomes that scenario's path; anything
    else is returned as it is."""
    single = path_or_paths if isinstance(path_or_paths, str | Path) else (
        path_or_paths[0] if len(path_or_paths) == 1 else None)
    if single is None:
        return path_or_paths
    path = Path(single)
    if path.exists() or path.with_name(path.name + ".tra").exists():
        return path_or_paths
    bundled = flcheck_spec.bundled_scenarios()
    return bundled.get(str(single), path_or_paths)


def unknown_model(spec: str, *, alternatives: Sequence[str] = ()) -> InputError:
    """The error for a model argument that is no file and no bundled scenario: lists the bundled
    scenarios (and ``alternatives``, e.g. the mechanisms of ``audit``), with the closest names."""
    bundled = sorted(flcheck_spec.bundled_scenarios())
    known = [*bundled, *(f"example:{name}" for name in sorted(EXAMPLES)), *alternatives]
    stem = Path(spec).stem if spec.endswith(".fl") else spec
    close = difflib.get_close_matches(stem, known, n=3)
    hint = ""
    if close:
        hint = "; did you mean " + (", ".join(close[:-1]) + " or " if len(close) > 1 else "")
        hint += close[-1] + "?"
    return InputError(f"not found (no such file or bundled scenario){hint}", Position(spec),
                      "a path, a bundled scenario (" + ", ".join(bundled) + ") or example:NAME"
                      + (" or " + ", ".join(alternatives) if alternatives else ""))


_TITLE = re.compile(r'^\s*scenario\s+"((?:[^"\\]|\\.)*)"', re.M)


def bundled_scenario_titles() -> dict[str, str]:
    """The bundled scenarios' titles (the text of each file's ``scenario "..."`` line), by name."""
    titles = {}
    for name, path in flcheck_spec.bundled_scenarios().items():
        match = _TITLE.search(path.read_text(encoding="utf-8"))
        titles[name] = flcheck_spec.unquote(f'"{match.group(1)}"') if match else ""
    return titles


def _names_scenario(path_or_paths: ModelPaths) -> bool:
    """Whether a ``MODEL`` argument is a scenario (a ``.fl`` file or a bundled scenario's name)."""
    if isinstance(path_or_paths, str) and path_or_paths.startswith("example:"):
        return False
    resolved = resolve_model_files(path_or_paths)
    first = resolved if isinstance(resolved, str | Path) else (resolved[0] if resolved else "")
    return Path(first).suffix == ".fl"


def load_fl_model(spec: str, defines: Mapping[str, int] | None = None,
                  ) -> tuple[FLSystem, list[DataPoint], list[tuple[str, Dataset]]]:
    """``(FL system, universe of candidate data points, declared neighbours [(name, D1)])`` of a
    command-line model (:func:`resolve_model_spec`); an example system declares no neighbours.
    ``defines`` set a scenario's constants."""
    model = resolve_model_spec(spec)
    if isinstance(model, ExampleModel) and defines:
        raise InputError("-D NAME=VALUE sets constants of a scenario; an example takes "
                         "example:NAME:key=value options", Position(spec), "a scenario")
    if isinstance(model, ExampleModel):
        return model.system, list(model.universe), []
    if model.path.suffix != ".fl":
        raise InputError(f"needs an FL scenario, got {model.path.suffix or 'no suffix'!r}",
                         Position(str(model.path)),
                         "a scenario file (.fl), a bundled scenario or example:NAME")
    from flmodel.scenario import load_scenario  # lazy: the model layer
    from flmodel.scenario_build import build_fl_system, neighbour_dataset, universe

    scenario = load_scenario(model.path, defines=defines)
    declared = [(n.name, neighbour_dataset(scenario, n.name)) for n in scenario.neighbours]
    return build_fl_system(scenario), universe(scenario), declared
