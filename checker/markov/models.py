"""Markov models of a probabilistic Kripke structure: DTMCs, MDPs and memoryless schedulers.

A :class:`~checker.mc.kripke.Kripke` structure with probabilities is an MDP: the edges leaving a state that
share an action form one distribution (a *choice*); different actions are nondeterministic choices.
Without probabilities every edge is its own choice (probability 1).  A memoryless *scheduler* (one choice
per state, or the uniform mixture over the enabled choices) turns the MDP into a DTMC
(:func:`dtmc_from_kripke`).  Deadlock states have no successor: the DTMC row is empty (sub-stochastic),
so the path sum counts no extension of a path ending there; first passage and transient distributions
treat deadlocks as absorbing ends of runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np
import scipy.sparse as sp

from checker.mc.kripke import Kripke
from checker.mc.ts import Action

__all__ = [
    "Dtmc",
    "Mdp",
    "Scheduler",
    "Values",
    "dtmc_from_edges",
    "dtmc_from_kripke",
    "initial_expectation",
    "mdp_from_kripke",
    "state_mask",
]

#: A memoryless scheduler: ``"uniform"`` (each enabled choice with equal probability), or a mapping
#: ``state id -> index of the chosen choice among that state's choices`` (``0 .. k-1``; states not in
#: the mapping use choice 0), or a mapping ``state id -> Action`` (the choice carrying that action).
Scheduler = Literal["uniform"] | Mapping[int, int] | Mapping[int, Action]

Values = np.ndarray  # float64, or dtype=object holding Fractions


def state_mask(states: np.ndarray | Iterable[int], num_states: int) -> np.ndarray:
    """The boolean mask over ``num_states`` states of ``states``: a boolean mask (returned as it is, after
    checking its shape) or state ids (each checked to be in range)."""
    arr = np.asarray(states)
    if arr.dtype == bool:
        if arr.shape != (num_states,):
            raise ValueError(f"state mask has shape {arr.shape}, expected ({num_states},)")
        return arr
    mask = np.zeros(num_states, dtype=bool)
    ids = np.asarray(list(states) if not isinstance(states, np.ndarray) else states, dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= num_states):
        raise ValueError(f"state id out of range 0..{num_states - 1}")
    mask[ids] = True
    return mask


@dataclass(frozen=True, eq=False)
class Dtmc:
    """A (sub-)stochastic discrete-time Markov chain in CSR form.

    Row ``s`` lists the successors ``idx[ptr[s]:ptr[s+1]]`` with probabilities ``prob`` (float) and
    ``prob_exact`` (``Fraction``, when known).  Rows sum to 1, except deadlock rows which are empty.
    ``initial`` is the initial distribution as ``((state, probability), ...)``.
    """

    num_states: int
    ptr: np.ndarray
    idx: np.ndarray
    prob: np.ndarray
    prob_exact: tuple[Fraction, ...] | None
    initial: tuple[tuple[int, Fraction], ...]

    @property
    def is_exact(self) -> bool:
        return self.prob_exact is not None

    def matrix(self) -> sp.csr_matrix:
        """The transition matrix ``P`` (float, CSR)."""
        return sp.csr_matrix((self.prob, self.idx, self.ptr), shape=(self.num_states, self.num_states))

    def rows_exact(self) -> list[dict[int, Fraction]]:
        """Row ``s`` as ``{successor: exact probability}``; raises if the chain is not exact."""
        if self.prob_exact is None:
            raise ValueError("this chain has no exact probabilities")
        rows: list[dict[int, Fraction]] = []
        idx = self.idx.tolist()
        ptr = self.ptr.tolist()
        for s in range(self.num_states):
            row: dict[int, Fraction] = {}
            for e in range(ptr[s], ptr[s + 1]):
                row[idx[e]] = row.get(idx[e], Fraction(0)) + self.prob_exact[e]
            rows.append(row)
        return rows

    @property
    def deadlocks(self) -> np.ndarray:
        return np.diff(self.ptr) == 0

    def initial_vector(self, exact: bool) -> Values:
        vec: Values = np.zeros(self.num_states, dtype=object if exact else np.float64)
        if exact:
            vec[:] = Fraction(0)
        for s, p in self.initial:
            vec[s] = vec[s] + (p if exact else float(p))
        return vec


@dataclass(frozen=True, eq=False)
class Mdp:
    """A Markov decision process: state ``s`` has choices ``choice_ptr[s] .. choice_ptr[s+1]-1``;
    choice ``c`` has the distribution ``edge_dst/edge_prob[edge_ptr[c]:edge_ptr[c+1]]`` and the action
    ``actions[choice_action[c]]`` (``-1``: an unlabelled edge-choice of a non-probabilistic model)."""

    num_states: int
    choice_ptr: np.ndarray
    choice_action: np.ndarray
    edge_ptr: np.ndarray
    edge_dst: np.ndarray
    edge_prob: np.ndarray
    edge_prob_exact: tuple[Fraction, ...] | None
    initial: tuple[tuple[int, Fraction], ...]
    actions: tuple[Action, ...] = ()

    @property
    def num_choices(self) -> int:
        return len(self.choice_action)

    @property
    def choice_src(self) -> np.ndarray:
        return np.repeat(np.arange(self.num_states, dtype=np.int64), np.diff(self.choice_ptr))

    @property
    def is_dtmc(self) -> bool:
        """True when no state has more than one choice."""
        return bool(np.all(np.diff(self.choice_ptr) <= 1))

    def induced_dtmc(self, scheduler: Scheduler = "uniform") -> Dtmc:
        """The DTMC obtained by resolving every state's choice with a memoryless ``scheduler``."""
        n = self.num_states
        nchoice = np.diff(self.choice_ptr)
        weight_exact: list[Fraction] = []
        if isinstance(scheduler, str):
            if scheduler != "uniform":
                raise ValueError(f"unknown scheduler {scheduler!r}; expected 'uniform' or a mapping")
            ns = nchoice[self.choice_src]
            weight = np.where(ns > 0, 1.0 / np.maximum(ns, 1), 0.0)
            weight_exact = [Fraction(1, int(k)) for k in ns.tolist()]
        else:
            chosen = np.zeros(n, dtype=np.int64)
            for s, choice in scheduler.items():
                k = int(nchoice[s])
                if isinstance(choice, Action):
                    local = [i for i in range(k)
                             if self.choice_action[self.choice_ptr[s] + i] >= 0
                             and self.actions[self.choice_action[self.choice_ptr[s] + i]] == choice]
                    if not local:
                        raise ValueError(f"scheduler: state {s} has no choice with action {choice}")
                    chosen[s] = local[0]
                else:
                    if not 0 <= int(choice) < max(k, 1):
                        raise ValueError(f"scheduler: state {s} has {k} choices, cannot pick {choice}")
                    chosen[s] = int(choice)
            local_index = np.arange(self.num_choices) - self.choice_ptr[self.choice_src]
            sel = local_index == chosen[self.choice_src]
            weight = sel.astype(np.float64)
            weight_exact = [Fraction(int(b)) for b in sel.tolist()]
        edge_choice = np.repeat(np.arange(self.num_choices), np.diff(self.edge_ptr))
        src = self.choice_src[edge_choice]
        prob = self.edge_prob * weight[edge_choice]
        exact = None
        if self.edge_prob_exact is not None:
            ec = edge_choice.tolist()
            exact = [p * weight_exact[c] for p, c in zip(self.edge_prob_exact, ec, strict=True)]
        keep = prob > 0
        if exact is not None:
            keep = np.array([p != 0 for p in exact], dtype=bool) if len(exact) else keep
        return dtmc_from_edges(n, src[keep], self.edge_dst[keep], prob[keep],
                                None if exact is None else [p for p, k in zip(exact, keep, strict=True) if k],
                                self.initial)


