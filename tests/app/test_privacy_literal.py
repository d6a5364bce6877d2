"""Tests for the published definition's flaws shown by checker.app.privacy_literal (spec/SPEC.md R32–R35
and NI_Decomposition's per-client premise across the two systems), against hand-made pairs, brute force
over owner assignments written independently of flmodel.data, and high-precision arithmetic."""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.app.privacy_fl import privacy_model, privacy_report
from checker.app.privacy_literal import (
    FREE_VARIABLES,
    decomposition_premise,
    exp_compare,
    literal_check,
    published_form,
    reversed_inequality,
)
from checker.privacy.ni_fl_dp import Eps, pure_epsilon

F = Fraction


# --- R32: two different outcomes ----------------------------------------------------------------------


def test_published_form_holds_at_zero_where_dp_is_infinite() -> None:
    """D0 always releases a, D1 always releases b: the published form compares P0(a) = 1 with P1(b) = 1
    and holds at ε = 0, while no finite ε makes the two datasets indistinguishable."""
    p0, p1 = {"a": F(1)}, {"b": F(1)}
    pub = published_form(p0, p1)
    assert pub.ratio == 1 and pub.epsilon == 0 and pub.text() == "0"
    assert pub.outcome == ("a", "b") and (pub.p0, pub.p1) == (1, 1)
    assert pure_epsilon(p0, p1).infinite


def test_published_form_agrees_with_dp_on_randomised_response() -> None:
    p0, p1 = {"yes": F(3, 4), "no": F(1, 4)}, {"yes": F(1, 4), "no": F(3, 4)}
    pub, dp = published_form(p0, p1), pure_epsilon(p0, p1)
    assert pub.ratio == dp.ratio == 3
    # the decisive pair: the most likely outcome under D0 against the least likely under D1
    assert pub.outcome == ("yes", "yes") and pub.direction == 0


def test_published_form_exceeds_dp_with_several_outcomes() -> None:
    p0 = p1 = {"a": F(1, 2), "b": F(1, 4), "c": F(1, 4)}
    assert pure_epsilon(p0, p1).ratio == 1
    pub = published_form(p0, p1)
    assert pub.ratio == 2 and pub.outcome in {("a", "b"), ("a", "c"), ("b", "a"), ("c", "a")}


def test_published_form_floats_and_empty_support() -> None:
    pub = published_form({"a": 0.5, "b": 0.5}, {"a": 0.25, "b": 0.75})
    assert not pub.exact and pub.ratio == pytest.approx(2.0)  # max P0 / min P1 = 0.5 / 0.25
    assert published_form({}, {"a": F(1)}).ratio == 1


dists = st.lists(st.integers(min_value=0, max_value=6), min_size=1, max_size=5).filter(any).map(
    lambda ws: {f"o{i}": F(w, sum(ws)) for i, w in enumerate(ws) if w})


@given(dists, dists)
@settings(max_examples=200, deadline=None)
def test_published_form_is_the_smallest_epsilon_over_all_outcome_pairs(p0: dict, p1: dict) -> None:
    """Brute force: e^ε must bound every ratio P_a(o)/P_b(o') over the pairs of the two supports, in
    both orders; the published form's ratio is the largest of them (and never above the DP form's)."""
    ratios = [a / b for a in p0.values() for b in p1.values()] + \
             [b / a for a in p0.values() for b in p1.values()]
    pub = published_form(p0, p1)
    assert pub.ratio == max(ratios)
    o0, o1 = pub.outcome
    ratio = p0[o0] / p1[o1] if pub.direction == 0 else p1[o1] / p0[o0]
    assert ratio == pub.ratio
    assert pub.ratio >= 1  # the two directions' ratios multiply to at least 1


# --- R33: the reversed inequality -----------------------------------------------------------------------


def test_claimed_equivalence_fails_where_the_stated_inequality_holds() -> None:
    r = reversed_inequality(F(1, 2), F(1, 2), Eps.of(1))
    assert r.stated and r.correct_equivalent and not r.claimed_equivalent


def test_claimed_equivalence_holds_where_the_stated_inequality_fails() -> None:
    # the seed model's worst pair at ε = 0: the outcome is released under D0 only
    r = reversed_inequality(F(1, 1400), F(0), Eps.of(0))
    assert not r.stated and not r.correct_equivalent and r.claimed_equivalent


