"""PRISM/Storm explicit models as Kripke structures: read (``.tra`` + optional ``.lab`` and ``.sta``,
probabilities checked) and write.

The file formats are described in :mod:`checker.io.prism_files`, which reads each file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from checker.io.files import write_atomic
from checker.io.prism_files import MAX_EXPLICIT_STATES, data_line, input_error, read_lab, read_sta, read_tra
from checker.mc.kripke import Kripke
from checker.mc.ts import Action


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
    ``step``; MDP choice ``c`` of a state becomes action ``choice [c]``. The probabilities are always
    checked (finite, non-negative, a distribution per state or MDP choice; an error names the file and
    line); ``probabilities=False`` leaves them out of the structure (CTL needs only the graph).
    ``sta=False`` skips the valuations."""
    tra, lab, sta_path = explicit_paths(path_or_prefix)
    t = read_tra(tra)
    labels_ids: dict[str, np.ndarray] = {}
    n = t["num_states"]
    n_edges = len(t["src"])
    n_from_edges = int(max(t["src"].max(), t["dst"].max())) + 1 if n_edges else 1
    if n is not None and n > MAX_EXPLICIT_STATES:
        raise input_error(tra, t["header_line"], f"the header announces {n} states",
                          f"at most {MAX_EXPLICIT_STATES} states")
    n_lab = 0
    if lab is not None:  # with a header, labels only on its states
        labels_ids, n_lab = read_lab(lab, n)
    # Without a state count (Storm), the states are 0 .. the largest id of the transitions or labels
    # (a labelled state after the last transition is a deadlock): an id beyond the most states an
    # explicit file may have is refused before allocating.
    limit = MAX_EXPLICIT_STATES if n is None else n
    if n_from_edges > limit:
        row = int(np.flatnonzero((t["src"] >= limit) | (t["dst"] >= limit))[0])
        reason = "(header)" if n is not None else "(the most states of an explicit model)"
        raise input_error(tra, data_line(tra, t["header_line"], row),
                          f"state id {max(int(t['src'][row]), int(t['dst'][row]))} out of range",
                          f"ids below {limit} {reason}")
    if n_lab > limit:
        assert lab is not None
        raise input_error(lab, None, f"state id {n_lab - 1} out of range",
                          f"ids below {limit} (the most states of an explicit model)")
    if n is None:
        n = max(n_from_edges, n_lab)
    observables: dict[str, Any] = {}
    if sta and sta_path is not None:
        observables, _ = read_sta(sta_path, n)
    for col in observables.values():
        if len(col) < n:
            raise input_error(sta_path or tra, None, f"valuations cover {len(col)} states, the model has {n}")
    labels = {}
    for name, ids in labels_ids.items():
        arr = np.zeros(n, dtype=bool)
        arr[ids] = True
        labels[name] = arr
    initial = np.flatnonzero(labels["init"]) if "init" in labels and labels["init"].any() else np.array([0])
    itype = np.int32 if n < 2**31 - 1 else np.int64
    src = t["src"]
    dst = t["dst"].astype(itype)
    act: np.ndarray
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
    if n_edges:
        rows = np.arange(n_edges) if order is None else order
        _check_distributions(tra, src, act, prob, exact, len(actions), t["kind"],
                             lambda edges: data_line(tra, t["header_line"], int(rows[edges].min())))
    if not probabilities:
        prob, exact = None, None
    return Kripke(num_states=n, initial=initial.astype(np.int64), succ_ptr=ptr, succ_idx=dst,
                  edge_action=act, actions=actions, labels=labels, observables=observables,
                  edge_prob=prob, edge_prob_exact=exact, source=str(tra))


#: Tolerance for float probability sums (files written with ``repr`` floats sum to 1 within ~1e-15).
PROBABILITY_TOLERANCE = 1e-9


def _check_distributions(tra: Path, src: np.ndarray, act: np.ndarray, prob: np.ndarray,
                         exact: list[Fraction] | None, n_actions: int, kind: str,
                         line_of: Callable[[np.ndarray], int]) -> None:
    """Raise ``InputError`` naming the first state (and MDP choice) whose outgoing probabilities are
    negative or do not sum to 1 — exactly for rational files, within :data:`PROBABILITY_TOLERANCE`
    otherwise — and the line of its first transition (``line_of`` maps edge ids, in the order of
    ``src``, to that line). A malformed distribution would silently corrupt every probability computed
    later."""
    if np.any(prob < 0):
        e = int(np.flatnonzero(prob < 0)[0])
        raise input_error(
            tra,
            line_of(np.array([e])),
            f"state {int(src[e])}: negative probability {float(prob[e])!r} on a transition",
            "probabilities in [0, 1]",
        )
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
            raise input_error(
                tra,
                line_of(np.flatnonzero(src == wrong[0])),
                f"state {wrong[0]}: the probabilities of its transitions sum to "
                f"{sums[wrong[0]]}, not 1 ({len(wrong)} such state(s))",
                "a distribution per state",
            )
        return
    if len(bad):
        group = src == group_state[0]
        if kind == "mdp":
            group &= act == keys[bad[0]] % (n_actions + 1)
        raise input_error(
            tra,
            line_of(np.flatnonzero(group)),
            f"state {int(group_state[0])}: the probabilities of {what} sum to "
            f"{float(totals[bad[0]])!r}, not 1 ({len(bad)} such distribution(s))",
            "a distribution per state (per choice for an MDP)",
        )


def _write_rows(rows: Iterable[str], chunk: int = 1 << 16) -> Iterable[str]:
    buf: list[str] = []
    for r in rows:
        buf.append(r)
        if len(buf) >= chunk:
            yield "".join(buf)
            buf = []
    if buf:
        yield "".join(buf)


def write_explicit(
    kripke: Kripke,
    prefix: str | Path,
    *,
    flavor: str = "storm",
    sta: bool = True,
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
        ptext: list[str] | np.ndarray = [str(Fraction(p)) for p in kripke.edge_prob_exact]
    elif kripke.edge_prob is not None:
        uniq, inv = np.unique(np.asarray(kripke.edge_prob, dtype=np.float64), return_inverse=True)
        ptext = np.array([repr(float(u)) for u in uniq], dtype=object)[inv.reshape(-1)]
    else:
        sizes = group_sizes[grp_of_edge] if len(groups) else np.zeros(0, dtype=np.int64)
        uniq_s, inv_s = np.unique(sizes, return_inverse=True)
        ptext = np.array([str(Fraction(1, int(u))) for u in uniq_s], dtype=object)[inv_s.reshape(-1)]
    order = np.lexsort((np.asarray(kripke.succ_idx), act, src))  # rows by (state, choice, target)
    cols: list[Any] = [src[order]]
    if mdp:
        cols.append(choice_of_group[grp_of_edge[order]])
    cols.append(np.asarray(kripke.succ_idx)[order])

    def rows() -> Iterable[str]:
        step = 1 << 16
        for a in range(0, len(order), step):
            sl = order[a : a + step]
            parts: list[Iterable[str]] = [map(str, c[a : a + step].tolist()) for c in cols]
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


def _all_bools(values: Any) -> bool:
    if isinstance(values, np.ndarray):
        return values.dtype.kind == "b"
    return len(values) > 0 and all(isinstance(v, bool | np.bool_) for v in values)


def _all_ints(values: Any) -> bool:
    if isinstance(values, np.ndarray):
        return values.dtype.kind in "iu"
    return all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in values)
