"""Semantic checks of a scenario's noise mechanisms and its ``run`` statement (DP-FedAvg's sampling,
clipping and noise)."""

from __future__ import annotations

from fractions import Fraction

from flcheck_spec.vocab import Position

from flmodel.scenario_ast import (
    MechanismDecl,
    Named,
)
from flmodel.scenario_check_base import ChecksBase, Report, known_text

__all__ = ["NoiseChecks", "check_mechanism"]


class NoiseChecks(ChecksBase):
    """The noise and run part of the semantic checks (:func:`flmodel.scenario_check.check_scenario`)."""

    # --- run configuration ----------------------------------------------------------------------
    def check_run(self) -> None:
        """``run``: a noise multiplier > 0, rounds >= 1, a rate in (0, 1] or ``K of N`` with
        1 <= K <= N, a delta in (0, 1), a clip > 0; each part once; ``fixed`` and ``shuffle`` name K of N."""
        r = self.s.run
        if r is None:
            return
        at = dict(r.parts_pos)
        seen: dict[str, Position] = {}
        for key, pos in r.parts_pos:
            if key in seen:
                self.report.add(pos, f"run: second {key}; the first is at {seen[key]}")
            seen.setdefault(key, pos)
        if r.noise_multiplier is not None and not r.noise_multiplier > 0:
            self.report.add(at["noise_multiplier"],
                            f"run: noise_multiplier must be > 0, got {r.noise_multiplier}")
        if r.rounds is not None and r.rounds < 1:
            self.report.add(at["rounds"], f"run: rounds must be >= 1, got {r.rounds}")
        if r.rate is not None and not 0 < r.rate <= 1:
            self.report.add(at["sampling"], f"run: sampling rate must be in (0, 1], got {r.rate}")
        if r.per_round is not None and r.clients is not None and not 1 <= r.per_round <= r.clients:
            self.report.add(at["sampling"], f"run: sampling {r.per_round} of {r.clients} needs 1 <= K <= N")
        if r.sampling in ("fixed", "shuffle") and r.clients is None:
            self.report.add(at["sampling"],
                            f"run: sampling {r.sampling} needs 'K of N' (clients per round of all)")
        if r.sampling == "poisson" and r.rate is None and r.clients is None:
            self.report.add(at["sampling"], "run: sampling poisson needs 'rate Q' or 'K of N'")
        if r.delta is not None and not 0 < r.delta < 1:
            self.report.add(at["delta"], f"run: delta must be in (0, 1), got {r.delta}")
        if r.clip is not None and not r.clip > 0:
            self.report.add(at["clip"], f"run: clip must be > 0, got {r.clip}")

    # --- noise ------------------------------------------------------------------------------------
    def check_noise(self) -> None:
        """Each mechanism well-formed; client-specific statements name clients and give no client two
        different mechanisms (``noise MECH`` for every client may be refined by ``noise for``)."""
        first: dict[str, tuple[tuple[object, ...], Position]] = {}
        for_all: Position | None = None
        names_of = {id(decl): clients for decl, clients in self.extras.get("noise_names", [])}
        for nd in self.s.noise:
            check_mechanism(nd.mechanism, nd.pos, self.report)
            named = names_of.get(id(nd)) or (tuple(Named(c, nd.pos) for c in nd.clients)
                                             if nd.clients is not None else None)
            if named is None:
                if for_all is not None:
                    self.report.add(nd.pos, f"second noise statement for every client; the first is at "
                                    f"{for_all}")
                for_all = for_all or nd.pos
                continue
            m = nd.mechanism
            key = (m.kind, m.base, m.grid, m.lo, m.hi, m.step, m.table, nd.target)
            for n in named:
                if n.name not in self.clients:
                    self.report.add(n.pos, f"noise for {n.name!r}, which is not a client; "
                                    f"{known_text(self.clients)}")
                if n.name in first:
                    other = "a different" if first[n.name][0] != key else "the same"
                    self.report.add(n.pos, f"second noise statement for client {n.name!r} ({other} "
                                    f"mechanism); the first is at {first[n.name][1]}")
                    continue
                first[n.name] = (key, n.pos)


def check_mechanism(m: MechanismDecl, pos: Position, report: Report) -> None:
    """A mechanism is well-formed: bases in range, non-empty whole-step ranges, a probability table."""
    p = m.pos if m.pos.line is not None else pos
    if m.kind == "none":
        return
    if m.kind == "additive":
        total = sum((q for _, q in m.table), Fraction(0))
        if any(q <= 0 for _, q in m.table):
            report.add(p, "additive noise: every probability must be positive")
        if total != 1:
            report.add(p, f"additive noise: the probabilities sum to {total}, not 1")
        if len({z for z, _ in m.table}) != len(m.table):
            report.add(p, "additive noise: a noise value is listed twice")
        return
    if m.epsilon is not None and (m.epsilon.value < 1 if m.epsilon.log else m.epsilon.value < 0):
        report.add(p, f"{m.kind} needs epsilon >= 0, got {m.epsilon.text()}")
    if m.kind == "rr":
        if m.base is not None and not 0 < m.base <= 1:
            report.add(p, f"randomized response needs 0 < r <= 1, got {m.base}")
        if len(set(m.grid)) != len(m.grid):
            report.add(p, "randomized response grid has repeated values")
        return
    if m.sigma is not None:
        if not m.sigma > 0:
            report.add(p, f"gaussian needs sigma > 0, got {m.sigma}")
        if m.clip is not None and not m.clip > 0:
            report.add(p, f"gaussian needs clip > 0, got {m.clip}")
        if m.clip is None and m.lo is None:
            report.add(p, "gaussian sigma needs 'clip C' or 'range A .. B' (a finite lattice of outputs)")
        if m.clip is not None:
            _check_range(-m.clip, m.clip, m.step, p, report)
    elif m.base is not None and not 0 < m.base < 1:
        letter = "r" if m.kind == "geometric" else "q"
        report.add(p, f"{m.kind} mechanism needs 0 < {letter} < 1, got {m.base}")
    _check_range(m.lo, m.hi, m.step, p, report)


def _check_range(lo: Fraction | None, hi: Fraction | None, step: Fraction | None, p: Position,
                 report: Report) -> None:
    """A lattice ``lo .. hi step s`` is non-empty and a whole number of steps."""
    if lo is not None and hi is not None and lo > hi:
        report.add(p, f"empty range {lo} .. {hi}")
    if step is not None and step <= 0:
        report.add(p, f"step must be positive, got {step}")
    elif lo is not None and hi is not None:
        unit = step if step is not None else Fraction(1)
        if ((hi - lo) / unit).denominator != 1:
            report.add(p, f"range {lo} .. {hi} is not a whole number of steps of {unit}")
