"""The generated genomics data (allele frequencies, linkage decaying with distance, phenotype), the
interval functions of the MIA figures against closed forms, and LiRA's scores."""

from __future__ import annotations

import math

import numpy as np
import pytest

from checker.crossval.genomics import GenomicsConfig, generate, haplotype_correlation
from checker.crossval.mia_lira import lira_scores
from checker.crossval.mia_metrics import (
    auc_score,
    balanced_accuracy_interval,
    bootstrap_auc_interval,
    clopper_pearson,
    fpr_resolved,
)


def test_generator_is_deterministic_and_genotypes_are_012() -> None:
    cfg = GenomicsConfig(n_snps=200, n_causal=4)
    a, b = generate(cfg, [30, 20], seed=3), generate(cfg, [30, 20], seed=3)
    np.testing.assert_array_equal(a.genotypes, b.genotypes)
    np.testing.assert_array_equal(a.y, b.y)
    assert set(np.unique(a.genotypes).tolist()) <= {0, 1, 2}
    assert not np.array_equal(generate(cfg, [30, 20], seed=4).genotypes, a.genotypes)


def test_allele_frequencies_match_the_population_frequencies() -> None:
    data = generate(GenomicsConfig(n_snps=300, fst=0.05), [4000], seed=0)
    observed = data.genotypes.mean(axis=0) / 2.0
    expected = data.population_freq[0]
    sd = np.sqrt(expected * (1 - expected) / (2 * 4000))
    assert np.mean(np.abs(observed - expected) < 3 * sd) > 0.97
    assert data.maf.min() >= 0.02 and data.maf.max() <= 0.5


def test_linkage_correlation_decays_with_distance_as_the_model_says() -> None:
    r = 0.1
    data = generate(GenomicsConfig(n_snps=400, recombination=r, fst=1e-4), [3000], seed=1)
    g = data.genotypes.astype(float)
    p = data.population_freq[0]
    for distance in (1, 5, 20):
        loci = range(0, 400 - distance, 7)
        emp = [np.corrcoef(g[:, j], g[:, j + distance])[0, 1] for j in loci]
        theory = [haplotype_correlation(p[j], p[j + distance], distance, r) for j in loci]
        assert np.mean(emp) == pytest.approx(np.mean(theory), abs=0.02)
    near = np.mean([np.corrcoef(g[:, j], g[:, j + 1])[0, 1] for j in range(0, 399, 3)])
    far = np.mean([np.corrcoef(g[:, j], g[:, j + 50])[0, 1] for j in range(0, 349, 3)])
    assert near > 0.3 and abs(far) < 0.03


def test_phenotype_is_driven_by_the_causal_loci() -> None:
    data = generate(GenomicsConfig(n_snps=500, n_causal=5, heritability=0.9, n_classes=3), [3000], seed=2)
    assert np.bincount(data.y).min() > 600
    corr = np.array([abs(np.corrcoef(data.x[:, j], data.y)[0, 1]) for j in range(500)])
    non_causal = np.setdiff1d(np.arange(500), data.causal)
    assert corr[data.causal].max() > 5 * np.median(corr[non_causal])


def _binomial_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def test_clopper_pearson_against_the_binomial_tails() -> None:
    """The exact interval's ends solve P(X ≥ k; lo) = α/2 and P(X ≤ k; hi) = α/2; at k = 0 and k = n the
    closed forms 1 − (α/2)^(1/n) and (α/2)^(1/n)."""
    for k, n in [(1, 10), (7, 20), (50, 120)]:
        lo, hi = clopper_pearson(k, n)
        assert 1 - _binomial_cdf(k - 1, n, lo) == pytest.approx(0.025, abs=1e-9)
        assert _binomial_cdf(k, n, hi) == pytest.approx(0.025, abs=1e-9)
    assert clopper_pearson(0, 40)[1] == pytest.approx(1 - 0.025 ** (1 / 40))
    assert clopper_pearson(40, 40)[0] == pytest.approx(0.025 ** (1 / 40))
    lo, hi = balanced_accuracy_interval(30, 40, 35, 40)
    assert lo == pytest.approx((clopper_pearson(30, 40, 0.025)[0] + clopper_pearson(35, 40, 0.025)[0]) / 2)
    assert lo < (30 / 40 + 35 / 40) / 2 < hi


def test_auc_is_the_pairwise_mann_whitney_count_and_its_bootstrap_matches_hanley_mcneil() -> None:
    rng = np.random.default_rng(0)
    member = np.r_[np.ones(300, bool), np.zeros(400, bool)]
    scores = np.round(rng.normal(size=700) + 0.8 * member, 1)  # ties on purpose
    pos, neg = scores[member], scores[~member]
    pairs = (pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()
    auc = auc_score(scores, member)
    assert auc == pytest.approx(pairs)
    q1, q2 = auc / (2 - auc), 2 * auc**2 / (1 + auc)
    se = math.sqrt((auc * (1 - auc) + 299 * (q1 - auc**2) + 399 * (q2 - auc**2)) / (300 * 400))
    lo, hi = bootstrap_auc_interval(scores, member, np.random.default_rng(1), n_boot=400)
    assert lo < auc < hi
    assert (hi - lo) == pytest.approx(2 * 1.96 * se, rel=0.25)


def test_fpr_levels_need_enough_nonmembers() -> None:
    assert fpr_resolved(1000, 0.001) and not fpr_resolved(999, 0.001) and fpr_resolved(100, 0.01)


def test_lira_online_separates_in_from_out_and_offline_uses_out_only() -> None:
    rng = np.random.default_rng(2)
    n, m = 400, 16
    shadow_in = rng.random((m, n)) < 0.5
    shadow_in[0], shadow_in[1] = True, False  # every record has IN and OUT shadows
    level = rng.normal(size=n)
    shadow = level + 2.0 * shadow_in + 0.3 * rng.normal(size=(m, n))
    member = rng.random(n) < 0.5
    target = level + 2.0 * member + 0.3 * rng.normal(size=n)
    for online in (False, True):
        assert auc_score(lira_scores(target, shadow, shadow_in, online), member) > 0.99
    moved = np.where(shadow_in, shadow + 5.0, shadow)  # IN signals do not enter the offline score
    offline = lira_scores(target, shadow, shadow_in, False)
    np.testing.assert_allclose(lira_scores(target, moved, shadow_in, False), offline)
    with pytest.raises(ValueError, match="OUT shadow"):
        lira_scores(target, shadow, np.ones((m, n), bool), False)
