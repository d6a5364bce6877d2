"""Every bundled scenario's verdicts and figures are those of the committed snapshots
(:mod:`tests.snapshots.snapshot`): a change that changes one is seen here and explained where it is
made (``python -m tests.snapshots.snapshot NAME`` writes the snapshot anew)."""

from __future__ import annotations

import json

import pytest

from tests.snapshots.snapshot import RUNS, path_of, run


@pytest.mark.parametrize("name,argv", RUNS, ids=[n for n, _ in RUNS])
def test_snapshot(name: str, argv: tuple[str, ...]) -> None:
    expected = json.loads(path_of(name).read_text())
    assert run(argv) == expected
