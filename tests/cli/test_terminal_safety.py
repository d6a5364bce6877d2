"""Text from the input never drives the terminal or the renderer: a scenario title, label names, file names
and formulas with escape sequences are printed with their control characters shown as escapes (plain and
coloured output, stdout and stderr), JSON stays strict JSON with them as ``\\u`` escapes, and the
Markdown and HTML reports show a ``<script>`` title as text (rendered by markdown-it, a CommonMark
implementation, as the reference)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from flcheck_spec import resource
from markdown_it import MarkdownIt

from checker.cli.main import main
from checker.terminal import CLEAR_LINE, TerminalSafeStream, TerminalText, terminal_text

#: What an attacker would put in a title: set the window title (OSC 0), clear the screen, hide the rest
#: (SGR 8), a bell, an 8-bit CSI, a right-to-left override, and HTML.
EVIL = "Evil\x1b]0;pwned\x07\x1b[2J\x1b[8mhidden\x9b31m\u202eright <script>alert(1)</script> *x* `y` | z"
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(argv: list[str], stdout: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = stdout or io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def evil_scenario(tmp_path: Path) -> Path:
    text = resource("scenarios", "seed_model.fl").read_text(encoding="utf-8")
    title = re.search(r'scenario\s+"([^"]*)"', text)
    assert title is not None
    path = tmp_path / "evil.fl"
    path.write_text(text.replace(title.group(1), EVIL), encoding="utf-8")
    return path


def test_title_in_check_output_is_escaped(evil_scenario: Path) -> None:
    code, out, err = run(["check", str(evil_scenario), "--property", "repartition_twice"])
    assert code == 0, err
    assert not CONTROLS.search(out) and not CONTROLS.search(err)
    assert "Evil\\x1b]0;pwned\\x07\\x1b[2J\\x1b[8mhidden\\x9b31m\\u202eright" in out


def test_title_in_coloured_output_is_escaped(evil_scenario: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal the table is coloured: flcheck's own colour codes pass, the title's do not."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    code, out, _ = run(["check", str(evil_scenario), "--property", "repartition_twice"], Tty())
    assert code == 0
    assert "\x1b[32m" in out  # the verdict's colour
    own = re.sub(r"\x1b\[[0-9;]*m", "", out)  # without flcheck's colour codes nothing is left
    assert not CONTROLS.search(own) and "\\x1b]0;pwned" in own


def test_label_names_and_file_names_are_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "a\x1b[31mb"
    folder.mkdir()
    (folder / "m.tra").write_text("dtmc\n0 1 1\n1 1 1\n")
    # a label name with an 8-bit CSI and a right-to-left override (bytes above 32: one token)
    evil = "x\x9b8m\u202ey"
    (folder / "m.lab").write_text(f"#DECLARATION\ninit goal {evil}\n#END\n0 init\n1 goal {evil}\n",
                                  encoding="utf-8")
    code, out, err = run(["ctl", str(folder / "m.tra"), str(folder / "m.lab"), "EF goal"])
    assert code == 0, err
    assert not CONTROLS.search(out + err) and "x\\x9b8m\\u202ey=true" in out
    code, out, err = run(["explore", str(folder / "m.tra"), str(folder / "m.lab")])
    assert code == 0 and not CONTROLS.search(out + err) and "a\\x1b[31mb" in out


def test_error_messages_are_escaped(tmp_path: Path) -> None:
    code, _, err = run(["ctl", "moniteo", "AG \x1b[2J\x1b[8m"])
    assert code == 2 and not CONTROLS.search(err) and "\\x1b" in err
    code, _, err = run(["explore", str(tmp_path / "missing\x1b]0;t\x07.json")])
    assert code == 2 and not CONTROLS.search(err)


def test_json_stays_strict_json(evil_scenario: Path) -> None:
    code, out, _ = run(["check", str(evil_scenario), "--property", "repartition_twice", "--json"])
    assert code == 0 and not CONTROLS.search(out)
    assert "\\u001b]0;pwned\\u0007" in out and "\\u009b" in out and "\\u202e" in out
    assert json.loads(out)["properties"][0]["verdict"] == "holds"


def test_markdown_report_renders_the_title_as_text(evil_scenario: Path, tmp_path: Path) -> None:
    md = tmp_path / "r.md"
    assert run(["check", str(evil_scenario), "--property", "repartition_twice", "--report", str(md)])[0] == 0
    text = md.read_text(encoding="utf-8")
    assert not CONTROLS.search(text)
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script" not in rendered and "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert "<em>" not in rendered.split("</h1>")[0]  # *x* is shown, not emphasised
    heading = re.search(r"<h1>(.*)</h1>", rendered)
    assert heading is not None and "`y` | z" in heading.group(1)
    rows = [line for line in text.splitlines() if line.startswith("| repartition_twice")]
    assert len(rows) == 1 and rows[0].count(" | ") == 5  # the table keeps its six columns


def test_html_report_escapes_the_title(evil_scenario: Path, tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    argv = ["check", str(evil_scenario), "--property", "repartition_twice", "--report", str(page)]
    assert run(argv)[0] == 0
    html = page.read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;" in html and not CONTROLS.search(html)


def test_markdown_code_spans_and_blocks_hold_any_backticks() -> None:
    from checker.app.report import md_block, md_code

    md = MarkdownIt("commonmark")
    for text in ["a`b", "``x``", "`", "<img src=x onerror=alert(1)>", "x ` y"]:
        rendered = md.render(md_code(text))
        assert "<img" not in rendered and rendered.count("<code>") == 1, (text, rendered)
        block = md.render("\n".join(md_block([text, "```", "````"])))
        assert block.count("<pre>") == 1 and "<img" not in block, (text, block)


def test_the_stream_lets_only_flcheck_sequences_through() -> None:
    out = io.StringIO()
    stream = TerminalSafeStream(out)
    stream.write(CLEAR_LINE + "12 states\x1b[2J")  # the progress line: its own prefix passes
    stream.write("title\x1b[8m")
    stream.write(TerminalText("\x1b[32mholds\x1b[0m"))  # built by flcheck from escaped cells
    assert out.getvalue() == "\r\x1b[K12 states\\x1b[2Jtitle\\x1b[8m\x1b[32mholds\x1b[0m"
    assert terminal_text("tab\tand\nnewline") == "tab\tand\nnewline"
    assert isinstance(str(TerminalText("x")), TerminalText)  # print() keeps it
