"""Readers of the three files of a PRISM/Storm explicit model, each on its own (:mod:`checker.io.prism`
assembles them into a Kripke structure).

``.tra``: a header (Storm: ``dtmc``, ``mdp`` or ``ctmc``; PRISM: ``N M`` or ``N C M`` with the state,
choice and transition counts), then one transition per line: ``src dst prob`` (DTMC; a CTMC gives a
rate), ``src choice dst prob`` or Storm's ``src choice dst prob action`` (MDP). ``.lab``: Storm's
``#DECLARATION`` / names / ``#END`` then ``id name name ...``, or PRISM's ``0="init" 1="goal"`` then
``id: 0 1``. ``.sta``: ``(x,y)`` then ``id:(1,2)``. Full-line ``#`` comments, blank lines, CRLF and a
UTF-8 byte-order mark are accepted; every error names the file and line.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from checker.errors import InputError, Position

STORM_HEADERS = {"dtmc", "mdp", "ctmc", "ma"}
_BOM = b"\xef\xbb\xbf"


#: The most states an explicit file may describe (its arrays then take a few GiB); a state id beyond is
#: refused before anything of that size is allocated.
MAX_EXPLICIT_STATES = 100_000_000

#: Bytes per state and per transition of a structure read from a file, at the peak of a check (CSR
#: arrays, labels, the work arrays of a fixpoint or a linear solve). Measured: a sparse DTMC of 10^7
#: states peaks at 34 MB + 41 B/state through ``ctl 'AG !goal'`` and 83 B/state through ``P=? [F goal]``
#: (``/usr/bin/time -v``); rounded up.
BYTES_PER_STATE = 96
BYTES_PER_TRANSITION = 48

#: The most states a model file may declare that none of its transitions names (isolated states: a
#: state id far beyond the others, or a state count far above the transitions, is almost surely a typo,
#: and every declared state costs :data:`BYTES_PER_STATE`).
MAX_UNNAMED_STATES = 1_000_000


def declared_states_problem(num_states: int, num_transitions: int, named: int,
                            max_memory_mb: float | None) -> str | None:
    """Why a model file may not declare ``num_states`` states (``None``: it may), checked before any
    array of that size is allocated: above :data:`MAX_EXPLICIT_STATES`, more than
    :data:`MAX_UNNAMED_STATES` of them named by none of its transitions (``named`` of them are), or
    arrays that would exceed ``max_memory_mb`` (estimated with :data:`BYTES_PER_STATE` and
    :data:`BYTES_PER_TRANSITION`).

    >>> declared_states_problem(100_000_000, 2, 2, 500.0)
    'it declares 100000000 states, of which its transitions name 2 (at most 1000000 unnamed states)'
    >>> declared_states_problem(10_000_000, 20_000_000, 10_000_000, 500.0)  # doctest: +ELLIPSIS
    '10000000 states and 20000000 transitions need about 1831 MB, above the memory limit of 500 MB...'
    >>> declared_states_problem(1000, 2000, 1000, 500.0) is None
    True
    """
    if num_states > MAX_EXPLICIT_STATES:
        return f"it declares {num_states} states (at most {MAX_EXPLICIT_STATES})"
    if num_states - named > MAX_UNNAMED_STATES:
        return (f"it declares {num_states} states, of which its transitions name {named} "
                f"(at most {MAX_UNNAMED_STATES} unnamed states)")
    need = (num_states * BYTES_PER_STATE + num_transitions * BYTES_PER_TRANSITION) / 2**20
    if max_memory_mb is not None and need > max_memory_mb:
        return (f"{num_states} states and {num_transitions} transitions need about {need:.0f} MB, above "
                f"the memory limit of {max_memory_mb:.0f} MB (--max-memory)")
    return None


def ascii_digits(text: str) -> bool:
    """Whether ``text`` is a non-empty run of the ASCII digits ``0-9`` (``str.isdigit`` also takes
    ``'١'`` or ``'²'``, which the explicit formats do not have).

    >>> ascii_digits("12"), ascii_digits("\u0661"), ascii_digits("\u00b2"), ascii_digits("")
    (True, False, False, False)
    """
    return text.isascii() and text.isdigit()


def input_error(path: str | Path, line: int | None, message: str, expected: str | None = None) -> InputError:
    """An input error at ``path:line`` (``line`` ``None``: the whole file)."""
    return InputError(message, Position(str(path), line, None), expected)




def check_utf8(path: Path, data: bytes) -> None:
    """Raise an input error naming the line of the first byte of ``data`` that is not UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise input_error(path, line, f"byte 0x{data[exc.start]:02x} is not UTF-8 text",
                          "a UTF-8 text file") from None


