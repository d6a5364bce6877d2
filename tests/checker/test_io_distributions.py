"""Explicit models whose probabilities do not form distributions are rejected, naming the file, the
line and the state, whether the probabilities are kept (explore, markov) or not (CTL)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checker.cli import main
from checker.errors import InputError
from checker.io.prism import read_explicit

LAB = "#DECLARATION\ninit goal\n#END\n0 init\n2 goal\n"

#: (transitions file, the line it must name, a pattern of the message)
MALFORMED = [
    ("dtmc\n0 1 0.5\n0 2 0.4\n1 1 1\n2 2 1\n", 2, "state 0: .* transitions sum to 0.9"),
    ("dtmc\n0 1 1\n1 1 1\n1 2 1/2\n2 2 1\n", 3, "state 1: .* sum to 3/2"),
    ("dtmc\n0 1 1.5\n0 2 -0.5\n1 1 1\n2 2 1\n", 3, "state 0: negative probability -0.5"),
    ("mdp\n0 0 1 0.5\n0 0 2 0.5\n0 1 2 0.7\n1 0 1 1\n2 0 2 1\n", 4, "state 0: .* one of its choices"),
    ("dtmc\n0 1 1\n1 2 nan\n2 2 1\n", 3, "probability nan is not a finite number"),
    ("dtmc\n0 1 inf\n1 1 1\n2 2 1\n", 2, "probability inf is not a finite number"),
    ("dtmc\n0 1 1\n1 1 1\n2 2 1/0\n", 4, "probability '1/0' is not a number"),
    ("dtmc\n0 1 1\n1 1 one\n2 2 1\n", 3, "probability 'one' is not a number"),
    ("dtmc\n2 2 1\n1 1 1\n0 1 0.25\n0 2 0.25\n", 4, "state 0: .* sum to 0.5"),  # unsorted rows
]


def _write(tmp_path: Path, tra: str) -> Path:
    (tmp_path / "m.tra").write_text(tra)
    (tmp_path / "m.lab").write_text(LAB)
    return tmp_path / "m"


@pytest.mark.parametrize("probabilities", [True, False])
@pytest.mark.parametrize(("tra", "line", "message"), MALFORMED)
def test_malformed_distributions_name_file_line_and_state(tmp_path: Path, tra: str, line: int, message: str,
                                                          probabilities: bool) -> None:
    prefix = _write(tmp_path, tra)
    with pytest.raises(InputError, match=message) as info:
        read_explicit(prefix, probabilities=probabilities)
    assert f"m.tra:{line}:" in str(info.value)


@pytest.mark.parametrize("command", ["ctl", "explore"])
@pytest.mark.parametrize(("tra", "line", "message"), MALFORMED)
def test_ctl_and_explore_exit_2_on_malformed_distributions(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           command: str, tra: str, line: int,
                                                           message: str) -> None:
    prefix = _write(tmp_path, tra)
    args = [command, str(prefix) + ".tra", "EF goal"] if command == "ctl" else [command, str(prefix) + ".tra"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"m.tra:{line}:" in err and re.search(message, err)


def test_well_formed_distributions_and_graph_only_loading(tmp_path: Path) -> None:
    prefix = _write(tmp_path, "dtmc\n0 1 0.1\n0 2 0.2\n0 0 0.7\n1 1 1\n2 2 1\n")
    k = read_explicit(prefix)
    assert k.num_states == 3 and k.num_transitions == 5 and k.edge_prob is not None
    graph_only = read_explicit(prefix, probabilities=False)
    assert graph_only.num_transitions == 5
    assert graph_only.edge_prob is None and graph_only.edge_prob_exact is None


@pytest.mark.parametrize(
    ("tra", "where", "message"),
    [
        ("3 5\n0 1 1\n1 2 1\n2 2 1\n", "m.tra:1:", "header announces 5 transitions, the file has 3"),
        ("3 2 4\n0 0 1 1\n1 0 2 1\n2 1 2 1\n", "m.tra:1:", "announces 4 transitions, the file has 3"),
        ("2 3\n0 1 1\n1 1 1\n1 0 1\n", "m.lab:5:", "state id 2 out of range"),  # the .lab labels state 2
    ],
)
def test_prism_headers_are_checked(tmp_path: Path, tra: str, where: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        read_explicit(_write(tmp_path, tra), probabilities=False)
    assert where in str(info.value)
