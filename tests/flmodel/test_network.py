"""Time-varying topology (``flmodel.network``): contact windows, loss in flight with retries,
nondeterministic link failure and partial aggregation, checked against closed forms and an
independent brute-force computation of the uniform-scheduler chain."""

from __future__ import annotations

import itertools
from fractions import Fraction
from functools import cache
from pathlib import Path

import flcheck_spec
import pytest

from checker.app.check import check_scenario
from checker.app.load import load_model
from checker.markov.first_passage import reach_probabilities
from checker.markov.mdp import mdp_reach
from checker.markov.models import mdp_from_kripke
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_parse import parse_formula
from checker.mc.explore import explore
from flmodel.errors import ModelError
from flmodel.frozen import FrozenMap
from flmodel.learning import Vec
from flmodel.network import Network, Window, renormalised_model
from flmodel.rules import RULE_SETS
from flmodel.scenario import parse_scenario
from flmodel.scenario_build import build_fl_system, build_system
from flmodel.system import FLState

BUNDLED = flcheck_spec.bundled_scenarios()


def swarm(n: int, extra: str, *, protocol: str = "protocol fedavg_rounds traces drop",
          links: str | None = None, noise: str = "") -> str:
    """A Moniteo-like swarm of ``n`` satellites (one data point each) with ``extra`` statements."""
    sats = range(1, n + 1)
    if links is None:
        links = "links " + ", ".join(f"g -- o{i}" for i in sats)
    return "\n".join([
        'scenario "net"',
        "locations g, " + ", ".join(f"o{i}" for i in sats),
        links,
        extra,
        "server s at g",
        "clients " + ", ".join(f"c{i} at o{i}" for i in sats),
        *(f"data p{i} = ({i}) -> {i % 3}" for i in sats),
        "dataset " + ", ".join(f"p{i}" for i in sats),
        "partition " + ", ".join(f"c{i}: {{p{i}}}" for i in sats),
        "model squared rate 1/2 initial (0, 0)",
        noise,
        protocol,
        "bounds rounds 1",
    ]) + "\n"


def probabilities(tmp_path: Path, text: str, target: str = "round = 1",
                  ) -> tuple[Fraction, Fraction, Fraction]:
    """Exact (Pmin, Pmax, P under the uniform scheduler) of reaching ``target``."""
    path = tmp_path / "s.fl"
    path.write_text(text, encoding="utf-8")
    kripke = load_model(path)
    sat = ModelChecker(kripke).sat(parse_formula(target))
    mdp = mdp_from_kripke(kripke)
    lo = mdp_reach(mdp, sat, "min", exact=True).initial_value
    hi = mdp_reach(mdp, sat, "max", exact=True).initial_value
    uniform = reach_probabilities(mdp.induced_dtmc("uniform", exact=True), sat, exact=True)
    init = int(kripke.initial[0])
    return Fraction(lo), Fraction(hi), Fraction(uniform[init])


# ------------------------------------------------------------------------------------- loss
@pytest.mark.parametrize("p, k", [(Fraction(1, 10), 0), (Fraction(1, 10), 1), (Fraction(1, 3), 2),
                                  (Fraction(0), 0), (Fraction(9, 10), 3)])
def test_loss_with_retries_is_the_closed_form(tmp_path: Path, p: Fraction, k: int) -> None:
    """One lossy link: every scheduler completes the round with ``1 − p^(k+1)``."""
    text = swarm(3, f"loss g -- o3 {p} retries {k}")
    expected = 1 - p ** (k + 1)
    assert probabilities(tmp_path, text) == (expected, expected, expected)


def test_two_lossy_links_multiply(tmp_path: Path) -> None:
    text = swarm(3, "loss g -- o1 1/2\nloss g -- o3 1/10 retries 1")
    expected = Fraction(1, 2) * Fraction(99, 100)
    assert probabilities(tmp_path, text) == (expected, expected, expected)


def test_loss_on_every_hop_of_a_relayed_route(tmp_path: Path) -> None:
    """c2's report is relayed over o1 (no direct link): both hops' losses apply,
    ``q = (1 − (1/2)^2)(1 − 1/5)``."""
    text = swarm(2, "loss o2 -- o1 1/2 retries 1\nloss g -- o1 1/5", links="links g -- o1, o1 -- o2")
    expected = (1 - Fraction(1, 4)) * (1 - Fraction(1, 5)) * (1 - Fraction(1, 5))  # c1 uses g -- o1 too
    assert probabilities(tmp_path, text) == (expected, expected, expected)


