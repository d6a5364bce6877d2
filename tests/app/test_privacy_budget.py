"""Rounds, clients and budgets (:mod:`checker.app.privacy_budget`) against independent references: the
issue's 2-round example by brute-force enumeration, the composition laws on hypothesis-generated
adaptive multi-round mechanisms, advanced composition against its closed form, the PLD composition
against the exact δ(ε) of the product mechanism, and the ``budget`` property (first round exceeded,
bad input at file:line:col)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping
from fractions import Fraction
from itertools import product
from pathlib import Path

import flcheck_spec
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.app.check import check_scenario
from checker.app.privacy_budget import (
    RoundFigures,
    budget_of_pair,
    compose_plds,
    rr_pair,
    sequence_figures,
)
from checker.app.privacy_fl import privacy_report
from checker.cli.main import main
from checker.privacy.ni_fl_dp import Eps, EpsilonResult
from flmodel.errors import ModelError
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
    seqs: list[tuple[Fraction, ...]] = list(a)  # type: ignore[arg-type]  # the prefixes are tuples
    return max(max((a[s] / ha[s[:-1]]) / (b[s] / hb[s[:-1]]), (b[s] / hb[s[:-1]]) / (a[s] / ha[s[:-1]]))
               for s in seqs)


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
    # the accountant: basic ln 2 ≤ ln 3 < ln 2 + ln 2; advanced √(2 ln 10⁶) ln 2 + ln 2 ≈ 4.34 is worse
    # than basic at every round, so it is not shown
    acc = seq.details["accountant_first_exceeded"]  # type: ignore[attr-defined]
    assert acc["basic"]["round"] == 2 and "advanced" not in acc
    assert "advanced" not in seq.evidence  # type: ignore[attr-defined]
    rows = seq.details["budget"]["releases"]["rounds"]  # type: ignore[attr-defined]
    assert all(r["advanced"] > r["basic"] and not r["advanced_tighter"] for r in rows)
    # the exact run: δ(ln 3) of the two releases, and ε(δ') the least ε with δ(ε) ≤ δ' = 10⁻⁶
    run = seq.details["exact_run"]["releases"]  # type: ignore[attr-defined]
    assert run["delta_text"].startswith("1/64") and run["rounds"] == 2
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
     "budgets.fl:20:33: unknown budget scope 'per rounds'; expected 'per round', 'over rounds' or "
     "'per client over rounds'"),
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


# --------------------------------------------------------------------------- the bundled moniteo_rounds.fl
ROUNDS_FL = Path(flcheck_spec.bundled_scenarios()["moniteo_rounds"])
ROUNDS_GRID = (Fraction(0), Fraction(1), Fraction(2))
#: One run of moniteo_rounds.fl: the releases, each round's reports (sat1, sat2, sat3), its probability.
Run = tuple[tuple[Fraction, ...], tuple[tuple[Fraction, ...], ...], Fraction]
#: What an attacker sees of a run.
View = Callable[[tuple[Fraction, ...], tuple[tuple[Fraction, ...], ...]], Hashable]


def _rounds_runs(temps: tuple[int, ...], rounds: int = 2) -> list[Run]:
    """Every noise outcome of moniteo_rounds.fl, enumerated: each satellite's local model w/2 + y/2
    (one step of ½(w − y)² at rate 1/2, x = 1) is rounded to the nearest grid point (ties to the
    smaller), kept with probability 1/2 and replaced by each other point with 1/4; the release is the
    mean of the reports. Returns (releases, reports per round, probability) per run."""
    out: list[Run] = []

    def go(w: Fraction, rel: tuple[Fraction, ...], rep: tuple[tuple[Fraction, ...], ...],
           p: Fraction) -> None:
        if len(rel) == rounds:
            out.append((rel, rep, p))
            return
        nearest = [min(ROUNDS_GRID, key=lambda g: (abs(g - (w + y) / 2), g)) for y in temps]
        for combo in product(ROUNDS_GRID, repeat=len(temps)):
            q = p * math.prod(Fraction(1, 2) if v == s else Fraction(1, 4)
                              for v, s in zip(combo, nearest, strict=True))
            go(sum(combo, Fraction(0)) / len(temps), (*rel, sum(combo, Fraction(0)) / len(temps)),
               (*rep, combo), q)

    go(Fraction(0), (), (), Fraction(1))
    return out


def _seen(runs: list[Run], f: View) -> dict[Hashable, Fraction]:
    out: dict[Hashable, Fraction] = defaultdict(Fraction)
    for rel, rep, p in runs:
        out[f(rel, rep)] += p
    return dict(out)


def _delta(a: Mapping[Hashable, Fraction], b: Mapping[Hashable, Fraction], ratio: int) -> Fraction:
    """The hockey-stick δ(ln ratio), both directions."""
    return max(sum((max(Fraction(0), a[o] - ratio * b.get(o, Fraction(0))) for o in a), Fraction(0)),
               sum((max(Fraction(0), b[o] - ratio * a.get(o, Fraction(0))) for o in b), Fraction(0)))


def _report_view(client: int, rounds: tuple[int, ...]) -> View:
    """A client's reports in the given rounds (one report alone, or the tuple of several)."""
    def view(rel: tuple[Fraction, ...], rep: tuple[tuple[Fraction, ...], ...]) -> Hashable:
        seen = tuple(rep[r][client] for r in rounds)
        return seen[0] if len(seen) == 1 else seen
    return view


