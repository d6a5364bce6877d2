"""``flcheck attack sratta|mia|leakage`` — attacks on a simulated federated training ([FL-MI],
[SRATTA], [NIST-MIA]).

* ``flcheck attack sratta`` — FedAvg MLP on the 8×8 digits, 5 clients × 100 samples, n_updates = 5,
  t_max = 20, secure aggregation; SRATTA ([SRATTA]) vs K-means. JSON keys ``rho_recovered``,
  ``rho_matched``, ``rho_component``, ``v_measure`` (+ ``homogeneity``, ``completeness``,
  ``v_measure_gain`` over the every-sample-alone partition, ``kmeans_v_measure``, ``rho_isolated``,
  ``epsilon``, ``warnings`` when the trained model is at chance or V-measure rests on few recovered
  samples).
* ``flcheck attack mia`` — [NIST-MIA]'s ensemble membership inference vs the loss-threshold and LiRA-style
  baselines at ε ∈ {inf, 200, 10} (DP-SGD calibrated with the Gaussian curve). Per ε and attack:
  ``accuracy``, ``auc``, ``tpr_at_1pct_fpr``, ``tpr_at_0_1pct_fpr``; ``dp_audit`` checks every TPR
  against the GDP trade-off bound (exit 1 if one contradicts it).
* ``flcheck attack leakage`` — I(X_B; G) ([FL-MI]) with MINE, H-MINE, covariance sum: Gaussian
  validation, then a trend (``--trend batch|noise|step|imbalance``). JSON key ``mi`` per estimator
  (nats, ≥ 0; ``clamped`` lists points whose DV bound was negative), ``covariance_baseline`` for the
  covariance sum (not an MI).

Each default run takes at most about 12 s of CPU on bundled or generated data (measured: sratta 4 s,
leakage 7 s, mia 12 s); each kind's --help says what its default reproduces and what it does not.
``--full`` runs the larger setting (sratta: five trainings with intervals; mia, leakage: paper-scale
networks and data) in minutes. The seed-replicated comparison with the papers' claims is
``bench/bench_attacks.py``.
``--json`` prints the result, ``--plot FILE.png`` writes a figure atomically. Exit codes: 0 done, 1 an
audit contradicts the formal ε, 2 bad input.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from checker.cli.json_output import emit_json
from checker.cli.options import Integer, Real, comma_list, plot_file, probability, seed
from checker.errors import InputError
from checker.tables import table_text

__all__ = ["register"]

SRATTA_HELP = """[SRATTA]'s attack on what an observer of secure aggregation sees (the global model's
first layer at every round): sample recovery by the ratios dW/db, activation sets by OMP, grouping by
Corollary 3.6, against K-means and the every-sample-alone partition.

What the default reproduces: the paper's Sec. 4 setting (5 clients x 100 samples, n_updates = 5,
t_max = 20, MLP with 1000 hidden neurons, lr 1.0, batch 4) on the 8x8 digits as the stand-in for its data
sets, one training, in about 4 s of CPU: SRATTA recovers every sample that is alone in some activation
set (rho_recovered = rho_isolated, 0.57 over 5 seeds) and no component mixes clients (Cor. 3.6). What it
does not: the paper's data sets (FashionMNIST, CIFAR10, ...) and their figures; at batch 32 only 4% of
the samples are ever alone in an activation set with 1000 hidden neurons (rho_recovered 0.044 against
the paper's > 0.1), 17% with --hidden 4000 (rho_recovered 0.168, 26 s of CPU); the grouping adds little
V-measure over leaving every sample alone (+0.03 at batch 4). --full runs five trainings and reports
medians with 95% intervals; the batch 1-32 and Dirichlet alpha 0.1-10 sweeps are in
bench/bench_attacks.py. A model at chance accuracy (e.g. batch 1 or alpha = 0.1 with lr = 1) is
reported in 'warnings'.
"""

LEAKAGE_HELP = """[FL-MI]'s leakage I(X_B; G) of a FedSGD client: MINE and H-MINE (Donsker-Varadhan bound),
first on Gaussian batches with an analytic MI, then along a trend; the covariance-sum baseline beside
them (its own column and JSON key: it is not an MI).

What the default reproduces: the method with small statistic networks (H-MINE BlockModel 32-32-16,
MixModel 32-1, MINE 64-64-1, Adam lr 1e-3, 500 steps) on a logistic-regression client over a synthetic
tabular task, in about 7 s of CPU; on the Gaussian check H-MINE is 7% below the analytic MI at B = 1
and 18% below at B = 4. What it does not: the paper's Adult data, and its claim that H-MINE beats MINE.
With the paper's networks over 5 seeds (bench/bench_attacks.py) H-MINE is within 10% of the analytic
MI at B = 1 and 2, but 14% and 36% below it at B = 4 and 8, where MINE with the same budget is 5% and
12% below; H-MINE is the closer one only with 16-dimensional batch items (B = 8: 0.85 against MINE's
0.48 of 1.32 nats, neither converged in 12,000 steps). --full uses the paper's networks (BlockModel
200-200-5, MixModel 500-1, MINE 200-200-1, Adam lr 5e-5, minibatches of 64, up to 12,000 steps with
early stopping on a held-out DV bound, 40,000 samples): minutes of CPU.
"""

MIA_HELP = """[NIST-MIA]'s comparison: stacking ensemble (7 base estimators, 8-dim feature, gradient-boosted
meta-classifier fine-tuned on each client's external non-members) vs loss threshold, shadow-free
LiRA-style signal and LiRA offline/online with shadow models, at each target epsilon (DP-SGD FedAvg MLP).

