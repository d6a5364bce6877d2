"""Whether a report's noise may refuse its value (:meth:`flmodel.system.FLSystem.reports_never_refused`):
shown without exploring, from the rules' declarations, the bounds, the loss and the mechanisms' ranges.
The cone of influence keeps what a report reads in its guard wherever this cannot be shown."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations
from typing import Any

from flmodel.data import DataPoint
from flmodel.errors import ModelError
from flmodel.learning import SquaredLoss, Vec, Vector
from flmodel.rule_data import Scope
from flmodel.steps import update_distribution

#: :class:`flmodel.system.FLSystem` (not imported: the system imports this module)
FLSystem = Any

__all__ = ["reports_never_refused"]


def reports_never_refused(system: FLSystem, client: str) -> bool:
    """:meth:`flmodel.system.FLSystem.reports_never_refused` (uncached)."""
    model_writers_aggregate, partitions_move, gradients_by_reports = _writers(system)
    g = system.initial.igra
    parts: list[frozenset[DataPoint]] = [g.part(client)]
    if partitions_move:
        data = sorted(g.dataset, key=repr)
        if len(data) > 12:
            return False
        parts = [frozenset(sub) for k in range(len(data) + 1) for sub in combinations(data, k)]
    one_round = model_writers_aggregate and system.bounds.max_rounds is not None \
        and system.bounds.max_rounds <= 1
    if one_round:
        return _accepts(system, client, parts, [g.curmodpar])
    mechanism = system.ctx.noise_of(client)[0]
    if mechanism is None or getattr(mechanism, "strict", False) or not gradients_by_reports:
        return False
    box = _model_box(system)
    return box is not None and _accepts(system, client, parts, box)


def _writers(system: FLSystem) -> tuple[bool, bool, bool]:
    """Of the rules that can be enabled: whether only aggregations write the model, whether some
    rule writes a partition, whether only reports write the gradients."""
    drop = system.ctx.trace_mode == "drop"
    model_by_aggregations = gradients_by_reports = True
    partitions_move = False
    for rule in system.rules.rules:
        for actor in rule.actors.names(system):
            scope = Scope(system.clients, actor, drop, system)
            if system.initial_partitioned and ("partitioned", False) in rule.literals(scope):
                continue  # needs the data undeployed: never enabled (as in action_classes)
            written = rule.written(scope)
            if "curmodpar" in written and not rule.aggregates:
                model_by_aggregations = False
            if any(v.startswith("gradient:") for v in written) and not rule.noisy:
                gradients_by_reports = False
            partitions_move = partitions_move or any(v.startswith("partition:") for v in written)
    return model_by_aggregations, partitions_move, gradients_by_reports

def _model_box(system: FLSystem) -> list[Vector] | None:
    """The corners of the box ``B`` every model of a run lies in (:meth:`reports_never_refused`),
    or ``None`` when it cannot be shown (a loss other than the squared one, a client whose reports
    are not noised on the update into a range, parts counting data twice, 2^dim above 64)."""
    g = system.initial.igra
    dim = len(g.curmodpar)
    if not isinstance(system.ctx.loss, SquaredLoss) or dim > 6 \
            or sum(len(p) for p in g.partition.values()) > len(g.dataset):
        return None
    points: list[Vector] = [g.curmodpar, Vec([Fraction(0)] * dim), *g.gradient.values()]
    lo = [min(v[i] for v in points) for i in range(dim)]
    hi = [max(v[i] for v in points) for i in range(dim)]
    for c in system.clients:
        mechanism, target = system.ctx.noise_of(c)
        reach = None if mechanism is None or target != "update" else mechanism.output_range
        if reach is None:
            return None
        lo = [min(x, reach[0]) for x in lo]
        hi = [max(x, reach[1]) for x in hi]
    return [Vec(hi[i] if (k >> i) & 1 else lo[i] for i in range(dim)) for k in range(1 << dim)]

def _accepts(system: FLSystem, client: str, parts: Sequence[frozenset[DataPoint]],
             models: Sequence[Vector]) -> bool:
    """Whether ``client``'s mechanism accepts its update at every model of ``models`` for every part."""
    g = system.initial.igra
    try:
        for part in parts:
            for w in models:
                at = g._replace(curmodpar=w, partition=g.partition.set(client, part))
                update_distribution(system.ctx, at, client)
    except ModelError:
        return False
    return True
