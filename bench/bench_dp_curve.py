"""Benchmark: a 201-point δ(ε) curve of SecAgg with uniform entries, n = 100, d = 100 ([SecAgg-MIA] Fig. 1).

Prints (no timed assertions):
* the median wall time over several runs of the certified upper curve at the grid interval whose
  estimated error is ≤ 1e-7 (connect-the-dots discretisation, one FFT self-composition, 201 evaluations);
* the error estimate: difference to a 4× finer grid (the method is second order, so the finer curve is
  ~16× closer to the truth), and the same pipeline on the Gaussian pair with the same μ per coordinate,
  where the exact composed curve (μ√d) is known;
* the time and width of the certified bracket (optimistic estimate included; first order, wider);
* Google's dp_accounting on the same curve, if it is installed (optional ``crossval`` extra).

Run: ``/work/venv/bin/python bench/bench_dp_curve.py [--runs 7]``. Figures measured on a shared,
loaded machine are indicative only.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from checker.crossval.gaussian import gaussian_delta, gaussian_grid, gaussian_loss_tails
from checker.crossval.secagg import secagg_curve

T = TypeVar("T")

N, D = 100, 100
EPS = np.linspace(0.0, 10.0, 201)


def timed(fn: Callable[[], T], runs: int) -> tuple[float, T]:
    """Median wall time of ``runs >= 1`` calls of ``fn`` and the result of the last."""
    times = []
    for _ in range(max(runs, 1)):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--interval", type=float, default=2e-4)
    args = ap.parse_args()
    h = args.interval

    t_up, c = timed(lambda: secagg_curve("uniform", N, D, EPS, interval=h, optimistic=False), args.runs)
    ref = secagg_curve("uniform", N, D, EPS, interval=h / 4, optimistic=False)
    est_err = float(np.max(c.delta - ref.delta))
    print(f"SecAgg uniform n={N} d={D}, {len(EPS)} eps in [0, 10], grid h={h:g}")
    print(f"  upper curve (certified):      median {t_up:.3f} s over {args.runs} runs")
    print(f"  estimated error vs h/4 grid:  {est_err:.2e}  (upper - finer upper; both are upper bounds)")

    mu1 = math.sqrt(12.0 / N)
    exact = gaussian_delta(mu1 * math.sqrt(D), EPS)

    def gauss() -> np.ndarray:
        t = gaussian_loss_tails(mu1, gaussian_grid(mu1, h))
        return t.to_grid(h, True).self_compose(D).delta(EPS)

    t_g, g = timed(gauss, args.runs)
    print(
        f"  same pipeline, Gaussian pair (exact known): median {t_g:.3f} s, max error "
        f"{float(np.max(g - exact)):.2e}, min {float(np.min(g - exact)):.2e}"
    )

    t_br, cb = timed(lambda: secagg_curve("uniform", N, D, EPS, interval=h), max(3, args.runs // 2))
    print(
        f"  certified bracket (upper + optimistic lower): median {t_br:.3f} s, width {cb.bracket.error:.2e}"
    )

    try:
        from dp_accounting.pld import privacy_loss_distribution  # the optional crossval extra
    except ImportError:
        print("  dp_accounting: not installed (optional extra 'crossval'); comparison skipped")
        return
    # dp_accounting has no Irwin-Hall mechanism; compare on the Gaussian pair with the same μ per
    # coordinate, where the exact composed curve is known (apples to apples for discretise + compose
    # + 201 evaluations).
    for hh in (h, 1e-4, 5e-5):

        def dpacc(hh: float = hh) -> np.ndarray:
            p = privacy_loss_distribution.from_gaussian_mechanism(1.0 / mu1, value_discretization_interval=hh)
            c = p.self_compose(D)
            return np.asarray(c.get_delta_for_epsilon(EPS.tolist()), dtype=float)  # vectorised call

        t_d, dd = timed(dpacc, max(3, args.runs // 2))
        err = float(np.max(np.abs(dd - exact)))
        print(f"  dp_accounting Gaussian pair, h={hh:g}: median {t_d:.3f} s, max error {err:.2e}")
    t_o, g2 = timed(gauss, args.runs)
    err = float(np.max(g2 - exact))
    print(f"  flcheck Gaussian pair,       h={h:g}: median {t_o:.3f} s, max error {err:.2e}")


if __name__ == "__main__":
    main()