@pytest.fixture(scope="module")
def rounds_reference() -> dict[str, tuple[Fraction, Fraction]]:
    """``{what: (e^ε*, δ(ln 3))}`` of what the attacker sees in moniteo_rounds.fl, by enumeration:
    sat3 reads 0 in D0 and 2 in D1 ('hot')."""
    d0, d1 = _rounds_runs((2, 1, 0)), _rounds_runs((2, 1, 2))
    views: dict[str, View] = {"round 1": lambda rel, rep: rel[0], "round 2": lambda rel, rep: rel[1],
                              "sequence": lambda rel, rep: rel}
    for i, sat in enumerate(("sat1", "sat2", "sat3")):
        views[f"{sat} report 1"] = _report_view(i, (0,))
        views[f"{sat} report 2"] = _report_view(i, (1,))
        views[sat] = _report_view(i, (0, 1))
    out = {}
    for what, f in views.items():
        a, b = _seen(d0, f), _seen(d1, f)
        out[what] = (_ratio(a, b), _delta(a, b, 3))
    return out


def test_moniteo_rounds_figures_of_its_comments(
        rounds_reference: dict[str, tuple[Fraction, Fraction]]) -> None:
    # the closed forms stated in spec/scenarios/moniteo_rounds.fl's header
    ref = rounds_reference
    assert ref["round 1"][0] == 2 and ref["round 2"][0] == Fraction(11, 6)
    assert ref["sequence"] == (4, Fraction(1, 1024))
    assert ref["sat3"] == (Fraction(31, 8), Fraction(7, 128))
    assert ref["sat1"][0] == Fraction(20, 19) and ref["sat2"][0] == Fraction(18, 17)
    text = ROUNDS_FL.read_text(encoding="utf-8")
    for figure in ("ln(11/6)", "δ(ln 3) = 1/1024", "ln(31/8), δ(ln 3) = 7/128", "ln(20/19)", "ln(18/17)"):
        assert figure in text


@pytest.fixture(scope="module")
def rounds_check() -> dict[str, object]:
    report = check_scenario(parse_scenario(ROUNDS_FL.read_text(encoding="utf-8"), ROUNDS_FL.name))
    return {r.name: r for r in report.results}


def test_moniteo_rounds_budgets_against_the_enumeration(
        rounds_check: dict[str, object], rounds_reference: dict[str, tuple[Fraction, Fraction]]) -> None:
    ref = rounds_reference
    res: dict[str, object] = rounds_check
    verdicts = {name: str(r.verdict) for name, r in res.items()}  # type: ignore[attr-defined]
    # which budgets hold follows from the enumerated figures
    assert verdicts == {
        "ni_fl_dp": "holds" if ref["sequence"][0] <= 4 else "violated",
        "each_round": "holds" if max(ref["round 1"][0], ref["round 2"][0]) <= 2 else "violated",
        "rounds_ln4": "holds" if ref["sequence"][0] <= 4 else "violated",
        "rounds_ln3": "violated" if ref["sequence"][0] > 3 else "holds",
        "rounds_ln3_approx": "holds" if ref["sequence"][1] <= Fraction(1, 1024) else "violated",
        "sat_reports_ln3": "violated" if ref["sat3"][1] > Fraction(1, 10**6) else "holds",
        "sat_reports": "holds" if max(ref[s][0] for s in ("sat1", "sat2", "sat3")) <= Fraction(31, 8)
        else "violated"}
    assert set(verdicts.values()) == {"holds", "violated"}
    # the sequence's budget ln 3 is first exceeded at round 2 (round 1 alone: ln 2 ≤ ln 3)
    seq = res["rounds_ln3"].details  # type: ignore[attr-defined]
    assert ref["round 1"][0] <= 3 < ref["sequence"][0]
    assert seq["exceeded"]["round"] == 2 and seq["exceeded"]["client"] is None
    assert seq["exceeded"]["epsilon_exact"].startswith(f"ln({ref['sequence'][0]})")
    assert Fraction(seq["exceeded"]["delta"]) == ref["sequence"][1]
    assert "first exceeded at round 2" in res["rounds_ln3"].evidence  # type: ignore[attr-defined]
    # per client: sat3 at its second report, with δ(ln 3) = 7/128
    cl = res["sat_reports_ln3"].details  # type: ignore[attr-defined]
    assert (cl["exceeded"]["round"], cl["exceeded"]["client"]) == (2, "sat3")
    assert cl["exceeded"]["epsilon_exact"].startswith(f"ln({ref['sat3'][0]})")
    assert Fraction(cl["exceeded"]["delta"]) == ref["sat3"][1]
    assert "first exceeded at round 2, client sat3" in res["sat_reports_ln3"].evidence  # type: ignore[attr-defined]
    # the per-round table: each row's ε against the enumeration
    table = res["rounds_ln4"].details["budget"]  # type: ignore[attr-defined]
    rel = table["releases"]["rounds"]
    assert [r["marginal_exact"].split(" ")[0] for r in rel] == [f"ln({ref['round 1'][0]})",
                                                                f"ln({ref['round 2'][0]})"]
    assert rel[1]["exact_text"].startswith(f"ln({ref['sequence'][0]})")
    for sat in ("sat1", "sat2", "sat3"):
        rows = table["clients"][sat]["rounds"]
        for k in (1, 2):
            r = ref[f"{sat} report {k}"][0]
            assert rows[k - 1]["marginal_exact"] == ("0" if r == 1 else f"ln({r}) ≈ {math.log(r):.6g}")
        assert table["clients"][sat]["epsilon_exact"].startswith(f"ln({ref[sat][0]})")


