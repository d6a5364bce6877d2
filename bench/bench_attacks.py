"""The attack engines against their papers' claims: medians over seeds with 95 % intervals, and one
line per claim saying whether it holds. Prints tables; no assertions. Run:

``/work/venv/bin/python bench/bench_attacks.py [mia] [sratta] [mine] [--seeds 0,1,2,3,4]
[--batches 1,2,4,8] [--max-steps 12000]``

Every cell ``m [lo, hi]`` is the median over the seeds and the 95 % Student-t interval of the mean
(``checker.crossval.mia_metrics.seed_summary``); MIA cells add ``{lo-hi}``, the medians of each seed's own
95 % interval (Clopper–Pearson for accuracy and TPR, bootstrap for AUC). A claim "holds" when the interval
of the difference it is about lies on its side of 0, "fails" when it lies on the other side, and is
"not resolved" otherwise.

* ``mia`` ([NIST-MIA]): ``flcheck attack mia``'s defaults (generated genomics data, 2000 SNPs, 4 clients ×
  200, client 0 colludes, 600 members + 1050 non-members challenged) at ε ∈ {inf, 200, 10}. Claims: the
  ensemble's accuracy and TPR at 1 % FPR above the best single-signal baseline without DP; its TPR at
  1 % FPR above LiRA's at ε = 200; near random at ε = 10 (accuracy interval below 0.6).
* ``sratta`` ([SRATTA]): digits, 5 clients × 100, n_updates = 5, t_max = 20, MLP with 1000 hidden
  neurons, lr 1.0, secure aggregation: batch size 1..32 on IID clients (and batch 32 with 4000 hidden
  neurons: [SRATTA] Sec. 4 says recovery grows with the width; batch 1 also at lr 0.1, since at lr 1.0
  that training stays at chance), Dirichlet α ∈ {0.1, 1, 10} at batch 4,
  α = 0.1 at lr 0.3 (at lr 1.0 that training stays at chance) and the censoring defence. ``rho_isolated``
  is the share of samples alone in some activation set: what Step 1 can recover (Prop. 3.3). Claims:
  ρ_recovered > 0.1 at batch 32, no component mixing clients (Cor. 3.6), V-measure gain over the
  every-sample-alone partition.
* ``mine`` ([FL-MI]): H-MINE (BlockModel 200-200-5, MixModel 500-1, Adam lr 5e-5) and MINE (200-200-1,
  the same budget), ``checker.app.leakage.NETWORKS["paper"]``: minibatches of 64, at most
  ``--max-steps`` Adam steps, early stopping on a held-out DV bound, the estimate on a separate test
  split; 40,000 joint samples. Gaussian checks with an analytic MI: ``x_m ~ N(0, I_2)``,
  ``G = Σ_m x_m + N(0, I_2)`` (MI ``log(1 + B)``) at ``--batches``, and ``x_m ~ N(0, I_16)``,
  ``G = 0.15 Σ_m x_m + N(0, I_16)`` (MINE's input 144-dimensional at B = 8, the regime [FL-MI] says
  defeats it); then real gradients of a FedSGD logistic-regression client (``fl_samples``; no analytic
  MI: both estimates are lower bounds up to noise, so the larger is the tighter). "cap" counts the
  estimates still improving at the step cap (best step in the last 10 % of the budget). Claims: H-MINE
  within 10 % of the analytic MI at B = 1..8; closer to it than MINE at B ≥ 4.

CPU seconds are process CPU time on a shared 2-core machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from checker.app.attacks import MIA_ATTACKS, run_mia, run_sratta
from checker.app.leakage import NETWORKS, fl_samples
from checker.crossval.mia_metrics import seed_summary
from checker.crossval.mine import estimate_mi, gaussian_batch_samples, gaussian_mi


def _cell(values: Sequence[float]) -> str:
    return seed_summary([float(v) for v in values]).text()


def _verdict(diffs: Sequence[float], wanted: str) -> str:
    """``wanted`` is "> 0" or "< 0": the claim's side of 0 for the seeds' differences."""
    s = seed_summary([float(d) for d in diffs])
    above, below = s.low > 0, s.high < 0
    if wanted == "> 0":
        return "holds" if above else "fails" if below else "not resolved"
    return "holds" if below else "fails" if above else "not resolved"


# --------------------------------------------------------------------------------------------------- MIA
SINGLE_SIGNAL = ("loss", "lira", "lira_offline", "lira_online")
MIA_KEYS = ("accuracy", "auc", "tpr_at_1pct_fpr", "tpr_at_0_1pct_fpr")


def bench_mia(seeds: Sequence[int]) -> None:
    t0 = time.process_time()
    results = [run_mia(seed=s) for s in seeds]
    cpu = (time.process_time() - t0) / len(seeds)
    cfg = results[0]["config"]
    print(f"== MIA ([NIST-MIA]) on generated genomics: {cfg['n_snps']} SNPs, {cfg['n_clients']} clients x "
          f"{cfg['per_client']}, client 0 colludes; {cfg['n_challenge_members']} members + "
          f"{cfg['n_challenge_nonmembers']} non-members challenged; meta {results[0]['meta_classifier']}; "
          f"seeds {list(seeds)}; {cpu:.0f} s CPU per seed")
    print("eps | attack | " + " | ".join(MIA_KEYS) + " | train / test accuracy of the targets")
    for i, row0 in enumerate(results[0]["rows"]):
        rows = [r["rows"][i] for r in results]
        utility = (f"{_cell([r['utility']['train_accuracy'] for r in rows])} / "
                   f"{_cell([r['utility']['test_accuracy'] for r in rows])}")
        for name in MIA_ATTACKS:
            cells = [f"{_cell([r['attacks'][name][k] for r in rows])} "
                     f"{{{np.median([r['interval'][name][k][0] for r in rows]):.3f}-"
                     f"{np.median([r['interval'][name][k][1] for r in rows]):.3f}}}" for k in MIA_KEYS]
            print(f"{row0['epsilon_target']:g} | {name} | " + " | ".join(cells) + f" | {utility}")
    print("claims (differences per seed, 95 % t-interval over seeds):")
    by_eps = {r["epsilon_target"]: i for i, r in enumerate(results[0]["rows"])}

    def rows_at(eps: float) -> list[dict[str, Any]]:
        return [r["rows"][by_eps[eps]] for r in results]

    if float("inf") in by_eps:
        rows = rows_at(float("inf"))
        for key in ("accuracy", "tpr_at_1pct_fpr"):
            diffs = [r["attacks"]["ensemble"][key] - max(r["attacks"][b][key] for b in SINGLE_SIGNAL)
                     for r in rows]
            apart = sum(r["interval"]["ensemble"][key][0]
                        > max(r["interval"][b][key][1] for b in SINGLE_SIGNAL) for r in rows)
            print(f"  eps=inf: ensemble {key} - best single-signal baseline = {_cell(diffs)}: "
                  f"{_verdict(diffs, '> 0')} (paper: accuracy 53.42 % vs 30.14 %); seeds whose intervals "
                  f"do not overlap: {apart}/{len(rows)}")
    if 200.0 in by_eps:
        rows = rows_at(200.0)
        diffs = [r["attacks"]["ensemble"]["tpr_at_1pct_fpr"]
                 - max(r["attacks"][b]["tpr_at_1pct_fpr"] for b in ("lira_offline", "lira_online"))
                 for r in rows]
        print(f"  eps=200: ensemble TPR@1%FPR - LiRA's (best of offline/online) = {_cell(diffs)}: "
              f"{_verdict(diffs, '> 0')} (paper: 30.77 % vs about 0)")
    if 10.0 in by_eps:
        rows = rows_at(10.0)
        acc = [r["attacks"]["ensemble"]["accuracy"] - 0.6 for r in rows]
        print(f"  eps=10: ensemble accuracy {_cell([r['attacks']['ensemble']['accuracy'] for r in rows])}, "
              f"AUC {_cell([r['attacks']['ensemble']['auc'] for r in rows])}; near random (accuracy < 0.6): "
              f"{_verdict(acc, '< 0')}")
    print("  the paper's figures rest on 73 challenge records (53.42 % = 39/73, 30.77 % = 4/13 members)")


# ------------------------------------------------------------------------------------------------ SRATTA
SRATTA_KEYS = ("rho_recovered", "rho_isolated", "rho_matched", "v_measure", "homogeneity", "completeness",
               "singleton_v_measure", "v_measure_gain", "kmeans_v_measure", "model_accuracy")


def bench_sratta(seeds: Sequence[int], batches: Sequence[int]) -> None:
    print(f"\n== [SRATTA] on digits (5 clients x 100, n_updates=5, t_max=20, H=1000, lr=1.0 unless stated); "
          f"seeds {list(seeds)}")
    print("setting | " + " | ".join(SRATTA_KEYS) + " | mixed components | runs warned | CPU s per run")
    mixed_total = 0
    at_32: dict[str, list[float]] = {}

    def row(label: str, **kw: Any) -> None:
        nonlocal mixed_total
        t = time.process_time()
        rs = [run_sratta(seed=s, **kw) for s in seeds]
        sec = (time.process_time() - t) / len(rs)
        mixed = sum(int(r["n_mixed_components"]) for r in rs)
        mixed_total += mixed
        warned = sum(bool(r["warnings"]) for r in rs)
        if kw.get("batch_size") == 32:
            at_32[label] = [float(r["rho_recovered"]) for r in rs]
        cells = [_cell([r[k] for r in rs]) for k in SRATTA_KEYS]
        print(f"{label} | " + " | ".join(cells) + f" | {mixed} | {warned}/{len(rs)} | {sec:.1f}", flush=True)

    for b in batches:
        row(f"IID batch={b}", batch_size=b)
    if 1 in batches:
        row("IID batch=1 lr=0.1", batch_size=1, lr=0.1)  # lr 1.0 leaves the batch-1 training at chance
    if 32 in batches:
        row("IID batch=32 H=4000", batch_size=32, hidden=4000)
    for alpha in (0.1, 1.0, 10.0):
        row(f"alpha={alpha:g} batch=4", alpha=alpha)
    row("alpha=0.1 batch=4 lr=0.3", alpha=0.1, lr=0.3)
    row("IID batch=4 censor<=1", censor_threshold=1)
    print("claims:")
    for label, values in at_32.items():
        print(f"  {label}: rho_recovered {_cell(values)} > 0.1: "
              f"{_verdict([v - 0.1 for v in values], '> 0')} (paper: > 0.1 at batch 32 on FashionMNIST)")
    print(f"  no component mixes clients (Cor. 3.6): {'holds' if mixed_total == 0 else 'fails'} "
          f"({mixed_total} mixed components over all runs)")


# -------------------------------------------------------------------------------------------------- MINE
N_SAMPLES = 40_000
Sampler = Callable[[int], tuple[np.ndarray, np.ndarray]]


def _gaussian(batch: int, dx: int, gain: float) -> tuple[Sampler, float]:
    a = gain * np.eye(dx)

    def sample(seed: int) -> tuple[np.ndarray, np.ndarray]:
        return gaussian_batch_samples(N_SAMPLES, batch, a, 1.0, np.random.default_rng([batch, seed]))

    return sample, gaussian_mi(batch, a, 1.0)


def _fedsgd(batch: int) -> Sampler:
    def sample(seed: int) -> tuple[np.ndarray, np.ndarray]:
        return fl_samples(N_SAMPLES, batch=batch, seed=seed)

    return sample


def bench_mine(seeds: Sequence[int], batches: Sequence[int], max_steps: int) -> None:
    print(f"\n== [FL-MI] MINE vs H-MINE with the paper's networks (lr 5e-5, <= {max_steps} steps, "
          f"minibatch 64, early stopping), {N_SAMPLES} joint samples; seeds {list(seeds)}")
    print("check | B | analytic | MINE | H-MINE | MINE rel.err | H-MINE rel.err | H-MINE within 10 % | "
          "|err MINE| - |err H-MINE| (nats) | H-MINE - MINE (nats) | at cap M/H | CPU s M/H")
    within: list[str] = []
    closer: list[str] = []
    cases: list[tuple[str, int, Sampler, float | None]] = []
    for b in batches:
        cases.append(("gauss d=2", b, *_gaussian(b, 2, 1.0)))
    cases.append(("gauss d=16", 8, *_gaussian(8, 16, 0.15)))
    for b in (1, 8):
        cases.append(("fedsgd logreg", b, _fedsgd(b), None))
    for label, b, sample, truth in cases:
        est: dict[str, list[float]] = {"mine": [], "hmine": []}
        cpu: dict[str, list[float]] = {"mine": [], "hmine": []}
        cap = {"mine": 0, "hmine": 0}
        for seed in seeds:
            xb, g = sample(seed)
            for kind in est:
                t = time.process_time()
                r = estimate_mi(xb, g, kind, steps=max_steps, seed=seed, **NETWORKS["paper"])
                cpu[kind].append(time.process_time() - t)
                est[kind].append(r.mi)
                cap[kind] += r.steps == max_steps and r.best_step > 0.9 * max_steps
        diff = [h - m for m, h in zip(est["mine"], est["hmine"], strict=True)]
        if truth is None:
            err_cells = ["-", "-", "-", "-"]
        else:
            rel = {k: [(v - truth) / truth for v in vals] for k, vals in est.items()}
            gap = [abs(m - truth) - abs(h - truth) for m, h in zip(est["mine"], est["hmine"], strict=True)]
            near = sum(abs(v) <= 0.1 for v in rel["hmine"])
            err_cells = [_cell(rel["mine"]), _cell(rel["hmine"]), f"{near}/{len(seeds)}", _cell(gap)]
            if 1 <= b <= 8:
                s = seed_summary(rel["hmine"])
                within.append(f"{label} B={b}: {'yes' if -0.1 <= s.low and s.high <= 0.1 else 'no'}")
            if b >= 4:
                closer.append(f"{label} B={b}: {_verdict(gap, '> 0')}")
        print(" | ".join([label, str(b), "-" if truth is None else f"{truth:.3f}", _cell(est["mine"]),
                          _cell(est["hmine"]), *err_cells, _cell(diff), f"{cap['mine']}/{cap['hmine']}",
                          f"{np.median(cpu['mine']):.0f}/{np.median(cpu['hmine']):.0f}"]), flush=True)
    print("claims:")
    print("  H-MINE within 10 % of the analytic MI (the t-interval of its relative error inside +-10 %): "
          + "; ".join(within))
    print("  H-MINE closer than MINE at B >= 4 (|err MINE| - |err H-MINE| > 0): " + "; ".join(closer))


def _int_list(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v]


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("which", nargs="*", choices=("mia", "sratta", "mine"), default=[])
    ap.add_argument("--seeds", type=_int_list, default=[0, 1, 2, 3, 4])
    ap.add_argument("--batches", type=_int_list, default=None,
                    help="batch sizes (default: 1,2,4,8 for mine; 1,4,8,16,32 for sratta)")
    ap.add_argument("--max-steps", type=int, default=12000, help="Adam steps per MI estimate at most")
    args = ap.parse_args(argv)
    t0 = time.process_time()
    for w in args.which or ["mia", "sratta", "mine"]:
        if w == "mia":
            bench_mia(args.seeds)
        elif w == "sratta":
            bench_sratta(args.seeds, args.batches or [1, 4, 8, 16, 32])
        else:
            bench_mine(args.seeds, args.batches or [1, 2, 4, 8], args.max_steps)
    print(f"\ntotal CPU {time.process_time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
