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

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

__all__ = ["EXACT_AUTO_LIMIT", "solve_exact", "solve_float", "use_exact_solve"]

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
    upper: dict[int, tuple[dict[int, Fraction], Fraction]] = {}
    for i in order:
        row: dict[int, Fraction] = {i: Fraction(1)}
        for j, a in rows[i].items():
            if j in pos and a:
                row[j] = row.get(j, Fraction(0)) - a
        b = Fraction(rhs.get(i, 0))
        heap = [pos[j] for j in row if pos[j] < pos[i]]
        heapq.heapify(heap)
        done: set[int] = set()
        while heap:
            pj = heapq.heappop(heap)
            if pj in done:
                continue
            done.add(pj)
            j = order[pj]
            coef = row.pop(j, Fraction(0))
            if not coef:
                continue
            urow, ub = upper[j]
            b -= coef * ub
            for k, u in urow.items():
                nv = row.get(k, Fraction(0)) - coef * u
                if nv:
                    row[k] = nv
                else:
                    row.pop(k, None)
                if pos[k] < pos[i] and pos[k] not in done:
                    heapq.heappush(heap, pos[k])
        piv = row.pop(i, Fraction(0))
        if piv == 0:
            raise ArithmeticError(f"zero pivot at state {i}: the system is singular")
        upper[i] = ({k: v / piv for k, v in row.items()}, b / piv)
    x: dict[int, Fraction] = {}
    for i in reversed(order):
        urow, ub = upper[i]
        x[i] = ub - sum((u * x[k] for k, u in urow.items()), Fraction(0))
    return x


def solve_float(mat: sp.csr_matrix, b: np.ndarray, unknowns: np.ndarray) -> np.ndarray:
    """Solve ``x = A x + b`` on ``unknowns`` with a sparse direct solver."""
    a_uu = mat[unknowns][:, unknowns]
    system = (sp.identity(len(unknowns), format="csc") - a_uu.tocsc()).tocsc()
    sol = spla.spsolve(system, b)
    return np.atleast_1d(np.asarray(sol, dtype=np.float64))


def use_exact_solve(exact: bool | None, available: bool, size: int) -> bool:
    if exact is None:
        return available and size <= EXACT_AUTO_LIMIT
    if exact and not available:
        raise ValueError("exact computation requested but the model has no exact probabilities")
    return exact

