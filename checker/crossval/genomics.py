"""A generated genomics-like data set for the membership-inference experiments ([NIST-MIA]); nothing is
downloaded, everything follows from a seed.

The generative model, for ``d`` SNPs (loci ``j = 0..d−1`` in genome order), populations ``k`` (one per
client) and ``C`` phenotype classes:

1. **Minor-allele frequencies.** ``q_j = q_min + (0.5 − q_min) · B_j`` with ``B_j ~ Beta(a, b)``
   (``maf_beta = (a, b)``; the default ``(0.8, 2.0)`` makes rare variants common, as in real panels).
2. **Populations** (Balding–Nichols with fixation index ``F = fst``): population ``k`` has allele
   frequency ``p_kj ~ Beta(q_j (1−F)/F, (1−q_j)(1−F)/F)`` (``F = 0``: ``p_kj = q_j``), clipped to
   ``[0.005, 0.995]``. Clients therefore differ slightly in distribution, which is what the attack's
   domain adaptation has to absorb.
3. **Haplotypes with linkage** — a Markov chain along the genome. Each haplotype carries a latent
   ancestry value ``u ∈ (0, 1)``: ``u_0 ~ U(0, 1)``; between loci ``j−1`` and ``j`` a recombination
   happens with probability ``r`` (``recombination``) and redraws ``u_j ~ U(0, 1)``, otherwise
   ``u_j = u_{j−1}``. The allele is ``h_j = 1[u_j < p_kj]``. So ``P(h_j = 1) = p_kj`` exactly, and two
   loci ``t`` apart share their ancestry with probability ``(1−r)^t``:
   ``Cov(h_j, h_{j+t}) = (1−r)^t (min(p_j, p_{j+t}) − p_j p_{j+t})`` — linkage decays geometrically
   with distance (:func:`haplotype_correlation`).
4. **Genotypes** ``g_j = h_j + h'_j ∈ {0, 1, 2}`` (two independent haplotypes, Hardy–Weinberg per locus).
5. **Phenotype.** ``n_causal`` causal loci drawn uniformly without replacement, effects
   ``β_c ~ N(0, 1)``; genetic value ``G = Σ_c β_c z_c / ‖β‖`` with ``z_j = (g_j − 2q_j)/√(2 q_j (1−q_j))``
   (about unit variance); liability ``L = √h² · G + √(1−h²) · ε``, ``ε ~ N(0, 1)``
   (``heritability = h²``); class ``y = #{m : L > Φ⁻¹(m/C), m = 1..C−1}`` (about balanced classes).

The model input is the standardised genotype matrix ``z`` (``n × d``, float64).

>>> data = generate(GenomicsConfig(n_snps=50, n_causal=3), [4, 3], seed=1)
>>> data.x.shape, data.genotypes.dtype, sorted(set(data.genotypes.ravel().tolist())) <= [0, 1, 2]
((7, 50), dtype('int8'), True)
>>> data.population.tolist()
[0, 0, 0, 0, 1, 1, 1]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = ["GenomicsConfig", "GenomicsData", "generate", "haplotype_correlation"]


@dataclass(frozen=True)
class GenomicsConfig:
    """Parameters of the generative model (module docstring)."""

    n_snps: int = 2000
    n_classes: int = 4
    n_causal: int = 20
    heritability: float = 0.7
    recombination: float = 0.05
    maf_beta: tuple[float, float] = (0.8, 2.0)
    maf_min: float = 0.02
    fst: float = 0.02

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field."""
        if self.n_snps < 1 or self.n_classes < 2:
            raise ValueError("n_snps must be >= 1 and n_classes >= 2")
        if not 1 <= self.n_causal <= self.n_snps:
            raise ValueError(f"n_causal must be in 1..n_snps ({self.n_snps}), got {self.n_causal}")
        if not 0.0 <= self.heritability <= 1.0:
            raise ValueError(f"heritability must be in [0, 1], got {self.heritability}")
        if not 0.0 <= self.recombination <= 1.0:
            raise ValueError(f"recombination must be in [0, 1], got {self.recombination}")
        if min(self.maf_beta) <= 0 or not 0.0 < self.maf_min < 0.5:
            raise ValueError("maf_beta must be positive and maf_min in (0, 0.5)")
        if not 0.0 <= self.fst < 1.0:
            raise ValueError(f"fst must be in [0, 1), got {self.fst}")


