"""SRATTA ([SRATTA]): exact recovery of isolated samples, exact OMP, grouping that never mixes clients."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from checker.crossval.sratta import (
    ActivationSet,
    DiscretePrior,
    SrattaResult,
    evaluate,
    group_samples,
    omp_batch,
    recover_samples,
    sratta,
)
from flmodel.training import TrainingConfig, digits_dataset, split_clients, train

X, Y = digits_dataset()
PRIOR = DiscretePrior(0, 16, 1.0 / 16.0)


def _keys(a: np.ndarray) -> set[bytes]:
    return {row.tobytes() for row in np.rint(a * 16).astype(np.int64)}


def test_constructed_single_sample_sets_are_recovered_exactly() -> None:
    """Hand-built history: neuron h moves by λ_h (x_h, 1) for one digit x_h per neuron (|A^h_t| = 1),
    other neurons move by mixtures of two digits, which the prior must reject."""
    rng = np.random.default_rng(0)
    hidden, d = 12, 64
    w0 = rng.normal(size=(hidden, d + 1))
    singles = rng.choice(len(X), 6, replace=False)
    delta = np.zeros((hidden, d + 1))
    for h, i in enumerate(singles):
        delta[h] = rng.uniform(-1e-3, -1e-5) * np.r_[X[i], 1.0]
    for h in range(6, hidden):
        i, j = rng.choice(len(X), 2, replace=False)
        delta[h] = 1e-4 * np.r_[X[i], 1.0] + 3.7e-4 * np.r_[X[j], 1.0]
    history = np.stack([w0, w0 + delta])
    rec, pairs = recover_samples(history, PRIOR)
    assert _keys(rec) == _keys(X[singles])
    assert len(rec) == 6 and sorted(h for _, h in pairs) == list(range(6))
    # exact: the recovered vector equals the digit's pixels to the last bit after snapping
    for i in singles:
        assert any(np.array_equal(r, X[i]) for r in rec)


def test_prior_rejects_off_grid_and_out_of_range() -> None:
    ok = np.array([[0.0, 1.0, 0.5]])
    off = np.array([[0.0, 1.0, 0.51]])
    big = np.array([[0.0, 17 / 16, 0.5]])
    assert PRIOR.contains(ok).all() and not PRIOR.contains(off).any() and not PRIOR.contains(big).any()


def test_omp_recovers_sparse_combinations_and_agrees_with_brute_force() -> None:
    rng = np.random.default_rng(3)
    dic = rng.normal(size=(30, 15))
    targets, supports = [], []
    for _ in range(40):
        k = int(rng.integers(1, 4))
        sup = np.sort(rng.choice(15, k, replace=False))
        targets.append(dic[:, sup] @ (rng.uniform(0.5, 2.0, k) * rng.choice([-1, 1], k)))
        supports.append(sup)
    dense = dic @ rng.normal(size=15)  # needs all 15 atoms: no solution with <= 4
    sols = omp_batch(dic, np.column_stack([*targets, dense]), n_max=4)
    for sup, sol in zip(supports, sols[:-1], strict=True):
        assert sol is not None and sorted(sol[0].tolist()) == sup.tolist()
    assert sols[-1] is None
    # brute force over supports of size <= 2 on a small instance: OMP finds a fit iff one exists
    small = rng.normal(size=(8, 6))
    ys = np.column_stack([small[:, [1, 4]] @ [1.0, -2.0], small[:, [0]] @ [3.0], rng.normal(size=8)])
    got = omp_batch(small, ys, n_max=2)
    for col, sol in zip(ys.T, got, strict=True):
        exists = any(
            np.linalg.norm(small[:, list(s)] @ np.linalg.lstsq(small[:, list(s)], col, rcond=None)[0] - col)
            < 1e-9 * np.linalg.norm(col)
            for r in (1, 2) for s in itertools.combinations(range(6), r)
        )
        assert (sol is not None) == exists


def _run(seed: int, n_clients: int = 3, per_client: int = 40, alpha: float | None = None, **kw: object):
    split = split_clients(Y, n_clients, per_client, alpha, np.random.default_rng(seed))
    cfg = TrainingConfig(**{"hidden": 200, "rounds": 8, "n_updates": 3, "batch_size": 2, "lr": 1.0,
                            "seed": seed, **kw})  # type: ignore[arg-type]
    run = train(cfg, X, Y, split)
    res = sratta(run.first_layer_history(), PRIOR, n_max=20, n_clients=n_clients, seed=seed)
    return split, run, res


@pytest.mark.parametrize("seed", [0, 1])
def test_end_to_end_isolated_samples_recovered_sets_exact_and_grouping_pure(seed: int) -> None:
    split, run, res = _run(seed)
    owner = split.owner(len(Y))
    lookup = {row.tobytes(): i for i, row in enumerate(np.rint(X * 16).astype(np.int64))}
    rec_idx = np.array([lookup[r.tobytes()] for r in np.rint(res.recovered * 16).astype(np.int64)])
    assert np.all(owner[rec_idx] >= 0)  # no false sample (all recovered are client samples)
    # Prop. 3.3: every true singleton activation set is recovered (exactly: integer pixels)
    singles = set()
    for t in range(1, run.config.rounds + 1):
        for h in range(run.config.hidden):
            a = run.activation_sets(t, h)
            if len(a) == 1:
                singles.add(int(a[0]))
    assert singles and singles <= set(rec_idx.tolist())
    # Step 2: every reconstructed activation set is the true one
    for s in res.sets:
        assert sorted(rec_idx[s.members].tolist()) == run.activation_sets(s.t, s.h).tolist()
    # Step 3: no component joins samples of different clients (Cor. 3.6)
    for c in np.unique(res.components):
        assert len(np.unique(owner[rec_idx[res.components == c]])) == 1
    m = evaluate(res, [X[i] for i in split.clients], PRIOR)
    assert m.n_false == 0 and m.n_mixed_components == 0 and m.rho_recovered > 0.1
    assert m.rho_matched > 0  # the grouping found edges


def test_rule_two_propagates_through_components() -> None:
    """Set 1: Ã_0 = {0} ⇒ edge 0–1 (rule i). Set 2: Ã_0 = {0, 1} inside one component ⇒ edges to 2
    (rule ii). Set 3: Ã_0 = {3, 4} not in one component ⇒ nothing."""
    def aset(members: list[int], initial: list[int]) -> ActivationSet:
        return ActivationSet(1, 0, np.array(members), np.ones(len(members)), np.array(initial))

    sets = [aset([0, 1, 2], [0, 1]), aset([3, 4, 5], [3, 4]), aset([0, 1], [0])]
    comps, _, sweeps = group_samples(6, sets)
    assert comps[0] == comps[1] == comps[2]
    assert len({comps[3], comps[4], comps[5]}) == 3 and comps[3] != comps[0]
    assert sweeps >= 2


def test_evaluate_perfect_grouping() -> None:
    clients = [X[:3], X[10:13]]
    rec = np.concatenate(clients)
    res = SrattaResult(rec, [], np.array([0, 0, 0, 1, 1, 1]), np.array([0, 0, 0, 1, 1, 1]), nx.Graph())
    m = evaluate(res, clients, PRIOR)
    assert (m.rho_recovered, m.rho_matched, m.rho_component, m.v_measure) == (1.0, 1.0, 1.0, 1.0)


def test_censoring_defence_reduces_recovery() -> None:
    split, _, res = _run(0)
    _, _, res_c = _run(0, censor_threshold=3)
    clients = [X[i] for i in split.clients]
    assert evaluate(res_c, clients, PRIOR).rho_recovered < evaluate(res, clients, PRIOR).rho_recovered


def test_dp_noise_defeats_recovery() -> None:
    _, _, res = _run(0, clip=1.0, noise_multiplier=0.5)
    assert len(res.recovered) == 0


def test_omp_does_not_absorb_a_small_contribution_into_a_wrong_atom() -> None:
    """A real contribution at 1e-7 of the target (a sample missing from the dictionary) is below a
    tolerance relative to ‖y‖ (1e-7) but far above round-off: with an absolute tolerance the fit fails
    instead of returning a wrong set; atoms below margin × tolerance make the fit ambiguous (None)."""
    rng = np.random.default_rng(5)
    dic = rng.normal(size=(40, 6))
    missing = rng.normal(size=40)
    y = dic[:, [0, 1]] @ [1.0, -0.5] + 1e-7 * missing
    assert omp_batch(dic, y[:, None], n_max=5, rtol=1e-7)[0] is not None  # the old, relative test
    assert omp_batch(dic, y[:, None], n_max=5, atol=np.array([1e-12]))[0] is None
    exact = dic[:, [0, 1]] @ [1.0, -0.5]
    sol = omp_batch(dic, exact[:, None], n_max=5, atol=np.array([1e-12]), margin=100.0)[0]
    assert sol is not None and sorted(sol[0].tolist()) == [0, 1]
    tiny = dic[:, [0, 1]] @ [1.0, 1e-11]
    assert omp_batch(dic, tiny[:, None], n_max=5, atol=np.array([1e-12]), margin=100.0)[0] is None


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_no_mixed_group_under_strong_heterogeneity(seed: int) -> None:
    """[SRATTA] Cor. 3.6: components never join clients, also at Dirichlet α = 0.1 where clients'
    models saturate and leave contributions near round-off (seed 0 gave 3 mixed groups before)."""
    split = split_clients(Y, 5, 100, 0.1, np.random.default_rng(seed))
    cfg = TrainingConfig(hidden=1000, rounds=20, n_updates=5, batch_size=4, lr=1.0, seed=seed)
    run = train(cfg, X, Y, split)
    res = sratta(run.first_layer_history(), PRIOR, n_max=20, n_clients=5, seed=seed)
    m = evaluate(res, [X[i] for i in split.clients], PRIOR)
    assert m.n_mixed_components == 0 and m.homogeneity == pytest.approx(1.0)
    assert m.rho_matched > 0.1
