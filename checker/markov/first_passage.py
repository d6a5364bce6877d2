"""First-passage probabilities ``Pr[◇ s]`` of a DTMC ([IIIf-FL] III-B, the probabilistic path quantifier
``P(M ⊢F s)`` read as the probability that a run eventually reaches ``s``; what probabilistic model
checkers compute, always in ``[0, 1]``)."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from checker.markov.graph import almost_sure_states, can_reach
from checker.markov.models import Dtmc, Values, initial_expectation, state_mask
from checker.markov.solve import solve_exact, solve_float, use_exact_solve

__all__ = ["reach_probabilities", "reach_probability"]


def reach_probabilities(dtmc: Dtmc, target: np.ndarray | Iterable[int], *,
                        exact: bool | None = None) -> Values:
    """First-passage probabilities ``x(s) = Pr_s[◇ target]`` for every state ``s``.

    ``x`` is the least solution of ``x = 1`` on ``target``, ``x(s) = Σ_t P(s,t) x(t)`` elsewhere; states
    that cannot reach the target get 0 and states that reach it almost surely get 1 (graph
    precomputations ``Prob0``/``Prob1``), the others solve a non-singular system.
    Returns a float array, or an object array of ``Fraction`` when exact.

    The float path (``exact=False``, or ``None`` on a large or float chain) decides the ``0`` and ``1``
    states on the graph, so they are exactly ``0.0`` and ``1.0`` as in the exact path; the other values
    carry the error of :func:`checker.markov.solve.solve_float` (residual at most
    :data:`~checker.markov.solve.FLOAT_RESIDUAL_TOLERANCE`, times the expected number of steps before the
    target is reached or missed) plus that of the float chain (a few ulps per entry,
    :meth:`checker.markov.models.Mdp.induced_dtmc`).

    >>> from checker.markov.models import dtmc_from_kripke
    >>> from checker.mc.kripke import Kripke
    >>> k = Kripke.from_edges(3, [0], [0, 0, 1, 2], [1, 2, 1, 2],
    ...                       prob_exact=[Fraction(1, 3), Fraction(2, 3), Fraction(1), Fraction(1)])
    >>> reach_probabilities(dtmc_from_kripke(k), [1], exact=True).tolist()
    [Fraction(1, 3), Fraction(1, 1), Fraction(0, 1)]
    """
    n = dtmc.num_states
    tmask = state_mask(target, n)
    yes = almost_sure_states(dtmc, tmask)
    can = can_reach(dtmc, tmask)
    unknown = np.flatnonzero(can & ~yes)
    tmask = yes  # states reaching the target almost surely count as target (Prob1 precomputation)
    if use_exact_solve(exact, dtmc.is_exact, len(unknown)):
        rows = dtmc.rows_exact()
        rhs = {int(s): sum((p for t, p in rows[s].items() if tmask[t]), Fraction(0))
               for s in unknown.tolist()}
        sol = solve_exact({int(s): rows[s] for s in unknown.tolist()}, rhs, unknown.tolist())
        out: Values = np.empty(n, dtype=object)
        out[:] = Fraction(0)
        for s in np.flatnonzero(tmask).tolist():
            out[s] = Fraction(1)
        for s, v in sol.items():
            out[s] = v
        return out
    res = tmask.astype(np.float64)
    if unknown.size:
        mat = dtmc.matrix()
        b = np.asarray(mat[unknown][:, np.flatnonzero(tmask)].sum(axis=1)).ravel()
        res[unknown] = solve_float(mat, b, unknown)
    return res


def reach_probability(dtmc: Dtmc, target: np.ndarray | Iterable[int], *,
                      exact: bool | None = None) -> Fraction | float:
    """``Pr[◇ target]`` from the initial distribution (first passage; see
    :func:`checker.markov.pathsum.path_sum` for the literal path sum of [IIIf-FL])."""
    vals = reach_probabilities(dtmc, target, exact=exact)
    return initial_expectation(dtmc.initial, vals, vals.dtype == object)

