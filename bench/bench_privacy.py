"""Benchmark of the quantitative core: prints figures, asserts nothing.

1. First passage on random sparse chains: exact (Fraction elimination) vs float (scipy.sparse), and
   their largest disagreement.
2. MDP Pmax: exact policy iteration, float policy iteration, value iteration.
3. ``privacy_report`` on Moniteo-like FL systems: states per dataset, neighbouring pairs, seconds,
   worst ε.
4. ``flcheck privacy`` (decomposition and literal reading on, the default) on the generated swarm
   (``bench/swarm_models.py``, 1 round, V = 3) as N grows: CPU seconds, states explored and peak memory
   of one process per case, ``before`` (the previous release's work: per dataset one exploration
   recording every client's updates under one order of the reports, (5·3^N − 1)/2 states; the literal
   reading unreduced, stopped at 200,000 states) and ``after`` (:mod:`checker.app.privacy_decomposition`
   and the reduced literal reading), and whether the figures agree.

Run: ``python bench/bench_privacy.py [--quick]`` (sections 1-3), ``python bench/bench_privacy.py --swarm
[N ...]`` (section 4; default N = 4 6 8 10 12 16 20 24, ``before`` up to N = 10).  Figures measured on a
shared, loaded machine are indicative only.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from checker.app.privacy_budget import declared_budgets, privacy_json
from checker.app.privacy_fl import _decomposition, privacy_model, privacy_report
from checker.app.privacy_literal import literal_check
from checker.app.privacy_observation import observe_dataset
from checker.app.reductions import Reductions
from checker.errors import InputError
from checker.markov.first_passage import reach_probabilities
from checker.markov.mdp import mdp_reach, mdp_value_iteration
from checker.markov.models import dtmc_from_kripke, mdp_from_kripke
from checker.mc.explore import Limits
from checker.mc.kripke import Kripke
from checker.mc.ts import Action
from flmodel.examples import moniteo_like, moniteo_universe


def random_chain(n: int, seed: int) -> Kripke:
    """Forward edge, one local back edge (1-3 states back) and a 1/20 trap from every state (banded, so
    exact elimination has little fill-in; random long back edges make it dense and exact infeasible)."""
    rng = np.random.default_rng(seed)
    src, dst, pr = [], [], []
    for s in range(n - 1):
        q = Fraction(int(rng.integers(1, 9)), 10) * Fraction(19, 20)
        src += [s, s, s]
        dst += [s + 1, max(0, s - int(rng.integers(1, 4))), n]
        pr += [q, Fraction(19, 20) - q, Fraction(1, 20)]
    return Kripke.from_edges(n + 1, [0], src, dst, prob_exact=pr)


def random_mdp(n: int, seed: int) -> Kripke:
    """Two actions per state: ``a`` moves forward or jumps back (small trap risk 3/100); ``b`` moves
    forward faster with a random trap risk (state ``n``).  Target: ``n - 1``; the best action varies."""
    rng = np.random.default_rng(seed)
    src, dst, act, pr = [], [], [], []
    for s in range(n - 1):
        back = max(0, s - int(rng.integers(1, 6)))
        fwd = min(n - 1, s + 2)
        trap = Fraction(int(rng.integers(1, 5)), 40)
        option_a = [(s + 1, Fraction(72, 100)), (back, Fraction(1, 4)), (n, Fraction(3, 100))]
        for a, edges in enumerate((option_a, [(fwd, 1 - trap), (n, trap)])):
            for t, p in edges:
                src.append(s)
                dst.append(t)
                act.append(a)
                pr.append(p)
    return Kripke.from_edges(n + 1, [0], src, dst, action=act, actions=(Action("a"), Action("b")),
                             prob_exact=pr)


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    quick = "--quick" in sys.argv
    print("1. first passage on random chains (median of 3)")
    print(f"{'states':>8} {'exact s':>9} {'float s':>9} {'max |exact-float|':>18}")
    for n in ([200, 1000] if quick else [200, 1000, 3000]):
        print(f"{n:>8}", end=" ", flush=True)
        d = dtmc_from_kripke(random_chain(n, n))
        te, ex = timed(lambda d=d, n=n: reach_probabilities(d, [n - 1], exact=True))
        tf, fl = timed(lambda d=d, n=n: reach_probabilities(d, [n - 1], exact=False))
        diff = float(np.max(np.abs(fl - np.array([float(v) for v in ex]))))  # type: ignore[operator, union-attr]
        print(f"{te:>9.3f} {tf:>9.4f} {diff:>18.2e}", flush=True)
    for n in ([20_000] if quick else [20_000, 200_000]):
        d = dtmc_from_kripke(random_chain(n, n))
        tf, _ = timed(lambda d=d, n=n: reach_probabilities(d, [n - 1], exact=False), repeat=1)
        print(f"{n:>8} {'-':>9} {tf:>9.4f} {'(float only)':>18}", flush=True)
    print("\n2. MDP Pmax (median of 3)")
    print(f"{'states':>8} {'exact PI s':>11} {'float PI s':>11} {'VI s':>8} {'PI iters':>9} {'|PI-VI|':>9}")
    for n in ([100, 400] if quick else [100, 400, 1500]):
        mdp = mdp_from_kripke(random_mdp(n, n))
        target = [n - 1]
        te, rex = timed(lambda mdp=mdp, target=target: mdp_reach(mdp, target, "max", exact=True))
        tf, rfl = timed(lambda mdp=mdp, target=target: mdp_reach(mdp, target, "max", exact=False))
        tv, rvi = timed(lambda mdp=mdp, target=target: mdp_value_iteration(mdp, target, "max"))
        diff = float(np.max(np.abs(rfl.values - rvi.values)))  # type: ignore[union-attr]
        print(f"{n:>8} {te:>11.3f} {tf:>11.3f} {tv:>8.3f} {rex.iterations:>9} {diff:>9.1e}", flush=True)  # type: ignore[union-attr]
    print("\n3. privacy_report on Moniteo-like systems (observe curmodpar, both readings, exact; one "
          "process per case)")
    print(f"{'model':<40} {'states/D':>9} {'pairs':>6} {'seconds':>8} {'worst eps':>18} {'verdict':>9}")
    cases = ["2,1,rr,1", "2,1,geometric,1", "3,1,rr,1", "2,2,rr,0", "2,2,geometric,0"]
    for case in cases[:2] if quick else cases:
        res = subprocess.run([sys.executable, __file__, "--case", case], capture_output=True, text=True,
                             timeout=900, check=False)
        print(res.stdout.strip() or res.stderr.strip().splitlines()[-1], flush=True)


def one_case(case: str) -> None:
    k_s, r_s, m, decomp_s = case.split(",")
    k, r, decomp = int(k_s), int(r_s), decomp_s == "1"
    name = f"moniteo k={k} rounds={r} {m}" + ("" if decomp else " (no decomp.)")
    system = moniteo_like(k, r, m)
    t0 = time.perf_counter()
    try:
        rep = privacy_report(system, moniteo_universe(k), literal=False, decomposition=decomp,
                             limits=Limits(max_states=150_000))  # no memory limit (ru_maxrss survives exec)
    except InputError as exc:
        print(f"{name:<40} stopped: {exc}")
        return
    dt = time.perf_counter() - t0
    worst = rep.worst.epsilon.text() if rep.worst else "-"
    print(f"{name:<40} {rep.base.states:>9} {len(rep.pairs):>6} {dt:>8.2f} {worst:>18} {rep.verdict!s:>9}")


def previous_figures(path: str) -> tuple[dict[str, Any], int]:
    """The work of the previous release's ``flcheck privacy`` on a swarm: per dataset one exploration
    recording every client's updates (the reductions that record allowed: one order of the reports), the
    decomposition from their joint records, the literal reading without reductions; its figures (the
    pair's ε*, each client's, the joint updates', the literal verdict) and the states explored."""
    model = privacy_model(path, None, Reductions())
    system, (_, d1) = model.system, model.declared[0]
    obs = [observe_dataset(system.fl, d, record_updates=True, observing=model.observing,
                           observer=system.observe, exact=True, reducer=model.reducer, limits=Limits())
           for d in (None, d1)]
    assert obs[0].joint is not None and obs[1].joint is not None
    from checker.privacy.ni_fl_dp import pure_epsilon

    joint = pure_epsilon(obs[0].joint, obs[1].joint)
    d = _decomposition(system.fl, obs[0], obs[1], "replace_one", joint)
    lit = literal_check(system.fl)
    assert obs[0].sequence is not None and obs[1].sequence is not None
    figures = {"epsilon": pure_epsilon(obs[0].sequence, obs[1].sequence).text(),
               "clients": {c: e.text() for c, e in d.client_eps.items()}, "joint": d.joint_eps.text(),
               "literal": str(lit.verdict) if lit.complete else "unknown"}
    return figures, sum(o.states for o in obs) + lit.states


def current_figures(path: str) -> tuple[dict[str, Any], int]:
    """``flcheck privacy``'s report now (the same figures) and the states it explored."""
    model = privacy_model(path, None, Reductions())
    rep = privacy_report(model.system, model.universe, declared=model.declared, observing=model.observing,
                         exact=True, reducer=model.reducer, limits=Limits(max_states=2_000_000))
    doc = privacy_json(rep, declared_budgets(rep))
    (pair,) = rep.pairs
    assert pair.decomposition is not None and rep.literal is not None
    figures = {"epsilon": pair.epsilon.text(),
               "clients": {c: e.text() for c, e in pair.decomposition.client_eps.items()},
               "joint": pair.decomposition.joint_eps.text(),
               "literal": str(rep.literal.verdict) if rep.literal.complete else "unknown"}
    states = rep.literal.states
    for e in doc["explorations"]:
        notes = e["reductions"].get("decomposition", {})
        states += e["states"] + sum(c["states"] for c in notes.get("clients", []))
        states += notes.get("every_client", {}).get("states", 0)
    return figures, states


def swarm_case(mode: str, n: int) -> None:
    """One swarm case in this process: prints ``{"cpu", "states", "peak_mb", "figures"}``."""
    from swarm_models import swarm_scenario

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"swarm{n}.fl"
        path.write_text(swarm_scenario(n, 1, 3))
        c0 = time.process_time()
        figures, states = (previous_figures if mode == "before" else current_figures)(str(path))
        cpu = time.process_time() - c0
    print(json.dumps({"cpu": cpu, "states": states, "figures": figures,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def _same(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Whether the figures agree (where the previous literal reading stopped at its state limit, its
    verdict is unknown: the rest must agree)."""
    if before == after:
        return "yes"
    if before["literal"] == "unknown" and {**before, "literal": after["literal"]} == after:
        return "yes (the literal reading before: unknown, stopped at 200,000 states)"
    return f"NO {before} {after}"


def swarm(sizes: list[int], before_up_to: int = 10) -> None:
    print("4. flcheck privacy on the generated swarm (1 round, V = 3; decomposition and literal reading)")
    print(f"{'N':>4} {'before CPU s':>12} {'states':>10} {'peak MB':>8} {'after CPU s':>11} {'states':>8} "
          f"{'peak MB':>8} {'CPU ratio':>9}  same figures")
    for n in sizes:
        runs: dict[str, dict[str, Any]] = {}
        for mode in ("before", "after"):
            if mode == "before" and n > before_up_to:
                continue
            res = subprocess.run([sys.executable, __file__, "--swarm-case", mode, str(n)],
                                 capture_output=True, text=True, check=False)
            if res.returncode == 0:
                runs[mode] = json.loads(res.stdout.strip().splitlines()[-1])
            else:
                print(f"{n:>4} {mode} failed: {(res.stderr.strip().splitlines() or ['?'])[-1]}")
        b, a = runs.get("before"), runs.get("after")
        cols = [f"{b['cpu']:12.2f} {b['states']:10d} {b['peak_mb']:8.0f}" if b else
                f"{'-':>12} {'-':>10} {'-':>8}",
                f"{a['cpu']:11.2f} {a['states']:8d} {a['peak_mb']:8.0f}" if a else
                f"{'-':>11} {'-':>8} {'-':>8}"]
        ratio = f"{b['cpu'] / a['cpu']:9.1f}" if a and b else f"{'-':>9}"
        same = "-" if not (a and b) else _same(b["figures"], a["figures"])
        print(f"{n:>4} {cols[0]} {cols[1]} {ratio}  {same}", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if "--case" in sys.argv:
        one_case(sys.argv[sys.argv.index("--case") + 1])
    elif "--swarm-case" in sys.argv:
        i = sys.argv.index("--swarm-case")
        swarm_case(sys.argv[i + 1], int(sys.argv[i + 2]))
    elif "--swarm" in sys.argv:
        given = [int(a) for a in sys.argv[sys.argv.index("--swarm") + 1:] if a.isdigit()]
        swarm(given or [4, 6, 8, 10, 12, 16, 20, 24])
    else:
        main()
