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

from checker.io.files import PathLike, settle_unit, write_unit
from checker.io.prism_files import (
    data_line,
    declared_states_problem,
    input_error,
    read_lab,
    read_sta,
    read_tra,
)
from checker.mc.kripke import Kripke
from checker.mc.ts import Action

#: The manifest of an explicit model written by flcheck: ``PREFIX.sha256`` (``sha256sum`` format), the
#: SHA-256 of each of its files (:func:`checker.io.files.write_unit`).
MANIFEST_SUFFIX = ".sha256"


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
    members = _settled_members({p.with_suffix("") for p in found.values()} | {stem})
    tra = found.get(".tra", stem.with_suffix(".tra"))
    if not tra.exists():
        raise FileNotFoundError(f"transition file not found: {tra}")
    lab = found.get(".lab", stem.with_suffix(".lab"))
    sta = found.get(".sta", stem.with_suffix(".sta"))

    def present(path: Path, suffix: str) -> bool:
        """Found beside the others: a file the set's manifest does not list is not part of the set."""
        listed = members.get(stem)
        return path.exists() and (suffix in found or listed is None or path.name in listed)

    return tra, (lab if present(lab, ".lab") else None), (sta if present(sta, ".sta") else None)


def _settled_members(stems: set[Path]) -> dict[Path, dict[str, str] | None]:
    """The manifest of each prefix (``PREFIX.sha256``, ``None`` where there is none), each set first
    brought to the state its manifest records (:func:`checker.io.files.settle_unit`): an interrupted
    write is completed, a set that matches its manifest in no way is refused."""
    return {stem: settle_unit(stem.with_name(stem.name + MANIFEST_SUFFIX)) for stem in sorted(stems)}


