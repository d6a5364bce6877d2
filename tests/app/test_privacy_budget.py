"""Rounds, clients and budgets (:mod:`checker.app.privacy_budget`) against independent references: the
issue's 2-round example by brute-force enumeration, the composition laws on hypothesis-generated
adaptive multi-round mechanisms, advanced composition against its closed form, the PLD composition
against the exact δ(ε) of the product mechanism, and the ``budget`` property (first round exceeded,
bad input at file:line:col)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Hashable, Mapping
from fractions import Fraction
from itertools import product
from pathlib import Path

import flcheck_spec
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.app.check import check_scenario
from checker.app.privacy_budget import budget_of_pair, compose_plds, rr_pair, sequence_figures
from checker.app.privacy_fl import privacy_report
from checker.cli.main import main
from checker.privacy.ni_fl_dp import Eps, EpsilonResult
from flmodel.scenario import parse_scenario
from flmodel.scenario_build import build_system, neighbour_dataset
from tests.app.test_privacy_pipeline import TWO_ROUNDS, _final, _ratio, _releases

BASE = TWO_ROUNDS.split("property dp")[0]
BUDGETS = """property seq: budget epsilon <= ln(3) between n
property client: budget epsilon <= ln(3) delta 1e-6 per client over rounds between n;
property round: budget epsilon <= ln(3) per round between n
property loose: budget epsilon <= 2 delta 1e-6 per client over rounds between n;
property approx: budget epsilon <= ln(3) delta 1/64 over rounds between n
"""


def _ratio_of(e: EpsilonResult) -> Fraction:
    assert e.ratio is not None
    return Fraction(e.ratio)


def _prefix(d: Mapping[tuple[Fraction, ...], Fraction], r: int) -> dict[Hashable, Fraction]:
    out: dict[Hashable, Fraction] = defaultdict(Fraction)
    for seq, p in d.items():
        out[seq[:r]] += p
    return dict(out)


def _conditional_ratio(d0: Mapping[tuple[Fraction, ...], Fraction],
                       d1: Mapping[tuple[Fraction, ...], Fraction], r: int) -> Fraction:
    """max over histories h of length r−1 and next values v of the ratio of P(v | h), by enumeration."""
    a, b = _prefix(d0, r), _prefix(d1, r)
    ha, hb = _prefix(d0, r - 1), _prefix(d1, r - 1)
    return max(max((a[s] / ha[s[:-1]]) / (b[s] / hb[s[:-1]]), (b[s] / hb[s[:-1]]) / (a[s] / ha[s[:-1]]))
               for s in a)  # type: ignore[index]


@pytest.fixture(scope="module")
def two_round_budget() -> object:
    scenario = parse_scenario(TWO_ROUNDS, "two_rounds.fl")
    rep = privacy_report(build_system(scenario), declared=[("n", neighbour_dataset(scenario, "n"))],
                         readings=(), literal=False, exact=True)
    return budget_of_pair(rep, rep.pairs[0], eps_ref=Eps(ratio=Fraction(3)))


def test_two_round_example_against_brute_force(two_round_budget: object) -> None:
    b = two_round_budget
    d0, d1 = _releases([(1, 1), (1, 0)]), _releases([(1, 1), (1, 2)])
    rows = b.releases.rows  # type: ignore[attr-defined]
    assert len(rows) == 2
    # the exact ε of the whole release sequence is ln 4; of round 1 alone ln 2; of round 2 alone (the
    # final value) ln(37/18)
    assert _ratio_of(b.releases.whole) == _ratio(d0, d1) == 4  # type: ignore[attr-defined, arg-type]
    assert _ratio_of(rows[0].exact) == _ratio(_prefix(d0, 1), _prefix(d1, 1)) == 2
    assert _ratio_of(rows[1].marginal) == _ratio(_final(d0), _final(d1)) == Fraction(37, 18)
    for r in (1, 2):
        assert _ratio_of(rows[r - 1].conditional) == _conditional_ratio(d0, d1, r) == 2
    assert rows[1].basic == Eps(ratio=Fraction(4))  # ln 2 + ln 2: basic composition is tight here
    # exact δ(ln 3) of the releases through each round: 0, then Σ (P0 − 3 P1)⁺ over sequences
    exact2 = sum((max(Fraction(0), d0[s] - 3 * d1[s]) for s in d0), Fraction(0))
    exact2 = max(exact2, sum((max(Fraction(0), d1[s] - 3 * d0[s]) for s in d1), Fraction(0)))
    assert rows[0].exact_delta == 0 and rows[1].exact_delta == exact2 == Fraction(1, 64)
    # NI_Decomposition: per report the premise is met with ln 2 < ln 4 (the conclusion fails); per
    # client sequence with ln 4 (it holds): the readings part
    per = {d.reading: d for d in b.decomposition}  # type: ignore[attr-defined]
    assert _ratio_of(per["per report"].premise) == 2 and not per["per report"].holds
    assert _ratio_of(per["per client sequence"].premise) == 4 and per["per client sequence"].holds
    assert b.readings_part  # type: ignore[attr-defined]


def test_advanced_composition_against_its_closed_form(two_round_budget: object) -> None:
    rows = two_round_budget.releases.rows  # type: ignore[attr-defined]
    e, dp = math.log(2), 1e-6
    for r, row in enumerate(rows, 1):
        closed = math.sqrt(2 * r * math.log(1 / dp)) * e + r * e * (math.exp(e) - 1)
        assert row.advanced == pytest.approx(closed, rel=1e-12)
    s = sequence_figures("x", {(0, 0): Fraction(1)}, {(0, 0): Fraction(1)}, delta_prime=0.5)
    assert [r.advanced for r in s.rows] == [0.0, 0.0] and [r.pld for r in s.rows] == [0.0, 0.0]


# --------------------------------------------------------------------------- laws, hypothesis
@st.composite
def adaptive_mechanisms(draw: st.DrawFn) -> tuple[dict[Hashable, Fraction], dict[Hashable, Fraction]]:
    """Two distributions over output sequences of an adaptive k-round mechanism on two datasets: in
    every round, for every history, an output distribution on a small alphabet (weights 0..4, some
    outputs impossible on one dataset only)."""
    k = draw(st.integers(1, 3))
    n = draw(st.integers(2, 3))
    dists: list[dict[Hashable, Fraction]] = []
    for _ in range(2):
        seqs: dict[tuple[int, ...], Fraction] = {(): Fraction(1)}
        for _ in range(k):
            nxt: dict[tuple[int, ...], Fraction] = {}
            for h, p in seqs.items():
                w = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n).filter(lambda x: sum(x) > 0))
                for v, wv in enumerate(w):
                    if wv:
                        nxt[(*h, v)] = p * Fraction(wv, sum(w))
            seqs = nxt
        dists.append(dict(seqs))  # type: ignore[arg-type]
    return dists[0], dists[1]


def _le(a: EpsilonResult, b: EpsilonResult | Eps) -> bool:
    eb = b.as_eps() if isinstance(b, EpsilonResult) else b
    if eb.infinite:
        return True
    if a.ratio is None:
        return False
    assert eb.ratio is not None
    return Fraction(a.ratio) <= eb.ratio


@settings(max_examples=60, deadline=None)
@given(adaptive_mechanisms())
def test_basic_composition_bounds_the_sequence_which_bounds_every_round(
        pair: tuple[dict[Hashable, Fraction], dict[Hashable, Fraction]]) -> None:
    p0, p1 = pair
    s = sequence_figures("x", p0, p1, interval=1e-2)
    whole = s.whole
    for i, row in enumerate(s.rows):
        assert _le(row.marginal, whole)  # post-processing: round r alone is a function of the sequence
        assert _le(row.exact, row.basic)  # the chain rule over rounds 1..r
        if i:
            assert _le(s.rows[i - 1].exact, row.exact)  # the prefix is a function of the longer prefix
        slack = (i + 1) * 1e-2 + 1e-9  # the pessimistic grid's rounding of each round's loss
        assert row.pld <= float(row.basic) + slack
        assert row.advanced is not None and row.pld <= row.advanced + slack


# --------------------------------------------------------------------------- PLD against brute force
def _hockey(p: Mapping[Hashable, float], q: Mapping[Hashable, float], eps: float) -> float:
    return math.fsum(max(0.0, p[o] - math.exp(eps) * q.get(o, 0.0)) for o in p)


def _brute_product(pairs: list[tuple[dict[int, float], dict[int, float]]]) -> tuple[dict[Hashable, float],
                                                                                   dict[Hashable, float]]:
    p: dict[Hashable, float] = {}
    q: dict[Hashable, float] = {}
    for combo in product(*(sorted(set(a) | set(b)) for a, b in pairs)):
        p[combo] = math.prod(a.get(o, 0.0) for (a, _), o in zip(pairs, combo, strict=True))
        q[combo] = math.prod(b.get(o, 0.0) for (_, b), o in zip(pairs, combo, strict=True))
    return p, q


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(1, 9), min_size=2, max_size=3),
                          st.lists(st.integers(1, 9), min_size=2, max_size=3)), min_size=1, max_size=3),
       st.floats(0.0, 2.0))
def test_pld_composition_brackets_the_exact_delta_of_the_product(
        raw: list[tuple[list[int], list[int]]], eps: float) -> None:
    pairs = []
    for a, b in raw:
        m = min(len(a), len(b))
        pairs.append(({i: x / sum(a[:m]) for i, x in enumerate(a[:m])},
                      {i: x / sum(b[:m]) for i, x in enumerate(b[:m])}))
    plds = compose_plds(pairs, interval=1e-3)  # type: ignore[arg-type]
    assert plds is not None
    pess, opt = plds
    exact = _hockey(*_brute_product(pairs), eps)
    hi, lo = float(pess.delta(eps)[0]), float(opt.delta(eps)[0])
    assert lo - 1e-9 <= exact <= hi + 1e-9  # slack included by delta()
    assert hi - lo <= 5e-3  # the grid's error


def test_randomized_response_pairs_compose_to_the_exact_curve() -> None:
    # two RR(ln 2) rounds: δ(ln 3) = Σ (P − 3Q)⁺ over {00, 01, 10, 11} = 4/9 − 3/9 = 1/9
    pess, opt = compose_plds([rr_pair(Eps(ratio=Fraction(2)))] * 2)  # type: ignore[misc]
    assert float(opt.delta(math.log(3))[0]) <= 1 / 9 + 1e-12 <= float(pess.delta(math.log(3))[0]) + 2e-12
    assert float(pess.delta(math.log(3))[0]) - 1 / 9 < 1e-3


# --------------------------------------------------------------------------- the budget property
@pytest.fixture(scope="module")
def budget_results() -> dict[str, object]:
    report = check_scenario(parse_scenario(BASE + BUDGETS, "budgets.fl"))
    return {r.name: r for r in report.results} | {"_json": report.to_json()}


def test_the_budget_is_exceeded_at_round_two_not_one(budget_results: dict[str, object]) -> None:
    d0, d1 = _releases([(1, 1), (1, 0)]), _releases([(1, 1), (1, 2)])
    assert _ratio(_prefix(d0, 1), _prefix(d1, 1)) <= 3 < _ratio(d0, d1)  # type: ignore[arg-type]
    seq = budget_results["seq"]
    assert str(seq.verdict) == "violated"  # type: ignore[attr-defined]
    assert seq.details["exceeded"]["round"] == 2 and seq.details["exceeded"]["client"] is None  # type: ignore[attr-defined]
    assert [r["exceeded"] for r in seq.details["rounds"]] == [False, True]  # type: ignore[attr-defined]
    assert "first exceeded at round 2" in seq.evidence  # type: ignore[attr-defined]
    # the accountant: basic ln 2 ≤ ln 3 < ln 2 + ln 2; advanced √(2 ln 10⁶) ln 2 + ln 2 ≈ 4.34 > ln 3 at once
    acc = seq.details["accountant_first_exceeded"]  # type: ignore[attr-defined]
    assert acc["basic"]["round"] == 2 and acc["advanced"]["round"] == 1
    client = budget_results["client"]
    assert str(client.verdict) == "violated"  # type: ignore[attr-defined]
    assert client.details["exceeded"]["round"] == 2 and client.details["exceeded"]["client"] == "c2"  # type: ignore[attr-defined]
    # each round alone stays within ln 3 (round 2's release alone: ln(37/18))
    assert str(budget_results["round"].verdict) == "holds"  # type: ignore[attr-defined]
    assert budget_results["round"].value_text.startswith("ln(37/18)")  # type: ignore[attr-defined]
    assert str(budget_results["loose"].verdict) == "holds"  # type: ignore[attr-defined]
    # δ(ln 3) of the sequence is exactly 1/64: (ln 3, 1/64) holds, (ln 3, 0) does not
    assert str(budget_results["approx"].verdict) == "holds"  # type: ignore[attr-defined]


def test_check_json_of_budgets_follows_the_schema(budget_results: dict[str, object]) -> None:
    schema = json.loads(flcheck_spec.resource("schema", "check.schema.json").read_text())
    data = {"flcheck": "x", "schema": 1, "command": "check", **budget_results["_json"]}  # type: ignore[dict-item]
    jsonschema.validate(data, schema)


@pytest.mark.parametrize(("prop", "expected"), [
    ("property b: budget epsilon <= 1 delta 2 between n",
     "budgets.fl:20:33: property 'b': δ = 2 is not in [0, 1]"),
    ("property b: budget epsilon <= 1 delta -1/2 between n;",
     "budgets.fl:20:33: property 'b': δ = -1/2 is not"),
    ("property b: budget epsilon <= -1 between n;", "budgets.fl:20:10: property 'b': ε must be >= 0, got -1"),
    ("property b: budget epsilon <= ln(1/2) per round between n",
     "budgets.fl:20:10: property 'b': ε = ln(1/2) is negative"),
    ("property b: budget epsilon <= 1 over rounds between cold;",
     "budgets.fl:20:53: property 'b' refers to unknown neighbour 'cold'"),
    ("property b: budget epsilon <= 1 per rounds between n;",
     "budgets.fl:20:42: unexpected 's'; expected 'between'"),
])
def test_bad_budgets_exit_2_at_the_position(prop: str, expected: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "budgets.fl"
    path.write_text(BASE + prop + "\n")
    assert main(["check", str(path)]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("flcheck: error: ") and expected in first, first


def test_budget_statements_end_at_semicolon_or_line_end() -> None:
    s = parse_scenario(BASE + "property a: budget epsilon <= 2 delta 1e-6 per client over rounds between n;"
                       " property b: budget epsilon <= ln(3) per round between n\n"
                       "property c: budget epsilon <= 1 between n\n", "b.fl")
    a, b, c = s.properties
    assert (a.budget_scope, a.delta, a.eps.value) == ("client", Fraction(1, 10**6), 2)  # type: ignore[union-attr]
    assert (b.budget_scope, b.delta, b.eps.log) == ("round", 0, True)  # type: ignore[union-attr]
    assert (c.budget_scope, c.neighbour) == ("sequence", "n")
    assert parse_scenario(BASE + a.text() + "\n", "b.fl").properties[0] == a  # the text round-trips


# --------------------------------------------------------------------------- flcheck privacy
def test_privacy_prints_the_rounds_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "two_rounds.fl"
    path.write_text(TWO_ROUNDS)
    main(["privacy", str(path), "--no-literal"])
    text = capsys.readouterr().out
    assert "rounds and clients, n: D vs D-{b}+{b2}" in text
    assert "releases   2      ln(37/18)" in text
    assert "NI_Decomposition per report: premise ε = ln(2) ≈ 0.693147, released sequence ε = ln(4)" in text
    assert text.rstrip().splitlines()[-1] == "NI-FL-DP: holds"  # the verdict line stays last
    main(["privacy", str(path), "--no-literal", "--json", "--eps", "ln(3)"])
    data = json.loads(capsys.readouterr().out)
    schema = json.loads(flcheck_spec.resource("schema", "privacy.schema.json").read_text())
    jsonschema.validate(data, schema)
    (b,) = data["budget"]
    assert b["releases"]["epsilon_exact"].startswith("ln(4)") and b["decomposition_readings_part"] is True
    assert [r["exact_delta"] for r in b["releases"]["rounds"]] == [0.0, 1 / 64]
    assert data["pairs"][0]["epsilon_exact"].startswith("ln(4)")  # the existing keys are unchanged
