"""Scenario input errors reported once and positioned: an undecodable byte gives file:line:col (not a
byte offset), a missing ``locations`` statement gives one message (not one per use)."""

from __future__ import annotations

from pathlib import Path

import flcheck_spec
import pytest

from flmodel.errors import ModelError
from flmodel.scenario import load_scenario, parse_scenario

BUNDLED = flcheck_spec.bundled_scenarios()


def _errors(path: Path) -> list[tuple[int | None, int | None, str]]:
    with pytest.raises(ModelError) as info:
        load_scenario(path)
    return [(d.line, d.column, d.message) for d in info.value.diagnostics]


@pytest.mark.parametrize("text, line, column", [
    (b"scenario \"x\"\nlocations g\xff\n", 2, 12),
    (b"\xff", 1, 1),
    (b"\xef\xbb\xbfscenario \"\xc3\xa9\xc3\xa9\xe9\"\n", 1, 13),  # BOM skipped, two 2-byte characters
    (b"a\r\nb\r\n\xc3", 3, 1),                                      # a truncated multi-byte character
])
def test_undecodable_byte_is_positioned(tmp_path: Path, text: bytes, line: int, column: int) -> None:
    path = tmp_path / "s.fl"
    path.write_bytes(text)
    ((got_line, got_column, message),) = _errors(path)
    assert (got_line, got_column) == (line, column)
    assert message.startswith("byte 0x") and "not UTF-8" in message


def test_bundled_scenario_with_a_bad_byte(tmp_path: Path) -> None:
    """A byte of the bundled Moniteo file replaced by 0xe9: the position is where it was."""
    text = BUNDLED["moniteo"].read_bytes()
    at = text.index(b"server ground")
    path = tmp_path / "m.fl"
    path.write_bytes(text[:at + 7] + b"\xe9" + text[at + 8:])
    line = text[:at].count(b"\n") + 1
    assert _errors(path) == [(line, 8, "byte 0xe9 is not UTF-8 text; expected a UTF-8 text file")]


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_locations_line_deleted_is_one_error(name: str) -> None:
    text = BUNDLED[name].read_text(encoding="utf-8")
    lines = text.split("\n")
    kept = [ln for ln in lines if not ln.startswith("locations ")]
    assert len(kept) == len(lines) - 1
    with pytest.raises(ModelError) as info:
        parse_scenario("\n".join(kept), "x.fl")
    diags = [d for d in info.value.diagnostics if "location" in d.message]
    assert len(diags) == 1, [d.message for d in info.value.diagnostics]
    (d,) = diags
    assert "no locations statement" in d.message and "expected 'locations " in d.message
    assert d.line is not None and d.column is not None
    # the suggested statement declares every location the file uses: put back, the file parses
    suggested = d.message.split("expected '", 1)[1].split("'", 1)[0]
    if "…" in suggested:  # more than ten locations: the message shows the first ten
        assert len(suggested.split(",")) == 11
        return
    header = next(i for i, ln in enumerate(kept) if ln.startswith("scenario "))
    parse_scenario("\n".join([*kept[:header + 1], suggested, *kept[header + 1:]]), "x.fl")


def test_unknown_location_still_named_when_some_are_declared() -> None:
    text = BUNDLED["moniteo"].read_text(encoding="utf-8")
    text = text.replace("clients sat1 at orbit1", "clients sat1 at orbit9")
    with pytest.raises(ModelError) as info:
        parse_scenario(text, "m.fl")
    (d,) = info.value.diagnostics
    assert "unknown location 'orbit9'" in d.message
