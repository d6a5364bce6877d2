"""The one atomic writer: umask-honouring modes, no replaced inputs or special files, no temp left over."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from checker.errors import InputError
from checker.io.files import current_umask, write_atomic


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
