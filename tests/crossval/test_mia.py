"""Membership inference ([NIST-MIA]): metrics against sklearn / scipy, the DP audit against the Gaussian
trade-off curve, the ensemble on a constructed multi-signal case, and end-to-end runs on the generated
genomics data (ε = 10 within the DP bound, ε = ∞ better than random, byte-identical JSON)."""

from __future__ import annotations

import importlib
import math
import sys
import types
from typing import Any

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_curve

from checker.app.attacks import epsilon_of_mu, mu_for_epsilon, run_mia
from checker.crossval import mia
from checker.crossval.mia import META_CLASSIFIERS, EnsembleMIA, QuantileAligner, base_features
from checker.crossval.mia_lira import loss_scores
from checker.crossval.mia_metrics import attack_metrics, clopper_pearson, dp_consistency, tpr_at_fpr
from checker.render import dumps


def test_tpr_at_fpr_matches_sklearn_roc_curve() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        member = rng.random(60) < 0.5
        scores = np.round(rng.normal(size=60) + member, 1)  # ties on purpose
        fpr, tpr, _ = roc_curve(member.astype(int), scores, drop_intermediate=False)
        for level in (0.0, 0.01, 0.1, 0.3):
            assert tpr_at_fpr(scores, member, level) == pytest.approx(float(tpr[fpr <= level].max()))


def test_clopper_pearson_matches_scipy() -> None:
    for k, n in [(0, 10), (3, 10), (10, 10), (17, 200)]:
        ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        lo, hi = clopper_pearson(k, n, 0.05)
        assert (lo, hi) == pytest.approx((ci.low, ci.high))


def test_dp_audit_accepts_the_exact_gaussian_pair_and_flags_a_violation() -> None:
    rng = np.random.default_rng(1)
    mu = 1.0
    n = 3000
    scores = np.r_[rng.normal(mu, 1, n), rng.normal(0, 1, n)]  # the optimal test of a μ-GDP pair
    member = np.r_[np.ones(n, bool), np.zeros(n, bool)]
    assert all(c.consistent for c in dp_consistency(scores, member, mu))
    # a test far better than μ = 1 allows: members and non-members separated by 4 standard deviations
    strong = np.r_[rng.normal(4, 1, n), rng.normal(0, 1, n)]
    checks = dp_consistency(strong, member, mu)
    assert not all(c.consistent for c in checks)
    assert all(c.consistent for c in dp_consistency(strong, member, math.inf))


def test_attack_metrics_on_perfect_and_random_scores() -> None:
    member = np.r_[np.ones(500, bool), np.zeros(500, bool)]
    perfect = attack_metrics(member.astype(float), member, 0.5)
    assert perfect.accuracy == perfect.auc == perfect.tpr_at_0_1pct_fpr == 1.0
    rnd = attack_metrics(np.random.default_rng(0).random(1000), member, 0.5)
    assert abs(rnd.auc - 0.5) < 0.06 and abs(rnd.accuracy - 0.5) < 0.06


def test_quantile_aligner_maps_distributions() -> None:
    rng = np.random.default_rng(2)
    src, ref = rng.normal(3, 2, (4000, 2)), rng.normal(0, 1, (4000, 2))
    out = QuantileAligner(src, ref).transform(rng.normal(3, 2, (4000, 2)))
    assert np.abs(out.mean(axis=0)).max() < 0.1 and np.abs(out.std(axis=0) - 1).max() < 0.1


