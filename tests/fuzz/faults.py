"""Faults for the fault tests: a command killed (or interrupted with Ctrl-C) at its k-th file-system step,
a full or read-only disk (a small tmpfs where the test may mount one), a file-size limit (always
available: ``RLIMIT_FSIZE``), and the snapshots that say whether a set of outputs is the old one or the
new one.

A run killed at step ``k`` is a forked child of the test process that runs ``flcheck ARGV`` in-process
with ``os.replace``, ``os.unlink``, ``os.fsync`` and ``os.write`` counted: at the ``k``-th call it ends
itself with ``os._exit`` before the call (as SIGKILL would: no ``finally`` runs, nothing is flushed) or
raises ``KeyboardInterrupt`` (Ctrl-C: the command's own clean-up runs). ``os.write`` at the fatal step
first writes half of its bytes (a line cut by a full disk or a kill mid-write). Those four calls are
every step that changes what a reader of the outputs sees (renames, removals, appends), so ``k`` over
``0 .. steps`` covers every point of a run where an interrupt can land differently.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

#: Exit status of a child ended at its fatal step (as a process killed by SIGKILL reports it).
KILLED = 128 + signal.SIGKILL

#: The calls counted as steps.
STEPS = ("replace", "unlink", "fsync", "write")


@dataclass(frozen=True)
class ChildRun:
    """A forked run: its exit status and the steps it made (all of them when it was not stopped)."""

    status: int
    steps: int


def run_stopped_at(argv: Sequence[str], at: int | None, *, how: str = "kill",
                   before: Callable[[], None] | None = None) -> ChildRun:
    """Run ``flcheck ARGV`` in a forked child stopped at its step ``at`` (``None``: never; ``how``:
    ``"kill"`` or ``"interrupt"``), its output thrown away. ``before`` runs in the child first."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 70
        try:
            os.close(read_fd)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            if before is not None:
                before()
            status = _child(list(argv), at, how, write_fd)
        finally:
            os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        report = pipe.read()
    _, raw = os.waitpid(pid, 0)
    status = os.waitstatus_to_exitcode(raw)
    return ChildRun(status if status >= 0 else 128 - status, int(report or b"-1"))


def run_together(argvs: Sequence[Sequence[str]]) -> list[int]:
    """Run each ``flcheck ARGV`` in its own forked child, all at once; their exit statuses."""
    pids = []
    for argv in argvs:
        pid = os.fork()
        if pid == 0:
            status = 70
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                from checker.cli import main

                status = main(list(argv))
            finally:
                os._exit(status)
        pids.append(pid)
    return [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]


def _child(argv: list[str], at: int | None, how: str, report_fd: int) -> int:
    from checker.cli import main

    real = {name: getattr(os, name) for name in STEPS}
    count = 0
    real_write = real["write"]

    def counted(name: str) -> Callable[..., object]:
        def step(*args: object, **kwargs: object) -> object:
            nonlocal count
            if args and args[0] == report_fd:
                return real[name](*args, **kwargs)
            count += 1
            if at is not None and count == at:
                real_write(report_fd, str(count).encode())
                if how == "kill":
                    if name == "write":  # half of the bytes reach the file, then the process dies
                        data = bytes(args[1])  # type: ignore[call-overload]  # os.write(fd, data)
                        real_write(args[0], data[: len(data) // 2])  # an fd
                    os._exit(KILLED)
                raise KeyboardInterrupt
            return real[name](*args, **kwargs)
        return step

    for name in STEPS:
        setattr(os, name, counted(name))
    try:
        code = main(argv)
    finally:
        for name in STEPS:
            setattr(os, name, real[name])
    real_write(report_fd, str(count).encode())
    return int(code)


# ------------------------------------------------------------------------------------------ snapshots
def snapshot(folder: Path, names: Sequence[str] | None = None) -> dict[str, str]:
    """``{name: sha256}`` of the regular files of ``folder`` (all but hidden ones, or ``names``)."""
    out = {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and (path.name in names if names is not None else not path.name.startswith(".")):
            out[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def litter(folder: Path) -> list[str]:
    """The temporary and staged files an interrupted write leaves (hidden ``.NAME.*.tmp|part``)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and
                  p.name.endswith((".tmp", ".part")))


def restore(folder: Path, saved: Path) -> None:
    """Make ``folder`` a copy of ``saved`` (created when missing)."""
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(saved, folder)


# ------------------------------------------------------------------------------------------ disks
def can_mount() -> str | None:
    """``None`` when this process may mount a tmpfs, else why not."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root (the file-size limit case covers a full disk instead)"
    with tempfile.TemporaryDirectory() as probe:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe],
                              capture_output=True, text=True)
        if done.returncode != 0:
            return f"mount -t tmpfs is not permitted here: {done.stderr.strip()}"
        subprocess.run(["umount", probe], check=True)
    return None


@contextlib.contextmanager
def small_tmpfs(folder: Path, size_kb: int = 512) -> Iterator[Path]:
    """A tmpfs of ``size_kb`` mounted at ``folder`` for the body (skips the test where mounting is not
    permitted)."""
    why = can_mount()
    if why is not None:
        pytest.skip(why)
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0777", "tmpfs", str(folder)],
                   check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> None:
    """Fill the file system of ``folder`` to the last byte (a file ``filler``)."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (1 << 16, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)


def remount_read_only(folder: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)


def run_with_file_size_limit(argv: Sequence[str], limit: int, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``flcheck ARGV`` in a subprocess whose files may not grow beyond ``limit`` bytes (``RLIMIT_FSIZE``:
    a write beyond fails with EFBIG, as on a full disk; Python ignores the SIGXFSZ that comes with it)."""
    import resource

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "checker", *argv], cwd=cwd, capture_output=True, text=True,
                          preexec_fn=limited, timeout=300)
