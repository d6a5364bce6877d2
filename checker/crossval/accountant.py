"""Certified (ε, δ) accounting of DP-SGD / DP-FedAvg runs: brackets ``[lower, upper]`` from privacy
loss distributions.

A run is ``T`` rounds (steps) of the Gaussian mechanism with noise multiplier ``Z`` (noise standard
deviation ``Z·C`` on the sum of updates clipped to L2 norm ``C``) on a sample of the records (clients)
drawn each round by one of four schemes (:class:`Run`):

* ``poisson`` — each record independently with probability ``q``; **add/remove-one** neighbouring
  (sensitivity ``C``, base ``μ = 1/Z``). Dominating pairs ([ZDW22] Thm. 11 / Prop. 30, [KJH20] §6):
  *remove* ``((1−q)N(0,1) + qN(μ,1), N(0,1))`` and *add* the pair reversed; each is composed ``T`` times
  and the worse is taken. Both are realised by a dataset (the other records' updates cancel, the
  record's own update is ``C·e₁``), so the optimistic curve is a lower bound on the mechanism's own.
* ``fixed`` — ``K`` of ``N`` records without replacement (``q = K/N``); **replace-one** neighbouring
  (the sum's sensitivity is ``2C``: two updates in the ball of radius C differ by up to 2C). Upper:
  [BBG18] Thm. 10 gives ``δ'(ε') ≤ q·δ_G(ln(1 + (e^{ε'} − 1)/q))`` with ``δ_G`` the Gaussian curve of
  ``μ = 2/Z``, for ε' ≥ 0 — exactly the curve of ``((1−q)N(0,1) + qN(2/Z,1), N(0,1))``; the relation is
  symmetric, so for ε' < 0 the reversed pair bounds it ([ZDW22] §5), and the *symmetrised* PLD (the
  pair's losses > 0, mirrored: P-mass ``e^{−ℓ}ω(ℓ)`` at ``−ℓ``, the rest at 0) is a dominating pair for
  every α ≥ 0, hence composes ([ZDW22] Thm. 10). It is not treated as Poisson. Lower: the pair itself,
  in both orders, is realised by two datasets (every other record's update at ``−C·e₁``, the record at
  ``+C·e₁`` against ``−C·e₁``: a batch holding it sums to 2C more), so its composed optimistic curve
  (the worse order) is a lower bound on the mechanism's.
* ``shuffle`` — every epoch a uniformly random permutation of the ``N`` records cut into ``b = ⌈N/K⌉``
  batches, one per round; replace-one. **No amplification by shuffling is certified**: a record takes
  part in ``E = ⌈T/b⌉`` rounds, each a Gaussian mechanism of ``μ = 2/Z`` given the permutation (which
  does not depend on the data), so the upper bound is the Gaussian curve of ``μ = 2√E/Z`` ([GDP]
  Cor. 3.3); the lower bound is a pair the mechanism realises (the record at ``±C e₁``, the others at
  0) post-processed to the sum of each full epoch's releases, a Gaussian of ``μ = 2√E_full/(Z√b)``.
* ``all`` — full participation: ``T`` Gaussian mechanisms of ``μ = 1/Z`` compose to one Gaussian of
  ``μ = √T/Z`` ([GDP] Cor. 3.3), whose δ(ε) is closed form ([AnalyticGauss] Thm. 8): exact.

PLD arithmetic ([KJH20], [KH21], [ConnectDots]): the exact tails of each pair are discretised on a grid of
spacing ``h`` pessimistically ("connect the dots", [ConnectDots]: a dominating pair) and optimistically
(merged cells on the grid: a dominated pair), composed by FFT with the error terms of
:mod:`checker.crossval.pld_fft` (Chernoff-window truncation, rigorous; a round-off allowance,
heuristic), and read as ``ε(δ)`` or ``δ(ε)``: ``lower ≤ true ≤ upper``. ``h`` is halved until the
bracket's width is at most ``tolerance`` times its upper end (or the grid reaches its limit: the width
is then reported as it is). [GLW21]'s PRV accountant and dp_accounting's PLD accountant compute the same
curves (estimates with error bars; compared in the tests and ``bench/bench_account.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal

import numpy as np

from checker.crossval.curve_conversions import composed_delta, composed_epsilon
from checker.crossval.gaussian import (
    gaussian_delta,
    gaussian_epsilon,
    gaussian_mu,
    mixture_loss_range,
    mixture_loss_tails,
    mixture_tail_values,
)
from checker.crossval.privacy_curves import DiscretePLD, FloatArray, GridPLD, LossTails

__all__ = ["SAMPLINGS", "Bracket", "Run", "delta_bracket", "epsilon_bracket", "noise_for_epsilon"]

Sampling = Literal["poisson", "fixed", "shuffle", "all"]
SAMPLINGS: tuple[Sampling, ...] = ("poisson", "fixed", "shuffle", "all")
#: The neighbouring relation each sampling scheme is accounted under (module docstring).
RELATION = {"poisson": "add/remove one", "fixed": "replace one", "shuffle": "replace one",
            "all": "add/remove one"}
#: The largest number of rounds accepted (the FFT window grows with T).
MAX_ROUNDS = 10**9
#: Default relative width of a bracket: ``upper − lower ≤ TOLERANCE · upper``.
TOLERANCE = 5e-3
#: Finest grid spacing tried, and the largest composed grid (points) before refinement stops.
MIN_INTERVAL = 1e-7
MAX_GRID = 1 << 22
#: Grid halvings at most (a width that stops shrinking by a quarter ends them earlier).
REFINEMENTS = 5


@dataclass(frozen=True)
class Run:
    """A DP-SGD / DP-FedAvg run: noise multiplier ``Z``, rounds ``T``, sampling scheme and rate ``q``
    (``clients`` N and ``per_round`` K when known; ``fixed`` and ``shuffle`` need them or use ``q``
    as K/N)."""

    noise_multiplier: float
    sampling_rate: float
    rounds: int
    sampling: Sampling = "poisson"
    clients: int | None = None
    per_round: int | None = None

    def __post_init__(self) -> None:
        if not (self.noise_multiplier > 0 and math.isfinite(self.noise_multiplier)):
            raise ValueError(f"noise multiplier must be > 0 and finite, got {self.noise_multiplier!r}")
        if not 0 < self.sampling_rate <= 1:
            raise ValueError(f"sampling rate must be in (0, 1], got {self.sampling_rate!r}")
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise ValueError(f"rounds must be in 1..{MAX_ROUNDS}, got {self.rounds!r}")
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {', '.join(SAMPLINGS)}, got {self.sampling!r}")

    @property
    def relation(self) -> str:
        """The neighbouring relation the figures are for."""
        return RELATION[self.sampling]

    def batches_per_epoch(self) -> int:
        """``b = ⌈N/K⌉`` (``⌈1/q⌉`` without N and K)."""
        if self.clients and self.per_round:
            return math.ceil(self.clients / self.per_round)
        return math.ceil(1.0 / self.sampling_rate - 1e-12)


@dataclass(frozen=True)
class Bracket:
    """``lower ≤ true ≤ upper`` for one figure, with the grid spacing used (0: closed form)."""

    lower: float
    upper: float
    interval: float = 0.0

    @property
    def width(self) -> float:
        return self.upper - self.lower if math.isfinite(self.upper) else math.inf


# ------------------------------------------------------------------------------------------ the pairs
#: A pair as a function of the threshold grid to its exact tails, with an interval holding its loss.
PairTails = tuple[Callable[[FloatArray], LossTails], tuple[float, float]]


def _symmetrised(mu: float, q: float) -> PairTails:
    """The symmetrised fixed-size dominating pair (module docstring): for ε ≥ 0 the tails of the
    mixture pair ``(P, Q)``; for ε < 0, ``P*(L > ε) = 1 − Q(L > −ε)`` and ``Q*(L > ε) = 1 − P(L > −ε)``."""
    _, hi = mixture_loss_range(mu, q)
    top = max(hi, 0.0)

    def tails(eps: FloatArray) -> LossTails:
        bp, bq = mixture_tail_values(mu, q, np.abs(eps))
        neg = eps < 0
        p = np.where(neg, 1.0 - bq, bp)
        qq = np.where(neg, 1.0 - bp, bq)
        return LossTails(eps, p, qq, 0.0)

    return tails, (-top, top)


def _pairs(run: Run) -> tuple[list[PairTails], list[PairTails]]:
    """The pairs whose composed curves bound the run's from above and from below (module docstring)."""
    z, q = run.noise_multiplier, run.sampling_rate
    mu = 1 / z if run.sampling == "poisson" else 2 / z
    both: list[PairTails] = [(partial(mixture_loss_tails, mu, q, remove=rem),
                              mixture_loss_range(mu, q, remove=rem)) for rem in (False, True)]
    if run.sampling == "poisson":
        return both, both
    return [_symmetrised(mu, q)], both


