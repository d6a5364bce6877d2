"""Stacking-ensemble membership inference without shadow models ([NIST-MIA]).

Threat model ([NIST-MIA]): black-box access to each client's trained model (inputs → output
probabilities); one colluding client whose true membership labels are known; for every client a set of
guaranteed non-members ("external" data); a challenge set to attack.

The attack:

1. Seven base estimators — neural network (MLP), random forest, decision tree, gradient boosting, k
   nearest neighbours, SVM, logistic regression — learn membership from the target model's output on a
   record. Their input is the probability vector ``m_θ(x)`` aligned on the true label — ``p_y`` first,
   then the other classes' probabilities in descending order — followed by the one-hot label (our
   reading of "trained on the output probabilities": membership shows in the true class's probability,
   ``p_y = ⟨m_θ(x), one_hot(y)⟩``, a product that a linear or distance-based estimator cannot form from
   the class-ordered vector and the label; with that input the logistic-regression and neural-network
   bases scored AUC ≈ 0.5 where the loss alone scored 0.92).
2. Each record gets the 8-dimensional feature ``(P_1, …, P_7, ℓ_CE)``: the seven base membership
   probabilities and the target model's cross-entropy loss ``−log p_y``. On the colluding client the base
   probabilities are out-of-fold predictions (k-fold cross-fitting), the standard stacking protocol, so
   the meta-learner does not learn from base estimators that memorised its own training rows.
3. A gradient-boosted meta-classifier combines them: ``meta="hist_gradient_boosting"`` (the default,
   scikit-learn's ``HistGradientBoostingClassifier``, deterministic for a given seed) or ``meta="xgboost"``
   (XGBoost, as in [NIST-MIA]; not a dependency, so asking for it without it installed is an error). The
   choice never depends on what is installed.
4. Domain adaptation by fine-tuning the meta-learner on a target client's external non-members
   (``adapt="fine_tune"``, the default): boosting continues from the trained meta-classifier's log-odds
   ``F_0`` with ``fine_tune_rounds`` further regression trees of depth 2 fitted to the logistic loss's
   negative gradient ``y − σ(F)`` (Friedman's gradient boosting, learning rate ``fine_tune_rate``) on
   the target's external records (label 0) together with the colluding client's labelled records
   (their out-of-fold features), the two classes weighted equally. The colluding client's non-members
   stay in the set so that both clients' domains carry non-members: with members from the colluding
   client only, the trees learnt "which client" instead of "member". The colluding records' ``F_0`` is
   the meta-classifier's out-of-fold log-odds (cross-fitted like its threshold): it was trained on
   those very rows, and in-sample log-odds made them look more certainly members than any unseen
   member. The adapted decision threshold maximises balanced accuracy on cross-fitted scores of the
   fine-tuning set (each fold scored by trees fitted on the others). Without DP on the default
   genomics run these three choices moved the adapted ensemble's accuracy from 0.72 (TPR about 0.5)
   to 0.91. ``adapt="quantile"`` instead maps each feature through ``F_col⁻¹ ∘ F_target`` of the
   non-members' empirical quantiles (:class:`QuantileAligner`); ``adapt="none"`` skips the step.

The metrics and intervals are in :mod:`checker.crossval.mia_metrics`, the single-signal baselines
(loss threshold, LiRA) in :mod:`checker.crossval.mia_lira`.

>>> base_features(np.array([[0.2, 0.5, 0.3]]), np.array([2])).tolist()
[[0.3, 0.5, 0.2, 0.0, 0.0, 1.0]]
"""

from __future__ import annotations

import copy
import importlib
import warnings
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]  # threadpoolctl ships no type information

from checker.crossval.mia_metrics import best_threshold

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "ADAPTATIONS",
    "BASE_ESTIMATORS",
    "META_CLASSIFIERS",
    "AdaptedEnsemble",
    "EnsembleMIA",
    "FineTunedMeta",
    "QuantileAligner",
    "base_features",
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
    """Input of the base estimators (``n × 2C``): ``p_y``, the other ``C − 1`` probabilities in
    descending order, then ``one_hot(y)`` (module doc, step 1)."""
    rows = np.arange(len(y))
    onehot = np.zeros_like(proba)
    onehot[rows, y] = 1.0
    others = np.sort(np.where(onehot == 1.0, -np.inf, proba), axis=1)[:, ::-1][:, :-1]
    return np.concatenate([proba[rows, y][:, None], others, onehot], axis=1)


