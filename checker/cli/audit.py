"""``flcheck audit TARGET``: likelihood-ratio membership-inference audits ([SecAgg-MIA] eq. 8–11).

TARGET is a mechanism string (``gaussian:mu=1[:d=D]``, ``laplace:b=1[:s=S]``, ``rr:p=3/4``,
``secagg:uniform|exponential:n=10[:d=1]``), a JSON file ``{"p0": {outcome: prob}, "p1": {...},
"formal_eps": E}`` (probabilities as numbers or fraction strings), or a scenario file (``.fl``), a
bundled scenario's name or ``example:NAME`` (:func:`checker.app.privacy_fl.privacy_model`) whose worst
judged neighbouring pair's observation distributions come from
:func:`checker.app.privacy_fl.privacy_report` with the defaults of ``flcheck check`` (the declared
pairs, ``--reading`` widens them; the attacker's observation as a sequence, ``--observe final``).

``--json`` prints keys ``eps``, ``delta``, ``fpr``, ``fnr``, ``eps_lower`` (and more); ``--plot FILE.png``
is written atomically (never over TARGET). ``--trials`` is refused up front when the samples would not
fit in the available memory (:func:`audit_bytes`). Exit codes: 0 consistent, 1 the audit contradicts the
mechanism's known ε or the formal ε (or unknown: an exploration limit stopped the model), 2 bad input.

The audit engines import scipy (over a second) and the plots matplotlib: they are imported by the
command that runs them, so that the other commands start fast.
"""

from __future__ import annotations

import argparse
import json
import os
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import flcheck_spec

from checker.cli.account import sampling_rate
from checker.cli.dp import emit
from checker.cli.options import (
    OBSERVE_HELP,
    READING_CHOICES,
    Integer,
    add_limit_options,
    confidence,
    limits_of,
    nonneg_float_or_inf,
    plot_file,
    positive_float,
    positive_int,
    probability_below_one,
    seed,
)
from checker.cli.privacy import readings_of
from checker.errors import InputError, Position
from checker.io.files import check_output_path

if TYPE_CHECKING:
    from checker.mc.exploration import Limits

AUDIT_KINDS = ("gaussian", "laplace", "rr", "secagg")
MECHANISM_FORMS = ("gaussian:mu=MU", "laplace:b=B", "rr:p=P", "secagg:exponential|uniform:n=N")


def audit_bytes(trials: int, dim: int = 1) -> int:
    """Peak memory of an audit with ``trials`` samples per hypothesis of a ``dim``-dimensional
    mechanism (:func:`checker.crossval.audit.audit`): the two float64 samples and their sorted copies
    (32 bytes a trial), the calibration draws (a quarter of the trials each), and while one sample is
    drawn its noise vectors, shifted inputs and log-densities (``(size, dim)`` float64 arrays, about
    six of them, and the per-trial statistics)."""
    return trials * (64 + 48 * dim)


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (``MemAvailable`` of ``/proc/meminfo``, else the
    free physical pages); ``None`` when the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return None


def check_trials_fit(trials: int, dim: int = 1) -> None:
    """:class:`InputError` when an audit of ``trials`` samples would need more memory than is
    available (stated with the estimate, before anything is sampled)."""
    need = audit_bytes(trials, dim)
    have = available_memory()
    if have is not None and need > have:
        raise InputError(f"{trials} trials need about {_bytes_text(need)} of memory "
                         f"({need // trials} bytes a trial), more than the {_bytes_text(have)} available",
                         Position("--trials"), f"at most about {have // (need // trials)} trials")


def _bytes_text(n: int) -> str:
    """``n`` bytes for a message: ``512 bytes``, ``1.5 GB``, up to TB."""
    if n < 1024:
        return f"{n} bytes"
    size = float(n)
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024:
            return f"{size:.1f} {unit}"
    return f"{size / 1024:.1f} TB"


def _short(v: list[float], k: int = 6) -> str:
    """A vector for the terminal: the first k entries, then the count."""
    head = ", ".join(f"{x:g}" for x in v[:k])
    return f"[{head}]" if len(v) <= k else f"[{head}, … ({len(v)} coordinates)]"


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
    if fe is None:
        return conv("p0"), conv("p1"), None
    try:
        formal = nonneg_float_or_inf(str(fe))
    except argparse.ArgumentTypeError as exc:
        raise InputError(f'"formal_eps": {exc}', Position(str(path)), "a number >= 0 or inf") from None
    return conv("p0"), conv("p1"), formal