def _grid(pair: PairTails, h: float, pessimistic: bool) -> GridPLD:
    tails, (lo, hi) = pair
    k = np.arange(math.floor(lo / h) - 1, math.ceil(hi / h) + 2)
    return tails(np.asarray(k * h, dtype=np.float64)).to_grid(h, pessimistic=pessimistic)


def _initial_interval(run: Run) -> float:
    """A grid spacing that resolves one round's loss (a thousandth of its spread, at most 1e-3) while
    the composed window stays well inside :data:`MAX_GRID` points."""
    ups, _ = _pairs(run)
    spread = max(hi - lo for _, (lo, hi) in ups)
    window = run.rounds * 0.5 * (1 / run.noise_multiplier) ** 2 * run.sampling_rate ** 2 + 40 * math.sqrt(
        run.rounds) * max(run.sampling_rate, 1e-3) * max(1.0, 1 / run.noise_multiplier) + spread
    return max(min(1e-3, spread / 1000), 8 * window / MAX_GRID, MIN_INTERVAL)


# ---------------------------------------------------------------------------------------- closed forms
def _gaussian_mus(run: Run) -> tuple[float, float]:
    """(μ of the upper curve, μ of the lower curve) of the closed-form schemes ``all`` and ``shuffle``
    (for ``shuffle`` the lower μ is that of the sum of each full epoch's releases)."""
    z = run.noise_multiplier
    if run.sampling == "all":
        mu = math.sqrt(run.rounds) / z
        return mu, mu
    b = run.batches_per_epoch()
    epochs = math.ceil(run.rounds / b)
    full = run.rounds // b
    return 2 * math.sqrt(epochs) / z, 2 * math.sqrt(full) / (z * math.sqrt(b))


