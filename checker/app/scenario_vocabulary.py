"""The vocabulary of a scenario's transition system: the type of each observable the
:class:`flmodel.scenario_build.ScenarioSystem` offers (see :mod:`flmodel.system` and
:mod:`flmodel.scenario_build` for what each one holds), its rule names, clients, locations and data
points, for the property type check of :mod:`checker.mc.vocabulary`.
"""

from __future__ import annotations

from checker.mc.vocabulary import ValueType, Vocabulary
from flmodel.scenario_build import ScenarioSystem
from flmodel.scenario_check import ACTIONS

_INTEGERS = ("n", "round", "events", "trace_count")
_BOOLEANS = ("bound_reached", "partitioned", "secret_in_dataset")


def scenario_vocabulary(system: ScenarioSystem) -> Vocabulary:
    """The :class:`Vocabulary` of ``system``; an observable this table does not know is unchecked."""
    fl = system.fl
    clients = frozenset(system.clients)
    rules = frozenset(fl.rule_names)
    scenario = system.scenario
    points = frozenset(d.name for d in scenario.data) if scenario is not None else None
    locations = frozenset(n.name for n in scenario.locations) if scenario is not None else frozenset()
    initial = next(iter(system.initial_states()), None)
    dimension = None if initial is None else len(tuple(system.observe(initial, "curmodpar")))  # type: ignore[arg-type]  # curmodpar is a tuple of Fractions
    servers = frozenset() if initial is None else frozenset({str(system.observe(initial, "server"))})
    vector = ValueType("vector", length=dimension) if dimension is not None else ValueType("any")
    client_sets = ValueType("set", names=clients, what="client")
    point_sets = ValueType("set", names=points, what="data point")
    fixed: dict[str, ValueType] = {
        "clients": client_sets, "ready": client_sets, "curmodpar": vector, "dataset": point_sets,
        "server": ValueType("name", names=servers, what="server"),
        "last": ValueType("name", names=rules | {"none"}, what="rule"),
        "last_kind": ValueType("name", names=frozenset(ACTIONS) | {"none"}, what="action kind"),
        **{name: ValueType("int") for name in _INTEGERS},
        **{name: ValueType("bool") for name in _BOOLEANS},
    }
    observables: dict[str, ValueType] = {}
    for name in system.observable_names():
        kind, _, arg = name.partition("_")
        if name in fixed:
            observables[name] = fixed[name]
        elif kind == "gradient" and arg in clients:
            observables[name] = vector
        elif kind == "partition" and arg in clients:
            observables[name] = point_sets
        elif (kind == "ready" and arg in clients) or (kind == "enabled" and arg in rules):
            observables[name] = ValueType("bool")
        elif kind == "holds":
            observables[name] = ValueType("name", names=clients | {"none"}, what="client")
        else:
            observables[name] = ValueType("any")
    return Vocabulary(observables=observables, rules=rules,
                      names={"client": clients, "rule": rules, "location": locations,
                             "data point": points or frozenset()})


__all__ = ["scenario_vocabulary"]
