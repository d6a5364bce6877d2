"""Benchmark of the quantitative core: prints figures, asserts nothing.

1. First passage on random sparse chains: exact (Fraction elimination) vs float (scipy.sparse), and
   their largest disagreement.
2. MDP Pmax: exact policy iteration, float policy iteration, value iteration.
3. ``privacy_report`` on Moniteo-like FL systems: states per dataset, neighbouring pairs, seconds,
   worst ε.

Run: ``python bench/bench_privacy.py [--quick]``.  Figures measured on a shared, loaded machine are
indicative only.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from fractions import Fraction

import numpy as np

from checker.app.privacy_fl import privacy_report
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


if __name__ == "__main__":
    if "--case" in sys.argv:
        one_case(sys.argv[sys.argv.index("--case") + 1])
    else:
        main()
