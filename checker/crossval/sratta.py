"""SRATTA — sample re-attribution attack of secure aggregation ([SRATTA] Sec. 3.2, Steps 1–3).

Input: only what an observer of secure aggregation sees, the extended first-layer weights
``W̄_t = (W_t, b_t)`` of the global model at every round ``t = 0..T`` (shape ``(T+1) × H × (d+1)``).
The round updates ``ΔW̄^h_t = W̄^h_t − W̄^h_{t−1}`` decompose on the round-level activation set
([SRATTA] Prop. 3.2): ``ΔW̄^h_t = Σ_{x ∈ A^h_t} λ_x (x, 1)``.

* **Step 1 (sample recovery)**: the ratios ``r^h_t = ΔW^h_t / Δb^h_t`` (skipping ``Δb^h_t = 0``) that lie
  in the data prior ``P`` form the recovered set ``R`` (eq. 7); when ``A^h_t = {x}`` the ratio is ``x``
  exactly (Prop. 3.3).
* **Step 2 (small activation sets)**: for every ``(t, h)`` find ``N ≤ N_max`` samples of ``R`` and
  non-zero ``λ`` with ``ΔW̄^h_t = Σ λ_r (x_r, 1)`` (eq. 8) by orthogonal matching pursuit (Mallat & Zhang
  1993); the pairs solved exactly form ``L_rec`` with reconstructed sets ``Ã^h_t``.
* **Step 3 (grouping)**: ``Ã^h_{t,0} = {x ∈ Ã^h_t : W^h_{t−1}·x + b^h_{t−1} > 0}`` are the samples that
  activate ``h`` at the start of round ``t``; a client contributing to ``A^h_t`` has its first activating
  sample there (Thm. 3.5). Corollary 3.6: (i) if ``|Ã^h_{t,0}| = 1`` all of ``Ã^h_t`` is one client's;
  (ii) if ``Ã^h_{t,0}`` lies inside one connected component, all of ``Ã^h_t`` is that client's. Edges are
  added by (i), then by (ii) until no edge is added; clients = connected components (networkx).

Metrics (our reading of [SRATTA] Sec. 4, whose formulas are not in the paper's text):
``rho_recovered`` = share of all client samples recovered; ``rho_matched`` = share of recovered samples
that lie in a component of size ≥ 2; ``rho_component`` = mean over clients of (largest component made of
that client's samples) / (that client's recovered samples), 0 for a client with nothing recovered;
``v_measure`` = V-measure (Rosenberg &
Hirschberg 2007, ``sklearn.metrics.v_measure_score``) of the components against the true clients on
the recovered samples. Baseline: K-means with K = number of clients on ``R`` ([SRATTA] Sec. 4.2).
``singleton_v_measure`` is the V-measure of the partition that leaves every recovered sample alone: it
is not 0 (homogeneity is 1), so SRATTA's grouping gain is ``v_measure − singleton_v_measure``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
from numpy.typing import NDArray
from sklearn.cluster import KMeans
from sklearn.metrics import homogeneity_completeness_v_measure, v_measure_score

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

__all__ = [
    "DiscretePrior",
    "SrattaMetrics",
    "SrattaResult",
    "evaluate",
    "group_samples",
    "kmeans_baseline",
    "omp_batch",
    "reconstruct_activation_sets",
    "recover_samples",
    "sratta",
]


@dataclass(frozen=True)
class DiscretePrior:
    """Data prior of [SRATTA] Example 1: every feature equals ``scale·v`` for an integer
    ``v ∈ {low, …, high}`` (up to ``tol`` in units of ``v``). The digits data: ``low=0, high=16``."""

    low: int = 0
    high: int = 16
    scale: float = 1.0 / 16.0
    tol: float = 1e-6

    def contains(self, r: FloatArray) -> NDArray[np.bool_]:
        """Row-wise membership of ``r`` (``m × d``) in the prior."""
        v = r / self.scale
        q = np.rint(v)
        return np.all((np.abs(v - q) <= self.tol) & (q >= self.low) & (q <= self.high), axis=1)

    def snap(self, r: FloatArray) -> FloatArray:
        """Round to the prior's grid (``scale·round(r/scale)``)."""
        return np.rint(r / self.scale) * self.scale