def read_explicit(path_or_prefix: str | Path | Sequence[str | Path], *, probabilities: bool = True,
                  sta: bool = True, max_memory_mb: float | None = None) -> Kripke:
    """Read a PRISM/Storm explicit model (``.tra`` + optional ``.lab`` / ``.sta``) as a :class:`Kripke`.

    States: ``0 .. N-1`` from a PRISM header, else (Storm) ``0 ..`` the largest id the transitions
    name, as Storm counts them; a label or valuation on any other state is an error naming its line.
    Initial states: the ``init`` label (state 0 if absent). DTMC transitions carry one action
    ``step``; MDP choice ``c`` of a state becomes action ``choice [c]``, or ``NAME [c]`` when Storm's
    fifth field names it. Transitions of probability 0 are dropped, as Storm and PRISM do (a state
    whose lines all have probability 0 is a deadlock; ``stats["zero_probability_transitions"]``
    counts them, except the zero self-loops naming a deadlock state, ``stats["deadlock_lines"]``).
    A CTMC's rates become its embedded DTMC ``P(s, t) = R(s, t) / E(s)`` (untimed properties agree;
    ``stats["ctmc"] = 1``). The probabilities are always checked (finite, non-negative, a distribution
    per state or MDP choice; an error names the file and line); ``probabilities=False`` leaves them
    out of the structure (CTL needs only the graph). ``sta=False`` skips the valuations.

    Refused before anything of the model's size is allocated: a state count (the header's, or the
    largest id plus one) that :func:`checker.io.prism_files.declared_states_problem` refuses (too many
    states, most of them named by no transition, or above ``max_memory_mb``); an id at or beyond the
    header's count; a transition given twice (Storm refuses it too); an empty ``init`` label. A set
    written by flcheck comes with a manifest (``PREFIX.sha256``): an interrupted write is completed
    first, and a set that matches its manifest in no way is refused (an :class:`InputError`)."""
    tra, lab, sta_path = explicit_paths(path_or_prefix)
    t = read_tra(tra)
    labels_ids: dict[str, np.ndarray] = {}
    n = t["num_states"]
    n_edges = len(t["src"])
    n_from_edges = int(max(t["src"].max(), t["dst"].max())) + 1 if n_edges else 1
    if n is not None and n_from_edges > n:  # an id at or beyond the header's state count
        row = int(np.flatnonzero((t["src"] >= n) | (t["dst"] >= n))[0])
        raise input_error(tra, data_line(tra, t["header_line"], row),
                          f"state id {max(int(t['src'][row]), int(t['dst'][row]))} out of range",
                          f"ids below {n} (header)")
    _check_state_count(tra, t, n if n is not None else n_from_edges, max_memory_mb)
    _check_duplicates(tra, t)
    states_text = "the header's state count" if n is not None else f"the states that {tra.name} names"
    if n is None:
        n = n_from_edges
    if lab is not None:
        labels_ids, _ = read_lab(lab, n, states_text)
    observables: dict[str, Any] = {}
    if sta and sta_path is not None:
        observables, _ = read_sta(sta_path, n)
    labels = {}
    for name, ids in labels_ids.items():
        arr = np.zeros(n, dtype=bool)
        arr[ids] = True
        labels[name] = arr
    initial = np.flatnonzero(labels["init"]) if "init" in labels and labels["init"].any() else np.array([0])
    src, dst, prob, exact, choice, names, dropped = _positive_transitions(t)
    # a zero self-loop on a state without another line is how Storm files name a deadlock state
    markers = len(np.setdiff1d(t["src"][(t["src"] == t["dst"])], src)) if dropped else 0
    stats: dict[str, float] = {"zero_probability_transitions": float(dropped - markers),
                               "deadlock_lines": float(markers)}
    if t["kind"] == "ctmc":
        if len(prob) and prob.min() < 0:
            row = int(t["kept"][int(np.flatnonzero(prob < 0)[0])])
            raise input_error(tra, data_line(tra, t["header_line"], row), "negative rate", "a rate >= 0")
        stats["ctmc"] = 1.0
        prob, exact = _embedded_chain(src, prob, exact, n)
    n_edges = len(src)
    itype = np.int32 if n < 2**31 - 1 else np.int64
    dst = dst.astype(itype)
    act: np.ndarray
    if t["kind"] == "mdp":
        actions, act = _mdp_actions(src, choice, names)
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
    if order is not None:
        prob = None if prob is None else prob[order]
        exact = None if exact is None else [exact[i] for i in order.tolist()]
    if n_edges and t["kind"] != "ctmc":
        rows = t["kept"] if order is None else t["kept"][order]
        _check_distributions(tra, src, act, prob, exact, len(actions), t["kind"],
                             lambda edges: data_line(tra, t["header_line"], int(rows[edges].min())))
    if not probabilities:
        prob, exact = None, None
    return Kripke(num_states=n, initial=initial.astype(np.int64), succ_ptr=ptr, succ_idx=dst,
                  edge_action=act, actions=actions, labels=labels, observables=observables,
                  edge_prob=prob, edge_prob_exact=exact, source=str(tra), stats=stats)


def _check_state_count(tra: Path, t: dict[str, Any], n: int, max_memory_mb: float | None) -> None:
    """Refuse, before allocating, a state count the file may not declare (the header's line, or the line
    naming the largest id)."""
    src, dst = t["src"], t["dst"]
    named = len(np.union1d(src, dst)) if n > 1_000_000 else n  # cheap unless the count is large
    problem = declared_states_problem(n, len(src), named, max_memory_mb)
    if problem is None:
        return
    if t["num_states"] is not None or not len(src):
        raise input_error(tra, t["header_line"], f"the header announces {n} states: {problem}",
                          "a state count the model's transitions use")
    row = int(np.flatnonzero((src == n - 1) | (dst == n - 1))[0])
    raise input_error(tra, data_line(tra, t["header_line"], row), f"state id {n - 1} out of range: {problem}",
                      "dense state ids 0, 1, 2, ... (the states are 0 .. the largest id)")


def _check_duplicates(tra: Path, t: dict[str, Any]) -> None:
    """Refuse a transition given twice (the same source, MDP choice and target; Storm refuses it too),
    naming the line of the second one and of the first."""
    row = first_repeat(t["src"], t.get("choice"), t["dst"])
    if row is None:
        return
    same = (t["src"] == t["src"][row]) & (t["dst"] == t["dst"][row])
    what = f"{int(t['src'][row])} -> {int(t['dst'][row])}"
    if t.get("choice") is not None:
        same &= t["choice"] == t["choice"][row]
        what = f"{int(t['src'][row])} choice {int(t['choice'][row])} -> {int(t['dst'][row])}"
    first = int(np.flatnonzero(same)[0])
    raise input_error(tra, data_line(tra, t["header_line"], row),
                      f"the transition {what} is given twice (first on line "
                      f"{data_line(tra, t['header_line'], first)})", "each transition once")


