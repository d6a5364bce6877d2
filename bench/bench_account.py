"""``flcheck account`` against dp_accounting (PLD, RDP) and Microsoft's prv_accountant: ε(δ) of
Poisson-subsampled DP-SGD runs, the figure and the CPU seconds of each (median of 3 runs).

The issue's query is the first row (Z = 1.1, q = 0.01, T = 10,000, δ = 1e-5): the targets are
dp_accounting's PLD figure inside flcheck's certified bracket, the bracket's width ≤ 1 % of its upper
end, and flcheck's CPU time ≤ dp_accounting's PLD accountant's. dp_accounting's PLD runs at its default
grid (interval 1e-4); prv_accountant with eps_error 0.01 (it reports (lower, estimate, upper)). A last
table: the inverse (the smallest Z for ε = 2) and the other sampling schemes.

The last table is ``flcheck audit fedavg``: each injected fault's one-run lower bound against the
accountant's claimed ε, with CPU seconds, and 20 seeds without a fault.

Run: ``python bench/bench_account.py`` (about a minute).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from checker.crossval.accountant import Run, epsilon_bracket, noise_for_epsilon

QUERIES = [
    (1.1, 0.01, 10_000, 1e-5),
    (0.8, 0.05, 1_000, 1e-6),
    (2.0, 0.2, 100, 1e-5),
    (1.0, 0.004, 60_000, 1e-5),
    (5.0, 0.001, 100_000, 1e-5),
]


def cpu(fn: Callable[[], Any], repeats: int = 3) -> tuple[Any, float]:
    """The result of ``fn`` and the median CPU seconds over ``repeats`` runs."""
    times, result = [], None
    for _ in range(repeats):
        start = time.process_time()
        result = fn()
        times.append(time.process_time() - start)
    return result, statistics.median(times)


def dpa_pld(z: float, q: float, t: int, delta: float) -> float:
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)), t)
    return float(acc.get_epsilon(delta))


def dpa_rdp(z: float, q: float, t: int, delta: float) -> float:
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    acc = rdp_privacy_accountant.RdpAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)), t)
    return float(acc.get_epsilon(delta))


def prv(z: float, q: float, t: int, delta: float) -> tuple[float, float, float] | None:
    try:
        from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant
    except ImportError:
        return None
    acc = PRVAccountant(prvs=PoissonSubsampledGaussianMechanism(noise_multiplier=z, sampling_probability=q),
                        max_self_compositions=t, eps_error=0.01, delta_error=delta * 1e-4)
    low, est, up = acc.compute_epsilon(delta=delta, num_self_compositions=[t])
    return float(low), float(est), float(up)


def main() -> None:
    import logging

    logging.getLogger("absl").setLevel(logging.ERROR)
    print("ε(δ) of Poisson-subsampled Gaussian runs; CPU seconds, median of 3\n")
    head = ("Z", "q", "T", "δ", "flcheck [lower, upper]", "width %", "s", "dp_acc PLD", "s", "inside",
            "dp_acc RDP", "s", "prv (lower, est, upper)", "s", "CPU ratio")
    print(" | ".join(head))
    for z, q, t, delta in QUERIES:
        query = (z, q, t, delta)
        b, s_ours = cpu(lambda query=query: epsilon_bracket(Run(*query[:3]), query[3]))  # type: ignore[misc]
        pld, s_pld = cpu(lambda query=query: dpa_pld(*query))  # type: ignore[misc]
        rdp, s_rdp = cpu(lambda query=query: dpa_rdp(*query))  # type: ignore[misc]
        p, s_prv = cpu(lambda query=query: prv(*query), repeats=1)  # type: ignore[misc]
        prv_text = "not installed" if p is None else f"({p[0]:.4f}, {p[1]:.4f}, {p[2]:.4f})"
        print(" | ".join([f"{z:g}", f"{q:g}", f"{t}", f"{delta:g}", f"[{b.lower:.5f}, {b.upper:.5f}]",
                          f"{100 * b.width / b.upper:.3f}", f"{s_ours:.3f}", f"{pld:.5f}", f"{s_pld:.3f}",
                          "yes" if b.lower <= pld <= b.upper else "NO", f"{rdp:.4f}", f"{s_rdp:.3f}",
                          prv_text,
                          f"{s_prv:.2f}", f"{s_ours / s_pld:.2f}"]))
    print("\nthe inverse and the other sampling schemes (δ = 1e-5)\n")
    base = Run(1.1, 0.01, 10_000, "poisson", 10_000, 100)
    plain = replace(base, clients=None, per_round=None)
    (z, b), s = cpu(lambda: noise_for_epsilon(plain, 2.0, 1e-5), repeats=1)
    print(f"smallest Z for ε ≤ 2 (poisson, q = 0.01, T = 10000): Z = {z:.5f}, certified ε in "
          f"[{b.lower:.5f}, {b.upper:.5f}], {s:.2f} s")
    for sampling in ("poisson", "fixed", "shuffle", "all"):
        other = replace(base, sampling=sampling)
        b, s = cpu(lambda other=other: epsilon_bracket(other, 1e-5), repeats=1)  # type: ignore[misc]
        width = "" if not math.isfinite(b.upper) else f"{100 * b.width / b.upper:.2f} %"
        print(f"{sampling:8s} Z = 1.1, 100 of 10000, T = 10000: ε in [{b.lower:.4f}, {b.upper:.4f}] "
              f"(width {width}), {s:.2f} s")


def audit_table() -> None:
    """``flcheck audit fedavg`` on the default setting: each fault's lower bound against the claimed ε
    and its CPU seconds (target: detected in ≤ 2 min), and 20 seeds without a fault."""
    from checker.app.audit_fedavg import audit_fedavg
    from flmodel.training_dp import FAULTS, DPFedAvgConfig

    print("\none-run audit of DP-FedAvg ([SNJ23]; Z = 4, q = 0.5, T = 20, 1000 gradient canaries, "
          "95 % confidence, δ = 1e-5)\n")
    print("fault | correct/guesses | ε lower | claimed ε | detected | CPU s")
    for fault in (None, *FAULTS):
        res = audit_fedavg(DPFedAvgConfig(fault=fault, seed=0))
        print(f"{fault or 'none'} | {res.audit.v}/{res.audit.r} | {res.audit.epsilon_lower:.3f} | "
              f"{res.claimed.upper:.3f} | {'yes' if res.detected else 'no'} | {res.cpu_seconds:.2f}")
    seeds = [audit_fedavg(DPFedAvgConfig(seed=seed)) for seed in range(20)]
    lows = [r.audit.epsilon_lower for r in seeds]
    print(f"20 seeds without a fault: ε lower median {statistics.median(lows):.3f}, max {max(lows):.3f}, "
          f"claimed {seeds[0].claimed.upper:.3f}; above the claim: {sum(r.detected for r in seeds)}; "
          f"CPU {sum(r.cpu_seconds for r in seeds):.1f} s in all")


if __name__ == "__main__":
    main()
    audit_table()
