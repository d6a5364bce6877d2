"""``flcheck audit fedavg``: a one-run audit ([SNJ23]) of the project's numpy DP-FedAvg
(:mod:`flmodel.training_dp`) beside the accountant's ε for the same run.

One training on the bundled digits data (``clients`` real clients of 20 samples each, IID) with
``canaries`` canary clients, each included with probability 1/2; the canaries are scored (white-box
gradient canaries: every round's release; black-box loss canaries: the final model), the auditor guesses
the top and bottom tenth (:func:`checker.crossval.audit_one_run.one_run_audit`) and the ε lower bound
at the stated confidence is set against the accountant's certified upper bound of ε(δ) for the run's
``(Z, q, T)`` with Poisson sampling (:func:`checker.crossval.accountant.epsilon_bracket`): the claimed
ε. ``detected`` means ``epsilon_lower > claimed_epsilon``: the training cannot be the DP-FedAvg it
claims to be (with the stated confidence) — what an injected fault (:data:`flmodel.training_dp.FAULTS`)
should produce.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from checker.crossval.accountant import Bracket, Run, epsilon_bracket
from checker.crossval.audit_one_run import OneRunAudit, one_run_audit
from flmodel.training import digits_dataset, split_clients
from flmodel.training_dp import DPFedAvgConfig, canary_scores, train_dp_fedavg

__all__ = ["FedAvgAudit", "audit_fedavg"]

#: Samples of each real client.
PER_CLIENT = 20


@dataclass(frozen=True)
class FedAvgAudit:
    """The run, the audit, the accountant's bracket of ε(δ) for the run and the CPU seconds."""

    config: DPFedAvgConfig
    clients: int
    audit: OneRunAudit
    claimed: Bracket
    cpu_seconds: float

    @property
    def detected(self) -> bool:
        """The audit's lower bound exceeds the accountant's upper bound."""
        return self.audit.epsilon_lower > self.claimed.upper

    def to_json(self) -> dict[str, Any]:
        c = self.config
        return {
            "epsilon_lower": self.audit.epsilon_lower,
            "confidence": self.audit.confidence,
            "claimed_epsilon": self.claimed.upper,
            "claimed_epsilon_lower": self.claimed.lower,
            "fault": c.fault,
            "detected": self.detected,
            "delta": self.audit.delta,
            "canary": c.canary_kind,
            "canaries": self.audit.m,
            "guesses": self.audit.r,
            "correct": self.audit.v,
            "noise_multiplier": c.noise_multiplier,
            "sampling_rate": c.sampling_rate,
            "rounds": c.rounds,
            "clip": c.clip,
            "clients": self.clients,
            "seed": c.seed,
            "cpu_seconds": self.cpu_seconds,
        }

    def rows(self) -> list[tuple[str, str]]:
        c = self.config
        return [
            ("run", f"DP-FedAvg, Z = {c.noise_multiplier:g}, Poisson q = {c.sampling_rate:g}, "
                    f"T = {c.rounds}, "
                    f"clip {c.clip:g}, {self.clients} clients + {self.audit.m} {c.canary_kind} canaries"),
            ("fault", c.fault or "none"),
            ("guesses", f"{self.audit.v} correct of {self.audit.r} ({self.audit.k_plus} included, "
                        f"{self.audit.k_minus} excluded)"),
            (f"ε lower ({self.audit.confidence:g} conf., δ = {self.audit.delta:g})",
             f"{self.audit.epsilon_lower:.4g}"),
            ("claimed ε (accountant)", f"[{self.claimed.lower:.4g}, {self.claimed.upper:.4g}]"),
            ("detected", "yes: the training is not the DP it claims" if self.detected else "no"),
            ("CPU", f"{self.cpu_seconds:.3g} s"),
        ]


def audit_fedavg(config: DPFedAvgConfig, clients: int = 50, confidence: float = 0.95, delta: float = 1e-5,
                 guesses: int | None = None) -> FedAvgAudit:
    """Train once, audit, account (module docstring)."""
    start = time.process_time()
    x, y = digits_dataset()
    split = split_clients(y, clients, PER_CLIENT, None, np.random.default_rng(config.seed))
    run = train_dp_fedavg(config, x, y, list(split.clients), int(y.max()) + 1)
    audit = one_run_audit(canary_scores(run), run.included, confidence, delta, guesses)
    claimed = epsilon_bracket(Run(config.noise_multiplier, config.sampling_rate, config.rounds), delta)
    return FedAvgAudit(config, clients, audit, claimed, time.process_time() - start)
