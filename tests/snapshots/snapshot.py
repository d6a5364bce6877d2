"""Snapshots of every bundled scenario's results (``check``, ``privacy`` and ``attack-tree`` with
``--json``), committed beside this module, so that a change of the code that changes a verdict or figure
is seen and explained: ``python -m tests.snapshots.snapshot`` writes them anew (review the diff before
committing it). Times and the machine's figures are left out."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
#: command lines (after ``flcheck``) and the file each one's JSON is kept in
RUNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    *((f"check_{s}", ("check", s, "--json")) for s in (
        "moniteo", "moniteo_deadline", "moniteo_link_loss", "moniteo_published", "moniteo_rounds",
        "moniteo_swarm8", "seed_model", "walker12_relay", "walker_family")),
    *((f"privacy_{s}", ("privacy", s, "--json")) for s in (
        "moniteo", "moniteo_deadline", "moniteo_link_loss", "moniteo_swarm8")),
    ("attack_tree_moniteo", ("attack-tree", "moniteo", "--goal", "ready_sat3", "--json")),
    ("attack_tree_link_loss", ("attack-tree", "moniteo_link_loss", "--goal", "seen_sat3", "--defence",
                               "revoke_sat3", "--budget", "5", "--json")),
)
#: keys whose values are times, rates, sizes in memory or the limits of the machine: never compared
VOLATILE = frozenset({"seconds", "explore_seconds", "check_seconds", "load_seconds", "states_per_second",
                      "cpu_seconds", "peak_memory_mb", "memory_mb", "max_rss_mb", "time", "elapsed",
                      "flcheck", "limits"})


def normalised(data: Any) -> Any:
    """``data`` without the :data:`VOLATILE` keys, at any depth, and with the bundled scenarios' folder
    (the source tree's or an installed distribution's) left out of the texts."""
    if isinstance(data, dict):
        return {k: normalised(v) for k, v in data.items() if k not in VOLATILE}
    if isinstance(data, list):
        return [normalised(x) for x in data]
    if isinstance(data, str):
        return data.replace(str(_SCENARIOS) + "/", "")
    return data


def _bundled() -> Path:
    import flcheck_spec

    return Path(str(flcheck_spec.resource("scenarios", "moniteo.fl"))).parent


_SCENARIOS = _bundled()


def run(argv: tuple[str, ...]) -> Any:
    """The normalised JSON ``flcheck ARGV`` prints."""
    from checker.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(list(argv))
    return normalised(json.loads(out.getvalue()))


def path_of(name: str) -> Path:
    return HERE / "data" / f"{name}.json"


def write_all(names: set[str] | None = None) -> None:
    (HERE / "data").mkdir(exist_ok=True)
    for name, argv in RUNS:
        if names is None or name in names:
            path_of(name).write_text(json.dumps(run(argv), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    write_all(set(sys.argv[1:]) or None)