def test_exp_compare_boundaries() -> None:
    ln3 = Eps.parse("ln(3)")
    assert exp_compare(F(3, 4), "<=", 1, ln3, F(1, 4))           # 3/4 = 3 · 1/4
    assert exp_compare(F(3, 4), ">=", 1, ln3, F(1, 4))
    assert not exp_compare(F(4, 5), "<=", 1, ln3, F(1, 4))
    assert exp_compare(F(1, 4), "<=", -1, ln3, F(3, 4))          # 1/4 = 3/4 / 3
    assert not exp_compare(F(1, 4), "<=", -1, ln3, F(2, 3))
    assert exp_compare(F(1), "<=", 1, Eps(infinite=True), F(0))  # ε = ∞ bounds nothing
    assert not exp_compare(F(1), "<=", -1, Eps(infinite=True), F(1))


epsilons = st.one_of(
    st.fractions(min_value=0, max_value=5, max_denominator=12).map(lambda v: Eps(value=v)),
    st.fractions(min_value=1, max_value=20, max_denominator=12).map(lambda r: Eps(ratio=r)),
    st.just(Eps(infinite=True)),
)


def _mp_side(eps: Eps, sign: int, y: Fraction) -> mpmath.mpf:
    e = mpmath.log(mpmath.mpf(eps.ratio.numerator) / eps.ratio.denominator) if eps.ratio is not None \
        else mpmath.mpf(eps.value.numerator) / eps.value.denominator
    return mpmath.exp(sign * e) * (mpmath.mpf(y.numerator) / y.denominator)


@given(dists, dists, epsilons)
@settings(max_examples=300, deadline=None)
def test_stated_and_correct_inequalities_always_agree(p0: dict, p1: dict, eps: Eps) -> None:
    """The law of R33: ``D0 ≤ e^ε D1 ⟺ D1 ≥ e^{−ε} D0`` on every outcome of random distributions, at
    any ε; each comparison also matches a 60-digit evaluation where the two sides are apart."""
    for o in set(p0) | set(p1):
        d0, d1 = p0.get(o, F(0)), p1.get(o, F(0))
        r = reversed_inequality(d0, d1, eps, o)
        assert r.stated == r.correct_equivalent
        if eps.infinite:
            continue
        with mpmath.workdps(60):
            for x, rel, sign, y, got in ((d0, "<=", 1, d1, r.stated),
                                         (d1, "<=", -1, d0, r.claimed_equivalent),
                                         (d1, ">=", -1, d0, r.correct_equivalent)):
                lhs, rhs = mpmath.mpf(x.numerator) / x.denominator, _mp_side(eps, sign, y)
                if abs(lhs - rhs) > mpmath.mpf(10) ** -40:
                    assert got == (lhs <= rhs if rel == "<=" else lhs >= rhs)
                else:
                    assert got  # equal sides: both ≤ and ≥ hold


# --- NI_Decomposition's premise across the two systems, on spec/scenarios/seed_model.fl -------------------


@pytest.fixture(scope="module")
def seed():
    return privacy_model("seed_model")


def _owner_partitions(data, clients):
    """Every assignment of the points to clients, as dicts client -> set, written without flmodel."""
    pts = sorted(data)
    for owners in itertools.product(clients, repeat=len(pts)):
        yield {c: {p for p, o in zip(pts, owners, strict=True) if o == c} for c in clients}


def _brute_force(d0, d1, clients, initial0, initial1):
    """Pairs (G0, G1) of partitions (put_part's choices plus each system's initial one) in which every
    client's parts differ by one replacement / by one added or removed point (sizes, not symmetric
    differences): all of them, and those in which both partitions give out every point exactly once."""
    def choices(data, initial):
        out = [initial]
        out += [p for p in _owner_partitions(data, clients) if p != initial]
        return out

    def covers(g, data):
        return sum(len(g[c]) for c in clients) == len(data) and set().union(*g.values()) == set(data)

    def replaced(a, b):
        return len(a) == len(b) and len(a & b) == len(a) - 1

    def added_or_removed(a, b):
        return abs(len(a) - len(b)) == 1 and (a <= b or b <= a)

    every = {"replace_one": 0, "add_remove_one": 0}
    deployed = dict(every)
    for g0 in choices(d0, initial0):
        for g1 in choices(d1, initial1):
            both = covers(g0, d0) and covers(g1, d1)
            for name, rel in (("replace_one", replaced), ("add_remove_one", added_or_removed)):
                if all(rel(g0[c], g1[c]) for c in clients):
                    every[name] += 1
                    deployed[name] += both
    return every, deployed


