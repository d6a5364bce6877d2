"""A tour of flcheck's Python API (``import checker``), the same steps as the README's command-line tour.

Run: ``python examples/api_tour.py [OUTDIR]`` (OUTDIR: where the exports go; default a temporary folder).
Each printed line is one result; every result also has ``to_json()`` and, in a notebook, an HTML view.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import checker


def main(out_dir: Path) -> None:
    # A bundled scenario by name (a path to a .fl file works the same), with a constant set (-D N=2).
    swarm = checker.load("moniteo_swarm8", defines={"N": 2})
    size = swarm.explore()
    print(f"explore: {size.states} states, {size.transitions} transitions, complete={size.complete}")

    # One CTL property, with its witness or counterexample.
    ctl = swarm.check("AG (round < 1 -> EF round = 1)")
    print(f"ctl: {ctl.formula}: {ctl.verdict}")

    # Probabilities (PCTL): a query gives the value, exact where it can be (check() takes it too); a bound,
    # also inside CTL, gives a verdict.
    query = swarm.probability("P=? [F<=3 round = 1]")
    print(f"probability: {query.formula} = {query.exact} (scheduler {query.scheduler})")
    bound = swarm.check("Pmin>=1 [F round = 1]")
    print(f"probability bound: {bound.formula}: {bound.verdict}")

    # dpCTL's D{ε,δ} between a scenario and its declared neighbour, over adaptive and blind schedulers.
    deadline = checker.load("moniteo_deadline")
    for scheduler in ("adaptive", "blind"):
        leak = deadline.dp("D{ln(3),0}[F curmodpar == (0, 1/2)]", between="hot", scheduler=scheduler)
        print(f"dp over {leak.scheduler_class['name']} schedulers: {leak.verdict}")

    # Every property the scenario declares (flcheck check).
    run = checker.check_all("moniteo_swarm8", defines={"N": 2})
    for p in run.properties:
        print(f"check: {p.name} ({p.kind}): {p.verdict} {p.value_text}")

    # NI-FL-DP against the declared neighbour, at ε = ln 2.
    dp = swarm.privacy(eps="ln(2)")
    print(f"privacy: {dp.verdict}, ε* = {dp.epsilon_text}, δ = {dp.delta:.4g}")

    # An attack tree for a goal, then the same model written as a Storm explicit model and read back.
    tree = swarm.attack_tree("round = 1")
    print(f"attack tree: found={tree.found}, {tree.size} nodes")
    written = swarm.export(out_dir / "swarm", "explicit")
    again = checker.load(out_dir / "swarm")
    print(f"export: {', '.join(Path(w).name for w in written.written)}; read back "
          f"{again.explore().states} states")

    # Results are JSON-able: the same keys as the commands' --json output.
    json.dumps(run.to_json())


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(Path(tmp))