What the default reproduces: the protocol (malicious server, one colluding client, external
non-members, pooled challenge set with >= 1000 non-members so TPR at 0.1% FPR is resolved; 95%
intervals: Clopper-Pearson for accuracy and TPR, bootstrap for AUC; train/test utility) on a generated
genomics-like data set (2000 SNPs with linkage, 3 phenotype classes, 4 clients x 200), one seed, in
about 12 s of CPU; targets that overfit (train/test accuracy 1.00/0.55 without DP) and attacks near
random at epsilon = 10. What it does not: the paper's soybean data (125,767 SNPs), its 1-D CNN, and its
headline: over 5 seeds (bench/bench_attacks.py) the ensemble's accuracy without DP is 0.013 below the
best single-signal attack's (0.899 vs 0.912), and at epsilon = 200 its TPR at 1% FPR is 0.057 against
LiRA's 0.115. --full runs a larger setting (minutes), still not the paper's scale.
"""


def _figure(v: Any) -> str:
    """A metric for the terminal: three decimals, ``inf``, or the value's text."""
    if isinstance(v, float):
        return "inf" if math.isinf(v) else f"{v:.3f}"
    return str(v)


def _run(kind: str, options: dict[str, Any], seeds: tuple[int, ...] = ()) -> dict[str, Any]:
    """``run_attack(kind, **options)``, or for SRATTA with ``seeds`` one run per seed
    (``run_sratta_seeds``); errors of the options become :class:`InputError`."""
    # lazy: the training simulations take seconds to import
    from checker.app.attacks import run_attack, run_sratta_seeds

    try:
        if seeds:
            return run_sratta_seeds(seeds, **options)
        return run_attack(kind, **options)
    except TypeError as exc:
        raise InputError(f"bad option for attack {kind!r}: {exc}") from exc
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"attack {kind}: {exc}") from exc


# ------------------------------------------------------------------------------------------------ sratta
def _sratta(args: argparse.Namespace) -> int:
    from checker.app.attacks import SRATTA_FULL_SEEDS  # lazy: the training simulations take seconds to import

    options = {
        "n_clients": args.clients, "per_client": args.per_client, "alpha": args.alpha,
        "hidden": args.hidden, "lr": args.lr, "batch_size": args.batch_size, "n_updates": args.n_updates,
        "rounds": args.rounds, "n_max": args.n_max, "censor_threshold": args.censor,
    }
    if args.full:
        res = _run("sratta", options, tuple(args.seed + s for s in SRATTA_FULL_SEEDS))
    else:
        res = _run("sratta", {**options, "seed": args.seed})
    if args.plot:
        _plot_sratta(res, args.plot)
    if args.json:
        emit_json(args.flcheck_command, res)
        return 0
    keys = ("rho_recovered", "rho_isolated", "rho_matched", "rho_component", "v_measure", "homogeneity",
            "completeness",
            "kmeans_v_measure", "singleton_v_measure", "v_measure_gain", "n_recovered", "n_false",
            "n_mixed_components",
            "n_sets_reconstructed",
            "censored_neuron_updates", "model_accuracy", "epsilon")
    print("SRATTA ([SRATTA]) on digits, secure aggregation; observer sees only the global model")
    if "summary" in res:
        summary = res["summary"]
        print(f"seeds {res['seeds']}: median [95% t-interval of the mean]; "
              f"{res['n_mixed_components_total']} mixed components in all runs")
        print(table_text([("metric", "median [95% CI]"),
                          *((k, f"{_figure(v['median'])} [{_figure(v['low'])}, {_figure(v['high'])}]")
                            for k, v in summary.items())]))
    else:
        print(table_text([("metric", "value"), *((k, _figure(res[k])) for k in keys)]))
    for w in res["warnings"]:
        print(f"warning: {w}")
    return 0