def test_seed_model_declared_pair_premise_met_by_chains_and_parity(seed) -> None:
    """seed_model.fl: D = {a, b, c}, the declared neighbour replaces c by c_moved, two clients and
    put_part chooses among the 2^3 partitions (plus the initial empty parts).  Replace-one needs the
    chain c1 loses c, gains a point of c2, which gains c_moved (2 owners of c x 2 moved points x 2
    owners of the third point = 8); add/remove-one: |D1| - |D0| = 0 has the parity of 2 clients, the
    owner of c loses it and the other client gains c_moved (2 x 2 x 2 = 8)."""
    fl = seed.system.fl
    (_, d1), = seed.declared
    d0 = frozenset(fl.initial.igra.dataset)
    clients = sorted(fl.clients)
    assert clients == ["c1", "c2"] and fl.owner is None
    empty = {c: set() for c in clients}
    assert all(not fl.initial.igra.partition[c] for c in clients)  # the initial state deploys nothing
    prem = decomposition_premise(fl, d0, d1)
    assert prem.counts == prem.deployed_counts == {"replace_one": 8, "add_remove_one": 8}
    assert (prem.counts, prem.deployed_counts) == _brute_force(d0, d1, clients, empty, empty)
    assert prem.partitions == (9, 9) and prem.examined == 81 and not prem.bounded and not prem.fixed_owners
    assert "chain of 1 moved point" in prem.facts["replace_one"]
    assert "(it has)" in prem.facts["add_remove_one"]


def test_seed_model_add_remove_pair_premise_fails_by_parity(seed) -> None:
    """D vs D - {c}: |D1| - |D0| = -1 is odd, the two clients' ±1 changes sum to an even number, so no
    two deployed partitions meet the premise (nor replace-one: one point fewer).  The initial state of
    D's system, before put_part, has empty parts: against a deployment of {a, b} giving each client one
    point it meets add/remove-one (2 such pairs) — the literal premise does not ask for deployed data."""
    fl = seed.system.fl
    d0 = frozenset(fl.initial.igra.dataset)
    d1 = frozenset(p for p in d0 if p.name != "c")
    clients = sorted(fl.clients)
    empty = {c: set() for c in clients}
    prem = decomposition_premise(fl, d0, d1)
    assert prem.deployed_counts == {"replace_one": 0, "add_remove_one": 0}
    assert prem.counts == {"replace_one": 0, "add_remove_one": 2}
    assert (prem.counts, prem.deployed_counts) == _brute_force(d0, d1, clients, empty, empty)
    assert prem.partitions == (9, 5)
    assert "(it has not)" in prem.facts["add_remove_one"] and "impossible" in prem.facts["replace_one"]
    assert "not yet deployed initial partition" in prem.text()


def test_seed_model_with_three_clients_add_remove_pair_meets_premise(seed) -> None:
    """The parity fact the other way: the seed model's data over three clients (odd) make a one-point
    size change possible (every client's part changes by one point); checked by brute force."""
    from flmodel.examples import seed_model

    d0 = frozenset(seed.system.fl.initial.igra.dataset)
    d1 = frozenset(p for p in d0 if p.name != "c")
    sys3 = seed_model(3, d0)
    clients = ["c1", "c2", "c3"]
    empty = {c: set() for c in clients}
    prem = decomposition_premise(sys3, d0, d1)
    assert (prem.counts, prem.deployed_counts) == _brute_force(d0, d1, clients, empty, empty)
    assert prem.deployed_counts["add_remove_one"] > 0 and prem.counts["replace_one"] == 0
    assert "(it has)" in prem.facts["add_remove_one"]


def test_seed_model_fixed_owners_premise_cannot_be_met(seed) -> None:
    """With fixed owners (one partition per dataset) only the owner of c / c_moved changes its part:
    the other client keeps it, and ◇1 is irreflexive.  When c and c_moved have different owners each of
    the two clients' parts changes by one point (add/remove-one met); with one client it is met too."""
    from flmodel.examples import seed_model

    fl = seed.system.fl
    (_, d1), = seed.declared
    d0 = frozenset(fl.initial.igra.dataset)
    same = fl.replace(owner=lambda p: "c1" if p.name in ("c", "c_moved") else "c2").with_dataset(d0)
    prem = decomposition_premise(same, d0, d1, put_part_fires=False)
    assert prem.fixed_owners and prem.partitions == (1, 1) and prem.examined == 1
    assert prem.counts == {"replace_one": 0, "add_remove_one": 0}
    assert "only 1 of the 2 clients" in prem.facts["fixed_owners"]
    split = fl.replace(owner=lambda p: "c1" if p.name == "c" else "c2").with_dataset(d0)
    prem = decomposition_premise(split, d0, d1, put_part_fires=False)
    assert prem.counts == {"replace_one": 0, "add_remove_one": 1}
    assert "every client owns a changed point" in prem.facts["fixed_owners"]
    one = seed_model(1, d0).replace(owner=lambda p: "c1").with_dataset(d0)
    prem = decomposition_premise(one, d0, d1, put_part_fires=False)
    assert prem.counts == {"replace_one": 1, "add_remove_one": 0}