def test_a_lost_report_is_one_outcome_of_the_same_action() -> None:
    """The report's outcomes and the loss share one action and sum to 1 (noise included)."""
    text = swarm(2, "loss g -- o2 1/4 retries 1", noise="noise rr grid {0, 1} r 1/2 clip on update")
    system = build_system(parse_scenario(text, "n.fl"))
    (s0,) = system.initial_states()
    by_action: dict[object, Fraction] = {}
    for action, _, p in system.successors(s0):
        by_action[action] = by_action.get(action, Fraction(0)) + p
    assert set(by_action.values()) == {Fraction(1)}
    lost = [p for a, t, p in system.successors(s0) if system.observe(t, "lost_c2")]
    assert lost == [Fraction(1, 16)]  # (1/4)^2: the attempt and its retry lost


# -------------------------------------------------------------------------------- contacts
def _uniform_order(n: int, window: int) -> Fraction:
    """P(client n reports within the first ``window`` steps) when the order of the n reports is a
    uniformly random permutation (brute force over all orders)."""
    orders = list(itertools.permutations(range(1, n + 1)))
    return Fraction(sum(1 for o in orders if o.index(n) < window), len(orders))


@pytest.mark.parametrize("n, window", [(2, 1), (3, 1), (3, 2), (4, 2), (3, 3)])
def test_step_window_uniform_is_the_order_statistic(tmp_path: Path, n: int, window: int) -> None:
    text = swarm(n, f"contact g -- o{n} in steps 1..{window}",
                 links="links " + ", ".join(f"g -- o{i}" for i in range(1, n)))
    lo, hi, uniform = probabilities(tmp_path, text)
    assert uniform == _uniform_order(n, window) == Fraction(window, n)
    assert (lo, hi) == (0 if window < n else 1, 1)


def test_round_windows(tmp_path: Path) -> None:
    """Up in round 2 only: the first round cannot complete; up in rounds 1, 3: it can."""
    links = "links g -- o1"
    assert probabilities(tmp_path, swarm(2, "contact g -- o2 in rounds 2", links=links)) == (0, 0, 0)
    assert probabilities(tmp_path, swarm(2, "contact g -- o2 in rounds 1, 3", links=links)) == (1, 1, 1)
    two_rounds = swarm(2, "contact g -- o2 in rounds 2", links=links).replace("bounds rounds 1",
                                                                               "bounds rounds 2")
    assert probabilities(tmp_path, two_rounds, "round = 2") == (0, 0, 0)


def test_generated_contact_plan_loads() -> None:
    """The orbit generator's text (indexed names, ranges, trailing ';') is scenario syntax."""
    plan = "contact orbit[1] -- ground in rounds 1, 3;\ncontact orbit[2] -- ground in steps 2..5, 9;"
    text = swarm(2, plan.replace("orbit[", "o[").replace("ground", "g"), links="")
    s = parse_scenario(text.replace("\n\n", "\n"), "plan.fl")
    assert [(c.link.a, c.unit, c.windows) for c in s.contacts] == [
        ("o1", "rounds", ((1, 1), (3, 3))), ("o2", "steps", ((2, 5), (9, 9)))]
    assert parse_scenario(s.to_text(), "again.fl") == s


# -------------------------------------------------------------------------------- failures
def _uniform_failure(n: int) -> Fraction:
    """Brute force of the uniform chain with ``failure g -- o_n``: from (reported clients, link up)
    every enabled step is equally likely — each unreported client with a route, the cut while the
    link is up, the aggregation when all have reported."""

    @cache
    def p(reported: frozenset[int], up: bool) -> Fraction:
        if len(reported) == n:
            return Fraction(1)
        steps: list[tuple[frozenset[int], bool]] = [
            (reported | {c}, up) for c in range(1, n + 1) if c not in reported and (c < n or up)]
        if up:
            steps.append((reported, False))
        if not steps:
            return Fraction(0)
        return sum((p(r, u) for r, u in steps), Fraction(0)) / len(steps)

    return p(frozenset(), True)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_nondeterministic_failure(tmp_path: Path, n: int) -> None:
    lo, hi, uniform = probabilities(tmp_path, swarm(n, f"failure g -- o{n}"))
    assert (lo, hi) == (0, 1)
    assert uniform == _uniform_failure(n)