#: The meta-classifiers :class:`EnsembleMIA` accepts (its ``meta`` field); the first is the default.
META_CLASSIFIERS: tuple[str, ...] = ("hist_gradient_boosting", "xgboost")


def _make_base(name: str, seed: int) -> BaseEstimator:
    if name == "neural_network":
        return make_pipeline(
            StandardScaler(),
            MLPClassifier((32, 16), max_iter=500, alpha=1e-3, random_state=seed),
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


#: The domain adaptations :class:`EnsembleMIA` accepts (its ``adapt`` field); the first is the default.
ADAPTATIONS: tuple[str, ...] = ("fine_tune", "quantile", "none")


def _log_odds(model: BaseEstimator, feats: FloatArray) -> FloatArray:
    """The fitted binary classifier's log-odds of class 1 (from its probabilities, for any meta)."""
    p = np.clip(np.asarray(model.predict_proba(feats)[:, 1], dtype=float), 1e-12, 1 - 1e-12)
    return np.asarray(np.log(p) - np.log1p(-p), dtype=np.float64)


@dataclass
class FineTunedMeta:
    """A meta-classifier with boosting continued on new data (module doc, step 4): log-odds
    ``F(x) = F_0(x) + rate · Σ_t tree_t(x)``."""

    base: BaseEstimator
    rate: float
    trees: list[DecisionTreeRegressor] = field(default_factory=list)

    def fit(
        self, feats: FloatArray, label: IntArray, rounds: int, seed: int, start: FloatArray | None = None
    ) -> FineTunedMeta:
        """Fit the trees on ``feats``; ``start`` replaces ``F_0(feats)`` where it is finite (out-of-fold
        log-odds of rows the base classifier was trained on)."""
        weight = np.where(label == 1, 0.5 / max(int(label.sum()), 1), 0.5 / max(int((label == 0).sum()), 1))
        log_odds = _log_odds(self.base, feats)
        if start is not None:
            log_odds = np.where(np.isfinite(start), start, log_odds)
        for _ in range(rounds):
            gradient = label - 1.0 / (1.0 + np.exp(-log_odds))
            tree = DecisionTreeRegressor(max_depth=2, min_samples_leaf=5, random_state=seed)
            tree.fit(feats, gradient, sample_weight=weight)
            self.trees.append(tree)
            log_odds = log_odds + self.rate * tree.predict(feats)
        return self

    def predict_proba(self, feats: FloatArray, start: FloatArray | None = None) -> FloatArray:
        log_odds = _log_odds(self.base, feats)
        if start is not None:
            log_odds = np.where(np.isfinite(start), start, log_odds)
        for tree in self.trees:
            log_odds = log_odds + self.rate * tree.predict(feats)
        p = 1.0 / (1.0 + np.exp(-log_odds))
        return np.column_stack([1.0 - p, p])


@dataclass
class EnsembleMIA:
    """The stacking ensemble of [NIST-MIA]. ``fit`` on the colluding client, then ``adapted`` for a target
    client (with its external non-members) or ``scores`` directly; ``meta`` names the meta-classifier
    (:data:`META_CLASSIFIERS`), ``adapt`` the domain adaptation (:data:`ADAPTATIONS`, module doc)."""

    seed: int = 0
    folds: int = 3
    bases: tuple[str, ...] = BASE_ESTIMATORS
    adapt: str = ADAPTATIONS[0]
    meta: str = META_CLASSIFIERS[0]
    fine_tune_rounds: int = 30
    fine_tune_rate: float = 0.1

    def fit(self, proba: FloatArray, y: IntArray, member: NDArray[np.bool_]) -> EnsembleMIA:
        """Train bases (out-of-fold features for the meta-learner) and the meta-classifier."""
        if self.adapt not in ADAPTATIONS:
            raise ValueError(f"unknown adaptation {self.adapt!r}; expected one of {ADAPTATIONS}")
        _make_meta(self.meta, self.seed)  # an unknown or missing meta-classifier fails before any training
        # one BLAS/OpenMP thread: the boosting's OpenMP threads only add CPU time on small data, and
        # on a busy machine they made a fit 25× slower
        with warnings.catch_warnings(), threadpool_limits(1):
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
        p = np.clip(oof_meta, 1e-12, 1 - 1e-12)
        self.oof_log_odds_ = np.asarray(np.log(p) - np.log1p(-p), dtype=np.float64)
        return self

    def features(self, proba: FloatArray, y: IntArray) -> FloatArray:
        """The 8-dimensional features ``(P_1..P_7, ℓ_CE)`` of records scored by the trained bases."""
        xb = base_features(proba, y)
        cols = [m.predict_proba(xb)[:, 1] for m in self.models_]
        return np.column_stack([*cols, _cross_entropy(proba, y)])

    def adapted(self, external: tuple[FloatArray, IntArray]) -> AdaptedEnsemble:
        """The attack on one target client, given ``external = (proba_ext, y_ext)``: its model's outputs on
        that client's guaranteed non-members (module doc, step 4)."""
        with threadpool_limits(1):
            ext = self.features(*external)
            if self.adapt == "fine_tune":
                feats = np.concatenate([self.train_features_, ext])
                label = np.r_[self.train_member_.astype(np.int64), np.zeros(len(ext), np.int64)]
                start = np.r_[self.oof_log_odds_, np.full(len(ext), np.nan)]
                tuned = FineTunedMeta(copy.deepcopy(self.meta_), self.fine_tune_rate)
                tuned.fit(feats, label, self.fine_tune_rounds, self.seed, start)
                return AdaptedEnsemble(self, tuned, None, self._fine_tuned_threshold(feats, label, start))
        if self.adapt == "quantile":
            aligner = QuantileAligner(ext, self.train_features_[~self.train_member_])
            return AdaptedEnsemble(self, self.meta_, aligner, self.threshold_)
        return AdaptedEnsemble(self, self.meta_, None, self.threshold_)

    def _fine_tuned_threshold(self, feats: FloatArray, label: IntArray, start: FloatArray) -> float:
        """Threshold of the fine-tuned meta-classifier maximising balanced accuracy on cross-fitted
        scores of the fine-tuning set (each fold scored by trees fitted on the other folds): the trees
        separate their own training rows better than unseen records, and an in-sample threshold was
        far too strict."""
        skf = StratifiedKFold(n_splits=self.folds, shuffle=True, random_state=self.seed)
        oof = np.empty(len(label))
        for tr, te in skf.split(feats, label):
            part = FineTunedMeta(self.meta_, self.fine_tune_rate)
            part.fit(feats[tr], label[tr], self.fine_tune_rounds, self.seed, start[tr])
            oof[te] = part.predict_proba(feats[te], start[te])[:, 1]
        return best_threshold(oof, label.astype(bool))

    def scores(self, proba: FloatArray, y: IntArray) -> FloatArray:
        """Membership scores (meta-classifier probability) without domain adaptation."""
        with threadpool_limits(1):
            return np.asarray(self.meta_.predict_proba(self.features(proba, y))[:, 1], dtype=float)


@dataclass
class AdaptedEnsemble:
    """:class:`EnsembleMIA` adapted to one target client: its meta-classifier (fine-tuned or not), an
    optional quantile map of the features, and its decision ``threshold``."""

    ensemble: EnsembleMIA
    meta: BaseEstimator | FineTunedMeta
    aligner: QuantileAligner | None
    threshold: float

    def scores(self, proba: FloatArray, y: IntArray) -> FloatArray:
        with threadpool_limits(1):
            feats = self.ensemble.features(proba, y)
            if self.aligner is not None:
                feats = self.aligner.transform(feats)
            return np.asarray(self.meta.predict_proba(feats)[:, 1], dtype=float)
