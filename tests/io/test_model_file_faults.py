"""Model files that used to get a verdict, or a crash, or gigabytes: an empty set of initial states (JSON
and ``.lab``), a transition given twice, a wrong MDP choice count, a sparse huge state id, a state count
above the memory limit, digits of other scripts. Each is exit 2 with one line naming file:line, for every
command that reads the file; Storm is the reference where it reads the file too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from checker.cli.main import main
from checker.errors import InputError
from checker.io.kripke_json import read_json
from checker.io.prism import first_repeat, read_explicit
from checker.io.prism_files import BYTES_PER_STATE, MAX_UNNAMED_STATES, declared_states_problem

LAB = b"#DECLARATION\ninit goal\n#END\n0 init\n1 goal\n"


def _files(tmp_path: Path, tra: bytes, lab: bytes | None = LAB, name: str = "m") -> Path:
    (tmp_path / f"{name}.tra").write_bytes(tra)
    if lab is not None:
        (tmp_path / f"{name}.lab").write_bytes(lab)
    return tmp_path / f"{name}.tra"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.err


#: Every command that reads a model file, with the part of its command line after the file.
READERS = [["ctl", "{m}", "AG false"], ["ctl", "{m}", "P=? [F goal]"], ["explore", "{m}"],
           ["attack-tree", "{m}", "--goal", "goal"]]


def _argv(reader: list[str], model: Path, *more: Path) -> list[str]:
    out: list[str] = []
    for word in reader:
        out += [str(model), *map(str, more)] if word == "{m}" else [word]
    return out


def _one_line(err: str, needle: str) -> None:
    assert needle in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


# ------------------------------------------------------------------------------- empty initial sets
@pytest.mark.parametrize("reader", READERS, ids=lambda r: " ".join(r))
def test_json_without_initial_states_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   reader: list[str]) -> None:
    path = tmp_path / "k.json"
    path.write_text('{"states": 2,\n "initial": [],\n "transitions": [[0, 1], [1, 1]],\n'
                    ' "labels": {"goal": [1]}}\n')
    code, err = _run(capsys, *_argv(reader, path))
    assert code == 2
    _one_line(err, f"{path}:2: initial: no initial state")


@pytest.mark.parametrize("reader", READERS, ids=lambda r: " ".join(r))
@pytest.mark.parametrize("lab", [b"#DECLARATION\ninit goal\n#END\n1 goal\n", b'0="init" 1="goal"\n1: 1\n'])
def test_lab_declaring_init_without_a_state_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         reader: list[str], lab: bytes) -> None:
    tra = _files(tmp_path, b"dtmc\n0 1 1\n1 1 1\n", lab)
    code, err = _run(capsys, *_argv(reader, tra, tmp_path / "m.lab"))
    assert code == 2
    line = 2 if lab.startswith(b"#") else 1
    _one_line(err, f"m.lab:{line}: the label 'init' is declared but labels no state")


def test_without_init_label_state_0_is_initial(tmp_path: Path) -> None:
    k = read_explicit(_files(tmp_path, b"dtmc\n0 1 1\n1 1 1\n", b"#DECLARATION\ngoal\n#END\n1 goal\n"))
    assert k.initial.tolist() == [0]


def test_storm_reads_empty_init_as_no_initial_state(tmp_path: Path) -> None:
    """The reference: Storm builds the model with no initial state at all (so every P=? is vacuous);
    flcheck refuses it instead of deciding anything on it."""
    stormpy = pytest.importorskip("stormpy")
    tra = _files(tmp_path, b"dtmc\n0 1 1\n1 1 1\n", b"#DECLARATION\ninit goal\n#END\n1 goal\n")
    model = stormpy.build_model_from_explicit(str(tra), str(tmp_path / "m.lab"))
    assert list(model.initial_states) == []
    with pytest.raises(InputError, match="'init' is declared but labels no state"):
        read_explicit(tra)


# ---------------------------------------------------------------------------- duplicate transitions
@pytest.mark.parametrize(("tra", "line", "first"), [
    (b"dtmc\n0 1 0.5\n0 1 0.5\n1 1 1\n", 3, 2),
    (b"dtmc\n1 1 1\n0 1 1\n0 0 0\n0 1 0\n", 5, 3),            # unsorted, one copy of probability 0
    (b"mdp\n0 0 1 1\n0 0 1 1\n0 1 1 1\n1 0 1 1\n", 3, 2),
    (b"mdp\n0 0 1 1\n0 1 1 1\n1 0 1 1\n0 0 1 1\n", 5, 2),
    (b"2 3\n0 1 1\n1 1 1\n0 1 1\n", 4, 2),
])
def test_duplicate_transitions_are_refused_like_storm(tmp_path: Path, tra: bytes, line: int,
                                                      first: int) -> None:
    path = _files(tmp_path, tra)
    with pytest.raises(InputError) as info:
        read_explicit(path)
    message = str(info.value)
    assert f"m.tra:{line}:" in message and "given twice" in message and f"first on line {first}" in message
    stormpy = pytest.importorskip("stormpy")
    if not tra[:1].isdigit():  # Storm reads its own flavour
        with pytest.raises(RuntimeError):  # "given twice" (or, unsorted, its order check first)
            stormpy.build_model_from_explicit(str(path), str(tmp_path / "m.lab"))


def test_first_repeat_against_a_set() -> None:
    """The vectorised search against the plain one on random rows (sorted and not)."""
    import numpy as np

    rng = np.random.default_rng(7)
    for trial in range(300):
        m = int(rng.integers(0, 12))
        src, dst = rng.integers(0, 4, m), rng.integers(0, 4, m)
        choice = rng.integers(0, 2, m) if trial % 2 else None
        if trial % 3 == 0:
            order = np.lexsort((dst, src) if choice is None else (dst, choice, src))
            src, dst = src[order], dst[order]
            choice = None if choice is None else choice[order]
        seen: set[tuple[int, ...]] = set()
        expected = None
        for i in range(m):
            key = (int(src[i]), -1 if choice is None else int(choice[i]), int(dst[i]))
            if key in seen:
                expected = i
                break
            seen.add(key)
        assert first_repeat(src, choice, dst) == expected


# ---------------------------------------------------------------------------- MDP choice count
def test_wrong_mdp_choice_count_in_the_header(tmp_path: Path) -> None:
    body = b"0 0 1 1\n0 1 0 1\n1 0 1 1\n"
    assert read_explicit(_files(tmp_path, b"2 3 3\n" + body)).num_states == 2
    for header in (b"2 2 3\n", b"2 4 3\n", b"2 0 3\n"):
        with pytest.raises(InputError, match=r"m.tra:1: the header announces \d choices, the file has 3"):
            read_explicit(_files(tmp_path, header + body))


# ---------------------------------------------------------------------------- state counts and memory
SPARSE = b"dtmc\n0 99999999 1\n99999999 99999999 1\n"


def test_the_38_byte_file_is_refused_before_allocating(tmp_path: Path) -> None:
    """The fuzz campaign's file: 38 bytes naming state 99,999,999 (2.6 to 8.5 GB before). Refused with
    its line; the process (interpreter and imports included) stays far below a gigabyte."""
    assert len(SPARSE) == 38
    tra = _files(tmp_path, SPARSE)
    code = ("import re\nfrom pathlib import Path\nfrom checker.cli import main\n"
            f"rc = main(['ctl', {str(tra)!r}, 'P=? [F goal]'])\n"  # this process's peak: VmHWM (kB)
            "print(rc, re.search(r'VmHWM:\\s+(\\d+)', Path('/proc/self/status').read_text()).group(1))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    rc, peak_kb = map(int, done.stdout.split())
    assert rc == 2 and "m.tra:2: state id 99999999 out of range" in done.stderr, done.stderr
    assert "transitions name 2" in done.stderr
    assert peak_kb < 300_000, peak_kb  # 77 MB measured: the interpreter and its imports


def test_header_state_count_is_checked_before_reading_states(tmp_path: Path) -> None:
    tra = _files(tmp_path, b"99999999 2\n0 1 1\n1 1 1\n")
    with pytest.raises(InputError, match=r"m.tra:1: the header announces 99999999 states"):
        read_explicit(tra)
    json_path = tmp_path / "k.json"
    json_path.write_text(json.dumps({"states": 99999999, "initial": [0], "transitions": [[0, 1]]}))
    with pytest.raises(InputError, match=r"k.json:1: states: it declares 99999999 states"):
        read_json(json_path)


def test_state_count_is_bounded_by_the_memory_limit(tmp_path: Path) -> None:
    """A dense chain of 200,000 states: about 19 MB of arrays. Read under a memory limit of 10 MB it
    is refused before the arrays are allocated (the line naming the largest id, the option named);
    under 100 MB it loads. (On the command line a limit below the process's own footprint stops the
    command at once, ``unknown``: the reader's refusal is checked on the reader.)"""
    from checker.errors import InputError
    from checker.io.prism import read_explicit

    n = 200_000
    rows = "".join(f"{i} {i + 1} 1\n" for i in range(n - 1)) + f"{n - 1} {n - 1} 1\n"
    tra = _files(tmp_path, ("dtmc\n" + rows).encode(), b"#DECLARATION\ninit\n#END\n0 init\n")
    with pytest.raises(InputError) as refused:
        read_explicit(str(tra), max_memory_mb=10)
    err = f"flcheck: error: {refused.value}"
    _one_line(err, f"m.tra:{n}: state id {n - 1} out of range")
    assert "--max-memory" in err and "memory limit of 10 MB" in err
    assert read_explicit(str(tra), max_memory_mb=100).num_states == n


def test_declared_states_problem_edges() -> None:
    assert declared_states_problem(MAX_UNNAMED_STATES + 5, 1, 5, None) is None
    assert declared_states_problem(MAX_UNNAMED_STATES + 6, 1, 5, None) is not None
    per_mb = 2**20 // BYTES_PER_STATE
    assert declared_states_problem(per_mb, 0, per_mb, 1.0) is None
    assert declared_states_problem(per_mb + 1, 0, per_mb + 1, 1.0) is not None


# ---------------------------------------------------------------------------- digits of other scripts
@pytest.mark.parametrize(("tra", "lab", "sta", "needle"), [
    ("dtmc\n0 \u0661 1\n1 1 1\n", None, None, "m.tra:2: field 2 is '\u0661'"),
    ("dtmc\n\u0660 1 1\n1 1 1\n", None, None, "m.tra:2: field 1"),
    ("dtmc\n0 1 \u0661\n1 1 1\n", None, None, "m.tra:2: probability '\u0661' is not a number"),
    ("dtmc\n0 1 1/\u0661\n1 1 1\n", None, None, "m.tra:2: probability"),
    ("\u0662 2\n0 1 1\n1 1 1\n", None, None, "m.tra:1: unrecognised header"),
    ("2 2\n0 1 1\n1 1 1\n", '0="init" \u0661="goal"\n0: 0\n1: 1\n', None,
     "m.lab:1: unrecognised label header"),
    ("2 2\n0 1 1\n1 1 1\n", None, "(x)\n\u0660:(1)\n1:(2)\n", "m.sta:2: malformed valuation"),
])
def test_unicode_digits_are_not_numbers(tmp_path: Path, tra: str, lab: str | None, sta: str | None,
                                        needle: str) -> None:
    path = _files(tmp_path, tra.encode(), (lab or LAB.decode()).encode())
    if sta is not None:
        (tmp_path / "m.sta").write_text(sta, encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_explicit(path)
    assert needle in str(info.value)


def test_unicode_digits_in_json_probabilities(tmp_path: Path) -> None:
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"states": 2, "transitions": [[0, 1, "\u0661/\u0662"], [0, 0, "1/2"],
                                                             [1, 1, 1]]}, ensure_ascii=False))
    with pytest.raises(InputError, match="probability"):
        read_json(path)