def dtmc_from_edges(n: int, src: np.ndarray, dst: np.ndarray, prob: np.ndarray,
                     exact: Sequence[Fraction] | None, initial: tuple[tuple[int, Fraction], ...]) -> Dtmc:
    """Merge parallel edges (same source and target) and build the CSR chain."""
    if len(src) == 0:
        return Dtmc(n, np.zeros(n + 1, np.int64), np.zeros(0, np.int64), np.zeros(0), () if exact is not None
                    else None, initial)
    key = src.astype(np.int64) * n + dst.astype(np.int64)
    uniq, inv = np.unique(key, return_inverse=True)
    prob_m = np.bincount(inv, weights=prob, minlength=len(uniq))
    exact_m: tuple[Fraction, ...] | None = None
    if exact is not None:
        acc = [Fraction(0)] * len(uniq)
        for i, p in zip(inv.tolist(), exact, strict=True):
            acc[i] += p
        exact_m = tuple(acc)
        prob_m = np.array([float(p) for p in acc], dtype=np.float64)
    s_m, d_m = np.divmod(uniq, n)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(s_m, minlength=n), out=ptr[1:])
    return Dtmc(n, ptr, d_m.astype(np.int64), prob_m, exact_m, initial)


def _initial_distribution(kripke: Kripke,
                          initial: Mapping[int, Fraction] | None) -> tuple[tuple[int, Fraction], ...]:
    if initial is None:
        ids = sorted(set(int(i) for i in kripke.initial.tolist()))
        if not ids:
            raise ValueError("the Kripke structure has no initial state")
        return tuple((i, Fraction(1, len(ids))) for i in ids)
    dist = tuple(sorted((int(s), Fraction(p)) for s, p in initial.items() if Fraction(p) != 0))
    total = sum((p for _, p in dist), Fraction(0))
    if total != 1 or any(p < 0 for _, p in dist):
        raise ValueError(f"initial distribution must be non-negative and sum to 1, got total {total}")
    return dist


