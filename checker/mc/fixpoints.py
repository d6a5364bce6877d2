"""Vectorised fixpoint primitives of CTL on CSR arrays (IIIf MC, ``spec/IIIF.md``).

Every CTL operator of flcheck reduces to three primitives and negation (proofs in the docstrings):

- ``EX Z``   pre-image: ``{s | ∃ s→t. t ∈ Z}``, one scatter over the edge arrays, O(E);
- ``E[f U g]`` = ``lfp Z. g ∪ (f ∩ EX Z)``: backward breadth-first search from ``g`` through the
  transpose, entering only ``f`` states (:func:`checker.mc.reach.reachable`: level-synchronous and
  vectorised, finishing in scipy's C breadth-first search on deep structures, O(E));
- ``EG f`` = ``gfp Z. f ∩ EX Z``: the states of ``f`` from which an infinite path stays in ``f``, i.e.
  ``E[f U S]`` where ``S`` are the ``f``-states on a cycle of the ``f``-subgraph (in a strongly
  connected component with more than one state, or with a self-loop), found by scipy's C Tarjan/Pearce
  SCC algorithm in O(E).

The universal operators are their duals (valid for any relation, total or not, since
``¬AX ¬Z = {s | ∃ s→t. t ∈ Z} = EX Z`` also on deadlocks):
``AX f = ¬EX ¬f``, ``AG f = ¬EF ¬f``, ``AF f = ¬EG ¬f``, ``A[f R g] = ¬E[¬f U ¬g]``,
``A[f U g] = ¬(E[¬g U (¬f ∧ ¬g)] ∨ EG ¬g)``, and ``E[f R g] = E[g U (f ∧ g)] ∨ EG g``.

Semantics. ``iiif`` (default): the relation is used as is, so a deadlock state satisfies ``AX f`` and
``AF f`` for every ``f`` and never ``EX f`` or ``EG f`` (IIIf MC does not make the relation total).
``total``: every deadlock state is given a self-loop (the totalisation applied by NuSMV-style
checkers, pyModelChecking and Storm), so a deadlock satisfies ``EX f``/``EG f`` iff it satisfies ``f``.

Incomplete structures (an exploration limit was hit): the successors of *frontier* states are unknown.
Every primitive takes a flag ``optimistic``: with ``False`` it assumes frontier states have no
successor in any set and lie on no cycle (an under-approximation of ``EX``/``EU``/``EG``), with ``True``
that they have successors everywhere (an over-approximation). Because the primitives are monotone and
negation swaps the bounds, the checker obtains for every formula a lower and an upper bound of its true
satisfaction set in any completion of the structure (three-valued model checking).
"""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property

import numpy as np

from checker.mc import reach
from checker.mc.kripke import Kripke


class Semantics(StrEnum):
    """Which transition relation CTL is evaluated on (see the module docstring)."""

    IIIF = "iiif"
    TOTAL = "total"

    def describe(self) -> str:
        if self is Semantics.IIIF:
            return ("IIIf deadlock semantics: a state without successors satisfies AX f and AF f, "
                    "never EX f or EG f")
        return "total semantics: every deadlock state has an implicit self-loop (NuSMV/Storm style)"


