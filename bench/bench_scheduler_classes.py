"""Benchmark of the scheduler classes on the two-round deadline round: prints figures, asserts nothing.

``spec/scenarios/moniteo_deadline.fl`` over two rounds (``bounds rounds 2``, nothing else changed).
The attacker's record (the releases seen) is the observation; the outcome is the record at the end of
the run.  For each class: the worst δ(0) (the best advantage) and
ε* in the worse direction, exact or a bracket, and the CPU seconds.  The adaptive class is computed
twice: with the per-leaf programme (each final record is one leaf: ``finals_separate``) and with the
branch and bound it replaces (stopped after ``--seconds`` per figure).

Run: ``python bench/bench_scheduler_classes.py [--rounds R] [--seconds S]`` (defaults 2 and 120).
Figures measured on a shared, loaded machine are indicative only; CPU seconds are ``process_time``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from unittest import mock

import flcheck_spec

from checker.app.privacy_fl import privacy_model
from checker.app.privacy_observation import observe_dataset
from checker.app.privacy_scheduler import kripke_observable_mdps, record_observable
from checker.mc.explore import Limits
from checker.privacy import scheduler_bounds
from checker.privacy.observable_mdp import build_history_tree
from checker.privacy.schedulers import worst_delta, worst_epsilon


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=120.0)
    args = parser.parse_args()
    text = flcheck_spec.resource("scenarios", "moniteo_deadline.fl").read_text(encoding="utf-8")
    text = text.replace("bounds rounds 1", f"bounds rounds {args.rounds}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "deadline.fl"
        path.write_text(text, encoding="utf-8")
        start = time.process_time()
        m = privacy_model(str(path))
        data = [m.system.fl.initial.igra.dataset, m.declared[0][1]]
        obs = [observe_dataset(m.system.fl, d, observing=m.observing, observer=m.system.observe,
                               keep_kripke=True, record_updates=False, limits=Limits(max_states=2_000_000))
               for d in data]
    structures = [o.kripke for o in obs]
    observable = record_observable("sequence", None)
    mdps, _ = kripke_observable_mdps(structures, [list(k.observables[observable]) for k in structures])  # type: ignore[union-attr]
    tree = build_history_tree(*mdps)
    print(f"moniteo_deadline, {args.rounds} rounds: {sum(k.num_states for k in structures)} states in the "  # type: ignore[union-attr]
          f"two explorations, {len(tree)} histories, {len(tree.leaves())} leaves; "
          f"built in {time.process_time() - start:.1f} s CPU")
    print(f"{'class':<28} {'δ(0)':>24} {'ε* (e^ε*)':>12} {'CPU s':>8}  note")

    def row(label: str, schedulers: str) -> None:
        start = time.process_time()
        delta = max((worst_delta(tree, 0, direction=d, schedulers=schedulers, outcome="final",  # type: ignore[arg-type]
                                 time_limit=args.seconds) for d in (0, 1)), key=lambda c: float(c.upper))
        eps = max((worst_epsilon(tree, direction=d, schedulers=schedulers, outcome="final",  # type: ignore[arg-type]
                                 time_limit=args.seconds) for d in (0, 1)), key=lambda c: float(c.upper))
        seconds = time.process_time() - start
        shown = (f"{float(delta.value):.6g}" if delta.exact
                 else f"[{float(delta.value):.4g}, {float(delta.upper):.4g}]")
        print(f"{label:<28} {shown:>24} {eps.ratio!s:>12} {seconds:8.2f}  {delta.note[:70]}")

    row("uniform", "uniform")
    row("blind", "blind")
    row("adaptive (per leaf)", "adaptive")
    with mock.patch.object(scheduler_bounds, "finals_separate", lambda *_a, **_k: False):
        row("adaptive (branch and bound)", "adaptive")


if __name__ == "__main__":
    main()
