"""Parameter sweeps: ``flcheck check`` on every instance of a grid of scenario constants, in parallel.

An instance is one assignment of the swept constants (``N=4, R=2``); the grid is the cartesian product of
each constant's values (:func:`grid`). Each instance runs :func:`checker.app.check.check_file` in a
worker (:func:`run_instance`) and comes back as one record, a JSON object of ``spec/schema/sweep.schema.json``
(``records``): the constants, a ``status`` (``ok``; ``incomplete`` when an exploration limit stopped it;
``error`` for bad input, e.g. a constant out of the scenario's range; ``failed`` for an internal error;
``crashed`` when the worker process died), the structure's size, the per-property verdicts and figures,
and the wall and CPU seconds. The figures of the privacy properties summarise an instance: ``epsilon``
is the largest ε* ([IIIf-FL] NI-FL-DP, the exact pure-DP ε of the attacker's observation), ``delta`` the
largest δ(ε) = max(E_{e^ε}(P0‖P1), E_{e^ε}(P1‖P0)) at each property's stated ε ([dpCTL]'s hockey-stick
reading, :func:`checker.privacy.ni_fl_dp.delta_for_epsilon`).

:func:`run_sweep` streams records to a JSON-lines file as they finish (one ``write`` + ``fsync`` per line,
so a killed sweep keeps every finished instance; a write that fails, e.g. on a full disk, is undone to
the last whole line) and skips the instances the file already holds for the same scenario text (its
SHA-256) and limits: a rerun resumes, after cutting off a last line that a killed sweep or a full disk
left incomplete (its instance runs again; nothing is ever appended to a cut line). One sweep at a time
writes a results file (a lock file ``FILE.lock`` names the holder; a second sweep is refused), and the
workers of a sweep die with it, even when it is killed with SIGKILL (:func:`exit_with`). Two engines run
the instances: Dask (``dask.distributed``: a ``LocalCluster`` of ``jobs`` single-threaded worker
processes, or an existing cluster by scheduler address; a worker that dies is replaced by its nanny and
its task rescheduled) or, without Dask, a :class:`concurrent.futures.ProcessPoolExecutor` (a pool broken
by a dying worker is restarted and its unfinished instances resubmitted, each at most
:data:`MAX_ATTEMPTS` times).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.errors import InputError, Position

__all__ = ["SweepSpec", "SweepSummary", "dask_available", "grid", "instance_key", "read_records",
           "run_instance", "run_sweep"]

#: How often a process-pool instance is resubmitted after its pool broke before it is recorded ``crashed``.
MAX_ATTEMPTS = 3

#: How a sweep's own Dask ``LocalCluster`` uses the network: every server on the loopback interface, and no
#: dashboard. ``dashboard_address=None`` alone does not do it: ``LocalCluster`` then passes
#: ``dashboard=False`` but the scheduler still starts its HTTP server (health and metrics routes) at its
#: default port, 8787 on the scheduler's host (``distributed.node.ServerNode.start_http_server`` falls
#: back to ``default_port`` when the address is ``None``); an explicit loopback address on port 0 gives it
#: a free port on loopback instead.
LOCAL_CLUSTER_NETWORK: dict[str, Any] = {
    "host": "127.0.0.1", "dashboard_address": None, "worker_dashboard_address": None,
    "scheduler_kwargs": {"dashboard": False, "dashboard_address": "127.0.0.1:0"}}

#: Record statuses; a rerun skips every recorded instance but a ``crashed`` one.
STATUSES = ("ok", "incomplete", "error", "failed", "crashed")

Record = dict[str, Any]


def dask_available() -> bool:
    """Whether ``dask.distributed`` can be imported (the optional extra ``[sweep]``)."""
    try:
        import distributed  # noqa: F401  # lazy: optional dependency, probed only
    except ImportError:
        return False
    return True


def grid(values: Mapping[str, Sequence[int]]) -> list[dict[str, int]]:
    """Every assignment of the constants, the last one varying fastest.

    >>> grid({"N": [1, 2], "R": [1, 3]})
    [{'N': 1, 'R': 1}, {'N': 1, 'R': 3}, {'N': 2, 'R': 1}, {'N': 2, 'R': 3}]
    >>> grid({})
    [{}]
    """
    names = list(values)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(values[n] for n in names))]


def instance_key(defines: Mapping[str, int]) -> str:
    """The instance's name, its constants sorted by name (``"N=2 R=1"``).

    >>> instance_key({"R": 1, "N": 2})
    'N=2 R=1'
    """
    return " ".join(f"{k}={defines[k]}" for k in sorted(defines))


@dataclass(frozen=True)
class SweepSpec:
    """What every instance shares: the scenario file, its text's SHA-256, the exploration limits, how
    privacy properties read the attacker's observation (``observe``), and whether ``check``'s
    reductions apply (``reduce``; the unreduced state counts are those of the model's closed forms)."""

    scenario: str
    sha256: str
    max_states: int | None = None
    max_seconds: float | None = None
    observe: str = "sequence"
    reduce: bool = True

    @classmethod
    def of(cls, scenario: str | Path, **options: Any) -> SweepSpec:
        """The spec of the scenario file ``scenario`` (a path or bundled name)."""
        from checker.app.load import resolve_scenario_path  # lazy: the loader imports flmodel

        path = resolve_scenario_path(scenario)
        return cls(str(path), hashlib.sha256(path.read_bytes()).hexdigest(), **options)

    def same_run(self, record: Mapping[str, Any]) -> bool:
        """Whether ``record`` was made by a sweep of the same scenario text and limits."""
        return (record.get("scenario_sha256") == self.sha256 and record.get("max_states") == self.max_states
                and record.get("max_seconds") == self.max_seconds and record.get("observe") == self.observe
                and record.get("reduce", True) == self.reduce)


def check_swept_names(spec: SweepSpec, names: Sequence[str]) -> None:
    """Refuse, before any instance runs, a scenario that does not read with its own constants (every
    instance would fail the same way) and a swept name that is not one of its integer constants."""
    from flmodel.scenario import load_scenario  # lazy: the scenario reader

    constants = dict(load_scenario(spec.scenario).constants)  # a ModelError is the command's exit 2
    unknown = [n for n in names if n not in constants]
    if unknown:
        raise InputError(f"{unknown[0]} is not an integer constant of {Path(spec.scenario).name}",
                         Position("-D"), "one of its constants: " + (", ".join(sorted(constants)) or "none"))


def _finite(x: float | None) -> float | str | None:
    return None if x is None else ("inf" if math.isinf(x) else x)


def _privacy_figures(report: Any) -> tuple[float | None, float | None]:
    """(largest ε*, largest δ at the stated ε) over the report's privacy properties."""
    from checker.privacy.ni_fl_dp import delta_for_epsilon  # lazy: with the privacy engine

    eps: list[float] = []
    deltas: list[float] = []
    for r in report.results:
        item = report.artefacts.get("privacy", {}).get(r.name)
        if r.kind != "privacy" or not item:
            continue
        d0, d1, _names, stated, res = item
        eps.append(math.inf if res.infinite else float(res.epsilon))
        deltas.append(float(delta_for_epsilon(d0, d1, stated)))
    return (max(eps) if eps else None), (max(deltas) if deltas else None)


def run_instance(spec: SweepSpec, defines: Mapping[str, int]) -> Record:
    """Check every property of ``spec.scenario`` with ``defines`` (in a worker); never raises: bad input
    and engine failures become the record's ``status`` and ``error``."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    record: Record = {**_identity(spec, defines), "pid": os.getpid()}
    try:
        from checker.app.check import check_file  # lazy: a worker imports the pipeline once
        from checker.app.reductions import Reductions  # lazy: with the pipeline
        from checker.mc.explore import Limits  # lazy: with the pipeline
        from flmodel.errors import ModelError  # lazy: with the pipeline

        limits = Limits(max_states=spec.max_states or 2_000_000, max_seconds=spec.max_seconds or 600.0)
        try:
            report = check_file(spec.scenario, limits=limits, defines=dict(defines), observe=spec.observe,
                                reductions=None if spec.reduce else Reductions.none())
        except (InputError, ModelError) as exc:
            record.update(status="error", error=str(exc).splitlines()[0])
        else:
            k = report.kripke
            eps, delta = _privacy_figures(report)
            record.update(
                status="ok" if k.complete else "incomplete", states=int(k.num_states),
                transitions=int(k.num_transitions), complete=bool(k.complete), limit_reason=k.limit_reason,
                epsilon=_finite(eps), delta=delta, exit_code=report.exit_code,
                properties=[{"name": r.name, "kind": r.kind, "verdict": str(r.verdict),
                             "value": _finite(r.value), "value_text": r.value_text} for r in report.results])
    except Exception as exc:  # an engine failure is recorded; the other instances go on
        first = str(exc).splitlines()[0] if str(exc) else ""
        record.update(status="failed", error=f"{type(exc).__name__}: {first}")
    record["seconds"] = round(time.perf_counter() - wall0, 4)
    record["cpu_seconds"] = round(time.process_time() - cpu0, 4)
    return record


def read_records(path: str | Path) -> list[Record]:
    """The records of a sweep's JSON-lines file (none when it does not exist); a last line cut short by a
    killed sweep is ignored, any other malformed line is an :class:`InputError` naming it."""
    p = Path(path)
    if not p.exists():
        return []
    lines = p.read_text(encoding="utf-8").splitlines()
    out: list[Record] = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            if i == len(lines):
                break  # the sweep was killed while writing this line
            raise InputError(f"not a sweep record: {exc.msg}", Position(str(p), i, exc.colno),
                             "one JSON object per line, written by flcheck sweep") from None
        if not isinstance(rec, dict) or "instance" not in rec or rec.get("status") not in STATUSES:
            raise InputError("not a sweep record", Position(str(p), i, 1),
                             "an object with 'instance' and 'status', written by flcheck sweep")
        for key in ("flcheck", "schema", "command"):  # the envelope of the line, not the record's
            rec.pop(key, None)
        out.append(rec)
    return out


def warm_up(sweep_pid: int | None = None) -> int:
    """Prepare a worker before its first instance: import the check pipeline (so that an instance's
    seconds are its own, not the worker's start-up) and, given the sweep's process id, make the worker
    die with the sweep (:func:`exit_with`: a sweep killed with SIGKILL leaves no worker running). Returns
    the worker's process id."""
    import checker.app.check  # noqa: F401  # lazy: this import is the point (a worker's start-up)

    if sweep_pid is not None:
        exit_with(sweep_pid)
    return os.getpid()


def exit_with(pid: int) -> None:
    """Exit this process as soon as the process ``pid`` has ended, whatever ended it (a watcher thread;
    Linux's ``pidfd_open`` refers to that very process, so a reused id cannot fool it; elsewhere its
    liveness is polled twice a second)."""
    import select  # lazy: only workers watch
    import threading  # lazy: only workers watch

    def watch() -> None:
        try:
            fd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            fd = None
        if fd is not None:
            select.select([fd], [], [])
        else:
            while True:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    pass
                time.sleep(0.5)
        os._exit(1)  # the sweep is gone: nobody will read this worker's result

    threading.Thread(target=watch, name=f"flcheck-exit-with-{pid}", daemon=True).start()


def repair_tail(path: Path) -> int:
    """Cut a last line that does not end in a newline (a sweep killed, or a disk filled, while writing
    it) off the results file, so that the next record never lands on it; returns the bytes removed (its
    instance runs again)."""
    try:
        with open(path, "rb+") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return 0
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return 0
            keep, step = 0, 1 << 16
            pos = size
            while pos > 0:  # the last newline, read backwards in blocks
                start = max(0, pos - step)
                fh.seek(start)
                block = fh.read(pos - start)
                nl = block.rfind(b"\n")
                if nl >= 0:
                    keep = start + nl + 1
                    break
                pos = start
            fh.truncate(keep)
            fh.flush()
            os.fsync(fh.fileno())
            return size - keep
    except FileNotFoundError:
        return 0
    except OSError as exc:
        from checker.errors import os_error  # lazy: with the writer

        raise os_error(path, exc, "repair") from None


def _append(path: Path, record: Record, envelope: Callable[[Record], Record]) -> None:
    """Append one record as a JSON line, flushed and fsync'ed (the file survives a killed sweep). A write
    that fails (a full disk) is undone to the last whole line and becomes an exit-2 error naming the
    file and the system's reason."""
    from checker.errors import os_error  # lazy: with the writer
    from checker.render import dumps  # lazy: the strict-JSON encoder

    data = (dumps(envelope(record), indent=None) + "\n").encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as exc:
        raise os_error(path, exc) from None
    try:
        size = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)  # no cut line is left behind
            raise os_error(path, exc) from None
    finally:
        os.close(fd)


@dataclass
class SweepSummary:
    """What a sweep did: every record of the grid (those run now and those found in the file), how
    many were skipped as already done, and the engine that ran the rest."""

    records: list[Record]
    ran: int
    skipped: int
    engine: str
    seconds: float
    statuses: dict[str, int] = field(default_factory=dict)
    #: Bytes of a cut last line removed from the results file before the run (its instance ran again).
    repaired: int = 0


Progress = Callable[[Record, int, int], None]


def _identity(spec: SweepSpec, defines: Mapping[str, int]) -> Record:
    """The keys that name an instance's run: its constants, the scenario and its text, the limits."""
    return {"instance": instance_key(defines), "defines": dict(sorted(defines.items())),
            "scenario": spec.scenario, "scenario_sha256": spec.sha256, "max_states": spec.max_states,
            "max_seconds": spec.max_seconds, "observe": spec.observe, "reduce": spec.reduce}


def _crashed(spec: SweepSpec, defines: Mapping[str, int], why: str) -> Record:
    return {**_identity(spec, defines), "status": "crashed", "error": why, "seconds": 0.0, "cpu_seconds": 0.0}


def _run_processes(spec: SweepSpec, todo: list[dict[str, int]], jobs: int) -> Iterator[Record]:
    """Run ``todo`` on a pool of ``jobs`` processes, yielding records as they finish; a pool broken by a
    dying worker is replaced and its unfinished instances resubmitted (at most :data:`MAX_ATTEMPTS`)."""
    import multiprocessing  # lazy: only the process engine needs it

    attempts = {instance_key(d): 0 for d in todo}
    pending = list(todo)
    while pending:
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=warm_up, initargs=(os.getpid(),))
        finished = False
        try:
            futures: dict[Future[Record], dict[str, int]] = {
                pool.submit(run_instance, spec, d): d for d in pending}
            pending = []
            while futures:
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for fut in done:
                    defines = futures.pop(fut)
                    try:
                        record = fut.result()
                    except BrokenProcessPool:
                        key = instance_key(defines)
                        attempts[key] += 1
                        if attempts[key] >= MAX_ATTEMPTS:
                            yield _crashed(spec, defines, f"worker process died {attempts[key]} times")
                        else:
                            pending.append(defines)
                    else:
                        yield record
            finished = True
        finally:
            if finished:
                pool.shutdown(wait=True)
            else:  # stopped early (an error, Ctrl-C): the running instances are abandoned, not awaited
                _stop_pool(pool)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Shut a pool down without waiting for its running instances: cancel the queued ones and kill the
    workers."""
    processes = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.kill()
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(timeout=5)
    with contextlib.suppress(Exception):  # the workers are gone: release the pool's queues and their
        pool.shutdown(wait=True)  # semaphores now (else the resource tracker warns of a leak at exit)


def _run_dask(spec: SweepSpec, todo: list[dict[str, int]], client: Any, own: bool) -> Iterator[Record]:
    """Run ``todo`` on a Dask client, yielding records as they finish (a task whose workers kept dying,
    Dask's ``KilledWorker``, is recorded ``crashed``). The workers of the sweep's ``own`` cluster die
    with it; those of a cluster it was given (``--scheduler``, a client) are someone else's."""
    from distributed import as_completed  # lazy: optional dependency

    client.run(warm_up, os.getpid() if own else None)
    futures = {client.submit(run_instance, spec, d, pure=False, key=f"flcheck-sweep-{instance_key(d)}-"
                             f"{os.getpid()}-{time.monotonic_ns()}"): d for d in todo}
    for fut in as_completed(list(futures)):
        defines = futures[fut]
        if fut.status == "finished":
            yield fut.result()
        else:
            exc = fut.exception()
            yield _crashed(spec, defines, f"{type(exc).__name__}: {exc}")


def run_sweep(spec: SweepSpec, values: Mapping[str, Sequence[int]], out: str | Path, *,
              engine: str = "auto", jobs: int = 2, scheduler: str | None = None, client: Any = None,
              progress: Progress | None = None,
              envelope: Callable[[Record], Record] = lambda r: r) -> SweepSummary:
    """Run every instance of ``grid(values)`` not yet in ``out`` and append each record to ``out`` as it
    finishes; returns the records of the whole grid, in grid order.

    ``engine``: ``dask`` (``client``, else a cluster at ``scheduler``, else a ``LocalCluster`` of ``jobs``
    workers), ``processes`` (a process pool of ``jobs``) or ``auto`` (Dask when installed or asked for
    by ``scheduler``/``client``). ``progress(record, finished, total)`` is called after each record is
    written; an exception it raises stops the sweep (finished records stay in the file, the running
    instances are abandoned). ``envelope`` wraps each record before it is written (the CLI's JSON
    envelope). The results file is locked for the run (:func:`checker.io.files.exclusive_lock`: another
    sweep on it is an :class:`InputError`), and a cut last line is removed first (:func:`repair_tail`)."""
    from checker.io.files import check_output_path, exclusive_lock  # lazy: with the writer

    out = check_output_path(out, [spec.scenario])  # not a directory, special or write-protected file
    with exclusive_lock(out, "flcheck sweep"):
        return _run_sweep_locked(spec, values, out, engine=engine, jobs=jobs, scheduler=scheduler,
                                 client=client, progress=progress, envelope=envelope)


def _run_sweep_locked(spec: SweepSpec, values: Mapping[str, Sequence[int]], out: Path, *, engine: str,
                      jobs: int, scheduler: str | None, client: Any, progress: Progress | None,
                      envelope: Callable[[Record], Record]) -> SweepSummary:
    """:func:`run_sweep` once the results file's lock is held."""
    t0 = time.perf_counter()
    repaired = repair_tail(out)
    instances = grid(values)
    done: dict[str, Record] = {}
    for rec in read_records(out):
        if spec.same_run(rec) and rec["status"] != "crashed":
            done[rec["instance"]] = rec
    todo = [d for d in instances if instance_key(d) not in done]
    if engine == "auto":
        engine = "dask" if (client is not None or scheduler is not None or dask_available()) else "processes"
    if engine == "dask" and not dask_available():
        raise InputError("the dask engine needs dask.distributed", Position("--engine"),
                         "pip install 'flcheck[sweep]', or --engine processes")
    results: dict[str, Record] = {}
    finished = len(instances) - len(todo)

    def collect(records: Iterator[Record]) -> None:
        nonlocal finished
        try:
            for rec in records:
                _append(out, rec, envelope)
                results[rec["instance"]] = rec
                finished += 1
                if progress is not None:
                    progress(rec, finished, len(instances))
        finally:
            close = getattr(records, "close", None)
            if close is not None:
                close()  # a generator stopped early stops its engine (no worker left running)

    if todo:
        if engine == "dask":
            own = None
            if client is None:
                from distributed import Client, LocalCluster  # lazy: optional dependency

                if scheduler is not None:
                    own = client = Client(scheduler, timeout="20s")
                else:
                    cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                           **LOCAL_CLUSTER_NETWORK)
                    own = client = Client(cluster)
            try:
                collect(_run_dask(spec, todo, client, own is not None and scheduler is None))
            finally:
                if own is not None:
                    cluster_of = getattr(own, "cluster", None)
                    own.close()
                    if scheduler is None and cluster_of is not None:
                        cluster_of.close()
        else:
            collect(_run_processes(spec, todo, jobs))
    records = [done.get(instance_key(d)) or results[instance_key(d)] for d in instances]
    statuses: dict[str, int] = {}
    for rec in records:
        statuses[rec["status"]] = statuses.get(rec["status"], 0) + 1
    return SweepSummary(records, len(todo), len(instances) - len(todo), engine, time.perf_counter() - t0,
                        statuses, repaired)


