"""Interchange formats: the PRISM/Storm explicit format, a JSON Kripke format, and DOT output.

PRISM / Storm explicit format (one model = several files with a common prefix)
-----------------------------------------------------------------------------
``PREFIX.tra`` transitions. First line a header: Storm flavour ``dtmc`` / ``mdp`` (also ``ctmc``,
``ma``); PRISM flavour ``N M`` (states, transitions) for a DTMC or ``N C M`` (states, choices,
transitions) for an MDP. Then one transition per line: ``src dst prob`` (DTMC) or
``src choice dst prob`` (MDP); probabilities are decimals or rationals ``p/q``.

``PREFIX.lab`` labels. Storm flavour: ``#DECLARATION``, a line of label names, ``#END``, then
``id label label ...``. PRISM flavour: a first line ``0="init" 1="deadlock" ...`` then ``id: 0 1 ...``.
The label ``init`` marks the initial states (state 0 when there is no ``init`` label).

``PREFIX.sta`` (optional) state valuations: ``(v1,v2,...)`` then ``id:(x1,x2,...)``; each variable
becomes an observable (numpy integer array when all values are integers).

Loading is bulk: ``numpy.loadtxt`` (C tokenizer) for the transitions, vectorised byte scanning for the
labels; a malformed file raises :class:`InputError` naming ``file:line`` (found by a slow re-scan once
the bulk parser has failed).

JSON Kripke format (``flcheck-kripke/1``)
-----------------------------------------
::

    {"format": "flcheck-kripke/1",
     "states": 3,                       // or a list of {"name": ..., "observables": {...}}
     "initial": [0],
     "transitions": [[0, 1], [1, 2, "1/2"], {"from": 1, "to": 0, "action": "reset", "probability": "1/2"}],
     "labels": {"goal": [2]}}

Transitions are ``[src, dst]``, ``[src, dst, probability]`` or objects with ``from``, ``to`` and
optional ``action`` (a rule name) and ``probability`` (a number or ``"p/q"`` string; exact).
Observable values: JSON numbers (floats read as exact decimals), strings, booleans, lists (tuples),
``{"set": [...]}`` (a set) and ``{"fraction": "p/q"}``.
"""

from __future__ import annotations

import io
import json
import re
import warnings
from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from checker.errors import InputError, Position
from checker.io.files import write_atomic
from checker.mc.kripke import Kripke
from checker.mc.ts import Action

JSON_FORMAT = "flcheck-kripke/1"
_STORM_HEADERS = {"dtmc", "mdp", "ctmc", "ma"}


# ------------------------------------------------------------------------------ helpers
def _err(path: str | Path, line: int | None, message: str, expected: str | None = None) -> InputError:
    return InputError(message, Position(str(path), line, None), expected)




