"""DP-FedAvg with client-level privacy and canary clients, for one-run audits ([SNJ23]).

What is simulated (user-level [DP-FedAvg] with the noise added by the clients):

* a population of ``N`` real clients (local data; each round a participant trains locally from the
  broadcast model, :func:`flmodel.training.local_update`) and ``m`` **canary clients**, each *included*
  in the population independently with probability 1/2 ([SNJ23]: the inclusion bits are the secret);
* each round every client of the population takes part independently with probability ``q``
  (**Poisson sampling**); the ``s`` participants' updates ``Δ_k`` (flattened parameters) are **clipped**
  to L2 norm ``C`` and each participant adds its **noise share** ``N(0, (Z C)²/s · I)``, so the released
  sum ``A_t = Σ_k clip(Δ_k) + N(0, (Z C)² I)`` is the Gaussian mechanism of noise multiplier Z on a
  Poisson sample (with no participant the server adds the whole noise); the server steps
  ``θ ← θ + A_t / (q (N + m))`` (a fixed denominator: post-processing). The auditor sees every ``A_t``.
* canaries: a **gradient** canary sends a fixed random direction ``u_i`` scaled to ``canary_scale·C``
  (clipping, when it works, cuts it to C); a **loss** canary is a client holding one example with a
  random wrong label, trained locally like the others.

**Faults** (real implementation bugs in this code path, for the audit to catch): ``skip-noise-on-client``
(the participants do not add their noise shares), ``no-clip`` (updates are not clipped),
``noise-scaled-by-1/n`` (each share's standard deviation is ``Z C/s`` instead of ``Z C/√s``: the
standard deviation divided where the variance should be).

Under add/remove of one canary (the run with and without it), the released sequence is the
Poisson-subsampled Gaussian mechanism composed over the rounds: its ε is the accountant's for
``(Z, q, T)`` (``checker.crossval.accountant``, joined with this module in ``checker.app``).
Everything is deterministic under ``seed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from flmodel.training import (
    FloatArray,
    IntArray,
    Params,
    TrainingConfig,
    init_params,
    local_update,
    predict_proba,
)

__all__ = ["CANARY_KINDS", "FAULTS", "DPFedAvgConfig", "DPFedAvgRun", "canary_scores", "flatten",
           "train_dp_fedavg", "unflatten"]

FAULTS = ("skip-noise-on-client", "no-clip", "noise-scaled-by-1/n")
CANARY_KINDS = ("gradient", "loss")


@dataclass(frozen=True)
class DPFedAvgConfig:
    """One DP-FedAvg run with canaries (module docstring). ``local`` gives the real clients' local
    training (model, hidden units, local steps, batch size, learning rate; its DP fields unused)."""

    rounds: int = 20
    sampling_rate: float = 0.5
    noise_multiplier: float = 4.0
    clip: float = 1.0
    canaries: int = 1000
    canary_kind: str = "gradient"
    canary_scale: float = 10.0
    fault: str | None = None
    local: TrainingConfig = field(default_factory=lambda: TrainingConfig(hidden=32, n_updates=2,
                                                                          batch_size=4))
    seed: int = 0

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field."""
        if self.rounds < 1:
            raise ValueError("rounds must be >= 1")
        if not 0 < self.sampling_rate <= 1:
            raise ValueError("sampling_rate must be in (0, 1]")
        if not (self.noise_multiplier > 0 and math.isfinite(self.noise_multiplier)):
            raise ValueError("noise_multiplier must be > 0")
        if not self.clip > 0:
            raise ValueError("clip must be > 0")
        if self.canaries < 1:
            raise ValueError("canaries must be >= 1")
        if self.canary_kind not in CANARY_KINDS:
            raise ValueError(f"canary_kind must be one of {CANARY_KINDS}")
        if self.fault is not None and self.fault not in FAULTS:
            raise ValueError(f"fault must be one of {FAULTS}")
        if not self.canary_scale > 0:
            raise ValueError("canary_scale must be > 0")


@dataclass
class DPFedAvgRun:
    """What the run produced: the inclusion bits, the released sums ``A_t`` (``T × D``), the final
    model, the gradient canaries' directions (``m × D``, unit rows; empty for loss canaries) and the
    loss canaries' examples."""

    config: DPFedAvgConfig
    included: NDArray[np.bool_]
    releases: FloatArray
    final: Params
    directions: FloatArray
    canary_x: FloatArray
    canary_y: IntArray
    participants: list[int]


def flatten(p: Params) -> FloatArray:
    """All parameters as one vector (``W1, b1, W2, b2``)."""
    return np.concatenate([a.ravel() for a in p.arrays()])


