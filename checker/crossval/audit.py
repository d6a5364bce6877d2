"""Privacy audits: a likelihood-ratio membership-inference attack turned into a lower bound on ε.

[SecAgg-MIA] §4.3. The adversary tests ``H: z ~ M(x_0)`` against ``H': z ~ M(x_0')`` and rejects H when the
log-likelihood ratio ``ln P_y(z − x_0)/P_y(z − x_0') ≤ θ`` (eq. 9), for the worst-case pair of eq. (10)
(the maximiser of the Mahalanobis distance ``Δ_{x,x'}`` under the noise covariance). When the noise density
is unknown it is replaced by ``N(μ_y, Σ_y)`` (eq. 11) with the sample mean and covariance.

Any test achieves some (FPR, FNR); if M is (ε, δ)-DP then (eq. 8)
``ε ≥ ln max{(1 − δ − FPR)/FNR, (1 − δ − FNR)/FPR}``. The rates are estimated by Monte Carlo with a seeded
``numpy.random.Generator``; replacing them by Clopper–Pearson upper confidence bounds (``scipy.stats.beta``)
gives a lower bound on ε valid with the requested confidence. Thresholds are chosen on an independent
calibration sample and a Bonferroni correction over all thresholds and both rates makes the bound hold
simultaneously, so taking the best threshold does not invalidate it. The points (FPR_up, FNR_up) are
upper bounds on the trade-off function, ``f(FPR_up) ≤ FNR_up`` (f is non-increasing).

The statistic is rounded to ``_DIGITS`` decimals: the sampled mechanism is a floating-point one, whose
low-order bits of ``fl(x + y)`` differ between the two inputs (Mironov, CCS 2012); without rounding the
test would audit those artefacts instead of the ideal mechanism.

Whatever decision rule is used (exact or approximate likelihood), the bound is valid: approximations only
make it weaker.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from checker.crossval.gaussian import gaussian_epsilon, worst_case_delta
from checker.crossval.secagg import WIDTH, irwin_hall_lattice, secagg_epsilon
from checker.errors import InputError, Position

FloatArray = NDArray[np.float64]

#: Decimals kept of the log-likelihood-ratio statistic (see the module docstring).
_DIGITS = 9

__all__ = [
    "AuditResult",
    "DiscreteMechanism",
    "NoiseMechanism",
    "audit",
    "clopper_pearson_upper",
    "eps_lower_bound",
    "parse_mechanism",
]


# ---------------------------------------------------------------------------------------------------
# Mechanisms
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoiseMechanism:
    """Additive-noise mechanism ``M(x) = x + y`` on inputs in the box ``[lower, upper]``.

    ``sample_noise(size, rng)`` draws ``(size, d)`` noise vectors; ``noise_logpdf(y)`` (optional) is the
    log-density of y summed over coordinates (row-wise). ``reference_eps(δ)`` (optional) is the mechanism's
    exact (or certified upper) ε(δ), used to report tightness.
    """

    name: str
    lower: FloatArray
    upper: FloatArray
    sample_noise: Callable[[int, np.random.Generator], FloatArray]
    noise_logpdf: Callable[[FloatArray], FloatArray] | None = None
    noise_cov: FloatArray | None = None
    reference_eps: Callable[[float], float] | None = None

    @property
    def dim(self) -> int:
        return int(np.size(self.lower))


@dataclass(frozen=True)
class DiscreteMechanism:
    """Two exact finite output distributions of a mechanism on a neighbouring input pair (e.g. a formal
    model's observation under D and D'). Outcomes are arbitrary hashable values."""

    name: str
    p0: Mapping[Hashable, Fraction]
    p1: Mapping[Hashable, Fraction]
    reference_eps: Callable[[float], float] | None = None
    outcomes: tuple[object, ...] = field(init=False)

    def __post_init__(self) -> None:
        keys = tuple(sorted(set(self.p0) | set(self.p1), key=repr))
        object.__setattr__(self, "outcomes", keys)
        for dist, label in ((self.p0, "P0"), (self.p1, "P1")):
            if any(Fraction(v) < 0 for v in dist.values()) or sum(Fraction(v) for v in dist.values()) != 1:
                raise ValueError(f"{label} must be a probability distribution (non-negative, sum 1)")

    def arrays(self) -> tuple[FloatArray, FloatArray]:
        return (
            np.array([float(self.p0.get(k, 0)) for k in self.outcomes]),
            np.array([float(self.p1.get(k, 0)) for k in self.outcomes]),
        )


Mechanism = NoiseMechanism | DiscreteMechanism


def gaussian_mechanism(mu: float, d: int = 1) -> NoiseMechanism:
    """``x + N(0, I_d)`` on ``[0, μ/√d]^d``: worst-case Δ = μ."""
    if not mu > 0 or d < 1:
        raise ValueError("need mu > 0 and d >= 1")
    width = mu / math.sqrt(d)
    return NoiseMechanism(
        f"gaussian:mu={mu:g}:d={d}",
        np.zeros(d),
        np.full(d, width),
        lambda size, rng: rng.standard_normal((size, d)),
        lambda y: -0.5 * np.sum(y * y, axis=1),
        np.eye(d),
        lambda delta: gaussian_epsilon(mu, delta),
    )


def laplace_mechanism(b: float, sensitivity: float = 1.0) -> NoiseMechanism:
    """``x + Lap(b)`` on ``[0, sensitivity]``: exact ε = sensitivity/b (pure), ε(δ) from the closed form."""
    if not b > 0 or not sensitivity > 0:
        raise ValueError("need b > 0 and sensitivity > 0")
    mu = sensitivity / b

    def ref(delta: float) -> float:
        if delta <= 0:
            return mu
        return max(0.0, mu + 2 * math.log1p(-min(delta, 1.0))) if delta < 1 else 0.0

    return NoiseMechanism(
        f"laplace:b={b:g}:s={sensitivity:g}",
        np.zeros(1),
        np.full(1, sensitivity),
        lambda size, rng: rng.laplace(0.0, b, (size, 1)),
        lambda y: -np.abs(y[:, 0]) / b,
        np.array([[2 * b * b]]),
        ref,
    )


def rr_mechanism(p: Fraction) -> DiscreteMechanism:
    """Randomized response on one bit, truth with probability p ≥ 1/2: exact ε = ln(p/(1−p))."""
    if not Fraction(1, 2) <= p <= 1:
        raise ValueError("p must be in [1/2, 1]")
    pf = float(p)

    def ref(delta: float) -> float:
        if delta >= 2 * pf - 1:
            return 0.0
        return math.inf if pf == 1 else math.log((pf - delta) / (1 - pf))

    truth: dict[Hashable, Fraction] = {1: p, 0: 1 - p}
    lie: dict[Hashable, Fraction] = {1: 1 - p, 0: p}
    return DiscreteMechanism(f"rr:p={p}", truth, lie, ref)


def secagg_mechanism(entries: str, n: int, d: int = 1) -> NoiseMechanism:
    """Secure aggregation ``x_0 + Σ_{i≤n} x_i`` ([SecAgg-MIA] §4.2): exponential entries (x_0 ∈ [0,4]^d,
    Gamma(n,1) noise) or uniform entries (x_0 ∈ [−½,½]^d, shifted Irwin–Hall noise)."""
    if entries not in WIDTH or n < 1 or d < 1:
        raise ValueError("entries must be exponential|uniform, n >= 1, d >= 1")
    if entries == "exponential":

        def sample(size: int, rng: np.random.Generator) -> FloatArray:
            return rng.gamma(n, 1.0, (size, d))

        def logpdf(y: FloatArray) -> FloatArray:
            return np.sum(stats.gamma.logpdf(y, n), axis=1)

        return NoiseMechanism(
            f"secagg:exponential:n={n}:d={d}",
            np.zeros(d),
            np.full(d, 4.0),
            sample,
            logpdf,
            n * np.eye(d),
            lambda delta: secagg_epsilon("exponential", n, d, delta),
        )

    m = 200
    dens, _ = irwin_hall_lattice(n, m)
    with np.errstate(divide="ignore"):
        logd = np.log(dens)
    grid = np.arange(len(dens)) / m - n / 2

    def sample_u(size: int, rng: np.random.Generator) -> FloatArray:
        # sum of n uniforms per entry, in chunks of at most ~4e6 uniforms (memory stays bounded)
        out = np.empty((size, d))
        step = max(1, 4_000_000 // (d * n))
        for start in range(0, size, step):
            stop = min(size, start + step)
            out[start:stop] = rng.random((stop - start, d, n)).sum(axis=2)
        return out - n / 2

    def logpdf_u(y: FloatArray) -> FloatArray:
        # log-linear interpolation of the lattice density (an approximation: the test stays valid)
        v = np.interp(y, grid, logd, left=-np.inf, right=-np.inf)
        return np.sum(v, axis=1)

    return NoiseMechanism(
        f"secagg:uniform:n={n}:d={d}",
        np.full(d, -0.5),
        np.full(d, 0.5),
        sample_u,
        logpdf_u,
        (n / 12.0) * np.eye(d),
        lambda delta: secagg_epsilon("uniform", n, d, delta),
    )


def parse_mechanism(text: str) -> Mechanism:
    """Parse a mechanism string (CLI ``flcheck audit MECHANISM``):

    ``gaussian:mu=MU[:d=D]``, ``laplace:b=B[:s=SENS]``, ``rr:p=P`` (P a fraction such as ``3/4``),
    ``secagg:exponential|uniform:n=N[:d=D]``. Errors name the column of the offending part.
    """
    pos = lambda col: Position("<mechanism>", 1, col)  # noqa: E731
    parts = text.split(":")
    kind = parts[0]
    col = len(kind) + 2
    opts: dict[str, str] = {}
    sub = None
    for i, part in enumerate(parts[1:]):
        if "=" not in part:
            if kind == "secagg" and i == 0:
                sub = part
                col += len(part) + 1
                continue
            raise InputError(f"bad option {part!r} in {text!r}", pos(col), "key=value")
        k, v = part.split("=", 1)
        opts[k] = v
        col += len(part) + 1

    def num(key: str, default: str | None = None, kind_: type = float) -> float:
        raw = opts.pop(key, default)
        if raw is None:
            raise InputError(f"mechanism {kind!r} needs {key}=…", pos(len(text) + 1), f"{key}=NUMBER")
        try:
            return kind_(Fraction(raw)) if kind_ is not int else int(raw)
        except (ValueError, ZeroDivisionError):
            where = text.find(f"{key}=") + len(key) + 2
            raise InputError(f"bad number {raw!r} for {key}", pos(where), "a number or fraction") from None

    try:
        if kind == "gaussian":
            mech: Mechanism = gaussian_mechanism(num("mu"), int(num("d", "1", int)))
        elif kind == "laplace":
            mech = laplace_mechanism(num("b"), num("s", "1"))
        elif kind == "rr":
            raw = opts.pop("p", None)
            if raw is None:
                raise InputError("mechanism 'rr' needs p=…", pos(len(text) + 1), "p=FRACTION")
            try:
                p = Fraction(raw)
            except (ValueError, ZeroDivisionError):
                raise InputError(f"bad fraction {raw!r}", pos(text.find("p=") + 3), "p=FRACTION") from None
            mech = rr_mechanism(p)
        elif kind == "secagg":
            if sub not in ("exponential", "uniform"):
                raise InputError(f"bad secagg entries {sub!r}", pos(8), "exponential or uniform")
            mech = secagg_mechanism(sub, int(num("n", None, int)), int(num("d", "1", int)))
        else:
            raise InputError(f"unknown mechanism {kind!r}", pos(1), "gaussian, laplace, rr or secagg")
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(str(exc), pos(1), "valid mechanism parameters") from None
    if opts:
        raise InputError(f"unknown option(s) {sorted(opts)} for {kind!r}", pos(1))
    return mech


# ---------------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------------


def clopper_pearson_upper(k: ArrayLike, n: int, alpha: float) -> FloatArray:
    """One-sided [ClopperPearson] upper bound: ``P(p ≤ bound) ≥ 1 − alpha`` for k successes in n.

    With no success the bound solves ``(1 − p)^n = alpha``; with n successes it is 1:

    >>> bound = clopper_pearson_upper([0, 10], 10, 0.05)
    >>> round(float(bound[0]), 6), round(1 - 0.05 ** (1 / 10), 6), float(bound[1])
    (0.258866, 0.258866, 1.0)
    """
    k_arr = np.atleast_1d(np.asarray(k, dtype=float))
    with np.errstate(invalid="ignore"):
        b = stats.beta.ppf(1 - alpha, k_arr + 1, np.maximum(n - k_arr, 1e-300))
    return np.where(k_arr >= n, 1.0, b)


def eps_lower_bound(fpr: FloatArray | float, fnr: FloatArray | float, delta: float = 0.0) -> FloatArray:
    """Eq. (8): ``ln max{(1 − δ − FPR)/FNR, (1 − δ − FNR)/FPR}`` clipped at 0 (``inf`` if a rate is 0
    while the numerator is positive).

    Randomized response with truth probability 3/4 has FPR = FNR = 1/4, hence ε = ln 3:

    >>> round(float(eps_lower_bound(0.25, 0.25)[0]), 6), round(math.log(3), 6)
    (1.098612, 1.098612)
    >>> eps_lower_bound([0.0, 0.5], [0.5, 0.5]).tolist()
    [inf, 0.0]
    """
    a = np.atleast_1d(np.asarray(fpr, dtype=float))
    b = np.atleast_1d(np.asarray(fnr, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = np.where(1 - delta - a > 0, (1 - delta - a) / b, 0.0)
        r2 = np.where(1 - delta - b > 0, (1 - delta - b) / a, 0.0)
        v = np.log(np.maximum(np.maximum(r1, r2), 1.0))
    return np.where(np.isnan(v), 0.0, v)


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit: the best threshold's empirical rates, their confidence bounds and the lower
    bound on ε at ``delta``; ``points_fpr``/``points_fnr`` are the (upper-bounded) achieved pairs for all
    thresholds, i.e. an upper bound on the trade-off curve."""

    mechanism: str
    method: str
    trials: int
    confidence: float
    delta: float
    seed: int
    fpr: float
    fnr: float
    fpr_upper: float
    fnr_upper: float
    eps_lower: float
    threshold: float
    points_fpr: FloatArray
    points_fnr: FloatArray
    pair: tuple[list[float], list[float]]
    reference_eps: float | None

    def to_json(self) -> dict[str, object]:
        return {
            "mechanism": self.mechanism,
            "method": self.method,
            "trials": self.trials,
            "confidence": self.confidence,
            "delta": self.delta,
            "seed": self.seed,
            "fpr": self.fpr,
            "fnr": self.fnr,
            "fpr_upper": self.fpr_upper,
            "fnr_upper": self.fnr_upper,
            "eps_lower": self.eps_lower,
            "eps": self.reference_eps,
            "threshold": self.threshold,
            "pair": self.pair,
            "tradeoff_upper": [
                [float(a), float(b)] for a, b in zip(self.points_fpr, self.points_fnr, strict=True)
            ],
        }


