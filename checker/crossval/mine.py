"""Mutual-information leakage ``I(X_B; G)`` between a client's batch and its gradient ([FL-MI]).

Donsker–Varadhan ([FL-MI] eq. 2; [MINE]): for any function ``T``,
``I(X; G) = D_KL(P_XG ‖ P_X ⊗ P_G) ≥ E_{P_XG}[T] − log E_{P_X ⊗ P_G}[e^T]``; maximising over a statistic
network ``T_φ`` gives the estimate. Samples of the product of marginals pair each ``X`` with the ``G`` of
another, randomly chosen, joint sample.

Statistic networks:

* **MINE** (conventional): one MLP on the concatenation ``(vec(X_B), G)``.
* **H-MINE** ([FL-MI] Fig. 2, Algorithm 1): since the batch items are IID, a shared *BlockModel*
  maps every block ``O_m = (x_m, G)`` (``m = 1..B``) to an embedding ``h_m``; the *MixModel* maps the
  concatenation ``(h_1, …, h_B)`` to the scalar ``T``. The input layer has ``B`` times fewer weights.

Baseline ([FL-MI] Sec. 4): the covariance sum ``C(X_B, G) = Σ_{ij} cov(vec(X_B)_i, G_j)``.

Training library — a deliberate choice: a small numpy MLP with Adam written here (:class:`MLP`), not
torch/jax. Reasons: (1) no heavy dependency for a cross-validation feature (flcheck's dependencies are
numpy/scipy/sklearn); (2) CPU-only and deterministic under a seed; (3) at [FL-MI]'s sizes one training
step is a few float32 matrix products of at most 200 × 200 per row, which BLAS already runs near the
core's peak: a framework would add start-up time, not speed. Two settings: small networks (defaults
below: BlockModel 32-32-16, MixModel 32-1, MINE 64-64-1, lr 1e-3) so that one estimate takes seconds,
and [FL-MI]'s (:data:`PAPER_NETWORKS`: BlockModel 200-200-5, MixModel 500-1, lr 5e-5).

The BlockModel's output (the embedding ``h_m``) is linear, as the last layer of any :class:`MLP`; [FL-MI]
does not name an activation there. A ReLU on the embedding cost H-MINE a fifth of the MI on the
Gaussian check at ``B = 4`` (1.10 of 1.61 nats with the small networks' 16-wide embedding, 1.32
without it).

Validation: for ``X_B = (x_1..x_B)`` IID ``N(0, I_dx)`` and ``G = A Σ_m x_m + σ ε``, ``ε ~ N(0, I)``,
``I(X_B; G) = ½ log det(I + B A Aᵀ / σ²)`` (:func:`gaussian_mi`) — see :func:`gaussian_batch_samples`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]  # threadpoolctl ships no type information

FloatArray = NDArray[np.float64]

__all__ = [
    "MLP",
    "PAPER_NETWORKS",
    "HMineNet",
    "MineNet",
    "MineResult",
    "covariance_sum",
    "dv_bound",
    "estimate_mi",
    "gaussian_batch_samples",
    "gaussian_mi",
]


class MLP:
    """Fully connected network with ReLU hidden layers and a linear output, trained with Adam
    (Kingma & Ba 2015: ``m ← β₁m + (1−β₁)g``, ``v ← β₂v + (1−β₂)g²``, ``θ ← θ + lr·m̂/(√v̂ + ε)`` for ascent).
    He-uniform initialisation from the given generator."""

    def __init__(self, sizes: tuple[int, ...], rng: np.random.Generator, lr: float = 1e-3,
                 dtype: type = np.float64):
        if len(sizes) < 2:
            raise ValueError("an MLP needs at least an input and an output size")
        self.weights: list[FloatArray] = [
            (rng.uniform(-1, 1, (a, b)) * math.sqrt(6.0 / a)).astype(dtype)
            for a, b in itertools.pairwise(sizes)
        ]
        self.biases: list[FloatArray] = [np.zeros(b, dtype=dtype) for b in sizes[1:]]
        self.lr = lr
        self._m = [np.zeros_like(p) for p in self.params()]
        self._v = [np.zeros_like(p) for p in self.params()]
        self._t = 0
        self._cache: list[FloatArray] = []

    def params(self) -> list[FloatArray]:
        return [*self.weights, *self.biases]

    def forward(self, x: FloatArray) -> FloatArray:
        self._cache = [x]
        h = x
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = h @ w + b
            if i < len(self.weights) - 1:
                h = np.maximum(h, 0.0)
            self._cache.append(h)
        return h

    def backward(self, grad_out: FloatArray) -> tuple[list[FloatArray], FloatArray]:
        """Gradients of ``Σ grad_out ⊙ output`` w.r.t. the parameters (same order as :meth:`params`) and
        w.r.t. the input of the last :meth:`forward`."""
        gw: list[FloatArray] = [np.empty(0)] * len(self.weights)
        gb: list[FloatArray] = [np.empty(0)] * len(self.biases)
        g = grad_out
        for i in range(len(self.weights) - 1, -1, -1):
            if i < len(self.weights) - 1:
                g = g * (self._cache[i + 1] > 0)
            gw[i] = self._cache[i].T @ g
            gb[i] = g.sum(axis=0)
            g = g @ self.weights[i].T
        return [*gw, *gb], g

    def ascend(self, grads: list[FloatArray], beta1: float = 0.9, beta2: float = 0.999) -> None:
        """One Adam step in the direction of ``grads`` (gradient ascent)."""
        self._t += 1
        for p, g, m, v in zip(self.params(), grads, self._m, self._v, strict=True):
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * g * g
            mh = m / (1 - beta1**self._t)
            vh = v / (1 - beta2**self._t)
            p += self.lr * mh / (np.sqrt(vh) + 1e-8)


class MineNet:
    """Conventional statistic network: ``T(X_B, G) = MLP(vec(X_B), G)``."""

    def __init__(self, batch: int, dx: int, dg: int, rng: np.random.Generator,
                 hidden: tuple[int, ...] = (64, 64), lr: float = 1e-3, dtype: type = np.float64):
        self.net = MLP((batch * dx + dg, *hidden, 1), rng, lr, dtype)
        self.dtype = dtype

    def forward(self, xb: FloatArray, g: FloatArray) -> FloatArray:
        inp: FloatArray = np.concatenate([xb.reshape(len(xb), -1), g], axis=1).astype(self.dtype, copy=False)
        return self.net.forward(inp)[:, 0]

    def grads(self, dt: FloatArray) -> list[FloatArray]:
        """Gradients of ``Σ_i dt_i T_i`` (last :meth:`forward`) w.r.t. the parameters."""
        return self.net.backward(dt[:, None])[0]

    def params(self) -> list[FloatArray]:
        return self.net.params()

    def ascend(self, dt: FloatArray) -> None:
        self.net.ascend(self.grads(dt.astype(self.dtype, copy=False)))


class HMineNet:
    """H-MINE ([FL-MI] Fig. 2): shared BlockModel on ``(x_m, G)``, MixModel on ``(h_1..h_B)``. Both are
    :class:`MLP` s (ReLU hidden layers, linear output), so the embedding ``h_m`` is linear in the
    BlockModel's last hidden layer: the MixModel can form sums such as ``Σ_m x_m`` directly."""

    def __init__(self, batch: int, dx: int, dg: int, rng: np.random.Generator,
                 block: tuple[int, ...] = (32, 32, 16), mix: tuple[int, ...] = (32,), lr: float = 1e-3,
                 dtype: type = np.float64):
        self.batch, self.emb, self.dtype = batch, block[-1], dtype
        self.block = MLP((dx + dg, *block), rng, lr, dtype)
        self.mix = MLP((batch * block[-1], *mix, 1), rng, lr, dtype)

    def forward(self, xb: FloatArray, g: FloatArray) -> FloatArray:
        n, b, _ = xb.shape
        blocks = np.concatenate([xb, np.repeat(g[:, None, :], b, axis=1)], axis=2).reshape(n * b, -1)
        h = self.block.forward(blocks.astype(self.dtype, copy=False))  # linear embedding (no ReLU)
        return self.mix.forward(h.reshape(n, b * self.emb))[:, 0]

    def grads(self, dt: FloatArray) -> list[FloatArray]:
        """Gradients of ``Σ_i dt_i T_i`` w.r.t. (BlockModel params, MixModel params): the MixModel's
        input gradient is split into the ``B`` blocks and the shared BlockModel's gradients summed."""
        gmix, gin = self.mix.backward(dt.astype(self.dtype, copy=False)[:, None])
        gblock, _ = self.block.backward(gin.reshape(-1, self.emb))
        return [*gblock, *gmix]

    def params(self) -> list[FloatArray]:
        return [*self.block.params(), *self.mix.params()]

    def ascend(self, dt: FloatArray) -> None:
        g = self.grads(dt)
        nb = len(self.block.params())
        self.block.ascend(g[:nb])
        self.mix.ascend(g[nb:])


