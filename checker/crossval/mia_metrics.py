"""Figures of a membership-inference attack, with 95 % intervals, and the audit against a GDP guarantee.

Metrics of membership scores (higher = more likely member) on a labelled challenge set:

* ``accuracy``: balanced accuracy ``(TPR + TNR)/2`` of the decision ``score ≥ τ`` (``τ`` chosen on the
  colluding client's labelled records, never on the challenge set); random guessing gives 0.5.
* ``auc``: ROC AUC, the Mann–Whitney probability that a member outscores a non-member (ties count ½).
* ``tpr_at_1pct_fpr``, ``tpr_at_0_1pct_fpr``: the largest TPR on the empirical ROC curve whose FPR does
  not exceed 1 % / 0.1 %. A level ``α`` is resolved only with at least ``1/α`` non-members
  (:func:`fpr_resolved`): 0.1 % needs ≥ 1000.

Intervals (``interval`` of :func:`metrics_with_intervals`, all 95 %):

* TPR at a fixed FPR level: Clopper–Pearson ([ClopperPearson]) on ``TP / n_members`` at the chosen
  threshold (conditional on that threshold).
* accuracy: ``[(lo_TPR + lo_TNR)/2, (hi_TPR + hi_TNR)/2]`` from Clopper–Pearson intervals of TPR and TNR
  at level ``1 − α/2`` each, so by the union bound the interval covers with probability ``≥ 1 − α``.
* AUC: percentile bootstrap, members and non-members resampled separately (seeded).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from checker.crossval.gaussian import gaussian_tradeoff

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

__all__ = [
    "AttackMetrics",
    "DPCheck",
    "SeedSummary",
    "attack_metrics",
    "auc_score",
    "balanced_accuracy_interval",
    "best_threshold",
    "bootstrap_auc_interval",
    "clopper_pearson",
    "dp_consistency",
    "fpr_resolved",
    "metrics_with_intervals",
    "roc_counts",
    "seed_summary",
    "tpr_at_fpr",
]

#: FPR levels of the reported TPRs, by JSON key.
FPR_LEVELS: dict[str, float] = {"tpr_at_1pct_fpr": 0.01, "tpr_at_0_1pct_fpr": 0.001}


def roc_counts(
    scores: FloatArray, member: BoolArray
) -> tuple[FloatArray, NDArray[np.int64], NDArray[np.int64]]:
    """Thresholds ``τ`` (``inf`` then the distinct scores, descending) with the numbers of members
    (``tp``) and non-members (``fp``) scoring ``≥ τ``."""
    member = np.asarray(member, dtype=bool)
    thr = np.concatenate([[np.inf], np.unique(scores)[::-1]])
    pos, neg = np.sort(scores[member]), np.sort(scores[~member])
    tp = len(pos) - np.searchsorted(pos, thr, side="left")
    fp = len(neg) - np.searchsorted(neg, thr, side="left")
    return thr, tp.astype(np.int64), fp.astype(np.int64)


def _tp_at_fpr(scores: FloatArray, member: BoolArray, fpr: float) -> int:
    """Members caught at the threshold with the most true positives among those with FPR ≤ ``fpr``."""
    n_neg = int((~member).sum())
    _, tp, fp = roc_counts(scores, member)
    ok = fp <= fpr * n_neg if n_neg else np.ones(len(fp), bool)
    return int(tp[ok].max())


def tpr_at_fpr(scores: FloatArray, member: BoolArray, fpr: float) -> float:
    """Largest TPR on the empirical ROC curve (threshold "score ≥ τ") with FPR ≤ ``fpr``.

    >>> scores = np.array([0.9, 0.8, 0.7, 0.6, 0.3, 0.2])
    >>> member = np.array([True, True, False, True, False, False])
    >>> tpr_at_fpr(scores, member, 0.0), tpr_at_fpr(scores, member, 1 / 3)
    (0.6666666666666666, 1.0)
    """
    member = np.asarray(member, dtype=bool)
    n_pos = int(member.sum())
    return _tp_at_fpr(scores, member, fpr) / n_pos if n_pos else 0.0


def fpr_resolved(n_nonmembers: int, fpr: float) -> bool:
    """Whether an FPR level is resolved: at least one false positive is allowed (``n · fpr ≥ 1``)."""
    return n_nonmembers * fpr >= 1.0 - 1e-9


def best_threshold(scores: FloatArray, member: BoolArray) -> float:
    """Threshold maximising balanced accuracy of ``score ≥ τ`` on labelled records; of the thresholds
    that reach the maximum, the middle of their range (the largest margin to both classes), not its end:
    when the labelled records separate well, every ``τ`` in a wide gap is optimal and the end of the
    gap is the least robust choice for new records.

    >>> best_threshold(np.array([0.1, 0.2, 0.8, 0.9]), np.array([False, False, True, True]))
    0.5
    """
    member = np.asarray(member, dtype=bool)
    thr, tp, fp = roc_counts(scores, member)
    n_pos, n_neg = int(member.sum()), int((~member).sum())
    balanced = 0.5 * (tp / n_pos + 1.0 - fp / n_neg)
    best = np.flatnonzero(balanced[1:] >= balanced[1:].max() - 1e-12) + 1
    lo, hi = int(best[0]), int(best[-1])
    # "score >= τ" counts as at thr[hi] for every τ in (thr[hi + 1], thr[hi]], as at thr[lo] up to thr[lo]
    below = float(thr[hi + 1]) if hi + 1 < len(thr) else float(thr[hi]) - 1.0
    if hi - lo + 1 == len(best):  # one contiguous run of optimal thresholds
        return 0.5 * (float(thr[lo]) + below)
    return float(thr[int(best[len(best) // 2])])


def auc_score(scores: FloatArray, member: BoolArray) -> float:
    """ROC AUC as the Mann–Whitney statistic from mid-ranks (ties count ½).

    >>> auc_score(np.array([3.0, 2.0, 2.0, 1.0]), np.array([True, True, False, False]))
    0.875
    """
    member = np.asarray(member, dtype=bool)
    n_pos, n_neg = int(member.sum()), int((~member).sum())
    ranks = stats.rankdata(scores)
    return float((ranks[member].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Two-sided exact ([ClopperPearson]) ``1 − alpha`` interval for a binomial proportion.

    >>> lo, hi = clopper_pearson(0, 10)
    >>> lo, round(hi, 6), round(1 - 0.025 ** (1 / 10), 6)
    (0.0, 0.308497, 0.308497)
    """
    if n == 0:
        return 0.0, 1.0
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