def recover_samples(
    history: FloatArray, prior: DiscretePrior
) -> tuple[FloatArray, list[tuple[int, int]]]:
    """Step 1. Returns the distinct recovered samples ``R`` (``m × d``, snapped to the prior's grid) and
    the list of ``(t, h)`` whose ratio gave a sample (``t ≥ 1``)."""
    delta = np.diff(history, axis=0)  # T × H × (d+1)
    db = delta[..., -1]
    t_idx, h_idx = np.nonzero(db != 0)
    if len(t_idx) == 0:
        return np.zeros((0, history.shape[2] - 1)), []
    ratios = delta[t_idx, h_idx, :-1] / db[t_idx, h_idx, None]
    ok = prior.contains(ratios)
    snapped = prior.snap(ratios[ok])
    keys = np.rint(snapped / prior.scale).astype(np.int64)
    _, first = np.unique(keys, axis=0, return_index=True)
    first = np.sort(first)
    pairs = [(int(t) + 1, int(h)) for t, h in zip(t_idx[ok], h_idx[ok], strict=True)]
    return snapped[first], pairs


def omp_batch(
    dictionary: FloatArray, targets: FloatArray, n_max: int, rtol: float = 1e-7,
    atol: FloatArray | None = None, margin: float = 1.0,
) -> list[tuple[IntArray, FloatArray] | None]:
    """Orthogonal matching pursuit (Mallat & Zhang 1993; Pati et al. 1993) for many targets at once.

    ``dictionary`` is ``n × m`` (atoms as columns), ``targets`` is ``n × q``. For each target ``y`` greedily
    add the atom most correlated with the residual, refit ``y`` by least squares on the chosen atoms, and
    stop as soon as ``‖residual‖ ≤ tol`` with ``tol = atol[i]`` when ``atol`` (one absolute tolerance per
    target) is given, else ``rtol·‖y‖``; give up after ``n_max`` atoms. Returns, per target, the chosen
    atom indices and coefficients, or ``None`` when no exact fit with ``≤ n_max`` atoms was found. The
    final fits are recomputed with ``numpy.linalg.lstsq`` and checked against ``tol``, so the batched
    normal equations used during the search cannot produce a false success; a target whose search
    residual is small but whose precise fit misses ``tol`` keeps adding atoms. Atoms whose contribution
    ``|λ|·‖atom‖`` is at most ``tol`` are dropped before the final check (they fit round-off, not data);
    a fit that still needs an atom contributing less than ``margin·tol`` is ambiguous (an atom that small
    can stand for round-off or for a sample missing from the dictionary) and is not returned.
    """
    n, m = dictionary.shape
    q = targets.shape[1]
    out: list[tuple[IntArray, FloatArray] | None] = [None] * q
    if m == 0 or q == 0:
        return out
    norms = np.linalg.norm(dictionary, axis=0)
    if np.any(norms == 0):
        raise ValueError("dictionary has a zero atom")
    dn = dictionary / norms
    ynorm = np.linalg.norm(targets, axis=0)
    tol_all = np.asarray(atol, dtype=np.float64) if atol is not None else rtol * ynorm
    if tol_all.shape != (q,):
        raise ValueError("atol needs one tolerance per target")
    live = np.flatnonzero(ynorm > 0)
    y = targets[:, live] / ynorm[live]
    # search stop in the normalised units of y: loose (normal equations), the final check is exact
    stop = np.maximum(100.0 * tol_all[live] / ynorm[live], 1e-9)
    gram = dn.T @ dn
    dty = dn.T @ y  # m × q'
    support = np.zeros((len(live), 0), dtype=np.int64)
    res = y.copy()
    for j in range(1, min(n_max, m, n) + 1):
        corr = np.abs(dn.T @ res)  # m × q'
        rows = np.arange(len(live))
        if j > 1:
            corr[support.T, rows[None, :]] = -1.0
        new = np.argmax(corr, axis=0)
        support = np.concatenate([support, new[:, None]], axis=1)
        g = gram[support[:, :, None], support[:, None, :]]  # q' × j × j
        rhs = dty[support, rows[:, None]]  # q' × j
        try:
            coef = np.linalg.solve(g, rhs[..., None])[..., 0]
        except np.linalg.LinAlgError:
            coef = np.stack([np.linalg.lstsq(gi, ri, rcond=None)[0] for gi, ri in zip(g, rhs, strict=True)])
        fit = np.einsum("nqj,qj->nq", dn[:, support], coef)
        res = y - fit
        err = np.linalg.norm(res, axis=0)
        solved = np.zeros(len(live), dtype=bool)
        for i in np.flatnonzero(err <= stop):
            sol = _exact_fit(dictionary, norms, targets[:, live[i]], support[i], float(tol_all[live[i]]),
                             margin)
            if sol is not None:
                out[int(live[i])] = sol
                solved[i] = True
        keep = ~solved
        if not np.any(keep):
            break
        live, y, dty, support, res = live[keep], y[:, keep], dty[:, keep], support[keep], res[:, keep]
        stop = stop[keep]
    return out


