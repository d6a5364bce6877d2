"""Data/neighbours, exact learning and noise mechanisms: hypothesis properties and independent
references (brute force over subsets, sympy differentiation, closed forms)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from flmodel.data import (
    DataPoint,
    add_remove_one,
    count_partitions,
    differ_only_in,
    is_partition,
    neighbour_pairs,
    neighbours,
    partition_by,
    partitions,
    point,
    replace_one,
)
from flmodel.errors import ModelError
from flmodel.frozen import FrozenMap
from flmodel.learning import (
    HingeLoss,
    SquaredLoss,
    Vec,
    fedavg,
    fedavg_weights,
    grad_step,
    mean_gradient,
    mean_loss,
    vector,
)
from flmodel.noise import (
    NoNoise,
    base_from_epsilon,
    discrete_gaussian,
    epsilon_of,
    geometric,
    randomized_response,
)

UNIVERSE = [point(f"p{i}", i, i % 3) for i in range(5)]
fractions_ = st.fractions(min_value=-10, max_value=10, max_denominator=12)
datasets = st.frozensets(st.sampled_from(UNIVERSE), max_size=5)
probs_open = st.fractions(min_value=0, max_value=1, max_denominator=20).filter(lambda r: 0 < r < 1)


# --- data and neighbours --------------------------------------------------------------------------


@given(datasets, datasets)
@settings(deadline=None)
def test_neighbour_relations_symmetric_and_irreflexive(d0: frozenset, d1: frozenset) -> None:  # type: ignore[type-arg]
    for rel in (replace_one, add_remove_one):
        assert rel(d0, d1) == rel(d1, d0)
        assert not rel(d0, d0)
    for x in UNIVERSE:
        for reading in ("add_remove_one", "replace_one"):
            assert differ_only_in(d0, d1, x, reading) == differ_only_in(d1, d0, x, reading)  # type: ignore[arg-type]
            assert not differ_only_in(d0, d0, x, reading)  # type: ignore[arg-type]


@given(datasets)
@settings(deadline=None)
def test_neighbour_generator_matches_brute_force(d: frozenset) -> None:  # type: ignore[type-arg]
    all_subsets = [
        frozenset(c) for k in range(len(UNIVERSE) + 1) for c in itertools.combinations(UNIVERSE, k)
    ]
    for reading, rel in (("replace_one", replace_one), ("add_remove_one", add_remove_one)):
        gen = list(neighbours(d, UNIVERSE, reading))  # type: ignore[arg-type]
        assert len(gen) == len(set(gen))
        assert set(gen) == {e for e in all_subsets if rel(d, e)}


def test_differ_only_in_readings() -> None:
    a, b, c = UNIVERSE[:3]
    assert differ_only_in(frozenset({a, b}), frozenset({a}), b)
    assert not differ_only_in(frozenset({a, b}), frozenset({a}), a)
    assert differ_only_in(frozenset({a, b}), frozenset({a, c}), b, "replace_one")
    assert differ_only_in(frozenset({a, b}), frozenset({a, c}), c, "replace_one")
    assert not differ_only_in(frozenset({a, b}), frozenset({a, c}), b)
    with pytest.raises(ValueError):
        replace_one_bad = neighbours(frozenset(), UNIVERSE, "bogus")  # type: ignore[arg-type]
        list(replace_one_bad)


def test_neighbour_pairs_are_neighbours() -> None:
    pairs = list(neighbour_pairs(UNIVERSE[:3], "add_remove_one"))
    assert all(add_remove_one(a, b) for a, b in pairs)
    assert (
        len(pairs) == 2 * 3 * 2**2
    )  # each of the 3 elements toggled in each of the 2^3 sets: 24 ordered pairs


@given(datasets, st.integers(min_value=0, max_value=3))
@settings(max_examples=40, deadline=None)
def test_partitions_are_exactly_the_disjoint_covers(d: frozenset, k: int) -> None:  # type: ignore[type-arg]
    clients = [f"c{i}" for i in range(k)]
    ps = list(partitions(d, clients))
    assert len(ps) == len(set(ps)) == count_partitions(d, clients)
    assert all(is_partition(d, clients, p) for p in ps)
    subsets = [frozenset(c) for n in range(len(d) + 1) for c in itertools.combinations(sorted(d), n)]
    brute = {
        FrozenMap(dict(zip(clients, parts, strict=True)))
        for parts in itertools.product(subsets, repeat=k)
        if sum(map(len, parts)) == len(d) and frozenset().union(*parts) == d
    }
    assert set(ps) == brute


def test_partition_by_owner() -> None:
    p = partition_by(frozenset(UNIVERSE[:3]), ["x", "y"], lambda q: "x" if q.features[0] < 1 else "y")
    assert p["x"] == {UNIVERSE[0]} and p["y"] == {UNIVERSE[1], UNIVERSE[2]}
    with pytest.raises(ValueError, match="not a client"):
        partition_by(frozenset(UNIVERSE[:1]), ["x"], lambda q: "z")


# --- learning -------------------------------------------------------------------------------------


@given(
    st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=5), st.tuples(fractions_, fractions_)
)
@settings(deadline=None)
def test_aggregating_identical_models_returns_the_model(
    sizes: list[int], w: tuple[Fraction, Fraction]
) -> None:
    n = sum(sizes)
    items = tuple((k, Vec(w)) for k in sizes)
    if n > 0:
        assert fedavg(items, n, 2) == w
        assert sum(fedavg_weights({f"c{i}": k for i, k in enumerate(sizes)}, n).values()) == 1
    else:
        assert fedavg(items, n, 2) == (0, 0)  # x/0 = 0 (Isabelle)


@given(st.lists(st.tuples(st.integers(0, 4), st.tuples(fractions_, fractions_)), min_size=1, max_size=4))
@settings(deadline=None, max_examples=30)
def test_fedavg_matches_sympy(items: list[tuple[int, tuple[Fraction, Fraction]]]) -> None:
    n = sum(k for k, _ in items)
    got = fedavg(tuple((k, Vec(w)) for k, w in items), n, 2)
    for i in range(2):
        ref = (
            sum((sympy.Rational(k, n) * sympy.Rational(w[i]) for k, w in items), sympy.Integer(0)) if n else 0
        )
        assert Fraction(str(ref)) == got[i]


@given(
    st.lists(st.tuples(fractions_, fractions_), min_size=0, max_size=4, unique=True),
    st.tuples(fractions_, fractions_),
    fractions_,
)
@settings(max_examples=40, deadline=None)
def test_squared_loss_gradient_matches_sympy(
    pts: list[tuple[Fraction, Fraction]], w: tuple[Fraction, Fraction], eta: Fraction
) -> None:
    data = frozenset(point(f"q{i}", x, y) for i, (x, y) in enumerate(pts))
    w0, w1 = sympy.symbols("w0 w1")
    if data:
        loss = sum(
            sympy.Rational(1, 2) * (w0 + w1 * sympy.Rational(p.features[0]) - sympy.Rational(p.target)) ** 2
            for p in data
        ) / len(data)
    else:
        loss = sympy.Integer(0)
    subs = {w0: sympy.Rational(w[0]), w1: sympy.Rational(w[1])}
    grad = tuple(Fraction(str(sympy.diff(loss, v).subs(subs))) for v in (w0, w1))
    assert mean_gradient(SquaredLoss(), Vec(w), data) == grad
    assert mean_loss(SquaredLoss(), Vec(w), data) == Fraction(str(loss.subs(subs)))
    assert grad_step(SquaredLoss(), eta, Vec(w), data) == tuple(w[i] - eta * grad[i] for i in range(2))


@given(
    st.tuples(fractions_, fractions_), st.tuples(fractions_, fractions_), st.sampled_from([-1, 1]), fractions_
)
@settings(deadline=None)
def test_hinge_subgradient_inequality(
    w: tuple[Fraction, Fraction], delta: tuple[Fraction, Fraction], y: int, x: Fraction
) -> None:
    """g is a subgradient of the convex f: f(w + d) >= f(w) + g·d for every d (exact)."""
    loss = HingeLoss()
    p = point("h", x, y)
    g = loss.example_gradient(Vec(w), p)
    w2 = Vec(w[i] + delta[i] for i in range(2))
    assert loss.example_loss(w2, p) >= loss.example_loss(Vec(w), p) + g[0] * delta[0] + g[1] * delta[1]


def test_hinge_rejects_bad_labels() -> None:
    with pytest.raises(ValueError, match="labels"):
        HingeLoss().example_gradient(vector(0, 0), point("h", 1, 2))


def test_empty_part_update_is_the_model() -> None:
    assert grad_step(SquaredLoss(), Fraction(1, 2), vector(3, 4), frozenset()) == (3, 4)


# --- noise mechanisms ------------------------------------------------------------------------------


def mechanisms() -> st.SearchStrategy:  # type: ignore[type-arg]
    lattice = st.tuples(
        st.integers(-3, 3), st.integers(0, 5), st.sampled_from([Fraction(1), Fraction(1, 2), Fraction(3)])
    )
    geo = st.builds(
        lambda lh, r: geometric(r, lh[0] * lh[2], (lh[0] + lh[1]) * lh[2], lh[2]), lattice, probs_open
    )
    gau = st.builds(
        lambda lh, q: discrete_gaussian(q, lh[0] * lh[2], (lh[0] + lh[1]) * lh[2], lh[2]),
        lattice,
        st.fractions(min_value=0, max_value=1, max_denominator=10).filter(lambda q: q > 0),
    )
    rr = st.builds(
        randomized_response,
        st.lists(fractions_, min_size=1, max_size=5),
        st.fractions(min_value=0, max_value=1, max_denominator=10),
    )
    return st.one_of(st.just(NoNoise()), geo, gau, rr)


@given(mechanisms(), st.lists(fractions_, min_size=1, max_size=2))
@settings(max_examples=80, deadline=None)
def test_mechanism_probabilities_nonnegative_and_sum_to_one(mech, update: list[Fraction]) -> None:  # type: ignore[no-untyped-def]
    dist = mech(Vec(update))
    assert sum(p for _, p in dist) == 1
    assert all(isinstance(p, Fraction) and p >= 0 for _, p in dist)
    values = [v for v, _ in dist]
    assert len(values) == len(set(values)) and values == sorted(values)
    assert all(len(v) == len(update) for v in values)


@given(probs_open, st.integers(0, 6), st.integers(-2, 8), st.integers(-2, 8))
@settings(deadline=None, max_examples=30)
def test_geometric_closed_form_and_dp_ratio(r: Fraction, width: int, u: int, u2: int) -> None:
    mech = geometric(r, 0, width)
    d1 = dict(mech.scalar(Fraction(u)))
    # reference: the two-sided geometric distribution clamped to [0, width], tails summed by sympy
    a = min(max(u, 0), width)
    k = sympy.symbols("k", integer=True)
    rs = sympy.Rational(r)
    pz = lambda j: (1 - rs) / (1 + rs) * rs ** abs(j)  # noqa: E731
    for v in range(width + 1):
        if width == 0:
            ref = sympy.Integer(1)
        elif v == 0:
            ref = sympy.summation((1 - rs) / (1 + rs) * rs**k, (k, a, sympy.oo))
        elif v == width:
            ref = sympy.summation((1 - rs) / (1 + rs) * rs**k, (k, width - a, sympy.oo))
        else:
            ref = pz(v - a)
        assert Fraction(str(sympy.Rational(ref))) == d1[Fraction(v)]
    # ε-DP with ε = −ln r per unit of sensitivity
    d2 = dict(mech.scalar(Fraction(u2)))
    a2 = min(max(u2, 0), width)
    for v in d1:
        assert d1[v] <= d2[v] * (1 / r) ** abs(a - a2)


@given(
    st.lists(fractions_, min_size=1, max_size=5, unique=True),
    st.fractions(min_value=0, max_value=1, max_denominator=10),
    fractions_,
    fractions_,
)
@settings(deadline=None)
def test_randomized_response_ratio(grid: list[Fraction], r: Fraction, u1: Fraction, u2: Fraction) -> None:
    mech = randomized_response(grid, r)
    d1, d2 = dict(mech.scalar(u1)), dict(mech.scalar(u2))
    assert set(d1) == set(d2) == set(grid)
    if r > 0:
        assert all(d1[v] <= d2[v] / r for v in d1)
    assert d1[mech.snap(u1)] == 1 / (1 + (len(grid) - 1) * r)


@given(
    st.fractions(min_value=0, max_value=1, max_denominator=10).filter(lambda q: q > 0),
    st.integers(0, 5),
    st.integers(-2, 7),
)
@settings(deadline=None)
def test_discrete_gaussian_weights(q: Fraction, width: int, u: int) -> None:
    d = dict(discrete_gaussian(q, 0, width).scalar(Fraction(u)))
    a = min(max(u, 0), width)
    for v in range(width + 1):
        for w in range(width + 1):
            assert d[Fraction(v)] * q ** ((w - a) ** 2) == d[Fraction(w)] * q ** ((v - a) ** 2)


def test_mechanism_parameter_errors() -> None:
    with pytest.raises(ModelError, match="lie in"):
        geometric(1, 0, 3)
    with pytest.raises(ModelError, match="multiple of step"):
        geometric(Fraction(1, 2), 0, 3, 2)
    with pytest.raises(ModelError, match="empty output range"):
        discrete_gaussian(Fraction(1, 2), 3, 0)
    with pytest.raises(ModelError, match="non-empty grid"):
        randomized_response([], Fraction(1, 2))


def test_epsilon_helpers() -> None:
    assert epsilon_of(Fraction(1, 2)) == pytest.approx(math.log(2))
    assert epsilon_of(Fraction(0)) == math.inf
    r = base_from_epsilon(1.0)
    assert abs(float(r) - math.exp(-1)) < 1e-3


def test_datapoint_is_hashable_and_sorted_by_name() -> None:
    pts = sorted([point("b", 0, 0), point("a", 5, 5)])
    assert [p.name for p in pts] == ["a", "b"]
    assert isinstance(hash(pts[0]), int) and isinstance(pts[0], DataPoint)


def test_data_point_hash_is_cached_and_rebuilt_on_unpickling() -> None:
    """A data point hashes like its fields, once; unpickling rebuilds it (the stored hash of another
    process, whose string hashes differ, is never carried over)."""
    import pickle

    from flmodel.data import DataPoint

    a = DataPoint("x", (Fraction(1), Fraction(1, 3)), Fraction(2))
    assert hash(a) == hash(("x", (Fraction(1), Fraction(1, 3)), Fraction(2)))
    object.__setattr__(a, "_hash", 12345)  # as if computed in a process with another hash seed
    b = pickle.loads(pickle.dumps(a))
    assert b == a and hash(b) == hash(DataPoint("x", (Fraction(1), Fraction(1, 3)), Fraction(2)))
