"""Plots of privacy curves and audits (matplotlib, Agg backend; files written atomically)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg  # the Agg canvas lists the image formats
from matplotlib.figure import Figure

from checker.crossval.audit import AuditResult
from checker.crossval.curve_conversions import tradeoff_from_delta_curve
from checker.crossval.gaussian import gaussian_tradeoff
from checker.crossval.secagg import SecAggCurve, secagg_curve
from checker.errors import InputError
from checker.io.files import write_atomic_with

__all__ = ["delta_axis", "fig1", "plot_audit", "plot_curves", "save_figure"]


def _format(path: str | os.PathLike[str]) -> str:
    """The image format named by ``path``'s extension; :class:`InputError` for one matplotlib cannot write."""
    supported = FigureCanvasAgg.get_supported_filetypes()
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in supported:
        named = f".{suffix}" if suffix else "(none)"
        raise InputError(f"cannot write a plot to {path}: unknown image extension {named}",
                         expected=", ".join("." + s for s in sorted(supported)))
    return suffix


def save_figure(fig: Figure, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` to ``path`` atomically (temporary file in the same directory, then ``os.replace``)."""
    try:
        return write_atomic_with(path, lambda tmp: fig.savefig(tmp, dpi=120, bbox_inches="tight",
                                                               format=_format(path)))
    finally:
        plt.close(fig)


def delta_axis(values: Sequence[np.ndarray]) -> tuple[str, tuple[float, float]]:
    """The δ axis that shows ``values`` (arrays of δ in [0, 1]): ``("linear", (lo, hi))`` when every
    positive δ lies within two decades (e.g. δ ≈ 0.9 everywhere, which a fixed 1e-12…1 log axis would
    flatten against its top edge), else ``("log", (lo, hi))`` from a third of the smallest positive δ
    (at least 1e-300) to twice the largest (at most 1.5).

    >>> delta_axis([np.array([0.85, 0.9, 0.95])])[0]
    'linear'
    >>> scale, (lo, hi) = delta_axis([np.array([1e-9, 1e-3, 0.5])])
    >>> scale, lo < 1e-9, hi
    ('log', True, 1.0)
    """
    flat = np.concatenate([np.asarray(v, dtype=float).ravel() for v in values]) if values else np.zeros(0)
    flat = flat[np.isfinite(flat)]
    positive = flat[flat > 0]
    if not len(positive):
        return "linear", (0.0, 1.0)
    lo, hi = float(positive.min()), float(positive.max())
    if hi <= 100 * lo:
        pad = max((hi - lo) * 0.1, hi * 0.02)
        return "linear", (max(0.0, lo - pad), min(1.05, hi + pad))
    return "log", (max(lo / 3, 1e-300), min(hi * 2, 1.5))


def plot_curves(
    eps: Sequence[float] | np.ndarray,
    curves: dict[str, np.ndarray],
    title: str = "",
    bands: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
    marks: Sequence[tuple[float, float]] = (),
) -> Figure:
    """δ(ε) curves, the δ axis scaled to the values (:func:`delta_axis`); ``bands`` are (lower, upper)
    brackets drawn shaded; ``marks`` are the requested (ε, δ) points, drawn as dots with their values
    (an infinite ε at the right edge, labelled ∞)."""
    fig, ax = plt.subplots(figsize=(6, 4))
    e = np.asarray(eps, dtype=float)
    scale, (ylo, yhi) = delta_axis([*curves.values(), *(b for pair in (bands or {}).values() for b in pair),
                                    np.array([d for _, d in marks], dtype=float)])
    floor = ylo if scale == "log" else 0.0
    for label, (lo, hi) in (bands or {}).items():
        ax.fill_between(e, np.maximum(lo, floor), np.maximum(hi, floor), alpha=0.25, label=label)
    for label, vals in curves.items():
        style = "--" if "Gauss" in label else "-"
        ax.plot(e, np.maximum(vals, floor), style, label=label)
    right = float(e.max()) if len(e) else 1.0
    for x, d in marks:
        shown_x = right if not np.isfinite(x) else x
        ax.plot([shown_x], [max(d, floor)], "o", color="k", ms=4, zorder=3)
        text = f"ε={'∞' if not np.isfinite(x) else f'{x:g}'}, δ={d:.3g}"
        ax.annotate(text, (shown_x, max(d, floor)), textcoords="offset points", xytext=(4, 4), fontsize=7)
    if marks:
        ax.plot([], [], "o", color="k", ms=4, label="requested points")
    ax.set_yscale(scale)
    ax.set_ylim(ylo, yhi)
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    ax.set_title(title or "δ(ε)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def fig1(
    n: int = 100,
    dims: Sequence[int] = (1, 10, 100, 1000),
    eps: Sequence[float] | np.ndarray | None = None,
    interval: float = 1e-3,
) -> tuple[Figure, dict[str, list[SecAggCurve]]]:
    """[SecAgg-MIA] Fig. 1: δ(ε) of SecAgg for exponential and uniform entries at several model sizes d,
    with the Gaussian mechanism of the same covariance dashed. δ rises quickly with d."""
    e = np.asarray(eps if eps is not None else np.linspace(0.0, 20.0, 201), dtype=float)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    data: dict[str, list[SecAggCurve]] = {}
    for ax, entries in zip(axes, ("exponential", "uniform"), strict=True):
        data[entries] = []
        for i, d in enumerate(dims):
            c = secagg_curve(entries, n, d, e, interval=interval, optimistic=False)  # type: ignore[arg-type]
            data[entries].append(c)
            color = f"C{i}"
            ax.plot(e, np.maximum(c.delta, 1e-300), "-", color=color, label=f"SecAgg d={d}")
            ax.plot(e, np.maximum(c.gaussian, 1e-300), "--", color=color, label=f"Gaussian d={d}")
        ax.set_yscale("log")
        ax.set_ylim(1e-10, 1.5)
        ax.set_xlabel("ε")
        ax.set_title(f"{entries} entries, n = {n}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("δ(ε)")
    axes[1].legend(fontsize=7, ncol=2)
    return fig, data


def plot_audit(
    result: AuditResult,
    mu: float | None = None,
    eps: np.ndarray | None = None,
    delta: np.ndarray | None = None,
) -> Figure:
    """Audited (FPR, FNR) upper-confidence points (an upper bound on the trade-off curve) with the
    trade-off function of the mechanism when known (from a μ-GDP value or a δ(ε) curve)."""
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    alpha = np.linspace(0, 1, 401)
    ax.plot(alpha, 1 - alpha, ":", color="grey", label="perfect privacy")
    if mu is not None:
        ax.plot(alpha, gaussian_tradeoff(mu, alpha), "-", label=f"Gaussian f, μ={mu:g}")
    if eps is not None and delta is not None:
        ax.plot(alpha, tradeoff_from_delta_curve(eps, delta, alpha), "-", label="f from δ(ε)")
    ax.plot(result.points_fpr, result.points_fnr, "o", ms=3, label="audit (upper conf. bounds)")
    ax.plot(result.points_fnr, result.points_fpr, "o", ms=3, mfc="none", label="audit (swapped roles)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("FPR (α)")
    ax.set_ylabel("FNR (β)")
    ax.set_title(f"{result.mechanism}: ε ≥ {result.eps_lower:.3g}")
    ax.legend(fontsize=7)
    return fig
