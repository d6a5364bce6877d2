"""The forward pass on FL systems (checker.app.privacy_rounds) against the enumerated record.

``moniteo_rounds.fl`` at R = 2 and 3 rounds: every figure of the budget table — per round, over rounds,
per client, ``NI_Decomposition`` — from the forward passes over the reduced and the unreduced chains
equals the one of :func:`checker.app.privacy_budget.budget_of_pair` on the privacy pipeline's
enumeration of the attacker's record (no reductions), and the ``flcheck check`` figures are those the
scenario's comments state.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import flcheck_spec
import pytest

from checker.app.privacy_budget import BudgetReport, SequenceFigures, budget_of_pair, first_exceeded
from checker.app.privacy_fl import pair_label, partition_relation, privacy_report
from checker.app.privacy_rounds import SeveralActions, forward_budget, forward_privacy
from checker.app.reductions import ObservationReducer, Reductions, reduce_system
from checker.privacy.ni_fl_dp import Eps
from flmodel.scenario import load_scenario
from flmodel.scenario_build import build_system, neighbour_dataset

EPS = Eps(ratio=Fraction(3))
DELTA_PRIME = 1 / 1024


@cache
def tables(rounds: int) -> tuple[BudgetReport, BudgetReport, BudgetReport]:
    """(enumerated, forward pass unreduced, forward pass reduced) budget tables of moniteo_rounds."""
    path = flcheck_spec.resource("scenarios", "moniteo_rounds.fl")
    sc = load_scenario(path, defines={"R": rounds})
    system = build_system(sc)
    d0 = frozenset(system.fl.initial.igra.dataset)
    d1 = frozenset(neighbour_dataset(sc, "hot"))
    rep = privacy_report(system, observe="sequence", observing=("curmodpar",), readings=(),
                         declared=[("hot", d1)], literal=False, decomposition=True, exact=True)
    (pair,) = rep.pairs
    enumerated = budget_of_pair(rep, pair, delta_prime=DELTA_PRIME, eps_ref=EPS)
    relation = partition_relation(system.fl, d0, d1, "replace_one")
    label = f"hot: {pair_label(d0, d1)}"
    plain = forward_budget(system, d0, d1, label, observing=("curmodpar",), reducer=None, relation=relation,
                           delta_prime=DELTA_PRIME, eps_ref=EPS)
    choice = Reductions()
    reduced_system, _ = reduce_system(system, sc, Reductions.dead_values_only(choice))
    reducer = ObservationReducer(sc, reduced_system.secrets, choice=choice)
    reduced = forward_budget(reduced_system, d0, d1, label, observing=("curmodpar",), reducer=reducer,
                             relation=relation, delta_prime=DELTA_PRIME, eps_ref=EPS)
    return enumerated, plain, reduced


def rows_of(s: SequenceFigures) -> list[tuple[object, ...]]:
    return [(r.round, r.marginal.ratio, r.marginal_delta, r.conditional.ratio, r.exact.ratio, r.exact.outcome,
             r.exact_delta, r.exact_at_delta, r.basic, r.advanced, r.pld) for r in s.rows]


@pytest.mark.parametrize("rounds", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_budget_tables_equal_the_enumeration(rounds: int) -> None:
    enumerated, plain, reduced = tables(rounds)
    for table in (plain, reduced):
        assert table.label == enumerated.label
        assert rows_of(table.releases) == rows_of(enumerated.releases)
        assert table.clients.keys() == enumerated.clients.keys()
        for c in enumerated.clients:
            assert rows_of(table.clients[c]) == rows_of(enumerated.clients[c]), c
        assert [d.json() for d in table.decomposition] == [d.json() for d in enumerated.decomposition]
        assert table.releases.method == "forward pass" and table.releases.stopped is None


def test_the_scenario_figures() -> None:
    """The figures of moniteo_rounds.fl's comments at R = 2, from the forward pass."""
    _, _, reduced = tables(2)
    rows = reduced.releases.rows
    assert [r.marginal.ratio for r in rows] == [2, Fraction(11, 6)]
    assert rows[-1].exact.ratio == 4 and rows[-1].exact_delta == Fraction(1, 1024)
    sat3 = reduced.clients["sat3"].rows[-1]
    assert sat3.exact.ratio == Fraction(31, 8) and sat3.exact_delta == Fraction(7, 128)
    assert reduced.clients["sat1"].whole.ratio == Fraction(20, 19)
    assert reduced.clients["sat2"].whole.ratio == Fraction(18, 17)


