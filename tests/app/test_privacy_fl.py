"""Tests for checker.app.privacy_fl on small FL systems, against independent hand computations of the
release distribution (flmodel's learning step and noise mechanism, FedAvg by hand, no exploration)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from checker.app.privacy_fl import privacy_report
from checker.app.privacy_literal import literal_check
from checker.app.privacy_observation import observe_dataset, parse_observe
from checker.errors import InputError
from checker.privacy.ni_fl_dp import pure_epsilon
from checker.verdict import Verdict
from flmodel.examples import moniteo_like, moniteo_universe, seed_model
from flmodel.learning import SquaredLoss, grad_step

F = Fraction


def hand_releases(system, data) -> dict:
    """One FedAvg round by hand: each satellite's local step from curmodpar, noised coordinate-wise by
    the system's mechanism (independently per client), averaged with weights |part|/n."""
    s = system.with_dataset(data)
    g = s.initial.igra
    w0 = g.curmodpar
    mech = s.ctx.mechanism
    n = len(g.dataset)
    per_client = []
    for c in sorted(g.clients):
        part = g.part(c)
        upd = grad_step(SquaredLoss(), s.ctx.eta, w0, part)
        per_client.append((F(len(part), n) if n else F(0), mech(upd)))
    out: dict = {}
    for combo in itertools.product(*(dist for _, dist in per_client)):
        prob = F(1)
        model = [F(0)] * len(w0)
        for (weight, _), (vec, p) in zip(per_client, combo, strict=True):
            prob *= p
            model = [m + weight * v for m, v in zip(model, vec, strict=True)]
        key = (tuple(model),)
        out[key] = out.get(key, F(0)) + prob
    return out


@pytest.fixture(scope="module")
def moniteo():
    return moniteo_like(2, 1, "rr")


@pytest.fixture(scope="module")
def report(moniteo):
    return privacy_report(moniteo, moniteo_universe(2), eps="ln(3)", literal=False)


def test_release_distribution_matches_hand_computation(moniteo) -> None:
    base = frozenset(moniteo.initial.igra.dataset)
    obs = observe_dataset(moniteo, base)
    assert obs.exact and obs.undetermined == 0
    assert obs.releases == hand_releases(moniteo, base)
    # float path agrees within 1e-9
    obs_f = observe_dataset(moniteo, base, exact=False, check_scheduler=False)
    assert set(obs_f.releases) == set(obs.releases)
    assert max(abs(obs_f.releases[k] - float(v)) for k, v in obs.releases.items()) < 1e-9
    assert obs.scheduler_independent is True


def test_pairs_epsilon_and_worst(report, moniteo) -> None:
    assert report.readings == {"replace_one": 2, "add_remove_one": 3}
    by_label = {(p.reading, p.label): p for p in report.pairs}
    swap = by_label[("replace_one", "D vs D-{loc1}+{loc3}")]
    # loc1 and loc3 both belong to sat1 and the weights stay 1/2: ε = ε of sat1's update = ln 3 (RR, r=1/3)
    assert swap.epsilon.ratio == 3 and swap.verdict == Verdict.HOLDS and swap.delta == 0
    hand0 = hand_releases(moniteo, swap.d0)
    hand1 = hand_releases(moniteo, swap.d1)
    assert pure_epsilon(hand0, hand1).ratio == 3
    # every add/remove pair changes n (FedAvg weights): the supports differ, ε = ∞
    for p in report.pairs:
        if p.reading == "add_remove_one":
            assert p.epsilon.infinite and p.verdict == Verdict.VIOLATED
            # supports differ: δ(ln 3) >= the P0-mass on outcomes P1 cannot produce > 0
            assert p.delta > 0 and p.delta <= p.best.advantage
    assert report.worst is not None and report.worst.epsilon.infinite
    assert report.verdict == Verdict.VIOLATED and not report.vacuous


def test_advantage_and_bounds_on_model(report) -> None:
    for p in report.pairs:
        names = {b.name: b for b in p.bounds}
        # the tight (ε, δ(ε)) bound always holds; the best advantage dominates the threshold attackers
        assert names["tight_approx"].holds
        assert all(a.advantage <= p.best.advantage for a in p.attackers)
        assert not names["seed_theorem1_stated"].holds
        if not p.epsilon.infinite and p.delta == 0:
            assert names["tight_pure"].holds and names["seed_theorem1_proof_as_bound"].holds


