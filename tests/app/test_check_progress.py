"""`flcheck check` reports progress: exploration progress and one status message per property."""

from __future__ import annotations

import flcheck_spec
import pytest

from checker.app.check import check_file
from checker.mc.explore import Progress


@pytest.mark.slow
def test_status_and_progress_callbacks_cover_every_property() -> None:
    path = flcheck_spec.bundled_scenarios()["moniteo_link_loss"]
    messages: list[str] = []
    seen: list[Progress] = []
    report = check_file(path, progress=seen.append, status=messages.append)
    n = len(report.results)
    assert n >= 2 and len(messages) == n
    assert messages[0].endswith(f"1 of {n})") and messages[-1].endswith(f"{n} of {n})")
    assert all(r.name in m for r, m in zip(report.results, messages, strict=True))
    assert seen and seen[-1].states == report.kripke.num_states
