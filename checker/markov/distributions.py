"""Distributions at the end of runs of a DTMC: over states after ``k`` steps, over an observable's value
after ``k`` steps or eventually, and the absorption probabilities of the bottom components."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from checker.markov.graph import bottom_components, forward_reach
from checker.markov.models import Dtmc, Values
from checker.markov.solve import solve_exact, solve_float, use_exact_solve
from checker.mc.reach import topological_layers

__all__ = ["ObservableDistribution", "bottom_absorption", "observable_distribution", "step_distribution",
           "transient_distribution"]


def step_distribution(dtmc: Dtmc, vec: Values, exact: bool, absorb_deadlocks: bool) -> Values:
    if exact:
        out: Values = np.empty(dtmc.num_states, dtype=object)
        out[:] = Fraction(0)
        assert dtmc.prob_exact is not None
        ptr = dtmc.ptr.tolist()
        idx = dtmc.idx.tolist()
        for s in np.flatnonzero(vec != 0).tolist():
            mass = vec[s]
            if ptr[s] == ptr[s + 1]:
                if absorb_deadlocks:
                    out[s] += mass
                continue
            for e in range(ptr[s], ptr[s + 1]):
                out[idx[e]] += mass * dtmc.prob_exact[e]
        return out
    res = dtmc.matrix().T @ vec
    if absorb_deadlocks:
        dl = dtmc.deadlocks
        res[dl] += vec[dl]
    return res


def transient_distribution(dtmc: Dtmc, steps: int, *, exact: bool | None = None) -> Values:
    """The distribution over states after exactly ``steps`` steps, a run ending in a deadlock staying
    there (``π_{k+1} = π_k P`` plus the deadlock mass)."""
    use_exact = use_exact_solve(exact, dtmc.is_exact, dtmc.num_states)
    vec = dtmc.initial_vector(use_exact)
    for _ in range(steps):
        vec = step_distribution(dtmc, vec, use_exact, absorb_deadlocks=True)
    return vec


@dataclass(frozen=True)
class ObservableDistribution:
    """Distribution of an observable's value at the end of runs: ``dist`` maps value -> probability;
    ``missing`` (``steps=None`` only) is the mass of runs whose eventual value is undetermined (they end in
    a bottom component on which the observable is not constant)."""

    dist: dict[Hashable, Fraction | float]
    missing: Fraction | float
    exact: bool
    steps: int | None


def observable_distribution(dtmc: Dtmc, values: Sequence[Hashable], *, steps: int | None = None,
                            exact: bool | None = None,
                            absorbed: Sequence[tuple[list[int], Fraction | float]] | None = None,
                            ) -> ObservableDistribution:
    """Distribution of ``values[s]`` (one value per state, e.g. ``Kripke.observables["curmodpar"]``)
    at the end of runs.

    ``steps=k``: on the state reached after ``k`` steps (a run stopped earlier in a deadlock counts with
    its deadlock state).  ``steps=None``: the *eventual* value, i.e. the value on the bottom strongly
    connected component where the run ends up (a deadlock where it terminates, or a closed cycle on
    which the value is constant): ``Σ_{B bottom, values|B = v} Pr[run ends in B]``
    (:func:`bottom_absorption`; pass its result as ``absorbed`` to reuse it for several observables);
    ``missing`` is the mass of components on which the value varies.
    """
    if len(values) != dtmc.num_states:
        raise ValueError(f"{len(values)} observable values for {dtmc.num_states} states")
    use_exact = use_exact_solve(exact, dtmc.is_exact, dtmc.num_states)
    zero: Fraction | float = Fraction(0) if use_exact else 0.0
    dist: dict[Hashable, Fraction | float] = {}
    if steps is not None:
        vec = transient_distribution(dtmc, steps, exact=use_exact)
        for s in np.flatnonzero(vec != 0).tolist():
            dist[values[s]] = dist.get(values[s], zero) + vec[s]
        return ObservableDistribution(dist, zero, use_exact, steps)
    if absorbed is None:
        absorbed = bottom_absorption(dtmc, exact=use_exact)
    for comp_states, mass in absorbed:
        vals = {values[t] for t in comp_states}
        if len(vals) != 1:
            continue
        (v,) = vals
        if mass:
            dist[v] = dist.get(v, zero) + mass
    total = sum(dist.values(), zero)
    return ObservableDistribution(dist, (Fraction(1) if use_exact else 1.0) - total, use_exact, None)


def _forward_flow(dtmc: Dtmc, layers: Sequence[np.ndarray], init: Values, exact: bool) -> Values:
    """``x(t) = π₀(t) + Σ_{s → t} x(s) P(s, t)`` over the ``layers`` of an acyclic chain."""
    flow = init.copy()
    prob: np.ndarray
    if exact:
        assert dtmc.prob_exact is not None
        prob = np.empty(len(dtmc.prob_exact), dtype=object)
        prob[:] = dtmc.prob_exact
    else:
        prob = dtmc.prob
    ptr, idx = dtmc.ptr, dtmc.idx
    for layer in layers:
        starts = ptr[layer]
        counts = ptr[layer + 1] - starts
        if not counts.any():
            continue
        edges = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
        np.add.at(flow, idx[edges], np.repeat(flow[layer], counts) * prob[edges])
    return flow


def bottom_absorption(dtmc: Dtmc, *, exact: bool | None = None) -> list[tuple[list[int], Fraction | float]]:
    """``[(component, Pr[the run ends up in component])]`` for every bottom SCC, from the initial
    distribution, with ONE linear solve: the expected numbers of visits ``x`` to the transient states
    solve ``x = π₀ + Qᵀ x`` (``Q`` the chain restricted to transient states), and the mass entering a
    bottom component ``B`` is ``π₀(B) + Σ_{s transient} x(s) P(s, B)``.

    On an acyclic chain (every bounded FL system) ``x`` is the mass flowing through each state, computed
    without a solve: in topological order, ``x(t) = π₀(t) + Σ_{s → t} x(s) P(s, t)``
    (:func:`checker.mc.reach.topological_layers`); the bottom components are the deadlocks, each
    absorbing its ``x``. Exact rationals stay exact (one product and one sum per edge)."""
    use_exact = use_exact_solve(exact, dtmc.is_exact, dtmc.num_states)
    n = dtmc.num_states
    comps = bottom_components(dtmc)
    comp_of = np.full(n, -1, dtype=np.int64)
    for i, members in enumerate(comps):
        comp_of[members] = i
    transient = comp_of < 0
    init = dtmc.initial_vector(use_exact)
    zero: Fraction | float = Fraction(0) if use_exact else 0.0
    mass: list[Fraction | float] = [zero] * len(comps)
    for s, p in dtmc.initial:
        if comp_of[s] >= 0:
            mass[comp_of[s]] += p if use_exact else float(p)
    reach = forward_reach(dtmc, np.array([s for s, _ in dtmc.initial], dtype=np.int64)) & transient
    unknown = np.flatnonzero(reach)
    src = dtmc.src
    layers = topological_layers(dtmc.ptr, dtmc.idx) if unknown.size else None
    if layers is not None:
        # an acyclic chain: every bottom component is a deadlock, and the mass flows forward once
        flow = _forward_flow(dtmc, layers, init, use_exact)
        return [(c, flow[c[0]]) for c in comps]
    if unknown.size:
        if use_exact:
            rows_t: dict[int, dict[int, Fraction]] = {int(s): {} for s in unknown.tolist()}
            assert dtmc.prob_exact is not None
            prob_exact = dtmc.prob_exact
            idx = dtmc.idx
            internal = np.flatnonzero(reach[src] & reach[idx])
            for e, a, b in zip(internal.tolist(), src[internal].tolist(), idx[internal].tolist(),
                               strict=True):
                row = rows_t[b]
                row[a] = row[a] + prob_exact[e] if a in row else prob_exact[e]
            x = solve_exact(rows_t, {int(s): init[s] for s in unknown.tolist()}, unknown.tolist())
            entering = np.flatnonzero(reach[src] & (comp_of[idx] >= 0))
            for e, a, c in zip(entering.tolist(), src[entering].tolist(), comp_of[idx[entering]].tolist(),
                               strict=True):
                mass[c] += x[a] * prob_exact[e]
        else:
            mat_t = dtmc.matrix().T.tocsr()
            xs = solve_float(mat_t, np.asarray(init[unknown], dtype=np.float64), unknown)
            xfull = np.zeros(n)
            xfull[unknown] = xs
            into = comp_of[dtmc.idx]
            sel = reach[src] & (into >= 0)
            contrib = np.bincount(into[sel], weights=xfull[src[sel]] * dtmc.prob[sel], minlength=len(comps))
            mass = [mass[i] + float(contrib[i]) for i in range(len(comps))]
    return list(zip(comps, mass, strict=True))

