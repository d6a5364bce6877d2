"""The float pipeline of checker.markov against the exact one: float chains built from the float arrays
(within their stated per-entry bound of the exact chain), float solves (within the residual bound of
``solve_float``), MDP optima, absorption and path sums — on random DTMCs/MDPs and on the bundled
scenarios' explored structures — with every verdict of the check pipeline's comparison identical; and
the caches of ``mdp_from_kripke`` / ``Mdp.induced_dtmc``.  The exact solver itself is checked against
sympy's."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.app.check_results import compare
from checker.app.load import load_model
from checker.markov.distributions import bottom_absorption
from checker.markov.first_passage import reach_probabilities
from checker.markov.mdp import mdp_reach
from checker.markov.models import Mdp, Scheduler, build_mdp, dtmc_from_kripke, mdp_from_kripke
from checker.markov.pathsum import path_sum
from checker.markov.solve import FLOAT_RESIDUAL_TOLERANCE, solve_exact, solve_float
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_parse import parse_formula
from checker.mc.kripke import Kripke
from checker.mc.ts import Action
from tests.strategies import mdp_structures

SCENARIOS = Path(__file__).resolve().parents[2] / "spec" / "scenarios"
ULP = Fraction(1, 2**53)
#: The float results of these small, well-conditioned random models are within this of the exact ones
#: (residual bound of ``solve_float`` times the expected number of steps, which stays below 10³ here).
VALUE_BOUND = 1e3 * FLOAT_RESIDUAL_TOLERANCE
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def mdps_with_parallel_edges(draw: st.DrawFn, max_states: int = 7, max_choices: int = 3) -> Kripke:
    """A random MDP whose distributions may list the same target twice (parallel edges)."""
    n = draw(st.integers(1, max_states))
    actions = tuple(Action(f"a{i}") for i in range(max_choices))
    src: list[int] = []
    dst: list[int] = []
    act: list[int] = []
    probs: list[Fraction] = []
    for s in range(n):
        for a in range(draw(st.integers(0, max_choices))):
            targets = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
            weights = draw(st.lists(st.integers(1, 7), min_size=len(targets), max_size=len(targets)))
            total = sum(weights)
            for t, w in zip(targets, weights, strict=True):
                src.append(s)
                dst.append(t)
                act.append(a)
                probs.append(Fraction(w, total))
    initial = [draw(st.integers(0, n - 1))]
    return Kripke.from_edges(n, initial, src, dst, action=act, actions=actions, prob_exact=probs)


def _schedulers(mdp: Mdp, seed: int) -> list[Scheduler]:
    rng = np.random.default_rng(seed)
    counts = np.diff(mdp.choice_ptr)
    return ["uniform", {s: int(rng.integers(0, k)) for s, k in enumerate(counts.tolist()) if k > 1}]


def _assert_value_close(exact_value: object, float_value: object) -> None:
    assert isinstance(exact_value, Fraction) and isinstance(float_value, float)
    if exact_value in (0, 1):  # decided on the graph: exactly 0.0 / 1.0 on both paths
        assert float_value == float(exact_value)
    else:
        assert abs(Fraction(float_value) - exact_value) <= VALUE_BOUND


def _assert_same_verdicts(exact_value: object, float_value: object) -> None:
    """Every threshold the check pipeline could be given that is not within the float bound of the
    value itself (0, 1, the value's neighbourhood, a grid) gives the same verdict on both paths."""
    assert isinstance(exact_value, Fraction) and isinstance(float_value, float)
    thresholds = {Fraction(0), Fraction(1), *(Fraction(i, 20) for i in range(21))}
    margin = Fraction(2 * VALUE_BOUND)
    thresholds |= {exact_value - margin, exact_value + margin}
    for bound in thresholds:
        if exact_value not in (0, 1) and abs(bound - exact_value) <= VALUE_BOUND:
            continue
        for op in ("<=", ">=", "<", ">"):
            assert compare(exact_value, op, bound) == compare(float_value, op, bound), (op, bound)


@SETTINGS
@given(mdps_with_parallel_edges(), st.integers(0, 2**16))
def test_float_chain_is_within_its_entry_bound_of_the_exact_chain(kripke: Kripke, seed: int) -> None:
    mdp = build_mdp(kripke)
    for scheduler in _schedulers(mdp, seed):
        exact = mdp.induced_dtmc(scheduler, exact=True)
        flt = mdp.induced_dtmc(scheduler, exact=False)
        assert exact.is_exact and not flt.is_exact
        assert np.array_equal(exact.ptr, flt.ptr) and np.array_equal(exact.idx, flt.idx)  # same graph
        assert exact.prob_exact is not None
        assert exact.prob.tolist() == [float(p) for p in exact.prob_exact]  # correctly rounded
        pair_count: dict[tuple[int, int], int] = {}
        for s, t in zip(kripke.edge_src.tolist(), kripke.succ_idx.tolist(), strict=True):
            pair_count[(s, t)] = pair_count.get((s, t), 0) + 1
        for e, (s, t) in enumerate(zip(exact.src.tolist(), exact.idx.tolist(), strict=True)):
            merged = pair_count[(s, t)]  # at most this many parallel edges were summed
            p = exact.prob_exact[e]
            assert abs(Fraction(float(flt.prob[e])) - p) <= (merged + 2) * ULP * p


@SETTINGS
@given(mdps_with_parallel_edges(), st.integers(0, 2**16), st.data())
def test_float_first_passage_within_bound_and_same_verdicts(kripke: Kripke, seed: int,
                                                             data: st.DataObject) -> None:
    mdp = build_mdp(kripke)
    target = np.array(data.draw(st.lists(st.booleans(), min_size=mdp.num_states, max_size=mdp.num_states)),
                      dtype=bool)
    for scheduler in _schedulers(mdp, seed):
        exact_values = reach_probabilities(mdp.induced_dtmc(scheduler, exact=True), target, exact=True)
        float_values = reach_probabilities(mdp.induced_dtmc(scheduler, exact=False), target, exact=False)
        assert float_values.dtype == np.float64
        for v_exact, v_float in zip(exact_values.tolist(), float_values.tolist(), strict=True):
            _assert_value_close(v_exact, v_float)
            _assert_same_verdicts(v_exact, v_float)


@SETTINGS
@given(mdp_structures(max_states=7), st.data())
def test_float_mdp_optima_within_bound_and_same_verdicts(kripke: Kripke, data: st.DataObject) -> None:
    mdp = build_mdp(kripke)
    target = np.array(data.draw(st.lists(st.booleans(), min_size=mdp.num_states, max_size=mdp.num_states)),
                      dtype=bool)
    for objective in ("min", "max"):
        exact = mdp_reach(mdp, target, objective, exact=True)
        flt = mdp_reach(mdp, target, objective, exact=False)
        assert exact.exact and not flt.exact
        assert isinstance(exact.initial_value, Fraction) and isinstance(flt.initial_value, float)
        _assert_value_close(exact.initial_value, flt.initial_value)
        _assert_same_verdicts(exact.initial_value, flt.initial_value)
        for v_exact, v_float in zip(exact.values.tolist(), flt.values.tolist(), strict=True):
            _assert_value_close(v_exact, v_float)


@SETTINGS
@given(mdps_with_parallel_edges())
def test_float_absorption_and_path_sum_within_bound(kripke: Kripke) -> None:
    exact_chain = dtmc_from_kripke(kripke, exact=True)
    float_chain = dtmc_from_kripke(kripke, exact=False)
    exact_mass = bottom_absorption(exact_chain, exact=True)
    float_mass = bottom_absorption(float_chain, exact=False)
    assert [c for c, _ in exact_mass] == [c for c, _ in float_mass]
    for (_, m_exact), (_, m_float) in zip(exact_mass, float_mass, strict=True):
        assert isinstance(m_exact, Fraction)
        assert abs(Fraction(m_float) - m_exact) <= VALUE_BOUND
    target = np.zeros(kripke.num_states, dtype=bool)
    target[-1] = True
    sum_exact = path_sum(exact_chain, target, exact=True)
    sum_float = path_sum(float_chain, target, exact=False)
    assert sum_exact.diverges == sum_float.diverges
    if not sum_exact.diverges:
        assert isinstance(sum_exact.value, Fraction) and isinstance(sum_float.value, float)
        scale = max(1.0, float(sum_exact.value))
        assert abs(Fraction(sum_float.value) - sum_exact.value) <= VALUE_BOUND * scale


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 7), st.data())
def test_solve_exact_matches_sympy_and_float_residual_is_bounded(n: int, data: st.DataObject) -> None:
    """``x = A x + b`` with ``A`` strictly sub-stochastic on every row (so ``I − A`` is a non-singular
    M-matrix), cycles and self-loops included."""
    rows: dict[int, dict[int, Fraction]] = {}
    for i in range(n):
        targets = data.draw(st.sets(st.integers(0, n - 1), max_size=n))
        weights = data.draw(st.lists(st.integers(1, 5), min_size=len(targets), max_size=len(targets)))
        total = sum(weights) + data.draw(st.integers(1, 5))
        rows[i] = {t: Fraction(w, total) for t, w in zip(sorted(targets), weights, strict=True)}
    rhs = {i: Fraction(data.draw(st.integers(0, 4)), 4) for i in range(n)}
    got = solve_exact(rows, rhs, list(range(n)))
    system = sympy.eye(n) - sympy.Matrix(n, n, lambda i, j: sympy.Rational(rows[i].get(j, 0)))
    want = system.LUsolve(sympy.Matrix([sympy.Rational(rhs[i]) for i in range(n)]))
    assert [got[i] for i in range(n)] == [Fraction(int(v.p), int(v.q)) for v in want]
    dense = np.array([[float(rows[i].get(j, 0)) for j in range(n)] for i in range(n)])
    b = np.array([float(rhs[i]) for i in range(n)])
    x = solve_float(sp.csr_matrix(dense), b, np.arange(n))
    assert np.max(np.abs((np.eye(n) - dense) @ x - b)) <= FLOAT_RESIDUAL_TOLERANCE * max(1.0, np.max(b))
    assert max(abs(Fraction(float(x[i])) - got[i]) for i in range(n)) <= VALUE_BOUND