def _is_comment(line: str) -> bool:
    """A full-line comment: ``#`` first (Storm's ``#DECLARATION``/``#END`` are read before this)."""
    return line.lstrip().startswith("#")


def _first_line(path: Path) -> tuple[str, int]:
    """The first line that is neither blank nor a ``#`` comment (a UTF-8 byte-order mark dropped)
    and its 1-based number; the whole file is checked to be UTF-8 first."""
    check_utf8(path, path.read_bytes())
    with open(path, encoding="utf-8-sig") as fh:
        for no, line in enumerate(fh, 1):
            if line.strip() and not _is_comment(line):
                return line.strip(), no
    raise input_error(path, None, "empty file", "a header line ('dtmc', 'mdp', 'ctmc' or 'N M')")


def _fields_text(ncols: int) -> str:
    if ncols == 3:
        return "3 fields: src dst prob"
    return "4 or 5 fields: src choice dst prob [action]"


def _read_tra_lines(path: Path, header_line: int,
                    kind: str) -> tuple[np.ndarray, list[str], list[str | None]]:
    """The line-by-line reader of a ``.tra`` body (used when the bulk reader cannot take the file:
    comments, Storm's action-labelled MDP lines ``src choice dst prob action``, p/q probabilities, or
    an error to locate): the integer columns, the probability texts and the MDP action labels, every
    malformed line an error naming it."""
    ncols = 3 if kind in ("dtmc", "ctmc") else 4
    ints: list[list[int]] = []
    probs: list[str] = []
    names: list[str | None] = []
    with open(path, encoding="utf-8-sig") as fh:
        for no, line in enumerate(fh, 1):
            if no <= header_line or not line.strip() or _is_comment(line):
                continue
            parts = line.split()
            if len(parts) != ncols and not (ncols == 4 and len(parts) == 5):
                raise input_error(path, no, f"{len(parts)} fields on a transition line", _fields_text(ncols))
            row = []
            for i, tok in enumerate(parts[: ncols - 1]):
                if not ascii_digits(tok):
                    raise input_error(path, no, f"field {i + 1} is {tok!r}", "a non-negative integer")
                if len(tok) > 18:
                    raise input_error(path, no, f"state or choice index {tok} out of range",
                                      f"indices below {MAX_EXPLICIT_STATES}")
                row.append(int(tok))
            tok = parts[ncols - 1]
            if not tok.isascii():
                raise input_error(path, no, f"probability {tok!r} is not a number",
                                  "a decimal or p/q in ASCII digits")
            try:
                value = Fraction(tok)
            except (ValueError, ZeroDivisionError):
                try:
                    number = float(tok)
                except ValueError:
                    number = 0.0
                if not math.isfinite(number):
                    expected = "a decimal or p/q in [0, 1]" if kind != "ctmc" else "a finite rate"
                    raise input_error(path, no, f"probability {number!r} is not a finite number",
                                      expected) from None
                raise input_error(path, no, f"probability {tok!r} is not a number",
                                  "a decimal or p/q") from None
            if kind != "ctmc" and not 0 <= value <= 1:
                raise input_error(path, no, f"probability {tok} is not in [0, 1]",
                                  "a decimal or p/q in [0, 1]")
            ints.append(row)
            probs.append(tok)
            names.append(parts[4] if len(parts) == 5 else None)
    array = np.array(ints, dtype=np.int64).reshape(len(ints), ncols - 1)
    return array, probs, names