def _plot_sratta(res: dict[str, Any], path: str) -> None:
    import matplotlib  # lazy: matplotlib is slow to import and only needed for --plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after selecting the Agg backend

    from checker.crossval.plots import save_figure  # lazy: imports matplotlib

    fig, ax = plt.subplots(figsize=(6, 3.5))
    names = ["rho_recovered", "rho_matched", "rho_component", "v_measure", "kmeans_v_measure"]
    ax.bar(names, [res[n] for n in names], color=["C0", "C0", "C0", "C1", "C2"])
    ax.set_ylim(0, 1)
    ax.set_title(f"SRATTA on digits (alpha={res['config']['alpha']})")
    ax.tick_params(axis="x", rotation=30)
    save_figure(fig, path)


# --------------------------------------------------------------------------------------------------- mia
def _mia(args: argparse.Namespace) -> int:
    from checker.app.attacks import MIA_FULL  # lazy: the training simulations take seconds to import

    given = {
        "epsilons": args.epsilons, "n_clients": args.clients, "per_client": args.per_client,
        "n_snps": args.snps, "challenge_nonmembers": args.challenge_nonmembers, "rounds": args.rounds,
        "local_epochs": args.local_epochs, "hidden": args.hidden, "lr": args.lr,
        "batch_size": args.batch_size, "clip": args.clip, "delta": args.delta,
        "shadow_epochs": args.shadow_epochs, "meta": args.meta,
        "seed": args.seed,
    }
    options = {**(MIA_FULL if args.full else {}), **{k: v for k, v in given.items() if v is not None}}
    res = _run("mia", options)
    consistent = all(a["consistent"] for row in res["rows"] for a in row["dp_audit"].values())
    if args.plot:
        _plot_mia(res, args.plot)
    if args.json:
        emit_json(args.flcheck_command, res)
        return 0 if consistent else 1
    table = [("eps target", "eps formal", "train/test acc", "attack", "accuracy [95% CI]", "auc [95% CI]",
              "tpr@1%fpr [95% CI]", "tpr@0.1%fpr [95% CI]", "DP bound")]
    for row in res["rows"]:
        for name, m in row["attacks"].items():
            ci = row["interval"][name]
            table.append((_figure(row["epsilon_target"]), _figure(row["epsilon"]),
                          f"{_figure(row['utility']['train_accuracy'])}/{_figure(row['utility']['test_accuracy'])}",
                          name, *(f"{_figure(m[k])} [{_figure(ci[k][0])}, {_figure(ci[k][1])}]"
                                  for k in ("accuracy", "auc", "tpr_at_1pct_fpr", "tpr_at_0_1pct_fpr")),
                          "ok" if row["dp_audit"][name]["consistent"] else "CONTRADICTED"))
    cfg = res["config"]
    print(f"Membership inference ([NIST-MIA]) on generated genomics ({cfg['n_snps']} SNPs), "
          f"delta={res['delta']:g}, meta-classifier {res['meta_classifier']}, {cfg['n_challenge_members']} "
          f"members + {cfg['n_challenge_nonmembers']} non-members challenged")
    print(table_text(table))
    return 0 if consistent else 1


def _plot_mia(res: dict[str, Any], path: str) -> None:
    import matplotlib  # lazy: matplotlib is slow to import and only needed for --plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after selecting the Agg backend

    from checker.crossval.plots import save_figure  # lazy: imports matplotlib

    fig, ax = plt.subplots(figsize=(7, 3.5))
    attacks = list(res["rows"][0]["attacks"])
    width = 0.8 / len(attacks)
    xs = np.arange(len(res["rows"]))
    for i, name in enumerate(attacks):
        ax.bar(xs + i * width, [r["attacks"][name]["auc"] for r in res["rows"]], width, label=name)
    ax.axhline(0.5, color="grey", lw=0.8)
    ax.set_xticks(xs + 0.4 - width / 2, [_figure(r["epsilon_target"]) for r in res["rows"]])
    ax.set_xlabel("target epsilon")
    ax.set_ylabel("AUC")
    ax.set_title("Membership inference: AUC of each attack by target ε (0.5 = guessing)", fontsize=9)
    ax.legend(fontsize=7)
    save_figure(fig, path)


