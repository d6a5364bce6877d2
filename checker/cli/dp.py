"""``flcheck dp``: numerical differential-privacy curves ([SecAgg-MIA]).

* ``flcheck dp gaussian --mu MU --eps E…`` — closed-form δ(ε) of the μ-Gaussian mechanism ([SecAgg-MIA],
  Thm. 4.2); ``--delta D…`` adds ε(δ). With correlated noise, ``--cov 'a,b;c,d' [--width w1,w2]``
  computes μ = max Δ_{x,x'} over the input box (eq. 10, Proposition 1) instead of ``--mu``.
* ``flcheck dp secagg --entries exponential|uniform --n N --d D --eps E…`` — SecAgg as a noise mechanism
  ([SecAgg-MIA], §4.2): certified upper curve, optimistic lower curve, Gaussian approximation (Thm. 4.1).
* ``flcheck dp fig1 [--n N] [--dims D…] --plot FILE.png`` — [SecAgg-MIA] Fig. 1 (δ(ε) rises quickly with d).

All take ``--json`` (keys ``eps``, ``delta``) and ``--plot FILE.png`` (written atomically). Exit codes:
0 done, 2 bad input. ``flcheck audit`` (membership-inference audits) is :mod:`checker.cli.audit`.

The numerical engines import scipy (over a second) and the plots matplotlib: each command imports the
engine it runs, so that ``flcheck --help`` and the other commands start fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from checker.cli.json_output import emit_json
from checker.cli.options import Integer, Real, comma_list, matrix, plot_file, probability
from checker.errors import InputError, Position
from checker.tables import table_text

#: The ranges of the mechanisms' options: beyond them a curve either cannot be computed in floating point
#: or takes minutes (SecAgg's cost grows with n, d and 1/interval; measured by the option fuzz).
MU = Real(0, 1e6, what="a Mahalanobis distance")
EPS = Real(0, 1e4, what="an epsilon")
USERS = Integer(1, 10_000, what="a number of users")
DIMENSIONS = Integer(1, 100_000, what="a number of coordinates")
INTERVAL = Real(1e-5, 1, what="a privacy-loss grid step")
COVARIANCE = matrix(Real(-1e6, 1e6, what="a covariance entry"))
WIDTHS = comma_list(Real(0, 1e6, what="a width"))


def emit(args: argparse.Namespace, payload: dict[str, Any], table: Sequence[Sequence[str]]) -> None:
    """Print ``payload`` as strict JSON in the envelope of :mod:`checker.cli.json_output` with
    ``--json``, else ``table`` (first row the header)."""
    if args.json:
        emit_json(args.flcheck_command, payload)
        return
    print(table_text(table))


def _gaussian_mu(args: argparse.Namespace) -> tuple[float, dict[str, Any]]:
    """μ from ``--mu`` or, with ``--cov``, the worst-case Mahalanobis Δ over the box ``[0, width]``
    ([SecAgg-MIA] eq. 10, Proposition 1)."""
    from checker.crossval.gaussian import worst_case_delta  # lazy: scipy (slow import)

    if args.cov is None:
        if args.width is not None:
            raise InputError("--width is the input box of --cov", Position("--width"),
                             "--cov 'a,b;c,d' with it")
        if args.mu is None:
            raise InputError(
                "give --mu or --cov (with --width)", Position("--mu"), "--mu MU or --cov 'a,b;c,d'"
            )
        return float(args.mu), {}
    cov = np.array(args.cov, dtype=float)
    d = cov.shape[0]
    if cov.shape != (d, d) or not np.allclose(cov, cov.T) or np.any(np.linalg.eigvalsh(cov) <= 0):
        raise InputError("--cov must be a symmetric positive definite matrix", Position("--cov"), "Σ ≻ 0")
    width = np.array(args.width, dtype=float) if args.width else np.ones(d)
    if width.size != d:
        raise InputError(f"--width needs {d} non-negative numbers", Position("--width"), "w1,w2,…")
    try:
        mu, x, xp = worst_case_delta(np.zeros(d), width, cov)
    except ValueError as exc:
        raise InputError(str(exc), Position("--cov")) from None
    return mu, {"worst_pair": [x.tolist(), xp.tolist()], "cov": cov.tolist(), "width": width.tolist()}


def _cmd_gaussian(args: argparse.Namespace) -> int:
    from checker.crossval.gaussian import gaussian_delta, gaussian_epsilon  # lazy: scipy (slow import)

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
        inv = [gaussian_epsilon(args.mu, dv) for dv in args.delta]
        payload["eps_for_delta"] = {f"{dv:g}": v for dv, v in zip(args.delta, inv, strict=True)}
        table += [(f"eps({dv:g})", f"{v:.12g}") for dv, v in zip(args.delta, inv, strict=True)]
    if args.plot:
        from checker.crossval.plots import plot_curves, save_figure  # lazy: matplotlib, for --plot only

        grid = np.linspace(0, max(float(eps.max()) if len(eps) else 1.0, 1.0) * 1.5, 301)
        save_figure(
            plot_curves(
                grid, {f"Gaussian μ={args.mu:g}": gaussian_delta(args.mu, grid)}, "Gaussian mechanism",
                marks=list(zip(eps.tolist(), delta.tolist(), strict=True)),
            ),
            args.plot,
        )
    emit(args, payload, table)
    return 0


def _cmd_secagg(args: argparse.Namespace) -> int:
    from checker.crossval.secagg import secagg_curve  # lazy: scipy (slow import)

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
        from checker.crossval.gaussian import gaussian_epsilon  # lazy: scipy (slow import)

        inv = {f"{dv:g}": c.epsilon(dv) for dv in args.delta}
        inv_g = {f"{dv:g}": gaussian_epsilon(c.gaussian_mu, dv) for dv in args.delta}
        payload["eps_for_delta"] = dict(inv)
        payload["gaussian_eps_for_delta"] = dict(inv_g)
        table += [(f"eps({k}) upper", f"{v:.8g}", "", f"{inv_g[k]:.8g}") for k, v in inv.items()]
    if args.plot:
        from checker.crossval.plots import plot_curves, save_figure  # lazy: matplotlib, for --plot only

        grid = np.linspace(0, max(float(eps.max()) if len(eps) else 1.0, 1.0) * 1.5, 201)
        cg = secagg_curve(args.entries, args.n, args.d, grid, interval=max(args.interval, 1e-3))
        fig = plot_curves(
            grid,
            {"SecAgg (upper)": cg.delta, f"Gaussian μ={cg.gaussian_mu:.3g}": cg.gaussian},
            f"SecAgg, {args.entries} entries, n={args.n}, d={args.d}",
            bands={"bracket": (cg.bracket.lower, cg.bracket.upper)},
            marks=list(zip(eps.tolist(), c.bracket.upper.tolist(), strict=True)),
        )
        save_figure(fig, args.plot)
    emit(args, payload, table)
    return 0


def _cmd_fig1(args: argparse.Namespace) -> int:
    from checker.crossval.plots import fig1, save_figure  # lazy: matplotlib (slow import)

    grid = np.linspace(0.0, 20.0, 201)
    fig, data = fig1(args.n, args.dims, grid, interval=args.interval)
    if args.plot:
        save_figure(fig, args.plot)
    else:
        import matplotlib.pyplot as plt  # lazy: matplotlib, for --plot only

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
    emit(args, out, rows)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``dp`` (with ``gaussian``, ``secagg`` and ``fig1``)."""
    dp = sub.add_parser("dp", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    dsub = dp.add_subparsers(dest="dp_command", metavar="MECHANISM")
    dp.set_defaults(func=lambda a: (dp.print_help(file=sys.stderr), 2)[1])

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--json", action="store_true", help="print the curves as JSON (keys eps, delta)")
        q.add_argument("--plot", metavar="FILE.png", type=plot_file, help="also draw the curve (atomically)")

    g = dsub.add_parser("gaussian", help="closed-form δ(ε) of the μ-Gaussian mechanism")
    g.add_argument("--mu", type=MU, help="μ = Δ (Mahalanobis distance of the worst input pair)")
    g.add_argument("--cov", type=COVARIANCE,
                   help="noise covariance Σ as 'a,b;c,d' (correlated noise, Theorem 4.2), instead of --mu")
    g.add_argument("--width", type=WIDTHS,
                   help="with --cov: input box [0, w] per coordinate as 'w1,w2,…' (default 1 each)")
    g.add_argument("--eps", type=EPS, nargs="+", required=True, metavar="E",
                   help="the ε at which δ(ε) is shown")
    g.add_argument("--delta", type=probability, nargs="*", metavar="D", help="also report ε(δ)")
    common(g)
    g.set_defaults(func=_cmd_gaussian)

    s = dsub.add_parser("secagg", help="secure aggregation as a noise mechanism")
    s.add_argument("--entries", choices=("exponential", "uniform"), required=True,
                   help="the distribution of the other users' entries (the noise of the sum)")
    s.add_argument("--n", type=USERS, required=True, help="number of other users")
    s.add_argument("--d", type=DIMENSIONS, default=1, help="model size (coordinates)")
    s.add_argument("--eps", type=EPS, nargs="+", required=True, metavar="E",
                   help="the ε at which δ(ε) is shown")
    s.add_argument("--interval", type=INTERVAL, default=3e-4,
                   help="privacy-loss grid h (error O(h²) upper; from 1e-5 to 1)")
    s.add_argument("--delta", type=probability, nargs="*", metavar="D", help="also report a certified ε(δ)")
    common(s)
    s.set_defaults(func=_cmd_secagg)

    f = dsub.add_parser("fig1", help="[SecAgg-MIA] Fig. 1: SecAgg δ(ε) for several model sizes d")
    f.add_argument("--n", type=USERS, default=100, help="number of other users (default 100)")
    f.add_argument("--dims", type=DIMENSIONS, nargs="+", default=[1, 10, 100, 1000],
                   help="the model sizes d, one curve each (default 1 10 100 1000)")
    f.add_argument("--eps", type=EPS, nargs="+", default=[1.0, 2.0, 4.0], metavar="E",
                   help="the ε at which the table shows δ(ε) (default 1 2 4)")
    f.add_argument("--interval", type=INTERVAL, default=1e-3,
                   help="privacy-loss grid h of every curve (default 1e-3; from 1e-5 to 1)")
    common(f)
    f.set_defaults(func=_cmd_fig1)
