"""Loading scenario files (``flmodel.scenario.load_scenario``) and exploring them, and resolving
command-line model names (``example:NAME[:key=value,...]``, paths, bundled scenario names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.app.load import (
    ExampleModel,
    ScenarioFile,
    bundled_scenario_titles,
    load_fl_model,
    load_model,
    model_kind,
    resolve_example,
    resolve_model_files,
    resolve_model_spec,
    resolve_scenario_path,
)
from checker.cli import main
from checker.errors import InputError
from checker.mc.explore import Limits
from checker.verdict import Verdict
from flmodel.system import FLSystem


def _scenarios() -> list[Path]:
    import flcheck_spec

    return list(flcheck_spec.bundled_scenarios().values())


# A subset of the example documented at the top of spec/grammar/scenario.lark (the scenario language).
EXAMPLE = """\
scenario "Moniteo"
locations ground_station, orbit1, orbit2
links ground_station -- orbit1, ground_station -- orbit2
server ground at ground_station
clients sat1 at orbit1, sat2 at orbit2
policy at ground_station: ground may put_part, eval_server
policy at orbit1: sat1 may get_grad
policy at orbit2: sat2 may get_grad
data loc1 = (1) -> 19
data loc2 = (2) -> 17 secret
dataset loc1, loc2
partition sat1: {loc1}, sat2: {loc2}
model squared rate 1/8 initial (0, 0)
noise geometric r 1/2 range 0 .. 4 step 1 clip on update
protocol fedavg_rounds traces drop
bounds rounds 1
"""


def test_documented_example_scenario_loads_explores_and_checks(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from checker.mc.ctl import check

    path = tmp_path / "example.fl"
    path.write_text(EXAMPLE)
    kripke = load_model(path, limits=Limits(max_states=50_000, max_seconds=60))
    kripke.validate()
    assert kripke.complete and kripke.num_states > 1
    assert check(kripke, "EF round == 1").verdict is Verdict.HOLDS
    assert check(kripke, "AG round <= 1").verdict is Verdict.HOLDS
    r = check(kripke, 'EF ("sat1" in ready & "sat2" in ready)')
    assert r.holds and r.witness is not None
    assert "ready={sat1, sat2}" in r.witness.render()
    assert main(["ctl", str(path), "EF round == 1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "holds" and out["states"] == kripke.num_states
    assert main(["ctl", str(path), "EF nosuch"]) == 2


def test_model_kind_dispatch(tmp_path: Path) -> None:
    assert model_kind("x.fl") == "scenario"
    assert model_kind("x.json") == "json"
    assert model_kind(["a.tra", "a.lab"]) == "explicit"


@pytest.mark.parametrize("path", _scenarios()[:3], ids=lambda p: p.stem)
def test_bundled_scenarios_explore_and_check(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from checker.mc.ctl import check

    kripke = load_model(path, limits=Limits(max_states=20_000, max_seconds=20))
    kripke.validate()
    assert kripke.num_states >= 1 and len(kripke.initial) >= 1
    res = check(kripke, "EF true", vacuity=False)
    assert res.verdict is Verdict.HOLDS
    code = main(["explore", str(path), "--json", "--max-states", "20000"])
    out = json.loads(capsys.readouterr().out)
    assert code == (0 if out["complete"] else 1)  # an exploration stopped by a limit is 'unknown'
    assert out["complete"] == kripke.complete
    assert out["states"] == kripke.num_states


def shape(system: FLSystem) -> tuple[object, ...]:
    """What tells two FL systems apart (an FLSystem has no equality of its own)."""
    mechanism = system.ctx.mechanism
    return (system.initial, system.rules.name, system.bounds, system.ctx.trace_mode,
            None if mechanism is None else mechanism.describe())


def test_example_names_mean_one_system() -> None:
    """``example:NAME`` is the same system for every command: Moniteo carries its randomized-response
    noise (as spec/scenarios/moniteo.fl does); options change it explicitly."""
    from flmodel import examples

    moniteo = resolve_model_spec("example:moniteo")
    assert isinstance(moniteo, ExampleModel) and moniteo.label == "example_moniteo"
    assert shape(moniteo.system) == shape(examples.moniteo_like(2, 1, "rr"))
    assert list(moniteo.universe) == examples.moniteo_universe(2, 1, 1)
    quiet = resolve_model_spec("example:moniteo:mechanism=none,k=3")
    assert isinstance(quiet, ExampleModel) and quiet.system.ctx.mechanism is None
    assert quiet.label == "example_moniteo_mechanism_none_k_3"
    one_satellite = [resolve_model_spec(s) for s in ("example:moniteo_rr", "example:moniteo:k=1")]
    assert all(isinstance(m, ExampleModel) for m in one_satellite)
    assert len({shape(m.system) for m in one_satellite if isinstance(m, ExampleModel)}) == 1
    seed = resolve_model_spec("example:seed")
    assert isinstance(seed, ExampleModel)
    assert shape(seed.system) == shape(examples.seed_model(2, max_rounds=1, max_events=4, trace_mode="drop"))


@pytest.mark.parametrize(("spec", "message"), [
    ("example:nothing", "unknown example"),
    ("example:moniteo:k=x", "must be an integer"),
    ("example:moniteo:bogus=1", "unknown example option"),
    ("example:moniteo:k", "bad example option"),
    ("example:seed:mechanism=laplace", "unknown mechanism"),
    ("example:moniteo:mechanism=laplace", "unknown mechanism shorthand"),
])
def test_bad_example_specs_are_input_errors(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        resolve_model_spec(spec)


def test_scenarios_resolve_by_path_or_bundled_name(tmp_path: Path) -> None:
    import flcheck_spec

    bundled = resolve_model_spec("moniteo")
    assert bundled == ScenarioFile("moniteo", flcheck_spec.bundled_scenarios()["moniteo"])
    path = tmp_path / "mine.fl"
    path.write_text(EXAMPLE)
    assert resolve_model_spec(str(path)) == ScenarioFile(str(path), path)
    with pytest.raises(InputError, match=r"not found \(no such file or bundled scenario.*example:NAME"):
        resolve_model_spec(str(tmp_path / "missing.fl"))


def test_an_existing_path_wins_over_a_bundled_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "moniteo").write_text(EXAMPLE)
    monkeypatch.chdir(tmp_path)
    assert resolve_model_spec("moniteo") == ScenarioFile("moniteo", Path("moniteo"))
    assert resolve_model_files(["moniteo"]) == ["moniteo"]


def test_unknown_names_list_the_bundled_scenarios_and_the_closest() -> None:
    import flcheck_spec

    with pytest.raises(InputError) as info:
        resolve_model_spec("monitoe")
    text = str(info.value)
    assert "\n" not in text and "did you mean moniteo" in text
    assert all(name in text for name in flcheck_spec.bundled_scenarios())
    with pytest.raises(InputError, match="did you mean seed_model"):
        resolve_scenario_path("seed_modle.fl")


def test_load_model_reads_bundled_names_and_examples() -> None:
    import flcheck_spec

    bundled = load_model("moniteo_link_loss")
    assert bundled.source == str(flcheck_spec.bundled_scenarios()["moniteo_link_loss"])
    assert bundled.num_states == load_model(flcheck_spec.bundled_scenarios()["moniteo_link_loss"]).num_states
    example = load_model("example:moniteo_rr")
    assert example.complete and example.num_states > 1 and example.source == "example:moniteo_rr"


def test_load_fl_model_resolves_examples_paths_and_bundled_names() -> None:
    _system, universe, declared = load_fl_model("example:seed")
    assert declared == [] and len(universe) == len(resolve_example("example:seed").universe)
    _system, _universe, declared = load_fl_model("moniteo")
    assert declared  # the bundled Moniteo declares its neighbours
    with pytest.raises(InputError, match="needs an FL scenario"):
        load_fl_model("README.md")


def test_bundled_scenario_titles_are_the_scenario_lines() -> None:
    titles = bundled_scenario_titles()
    assert set(titles) >= {"moniteo", "moniteo_swarm8", "seed_model"}
    assert titles["moniteo_swarm8"] == "Moniteo: swarm of 8 satellites"
