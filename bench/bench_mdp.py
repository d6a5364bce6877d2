"""flcheck's Pmin/Pmax against Storm's on PRISM MDPs of a few hundred thousand states (prints a table, asserts
nothing).

The models (``bench/mdp_models.py``, written from the protocols' descriptions) are built by stormpy from
their PRISM text, written as explicit ``.tra``/``.lab`` files and read back by flcheck's reader, as
``flcheck ctl model.tra model.lab 'Pmin=? [F goal]'`` would. For each query the table gives the CPU
seconds of

* ``before``: ``mdp_reach`` with flcheck's previous graph precomputation (``Prob0`` only, the ``Prob0E``
  fixpoint redoing an ``np.unique`` over every edge per iteration: ``tests/markov/mdp_reference.py``);
* ``pre``: the graph precomputation now (``Prob0``/``Prob1`` as backward passes, :mod:`checker.markov.graph`);
* ``after``: ``mdp_reach`` now (the precomputation, then policy iteration);
* ``storm``: ``stormpy.model_checking`` with Storm's default settings, on the model stormpy built;

the value at the initial state of each, and the before/after and after/Storm ratios.

Usage: ``python bench/bench_mdp.py [--quick] [--no-before]`` (``--quick``: the small models only;
``--no-before``: skip the previous precomputation, which takes minutes on the largest models).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mdp_models import consensus_prism, root_contention_prism

from checker.io.prism import read_explicit
from checker.markov import mdp as mdp_module
from checker.markov.mdp import Precomputation, mdp_reach
from checker.markov.models import Mdp, mdp_from_kripke
from checker.markov.storm import require_stormpy
from tests.markov.mdp_reference import previous_prob0

Objective = Literal["min", "max"]


@dataclass(frozen=True)
class Case:
    name: str
    prism: str
    queries: tuple[tuple[Objective, tuple[str, ...]], ...]  # objective, labels whose conjunction is the goal


def cases(quick: bool) -> list[Case]:
    coin = (("min", ("finished",)), ("min", ("all_heads",)), ("max", ("all_heads",)))
    rc = (("min", ("elected", "in_time")), ("max", ("elected", "in_time")), ("min", ("elected",)))
    out = [Case("coin2 (N=2, K=2)", consensus_prism(2, 2), coin),
           Case("coin4 (N=4, K=2)", consensus_prism(4, 2), coin),
           Case("root contention D=60", root_contention_prism(60), rc)]
    if not quick:
        out += [Case("coin4 (N=4, K=8)", consensus_prism(4, 8), coin),
                Case("coin6 (N=6, K=1)", consensus_prism(6, 1), coin),
                Case("root contention D=340", root_contention_prism(340), rc)]
    return out


def storm_model(stormpy: Any, text: str, folder: Path) -> Any:
    path = folder / "model.nm"
    path.write_text(text)
    return stormpy.build_model(stormpy.parse_prism_program(str(path)))


def write_explicit(model: Any, folder: Path) -> Path:
    """The stormpy MDP as PRISM explicit files (``model.tra`` with the header ``states choices
    transitions``, ``model.lab`` with ``init`` and the model's labels)."""
    matrix = model.transition_matrix
    lines = []
    for s in range(model.nr_states):
        lo, hi = matrix.get_row_group_start(s), matrix.get_row_group_end(s)
        for local, row in enumerate(range(lo, hi)):
            for entry in matrix.get_row(row):
                lines.append(f"{s} {local} {entry.column} {entry.value!r}")
    tra = folder / "model.tra"
    tra.write_text(f"{model.nr_states} {model.nr_choices} {len(lines)}\n" + "\n".join(lines) + "\n")
    names = ["init", *sorted(n for n in model.labeling.get_labels() if n not in ("init", "deadlock"))]
    per_state: list[list[int]] = [[] for _ in range(model.nr_states)]
    for i, name in enumerate(names):
        for s in model.labeling.get_states(name):
            per_state[s].append(i)
    lab = [" ".join(f'{i}="{n}"' for i, n in enumerate(names))]
    lab += [f"{s}: {' '.join(map(str, ids))}" for s, ids in enumerate(per_state) if ids]
    (folder / "model.lab").write_text("\n".join(lab) + "\n")
    return tra


def cpu(job: Callable[[], Any]) -> tuple[float, Any]:
    c0 = time.process_time()
    out = job()
    return time.process_time() - c0, out


def previous(mdp: Mdp, target: np.ndarray, objective: Objective) -> Precomputation:
    """The precomputation of flcheck's previous release: ``Prob0`` only."""
    zero = previous_prob0(mdp, target, objective) & ~target
    return Precomputation(zero, target.copy(), np.full(mdp.num_states, -1, dtype=np.int64))


def measure(stormpy: Any, model: Any, mdp: Mdp, target: np.ndarray, objective: Objective, query: str,
            before: bool) -> tuple[float, float, float, float, float, float]:
    """CPU seconds before, of the precomputation, after and of Storm; the two values at the initial state."""
    t_before = float("nan")
    if before:
        original = mdp_module.graph_precomputation
        mdp_module.graph_precomputation = previous  # type: ignore[assignment]
        try:
            t_before, _ = cpu(lambda: mdp_reach(mdp, target, objective, exact=False))
        finally:
            mdp_module.graph_precomputation = original
    t_pre, _ = cpu(lambda: mdp_module.graph_precomputation(mdp, target, objective))
    t_after, res = cpu(lambda: mdp_reach(mdp, target, objective, exact=False))
    prop = stormpy.parse_properties(query)[0]
    t_storm, storm_res = cpu(lambda: stormpy.model_checking(model, prop))
    storm_value = storm_res.get_value_vector()[model.initial_states[0]]
    return t_before, t_pre, t_after, t_storm, float(res.initial_value), float(storm_value)


def main() -> None:
    quick = "--quick" in sys.argv
    before = "--no-before" not in sys.argv
    stormpy = require_stormpy()
    print(f"{'model':24} {'states':>8} {'choices':>8} {'query':34} {'before s':>9} {'pre s':>7} "
          f"{'after s':>8} {'storm s':>8} {'before/after':>12} {'after/storm':>11}  value (flcheck, storm)")
    for case in cases(quick):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            model = storm_model(stormpy, case.prism, folder)
            kripke = read_explicit(write_explicit(model, folder))
        mdp = mdp_from_kripke(kripke)
        for objective, labels in case.queries:
            target = np.logical_and.reduce([kripke.labels[name] for name in labels])
            query = f"P{objective}=? [F {' & '.join(f'{chr(34)}{name}{chr(34)}' for name in labels)}]"
            t_before, t_pre, t_after, t_storm, value, storm_value = measure(
                stormpy, model, mdp, target, objective, query, before)
            print(f"{case.name:24} {mdp.num_states:8d} {mdp.num_choices:8d} {query:34} {t_before:9.2f} "
                  f"{t_pre:7.3f} {t_after:8.3f} {t_storm:8.3f} {t_before / t_after:12.1f} "
                  f"{t_after / max(t_storm, 1e-3):11.1f}  {value:.12g}, {storm_value:.12g}", flush=True)


if __name__ == "__main__":
    main()