# ----------------------------------------------------------------------------------------------- leakage
def _leakage(args: argparse.Namespace) -> int:
    full = {"networks": "paper", "steps": 12000, "n_samples": 40000} if args.full else {}
    given = {"n_samples": args.samples, "steps": args.steps}
    res = _run("leakage", {
        "trend": args.trend, "values": args.values or None, "noise": args.noise, "batch": args.batch,
        "seed": args.seed, **{"n_samples": 4000, "steps": 500}, **full,
        **{k: v for k, v in given.items() if v is not None},
    })
    if args.plot:
        _plot_leakage(res, args.plot)
    if args.json:
        emit_json(args.flcheck_command, res)
        return 0
    names = list(res["mi"])
    print(f"Gaussian validation (nats): analytic vs estimates ({res['config']['networks']} networks)")
    print(table_text([("batch", "analytic", *names),
                  *((str(g["batch"]), _figure(g["analytic"]), *(_figure(g[n]) for n in names))
                    for g in res["gaussian_validation"])]))
    print(f"\nI(X_B; G) of a FedSGD logistic-regression client vs {res['trend']} (MI in nats)")
    print(table_text([(res["trend"], *names, "covariance baseline (not an MI)"),
                  *((_figure(v), *(_figure(res["mi"][n][i]) for n in names),
                     _figure(res["covariance_baseline"][i]))
                    for i, v in enumerate(res["values"]))]))
    for note in res["notes"]:
        print(f"note: {note}")
    return 0


def _plot_leakage(res: dict[str, Any], path: str) -> None:
    import matplotlib  # lazy: matplotlib is slow to import and only needed for --plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after selecting the Agg backend

    from checker.crossval.plots import save_figure  # lazy: imports matplotlib

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name in ("mine", "hmine"):
        if name in res["mi"]:
            ax.plot(res["values"], res["mi"][name], marker="o", label=name)
    ax.set_xlabel(res["trend"])
    if all(float(v).is_integer() for v in res["values"]):  # batch sizes, epochs: whole-number ticks only
        ax.set_xticks([int(v) for v in res["values"]])
    ax.set_ylabel("I(X_B; G) estimate [nats]")
    ax.set_title(f"Leakage of a FedSGD client: I(X_B; G) against {res['trend']}", fontsize=9)
    ax.legend()
    save_figure(fig, path)


#: The ranges of the attacks' options (sizes beyond them do not fit a simulated training in memory; the
#: memory limit of every command stops what is still too large).
CLIENTS = Integer(1, 1_000, what="a number of clients")
SAMPLES = Integer(1, 10**7, what="a number of samples")
UNITS = Integer(1, 100_000, what="a number of units")
STEPS = Integer(1, 10**6, what="a number of steps")
RATE = Real(0, 100, low_open=True, what="a learning rate")


