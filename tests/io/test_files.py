"""The one atomic writer: umask-honouring modes, no replaced inputs or special files, no temp left over;
sets of files with a manifest (committed, completed, refused when mixed), concurrent writers."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from checker.errors import InputError
from checker.io.files import current_umask, read_manifest, settle_unit, sha256_file, write_atomic, write_unit
from tests.fuzz.faults import litter


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_replaces_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    write_atomic(target, "a")
    write_atomic(target, ["b", "c"])
    assert target.read_text() == "bc"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_mode_follows_the_umask(tmp_path: Path, mask: int, expected: int) -> None:
    old = os.umask(mask)
    try:
        assert current_umask() == mask
        assert _mode(write_atomic(tmp_path / "f.bin", b"\x00")) == expected
    finally:
        os.umask(old)


def test_refuses_an_input(tmp_path: Path) -> None:
    source = tmp_path / "x.fl"
    source.write_text("scenario x")
    with pytest.raises(InputError, match="one of this command's inputs"):
        write_atomic(tmp_path / "." / "x.fl", "{}", inputs=[source])
    assert source.read_text() == "scenario x"


def test_refuses_a_directory_and_a_fifo(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory"):
        write_atomic(tmp_path, "x")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="special file"):
        write_atomic(fifo, "x")
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_refuses_a_file_as_parent(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(InputError, match="not a directory"):
        write_atomic(tmp_path / "f" / "g.txt", "x")


def test_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")

    def chunks() -> object:
        yield "new"
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_atomic(target, chunks())  # type: ignore[arg-type]  # a generator that fails midway
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


# ------------------------------------------------------------------------------------------ units
def test_a_unit_is_written_with_its_manifest(tmp_path: Path) -> None:
    """The manifest is ``sha256sum``'s format (the tool itself verifies the set)."""
    import subprocess

    files: dict[Path, str | bytes] = {tmp_path / "a.tra": "dtmc\n", tmp_path / "a.lab": b"#DECLARATION\n"}
    written = write_unit(files, manifest=tmp_path / "a.sha256")
    assert [p.name for p in written] == ["a.tra", "a.lab"]
    assert read_manifest(tmp_path / "a.sha256") == {"a.tra": sha256_file(tmp_path / "a.tra"),
                                                     "a.lab": sha256_file(tmp_path / "a.lab")}
    check = subprocess.run(["sha256sum", "-c", "a.sha256"], cwd=tmp_path, capture_output=True, text=True)
    assert check.returncode == 0 and "a.tra: OK" in check.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.lab", "a.sha256", "a.tra"]


def test_settle_completes_a_committed_write_and_refuses_a_mixed_set(tmp_path: Path) -> None:
    write_unit({tmp_path / "a.tra": "old tra", tmp_path / "a.lab": "old lab"}, manifest=tmp_path / "a.sha256")
    # a write killed after its commit point: the manifest names the new files, one is still staged
    new_lab = hashlib.sha256(b"new lab").hexdigest()
    (tmp_path / f".a.lab.{new_lab[:16]}.part").write_text("new lab")
    (tmp_path / "a.tra").write_text("new tra")
    (tmp_path / "a.sha256").write_text(f"{hashlib.sha256(b'new tra').hexdigest()}  a.tra\n{new_lab}  a.lab\n")
    settle_unit(tmp_path / "a.sha256")
    assert (tmp_path / "a.lab").read_text() == "new lab" and not litter(tmp_path)
    (tmp_path / "a.lab").write_text("changed by hand")
    with pytest.raises(InputError, match=r"a\.lab does not match its SHA-256 there"):
        settle_unit(tmp_path / "a.sha256")
    (tmp_path / "a.lab").unlink()
    with pytest.raises(InputError, match=r"a\.lab is missing"):
        settle_unit(tmp_path / "a.sha256")
    (tmp_path / "a.sha256").write_text("not a manifest\n")
    with pytest.raises(InputError, match=r"a\.sha256:1:1: not a manifest line"):
        settle_unit(tmp_path / "a.sha256")


def test_an_interrupt_before_the_commit_leaves_the_old_set(tmp_path: Path) -> None:
    write_unit({tmp_path / "a.tra": "old tra", tmp_path / "a.lab": "old lab"}, manifest=tmp_path / "a.sha256")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def chunks() -> Iterator[str]:
        yield "new"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_unit({tmp_path / "a.tra": "new tra", tmp_path / "a.lab": chunks()},
                   manifest=tmp_path / "a.sha256")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_concurrent_writers_leave_one_whole_set(tmp_path: Path) -> None:
    """Four processes write the same two-file set with their own contents, 20 times each, at once: the
    directory lock makes them take turns, so the set is always one writer's, never a mix."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    procs = [context.Process(target=_write_many, args=(tmp_path, w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    settle_unit(tmp_path / "a.sha256")
    tra, lab = (tmp_path / "a.tra").read_text(), (tmp_path / "a.lab").read_text()
    assert tra.split()[0] == lab.split()[0] and tra.split()[1] == lab.split()[1], (tra, lab)
    assert not litter(tmp_path)


def _write_many(folder: Path, writer: int) -> None:
    for i in range(20):
        write_unit({folder / "a.tra": f"{writer} {i} tra\n" * (1000 * (writer + 1)),
                    folder / "a.lab": f"{writer} {i} lab\n"}, manifest=folder / "a.sha256")


def test_a_removed_file_goes_with_the_commit_and_is_checked(tmp_path: Path) -> None:
    (tmp_path / "old.sta").write_text("x")
    write_unit({tmp_path / "a.tra": "t"}, remove=[tmp_path / "old.sta"])
    assert not (tmp_path / "old.sta").exists()
    source = tmp_path / "in.sta"
    source.write_text("input")
    with pytest.raises(InputError, match="inputs"):
        write_unit({tmp_path / "a.tra": "t"}, remove=[source], inputs=[source])
    assert source.exists()