def first_repeat(src: np.ndarray, choice: np.ndarray | None, dst: np.ndarray) -> int | None:
    """The first row (in file order) that repeats an earlier row's ``(src, choice, dst)``, or ``None``.

    >>> first_repeat(np.array([0, 0, 1, 0]), None, np.array([1, 2, 1, 1]))
    3
    >>> first_repeat(np.array([0, 0]), np.array([0, 1]), np.array([1, 1])) is None
    True
    """
    if len(src) < 2:
        return None
    cols = [src, dst] if choice is None else [src, choice, dst]
    same = _equal_neighbours(cols)
    if _rows_sorted(cols):  # flcheck and Storm write rows in order: equal rows are neighbours
        return int(np.flatnonzero(same)[0]) + 1 if same.any() else None
    order = np.lexsort(cols[::-1])  # stable: equal rows keep their file order
    same = _equal_neighbours([c[order] for c in cols])
    return int(order[1:][same].min()) if same.any() else None


def _equal_neighbours(cols: list[np.ndarray]) -> np.ndarray:
    """``same[i]``: row ``i + 1`` equals row ``i`` in every column."""
    same = np.ones(len(cols[0]) - 1, dtype=bool)
    for c in cols:
        same &= c[1:] == c[:-1]
    return same


def _rows_sorted(cols: list[np.ndarray]) -> bool:
    """Whether the rows (one value per column of ``cols``) are in lexicographic order."""
    smaller = np.zeros(len(cols[0]) - 1, dtype=bool)
    equal = np.ones(len(cols[0]) - 1, dtype=bool)
    for c in cols:
        smaller |= equal & (c[:-1] < c[1:])
        equal &= c[:-1] == c[1:]
    return bool(np.all(smaller | equal))


def _positive_transitions(t: dict[str, Any]) -> tuple[Any, ...]:
    """The transitions of positive probability of a :func:`read_tra` result (``t["kept"]``: their
    rows in the file) and how many were dropped. A negative probability is kept (the distribution
    check reports it with its line)."""
    prob, exact = t["prob"], t["prob_exact"]
    keep = prob != 0 if exact is None else np.array([p != 0 for p in exact], dtype=bool)
    rows = np.flatnonzero(keep) if len(keep) else np.zeros(0, dtype=np.int64)
    t["kept"] = rows
    dropped = len(keep) - len(rows)
    choice = t.get("choice")
    names = t["action_names"]
    if dropped:
        exact = None if exact is None else [exact[i] for i in rows.tolist()]
        choice = None if choice is None else choice[rows]
        names = None if names is None else [names[i] for i in rows.tolist()]
        return t["src"][rows], t["dst"][rows], prob[rows], exact, choice, names, dropped
    return t["src"], t["dst"], prob, exact, choice, names, 0


def _embedded_chain(src: np.ndarray, rates: np.ndarray, exact: list[Fraction] | None,
                    n: int) -> tuple[np.ndarray, list[Fraction] | None]:
    """The embedded DTMC of a CTMC: each rate divided by its state's exit rate ``E(s) = Σ_t R(s, t)``."""
    if exact is not None:
        totals: dict[int, Fraction] = {}
        for s_id, r in zip(src.tolist(), exact, strict=True):
            totals[s_id] = totals.get(s_id, Fraction(0)) + r
        exact = [r / totals[s_id] for s_id, r in zip(src.tolist(), exact, strict=True)]
        return np.array([float(p) for p in exact], dtype=np.float64), exact
    exit_rate = np.bincount(src, weights=rates, minlength=n)
    return rates / exit_rate[src], None