def read_tra(path: str | Path, *, probabilities: bool = True) -> dict[str, Any]:
    """Read a ``.tra`` file: ``{"kind": "dtmc"|"mdp"|"ctmc", "src", "dst", "choice" (MDP), "prob"
    (float array or None), "prob_exact" (Fractions when the file uses p/q), "action_names" (MDP: the
    fifth field of Storm's labelled lines per transition, ``None`` where absent; ``None`` when no line
    has one), "num_states" (PRISM header or None), "header_line" (its line number)}``.
    ``probabilities=False`` skips the probability column. Full-line ``#`` comments are skipped. A
    probability that is not a finite number (``nan``, ``inf``, ``1/0``, text) or (not a CTMC's rate)
    outside [0, 1] is an error naming its line. Transitions of probability 0 are kept here (they
    still name their states, as in Storm); :func:`checker.io.prism.read_explicit` drops them."""
    path = Path(path)
    header, header_line = _first_line(path)
    words = header.split()
    num_states: int | None = None
    num_transitions: int | None = None
    num_choices: int | None = None
    if header.lower() in STORM_HEADERS:
        kind = header.lower()
    elif all(ascii_digits(w) for w in words) and len(words) in (2, 3):
        kind = "dtmc" if len(words) == 2 else "mdp"
        num_states, num_transitions = int(words[0]), int(words[-1])
        num_choices = int(words[1]) if len(words) == 3 else None
    else:
        raise input_error(path, header_line, f"unrecognised header {header!r}",
                   "'dtmc', 'mdp', 'ctmc' (Storm) or 'N M' / 'N C M' (PRISM)")
    if kind == "ma":
        raise input_error(path, header_line, "Markov automata ('ma') are not supported",
                          "a 'dtmc', 'mdp' or 'ctmc' transitions file")
    ncols = 3 if kind in ("dtmc", "ctmc") else 4
    names: list[str | None] | None = None
    exact = None
    try:
        if _has_comment(path):
            raise ValueError  # comments: the line reader
        ints, prob = _bulk_tra(path, header_line, ncols, probabilities)
    except ValueError:
        ints, texts, labels = _read_tra_lines(path, header_line, kind)
        names = labels if any(n is not None for n in labels) else None
        prob = None
        if probabilities:
            try:
                prob = np.array([float(t) for t in texts], dtype=np.float64)
            except ValueError:  # p/q: exact rationals
                prob = None
            if prob is None or any("/" in t for t in texts) or any(
                    p == 0 and Fraction(t) != 0 for p, t in zip(prob.tolist(), texts, strict=True)):
                # p/q, or a positive value a float rounds to 0 (1e-400): exact rationals
                exact = [Fraction(t) for t in texts]
                prob = np.array([float(p) for p in exact], dtype=np.float64)
    if len(ints) and ints.min() < 0:  # pragma: no cover - both readers take digits only
        raise input_error(path, header_line, "negative state or choice index", "a non-negative integer")
    if num_transitions is not None and num_transitions != len(ints):
        raise input_error(path, header_line,
                          f"the header announces {num_transitions} transitions, the file has {len(ints)}",
                          f"'{' '.join(words[:-1])} {len(ints)}'")
    if num_choices is not None:
        choices = len(np.unique(ints[:, :2], axis=0)) if len(ints) else 0
        if choices != num_choices:
            raise input_error(path, header_line,
                              f"the header announces {num_choices} choices, the file has {choices}",
                              f"'{words[0]} {choices} {words[2]}'")
    if prob is not None and len(prob) and not np.isfinite(prob).all():
        row = int(np.flatnonzero(~np.isfinite(prob))[0])
        raise input_error(path, data_line(path, header_line, row),
                          f"probability {float(prob[row])!r} is not a finite number",
                          "a decimal or p/q in [0, 1]" if kind != "ctmc" else "a finite rate")
    out: dict[str, Any] = {"kind": kind, "num_states": num_states, "prob": prob, "prob_exact": exact,
                           "src": ints[:, 0], "dst": ints[:, -1], "header_line": header_line,
                           "action_names": names}
    if kind == "mdp":
        out["choice"] = ints[:, 1]
    return out


def _has_comment(path: Path) -> bool:
    """Whether any line of the file is a ``#`` comment (read in chunks)."""
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 24):
            if b"#" in chunk:
                return True
    return False