def mdp_from_kripke(kripke: Kripke, initial: Mapping[int, Fraction] | None = None) -> Mdp:
    """The MDP of a Kripke structure (IIIf ``Kripke S I`` with the probabilities of ``checker.mc.ts``).

    With probabilities, the edges of a state sharing an action form one choice; without, every edge is
    a choice of probability 1.  ``initial`` is the initial distribution (default: uniform over
    ``kripke.initial``; the ``M = Kripke {t. I →* t} {I}`` of [IIIf-FL] has a single initial state).

    An incomplete structure (exploration limit hit) is rejected: its frontier states have unknown
    successors, so no probability computed on it would be sound.
    """
    if not kripke.complete:
        raise ValueError(f"the Kripke structure is incomplete ({kripke.limit_reason}); "
                         "probabilities need the full reachable state space")
    n = kripke.num_states
    m = kripke.num_transitions
    src = kripke.edge_src
    if kripke.edge_prob is None:
        order = np.arange(m)
        group_key = np.arange(m, dtype=np.int64)  # each edge its own choice (CSR: sorted by source)
        choice_action_per_edge = kripke.edge_action.astype(np.int64)
        prob = np.ones(m)
        exact: tuple[Fraction, ...] | None = tuple(Fraction(1) for _ in range(m))
    else:
        key = src * (len(kripke.actions) + 1) + kripke.edge_action.astype(np.int64)
        order = np.lexsort((kripke.succ_idx, key))
        group_key = key[order]
        choice_action_per_edge = kripke.edge_action.astype(np.int64)[order]
        prob = np.asarray(kripke.edge_prob, dtype=np.float64)[order]
        exact = None
        if kripke.edge_prob_exact is not None:
            ex = kripke.edge_prob_exact
            exact = tuple(Fraction(ex[i]) for i in order.tolist())
    dst = kripke.succ_idx[order].astype(np.int64)
    src_sorted = src[order]
    if m:
        starts = np.flatnonzero(np.r_[True, group_key[1:] != group_key[:-1]])
    else:
        starts = np.zeros(0, dtype=np.int64)
    edge_ptr = np.r_[starts, m].astype(np.int64)
    choice_src = src_sorted[starts] if m else np.zeros(0, np.int64)
    choice_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(choice_src, minlength=n), out=choice_ptr[1:])
    choice_action = choice_action_per_edge[starts] if m else np.zeros(0, np.int64)
    return Mdp(n, choice_ptr, choice_action, edge_ptr, dst, prob, exact,
               _initial_distribution(kripke, initial), tuple(kripke.actions))


def dtmc_from_kripke(kripke: Kripke, scheduler: Scheduler = "uniform",
                     initial: Mapping[int, Fraction] | None = None) -> Dtmc:
    """The DTMC of ``kripke`` under a memoryless ``scheduler`` (default: uniform over the enabled
    choices; a structure with one choice per state is already a DTMC and any scheduler gives it)."""
    return mdp_from_kripke(kripke, initial).induced_dtmc(scheduler)



def initial_expectation(initial: Sequence[tuple[int, Fraction]], values: Values,
                        exact: bool) -> Fraction | float:
    """``Σ_s π₀(s) values(s)`` for the initial distribution ``initial`` (exact over ``Fraction`` or float)."""
    if exact:
        return sum((p * values[s] for s, p in initial), Fraction(0))
    return float(sum(float(p) * float(values[s]) for s, p in initial))
