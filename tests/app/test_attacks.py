"""``flcheck attack …`` and ``checker.app.attacks.run_attack``: options, JSON keys, plots, bad input."""

from __future__ import annotations

import json

import pytest

from checker.app.attacks import run_attack
from checker.cli import main
from checker.errors import InputError


def test_run_attack_rejects_unknown_kind_and_option() -> None:
    with pytest.raises(InputError, match=r"expected leakage \| mia \| sratta"):
        run_attack("gradient-inversion")
    with pytest.raises(InputError, match="bad option"):
        run_attack("sratta", no_such_option=1)


def test_check_refuses_an_unknown_attack_property_with_its_position(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A scenario's ``attack`` property naming no attack (here a file cut after ``attack_``, read as the
    attack ``_``) is an input error at the property, before anything is explored: exit 2, no verdict."""
    import flcheck_spec

    text = flcheck_spec.bundled_scenarios()["moniteo"].read_text(encoding="utf-8")
    cut = text.index("property secret_stays: attack_") + len("property secret_stays: attack_")
    path = tmp_path / "cut.fl"
    path.write_text(text[:cut], encoding="utf-8")
    assert main(["check", str(path), "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    line = text[:cut].count("\n") + 1
    assert doc["error"]["line"] == line and doc["error"]["column"] == 10
    assert doc["error"]["message"] == \
        "property 'secret_stays': unknown attack '_'; expected leakage | mia | sratta"
    assert "properties" not in doc


def test_cli_sratta_json_keys_and_plot(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    plot = tmp_path / "s.png"
    code = main(["attack", "sratta", "--clients", "3", "--per-client", "30", "--hidden", "100",
                 "--rounds", "5", "--json", "--plot", str(plot)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    for key in ("rho_recovered", "rho_matched", "rho_component", "v_measure", "kmeans_v_measure", "epsilon"):
        assert key in out
    assert out["epsilon"] == "inf" and out["n_mixed_components"] == 0 and out["n_false"] == 0
    assert plot.stat().st_size > 1000


def test_cli_mia_json_keys(capsys) -> None:  # type: ignore[no-untyped-def]
    code = main(["attack", "mia", "--epsilons", "10", "--clients", "2", "--per-client", "30", "--rounds", "2",
                 "--local-epochs", "5", "--batch-size", "10", "--snps", "300",
                 "--challenge-nonmembers", "100",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    row = out["rows"][0]
    assert set(row["attacks"]) == {"ensemble", "ensemble_no_adapt", "loss", "lira", "lira_offline",
                                   "lira_online"}
    for metrics in row["attacks"].values():
        assert set(metrics) == {"accuracy", "auc", "tpr_at_1pct_fpr", "tpr_at_0_1pct_fpr"}
    assert row["epsilon"] <= 10.0 + 1e-6


def test_cli_leakage_json_and_table(capsys) -> None:  # type: ignore[no-untyped-def]
    code = main(["attack", "leakage", "--values", "1,2", "--samples", "800", "--steps", "60", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(out["mi"]) == {"mine", "hmine"} and len(out["mi"]["hmine"]) == 2
    assert len(out["covariance_baseline"]) == 2  # the covariance sum is not an MI: its own key
    assert out["gaussian_validation"][0]["analytic"] == pytest.approx(0.6931, abs=1e-4)
    code = main(["attack", "leakage", "--trend", "noise", "--values", "0.1", "--samples", "500",
                 "--steps", "30"])
    assert code == 0 and "Gaussian validation" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [["attack", "sratta", "--alpha", "-1"], ["attack", "mia", "--epsilons", "ten"],
     ["attack", "sratta", "--per-client", "1000"], ["attack", "leakage", "--trend", "depth"]],
)
def test_cli_bad_input_exits_2(argv: list[str], capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(argv) == 2
    assert "error" in capsys.readouterr().err


def test_headline_of_each_kind() -> None:
    from checker.app.attacks import headline

    s = run_attack("sratta", n_clients=2, per_client=20, hidden=50, rounds=3)
    assert set(headline(s)) == {"rho_recovered", "rho_matched", "rho_component", "v_measure",
                                "kmeans_v_measure", "epsilon"}
    leak = run_attack("leakage", values=[1], n_samples=400, steps=20, gaussian_batches=())
    assert headline(leak)["mi"]["hmine"] == leak["mi"]["hmine"]
    with pytest.raises(ValueError):
        headline({"attack": "other"})


def test_isolated_share_matches_the_activation_sets() -> None:
    """rho_isolated from the boolean activation matrices equals a brute-force count over every (t, h) of
    the ground-truth activation sets, and SRATTA's Step 1 recovers exactly those samples here."""
    import numpy as np

    from checker.app.attacks import _isolated_share
    from checker.crossval.sratta import DiscretePrior, evaluate, sratta
    from flmodel.training import TrainingConfig, digits_dataset, split_clients, train

    x, y = digits_dataset()
    split = split_clients(y, 3, 30, None, np.random.default_rng(1))
    run = train(TrainingConfig(hidden=120, rounds=6, n_updates=3, batch_size=2, lr=1.0, seed=1), x, y, split)
    alone = {int(a[0]) for t in range(1, 7) for h in range(120) if len(a := run.activation_sets(t, h)) == 1}
    assert _isolated_share(run.activation) == len(alone) / 90 > 0
    res = sratta(run.first_layer_history(), DiscretePrior(0, 16, 1 / 16), n_clients=3)
    m = evaluate(res, [x[i] for i in split.clients], DiscretePrior(0, 16, 1 / 16))
    assert m.n_false == 0 and m.rho_recovered == len(alone) / 90


