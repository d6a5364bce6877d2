"""Writing output files: atomically, alone or as a set, with the user's permissions, never over an input,
a special file or a write-protected file; a full or read-only disk is bad input (exit 2), never a crash.

Every file flcheck writes (reports and their pictures, theories, exports, plots, explicit models) goes
through :func:`write_unit` (:func:`write_atomic` for one file): each file is written to a temporary file
in its target's directory, flushed to disk (``fsync``) and renamed over the target, so a reader never
sees half a file and an interrupted run leaves the old file in place.

A *set* of files that belong together (``.tra``/``.lab``/``.sta``, the theories of an export) is
written as a unit with a **manifest** (``sha256sum`` format, ``HASH  NAME`` per line; ``sha256sum -c``
verifies it): every file is first staged under ``.NAME.HASH16.part`` beside its target; then the
manifest is renamed into place, which is the commit point; then the staged files are renamed over their
targets. An interrupt before the commit leaves the old set (the staged files are litter the next write
removes); an interrupt after it leaves the manifest naming the new set and the staged files that are
not yet in place, and :func:`settle_unit` (run by the next write and by every reader) completes the
renames. A reader therefore always sees the old set or the new one, and a set that matches its
manifest in neither way (a file changed by hand, or a staged file lost) is refused by
:func:`settle_unit`: never loaded as it is. Writers of one directory take turns (an ``flock`` on the
directory), so two commands writing the same set leave one of the two sets, not a mix.

- A new file gets the mode a plain ``open(path, "w")`` would give: the old file's mode when it replaces
  one, else ``0o666`` less the umask (``0o644`` under umask 022), not ``mkstemp``'s owner-only ``0o600``.
- A target that exists and is not a regular file (a directory, a FIFO, a device, a socket) is refused:
  renaming over it would replace it. So is a write-protected file (no write permission bit, or not
  writable by this user): replacing it would defeat the protection.
- A target that is one of the command's inputs (``inputs``, compared by resolved path and by inode) is
  refused, so ``--write-json x.fl`` never destroys ``x.fl``.
- An ``OSError`` while writing (``ENOSPC``, ``EROFS``, ``EACCES``, ``EFBIG``, ...) leaves the old file
  and becomes an :class:`~checker.errors.InputError` naming the path and the system's reason.

Refusals raise :class:`checker.errors.InputError` (exit 2). :func:`exclusive_lock` is the lock file that
keeps two long-running writers (sweeps) off one output.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import socket
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from checker.errors import InputError, os_error

__all__ = ["check_output_path", "current_umask", "exclusive_lock", "os_error", "read_manifest",
           "settle_unit", "sha256_file", "write_atomic", "write_atomic_with", "write_unit"]

PathLike = str | os.PathLike[str]
#: What a file of a unit is made of: text, bytes, text chunks, or a function that fills a path.
Content = str | bytes | Iterable[str] | Callable[[str], None]

#: The first line-free, comment-free format of a manifest: ``sha256sum``'s ``HASH  NAME``.
_MANIFEST_LINE = re.compile(r"([0-9a-f]{64})  ([^/\n]+)")


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


def _write_protection(st: os.stat_result, path: Path) -> str | None:
    """Why a regular file may not be replaced (``None``: it may): no write bit at all (``0444``, which
    root could override; flcheck does not), not writable by this user, or on a read-only file system."""
    mode = stat.S_IMODE(st.st_mode)
    if not mode & 0o222:
        return f"{os.strerror(errno.EACCES)} (the file is write-protected, mode {mode:04o}; flcheck never " \
               "replaces it)"
    if os.access(path, os.W_OK):
        return None
    try:
        read_only = bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return f"{os.strerror(errno.EROFS)} [EROFS]" if read_only else \
        f"{os.strerror(errno.EACCES)} (not writable by this user, mode {mode:04o})"


def check_output_path(path: PathLike, inputs: Iterable[PathLike] = ()) -> Path:
    """``path`` as a :class:`~pathlib.Path` if flcheck may write a file there; else :class:`InputError`.

    Refused: an existing directory or special file (FIFO, device, socket), a write-protected file, a
    path whose parent exists and is not a directory, and any of ``inputs``."""
    target = Path(path)
    try:
        st = target.stat() if target.exists() else None
    except OSError as exc:
        raise os_error(target, exc) from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"cannot write {target}: it is a directory", expected="a file name")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"cannot write {target}: it is a special file (FIFO, device or socket), "
                             "which flcheck never replaces", expected="a regular file name")
        protection = _write_protection(st, target)
        if protection is not None:
            raise InputError(f"cannot write {target}: {protection}")
    parent = target.parent if str(target.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise InputError(f"cannot write {target}: {parent} is not a directory")
    for source in inputs:
        if _same_file(target, Path(source)):
            raise InputError(f"cannot write {target}: it is one of this command's inputs",
                             expected="an output path other than the inputs")
    return target


def sha256_file(path: PathLike) -> str:
    """The SHA-256 of a file's bytes, in hex (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _fsync_dir(directory: Path) -> None:
    """Flush a directory's entries (the renames in it) to disk; a file system that cannot is skipped."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def _directory_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``directory`` (writers of one directory take turns); where the
    directory cannot be opened or locked the body runs unlocked."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def _parent(target: Path) -> Path:
    return target.parent if str(target.parent) else Path(".")


def _new_mode(target: Path) -> int:
    """The mode ``open(target, "w")`` would leave: the replaced file's, else ``0o666`` less the umask."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def _fill(tmp: str, content: Content) -> str | None:
    """Write ``content`` to the file ``tmp`` (flushed to disk); returns its SHA-256 when it was hashed
    on the way (text, bytes, chunks), ``None`` for a function that filled the path itself."""
    if callable(content):
        content(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        return None
    digest = hashlib.sha256()
    with open(tmp, "wb") as fh:
        if isinstance(content, bytes):
            digest.update(content)
            fh.write(content)
        else:
            for chunk in [content] if isinstance(content, str) else content:
                data = chunk.encode("utf-8")
                digest.update(data)
                fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return digest.hexdigest()


def _staged_name(name: str, digest: str) -> str:
    """Where a unit's file waits between staging and its rename: ``.NAME.HASH16.part``."""
    return f".{name}.{digest[:16]}.part"


def _remove_litter(directory: Path, names: Iterable[str]) -> None:
    """Remove the temporary and staged files an interrupted write of ``names`` left in ``directory``."""
    wanted = set(names)
    pattern = re.compile(r"\.(.+)\.[A-Za-z0-9_]+\.(?:tmp|part)")
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match and match.group(1) in wanted and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


def read_manifest(manifest: PathLike) -> dict[str, str] | None:
    """The ``{name: sha256}`` of a manifest (``sha256sum`` format), ``None`` when there is none; a
    malformed one is an :class:`InputError` naming its line."""
    from checker.errors import Position  # the one position type

    path = Path(manifest)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, OSError):
            raise os_error(path, exc, "read") from None
        raise InputError("not a manifest: not UTF-8 text", Position(str(path))) from None
    members: dict[str, str] = {}
    for no, line in enumerate(text.splitlines(), 1):
        match = _MANIFEST_LINE.fullmatch(line)
        if not match:
            raise InputError("not a manifest line", Position(str(path), no, 1),
                             "'SHA256  NAME' as sha256sum writes it")
        members[match.group(2)] = match.group(1)
    return members