def test_cut_link_is_an_environment_step_and_stays_cut() -> None:
    system = build_system(parse_scenario(swarm(2, "failure g -- o2"), "f.fl"))
    (s0,) = system.initial_states()
    cut = [(a, t) for a, t, _ in system.successors(s0) if a.rule == "cut_link"]
    assert [(a.actor, a.detail) for a, _ in cut] == [("environment", "g--o2")]
    after = cut[0][1]
    assert not system.observe(after, "link_o2_g") and system.observe(s0, "link_o2_g")
    assert all(a.rule != "cut_link" for a, _, _ in system.successors(after))


# ---------------------------------------------------------------------------- aggregation
def test_renormalised_fedavg() -> None:
    system = build_fl_system(parse_scenario(swarm(3, ""), "a.fl"))
    g = system.initial.igra
    grads = {"c1": Vec((Fraction(1), Fraction(2))), "c2": Vec((Fraction(3), Fraction(0))),
             "c3": Vec((Fraction(9), Fraction(9)))}
    g = g._replace(gradient=FrozenMap(grads))
    assert renormalised_model(g, frozenset({"c1", "c2"})) == (Fraction(2), Fraction(1))
    assert renormalised_model(g, frozenset({"c3"})) == (Fraction(9), Fraction(9))
    assert renormalised_model(g, frozenset()) == g.curmodpar


@pytest.mark.parametrize("q", [1, 2, 3])
def test_quorum_completes_unless_too_few_can_report(tmp_path: Path, q: int) -> None:
    """c3's report is lost with 1/2 (no retry): with quorum ≤ 2 every round completes, with quorum 3
    (every client) only when it arrives."""
    text = swarm(3, "loss g -- o3 1/2", protocol=f"protocol fedavg_rounds aggregate quorum {q} traces drop")
    expected = Fraction(1) if q < 3 else Fraction(1, 2)
    assert probabilities(tmp_path, text) == (expected, expected, expected)


def test_deadline_aggregates_the_reporters(tmp_path: Path) -> None:
    """Deadline 1: the server aggregates after the first report, with that client alone (its
    renormalised weight 1), so round 1 releases exactly one client's update."""
    text = swarm(2, "", protocol="protocol fedavg_rounds aggregate deadline 1 traces drop")
    system = build_system(parse_scenario(text, "d.fl"))
    (s0,) = system.initial_states()
    for a, t, _ in system.successors(s0):
        (b, t2, _), = [x for x in system.successors(t)]
        assert b.rule == "eval_deadline" and b.detail.endswith("reporters=" + a.actor)
        assert system.observe(t2, "curmodpar") == system.observe(t, f"gradient_{a.actor}")
    lo, hi, uniform = probabilities(tmp_path, text)
    assert (lo, hi, uniform) == (1, 1, 1)


def test_published_rule_set_unchanged_without_a_network() -> None:
    for name in ("moniteo", "seed_model", "moniteo_swarm8"):
        s = parse_scenario(BUNDLED[name].read_text(encoding="utf-8"), name, defines=None)
        fl = build_fl_system(s)
        assert not s.networked and fl.rules.name in RULE_SETS and fl.initial.igra.gra.status is None
    linkloss = build_fl_system(parse_scenario(BUNDLED["moniteo_link_loss"].read_text(), "ll.fl"))
    assert linkloss.rules.name == "fedavg_rounds+network"


def test_network_windows() -> None:
    w = Window("steps", ((2, 5), (9, 9)))
    assert [n for n in range(1, 11) if w.up(1, n)] == [2, 3, 4, 5, 9]
    net = Network({("a", "b"): (w,)})
    assert net.step_horizon == 9 and net.round_horizon == 0


# ------------------------------------------------------------------------------ link loss
def test_bundled_link_loss_closed_forms(tmp_path: Path) -> None:
    """The bundled scenario (link gone after step 2, loss 1/10 with one retry): uniform
    2/3 · 99/100, worst 0, best 99/100."""
    text = BUNDLED["moniteo_link_loss"].read_text(encoding="utf-8")
    assert probabilities(tmp_path, text) == (0, Fraction(99, 100), Fraction(33, 50))