def _exact_fit(
    dictionary: FloatArray, norms: FloatArray, target: FloatArray, support: IntArray, tol: float,
    margin: float,
) -> tuple[IntArray, FloatArray] | None:
    """Least-squares fit of ``target`` on the atoms ``support``; atoms contributing at most ``tol``
    (``|λ|·‖atom‖ ≤ tol``) are dropped and the rest refitted; the fit counts if ``‖residual‖ ≤ tol``
    and every kept atom contributes at least ``margin·tol``."""
    sup = support.copy()
    a = dictionary[:, sup]
    lam, *_ = np.linalg.lstsq(a, target, rcond=None)
    kept = np.abs(lam) * norms[sup] > tol
    if not np.all(kept):
        sup = sup[kept]
        a = dictionary[:, sup]
        lam, *_ = np.linalg.lstsq(a, target, rcond=None)
    if (len(sup) and np.linalg.norm(a @ lam - target) <= tol
            and np.all(np.abs(lam) * norms[sup] >= margin * tol)):
        return sup, np.asarray(lam, dtype=np.float64)
    return None


@dataclass(frozen=True)
class ActivationSet:
    """A reconstructed round-level activation set ``Ã^h_t`` (indices into ``R``) with its coefficients and
    the subset ``Ã^h_{t,0}`` activating ``h`` at the start of round ``t``."""

    t: int
    h: int
    members: IntArray
    coefficients: FloatArray
    initial: IntArray