def _rates(s0: FloatArray, s1: FloatArray, thresholds: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Counts of ``s ≤ θ`` under H (false positives: H rejected although true) and of ``s > θ`` under H'
    (false negatives)."""
    s0s = np.sort(s0)
    s1s = np.sort(s1)
    fp = np.searchsorted(s0s, thresholds, side="right").astype(float)
    fn = len(s1s) - np.searchsorted(s1s, thresholds, side="right").astype(float)
    return fp, fn


def audit(
    mechanism: Mechanism,
    trials: int = 10_000,
    confidence: float = 0.95,
    delta: float = 0.0,
    seed: int = 0,
    method: str = "exact",
    n_thresholds: int = 32,
) -> AuditResult:
    """Run the likelihood-ratio membership-inference audit (eq. 9 exact, eq. 11 ``method="gaussian"``).

    ``trials`` outputs are drawn under each hypothesis (plus ``trials // 4`` calibration draws each, and for
    ``method="gaussian"`` on a noise mechanism ``trials`` noise draws to estimate ``μ_y, Σ_y``). The lower
    bound holds with probability ≥ ``confidence`` over the randomness of the audit.

    The audited lower bound never exceeds the mechanism's true ε (ln 3 for randomized response at 3/4):

    >>> result = audit(parse_mechanism("rr:p=3/4"), trials=2000, seed=0)
    >>> 0 < result.eps_lower <= math.log(3)
    True
    """
    if trials < 1:
        raise ValueError("trials must be >= 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    if method not in ("exact", "gaussian"):
        raise ValueError("method must be 'exact' or 'gaussian'")
    rng = np.random.default_rng(seed)
    n_cal = max(trials // 4, 16)

    if isinstance(mechanism, DiscreteMechanism):
        p0, p1 = mechanism.arrays()
        with np.errstate(divide="ignore"):
            llr = np.log(p0) - np.log(p1)  # ±inf where one side is zero
        llr = np.clip(llr, -1e15, 1e15)

        def draw(which: int, size: int) -> FloatArray:
            probs = p0 if which == 0 else p1
            return llr[rng.choice(len(probs), size=size, p=probs / probs.sum())]

        pair: tuple[list[float], list[float]] = ([0.0], [1.0])
        used = "exact"
    else:
        cov = mechanism.noise_cov
        mean = None
        use_gauss = method == "gaussian" or mechanism.noise_logpdf is None
        if use_gauss:
            noise = mechanism.sample_noise(max(trials, 2 * mechanism.dim + 2), rng)
            mean = noise.mean(axis=0)
            cov = np.atleast_2d(np.cov(noise, rowvar=False))
        if cov is None:
            cov = np.eye(mechanism.dim)
        _, x0, x1 = worst_case_delta(mechanism.lower, mechanism.upper, cov)
        pair = (x0.tolist(), x1.tolist())
        if use_gauss:
            prec = np.linalg.inv(cov)
            assert mean is not None
            w = prec @ (x0 - x1)  # eq. (11) is linear in z: (z − μ)ᵀΣ⁻¹(x0 − x1) + const
            c = -0.5 * (x0 @ prec @ x0 - x1 @ prec @ x1)

            def stat(z: FloatArray) -> FloatArray:
                return np.round((z - mean) @ w + c, _DIGITS)

            used = "gaussian"
        else:
            logpdf = mechanism.noise_logpdf
            assert logpdf is not None

            def stat(z: FloatArray) -> FloatArray:
                a = logpdf(z - x0)
                b = logpdf(z - x1)
                with np.errstate(invalid="ignore"):
                    v = a - b
                v = np.where(np.isnan(v), 0.0, v)
                return np.asarray(np.round(np.clip(v, -1e15, 1e15), _DIGITS), dtype=np.float64)

            used = "exact"

        def draw(which: int, size: int) -> FloatArray:
            x = x0 if which == 0 else x1
            return stat(x + mechanism.sample_noise(size, rng))

    cal = np.concatenate([draw(0, n_cal), draw(1, n_cal)])
    thresholds = np.unique(np.quantile(cal, np.linspace(0.0, 1.0, n_thresholds), method="inverted_cdf"))
    s0 = draw(0, trials)
    s1 = draw(1, trials)
    fp, fn = _rates(s0, s1, thresholds)
    a = (1 - confidence) / (2 * len(thresholds))
    fpr_up = clopper_pearson_upper(fp, trials, a)
    fnr_up = clopper_pearson_upper(fn, trials, a)
    bounds = eps_lower_bound(fpr_up, fnr_up, delta)
    best = int(np.argmax(bounds))
    ref = mechanism.reference_eps(delta) if mechanism.reference_eps is not None else None
    return AuditResult(
        mechanism=mechanism.name,
        method=used,
        trials=trials,
        confidence=confidence,
        delta=delta,
        seed=seed,
        fpr=float(fp[best] / trials),
        fnr=float(fn[best] / trials),
        fpr_upper=float(fpr_up[best]),
        fnr_upper=float(fnr_up[best]),
        eps_lower=float(bounds[best]),
        threshold=float(thresholds[best]),
        points_fpr=fpr_up,
        points_fnr=fnr_up,
        pair=pair,
        reference_eps=ref,
    )
