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
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]  # threadpoolctl ships no type information

from checker.app.leakage import run_leakage
from checker.crossval import mia as mia_engine
from checker.crossval import mia_lira
from checker.crossval import sratta as sratta_engine
from checker.crossval.gaussian import gaussian_epsilon, gaussian_mu
from checker.crossval.genomics import GenomicsConfig, GenomicsData, generate
from checker.crossval.mia_lira import logit_confidence
from checker.crossval.mia_metrics import best_threshold, dp_consistency, metrics_with_intervals, seed_summary
from checker.errors import InputError
from flmodel.training import (
    ClientSplit,
    TrainingConfig,
    accuracy,
    digits_dataset,
    predict_proba,
    sample_uses_bound,
    split_clients,
    train,
)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

__all__ = [
    "ATTACKS",
    "MIA_ATTACKS",
    "MIA_FULL",
    "epsilon_of_mu",
    "headline",
    "mu_for_epsilon",
    "run_attack",
    "run_leakage",
    "run_mia",
    "run_sratta",
    "run_sratta_seeds",
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
    model_accuracy = accuracy(run.global_params[-1], x[test], y[test])
    return {
        "attack": "sratta",
        **metrics.as_dict(),
        "rho_isolated": _isolated_share(run.activation),
        "v_measure_gain": metrics.v_measure - metrics.singleton_v_measure,
        "n_sets_reconstructed": len(res.sets),
        "n_sets_size_ge_2": int(sum(len(s.members) >= 2 for s in res.sets)),
        "censored_neuron_updates": run.censored,
        "model_accuracy": model_accuracy,
        "warnings": _sratta_warnings(history, model_accuracy, 10, lr, metrics),
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


#: Seeds of ``flcheck attack sratta --full``: [SRATTA]'s figures average several trainings.
SRATTA_FULL_SEEDS: tuple[int, ...] = (0, 1, 2, 3, 4)

#: The figures of a SRATTA run that :func:`run_sratta_seeds` summarises over seeds.
SRATTA_FIGURES: tuple[str, ...] = (
    "rho_recovered", "rho_isolated", "rho_matched", "rho_component", "v_measure", "homogeneity",
    "completeness", "singleton_v_measure", "v_measure_gain", "kmeans_v_measure", "model_accuracy",
)


def run_sratta_seeds(seeds: Sequence[int], **options: Any) -> dict[str, Any]:
    """:func:`run_sratta` once per seed: the first seed's result, plus ``runs`` (every seed's result),
    ``summary`` (per figure of :data:`SRATTA_FIGURES`: median and the 95 % Student-t interval of the mean
    over the seeds, ``checker.crossval.mia_metrics.seed_summary``), ``n_mixed_components_total`` and the
    union of the runs' warnings, each prefixed by its seed."""
    if not seeds:
        raise ValueError("at least one seed is needed")
    runs = [run_sratta(seed=int(s), **options) for s in seeds]
    summary = {}
    for key in SRATTA_FIGURES:
        stats = seed_summary([float(r[key]) for r in runs])
        summary[key] = {"median": stats.median, "low": stats.low, "high": stats.high}
    return {
        **runs[0],
        "seeds": [int(s) for s in seeds],
        "runs": runs,
        "summary": summary,
        "n_mixed_components_total": sum(int(r["n_mixed_components"]) for r in runs),
        "warnings": [f"seed {r['config']['seed']}: {w}" for r in runs for w in r["warnings"]],
    }


def _isolated_share(activation: list[list[NDArray[np.bool_]]]) -> float:
    """Share of the clients' samples that are, in some round ``t`` and for some neuron ``h``, alone in the
    round-level activation set ``A^h_t`` (``activation[t−1][k]``: client ``k``'s ``H × n_k`` membership
    matrix). By [SRATTA] Prop. 3.3 Step 1 recovers these samples (their ratio ``ΔW/Δb`` is the sample),
    so this is the share the training leaves to the attack; ``rho_recovered`` exceeds it only by samples
    whose co-activated samples contributed an exactly zero gradient (a saturated model)."""
    isolated = [np.zeros(a.shape[1], dtype=bool) for a in activation[0]]
    for round_active in activation:
        alone = sum(a.sum(axis=1) for a in round_active) == 1
        for k, a in enumerate(round_active):
            isolated[k] |= a[alone].any(axis=0)
    total = sum(len(i) for i in isolated)
    return float(sum(int(i.sum()) for i in isolated) / total) if total else 0.0


def _sratta_warnings(
    history: FloatArray, model_accuracy: float, n_classes: int, lr: float,
    metrics: sratta_engine.SrattaMetrics,
) -> list[str]:
    """What makes a SRATTA run's figures misleading: a training that diverged or never left chance
    (test accuracy below 1.5× chance, or non-finite weights: an attack on a model nobody would deploy),
    and a V-measure computed on a small recovered share (the V-measure only scores the recovered
    samples, so recovering little can still give V close to 1)."""
    out = []
    if not np.all(np.isfinite(history)):
        out.append(f"training diverged: non-finite first-layer weights (lr={lr:g})")
    elif model_accuracy < 1.5 / n_classes:
        out.append(f"the trained model is at chance (test accuracy {model_accuracy:.3f}, chance "
                   f"{1 / n_classes:.3f}): training did not converge at lr={lr:g}; the attack figures "
                   "describe a model nobody would deploy")
    if metrics.rho_recovered < 0.1 and metrics.v_measure > 0.5:
        out.append(f"v_measure {metrics.v_measure:.3f} scores only the {metrics.rho_recovered:.1%} of "
                   "samples recovered; read it with rho_recovered and v_measure_gain")
    return out


# --------------------------------------------------------------------------------------------------- MIA
#: The paper-scale setting of ``flcheck attack mia --full`` (options of :func:`run_mia`); still far from
#: [NIST-MIA]'s 125,767 features and 1-D CNN.
MIA_FULL: dict[str, Any] = {
    "n_snps": 5000, "n_clients": 5, "per_client": 300, "challenge_nonmembers": 2000, "hidden": 128,
    "rounds": 5, "local_epochs": 10, "shadow_epochs": 4,
}

MIA_ATTACKS: tuple[str, ...] = (
    "ensemble", "ensemble_no_adapt", "loss", "lira", "lira_offline", "lira_online",
)


@dataclass(frozen=True)
class _MIAData:
    """Records of the MIA experiment, as indices into ``data.x``: per client its members, its external
    non-members, its challenge non-members (the colluding client's are its known non-members) and a
    test set for the utility."""

    data: GenomicsData
    members: list[IntArray]
    external: list[IntArray]
    nonmembers: list[IntArray]
    test: list[IntArray]


def _mia_data(
    genomics: GenomicsConfig, n_clients: int, per_client: int, challenge_nonmembers: int, n_test: int,
    seed: int,
) -> _MIAData:
    per_target = math.ceil(challenge_nonmembers / (n_clients - 1))
    parts = [(per_client, per_client, per_client if k == 0 else per_target, n_test) for k in range(n_clients)]
    data = generate(genomics, [sum(p) for p in parts], seed)
    members, external, nonmembers, test = [], [], [], []
    start = 0
    for sizes in parts:
        cuts = start + np.cumsum((0, *sizes))
        members.append(np.arange(cuts[0], cuts[1]))
        external.append(np.arange(cuts[1], cuts[2]))
        nonmembers.append(np.arange(cuts[2], cuts[3]))
        test.append(np.arange(cuts[3], cuts[4]))
        start = int(cuts[4])
    return _MIAData(data, members, external, nonmembers, test)


def _shadow_signals(
    cfg: TrainingConfig, data: GenomicsData, pool: IntArray, per_client: int, epochs: int, n_classes: int,
    seed: int,
) -> tuple[FloatArray, BoolArray]:
    """Shadow models of [LiRA] trained like one target client: each epoch splits ``pool`` at random into
    chunks of about ``per_client`` records and trains one model per chunk, so every record is IN exactly
    ``epochs`` shadows. Returns the shadows' signals ``φ`` on the pool (``M × n``) and the IN mask."""
    rng = np.random.default_rng([seed, 1])
    signals, inside = [], []
    for _ in range(epochs):
        chunks = np.array_split(rng.permutation(len(pool)), max(len(pool) // per_client, 2))
        for chunk in chunks:
            shadow_cfg = replace(cfg, seed=int(rng.integers(2**31)))
            split = ClientSplit((pool[np.sort(chunk)],), np.zeros(0, np.int64))
            model = train(shadow_cfg, data.x, data.y, split, n_classes=n_classes).final_client_params[0]
            signals.append(logit_confidence(predict_proba(model, data.x[pool]), data.y[pool]))
            mask = np.zeros(len(pool), bool)
            mask[chunk] = True
            inside.append(mask)
    return np.stack(signals), np.stack(inside)


def run_mia(
    epsilons: Sequence[float] = (math.inf, 200.0, 10.0),
    n_clients: int = 4,
    per_client: int = 200,
    n_snps: int = 2000,
    challenge_nonmembers: int = 1050,
    n_test: int = 200,
    rounds: int = 3,
    local_epochs: int = 5,
    hidden: int = 32,
    lr: float = 0.3,
    batch_size: int = 32,
    clip: float = 1.0,
    delta: float = 1e-5,
    shadow_epochs: int = 1,
    meta: str = mia_engine.META_CLASSIFIERS[0],
    n_boot: int = 200,
    seed: int = 0,
) -> dict[str, Any]:
    """[NIST-MIA]'s comparison on the generated genomics data (:mod:`checker.crossval.genomics`, one
    population per client, ``n_snps`` SNPs, 3 phenotype classes): for each ε, an MLP per client trained
    by FedAvg, with DP-SGD when ε is finite (σ calibrated so that the released models are ``μ``-GDP with
    ``ε(μ, δ) = ε``); then against every non-colluding client's model the ensemble (fine-tuned on the
    client's external non-members, and without adaptation), the loss threshold, the shadow-free LiRA-style
    signal and LiRA offline / online with shadow models. Client 0 colludes; thresholds are chosen on its
    labelled records; scores of all target clients are pooled into one challenge set of
    ``(n_clients − 1) · per_client`` members and at least ``challenge_nonmembers`` non-members."""
    if n_clients < 2:
        raise ValueError("the MIA experiment needs a colluding client and at least one target client")
    if per_client < batch_size:
        raise ValueError(f"per_client ({per_client}) must be at least batch_size ({batch_size})")
    genomics = GenomicsConfig(n_snps=n_snps, n_classes=3, n_causal=5, heritability=0.9)
    n_classes = genomics.n_classes
    with threadpool_limits(1):  # small matrices: BLAS threads only add CPU time on a shared machine
        setup = _mia_data(genomics, n_clients, per_client, challenge_nonmembers, n_test, seed)
        rows = [
            _mia_row(setup, eps, n_classes, per_client, rounds, local_epochs, hidden, lr, batch_size, clip,
                     delta, shadow_epochs, meta, n_boot, seed)
            for eps in epsilons
        ]
    n_members = (n_clients - 1) * per_client
    n_non = sum(len(setup.nonmembers[j]) for j in range(1, n_clients))
    return {
        "attack": "mia",
        "delta": delta,
        "meta_classifier": meta,
        "rows": rows,
        "config": {
            "data": "generated genomics (checker.crossval.genomics)", "n_snps": n_snps,
            "n_classes": n_classes, "n_causal": genomics.n_causal, "heritability": genomics.heritability,
            "recombination": genomics.recombination, "fst": genomics.fst,
            "n_clients": n_clients, "per_client": per_client, "rounds": rounds, "local_epochs": local_epochs,
            "hidden": hidden, "lr": lr, "batch_size": batch_size, "clip": clip, "seed": seed,
            "shadow_epochs": shadow_epochs, "n_boot": n_boot,
            "n_challenge": n_members + n_non, "n_challenge_members": n_members,
            "n_challenge_nonmembers": n_non,
        },
    }


def _mia_row(
    setup: _MIAData, eps: float, n_classes: int, per_client: int, rounds: int, local_epochs: int, hidden: int,
    lr: float, batch_size: int, clip: float, delta: float, shadow_epochs: int, meta: str, n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """One ε of :func:`run_mia`: training, the attacks, their figures with intervals, the DP audit."""
    data, x, y = setup.data, setup.data.x, setup.data.y
    n_clients = len(setup.members)
    cfg = TrainingConfig(
        model="mlp", hidden=hidden, algorithm="fedavg", rounds=rounds, local_epochs=local_epochs,
        batch_size=batch_size, lr=lr, seed=seed,
    )
    if not math.isinf(eps):
        mu = mu_for_epsilon(eps, delta)
        cfg = replace(cfg, clip=clip, noise_multiplier=math.sqrt(sample_uses_bound(cfg, per_client)) / mu)
    split = ClientSplit(tuple(setup.members), np.concatenate(setup.test))
    run = train(cfg, x, y, split, n_classes=n_classes)
    mu_run = run.gdp_mu()
    models = run.final_client_params
    # challenge records of every client (client 0: its labelled members and non-members)
    records = [np.concatenate([setup.members[k], setup.nonmembers[k]]) for k in range(n_clients)]
    labels = [np.r_[np.ones(len(setup.members[k]), bool), np.zeros(len(setup.nonmembers[k]), bool)]
              for k in range(n_clients)]
    pool = np.concatenate(records)
    shadow_phi, shadow_in = _shadow_signals(cfg, data, pool, per_client, shadow_epochs, n_classes, seed)
    offsets = np.cumsum([0, *(len(r) for r in records)])
    proba = [predict_proba(models[k], x[records[k]]) for k in range(n_clients)]
    scores: dict[str, list[FloatArray]] = {name: [] for name in MIA_ATTACKS}
    thresholds: dict[str, list[float]] = {name: [] for name in MIA_ATTACKS}

    def lira(k: int, online: bool) -> FloatArray:
        cols = slice(offsets[k], offsets[k + 1])
        phi = logit_confidence(proba[k], y[records[k]])
        return mia_lira.lira_scores(phi, shadow_phi[:, cols], shadow_in[:, cols], online)

    col_p, col_y, col_member = proba[0], y[records[0]], labels[0]
    ens = mia_engine.EnsembleMIA(seed=seed, meta=meta).fit(col_p, col_y, col_member)
    col_threshold = {
        "loss": best_threshold(mia_lira.loss_scores(col_p, col_y), col_member),
        "lira": best_threshold(
            mia_lira.lira_nonmember_scores(col_p, col_y, col_p[~col_member], col_y[~col_member]), col_member
        ),
        "lira_offline": best_threshold(lira(0, False), col_member),
        "lira_online": best_threshold(lira(0, True), col_member),
    }
    for k in range(1, n_clients):
        p, lab = proba[k], y[records[k]]
        external = (predict_proba(models[k], x[setup.external[k]]), y[setup.external[k]])
        adapted = ens.adapted(external)
        attack_scores = {
            "ensemble": (adapted.scores(p, lab), adapted.threshold),
            "ensemble_no_adapt": (ens.scores(p, lab), ens.threshold_),
            "loss": (mia_lira.loss_scores(p, lab), col_threshold["loss"]),
            "lira": (mia_lira.lira_nonmember_scores(p, lab, *external), col_threshold["lira"]),
            "lira_offline": (lira(k, False), col_threshold["lira_offline"]),
            "lira_online": (lira(k, True), col_threshold["lira_online"]),
        }
        for name, (values, threshold) in attack_scores.items():
            scores[name].append(values)
            thresholds[name].append(threshold)
    member = np.concatenate(labels[1:])
    attacks: dict[str, dict[str, float]] = {}
    intervals: dict[str, dict[str, list[float]]] = {}
    dp_checks: dict[str, Any] = {}
    resolved: dict[str, bool] = {}
    boot_rng = np.random.default_rng([seed, 2])
    for name in MIA_ATTACKS:
        # the pooled accuracy uses each record's own (per-client) threshold: shift scores by it
        shifted = np.concatenate([s - t for s, t in zip(scores[name], thresholds[name], strict=True)])
        metrics, interval, resolved = metrics_with_intervals(shifted, member, 0.0, boot_rng, n_boot)
        attacks[name] = metrics.as_dict()
        intervals[name] = interval
        checks = dp_consistency(shifted, member, mu_run)
        dp_checks[name] = {
            "consistent": all(c.consistent for c in checks),
            "points": [c.__dict__ | {"consistent": c.consistent} for c in checks],
        }
    test = np.concatenate(setup.test)
    return {
        "epsilon_target": eps,
        "epsilon": epsilon_of_mu(mu_run, delta),
        "mu": mu_run,
        "noise_multiplier": cfg.noise_multiplier,
        "model_accuracy": float(np.mean([accuracy(m, x[test], y[test]) for m in models])),
        "global_accuracy": accuracy(run.global_params[-1], x[test], y[test]),
        "utility": {
            "train_accuracy": float(np.mean([accuracy(models[k], x[setup.members[k]], y[setup.members[k]])
                                             for k in range(n_clients)])),
            "test_accuracy": float(np.mean([accuracy(models[k], x[setup.test[k]], y[setup.test[k]])
                                            for k in range(n_clients)])),
            "global_test_accuracy": accuracy(run.global_params[-1], x[test], y[test]),
            "chance": 1.0 / n_classes,
        },
        "attacks": attacks,
        "interval": intervals,
        "fpr_resolved": resolved,
        "n_shadow_models": len(shadow_phi),
        "dp_audit": dp_checks,
    }



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
