"""MINE / H-MINE ([FL-MI]): backprop checked by finite differences, the DV bound at the optimal critic,
estimates on Gaussian cases with analytic MI, the covariance-sum baseline, and the FL trends."""

from __future__ import annotations

import math

import numpy as np
import pytest

from checker.app.leakage import fl_samples
from checker.crossval.mine import (
    HMineNet,
    MineNet,
    covariance_sum,
    dv_bound,
    estimate_mi,
    gaussian_batch_samples,
    gaussian_mi,
)


@pytest.mark.parametrize("cls", [MineNet, HMineNet])
def test_backprop_matches_finite_differences(cls: type) -> None:
    rng = np.random.default_rng(0)
    net = cls(3, 2, 2, rng)
    xb, g = rng.normal(size=(5, 3, 2)), rng.normal(size=(5, 2))
    dt = rng.normal(size=5)
    net.forward(xb, g)
    grads = net.grads(dt)
    params = net.params()
    for p, gp in zip(params, grads, strict=True):
        assert p.shape == gp.shape
        for idx in list(np.ndindex(p.shape))[:6]:
            old = p[idx]
            p[idx] = old + 1e-6
            up = float(dt @ net.forward(xb, g))
            p[idx] = old - 1e-6
            down = float(dt @ net.forward(xb, g))
            p[idx] = old
            assert gp[idx] == pytest.approx((up - down) / 2e-6, abs=1e-5)


def test_gaussian_mi_closed_form() -> None:
    # scalar channel: ½ log(1 + B a² / σ²)
    assert gaussian_mi(3, np.array([[0.5]]), 2.0) == pytest.approx(0.5 * math.log(1 + 3 * 0.25 / 4))
    # independent coordinates add up
    a = np.diag([1.0, 2.0])
    assert gaussian_mi(2, a, 1.0) == pytest.approx(0.5 * math.log(3) + 0.5 * math.log(9))


def test_dv_bound_at_the_optimal_critic_equals_the_mi() -> None:
    """T* = log p(g|x)/p(g) attains the DV bound: a check of dv_bound independent of any training."""
    rng = np.random.default_rng(1)
    b, a, s = 2, np.array([[1.0]]), 1.0
    xb, g = gaussian_batch_samples(200_000, b, a, s, rng)
    sx = xb.sum(axis=1)[:, 0]

    def t_star(sx_: np.ndarray, g_: np.ndarray) -> np.ndarray:
        var_m = b + s**2
        return -((g_ - sx_) ** 2) / (2 * s**2) + g_**2 / (2 * var_m) + 0.5 * math.log(var_m / s**2)

    perm = rng.permutation(len(g))
    est = dv_bound(t_star(sx, g[:, 0]), t_star(sx, g[perm, 0]))
    assert est == pytest.approx(gaussian_mi(b, a, s), abs=0.02)


def test_covariance_sum_matches_numpy_cov() -> None:
    rng = np.random.default_rng(2)
    xb, g = rng.normal(size=(50, 2, 3)), rng.normal(size=(50, 4))
    full = np.cov(np.concatenate([xb.reshape(50, -1), g], axis=1).T)
    assert covariance_sum(xb, g) == pytest.approx(full[:6, 6:].sum())


@pytest.mark.parametrize("kind", ["mine", "hmine"])
def test_estimates_approach_analytic_mi_on_gaussian_batch_of_one(kind: str) -> None:
    xb, g = gaussian_batch_samples(4000, 1, np.eye(2), 1.0, np.random.default_rng(0))
    est = estimate_mi(xb, g, kind, steps=500, seed=0).mi
    assert 0.75 * math.log(2) <= est <= 1.1 * math.log(2)


