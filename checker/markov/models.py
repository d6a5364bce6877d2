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

import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np

from checker.mc.kripke import Kripke
from checker.mc.ts import Action

if TYPE_CHECKING:  # scipy is imported where a matrix is built (start-up time)
    import scipy.sparse as sp

__all__ = [
    "Dtmc",
    "Mdp",
    "Scheduler",
    "Values",
    "build_mdp",
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

T = TypeVar("T")


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
    ``prob_exact`` (``Fraction``, when known; ``prob`` then holds their correctly rounded floats).  Rows
    sum to 1, except deadlock rows which are empty.  ``initial`` is the initial distribution as
    ``((state, probability), ...)``.  A chain is immutable: the chains of :meth:`Mdp.induced_dtmc` are
    shared between callers, and their arrays are read-only.
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

    @cached_property
    def src(self) -> np.ndarray:
        """The source state of every edge."""
        return _read_only(np.repeat(np.arange(self.num_states, dtype=np.int64), np.diff(self.ptr)))

    @cached_property
    def positive(self) -> np.ndarray:
        """The edges of positive probability (decided on the exact probabilities when known)."""
        if self.prob_exact is None:
            return _read_only(self.prob > 0)
        return _read_only(np.array(_map_distinct(_is_positive, self.prob_exact), dtype=bool))

    def matrix(self) -> sp.csr_matrix:
        """The transition matrix ``P`` (float, CSR)."""
        import scipy.sparse as sp  # lazy: scipy's import costs a tenth of a second

        return sp.csr_matrix((self.prob, self.idx, self.ptr), shape=(self.num_states, self.num_states))

    def rows_exact(self) -> list[dict[int, Fraction]]:
        """Row ``s`` as ``{successor: exact probability}``; raises if the chain is not exact."""
        if self.prob_exact is None:
            raise ValueError("this chain has no exact probabilities")
        rows: list[dict[int, Fraction]] = []
        idx = self.idx.tolist()
        ptr = self.ptr.tolist()
        exact = self.prob_exact
        for s in range(self.num_states):
            row: dict[int, Fraction] = {}
            for e in range(ptr[s], ptr[s + 1]):
                t = idx[e]
                row[t] = row[t] + exact[e] if t in row else exact[e]
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


#: How many induced chains one :class:`Mdp` keeps (policy iteration visits a few policies in turn).
INDUCED_CACHE_SIZE = 8


@dataclass(frozen=True, eq=False)
class Mdp:
    """A Markov decision process: state ``s`` has choices ``choice_ptr[s] .. choice_ptr[s+1]-1``;
    choice ``c`` has the distribution ``edge_dst/edge_prob[edge_ptr[c]:edge_ptr[c+1]]`` and the action
    ``actions[choice_action[c]]`` (``-1``: an unlabelled edge-choice of a non-probabilistic model).

    An MDP is immutable; the arrays derived from it (``choice_src``, ``edge_choice``, ``edge_positive``,
    ``choice_matrix``) are computed once, and so is the DTMC induced by each scheduler
    (:meth:`induced_dtmc`, a cache of the last :data:`INDUCED_CACHE_SIZE` chains held by the MDP).
    """

    num_states: int
    choice_ptr: np.ndarray
    choice_action: np.ndarray
    edge_ptr: np.ndarray
    edge_dst: np.ndarray
    edge_prob: np.ndarray
    edge_prob_exact: tuple[Fraction, ...] | None
    initial: tuple[tuple[int, Fraction], ...]
    actions: tuple[Action, ...] = ()
    _induced: dict[tuple[bytes | None, bool], Dtmc] = field(default_factory=dict, init=False, repr=False,
                                                          compare=False)

    @property
    def num_choices(self) -> int:
        return len(self.choice_action)

    @cached_property
    def choice_src(self) -> np.ndarray:
        """The state of every choice."""
        return _read_only(np.repeat(np.arange(self.num_states, dtype=np.int64), np.diff(self.choice_ptr)))

    @cached_property
    def edge_choice(self) -> np.ndarray:
        """The choice of every edge."""
        return _read_only(np.repeat(np.arange(self.num_choices, dtype=np.int64), np.diff(self.edge_ptr)))

    @cached_property
    def edge_positive(self) -> np.ndarray:
        """The edges of positive probability (decided on the exact probabilities when known)."""
        if self.edge_prob_exact is None:
            return _read_only(self.edge_prob > 0)
        return _read_only(np.array(_map_distinct(_is_positive, self.edge_prob_exact), dtype=bool))

    @cached_property
    def edge_prob_rounded(self) -> np.ndarray:
        """The correctly rounded floats of the exact probabilities (``edge_prob`` when not exact)."""
        if self.edge_prob_exact is None:
            return self.edge_prob
        return _read_only(np.array(_map_distinct(float, self.edge_prob_exact), dtype=np.float64))

    @cached_property
    def choice_matrix(self) -> sp.csr_matrix:
        """The float matrix ``choices × states`` of the choices' distributions."""
        import scipy.sparse as sp  # lazy: scipy's import costs a tenth of a second

        return sp.csr_matrix((self.edge_prob, (self.edge_choice, self.edge_dst)),
                             shape=(self.num_choices, self.num_states))

    @property
    def is_dtmc(self) -> bool:
        """True when no state has more than one choice."""
        return bool(np.all(np.diff(self.choice_ptr) <= 1))

    def induced_dtmc(self, scheduler: Scheduler = "uniform", *, exact: bool | None = None) -> Dtmc:
        """The DTMC obtained by resolving every state's choice with a memoryless ``scheduler``.

        ``exact``: carry the exact probabilities (default: when the MDP has them).  ``exact=False`` builds
        a float chain straight from the float arrays (no ``Fraction`` is touched): each probability is the
        MDP's float, times ``1/k`` for the uniform choice among ``k`` choices, and parallel edges are summed
        in float; each entry is within a relative ``4·2⁻⁵³`` (a few ulps) of the exact one.  The graph
        (which edges are positive) is the same as the exact chain's.  The chain is cached per scheduler.
        """
        if isinstance(scheduler, str):
            if scheduler != "uniform":
                raise ValueError(f"unknown scheduler {scheduler!r}; expected 'uniform' or a mapping")
            return self.induced_by_choice(None, exact=exact)
        nchoice = np.diff(self.choice_ptr)
        chosen = np.zeros(self.num_states, dtype=np.int64)
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
        return self.induced_by_choice(chosen, exact=exact)

    def induced_by_choice(self, chosen: np.ndarray | None, *, exact: bool | None = None) -> Dtmc:
        """The DTMC of the deterministic memoryless scheduler picking choice ``chosen[s]`` (an index
        among the choices of ``s``, checked by the caller) in every state ``s``, or (``None``) of the
        uniform scheduler; ``exact`` as in :meth:`induced_dtmc`.  Cached: the same ``chosen`` and
        ``exact`` give the same (immutable) chain."""
        use_exact = self.edge_prob_exact is not None if exact is None else exact
        if use_exact and self.edge_prob_exact is None:
            raise ValueError("exact chain requested but the MDP has no exact probabilities")
        key = (None if chosen is None else np.asarray(chosen, dtype=np.int64).tobytes(), use_exact)
        cached = self._induced.get(key)
        if cached is None:
            cached = self._build_induced(chosen, use_exact)
            if len(self._induced) >= INDUCED_CACHE_SIZE:
                del self._induced[next(iter(self._induced))]
            self._induced[key] = cached
        return cached

    def _build_induced(self, chosen: np.ndarray | None, exact: bool) -> Dtmc:
        edge_choice = self.edge_choice
        edge_src = self.choice_src[edge_choice]
        if chosen is None:
            nchoice = np.diff(self.choice_ptr)
            per_edge = nchoice[edge_src]  # k: the uniform weight of the edge is 1/k
            keep = self.edge_positive.copy()
        else:
            local_index = np.arange(self.num_choices) - self.choice_ptr[self.choice_src]
            selected = local_index == np.asarray(chosen, dtype=np.int64)[self.choice_src]
            per_edge = np.ones(len(edge_choice), dtype=np.int64)
            keep = selected[edge_choice] & self.edge_positive
        kept = np.flatnonzero(keep)
        ks = per_edge[kept]
        if not exact:
            prob = self.edge_prob[kept] * (1.0 / ks)
            return dtmc_from_edges(self.num_states, edge_src[kept], self.edge_dst[kept], prob, None,
                                   self.initial)
        assert self.edge_prob_exact is not None
        ex = self.edge_prob_exact
        prob = self.edge_prob_rounded[kept]
        if np.all(ks == 1):
            exact_kept = [ex[e] for e in kept.tolist()]
        else:
            # the structure holds few distinct probability objects: each product p/k (and its float) is
            # computed once, keyed on the object (which ``ex`` keeps alive) and k
            products: dict[tuple[int, int], tuple[Fraction, float]] = {}
            exact_kept = []
            prob_list = prob.tolist()
            for i, (e, k) in enumerate(zip(kept.tolist(), ks.tolist(), strict=True)):
                p = ex[e]
                if k == 1:
                    exact_kept.append(p)
                    continue
                product = products.get((id(p), k))
                if product is None:
                    weighted = p / k
                    product = products[(id(p), k)] = (weighted, float(weighted))
                exact_kept.append(product[0])
                prob_list[i] = product[1]
            prob = np.array(prob_list, dtype=np.float64)
        return dtmc_from_edges(self.num_states, edge_src[kept], self.edge_dst[kept], prob, exact_kept,
                               self.initial)


def _map_distinct(function: Callable[[Fraction], T], values: Sequence[Fraction]) -> list[T]:
    """``[function(v) for v in values]``, calling ``function`` once per distinct object (a structure's
    probabilities are a few shared ``Fraction`` objects; ``values`` keeps them alive, so ids are stable)."""
    memo: dict[int, T] = {}
    out: list[T] = []
    for v in values:
        key = id(v)
        if key in memo:
            out.append(memo[key])
        else:
            out.append(memo.setdefault(key, function(v)))
    return out


def _is_positive(p: Fraction) -> bool:
    return p > 0


def _read_only(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr


def dtmc_from_edges(n: int, src: np.ndarray, dst: np.ndarray, prob: np.ndarray,
                     exact: Sequence[Fraction] | None, initial: tuple[tuple[int, Fraction], ...]) -> Dtmc:
    """Merge parallel edges (same source and target) and build the CSR chain.

    With ``exact``, ``prob`` must hold the correctly rounded floats of ``exact``; a merged edge gets the
    exact sum and its correctly rounded float.  Without, merged edges are summed in float."""
    if len(src) == 0:
        return Dtmc(n, _read_only(np.zeros(n + 1, np.int64)), _read_only(np.zeros(0, np.int64)),
                    _read_only(np.zeros(0)), () if exact is not None else None, initial)
    key = src.astype(np.int64) * n + dst.astype(np.int64)
    order = np.argsort(key, kind="stable")
    key_sorted = key[order]
    starts = np.flatnonzero(np.r_[True, key_sorted[1:] != key_sorted[:-1]])
    uniq = key_sorted[starts]
    exact_m: tuple[Fraction, ...] | None = None
    prob_m: np.ndarray
    if len(starts) == len(key):  # no parallel edges
        prob_m = np.asarray(prob, dtype=np.float64)[order]
        if exact is not None:
            exact_m = tuple(exact[i] for i in order.tolist())
    else:
        group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(key)]))
        prob_m = np.bincount(group, weights=np.asarray(prob, dtype=np.float64)[order], minlength=len(uniq))
        if exact is not None:
            acc: list[Fraction] = []
            sizes = np.diff(np.r_[starts, len(key)]).tolist()
            pos = 0
            order_list = order.tolist()
            for g, size in enumerate(sizes):
                if size == 1:
                    acc.append(exact[order_list[pos]])
                    prob_m[g] = prob[order_list[pos]]
                else:
                    total = sum((exact[i] for i in order_list[pos:pos + size]), Fraction(0))
                    acc.append(total)
                    prob_m[g] = float(total)
                pos += size
            exact_m = tuple(acc)
    s_m, d_m = np.divmod(uniq, n)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(s_m, minlength=n), out=ptr[1:])
    return Dtmc(n, _read_only(ptr), _read_only(d_m.astype(np.int64)), _read_only(prob_m), exact_m, initial)


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
    """The MDP of ``kripke`` (:func:`build_mdp`), built once per structure: with the default
    ``initial``, the MDP is cached for as long as ``kripke`` lives (keyed on the object; a structure
    whose transition arrays are replaced gets a new MDP).  The MDP and its induced chains are
    immutable, so every caller shares them."""
    if initial is not None:
        return build_mdp(kripke, initial)
    fingerprint = (kripke.succ_ptr, kripke.succ_idx, kripke.edge_action, kripke.edge_prob,
                   kripke.edge_prob_exact, kripke.initial, kripke.complete)
    cached = _MDP_CACHE.get(kripke)
    if cached is not None and all(a is b for a, b in zip(cached[0], fingerprint, strict=True)):
        return cached[1]
    mdp = build_mdp(kripke)
    _MDP_CACHE[kripke] = (fingerprint, mdp)
    return mdp


