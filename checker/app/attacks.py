"""Attack experiments: simulated federated training (``flmodel.training``) + an attack engine
(``checker.crossval.sratta|mia|mine``), with the formal ε of the training next to the measured success.

The application layer (it may import both flmodel and checker). Entry point for other commands (e.g. the
scenario ``check`` command): :func:`run_attack` ``(kind, **options) -> dict`` with ``kind`` in
``"sratta" | "mia" | "leakage"``; the returned dict is JSON-serialisable and names its metrics
``rho_recovered, rho_matched, rho_component, v_measure`` (SRATTA), ``accuracy, auc, tpr_at_1pct_fpr,
tpr_at_0_1pct_fpr`` (MIA, per ε and attack) and ``mi`` (per estimator, leakage). Every result carries
``epsilon`` (the formal ε at ``delta`` of the simulated training, ``inf`` without DP noise), computed
from the training's GDP parameter with ``checker.crossval.gaussian``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from checker.crossval import mia as mia_engine
from checker.crossval import sratta as sratta_engine
from checker.crossval.gaussian import gaussian_epsilon, gaussian_mu
from checker.errors import InputError
from flmodel.training import (
    TrainingConfig,
    accuracy,
    digits_dataset,
    predict_proba,
    sample_uses_bound,
    split_clients,
    train,
)

__all__ = [
    "ATTACKS",
    "epsilon_of_mu",
    "headline",
    "mu_for_epsilon",
    "run_attack",
    "run_leakage",
    "run_mia",
    "run_sratta",
]


def epsilon_of_mu(mu: float, delta: float) -> float:
    """Formal ε at ``delta`` of a ``μ``-GDP mechanism (closed form of ``checker.crossval.gaussian``)."""
    if math.isinf(mu):
        return math.inf
    return float(gaussian_epsilon(mu, delta))


def mu_for_epsilon(eps: float, delta: float) -> float:
    """Largest ``μ`` whose Gaussian curve satisfies ``δ_G(ε) ≤ delta`` (:func:`gaussian_mu`). ``eps = inf``
    gives ``inf``."""
    return gaussian_mu(eps, delta)


# ------------------------------------------------------------------------------------------------ SRATTA
def run_sratta(
    n_clients: int = 5,
    per_client: int = 100,
    alpha: float | None = None,
    hidden: int = 1000,
    lr: float = 1.0,
    batch_size: int = 4,
    n_updates: int = 5,
    rounds: int = 20,
    n_max: int = 20,
    censor_threshold: int = 0,
    noise_multiplier: float = 0.0,
    clip: float | None = None,
    delta: float = 1e-5,
    seed: int = 0,
) -> dict[str, Any]:
    """Train an MLP with FedAvg + secure aggregation on the digits data split over ``n_clients``
    (``alpha=None`` IID, else Dirichlet(α) labels), then run SRATTA on the observer's view only."""
    x, y = digits_dataset()
    rng = np.random.default_rng(seed)
    split = split_clients(y, n_clients, per_client, alpha, rng)
    cfg = TrainingConfig(
        model="mlp", hidden=hidden, algorithm="fedavg", rounds=rounds, n_updates=n_updates,
        batch_size=batch_size, lr=lr, secure_aggregation=True, clip=clip,
        noise_multiplier=noise_multiplier, censor_threshold=censor_threshold, seed=seed,
    )
    t0 = time.perf_counter()
    run = train(cfg, x, y, split, n_classes=10)
    t1 = time.perf_counter()
    view = run.observer_view()
    history = np.stack([p.first_layer for p in view["global_params"]])  # type: ignore[attr-defined]
    prior = sratta_engine.DiscretePrior(0, 16, 1.0 / 16.0)
    res = sratta_engine.sratta(history, prior, n_max=n_max, n_clients=n_clients, seed=seed)
    metrics = sratta_engine.evaluate(res, [x[idx] for idx in split.clients], prior)
    t2 = time.perf_counter()
    test = split.rest
    return {
        "attack": "sratta",
        **metrics.as_dict(),
        "n_sets_reconstructed": len(res.sets),
        "n_sets_size_ge_2": int(sum(len(s.members) >= 2 for s in res.sets)),
        "censored_neuron_updates": run.censored,
        "model_accuracy": accuracy(run.global_params[-1], x[test], y[test]),
        "epsilon": epsilon_of_mu(run.gdp_mu(), delta),
        "delta": delta,
        "config": {
            "n_clients": n_clients, "per_client": per_client, "alpha": alpha, "hidden": hidden, "lr": lr,
            "batch_size": batch_size, "n_updates": n_updates, "rounds": rounds, "n_max": n_max,
            "censor_threshold": censor_threshold, "noise_multiplier": noise_multiplier, "clip": clip,
            "seed": seed,
        },
        "seconds": {"training": t1 - t0, "attack": t2 - t1},
    }


