"""``flcheck sweep`` (:mod:`checker.app.sweep`, :mod:`checker.cli.sweep`): a 30-instance grid on a Dask
LocalCluster of 2 workers survives a killed worker without losing finished results, a rerun skips them,
an interrupted sweep resumes, failing and limit-hitting instances are recorded while the others go on, and
every record equals the same instance checked alone in this process (the reference: the plain pipeline)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import signal
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from flcheck_spec import resource

from checker.app.sweep import SweepSpec, grid, instance_key, read_records, run_instance, run_sweep
from checker.cli.defines import parse_define_values
from checker.cli.main import main
from checker.errors import InputError

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "spec" / "schema" / "sweep.schema.json")
                    .read_text(encoding="utf-8"))

#: The bundled swarm with two more constants: X, the secret location's feature (the hot reading too), and
#: R, the rounds.
FAMILY = (resource("scenarios", "moniteo_swarm8.fl").read_text(encoding="utf-8")
          .replace("\nconst N = 8;\n", "\nconst N = 8;\nconst X = 1;\nconst R = 1;\n")
          .replace("bounds rounds 1", "bounds rounds R")
          .replace("r 1/2 on update", "r 1/2 clip on update")  # a second round leaves the grid: clipped
          .replace("data loc[N] = (1) -> 1 secret", "data loc[N] = (X) -> 1 secret")
          .replace("data loc_hot = (1) -> 3", "data loc_hot = (X) -> 3"))

GRID30 = {"N": (1, 2, 3), "X": tuple(range(1, 11))}


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert "const X" in FAMILY and "(X) -> 3" in FAMILY and "bounds rounds R" in FAMILY
    path = tmp_path_factory.mktemp("sweep") / "swarm_x.fl"
    path.write_text(FAMILY, encoding="utf-8")
    return path


def validate_record(line: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": "#/$defs/record"}).validate(line)


def same_figures(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Two records of one instance agree on everything but timings and the worker."""
    for key in ("instance", "status", "states", "transitions", "epsilon", "delta", "exit_code", "properties"):
        assert a.get(key) == b.get(key), key


