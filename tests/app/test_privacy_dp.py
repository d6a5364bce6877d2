"""``D{ε,δ}[ψ]`` on scenarios (checker.app.privacy_dp): the probabilities of ψ = ``F curmodpar == v``
agree with the release-sequence distributions of the privacy pipeline (an independent computation:
the product with the attacker's record, solved as a Markov chain) and the verdict with the
inequality decided on them."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from fractions import Fraction

import pytest

from checker.app.privacy_dp import dp_check
from checker.app.privacy_fl import privacy_report
from checker.mc.ctl_ast import DPQuery
from checker.mc.ctl_parse import parse_formula
from checker.privacy.ni_fl_dp import Number
from checker.verdict import Verdict
from flmodel.scenario import parse_scenario
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import build_system, neighbour_dataset, neighbour_system
from tests.app.test_privacy_pipeline import TWO_ROUNDS

#: The two-round example with a bias (2-dimensional models, which the property language can name).
TWO_D = (TWO_ROUNDS.replace("squared_nobias", "squared").replace("initial (0)", "initial (0, 0)")
         .replace("a = (1) -> 1", "a = (0) -> 1").replace("rounds 2", "rounds 1"))


@pytest.mark.parametrize("schedulers", ["uniform", "worst"])
def test_eventually_a_release_matches_the_sequence_distribution(schedulers: str) -> None:
    s = parse_scenario(TWO_D, "two_d.fl")
    rep = privacy_report(build_system(s), readings=(), declared=[("n", neighbour_dataset(s, "n"))],
                         literal=False, decomposition=False, check_scheduler=False)
    (pair,) = rep.pairs
    releases = sorted({x for seq in pair.p0 for x in seq})  # type: ignore[attr-defined]
    assert len(releases) >= 3
    for v in releases[:3]:
        _check_release(s, pair.p0, pair.p1, v, schedulers)


INITIAL = (Fraction(0), Fraction(0))


def _check_release(s: Scenario, d0: Mapping[Hashable, Number], d1: Mapping[Hashable, Number],
                   v: tuple[Fraction, ...], schedulers: str) -> None:
    # F includes the initial state, whose model (0, 0) the release sequence does not record
    p0 = sum((p for seq, p in d0.items() if v in seq or v == INITIAL), Fraction(0))  # type: ignore[operator]
    p1 = sum((p for seq, p in d1.items() if v in seq or v == INITIAL), Fraction(0))  # type: ignore[operator]
    f = parse_formula(f"D{{ln(2), 1/10}}[F curmodpar == ({v[0]}, {v[1]})]")
    assert isinstance(f, DPQuery)
    r = dp_check(build_system(s), neighbour_system(s, "n"), f, "n", schedulers=schedulers)  # type: ignore[arg-type]
    assert r.directions[0].probabilities == (p0, p1)
    assert r.directions[1].probabilities == (p1, p0)
    holds = p0 <= 2 * p1 + Fraction(1, 10) and p1 <= 2 * p0 + Fraction(1, 10)
    assert r.verdict is (Verdict.HOLDS if holds else Verdict.VIOLATED)


def test_memoryless_needs_one_action_set_per_observation() -> None:
    """Observing only curmodpar, the state before and after a report look alike but offer different
    reports: no scheduler chooses by the current observation alone, and the check says so."""
    s = parse_scenario(TWO_D, "two_d.fl")
    f = parse_formula("D{ln(2), 0}[F round = 1]")
    assert isinstance(f, DPQuery)
    with pytest.raises(ValueError, match="no memoryless scheduler exists"):
        dp_check(build_system(s), neighbour_system(s, "n"), f, "n", schedulers="memoryless")
