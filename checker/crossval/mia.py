"""Stacking-ensemble membership inference without shadow models ([NIST-MIA]) and single-signal baselines.

Threat model ([NIST-MIA], "Bedreigingsmodel"): black-box access to each client's trained model (inputs →
output probabilities); one colluding client whose true membership labels are known; for every client a
set of guaranteed non-members ("external" data); a challenge set to attack.

The attack ([NIST-MIA], Sec. 2):

1. Seven base estimators — neural network (MLP), random forest, decision tree, gradient boosting, k
   nearest neighbours, SVM, logistic regression — learn membership from the target model's output on a
   record. Their input is the probability vector ``m_θ(x)`` together with the one-hot true label (our
   reading: without the label a base estimator cannot tell a confident right answer from a confident
   wrong one).
2. Each record gets the 8-dimensional feature ``(P_1, …, P_7, ℓ_CE)``: the seven base membership
   probabilities and the target model's cross-entropy loss ``−log p_y``. On the colluding client the base
   probabilities are out-of-fold predictions (k-fold cross-fitting), the standard stacking protocol, so
   the meta-learner does not learn from base estimators that memorised its own training rows.
3. A gradient-boosted meta-classifier combines them: ``meta="hist_gradient_boosting"`` (the default,
   scikit-learn's ``HistGradientBoostingClassifier``, deterministic for a given seed) or ``meta="xgboost"``
   (XGBoost, as in [NIST-MIA]; not a dependency, so asking for it without it installed is an error). The
   choice never depends on what is installed.
4. Domain adaptation on guaranteed non-members (our reading of "fine-tuned on the external data"): for a
   target client, each of the 8 features is mapped through the quantile transform that sends the
   distribution of that client's external non-members onto the colluding client's non-members
   (``F_col⁻¹ ∘ F_target``), so that the non-member distributions agree before the meta-classifier
   (trained on the colluding client) is applied (``adapt="quantile"``, the default); ``adapt="affine"``
   matches only the per-feature mean and standard deviation; ``adapt="none"`` skips the step.

Baselines: the loss threshold (Yeom et al., CSF 2018, score ``−ℓ_CE``) and an offline LiRA-style single
signal ([LiRA] without shadow models): the logit-scaled confidence ``φ = log p_y − log(1 − p_y)``
compared with a Gaussian fitted per class to the client's guaranteed non-members, score
``(φ − μ_out,y) / σ_out,y``.

Metrics: accuracy of the thresholded decision (threshold chosen on the colluding client, balanced
challenge set), ROC AUC, and TPR at FPR ≤ 1 % and ≤ 0.1 % (the largest TPR on the empirical ROC curve
whose FPR does not exceed the level).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats
from sklearn.base import BaseEstimator, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from checker.crossval.gaussian import gaussian_tradeoff

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "BASE_ESTIMATORS",
    "META_CLASSIFIERS",
    "AttackMetrics",
    "EnsembleMIA",
    "QuantileAligner",
    "attack_metrics",
    "base_features",
    "clopper_pearson",
    "lira_offline_scores",
    "loss_scores",
    "roc_counts",
    "tpr_at_fpr",
]

BASE_ESTIMATORS: tuple[str, ...] = (
    "neural_network",
    "random_forest",
    "decision_tree",
    "gradient_boosting",
    "knn",
    "svm",
    "logistic_regression",
)


def _cross_entropy(proba: FloatArray, y: IntArray) -> FloatArray:
    return -np.log(np.clip(proba[np.arange(len(y)), y], 1e-12, 1.0))


def base_features(proba: FloatArray, y: IntArray) -> FloatArray:
    """Input of the base estimators: ``[m_θ(x), one_hot(y)]`` (``n × 2C``)."""
    onehot = np.zeros_like(proba)
    onehot[np.arange(len(y)), y] = 1.0
    return np.concatenate([proba, onehot], axis=1)


#: The meta-classifiers :class:`EnsembleMIA` accepts (its ``meta`` field); the first is the default.
META_CLASSIFIERS: tuple[str, ...] = ("hist_gradient_boosting", "xgboost")


def _make_base(name: str, seed: int) -> BaseEstimator:
    if name == "neural_network":
        return make_pipeline(
            StandardScaler(),
            MLPClassifier((32, 16), max_iter=300, early_stopping=True, alpha=1e-3, random_state=seed),
        )
    if name == "random_forest":
        return RandomForestClassifier(n_estimators=100, min_samples_leaf=3, random_state=seed)
    if name == "decision_tree":
        return DecisionTreeClassifier(max_depth=5, min_samples_leaf=5, random_state=seed)
    if name == "gradient_boosting":
        return GradientBoostingClassifier(n_estimators=60, max_depth=2, random_state=seed)
    if name == "knn":
        return make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=15))
    if name == "svm":
        return make_pipeline(StandardScaler(), CalibratedClassifierCV(SVC(C=1.0), ensemble=False, cv=3))
    if name == "logistic_regression":
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    raise ValueError(f"unknown base estimator {name!r}; expected one of {BASE_ESTIMATORS}")


def _make_meta(name: str, seed: int) -> BaseEstimator:
    """The meta-classifier ``name`` (one of :data:`META_CLASSIFIERS`), seeded."""
    if name == "hist_gradient_boosting":
        return HistGradientBoostingClassifier(
            max_iter=100, max_depth=2, learning_rate=0.05, early_stopping=False, random_state=seed
        )
    if name == "xgboost":
        try:
            # xgboost is optional (not a dependency): imported only when asked for
            xgboost = importlib.import_module("xgboost")
        except ImportError as exc:
            raise ValueError(f"meta={name!r} needs the xgboost package, which is not installed") from exc
        meta: BaseEstimator = xgboost.XGBClassifier(
            n_estimators=100, max_depth=2, learning_rate=0.1, random_state=seed
        )
        return meta
    raise ValueError(f"unknown meta-classifier {name!r}; expected one of {META_CLASSIFIERS}")


class QuantileAligner:
    """Per-feature quantile map ``F_ref⁻¹ ∘ F_src`` between two samples of non-member features
    (domain adaptation on guaranteed non-members). Values are interpolated between empirical quantiles
    and clipped to the reference range."""

    def __init__(self, source: FloatArray, reference: FloatArray, n_quantiles: int = 101):
        qs = np.linspace(0.0, 1.0, n_quantiles)
        self.src = np.quantile(source, qs, axis=0)
        self.ref = np.quantile(reference, qs, axis=0)
        self.qs = qs

    def transform(self, feats: FloatArray) -> FloatArray:
        out = np.empty_like(feats)
        for j in range(feats.shape[1]):
            src, ref = self.src[:, j], self.ref[:, j]
            # F_src by interpolation over the (possibly tied) source quantiles
            uniq, first = np.unique(src, return_index=True)
            u = np.interp(feats[:, j], uniq, self.qs[first]) if len(uniq) > 1 else np.full(len(feats), 0.5)
            out[:, j] = np.interp(u, self.qs, ref)
        return out


@dataclass
class EnsembleMIA:
    """The stacking ensemble of [NIST-MIA]. ``fit`` on the colluding client, ``scores`` on any client;
    ``meta`` names the meta-classifier (:data:`META_CLASSIFIERS`, module doc)."""

    seed: int = 0
    folds: int = 3
    bases: tuple[str, ...] = BASE_ESTIMATORS
    adapt: str = "quantile"
    meta: str = META_CLASSIFIERS[0]

    def fit(self, proba: FloatArray, y: IntArray, member: NDArray[np.bool_]) -> EnsembleMIA:
        """Train bases (out-of-fold features for the meta-learner) and the meta-classifier."""
        _make_meta(self.meta, self.seed)  # an unknown or missing meta-classifier fails before any training
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return self._fit(proba, y, member)

    def _fit(self, proba: FloatArray, y: IntArray, member: NDArray[np.bool_]) -> EnsembleMIA:
        member = np.asarray(member, dtype=bool)
        if member.all() or not member.any():
            raise ValueError("the colluding client's records must contain members and non-members")
        xb = base_features(proba, y)
        lab = member.astype(int)
        oof = np.zeros((len(y), len(self.bases)))
        skf = StratifiedKFold(n_splits=self.folds, shuffle=True, random_state=self.seed)
        self.models_ = []
        for j, name in enumerate(self.bases):
            proto = _make_base(name, self.seed)
            for tr, te in skf.split(xb, lab):
                m = clone(proto).fit(xb[tr], lab[tr])
                oof[te, j] = m.predict_proba(xb[te])[:, 1]
            self.models_.append(clone(proto).fit(xb, lab))
        feats = np.concatenate([oof, _cross_entropy(proba, y)[:, None]], axis=1)
        self.meta_ = _make_meta(self.meta, self.seed).fit(feats, lab)
        self.train_features_ = feats
        self.train_member_ = member
        # decision threshold from out-of-fold meta scores (in-sample boosting scores are overfitted)
        oof_meta = cross_val_predict(
            _make_meta(self.meta, self.seed), feats, lab, cv=skf, method="predict_proba"
        )[:, 1]
        self.threshold_ = best_threshold(oof_meta, member)
        return self

    def features(self, proba: FloatArray, y: IntArray) -> FloatArray:
        """The 8-dimensional features ``(P_1..P_7, ℓ_CE)`` of records scored by the trained bases."""
        xb = base_features(proba, y)
        cols = [m.predict_proba(xb)[:, 1] for m in self.models_]
        return np.column_stack([*cols, _cross_entropy(proba, y)])

    def scores(
        self,
        proba: FloatArray,
        y: IntArray,
        external: tuple[FloatArray, IntArray] | None = None,
    ) -> FloatArray:
        """Membership scores (meta-classifier probability). With ``external = (proba_ext, y_ext)`` of the
        target client's guaranteed non-members, the features are first domain-adapted (module doc)."""
        if self.adapt not in ("quantile", "affine", "none"):
            raise ValueError("adapt must be 'quantile', 'affine' or 'none'")
        feats = self.features(proba, y)
        if external is not None and self.adapt != "none":
            ext = self.features(*external)
            ref = self.train_features_[~self.train_member_]
            if self.adapt == "quantile":
                feats = QuantileAligner(ext, ref).transform(feats)
            else:  # affine: match the non-members' per-feature mean and standard deviation
                scale = (ref.std(axis=0) + 1e-6) / (ext.std(axis=0) + 1e-6)
                feats = (feats - ext.mean(axis=0)) * np.clip(scale, 0.2, 5.0) + ref.mean(axis=0)
        return np.asarray(self.meta_.predict_proba(feats)[:, 1], dtype=float)


