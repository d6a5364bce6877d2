"""Vacuity detection (Beer, Ben-David, Eisner, Rodeh, "Efficient detection of vacuity in temporal model
checking", FMSD 2001; Kupferman & Vardi, "Vacuity detection in temporal model checking", STTT 2003).

A property ``φ`` that holds on ``M`` holds *vacuously* in an occurrence of a sub-formula ``ψ`` when
``ψ`` does not affect the verdict (Kupferman–Vardi: for a pure-polarity occurrence, ``M ⊨ φ[ψ ← ⊥]``
when positive, ``M ⊨ φ[ψ ← ⊤]`` when negative).

flcheck reports one case — a property that holds *only because something can never
be satisfied*: a POSITIVE occurrence ``ψ`` such that ``M ⊨ φ[ψ ← false]``, i.e. the property would
still hold if ``ψ`` were never satisfied. Typical causes: the antecedent of ``AG (p -> q)`` is never
satisfied (then ``q`` can be replaced by false), or under IIIf's deadlock semantics ``AF goal`` holds
because every path ends in a deadlock, without ``goal`` ever happening. Negative occurrences (an
antecedent that could be replaced by ``true`` because the consequent always holds) are not reported:
such a property does not hold for lack of anything.

We check occurrences top-down (outermost first, at most :data:`MAX_CANDIDATES`), skip the root, the
constants ``true``/``false``, occurrences under ``<->`` (mixed polarity) and inside ``P``/``D`` operators
(a probability bound is not monotone in its operand's truth), and report the first
vacuous one. Sub-results are shared through the model checker's memo, so each candidate costs at most
the operators on the path from the occurrence to the root.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from checker.mc import ctl_ast
from checker.mc.satisfaction import SatisfactionSets

#: How many sub-formula occurrences are tried at most.
MAX_CANDIDATES = 24

Path = tuple[int, ...]


@dataclass
class Vacuity:
    """Why a property holds vacuously: ``subformula`` does not affect the verdict (replacing it by
    ``replaced_by`` keeps the property true); ``reason`` is the human explanation."""

    subformula: str
    replaced_by: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"subformula": self.subformula, "replaced_by": self.replaced_by, "reason": self.reason}


def _rebuild(f: ctl_ast.Formula, children: tuple[ctl_ast.Formula, ...]) -> ctl_ast.Formula:
    if isinstance(f, ctl_ast.Not):
        return ctl_ast.Not(children[0])
    if isinstance(f, ctl_ast.And):
        return ctl_ast.And(children)
    if isinstance(f, ctl_ast.Or):
        return ctl_ast.Or(children)
    if isinstance(f, ctl_ast.Implies):
        return ctl_ast.Implies(children[0], children[1])
    if isinstance(f, ctl_ast.Iff):
        return ctl_ast.Iff(children[0], children[1])
    if isinstance(f, ctl_ast.Unary):
        return type(f)(children[0])
    if isinstance(f, ctl_ast.Binary):
        return type(f)(children[0], children[1])
    raise TypeError(f)  # pragma: no cover


def replace_at(f: ctl_ast.Formula, path: Path, new: ctl_ast.Formula) -> ctl_ast.Formula:
    """``f`` with the occurrence at ``path`` (child indices from the root) replaced by ``new``."""
    if not path:
        return new
    kids = list(f.children())
    kids[path[0]] = replace_at(kids[path[0]], path[1:], new)
    return _rebuild(f, tuple(kids))


def occurrences(f: ctl_ast.Formula) -> Iterator[tuple[Path, ctl_ast.Formula, int, ctl_ast.Formula | None]]:
    """Breadth-first ``(path, occurrence, polarity, parent)`` for every pure-polarity occurrence
    (polarity +1 positive, -1 negative)."""
    queue: list[tuple[Path, ctl_ast.Formula, int, ctl_ast.Formula | None]] = [((), f, 1, None)]
    while queue:
        path, g, pol, parent = queue.pop(0)
        yield path, g, pol, parent
        if isinstance(g, ctl_ast.Iff | ctl_ast.ProbQuery | ctl_ast.DPQuery):
            continue  # mixed polarity, or a probability: its operand's polarity depends on the bound
        for i, c in enumerate(g.children()):
            cpol = -pol if isinstance(g, ctl_ast.Not) or (isinstance(g, ctl_ast.Implies) and i == 0) else pol
            queue.append(((*path, i), c, cpol, g))


def find_vacuity(mc: SatisfactionSets, f: ctl_ast.Formula) -> Vacuity | None:
    """The first (outermost) occurrence in which ``f`` holds vacuously on the initial states, or
    ``None``. Assumes ``f`` holds."""
    init = np.asarray(mc.kripke.initial, dtype=np.int64)
    tried = 0
    for path, occ, pol, parent in occurrences(f):
        if not path or pol < 0 or isinstance(occ, ctl_ast.TrueF | ctl_ast.FalseF):
            continue
        if tried >= MAX_CANDIDATES:
            break
        tried += 1
        mutated = replace_at(f, path, ctl_ast.FalseF())
        if not mc.sat(mutated)[init].all():
            continue
        by = "false"
        reason = (f"the property also holds with '{occ}' replaced by false: it holds without '{occ}' "
                  "ever being satisfied")
        if isinstance(parent, ctl_ast.Implies) and path[-1] == 1:
            reason = (f"the antecedent '{parent.left}' is never satisfied where it is evaluated "
                      f"(the consequent '{occ}' does not matter)")
        elif (
            mc.semantics == "iiif"
            and isinstance(parent, ctl_ast.AX | ctl_ast.AF | ctl_ast.AU)
            and mc.graph.deadlock.any()
        ):
            reason += "; under IIIf deadlock semantics deadlock states satisfy AX/AF without it"
        return Vacuity(str(occ), by, reason)
    return None