# ------------------------------------------------------------------------------------------ outputs
#: The figures plotted against each swept constant: (record key, axis label, log scale).
PLOTTED = (("epsilon", "ε* (largest)", False),
           ("delta", "δ at the stated ε", False),
           ("states", "states", True),
           ("seconds", "seconds (wall)", True))


def _number(x: Any) -> float | None:
    if x == "inf":
        return math.inf
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def plot_png(records: Sequence[Record], names: Sequence[str], title: str) -> bytes:
    """One column per swept constant, one row per figure of :data:`PLOTTED` (ε*, δ, states, seconds),
    the figure against the constant with one line per assignment of the other constants (at most 8
    lines labelled). An infinite ε* is drawn as a ``▲`` labelled ``∞`` above the finite values;
    instances without the figure (failed, no privacy property) are left out and counted in the title."""
    from matplotlib.ticker import MaxNLocator  # lazy: matplotlib, only for the plots

    from checker.app.report import figure_png  # lazy: matplotlib, only for the plots

    ok = [r for r in records if r.get("status") in ("ok", "incomplete")]

    def draw(fig: Any) -> None:
        cols = max(1, len(names))
        axes = fig.subplots(len(PLOTTED), cols, squeeze=False)
        for j, name in enumerate(names or [""]):
            others = [n for n in names if n != name]
            groups: dict[str, list[Record]] = {}
            for r in ok:
                groups.setdefault(instance_key({n: r["defines"][n] for n in others}), []).append(r)
            for i, (key, label, log) in enumerate(PLOTTED):
                ax = axes[i][j]
                values = [v for r in ok if (v := _number(r.get(key))) is not None]
                finite_top = max((v for v in values if math.isfinite(v)), default=1.0)
                inf_y = finite_top * 1.15 if finite_top > 0 else 1.0
                for g, (gkey, rs) in enumerate(sorted(groups.items())):
                    pts = sorted((r["defines"].get(name, 0), y) for r in rs
                                 if (y := _number(r.get(key))) is not None)
                    xs = [x for x, y in pts if math.isfinite(y)]
                    ys = [y for x, y in pts if math.isfinite(y)]
                    line = ax.plot(xs, ys, marker="o", ms=3, label=(gkey or "all") if g < 8 else None)
                    colour = line[0].get_color()
                    for x, y in pts:
                        if math.isinf(y):
                            ax.plot([x], [inf_y], marker="^", color=colour)
                            ax.annotate("∞", (x, inf_y), textcoords="offset points", xytext=(3, 3),
                                        fontsize=8)
                if log and any((_number(r.get(key)) or 0) > 0 for r in ok):
                    ax.set_yscale("log")
                ax.set_xlabel(name or "instance")
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
                ax.set_ylabel(label, fontsize=8)
                if i == 0 and others and len(groups) > 1:
                    ax.legend(fontsize=6, title=", ".join(others), title_fontsize=6)
        left_out = len(records) - len(ok)
        fig.suptitle(title + (f" ({left_out} failed instance(s) not drawn)" if left_out else ""), fontsize=10)
        fig.tight_layout()

    return figure_png(draw, (4.2 * max(1, len(names)), 10.0))


def table_rows(records: Sequence[Record], names: Sequence[str]) -> list[tuple[str, ...]]:
    """The rows of the final table: the constants, status, states, ε*, δ, verdict counts, seconds (header
    first); the figures in the one number format of :func:`checker.render.value_text`."""
    from checker.render import value_text  # lazy: the one value formatter

    header = (*names, "status", "states", "ε*", "δ", "holds/violated/unknown", "seconds")
    rows: list[tuple[str, ...]] = [header]
    for r in records:
        props = r.get("properties") or []
        counts = [sum(1 for p in props if p["verdict"].startswith(w))
                  for w in ("holds", "violated", "unknown")]
        eps = r.get("epsilon")
        rows.append((*(str(r["defines"].get(n, "")) for n in names), r["status"],
                     "" if r.get("states") is None else value_text(r["states"]),
                     "" if eps is None else ("∞" if eps == "inf" else f"{eps:.4g}"),
                     "" if r.get("delta") is None else f"{r['delta']:.4g}",
                     "/".join(map(str, counts)) if props else (r.get("error") or "")[:60],
                     f"{r.get('seconds', 0.0):.2f}"))
    return rows