@pytest.mark.filterwarnings("ignore::scipy.sparse.linalg.MatrixRankWarning")
def test_solve_float_refuses_a_singular_system() -> None:
    closed = Kripke.from_edges(2, [0], [0, 1], [1, 0], prob_exact=[Fraction(1), Fraction(1)])
    with pytest.raises(ArithmeticError, match="inaccurate"):
        solve_float(dtmc_from_kripke(closed).matrix(), np.ones(2), np.arange(2))


# ------------------------------------------------------------------------------- bundled scenarios
@pytest.mark.parametrize("name", ["moniteo.fl", "moniteo_link_loss.fl", "seed_model.fl"])
def test_bundled_scenarios_float_and_exact_agree(name: str) -> None:
    kripke = load_model(SCENARIOS / name)
    checker = ModelChecker(kripke)
    mdp = mdp_from_kripke(kripke)
    for text in ["round = 1", "round = 0", "!(EX true)", "true", "false"]:
        target = checker.sat(parse_formula(text))
        for objective in ("min", "max"):
            exact = mdp_reach(mdp, target, objective, exact=True)
            flt = mdp_reach(mdp, target, objective, exact=False)
            _assert_value_close(exact.initial_value, flt.initial_value)
            _assert_same_verdicts(exact.initial_value, flt.initial_value)
            for v_exact, v_float in zip(exact.values.tolist(), flt.values.tolist(), strict=True):
                _assert_value_close(v_exact, v_float)
        uniform_exact = reach_probabilities(mdp.induced_dtmc("uniform", exact=True), target, exact=True)
        uniform_float = reach_probabilities(mdp.induced_dtmc("uniform", exact=False), target, exact=False)
        for v_exact, v_float in zip(uniform_exact.tolist(), uniform_float.tolist(), strict=True):
            _assert_value_close(v_exact, v_float)
        (start,) = [s for s, _ in mdp.initial]
        _assert_same_verdicts(uniform_exact[start], float(uniform_float[start]))
    exact_mass = bottom_absorption(mdp.induced_dtmc("uniform", exact=True), exact=True)
    float_mass = bottom_absorption(mdp.induced_dtmc("uniform", exact=False), exact=False)
    for (_, m_exact), (_, m_float) in zip(exact_mass, float_mass, strict=True):
        assert isinstance(m_exact, Fraction) and isinstance(m_float, float)
        assert abs(Fraction(m_float) - m_exact) <= VALUE_BOUND


