"""Numpy simulation of federated training, for the attacks and audits of ``checker.crossval``.

What is simulated ([SRATTA] Sec. 2.1 and Algorithm 1; [FL-MI] Sec. "FedSGD"):

* ``K`` clients, client ``k`` holding ``D_k``; a model ``m_θ`` that is either multinomial logistic
  regression (``logits = W x + b``) or a one-hidden-layer MLP whose FIRST layer is fully connected with
  bias and ReLU (``z = W¹ x + b¹``, ``a = max(z, 0)``, ``logits = W² a + b²``) — [SRATTA]'s Assumption 2.3.
* **FedAvg**: in round ``t`` every client starts from the broadcast ``θ_{t−1}`` and makes ``n_updates``
  local SGD steps ``θ ← θ − η · (1/B) Σ_{i∈batch} ∇ℓ(θ; x_i, y_i)`` (batches taken in order from a stream
  of fresh random permutations of ``D_k``), then the server sets
  ``θ_t = θ_{t−1} + Σ_k (n_k / n) (θ^k_t − θ_{t−1})``. ``local_epochs`` instead of ``n_updates`` gives
  ``n_updates = local_epochs · ⌈n_k / B⌉``.
* **FedSGD** ([FL-MI]): one gradient per client per round on a batch of ``B`` local samples at
  ``θ_{t−1}``; the same weighted aggregation (so FedSGD = FedAvg with ``n_updates = 1``).
* **Secure aggregation**: the observer (server or any party, [SRATTA] Sec. 2.2) sees only the aggregate,
  i.e. the sequence of global parameters ``θ_0, …, θ_T``; without it the observer also sees every
  client's update. :meth:`TrainingRun.observer_view` returns exactly what the observer sees.
* **DP-SGD** (Abadi et al. 2016): per-sample gradients clipped to L2 norm ``C``, Gaussian noise
  ``N(0, σ² C² I)`` added to the batch sum before dividing by ``B``. Under add/remove-one neighbouring,
  each use of a sample is the Gaussian mechanism with sensitivity ``C`` and noise ``σC``, i.e.
  ``1/σ``-GDP; a sample used ``u`` times in total gives ``√u/σ``-GDP by composition (Dong, Roth & Su
  2019, Cor. 3.3; batches inside a pass over ``D_k`` are disjoint, so only the uses of one sample
  compose). :meth:`TrainingRun.gdp_mu` returns that ``μ``; ε for a δ follows from the closed form of
  the Gaussian curve (computed by the application layer with ``checker.crossval.gaussian``; flmodel
  never imports checker). No sub-sampling amplification is claimed, so the ε is an upper bound.
* **Neuron censoring** ([SRATTA] Sec. 5, our reading): a client withholds its update of the first-layer
  neuron ``h`` (row ``W¹_h`` and bias ``b¹_h`` reset to the broadcast value) when, during its local
  training of the round, between 1 and ``censor_threshold`` distinct local samples had a non-zero
  ``∂ℓ/∂z^h``; such small local activation sets are what lets SRATTA isolate a sample.

Everything is deterministic under ``TrainingConfig.seed`` (one ``numpy.random.Generator``).
The run records, for the attacks and for ground truth: the global parameters of every round, every
client's first-layer update ``(ΔW¹, Δb¹)`` of every round, and the round-level activation sets
``A^h_t`` ([SRATTA] Def. 3.2: samples whose ``∂ℓ/∂z^h`` was non-zero in some local step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

__all__ = [
    "ClientSplit",
    "Params",
    "TrainingConfig",
    "TrainingRun",
    "accuracy",
    "batch_gradient",
    "cross_entropy",
    "digits_dataset",
    "init_params",
    "local_update",
    "predict_proba",
    "sample_uses_bound",
    "split_clients",
    "tabular_dataset",
    "train",
]

MODELS = ("mlp", "logreg")
ALGORITHMS = ("fedavg", "fedsgd")


# ----------------------------------------------------------------------------------------------- data
def digits_dataset(scale: float = 1.0 / 16.0) -> tuple[FloatArray, IntArray]:
    """scikit-learn's bundled 8×8 digits (1797 samples, 64 pixels with integer values 0..16, 10 classes),
    pixels multiplied by ``scale``. Shipped with scikit-learn: nothing is downloaded."""
    # lazy: scikit-learn takes seconds to import and only the digits task needs it
    from sklearn.datasets import load_digits

    data = load_digits()
    return np.asarray(data.data, dtype=np.float64) * scale, np.asarray(data.target, dtype=np.int64)


@dataclass(frozen=True)
class ClientSplit:
    """Indices (into the pooled dataset) of each client's samples, plus the unused rest."""

    clients: tuple[IntArray, ...]
    rest: IntArray

    def owner(self, n_total: int) -> IntArray:
        """``owner[i]`` = client holding sample ``i``, ``-1`` for samples held by nobody."""
        out = np.full(n_total, -1, dtype=np.int64)
        for k, idx in enumerate(self.clients):
            out[idx] = k
        return out


