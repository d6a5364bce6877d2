"""Storm as a second engine: flcheck's chains handed to stormpy, and its answers mapped back.

flcheck's :class:`~checker.markov.models.Dtmc` and :class:`~checker.markov.models.Mdp` (or a
:class:`~checker.mc.kripke.Kripke` structure, through :func:`~checker.markov.models.mdp_from_kripke` /
:func:`~checker.markov.models.dtmc_from_kripke`) become a stormpy sparse DTMC or MDP: one row group per
state (one row per choice), the state ids unchanged, flcheck's labels as Storm state labels and the
initial states as Storm's ``init`` label.  Storm (Hensel et al., *The probabilistic model checker Storm*,
STTT 24, 2022) then answers the PCTL queries ``P=? [F goal]``, ``P=? [F<=k goal]``, ``P=? [a U b]`` and,
for MDPs, ``Pmin=?`` / ``Pmax=?``; :func:`can_reach` is plain graph reachability (``P>0 [F goal]``).

Deadlock states (empty rows, which Storm rejects) get a self-loop: for every query above a run that ends
in a deadlock and a run that stays there forever are the same, so the values do not change.

Storm is optional (``pip install 'flcheck[storm]'``); float models are solved with Storm's sound
methods at :data:`DEFAULT_PRECISION`, exact models (``exact=True``, Storm's ``Rational``) exactly.

>>> from checker.mc.kripke import Kripke
>>> k = Kripke.from_edges(3, [0], [0, 0, 1, 2], [1, 2, 1, 2], prob_exact=[Fraction(1, 3), Fraction(2, 3),
...                       Fraction(1), Fraction(1)], labels={"goal": np.array([False, True, False])})
>>> model = from_kripke(k, scheduler="uniform", exact=True)   # doctest: +SKIP
>>> reach_probabilities(model, "goal").initial_value            # doctest: +SKIP
Fraction(1, 3)
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType
from typing import Any, Literal

import numpy as np

from checker.markov.models import Dtmc, Mdp, Scheduler, Values, dtmc_from_kripke, mdp_from_kripke
from checker.mc.kripke import Kripke

__all__ = ["DEFAULT_PRECISION", "StormModel", "StormResult", "can_reach", "check", "from_dtmc", "from_kripke",
           "from_mdp", "reach_probabilities", "require_stormpy", "until_probabilities"]

#: Precision of Storm's sound float solvers (an absolute bound on the error of every value).
DEFAULT_PRECISION = Fraction(1, 10**10)

Objective = Literal["min", "max"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESERVED = frozenset({"init", "deadlock"})


def require_stormpy() -> ModuleType:
    """The ``stormpy`` module; ``ImportError`` naming the extra to install when it is missing."""
    try:
        # stormpy is an optional native extension (the extra flcheck[storm]), imported only when used
        import stormpy
    except ImportError as exc:
        raise ImportError("the Storm engine needs stormpy: pip install 'flcheck[storm]'") from exc
    return stormpy


@dataclass(frozen=True, eq=False)
class StormModel:
    """A stormpy sparse model built from a flcheck chain.

    ``model`` is the ``SparseDtmc`` / ``SparseMdp`` (state ``s`` of flcheck is Storm state ``s``);
    ``labels`` maps each flcheck label name to its Storm label name; ``initial`` is flcheck's initial
    distribution (Storm's ``init`` label holds its support); ``build_seconds`` the time to build it."""

    model: Any
    kind: Literal["dtmc", "mdp"]
    num_states: int
    labels: Mapping[str, str]
    initial: tuple[tuple[int, Fraction], ...]
    exact: bool
    build_seconds: float

    @property
    def num_transitions(self) -> int:
        """Non-zero entries of Storm's transition matrix (deadlock self-loops included)."""
        return int(self.model.nr_transitions)

    def storm_label(self, name: str) -> str:
        """The Storm name of flcheck label ``name``; ``KeyError`` names the known labels."""
        try:
            return self.labels[name]
        except KeyError:
            known = ", ".join(sorted(self.labels)) or "none"
            raise KeyError(f"unknown label {name!r}; known labels: {known}") from None


@dataclass(frozen=True)
class StormResult:
    """Storm's answer: ``values[s]`` for every flcheck state ``s`` (float, or ``Fraction`` objects for an
    exact model), ``initial_value`` the expectation under the initial distribution, ``formula`` the PCTL
    text Storm checked and ``seconds`` Storm's checking time."""

    values: Values
    initial_value: Fraction | float
    formula: str
    seconds: float


# ------------------------------------------------------------------------------------------ building
def _storm_label_names(names: list[str]) -> dict[str, str]:
    """Storm label names for flcheck's: the name itself when it is an identifier that is neither
    reserved nor taken, else ``label<i>``."""
    out: dict[str, str] = {}
    taken = set(_RESERVED)
    for i, name in enumerate(names):
        storm_name = name if _IDENTIFIER.fullmatch(name) and name not in taken else f"label{i}"
        while storm_name in taken:
            storm_name = f"_{storm_name}"
        taken.add(storm_name)
        out[name] = storm_name
    return out


def _build(stormpy: ModuleType, num_states: int, row_ptr_of_state: np.ndarray, row_src: np.ndarray,
           dst: np.ndarray, prob: np.ndarray, exact: list[Fraction] | None,
           labels: Mapping[str, np.ndarray], initial: tuple[tuple[int, Fraction], ...],
           kind: Literal["dtmc", "mdp"]) -> StormModel:
    """Build the Storm model of the rows ``row_src`` (the row of each entry), targets ``dst`` and
    probabilities, one row group per state starting at ``row_ptr_of_state``; entries are merged per
    (row, target) and deadlock states get a self-loop."""
    t0 = time.perf_counter()
    n = num_states
    rows_per_state = np.diff(row_ptr_of_state)
    dead = np.flatnonzero(rows_per_state == 0)
    # one extra row for every deadlock: its group is that single self-loop row
    new_rows_per_state = np.where(rows_per_state == 0, 1, rows_per_state)
    group_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(new_rows_per_state, out=group_start[1:])
    state_of_row = np.repeat(np.arange(n, dtype=np.int64), rows_per_state)
    local = np.arange(len(state_of_row), dtype=np.int64) - row_ptr_of_state[:-1][state_of_row]
    new_row = group_start[:-1][state_of_row] + local  # old row -> new row
    rows = np.concatenate([new_row[row_src], group_start[:-1][dead]])
    cols = np.concatenate([dst.astype(np.int64), dead])
    num_rows = int(group_start[-1])
    key = rows * n + cols
    uniq, inverse = np.unique(key, return_inverse=True)
    merged_rows, merged_cols = np.divmod(uniq, n) if n else (uniq, uniq)
    datastructures = stormpy.datastructures
    builder_class = datastructures.SparseMatrixBuilder
    if exact is None:
        values: list[Any] = np.bincount(inverse, weights=np.concatenate([prob, np.ones(len(dead))]),
                                        minlength=len(uniq)).tolist()
    else:
        sums = [Fraction(0)] * len(uniq)
        for i, p in zip(inverse.tolist(), [*exact, *([Fraction(1)] * len(dead))], strict=True):
            sums[i] += p
        values = [stormpy.Rational(f"{p.numerator}/{p.denominator}") for p in sums]
        builder_class = builder_class[stormpy.Rational]
    builder = builder_class(rows=num_rows, columns=n, entries=len(uniq), force_dimensions=True,
                            has_custom_row_grouping=kind == "mdp", row_groups=n if kind == "mdp" else 0)
    builder.add_next_values(merged_rows.tolist(), merged_cols.tolist(), values,
                            group_start[:-1].tolist() if kind == "mdp" else [])
    matrix = builder.build()
    names = _storm_label_names(list(labels))
    labeling = stormpy.models.StateLabeling(n)
    labeling.add_label("init")
    labeling.set_states("init", datastructures.BitVector(n, sorted({s for s, _ in initial})))
    for name, mask in labels.items():
        ids = np.flatnonzero(np.asarray(mask, dtype=bool)).tolist()
        labeling.add_label(names[name])
        labeling.set_states(names[name], datastructures.BitVector(n, ids))
    components = stormpy.models.SparseModelComponents(transition_matrix=matrix, state_labeling=labeling)
    model_class = stormpy.models.SparseMdp if kind == "mdp" else stormpy.models.SparseDtmc
    model = model_class(components)
    return StormModel(model, kind, n, names, initial, exact is not None, time.perf_counter() - t0)


def _check_labels(labels: Mapping[str, np.ndarray], num_states: int) -> None:
    for name, mask in labels.items():
        if np.shape(mask) != (num_states,):
            raise ValueError(f"label {name!r} has shape {np.shape(mask)}, expected ({num_states},)")


def from_dtmc(dtmc: Dtmc, labels: Mapping[str, np.ndarray] | None = None, *,
              exact: bool = False) -> StormModel:
    """A Storm sparse DTMC of ``dtmc`` with state labels ``labels`` (name -> boolean mask).

    ``exact=True`` builds over Storm's ``Rational`` from the chain's exact probabilities (``ValueError``
    when it has none); Storm then solves exactly."""
    stormpy = require_stormpy()
    labels = dict(labels or {})
    _check_labels(labels, dtmc.num_states)
    if exact and dtmc.prob_exact is None:
        raise ValueError("exact=True needs a chain with exact probabilities")
    # one row per state with successors; a deadlock's row is added by _build
    has_row = (np.diff(dtmc.ptr) > 0).astype(np.int64)
    row_ptr = np.r_[0, np.cumsum(has_row)].astype(np.int64)
    entry_state = np.repeat(np.arange(dtmc.num_states, dtype=np.int64), np.diff(dtmc.ptr))
    exact_probs = list(dtmc.prob_exact) if exact and dtmc.prob_exact is not None else None
    return _build(stormpy, dtmc.num_states, row_ptr, row_ptr[entry_state], dtmc.idx, dtmc.prob, exact_probs,
                  labels, dtmc.initial, "dtmc")


def from_mdp(mdp: Mdp, labels: Mapping[str, np.ndarray] | None = None, *,
             exact: bool = False) -> StormModel:
    """A Storm sparse MDP of ``mdp``: state ``s``'s choices ``0 .. k-1`` are the rows of its row group in
    the same order, so a Storm scheduler's choice is flcheck's local choice index."""
    stormpy = require_stormpy()
    labels = dict(labels or {})
    _check_labels(labels, mdp.num_states)
    if exact and mdp.edge_prob_exact is None:
        raise ValueError("exact=True needs an MDP with exact probabilities")
    edge_choice = np.repeat(np.arange(mdp.num_choices, dtype=np.int64), np.diff(mdp.edge_ptr))
    return _build(stormpy, mdp.num_states, mdp.choice_ptr.astype(np.int64), edge_choice, mdp.edge_dst,
                  mdp.edge_prob, list(mdp.edge_prob_exact) if exact and mdp.edge_prob_exact is not None
                  else None, labels, mdp.initial, "mdp")


def from_kripke(kripke: Kripke, labels: Mapping[str, np.ndarray] | None = None, *,
                scheduler: Scheduler | None = None, exact: bool = False) -> StormModel:
    """The Storm model of a (complete, probabilistic or not) Kripke structure: its MDP
    (:func:`~checker.markov.models.mdp_from_kripke`) when ``scheduler`` is ``None``, else the DTMC the
    memoryless ``scheduler`` induces.  ``labels`` default to the structure's own."""
    chosen = kripke.labels if labels is None else labels
    if scheduler is None:
        return from_mdp(mdp_from_kripke(kripke), chosen, exact=exact)
    return from_dtmc(dtmc_from_kripke(kripke, scheduler), chosen, exact=exact)


# ------------------------------------------------------------------------------------------ checking
def _environment(stormpy: ModuleType, model: StormModel, precision: Fraction) -> Any:
    if model.exact:
        return stormpy.environments.exact()
    env = stormpy.environments.sound()
    rational = stormpy.Rational(f"{precision.numerator}/{precision.denominator}")
    solver = env.solver()
    solver.min_max().precision = rational
    solver.native().precision = rational
    return env


def _operator(model: StormModel, objective: Objective | None) -> str:
    if model.kind == "mdp":
        if objective not in ("min", "max"):
            raise ValueError(f"an MDP needs objective 'min' or 'max', got {objective!r}")
        return f"P{objective}"
    if objective is not None:
        raise ValueError(f"a DTMC has no objective (got {objective!r})")
    return "P"


def _bound_text(bound: int | None) -> str:
    if bound is None:
        return ""
    if bound < 0:
        raise ValueError(f"step bound must be >= 0, got {bound}")
    return f"<={bound}"


def check(model: StormModel, formula: str, *, precision: Fraction = DEFAULT_PRECISION) -> StormResult:
    """Check the quantitative PCTL ``formula`` (Storm syntax, over Storm label names) on every state."""
    stormpy = require_stormpy()
    t0 = time.perf_counter()
    prop = stormpy.parse_properties(formula)[0]
    result = stormpy.model_checking(model.model, prop,
                                    environment=_environment(stormpy, model, precision))
    raw = list(result.get_value_vector())
    seconds = time.perf_counter() - t0
    values: Values
    if model.exact:
        values = np.empty(model.num_states, dtype=object)
        values[:] = [Fraction(str(v)) for v in raw]
        initial: Fraction | float = sum((p * values[s] for s, p in model.initial), Fraction(0))
    else:
        values = np.asarray(raw, dtype=np.float64)
        initial = float(sum(float(p) * float(values[s]) for s, p in model.initial))
    return StormResult(values, initial, formula, seconds)


def reach_probabilities(model: StormModel, goal: str, *, bound: int | None = None,
                        objective: Objective | None = None,
                        precision: Fraction = DEFAULT_PRECISION) -> StormResult:
    """``P=? [F goal]`` (``bound``: ``F<=bound``, at most that many steps); on an MDP ``Pmin``/``Pmax``
    by ``objective``.  ``goal`` is a flcheck label name of the model."""
    formula = f'{_operator(model, objective)}=? [F{_bound_text(bound)} "{model.storm_label(goal)}"]'
    return check(model, formula, precision=precision)


def until_probabilities(model: StormModel, left: str, right: str, *, bound: int | None = None,
                        objective: Objective | None = None,
                        precision: Fraction = DEFAULT_PRECISION) -> StormResult:
    """``P=? [left U right]`` (``bound``: ``U<=bound``); on an MDP ``Pmin``/``Pmax`` by ``objective``."""
    formula = (f'{_operator(model, objective)}=? ["{model.storm_label(left)}" U{_bound_text(bound)} '
               f'"{model.storm_label(right)}"]')
    return check(model, formula, precision=precision)


def can_reach(model: StormModel, goal: str) -> np.ndarray:
    """The states from which some path reaches ``goal`` (Storm's ``P>0 [F goal]``; ``Pmax>0`` on an MDP),
    as a boolean mask."""
    stormpy = require_stormpy()
    operator = "Pmax" if model.kind == "mdp" else "P"
    prop = stormpy.parse_properties(f'{operator}>0 [F "{model.storm_label(goal)}"]')[0]
    result = stormpy.model_checking(model.model, prop, environment=_environment(stormpy, model,
                                                                                DEFAULT_PRECISION))
    mask = np.zeros(model.num_states, dtype=bool)
    mask[np.asarray(list(result.get_truth_values_vector()), dtype=np.int64)] = True
    return mask
