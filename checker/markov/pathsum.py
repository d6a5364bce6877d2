"""The literal path sum ``P(M ⊢F s) = Σ_{π ∈ M ⊢F s} Pr(π)`` of [IIIf-FL] III-B and the [IIIf]
theory ``Prob``: a probability assignment applied to the set of finite paths that start in an initial
state, stay in ``M`` and end in ``s``.

It equals the *expected number of visits* to ``s``: it may exceed 1 and diverges when a reachable state of
``s`` is recurrent.  On a model where no run visits ``s`` twice it coincides with the first-passage
probability of :mod:`checker.markov.first_passage`, which is why the two have distinct names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from checker.markov.distributions import step_distribution
from checker.markov.first_passage import reach_probabilities
from checker.markov.graph import can_reach, forward_reach, recurrent_target
from checker.markov.models import Dtmc, Values, initial_expectation, state_mask
from checker.markov.solve import solve_exact, solve_float

__all__ = ["PathSum", "path_sum"]


@dataclass(frozen=True)
class PathSum:
    """The path sum ``P(M ⊢F s) = Σ_{finite paths π from init ending in s} Pr(π)`` ([IIIf-FL] III-B).

    ``value`` is ``inf`` when the sum diverges (``diverges`` true; ``witness`` is then a reachable
    recurrent target state); ``first_passage`` is ``Pr[◇ s]`` for comparison; ``max_length`` is the
    bound on path length (number of steps) when the sum was truncated.
    """

    value: Fraction | float
    diverges: bool
    first_passage: Fraction | float
    exact: bool
    max_length: int | None = None
    witness: int | None = None

    @property
    def differs_from_first_passage(self) -> bool:
        return self.diverges or self.value != self.first_passage


def path_sum(dtmc: Dtmc, target: np.ndarray | Iterable[int], *, max_length: int | None = None,
             exact: bool | None = None) -> PathSum:
    """The path sum ``Σ_π Pr(π)`` over the finite paths that start in an initial state (weighted by the
    initial distribution) and end in ``target`` (IIIf ``pmap ops (M ⊢F s)``).

    Equals the expected number of visits to ``target``: ``Σ_{k≥0} π₀ Pᵏ 1_target``.  With ``max_length``
    only paths of at most that many steps count (always finite).  Without it the series is solved as
    ``x = 1_target + P x`` on the states that can reach the target; it diverges exactly when a target
    state reachable from an initial state lies in a closed recurrent class (a bottom strongly connected
    component with at least one edge), because such a state is visited infinitely often.
    """
    n = dtmc.num_states
    tmask = state_mask(target, n)
    fp_vals = reach_probabilities(dtmc, tmask, exact=exact)
    use_exact = fp_vals.dtype == object
    first = initial_expectation(dtmc.initial, fp_vals, use_exact)
    if max_length is not None:
        if max_length < 0:
            raise ValueError("max_length must be >= 0")
        vec = dtmc.initial_vector(use_exact)
        total: Fraction | float = Fraction(0) if use_exact else 0.0
        for step in range(max_length + 1):
            total += sum(vec[tmask].tolist(), Fraction(0) if use_exact else 0.0)
            if step < max_length:
                vec = step_distribution(dtmc, vec, use_exact, absorb_deadlocks=False)
        return PathSum(total, False, first, use_exact, max_length)
    # divergence: a reachable target state in a closed class with an internal edge
    reach_from_init = forward_reach(dtmc, np.array([s for s, _ in dtmc.initial], dtype=np.int64))
    witness = recurrent_target(dtmc, tmask & reach_from_init)
    if witness is not None:
        return PathSum(float("inf"), True, first, use_exact, None, witness)
    # only states reachable from an initial state matter (an unreachable recurrent target would make
    # the system singular without affecting the sum)
    can = can_reach(dtmc, tmask) & reach_from_init
    unknown = np.flatnonzero(can)
    if use_exact:
        rows = dtmc.rows_exact()
        rhs = {int(s): Fraction(int(tmask[s])) for s in unknown.tolist()}
        sol = solve_exact({int(s): rows[s] for s in unknown.tolist()}, rhs, unknown.tolist())
        vals: Values = np.empty(n, dtype=object)
        vals[:] = Fraction(0)
        for s, v in sol.items():
            vals[s] = v
    else:
        vals = np.zeros(n)
        if unknown.size:
            vals[unknown] = solve_float(dtmc.matrix(), tmask[unknown].astype(np.float64), unknown)
    return PathSum(initial_expectation(dtmc.initial, vals, use_exact), False, first, use_exact)

