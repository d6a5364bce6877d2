"""``flcheck account``: certified ε(δ) / δ(ε) brackets of a DP-SGD / DP-FedAvg run
(:mod:`checker.crossval.accountant`).

``--noise-multiplier Z`` (or ``--target-epsilon E``: the smallest Z whose certified ε is at most E),
``--sampling-rate Q`` or ``--clients N --per-round K``, ``--rounds T``, ``--delta D`` (or ``--epsilon
E``: δ(ε)), ``--sampling poisson|fixed|shuffle|all``; ``--from SCENARIO`` reads Z, Q (or K of N), T,
δ and the sampling from the scenario's ``run`` statement, and when ``--sampling`` asks for another
scheme than the scenario's, both figures are shown and the mismatch is named. ``--json`` prints
``epsilon_lower``, ``epsilon_upper``, ``delta``, ``noise_multiplier``, ``sampling_rate``, ``sampling``,
``rounds`` and more (``spec/schema/account.schema.json``). Exit codes: 0 done, 2 bad input.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from checker.cli.dp import emit
from checker.cli.options import nonneg_float, positive_float, positive_int
from checker.errors import InputError, Position

if TYPE_CHECKING:
    from checker.crossval.accountant import Bracket, Run, Sampling

SAMPLING_CHOICES = ("poisson", "fixed", "shuffle", "all")


def _open_unit(text: str) -> float:
    """A number in (0, 1) (δ)."""
    value = nonneg_float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number in (0, 1)")
    return value


def sampling_rate(text: str) -> float:
    """A sampling rate in (0, 1]."""
    value = positive_float(text)
    if not value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a sampling rate in (0, 1]")
    return value


def _rounds(text: str) -> int:
    """Rounds: an integer in 1 .. 10^9."""
    from checker.crossval.accountant import MAX_ROUNDS  # lazy: scipy

    value = positive_int(text)
    if value > MAX_ROUNDS:
        raise argparse.ArgumentTypeError(f"{text!r} is more than {MAX_ROUNDS} rounds")
    return value


def _from_scenario(path: str) -> dict[str, Any]:
    """The run configuration of a scenario (its ``run`` statement) as option values."""
    from checker.app.load import resolve_scenario_path  # lazy: the model layer
    from flmodel.scenario import load_scenario

    scenario = load_scenario(resolve_scenario_path(path))
    run = scenario.run
    if run is None:
        raise InputError(f"{path} has no run statement", Position(path),
                         "run noise_multiplier Z, rounds T, sampling poisson rate Q, delta D")
    out: dict[str, Any] = {"sampling": run.sampling}
    if run.noise_multiplier is not None:
        out["noise_multiplier"] = float(run.noise_multiplier)
    if run.rounds is not None:
        out["rounds"] = run.rounds
    if run.rate is not None:
        out["sampling_rate"] = float(run.rate)
    if run.clients is not None:
        out["clients"], out["per_round"] = run.clients, run.per_round
    if run.delta is not None:
        out["delta"] = float(run.delta)
    return out


def _run_of(args: argparse.Namespace, declared: dict[str, Any]) -> tuple[Run, str | None]:
    """The run the options (over the scenario's ``run``) describe, and the scenario's own sampling."""
    from checker.crossval.accountant import Run  # lazy: scipy

    z = args.noise_multiplier if args.noise_multiplier is not None else declared.get("noise_multiplier")
    rounds = args.rounds if args.rounds is not None else declared.get("rounds")
    clients = args.clients if args.clients is not None else declared.get("clients")
    per_round = args.per_round if args.per_round is not None else declared.get("per_round")
    rate = args.sampling_rate if args.sampling_rate is not None else declared.get("sampling_rate")
    if (args.clients is None) != (args.per_round is None):
        missing = "--per-round" if args.per_round is None else "--clients"
        other = "--clients" if missing == "--per-round" else "--per-round"
        raise InputError(f"{missing} is needed with {other}", Position(missing), "--clients N --per-round K")
    if clients is not None and per_round is not None:
        if per_round > clients:
            raise InputError(f"--per-round {per_round} is more than --clients {clients}",
                             Position("--per-round"), "1 <= K <= N")
        if args.sampling_rate is not None and args.clients is not None:
            raise InputError("give --sampling-rate or --clients/--per-round, not both",
                             Position("--sampling-rate"), "one of them")
        rate = per_round / clients
    declared_sampling = declared.get("sampling")
    sampling = args.sampling or declared_sampling or "poisson"
    if sampling == "all":
        rate = 1.0 if rate is None else rate
    for value, option in ((z, "--noise-multiplier"), (rounds, "--rounds"), (rate, "--sampling-rate")):
        if value is None and not (option == "--noise-multiplier" and args.target_epsilon is not None):
            raise InputError(f"{option} is required (or --from SCENARIO with a run statement)",
                             Position(option), option.lstrip("-").replace("-", " "))
    assert rate is not None and rounds is not None
    if sampling in ("fixed", "shuffle") and clients is None and 1 / rate != round(1 / rate):
        raise InputError(f"--sampling {sampling} needs --clients N --per-round K (or a rate 1/b)",
                         Position("--sampling"), "--clients N --per-round K")
    run = Run(z if z is not None else 1.0, float(rate), int(rounds), cast("Sampling", sampling), clients,
              per_round)
    return run, declared_sampling


def _figure(run: Run, args: argparse.Namespace, delta: float | None) -> Bracket:
    from checker.crossval.accountant import delta_bracket, epsilon_bracket  # lazy: scipy

    if args.epsilon is not None:
        return delta_bracket(run, args.epsilon, args.tolerance)
    assert delta is not None
    return epsilon_bracket(run, delta, args.tolerance)


def _cmd_account(args: argparse.Namespace) -> int:
    from checker.crossval.accountant import noise_for_epsilon  # lazy: scipy

    start = time.process_time()
    declared = _from_scenario(args.source) if args.source else {}
    run, declared_sampling = _run_of(args, declared)
    delta = args.delta if args.delta is not None else declared.get("delta")
    if args.epsilon is None and delta is None:
        raise InputError("--delta is required (or --epsilon for δ(ε))", Position("--delta"), "--delta D")
    if args.epsilon is not None and args.delta is not None:
        raise InputError("give --delta (for ε(δ)) or --epsilon (for δ(ε)), not both", Position("--epsilon"),
                         "one of them")
    if args.target_epsilon is not None:
        assert delta is not None
        if args.epsilon is not None:
            raise InputError("--target-epsilon needs --delta, not --epsilon", Position("--target-epsilon"),
                             "--delta D")
        try:
            z, figure = noise_for_epsilon(run, args.target_epsilon, delta, tolerance=args.tolerance)
        except ValueError as exc:
            raise InputError(str(exc), Position("--target-epsilon"), "a reachable ε") from None
        run = replace(run, noise_multiplier=z)
    else:
        figure = _figure(run, args, delta)
    payload: dict[str, Any] = {
        "noise_multiplier": run.noise_multiplier,
        "sampling_rate": run.sampling_rate,
        "sampling": run.sampling,
        "rounds": run.rounds,
        "clients": run.clients,
        "per_round": run.per_round,
        "neighbouring": run.relation,
    }
    label = "ε" if args.epsilon is None else "δ"
    if args.epsilon is None:
        payload.update(delta=delta, epsilon_lower=figure.lower, epsilon_upper=figure.upper)
    else:
        payload.update(epsilon=args.epsilon, delta_lower=figure.lower, delta_upper=figure.upper)
    payload.update(width=figure.width, interval=figure.interval)
    if args.target_epsilon is not None:
        payload["target_epsilon"] = args.target_epsilon
    rows: list[tuple[str, str]] = [
        ("run", f"Z = {run.noise_multiplier:.6g}, T = {run.rounds}, {_sampling_text(run)}"),
        ("neighbouring", run.relation),
    ]
    query = f"δ = {delta:g}" if args.epsilon is None else f"ε = {args.epsilon:g}"
    rows.append((f"{label} ({query})", f"[{figure.lower:.6g}, {figure.upper:.6g}]  width {figure.width:.3g}"
                 + ("" if figure.upper == 0 else f" ({100 * figure.width / figure.upper:.3g} % of upper)")))
    if args.target_epsilon is not None:
        rows.append(("smallest Z", f"{run.noise_multiplier:.6g} (certified ε ≤ {args.target_epsilon:g})"))
    if declared_sampling is not None and declared_sampling != run.sampling:
        own = replace(run, sampling=declared_sampling)  # type: ignore[arg-type]
        own_figure = _figure(own, args, delta)
        message = (f"the accountant assumes {run.sampling} sampling ({run.relation}), the run samples "
                   f"{declared_sampling} ({own.relation}): the run's own figure is "
                   f"[{own_figure.lower:.6g}, {own_figure.upper:.6g}]")
        payload["assumption"] = {"run": declared_sampling, "accountant": run.sampling, "matches": False,
                                 "message": message, "run_lower": own_figure.lower,
                                 "run_upper": own_figure.upper}
        rows.append(("assumption mismatch", message))
    elif declared_sampling is not None:
        payload["assumption"] = {"run": declared_sampling, "accountant": run.sampling, "matches": True}
    seconds = time.process_time() - start
    payload["cpu_seconds"] = seconds
    rows.append(("CPU", f"{seconds:.3g} s"))
    emit(args, payload, [("quantity", "value"), *rows])
    return 0


def _sampling_text(run: Run) -> str:
    if run.sampling == "all":
        return "every client every round"
    if run.clients is not None:
        return f"{run.sampling} sampling, {run.per_round} of {run.clients} per round"
    return f"{run.sampling} sampling, rate {run.sampling_rate:g}"


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``account``."""
    a = sub.add_parser(
        "account",
        help="certified ε(δ) / δ(ε) brackets of a DP-SGD / DP-FedAvg run",
        description="Privacy accounting of T rounds of the Gaussian mechanism (noise multiplier Z) on a "
        "sampled batch of clients: certified [lower, upper] brackets from privacy loss distributions "
        "(pessimistic and optimistic discretisation). poisson: add/remove neighbouring; fixed and "
        "shuffle: replace-one; all: full participation, exact.",
    )
    a.add_argument("--noise-multiplier", type=positive_float, metavar="Z", help="noise std / clip norm")
    a.add_argument("--target-epsilon", type=positive_float, metavar="E",
                   help="instead of Z: the smallest Z whose certified ε(δ) is at most E (within 1 %%)")
    a.add_argument("--sampling-rate", type=sampling_rate, metavar="Q", help="probability a client takes part")
    a.add_argument("--clients", type=positive_int, metavar="N", help="clients in all (with --per-round)")
    a.add_argument("--per-round", type=positive_int, metavar="K", help="clients per round (with --clients)")
    a.add_argument("--rounds", type=_rounds, metavar="T", help="rounds (compositions) of the run")
    a.add_argument("--delta", type=_open_unit, metavar="D", help="report ε(δ)")
    a.add_argument("--epsilon", type=nonneg_float, metavar="E", help="report δ(ε) instead")
    a.add_argument("--sampling", choices=SAMPLING_CHOICES, default=None,
                   help="poisson (default), fixed (K of N without replacement), shuffle (a random "
                        "permutation cut into batches each epoch; no amplification certified), all")
    a.add_argument("--from", dest="source", metavar="SCENARIO",
                   help="read Z, Q (or K of N), T, δ and the sampling from the scenario's run statement")
    a.add_argument("--tolerance", type=_open_unit, default=5e-3,
                   help="relative width at which the grid stops being refined (default 0.005)")
    a.add_argument("--json", action="store_true", help="print the brackets as JSON")
    a.set_defaults(func=_cmd_account)