def test_cli_sratta_full_summarises_five_seeds(capsys) -> None:  # type: ignore[no-untyped-def]
    code = main(["attack", "sratta", "--clients", "2", "--per-client", "20", "--hidden", "40",
                 "--rounds", "3", "--full", "--seed", "3", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["seeds"] == [3, 4, 5, 6, 7] and len(out["runs"]) == 5
    values = [r["rho_recovered"] for r in out["runs"]]
    summary = out["summary"]["rho_recovered"]
    assert summary["median"] == pytest.approx(sorted(values)[2])
    assert summary["low"] <= sum(values) / 5 <= summary["high"]
    assert out["n_mixed_components_total"] == sum(r["n_mixed_components"] for r in out["runs"])
    from tests.cli.test_json_contract import validate

    validate("attack", out)


def test_leakage_paper_networks_keep_the_batch_size_apart_from_the_minibatch() -> None:
    leak = run_attack("leakage", values=[2], n_samples=300, steps=10, gaussian_batches=(), networks="paper",
                      batch=2)
    cfg = leak["config"]
    assert cfg["batch"] == 2 and cfg["minibatch"] == 64
    assert cfg["block"] == [200, 200, 5] and cfg["lr"] == 5e-5


def test_leakage_plot_has_whole_batch_ticks_and_labels(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The leakage plot's x axis shows the batch sizes measured (no fractional ticks), both axes and the
    figure are labelled."""
    import checker.crossval.plots as plots
    from checker.cli.attack import _plot_leakage

    shown = {}
    monkeypatch.setattr(plots, "save_figure", lambda fig, path: shown.setdefault("fig", fig))
    _plot_leakage({"values": [1, 2, 4, 8], "trend": "batch", "mi": {"mine": [0.1, 0.2, 0.3, 0.4],
                                                                    "hmine": [0.2, 0.3, 0.4, 0.5]}}, "x.png")
    (ax,) = shown["fig"].axes
    assert list(ax.get_xticks()) == [1, 2, 4, 8]
    assert ax.get_xlabel() == "batch" and ax.get_ylabel() and ax.get_title()