def unflatten(vec: FloatArray, like: Params) -> Params:
    """The inverse of :func:`flatten` for parameters shaped like ``like``."""
    out, i = [], 0
    for a in like.arrays():
        out.append(vec[i:i + a.size].reshape(a.shape).copy())
        i += a.size
    return Params(*out)


def _noise_sd(cfg: DPFedAvgConfig, s: int) -> float:
    """Each participant's noise share standard deviation (the faults change it here)."""
    total = cfg.noise_multiplier * cfg.clip
    if cfg.fault == "skip-noise-on-client":
        return 0.0
    if cfg.fault == "noise-scaled-by-1/n":
        return total / s
    return total / math.sqrt(s)


def train_dp_fedavg(cfg: DPFedAvgConfig, x: FloatArray, y: IntArray, clients: list[IntArray],
                    n_classes: int) -> DPFedAvgRun:
    """Run DP-FedAvg with canaries (module docstring) on the real clients' samples ``clients``."""
    cfg.validate()
    rng = np.random.default_rng(cfg.seed)
    theta = init_params(cfg.local.model, x.shape[1], n_classes, cfg.local.hidden, rng)
    dim = flatten(theta).size
    m = cfg.canaries
    included = rng.random(m) < 0.5
    directions = np.zeros((0, dim))
    canary_x = np.zeros((0, x.shape[1]))
    canary_y = np.zeros(0, dtype=np.int64)
    if cfg.canary_kind == "gradient":
        directions = rng.standard_normal((m, dim))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    else:
        pick = rng.integers(0, len(y), m)
        canary_x = x[pick]
        canary_y = (y[pick] + rng.integers(1, n_classes, m)) % n_classes  # a wrong label
    members = np.flatnonzero(included)
    denominator = cfg.sampling_rate * (len(clients) + m)
    releases = np.zeros((cfg.rounds, dim))
    participants: list[int] = []
    for t in range(cfg.rounds):
        base = flatten(theta)
        take_real = np.flatnonzero(rng.random(len(clients)) < cfg.sampling_rate)
        take_canary = members[rng.random(len(members)) < cfg.sampling_rate]
        s = len(take_real) + len(take_canary)
        participants.append(s)
        updates = []
        for k in take_real:
            idx = clients[int(k)]
            updates.append(flatten(local_update(cfg.local, theta, x[idx], y[idx], rng)) - base)
        for i in take_canary:
            if cfg.canary_kind == "gradient":
                updates.append(cfg.canary_scale * cfg.clip * directions[i])
            else:
                one = local_update(cfg.local, theta, canary_x[i:i + 1], canary_y[i:i + 1], rng)
                updates.append(flatten(one) - base)
        total = np.zeros(dim)
        sd = _noise_sd(cfg, s) if s else 0.0
        for u in updates:
            norm = float(np.linalg.norm(u))
            if cfg.fault != "no-clip" and norm > cfg.clip:
                u = u * (cfg.clip / norm)
            total += u + (rng.normal(0.0, sd, dim) if sd > 0 else 0.0)
        if s == 0:  # nobody to add a share: the server adds the whole noise
            total += rng.normal(0.0, cfg.noise_multiplier * cfg.clip, dim)
        releases[t] = total
        theta = unflatten(base + total / denominator, theta)
    return DPFedAvgRun(cfg, included, releases, theta, directions, canary_x, canary_y, participants)


def canary_scores(run: DPFedAvgRun) -> FloatArray:
    """White-box (gradient canaries): the log-likelihood ratio of "included" for each canary from every
    round's release, ``Σ_t ln(1 − q + q·exp((a_ti·C − C²/2)/σ̂_t²))`` with ``a_ti = ⟨A_t, u_i⟩`` and the
    per-round spread ``σ̂_t² = ‖A_t‖²/D`` estimated from the release itself (the noise and the other
    clients seen along a random direction); black-box (loss canaries): minus the final model's
    cross-entropy on each canary's example (a lower loss suggests it was trained on)."""
    cfg = run.config
    if cfg.canary_kind == "gradient":
        proj = run.releases @ run.directions.T  # T × m
        dim = run.releases.shape[1]
        var = np.maximum((run.releases ** 2).sum(axis=1) / dim, 1e-300)[:, None]
        c = cfg.clip
        q = cfg.sampling_rate
        llr = (proj * c - c * c / 2) / var
        if q >= 1:
            return np.asarray(llr.sum(axis=0), dtype=np.float64)
        return np.asarray(np.logaddexp(math.log1p(-q), math.log(q) + llr).sum(axis=0), dtype=np.float64)
    proba = predict_proba(run.final, run.canary_x)
    return np.log(np.maximum(proba[np.arange(len(run.canary_y)), run.canary_y], 1e-300))