def loss_scores(proba: FloatArray, y: IntArray) -> FloatArray:
    """Loss-threshold attack (Yeom et al., CSF 2018): higher score = lower loss = more likely member."""
    return -_cross_entropy(proba, y)


def lira_offline_scores(proba: FloatArray, y: IntArray, ext_proba: FloatArray, ext_y: IntArray) -> FloatArray:
    """Offline LiRA-style single signal: ``(φ − μ_out,y)/σ_out,y`` with ``φ = logit(p_y)`` and the
    non-member Gaussian fitted per class on guaranteed non-members (pooled fit for classes seen < 3 times)."""

    def phi(p: FloatArray, lab: IntArray) -> FloatArray:
        py = np.clip(p[np.arange(len(lab)), lab], 1e-12, 1 - 1e-12)
        return np.log(py) - np.log1p(-py)

    f_ext = phi(ext_proba, ext_y)
    f = phi(proba, y)
    mu0, sd0 = float(f_ext.mean()), float(f_ext.std() + 1e-6)
    out = np.empty(len(y))
    for c in np.unique(y):
        sel = ext_y == c
        mu, sd = (float(f_ext[sel].mean()), float(f_ext[sel].std() + 1e-6)) if sel.sum() >= 3 else (mu0, sd0)
        out[y == c] = (f[y == c] - mu) / max(sd, 1e-3)
    return out