#: Full epochs up to which the shuffled lower bound's binomial PLD is built atom by atom.
MAX_EPOCHS_EXACT = 200_000


def _shuffle_max_test(run: Run) -> list[DiscretePLD]:
    """Lower-bound PLDs of ``shuffle``: the realised pair (the record at ``±C e₁``, the others at
    ``−C e₁``: one round of each epoch is shifted by ``μ = 2/Z``) post-processed, per full epoch, to the
    test "the largest of the epoch's ``b`` releases exceeds t": ``Q(max > t) = 1 − Φ(t)^b``,
    ``P(max > t) = 1 − Φ(t)^{b−1}Φ(t − μ)``. The ``E`` epochs are independent, so the composed pair is a
    binomial PLD, exact; one per threshold t of a grid (both orders). Each is a lower bound."""
    from scipy import special, stats  # lazy: scipy.stats is slow to import

    b = run.batches_per_epoch()
    full = run.rounds // b
    if full < 1 or full > MAX_EPOCHS_EXACT or b < 2:
        return []
    mu = 2 / run.noise_multiplier
    k = np.arange(full + 1)
    out: list[DiscretePLD] = []
    for t in np.linspace(0.0, mu + 8.0, 49):
        lq = b * special.log_ndtr(t)
        lp = (b - 1) * special.log_ndtr(t) + special.log_ndtr(t - mu)
        q1, p1 = -math.expm1(lq), -math.expm1(lp)
        if not (0 < q1 < 1 and 0 < p1 < 1) or p1 <= q1:
            continue
        loss_hit = math.log(p1) - math.log(q1)
        loss_miss = math.log1p(-p1) - math.log1p(-q1)
        losses = k * loss_hit + (full - k) * loss_miss
        for sign, rate in ((1.0, p1), (-1.0, q1)):
            mass = stats.binom.pmf(k, full, rate)
            keep = mass > 1e-290  # subnormal masses are inaccurate; dropping P-mass only lowers δ
            out.append(DiscretePLD(sign * losses[keep], mass[keep]))
    return out


