"""Linear solves of ``x = A x + b``: exact over ``Fraction`` and sparse float.

Where the model carries exact probabilities (``Kripke.edge_prob_exact``) and is small, linear systems are
solved exactly over ``Fraction`` (sparse Gaussian elimination without pivoting, valid because
``I − A`` restricted to the states that can reach the target is a non-singular M-matrix); otherwise with
``scipy.sparse.linalg.spsolve``.  ``exact=None`` chooses automatically (:data:`EXACT_AUTO_LIMIT`).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy is imported by the float solve that uses it (start-up time)
    import scipy.sparse as sp

__all__ = ["EXACT_AUTO_LIMIT", "FLOAT_RESIDUAL_TOLERANCE", "solve_exact", "solve_float", "use_exact_solve"]

#: ``exact=None`` solves exactly when the model has exact probabilities and at most this many states.
EXACT_AUTO_LIMIT = 3000


def _postorder(unknowns: list[int], rows: Mapping[int, Mapping[int, Fraction]]) -> list[int]:
    """A DFS post-order of the unknowns along the successor relation (successors first): on an acyclic
    chain it makes ``I − A`` triangular, so elimination creates no fill-in."""
    seen: set[int] = set()
    order: list[int] = []
    unknown_set = set(unknowns)
    for root in unknowns:
        if root in seen:
            continue
        seen.add(root)
        stack: list[tuple[int, Iterable[int]]] = [(root, iter(sorted(rows[root])))]
        while stack:
            node, it = stack[-1]
            for nxt in it:
                if nxt in unknown_set and nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(sorted(rows[nxt]))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def solve_exact(rows: Mapping[int, Mapping[int, Fraction]], rhs: Mapping[int, Fraction],
                unknowns: Sequence[int]) -> dict[int, Fraction]:
    """Solve ``x = A x + b`` exactly for the ``unknowns`` (``x_j = 0`` for ``j`` not an unknown).

    ``rows[i]`` is row ``i`` of ``A`` (``{j: a_ij}``), ``rhs[i]`` is ``b_i``.  Sparse Gaussian elimination
    of ``(I − A) x = b`` without pivoting, in DFS post-order; valid when ``I − A`` restricted to the
    unknowns is a non-singular M-matrix (all pivots are then positive), which holds for the states that
    can reach the target of a first-passage problem.  Raises ``ArithmeticError`` on a zero pivot.
    """
    order = _postorder(list(unknowns), rows)
    pos = {s: k for k, s in enumerate(order)}
    zero = Fraction(0)
    # upper[i] = (u, c): x_i = Σ_k u[k] x_k + c over unknowns k after i in the order
    upper: dict[int, tuple[dict[int, Fraction], Fraction]] = {}
    for i in order:
        # the equation x_i = self_coef x_i + Σ_j row[j] x_j + b, eliminating the earlier unknowns j
        self_coef = zero
        row: dict[int, Fraction] = {}
        for j, a in rows[i].items():
            if j in pos and a:
                if j == i:
                    self_coef += a
                else:
                    row[j] = row[j] + a if j in row else a
        b = rhs.get(i, zero)
        if type(b) is not Fraction:
            b = Fraction(b)
        heap = [pos[j] for j in row if pos[j] < pos[i]]
        heapq.heapify(heap)
        done: set[int] = set()
        while heap:
            pj = heapq.heappop(heap)
            if pj in done:
                continue
            done.add(pj)
            j = order[pj]
            coef = row.pop(j, zero)
            if not coef:
                continue
            urow, ub = upper[j]
            if ub:
                b = b + coef * ub if b else coef * ub
            for k, u in urow.items():
                term = coef * u
                if k == i:
                    self_coef += term
                    continue
                nv = row[k] + term if k in row else term
                if nv:
                    row[k] = nv
                else:
                    row.pop(k, None)
                if pos[k] < pos[i] and pos[k] not in done:
                    heapq.heappush(heap, pos[k])
        if self_coef:
            piv = 1 - self_coef
            if piv == 0:
                raise ArithmeticError(f"zero pivot at state {i}: the system is singular")
            upper[i] = ({k: v / piv for k, v in row.items()}, b / piv)
        else:
            upper[i] = (row, b)
    x: dict[int, Fraction] = {}
    for i in reversed(order):
        urow, ub = upper[i]
        x[i] = ub + sum((u * x[k] for k, u in urow.items()), zero) if urow else ub
    return x


#: The largest relative residual :func:`solve_float` accepts: ``‖(I − A)x − b‖∞ ≤ this · max(1, ‖b‖∞)``.
FLOAT_RESIDUAL_TOLERANCE = 1e-9


def solve_float(mat: sp.csr_matrix, b: np.ndarray, unknowns: np.ndarray) -> np.ndarray:
    """Solve ``x = A x + b`` on ``unknowns`` with a sparse direct solver (LU).

    Error bound: the solution's residual ``r = (I − A)x − b`` is checked, ``‖r‖∞ ≤``
    :data:`FLOAT_RESIDUAL_TOLERANCE` ``· max(1, ‖b‖∞)`` (``ArithmeticError`` otherwise; a backward-stable
    LU gives about ``1e-16``); the error of ``x`` is then at most ``‖(I − A)⁻¹‖∞ · ‖r‖∞``, where
    ``‖(I − A)⁻¹‖∞`` is the largest expected number of steps spent among the unknowns (first passage:
    before the target is reached or missed)."""
    a_uu = mat[unknowns][:, unknowns]
    import scipy.sparse as sp  # lazy: see the imports
    import scipy.sparse.linalg as spla

    system = (sp.identity(len(unknowns), format="csc") - a_uu.tocsc()).tocsc()
    sol = np.atleast_1d(np.asarray(spla.spsolve(system, b), dtype=np.float64))
    residual = float(np.max(np.abs(system @ sol - b), initial=0.0))
    if not residual <= FLOAT_RESIDUAL_TOLERANCE * max(1.0, float(np.max(np.abs(b), initial=0.0))):
        raise ArithmeticError(f"the float solve is inaccurate (residual {residual:.3g}): the system is "
                              "singular or too ill-conditioned")
    return sol


def use_exact_solve(exact: bool | None, available: bool, size: int) -> bool:
    if exact is None:
        return available and size <= EXACT_AUTO_LIMIT
    if exact and not available:
        raise ValueError("exact computation requested but the model has no exact probabilities")
    return exact

