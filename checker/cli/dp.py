"""``flcheck dp`` (numerical privacy curves) and ``flcheck audit`` (membership-inference audits).

* ``flcheck dp gaussian --mu MU --eps E…`` — closed-form δ(ε) of the μ-Gaussian mechanism (seed 000,
  Thm. 4.2); ``--delta D…`` adds ε(δ). With correlated noise, ``--cov 'a,b;c,d' [--width w1,w2]``
  computes μ = max Δ_{x,x'} over the input box (eq. 10, Proposition 1) instead of ``--mu``.
* ``flcheck dp secagg --entries exponential|uniform --n N --d D --eps E…`` — SecAgg as a noise mechanism
  (seed 000, §4.2): certified upper curve, optimistic lower curve, Gaussian approximation (Thm. 4.1).
* ``flcheck dp fig1 [--n N] [--dims D…] --plot FILE.png`` — seed 000 Fig. 1 (δ(ε) rises quickly with d).
* ``flcheck audit TARGET --trials T --confidence C`` — likelihood-ratio audit (eq. 8–11). TARGET is a
  mechanism string (``gaussian:mu=1[:d=D]``, ``laplace:b=1[:s=S]``, ``rr:p=3/4``,
  ``secagg:uniform|exponential:n=10[:d=1]``), a JSON file ``{"p0": {outcome: prob}, "p1": {...},
  "formal_eps": E}`` (probabilities as numbers or fraction strings), or a scenario file whose
  observation distributions come from ``checker.app.privacy_fl`` (when that module is available).

All take ``--json`` (keys ``eps``, ``delta``; audits also ``fpr``, ``fnr``, ``eps_lower``) and
``--plot FILE.png`` (written atomically). Exit codes: 0 done/consistent, 1 an audit contradicts the
reference or formal ε, 2 bad input.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from checker.errors import InputError, Position

AUDIT_KINDS = ("gaussian", "laplace", "rr", "secagg")


def _finite(v: float | None) -> float | str | None:
    if v is None:
        return None
    return "inf" if math.isinf(v) else float(v)


def _short(v: list[float], k: int = 6) -> str:
    """A vector for the terminal: the first k entries, then the count."""
    head = ", ".join(f"{x:g}" for x in v[:k])
    return f"[{head}]" if len(v) <= k else f"[{head}, … ({len(v)} coordinates)]"


def _emit(args: argparse.Namespace, payload: dict[str, Any], table: list[tuple[str, ...]]) -> None:
    if args.json:
        print(json.dumps(payload, indent=2))
        return
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _nonneg(name: str, v: float) -> None:
    if not v >= 0 or math.isnan(v):
        raise InputError(f"--{name} must be >= 0, got {v}", Position(f"--{name}"), "a number >= 0")


def _parse_matrix(text: str, option: str) -> np.ndarray:
    """``"a,b;c,d"`` -> 2-D array (rows separated by ``;``), with a column-precise error."""
    rows = []
    col = 1
    for r in text.split(";"):
        vals = []
        for item in r.split(","):
            try:
                vals.append(float(Fraction(item.strip())))
            except (ValueError, ZeroDivisionError):
                raise InputError(
                    f"bad number {item.strip()!r}", Position(option, 1, col), "a number"
                ) from None
            col += len(item) + 1
        rows.append(vals)
    if len({len(r) for r in rows}) != 1:
        raise InputError(
            "rows of different lengths", Position(option, 1, 1), "a rectangular matrix 'a,b;c,d'"
        )
    return np.array(rows, dtype=float)


def _gaussian_mu(args: argparse.Namespace) -> tuple[float, dict[str, Any]]:
    """μ from ``--mu`` or, with ``--cov``, the worst-case Mahalanobis Δ over the box ``[0, width]``
    (seed 000 eq. 10, Proposition 1)."""
    from checker.crossval.gaussian import worst_case_delta

    if args.cov is None:
        if args.mu is None:
            raise InputError(
                "give --mu or --cov (with --width)", Position("--mu"), "--mu MU or --cov 'a,b;c,d'"
            )
        _nonneg("mu", args.mu)
        return float(args.mu), {}
    cov = _parse_matrix(args.cov, "--cov")
    d = cov.shape[0]
    if cov.shape != (d, d) or not np.allclose(cov, cov.T) or np.any(np.linalg.eigvalsh(cov) <= 0):
        raise InputError("--cov must be a symmetric positive definite matrix", Position("--cov"), "Σ ≻ 0")
    width = _parse_matrix(args.width, "--width").ravel() if args.width else np.ones(d)
    if width.size != d or np.any(width < 0):
        raise InputError(f"--width needs {d} non-negative numbers", Position("--width"), "w1,w2,…")
    try:
        mu, x, xp = worst_case_delta(np.zeros(d), width, cov)
    except ValueError as exc:
        raise InputError(str(exc), Position("--cov")) from None
    return mu, {"worst_pair": [x.tolist(), xp.tolist()], "cov": cov.tolist(), "width": width.tolist()}


def _cmd_gaussian(args: argparse.Namespace) -> int:
    from checker.crossval.gaussian import gaussian_delta, gaussian_epsilon

    mu, extra = _gaussian_mu(args)
    args.mu = mu
    eps = np.asarray(args.eps, dtype=float)
    delta = gaussian_delta(mu, eps)
    payload: dict[str, Any] = {
        "mechanism": "gaussian",
        "mu": mu,
        **extra,
        "eps": eps.tolist(),
        "delta": delta.tolist(),
    }
    table = [("eps", "delta")] + [(f"{e:g}", f"{d:.12g}") for e, d in zip(eps, delta, strict=True)]
    if args.delta:
        for dv in args.delta:
            if not 0 <= dv <= 1:
                raise InputError(
                    f"--delta must be in [0, 1], got {dv}", Position("--delta"), "0 <= delta <= 1"
                )
        inv = [gaussian_epsilon(args.mu, dv) for dv in args.delta]
        payload["eps_for_delta"] = {f"{dv:g}": _finite(v) for dv, v in zip(args.delta, inv, strict=True)}
        table += [(f"eps({dv:g})", f"{v:.12g}") for dv, v in zip(args.delta, inv, strict=True)]
    if args.plot:
        from checker.crossval.plots import plot_curves, save_figure

        grid = np.linspace(0, max(float(eps.max()) if len(eps) else 1.0, 1.0) * 1.5, 301)
        save_figure(
            plot_curves(
                grid, {f"Gaussian μ={args.mu:g}": gaussian_delta(args.mu, grid)}, "Gaussian mechanism"
            ),
            args.plot,
        )
    _emit(args, payload, table)
    return 0


def _cmd_secagg(args: argparse.Namespace) -> int:
    from checker.crossval.secagg import secagg_curve

    if args.n < 1 or args.d < 1:
        raise InputError("--n and --d must be >= 1", Position("--n/--d"), "positive integers")
    if not args.interval > 0:
        raise InputError("--interval must be > 0", Position("--interval"), "a positive number")
    eps = np.asarray(args.eps, dtype=float)
    c = secagg_curve(args.entries, args.n, args.d, eps, interval=args.interval)
    payload = {
        "mechanism": "secagg",
        "entries": args.entries,
        "n": args.n,
        "d": args.d,
        "interval": args.interval,
        "eps": eps.tolist(),
        "delta": c.bracket.upper.tolist(),
        "delta_lower": c.bracket.lower.tolist(),
        "error": c.bracket.error,
        "gaussian_mu": c.gaussian_mu,
        "gaussian_delta": c.gaussian.tolist(),
    }
    table = [("eps", "delta (upper)", "delta (lower)", "Gaussian approx.")] + [
        (f"{e:g}", f"{u:.10g}", f"{lo:.10g}", f"{g:.10g}")
        for e, u, lo, g in zip(eps, c.bracket.upper, c.bracket.lower, c.gaussian, strict=True)
    ]
    table.append(("max width", f"{c.bracket.error:.3g}", "(certified: lower ≤ δ ≤ upper)", ""))
    if args.delta:
        from checker.crossval.gaussian import gaussian_epsilon

        for dv in args.delta:
            if not 0 <= dv <= 1:
                raise InputError(
                    f"--delta must be in [0, 1], got {dv}", Position("--delta"), "0 <= delta <= 1"
                )
        inv = {f"{dv:g}": max(p.epsilon(dv) for p in c.plds) for dv in args.delta}
        inv_g = {f"{dv:g}": gaussian_epsilon(c.gaussian_mu, dv) for dv in args.delta}
        payload["eps_for_delta"] = {k: _finite(v) for k, v in inv.items()}
        payload["gaussian_eps_for_delta"] = {k: _finite(v) for k, v in inv_g.items()}
        table += [(f"eps({k}) upper", f"{v:.8g}", "", f"{inv_g[k]:.8g}") for k, v in inv.items()]
    if args.plot:
        from checker.crossval.plots import plot_curves, save_figure

        grid = np.linspace(0, max(float(eps.max()) if len(eps) else 1.0, 1.0) * 1.5, 201)
        cg = secagg_curve(args.entries, args.n, args.d, grid, interval=max(args.interval, 1e-3))
        fig = plot_curves(
            grid,
            {"SecAgg (upper)": cg.delta, f"Gaussian μ={cg.gaussian_mu:.3g}": cg.gaussian},
            f"SecAgg, {args.entries} entries, n={args.n}, d={args.d}",
            bands={"bracket": (cg.bracket.lower, cg.bracket.upper)},
        )
        save_figure(fig, args.plot)
    _emit(args, payload, table)
    return 0


def _cmd_fig1(args: argparse.Namespace) -> int:
    from checker.crossval.plots import fig1, save_figure

    if args.n < 1 or any(d < 1 for d in args.dims):
        raise InputError("--n and --dims must be >= 1", Position("--n/--dims"), "positive integers")
    grid = np.linspace(0.0, 20.0, 201)
    fig, data = fig1(args.n, args.dims, grid, interval=args.interval)
    if args.plot:
        save_figure(fig, args.plot)
    else:
        import matplotlib.pyplot as plt

        plt.close(fig)
    eps = np.asarray(args.eps, dtype=float)
    rows: list[tuple[str, ...]] = [
        ("entries", "d", *[f"δ({e:g})" for e in eps], *[f"Gauss δ({e:g})" for e in eps])
    ]
    out: dict[str, Any] = {"n": args.n, "eps": eps.tolist(), "curves": []}
    for entries, curves in data.items():
        for c in curves:
            d_up = np.interp(eps, c.eps, c.delta)
            d_g = np.interp(eps, c.eps, c.gaussian)
            rows.append((entries, str(c.d), *[f"{v:.4g}" for v in d_up], *[f"{v:.4g}" for v in d_g]))
            out["curves"].append(
                {"entries": entries, "d": c.d, "delta": d_up.tolist(), "gaussian_delta": d_g.tolist()}
            )
    out["delta"] = [c["delta"] for c in out["curves"]]
    _emit(args, out, rows)
    return 0


def _load_distributions(path: Path) -> tuple[dict[object, Fraction], dict[object, Fraction], float | None]:
    """Read a JSON distributions file (see the module docstring)."""
    try:
        raw = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(
            f"invalid JSON: {exc.msg}", Position(str(path), exc.lineno, exc.colno), "JSON"
        ) from None
    if not isinstance(raw, dict) or "p0" not in raw or "p1" not in raw:
        raise InputError("missing keys", Position(str(path), 1, 1), 'an object with "p0" and "p1"')

    def conv(key: str) -> dict[object, Fraction]:
        d = raw[key]
        if not isinstance(d, dict):
            raise InputError(f'"{key}" is not an object', Position(str(path)), "outcome -> probability")
        out: dict[object, Fraction] = {}
        for k, v in d.items():
            try:
                out[k] = Fraction(str(v))
            except (ValueError, ZeroDivisionError):
                raise InputError(
                    f"bad probability {v!r} for {key}[{k!r}]", Position(str(path)), "a number"
                ) from None
        if any(v < 0 for v in out.values()) or sum(out.values()) != 1:
            raise InputError(f'"{key}" does not sum to 1', Position(str(path)), "a probability distribution")
        return out

    fe = raw.get("formal_eps")
    return conv("p0"), conv("p1"), None if fe is None else float(fe)


def _scenario_distributions(
    target: str, observe: str = "curmodpar"
) -> tuple[dict[object, Fraction], dict[object, Fraction], float | None, str]:
    """The worst neighbouring pair's observation distributions ``(P0, P1)``, the formal ε* and a label,
    from the privacy application layer (``checker.app.privacy_fl.privacy_report`` on the FL system that
    ``checker.cli.privacy.load_fl_model`` builds from a scenario file or ``example:NAME``).
    Guarded: a clear error when that layer is not available in this build."""
    where = Position(target)
    try:
        app = importlib.import_module("checker.app.privacy_fl")
        cmd = importlib.import_module("checker.cli.privacy")
    except ImportError as exc:
        raise InputError(
            f"auditing a model needs checker.app.privacy_fl (the privacy checker), not available: {exc}",
            where,
            "a mechanism string or a JSON distributions file",
        ) from None
    report_fn = getattr(app, "privacy_report", None)
    load_fn = getattr(cmd, "load_fl_model", None)
    if not callable(report_fn) or not callable(load_fn):
        raise InputError(
            "checker.app.privacy_fl has no privacy_report / checker.cli.privacy no load_fl_model",
            where,
            "a mechanism string or a JSON distributions file",
        )
    system, universe, declared = load_fn(target)
    report = report_fn(system, universe, observe=observe, literal=False, declared=declared)
    worst = getattr(report, "worst", None)
    if worst is None:
        raise InputError(
            "the model has no neighbouring dataset pair to audit", where, "a model with neighbours"
        )
    formal = float(worst.epsilon.epsilon)
    label = f"{getattr(worst, 'reading', '')} {getattr(worst, 'label', '')}".strip()
    return (
        {k: Fraction(v) for k, v in worst.p0.items()},
        {k: Fraction(v) for k, v in worst.p1.items()},
        formal,
        label or target,
    )


def _cmd_audit(args: argparse.Namespace) -> int:
    from checker.crossval.audit import audit, parse_mechanism

    if args.trials < 1:
        raise InputError("--trials must be >= 1", Position("--trials"), "a positive integer")
    if not 0 < args.confidence < 1:
        raise InputError("--confidence must be in (0, 1)", Position("--confidence"), "e.g. 0.95")
    if not 0 <= args.delta < 1:
        raise InputError("--delta must be in [0, 1)", Position("--delta"), "0 <= delta < 1")
    target = args.target
    kind = target.split(":", 1)[0]
    path = Path(target)
    if kind in AUDIT_KINDS and not path.exists():
        mech = parse_mechanism(target)
        res = audit(mech, args.trials, args.confidence, args.delta, args.seed, args.method)
        payload = res.to_json()
        payload["eps"] = _finite(res.reference_eps)
        ok = res.reference_eps is None or res.eps_lower <= res.reference_eps + 1e-9
        table = [
            ("mechanism", res.mechanism),
            ("test", f"likelihood ratio ({res.method}), {res.trials} trials/hypothesis, seed {res.seed}"),
            ("worst-case pair", f"{_short(res.pair[0])} vs {_short(res.pair[1])}"),
            ("FPR / FNR", f"{res.fpr:.6g} / {res.fnr:.6g}"),
            (f"upper {res.confidence:g}-conf.", f"{res.fpr_upper:.6g} / {res.fnr_upper:.6g}"),
            (f"eps lower (delta={res.delta:g})", f"{res.eps_lower:.6g}"),
            ("eps of mechanism", "unknown" if res.reference_eps is None else f"{res.reference_eps:.6g}"),
            ("consistent", "holds" if ok else "violated"),
        ]
        if args.plot:
            from checker.crossval.audit import NoiseMechanism
            from checker.crossval.gaussian import mahalanobis
            from checker.crossval.plots import plot_audit, save_figure

            mu = None
            if isinstance(mech, NoiseMechanism) and mech.noise_cov is not None:
                # exact for the Gaussian mechanism, the Theorem 4.1 approximation otherwise
                mu = mahalanobis(res.pair[0], res.pair[1], mech.noise_cov)
            save_figure(plot_audit(res, mu=mu), args.plot)
        _emit(args, payload, table)
        return 0 if ok else 1
    name = path.name
    if target.startswith("example:"):
        p0, p1, formal, name = _scenario_distributions(target, args.observe)
    elif not path.exists():
        raise InputError(
            f"no such file or mechanism: {target}", Position(target), "FILE or " + "|".join(AUDIT_KINDS)
        )
    elif path.suffix == ".json":
        p0, p1, formal = _load_distributions(path)
    else:
        p0, p1, formal, name = _scenario_distributions(target, args.observe)
    if args.formal_eps is not None:
        formal = args.formal_eps
    from checker.crossval.crossval_scenario import cross_validate

    cv = cross_validate(
        p0,
        p1,
        formal_eps=formal,
        trials=args.trials,
        confidence=args.confidence,
        delta=args.delta,
        seed=args.seed,
        name=name,
    )
    payload = cv.to_json()
    payload["delta_at"] = args.delta
    if args.plot:
        from checker.crossval.plots import plot_audit, save_figure

        save_figure(plot_audit(cv.audit, eps=cv.eps_grid, delta=cv.numerical_delta), args.plot)
    rows = [("quantity", "source", "value"), *cv.rows()]
    _emit(args, payload, rows)
    return cv.verdict.exit_code()


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``dp`` (with ``gaussian`` and ``secagg``) and ``audit``."""
    dp = sub.add_parser("dp", help="numerical differential-privacy curves (seed 000)")
    dsub = dp.add_subparsers(dest="dp_command", metavar="MECHANISM")
    dp.set_defaults(func=lambda a: (dp.print_help(file=sys.stderr), 2)[1])

    g = dsub.add_parser("gaussian", help="closed-form δ(ε) of the μ-Gaussian mechanism")
    g.add_argument("--mu", type=float, help="μ = Δ (Mahalanobis distance of the worst input pair)")
    g.add_argument("--cov", help="noise covariance Σ as 'a,b;c,d' (correlated noise, Theorem 4.2)")
    g.add_argument("--width", help="input box [0, w] per coordinate as 'w1,w2,…' (default 1 each)")
    g.add_argument("--eps", type=float, nargs="+", required=True, metavar="E")
    g.add_argument("--delta", type=float, nargs="*", metavar="D", help="also report ε(δ)")
    g.add_argument("--json", action="store_true")
    g.add_argument("--plot", metavar="FILE.png")
    g.set_defaults(func=_cmd_gaussian)

    s = dsub.add_parser("secagg", help="secure aggregation as a noise mechanism")
    s.add_argument("--entries", choices=("exponential", "uniform"), required=True)
    s.add_argument("--n", type=int, required=True, help="number of other users")
    s.add_argument("--d", type=int, default=1, help="model size (coordinates)")
    s.add_argument("--eps", type=float, nargs="+", required=True, metavar="E")
    s.add_argument("--interval", type=float, default=3e-4, help="privacy-loss grid h (error O(h²) upper)")
    s.add_argument("--delta", type=float, nargs="*", metavar="D", help="also report a certified ε(δ)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--plot", metavar="FILE.png")
    s.set_defaults(func=_cmd_secagg)

    f = dsub.add_parser("fig1", help="seed 000 Fig. 1: SecAgg δ(ε) for several model sizes d")
    f.add_argument("--n", type=int, default=100)
    f.add_argument("--dims", type=int, nargs="+", default=[1, 10, 100, 1000])
    f.add_argument("--eps", type=float, nargs="+", default=[1.0, 2.0, 4.0], metavar="E")
    f.add_argument("--interval", type=float, default=1e-3)
    f.add_argument("--json", action="store_true")
    f.add_argument("--plot", metavar="FILE.png")
    f.set_defaults(func=_cmd_fig1)

    a = sub.add_parser(
        "audit",
        help="membership-inference audit: a confidence lower bound on ε",
        description="Likelihood-ratio membership-inference audit (seed 000 eq. 8-11): Monte Carlo (FPR, FNR) "
        "with Clopper-Pearson bounds give ε_lower valid with the stated confidence. Exit 1 if ε_lower "
        "exceeds the mechanism's known ε or the formal ε.",
    )
    a.add_argument(
        "target",
        metavar="MODEL|MECHANISM",
        help="gaussian:mu=MU[:d=D] | laplace:b=B[:s=SENS] | rr:p=P (fraction, e.g. 3/4) | "
        'secagg:exponential|uniform:n=N[:d=D] | a JSON file {"p0": {...}, "p1": {...}, "formal_eps": E} | '
        "a scenario file (needs checker.app.privacy_fl)",
    )
    a.add_argument("--trials", type=int, default=20_000, help="samples per hypothesis")
    a.add_argument("--confidence", type=float, default=0.95)
    a.add_argument("--delta", type=float, default=0.0, help="δ at which the ε lower bound is stated")
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--method", choices=("exact", "gaussian"), default="exact", help="eq. (9) or eq. (11)")
    a.add_argument("--formal-eps", type=float, default=None, help="formal ε to cross-validate against")
    a.add_argument("--observe", default="curmodpar", help="for a model: what the attacker observes")
    a.add_argument("--json", action="store_true")
    a.add_argument("--plot", metavar="FILE.png")
    a.set_defaults(func=_cmd_audit)
