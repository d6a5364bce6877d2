"""[IIIf-FL]'s ``NI_FL_DP I s0 s1 ε`` and ``NI_Decomposition`` read literally (Section III-C).

The definition quantifies over states ``s0``, ``s1`` reachable from ONE initial infrastructure ``I`` in
ONE Kripke structure with ``dataset G0 ◇1 dataset G1``. No published rule changes ``dataset``
(``put_part`` requires it and keeps it, ``get_grad`` and ``eval_server`` copy it), so every reachable
state has the dataset of ``I`` and ``◇1`` — irreflexive under both readings — can never hold: the
definition (and ``NI_Decomposition``, whose conclusion is ``NI_FL_DP``) holds vacuously.
:func:`literal_check` proves this on the model by collecting the reachable datasets, and reports the
per-client partition premise of ``NI_Decomposition``, which CAN be met inside one structure
(``put_part`` chooses the partition). It also contrasts the seed's path sum ``P(M ⊢F {curmodpar = v})``
with first passage (:mod:`checker.markov.core`).
"""

from __future__ import annotations

from typing import cast

import numpy as np

from checker.app.privacy_observation import DEFAULT_LIMITS, ObservedSystem
from checker.app.privacy_results import LiteralCheck, number_json, outcome_text
from checker.markov.models import dtmc_from_kripke
from checker.markov.pathsum import path_sum
from checker.mc.explore import Limits, explore
from checker.verdict import Verdict
from flmodel.data import NEIGHBOUR_READINGS, DataPoint, neighbours_1
from flmodel.system import FLState, FLSystem

__all__ = ["literal_check"]


def literal_check(system: FLSystem, *, limits: Limits | None = None, max_path_sums: int = 3) -> LiteralCheck:
    """The seed's ``NI_FL_DP I s0 s1 ε`` and ``NI_Decomposition`` read literally, inside the one Kripke
    structure ``M = Kripke {t. I →FL* t} {I}`` of ``system`` (bounded as the system is).

    Collects the datasets and partitions of all reachable states; the premise
    ``dataset G0 ◇1 dataset G1`` is satisfiable iff two reachable datasets are neighbours (never, when
    only one dataset is reachable); the per-client premise of ``NI_Decomposition`` is counted over
    pairs of reachable partitions.  Also compares the seed's path sum ``P(M ⊢F {curmodpar = v})`` with
    the first-passage probability for the initial ``curmodpar`` and a few released values (on the
    observed structure, uniform scheduler)."""
    k = explore(system, limits=limits or Limits(max_states=50_000),  # type: ignore[arg-type]  # FLSystem yields plain (action, state, probability) tuples, which explore reads as Steps

                observables=["dataset", "curmodpar"],
                keep_states=True)
    # the FL system's "dataset" observable is the frozenset of data points, and its states are FLStates
    datasets = set(cast(list[frozenset[DataPoint]], k.observables["dataset"]))
    states = cast(list[FLState], k.states) if k.states is not None else []
    parts = {s.infra.igra.partition for s in states}
    ds = sorted(datasets, key=lambda d: sorted(d))
    pairs_n: dict[str, int] = {
        r: sum(1 for i, a in enumerate(ds) for b in ds[i + 1:] if neighbours_1(a, b, r))
        for r in NEIGHBOUR_READINGS}
    satisfiable: dict[str, bool] = {r: n > 0 for r, n in pairs_n.items()}
    plist = list(parts)
    clients = list(system.clients)
    part_pairs: dict[str, int] = {r: sum(1 for i, a in enumerate(plist) for b in plist[i + 1:]
                         if all(neighbours_1(a[c], b[c], r) for c in clients))
                  for r in NEIGHBOUR_READINGS}
    verdict = Verdict.HOLDS_VACUOUSLY if not any(satisfiable.values()) else Verdict.UNKNOWN
    if not k.complete:
        verdict = Verdict.UNKNOWN
    # path sums vs first passage on the observed (release-stopped) structure
    ps: list[dict[str, object]] = []
    obs = ObservedSystem(system, record_updates=False)
    ko = explore(obs, limits=limits or DEFAULT_LIMITS, observables=["curmodpar"],  # type: ignore[arg-type]  # ObservedSystem yields plain (action, state, probability) tuples, which explore reads as Steps
                 keep_states=False)
    if ko.complete:
        d = dtmc_from_kripke(ko)
        vals = list(ko.observables["curmodpar"])
        init_val = vals[int(ko.initial[0])]
        others = [v for v in dict.fromkeys(vals) if v != init_val]
        candidates = [init_val, *others[: max_path_sums - 1]]
        for v in candidates:
            target = np.array([x == v for x in vals], dtype=bool)
            res = path_sum(d, target)
            ps.append({"curmodpar": outcome_text(v),
                       "path_sum": number_json(res.value) if not res.diverges else "inf",
                       "first_passage": number_json(res.first_passage),
                       "differs": res.differs_from_first_passage})
    expl = (f"{len(datasets)} reachable dataset(s) in {k.num_states} states"
            f"{'' if k.complete else ' (exploration incomplete: ' + str(k.limit_reason) + ')'}: "
            + ("the rules never change the dataset, so 'dataset G0 ◇1 dataset G1' can never hold inside one "
               "Kripke structure (◇1 is irreflexive in both readings); NI_FL_DP I s0 s1 ε and the "
               "conclusion of NI_Decomposition hold vacuously"
               if len(datasets) == 1 else "neighbouring datasets are reachable"))
    return LiteralCheck(k.num_states, k.complete, len(datasets), pairs_n, satisfiable, len(parts), part_pairs,
                        verdict, ps, expl)