def split_clients(
    y: IntArray, n_clients: int, per_client: int, alpha: float | None, rng: np.random.Generator
) -> ClientSplit:
    """Give each of ``n_clients`` clients ``per_client`` distinct samples.

    ``alpha=None`` is the IID split (uniform sample without replacement). Otherwise each client draws
    class proportions ``p_k ~ Dirichlet(α·1_C)`` (Hsu et al. 2019, as in [SRATTA] Sec. E.3) and its
    label counts ``~ Multinomial(per_client, p_k)``; a class running out of samples is refilled from
    the classes that still have some, in proportion to ``p_k``. Large α → homogeneous clients, small α →
    each client holds few classes.
    """
    if n_clients < 1 or per_client < 1:
        raise ValueError("n_clients and per_client must be >= 1")
    if n_clients * per_client > len(y):
        raise ValueError(f"{n_clients} x {per_client} samples requested, only {len(y)} available")
    if alpha is not None and not alpha > 0:
        raise ValueError("alpha must be > 0 (or None for IID)")
    if alpha is None:
        perm = rng.permutation(len(y))
        used = perm[: n_clients * per_client]
        clients = tuple(np.sort(used[k * per_client : (k + 1) * per_client]) for k in range(n_clients))
        return ClientSplit(clients, np.sort(perm[n_clients * per_client :]))
    classes = np.unique(y)
    pools = {int(c): list(rng.permutation(np.flatnonzero(y == c))) for c in classes}
    clients_list: list[IntArray] = []
    for _ in range(n_clients):
        p = rng.dirichlet(np.full(len(classes), float(alpha)))
        counts = rng.multinomial(per_client, p)
        chosen: list[int] = []
        deficit = 0
        for c, cnt in zip(classes, counts, strict=True):
            pool = pools[int(c)]
            take = min(int(cnt), len(pool))
            chosen.extend(pool[:take])
            del pool[:take]
            deficit += int(cnt) - take
        while deficit > 0:
            avail = np.array([len(pools[int(c)]) > 0 for c in classes])
            w = p * avail
            w = w / w.sum() if w.sum() > 0 else avail / avail.sum()
            c = int(classes[rng.choice(len(classes), p=w)])
            chosen.append(pools[c].pop(0))
            deficit -= 1
        clients_list.append(np.sort(np.array(chosen, dtype=np.int64)))
    rest = np.sort(np.array([i for pool in pools.values() for i in pool], dtype=np.int64))
    return ClientSplit(tuple(clients_list), rest)