def reconstruct_activation_sets(
    history: FloatArray, recovered: FloatArray, n_max: int = 20, round_off: float = 1e-11,
    margin: float = 100.0,
) -> list[ActivationSet]:
    """Step 2 (eq. 8 by OMP) and the sets ``Ã^h_{t,0}`` of Step 3a, for every ``(t, h)`` with
    ``ΔW̄^h_t ≠ 0``.

    "Exact" is judged against the round-off of the observed weights, not against the size of the
    update: a fit counts when ``‖ΔW̄^h_t − Σ λ_r x̄_r‖ ≤ round_off·(‖W̄^h_{t−1}‖ + ‖W̄^h_t‖)``. A tolerance
    relative to ``‖ΔW̄^h_t‖`` (1e-7 before) let a real contribution of another client that is small next
    to the update (e.g. 7.5e-8 of it, from a client whose model already predicts its only class) be
    absorbed by an arbitrary atom, or be dropped so that a sample of that client looked non-activating:
    Corollary 3.6 then joined two clients (3 mixed groups at α = 0.1, seed 0). The default 1e-11 is
    about 100× the float64 error of the 5-client, 5-step FedAvg arithmetic on weights of norm ~1. A fit
    that needs a sample contributing less than ``margin`` times that tolerance is not trusted either
    (contributions of ~1e-11 were otherwise spread over ten wrong atoms)."""
    if len(recovered) == 0:
        return []
    delta = np.diff(history, axis=0)
    t_idx, h_idx = np.nonzero(np.any(delta != 0, axis=2))
    ext = np.concatenate([recovered, np.ones((len(recovered), 1))], axis=1)  # x̄ = (x, 1)
    scale = np.linalg.norm(history[t_idx, h_idx], axis=1) + np.linalg.norm(history[t_idx + 1, h_idx], axis=1)
    sols = omp_batch(ext.T, delta[t_idx, h_idx].T, n_max, atol=round_off * scale, margin=margin)
    sets = []
    for t0, h, sol in zip(t_idx, h_idx, sols, strict=True):
        if sol is None:
            continue
        members, lam = sol
        w_prev = history[t0, h]  # W̄_{t−1}: history index t0 is round t0 (t = t0 + 1)
        pre = recovered[members] @ w_prev[:-1] + w_prev[-1]
        order = np.argsort(members)
        members, lam, pre = members[order], lam[order], pre[order]
        sets.append(ActivationSet(int(t0) + 1, int(h), members, lam, members[pre > 0]))
    return sets


def group_samples(n_recovered: int, sets: Sequence[ActivationSet]) -> tuple[IntArray, nx.Graph, int]:
    """Step 3b. Grow the graph on ``R`` with rule (i), then rule (ii) until no edge is added; return the
    component label of each recovered sample, the graph, and the number of sweeps of rule (ii)."""
    graph = nx.Graph()
    graph.add_nodes_from(range(n_recovered))

    def connect(members: IntArray) -> bool:
        added = False
        for a, b in itertools.pairwise(members):
            if not graph.has_edge(int(a), int(b)):
                graph.add_edge(int(a), int(b))
                added = True
        return added

    for s in sets:  # rule (i)
        if len(s.initial) == 1:
            connect(s.members)
    sweeps = 0
    pending = [s for s in sets if len(s.initial) >= 1 and len(s.members) >= 2]
    while True:  # rule (ii)
        sweeps += 1
        comp = _component_labels(graph, n_recovered)
        added = False
        for s in pending:
            if len(np.unique(comp[s.initial])) == 1 and len(np.unique(comp[s.members])) > 1:
                if connect(s.members):
                    added = True
                    comp = _component_labels(graph, n_recovered)
        if not added:
            break
    return _component_labels(graph, n_recovered), graph, sweeps


def _component_labels(graph: nx.Graph, n: int) -> IntArray:
    labels = np.empty(n, dtype=np.int64)
    for i, comp in enumerate(nx.connected_components(graph)):
        labels[list(comp)] = i
    return labels


def kmeans_baseline(recovered: FloatArray, n_clients: int, seed: int = 0) -> IntArray:
    """The naive grouping of [SRATTA] Sec. 4.2: K-means with K = number of clients on ``R``."""
    if len(recovered) == 0:
        return np.zeros(0, dtype=np.int64)
    k = min(n_clients, len(np.unique(recovered, axis=0)))
    km = KMeans(n_clusters=k, n_init=10, random_state=seed)
    return np.asarray(km.fit_predict(recovered), dtype=np.int64)