class Graph:
    """The relation of a :class:`Kripke` structure prepared for fixpoint computations: forward CSR,
    its transpose (built in C by scipy's CSR→CSC conversion, O(E)), deadlocks, frontier, self-loops."""

    def __init__(self, kripke: Kripke, semantics: Semantics | str = Semantics.IIIF):
        self.kripke = kripke
        self.semantics = Semantics(semantics)
        self.n = int(kripke.num_states)
        itype = reach.index_dtype(max(self.n, kripke.num_transitions) + 1)
        self.ptr = np.ascontiguousarray(kripke.succ_ptr, dtype=np.int64)
        self.dst = np.ascontiguousarray(kripke.succ_idx, dtype=itype)
        self.frontier = (kripke.frontier if kripke.frontier is not None and kripke.frontier.any() else None)
        self.deadlock = kripke.deadlocks
        self.itype = itype

    @cached_property
    def src(self) -> np.ndarray:
        """Source state of every edge."""
        return np.repeat(np.arange(self.n, dtype=self.itype), np.diff(self.ptr))

    @cached_property
    def transpose(self) -> tuple[np.ndarray, np.ndarray]:
        """``(pred_ptr, pred_idx)``: the predecessors of ``t`` are ``pred_idx[pred_ptr[t]:pred_ptr[t+1]]``."""
        return reach.transpose(self.ptr, self.dst)

    @cached_property
    def self_loop(self) -> np.ndarray:
        """States with an explicit self-loop."""
        out = np.zeros(self.n, dtype=bool)
        if len(self.dst):
            loops = self.src == self.dst
            out[self.src[loops]] = True
        return out

    @cached_property
    def stutter(self) -> np.ndarray:
        """States with a self-loop, explicit or added by the total semantics on deadlocks."""
        if self.semantics is Semantics.TOTAL:
            return self.self_loop | self.deadlock
        return self.self_loop

    # ------------------------------------------------------------------ primitives
    def ex(self, z: np.ndarray, optimistic: bool = False) -> np.ndarray:
        """``EX z`` (with total semantics deadlocks loop on themselves; frontier states are in the
        result iff ``optimistic``)."""
        out = np.zeros(self.n, dtype=bool)
        if len(self.dst):
            out[self.src[z[self.dst]]] = True
        if self.semantics is Semantics.TOTAL:
            out |= self.deadlock & z
        if optimistic and self.frontier is not None:
            out |= self.frontier
        return out

    def eu(self, f: np.ndarray, g: np.ndarray, optimistic: bool = False) -> np.ndarray:
        """``E[f U g] = lfp Z. g ∪ (f ∩ EX Z)`` by backward search from ``g`` through ``f``.

        Optimistic: frontier states of ``f`` may reach ``g`` (they are added to the seeds)."""
        seeds = g.copy()
        if optimistic and self.frontier is not None:
            seeds |= f & self.frontier
        if not len(self.dst) or not (f & ~seeds).any():
            return seeds
        pptr, pidx = self.transpose
        return reach.reachable(pptr, pidx, seeds, enter=f)

    @cached_property
    def _scratch(self) -> np.ndarray:
        return np.zeros(self.n, dtype=self.itype)

    def cycle_seeds(self, f: np.ndarray, optimistic: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """States of ``f`` lying on a cycle of the ``f``-subgraph (self-loops and, with total semantics,
        deadlocks included; optimistic: frontier states of ``f`` too), and the SCC labels of the
        ``f``-subgraph (``None`` when no edge stays inside ``f``)."""
        seeds = f & self.stutter
        labels = None
        if len(self.dst):
            keep = f[self.src] & f[self.dst]
            if keep.any():
                csum = np.zeros(len(keep) + 1, dtype=np.int64)
                np.cumsum(keep, out=csum[1:])
                ptr = csum[self.ptr]
                graph = reach.csr_graph(self.dst[keep], ptr, self.n)
                from scipy.sparse import csgraph  # lazy: scipy's import costs a tenth of a second

                _, labels = csgraph.connected_components(graph, directed=True, connection="strong")
                sizes = np.bincount(labels)
                seeds |= f & (sizes[labels] > 1)
        if optimistic and self.frontier is not None:
            seeds |= f & self.frontier
        return seeds, labels

    def eg(self, f: np.ndarray, optimistic: bool = False) -> np.ndarray:
        """``EG f = gfp Z. f ∩ EX Z``.

        Computed by the classic counting algorithm (Clarke, Emerson, Sistla 1986): ``count[s]`` is the
        number of edges from ``s`` into the current ``Z`` (initially ``f``); states of ``Z`` whose count
        drops to 0 are removed level by level, decrementing their predecessors' counts. Stuttering
        states (self-loops, total-semantics deadlocks) keep their own edge; optimistic frontier states
        are never removed. After :data:`checker.mc.reach.LEVELS_BEFORE_SCIPY` levels it switches to the SCC
        characterisation ``EG f = E[f U cycle_seeds(f)]`` (O(E) in C)."""
        z = f.copy()
        count = np.zeros(self.n, dtype=np.int64)
        if len(self.dst):
            into = f[self.dst]
            count += np.bincount(self.src[into], minlength=self.n)
        if self.semantics is Semantics.TOTAL:
            count += self.deadlock  # the implicit self-loop
        if optimistic and self.frontier is not None:
            count[self.frontier] += 1  # unknown successors: assume one inside Z
        level = np.flatnonzero(z & (count == 0))
        if not len(self.dst):
            z[level] = False
            return z
        pptr, pidx = self.transpose
        depth = 0
        while level.size:
            if depth >= reach.LEVELS_BEFORE_SCIPY:
                seeds, _ = self.cycle_seeds(f, optimistic)
                return self.eu(f, seeds, optimistic)
            z[level] = False
            preds = reach.gather_ranges(pptr, pidx, level)
            preds = preds[z[preds]]
            if not preds.size:
                break
            np.subtract.at(count, preds, 1)
            cand = preds[count[preds] == 0]
            level = reach.distinct(cand, self._scratch)
            depth += 1
        return z