@pytest.mark.slow
def test_swarm8_round_completes_almost_surely_on_both_paths() -> None:
    """The bundled 72097-state swarm: ``Pmin[◇ round = 1]`` is exactly 1 on the float and exact paths."""
    kripke = load_model(SCENARIOS / "moniteo_swarm8.fl")
    target = ModelChecker(kripke).sat(parse_formula("round = 1"))
    mdp = mdp_from_kripke(kripke)
    assert mdp_reach(mdp, target, "min", exact=False).initial_value == 1.0
    assert mdp_reach(mdp, target, "min", exact=True).initial_value == Fraction(1)


# ------------------------------------------------------------------------------------------ caches
def _chain_model() -> Kripke:
    return Kripke.from_edges(3, [0], [0, 0, 0, 1, 2], [1, 2, 1, 1, 2], action=[0, 0, 1, 0, 0],
                             actions=(Action("a"), Action("b")),
                             prob_exact=[Fraction(1, 3), Fraction(2, 3), Fraction(1), Fraction(1),
                                         Fraction(1)])


def test_mdp_is_built_once_per_structure_and_rebuilt_when_its_arrays_change() -> None:
    kripke = _chain_model()
    mdp = mdp_from_kripke(kripke)
    assert mdp_from_kripke(kripke) is mdp
    assert mdp_from_kripke(kripke, {0: Fraction(1)}) is not mdp  # an explicit initial: not cached
    kripke.succ_idx = kripke.succ_idx.copy()
    assert mdp_from_kripke(kripke) is not mdp