# ---------------------------------------------------------------------------------------------- model
@dataclass(frozen=True)
class Params:
    """Model parameters. ``W1 (H×d)``, ``b1 (H)`` are the first layer; for the MLP ``W2 (C×H)``, ``b2 (C)``
    are the output layer; for logistic regression ``W2``/``b2`` are ``None`` and the first layer is the
    output layer (``H = C``)."""

    W1: FloatArray
    b1: FloatArray
    W2: FloatArray | None = None
    b2: FloatArray | None = None

    def arrays(self) -> tuple[FloatArray, ...]:
        return tuple(a for a in (self.W1, self.b1, self.W2, self.b2) if a is not None)

    def copy(self) -> Params:
        return Params(self.W1.copy(), self.b1.copy(), None if self.W2 is None else self.W2.copy(),
                      None if self.b2 is None else self.b2.copy())

    @property
    def first_layer(self) -> FloatArray:
        """Extended first-layer weights ``W̄ = (W¹, b¹)``, shape ``H × (d+1)`` ([SRATTA] Sec. 2.2)."""
        return np.concatenate([self.W1, self.b1[:, None]], axis=1)


def init_params(model: str, d: int, n_classes: int, hidden: int, rng: np.random.Generator) -> Params:
    """PyTorch-style default initialisation: every weight and bias ``~ U(−1/√fan_in, 1/√fan_in)``."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    s1 = 1.0 / math.sqrt(d)
    if model == "logreg":
        return Params(rng.uniform(-s1, s1, (n_classes, d)), rng.uniform(-s1, s1, n_classes))
    s2 = 1.0 / math.sqrt(hidden)
    return Params(
        rng.uniform(-s1, s1, (hidden, d)),
        rng.uniform(-s1, s1, hidden),
        rng.uniform(-s2, s2, (n_classes, hidden)),
        rng.uniform(-s2, s2, n_classes),
    )


def _softmax(logits: FloatArray) -> FloatArray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def predict_proba(params: Params, x: FloatArray) -> FloatArray:
    """Output probabilities ``softmax(m_θ(x))``, shape ``n × C``."""
    z = x @ params.W1.T + params.b1
    if params.W2 is None:
        return _softmax(z)
    assert params.b2 is not None
    return _softmax(np.maximum(z, 0.0) @ params.W2.T + params.b2)


def cross_entropy(proba: FloatArray, y: IntArray) -> FloatArray:
    """Per-sample cross-entropy ``−log p_y`` (probabilities floored at 1e-300)."""
    return -np.log(np.maximum(proba[np.arange(len(y)), y], 1e-300))


def accuracy(params: Params, x: FloatArray, y: IntArray) -> float:
    return float(np.mean(np.argmax(predict_proba(params, x), axis=1) == y))


@dataclass(frozen=True)
class _Grads:
    """Per-sample backward quantities: ``dz (n×H)`` = ∂ℓ/∂z for the first layer, ``dl (n×C)`` = ∂ℓ/∂logits
    and the hidden activations ``a (n×H)`` (MLP only)."""

    dz: FloatArray
    dl: FloatArray | None
    a: FloatArray | None


def _backward(params: Params, x: FloatArray, y: IntArray) -> _Grads:
    """Per-sample derivatives of the cross-entropy ``ℓ(m_θ(x), y)``: ``∂ℓ/∂logits = p − e_y``; for the MLP
    ``∂ℓ/∂z = (W²ᵀ ∂ℓ/∂logits) ⊙ 1[z > 0]``. The gradient of ``W¹`` for sample i is ``dz_i ⊗ x_i``."""
    z = x @ params.W1.T + params.b1
    onehot = np.zeros((len(y), params.b1.shape[0] if params.W2 is None else params.b2.shape[0]))  # type: ignore[union-attr]
    onehot[np.arange(len(y)), y] = 1.0
    if params.W2 is None:
        return _Grads(_softmax(z) - onehot, None, None)
    assert params.b2 is not None
    a = np.maximum(z, 0.0)
    dl = _softmax(a @ params.W2.T + params.b2) - onehot
    dz = (dl @ params.W2) * (z > 0)
    return _Grads(dz, dl, a)


# ------------------------------------------------------------------------------------------- training
@dataclass(frozen=True)
class TrainingConfig:
    """Hyper-parameters of one federated training (see the module docstring for the semantics).

    ``n_updates`` is the number of local steps per round (FedAvg); ``local_epochs`` overrides it;
    FedSGD always makes one step. ``clip=None`` disables DP-SGD; ``noise_multiplier`` is σ (noise std
    ``σ·clip``). ``censor_threshold = 0`` disables the neuron-censoring defence.
    """

    model: str = "mlp"
    hidden: int = 100
    algorithm: str = "fedavg"
    rounds: int = 20
    n_updates: int = 5
    local_epochs: int | None = None
    batch_size: int = 4
    lr: float = 0.1
    secure_aggregation: bool = True
    clip: float | None = None
    noise_multiplier: float = 0.0
    censor_threshold: int = 0
    seed: int = 0

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field."""
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}")
        for name in ("hidden", "rounds", "n_updates", "batch_size"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.local_epochs is not None and self.local_epochs < 1:
            raise ValueError("local_epochs must be >= 1")
        if not self.lr > 0:
            raise ValueError("lr must be > 0")
        if self.clip is not None and not self.clip > 0:
            raise ValueError("clip must be > 0")
        if self.noise_multiplier < 0:
            raise ValueError("noise_multiplier must be >= 0")
        if self.noise_multiplier > 0 and self.clip is None:
            raise ValueError("noise_multiplier > 0 needs clip (DP-SGD clips before adding noise)")
        if self.censor_threshold < 0:
            raise ValueError("censor_threshold must be >= 0")

    def steps_per_round(self, n_k: int) -> int:
        """Local steps of a client holding ``n_k`` samples in one round."""
        if self.algorithm == "fedsgd":
            return 1
        if self.local_epochs is not None:
            return self.local_epochs * math.ceil(n_k / self.batch_size)
        return self.n_updates


def sample_uses_bound(config: TrainingConfig, n_k: int) -> int:
    """Upper bound on how many local steps use one given sample over the whole training: batches are cut
    from a stream of permutations of ``D_k`` restarted every round, so a round of ``s`` steps uses a sample
    at most ``⌈s·B / n_k⌉`` times."""
    s = config.steps_per_round(n_k)
    return config.rounds * math.ceil(s * min(config.batch_size, n_k) / n_k)


@dataclass
class TrainingRun:
    """Everything one training produced. Indices of samples are into the pooled dataset.

    ``global_params[t]`` is ``θ_t`` (``t = 0`` the initialisation); ``client_updates[t-1][k]`` is client
    ``k``'s first-layer update ``ΔW̄`` of round ``t`` (``H × (d+1)``, after its weighting ``n_k/n``, so the
    global first-layer update is their sum); ``activation[t-1][k]`` is a boolean ``H × n_k`` matrix whose
    row ``h`` marks client ``k``'s samples in the round-level activation set ``A^h_t``;
    ``final_client_params`` are the clients' local models after the last round
    (the black-box targets of [NIST-MIA]).
    """

    config: TrainingConfig
    split: ClientSplit
    global_params: list[Params]
    client_updates: list[FloatArray]
    activation: list[list[BoolArray]]
    final_client_params: list[Params]
    max_sample_uses: int
    censored: int = 0
    losses: list[float] = field(default_factory=list)

    def observer_view(self) -> dict[str, object]:
        """What an honest-but-curious observer sees: the global parameters of every round, plus every
        client's update when there is no secure aggregation ([SRATTA] Sec. 2.2)."""
        view: dict[str, object] = {"global_params": self.global_params}
        if not self.config.secure_aggregation:
            view["client_updates"] = self.client_updates
        return view

    def first_layer_history(self) -> FloatArray:
        """``(T+1) × H × (d+1)`` extended first-layer weights ``W̄_t`` — all that SRATTA reads."""
        return np.stack([p.first_layer for p in self.global_params])

    def activation_sets(self, t: int, h: int) -> IntArray:
        """Ground-truth round-level activation set ``A^h_t`` (``t ≥ 1``) as pooled-dataset indices."""
        parts = [idx[self.activation[t - 1][k][h]] for k, idx in enumerate(self.split.clients)]
        return np.sort(np.concatenate(parts))

    def gdp_mu(self) -> float:
        """``μ`` such that every client's released updates are ``μ``-GDP w.r.t. one sample:
        ``√(max uses)/σ`` (``inf`` without noise)."""
        if self.config.clip is None or self.config.noise_multiplier == 0:
            return math.inf
        return math.sqrt(self.max_sample_uses) / self.config.noise_multiplier


def _local_training(
    cfg: TrainingConfig, start: Params, x: FloatArray, y: IntArray, rng: np.random.Generator
) -> tuple[Params, BoolArray, IntArray]:
    """One client's local training of one round. Returns its final parameters, the boolean ``H × n_k``
    matrix of samples with non-zero ``∂ℓ/∂z^h`` in some step, and the per-sample use counts."""
    n_k = len(y)
    steps = cfg.steps_per_round(n_k)
    bsz = min(cfg.batch_size, n_k)
    need = steps * bsz
    stream = np.concatenate([rng.permutation(n_k) for _ in range(math.ceil(need / n_k))])[:need]
    p = start.copy()
    active = np.zeros((p.b1.shape[0], n_k), dtype=bool)
    uses = np.bincount(stream, minlength=n_k)
    for s in range(steps):
        idx = stream[s * bsz : (s + 1) * bsz]
        g = _backward(p, x[idx], y[idx])
        dz, dl, a = g.dz, g.dl, g.a
        xb = x[idx]
        coef = np.ones(len(idx))
        if cfg.clip is not None:
            sq = (dz**2).sum(axis=1) * ((xb**2).sum(axis=1) + 1.0)
            if dl is not None and a is not None:
                sq = sq + (dl**2).sum(axis=1) * ((a**2).sum(axis=1) + 1.0)
            coef = np.minimum(1.0, cfg.clip / np.maximum(np.sqrt(sq), 1e-300))
        cdz = dz * coef[:, None]
        gW1 = cdz.T @ xb
        gb1 = cdz.sum(axis=0)
        gW2 = gb2 = None
        if dl is not None and a is not None:
            cdl = dl * coef[:, None]
            gW2 = cdl.T @ a
            gb2 = cdl.sum(axis=0)
        if cfg.noise_multiplier > 0:
            assert cfg.clip is not None
            sd = cfg.noise_multiplier * cfg.clip
            gW1 = gW1 + rng.normal(0.0, sd, gW1.shape)
            gb1 = gb1 + rng.normal(0.0, sd, gb1.shape)
            if gW2 is not None and gb2 is not None:
                gW2 = gW2 + rng.normal(0.0, sd, gW2.shape)
                gb2 = gb2 + rng.normal(0.0, sd, gb2.shape)
        lr = cfg.lr / len(idx)
        active[:, idx] |= (dz != 0).T
        p.W1[...] -= lr * gW1
        p.b1[...] -= lr * gb1
        if gW2 is not None and p.W2 is not None and p.b2 is not None and gb2 is not None:
            p.W2[...] -= lr * gW2
            p.b2[...] -= lr * gb2
    return p, active, uses


def local_update(config: TrainingConfig, start: Params, x: FloatArray, y: IntArray,
                 rng: np.random.Generator) -> Params:
    """One client's local model after one round of local training from ``start`` (``config``'s local
    steps, batch size and learning rate; its sample-level clipping and noise if set)."""
    return _local_training(config, start, x, y, rng)[0]


def train(
    config: TrainingConfig,
    x: FloatArray,
    y: IntArray,
    split: ClientSplit,
    n_classes: int | None = None,
    init: Params | None = None,
) -> TrainingRun:
    """Run the federated training described by ``config`` on the clients of ``split`` (module docstring).

    >>> xs, ys = digits_dataset()
    >>> sp = split_clients(ys, 2, 20, None, np.random.default_rng(0))
    >>> run = train(TrainingConfig(rounds=2, hidden=8), xs, ys, sp)
    >>> len(run.global_params), run.client_updates[0].shape
    (3, (2, 8, 65))
    """
    config.validate()
    rng = np.random.default_rng(config.seed)
    c = int(n_classes if n_classes is not None else int(y.max()) + 1)
    d = x.shape[1]
    theta = init.copy() if init is not None else init_params(config.model, d, c, config.hidden, rng)
    sizes = np.array([len(idx) for idx in split.clients], dtype=float)
    if np.any(sizes == 0):
        raise ValueError("every client needs at least one sample")
    if config.clip is not None and config.noise_multiplier > 0 and np.any(sizes < config.batch_size):
        raise ValueError("DP-SGD needs batch_size <= every client's dataset size")
    weights = sizes / sizes.sum()
    history = [theta.copy()]
    updates: list[FloatArray] = []
    activation: list[list[BoolArray]] = []
    uses_total = [np.zeros(len(idx), dtype=np.int64) for idx in split.clients]
    censored = 0
    local: list[Params] = []
    for _t in range(config.rounds):
        local = []
        round_updates = []
        round_active = []
        for k, idx in enumerate(split.clients):
            p_k, active, uses = _local_training(config, theta, x[idx], y[idx], rng)
            uses_total[k] += uses
            if config.censor_threshold > 0:
                count = active.sum(axis=1)
                cens = (count >= 1) & (count <= config.censor_threshold)
                if np.any(cens):
                    censored += int(cens.sum())
                    p_k.W1[cens] = theta.W1[cens]
                    p_k.b1[cens] = theta.b1[cens]
                    active[cens] = False
            local.append(p_k)
            round_active.append(active)
            round_updates.append(weights[k] * (p_k.first_layer - theta.first_layer))
        new = theta.copy()
        for arr_new, *arrs in zip(new.arrays(), theta.arrays(), *(p.arrays() for p in local), strict=True):
            base = arrs[0]
            arr_new[...] = base + sum(w * (a - base) for w, a in zip(weights, arrs[1:], strict=True))
        theta = new
        history.append(theta.copy())
        updates.append(np.stack(round_updates))
        activation.append(round_active)
    return TrainingRun(
        config=config,
        split=split,
        global_params=history,
        client_updates=updates,
        activation=activation,
        final_client_params=local,
        max_sample_uses=int(max(u.max() for u in uses_total)),
        censored=censored,
    )


def batch_gradient(params: Params, x: FloatArray, y: IntArray) -> FloatArray:
    """Gradient of the mean cross-entropy over the batch w.r.t. all parameters, flattened in the order
    ``W1, b1, W2, b2`` — the client message ``G`` of FedSGD ([FL-MI] Sec. 2)."""
    g = _backward(params, x, y)
    n = len(y)
    parts = [g.dz.T @ x / n, g.dz.mean(axis=0)]
    if g.dl is not None and g.a is not None:
        parts += [g.dl.T @ g.a / n, g.dl.mean(axis=0)]
    return np.concatenate([p.ravel() for p in parts])


def tabular_dataset(
    n: int, d: int, positive_rate: float, rng: np.random.Generator, noise: float = 0.5
) -> tuple[FloatArray, IntArray]:
    """Synthetic tabular binary task (an Adult-like stand-in, [FL-MI] Sec. 4): features ``~ N(0, I_d)``,
    score ``s = w·x + noise·ε`` with a fixed ``w = (1, 1/2, 1/3, …)``, label ``1[s > τ]`` with ``τ`` the
    ``1 − positive_rate`` quantile of ``s`` (so the class balance is ``positive_rate``)."""
    if not 0 < positive_rate < 1:
        raise ValueError("positive_rate must be in (0, 1)")
    from scipy.stats import norm  # lazy: scipy.stats is slow to import and only this generator needs it

    w = 1.0 / np.arange(1, d + 1)
    x = rng.standard_normal((n, d))
    s = x @ w + noise * rng.standard_normal(n)
    tau = norm.ppf(1 - positive_rate) * math.sqrt(float(w @ w) + noise**2)
    return x, (s > tau).astype(np.int64)