@dataclass(frozen=True)
class SeedSummary:
    """A figure over independent seeds: median, mean and the ``1 − alpha`` Student-t interval of the
    mean (``mean ± t_{1−α/2, n−1}·s/√n``; a single value gives the point interval)."""

    median: float
    mean: float
    low: float
    high: float
    n: int

    def text(self, digits: int = 3) -> str:
        """``median [low, high]``, e.g. ``0.512 [0.480, 0.540]``."""
        return f"{self.median:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def seed_summary(values: Sequence[float], alpha: float = 0.05) -> SeedSummary:
    """:class:`SeedSummary` of ``values`` (one per seed).

    >>> s = seed_summary([1.0, 2.0, 3.0])
    >>> s.median, s.mean, round(s.high - s.mean, 4), round(float(stats.t.ppf(0.975, 2)) / 3**0.5, 4)
    (2.0, 2.0, 2.4841, 2.4841)
    """
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 0:
        raise ValueError("seed_summary needs at least one value")
    mean = float(v.mean())
    if len(v) == 1:
        return SeedSummary(float(v[0]), mean, mean, mean, 1)
    half = float(stats.t.ppf(1 - alpha / 2, len(v) - 1)) * float(v.std(ddof=1)) / len(v) ** 0.5
    return SeedSummary(float(np.median(v)), mean, mean - half, mean + half, len(v))


def balanced_accuracy_interval(
    tp: int, n_pos: int, tn: int, n_neg: int, alpha: float = 0.05
) -> tuple[float, float]:
    """``1 − alpha`` interval of ``(TPR + TNR)/2`` from two Clopper–Pearson intervals at ``alpha/2``."""
    lo_p, hi_p = clopper_pearson(tp, n_pos, alpha / 2)
    lo_n, hi_n = clopper_pearson(tn, n_neg, alpha / 2)
    return 0.5 * (lo_p + lo_n), 0.5 * (hi_p + hi_n)


