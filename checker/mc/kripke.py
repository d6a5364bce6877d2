"""Kripke structures as arrays (IIIf MC: ``Kripke S I``; Storm: a sparse matrix plus labels).

States are integer ids ``0 .. num_states-1``. The transition relation is stored in CSR form:
the successors of state ``s`` are ``succ_idx[succ_ptr[s]:succ_ptr[s+1]]``, and every edge ``e`` carries
the index ``edge_action[e]`` into ``actions`` and, for probabilistic models, ``edge_prob[e]`` (float) and
``edge_prob_exact[e]`` (``Fraction``, when the model is exact). Edges leaving one state that share an
action id form one probability distribution (an MDP choice); a DTMC has one action per state.

Sets of states are numpy boolean arrays of length ``num_states``. Atomic propositions are ``labels``
(name -> boolean array); richer per-state data for the property language are ``observables``
(name -> sequence of values, one per state). ``vocabulary``, when the model's builder gives one, types the
observables and names the rules a property may mention (:mod:`checker.mc.vocabulary`).

An *incomplete* structure (an exploration limit was hit) has ``complete = False``; its ``frontier`` marks
the states that were discovered but whose successors were not computed. Algorithms must not treat
frontier states as deadlocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np

from checker.mc.ts import Action, ObservableValue
from checker.mc.vocabulary import Vocabulary


@dataclass(eq=False)
class Kripke:
    """An explicit Kripke structure (optionally with transition probabilities).

    Invariants (checked by :meth:`validate`): ``succ_ptr`` has length ``num_states + 1``, is
    non-decreasing, starts at 0 and ends at ``len(succ_idx)``; every target id is a state id; every
    label array has length ``num_states``; probabilities of each (state, action) group sum to 1.
    """

    num_states: int
    initial: np.ndarray
    succ_ptr: np.ndarray
    succ_idx: np.ndarray
    edge_action: np.ndarray
    actions: tuple[Action, ...] = (Action("step"),)
    labels: dict[str, np.ndarray] = field(default_factory=dict)
    observables: Mapping[str, Sequence[ObservableValue]] = field(default_factory=dict)
    edge_prob: np.ndarray | None = None
    edge_prob_exact: Sequence[Fraction] | None = None
    state_names: Sequence[str] | None = None
    states: Sequence[object] | None = None
    complete: bool = True
    limit_reason: str | None = None
    frontier: np.ndarray | None = None
    source: str = "<model>"
    stats: dict[str, float] = field(default_factory=dict)
    vocabulary: Vocabulary | None = None

    # ------------------------------------------------------------------ construction helpers
    @classmethod
    def from_edges(
        cls,
        num_states: int,
        initial: Sequence[int] | np.ndarray,
        src: Sequence[int] | np.ndarray,
        dst: Sequence[int] | np.ndarray,
        *,
        action: Sequence[int] | np.ndarray | None = None,
        actions: tuple[Action, ...] = (Action("step"),),
        prob: Sequence[float] | np.ndarray | None = None,
        prob_exact: Sequence[Fraction] | None = None,
        labels: dict[str, np.ndarray] | None = None,
        **kwargs: Any,
    ) -> Kripke:
        """Build from an edge list (any order); edges are sorted by (source, action, target)."""
        src_a = np.asarray(src, dtype=np.int64)
        dst_a = np.asarray(dst, dtype=np.int64)
        act_a = np.zeros(len(src_a), dtype=np.int32) if action is None else np.asarray(action, np.int32)
        order = np.lexsort((dst_a, act_a, src_a))
        src_a, dst_a, act_a = src_a[order], dst_a[order], act_a[order]
        counts = np.bincount(src_a, minlength=num_states) if len(src_a) else np.zeros(num_states, np.int64)
        ptr = np.zeros(num_states + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        prob_a = None if prob is None else np.asarray(prob, dtype=np.float64)[order]
        exact = None if prob_exact is None else [prob_exact[i] for i in order.tolist()]
        if exact is not None and prob_a is None:
            prob_a = np.array([float(p) for p in exact], dtype=np.float64)
        return cls(
            num_states=num_states,
            initial=np.unique(np.asarray(initial, dtype=np.int64)),
            succ_ptr=ptr,
            succ_idx=dst_a,
            edge_action=act_a,
            actions=actions,
            labels=dict(labels or {}),
            edge_prob=prob_a,
            edge_prob_exact=exact,
            **kwargs,
        )

    # ------------------------------------------------------------------ derived arrays
    @property
    def num_transitions(self) -> int:
        return len(self.succ_idx)

    @cached_property
    def edge_src(self) -> np.ndarray:
        """Source id of every edge (expanded from the CSR pointer)."""
        return np.repeat(np.arange(self.num_states, dtype=np.int64), np.diff(self.succ_ptr))

    @cached_property
    def out_degree(self) -> np.ndarray:
        return np.diff(self.succ_ptr)

    @cached_property
    def deadlocks(self) -> np.ndarray:
        """States without successors that are not on the frontier of an incomplete exploration."""
        dead = self.out_degree == 0
        if self.frontier is not None:
            dead &= ~self.frontier
        return dead

    @cached_property
    def pred_ptr_idx(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Transpose in CSR form: ``(pred_ptr, pred_idx, pred_edge)``; the predecessors of ``t`` are
        ``pred_idx[pred_ptr[t]:pred_ptr[t+1]]`` and ``pred_edge`` maps back to forward edge ids."""
        order = np.argsort(self.succ_idx, kind="stable")
        counts = np.bincount(self.succ_idx, minlength=self.num_states)
        ptr = np.zeros(self.num_states + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        return ptr, self.edge_src[order], order

    def initial_mask(self) -> np.ndarray:
        mask = np.zeros(self.num_states, dtype=bool)
        mask[self.initial] = True
        return mask

    def successors(self, state: int) -> np.ndarray:
        return self.succ_idx[self.succ_ptr[state] : self.succ_ptr[state + 1]]

    def probability(self, edge: int) -> Fraction | float | None:
        """The probability of ``edge``: exact when the structure is, else a float; ``None`` for a
        structure without probabilities."""
        if self.edge_prob_exact is not None:
            return Fraction(self.edge_prob_exact[edge])
        if self.edge_prob is not None:
            return float(self.edge_prob[edge])
        return None

    def state_name(self, state: int) -> str:
        """Human name of a state: its ``state_names`` entry, else ``s<id>``."""
        if self.state_names is not None:
            return str(self.state_names[state])
        return f"s{state}"

    def label(self, name: str) -> np.ndarray:
        """The boolean array of atom ``name``; ``KeyError`` names the known labels."""
        try:
            return self.labels[name]
        except KeyError:
            known = ", ".join(sorted(self.labels)) or "none"
            raise KeyError(f"unknown label {name!r}; known labels: {known}") from None

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        """Raise ``ValueError`` naming the offending state/edge when an invariant is broken."""
        n = self.num_states
        if len(self.succ_ptr) != n + 1 or self.succ_ptr[0] != 0 or self.succ_ptr[-1] != len(self.succ_idx):
            raise ValueError("malformed CSR pointer array")
        if np.any(np.diff(self.succ_ptr) < 0):
            raise ValueError("CSR pointer array is not non-decreasing")
        if len(self.succ_idx) and (self.succ_idx.min() < 0 or self.succ_idx.max() >= n):
            bad = int(np.flatnonzero((self.succ_idx < 0) | (self.succ_idx >= n))[0])
            raise ValueError(f"edge {bad} from state {self.state_name(int(self.edge_src[bad]))} "
                             f"targets {int(self.succ_idx[bad])}, outside 0..{n - 1}")
        if len(self.initial) and (self.initial.min() < 0 or self.initial.max() >= n):
            raise ValueError("initial state id out of range")
        for name, arr in self.labels.items():
            if arr.shape != (n,) or arr.dtype != bool:
                raise ValueError(f"label {name!r} is not a boolean array of length {n}")
        if self.edge_prob is not None:
            self._validate_probabilities()

    def _validate_probabilities(self) -> None:
        assert self.edge_prob is not None
        if np.any(self.edge_prob < 0):
            e = int(np.flatnonzero(self.edge_prob < 0)[0])
            raise ValueError(f"state {self.state_name(int(self.edge_src[e]))}: negative probability "
                             f"{self.edge_prob[e]} on edge to {self.state_name(int(self.succ_idx[e]))}")
        if self.num_transitions == 0:
            return
        key = self.edge_src * (len(self.actions) + 1) + self.edge_action
        uniq, inv = np.unique(key, return_inverse=True)
        if self.edge_prob_exact is not None:
            sums: dict[int, Fraction] = {}
            for k, p in zip(inv.tolist(), self.edge_prob_exact, strict=True):
                sums[k] = sums.get(k, Fraction(0)) + p
            for k, total in sums.items():
                if total != 1:
                    self._raise_group(int(uniq[k]), f"sum to {total}, not 1")
        else:
            totals = np.bincount(inv, weights=self.edge_prob)
            bad = np.flatnonzero(np.abs(totals - 1.0) > 1e-9)
            if len(bad):
                self._raise_group(int(uniq[bad[0]]), f"sum to {totals[bad[0]]!r}, not 1")

    def _raise_group(self, key: int, what: str) -> None:
        src, act = divmod(key, len(self.actions) + 1)
        raise ValueError(f"state {self.state_name(src)}: probabilities of action "
                         f"{self.actions[act] if act < len(self.actions) else act} {what}")
