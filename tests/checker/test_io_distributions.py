"""Explicit models whose probabilities do not form distributions are rejected, naming the state."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.errors import InputError
from checker.io.prism import read_explicit

LAB = "#DECLARATION\ninit goal\n#END\n0 init\n2 goal\n"


def _write(tmp_path: Path, tra: str) -> Path:
    (tmp_path / "m.tra").write_text(tra)
    (tmp_path / "m.lab").write_text(LAB)
    return tmp_path / "m"


@pytest.mark.parametrize(
    ("tra", "message"),
    [
        ("dtmc\n0 1 0.5\n0 2 0.4\n1 1 1\n2 2 1\n", "state 0: .* transitions sum to 0.9"),
        ("dtmc\n0 1 1\n1 1 1\n1 2 1/2\n2 2 1\n", "state 1: .* sum to 3/2"),
        ("dtmc\n0 1 1.5\n0 2 -0.5\n1 1 1\n2 2 1\n", "state 0: negative probability -0.5"),
        ("mdp\n0 0 1 0.5\n0 0 2 0.5\n0 1 2 0.7\n1 0 1 1\n2 0 2 1\n", "state 0: .* one of its choices"),
    ],
)
def test_malformed_distributions_name_the_state(tmp_path: Path, tra: str, message: str) -> None:
    prefix = _write(tmp_path, tra)
    with pytest.raises(InputError, match=message) as info:
        read_explicit(prefix)
    assert "m.tra" in str(info.value)


def test_well_formed_distributions_and_graph_only_loading(tmp_path: Path) -> None:
    prefix = _write(tmp_path, "dtmc\n0 1 0.1\n0 2 0.2\n0 0 0.7\n1 1 1\n2 2 1\n")
    k = read_explicit(prefix)
    assert k.num_states == 3 and k.num_transitions == 5
    bad = _write(tmp_path, "dtmc\n0 1 0.5\n0 2 0.4\n1 1 1\n2 2 1\n")
    # CTL needs only the graph: skipping the probability column skips its check too
    assert read_explicit(bad, probabilities=False).num_transitions == 4
