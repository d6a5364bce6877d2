"""The scenario property ``dp D{ε,δ}[ψ] between NAME [scheduler C] [observing …];``: ``check`` decides it
with :func:`checker.app.privacy_dp.dp_check` (the same figures, read back from the report), the
property prints and parses back, and misuse is a positioned input error, never a verdict."""

from __future__ import annotations

from fractions import Fraction

import pytest

from checker.app.check import check_scenario
from checker.app.privacy_dp import dp_check
from checker.cli.main import main
from checker.mc.ctl_ast import DPQuery
from checker.mc.ctl_parse import parse_formula
from checker.verdict import Verdict
from flmodel.errors import ModelError
from flmodel.scenario import parse_scenario
from flmodel.scenario_build import build_system, neighbour_system
from tests.app.test_privacy_dp import TWO_D

BASE = TWO_D.split("property ")[0]
QUERIES = {
    "tight": ("D{ln(2), 1/10}[F curmodpar == (0, 1/2)]", "worst"),
    "loose": ("D{ln(100), 0}[F round = 1]", "uniform"),
    "strict": ("D{0, 0}[F curmodpar == (1, 1/2)]", "worst"),
}


def _scenario_text() -> str:
    lines = [f"property {name}: dp {q} between n scheduler {sched};" for name, (q, sched) in QUERIES.items()]
    return BASE + "\n".join(lines) + "\n"


def test_check_decides_dp_properties_as_dp_check_does() -> None:
    s = parse_scenario(_scenario_text(), "dp.fl")
    report = check_scenario(s)
    by_name = {r.name: r for r in report.results}
    verdicts = set()
    for name, (query, sched) in QUERIES.items():
        f = parse_formula(query)
        assert isinstance(f, DPQuery)
        ref = dp_check(build_system(s), neighbour_system(s, "n"), f, "n", schedulers=sched)  # type: ignore[arg-type]
        got = by_name[name]
        assert got.kind == "dp" and got.verdict is ref.verdict
        assert got.details["scheduler"] == sched
        dirs = got.details["directions"]
        for d, r in zip(dirs, ref.directions, strict=True):
            assert d["probabilities"] == [str(x) for x in r.probabilities]
            assert Fraction(d["value"]) == Fraction(r.value)
        verdicts.add(got.verdict)
    assert verdicts == {Verdict.HOLDS, Verdict.VIOLATED}  # the check can fail


def test_dp_property_prints_and_parses_back() -> None:
    s = parse_scenario(_scenario_text(), "dp.fl")
    again = parse_scenario(s.to_text(), "again.fl")
    assert again.properties == s.properties
    assert {p.scheduler for p in s.properties} == {"worst", "uniform"}


def test_default_scheduler_is_the_worst_case() -> None:
    s = parse_scenario(BASE + "property p: dp D{ln(2), 0}[F round = 1] between n;\n", "dp.fl")
    (p,) = s.properties
    assert p.kind == "dp" and p.scheduler == "worst"


def test_dp_needs_a_declared_neighbour() -> None:
    with pytest.raises(ModelError, match="unknown neighbour 'm'"):
        parse_scenario(BASE + "property p: dp D{ln(2), 0}[F round = 1] between m;\n", "dp.fl")


@pytest.mark.parametrize(("body", "message"), [
    ("dp D{ln(2), 0}[F round = 1] between n scheduler best;", "dp.fl:"),
    ("ctl D{ln(2), 0}[F round = 1];", "needs a state formula"),
    ("dp D{ln(2), 0}[F rond = 1] between n;", "rond"),
])
def test_misuse_is_a_positioned_error(tmp_path: object, body: str, message: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "dp.fl"
    path.write_text(BASE + f"property p: {body}\n")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and f"{path}:" in err and "Traceback" not in err


def test_ctl_between_decides_the_query_as_check_does(tmp_path: object,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``flcheck ctl SCENARIO 'D{..}[..]' --between NAME --json``: the same directions as the ``dp``
    property of ``check``, in a document the ctl schema accepts; misuse is exit 2."""
    import json
    from pathlib import Path

    jsonschema = pytest.importorskip("jsonschema")
    import flcheck_spec

    path = Path(str(tmp_path)) / "dp.fl"
    path.write_text(_scenario_text())
    query, sched = QUERIES["tight"]
    code = main(["ctl", str(path), query, "--between", "n", "--scheduler", sched, "--json"])
    doc = json.loads(capsys.readouterr().out)
    schema = json.loads((Path(flcheck_spec.__file__).parent / "schema" / "ctl.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    by_name = {r.name: r for r in check_scenario(parse_scenario(_scenario_text(), "dp.fl")).results}
    assert doc["verdict"] == str(by_name["tight"].verdict) and code == by_name["tight"].verdict.exit_code()
    assert doc["directions"] == by_name["tight"].details["directions"]
    for argv in (["ctl", str(path), query], ["ctl", str(path), query, "--between", "m"],
                 ["ctl", str(path), "EF round = 1", "--between", "n"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("flcheck: error:") and "Traceback" not in err
