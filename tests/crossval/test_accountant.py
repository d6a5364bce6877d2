"""The DP-SGD / DP-FedAvg accountant (:mod:`checker.crossval.accountant`) against independent references:
dp_accounting's PLD and RDP accountants, Microsoft's prv_accountant where installed, the Gaussian closed
form, and [BBG18]'s fixed-size bound at one round."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.crossval.accountant import Run, delta_bracket, epsilon_bracket, noise_for_epsilon
from checker.crossval.gaussian import gaussian_delta, gaussian_epsilon

dp_event = pytest.importorskip("dp_accounting.dp_event")
pld_acc = pytest.importorskip("dp_accounting.pld.pld_privacy_accountant")
rdp_acc = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")

#: (Z, q, T, δ, dp_accounting's grid interval: fine enough for its pessimistic figure to be tight)
POISSON = [
    (1.1, 0.01, 10_000, 1e-5, 1e-4),
    (0.8, 0.05, 1_000, 1e-6, 1e-4),
    (2.0, 0.2, 100, 1e-5, 1e-4),
    (5.0, 0.001, 100_000, 1e-5, 1e-5),
    (0.6, 0.5, 10, 1e-3, 1e-4),
]


def _dpa_pld(z: float, q: float, t: int, delta: float, interval: float, pessimistic: bool = True) -> float:
    from dp_accounting.pld import privacy_loss_distribution as pld

    one = pld.from_gaussian_mechanism(z, sampling_prob=q, value_discretization_interval=interval,
                                      pessimistic_estimate=pessimistic)
    return float(one.self_compose(t).get_epsilon_for_delta(delta))


def _dpa_rdp(event: object, t: int, delta: float, relation: object | None = None) -> float:
    acc = (rdp_acc.RdpAccountant() if relation is None
           else rdp_acc.RdpAccountant(neighboring_relation=relation))
    acc.compose(event, t)
    return float(acc.get_epsilon(delta))


@pytest.mark.parametrize(("z", "q", "t", "delta", "interval"), POISSON)
def test_poisson_bracket_holds_dp_accounting_pld_and_lies_below_rdp(z: float, q: float, t: int, delta: float,
                                                                     interval: float) -> None:
    b = epsilon_bracket(Run(z, q, t), delta)
    pess = _dpa_pld(z, q, t, delta, interval)
    opt = _dpa_pld(z, q, t, delta, interval, pessimistic=False)
    assert b.lower <= pess <= b.upper  # dp_accounting's (pessimistic) figure inside the bracket
    assert opt <= b.upper and b.lower <= pess
    assert b.width <= 0.01 * b.upper
    rdp = _dpa_rdp(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)), t, delta)
    assert b.upper <= rdp  # RDP is a looser upper bound of the same curve


def test_issue_query_width_and_dp_accounting_figure() -> None:
    b = epsilon_bracket(Run(1.1, 0.01, 10_000), 1e-5)
    assert b.lower <= _dpa_pld(1.1, 0.01, 10_000, 1e-5, 1e-4) <= b.upper
    assert b.width <= 0.01 * b.upper


def test_delta_bracket_holds_dp_accounting_delta() -> None:
    from dp_accounting.pld import privacy_loss_distribution as pld

    one = pld.from_gaussian_mechanism(1.1, sampling_prob=0.01, value_discretization_interval=1e-4)
    composed = one.self_compose(10_000)
    for eps in (2.0, 5.0, 8.0):
        b = delta_bracket(Run(1.1, 0.01, 10_000), eps)
        theirs = float(composed.get_delta_for_epsilon(eps))
        assert b.lower <= theirs * (1 + 1e-9) and theirs <= b.upper * 1.01  # theirs is pessimistic too
        assert b.lower <= b.upper


def test_prv_accountant_agrees_where_installed() -> None:
    prv = pytest.importorskip("prv_accountant")
    acc = prv.PRVAccountant(prvs=prv.PoissonSubsampledGaussianMechanism(noise_multiplier=1.1,
                                                                        sampling_probability=0.01),
                            max_self_compositions=10_000, eps_error=0.01, delta_error=1e-10)
    low, est, up = acc.compute_epsilon(delta=1e-5, num_self_compositions=[10_000])
    b = epsilon_bracket(Run(1.1, 0.01, 10_000), 1e-5)
    assert low <= b.upper and b.lower <= up  # the two brackets overlap
    assert b.lower - 0.01 <= est <= b.upper + 0.01


def test_full_participation_is_the_gaussian_closed_form_and_poisson_at_q_1_agrees() -> None:
    run = Run(1.3, 1.0, 40, "all")
    exact = gaussian_epsilon(math.sqrt(40) / 1.3, 1e-6)
    b = epsilon_bracket(run, 1e-6)
    assert b.upper == pytest.approx(exact, rel=1e-12) and b.width < 1e-9
    pld = epsilon_bracket(replace(run, sampling="poisson"), 1e-6)  # the PLD path at q = 1
    assert pld.lower <= exact <= pld.upper
    d = delta_bracket(run, 3.0)
    assert d.upper == pytest.approx(float(gaussian_delta(math.sqrt(40) / 1.3, 3.0)[0]), rel=1e-9)


def test_fixed_size_one_round_is_balle_s_bound() -> None:
    """At T = 1 the fixed-size curve for ε ≥ 0 is [BBG18] Thm. 10: ``q·δ_G(2/Z)(ln(1 + (e^ε − 1)/q))``."""
    z, q = 1.5, 0.1
    run = Run(z, q, 1, "fixed", 100, 10)
    for eps in (0.1, 0.5, 1.0, 2.0):
        closed = q * float(gaussian_delta(2 / z, math.log1p(math.expm1(eps) / q))[0])
        b = delta_bracket(run, eps)
        assert b.upper == pytest.approx(closed, rel=2e-3)
        assert b.lower <= closed * (1 + 1e-9)


def test_fixed_size_is_not_treated_as_poisson_and_lies_below_rdp_without_replacement() -> None:
    z, n, k, t = 1.1, 1000, 10, 1000
    fixed = epsilon_bracket(Run(z, k / n, t, "fixed", n, k), 1e-5)
    poisson = epsilon_bracket(Run(z, k / n, t, "poisson", n, k), 1e-5)
    assert fixed.lower > poisson.upper  # replace-one (sensitivity 2C) costs more than add/remove
    relation = rdp_acc.NeighborRel.REPLACE_ONE
    # dp_accounting's noise multiplier is the noise over the replace-one sensitivity 2C: Z/2
    rdp = _dpa_rdp(dp_event.SampledWithoutReplacementDpEvent(n, k, dp_event.GaussianDpEvent(z / 2)), t,
                   1e-5, relation)
    assert fixed.lower <= rdp


def test_shuffle_bounds_are_ordered_and_the_upper_is_the_participations_gaussian() -> None:
    run = Run(2.0, 0.1, 100, "shuffle", 100, 10)
    b = epsilon_bracket(run, 1e-5)
    assert b.upper == pytest.approx(gaussian_epsilon(2 * math.sqrt(10) / 2.0, 1e-5), rel=1e-12)
    assert 0 < b.lower <= b.upper
    d = delta_bracket(run, 2.0)
    assert 0 < d.lower <= d.upper


def test_inverse_at_epsilon_2_is_within_one_percent() -> None:
    run = Run(1.0, 0.01, 10_000)
    z, b = noise_for_epsilon(run, 2.0, 1e-5)
    forward = epsilon_bracket(replace(run, noise_multiplier=z), 1e-5)
    assert 0.99 * 2.0 <= forward.upper <= 2.0
    assert b.upper == pytest.approx(forward.upper)
    below = epsilon_bracket(replace(run, noise_multiplier=z * 0.98), 1e-5)
    assert below.upper > 2.0 or below.upper >= 0.99 * 2.0


_RUNS = {"z": st.floats(0.5, 4.0), "q": st.floats(0.005, 1.0), "t": st.integers(1, 300),
         "delta": st.sampled_from([1e-3, 1e-6])}


@settings(max_examples=4, deadline=None, derandomize=True, database=None)
@given(**_RUNS)
def test_poisson_bracket_contains_dp_accounting_on_random_runs(z: float, q: float, t: int,
                                                               delta: float) -> None:
    """A fixed-seed sample (the slow suite draws more)."""
    _bracket_contains_dp_accounting(z, q, t, delta)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(**_RUNS)
def test_poisson_bracket_contains_dp_accounting_on_many_runs(z: float, q: float, t: int,
                                                             delta: float) -> None:
    _bracket_contains_dp_accounting(z, q, t, delta)


def _bracket_contains_dp_accounting(z: float, q: float, t: int, delta: float) -> None:
    """flcheck's certified bracket of ε(δ): its lower end at most dp_accounting's pessimistic PLD
    figure, its upper end at least dp_accounting's optimistic one (both at a 1e-4 grid)."""
    b = epsilon_bracket(Run(z, q, t), delta)
    assert b.lower <= b.upper
    theirs = _dpa_pld(z, q, t, delta, 1e-4)
    opt = _dpa_pld(z, q, t, delta, 1e-4, pessimistic=False)
    assert b.lower <= theirs + 1e-9 and opt <= b.upper + 1e-9


def test_bad_parameters_are_refused() -> None:
    for kwargs in ({"noise_multiplier": 0.0}, {"noise_multiplier": math.nan}, {"sampling_rate": 1.5},
                   {"rounds": 0}, {"sampling": "bogus"}):
        with pytest.raises(ValueError):
            Run(**{"noise_multiplier": 1.0, "sampling_rate": 0.1, "rounds": 10, **kwargs})  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        epsilon_bracket(Run(1.0, 0.1, 10), 1.0)
