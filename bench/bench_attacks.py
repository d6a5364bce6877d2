"""Benchmark figures of the attack engines (prints; no assertions). Run:
``/work/venv/bin/python bench/bench_attacks.py [sratta|mia|mine ...]``.

* SRATTA ([SRATTA]): digits, 5 clients × 100 samples, n_updates = 5, t_max = 20, MLP with 1000 hidden
  neurons, secure aggregation; homogeneous (Dirichlet α = 1000, and IID) vs heterogeneous (α = 0.1, 1)
  clients; SRATTA's V-measure vs K-means; learning-rate sweep; neuron censoring. Medians over seeds.
* MIA ([NIST-MIA]): the comparison table at ε ∈ {inf, 200, 10} on the generated genomics data, figures
  with 95 % intervals and the targets' train/test utility, medians over five seeds.
* MINE ([FL-MI]): conventional MINE vs H-MINE on Gaussian batches with analytic MI as B grows, then the
  FL trends (batch size, gradient noise, training step, class imbalance).

Figures measured on a shared 2-core machine: times are indicative only.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from checker.app.attacks import run_mia, run_sratta
from checker.app.leakage import run_leakage
from checker.crossval.mine import estimate_mi, gaussian_batch_samples, gaussian_mi

SEEDS = (0, 1, 2)


def _med(values: list[float]) -> str:
    return f"{statistics.median(values):.3f}"


def bench_sratta() -> None:
    keys = ("rho_recovered", "rho_matched", "rho_component", "v_measure", "singleton_v_measure",
            "kmeans_v_measure",
            "n_false", "n_mixed_components", "model_accuracy")
    print("== SRATTA on digits: 5 clients x 100, n_updates=5, t_max=20, H=1000, B=4 (medians over seeds "
          f"{SEEDS})")
    print("setting".ljust(26) + "".join(k[:14].rjust(15) for k in keys) + "   sec")

    def row(label: str, **kw: object) -> None:
        rs = [run_sratta(seed=s, **kw) for s in SEEDS]  # type: ignore[arg-type]
        sec = statistics.median(r["seconds"]["training"] + r["seconds"]["attack"] for r in rs)
        print(label.ljust(26) + "".join(_med([r[k] for r in rs]).rjust(15) for k in keys) + f"{sec:6.1f}")

    for alpha in (0.1, 1.0, 1000.0, None):
        row(f"alpha={alpha} lr=1.0", alpha=alpha)
    for lr in (0.1, 0.5):
        row(f"alpha=1000 lr={lr}", alpha=1000.0, lr=lr)
    for c in (1, 2):
        row(f"alpha=1000 censor<={c}", alpha=1000.0, censor_threshold=c)


MIA_SEEDS = (0, 1, 2, 3, 4)


def _ci(values: list[float], lows: list[float], highs: list[float]) -> str:
    return f"{statistics.median(values):.3f} [{statistics.median(lows):.3f},{statistics.median(highs):.3f}]"


def bench_mia() -> None:
    results = [run_mia(seed=s) for s in MIA_SEEDS]
    cfg = results[0]["config"]
    print(f"\n== MIA ([NIST-MIA]) on generated genomics: {cfg['n_snps']} SNPs, {cfg['n_clients']} clients x "
          f"{cfg['per_client']}, client 0 colludes; {cfg['n_challenge_members']} members + "
          f"{cfg['n_challenge_nonmembers']} non-members challenged; meta {results[0]['meta_classifier']}; "
          f"medians over seeds {MIA_SEEDS} of the figure and of its 95 % interval ends")
    keys = ("accuracy", "auc", "tpr_at_1pct_fpr", "tpr_at_0_1pct_fpr")
    print("eps".ljust(6) + "attack".ljust(19) + "".join(k.rjust(24) for k in keys) + "   train/test utility")
    for i, row0 in enumerate(results[0]["rows"]):
        rows = [r["rows"][i] for r in results]
        utility = (f"{statistics.median(r['utility']['train_accuracy'] for r in rows):.3f}/"
                   f"{statistics.median(r['utility']['test_accuracy'] for r in rows):.3f}")
        for name in row0["attacks"]:
            cells = [_ci([r["attacks"][name][k] for r in rows], [r["interval"][name][k][0] for r in rows],
                         [r["interval"][name][k][1] for r in rows]) for k in keys]
            line = f"{row0['epsilon_target']:<6g}{name:<19}" + "".join(c.rjust(24) for c in cells)
            print(line + f"   {utility}")


def bench_mine() -> None:
    print("\n== MINE vs H-MINE on Gaussian batches: x_m ~ N(0, I_2), G = sum_m x_m + N(0, I_2); 6000 "
          "samples, 1500 Adam steps")
    print("B   analytic   mine   hmine   sec(mine) sec(hmine)")
    for b in (1, 4, 8, 16):
        xb, g = gaussian_batch_samples(6000, b, np.eye(2), 1.0, np.random.default_rng(b))
        out = []
        for kind in ("mine", "hmine"):
            t = time.perf_counter()
            out.append((estimate_mi(xb, g, kind, steps=1500).mi, time.perf_counter() - t))
        print(f"{b:<3} {gaussian_mi(b, np.eye(2), 1.0):8.3f} {out[0][0]:7.3f} {out[1][0]:7.3f} "
              f"{out[0][1]:9.1f} {out[1][1]:9.1f}")
    print("\n== FedSGD logistic regression (d=4), I(X_B; G) trends (nats); covariance sum raw")
    for trend, vals in (("batch", (1, 4, 8, 16)), ("noise", (0.03, 0.1, 0.3, 1.0)), ("step", (0, 20, 200)),
                        ("imbalance", (0.5, 0.2, 0.05))):
        r = run_leakage(trend=trend, values=vals, steps=1000, gaussian_batches=())
        print(f"{trend}: values={list(vals)}")
        for k, v in r["mi"].items():
            print(f"   {k:<15}" + " ".join(f"{x:8.3f}" for x in v))


if __name__ == "__main__":
    which = sys.argv[1:] or ["sratta", "mia", "mine"]
    t0 = time.perf_counter()
    for w in which:
        {"sratta": bench_sratta, "mia": bench_mia, "mine": bench_mine}[w]()
    print(f"\ntotal {time.perf_counter() - t0:.0f} s", file=sys.stderr)

