"""Every output option against a write-protected file (0444), a full disk, a read-only disk and a file-size
limit: exit 2 with one line naming the path and the system's reason, the old file untouched (bytes and
mode), no temporary file left; never exit 3, never a traceback. The full and read-only disks are a small
tmpfs where the test may mount one (skipped, with the reason, where it may not); the file-size limit
(``RLIMIT_FSIZE``, EFBIG as on a full disk) runs everywhere."""

from __future__ import annotations

import contextlib
import io
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from flcheck_spec import resource as spec_resource

from checker.cli.main import main
from tests.fuzz.faults import fill, litter, remount_read_only, run_with_file_size_limit, small_tmpfs

SWARM = spec_resource("scenarios", "moniteo_swarm8.fl").read_text(encoding="utf-8")


#: A model explored in a blink: the published rules, the first 200 states.
SMALL = ("seed_model", "--max-states", "200")

#: Output option -> (its command line, ``{out}`` the file it writes, ``{dir}`` its folder, ``{swarm}`` a
#: scenario copy; the name of the file it writes).
OUTPUTS: dict[str, tuple[tuple[str, ...], str]] = {
    "explore --write-json": (("explore", *SMALL, "--write-json", "{out}"), "k.json"),
    "explore --write-dot": (("explore", *SMALL, "--write-dot", "{out}"), "k.dot"),
    "explore --write-explicit": (("explore", *SMALL, "--write-explicit", "{dir}/m"), "m.tra"),
    "check --report .md": (("check", "seed_model", "--property", "repartition_twice", "--report", "{out}"),
                           "r.md"),
    "check --report .html": (("check", "seed_model", "--property", "repartition_twice", "--report",
                              "{out}"), "r.html"),
    "ctl --all-states": (("ctl", "moniteo", "P=? [F round = 1]", "--all-states", "{out}"), "p.csv"),
    "attack-tree -o": (("attack-tree", "moniteo", "--goal", "ready_sat3", "-o", "{out}"), "t.dot"),
    "dp --plot": (("dp", "gaussian", "--mu", "1", "--eps", "0", "1", "--plot", "{out}"), "g.png"),
    "audit --plot": (("audit", "rr:p=3/4", "--trials", "200", "--plot", "{out}"), "a.png"),
    "contacts -o": (("contacts", "--station", "toulouse", "--isl-km", "3000", "-o", "{out}"), "c.txt"),
    "sweep -o": (("sweep", "{swarm}", "-D", "N=1", "--executor", "processes", "--jobs", "1", "-o", "{out}",
                  "--no-plot"), "s.jsonl"),
    "sweep --plot": (("sweep", "{swarm}", "-D", "N=1", "--executor", "processes", "--jobs", "1", "-o",
                      "{dir}/s2.jsonl", "--plot", "{out}"), "s.png"),
    "export isabelle -o": (("export", "isabelle", "example:seed", "-o", "{dir}"), "ROOT"),
}
#: Refused when the command line is read (the option's type checks the path): no run needed.
PARSE_TIME_ONLY = {"attack --plot": (("attack", "sratta", "--plot", "{out}"), "s.png")}


def argv_of(name: str, folder: Path, swarm: Path) -> list[str]:
    words, file = {**OUTPUTS, **PARSE_TIME_ONLY}[name]
    return [w.format(out=folder / file, dir=folder, swarm=swarm) for w in words]


def run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


@pytest.fixture
def swarm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scenario") / "swarm.fl"
    path.write_text(SWARM, encoding="utf-8")
    return path


