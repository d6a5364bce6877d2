"""``flcheck audit fedavg``: the one-run audit of the numpy DP-FedAvg catches each injected implementation
fault on the default setting, and without a fault stays below the accountant's upper bound (20 seeds)."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from checker.app.audit_fedavg import audit_fedavg
from checker.cli.main import main
from flmodel.training import digits_dataset, split_clients
from flmodel.training_dp import FAULTS, DPFedAvgConfig, train_dp_fedavg
from tests.cli.test_json_contract import validate


@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_is_detected_on_the_default_setting(fault: str) -> None:
    res = audit_fedavg(DPFedAvgConfig(fault=fault, seed=0))
    assert res.detected and res.audit.epsilon_lower > res.claimed.upper


def test_no_fault_default_seed_is_not_detected() -> None:
    res = audit_fedavg(DPFedAvgConfig(seed=0))
    assert not res.detected and res.audit.epsilon_lower <= res.claimed.upper


@pytest.mark.slow
def test_twenty_seeds_without_fault_stay_below_the_accountant() -> None:
    bounds = [audit_fedavg(DPFedAvgConfig(seed=seed)) for seed in range(20)]
    lows = [b.audit.epsilon_lower for b in bounds]
    assert all(b.audit.epsilon_lower <= b.claimed.upper for b in bounds), lows


def test_faults_live_in_the_training_path() -> None:
    """The released sums change with each fault (not the scorer): no noise shares, unclipped canaries,
    shares scaled by 1/s."""
    x, y = digits_dataset()
    clients = list(split_clients(y, 10, 20, None, np.random.default_rng(0)).clients)
    norms = {}
    for fault in (None, *FAULTS):
        run = train_dp_fedavg(DPFedAvgConfig(rounds=3, canaries=50, fault=fault, seed=1), x, y, clients, 10)
        norms[fault] = float(np.linalg.norm(run.releases))
    assert norms["skip-noise-on-client"] < 0.2 * norms[None]
    assert norms["noise-scaled-by-1/n"] < 0.5 * norms[None]
    assert norms["no-clip"] > norms["skip-noise-on-client"]


def test_cli_json_keys_schema_and_exit_codes() -> None:
    for argv, code_expected in ((["audit", "fedavg", "--json"], 0),
                                (["audit", "fedavg", "--fault", "no-clip", "--json"], 1)):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(argv)
        doc = json.loads(out.getvalue())
        assert code == code_expected
        validate("audit", doc)
        for key in ("epsilon_lower", "confidence", "claimed_epsilon", "fault", "detected"):
            assert key in doc
        assert doc["detected"] == (doc["epsilon_lower"] > doc["claimed_epsilon"])


@pytest.mark.parametrize("argv", [["--rounds", "0"], ["--sampling-rate", "2"], ["--noise-multiplier", "nan"],
                                  ["--fault", "bogus"], ["--canaries", "10", "--guesses", "20"],
                                  ["--clients", "100"]])
def test_bad_options_exit_2(argv: list[str]) -> None:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["audit", "fedavg", *argv])
    assert code == 2 and argv[0] in err.getvalue()
