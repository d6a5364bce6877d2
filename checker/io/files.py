"""Writing output files: atomically, with the user's permissions, never over an input or a special file.

Every file flcheck writes (reports, theories, exports, plots, explicit models) goes through
:func:`write_atomic`: the data is written to a temporary file in the target's directory and renamed over
the target, so a reader never sees half a file and an interrupted run leaves the old file in place.

- The new file gets the mode a plain ``open(path, "w")`` would give (``0o666`` less the umask, so
  ``0o644`` under umask 022), not ``mkstemp``'s owner-only ``0o600``.
- A target that exists and is not a regular file (a directory, a FIFO, a device, a socket) is refused:
  renaming over it would replace it.
- A target that is one of the command's inputs (``inputs``, compared by resolved path and by inode) is
  refused, so ``--write-json x.fl`` never destroys ``x.fl``.

Refusals raise :class:`checker.errors.InputError` (exit 2).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from checker.errors import InputError

__all__ = ["check_output_path", "current_umask", "write_atomic", "write_atomic_with"]

PathLike = str | os.PathLike[str]


def current_umask() -> int:
    """The process's umask (read by setting and restoring it; there is no read-only call)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or os.path.samefile(a, b)
    except OSError:
        return False


def check_output_path(path: PathLike, inputs: Iterable[PathLike] = ()) -> Path:
    """``path`` as a :class:`~pathlib.Path` if flcheck may write a file there; else :class:`InputError`.

    Refused: an existing directory or special file (FIFO, device, socket), a path whose parent exists
    and is not a directory, and any of ``inputs``."""
    target = Path(path)
    if target.exists():
        mode = target.stat().st_mode
        if stat.S_ISDIR(mode):
            raise InputError(f"cannot write {target}: it is a directory", expected="a file name")
        if not stat.S_ISREG(mode):
            raise InputError(f"cannot write {target}: it is a special file (FIFO, device or socket), "
                             "which flcheck never replaces", expected="a regular file name")
    parent = target.parent if str(target.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise InputError(f"cannot write {target}: {parent} is not a directory")
    for source in inputs:
        if _same_file(target, Path(source)):
            raise InputError(f"cannot write {target}: it is one of this command's inputs",
                             expected="an output path other than the inputs")
    return target


def write_atomic_with(path: PathLike, write: Callable[[str], None], *,
                      inputs: Iterable[PathLike] = ()) -> Path:
    """Create ``path`` atomically: ``write(tmp)`` fills a temporary file in the same directory, which is
    then given the umask's mode and renamed over ``path``. Checks ``path`` with :func:`check_output_path`
    first; creates missing parent directories. Returns the target path."""
    target = check_output_path(path, inputs)
    parent = target.parent if str(target.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def write_atomic(path: PathLike, data: str | bytes | Iterable[str], *,
                 inputs: Iterable[PathLike] = ()) -> Path:
    """Write ``data`` (text, bytes, or an iterable of text chunks, written as UTF-8) to ``path``
    atomically, with the rules of the module docstring. Returns the target path.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_atomic(folder / "a.txt", "hello\\n").read_text()
    'hello\\n'
    >>> write_atomic(folder / "b.txt", "x", inputs=[folder / "b.txt"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    checker.errors.InputError: cannot write ... inputs (expected an output path other than the inputs)
    """

    def fill(tmp: str) -> None:
        if isinstance(data, bytes):
            with open(tmp, "wb") as fh:
                fh.write(data)
            return
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            if isinstance(data, str):
                fh.write(data)
            else:
                for chunk in data:
                    fh.write(chunk)

    return write_atomic_with(path, fill, inputs=inputs)
