"""The JSON Kripke format (``flcheck-kripke/1``): read and write.

JSON Kripke format, and DOT output.

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

Written files are strict JSON (:func:`checker.render.dumps`).
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from checker.errors import InputError, Position
from checker.io.files import write_atomic
from checker.io.prism_files import declared_states_problem
from checker.mc.kripke import Kripke
from checker.mc.ts import Action
from checker.render import dumps

JSON_FORMAT = "flcheck-kripke/1"


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


def kripke_from_json(doc: Any, source: str = "<json>", *, max_memory_mb: float | None = None,
                     text: str | None = None) -> Kripke:
    """Build a :class:`Kripke` from a parsed JSON document in the ``flcheck-kripke/1`` format. An empty
    ``initial`` list is refused (no verdict on a structure without initial states); so is a state count
    :func:`checker.io.prism_files.declared_states_problem` refuses (checked before allocating). Given the
    document's ``text``, an error names the line of the key it is about (:func:`key_line`)."""

    def bad(where: str, message: str, expected: str | None = None) -> InputError:
        return InputError(f"{where}: {message}", Position(source, key_line(text, where)), expected)

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
        transitions = doc["transitions"]
        m = len(transitions) if isinstance(transitions, list) else 0
        if n < 0:
            raise bad("states", f"{n} states", "a non-negative count")
        named = min(n, 2 * m + 1)  # at most (each transition names two states, the initial one more)
        problem = declared_states_problem(n, m, named, max_memory_mb)
        if problem:
            raise bad("states", problem, "a state count the transitions use")
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

    initial_ids = doc.get("initial", [0])
    if not isinstance(initial_ids, list) or not initial_ids:
        raise bad("initial", "no initial state" if initial_ids == [] else "not a list",
                  "a non-empty list of state ids (or no 'initial' key: then state 0)")
    initial = [sid(v, f"initial[{i}]") for i, v in enumerate(initial_ids)]
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
            if isinstance(p, bool) or not str(p).isascii():  # Fraction() reads '١/٢' as 1/2
                raise ValueError
            probs.append(Fraction(str(p)))
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
        raise InputError(str(exc), Position(source, 1 if text is not None else None)) from None
    return k


def key_line(text: str | None, where: str) -> int | None:
    """The line of the first ``"KEY":`` of a JSON text, KEY the top-level key that ``where`` starts with
    (``"initial[0]"`` -> ``initial``): where an error about it points (``None`` without the text).

    >>> key_line('{"states": 2,\\n "initial": []}', "initial")
    2
    """
    if text is None:
        return None
    key = re.match(r"[^.\[]*", where)
    found = re.search(r'"' + re.escape(key.group() if key else where) + r'"\s*:', text)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def read_json(path: str | Path, *, max_memory_mb: float | None = None) -> Kripke:
    """Read a JSON Kripke file (see the module docstring); syntax errors name line and column."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", Position(str(path), exc.lineno, exc.colno)) from None
    return kripke_from_json(doc, str(path), max_memory_mb=max_memory_mb, text=text)


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
            item["probability"] = str(kripke.probability(e))
        trans.append(item)
    return {"format": JSON_FORMAT, "states": states, "initial": [int(i) for i in kripke.initial],
            "transitions": trans,
            "labels": {k: np.flatnonzero(v).tolist() for k, v in kripke.labels.items()}}


def write_json(kripke: Kripke, path: str | Path) -> Path:
    """Write the JSON Kripke format atomically."""
    write_atomic(path, dumps(kripke_to_json(kripke), indent=1) + "\n")
    return Path(path)