@pytest.mark.slow
def test_link_loss_deadline_variant_epsilon() -> None:
    """The all-clients rule releases ε* = ln 6; with 'aggregate deadline 2' rounds without sat3's
    report (late or lost) release a model that does not depend on the secret: ε* = ln(3095/917)."""
    text = BUNDLED["moniteo_link_loss"].read_text(encoding="utf-8")
    base = check_scenario(parse_scenario(text, "ll.fl"), only=["ni_fl_dp"]).results[0]
    variant_text = text.replace("protocol fedavg_rounds traces drop",
                                "protocol fedavg_rounds aggregate deadline 2 traces drop").replace(
        "enabled(eval_round)", "enabled(eval_deadline)")
    variant = check_scenario(parse_scenario(variant_text, "ll.fl"), only=["ni_fl_dp"]).results[0]
    assert base.details["ratio"] == "6"
    assert variant.details["ratio"] == "3095/917"


def _deadline_release_distribution(secret: tuple[Fraction, Fraction]) -> dict[tuple[Fraction, ...], Fraction]:
    """The released model of the link-loss scenario with 'aggregate deadline 2', by enumerating its runs
    under the uniform scheduler, written from the scenario's text alone: the data are deployed and
    every update is ``w − η·∇L = (y/2)·(1, x)`` from ``w = (0, 0)`` (squared loss with intercept,
    η = 1/2); randomized response on {0, 1, 2, 3} with r = 1/3 snaps each coordinate to the nearest
    grid point (ties down) and keeps it with probability 1/2, each other point 1/6; sat3's link is up in
    steps 1 and 2 and its report arrives with probability 1 − (1/10)^2 (then it is lost for the round).
    The deadline refuses reports after two steps and aggregates the reporters' mean (equal parts), so
    every run is two report steps, each by a satellite chosen uniformly among those that may still
    report, then the release."""
    def rr(u: Fraction) -> dict[Fraction, Fraction]:
        snapped = min(range(4), key=lambda g: (abs(g - u), g))
        return {Fraction(g): Fraction(1, 2) if g == snapped else Fraction(1, 6) for g in range(4)}

    def reports(x: Fraction, y: Fraction) -> dict[tuple[Fraction, Fraction], Fraction]:
        a, b = rr(y / 2), rr(y / 2 * x)
        return {(u, v): p * q for u, p in a.items() for v, q in b.items()}

    data = {"sat1": (Fraction(0), Fraction(3)), "sat2": (Fraction(1), Fraction(2)), "sat3": secret}
    arrive = 1 - Fraction(1, 10) ** 2
    out: dict[tuple[Fraction, ...], Fraction] = {}

    def run(steps: int, sent: dict[str, tuple[Fraction, Fraction]], lost: bool, p: Fraction) -> None:
        if steps == 2:
            model = tuple(sum(u[i] for u in sent.values()) / len(sent) for i in range(2))
            out[model] = out.get(model, Fraction(0)) + p
            return
        able = [c for c in data if c not in sent and not (c == "sat3" and lost)]
        for c in able:
            q = p / len(able)
            keep = arrive if c == "sat3" else Fraction(1)
            for u, pu in reports(*data[c]).items():
                run(steps + 1, {**sent, c: u}, lost, q * keep * pu)
            if c == "sat3":
                run(steps + 1, sent, True, q * (1 - arrive))

    run(0, {}, False, Fraction(1))
    return out


def test_link_loss_deadline_epsilon_by_enumeration() -> None:
    """An independent reference for the deadline variant's ε* = ln(3095/917)
    (:func:`test_link_loss_deadline_variant_epsilon`): the largest ratio of the release probabilities
    on the two datasets, enumerated run by run."""
    d0 = _deadline_release_distribution((Fraction(2), Fraction(1)))
    d1 = _deadline_release_distribution((Fraction(2), Fraction(3)))
    assert sum(d0.values()) == sum(d1.values()) == 1 and d0.keys() == d1.keys()
    assert max(max(d0[v] / d1[v], d1[v] / d0[v]) for v in d0) == Fraction(3095, 917)


@pytest.mark.parametrize("statement, message", [
    ("contact g -- o2 in steps 3..1", "empty window"),
    ("contact g -- o2 in rounds 0", "round or step number >= 1"),
    ("contact g -- o1 in rounds 1", "also a static link"),
    ("loss g -- o2 1", "loss probability must be in [0, 1)"),
    ("loss o1 -- o2 1/2", "not a declared link"),
    ("failure o1 -- o2", "not a declared link"),
    ("loss g -- o1 1/2\nloss o1 -- g 1/3", "second loss statement"),
])
def test_network_errors(statement: str, message: str) -> None:
    with pytest.raises(ModelError) as info:
        parse_scenario(swarm(2, statement), "e.fl")
    assert any(message in d.message and d.line is not None for d in info.value.diagnostics), \
        [d.message for d in info.value.diagnostics]