def test_hmine_embedding_is_linear_and_reaches_the_gaussian_mi_at_batch_four() -> None:
    """The MixModel sees the BlockModel's linear output (no ReLU on h_m): its input gradient passes to
    the block unmasked, and H-MINE gets within a quarter of I = log 5 at B = 4 (0.68 of it with a ReLU
    on the embedding)."""
    net = HMineNet(4, 2, 2, np.random.default_rng(0))
    xb, g = np.random.default_rng(1).normal(size=(6, 4, 2)), np.random.default_rng(2).normal(size=(6, 2))
    net.forward(xb, g)
    emb = net.block._cache[-1]  # the embedding: the block's last (linear) layer output
    assert (emb < 0).any()
    xb, g = gaussian_batch_samples(4000, 4, np.eye(2), 1.0, np.random.default_rng(0))
    assert estimate_mi(xb, g, "hmine", steps=500, seed=0).mi >= 0.75 * math.log(5)


def test_independent_variables_give_near_zero() -> None:
    rng = np.random.default_rng(3)
    xb, g = rng.normal(size=(3000, 2, 2)), rng.normal(size=(3000, 2))
    assert estimate_mi(xb, g, "hmine", steps=300, seed=0).mi < 0.05


@pytest.mark.slow
def test_mine_vs_hmine_as_batch_grows() -> None:
    """Both estimators stay below the analytic MI (DV is a lower bound, up to estimation noise) and grow
    with it; records the comparison of [FL-MI], Fig. 3 (see bench/bench_attacks.py for the figures)."""
    prev = {"mine": 0.0, "hmine": 0.0}
    for b in (1, 4, 8):
        xb, g = gaussian_batch_samples(6000, b, np.eye(2), 1.0, np.random.default_rng(b))
        truth = gaussian_mi(b, np.eye(2), 1.0)
        for kind in prev:
            est = estimate_mi(xb, g, kind, steps=1200, seed=0).mi
            assert 0.4 * truth <= est <= 1.1 * truth
            assert est > prev[kind]
            prev[kind] = est


def test_fl_leakage_falls_with_noise() -> None:
    ests = []
    for noise in (0.03, 1.0):
        xb, g = fl_samples(3000, batch=1, d=3, noise=noise, seed=0)
        ests.append(estimate_mi(xb, g, "hmine", steps=400, seed=0).mi)
    assert ests[0] > ests[1] + 0.3


def test_paper_networks_have_the_papers_sizes() -> None:
    """[FL-MI] Sec. 5: BlockModel 200-200-5 on (x_m, G), MixModel 500-1 on the B embeddings."""
    from checker.crossval.mine import PAPER_NETWORKS

    net = HMineNet(4, 2, 3, np.random.default_rng(0), block=PAPER_NETWORKS["block"],  # type: ignore[arg-type]
                   mix=PAPER_NETWORKS["mix"], lr=PAPER_NETWORKS["lr"], dtype=np.float32)  # type: ignore[arg-type]
    assert [w.shape for w in net.block.weights] == [(5, 200), (200, 200), (200, 5)]
    assert [w.shape for w in net.mix.weights] == [(20, 500), (500, 1)]
    assert net.block.lr == 5e-5 and all(p.dtype == np.float32 for p in net.params())


def test_early_stopping_and_clamping_are_reported() -> None:
    """Independent X and G: the validation DV bound stops improving, training stops before the step
    budget and keeps the best step; a negative held-out bound is reported as 0 with its raw value."""
    rng = np.random.default_rng(4)
    xb, g = rng.normal(size=(1200, 2, 2)), rng.normal(size=(1200, 2))
    r = estimate_mi(xb, g, "hmine", steps=3000, seed=0, patience=3, eval_every=50)
    assert r.steps < 3000 and 0 < r.best_step <= r.steps and len(r.validation) == r.steps // 50
    assert r.mi == max(0.0, r.raw) and r.clamped == (r.raw < 0)
    assert r.mi < 0.1


def test_seed_summary_matches_scipy_t_interval() -> None:
    from scipy import stats

    from checker.crossval.mia_metrics import seed_summary

    v = [0.3, 0.5, 0.45, 0.61, 0.2]
    s = seed_summary(v)
    lo, hi = stats.t.interval(0.95, len(v) - 1, loc=np.mean(v), scale=stats.sem(v))
    assert (s.low, s.high, s.median, s.n) == (pytest.approx(lo), pytest.approx(hi), 0.45, 5)