def settle_unit(manifest: PathLike) -> dict[str, str] | None:
    """Bring a set of files written by :func:`write_unit` to the state its manifest records, and return
    the manifest (``None`` when there is none: nothing to check).

    A file that does not match the manifest is replaced by its staged copy when an interrupted write left
    one (the write had committed: this completes it); otherwise the set matches its manifest in no way
    (a file changed by hand, or a copy lost) and an :class:`InputError` says so: such a set is never
    read as it is."""
    path = Path(manifest)
    if not path.exists():
        return None
    with _directory_lock(_parent(path)):
        return _settle_locked(path, strict=True)


def write_unit(files: Mapping[Path, Content] | Mapping[str, Content], *, inputs: Iterable[PathLike] = (),
               manifest: PathLike | None = None,
               remove: Iterable[PathLike] | Callable[[], Iterable[PathLike]] = ()) -> list[Path]:
    """Write ``files`` (``{path: content}``) as one unit; returns the target paths, in order.

    Every target is checked with :func:`check_output_path` before anything is written; missing parent
    directories are created. Each file is staged (written, flushed, given its mode) beside its target;
    then, with a ``manifest`` (which must sit in the same directory as every file), the manifest is
    committed and the files renamed into place (see the module docstring); without one, the files are
    renamed in the order given, so the last one is the commit point of the set (a report renamed after
    the pictures it links to, under new names). ``remove``: files the new set no longer has (removed
    after the commit; a function giving them is called once the directories are this writer's). An
    ``OSError`` becomes an :class:`InputError` naming the path and the reason; the old files stay."""
    sources = list(inputs)
    targets = [check_output_path(p, sources) for p in files]
    contents = list(files.values())
    manifest_path = None if manifest is None else check_output_path(manifest, sources)
    if manifest_path is not None and any(_parent(t).resolve() != _parent(manifest_path).resolve()
                                         for t in targets):
        raise ValueError("the files of a unit with a manifest must sit in the manifest's directory")
    every = [*targets, *([manifest_path] if manifest_path is not None else [])]
    for directory in {_parent(t) for t in every}:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise os_error(directory, exc) from None
    names: dict[Path, list[str]] = {}  # each directory once (resolved), with the names written in it
    for t in every:
        names.setdefault(_parent(t).resolve(), []).append(t.name)
    with contextlib.ExitStack() as locks:
        for directory in sorted(names):
            locks.enter_context(_directory_lock(directory))
        if manifest_path is not None and manifest_path.exists():
            with contextlib.suppress(InputError):  # a malformed manifest is replaced with the set
                _settle_locked(manifest_path, strict=False)
        for directory, written in names.items():
            _remove_litter(directory, written)
        # the files the set no longer has: the same rules as a replaced file
        removed = [check_output_path(p, sources) for p in (remove() if callable(remove) else remove)]
        return _commit(targets, contents, manifest_path, removed)


