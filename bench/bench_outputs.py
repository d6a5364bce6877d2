"""What writing outputs as sets costs: explicit models written with and without their manifest, read with and
without checking it (prints a table; no assertions).

For each structure (the bundled ``moniteo_swarm8`` at ``N`` satellites, explored once): CPU seconds of the
whole ``write_explicit`` (formatting the text from the arrays, and writing it as a set); of writing the
same bytes as a set (``set``: every file staged, hashed, flushed to disk with ``fsync``, the manifest
committed, the files renamed: :func:`checker.io.files.write_unit`) and the plain way (``plain``: each
file written with ``open`` and renamed; no ``fsync``, no hash, no manifest), with their wall seconds
(``fsync`` waits for the disk, which CPU seconds do not show); CPU seconds of ``read_explicit`` with the
manifest (every file hashed and compared: :func:`checker.io.files.settle_unit`) and without it. Medians
of ``--repeats`` runs.

Usage: python bench/bench_outputs.py [--sizes 4,6] [--repeats 5] [--folder DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from checker.app.load import load_model
from checker.io.files import write_unit
from checker.io.prism import MANIFEST_SUFFIX, read_explicit, write_explicit


def _timed(run: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median CPU and wall seconds of ``repeats`` runs."""
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        run()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,6", help="swarm sizes N of moniteo_swarm8 (unreduced)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--folder", default=None, help="where to write (default: a temporary folder)")
    args = parser.parse_args()
    folder = Path(args.folder or tempfile.mkdtemp(prefix="flcheck-bench-outputs-"))
    rows = [("N", "states", "transitions", "MB", "explicit write CPU s", "set CPU s", "plain CPU s",
             "set wall s", "plain wall s", "read CPU s", "no-manifest read CPU s", "read ratio")]
    for n in (int(x) for x in args.sizes.split(",")):
        kripke = load_model("moniteo_swarm8", defines={"N": n})
        prefix = folder / f"swarm{n}"
        whole_cpu, _ = _timed(lambda k=kripke, p=prefix: write_explicit(k, p), args.repeats)
        texts = {s: prefix.with_name(prefix.name + s).read_bytes() for s in (".tra", ".lab", ".sta")
                 if prefix.with_name(prefix.name + s).exists()}
        unit = folder / f"unit{n}"
        set_cpu, set_wall = _timed(lambda t=texts, p=unit: write_unit(
            {p.with_name(p.name + s): d for s, d in t.items()}, manifest=p.with_name(p.name + ".sha256")),
            args.repeats)
        plain_prefix = folder / f"plain{n}"

        def plain(t: dict[str, bytes] = texts, p: Path = plain_prefix) -> None:
            for suffix, data in t.items():
                tmp = p.with_name(f".{p.name}{suffix}.plain")
                tmp.write_bytes(data)
                os.replace(tmp, p.with_name(p.name + suffix))

        plain_cpu, plain_wall = _timed(plain, args.repeats)
        read_cpu, _ = _timed(lambda p=prefix: read_explicit(p), args.repeats)
        prefix.with_name(prefix.name + MANIFEST_SUFFIX).unlink()
        bare_cpu, _ = _timed(lambda p=prefix: read_explicit(p), args.repeats)
        size = sum(len(t) for t in texts.values()) / 2**20
        rows.append((str(n), str(kripke.num_states), str(kripke.num_transitions), f"{size:.1f}",
                     f"{whole_cpu:.3f}", f"{set_cpu:.3f}", f"{plain_cpu:.3f}", f"{set_wall:.3f}",
                     f"{plain_wall:.3f}", f"{read_cpu:.3f}", f"{bare_cpu:.3f}",
                     f"{read_cpu / max(bare_cpu, 1e-9):.2f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