@dataclass(frozen=True)
class GenomicsData:
    """Samples of :func:`generate`: model input ``x`` (standardised genotypes), ``genotypes`` in
    {0, 1, 2}, class ``y``, the ``population`` of each sample, and the generator's truths (base
    frequencies ``maf``, per-population frequencies ``population_freq``, ``causal`` loci, ``effects``)."""

    x: FloatArray
    genotypes: NDArray[np.int8]
    y: IntArray
    population: IntArray
    maf: FloatArray
    population_freq: FloatArray
    causal: IntArray
    effects: FloatArray


def _haplotypes(freq: FloatArray, n: int, recombination: float, rng: np.random.Generator) -> NDArray[np.int8]:
    """``n`` haplotypes (``n × d`` in {0, 1}) of the latent-ancestry Markov chain (module doc, step 3)."""
    d = len(freq)
    out = np.empty((n, d), dtype=np.int8)
    ancestry = rng.random(n)
    for j in range(d):
        if j:
            redraw = rng.random(n) < recombination
            ancestry = np.where(redraw, rng.random(n), ancestry)
        out[:, j] = ancestry < freq[j]
    return out


def generate(config: GenomicsConfig, sizes: Sequence[int], seed: int) -> GenomicsData:
    """``sizes[k]`` samples from population ``k`` (rows grouped by population, in order)."""
    config.validate()
    if not sizes or min(sizes) < 0:
        raise ValueError("sizes must be a non-empty list of counts >= 0")
    rng = np.random.default_rng(seed)
    a, b = config.maf_beta
    maf = config.maf_min + (0.5 - config.maf_min) * rng.beta(a, b, config.n_snps)
    if config.fst > 0:
        scale = (1.0 - config.fst) / config.fst
        freq = rng.beta(maf * scale, (1.0 - maf) * scale, (len(sizes), config.n_snps))
    else:
        freq = np.tile(maf, (len(sizes), 1))
    freq = np.clip(freq, 0.005, 0.995)
    causal = np.sort(rng.choice(config.n_snps, config.n_causal, replace=False)).astype(np.int64)
    effects = rng.standard_normal(config.n_causal)
    blocks = []
    for k, n in enumerate(sizes):
        first = _haplotypes(freq[k], n, config.recombination, rng)
        blocks.append(first + _haplotypes(freq[k], n, config.recombination, rng))
    genotypes = np.concatenate(blocks).astype(np.int8)
    x = (genotypes - 2.0 * maf) / np.sqrt(2.0 * maf * (1.0 - maf))
    genetic = x[:, causal] @ effects / max(float(np.linalg.norm(effects)), 1e-12)
    h2 = config.heritability
    liability = math.sqrt(h2) * genetic + math.sqrt(1.0 - h2) * rng.standard_normal(len(x))
    cuts = stats.norm.ppf(np.arange(1, config.n_classes) / config.n_classes)
    y = np.searchsorted(cuts, liability).astype(np.int64)
    population = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    return GenomicsData(x, genotypes, y, population, maf, freq, causal, effects)


def haplotype_correlation(p: float, q: float, distance: int, recombination: float) -> float:
    """Correlation of the alleles of one haplotype at two loci ``distance`` apart with frequencies ``p``,
    ``q`` under the model (module doc, step 3).

    >>> haplotype_correlation(0.3, 0.3, 0, 0.05), round(haplotype_correlation(0.3, 0.3, 10, 0.05), 4)
    (1.0, 0.5987)
    """
    share = (1.0 - recombination) ** distance
    return share * (min(p, q) - p * q) / math.sqrt(p * (1 - p) * q * (1 - q))