def roc_counts(scores: FloatArray, member: NDArray[np.bool_]) -> tuple[FloatArray, IntArray, IntArray]:
    """Thresholds ``τ`` (``inf`` then the distinct scores, descending) with the numbers of members
    (``tp``) and non-members (``fp``) scoring ``≥ τ``."""
    member = np.asarray(member, dtype=bool)
    thr = np.concatenate([[np.inf], np.unique(scores)[::-1]])
    pos, neg = np.sort(scores[member]), np.sort(scores[~member])
    tp = len(pos) - np.searchsorted(pos, thr, side="left")
    fp = len(neg) - np.searchsorted(neg, thr, side="left")
    return thr, tp.astype(np.int64), fp.astype(np.int64)


def tpr_at_fpr(scores: FloatArray, member: NDArray[np.bool_], fpr: float) -> float:
    """Largest TPR on the empirical ROC curve (threshold "score ≥ τ") with FPR ≤ ``fpr``.

    >>> scores = np.array([0.9, 0.8, 0.7, 0.6, 0.3, 0.2])
    >>> member = np.array([True, True, False, True, False, False])
    >>> tpr_at_fpr(scores, member, 0.0), tpr_at_fpr(scores, member, 1 / 3)
    (0.6666666666666666, 1.0)
    """
    member = np.asarray(member, dtype=bool)
    n_pos, n_neg = int(member.sum()), int((~member).sum())
    _, tp, fp = roc_counts(scores, member)
    ok = fp <= fpr * n_neg if n_neg else np.ones(len(fp), bool)
    return float(tp[ok].max() / n_pos) if n_pos else 0.0