#: ``mdp_from_kripke``'s cache: structure -> (its transition arrays, MDP), compared by identity; an entry
#: goes with its structure.
_MDP_CACHE: weakref.WeakKeyDictionary[Kripke, tuple[tuple[object, ...], Mdp]] = weakref.WeakKeyDictionary()


def build_mdp(kripke: Kripke, initial: Mapping[int, Fraction] | None = None) -> Mdp:
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
            exact = tuple(p if type(p) is Fraction else Fraction(p) for p in (ex[i] for i in order.tolist()))
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
                     initial: Mapping[int, Fraction] | None = None, *, exact: bool | None = None) -> Dtmc:
    """The DTMC of ``kripke`` under a memoryless ``scheduler`` (default: uniform over the enabled
    choices; a structure with one choice per state is already a DTMC and any scheduler gives it).
    ``exact`` as in :meth:`Mdp.induced_dtmc`; the chain is shared through the caches of
    :func:`mdp_from_kripke` and :meth:`Mdp.induced_dtmc`."""
    return mdp_from_kripke(kripke, initial).induced_dtmc(scheduler, exact=exact)



def initial_expectation(initial: Sequence[tuple[int, Fraction]], values: Values,
                        exact: bool) -> Fraction | float:
    """``Σ_s π₀(s) values(s)`` for the initial distribution ``initial`` (exact over ``Fraction`` or float)."""
    if exact:
        return sum((p * values[s] for s, p in initial), Fraction(0))
    return float(sum(float(p) * float(values[s]) for s, p in initial))
