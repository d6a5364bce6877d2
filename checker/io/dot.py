"""Graphviz DOT output of Kripke structures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from checker.io.files import write_atomic
from checker.mc.kripke import Kripke


def to_dot(kripke: Kripke, *, max_states: int = 5000, highlight: np.ndarray | None = None) -> str:
    """Graphviz DOT text: states labelled with their name and true labels, initial states bold, edges
    with their action (and probability). Raises ``ValueError`` above ``max_states`` states."""
    n = kripke.num_states
    if n > max_states:
        raise ValueError(f"{n} states is too many for DOT output (max_states={max_states})")

    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    init = kripke.initial_mask()
    lines = ["digraph kripke {", "  node [shape=ellipse];"]
    for i in range(n):
        labs = [k for k, v in kripke.labels.items() if v[i]]
        parts = [kripke.state_name(i)] + ([",".join(labs)] if labs else [])
        attrs = ["label=" + "\\n".join(quoted(part) for part in parts).replace('"\\n"', "\\n")]
        if init[i]:
            attrs.append("penwidth=2.5")
        if highlight is not None and highlight[i]:
            attrs.append("style=filled, fillcolor=lightblue")
        lines.append(f"  {i} [{', '.join(attrs)}];")
    src = kripke.edge_src
    for e in range(kripke.num_transitions):
        text = str(kripke.actions[int(kripke.edge_action[e])])
        p = kripke.probability(e)
        if p is not None:
            text += f" : {p}"
        lines.append(f"  {int(src[e])} -> {int(kripke.succ_idx[e])} [label={quoted(text)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_dot(kripke: Kripke, path: str | Path, **kwargs: Any) -> Path:
    """Write :func:`to_dot` atomically."""
    write_atomic(path, to_dot(kripke, **kwargs))
    return Path(path)