def test_four_rounds_through_the_check_pipeline() -> None:
    """R = 4: ε* = ln 16 = 4 ln 2 (basic composition is tight, as at R = 2) over 7^4 sequences each."""
    path = flcheck_spec.resource("scenarios", "moniteo_rounds.fl")
    sc = load_scenario(path, defines={"R": 4})
    choice = Reductions()
    system, _ = reduce_system(build_system(sc), sc, Reductions.dead_values_only(choice))
    d0 = frozenset(system.fl.initial.igra.dataset)
    d1 = frozenset(neighbour_dataset(sc, "hot"))
    fw = forward_privacy(system, d0, d1, observing=("curmodpar",),
                         reducer=ObservationReducer(sc, system.secrets, choice=choice))
    assert fw.epsilon.ratio == 16
    assert fw.outcomes == (7**4, 7**4)
    assert fw.independent == [True, True]


def test_one_action_stops_at_the_first_state_with_several() -> None:
    """Without the partial-order reduction the reports interleave: a pass asked for one action per
    state stops at once (the privacy check then enumerates, to tell whether the scheduler matters),
    while the plain pass over the same structure gives ε* under the uniform scheduler."""
    path = flcheck_spec.resource("scenarios", "moniteo_rounds.fl")
    sc = load_scenario(path, defines={"R": 1})
    system = build_system(sc)
    d0 = frozenset(system.fl.initial.igra.dataset)
    d1 = frozenset(neighbour_dataset(sc, "hot"))
    with pytest.raises(SeveralActions):
        forward_privacy(system, d0, d1, observing=("curmodpar",), reducer=None, one_action=True)
    fw = forward_privacy(system, d0, d1, observing=("curmodpar",), reducer=None)
    assert fw.independent == [None, None] and fw.epsilon.ratio == 2


def test_past_the_bounds_a_budget_is_not_decided_silently() -> None:
    """With the PLD kept for the first round only, δ(ln 3) of rounds 1..2 is unknown: a budget
    (ln 3, 1/1024) that rounds 1..2 meet exactly is neither held nor exceeded there (``exceeded`` is
    ``None``), while ε* stays exact; a client stream bounded to 7 pairs of beliefs (sat3's reports
    have 9 after two reports) stops, saying why."""
    path = flcheck_spec.resource("scenarios", "moniteo_rounds.fl")
    sc = load_scenario(path)
    choice = Reductions()
    system, _ = reduce_system(build_system(sc), sc, Reductions.dead_values_only(choice))
    d0 = frozenset(system.fl.initial.igra.dataset)
    d1 = frozenset(neighbour_dataset(sc, "hot"))
    reducer = ObservationReducer(sc, system.secrets, choice=choice)
    table = forward_budget(system, d0, d1, "hot", observing=("curmodpar",), reducer=reducer, relation=None,
                           eps_ref=EPS, max_atoms=1, max_beliefs=7)
    rows = table.releases.rows
    assert rows[0].exact_delta == 0 and rows[1].exact_delta is None and not rows[1].pld_known
    assert rows[1].exact.ratio == 4
    found, checked = first_exceeded(table, EPS, Fraction(1, 1024), "sequence")
    assert found is None and [r["exceeded"] for r in checked] == [False, None]
    found, _ = first_exceeded(table, EPS, Fraction(0), "sequence")  # pure: ε* = ln 4 > ln 3 decides
    assert found is not None and found.round == 2 and found.delta is None
    assert table.releases.stopped is None
    assert table.clients["sat3"].stopped is not None and "9 pairs of beliefs" in table.clients["sat3"].stopped


def test_check_reports_unknown_past_the_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check's budget property says ``unknown`` and why, never a verdict it cannot show."""
    import checker.app.privacy_rounds as rounds
    from checker.app.check import check_file

    monkeypatch.setattr(rounds, "MAX_ATOMS", 1)
    monkeypatch.setattr(rounds.forward_budget, "__kwdefaults__",
                        {**(rounds.forward_budget.__kwdefaults__ or {}), "max_atoms": 1})
    report = check_file(flcheck_spec.resource("scenarios", "moniteo_rounds.fl"))
    approx = next(r for r in report.results if r.name == "rounds_ln3_approx")
    assert str(approx.verdict) == "unknown"
    assert "not decided: δ(ε_B) not computed from round 2" in approx.evidence
    exact = next(r for r in report.results if r.name == "rounds_ln3")
    assert str(exact.verdict) == "violated"  # ε* = ln 4 > ln 3 decides a pure budget