# ------------------------------------------------------------------------------------------- queries
def epsilon_bracket(run: Run, delta: float, tolerance: float = TOLERANCE) -> Bracket:
    """Certified ``[lower, upper]`` of ``ε(δ)`` for the run (module docstring).

    >>> b = epsilon_bracket(Run(1.0, 1.0, 4, "all"), 1e-5)
    >>> round(b.upper, 6) == round(gaussian_epsilon(2.0, 1e-5), 6), b.width < 1e-9
    (True, True)
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    if run.sampling in ("all", "shuffle"):
        mu_up, mu_lo = _gaussian_mus(run)
        up = gaussian_epsilon(mu_up, delta)
        lo = gaussian_epsilon(mu_lo, delta) if mu_lo > 0 else 0.0
        if run.sampling == "shuffle":
            lo = max([lo, *(p.epsilon(delta) for p in _shuffle_max_test(run))])
        return Bracket(max(0.0, lo - 1e-12 * max(1.0, lo)), max(up, lo))
    return _refine(run, tolerance, lambda base, t, pess: composed_epsilon(base, t, delta))


def delta_bracket(run: Run, epsilon: float, tolerance: float = TOLERANCE) -> Bracket:
    """Certified ``[lower, upper]`` of ``δ(ε)`` for the run."""
    if not (epsilon >= 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be >= 0 and finite, got {epsilon!r}")
    if run.sampling in ("all", "shuffle"):
        mu_up, mu_lo = _gaussian_mus(run)
        up = float(gaussian_delta(mu_up, epsilon)[0])
        lo = float(gaussian_delta(mu_lo, epsilon)[0]) if mu_lo > 0 else 0.0
        if run.sampling == "shuffle":
            lo = max([lo, *(float(p.delta([epsilon])[0]) for p in _shuffle_max_test(run))])
        return Bracket(lo * (1 - 1e-12), max(up, lo) * (1 + 1e-12))
    return _refine(run, tolerance, lambda base, t, pess: float(composed_delta(base, t, [epsilon])[0]))


def _refine(run: Run, tolerance: float, figure: Callable[[GridPLD, int, bool], float]) -> Bracket:
    """Evaluate ``figure`` on the pessimistic and optimistic grids of every pair (the worst pair on each
    side), halving the grid spacing until ``width ≤ tolerance·upper``."""
    ups, los = _pairs(run)
    h = _initial_interval(run)
    best: Bracket | None = None
    for _ in range(REFINEMENTS):
        upper = max(figure(_grid(p, h, True), run.rounds, True) for p in ups)
        lower = max(figure(_grid(p, h, False), run.rounds, False) for p in los)
        got = Bracket(min(lower, upper), upper, h)
        improved = best is None or got.width < 0.75 * best.width
        if best is None or got.width < best.width:
            best = got
        if (not math.isfinite(upper) or got.width <= tolerance * upper or h / 2 < MIN_INTERVAL
                or not improved):
            break
        h /= 2
    assert best is not None
    return best


def noise_for_epsilon(run: Run, target: float, delta: float, slack: float = 0.01,
                      tolerance: float = TOLERANCE) -> tuple[float, Bracket]:
    """The smallest noise multiplier Z (to within ``slack``·target in ε) whose certified upper ε(δ) is
    at most ``target``: bisection on Z (ε's upper bound decreases in Z), stopped once the upper bound
    lies in ``[(1 − slack)·target, target]``. Returns Z and the bracket at Z (the run's own Z is
    ignored). ``all`` is solved in closed form (``Z = √T/μ`` with μ from :func:`gaussian_mu`).

    >>> z, b = noise_for_epsilon(Run(1.0, 1.0, 100, "all"), 2.0, 1e-5)
    >>> 0.99 * 2 <= b.upper <= 2.0
    True
    """
    if not (target > 0 and math.isfinite(target)):
        raise ValueError(f"target epsilon must be > 0 and finite, got {target!r}")

    def at(z: float) -> Bracket:
        return epsilon_bracket(replace(run, noise_multiplier=z), delta, tolerance)

    if run.sampling == "all":
        mu = gaussian_mu(target, delta)
        z = math.sqrt(run.rounds) / mu * (1 + 1e-9)
        return z, at(z)
    lo, hi = 0.5, 1.0
    b_hi = at(hi)
    while b_hi.upper > target:
        lo, hi = hi, hi * 2
        if hi > 1e6:
            raise ValueError(f"no noise multiplier up to 1e6 reaches epsilon {target}")
        b_hi = at(hi)
    while lo > 1e-3 and at(lo).upper <= target:
        hi, b_hi, lo = lo, at(lo), lo / 2
    for _ in range(60):
        if b_hi.upper >= (1 - slack) * target:
            break
        mid = math.sqrt(lo * hi)
        b_mid = at(mid)
        if b_mid.upper > target:
            lo = mid
        else:
            hi, b_hi = mid, b_mid
        if hi - lo <= 1e-9 * hi:
            break
    return hi, b_hi
