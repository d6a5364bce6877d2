"""flmodel.training: FedAvg/FedSGD simulation checked against finite differences, hand-computed steps
and [SRATTA]'s Proposition 3.2 (round update in the span of the activation set)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flmodel.training import (
    ClientSplit,
    Params,
    TrainingConfig,
    batch_gradient,
    cross_entropy,
    digits_dataset,
    init_params,
    predict_proba,
    sample_uses_bound,
    split_clients,
    tabular_dataset,
    train,
)

X, Y = digits_dataset()


def _loss(p: Params, x: np.ndarray, y: np.ndarray) -> float:
    return float(cross_entropy(predict_proba(p, x), y).mean())


@pytest.mark.parametrize("model", ["mlp", "logreg"])
def test_batch_gradient_matches_finite_differences(model: str) -> None:
    rng = np.random.default_rng(1)
    x, y = X[:7], Y[:7]
    p = init_params(model, 64, 10, 6, rng)
    g = batch_gradient(p, x, y)
    flat = np.concatenate([a.ravel() for a in p.arrays()])
    assert g.shape == flat.shape
    idx = rng.choice(len(flat), 25, replace=False)
    for i in idx:
        arrays = [a.copy() for a in p.arrays()]
        sizes = np.cumsum([a.size for a in arrays])
        j = int(np.searchsorted(sizes, i, side="right"))
        off = i - (sizes[j - 1] if j else 0)
        h = 1e-6
        vals = []
        for s in (h, -h):
            arrs = [a.copy() for a in arrays]
            arrs[j].ravel()[off] += s
            vals.append(_loss(Params(*arrs), x, y))
        assert g[i] == pytest.approx((vals[0] - vals[1]) / (2 * h), abs=1e-6)


def test_fedsgd_full_batch_single_client_is_gradient_descent() -> None:
    x, y = X[:30], Y[:30]
    split = ClientSplit((np.arange(30),), np.zeros(0, dtype=np.int64))
    cfg = TrainingConfig(model="logreg", algorithm="fedsgd", rounds=2, batch_size=30, lr=0.7, seed=3)
    run = train(cfg, x, y, split)
    p0, p1 = run.global_params[0], run.global_params[1]
    expected = np.concatenate([a.ravel() for a in p0.arrays()]) - 0.7 * batch_gradient(p0, x, y)
    got = np.concatenate([a.ravel() for a in p1.arrays()])
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_deterministic_under_seed_and_seed_matters() -> None:
    split = split_clients(Y, 3, 20, None, np.random.default_rng(0))
    cfg = TrainingConfig(hidden=10, rounds=3, seed=5)
    a = train(cfg, X, Y, split).first_layer_history()
    b = train(cfg, X, Y, split).first_layer_history()
    c = train(TrainingConfig(hidden=10, rounds=3, seed=6), X, Y, split).first_layer_history()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_global_update_is_weighted_sum_of_client_updates_and_sa_view() -> None:
    split = split_clients(Y, 4, 25, 0.5, np.random.default_rng(2))
    run = train(TrainingConfig(hidden=12, rounds=3, n_updates=3, seed=1), X, Y, split)
    hist = run.first_layer_history()
    for t in range(1, 4):
        np.testing.assert_allclose(hist[t] - hist[t - 1], run.client_updates[t - 1].sum(axis=0), atol=1e-12)
    assert set(run.observer_view()) == {"global_params"}
    open_run = train(TrainingConfig(hidden=12, rounds=1, secure_aggregation=False), X, Y, split)
    assert "client_updates" in open_run.observer_view()


def test_round_update_lies_in_span_of_activation_set() -> None:
    """[SRATTA], Prop. 3.2: ΔW̄^h_t = Σ_{x∈A^h_t} λ_x (x, 1); empty A ⇒ no update of neuron h."""
    split = split_clients(Y, 3, 30, None, np.random.default_rng(4))
    run = train(TrainingConfig(hidden=40, rounds=3, n_updates=2, batch_size=2, lr=0.5, seed=2), X, Y, split)
    hist = run.first_layer_history()
    checked = 0
    for t in range(1, 4):
        for h in range(40):
            dw = hist[t, h] - hist[t - 1, h]
            members = run.activation_sets(t, h)
            if len(members) == 0:
                assert np.all(dw == 0)
                continue
            basis = np.concatenate([X[members], np.ones((len(members), 1))], axis=1).T
            lam, *_ = np.linalg.lstsq(basis, dw, rcond=None)
            assert np.linalg.norm(basis @ lam - dw) <= 1e-9 * max(np.linalg.norm(dw), 1e-300)
            checked += 1
    assert checked > 20


def test_dirichlet_split_sizes_disjoint_and_heterogeneity() -> None:
    def mean_top_share(alpha: float | None) -> float:
        shares = []
        for s in range(5):
            sp = split_clients(Y, 5, 100, alpha, np.random.default_rng(s))
            allidx = np.concatenate(sp.clients)
            assert len(allidx) == len(set(allidx.tolist())) == 500
            assert len(np.intersect1d(allidx, sp.rest)) == 0 and len(allidx) + len(sp.rest) == len(Y)
            assert all(len(c) == 100 for c in sp.clients)
            shares += [np.bincount(Y[c], minlength=10).max() / 100 for c in sp.clients]
        return float(np.mean(shares))

    assert mean_top_share(0.1) > 0.5 > 0.2 > mean_top_share(1000.0)
    assert mean_top_share(None) < 0.2


def test_dp_sgd_clipping_bounds_each_step_and_noise_changes_result() -> None:
    x, y = X[:10], Y[:10]
    split = ClientSplit((np.arange(10),), np.zeros(0, dtype=np.int64))
    cfg = TrainingConfig(hidden=8, algorithm="fedsgd", rounds=5, batch_size=1, lr=0.5, clip=0.01, seed=0)
    run = train(cfg, x, y, split)
    for t in range(1, 6):
        a = np.concatenate([v.ravel() for v in run.global_params[t].arrays()])
        b = np.concatenate([v.ravel() for v in run.global_params[t - 1].arrays()])
        assert np.linalg.norm(a - b) <= 0.5 * 0.01 * (1 + 1e-9)
        assert np.linalg.norm(a - b) == pytest.approx(0.5 * 0.01, rel=1e-9)  # gradients are larger than C
    noisy = train(TrainingConfig(**{**cfg.__dict__, "noise_multiplier": 1.0}), x, y, split)
    assert noisy.gdp_mu() == pytest.approx(math.sqrt(noisy.max_sample_uses) / 1.0)
    assert run.gdp_mu() == math.inf


def test_sample_uses_bound_is_an_upper_bound() -> None:
    for bsz, steps, n in [(4, 5, 20), (8, 7, 20), (16, 3, 10), (3, 1, 50)]:
        split = ClientSplit((np.arange(n),), np.zeros(0, dtype=np.int64))
        cfg = TrainingConfig(hidden=4, rounds=3, n_updates=steps, batch_size=bsz, seed=1)
        run = train(cfg, X[:n], Y[:n], split)
        assert run.max_sample_uses <= sample_uses_bound(cfg, n)
    cfg = TrainingConfig(rounds=2, local_epochs=3, batch_size=8)
    assert sample_uses_bound(cfg, 40) == 6  # one use per epoch


def test_censoring_removes_small_local_activation_sets() -> None:
    split = split_clients(Y, 3, 40, None, np.random.default_rng(0))
    cfg = TrainingConfig(hidden=100, rounds=4, batch_size=2, lr=0.5, censor_threshold=2, seed=0)
    run = train(cfg, X, Y, split)
    assert run.censored > 0
    for rnd in run.activation:
        for act in rnd:
            counts = act.sum(axis=1)
            assert not np.any((counts >= 1) & (counts <= 2))


@pytest.mark.parametrize(
    "bad",
    [{"model": "cnn"}, {"algorithm": "fedprox"}, {"rounds": 0}, {"lr": 0.0}, {"noise_multiplier": 1.0},
     {"clip": -1.0}, {"censor_threshold": -1}, {"local_epochs": 0}],
)
def test_bad_config_is_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        TrainingConfig(**bad).validate()  # type: ignore[arg-type]


def test_tabular_dataset_balance() -> None:
    _, y = tabular_dataset(20000, 4, 0.2, np.random.default_rng(0))
    assert y.mean() == pytest.approx(0.2, abs=0.01)