def _first_line(path: Path) -> tuple[str, int]:
    """The first non-blank line and its 1-based number."""
    with open(path, encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            if line.strip():
                return line.strip(), no
    raise _err(path, None, "empty file", "a header line ('dtmc', 'mdp' or 'N M')")


def _find_tra_error(path: Path, header_line: int, ncols: int) -> InputError | None:
    """Slow line-by-line scan for the first malformed transition line (called after a bulk failure)."""
    with open(path, encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            if no <= header_line or not line.strip():
                continue
            parts = line.split()
            if len(parts) != ncols:
                return _err(path, no, f"{len(parts)} fields on a transition line",
                            f"{ncols} fields: " + ("src dst prob" if ncols == 3 else "src choice dst prob"))
            for i, tok in enumerate(parts[:-1]):
                if not tok.isdigit():
                    return _err(path, no, f"field {i + 1} is {tok!r}", "a non-negative integer")
            try:
                Fraction(parts[-1])
            except (ValueError, ZeroDivisionError):
                return _err(path, no, f"probability {parts[-1]!r} is not a number", "a decimal or p/q")
    return None


def _scan_tra_error(path: Path, header_line: int, ncols: int) -> InputError:
    return _find_tra_error(path, header_line, ncols) or _err(path, None, "malformed transitions file")


def read_tra(path: str | Path, *, probabilities: bool = True) -> dict[str, Any]:
    """Read a ``.tra`` file: ``{"kind": "dtmc"|"mdp", "src", "dst", "choice" (MDP), "prob" (float
    array or None), "prob_exact" (Fractions when the file uses p/q), "num_states" (PRISM header or
    None)}``. ``probabilities=False`` skips the probability column (faster; CTL needs only the graph)."""
    path = Path(path)
    header, header_line = _first_line(path)
    words = header.split()
    num_states: int | None = None
    if header.lower() in _STORM_HEADERS:
        kind = header.lower()
    elif all(w.isdigit() for w in words) and len(words) in (2, 3):
        kind = "dtmc" if len(words) == 2 else "mdp"
        num_states = int(words[0])
    else:
        raise _err(path, header_line, f"unrecognised header {header!r}",
                   "'dtmc', 'mdp' (Storm) or 'N M' / 'N C M' (PRISM)")
    if kind in ("ctmc", "ma"):
        kind = "dtmc" if kind == "ctmc" else "mdp"
    ncols = 3 if kind == "dtmc" else 4
    int_cols = tuple(range(ncols - 1))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "input contained no data": no transitions
            ints = np.loadtxt(path, skiprows=header_line, usecols=int_cols, dtype=np.int64, ndmin=2,
                              comments=None)
    except ValueError:
        raise _scan_tra_error(path, header_line, ncols) from None
    if ints.shape[1] != ncols - 1:  # pragma: no cover - loadtxt guarantees the shape
        raise _scan_tra_error(path, header_line, ncols)
    if len(ints) and ints.min() < 0:
        row = int(np.flatnonzero((ints < 0).any(axis=1))[0])
        raise _err(path, _data_line(path, header_line, row), "negative state or choice index",
                   "a non-negative integer")
    prob = np.zeros(0, dtype=np.float64) if probabilities else None
    exact = None
    if probabilities and len(ints):
        try:
            prob = np.loadtxt(path, skiprows=header_line, usecols=(ncols - 1,), dtype=np.float64, ndmin=1,
                              comments=None)
        except ValueError:
            found = _find_tra_error(path, header_line, ncols)
            if found is not None:
                raise found from None
            exact = _read_exact_column(path, header_line, ncols)
            prob = np.array([float(p) for p in exact], dtype=np.float64)
    _check_columns(path, header_line, ncols, len(ints))
    out: dict[str, Any] = {"kind": kind, "num_states": num_states, "prob": prob, "prob_exact": exact,
                           "src": ints[:, 0], "dst": ints[:, -1]}
    if kind == "mdp":
        out["choice"] = ints[:, 1]
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


def _check_columns(path: Path, header_line: int, ncols: int, rows: int) -> None:
    """Reject lines with extra fields (``usecols`` alone would ignore them)."""
    if _count_fields(path, header_line) != rows * ncols:
        raise _scan_tra_error(path, header_line, ncols)


def _data_line(path: Path, header_line: int, row: int) -> int:
    with open(path, encoding="utf-8") as fh:
        seen = -1
        for no, line in enumerate(fh, 1):
            if no > header_line and line.strip():
                seen += 1
                if seen == row:
                    return no
    return header_line + row + 1


def _read_exact_column(path: Path, header_line: int, ncols: int) -> list[Fraction]:
    out: list[Fraction] = []
    with open(path, encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            if no <= header_line or not line.strip():
                continue
            tok = line.split()[ncols - 1] if len(line.split()) >= ncols else ""
            try:
                out.append(Fraction(tok))
            except (ValueError, ZeroDivisionError):
                raise _err(path, no, f"probability {tok!r} is not a number", "a decimal or p/q") from None
    return out


# ------------------------------------------------------------------------------ labels
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


def read_lab(path: str | Path, num_states: int | None = None) -> tuple[dict[str, np.ndarray], int]:
    """Read a ``.lab`` file (either flavour): ``(labels name -> sorted state ids, max id + 1)``."""
    path = Path(path)
    data = path.read_bytes()
    text_head = data[:4096].decode("utf-8", "replace")
    names: list[str]
    if text_head.lstrip().startswith("#DECLARATION"):
        m = re.match(rb"\s*#DECLARATION\s*\n(.*?)\n\s*#END\s*\n?", data, re.S)
        if not m:
            raise _err(path, 1, "#DECLARATION block without #END", "'#END' after the label names")
        names = m.group(1).decode("utf-8").split()
        body_start = m.end()
        prism = False
        declared = {}
    else:
        first_nl = data.find(b"\n")
        first = data[: first_nl if first_nl >= 0 else len(data)].decode("utf-8", "replace")
        decl = re.findall(r'(\d+)="([^"]*)"', first)
        if not decl or re.sub(r'\s*\d+="[^"]*"\s*', "", first).strip():
            raise _err(path, 1, f"unrecognised label header {first[:60]!r}",
                       "'#DECLARATION' (Storm) or '0=\"init\" 1=\"...\"' (PRISM)")
        names = [n for _, n in decl]
        declared = {int(i): n for i, n in decl}
        body_start = first_nl + 1 if first_nl >= 0 else len(data)
        prism = True
    header_lines = data[:body_start].count(b"\n")
    body = data[body_start:]
    b = np.frombuffer(body, dtype=np.uint8)
    starts, ends, tok_line, _ = _tokens(body, b":" if prism else b"")
    labels = {n: np.zeros(0, dtype=np.int64) for n in names}
    if not len(starts):
        return labels, 0
    first_tok = np.ones(len(starts), dtype=bool)
    first_tok[1:] = tok_line[1:] != tok_line[:-1]
    ids = _parse_uints(b, starts[first_tok], ends[first_tok])
    if (ids < 0).any():
        bad = int(np.flatnonzero(ids < 0)[0])
        line = int(tok_line[np.flatnonzero(first_tok)[bad]]) + header_lines + 1
        raise _err(path, line, "a labelled line must start with a state id", "a non-negative integer")
    state_of_tok = ids[np.cumsum(first_tok) - 1]
    rest = ~first_tok
    if prism:
        # PRISM: ids must be followed by ':' (the tokeniser treats ':' as a separator)
        lab_idx = _parse_uints(b, starts[rest], ends[rest])
        bad_mask = ~np.isin(lab_idx, np.array(sorted(declared), dtype=np.int64))
        if bad_mask.any():
            bad = int(np.flatnonzero(rest)[np.flatnonzero(bad_mask)[0]])
            raise _err(path, int(tok_line[bad]) + header_lines + 1, "undeclared label index",
                       "one of " + ", ".join(str(k) for k in sorted(declared)))
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
            text = bytes(b[rs[bad_tok]:re_[bad_tok]]).decode("utf-8", "replace")
            raise _err(path, int(tok_line[bad]) + header_lines + 1, f"undeclared label {text!r}",
                       "one of " + ", ".join(names))
    n_seen = int(ids.max()) + 1
    if num_states is not None and n_seen > num_states:
        raise _err(path, None, f"state id {n_seen - 1} out of range", f"ids below {num_states}")
    return labels, n_seen


def read_sta(path: str | Path, num_states: int | None = None) -> tuple[dict[str, Any], int]:
    """Read a ``.sta`` file: observables (variable name -> numpy array of ints, or list of Python
    values for non-integer variables) and the number of states it describes."""
    path = Path(path)
    data = path.read_bytes()
    nl = data.find(b"\n")
    head = data[: nl if nl >= 0 else len(data)].decode("utf-8").strip()
    m = re.fullmatch(r"\((.*)\)", head)
    if not m:
        raise _err(path, 1, f"unrecognised header {head[:60]!r}", "'(var1,var2,...)'")
    names = [v.strip() for v in m.group(1).split(",")]
    body = data[nl + 1:] if nl >= 0 else b""
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
        raise _err(path, None, "state id out of range", f"ids 0..{n - 1}")
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
            m = re.fullmatch(r"\s*(\d+)\s*:\s*\((.*)\)\s*", line)
            if not m:
                raise _err(path, no, f"malformed valuation {line.strip()[:60]!r}", "'id:(v1,v2,...)'")
            vals = [_sta_value(v) for v in m.group(2).split(",")]
            if len(vals) != len(names):
                raise _err(path, no, f"{len(vals)} values for {len(names)} variables",
                           f"{len(names)} comma-separated values")
            rows[int(m.group(1))] = vals
    n = (max(rows) + 1 if rows else 0) if num_states is None else num_states
    out: dict[str, Any] = {}
    for j, name in enumerate(names):
        col: list[object] = [None] * n
        for i, vals in rows.items():
            if i >= n:
                raise _err(path, None, f"state id {i} out of range", f"ids 0..{n - 1}")
            col[i] = vals[j]
        out[name] = col
    return out, n


# ------------------------------------------------------------------------------ explicit models
def explicit_paths(
    path_or_prefix: str | Path | Sequence[str | Path],
) -> tuple[Path, Path | None, Path | None]:
    """Resolve ``(tra, lab, sta)`` from a prefix, a ``.tra``/``.lab``/``.sta`` path or a list of them."""
    if isinstance(path_or_prefix, str | Path):
        items = [Path(path_or_prefix)]
    else:
        items = [Path(p) for p in path_or_prefix]
    found: dict[str, Path] = {}
    for p in items:
        if p.suffix in (".tra", ".lab", ".sta"):
            found[p.suffix] = p
        else:
            found.setdefault(".tra", p.with_name(p.name + ".tra"))
    base = found.get(".tra") or found.get(".lab") or found.get(".sta")
    assert base is not None
    stem = base.with_suffix("")
    tra = found.get(".tra", stem.with_suffix(".tra"))
    if not tra.exists():
        raise FileNotFoundError(f"transition file not found: {tra}")
    lab = found.get(".lab", stem.with_suffix(".lab"))
    sta = found.get(".sta", stem.with_suffix(".sta"))
    return tra, (lab if lab.exists() else None), (sta if sta.exists() else None)


def read_explicit(path_or_prefix: str | Path | Sequence[str | Path], *, probabilities: bool = True,
                  sta: bool = True) -> Kripke:
    """Read a PRISM/Storm explicit model (``.tra`` + optional ``.lab`` / ``.sta``) as a :class:`Kripke`.

    Initial states: the ``init`` label (state 0 if absent). DTMC transitions carry one action
    ``step``; MDP choice ``c`` of a state becomes action ``choice [c]``. ``probabilities=False`` skips
    the probability column; ``sta=False`` skips the valuations."""
    tra, lab, sta_path = explicit_paths(path_or_prefix)
    t = read_tra(tra, probabilities=probabilities)
    labels_ids: dict[str, np.ndarray] = {}
    n = t["num_states"]
    n_edges = len(t["src"])
    n_from_edges = int(max(t["src"].max(), t["dst"].max())) + 1 if n_edges else 1
    n_lab = 0
    if lab is not None:
        labels_ids, n_lab = read_lab(lab, n)
    observables: dict[str, Any] = {}
    n_sta = 0
    if sta and sta_path is not None:
        observables, n_sta = read_sta(sta_path, n)
    if n is None:
        n = max(n_from_edges, n_lab, n_sta)
    elif n_from_edges > n:
        raise _err(tra, None, f"state id {n_from_edges - 1} out of range", f"ids below {n} (header)")
    for col in observables.values():
        if len(col) < n:
            raise _err(sta_path or tra, None, f"valuations cover {len(col)} states, the model has {n}")
    labels = {}
    for name, ids in labels_ids.items():
        arr = np.zeros(n, dtype=bool)
        arr[ids] = True
        labels[name] = arr
    initial = np.flatnonzero(labels["init"]) if "init" in labels and labels["init"].any() else np.array([0])
    itype = np.int32 if n < 2**31 - 1 else np.int64
    src = t["src"]
    dst = t["dst"].astype(itype)
    if t["kind"] == "mdp":
        choice = t["choice"]
        uniq_c, act = np.unique(choice, return_inverse=True)
        actions = tuple(Action("choice", None, None, str(int(c))) for c in uniq_c)
        act = act.astype(np.int32).reshape(-1)
    else:
        act = np.zeros(n_edges, dtype=np.int32)
        actions = (Action("step"),)
    order = None
    if n_edges > 1 and bool(np.any(src[1:] < src[:-1])):
        order = np.lexsort((dst, act, src))
        src, dst, act = src[order], dst[order], act[order]
    counts = np.bincount(src, minlength=n)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    prob = t["prob"]
    exact = t["prob_exact"]
    if order is not None:
        prob = None if prob is None else prob[order]
        exact = None if exact is None else [exact[i] for i in order.tolist()]
    if prob is not None and n_edges:
        _check_distributions(tra, src, act, prob, exact, len(actions), t["kind"])
    return Kripke(num_states=n, initial=initial.astype(np.int64), succ_ptr=ptr, succ_idx=dst,
                  edge_action=act, actions=actions, labels=labels, observables=observables,
                  edge_prob=prob, edge_prob_exact=exact, source=str(tra))


#: Tolerance for float probability sums (files written with ``repr`` floats sum to 1 within ~1e-15).
PROBABILITY_TOLERANCE = 1e-9


def _check_distributions(tra: str | Path, src: np.ndarray, act: np.ndarray, prob: np.ndarray,
                         exact: list[Fraction] | None, n_actions: int, kind: str) -> None:
    """Raise ``InputError`` naming the first state (and MDP choice) whose outgoing probabilities are
    negative or do not sum to 1 — exactly for rational files, within :data:`PROBABILITY_TOLERANCE`
    otherwise. A malformed distribution would silently corrupt every probability computed later."""
    if np.any(prob < 0):
        e = int(np.flatnonzero(prob < 0)[0])
        raise _err(tra, None, f"state {int(src[e])}: negative probability {float(prob[e])!r} on a transition",
                   "probabilities in [0, 1]")
    if kind != "mdp":
        totals = np.bincount(src, weights=prob)
        present = np.bincount(src) > 0
        bad = np.flatnonzero(present & (np.abs(totals - 1.0) > PROBABILITY_TOLERANCE))
        group_state = bad
        what = "its transitions"
    else:
        key = src.astype(np.int64) * (n_actions + 1) + act
        keys, inv = np.unique(key, return_inverse=True)
        totals = np.bincount(inv.reshape(-1), weights=prob)
        bad = np.flatnonzero(np.abs(totals - 1.0) > PROBABILITY_TOLERANCE)
        group_state = keys[bad] // (n_actions + 1) if len(bad) else bad
        what = "one of its choices"
    if exact is not None and kind != "mdp":
        sums: dict[int, Fraction] = {}
        for s_id, p in zip(src.tolist(), exact, strict=True):
            sums[s_id] = sums.get(s_id, Fraction(0)) + p
        wrong = sorted(s_id for s_id, total in sums.items() if total != 1)
        if wrong:
            raise _err(tra, None, f"state {wrong[0]}: the probabilities of its transitions sum to "
                       f"{sums[wrong[0]]}, not 1 ({len(wrong)} such state(s))", "a distribution per state")
        return
    if len(bad):
        raise _err(tra, None, f"state {int(group_state[0])}: the probabilities of {what} sum to "
                   f"{float(totals[bad[0]])!r}, not 1 ({len(bad)} such distribution(s))",
                   "a distribution per state (per choice for an MDP)")


def _write_rows(rows: Iterable[str], chunk: int = 1 << 16) -> Iterable[str]:
    buf: list[str] = []
    for r in rows:
        buf.append(r)
        if len(buf) >= chunk:
            yield "".join(buf)
            buf = []
    if buf:
        yield "".join(buf)


def _prob_text(kripke: Kripke, e: int) -> str:
    if kripke.edge_prob_exact is not None:
        p = kripke.edge_prob_exact[e]
        return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"
    if kripke.edge_prob is not None:
        return repr(float(kripke.edge_prob[e]))
    return ""


def write_explicit(
    kripke: Kripke, prefix: str | Path, *, flavor: str = "storm", sta: bool = True,
) -> list[Path]:
    """Write ``PREFIX.tra``, ``PREFIX.lab`` (labels, plus ``init`` for the initial states) and, when the
    structure has numeric observables and ``sta``, ``PREFIX.sta``. Returns the written paths.

    Boolean observables are written as labels of the same name, integer observables to ``.sta``
    (other observables have no place in the explicit format: use JSON to keep them).

    A structure whose states each use at most one action is written as a DTMC, else as an MDP whose
    choices are the actions of the state (in action-id order). A structure without probabilities gets
    the uniform distribution over each choice's successors (the DTMC whose support is the relation)."""
    if flavor not in ("storm", "prism"):
        raise ValueError("flavor must be 'storm' or 'prism'")
    prefix = Path(prefix)
    n = kripke.num_states
    src = kripke.edge_src
    act = np.asarray(kripke.edge_action)
    key = src * (len(kripke.actions) + 1) + act
    groups, first_idx, group_sizes = np.unique(key, return_index=True, return_counts=True)
    per_state_groups = np.bincount(src[first_idx], minlength=n)
    mdp = bool(len(per_state_groups) and per_state_groups.max() > 1)
    grp_of_edge = np.searchsorted(groups, key)
    choice_of_group = np.zeros(len(groups), dtype=np.int64)
    if len(groups):
        gsrc = src[first_idx]
        starts = np.searchsorted(gsrc, gsrc, side="left")
        choice_of_group = np.arange(len(groups)) - starts
    # probability text per edge: exact p/q, float repr (via a table of distinct values), or uniform
    if kripke.edge_prob_exact is not None:
        ptext: list[str] | np.ndarray = [_frac_text(Fraction(p)) for p in kripke.edge_prob_exact]
    elif kripke.edge_prob is not None:
        uniq, inv = np.unique(np.asarray(kripke.edge_prob, dtype=np.float64), return_inverse=True)
        ptext = np.array([repr(float(u)) for u in uniq], dtype=object)[inv.reshape(-1)]
    else:
        sizes = group_sizes[grp_of_edge] if len(groups) else np.zeros(0, dtype=np.int64)
        uniq_s, inv_s = np.unique(sizes, return_inverse=True)
        ptext = np.array([_frac_text(Fraction(1, int(u))) for u in uniq_s], dtype=object)[inv_s.reshape(-1)]
    order = np.lexsort((np.asarray(kripke.succ_idx), act, src))  # rows by (state, choice, target)
    cols: list[Any] = [src[order]]
    if mdp:
        cols.append(choice_of_group[grp_of_edge[order]])
    cols.append(np.asarray(kripke.succ_idx)[order])

    def rows() -> Iterable[str]:
        step = 1 << 16
        for a in range(0, len(order), step):
            sl = order[a:a + step]
            parts = [map(str, c[a:a + step].tolist()) for c in cols]
            parts.append([ptext[i] for i in sl.tolist()])
            yield "".join(" ".join(t) + "\n" for t in zip(*parts, strict=True))

    if flavor == "storm":
        header = "mdp\n" if mdp else "dtmc\n"
    else:
        header = f"{n} {len(groups)} {kripke.num_transitions}\n" if mdp else f"{n} {kripke.num_transitions}\n"
    tra = prefix.with_name(prefix.name + ".tra")
    write_atomic(tra, [header, *rows()])
    names = ["init", *sorted(k for k in kripke.labels if k != "init")]
    masks = {name: kripke.labels.get(name, np.zeros(n, dtype=bool)) for name in names}
    masks["init"] = kripke.initial_mask() | masks["init"]
    # boolean observables become labels too (the explicit format has no other place for them)
    for name in kripke.observables:
        if name in masks or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            continue
        values = kripke.observables[name]
        if _all_bools(values):
            names.append(name)
            masks[name] = np.asarray([bool(v) for v in values], dtype=bool)
    per_state: dict[int, list[int]] = {}
    for j, name in enumerate(names):
        for i in np.flatnonzero(masks[name]).tolist():
            per_state.setdefault(i, []).append(j)
    for name in names:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError(f"label {name!r} cannot be written in the explicit format")
    if flavor == "storm":
        head = "#DECLARATION\n" + " ".join(names) + "\n#END\n"
        body = (f"{i} {' '.join(names[j] for j in js)}\n" for i, js in sorted(per_state.items()))
    else:
        head = " ".join(f'{j}="{nm}"' for j, nm in enumerate(names)) + "\n"
        body = (f"{i}: {' '.join(map(str, js))}\n" for i, js in sorted(per_state.items()))
    lab = prefix.with_name(prefix.name + ".lab")
    write_atomic(lab, [head, *_write_rows(body)])
    out = [tra, lab]
    numeric = {k: v for k, v in kripke.observables.items() if _all_ints(v)}
    if sta and numeric and re.fullmatch(r"[A-Za-z_0-9,]*", ",".join(numeric)):
        cols = [np.asarray(v, dtype=np.int64) for v in numeric.values()]
        head = "(" + ",".join(numeric) + ")\n"
        body = (f"{i}:({','.join(str(int(c[i])) for c in cols)})\n" for i in range(n))
        sta_path = prefix.with_name(prefix.name + ".sta")
        write_atomic(sta_path, [head, *_write_rows(body)])
        out.append(sta_path)
    return out


def _frac_text(p: Fraction) -> str:
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


def _all_bools(values: Any) -> bool:
    if isinstance(values, np.ndarray):
        return values.dtype.kind == "b"
    return len(values) > 0 and all(isinstance(v, bool | np.bool_) for v in values)


def _all_ints(values: Any) -> bool:
    if isinstance(values, np.ndarray):
        return values.dtype.kind in "iu"
    return all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in values)


# ------------------------------------------------------------------------------ JSON
def _json_value(v: Any) -> object:
    if isinstance(v, list):
        return tuple(_json_value(x) for x in v)
    if isinstance(v, dict):
        if set(v) == {"set"}:
            return frozenset(_json_value(x) for x in v["set"])
        if set(v) == {"fraction"}:
            return Fraction(str(v["fraction"]))
        return tuple(sorted((k, _json_value(x)) for k, x in v.items()))
    if isinstance(v, float):
        return Fraction(repr(v))
    return v


def _to_json_value(v: object) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool) or v is None or isinstance(v, int | str):
        return v
    if isinstance(v, Fraction):
        return v.numerator if v.denominator == 1 else {"fraction": f"{v.numerator}/{v.denominator}"}
    if isinstance(v, float):
        return v
    if isinstance(v, set | frozenset):
        return {"set": sorted((_to_json_value(x) for x in v), key=lambda x: json.dumps(x, sort_keys=True))}
    if isinstance(v, tuple | list):
        return [_to_json_value(x) for x in v]
    return str(v)


def kripke_from_json(doc: Any, source: str = "<json>") -> Kripke:
    """Build a :class:`Kripke` from a parsed JSON document in the ``flcheck-kripke/1`` format."""

    def bad(where: str, message: str, expected: str | None = None) -> InputError:
        return InputError(f"{where}: {message}", Position(source), expected)

    if not isinstance(doc, dict):
        raise bad("document", "not a JSON object", '{"states": ..., "initial": ..., "transitions": ...}')
    fmt = doc.get("format", JSON_FORMAT)
    if fmt != JSON_FORMAT:
        raise bad("format", f"unsupported format {fmt!r}", repr(JSON_FORMAT))
    for key in ("states", "transitions"):
        if key not in doc:
            raise bad(key, "missing key", f"a '{key}' entry")
    states = doc["states"]
    names: list[str] | None = None
    observables: dict[str, list[object]] = {}
    if isinstance(states, int) and not isinstance(states, bool):
        n = states
    elif isinstance(states, list):
        n = len(states)
        names = []
        obs_names: set[str] = set()
        for i, st in enumerate(states):
            if not isinstance(st, dict):
                raise bad(f"states[{i}]", "not an object", '{"name": ..., "observables": {...}}')
            obs_names |= set(st.get("observables", {}))
        observables = {k: [None] * n for k in sorted(obs_names)}
        for i, st in enumerate(states):
            names.append(str(st.get("name", f"s{i}")))
            for k, v in st.get("observables", {}).items():
                observables[k][i] = _json_value(v)
    else:
        raise bad("states", "neither a count nor a list", "a number or a list of state objects")
    name_to_id = {nm: i for i, nm in enumerate(names)} if names else {}

    def sid(v: Any, where: str) -> int:
        if isinstance(v, str) and v in name_to_id:
            return name_to_id[v]
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n:
            return v
        raise bad(where, f"{v!r} is not a state", f"an id 0..{n - 1} or a state name")

    initial = [sid(v, f"initial[{i}]") for i, v in enumerate(doc.get("initial", [0]))]
    src: list[int] = []
    dst: list[int] = []
    act: list[int] = []
    probs: list[Fraction] = []
    any_prob = False
    action_ids: dict[str, int] = {}
    actions: list[Action] = []
    for e, tr in enumerate(doc["transitions"]):
        where = f"transitions[{e}]"
        p: Any = 1
        a = "step"
        if isinstance(tr, list) and len(tr) in (2, 3):
            s, t = tr[0], tr[1]
            if len(tr) == 3:
                p, any_prob = tr[2], True
        elif isinstance(tr, dict) and "from" in tr and "to" in tr:
            s, t = tr["from"], tr["to"]
            a = str(tr.get("action", "step"))
            if "probability" in tr:
                p, any_prob = tr["probability"], True
        else:
            raise bad(where, "malformed transition", '[src, dst], [src, dst, p] or {"from", "to", ...}')
        src.append(sid(s, where + ".from"))
        dst.append(sid(t, where + ".to"))
        try:
            probs.append(Fraction(str(p)) if not isinstance(p, bool) else Fraction("x"))
        except (ValueError, ZeroDivisionError):
            raise bad(where, f"probability {p!r} is not a number", "a number or 'p/q'") from None
        if a not in action_ids:
            action_ids[a] = len(actions)
            actions.append(Action(a))
        act.append(action_ids[a])
    labels: dict[str, np.ndarray] = {}
    for name, ids in (doc.get("labels") or {}).items():
        arr = np.zeros(n, dtype=bool)
        if not isinstance(ids, list):
            raise bad(f"labels.{name}", "not a list", "a list of state ids")
        for i, v in enumerate(ids):
            arr[sid(v, f"labels.{name}[{i}]")] = True
        labels[str(name)] = arr
    k = Kripke.from_edges(n, initial, src, dst, action=act, actions=tuple(actions) or (Action("step"),),
                          prob_exact=probs if any_prob else None, labels=labels,
                          observables=observables, state_names=names, source=source)
    try:
        k.validate()
    except ValueError as exc:
        raise InputError(str(exc), Position(source)) from None
    return k


def read_json(path: str | Path) -> Kripke:
    """Read a JSON Kripke file (see the module docstring); syntax errors name line and column."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", Position(str(path), exc.lineno, exc.colno)) from None
    return kripke_from_json(doc, str(path))


def kripke_to_json(kripke: Kripke) -> dict[str, Any]:
    """The ``flcheck-kripke/1`` document of a structure (observables and state names included)."""
    n = kripke.num_states
    states: Any = n
    if kripke.observables or kripke.state_names is not None:
        states = []
        for i in range(n):
            st: dict[str, Any] = {"name": kripke.state_name(i)}
            if kripke.observables:
                st["observables"] = {k: _to_json_value(v[i]) for k, v in kripke.observables.items()}
            states.append(st)
    src = kripke.edge_src
    trans: list[Any] = []
    for e in range(kripke.num_transitions):
        item: dict[str, Any] = {"from": int(src[e]), "to": int(kripke.succ_idx[e])}
        action = kripke.actions[int(kripke.edge_action[e])]
        if str(action) != "step":
            item["action"] = str(action)
        if kripke.edge_prob_exact is not None or kripke.edge_prob is not None:
            item["probability"] = _prob_text(kripke, e)
        trans.append(item)
    return {"format": JSON_FORMAT, "states": states, "initial": [int(i) for i in kripke.initial],
            "transitions": trans,
            "labels": {k: np.flatnonzero(v).tolist() for k, v in kripke.labels.items()}}


def write_json(kripke: Kripke, path: str | Path) -> Path:
    """Write the JSON Kripke format atomically."""
    write_atomic(path, json.dumps(kripke_to_json(kripke), indent=1) + "\n")
    return Path(path)


# ------------------------------------------------------------------------------ DOT
def to_dot(kripke: Kripke, *, max_states: int = 5000, highlight: np.ndarray | None = None) -> str:
    """Graphviz DOT text: states labelled with their name and true labels, initial states bold, edges
    with their action (and probability). Raises ``ValueError`` above ``max_states`` states."""
    n = kripke.num_states
    if n > max_states:
        raise ValueError(f"{n} states is too many for DOT output (max_states={max_states})")

    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    init = kripke.initial_mask()
    lines = ["digraph kripke {", "  node [shape=ellipse];"]
    for i in range(n):
        labs = [k for k, v in kripke.labels.items() if v[i]]
        parts = [kripke.state_name(i)] + ([",".join(labs)] if labs else [])
        attrs = ["label=" + "\\n".join(q(part) for part in parts).replace('"\\n"', "\\n")]
        if init[i]:
            attrs.append("penwidth=2.5")
        if highlight is not None and highlight[i]:
            attrs.append("style=filled, fillcolor=lightblue")
        lines.append(f"  {i} [{', '.join(attrs)}];")
    src = kripke.edge_src
    for e in range(kripke.num_transitions):
        text = str(kripke.actions[int(kripke.edge_action[e])])
        p = _prob_text(kripke, e)
        if p:
            text += f" : {p}"
        lines.append(f"  {int(src[e])} -> {int(kripke.succ_idx[e])} [label={q(text)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_dot(kripke: Kripke, path: str | Path, **kwargs: Any) -> Path:
    """Write :func:`to_dot` atomically."""
    write_atomic(path, to_dot(kripke, **kwargs))
    return Path(path)


def read_model_file(path: str | Path, *, probabilities: bool = True) -> Kripke:
    """Read a ``.json`` Kripke file or an explicit model (prefix or any of its files)."""
    p = Path(path)
    if p.suffix == ".json":
        return read_json(p)
    return read_explicit(p, probabilities=probabilities)