def _bulk_tra(path: Path, header_line: int, ncols: int,
              probabilities: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The numpy reader of a plain ``.tra`` body (no comments, ``ncols`` numeric fields per line);
    ``ValueError`` when the file is anything else (the line reader then takes it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "input contained no data": no transitions
        ints = np.loadtxt(path, skiprows=header_line, usecols=tuple(range(ncols - 1)), dtype=np.int64,
                          ndmin=2, comments=None, encoding="utf-8-sig")
    if ints.shape[1] != ncols - 1:  # pragma: no cover - loadtxt guarantees the shape
        raise ValueError
    if len(ints) and ints.min() < 0:
        raise ValueError
    if _count_fields(path, header_line) != len(ints) * ncols:
        raise ValueError  # extra fields (usecols alone would ignore them), e.g. action labels
    prob = np.zeros(0, dtype=np.float64) if probabilities else None
    if probabilities and len(ints):
        prob = np.loadtxt(path, skiprows=header_line, usecols=(ncols - 1,), dtype=np.float64, ndmin=1,
                          comments=None, encoding="utf-8-sig")
        zeros = np.flatnonzero(prob == 0)
        if len(zeros) and any(Fraction(t) != 0 for t in _last_fields(path, header_line, zeros)):
            raise ValueError  # a positive value below the float range (1e-400): read exactly
    return ints, prob


def _last_fields(path: Path, header_line: int, rows: np.ndarray) -> list[str]:
    """The last field of the given transition rows (0-based, blank lines skipped) of a plain ``.tra``."""
    wanted = set(rows.tolist())
    out = []
    with open(path, encoding="utf-8-sig") as fh:
        seen = -1
        for no, line in enumerate(fh, 1):
            if no > header_line and line.strip():
                seen += 1
                if seen in wanted:
                    out.append(line.split()[-1])
    return out


def _count_fields(path: Path, header_line: int, chunk: int = 1 << 26) -> int:
    """Number of whitespace-separated fields after the header: token starts counted with numpy
    (one comparison and one shifted AND per byte), reading the file in chunks so that memory stays
    bounded on multi-gigabyte files."""
    total = 0
    prev_sep = True
    with open(path, "rb") as fh:
        for _ in range(header_line):
            fh.readline()
        while True:
            data = fh.read(chunk)
            if not data:
                return total
            ns = np.frombuffer(data, dtype=np.uint8) > 32
            total += int(np.count_nonzero(ns[1:] & ~ns[:-1])) + int(ns[0] and prev_sep)
            prev_sep = not ns[-1]


def data_line(path: Path, header_line: int, row: int) -> int:
    """The 1-based line number of transition ``row`` (0-based, blank and comment lines skipped) of a
    ``.tra`` file."""
    with open(path, encoding="utf-8") as fh:
        seen = -1
        for no, line in enumerate(fh, 1):
            if no > header_line and line.strip() and not _is_comment(line):
                seen += 1
                if seen == row:
                    return no
    return header_line + row + 1


def _tokens(body: bytes, extra_sep: bytes = b"") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised tokeniser: token start/end offsets, each token's line index, and line starts."""
    b = np.frombuffer(body, dtype=np.uint8)
    sep = b <= 32
    for ch in extra_sep:
        sep |= b == ch
    ns = (~sep).view(np.int8)
    edge = np.diff(ns, prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edge == 1)
    ends = np.flatnonzero(edge == -1)
    line_starts = np.concatenate(([0], np.flatnonzero(b == 10) + 1))
    tok_line = np.searchsorted(line_starts, starts, side="right") - 1
    return starts, ends, tok_line, line_starts


def _parse_uints(b: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Parse decimal non-negative integer tokens; -1 marks a token that is not one."""
    lens = ends - starts
    out = np.full(len(starts), -1, dtype=np.int64)
    for ln in np.unique(lens).tolist():
        m = np.flatnonzero(lens == ln)
        if ln > 18:
            continue
        mat = b[starts[m][:, None] + np.arange(ln)] - np.uint8(48)
        good = (mat <= 9).all(axis=1)
        vals = mat.astype(np.int64) @ (10 ** np.arange(ln - 1, -1, -1, dtype=np.int64))
        out[m[good]] = vals[good]
    return out


def _sorted_unique(ids: np.ndarray) -> np.ndarray:
    """``np.unique`` with a fast path for already strictly increasing input."""
    if len(ids) < 2 or bool(np.all(ids[1:] > ids[:-1])):
        return ids
    return np.unique(ids)


def _blank_comments(body: bytes) -> bytes:
    """``body`` with every full-line ``#`` comment emptied (line numbers kept)."""
    if b"#" not in body:
        return body
    return b"\n".join(b"" if line.lstrip().startswith(b"#") else line for line in body.split(b"\n"))


def read_lab(path: str | Path, num_states: int | None = None,
             states_text: str | None = None) -> tuple[dict[str, np.ndarray], int]:
    """Read a ``.lab`` file (either flavour): ``(labels name -> sorted state ids, max id + 1)``. With
    ``num_states`` a line labelling a state id beyond is an error naming the line (``states_text`` says
    where the states come from, e.g. the transitions file)."""
    path = Path(path)
    data = path.read_bytes()
    check_utf8(path, data)
    data = data.removeprefix(_BOM)
    text_head = data[:4096].decode("utf-8", "replace")
    names: list[str]
    if text_head.lstrip().startswith("#DECLARATION"):
        m = re.match(rb"\s*#DECLARATION\s*\n(.*?)\n\s*#END\s*\n?", data, re.S)
        if not m:
            raise input_error(path, 1, "#DECLARATION block without #END", "'#END' after the label names")
        names = m.group(1).decode("utf-8").split()
        body_start = m.end()
        prism = False
        declared = {}
    else:
        first_nl = data.find(b"\n")
        first = data[: first_nl if first_nl >= 0 else len(data)].decode("utf-8", "replace")
        decl = re.findall(r'(\d+)="([^"]*)"', first, re.ASCII)
        if not decl or re.sub(r'\s*\d+="[^"]*"\s*', "", first, flags=re.ASCII).strip():
            raise input_error(
                path,
                1,
                f"unrecognised label header {first[:60]!r}",
                "'#DECLARATION' (Storm) or '0=\"init\" 1=\"...\"' (PRISM)",
            )
        names = [n for _, n in decl]
        declared = {int(i): n for i, n in decl}
        body_start = first_nl + 1 if first_nl >= 0 else len(data)
        prism = True
    header_lines = data[:body_start].count(b"\n")
    body = _blank_comments(data[body_start:])
    b = np.frombuffer(body, dtype=np.uint8)
    starts, ends, tok_line, _ = _tokens(body, b":" if prism else b"")
    labels = {n: np.zeros(0, dtype=np.int64) for n in names}
    if not len(starts):
        _check_init(path, labels, data, body_start)
        return labels, 0
    first_tok = np.ones(len(starts), dtype=bool)
    first_tok[1:] = tok_line[1:] != tok_line[:-1]
    ids = _parse_uints(b, starts[first_tok], ends[first_tok])
    if (ids < 0).any():
        bad = int(np.flatnonzero(ids < 0)[0])
        line = int(tok_line[np.flatnonzero(first_tok)[bad]]) + header_lines + 1
        raise input_error(path, line, "a labelled line must start with a state id", "a non-negative integer")
    state_of_tok = ids[np.cumsum(first_tok) - 1]
    rest = ~first_tok
    if prism:
        # PRISM: ids must be followed by ':' (the tokeniser treats ':' as a separator)
        lab_idx = _parse_uints(b, starts[rest], ends[rest])
        bad_mask = ~np.isin(lab_idx, np.array(sorted(declared), dtype=np.int64))
        if bad_mask.any():
            bad = int(np.flatnonzero(rest)[np.flatnonzero(bad_mask)[0]])
            raise input_error(
                path,
                int(tok_line[bad]) + header_lines + 1,
                "undeclared label index",
                "one of " + ", ".join(str(k) for k in sorted(declared)),
            )
        for v, name in declared.items():
            labels[name] = _sorted_unique(state_of_tok[rest][lab_idx == v])
    else:
        rs, re_ = starts[rest], ends[rest]
        lens = re_ - rs
        matched = np.zeros(len(rs), dtype=bool)
        owners = state_of_tok[rest]
        for name in names:
            raw = name.encode("utf-8")
            cand = np.flatnonzero(lens == len(raw))
            mat = b[rs[cand][:, None] + np.arange(len(raw))]
            hit = cand[(mat == np.frombuffer(raw, dtype=np.uint8)).all(axis=1)]
            matched[hit] = True
            labels[name] = _sorted_unique(owners[hit])
        if not matched.all():
            bad_tok = int(np.flatnonzero(~matched)[0])
            bad = int(np.flatnonzero(rest)[bad_tok])
            text = bytes(b[rs[bad_tok] : re_[bad_tok]]).decode("utf-8", "replace")
            raise input_error(
                path,
                int(tok_line[bad]) + header_lines + 1,
                f"undeclared label {text!r}",
                "one of " + ", ".join(names),
            )
    _check_init(path, labels, data, body_start)
    n_seen = int(ids.max()) + 1
    if num_states is not None and n_seen > num_states:
        bad = int(np.flatnonzero(ids >= num_states)[0])
        line = int(tok_line[np.flatnonzero(first_tok)[bad]]) + header_lines + 1
        raise input_error(path, line, f"state id {int(ids[bad])} out of range",
                          f"ids below {num_states}" + (f" ({states_text})" if states_text else ""))
    return labels, n_seen


def _check_init(path: Path, labels: dict[str, np.ndarray], data: bytes, body_start: int) -> None:
    """A ``.lab`` that declares ``init`` must label some state with it (the initial states): an empty
    ``init`` is an error naming the declaration's line, not a silent state 0."""
    if "init" in labels and not len(labels["init"]):
        head = data[:body_start].decode("utf-8", "replace").splitlines()
        line = next((i for i, text in enumerate(head, 1) if re.search(r'(^|\s|=")init(\s|"|$)', text)), 1)
        raise input_error(path, line, "the label 'init' is declared but labels no state",
                          "'init' on the initial states (or no 'init' at all: then state 0 is initial)")


def read_sta(path: str | Path, num_states: int | None = None) -> tuple[dict[str, Any], int]:
    """Read a ``.sta`` file: observables (variable name -> numpy array of ints, or list of Python
    values for non-integer variables) and the number of states it describes."""
    path = Path(path)
    data = path.read_bytes()
    check_utf8(path, data)
    data = data.removeprefix(_BOM)
    nl = data.find(b"\n")
    head = data[: nl if nl >= 0 else len(data)].decode("utf-8").strip()
    m = re.fullmatch(r"\((.*)\)", head)
    if not m:
        raise input_error(path, 1, f"unrecognised header {head[:60]!r}", "'(var1,var2,...)'")
    names = [v.strip() for v in m.group(1).split(",")]
    body = data[nl + 1 :] if nl >= 0 else b""
    k = len(names)
    table = body.translate(bytes.maketrans(b"():,", b"    "))
    try:
        arr = np.loadtxt(io.BytesIO(table), dtype=np.int64, ndmin=2)
        if arr.size and arr.shape[1] != k + 1:
            raise ValueError
    except ValueError:
        return _read_sta_slow(path, names, num_states)
    if not len(arr):
        return {n: np.zeros(0, dtype=np.int64) for n in names}, 0
    ids = arr[:, 0]
    n = int(ids.max()) + 1 if num_states is None else num_states
    if ids.min() < 0 or ids.max() >= n:
        return _read_sta_slow(path, names, num_states)  # names the line
    out: dict[str, Any] = {}
    for j, name in enumerate(names):
        col = np.zeros(n, dtype=np.int64)
        col[ids] = arr[:, j + 1]
        out[name] = col
    return out, n


def _sta_value(tok: str) -> object:
    t = tok.strip()
    if t in ("true", "false"):
        return t == "true"
    if not t.isascii():
        return t  # a name: Python's int() and Fraction() would read '١' as a digit
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return Fraction(t)
    except (ValueError, ZeroDivisionError):
        return t


def _read_sta_slow(path: Path, names: list[str], num_states: int | None) -> tuple[dict[str, Any], int]:
    rows: dict[int, list[object]] = {}
    with open(path, encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            if no == 1 or not line.strip():
                continue
            m = re.fullmatch(r"\s*(\d+)\s*:\s*\((.*)\)\s*", line, re.ASCII)
            if not m:
                raise input_error(path, no, f"malformed valuation {line.strip()[:60]!r}", "'id:(v1,v2,...)'")
            vals = [_sta_value(v) for v in m.group(2).split(",")]
            if len(vals) != len(names):
                raise input_error(
                    path,
                    no,
                    f"{len(vals)} values for {len(names)} variables",
                    f"{len(names)} comma-separated values",
                )
            state = int(m.group(1))
            if num_states is not None and state >= num_states:
                raise input_error(path, no, f"state id {state} out of range",
                                  f"ids 0..{num_states - 1} (the model's states)")
            rows[state] = vals
    n = (max(rows) + 1 if rows else 0) if num_states is None else num_states
    out: dict[str, Any] = {}
    for j, name in enumerate(names):
        col: list[object] = [None] * n
        for i, vals in rows.items():
            col[i] = vals[j]
        out[name] = col
    return out, n
