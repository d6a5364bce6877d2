"""Leakage experiments of [FL-MI]: ``I(X_B; G)`` of a FedSGD client, estimated by MINE, H-MINE and the
covariance sum, first on Gaussian cases with known MI, then on logistic regression over a synthetic
tabular task (``flmodel.training.tabular_dataset``) with the trends of [FL-MI] Sec. 5: batch size,
gradient noise, training step, class imbalance.

One MI sample is a fresh IID batch ``X_B`` (items ``(x, y)``, ``dx = d + 1``) and the client message
``G = ∇_θ mean ℓ(θ_t; X_B) + σ_g ε``, ``ε ~ N(0, I)``. The noise keeps ``I(X_B; G)`` finite (without it
``G`` is a deterministic function of ``X_B`` and the MI of continuous variables is infinite).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from checker.crossval import mine
from flmodel.training import (
    ClientSplit,
    Params,
    TrainingConfig,
    batch_gradient,
    init_params,
    tabular_dataset,
    train,
)

__all__ = ["COVARIANCE_NOTE", "NETWORKS", "fl_samples", "run_leakage"]


def _model_at_step(step: int, d: int, positive_rate: float, lr: float, batch: int, seed: int) -> Params:
    rng = np.random.default_rng(seed)
    if step == 0:
        return init_params("logreg", d, 2, 1, rng)
    x, y = tabular_dataset(2000, d, positive_rate, rng)
    split = ClientSplit((np.arange(len(y)),), np.zeros(0, dtype=np.int64))
    cfg = TrainingConfig(model="logreg", algorithm="fedsgd", rounds=step, batch_size=batch, lr=lr, seed=seed)
    return train(cfg, x, y, split, n_classes=2).global_params[-1]


def fl_samples(
    n: int, batch: int, d: int = 4, noise: float = 0.1, step: int = 0, positive_rate: float = 0.5,
    lr: float = 0.5, seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` joint samples ``(X_B, G)`` of a FedSGD logistic-regression client at training step ``step``."""
    theta = _model_at_step(step, d, positive_rate, lr, max(batch, 8), seed)
    rng = np.random.default_rng(seed + 1)
    x, y = tabular_dataset(n * batch, d, positive_rate, rng)
    xb = np.concatenate([x, y[:, None].astype(float)], axis=1).reshape(n, batch, d + 1)
    g = np.stack([
        batch_gradient(theta, x[i * batch : (i + 1) * batch], y[i * batch : (i + 1) * batch])
        for i in range(n)
    ])
    g = g[:, : d + 1]  # softmax rows of a 2-class model are opposite: keep the first row (w_0, b_0)
    return xb, g + noise * rng.standard_normal(g.shape)


#: ``networks`` of :func:`run_leakage`: "small" (seconds per estimate, the default) or "paper"
#: ([FL-MI]'s BlockModel 200-200-5, MixModel 500-1, Adam lr 5e-5; MINE 200-200-1 with the same budget;
#: minibatches of 64 joint + 64 marginal pairs; early stopping when the DV bound on a held-out
#: validation split, evaluated every 200 steps, has not improved for 20 evaluations).
NETWORKS: dict[str, dict[str, Any]] = {
    "small": {"lr": 1e-3},
    "paper": {**mine.PAPER_NETWORKS, "batch": 64, "patience": 20, "eval_every": 200, "holdout": 0.3,
              "float32": True},
}

COVARIANCE_NOTE = (
    "covariance_baseline is [FL-MI]'s correlation baseline sum(cov(vec(X_B), G)) in the data's raw units: "
    "not a mutual information, not in nats, and negative whenever the summed cross-covariances are"
)


def _estimates(
    xb: np.ndarray, g: np.ndarray, steps: int, seed: int, kinds: Sequence[str], networks: str
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in kinds:
        r = mine.estimate_mi(xb, g, k, steps=steps, seed=seed, **NETWORKS[networks])
        out[k] = r.mi
        out[f"{k}_raw"] = r.raw
        out[f"{k}_steps"] = r.steps
    out["covariance_sum"] = out["covariance_baseline"] = mine.covariance_sum(xb, g)
    return out


def run_leakage(
    trend: str = "batch",
    values: Sequence[float] | None = None,
    n_samples: int = 4000,
    steps: int = 500,
    noise: float = 0.1,
    d: int = 4,
    batch: int = 4,
    step: int = 0,
    positive_rate: float = 0.5,
    gaussian_batches: Sequence[int] = (1, 4),
    estimators: Sequence[str] = ("mine", "hmine"),
    networks: str = "small",
    seed: int = 0,
) -> dict[str, Any]:
    """Gaussian validation at ``gaussian_batches`` (analytic MI next to the estimates), then the FL trend
    ``trend`` ∈ ``batch | noise | step | imbalance`` over ``values`` (other parameters fixed). The
    result's ``mi`` holds, per estimator, the list of MI estimates (nats, ≥ 0) along the trend;
    ``covariance_baseline`` the covariance sum (not an MI); ``clamped`` per estimator the points whose
    held-out DV bound was negative and is reported as 0. ``networks`` selects :data:`NETWORKS`."""
    defaults: dict[str, Sequence[float]] = {
        "batch": (1, 4, 8), "noise": (0.03, 0.1, 0.3), "step": (0, 20, 200), "imbalance": (0.5, 0.2, 0.05),
    }
    if trend not in defaults:
        raise ValueError(f"trend must be one of {sorted(defaults)}")
    if networks not in NETWORKS:
        raise ValueError(f"networks must be one of {sorted(NETWORKS)}")
    vals = list(values) if values is not None else list(defaults[trend])
    t0 = time.perf_counter()
    c0 = time.process_time()
    gauss = []
    a = np.eye(2)
    for b in gaussian_batches:
        xb, g = mine.gaussian_batch_samples(n_samples, int(b), a, 1.0, np.random.default_rng(seed))
        gauss.append({"batch": int(b), "analytic": mine.gaussian_mi(int(b), a, 1.0),
                      **_estimates(xb, g, steps, seed, estimators, networks)})
    points = []
    for v in vals:
        kw: dict[str, Any] = {"batch": batch, "noise": noise, "step": step, "positive_rate": positive_rate}
        key = {"batch": "batch", "noise": "noise", "step": "step", "imbalance": "positive_rate"}[trend]
        kw[key] = int(v) if trend in ("batch", "step") else float(v)
        xb, g = fl_samples(n_samples, d=d, seed=seed, **kw)
        points.append({trend: v, **_estimates(xb, g, steps, seed, estimators, networks)})
    clamped = {k: [p[trend] for p in points if p[f"{k}_raw"] < 0] for k in estimators}
    notes = [COVARIANCE_NOTE]
    for k, where in clamped.items():
        if where:
            notes.append(f"{k}: the held-out DV bound was negative at {trend} = {where} (estimation noise "
                         "or an over-fitted critic); reported as 0 in mi, the raw value is in points")
    return {
        "attack": "leakage",
        "trend": trend,
        "values": vals,
        "mi": {k: [p[k] for p in points] for k in estimators},
        "covariance_baseline": [p["covariance_baseline"] for p in points],
        "clamped": clamped,
        "notes": notes,
        "points": points,
        "gaussian_validation": gauss,
        "config": {"n_samples": n_samples, "steps": steps, "noise": noise, "d": d, "batch": batch,
                   "step": step, "positive_rate": positive_rate, "seed": seed, "networks": networks,
                   **{("minibatch" if k == "batch" else k): list(v) if isinstance(v, tuple) else v
                      for k, v in NETWORKS[networks].items()}},
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
    }
