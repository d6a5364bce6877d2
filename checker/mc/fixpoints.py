"""Vectorised fixpoint primitives of CTL on CSR arrays (IIIf MC, ``shared/iiif-notes.md``).

Every CTL operator of flcheck reduces to three primitives and negation (proofs in the docstrings):

- ``EX Z``   pre-image: ``{s | ∃ s→t. t ∈ Z}``, one scatter over the edge arrays, O(E);
- ``E[f U g]`` = ``lfp Z. g ∪ (f ∩ EX Z)``: backward breadth-first search from ``g`` through the
  transpose, entering only ``f`` states; level-synchronous and vectorised (each level gathers the
  predecessors of the whole frontier with one ``np.repeat``/``arange`` gather), switching to scipy's C
  breadth-first search after :data:`LEVELS_BEFORE_SCIPY` levels so that deep (chain-like) structures
  stay O(E);
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
import scipy.sparse as sp
from scipy.sparse import csgraph

from checker.mc.kripke import Kripke

#: Level-synchronous backward search levels before handing over to scipy's C breadth-first search.
LEVELS_BEFORE_SCIPY = 48


class Semantics(StrEnum):
    """Which transition relation CTL is evaluated on (see the module docstring)."""

    IIIF = "iiif"
    TOTAL = "total"

    def describe(self) -> str:
        if self is Semantics.IIIF:
            return ("IIIf deadlock semantics: a state without successors satisfies AX f and AF f, "
                    "never EX f or EG f")
        return "total semantics: every deadlock state has an implicit self-loop (NuSMV/Storm style)"


def _index_dtype(n: int) -> type[np.signedinteger]:
    return np.int32 if n < 2**31 - 1 else np.int64


def _csr(indices: np.ndarray, indptr: np.ndarray, n: int) -> sp.csr_matrix:
    """A square CSR matrix with int8 ones, keeping 32-bit indices when they fit (scipy upcasts all
    index arrays to the widest one given, which would double the memory of large structures)."""
    if len(indices) < 2**31 - 1 and n < 2**31 - 1:
        indices = indices.astype(np.int32, copy=False)
        indptr = indptr.astype(np.int32, copy=False)
    return sp.csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr), shape=(n, n))


def gather_ranges(ptr: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Concatenation of ``idx[ptr[r]:ptr[r+1]]`` for every ``r`` in ``rows`` (vectorised)."""
    starts = ptr[rows]
    lens = ptr[rows + 1] - starts
    if len(idx) < 2**31 - 1:  # 32-bit positions halve the memory traffic of the gather
        starts = starts.astype(np.int32)
        lens = lens.astype(np.int32)
    total = int(lens.sum(dtype=np.int64))
    if total == 0:
        return idx[:0]
    offsets = np.cumsum(lens) - lens
    pos = np.repeat(starts - offsets, lens)
    pos += np.arange(total, dtype=pos.dtype)
    return idx[pos]


class Graph:
    """The relation of a :class:`Kripke` structure prepared for fixpoint computations: forward CSR,
    its transpose (built in C by scipy's CSR→CSC conversion, O(E)), deadlocks, frontier, self-loops."""

    def __init__(self, kripke: Kripke, semantics: Semantics | str = Semantics.IIIF):
        self.kripke = kripke
        self.semantics = Semantics(semantics)
        self.n = int(kripke.num_states)
        itype = _index_dtype(max(self.n, kripke.num_transitions) + 1)
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
        if len(self.dst) == 0:
            return np.zeros(self.n + 1, dtype=np.int64), self.dst[:0]
        m = _csr(self.dst, self.ptr, self.n)
        t = m.tocsc()
        return t.indptr.astype(np.int64, copy=False), t.indices.astype(self.itype, copy=False)

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
        visited = seeds
        allowed = f & ~visited
        level = np.flatnonzero(seeds)
        if not len(self.dst) or not allowed.any():
            return visited
        pptr, pidx = self.transpose
        depth = 0
        while level.size:
            if depth >= LEVELS_BEFORE_SCIPY:
                self._reach_scipy(level, allowed, visited)
                break
            preds = gather_ranges(pptr, pidx, level)
            new = preds[allowed[preds]]
            if new.size == 0:
                break
            allowed[new] = False
            visited[new] = True
            level = self._dedup(new)
            depth += 1
        return visited

    @cached_property
    def _stamp(self) -> np.ndarray:
        return np.zeros(self.n, dtype=self.itype)

    def _dedup(self, ids: np.ndarray) -> np.ndarray:
        """The distinct values of ``ids`` in O(len(ids)) (first occurrences; no sorting)."""
        if len(ids) < 2:
            return ids
        pos = np.arange(len(ids), dtype=self.itype)
        stamp = self._stamp
        stamp[ids] = pos
        return ids[stamp[ids] == pos]

    def _reach_scipy(self, level: np.ndarray, allowed: np.ndarray, visited: np.ndarray) -> None:
        """Finish a backward search in C: mark in ``visited`` every ``allowed`` state with a path of
        ``allowed`` states to some state of ``level``."""
        pptr, pidx = self.transpose
        keep = allowed[pidx]
        csum = np.zeros(len(pidx) + 1, dtype=np.int64)
        np.cumsum(keep, out=csum[1:])
        ptr = np.concatenate([csum[pptr], [csum[-1] + len(level)]])
        idx = np.concatenate([pidx[keep], level.astype(pidx.dtype)])
        graph = _csr(idx, ptr, self.n + 1)
        order = csgraph.breadth_first_order(graph, self.n, directed=True, return_predecessors=False)
        reached = order[1:]
        visited[reached] = True
        allowed[reached] = False

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
                graph = _csr(self.dst[keep], ptr, self.n)
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
        are never removed. After :data:`LEVELS_BEFORE_SCIPY` levels it switches to the SCC
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
            if depth >= LEVELS_BEFORE_SCIPY:
                seeds, _ = self.cycle_seeds(f, optimistic)
                return self.eu(f, seeds, optimistic)
            z[level] = False
            preds = gather_ranges(pptr, pidx, level)
            preds = preds[z[preds]]
            if not preds.size:
                break
            np.subtract.at(count, preds, 1)
            cand = preds[count[preds] == 0]
            level = self._dedup(cand)
            depth += 1
        return z

    # ------------------------------------------------------------------ forward search (evidence)
    def forward_tree(self, start: int, through: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Breadth-first search from ``start`` that leaves only states of ``through`` (``start``
        included if it is not in ``through``: its own edges are always followed). Returns the visit
        order and the predecessor array (``-9999`` for unreached), so shortest paths can be read off."""
        leave = through.copy()
        leave[start] = True
        keep = leave[self.src] if len(self.dst) else np.zeros(0, dtype=bool)
        csum = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(keep, out=csum[1:])
        graph = _csr(self.dst[keep], csum[self.ptr], self.n)
        order, pred = csgraph.breadth_first_order(graph, start, directed=True, return_predecessors=True)
        return order, pred

    def shortest_path(self, start: int, target: np.ndarray, through: np.ndarray) -> list[int] | None:
        """A shortest path ``start … t`` with ``t ∈ target`` whose states before ``t`` are in ``through``
        (``[start]`` if ``start ∈ target``), or ``None``."""
        if target[start]:
            return [start]
        order, pred = self.forward_tree(start, through & ~target)
        hits = order[target[order]]
        if not len(hits):
            return None
        path = [int(hits[0])]
        while path[-1] != start:
            path.append(int(pred[path[-1]]))
        path.reverse()
        return path
