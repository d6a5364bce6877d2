"""Privacy over many rounds: ``flcheck check moniteo_rounds -D R=…`` (every property) as the rounds grow.

Each row is one ``flcheck check --json`` in a fresh process (CPU seconds of that process, user +
system). Columns: the rounds R; the states of the forward pass's exploration of D0 (the FL system
with what each step shows the attacker, reduced); the most atoms a level of the release sequence's
privacy loss distribution held (distinct (pair of beliefs, ratio); past 50,000 the ratios are dropped);
the CPU seconds; ε* of the release sequence (the ``ni_fl_dp`` property, exact); δ(ln 3) of the release
sequence (the ``rounds_ln3`` budget's table, exact: ``—`` past the rounds whose PLD is kept, with the last
round where it is); and how many of the seven properties were decided (holds or violated).

Targets (issue #28): R = 10 with ε* = ln 1024 and δ(ln 3) rational in ≤ 30 s CPU; R = 100 in ≤ 5 min
CPU with every budget decided. Before the forward pass, R = 6 took 377 s and R = 10 was unknown
after the time limit (the enumeration of the 7^R release sequences).

Run: ``python bench/bench_rounds.py [R ...]`` (default 2 3 5 10 20 50 100; a few minutes).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from typing import Any

DEFAULT_ROUNDS = (2, 3, 5, 10, 20, 50, 100)


def run(rounds: int) -> tuple[dict[str, Any], float]:
    """The JSON of ``flcheck check moniteo_rounds -D R=rounds`` and the CPU seconds it took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-m", "checker", "check", "moniteo_rounds", "-D", f"R={rounds}",
                          "--json", "--max-seconds", "900"], capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode not in (0, 1):
        raise SystemExit(f"flcheck failed at R = {rounds} (exit {out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout), cpu


def delta_text(prop: dict[str, Any]) -> str:
    """δ(ε_B) of the whole release sequence (a budget property's exact run: the rational when short),
    or the last round where its privacy loss distribution is kept."""
    run = prop["details"].get("exact_run", {}).get("releases")
    if run is not None and run["delta_text"] is not None:
        exact = run["delta_text"].split(" ≈ ")[0]
        return exact if len(exact) <= 40 else f"≈ {float(run['delta']):.6g} ({len(exact)}-char rational)"
    rows = prop["details"]["budget"]["releases"]["rounds"]
    known = [r for r in rows if r["exact_delta"] is not None]
    return f"— (kept to round {known[-1]['round']})" if known else "—"


def main(argv: list[str]) -> None:
    rounds = [int(a) for a in argv] or list(DEFAULT_ROUNDS)
    print(f"{'R':>4} {'states D0':>10} {'atoms':>8} {'CPU s':>8}  {'ε* (releases)':<28} {'δ(ln 3)':<40} "
          "decided")
    for r in rounds:
        data, cpu = run(r)
        props = {p["name"]: p for p in data["properties"]}
        expl = data["reductions"].get("explorations", [{}])
        states = expl[0].get("D0", {}).get("states", "?") if expl else "?"
        budget = props["rounds_ln3"]
        atoms = "?"
        eps = props["ni_fl_dp"]["value_text"]
        if len(eps) > 28:
            eps = f"≈ {props['ni_fl_dp']['value']:.6g}"
        decided = sum(p["verdict"] in ("holds", "violated") for p in data["properties"])
        atoms = str(budget["details"]["budget"]["releases"].get("atoms", "?"))
        print(f"{r:>4} {states!s:>10} {atoms:>8} {cpu:>8.1f}  {eps:<28} {delta_text(budget):<40} "
              f"{decided}/{len(data['properties'])}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