def test_pure_budgets_get_no_spurious_pld_exceedance(rounds_check: dict[str, object]) -> None:
    # with δ = 0 the PLD accountant's δ(ε_B) is 0 exactly when ε_B ≥ Σ ε_i (the composed privacy loss
    # of the dominating RR pairs is at most Σ ε_i), so it agrees with basic composition; the
    # pessimistic grid alone puts a small mass above Σ ε_i
    for name in ("rounds_ln4", "sat_reports", "rounds_ln3"):
        d = rounds_check[name].details  # type: ignore[attr-defined]
        assert d["delta_bound"] == 0
        acc = d["accountant_first_exceeded"]
        assert acc["pld"] == acc["basic"], (name, acc)
    assert rounds_check["rounds_ln4"].details["accountant_first_exceeded"]["pld"] is None  # type: ignore[attr-defined]
    assert rounds_check["rounds_ln3"].details["accountant_first_exceeded"]["pld"]["round"] == 2  # type: ignore[attr-defined]
    assert "pld composition never" in rounds_check["rounds_ln4"].evidence  # type: ignore[attr-defined]
    # the figures behind it: two RR(ln 2) rounds at ε = ln 4 (= ln 2 + ln 2) and a little below
    pess, _ = compose_plds([rr_pair(Eps(ratio=Fraction(2)))] * 2)  # type: ignore[misc]
    assert float(pess.delta(math.log(4))[0]) > 0  # the grid's rounding, which the figures do not report
    at4 = budget_of_pair_rows(Eps(ratio=Fraction(4)))
    assert at4[1].pld_delta == (0.0, 0.0) and at4[1].pld <= float(at4[1].basic)
    below = budget_of_pair_rows(Eps(ratio=Fraction(7, 2)))
    assert below[1].pld_delta is not None and below[1].pld_delta[0] > 0  # ln 3.5 < ln 4: δ > 0 truly


def budget_of_pair_rows(eps_ref: Eps) -> list[RoundFigures]:
    """The release rows of the 2-round example of test_privacy_pipeline at the reference ε."""
    scenario = parse_scenario(TWO_ROUNDS, "two_rounds.fl")
    rep = privacy_report(build_system(scenario), declared=[("n", neighbour_dataset(scenario, "n"))],
                         readings=(), literal=False, exact=True)
    return budget_of_pair(rep, rep.pairs[0], eps_ref=eps_ref).releases.rows


@pytest.mark.parametrize("scope", ["per rounds", "per client", "over round", "per client over round",
                                   "per clients over rounds"])
def test_budget_scope_typos_name_the_accepted_scopes(scope: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "budgets.fl"
    path.write_text(BASE + f"property b: budget epsilon <= 1 delta 1e-6 {scope} between n;\n")
    assert main(["check", str(path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (f"flcheck: error: {path}:20:44: unknown budget scope '{scope}'; expected 'per round', "
                    "'over rounds' or 'per client over rounds' (omitted: over rounds)")


def test_a_typo_after_a_valid_budget_scope_keeps_the_parser_message() -> None:
    with pytest.raises(ModelError, match=r"b\.fl:20:43: unexpected 'betwen'; expected 'between'"):
        parse_scenario(BASE + "property b: budget epsilon <= 1 per round betwen n;\n", "b.fl")


def test_isabelle_export_states_the_budget_verdicts_of_check(rounds_check: dict[str, object],
                                                             tmp_path: Path) -> None:
    out = tmp_path / "theories"
    assert main(["export", "isabelle", str(ROUNDS_FL), "-o", str(out)]) == 0
    text = (out / "Scenario_moniteo_rounds.thy").read_text(encoding="utf-8")
    budgets = {n: r for n, r in rounds_check.items() if r.kind == "budget"}  # type: ignore[attr-defined]
    assert len(budgets) == 6
    for name, r in budgets.items():
        written = text.index(f"property {name}: budget")
        kind_line = text[written:].split("Kind budget", 1)[1].split("\n", 1)[0]
        assert f"verdict: {r.verdict}." in kind_line, (name, kind_line)  # type: ignore[attr-defined]
    assert "decided by flcheck check, not by this export" not in text