def _settle_locked(manifest: Path, *, strict: bool) -> dict[str, str] | None:
    """:func:`settle_unit` once the directory's lock is held (``flock`` locks of one process on two
    descriptors of a directory would wait on each other); ``strict=False`` (a writer about to replace
    the set) leaves a file that matches nothing as it is instead of refusing it."""
    directory = _parent(manifest)
    members = read_manifest(manifest)
    moved = False
    for name, digest in (members or {}).items():
        target = directory / name
        if target.exists() and sha256_file(target) == digest:
            continue
        staged = directory / _staged_name(name, digest)
        if staged.exists() and sha256_file(staged) == digest:
            try:
                os.replace(staged, target)
            except OSError as exc:
                raise os_error(target, exc) from None
            moved = True
        elif strict:
            state = "is missing" if not target.exists() else "does not match its SHA-256 there"
            raise InputError(f"{target} {state} ({manifest}): the set was changed after flcheck wrote it, "
                             "or an interrupted write lost its copies; write it again, or delete "
                             f"{manifest.name} to read the files as they are")
    if moved:
        _fsync_dir(directory)
    return members


def _commit(targets: list[Path], contents: list[Content], manifest: Path | None,
            remove: list[Path]) -> list[Path]:
    staged: list[Path] = []
    committed = False
    current: Path | None = None
    try:
        digests = []
        for target, content in zip(targets, contents, strict=True):
            current = target
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=_parent(target))
            os.close(fd)
            staged.append(Path(tmp))
            digest = _fill(tmp, content)
            os.chmod(tmp, _new_mode(target))
            if manifest is not None:
                digest = digest or sha256_file(tmp)
                final = _parent(target) / _staged_name(target.name, digest)
                os.replace(tmp, final)
                staged[-1] = final
            digests.append(digest or "")
        if manifest is not None:
            current = manifest
            text = "".join(f"{d}  {t.name}\n" for d, t in zip(digests, targets, strict=True))
            fd, tmp = tempfile.mkstemp(prefix=f".{manifest.name}.", suffix=".tmp", dir=_parent(manifest))
            os.close(fd)
            staged.append(Path(tmp))
            _fill(tmp, text)
            os.chmod(tmp, _new_mode(manifest))
            os.replace(tmp, manifest)  # the commit point: the new set is the truth from here on
            staged.pop()
            committed = True
        for target, part in zip(targets, staged, strict=True):
            current = target
            os.replace(part, target)
            committed = True
        staged = []
        for directory in sorted({_parent(t) for t in targets}):
            _fsync_dir(directory)
        for old in remove:
            current = old
            with contextlib.suppress(FileNotFoundError):
                os.unlink(old)
    except BaseException as exc:
        if committed and manifest is not None:
            _finish(targets, staged)  # an interrupt after the commit point: complete the renames
        else:
            for part in staged:
                with contextlib.suppress(OSError):
                    os.unlink(part)
        if isinstance(exc, OSError):
            raise os_error(current or targets[0], exc) from None
        raise
    return targets