def _alpha(text: str) -> float | None:
    """``--alpha``: ``iid`` (``None``) or a Dirichlet concentration > 0."""
    if text.strip() == "iid":
        return None
    return Real(0, 1e6, low_open=True, what="iid or a Dirichlet alpha")(text)


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``flcheck attack sratta|mia|leakage``."""
    p = sub.add_parser("attack", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = p.add_subparsers(dest="attack_kind", metavar="KIND")

    def usage(_args: argparse.Namespace) -> int:
        p.print_help()
        return 2

    p.set_defaults(func=usage)

    def common(q: argparse.ArgumentParser, fn: Callable[[argparse.Namespace], int]) -> None:
        q.add_argument("--seed", type=seed, default=0, help="seed of the data, the training and the attack "
                                                             "(default 0)")
        q.add_argument("--json", action="store_true", help="print the result as JSON")
        q.add_argument("--plot", metavar="FILE.png", type=plot_file, help="write a figure (atomically)")
        q.set_defaults(func=fn)

    s = kinds.add_parser("sratta", help="SRATTA sample re-attribution through secure aggregation ([SRATTA])",
                         description=SRATTA_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--clients", type=CLIENTS, default=5, help="clients (default 5)")
    s.add_argument("--per-client", type=SAMPLES, default=100, help="samples per client (default 100)")
    s.add_argument("--alpha", type=_alpha, default="iid",
                   help="Dirichlet alpha of the label split, or 'iid' (default)")
    s.add_argument("--hidden", type=UNITS, default=1000, help="hidden neurons of the MLP (default 1000)")
    s.add_argument("--lr", type=RATE, default=1.0, help="learning rate (default 1.0)")
    s.add_argument("--batch-size", type=UNITS, default=4, help="batch size (default 4)")
    s.add_argument("--n-updates", type=STEPS, default=5, help="local updates per round (default 5)")
    s.add_argument("--rounds", type=STEPS, default=20, help="t_max, the rounds observed (default 20)")
    s.add_argument("--n-max", type=UNITS, default=20,
                   help="largest activation set reconstructed by OMP (default 20)")
    s.add_argument("--censor", type=Integer(0, 100_000, what="a threshold"), default=0,
                   help="neuron-censoring defence threshold (0 = off)")
    s.add_argument("--full", action="store_true",
                   help="five trainings (seeds SEED..SEED+4): medians with 95%% intervals (about 15 s of CPU "
                        "at the defaults, 2 minutes at --batch-size 32 --hidden 4000)")
    common(s, _sratta)

    m = kinds.add_parser("mia", help="ensemble membership inference vs baselines under DP ([NIST-MIA])",
                         description=MIA_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    m.add_argument("--full", action="store_true",
                   help="the paper-scale setting (5000 SNPs, 5 clients x 300, 2000 challenge non-members, "
                        "4 shadow epochs; minutes of CPU); explicit options still win")
    m.add_argument("--epsilons", type=comma_list(Real(0, 1e6, infinite=True, what="an epsilon")),
                   default=None,
                   help="comma-separated target epsilons (inf = no DP; default inf,200,10)")
    m.add_argument("--clients", type=CLIENTS, help="client 0 colludes with the server (default 4)")
    m.add_argument("--per-client", type=SAMPLES, help="members per client (default 200)")
    m.add_argument("--snps", type=SAMPLES, help="SNPs of the generated genomics data (default 2000)")
    m.add_argument("--challenge-nonmembers", type=SAMPLES,
                   help="non-members in the pooled challenge set (default 1050; >= 1000 resolves 0.1%% FPR)")
    m.add_argument("--rounds", type=STEPS, help="FedAvg rounds (default 3)")
    m.add_argument("--local-epochs", type=STEPS, help="local epochs per round (default 5)")
    m.add_argument("--hidden", type=UNITS, help="hidden units of the MLP (default 32)")
    m.add_argument("--lr", type=RATE, help="learning rate (default 0.3)")
    m.add_argument("--batch-size", type=UNITS, help="batch size (default 32)")
    m.add_argument("--clip", type=Real(0, 1e6, low_open=True, what="a clipping norm"),
                   help="DP-SGD clipping norm (default 1.0)")
    m.add_argument("--delta", type=probability, help="delta of the formal epsilon (default 1e-5)")
    m.add_argument("--shadow-epochs", type=Integer(1, 1_000, what="a number of epochs"),
                   help="LiRA shadow epochs: every record is IN this many shadow models (default 1)")
    m.add_argument("--meta", choices=("hist_gradient_boosting", "xgboost"),
                   help="meta-classifier of the ensemble (default hist_gradient_boosting; xgboost must be "
                        "installed)")
    common(m, _mia)

    q = kinds.add_parser("leakage", help="I(X_B; G) by MINE / H-MINE / covariance sum ([FL-MI])",
                         description=LEAKAGE_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("--full", action="store_true",
                   help="the paper's networks (BlockModel 200-200-5, MixModel 500-1, lr 5e-5, early "
                        "stopping, up to 12000 steps, 40000 samples; minutes of CPU); explicit options win")
    q.add_argument("--trend", choices=("batch", "noise", "step", "imbalance"), default="batch",
                   help="the parameter the leakage is measured against (default batch)")
    q.add_argument("--values", type=comma_list(Real(-1e6, 1e6, what="a trend value")),
                   help="comma-separated values of the trend parameter")
    q.add_argument("--samples", type=SAMPLES, help="joint samples (X_B, G) (default 4000)")
    q.add_argument("--steps", type=STEPS,
                   help="Adam steps per estimate (default 500; the most with --full, default 12000)")
    q.add_argument("--noise", type=Real(0, 1e6, what="a standard deviation"), default=0.1,
                   help="std of the Gaussian noise on the gradient")
    q.add_argument("--batch", type=UNITS, default=4, help="batch size when the trend is not 'batch'")
    common(q, _leakage)
