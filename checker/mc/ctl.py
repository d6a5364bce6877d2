"""CTL model checking on explicit Kripke structures ([IIIf] MC; ``spec/IIIF.md``, [IIIf-FL]).

``M ⊢ f`` (IIIf: every initial state of ``M`` is in the set ``f``) is decided by computing the
satisfaction set of every sub-formula bottom-up as numpy boolean arrays; the temporal operators are the
vectorised fixpoints of :mod:`checker.mc.fixpoints` (backward search over the transpose, SCCs for ``EG``).

Typical use::

    >>> from checker.mc.kripke import Kripke
    >>> import numpy as np
    >>> k = Kripke.from_edges(3, [0], [0, 1], [1, 2], labels={"goal": np.array([False, False, True])})
    >>> r = check(k, "EF goal")
    >>> str(r.verdict), r.witness.states
    ('holds', [0, 1, 2])
    >>> str(check(k, "AG EX true").verdict)   # state 2 is a deadlock: EX true fails there
    'violated'
    >>> str(check(k, "AG EX true", semantics="total").verdict)
    'holds'

Results: :class:`CheckResult` carries the verdict (one of :class:`checker.verdict.Verdict`), the
semantics used, the satisfaction set, the satisfying initial states, a witness (true existential
property) or counterexample (false universal property) and, for a property that holds, vacuity
information (:mod:`checker.mc.vacuity`).

On an incomplete structure (exploration stopped at a limit) the checker computes a lower and an upper
bound of every satisfaction set (see :mod:`checker.mc.fixpoints`); the verdict is ``holds`` when the lower
bound contains every initial state, ``violated`` when the upper bound misses one, else ``unknown``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from checker.mc import ctl_ast
from checker.mc.ctl_parse import parse_formula
from checker.mc.evidence import Trace, explain, make_trace
from checker.mc.fixpoints import Semantics
from checker.mc.kripke import Kripke
from checker.mc.satisfaction import SatisfactionSets, as_formula
from checker.mc.vacuity import Vacuity, find_vacuity
from checker.verdict import Verdict


class ModelChecker(SatisfactionSets):
    """Decides CTL properties on one structure under one semantics (:meth:`check`), on top of the
    memoised satisfaction sets of :class:`checker.mc.satisfaction.SatisfactionSets`."""

    # ------------------------------------------------------------------ verdicts
    def check(
        self, formula: ctl_ast.Formula | str, *, evidence: bool = True, vacuity: bool = True
    ) -> CheckResult:
        """Decide ``M ⊢ formula`` for the initial states; see :func:`check`."""
        t0 = time.perf_counter()
        f = as_formula(formula)
        lo, hi = self.sat_bounds(f)
        k = self.kripke
        init = np.asarray(k.initial, dtype=np.int64)
        if lo[init].all():
            verdict = Verdict.HOLDS
        elif not hi[init].all():
            verdict = Verdict.VIOLATED
        else:
            verdict = Verdict.UNKNOWN
        result = CheckResult(
            formula=f,
            verdict=verdict,
            semantics=self.semantics,
            states=k.num_states,
            transitions=k.num_transitions,
            initial=[int(i) for i in init],
            satisfying_initial=[int(i) for i in init[lo[init]]],
            sat=lo,
            sat_upper=hi,
            complete=k.complete,
            limit_reason=k.limit_reason,
        )
        if evidence and verdict is not Verdict.UNKNOWN and len(init):
            if verdict is Verdict.HOLDS:
                got = explain(self, f, int(init[0]), True)
                if got:
                    result.witness = make_trace(self, "witness", got.shown, got.path, got.loop_start,
                                                then=got.then)
            else:
                bad = int(init[~hi[init]][0])
                got = explain(self, f, bad, False)
                if got:
                    result.counterexample = make_trace(self, "counterexample", got.shown, got.path,
                                                       got.loop_start, then=got.then)
        if vacuity and verdict is Verdict.HOLDS and self.exact:
            vac = find_vacuity(self, f)
            if vac is not None:
                result.vacuity = vac
                result.verdict = Verdict.HOLDS_VACUOUSLY
        if verdict is Verdict.HOLDS and not len(init):
            result.verdict = Verdict.HOLDS_VACUOUSLY
        result.seconds = time.perf_counter() - t0
        return result


@dataclass
class CheckResult:
    """The answer for ``M ⊢ formula`` (all initial states).

    ``sat``/``sat_upper``: lower/upper bound of the satisfaction set (the same array on a complete
    structure). ``witness``: a path from the FIRST initial state when the property holds and its
    deciding operator is existential; ``counterexample``: a path from the first violating initial
    state when it is violated and the deciding operator is universal (see :mod:`checker.mc.evidence`).
    ``verdict`` is "holds vacuously" when :mod:`checker.mc.vacuity` finds a sub-formula that can be
    replaced by ``false`` (or when there is no initial state)."""

    formula: ctl_ast.Formula
    verdict: Verdict
    semantics: Semantics
    states: int
    transitions: int
    initial: list[int]
    satisfying_initial: list[int]
    sat: np.ndarray = field(repr=False)
    sat_upper: np.ndarray = field(repr=False)
    complete: bool = True
    limit_reason: str | None = None
    witness: Trace | None = None
    counterexample: Trace | None = None
    vacuity: Vacuity | None = None
    seconds: float = 0.0

    @property
    def holds(self) -> bool:
        return self.verdict in (Verdict.HOLDS, Verdict.HOLDS_VACUOUSLY)

    @property
    def evidence(self) -> Trace | None:
        return self.witness or self.counterexample

    def to_json(self) -> dict[str, Any]:
        """``{"formula", "verdict", "semantics", "states", "transitions", "satisfying_initial",
        "witness"|"counterexample"}``; plus ``"vacuity"`` when the verdict is "holds vacuously" and
        ``"limit_reason"`` when the structure is incomplete."""
        out: dict[str, Any] = {
            "formula": str(self.formula),
            "verdict": str(self.verdict),
            "semantics": str(self.semantics),
            "states": self.states,
            "transitions": self.transitions,
            "satisfying_initial": list(self.satisfying_initial),
        }
        if self.holds:
            out["witness"] = self.witness.to_json() if self.witness else None
        else:
            out["counterexample"] = self.counterexample.to_json() if self.counterexample else None
        if self.vacuity is not None:
            out["vacuity"] = self.vacuity.to_json()
        if not self.complete:
            out["limit_reason"] = self.limit_reason
        return out

    def render(self) -> str:
        """Human-readable report (several lines)."""
        lines = [
            f"{self.formula}: {self.verdict}",
            f"  semantics: {self.semantics.describe()}",
            f"  structure: {self.states} states, {self.transitions} transitions"
            + ("" if self.complete else f" (INCOMPLETE: {self.limit_reason})"),
            f"  initial states satisfying it: {len(self.satisfying_initial)} of {len(self.initial)}",
        ]
        if self.vacuity is not None:
            lines.append(f"  vacuous: {self.vacuity.reason}")
        ev = self.evidence
        if ev is not None:
            lines.extend("  " + ln for ln in ev.render().splitlines())
        return "\n".join(lines)


def check(
    kripke: Kripke,
    formula: ctl_ast.Formula | str,
    *,
    semantics: Semantics | str = Semantics.IIIF,
    evidence: bool = True,
    vacuity: bool = True,
) -> CheckResult:
    """Decide whether every initial state of ``kripke`` satisfies ``formula`` (IIIf ``M ⊢ f``).

    ``formula`` is an AST or text in the property language (parse errors raise
    :class:`checker.errors.InputError`; unknown labels/observables too, with the atom's position).
    ``evidence`` computes a witness (holds, existential) or counterexample (violated, universal);
    ``vacuity`` runs the vacuity check on properties that hold (complete structures only)."""
    return ModelChecker(kripke, semantics).check(formula, evidence=evidence, vacuity=vacuity)


def sat(
    kripke: Kripke, formula: ctl_ast.Formula | str, *, semantics: Semantics | str = Semantics.IIIF
) -> np.ndarray:
    """The satisfaction set of ``formula`` (lower bound on an incomplete structure)."""
    return ModelChecker(kripke, semantics).sat(formula)


__all__ = ["CheckResult", "ModelChecker", "Semantics", "Vacuity", "check", "parse_formula", "sat"]