def test_parse_define_values() -> None:
    assert parse_define_values("N=2..16") == ("N", tuple(range(2, 17)))
    assert parse_define_values("R=1,2") == ("R", (1, 2))
    assert parse_define_values("R = 3, 1..4:2, 3") == ("R", (3, 1))
    for bad in ("N", "N=", "N=a", "N=5..2", "N=1..3:0", "N=1..100000", "1=2"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_define_values(bad)
    assert len(grid(GRID30)) == 30
    assert [instance_key(d) for d in grid({"X": (1,), "N": (2, 3)})] == ["N=2 X=1", "N=3 X=1"]


@pytest.mark.slow
def test_dask_grid_of_30_with_a_killed_worker(scenario: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "results.jsonl"
    spec = SweepSpec.of(scenario)
    seen: list[list[str]] = []
    killed: list[str] = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:

        def progress(record: dict[str, Any], finished: int, total: int) -> None:
            seen.append(out.read_text(encoding="utf-8").splitlines())
            if finished == 8 and not killed:  # kill one worker process mid-sweep (its nanny restarts it)
                pids = client.run(os.getpid)
                address, pid = sorted(pids.items())[0]
                os.kill(pid, signal.SIGKILL)
                killed.append(address)

        summary = run_sweep(spec, GRID30, out, client=client, progress=progress)
    assert killed and summary.engine == "dask" and summary.ran == 30 and summary.skipped == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    for before in seen:  # every finished record stayed in the file, in place, through the kill
        assert lines[: len(before)] == before
    records = [json.loads(line) for line in lines]
    assert sorted(r["instance"] for r in records) == sorted(instance_key(d) for d in grid(GRID30))
    assert {r["status"] for r in records} == {"ok"}
    assert len({r["pid"] for r in records}) >= 2
    for line in records:
        validate_record(line)
    # the reference: each instance checked alone in this process
    by_key = {r["instance"]: r for r in records}
    for d in grid(GRID30)[::7]:
        same_figures(by_key[instance_key(d)], run_instance(spec, d))
    assert by_key["N=1 X=1"]["epsilon"] == pytest.approx(math.log(2))  # [IIIf-FL] IV: RR ratio 2
    # a rerun skips every instance and writes nothing
    again = run_sweep(spec, GRID30, out, engine="processes", jobs=1)
    assert (again.ran, again.skipped) == (0, 30) and out.read_text(encoding="utf-8").splitlines() == lines
    for a, b in zip(again.records, [by_key[instance_key(d)] for d in grid(GRID30)], strict=True):
        same_figures(a, b)


def test_processes_interrupted_then_resumed(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    spec = SweepSpec.of(scenario)
    values = {"N": (1, 2), "X": (1, 2, 3)}

    def stop(record: dict[str, Any], finished: int, total: int) -> None:
        if finished == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec, values, out, engine="processes", jobs=2, progress=stop)
    first = read_records(out)
    assert len(first) == 2
    with open(out, "a", encoding="utf-8") as fh:  # a line cut short by the kill is ignored
        fh.write('{"instance": "N=2 X=3", "sta')
    summary = run_sweep(spec, values, out, engine="processes", jobs=2)
    assert (summary.ran, summary.skipped) == (4, 2)
    assert sorted(r["instance"] for r in summary.records) == sorted(instance_key(d) for d in grid(values))
    for r in first:
        same_figures(r, next(s for s in summary.records if s["instance"] == r["instance"]))


@pytest.mark.slow
def test_processes_survive_a_killed_worker(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "k.jsonl"
    spec = SweepSpec.of(scenario)
    values = {"N": (1, 2, 3), "X": (1, 2)}
    killed: list[int] = []

    def kill(record: dict[str, Any], finished: int, total: int) -> None:
        if finished == 1:
            os.kill(record["pid"], signal.SIGKILL)
            killed.append(record["pid"])

    summary = run_sweep(spec, values, out, engine="processes", jobs=2, progress=kill)
    assert killed
    statuses = [r["status"] for r in summary.records]
    assert set(statuses) == {"ok"}, statuses
    assert len(read_records(out)) == 6 and summary.ran == 6


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_cli_failures_and_limits_are_recorded(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "f.jsonl"
    # N = 1 has at most 7 states (fewer under check's reductions), N = 6 more than 10 under any of them
    code, text, err = run_cli(["sweep", str(scenario), "-D", "N=0,1,6", "-D", "X=1", "--executor",
                               "processes", "--jobs", "2", "-o", str(out), "--max-states", "10", "--json"])
    assert code == 1, err
    doc = json.loads(text)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    status = {r["instance"]: r["status"] for r in doc["records"]}
    assert status == {"N=0 X=1": "error", "N=1 X=1": "ok", "N=6 X=1": "incomplete"}
    error = next(r for r in doc["records"] if r["status"] == "error")
    assert "no clients declared" in error["error"]
    assert Path(doc["plot"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for line in out.read_text(encoding="utf-8").splitlines():
        validate_record(json.loads(line))
    # the table names every instance; a rerun skips all three
    code, text, err = run_cli(["sweep", str(scenario), "-D", "N=0,1,6", "-D", "X=1", "--executor",
                               "processes", "-o", str(out), "--max-states", "10", "--no-plot"])
    assert code == 1 and "ran 0, skipped 3" in text and "incomplete" in text and err == ""
    # other limits are another run: nothing is skipped
    code, text, _ = run_cli(["sweep", str(scenario), "-D", "N=1", "-D", "X=1", "--executor", "processes",
                             "-o", str(out), "--no-plot", "--quiet"])
    assert code == 1 and "ran 1, skipped 0" in text


def test_cli_scheduler_address(scenario: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "s.jsonl"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        code, text, _ = run_cli(["sweep", str(scenario), "-D", "N=1..2", "-D", "X=1", "--scheduler",
                                 cluster.scheduler_address, "-o", str(out), "--no-plot", "--json"])
    doc = json.loads(text)
    assert code == 1 and doc["engine"] == "dask" and doc["statuses"] == {"ok": 2}


def test_rounds_are_swept_as_a_constant(scenario: Path, tmp_path: Path) -> None:
    """``bounds rounds R`` with -D R=1,2: one satellite reports once per round through randomized response
    of ratio 2, and the rounds' noise is independent, so ε* = R · ln 2 (composition is exact here: the
    worst outcome sequence multiplies the per-round ratios)."""
    out = tmp_path / "r.jsonl"
    code, text, err = run_cli(["sweep", str(scenario), "-D", "N=1", "-D", "R=1,2", "-D", "X=1", "--executor",
                               "processes", "--jobs", "1", "-o", str(out), "--no-plot", "--json"])
    doc = json.loads(text)
    assert code == 1 and doc["statuses"] == {"ok": 2}, err
    by_rounds = {r["instance"]: r for r in doc["records"]}
    for rounds in (1, 2):
        record = by_rounds[f"N=1 R={rounds} X=1"]
        assert record["epsilon"] == pytest.approx(rounds * math.log(2))
    assert by_rounds["N=1 R=2 X=1"]["states"] > by_rounds["N=1 R=1 X=1"]["states"]


def test_an_unreduced_sweep_counts_the_closed_form(tmp_path: Path) -> None:
    """``--no-reduce``: the swarm's states at N satellites are its closed form (V+1)^N + V^N (grid of V = 3
    values: N - 0 .. 3 reported values per satellite before the aggregation, 3^N after), the reduced
    sweep fewer, with the same figures; a rerun with the other setting runs again."""
    out = tmp_path / "n.jsonl"
    args = ["sweep", "moniteo_swarm8", "-D", "N=1..4", "--executor", "processes", "--jobs", "2", "-o",
            str(out), "--no-plot", "--json"]
    _, text, err = run_cli([*args, "--no-reduce"])
    plain = {r["instance"]: r for r in json.loads(text)["records"]}
    assert [plain[f"N={n}"]["states"] for n in range(1, 5)] == [4**n + 3**n for n in range(1, 5)], err
    _, text, _ = run_cli(args)
    doc = json.loads(text)
    assert doc["ran"] == 4  # the unreduced records are not this run's
    for r in doc["records"]:
        validate_record(r)
        assert r["reduce"] is True and r["states"] <= plain[r["instance"]]["states"]
        assert (r["epsilon"], r["delta"], r["properties"]) == (plain[r["instance"]]["epsilon"],
                                                               plain[r["instance"]]["delta"],
                                                               plain[r["instance"]]["properties"])


@pytest.mark.parametrize("argv, message", [
    (["-D", "Y=1"], "Y is not an integer constant of swarm_x.fl"),
    (["-D", "N=1", "-D", "N=2"], "given twice"),
    (["-D", "N=3..1"], "empty range"),
    (["-D", "N=1", "--executor", "processes", "--dask-scheduler", "tcp://127.0.0.1:1"], "--dask-scheduler"),
])
def test_cli_bad_input(scenario: Path, tmp_path: Path, argv: list[str], message: str) -> None:
    code, _, err = run_cli(["sweep", str(scenario), "-o", str(tmp_path / "x.jsonl"), *argv])
    assert code == 2 and message in err and "Traceback" not in err


def test_malformed_results_file(scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "bad.jsonl"
    out.write_text('{"instance": "N=1", "status": "ok"}\nnot json\n{"instance": "N=2", "status": "ok"}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:2"):
        read_records(out)
    code, _, err = run_cli(["sweep", str(scenario), "-D", "N=1", "-o", str(out)])
    assert code == 2 and "bad.jsonl:2" in err