def _finish(targets: list[Path], staged: list[Path]) -> None:
    """Rename the staged files that are still waiting over their targets (best effort: what cannot be
    moved now is moved by the next :func:`settle_unit`)."""
    waiting = {p.name: p for p in staged}
    for target in targets:
        for name, tmp in list(waiting.items()):
            if name.startswith(f".{target.name}.") and name.endswith(".part"):
                with contextlib.suppress(OSError):
                    os.replace(tmp, target)
                del waiting[name]


def write_atomic_with(path: PathLike, write: Callable[[str], None], *,
                      inputs: Iterable[PathLike] = ()) -> Path:
    """Create ``path`` atomically: ``write(tmp)`` fills a temporary file in the same directory, which is
    then flushed, given its mode and renamed over ``path`` (:func:`write_unit`). Returns the target."""
    return write_unit({Path(path): write}, inputs=inputs)[0]


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
    return write_unit({Path(path): data}, inputs=inputs)[0]


# ------------------------------------------------------------------------------------------ lock files
def _holder_text(lock: Path) -> str:
    try:
        text = lock.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        text = ""
    return text or "another process"


@contextlib.contextmanager
def exclusive_lock(path: PathLike, what: str) -> Iterator[Path]:
    """Hold the lock file ``PATH.lock`` for the body (an ``flock``, released by the system when the
    holder dies, so a killed holder leaves no stale lock); it records who holds it (``what``, the process
    id, the host and the time). A lock held by another process is an :class:`InputError` naming the file
    and the holder. The lock file is removed when the body ends."""
    target = Path(path)
    lock = target.with_name(target.name + ".lock")
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666 & ~current_umask())
        except OSError as exc:
            raise os_error(lock, exc, "create the lock file") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise InputError(f"{target} is in use: {_holder_text(lock)} holds {lock}",
                                 expected="one command at a time on an output (wait for it, or choose "
                                          "another output)") from None
            raise os_error(lock, exc, "lock") from None
        try:  # the file locked must still be the one at the path (a holder may have removed it meanwhile)
            same = os.path.samestat(os.fstat(fd), os.stat(lock))
        except OSError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        with contextlib.suppress(OSError):  # who holds it is a courtesy; a full disk does not stop the lock
            os.ftruncate(fd, 0)
            os.write(fd, f"{what} (pid {os.getpid()} on {socket.gethostname()}, since {stamp})\n".encode())
        yield lock
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)