def test_decomposition_counterexample(report) -> None:
    """Adding loc3 to sat1: sat1's updates are ln 3-DP and sat2's are unchanged, so the premise of
    NI_Decomposition holds with ε = ln 3, but the released model is not DP at all (ε = ∞) because the
    FedAvg weights |part|/n change: the theorem's conclusion fails, and so does 'post-processing'."""
    p = next(p for p in report.pairs if p.label == "D vs D+{loc3}")
    d = p.decomposition
    assert d.partition_relation == {"sat1": "neighbours", "sat2": "equal"}
    assert d.client_eps["sat1"].ratio == 3 and d.client_eps["sat2"].ratio == 1
    assert d.premise_eps is not None and d.premise_eps.ratio == 3
    assert d.global_eps.infinite and not d.conclusion_holds and not d.max_rule_holds
    assert d.joint_eps.ratio == 3 and not d.post_processing_holds
    assert d.composition_holds  # chain rule: always
    swap = next(p for p in report.pairs if p.label == "D vs D-{loc1}+{loc3}").decomposition
    assert swap.conclusion_holds and swap.post_processing_holds and swap.max_rule_holds


def test_observation_modes_post_processing(moniteo) -> None:
    """releases are a function of the trace: ε(trace) >= ε(curmodpar); client ε <= ε of all updates."""
    uni = moniteo_universe(2)
    r_tr = privacy_report(moniteo, uni, observe="trace", literal=False, check_scheduler=False)
    r_cm = privacy_report(moniteo, uni, observe="curmodpar", literal=False, check_scheduler=False)
    r_c1 = privacy_report(moniteo, uni, observe="client:sat1", literal=False, check_scheduler=False)
    for a, b, c in zip(r_tr.pairs, r_cm.pairs, r_c1.pairs, strict=True):
        assert a.label == b.label == c.label
        if not a.epsilon.infinite:
            assert not b.epsilon.infinite and b.epsilon.ratio <= a.epsilon.ratio
        assert c.epsilon.infinite <= c.decomposition.joint_eps.infinite
    # without --eps, NI-FL-DP means "ε* finite": sat1's updates alone are ln 3 / ln 9-DP
    assert r_c1.verdict == Verdict.HOLDS
    assert max(p.epsilon.ratio for p in r_c1.pairs) == 9


def test_vacuous_without_neighbours(moniteo) -> None:
    rep = privacy_report(moniteo, None, readings=("replace_one",), literal=False, check_scheduler=False)
    assert rep.vacuous and rep.verdict == Verdict.HOLDS_VACUOUSLY and rep.pairs == []
    assert rep.json()["vacuous"] is True
    assert any("no replace-one neighbour" in n for n in rep.notes)


def test_literal_reading_premise_never_met() -> None:
    sysm = seed_model(2, max_rounds=1, max_events=4, trace_mode="drop")
    lit = literal_check(sysm)
    assert lit.complete and lit.reachable_datasets == 1
    assert lit.premise_satisfiable == {"replace_one": False, "add_remove_one": False}
    assert lit.verdict == Verdict.HOLDS_VACUOUSLY
    # NI_Decomposition's per-client partition premise CAN be met inside one structure (put_part chooses)
    assert lit.partition_premise_pairs["add_remove_one"] > 0
    assert lit.partition_premise_pairs["replace_one"] > 0
    # the seed's path sum for the initial curmodpar counts every prefix: it exceeds first passage (= 1)
    first = lit.path_sums[0]
    assert first["first_passage"] == 1.0 and first["path_sum"] > 1.0 and first["differs"]


def test_scheduler_dependence_detected_on_published_rules() -> None:
    sysm = seed_model(2, max_rounds=1, max_events=4, trace_mode="drop")
    obs = observe_dataset(sysm)
    # put_part chooses the partition nondeterministically and the partition decides the model
    assert obs.scheduler_independent is False
    assert sum(obs.releases.values()) + obs.undetermined == 1


def test_parse_observe() -> None:
    assert parse_observe("curmodpar", ["a"]) == ("curmodpar", None)
    assert parse_observe("client:a", ["a"]) == ("client", "a")
    with pytest.raises(InputError, match="unknown client"):
        parse_observe("client:zz", ["a"])
    with pytest.raises(InputError, match="curmodpar, trace or client:NAME"):
        parse_observe("gradients", ["a"])


def test_without_decomposition_same_epsilons(report, moniteo) -> None:
    """Not recording per-client updates shrinks the product but must not change the releases' ε."""
    rep = privacy_report(moniteo, moniteo_universe(2), eps="ln(3)", literal=False, decomposition=False,
                         check_scheduler=False)
    assert [p.decomposition for p in rep.pairs] == [None] * len(rep.pairs)
    assert [(p.label, p.epsilon.ratio, p.delta) for p in rep.pairs] == \
        [(p.label, p.epsilon.ratio, p.delta) for p in report.pairs]
    assert rep.base.states <= report.base.states