def dv_bound(t_joint: FloatArray, t_marg: FloatArray) -> float:
    """``mean(T_joint) − log mean(exp(T_marg))`` (log-sum-exp for stability)."""
    mx = float(np.max(t_marg))
    return float(np.mean(t_joint) - (mx + math.log(float(np.mean(np.exp(t_marg - mx))))))


@dataclass
class MineResult:
    """Estimate on held-out samples (nats) and the training curve (DV bound per logged step).

    ``mi`` is ``max(0, raw)``: the held-out DV bound ``raw`` can be negative by estimation noise (a
    critic that learnt nothing scores about 0, one that over-fitted the training pairs scores below 0),
    while the MI cannot; ``clamped`` says that happened. ``steps`` is the number of Adam steps run and
    ``best_step`` the step whose parameters were kept (early stopping; the last step without it)."""

    mi: float
    curve: list[float] = field(default_factory=list)
    raw: float = 0.0
    clamped: bool = False
    steps: int = 0
    best_step: int = 0
    validation: list[float] = field(default_factory=list)


#: [FL-MI] Sec. 5's statistic networks: H-MINE's BlockModel 200-200-5 and MixModel 500-1, Adam
#: lr 5e-5; the conventional network a three-layer MLP (200-200-1, the same widths) with the same
#: budget. Options of :func:`estimate_mi`.
PAPER_NETWORKS: dict[str, object] = {
    "block": (200, 200, 5), "mix": (500,), "hidden": (200, 200), "lr": 5e-5,
}


