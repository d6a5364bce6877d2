"""flmodel: the IIIf federated-learning instance of [IIIf-FL] (what the system is).

Never imports ``checker``. See ``spec/SPEC.md`` for the traceability table from [IIIf-FL]'s
definitions to the names here.

The names most scripts need are exported here (loaded on first use, so ``import flmodel`` stays cheap):
:func:`load_scenario` / :func:`parse_scenario` (a scenario file or text to its AST
:class:`~flmodel.scenario_ast.Scenario`), :func:`build_system` (the scenario's transition system),
:class:`FLSystem` and :class:`FLState` (the FL transition system and its states), :class:`DataPoint` /
:func:`point` (data), and the module :mod:`flmodel.examples` (the seed's model and the Moniteo swarm).

>>> import flmodel
>>> len(flmodel.examples.seed_dataset())
3
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Exported name -> the module that defines it.
_EXPORTS = {
    "load_scenario": "flmodel.scenario",
    "parse_scenario": "flmodel.scenario",
    "Scenario": "flmodel.scenario_ast",
    "build_system": "flmodel.scenario_build",
    "ScenarioSystem": "flmodel.scenario_build",
    "FLSystem": "flmodel.system",
    "FLState": "flmodel.system",
    "DataPoint": "flmodel.data",
    "point": "flmodel.data",
    "ModelError": "flmodel.errors",
}

__all__ = ["DataPoint", "FLState", "FLSystem", "ModelError", "Scenario", "ScenarioSystem", "build_system",
           "examples", "load_scenario", "parse_scenario", "point"]

if TYPE_CHECKING:
    from flmodel import examples
    from flmodel.data import DataPoint, point
    from flmodel.errors import ModelError
    from flmodel.scenario import load_scenario, parse_scenario
    from flmodel.scenario_ast import Scenario
    from flmodel.scenario_build import ScenarioSystem, build_system
    from flmodel.system import FLState, FLSystem


def __getattr__(name: str) -> Any:
    """The exported names, imported on first use (PEP 562)."""
    if name == "examples":  # lazy: the example systems import the whole model
        return importlib.import_module("flmodel.examples")
    if name in _EXPORTS:  # lazy: the grammar and numpy load only when a name is used
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'flmodel' has no attribute {name!r}")
