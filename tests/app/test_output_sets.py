"""The multi-file outputs as sets: an Isabelle export (one ``SHA256SUMS`` unit; two scenarios that would
share a theory file refused, before anything is written; ``--clean`` with the commit) and a Markdown
report (pictures named after their content, the old report's pictures removed once the new report is in
place)."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from pathlib import Path

from flcheck_spec import resource

from checker.app.isabelle.export_files import MANIFEST_NAME
from checker.cli.main import main
from checker.io.files import read_manifest


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_two_scenarios_with_one_file_name_are_refused(tmp_path: Path) -> None:
    for folder, name in (("a", "seed_model"), ("b", "moniteo")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.fl").write_text(resource("scenarios", f"{name}.fl").read_text())
    out = tmp_path / "th"
    a, b = tmp_path / "a/x.fl", tmp_path / "b/x.fl"
    code, _, err = run(["export", "isabelle", str(a), str(b), "-o", str(out)])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{a} and {b} would both be exported as Scenario_x.thy" in err
    assert not out.exists() or not any(out.iterdir())  # nothing written, nothing dropped
    code, _, err = run(["export", "isabelle", str(a), str(tmp_path / "a/../a/x.fl"), "-o", str(out)])
    assert code == 0, err
    assert sorted(p.name for p in out.iterdir()) == ["FL_Infrastructure.thy", "ROOT", MANIFEST_NAME,
                                                     "Scenario_x.thy"]


def test_export_is_one_set_with_its_manifest(tmp_path: Path) -> None:
    out = tmp_path / "th"
    assert run(["export", "isabelle", "example:seed", "-o", str(out)])[0] == 0
    assert run(["export", "isabelle", "example:moniteo_rr", "-o", str(out)])[0] == 0
    listed = read_manifest(out / MANIFEST_NAME)
    assert listed is not None and set(listed) == {"FL_Infrastructure.thy", "Scenario_example_moniteo_rr.thy",
                                                  "ROOT"}
    assert "Scenario_example_seed" in (out / "ROOT").read_text()  # the session accumulates
    check = subprocess.run(["sha256sum", "-c", MANIFEST_NAME], cwd=out, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    assert run(["export", "isabelle", "example:moniteo_rr", "-o", str(out), "--clean"])[0] == 0
    assert not (out / "Scenario_example_seed.thy").exists()
    assert "Scenario_example_seed" not in (out / "ROOT").read_text()


def test_report_pictures_are_named_after_their_content(tmp_path: Path) -> None:
    md = tmp_path / "r.md"
    assert run(["check", "seed_model", "--report", str(md)])[0] == 1
    first = sorted(p.name for p in tmp_path.glob("r_*.png"))
    assert len(first) == 2 and all(re.fullmatch(r"r_[a-z_]+\.[0-9a-f]{12}\.png", n) for n in first), first
    assert all(f"(<{name}>)" in md.read_text() for name in first)
    (tmp_path / "r_notes.png").write_bytes(b"a user's own picture")
    assert run(["check", "moniteo", "--property", "eavesdrop_secret_report", "--report", str(md)])[0] == 0
    second = sorted(p.name for p in tmp_path.glob("r_*.png") if p.name != "r_notes.png")
    assert set(second).isdisjoint(first)  # the old report's pictures went with its replacement
    assert all(f"(<{name}>)" in md.read_text() for name in second)
    assert (tmp_path / "r_notes.png").exists()  # a file of another name is never touched