def _scenario_distributions(
    target: str, observe: str = "sequence", reading: str | None = None, limits: Limits | None = None
) -> tuple[dict[object, Fraction], dict[object, Fraction], float | None, str]:
    """The observation distributions ``(P0, P1)`` of the worst judged neighbouring pair, the formal ε*
    and the pair's name: :func:`checker.app.privacy_fl.privacy_report` with the defaults of
    ``flcheck check`` and ``flcheck privacy`` (the declared pairs, widened by ``reading``; the
    attacker's declared observation as a sequence) on a scenario file, a bundled scenario or
    ``example:NAME`` (:func:`checker.app.privacy_fl.privacy_model`)."""
    # lazy: the FL privacy pipeline takes most of a second to import and serves model targets only
    from checker.app.privacy_fl import privacy_model, privacy_report

    model = privacy_model(target)
    report = privacy_report(model.system, model.universe, observe=observe, literal=False,
                            declared=model.declared, observing=model.observing,
                            readings=readings_of(reading, model.declared), decomposition=False,
                            limits=limits)
    worst = report.worst
    if worst is None:
        raise InputError(
            "the model has no neighbouring dataset pair to audit", Position(target), "a model with neighbours"
        )
    formal = float(worst.epsilon.epsilon)
    label = f"{worst.reading} {worst.label}".strip()
    return (
        {k: Fraction(v) for k, v in worst.p0.items()},
        {k: Fraction(v) for k, v in worst.p1.items()},
        formal,
        label or target,
    )


def _cmd_audit_fedavg(args: argparse.Namespace) -> int:
    """``flcheck audit fedavg``: one training of the numpy DP-FedAvg with canaries, its [SNJ23] lower bound
    beside the accountant's ε (:mod:`checker.app.audit_fedavg`). Exit 1 when the lower bound exceeds the
    claimed ε (the training is not the DP it claims)."""
    from checker.app.audit_fedavg import audit_fedavg  # lazy: scipy and scikit-learn, for audit fedavg only
    from flmodel.training import TrainingConfig  # lazy: with the training it configures
    from flmodel.training_dp import DPFedAvgConfig  # lazy: with the training it configures

    if args.guesses is not None and args.guesses > args.canaries:
        raise InputError(f"--guesses {args.guesses} is more than --canaries {args.canaries}",
                         Position("--guesses"), "at most the number of canaries")
    if args.clients * 20 > 1797:
        raise InputError(f"--clients {args.clients} needs {args.clients * 20} digits, 1797 are bundled",
                         Position("--clients"), "at most 89 clients")
    config = DPFedAvgConfig(rounds=args.rounds, sampling_rate=args.sampling_rate,
                            noise_multiplier=args.noise_multiplier, clip=args.clip, canaries=args.canaries,
                            canary_kind=args.canary, fault=args.fault,
                            local=TrainingConfig(hidden=32, n_updates=2, batch_size=4), seed=args.seed)
    res = audit_fedavg(config, clients=args.clients, confidence=args.confidence,
                       delta=args.delta if args.delta > 0 else 1e-5, guesses=args.guesses)
    emit(args, res.to_json(), [("quantity", "value"), *res.rows()])
    return 1 if res.detected else 0