@pytest.mark.parametrize("protocol, message", [
    ("protocol published aggregate quorum 1", "variant of fedavg_rounds"),
    ("protocol fedavg_rounds aggregate quorum 3", "not within 1..2"),
    ("protocol fedavg_rounds aggregate deadline", "needs a number"),
    ("protocol fedavg_rounds aggregate all 2", "takes no number"),
    ("protocol fedavg_rounds aggregate quorum 1 traces full", "needs 'traces drop'"),
])
def test_aggregate_errors(protocol: str, message: str) -> None:
    with pytest.raises(ModelError) as info:
        parse_scenario(swarm(2, "", protocol=protocol), "e.fl")
    messages = [d.message for d in info.value.diagnostics]
    assert any(message in m for m in messages), messages


# ------------------------------------------------------------------- routes and link taps
def relayed(extra: str, attacker: str = "") -> str:
    """Two satellites whose sites o1, o2 reach the ground station g only over the relays r1 and r2
    (the shortest routes go over r1: neighbours in name order)."""
    text = swarm(2, extra, links="links o1 -- r1, o1 -- r2, o2 -- r1, o2 -- r2, r1 -- g, r2 -- g")
    text = text.replace("locations g, o1, o2", "locations g, o1, o2, r1, r2")
    return text + (f"attacker {attacker}\n" if attacker else "")


def test_a_given_route_replaces_the_shortest_path(tmp_path: Path) -> None:
    """The loss on r2 -- g is on sat1's given route only: the round completes with 1/2 (every
    scheduler); over the shortest route (r1) always. A given route over a link that is down in round 1
    cannot be taken at all."""
    lossy = "loss r2 -- g 1/2"
    assert probabilities(tmp_path, relayed(lossy)) == (1, 1, 1)
    routed = relayed(lossy + "\nroute c1: o1 -> r2 -> g")
    assert probabilities(tmp_path, routed) == (Fraction(1, 2),) * 3
    down = relayed("contact r2 -- g in rounds 2\nroute c1: o1 -> r2 -> g").replace(", r2 -- g", "")
    assert probabilities(tmp_path, down) == (0, 0, 0)


def test_an_eavesdropper_on_a_link_copies_what_crosses_it() -> None:
    """eve taps r1 -- g: c1's report (shortest route, over r1) crosses it, c2's (given route over r2)
    does not; 'copied' holds the pair (client, report) after eve's own step."""
    text = relayed("route c2: o2 -> r2 -> g", "eve on r1 -- g observes copied")
    system = build_system(parse_scenario(text, "tap.fl"))
    states: list[FLState] = list(explore(system).states or ())  # type: ignore[arg-type]  # the system's states
    assert any(system.observe(s, "seen_c1") for s in states)
    assert not any(system.observe(s, "seen_c2") for s in states)
    (s0,) = system.initial_states()
    for a, t, _ in system.successors(s0):
        if a.actor != "c1":
            continue
        (copy, after, p), = system.successors(t)  # the copy is urgent: the only step
        assert (copy.rule, copy.actor, copy.location, p) == ("eavesdrop", "eve", "r1--g", 1)
        assert system.observe(t, "copied") == frozenset()
        assert system.observe(after, "copied") == frozenset({("c1", system.observe(t, "gradient_c1"))})


RELAY_TWO_ROUNDS = """\
scenario "two rounds through an insider relay"
locations g, o1, r1
links r1 -- g
contact o1 -- r1 in rounds 1..2
server srv at g
clients sat1 at o1
actor eve at r1
policies default
data d1 = (1) -> 2
dataset d1
partition sat1: {d1}
model squared_nobias rate 1/2 initial (0)
protocol fedavg_rounds traces drop
bounds rounds 2
attacker eve at r1 observes copied
property copy_is_a_step: ctl AG (last == get_grad_round -> copied == {});
property copies_each_round: ctl AG ((round = 1 & last == eval_round) -> !seen_sat1);
property second_copy: ctl EF (round = 1 & seen_sat1 & last == eavesdrop);
"""


def test_every_rounds_copy_is_an_eavesdrop_step() -> None:
    """The attacker's copies are per round: in round 2 the relayed report is copied by a step of its
    own, not filled in from the copy of round 1."""
    from checker.app.check import check_scenario
    from flmodel.scenario import parse_scenario

    report = check_scenario(parse_scenario(RELAY_TWO_ROUNDS, source="<relay>"))
    assert [str(r.verdict) for r in report.results] == ["holds"] * 3
