"""One privacy table for a scenario with Gaussian noise: the finite model's formal figure, the
accountant's certified bracket for the run the scenario describes, and (``--audit``) the one-run
audit's lower bound, side by side (``flcheck check``, its JSON and its reports).

The run: the scenario's ``run`` statement (noise multiplier Z, rounds T, sampling, δ); without one, a
scenario whose noise is ``gaussian sigma S clip C`` describes ``Z = S/C`` with every client in each of
its ``bounds rounds`` rounds (``all``) and δ = 1e-5. The accountant is
:mod:`checker.crossval.accountant` with the run's sampling; the audit is
:func:`checker.app.audit_fedavg.audit_fedavg` of the numpy DP-FedAvg with the run's Z, q and T (it
samples clients by Poisson sampling, q = 1 for ``all``; its claim is the Poisson accountant's). The plot
shows ε(δ) against the rounds 1..T: the accountant's upper and lower curves and the audit's lower bound
at T.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field, replace
from typing import Any

from checker.crossval.accountant import Bracket, Run, epsilon_bracket
from flmodel.scenario_ast import Scenario

__all__ = ["PrivacyAccount", "account_scenario", "privacy_account_of", "run_of"]

#: Property kinds that state a privacy figure of the finite model.
PRIVACY_KINDS = ("privacy", "advantage", "budget", "dp")
#: δ when the scenario does not state one.
DEFAULT_DELTA = 1e-5
#: Points of the ε-vs-rounds curve.
CURVE_POINTS = 12


def run_of(scenario: Scenario) -> tuple[Run, float, str] | None:
    """The run a scenario describes, its δ and where it comes from (module docstring); ``None`` when it
    states no run and has no Gaussian noise given by σ and a clip."""
    decl = scenario.run
    gaussian = [n.mechanism for n in scenario.noise if n.mechanism.kind == "gaussian" and n.mechanism.sigma]
    rounds = next((int(b.value) for b in scenario.bounds if b.kind == "rounds"), 1)
    if decl is not None and decl.noise_multiplier is not None:
        z = float(decl.noise_multiplier)
    elif gaussian and gaussian[0].clip:
        z = float(gaussian[0].sigma / gaussian[0].clip)  # type: ignore[operator]
    else:
        return None
    sampling = (decl.sampling if decl is not None else None) or "all"
    rate = 1.0
    clients = per_round = None
    if decl is not None:
        if decl.rate is not None:
            rate = float(decl.rate)
        if decl.clients is not None and decl.per_round is not None:
            clients, per_round = decl.clients, decl.per_round
            rate = per_round / clients
        if decl.rounds is not None:
            rounds = decl.rounds
    delta = float(decl.delta) if decl is not None and decl.delta is not None else DEFAULT_DELTA
    source = "the run statement" if decl is not None and decl.noise_multiplier is not None else \
        "the Gaussian noise (Z = σ/clip, every client every round)"
    return Run(z, rate, rounds, sampling, clients, per_round), delta, source  # type: ignore[arg-type]


@dataclass
class PrivacyAccount:
    """The table's rows (per privacy property: name, kind, formal figure), the run, the accountant's
    bracket at δ, the audit's lower bound (or ``None``) and the ε-vs-rounds curves."""

    run: Run
    delta: float
    source: str
    bracket: Bracket
    rows: list[tuple[str, str, str]]
    audit_lower: float | None = None
    audit_detected: bool | None = None
    curve: list[tuple[int, float, float]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "run": {"noise_multiplier": self.run.noise_multiplier, "sampling_rate": self.run.sampling_rate,
                    "sampling": self.run.sampling, "rounds": self.run.rounds, "delta": self.delta,
                    "source": self.source},
            "epsilon_lower": self.bracket.lower,
            "epsilon_upper": self.bracket.upper,
            "audit_epsilon_lower": self.audit_lower,
            "properties": [{"name": n, "kind": k, "formal": f} for n, k, f in self.rows],
            "curve": [{"rounds": t, "epsilon_lower": lo, "epsilon_upper": up} for t, lo, up in self.curve],
        }

    def table(self) -> list[tuple[str, ...]]:
        """Rows (header first): property, kind, the finite model's figure, the accountant's bracket, the
        audit's lower bound."""
        acc = f"[{self.bracket.lower:.4g}, {self.bracket.upper:.4g}]"
        aud = "—" if self.audit_lower is None else f"≥ {self.audit_lower:.4g}"
        head = ("property", "kind", "formal (finite model)", f"accountant ε(δ={self.delta:g})",
                "audit ε lower")
        body = [(n, k, f, acc, aud) for n, k, f in self.rows] or [("(no privacy property)", "", "", acc, aud)]
        return [head, *body]

    def caption(self) -> str:
        r = self.run
        what = ("every client every round" if r.sampling == "all"
                else f"{r.sampling} sampling, q = {r.sampling_rate:g}")
        return (f"the run ({self.source}): Z = {r.noise_multiplier:g}, T = {r.rounds}, {what}, "
                f"{r.relation} neighbouring")

    def plot_png(self) -> bytes:
        """ε(δ) against the rounds: the accountant's upper and lower curves, the audit's lower bound at T."""
        from checker.app.report import figure_png  # lazy: matplotlib

        def draw(fig: Any) -> None:
            ax = fig.add_subplot()
            ts = [t for t, _, _ in self.curve]
            ax.plot(ts, [up for _, _, up in self.curve], "-", color="#c22", label="accountant upper")
            ax.plot(ts, [lo for _, lo, _ in self.curve], "--", color="#27a", label="accountant lower")
            if self.audit_lower is not None:
                ax.plot([self.run.rounds], [self.audit_lower], "o", color="#2a7", label="audit lower bound")
            ax.set_xlabel("rounds")
            ax.set_ylabel(f"ε at δ = {self.delta:g}")
            ax.set_title("ε of the run against the rounds")
            ax.legend()

        return figure_png(draw, (6.0, 3.6))

    def section(self, html_output: bool) -> str:
        """The table and caption as a report section (Markdown or HTML)."""
        rows = self.table()
        if not html_output:
            lines = ["## Privacy of the run", "", self.caption(), "",
                     "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
            lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows[1:]]
            return "\n".join([*lines, ""])
        esc = html.escape
        body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows[1:])
        head = "".join(f"<th>{esc(c)}</th>" for c in rows[0])
        return f"<h2>Privacy of the run</h2><p>{esc(self.caption())}</p><table><tr>{head}</tr>{body}</table>"


