"""NI_Decomposition over several rounds (spec/SPEC.md R36): on moniteo_rounds.fl neither the per-report
nor the per-client-sequence reading of its premise gives the conclusion; the premise read over all
clients' updates together does (post-processing), and the rounds compose."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from checker.app.privacy_budget import budget_of_pair
from checker.app.privacy_fl import privacy_model, privacy_report

ROOT = Path(__file__).resolve().parents[2]


def test_moniteo_rounds_decomposition_fails_per_report_and_per_client_sequence() -> None:
    m = privacy_model("moniteo_rounds")
    rep = privacy_report(m.system, m.universe, declared=m.declared, readings=(), observing=m.observing,
                         literal=False, exact=True)
    (pair,) = rep.pairs
    d = pair.decomposition
    assert d is not None
    assert d.global_eps.ratio == 4
    assert {c: e.ratio for c, e in d.client_eps.items()} == {
        "sat1": Fraction(20, 19), "sat2": Fraction(18, 17), "sat3": Fraction(31, 8)}
    assert d.partition_relation["sat3"] == "neighbours"
    assert not d.conclusion_holds  # per client sequence: ln(31/8) < ln 4
    assert d.joint_eps.ratio == 4 and d.post_processing_holds  # all clients' updates together: ln 4
    assert [r.ratio for r in d.rounds] == [2, 2] and d.composition_holds
    budget = budget_of_pair(rep, pair)
    per = {x.reading: x for x in budget.decomposition}
    assert per["per report"].premise is not None and per["per report"].premise.ratio == 2
    assert per["per client sequence"].premise is not None
    assert per["per client sequence"].premise.ratio == Fraction(31, 8)
    assert not per["per report"].holds and not per["per client sequence"].holds
    assert not budget.readings_part  # both readings fail: the difference is not the readings'
    sat3 = budget.clients["sat3"]
    assert [r.conditional.ratio for r in sat3.rows] == [2, Fraction(31, 16)]
    spec = (ROOT / "spec" / "SPEC.md").read_text(encoding="utf-8")
    r36 = spec.split("- **R36**", 1)[1].split("- **R37**", 1)[0]
    assert "ln(31/8) < ln 4" in r36 and "fails in both readings" in r36