def _mdp_actions(src: np.ndarray, choice: np.ndarray,
                 names: list[str | None] | None) -> tuple[tuple[Action, ...], np.ndarray]:
    """The actions of an MDP's transitions: one per (choice index, Storm action name), reading
    ``NAME [c]`` (``choice [c]`` without a name). Any line of a choice may carry its name."""
    if names is None:
        uniq_c, act = np.unique(choice, return_inverse=True)
        plain = tuple(Action("choice", None, None, str(int(c))) for c in uniq_c)
        return plain, act.astype(np.int32).reshape(-1)
    group_name: dict[tuple[int, int], str] = {}
    for s_id, c, name in zip(src.tolist(), choice.tolist(), names, strict=True):
        if name is not None:
            group_name.setdefault((s_id, c), name)
    keys = [(c, group_name.get((s_id, c), "")) for s_id, c in zip(src.tolist(), choice.tolist(), strict=True)]
    table: dict[tuple[int, str], int] = {}
    act = np.array([table.setdefault(k, len(table)) for k in keys], dtype=np.int32)
    actions = tuple(Action(name or "choice", None, None, str(c)) for c, name in table)
    return actions, act


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
    inputs: Iterable[PathLike] = (),
) -> list[Path]:
    """Write ``PREFIX.tra``, ``PREFIX.lab`` (labels, plus ``init`` for the initial states) and, when the
    structure has numeric observables and ``sta``, ``PREFIX.sta``, as one unit with the manifest
    ``PREFIX.sha256`` (:func:`checker.io.files.write_unit`: an interrupted write leaves the old set or
    the new one, never a mix that :func:`read_explicit` would load). Returns the written paths (the
    manifest not included). No file is written over one of ``inputs``; an older ``PREFIX.sta`` that the
    new set does not have is removed with it.

    Boolean observables are written as labels of the same name, integer observables to ``.sta``
    (other observables have no place in the explicit format: use JSON to keep them).

    A structure whose states each use at most one action is written as a DTMC, else as an MDP whose
    choices are the actions of the state (in action-id order), each line naming its action's rule in
    the fifth field when that is one word. Exact probabilities are written as ``p/q`` in the PRISM
    flavour (read back exactly by :func:`read_explicit`) and as decimals in the Storm flavour (Storm
    reads no ``p/q``; :func:`decimal_text`). A structure without probabilities gets the uniform
    distribution over each choice's successors (the DTMC whose support is the relation). Storm flavour:
    a deadlock state gets the line ``s s 0`` (``s 0 s 0``), since Storm counts the states its
    transitions name and needs a line for each; the readers (Storm's and :func:`read_explicit`) keep
    such a state as a deadlock."""
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
    text_of: Callable[[Fraction], str] = str if flavor == "prism" else decimal_text  # Storm reads no p/q
    if kripke.edge_prob_exact is not None:
        ptext: list[str] | np.ndarray = [text_of(Fraction(p)) for p in kripke.edge_prob_exact]
    elif kripke.edge_prob is not None:
        uniq, inv = np.unique(np.asarray(kripke.edge_prob, dtype=np.float64), return_inverse=True)
        ptext = np.array([repr(float(u)) for u in uniq], dtype=object)[inv.reshape(-1)]
    else:
        sizes = group_sizes[grp_of_edge] if len(groups) else np.zeros(0, dtype=np.int64)
        uniq_s, inv_s = np.unique(sizes, return_inverse=True)
        ptext = np.array([text_of(Fraction(1, int(u))) for u in uniq_s], dtype=object)[inv_s.reshape(-1)]
    order = np.lexsort((np.asarray(kripke.succ_idx), act, src))  # rows by (state, choice, target)
    row_src = src[order]
    row_dst = np.asarray(kripke.succ_idx, dtype=np.int64)[order]
    row_choice = choice_of_group[grp_of_edge[order]] if mdp else None
    row_p = np.asarray(ptext, dtype=object)[order]
    action_names = np.array([_action_field(a) for a in kripke.actions], dtype=object)
    row_name = action_names[act[order]] if mdp and any(action_names) else None
    if flavor == "storm":
        # Storm counts the states the transitions name and needs a line for each: a deadlock gets a
        # zero-probability self-loop, which Storm keeps as an empty row and every reader drops
        dead = np.flatnonzero(np.bincount(src, minlength=n) == 0)
        if len(dead):
            row_src = np.concatenate([row_src, dead])
            row_dst = np.concatenate([row_dst, dead])
            row_p = np.concatenate([row_p, np.full(len(dead), "0", dtype=object)])
            if row_choice is not None:
                row_choice = np.concatenate([row_choice, np.zeros(len(dead), dtype=np.int64)])
            if row_name is not None:
                row_name = np.concatenate([row_name, np.full(len(dead), "", dtype=object)])
            by_state = np.argsort(row_src, kind="stable")
            row_src, row_dst, row_p = row_src[by_state], row_dst[by_state], row_p[by_state]
            row_choice = None if row_choice is None else row_choice[by_state]
            row_name = None if row_name is None else row_name[by_state]
    cols: list[Any] = [row_src] if row_choice is None else [row_src, row_choice]
    cols.append(row_dst)

    def rows() -> Iterable[str]:
        step = 1 << 16
        for a in range(0, len(row_src), step):
            parts: list[Iterable[str]] = [map(str, c[a : a + step].tolist()) for c in cols]
            parts.append(row_p[a : a + step].tolist())
            if row_name is None:
                yield "".join(" ".join(t) + "\n" for t in zip(*parts, strict=True))
            else:
                parts.append(row_name[a : a + step].tolist())
                yield "".join(" ".join(t).rstrip() + "\n" for t in zip(*parts, strict=True))

    if flavor == "storm":
        header = "mdp\n" if mdp else "dtmc\n"
    else:
        header = f"{n} {len(groups)} {len(row_src)}\n" if mdp else f"{n} {len(row_src)}\n"
    tra = prefix.with_name(prefix.name + ".tra")
    files: dict[Path, Any] = {tra: (chunk for part in ([header], rows()) for chunk in part)}
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
    files[lab] = (chunk for part in ([head], _write_rows(body)) for chunk in part)
    numeric = {k: v for k, v in kripke.observables.items() if _all_ints(v)}
    if sta and numeric and re.fullmatch(r"[A-Za-z_0-9,]*", ",".join(numeric)):
        sta_cols = [np.asarray(v, dtype=np.int64) for v in numeric.values()]
        head = "(" + ",".join(numeric) + ")\n"
        body = (f"{i}:({','.join(str(int(c[i])) for c in sta_cols)})\n" for i in range(n))
        files[prefix.with_name(prefix.name + ".sta")] = (
            chunk for part in ([head], _write_rows(body)) for chunk in part)
    sta_path = prefix.with_name(prefix.name + ".sta")
    # the set replaces PREFIX.*: an older PREFIX.sta beside it would be read as part of it (Storm, PRISM,
    # flcheck without the manifest), so it goes with the commit
    stale = [sta_path] if sta_path not in files and sta_path.exists() else []
    return write_unit(files, manifest=prefix.with_name(prefix.name + MANIFEST_SUFFIX), remove=stale,
                      inputs=inputs)