def test_induced_chains_are_cached_per_scheduler_and_read_only() -> None:
    mdp = mdp_from_kripke(_chain_model())
    uniform = mdp.induced_dtmc("uniform")
    assert mdp.induced_dtmc("uniform") is uniform
    assert dtmc_from_kripke(_chain_model()) is not uniform  # another structure, another MDP
    assert mdp.induced_dtmc("uniform", exact=False) is not uniform
    assert mdp.induced_dtmc("uniform", exact=False) is mdp.induced_dtmc("uniform", exact=False)
    assert mdp.induced_dtmc({0: 1}) is mdp.induced_dtmc({0: Action("b")})  # the same choice
    assert mdp.induced_dtmc({0: 1}) is not mdp.induced_dtmc({0: 0})
    with pytest.raises(ValueError, match="read-only"):
        uniform.prob[0] = 0.5
    # state 0: a = {1: 1/3, 2: 2/3}, b = {1: 1}, each with 1/2; the parallel edges 0 -> 1 merge
    assert uniform.prob_exact == (Fraction(2, 3), Fraction(1, 3), Fraction(1), Fraction(1))
    assert uniform.prob.tolist() == [float(Fraction(2, 3)), float(Fraction(1, 3)), 1.0, 1.0]


def test_exact_chain_of_a_float_mdp_is_refused() -> None:
    kripke = Kripke.from_edges(2, [0], [0, 1], [1, 1], prob=[1.0, 1.0])
    mdp = mdp_from_kripke(kripke)
    assert not mdp.induced_dtmc("uniform").is_exact
    with pytest.raises(ValueError, match="no exact probabilities"):
        mdp.induced_dtmc("uniform", exact=True)