def best_threshold(scores: FloatArray, member: NDArray[np.bool_]) -> float:
    """Threshold maximising balanced accuracy of ``score ≥ τ`` on labelled records."""
    thr = np.unique(scores)
    member = np.asarray(member, dtype=bool)
    acc = [0.5 * (np.mean(scores[member] >= t) + np.mean(scores[~member] < t)) for t in thr]
    return float(thr[int(np.argmax(acc))])


@dataclass(frozen=True)
class AttackMetrics:
    accuracy: float
    auc: float
    tpr_at_1pct_fpr: float
    tpr_at_0_1pct_fpr: float

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def attack_metrics(scores: FloatArray, member: NDArray[np.bool_], threshold: float) -> AttackMetrics:
    """Balanced accuracy of ``score ≥ threshold``, AUC and TPR at 1 % / 0.1 % FPR."""
    member = np.asarray(member, dtype=bool)
    acc = 0.5 * (np.mean(scores[member] >= threshold) + np.mean(scores[~member] < threshold))
    return AttackMetrics(
        accuracy=float(acc),
        auc=float(roc_auc_score(member.astype(int), scores)),
        tpr_at_1pct_fpr=tpr_at_fpr(scores, member, 0.01),
        tpr_at_0_1pct_fpr=tpr_at_fpr(scores, member, 0.001),
    )


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Two-sided exact ([ClopperPearson]) ``1 − alpha`` interval for a binomial proportion.

    >>> lo, hi = clopper_pearson(0, 10)
    >>> lo, round(hi, 6), round(1 - 0.025 ** (1 / 10), 6)
    (0.0, 0.308497, 0.308497)
    """
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def pooled(values: Sequence[AttackMetrics]) -> AttackMetrics:
    """Mean of per-client metrics."""
    fields = AttackMetrics.__dataclass_fields__
    return AttackMetrics(*(float(np.mean([getattr(v, f) for v in values])) for f in fields))


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
    member: NDArray[np.bool_],
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