def estimate_mi(
    xb: FloatArray,
    g: FloatArray,
    kind: str = "hmine",
    steps: int = 1500,
    batch: int = 256,
    lr: float = 1e-3,
    seed: int = 0,
    holdout: float = 0.25,
    ema: float = 0.01,
    *,
    block: tuple[int, ...] = (32, 32, 16),
    mix: tuple[int, ...] = (32,),
    hidden: tuple[int, ...] = (64, 64),
    patience: int = 0,
    eval_every: int = 50,
    float32: bool = False,
) -> MineResult:
    """Estimate ``I(X_B; G)`` from ``N`` joint samples ``xb (N × B × dx)``, ``g (N × dg)``.

    Trains on ``1 − holdout`` of the samples by ascending the DV bound with MINE's bias-corrected
    gradient (the denominator ``E[e^T]`` replaced by an exponential moving average with rate ``ema``),
    then reports the DV bound on the held-out samples (averaged over 5 random marginal pairings),
    floored at 0 (MI is non-negative; :class:`MineResult` keeps the raw value). Inputs are standardised
    with training statistics.

    Early stopping (``patience > 0``): the held-out samples are split in half, a validation half and a
    test half. Every ``eval_every`` steps the DV bound on the validation half (one fixed marginal
    pairing) is computed; training stops after ``patience`` evaluations without a new best, the best
    parameters are restored, and the estimate is the DV bound on the test half (so the choice of the
    stopping step does not bias the reported figure upwards). ``block``/``mix`` size H-MINE's
    BlockModel and MixModel, ``hidden`` the conventional network (:data:`PAPER_NETWORKS`: the paper's).
    ``float32`` trains in single precision (about twice as fast; the DV bound is computed in float64).
    """
    with threadpool_limits(1):  # small matrices gain little from BLAS threads on a shared machine
        return _estimate_mi(xb, g, kind, steps, batch, lr, seed, holdout, ema, block, mix, hidden,
                            patience, eval_every, np.float32 if float32 else np.float64)


