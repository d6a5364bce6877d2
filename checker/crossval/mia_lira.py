"""Single-signal baselines of [NIST-MIA]'s comparison: the loss threshold and the likelihood-ratio attack
([LiRA], offline and online, with shadow models), plus a shadow-free LiRA-style variant.

The signal of a record ``(x, y)`` on a model is the logit-scaled confidence
``φ = log p_y − log(1 − p_y)`` ([LiRA] Sec. IV-B), where ``p_y`` is the model's probability of the true
class.

* Loss threshold (Yeom et al., CSF 2018): score ``−ℓ_CE = log p_y``.
* LiRA with shadow models: the attacker trains ``M`` shadow models the way the target was trained, each
  on a known subset of a pool of records that contains the challenge records; ``shadow_in[m, i]`` says
  whether record ``i`` was in shadow ``m``'s training set. For every record the shadows' signals are split
  into IN and OUT. Per record, ``μ_in`` and ``μ_out`` are the means of its IN and OUT signals; the
  variances are global ([LiRA]'s "fixed variance", for few shadows): ``σ_out²`` pools every record's
  OUT residuals, ``σ_in²`` its IN residuals (records with at least two IN signals; else ``σ_in = σ_out``).

  - offline (OUT shadows only): score ``(φ − μ_out) / σ_out`` (one-sided test "φ is too high for OUT");
  - online: score ``log N(φ; μ_in, σ_in²) − log N(φ; μ_out, σ_out²)``; a record without an IN shadow
    falls back to its offline score.
* Shadow-free LiRA-style signal (:func:`lira_nonmember_scores`): the OUT Gaussian fitted per class on the
  target client's guaranteed non-members instead of shadow models.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

__all__ = [
    "lira_nonmember_scores",
    "lira_scores",
    "logit_confidence",
    "loss_scores",
]


def logit_confidence(proba: FloatArray, y: IntArray) -> FloatArray:
    """``φ = log p_y − log(1 − p_y)`` with ``p_y`` clipped to ``[1e-12, 1 − 1e-12]``.

    >>> round(float(logit_confidence(np.array([[0.25, 0.75]]), np.array([1]))[0]), 6)  # log 3
    1.098612
    """
    py = np.clip(proba[np.arange(len(y)), y], 1e-12, 1 - 1e-12)
    return np.asarray(np.log(py) - np.log1p(-py), dtype=np.float64)


def loss_scores(proba: FloatArray, y: IntArray) -> FloatArray:
    """Loss-threshold attack: higher score = lower cross-entropy = more likely member."""
    return np.asarray(np.log(np.clip(proba[np.arange(len(y)), y], 1e-12, 1.0)), dtype=np.float64)


def _pooled_std(signals: FloatArray, mask: BoolArray, means: FloatArray) -> float:
    """Standard deviation of the residuals ``signals − means`` over ``mask`` (records with ≥ 2 entries)."""
    counts = mask.sum(axis=0)
    use = mask & (counts >= 2)[None, :]
    if not use.any():
        return float("nan")
    resid = (signals - means[None, :])[use]
    dof = int(use.sum()) - int((counts >= 2).sum())
    return float(np.sqrt((resid**2).sum() / max(dof, 1)))


def lira_scores(
    signal: FloatArray, shadow_signal: FloatArray, shadow_in: BoolArray, online: bool
) -> FloatArray:
    """LiRA scores of records with target signals ``signal`` (``n``), shadow signals ``shadow_signal``
    (``M × n``) and membership of each record in each shadow's training set ``shadow_in`` (``M × n``);
    ``online=False`` is the offline attack (module doc).

    >>> sh = np.array([[0.0, 5.0], [1.0, 4.0], [5.0, 0.0], [4.0, 1.0]])
    >>> inn = np.array([[False, True], [False, True], [True, False], [True, False]])
    >>> lira_scores(np.array([4.5, 4.5]), sh, inn, online=False).round(3).tolist()
    [5.657, 5.657]
    """
    shadow_in = np.asarray(shadow_in, dtype=bool)
    out_mask = ~shadow_in
    if (out_mask.sum(axis=0) == 0).any():
        raise ValueError("every record needs at least one OUT shadow model")
    n_out = out_mask.sum(axis=0)
    mu_out = np.where(out_mask, shadow_signal, 0.0).sum(axis=0) / n_out
    sd_out = _pooled_std(shadow_signal, out_mask, mu_out)
    if not np.isfinite(sd_out):
        sd_out = float(np.std(shadow_signal[out_mask]))
    sd_out = max(sd_out, 1e-6)
    offline = (signal - mu_out) / sd_out
    if not online:
        return np.asarray(offline, dtype=np.float64)
    n_in = shadow_in.sum(axis=0)
    mu_in = np.where(shadow_in, shadow_signal, 0.0).sum(axis=0) / np.maximum(n_in, 1)
    sd_in = _pooled_std(shadow_signal, shadow_in, mu_in)
    sd_in = sd_out if not np.isfinite(sd_in) else max(sd_in, 1e-6)
    log_in = -0.5 * ((signal - mu_in) / sd_in) ** 2 - np.log(sd_in)
    log_out = -0.5 * offline**2 - np.log(sd_out)
    return np.asarray(np.where(n_in > 0, log_in - log_out, offline), dtype=np.float64)


def lira_nonmember_scores(
    proba: FloatArray, y: IntArray, ext_proba: FloatArray, ext_y: IntArray
) -> FloatArray:
    """Shadow-free LiRA-style signal: ``(φ − μ_out,y)/σ_out,y`` with the non-member Gaussian fitted per
    class on guaranteed non-members (pooled fit for classes seen < 3 times)."""
    f_ext = logit_confidence(ext_proba, ext_y)
    f = logit_confidence(proba, y)
    mu_all, sd_all = float(f_ext.mean()), float(f_ext.std() + 1e-6)
    out = np.empty(len(y))
    for label in np.unique(y):
        sel = ext_y == label
        if sel.sum() >= 3:
            mu, sd = float(f_ext[sel].mean()), float(f_ext[sel].std() + 1e-6)
        else:
            mu, sd = mu_all, sd_all
        out[y == label] = (f[y == label] - mu) / max(sd, 1e-3)
    return out