# --------------------------------------------------------------------------------------------------- MIA
def run_mia(
    epsilons: Sequence[float] = (math.inf, 200.0, 10.0),
    n_clients: int = 4,
    per_client: int = 40,
    rounds: int = 5,
    local_epochs: int = 20,
    hidden: int = 128,
    lr: float = 0.3,
    batch_size: int = 8,
    clip: float = 1.0,
    delta: float = 1e-5,
    seed: int = 0,
) -> dict[str, Any]:
    """The seed-003 comparison on digits: for each ε, DP-SGD FedAvg training (σ calibrated so that the
    trained models are ``μ``-GDP with ``ε(μ, δ) = ε``; no DP when ε = inf), then the ensemble attack
    (with and without domain adaptation), the loss threshold and the offline LiRA-style baseline against
    every non-colluding client's model. Client 0 colludes. Scores of all target clients are pooled."""
    if n_clients < 2:
        raise ValueError("the MIA experiment needs a colluding client and at least one target client")
    x, y = digits_dataset()
    rng = np.random.default_rng(seed)
    split = split_clients(y, n_clients, per_client, None, rng)
    rest = rng.permutation(split.rest)
    need = per_client * (1 + 2 * (n_clients - 1))
    if len(rest) < need + 50:
        raise ValueError(f"not enough digits for {n_clients} clients x {per_client}: lower per_client")
    col_non = rest[:per_client]
    ext = [rest[per_client * (1 + 2 * j) : per_client * (2 + 2 * j)] for j in range(n_clients - 1)]
    chal_non = [rest[per_client * (2 + 2 * j) : per_client * (3 + 2 * j)] for j in range(n_clients - 1)]
    test = rest[need:]
    rows = []
    for eps in epsilons:
        cfg = TrainingConfig(
            model="mlp", hidden=hidden, algorithm="fedavg", rounds=rounds, local_epochs=local_epochs,
            batch_size=batch_size, lr=lr, seed=seed,
        )
        if not math.isinf(eps):
            mu = mu_for_epsilon(eps, delta)
            sigma = math.sqrt(sample_uses_bound(cfg, per_client)) / mu
            cfg = TrainingConfig(**{**cfg.__dict__, "clip": clip, "noise_multiplier": sigma})
        run = train(cfg, x, y, split, n_classes=10)
        mu_run = run.gdp_mu()
        models = run.final_client_params
        col_idx = np.concatenate([split.clients[0], col_non])
        col_member = np.r_[np.ones(len(split.clients[0]), bool), np.zeros(len(col_non), bool)]
        col_p = predict_proba(models[0], x[col_idx])
        ens = mia_engine.EnsembleMIA(seed=seed).fit(col_p, y[col_idx], col_member)
        thr_loss = mia_engine.best_threshold(mia_engine.loss_scores(col_p, y[col_idx]), col_member)
        col_lira = mia_engine.lira_offline_scores(col_p, y[col_idx], col_p[~col_member], y[col_non])
        thr_lira = mia_engine.best_threshold(col_lira, col_member)
        names = ("ensemble", "ensemble_no_adapt", "loss", "lira")
        pooled: dict[str, list[np.ndarray]] = {k: [] for k in names}
        members = []
        for j in range(1, n_clients):
            chal = np.concatenate([split.clients[j], chal_non[j - 1]])
            memb = np.r_[np.ones(len(split.clients[j]), bool), np.zeros(len(chal_non[j - 1]), bool)]
            p = predict_proba(models[j], x[chal])
            pe = predict_proba(models[j], x[ext[j - 1]])
            s_ens = ens.scores(p, y[chal], external=(pe, y[ext[j - 1]]))
            s_noa = ens.scores(p, y[chal])
            pooled["ensemble"].append(np.c_[s_ens, np.full(len(chal), ens.threshold_)])
            pooled["ensemble_no_adapt"].append(np.c_[s_noa, np.full(len(chal), ens.threshold_)])
            pooled["loss"].append(np.c_[mia_engine.loss_scores(p, y[chal]), np.full(len(chal), thr_loss)])
            s_lira = mia_engine.lira_offline_scores(p, y[chal], pe, y[ext[j - 1]])
            pooled["lira"].append(np.c_[s_lira, np.full(len(chal), thr_lira)])
            members.append(memb)
        member = np.concatenate(members)
        attacks: dict[str, dict[str, float]] = {}
        dp_checks: dict[str, Any] = {}
        for name, parts in pooled.items():
            arr = np.concatenate(parts)
            # the pooled accuracy uses each record's own threshold: shift scores by it
            m = mia_engine.attack_metrics(arr[:, 0] - arr[:, 1], member, 0.0)
            attacks[name] = m.as_dict()
            checks = mia_engine.dp_consistency(arr[:, 0], member, mu_run)
            dp_checks[name] = {
                "consistent": all(c.consistent for c in checks),
                "points": [c.__dict__ | {"consistent": c.consistent} for c in checks],
            }
        rows.append({
            "epsilon_target": eps,
            "epsilon": epsilon_of_mu(mu_run, delta),
            "mu": mu_run,
            "noise_multiplier": cfg.noise_multiplier,
            "model_accuracy": float(np.mean([accuracy(m, x[test], y[test]) for m in models])),
            "global_accuracy": accuracy(run.global_params[-1], x[test], y[test]),
            "attacks": attacks,
            "dp_audit": dp_checks,
        })
    return {
        "attack": "mia",
        "delta": delta,
        "rows": rows,
        "config": {
            "n_clients": n_clients, "per_client": per_client, "rounds": rounds, "local_epochs": local_epochs,
            "hidden": hidden, "lr": lr, "batch_size": batch_size, "clip": clip, "seed": seed,
            "n_challenge": len(member),
        },
    }