def bootstrap_auc_interval(
    scores: FloatArray, member: BoolArray, rng: np.random.Generator, n_boot: int = 200, alpha: float = 0.05
) -> tuple[float, float]:
    """Percentile bootstrap interval of the AUC (members and non-members resampled separately)."""
    member = np.asarray(member, dtype=bool)
    pos, neg = scores[member], scores[~member]
    both = np.ones(len(pos) + len(neg), bool)
    both[len(pos) :] = False
    aucs = np.empty(n_boot)
    for b in range(n_boot):
        sample = np.concatenate([rng.choice(pos, len(pos)), rng.choice(neg, len(neg))])
        aucs[b] = auc_score(sample, both)
    lo, hi = np.quantile(aucs, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


@dataclass(frozen=True)
class AttackMetrics:
    accuracy: float
    auc: float
    tpr_at_1pct_fpr: float
    tpr_at_0_1pct_fpr: float

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def attack_metrics(scores: FloatArray, member: BoolArray, threshold: float) -> AttackMetrics:
    """Balanced accuracy of ``score ≥ threshold``, AUC and TPR at 1 % / 0.1 % FPR."""
    member = np.asarray(member, dtype=bool)
    acc = 0.5 * (np.mean(scores[member] >= threshold) + np.mean(scores[~member] < threshold))
    return AttackMetrics(
        accuracy=float(acc),
        auc=auc_score(scores, member),
        tpr_at_1pct_fpr=tpr_at_fpr(scores, member, FPR_LEVELS["tpr_at_1pct_fpr"]),
        tpr_at_0_1pct_fpr=tpr_at_fpr(scores, member, FPR_LEVELS["tpr_at_0_1pct_fpr"]),
    )


def metrics_with_intervals(
    scores: FloatArray, member: BoolArray, threshold: float, rng: np.random.Generator, n_boot: int = 200
) -> tuple[AttackMetrics, dict[str, list[float]], dict[str, bool]]:
    """:func:`attack_metrics` plus the 95 % ``interval`` of each figure (module doc) and whether each
    TPR's FPR level is resolved by the number of non-members."""
    member = np.asarray(member, dtype=bool)
    n_pos, n_neg = int(member.sum()), int((~member).sum())
    metrics = attack_metrics(scores, member, threshold)
    tp = int((scores[member] >= threshold).sum())
    tn = int((scores[~member] < threshold).sum())
    interval = {
        "accuracy": list(balanced_accuracy_interval(tp, n_pos, tn, n_neg)),
        "auc": list(bootstrap_auc_interval(scores, member, rng, n_boot)),
    }
    resolved = {}
    for key, level in FPR_LEVELS.items():
        interval[key] = list(clopper_pearson(_tp_at_fpr(scores, member, level), n_pos))
        resolved[key] = fpr_resolved(n_neg, level)
    return metrics, interval, resolved


@dataclass(frozen=True)
class DPCheck:
    """One point of the audit against a ``μ``-GDP guarantee: at the empirical threshold with FPR ≤ level,
    the Clopper–Pearson lower end of the TPR must not exceed ``1 − f_G(FPR_upper)`` ([SecAgg-MIA], Prop. 1),
    ``FPR_upper`` being the Clopper–Pearson upper end of the FPR."""

    level: float
    fpr: float
    tpr: float
    tpr_lower: float
    fpr_upper: float
    tpr_bound: float

    @property
    def consistent(self) -> bool:
        return self.tpr_lower <= self.tpr_bound + 1e-12


def dp_consistency(
    scores: FloatArray,
    member: BoolArray,
    mu: float,
    levels: Sequence[float] = (0.001, 0.01, 0.05, 0.1, 0.2),
    alpha: float = 0.05,
) -> list[DPCheck]:
    """Audit membership scores against the ``μ``-GDP trade-off curve ``TPR ≤ 1 − f_G(FPR)``.

    A ``μ``-GDP training makes every test between "record in" and "record out" satisfy
    ``TPR ≤ 1 − f_G(FPR) = Φ(Φ⁻¹(FPR) + μ)``; averaging over records keeps the bound because it is concave.
    Each check uses one threshold (the one giving the largest TPR with empirical FPR ≤ level).
    """
    member = np.asarray(member, dtype=bool)
    n_pos, n_neg = int(member.sum()), int((~member).sum())
    _, tp, fp = roc_counts(scores, member)
    out = []
    for level in levels:
        ok = np.flatnonzero(fp <= level * n_neg)
        i = int(ok[np.argmax(tp[ok])])  # ok is never empty: τ = inf has fp = 0
        k_tp, k_fp = int(tp[i]), int(fp[i])
        tpr_lo, _ = clopper_pearson(k_tp, n_pos, alpha)
        _, fpr_hi = clopper_pearson(k_fp, n_neg, alpha)
        bound = 1.0 if np.isinf(mu) else float(1.0 - gaussian_tradeoff(mu, fpr_hi)[0])
        out.append(DPCheck(level, k_fp / n_neg, k_tp / n_pos, tpr_lo, fpr_hi, bound))
    return out
