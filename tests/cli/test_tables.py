"""Readable output: plain tables when not on a terminal or under NO_COLOR, coloured (rich) tables on a
terminal, ``--wide``, every ``--report`` written with formulas and counterexample states, one number
format, ``--help`` without reST markup or internal module names, and δ(ε) plots scaled to their values."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

from checker.app.check import check_file
from checker.app.report import render_table
from checker.cli.main import COMMAND_MODULES, main
from checker.cli.options import plain_help
from checker.crossval.plots import delta_axis
from checker.tables import table_text, use_colour

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def seed_report():  # type: ignore[no-untyped-def]
    return check_file("seed_model")


def test_colour_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert use_colour(Tty()) and not use_colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_colour(Tty())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not use_colour(Tty())


def test_coloured_table_has_the_plain_cells(seed_report) -> None:  # type: ignore[no-untyped-def]
    plain = render_table(seed_report, evidence_width=None)
    coloured = render_table(seed_report, evidence_width=None, colour=True)
    assert not ANSI.search(plain) and ANSI.search(coloured)
    assert "\x1b[1;31mviolated" in coloured and "\x1b[32mholds" in coloured
    words = lambda text: {w for w in ANSI.sub("", text).split() if set(w) != {"-"}}  # noqa: E731
    assert words(plain) == words(coloured)  # rich wraps long cells, it never cuts them


def test_wide_never_cuts_the_evidence(seed_report) -> None:  # type: ignore[no-untyped-def]
    longest = max(seed_report.results, key=lambda r: len(r.evidence))
    assert len(longest.evidence) > 90
    assert longest.evidence not in render_table(seed_report)
    assert longest.evidence in render_table(seed_report, evidence_width=None)
    code, out, _ = run(["check", "seed_model", "--wide"])
    assert code == 1 and longest.evidence in out and "…" not in out


def test_table_text_plain() -> None:
    assert table_text([("a", "verdict"), ("b", "holds")], rule=True).splitlines()[1] == "-  -------"


def test_every_report_is_written_with_formulas_and_counterexamples(tmp_path: Path) -> None:
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    code, out, err = run(["check", "seed_model", "--report", str(html), "--report", str(md)])
    assert code == 1, err
    assert html.exists() and md.exists() and out.count("report written:") == 2
    text = md.read_text(encoding="utf-8")
    assert "| property | kind | formula |" in text
    assert '`AG (ready == {"c1"} -> AX (last == get_grad -> ready != {"c1"}))`' in text
    section = text.split("## Counterexamples", 1)[1].split("## Pictures", 1)[0]
    assert "### one_report_per_round" in section and "--get_grad(c1@loc_c1)" in section
    assert "satisfies EX" in section  # the nested AX step is shown
    page = html.read_text(encoding="utf-8")
    assert "<h2>Counterexamples</h2>" in page and "<th>formula</th>" in page


def test_one_number_format() -> None:
    code, out, _ = run(["explore", "moniteo"])
    assert code == 0 and re.search(r": \d+ states, \d+ transitions, \d+ deadlocks", out), out


@pytest.mark.parametrize("command", [[], *[[m.rsplit(".", 1)[1].replace("_", "-")] for m in COMMAND_MODULES]])
def test_help_is_plain_text(command: list[str]) -> None:
    code, out, _ = run([*command, "--help"])
    assert code == 0 and out
    assert "`" not in out, [line for line in out.splitlines() if "`" in line]
    assert not re.search(r"\b(checker|flmodel)\.[a-z_]+\.", out), out


def test_plain_help() -> None:
    assert plain_help("a (:data:`checker.app.load.EXAMPLES`). b") == "a. b"
    assert plain_help("``--eps`` and :mod:`checker.mc`") == "--eps and mc"


def test_delta_axis_follows_the_values() -> None:
    scale, (lo, hi) = delta_axis([np.array([0.88, 0.9, 0.95])])
    assert scale == "linear" and lo < 0.88 and 0.95 < hi <= 1.05  # not flat on a 1e-12…1 log axis
    scale, (lo, hi) = delta_axis([np.array([0.0, 1e-8, 0.3])])
    assert scale == "log" and lo <= 1e-8 / 3 and 0.3 < hi <= 1.5
    assert delta_axis([np.zeros(3)]) == ("linear", (0.0, 1.0))


def test_plot_marks_the_requested_points(tmp_path: Path) -> None:
    from checker.crossval.plots import plot_curves

    grid = np.linspace(0, 3, 31)
    fig = plot_curves(grid, {"c": 0.9 - 0.01 * grid}, "t", marks=[(1.0, 0.89), (float("inf"), 0.8)])
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert "ε=1, δ=0.89" in texts and "ε=∞, δ=0.8" in texts
    assert ax.get_xlabel() == "ε" and ax.get_ylabel() == "δ(ε)" and ax.get_yscale() == "linear"
    assert ax.get_ylim()[0] > 0.5