def run_leakage(**options: Any) -> dict[str, Any]:
    """Mutual-information leakage I(X_B; G) (seed 001); see :mod:`checker.crossval.mine`."""
    from checker.app.leakage import run_leakage as _run

    return _run(**options)


ATTACKS: dict[str, Callable[..., dict[str, Any]]] = {
    "sratta": run_sratta,
    "mia": run_mia,
    "leakage": run_leakage,
}


def run_attack(kind: str, **options: Any) -> dict[str, Any]:
    """Run the attack ``kind`` (``sratta``, ``mia`` or ``leakage``) with keyword ``options`` (the
    parameters of :func:`run_sratta`, :func:`run_mia`, :func:`run_leakage`); unknown kinds or options
    raise :class:`checker.errors.InputError` naming what was expected."""
    if kind not in ATTACKS:
        raise InputError(f"unknown attack {kind!r}", expected=" | ".join(sorted(ATTACKS)))
    try:
        return ATTACKS[kind](**options)
    except TypeError as exc:
        raise InputError(f"bad option for attack {kind!r}: {exc}") from exc
    except InputError:
        raise
    except ValueError as exc:  # a parameter out of range (e.g. alpha <= 0, too many samples)
        raise InputError(f"attack {kind}: {exc}") from exc


def headline(result: dict[str, Any]) -> dict[str, Any]:
    """The few numbers to show next to a formal verdict: SRATTA's four metrics and ε; for MIA, per target
    ε, the formal ε and the strongest attack's AUC and TPR at 1 % FPR (and whether the DP audit passed);
    for leakage, the MI estimates along the trend."""
    kind = result.get("attack")
    if kind == "sratta":
        keys = ("rho_recovered", "rho_matched", "rho_component", "v_measure", "kmeans_v_measure", "epsilon")
        return {k: result[k] for k in keys}
    if kind == "mia":
        rows = []
        for row in result["rows"]:
            best = max(row["attacks"], key=lambda n: row["attacks"][n]["auc"])
            rows.append({
                "epsilon_target": row["epsilon_target"], "epsilon": row["epsilon"], "best_attack": best,
                "auc": row["attacks"][best]["auc"],
                "tpr_at_1pct_fpr": row["attacks"][best]["tpr_at_1pct_fpr"],
                "dp_audit_consistent": all(a["consistent"] for a in row["dp_audit"].values()),
            })
        return {"rows": rows}
    if kind == "leakage":
        return {"trend": result["trend"], "values": result["values"], "mi": result["mi"]}
    raise ValueError(f"not an attack result: {kind!r}")