def _multisignal(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Constructed outputs where the loss carries no membership signal but the shape of the output
    distribution does: p_y ~ U(0.3, 0.9) for everyone; members put the rest of the mass on one wrong
    class, non-members spread it evenly."""
    c = 5
    y = rng.integers(0, c, n)
    member = rng.random(n) < 0.5
    py = rng.uniform(0.3, 0.9, n)
    proba = np.zeros((n, c))
    for i in range(n):
        others = [k for k in range(c) if k != y[i]]
        if member[i]:
            proba[i, others[0]] = 1 - py[i]
        else:
            proba[i, others] = (1 - py[i]) / (c - 1)
        proba[i, y[i]] = py[i]
    return proba, y, member


def test_ensemble_combines_signals_that_the_loss_threshold_misses() -> None:
    rng = np.random.default_rng(3)
    p_tr, y_tr, m_tr = _multisignal(200, rng)
    p_te, y_te, m_te = _multisignal(300, rng)
    ens = EnsembleMIA(seed=0).fit(p_tr, y_tr, m_tr)
    auc_ens = attack_metrics(ens.scores(p_te, y_te), m_te, ens.threshold_).auc
    external = (p_te[~m_te][:50], y_te[~m_te][:50])
    tuned = EnsembleMIA(seed=0, adapt="fine_tune").fit(p_tr, y_tr, m_tr).adapted(external)
    assert attack_metrics(tuned.scores(p_te, y_te), m_te, tuned.threshold).auc > 0.85
    auc_loss = attack_metrics(loss_scores(p_te, y_te), m_te, 0.0).auc
    assert abs(auc_loss - 0.5) < 0.1 and auc_ens > 0.9
    assert ens.features(p_te, y_te).shape == (300, 8)
    assert base_features(p_te, y_te).shape == (300, 10)
    assert np.array_equal(base_features(p_te, y_te)[:, 0], p_te[np.arange(300), y_te])  # p_y first


def test_meta_classifier_default_is_deterministic_hist_gradient_boosting() -> None:
    rng = np.random.default_rng(4)
    p_tr, y_tr, m_tr = _multisignal(120, rng)
    p_te, y_te, _ = _multisignal(80, rng)
    assert EnsembleMIA().meta == META_CLASSIFIERS[0] == "hist_gradient_boosting"
    first = EnsembleMIA(seed=1).fit(p_tr, y_tr, m_tr)
    again = EnsembleMIA(seed=1).fit(p_tr, y_tr, m_tr)
    assert type(first.meta_).__name__ == "HistGradientBoostingClassifier"
    np.testing.assert_array_equal(first.scores(p_te, y_te), again.scores(p_te, y_te))
    assert first.threshold_ == again.threshold_


def test_results_do_not_depend_on_what_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """An importable xgboost (here a stand-in module that would fail if used) changes nothing unless
    meta="xgboost" is asked for."""
    rng = np.random.default_rng(5)
    p_tr, y_tr, m_tr = _multisignal(100, rng)
    p_te, y_te, _ = _multisignal(60, rng)
    without = EnsembleMIA(seed=2).fit(p_tr, y_tr, m_tr).scores(p_te, y_te)
    stand_in = types.ModuleType("xgboost")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("xgboost used although not asked for")

    stand_in.XGBClassifier = refuse  # type: ignore[attr-defined]  # a module attribute set at run time
    monkeypatch.setitem(sys.modules, "xgboost", stand_in)
    with_xgb = EnsembleMIA(seed=2).fit(p_tr, y_tr, m_tr).scores(p_te, y_te)
    np.testing.assert_array_equal(without, with_xgb)
    with pytest.raises(AssertionError, match="not asked for"):
        EnsembleMIA(seed=2, meta="xgboost").fit(p_tr, y_tr, m_tr)


def test_xgboost_when_not_installed_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = importlib.import_module

    def no_xgboost(name: str, package: str | None = None) -> types.ModuleType:
        if name == "xgboost":
            raise ModuleNotFoundError("No module named 'xgboost'")
        return real_import(name, package)

    monkeypatch.setattr(mia.importlib, "import_module", no_xgboost)
    p, y, m = _multisignal(40, np.random.default_rng(6))
    with pytest.raises(ValueError, match="meta='xgboost' needs the xgboost package"):
        EnsembleMIA(meta="xgboost").fit(p, y, m)
    with pytest.raises(ValueError, match="unknown meta-classifier 'lightgbm'"):
        EnsembleMIA(meta="lightgbm").fit(p, y, m)


def test_epsilon_calibration_round_trip() -> None:
    for eps in (0.5, 10.0, 200.0):
        mu = mu_for_epsilon(eps, 1e-5)
        assert epsilon_of_mu(mu, 1e-5) == pytest.approx(eps, rel=1e-6)
    assert mu_for_epsilon(math.inf, 1e-5) == math.inf and epsilon_of_mu(math.inf, 1e-5) == math.inf


SMALL: dict[str, Any] = {
    "n_clients": 3, "per_client": 60, "n_snps": 300, "challenge_nonmembers": 200, "n_test": 60, "n_boot": 50,
}


def test_end_to_end_at_eps_10_is_consistent_with_the_dp_bound() -> None:
    """At ε = 10 (δ = 1e-5) every attack's TPR at every audited FPR level stays under the Gaussian
    trade-off bound of the training's μ (Clopper–Pearson slack), and the formal ε is at most the target."""
    res = run_mia(epsilons=(10.0,), **SMALL)
    row = res["rows"][0]
    assert row["epsilon"] <= 10.0 + 1e-6 and math.isfinite(row["mu"])
    for name, audit in row["dp_audit"].items():
        assert audit["consistent"], name
        assert len(audit["points"]) == 5


def test_ensemble_without_dp_beats_random_and_is_deterministic() -> None:
    """Without DP the overfitted targets leak: the ensemble's AUC interval lies above 0.5 with a margin
    (lower end > 0.6), utility and intervals are reported, and the same seed gives byte-identical JSON."""
    res = run_mia(epsilons=(math.inf,), **SMALL)
    row = res["rows"][0]
    assert row["interval"]["ensemble"]["auc"][0] > 0.6
    lo, hi = row["interval"]["ensemble"]["accuracy"]
    assert lo <= row["attacks"]["ensemble"]["accuracy"] <= hi
    # the adapted threshold is cross-fitted: without DP it costs little accuracy against the unadapted
    # ensemble (an in-sample threshold had given 0.72 against 0.91 at the defaults)
    accuracy = {name: row["attacks"][name]["accuracy"] for name in ("ensemble", "ensemble_no_adapt")}
    assert abs(accuracy["ensemble"] - accuracy["ensemble_no_adapt"]) < 0.05
    assert row["utility"]["train_accuracy"] > row["utility"]["test_accuracy"]
    assert res["meta_classifier"] == "hist_gradient_boosting"
    assert set(row["attacks"]) == {"ensemble", "ensemble_no_adapt", "loss", "lira", "lira_offline",
                                   "lira_online"}
    assert dumps(run_mia(epsilons=(math.inf,), **SMALL)) == dumps(res)