def _cmd_audit(args: argparse.Namespace) -> int:
    from checker.crossval.audit import NoiseMechanism, audit, parse_mechanism  # lazy: scipy (slow import)

    target = args.target
    if target == "fedavg" and not Path(target).exists():
        return _cmd_audit_fedavg(args)
    kind = target.split(":", 1)[0]
    path = Path(target)
    is_mechanism = kind in AUDIT_KINDS and not path.exists()
    if not (is_mechanism or path.exists() or target.startswith("example:")
            or target in flcheck_spec.bundled_scenarios()):
        from checker.app.load import unknown_model  # lazy: the loader imports the model layer

        raise unknown_model(target, alternatives=MECHANISM_FORMS)
    if args.plot:  # refused before the audit runs: the figure must never replace the input
        check_output_path(args.plot, [] if is_mechanism else [path])
    if is_mechanism:
        mech = parse_mechanism(target)
        check_trials_fit(args.trials, mech.dim if isinstance(mech, NoiseMechanism) else 1)
        res = audit(mech, args.trials, args.confidence, args.delta, args.seed, args.method)
        payload = res.to_json()
        payload["eps"] = res.reference_eps
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
            from checker.crossval.gaussian import mahalanobis  # lazy: scipy (slow import)
            from checker.crossval.plots import plot_audit, save_figure  # lazy: matplotlib (slow import)

            mu = None
            if isinstance(mech, NoiseMechanism) and mech.noise_cov is not None:
                # exact for the Gaussian mechanism, the Theorem 4.1 approximation otherwise
                mu = mahalanobis(res.pair[0], res.pair[1], mech.noise_cov)
            save_figure(plot_audit(res, mu=mu), args.plot)
        emit(args, payload, table)
        return 0 if ok else 1
    check_trials_fit(args.trials)
    name = path.name
    if path.exists() and path.suffix == ".json":
        p0, p1, formal = _load_distributions(path)
    else:
        p0, p1, formal, name = _scenario_distributions(target, args.observe, args.reading, limits_of(args))
    if args.formal_eps is not None:
        formal = args.formal_eps
    from checker.crossval.crossval_scenario import cross_validate  # lazy: scipy (slow import)

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
    payload["neighbour_pair"] = name
    if args.plot:
        from checker.crossval.plots import plot_audit, save_figure  # lazy: matplotlib (slow import)

        save_figure(plot_audit(cv.audit, eps=cv.eps_grid, delta=cv.numerical_delta), args.plot)
    rows = [("quantity", "source", "value"), ("pair audited", "distributions", name), *cv.rows()]
    emit(args, payload, rows)
    return cv.verdict.exit_code()


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``audit``."""
    a = sub.add_parser(
        "audit",
        description="Likelihood-ratio membership-inference audit ([SecAgg-MIA] eq. 8-11): Monte Carlo "
        "(FPR, FNR) with Clopper-Pearson bounds give ε_lower valid with the stated confidence. Exit 1 if "
        "ε_lower exceeds the mechanism's known ε or the formal ε.",
    )
    a.add_argument(
        "target",
        metavar="MODEL|MECHANISM",
        help="fedavg (a one-run audit of DP-FedAvg, options below) | "
        "gaussian:mu=MU[:d=D] | laplace:b=B[:s=SENS] | rr:p=P (fraction, e.g. 3/4) | "
        'secagg:exponential|uniform:n=N[:d=D] | a JSON file {"p0": {...}, "p1": {...}, "formal_eps": E} | '
        "a scenario file (.fl), a bundled scenario (flcheck list) or example:NAME "
        "(see flcheck privacy --help)",
    )
    a.add_argument("--trials", type=Integer(1, 10**12, what="a number of trials"), default=20_000,
                   help="samples per hypothesis (default 20,000; refused when they would not fit in memory)")
    a.add_argument("--confidence", type=confidence, default=0.95,
                   help="confidence of the Clopper-Pearson bounds (default 0.95)")
    a.add_argument("--delta", type=probability_below_one, default=0.0,
                   help="δ at which the ε lower bound is stated")
    a.add_argument("--seed", type=seed, default=0, help="seed of the Monte Carlo samples (default 0)")
    a.add_argument("--method", choices=("exact", "gaussian"), default="exact", help="eq. (9) or eq. (11)")
    a.add_argument("--formal-eps", type=nonneg_float_or_inf, default=None,
                   help="formal ε to cross-validate against")
    a.add_argument("--observe", default="sequence", metavar="WHAT",
                   help=f"for a model: {OBSERVE_HELP} (as flcheck privacy --observe)")
    a.add_argument("--reading", choices=[*READING_CHOICES, "both"], default=None,
                   help="for a model: the neighbouring pairs judged, as flcheck privacy --reading "
                        "(default: the declared ones; the worst judged pair is audited and named)")
    f = a.add_argument_group("fedavg", "flcheck audit fedavg: a one-run audit ([SNJ23]) of the numpy "
                             "DP-FedAvg with canary clients, beside the accountant's ε for the same run")
    f.add_argument("--fault", choices=FAULT_CHOICES, default=None,
                   help="inject an implementation fault into the training (exit 1 when it is detected)")
    f.add_argument("--canaries", type=positive_int, default=1000,
                   help="canary clients, each included w.p. 1/2")
    f.add_argument("--canary", choices=("gradient", "loss"), default="gradient",
                   help="white-box gradient canaries (default) or black-box loss canaries")
    f.add_argument("--rounds", type=positive_int, default=20, help="training rounds (default 20)")
    f.add_argument("--noise-multiplier", type=positive_float, default=4.0,
                   help="noise std / clip norm Z of the Gaussian on the clipped sum (default 4)")
    f.add_argument("--sampling-rate", type=sampling_rate, default=0.5,
                   help="Poisson sampling rate of the clients")
    f.add_argument("--clip", type=positive_float, default=1.0, help="client update clip norm C")
    f.add_argument("--clients", type=positive_int, default=50, help="real clients (20 digits each)")
    f.add_argument("--guesses", type=positive_int, default=None,
                   help="guesses (half included, half excluded; default a tenth of the canaries)")
    add_limit_options(a, scope="of a model's privacy pipeline (a mechanism string or a JSON file has none)")
    a.add_argument("--json", action="store_true", help="print the audit as JSON")
    a.add_argument("--plot", metavar="FILE.png", type=plot_file, help="also draw the audit (atomically)")
    a.set_defaults(func=_cmd_audit)


#: ``--fault`` (:data:`flmodel.training_dp.FAULTS`).
FAULT_CHOICES = ("skip-noise-on-client", "no-clip", "noise-scaled-by-1/n")