def test_premise_count_bounded(seed) -> None:
    fl = seed.system.fl
    (_, d1), = seed.declared
    d0 = frozenset(fl.initial.igra.dataset)
    prem = decomposition_premise(fl, d0, d1, max_partitions=3)
    assert prem.bounded and prem.examined == 9 and "bounded" in prem.text()


# --- the literal check on the bundled seed model ---------------------------------------------------------


@pytest.fixture(scope="module")
def seed_report(seed):
    return privacy_report(seed.system, seed.universe, declared=seed.declared, observing=seed.observing,
                          check_scheduler=False, decomposition=False)


def test_literal_check_shows_the_flaws_on_the_seed_model(seed_report) -> None:
    lit = seed_report.literal
    w = seed_report.worst
    assert lit is not None and w is not None
    js = lit.json()
    # R32: the published form is finite where the DP form's ε* is infinite
    pub = js["published_form"]
    assert pub["dp_epsilon"] == "inf" and pub["epsilon"] != "inf" and pub["agree"] is False
    assert pub["epsilon_exact"] == published_form(w.p0, w.p1).text()
    assert pub["dp_epsilon_exact"] == w.epsilon.text() == pure_epsilon(w.p0, w.p1).text()
    # R33 at ε = 0 on the outcome released under D0 only
    rev = js["reversed_inequality"]
    assert rev["epsilon"] == 0.0 and rev["D1"] == 0.0 and rev["D0"] > 0
    assert (rev["D0 <= e^eps D1"], rev["D1 <= e^-eps D0"], rev["D1 >= e^-eps D0"]) == (False, True, False)
    # R34/R35
    assert [(v["variable"], v["definition"]) for v in js["free_variables"]] == \
        [("M", "NI_FL_DP"), ("G0", "NI_FL_DP"), ("G1", "NI_FL_DP"), ("ε", "NI_Decomposition")]
    prem = js["decomposition_premise_across_systems"]
    assert prem["pairs_meeting_premise"] == {"replace_one": 8, "add_remove_one": 8}
    assert prem["fixed_owners"] is False  # put_part fires in the seed model's exploration
    assert [line.split(" ", 1)[0] for line in lit.flaws] == ["R32", "R33", "R34/R35", "NI_Decomposition"]
    assert all("Fraction(" not in line and "DataPoint(" not in line for line in lit.flaws)
    # the existing keys are kept
    for key in ("states", "reachable_datasets", "premise_satisfiable",
                "decomposition_partition_premise_pairs", "path_sums", "explanation", "verdict"):
        assert key in js


def test_literal_check_without_a_pair_lists_the_free_variables() -> None:
    from flmodel.examples import seed_model

    lit = literal_check(seed_model(2, max_rounds=1, max_events=3, trace_mode="drop"))
    assert lit.published_form is None and lit.reversed_inequality is None
    assert lit.decomposition_premise is None
    assert lit.free_variables == [dict(v) for v in FREE_VARIABLES]
    assert len(lit.flaws) == 1 and lit.flaws[0].startswith("R34/R35")


def test_privacy_text_prints_one_line_per_flaw(seed_report, capsys: pytest.CaptureFixture[str]) -> None:
    """The text of ``flcheck privacy seed_model`` (its printer on the report of the fixture)."""
    import argparse

    from checker.cli.privacy import _print_report

    _print_report(seed_report, argparse.Namespace(model="seed_model"))
    out = capsys.readouterr().out
    section = out[out.index("seed's definition literally"):]
    assert "R32 two outcomes:" in section and "ε* = inf: they DISAGREE" in section
    assert ("R33 reversed inequality at ε = 0, outcome (5/6, 5/3)" in section
            and "D0 ≤ e^ε D1 false; III-C's 'equivalent' D1 ≤ e^-ε D0 true; the correct D1 ≥ e^-ε D0 false"
            in section)
    assert "R34/R35 free variables: M (NI_FL_DP)" in section and "ε (NI_Decomposition): ∀ε" in section
    assert "NI_Decomposition premise across the two systems (moved: D vs D-{c}+{c_moved}): replace_one 8, " \
           "add_remove_one 8 of 81 pairs" in section