@dataclass(frozen=True)
class SrattaMetrics:
    """[SRATTA]'s figures on one run (see the module docstring for the definitions)."""

    rho_recovered: float
    rho_matched: float
    rho_component: float
    v_measure: float
    homogeneity: float
    completeness: float
    kmeans_v_measure: float
    singleton_v_measure: float
    n_recovered: int
    n_false: int
    n_mixed_components: int
    n_components: int

    def as_dict(self) -> dict[str, float | int]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class SrattaResult:
    """Output of :func:`sratta`: ``R``, the sets of ``L_rec``, the component of each sample, K-means."""

    recovered: FloatArray
    sets: list[ActivationSet]
    components: IntArray
    kmeans: IntArray
    graph: nx.Graph = field(repr=False)
    sweeps: int = 0


def sratta(
    history: FloatArray,
    prior: DiscretePrior | None = None,
    n_max: int = 20,
    n_clients: int = 5,
    seed: int = 0,
) -> SrattaResult:
    """Run Steps 1–3 on the observed first-layer history ``W̄_0..W̄_T`` and the K-means baseline.

    >>> h = np.zeros((2, 1, 3)); h[1, 0] = [0.25, 0.5, 1.0]  # one neuron, one sample x = (4/16, 8/16)
    >>> sratta(h, n_clients=1).recovered.tolist()
    [[0.25, 0.5]]
    """
    prior = prior or DiscretePrior()
    if history.ndim != 3 or history.shape[0] < 2:
        raise ValueError("history must have shape (T+1) x H x (d+1) with T >= 1")
    recovered, _ = recover_samples(history, prior)
    sets = reconstruct_activation_sets(history, recovered, n_max)
    comps, graph, sweeps = group_samples(len(recovered), sets)
    km = kmeans_baseline(recovered, n_clients, seed)
    return SrattaResult(recovered, sets, comps, km, graph, sweeps)


def evaluate(
    result: SrattaResult, client_samples: Sequence[FloatArray], prior: DiscretePrior | None = None
) -> SrattaMetrics:
    """Compare a result with the true client datasets (each ``n_k × d``)."""
    prior = prior or DiscretePrior()
    owner: dict[bytes, int] = {}
    for k, xs in enumerate(client_samples):
        for row in np.rint(xs / prior.scale).astype(np.int64):
            owner.setdefault(row.tobytes(), k)
    keys = np.rint(result.recovered / prior.scale).astype(np.int64)
    truth = np.array([owner.get(row.tobytes(), -1) for row in keys], dtype=np.int64)
    true_mask = truth >= 0
    total = sum(len(xs) for xs in client_samples)
    n_true = int(true_mask.sum())
    comps = result.components[true_mask]
    owners = truth[true_mask]
    sizes = np.bincount(result.components, minlength=1) if len(result.components) else np.zeros(0)
    matched = float(np.mean(sizes[comps] >= 2)) if n_true else 0.0
    per_client = []
    for k in range(len(client_samples)):
        mine = comps[owners == k]
        if len(mine) == 0:
            per_client.append(0.0)
            continue
        pure = [c for c in np.unique(mine) if np.all(truth[result.components == c] == k)]
        largest = max((int(np.sum(mine == c)) for c in pure), default=0)
        per_client.append(largest / len(mine))
    mixed = sum(
        1 for c in np.unique(result.components) if len(np.unique(truth[result.components == c])) > 1
    )
    hom, com, vm = homogeneity_completeness_v_measure(owners, comps) if n_true else (0.0, 0.0, 0.0)
    kvm = float(v_measure_score(owners, result.kmeans[true_mask])) if n_true else 0.0
    svm = float(v_measure_score(owners, np.arange(n_true))) if n_true else 0.0
    return SrattaMetrics(
        rho_recovered=n_true / total if total else 0.0,
        rho_matched=matched,
        rho_component=float(np.mean(per_client)) if per_client else 0.0,
        v_measure=float(vm),
        homogeneity=float(hom),
        completeness=float(com),
        kmeans_v_measure=kvm,
        singleton_v_measure=svm,
        n_recovered=len(result.recovered),
        n_false=int((~true_mask).sum()),
        n_mixed_components=int(mixed),
        n_components=len(np.unique(result.components)),
    )