def _formal(result: Any) -> str:
    """A property's figure as the table shows it: its exact text, or ``≈ value`` when that is long."""
    text = result.value_text or str(result.verdict)
    if len(text) > 32 and result.value is not None:
        return f"{result.value:.6g} ({result.verdict})"
    return f"{text} ({result.verdict})"


def account_scenario(scenario: Scenario, results: list[Any], audit: bool = False,
                     seed: int = 0) -> PrivacyAccount | None:
    """The table for a checked scenario (``results``: its :class:`checker.app.check.PropertyResult`), or
    ``None`` when it describes no Gaussian run."""
    found = run_of(scenario)
    if found is None:
        return None
    run, delta, source = found
    bracket = epsilon_bracket(run, delta)
    rows = [(r.name, r.kind, _formal(r)) for r in results if r.kind in PRIVACY_KINDS]
    ts = sorted({1, *(max(1, round(run.rounds * i / CURVE_POINTS)) for i in range(1, CURVE_POINTS + 1))})
    curve = []
    for t in ts:
        b = bracket if t == run.rounds else epsilon_bracket(replace(run, rounds=t), delta)
        curve.append((t, b.lower, b.upper))
    account = PrivacyAccount(run, delta, source, bracket, rows, curve=curve)
    if audit:
        from checker.app.audit_fedavg import audit_fedavg  # lazy: scikit-learn's digits
        from flmodel.training_dp import DPFedAvgConfig

        res = audit_fedavg(DPFedAvgConfig(rounds=run.rounds, sampling_rate=run.sampling_rate,
                                          noise_multiplier=run.noise_multiplier, seed=seed), delta=delta)
        account.audit_lower = res.audit.epsilon_lower
        account.audit_detected = res.detected
    return account


def privacy_account_of(report: Any, audit: bool = False) -> PrivacyAccount | None:
    """:func:`account_scenario` of a :class:`checker.app.check.CheckReport`, kept in its artefacts for
    the reports (``report.artefacts["accounting"]``)."""
    account = account_scenario(report.scenario, report.results, audit=audit)
    if account is not None:
        report.artefacts["accounting"] = account
    return account
