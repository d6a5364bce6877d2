"""Print, at the end of a run, how many fuzz inputs of each kind ended in each outcome class."""

from __future__ import annotations

import pytest

from tests.fuzz.contract import STATS, summary


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if STATS:
        terminalreporter.write_sep("-", "fuzz outcomes per input kind")
        terminalreporter.write_line(summary())