def _estimate_mi(
    xb: FloatArray, g: FloatArray, kind: str, steps: int, batch: int, lr: float, seed: int,
    holdout: float, ema: float, block: tuple[int, ...], mix: tuple[int, ...], hidden: tuple[int, ...],
    patience: int, eval_every: int, dtype: type,
) -> MineResult:
    if kind not in ("mine", "hmine"):
        raise ValueError("kind must be 'mine' or 'hmine'")
    if xb.ndim != 3 or g.ndim != 2 or len(xb) != len(g):
        raise ValueError("need xb of shape N x B x dx and g of shape N x dg")
    rng = np.random.default_rng(seed)
    n, bsz, dx = xb.shape
    dg = g.shape[1]
    perm = rng.permutation(n)
    n_ev = max(int(holdout * n), 4 if patience > 0 else 2)
    ev, tr = perm[:n_ev], perm[n_ev:]
    va = ev[: n_ev // 2] if patience > 0 else ev[:0]
    if patience > 0:
        ev = ev[n_ev // 2 :]
    mx, sx = xb[tr].mean(axis=(0, 1)), xb[tr].std(axis=(0, 1)) + 1e-8
    mg, sg = g[tr].mean(axis=0), g[tr].std(axis=0) + 1e-8
    x_s, g_s = (xb - mx) / sx, (g - mg) / sg
    net: MineNet | HMineNet = (
        HMineNet(bsz, dx, dg, rng, block=block, mix=mix, lr=lr, dtype=dtype) if kind == "hmine"
        else MineNet(bsz, dx, dg, rng, hidden=hidden, lr=lr, dtype=dtype)
    )
    va_pair = rng.permutation(va)
    best, best_step, since, validation = -math.inf, 0, 0, []
    saved = [p.copy() for p in net.params()]
    avg = None
    curve = []
    m = min(batch, len(tr))
    step = 0
    for step in range(1, steps + 1):
        j = tr[rng.integers(0, len(tr), m)]
        k = tr[rng.integers(0, len(tr), m)]
        t_all = net.forward(np.concatenate([x_s[j], x_s[j]]), np.concatenate([g_s[j], g_s[k]]))
        t_all = t_all.astype(np.float64)
        tj, tm = t_all[:m], t_all[m:]
        e = np.exp(np.clip(tm, -50, 50))
        avg = float(e.mean()) if avg is None else (1 - ema) * avg + ema * float(e.mean())
        dt = np.concatenate([np.full(m, 1.0 / m), -e / (m * avg)])
        net.ascend(dt)
        if step % 50 == 1 or step == steps:
            curve.append(dv_bound(tj, tm))
        if patience > 0 and (step % eval_every == 0 or step == steps):
            v = dv_bound(net.forward(x_s[va], g_s[va]).astype(np.float64),
                         net.forward(x_s[va], g_s[va_pair]).astype(np.float64))
            validation.append(v)
            if v > best:
                best, best_step, since = v, step, 0
                saved = [p.copy() for p in net.params()]
            else:
                since += 1
                if since >= patience:
                    break
    if patience > 0:
        for p, keep in zip(net.params(), saved, strict=True):
            p[...] = keep
    else:
        best_step = step
    vals = []
    for _ in range(5):
        k = rng.permutation(ev)
        tj = net.forward(x_s[ev], g_s[ev]).astype(np.float64)
        tm = net.forward(x_s[ev], g_s[k]).astype(np.float64)
        vals.append(dv_bound(tj, tm))
    raw = float(np.mean(vals))
    return MineResult(max(0.0, raw), curve, raw, raw < 0, step, best_step, validation)


def covariance_sum(xb: FloatArray, g: FloatArray) -> float:
    """[FL-MI]'s baseline: the sum of all entries of the cross-covariance of ``vec(X_B)`` and ``G``."""
    xf = xb.reshape(len(xb), -1)
    xc = xf - xf.mean(axis=0)
    gc = g - g.mean(axis=0)
    return float((xc.T @ gc).sum() / (len(xb) - 1))


def gaussian_mi(batch: int, a: FloatArray, sigma: float) -> float:
    """Analytic ``I(X_B; G)`` for ``x_m ~ N(0, I)`` IID and ``G = A Σ_m x_m + σε``:
    ``½ log det(I + B A Aᵀ/σ²)`` (``Σ_m x_m ~ N(0, B·I)``; MI of a Gaussian channel)."""
    a = np.atleast_2d(a)
    _, logdet = np.linalg.slogdet(np.eye(a.shape[0]) + batch * (a @ a.T) / sigma**2)
    return 0.5 * float(logdet)


def gaussian_batch_samples(
    n: int, batch: int, a: FloatArray, sigma: float, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """``n`` joint samples of the Gaussian case of :func:`gaussian_mi`."""
    a = np.atleast_2d(a)
    xb = rng.standard_normal((n, batch, a.shape[1]))
    g = xb.sum(axis=1) @ a.T + sigma * rng.standard_normal((n, a.shape[0]))
    return xb, g