def _one_line(code: int, err: str, path: Path, reason: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    assert str(path) in lines[0] and reason in lines[0], err


def _old_file(path: Path, mode: int = 0o644) -> bytes:
    """An older output at ``path`` (a results file of a sweep: empty, so that it reads as one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = b"" if path.suffix == ".jsonl" else b"old output, must survive\n"
    path.write_bytes(data)
    os.chmod(path, mode)
    return data


# ------------------------------------------------------------------------------------------ 0444
@pytest.mark.parametrize("name", [*OUTPUTS, *PARSE_TIME_ONLY])
def test_write_protected_file_is_never_replaced(tmp_path: Path, swarm: Path, name: str) -> None:
    target = tmp_path / {**OUTPUTS, **PARSE_TIME_ONLY}[name][1]
    data = _old_file(target, 0o444)
    code, err = run(argv_of(name, tmp_path, swarm))
    _one_line(code, err, target, "Permission denied")
    assert "write-protected, mode 0444" in err
    assert target.read_bytes() == data and stat.S_IMODE(target.stat().st_mode) == 0o444
    assert not litter(tmp_path)


def test_replacing_keeps_the_old_mode(tmp_path: Path) -> None:
    target = tmp_path / "k.json"
    _old_file(target, 0o600)
    assert run(["explore", *SMALL, "--write-json", str(target)])[0] == 1  # 1: the exploration is partial
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and target.read_text().startswith("{")


# ------------------------------------------------------------------------------------------ full disk
@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "disk", 1024) as folder:
        yield folder


@pytest.mark.parametrize("fault", ["full", "read-only"])
@pytest.mark.parametrize("name", list(OUTPUTS))
def test_disk_fault_is_bad_input(tmpfs: Path, swarm: Path, name: str, fault: str) -> None:
    target = tmpfs / OUTPUTS[name][1]
    data = _old_file(target)
    if fault == "full":
        fill(tmpfs)
    else:
        remount_read_only(tmpfs)
    code, err = run(argv_of(name, tmpfs, swarm))
    if fault == "full":  # the file named is the one being written (the old one, or one beside it)
        assert "No space left on device [ENOSPC]" in err, err
        assert code == 2 and len(err.strip().splitlines()) == 1 and str(tmpfs) in err, err
    else:
        _one_line(code, err, target, "Read-only file system")
    assert target.read_bytes() == data and not litter(tmpfs)


# ------------------------------------------------------------------------------------------ EFBIG
FAST = ["explore --write-explicit", "check --report .md", "sweep -o"]


def _file_size_limit_case(tmp_path: Path, swarm: Path, name: str) -> None:
    target = tmp_path / OUTPUTS[name][1]
    data = _old_file(target)
    done = run_with_file_size_limit(argv_of(name, tmp_path, swarm), 100, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "File too large" in done.stderr and "[EFBIG]" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert target.read_bytes() == data and not litter(tmp_path)


@pytest.mark.parametrize("name", FAST)
def test_file_size_limit_is_bad_input(tmp_path: Path, swarm: Path, name: str) -> None:
    _file_size_limit_case(tmp_path, swarm, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in OUTPUTS if n not in FAST])
def test_file_size_limit_every_output(tmp_path: Path, swarm: Path, name: str) -> None:
    _file_size_limit_case(tmp_path, swarm, name)


# ------------------------------------------------------------------------------------------ stdout
def test_standard_output_on_a_full_disk(tmp_path: Path) -> None:
    """``flcheck ... > FILE`` where FILE cannot grow (the file-size limit; a full tmpfs below): exit 2,
    the file named, not an internal error."""
    target = tmp_path / "out.json"
    target.write_text("")
    command = f"{sys.executable} -m checker explore seed_model --max-states 200 --json"
    argv = ["sh", "-c", f"ulimit -f 0 && exec {command} > {target}"]
    done = subprocess.run(argv, stderr=subprocess.PIPE, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"flcheck: error: cannot write {target}: File too large [EFBIG]"


def test_standard_output_on_a_full_tmpfs(tmpfs: Path) -> None:
    fill(tmpfs)
    target = tmpfs / "out.txt"
    argv = [sys.executable, "-m", "checker", "check", "seed_model", "--property", "repartition_twice"]
    with open(target, "w") as fh:
        done = subprocess.run(argv, stdout=fh, stderr=subprocess.PIPE, text=True, timeout=300)
    assert done.returncode == 2 and "No space left on device [ENOSPC]" in done.stderr, done.stderr
    assert str(target) in done.stderr