def decimal_text(p: Fraction) -> str:
    """``p`` as a decimal: exact when its denominator is ``2^a 5^b`` (``3/8`` -> ``0.375``), else the
    shortest float that reads back as ``float(p)`` (Storm's explicit parser reads no ``p/q``).

    >>> decimal_text(Fraction(3, 8)), decimal_text(Fraction(1, 3)), decimal_text(Fraction(2))
    ('0.375', '0.3333333333333333', '2')
    """
    if p.denominator == 1:
        return str(p.numerator)
    rest, digits = p.denominator, 0
    for prime in (2, 5):
        while rest % prime == 0:
            rest //= prime
    if rest == 1:
        while (p * 10**digits).denominator != 1:
            digits += 1
        if digits <= 40:
            scaled = p.numerator * 10**digits // p.denominator
            sign = "-" if scaled < 0 else ""
            whole, frac = divmod(abs(scaled), 10**digits)
            return f"{sign}{whole}.{frac:0{digits}d}"
    return repr(float(p))


def _action_field(action: Action) -> str:
    """The fifth field of an MDP line naming ``action`` (Storm/PRISM action labels are one word):
    its rule when that is a name other than the reader's unnamed ``choice``, else empty."""
    rule = action.rule
    return rule if rule != "choice" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", rule) else ""


def _all_bools(values: Any) -> bool:
    if isinstance(values, np.ndarray):
        return values.dtype.kind == "b"
    return len(values) > 0 and all(isinstance(v, bool | np.bool_) for v in values)


def _all_ints(values: Any) -> bool:
    if isinstance(values, np.ndarray):
        return values.dtype.kind in "iu"
    return all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in values)
