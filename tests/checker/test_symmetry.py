"""The symmetry reduction (:mod:`flmodel.symmetry`, :mod:`checker.app.reductions`): every ctl verdict and
probability of ``check`` on the orbit quotient equals the unreduced check's, exactly, on generated
scenarios (static and over a time-varying network) and on the bundled swarms; the rules are equivariant
under the detected group, state by state; orbit counts match the closed form; a property naming a client
fixes it; a wrong group action, or a group the routes do not respect, is caught by the same comparison."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.app.check import check_scenario
from checker.app.load import resolve_scenario_path
from checker.app.reductions import Reductions, names_in, reduce_system, symmetry_fixed
from checker.mc.explore import Limits, explore
from flmodel.scenario import load_scenario, parse_scenario
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import build_system
from flmodel.symmetry import ClientSymmetry, SymmetricSystem, detect_symmetry, permute_state
from flmodel.system import FLState
from tests.strategies import star_scenario_text

LIMITS = Limits(max_states=200_000, max_seconds=600)
ONLY_SYMMETRY = Reductions(dead_values=False, cone=False, partial_order=False, symmetry=True, counter=False)


def _results(report: Any) -> list[tuple[Any, ...]]:
    """What a check decides per property: verdict, figure and its exact text (not the witness path or
    the details that describe the explored structure)."""
    return [(r.name, str(r.verdict), r.value, r.value_text) for r in report.results]


def _compare(scenario: Scenario, choice: Reductions) -> tuple[int, int, list[str]]:
    plain = check_scenario(scenario, limits=LIMITS, reductions=Reductions.none())
    reduced = check_scenario(scenario, limits=LIMITS, reductions=choice)
    assert plain.kripke.complete and reduced.kripke.complete
    assert _results(reduced) == _results(plain)
    for r in plain.results:  # a test that decides nothing proves nothing (a vacuous verdict is decided)
        assert str(r.verdict) in ("holds", "violated", "holds vacuously")
    return int(plain.kripke.num_states), int(reduced.kripke.num_states), reduced.reductions.names


def _swarm(n: int, *, kinds: tuple[str, ...] = ("ctl", "probability"), extra: str = "") -> Scenario:
    path = resolve_scenario_path("moniteo_swarm8")
    s = load_scenario(path, defines={"N": n})
    if extra:
        s = parse_scenario(s.to_text() + extra, source=str(path))
    return dataclasses.replace(s, properties=tuple(p for p in s.properties if p.kind in kinds))


# ------------------------------------------------------------------------------ generated scenarios
def _scenario_text(values: list[int], noises: list[str], locs: list[int], rounds: int, protocol: str,
                   partitioned: bool, properties: list[str]) -> str:
    """A star scenario (:func:`tests.strategies.star_scenario_text`): satellite i at site ``locs[i-1]``
    with its own noise mechanism ``noises[i-1]``; traces dropped by fedavg rounds, kept by the published
    rules (3 events)."""
    fedavg = protocol == "fedavg_rounds"
    return star_scenario_text(values, sites=locs, partitioned=partitioned, noise=noises, protocol=protocol,
                              traces="drop" if fedavg else "full", rounds=rounds,
                              events=None if fedavg else 3, properties=properties)


NOISES = ["rr grid {0, 1} r 1/2 clip", "rr grid {0, 1} r 2/3 clip", "rr grid {0, 1, 2} r 1/2 clip"]


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[str, int]:
    protocol = draw(st.sampled_from(["fedavg_rounds", "fedavg_rounds", "published"]))
    n = draw(st.integers(2, 4 if protocol == "fedavg_rounds" else 2))
    values = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    noise = draw(st.sampled_from(NOISES[:2]))
    noises = [noise if draw(st.booleans()) or i == 0 else draw(st.sampled_from(NOISES[:2])) for i in range(n)]
    shared = draw(st.booleans())
    locs = [1] * n if shared else list(range(1, n + 1))
    rounds = draw(st.integers(1, 2 if protocol == "fedavg_rounds" and n <= 3 else 1))
    partitioned = protocol == "fedavg_rounds" or draw(st.booleans())
    props = [f"ctl AG (round < {rounds} -> EF round = {rounds})",
             f"probability min >= 1 reach round = {rounds}",
             "probability max <= 1/3 reach curmodpar == 1/2",
             "probability uniform >= 1/5 reach curmodpar == 1/4",
             "ctl EF (curmodpar == 1/2 & round = 1)",
             "ctl AG (enabled({}) -> ready == clients)".format(
                 "eval_round" if protocol == "fedavg_rounds" else "eval_server")]
    named = draw(st.sets(st.integers(1, n), max_size=2))
    for i in sorted(named):
        props.append(draw(st.sampled_from([
            f"probability max >= 1/2 reach ready_sat{i} & gradient_sat{i} == 1",
            f"ctl AG (ready_sat{i} -> gradient_sat{i} != 0)",
            f"probability min <= 1/4 reach gradient_sat{i} == 0 & round = 0",
        ])))
    return _scenario_text(values, noises, locs, rounds, protocol, partitioned, props), len(named)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_generated_scenarios_agree(case: tuple[str, int]) -> None:
    text, _ = case
    scenario = parse_scenario(text, source="<generated>")
    before, after, applied = _compare(scenario, ONLY_SYMMETRY)
    assert after <= before
    if "symmetry" in applied:
        assert after < before
    both_before, both_after, _ = _compare(scenario, Reductions())
    assert both_after <= after and both_before == before


@pytest.mark.parametrize("n,rounds", [(2, 1), (3, 1), (3, 2), (4, 1)])
def test_fully_symmetric_orbit_count(n: int, rounds: int) -> None:
    """``n`` identical clients, binary randomized response, one data class: the quotient has exactly
    one state per multiset of the clients' local states (closed form: a count of multisets), and the
    verdicts agree with the unreduced check."""
    text = _scenario_text([1] * n, [NOISES[0]] * n, list(range(1, n + 1)), rounds, "fedavg_rounds", True,
                          [f"probability min >= 1 reach round = {rounds}",
                           "probability max <= 1/3 reach curmodpar == 1/2"])
    scenario = parse_scenario(text, source="<generated>")
    before, after, applied = _compare(scenario, ONLY_SYMMETRY)
    assert applied == ["symmetry"] and after < before
    if rounds == 1:
        # per client "unreported, reported 0, reported 1" until the aggregation (3^n states; their
        # multisets on the quotient), then the aggregated states (2^n; multisets of 2 kinds)
        assert before == 3 ** n + 2 ** n
        assert after == math.comb(n + 2, 2) + math.comb(n + 1, 1)


def test_swarm_counts_and_verdicts() -> None:
    """moniteo_swarm8 at N = 4 (sat1, sat3, sat4 hold equal data): ``(V+1)^N + V^N = 337`` states
    unreduced, ``C(3+V, 3)(V+1) + C(2+V, 3)V = 110`` on the quotient (multisets of the three symmetric
    clients' local states times sat2's)."""
    s = _swarm(4)
    before, after, applied = _compare(s, ONLY_SYMMETRY)
    assert (before, after, applied) == (337, 110, ["symmetry"])
    _, both, _ = _compare(s, Reductions())
    assert both < after


def test_naming_a_client_fixes_it() -> None:
    s = _swarm(4, extra="property sees_sat3: probability max >= 1/4 reach ready_sat3 & gradient_sat3 == 2;\n")
    fixed, refusal = symmetry_fixed(s, build_system(s))
    assert refusal is None and fixed == {"sat3"}
    _, applied = reduce_system(build_system(s), s, ONLY_SYMMETRY)
    assert applied.details["symmetry"]["classes"] == [["sat1", "sat4"]]
    before, after, _ = _compare(s, ONLY_SYMMETRY)
    assert 110 < after < before
    # the property is not symmetric: with sat3 moved onto sat1 its probability would be sat1's
    values = {r.name: r.value for r in check_scenario(s, limits=LIMITS, reductions=Reductions.none()).results}
    assert values["sees_sat3"] is not None


def test_names_in_word_boundaries() -> None:
    texts = ["gradient_sat1 == x", "ready:sat2", '"sat3" in ready']
    assert names_in(texts, ["sat1", "sat2", "sat3", "sat"]) == {"sat1", "sat2", "sat3"}
    assert names_in(["gradient_sat10"], ["sat1"]) == set()


def test_kinds_that_read_the_structure_decide_the_symmetry() -> None:
    """The swarm's privacy properties explore on their own (without the quotient): the symmetry
    applies; an attack-tree property reads the explored structure's paths: it does not."""
    path = resolve_scenario_path("moniteo_swarm8")
    s = load_scenario(path, defines={"N": 4})
    _, applied = reduce_system(build_system(s), s)
    assert applied.details["symmetry"]["applied"] is True
    text = path.read_text(encoding="utf-8") + "property tree: attack_tree exists round = 1;\n"
    tree = parse_scenario(text, str(path), defines={"N": 4})
    _, applied = reduce_system(build_system(tree), tree)
    info = applied.details["symmetry"]
    assert info["applied"] is False and info["reason"].startswith("not applied: property tree")
    _, off = reduce_system(build_system(s), s, Reductions.none())
    assert off.details["symmetry"] == {"applied": False, "reason": "switched off"}


def test_asymmetric_data_noise_or_policy_split_the_classes() -> None:
    text = _scenario_text([1, 1, 0, 1], [NOISES[0], NOISES[0], NOISES[0], NOISES[1]], [1, 2, 3, 4], 1,
                          "fedavg_rounds", True, ["probability min >= 1 reach round = 1"])
    sym, _ = detect_symmetry(build_system(parse_scenario(text)))
    assert sym is not None and sym.classes == (("sat1", "sat2"),)
    own = "".join(f"policy at o{i}: sat{i} may get_grad\n" for i in range(1, 5))
    explicit = text.replace("policies default\n", own + "policy at ground: srv may put_part, eval_server\n")
    sym1, _ = detect_symmetry(build_system(parse_scenario(explicit)))
    assert sym1 is not None and sym1.classes == (("sat1", "sat2"),)
    lopsided = text.replace("policies default\n", own + "policy at ground: srv may put_part, eval_server\n"
                            "policy at o2: srv may get_grad\n")
    sym2, reason = detect_symmetry(build_system(parse_scenario(lopsided)))
    assert sym2 is None and "interchangeable" in reason
    linked = text.replace("links ground -- o1,", "links o1 -- o3, ground -- o1,")
    sym3, _ = detect_symmetry(build_system(parse_scenario(linked)))
    assert sym3 is None


# ------------------------------------------------------------------------------ equivariance
def _group(sym: ClientSymmetry) -> list[dict[str, str]]:
    perms: list[dict[str, str]] = [{}]
    for cls in sym.classes:
        perms = [{**p, **dict(zip(cls, img, strict=True))}
                 for p in perms for img in itertools.permutations(cls)]
    return perms


@pytest.mark.parametrize("name,defines", [("moniteo_swarm8", {"N": 4}), ("seed_model", None)])
def test_rules_are_equivariant(name: str, defines: dict[str, int] | None) -> None:
    """``succ(π·s) = π·succ(s)`` (actions up to their actor, same probabilities) for every explored
    state and every permutation of the detected group, and every state's representative is in its
    orbit."""
    base = build_system(load_scenario(resolve_scenario_path(name), defines=defines))
    sym, reason = detect_symmetry(base)
    assert sym is not None, reason  # both have interchangeable clients
    k = explore(base, limits=Limits(max_states=1500))
    states: list[FLState] = list(k.states or ())  # type: ignore[arg-type]
    group = _group(sym)
    quotient = SymmetricSystem(base, sym)
    rng = random.Random(7)
    for s in rng.sample(states, min(len(states), 120)):
        orbit = {permute_state(s, p, sym) for p in group}
        assert quotient.canonical(s) in orbit
        for p in rng.sample(group, min(len(group), 3)):
            left = Counter((a.rule, permute_state(t, p, sym), q) for a, t, q in base.successors(s))
            right = Counter((a.rule, t, q) for a, t, q in base.successors(permute_state(s, p, sym)))
            assert left == right


def test_a_wrong_group_action_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Renaming only the ``ready`` set (not the gradients) is not a symmetry: the comparison with the
    unreduced check fails on a property over a fixed client's gradient."""
    import flmodel.symmetry as symmetry

    def ready_only(state: FLState, perm: dict[str, str], sym: ClientSymmetry) -> FLState:
        g = state.infra.igra
        g2 = g._replace(ready=frozenset(perm.get(c, c) for c in g.ready))
        return state._replace(infra=state.infra._replace(igra=g2))

    s = _swarm(3, extra="property mean_half: probability max >= 1/2 reach curmodpar == 2/3;\n")
    plain = check_scenario(s, limits=LIMITS, reductions=Reductions.none())
    good = check_scenario(s, limits=LIMITS, reductions=ONLY_SYMMETRY)
    assert good.reductions.names == ["symmetry"] and _results(good) == _results(plain)
    monkeypatch.setattr(symmetry, "permute_state", ready_only)
    wrong = check_scenario(s, limits=LIMITS, reductions=ONLY_SYMMETRY)
    assert _results(wrong) != _results(plain)


def test_cli_switch_and_json(tmp_path: Any) -> None:
    """``check --json`` reports the symmetry under ``reductions``; ``--no-symmetry`` switches it off
    with the same verdicts."""
    import json
    import subprocess
    import sys

    path = tmp_path / "swarm.fl"
    path.write_text(_swarm(4).to_text())
    runs = {}
    for flags in ([], ["--no-symmetry"]):
        proc = subprocess.run([sys.executable, "-m", "checker", "check", str(path), "--json", *flags],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        runs[bool(flags)] = json.loads(proc.stdout)
    on, off = runs[False]["reductions"], runs[True]["reductions"]
    assert on["applied"] == ["dead_values", "cone", "symmetry", "counter"]
    assert on["symmetry"]["classes"] == [["sat1", "sat3", "sat4"]]
    assert off["applied"] == ["dead_values", "cone"] and off["symmetry"]["reason"] == "switched off"
    assert on["states"] < off["states"]
    verdicts = [[(p["name"], p["verdict"]) for p in r["properties"]] for r in runs.values()]
    assert verdicts[0] == verdicts[1]


def test_a_substring_of_a_name_fixes_the_clients_it_tells_apart() -> None:
    s = _swarm(4, extra='property part_of_name: ctl EF "3" in last;\n')
    fixed, _ = symmetry_fixed(s, build_system(s))
    assert fixed == {"sat3"}


def test_ignoring_a_named_client_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Moving a client a property names (the fixing switched off) changes that property's
    probability: the comparison with the unreduced check fails."""
    import checker.app.reductions as reductions

    s = _swarm(4, extra="property sees_sat3: probability max >= 1/4 reach ready_sat3 & gradient_sat3 == 2;\n")
    plain = check_scenario(s, limits=LIMITS, only=["sees_sat3"], reductions=Reductions.none())
    monkeypatch.setattr(reductions, "symmetry_fixed", lambda _s, _sys: (set(), None))
    wrong = check_scenario(s, limits=LIMITS, only=["sees_sat3"], reductions=ONLY_SYMMETRY)
    assert wrong.reductions.details["symmetry"]["classes"] == [["sat1", "sat3", "sat4"]]
    assert _results(wrong) != _results(plain)


# ------------------------------------------------------------------------------ network scenarios
#: Per client, what its links are like: static, a contact window, a loss in flight, a link the
#: environment may cut (each on every link at the client's site).
LINK_PROFILES = ["", "contact {} in steps 1..2", "contact {} in rounds 1", "loss {} 1/2",
                 "loss {} 1/3 retries 1", "failure {}"]


def _network_text(values: list[int], profiles: list[int], *, relay: bool, aggregate: str, rounds: int,
                  attacker: str | None, properties: list[str], noise: str = NOISES[0],
                  hot: bool = False) -> str:
    """A star scenario (:func:`tests.strategies.star_scenario_text`) over a network: client i's site
    ``o{i}`` is linked to the ground station directly or, with ``relay``, to both relays ``r1`` and
    ``r2`` (linked to the ground; reports take the shortest route, ties by name); every link at the
    site has the profile :data:`LINK_PROFILES` ``[profiles[i-1]]``; ``aggregate`` is ``all``,
    ``quorum Q`` or ``deadline D``; with ``hot`` the last datum is secret and the neighbour ``hot``
    replaces it."""
    n = len(values)
    text = star_scenario_text(values, noise=noise, rounds=rounds, attacker=attacker, properties=properties,
                              hot=hot)
    sites = [[f"o{i} -- r1", f"o{i} -- r2"] if relay else [f"ground -- o{i}"] for i in range(1, n + 1)]
    static = ["r1 -- ground", "r2 -- ground"] if relay else []
    network: list[str] = []
    for links, k in zip(sites, profiles, strict=True):
        profile = LINK_PROFILES[k]
        if profile.startswith("contact"):
            network += [profile.format(lk) for lk in links]
        else:
            static += links
            network += [profile.format(lk) for lk in links] if profile else []
    locations = ", ".join(["ground", *(f"o{i}" for i in range(1, n + 1)), *(["r1", "r2"] if relay else [])])
    lines = text.splitlines()
    lines[1] = f"locations {locations}"
    lines[2] = "\n".join(([f"links {', '.join(static)}"] if static else []) + network)
    if aggregate != "all":
        lines = [f"protocol fedavg_rounds aggregate {aggregate} traces drop" if ln.startswith("protocol")
                 else ln for ln in lines]
    return "\n".join(lines) + "\n"


@st.composite
def network_scenarios(draw: st.DrawFn) -> str:
    n = draw(st.integers(2, 3))
    value = draw(st.integers(0, 1))
    values = [value if draw(st.integers(0, 3)) or i == 0 else 1 - value for i in range(n)]
    common = draw(st.integers(0, len(LINK_PROFILES) - 1))
    profiles = [common if draw(st.integers(0, 3)) else draw(st.integers(0, len(LINK_PROFILES) - 1))
                for _ in range(n)]
    relay = draw(st.booleans())
    if relay and sum(1 for k in profiles if LINK_PROFILES[k].startswith("failure")) > 1:
        profiles = [0 if LINK_PROFILES[k].startswith("failure") and i else k for i, k in enumerate(profiles)]
    aggregate = draw(st.sampled_from(["all", "all", f"quorum {draw(st.integers(1, n))}",
                                      f"deadline {draw(st.integers(1, 3))}"]))
    if aggregate == "all" and not any(profiles):
        aggregate = f"quorum {n}"  # the all-clients rule, over the network
    rounds = draw(st.integers(1, 2 if n == 2 and not relay else 1))
    tapped = draw(st.sampled_from([0, *range(1, n + 1)]))
    spy = "r1" if relay else "ground"
    tap = "r1 -- ground" if relay else "ground -- o1"
    attacker = draw(st.sampled_from([None, f"eve at {spy} observes curmodpar",
                                     f"eve on {tap} observes copied"]))
    if tapped and draw(st.booleans()):
        attacker = f"eve at {spy} observes gradient_sat{tapped}"
    props = [f"ctl AG ((round < {rounds} & lost == {{}}) -> EF round = {rounds})",
             f"probability min >= 1/2 reach round = {rounds}",
             f"probability max >= 1 reach round = {rounds}",
             f"probability uniform >= 1/3 reach round = {rounds}",
             "probability max <= 1/3 reach curmodpar == 1/2",
             "ctl EF (lost == {} & round = 1)",
             "probability uniform <= 1/2 reach !(lost == {})"]
    for i in sorted(draw(st.sets(st.integers(1, n), max_size=1))) if n == 3 or draw(st.booleans()) else ():
        props.append(draw(st.sampled_from([
            f"probability max >= 1/2 reach lost_sat{i}",
            f"ctl AG (ready_sat{i} -> !lost_sat{i})",
            f"probability uniform >= 1/4 reach ready_sat{i} & gradient_sat{i} == 1"])))
    if attacker is not None and "gradient_" in attacker:
        props.append(f"probability uniform >= 1/2 reach seen_sat{tapped}")
    if attacker is not None:
        props.append("probability max >= 1/2 reach !(copied == {})")
    return _network_text(values, profiles, relay=relay, aggregate=aggregate, rounds=rounds,
                         attacker=attacker, properties=props)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(network_scenarios())
def test_generated_network_scenarios_agree(text: str) -> None:
    """Contact windows, losses, links that fail, relays with ties, partial rounds and a tapping
    attacker: the quotient decides every property as the unreduced check does."""
    scenario = parse_scenario(text, source="<generated>")
    before, after, applied = _compare(scenario, ONLY_SYMMETRY)
    assert after < before if "symmetry" in applied else after == before


def _family_quotient(n: int) -> int:
    """Orbits of one round of walker_family.fl: satellites 1..N-1 with equal anomalies form a class
    (each unreported or one of V = 3 reports: multisets of 4 kinds), satellite N is alone (unreported,
    lost or one of 3 reports: 5 kinds); after the aggregation every satellite holds one of 3 reports."""
    anomaly = [1, 2, 1, 0, 2, 1, 0]
    sizes = Counter(anomaly[(i - 1) % 7] for i in range(1, n))
    before = after = 1
    for k in sizes.values():
        before *= math.comb(k + 3, 3)
        after *= math.comb(k + 2, 2)
    return before * 5 + after * 3


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_walker_family_quotient_is_the_closed_form(n: int) -> None:
    path = resolve_scenario_path("walker_family")
    s = load_scenario(path, defines={"N": n})
    s = dataclasses.replace(s, properties=tuple(p for p in s.properties if p.kind in ("ctl", "probability")))
    before, after, applied = _compare(s, ONLY_SYMMETRY)
    assert before == 4 ** (n - 1) * 5 + 3 ** n
    assert after == _family_quotient(n) and (after < before) == ("symmetry" in applied) == (n >= 4)


@pytest.mark.slow
@pytest.mark.parametrize("n", [6, 7, 8])
def test_walker_family_quotient_larger(n: int) -> None:
    """The quotient's size up to N = 8, and its verdicts and figures equal the unreduced ones at N = 6
    (the unreduced structure is large enough for a float solve, the quotient is solved exactly: the
    figures' texts differ, 0.99 and 99/100)."""
    s = load_scenario(resolve_scenario_path("walker_family"), defines={"N": n})
    s = dataclasses.replace(s, properties=tuple(p for p in s.properties if p.kind in ("ctl", "probability")))
    if n == 6:
        plain = check_scenario(s, limits=LIMITS, reductions=Reductions.none())
        checked = check_scenario(s, limits=LIMITS, reductions=ONLY_SYMMETRY)
        assert plain.kripke.num_states == 4 ** (n - 1) * 5 + 3 ** n
        assert [r[:3] for r in _results(plain)] == [r[:3] for r in _results(checked)]
    quotient, applied = reduce_system(build_system(s), s, ONLY_SYMMETRY)
    assert applied.names == ["symmetry"]
    assert explore(quotient, limits=LIMITS, keep_states=False).num_states == _family_quotient(n)


@pytest.mark.parametrize("name", ["moniteo_link_loss", "moniteo_deadline", "walker_family"])
def test_bundled_network_scenarios_agree(name: str) -> None:
    """The bundled network scenarios' ctl and probability properties, reduced and unreduced (only
    walker_family has interchangeable satellites; in the others every satellite's data differ)."""
    s = load_scenario(resolve_scenario_path(name))
    s = dataclasses.replace(s, properties=tuple(p for p in s.properties if p.kind in ("ctl", "probability")))
    _, applied = reduce_system(build_system(s), s, ONLY_SYMMETRY)
    info = applied.details["symmetry"]
    assert info["applied"] == (name == "walker_family"), info
    if name != "walker_family":
        assert info["reason"] == "not applied: no two clients are interchangeable"
    plain = check_scenario(s, limits=LIMITS, reductions=Reductions.none())
    reduced = check_scenario(s, limits=LIMITS, reductions=ONLY_SYMMETRY)
    assert _results(reduced) == _results(plain)


@pytest.mark.slow
def test_walker12_relay_agrees() -> None:
    """The Walker shell's contact graph has no automorphism that swaps two satellites with the same
    data, but its links never fail, so what matters is what each report's route decides: satellites
    with the same data whose reports all arrive and none crosses the insider are interchangeable
    (three classes; the insider sat0 and the noisy sat8 stay fixed). The same verdicts on 1,437 states
    instead of 18,429."""
    s = load_scenario(resolve_scenario_path("walker12_relay"))
    s = dataclasses.replace(s, properties=tuple(p for p in s.properties if p.kind in ("ctl", "probability")))
    sym, reason = detect_symmetry(build_system(s))
    assert sym is not None, reason
    assert sym.classes == (("sat1", "sat10", "sat4", "sat7"), ("sat11", "sat2", "sat5"),
                           ("sat3", "sat6", "sat9"))
    before, after, applied = _compare(s, ONLY_SYMMETRY)
    assert (before, after, applied) == (18429, 1437, ["symmetry"])


def test_walker12_relay_rules_are_equivariant() -> None:
    """``succ(π·s) = π·succ(s)`` on the Walker shell, whose group moves satellites between sites that
    no graph automorphism maps onto each other (the links stay as they are)."""
    base = build_system(load_scenario(resolve_scenario_path("walker12_relay")))
    sym, reason = detect_symmetry(base)
    assert sym is not None, reason
    states: list[FLState] = list(explore(base, limits=Limits(max_states=3000)).states or ())  # type: ignore[arg-type]
    group = _group(sym)
    quotient = SymmetricSystem(base, sym)
    rng = random.Random(5)
    for s in rng.sample(states, 60):
        assert quotient.canonical(s) in {permute_state(s, p, sym) for p in group}
        for p in rng.sample(group, 4):
            left = Counter((a.rule, permute_state(t, p, sym), q) for a, t, q in base.successors(s))
            right = Counter((a.rule, t, q) for a, t, q in base.successors(permute_state(s, p, sym)))
            assert left == right


@st.composite
def relay_scenarios(draw: st.DrawFn) -> str:
    """Clients at the sites of a random tree rooted at the ground station (site ``o{i}`` hangs off the
    ground or an earlier site), sometimes with a cross link between two sites (shortest routes, ties by
    name), each site's uplink with a random profile of :data:`LINK_PROFILES` but no failure (the links
    never change, so the symmetry rests on what the routes decide, not on a graph automorphism), and an
    optional eavesdropper at a site."""
    n = draw(st.integers(2, 4))
    value = draw(st.integers(0, 1))
    values = [value if draw(st.integers(0, 3)) or i == 0 else 1 - value for i in range(n)]
    parent = ["ground" if i == 1 or draw(st.booleans()) else f"o{draw(st.integers(1, i - 1))}"
              for i in range(1, n + 1)]
    profiles = [draw(st.sampled_from([0, 0, 1, 2, 3, 4])) for _ in range(n)]
    static: list[str] = []
    network: list[str] = []
    for i, (up, k) in enumerate(zip(parent, profiles, strict=True), start=1):
        link = f"o{i} -- {up}"
        profile = LINK_PROFILES[k]
        if profile.startswith("contact"):
            network.append(profile.format(link))
        else:
            static.append(link)
            network += [profile.format(link)] if profile else []
    if n >= 3 and draw(st.booleans()):
        a, b = sorted(draw(st.sets(st.integers(1, n), min_size=2, max_size=2)))
        if parent[b - 1] != f"o{a}":
            static.append(f"o{a} -- o{b}")
    if not any(LINK_PROFILES[k] for k in profiles):
        network.append(f"loss o1 -- {parent[0]} 1/2")
    spy = draw(st.sampled_from([None, *range(1, n + 1)]))
    seen = draw(st.sampled_from(["copied", "curmodpar"]))
    attacker = None if spy is None else f"eve at o{spy} observes {seen}"
    props = ["ctl AG ((round < 1 & lost == {}) -> EF round = 1)",
             "probability min >= 1/2 reach round = 1",
             "probability uniform >= 1/3 reach round = 1",
             "probability uniform <= 1/2 reach !(lost == {})",
             "ctl EF (lost == {} & round = 1)"]
    if attacker is not None:
        props.append("probability max >= 1/2 reach !(copied == {})")
    text = star_scenario_text(values, noise=NOISES[0], rounds=1, attacker=attacker, properties=props)
    lines = text.splitlines()
    lines[1] = "locations ground, " + ", ".join(f"o{i}" for i in range(1, n + 1))
    lines[2] = "\n".join(([f"links {', '.join(static)}"] if static else []) + network)
    lines = [f"protocol fedavg_rounds aggregate quorum {n} traces drop" if ln.startswith("protocol")
             else ln for ln in lines]
    return "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(relay_scenarios())
def test_generated_relay_trees_agree(text: str) -> None:
    """Trees of relaying sites with windows and losses: the quotient by the route-respecting group
    decides every property as the unreduced check does."""
    scenario = parse_scenario(text, source="<generated>")
    before, after, applied = _compare(scenario, ONLY_SYMMETRY)
    assert after < before if "symmetry" in applied else after == before


def _chain_text() -> str:
    """Three clients with the same datum: o1 linked to the ground over a lossy link, o2 relaying
    through o1, o3 linked to the ground without loss."""
    text = star_scenario_text([1, 1, 1], quorum=3, properties=[
        "probability uniform >= 1/2 reach round = 1", "probability max >= 1/2 reach !(lost == {})"])
    lines = text.splitlines()
    lines[2] = "links o1 -- ground, o2 -- o1, o3 -- ground\nloss o1 -- ground 1/2"
    return "\n".join(lines) + "\n"


def test_routes_decide_the_symmetry_without_an_automorphism(monkeypatch: pytest.MonkeyPatch) -> None:
    """sat1 and sat2 report over the lossy link o1 -- ground (sat2 relayed by o1), sat3 over a lossless
    link: sat1 and sat2 are interchangeable (no automorphism of the links maps their sites onto each
    other), sat3 is not. A detection that ignores the routes merges sat3 with them and gets the
    probabilities wrong."""
    import flmodel.symmetry as symmetry

    s = parse_scenario(_chain_text(), "<chain>")
    sym, reason = detect_symmetry(build_system(s))
    assert sym is not None and sym.classes == (("sat1", "sat2"),), reason
    plain = _results(check_scenario(s, limits=LIMITS, reductions=Reductions.none()))
    assert _results(check_scenario(s, limits=LIMITS, reductions=ONLY_SYMMETRY)) == plain
    real = symmetry._network_valid
    monkeypatch.setattr(symmetry, "_network_valid", lambda net, perm, lam, routes: real(net, perm, lam, {}))
    wrong = check_scenario(s, limits=LIMITS, reductions=ONLY_SYMMETRY)
    assert wrong.reductions.details["symmetry"]["classes"] == [["sat1", "sat2", "sat3"]]
    assert _results(wrong) != plain


LOSSY = ["probability uniform >= 1/3 reach round = 1", "probability max >= 1/2 reach round = 1",
         "probability uniform <= 1/2 reach !(lost == {})", "ctl EF (lost == {} & round = 1)"]


@pytest.mark.parametrize("text", [
    _network_text([1, 1, 1], [3, 3, 3], relay=False, aggregate="quorum 2", rounds=1, attacker=None,
                  properties=LOSSY),
    _network_text([1, 1], [5, 5], relay=True, aggregate="all", rounds=1,
                  attacker="eve at r1 observes curmodpar", properties=LOSSY),
    _network_text([0, 0, 1], [1, 1, 4], relay=True, aggregate="deadline 2", rounds=1,
                  attacker="eve at r1 observes gradient_sat3", properties=LOSSY),
], ids=["loss-quorum", "relay-failure", "window-deadline-tap"])
def test_network_rules_are_equivariant(text: str) -> None:
    """``succ(π·s) = π·succ(s)`` over networks, for every permutation of the group and sampled
    states, and every representative is in its state's orbit."""
    base = build_system(parse_scenario(text, "<network>"))
    sym, reason = detect_symmetry(base)
    assert sym is not None, reason
    states: list[FLState] = list(explore(base, limits=LIMITS).states or ())  # type: ignore[arg-type]
    group = _group(sym)
    rng = random.Random(11)
    for s in rng.sample(states, min(len(states), 80)):
        assert SymmetricSystem(base, sym).canonical(s) in {permute_state(s, p, sym) for p in group}
        for p in group:
            left = Counter((a.rule, permute_state(t, p, sym), q) for a, t, q in base.successors(s))
            right = Counter((a.rule, t, q) for a, t, q in base.successors(permute_state(s, p, sym)))
            assert left == right


@pytest.mark.parametrize("text", [
    _network_text([1, 1, 1], [3, 3, 3], relay=False, aggregate="quorum 2", rounds=1, attacker=None,
                  properties=LOSSY),
    _network_text([1, 1], [5, 5], relay=True, aggregate="all", rounds=1,
                  attacker="eve at r1 observes curmodpar", properties=LOSSY),
], ids=["lost-not-renamed", "cut-links-not-renamed"])
def test_a_wrong_network_action_is_caught(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A group action that leaves the network status (lost reports, cut links) as it is: the quotient's
    figures differ from the unreduced ones."""
    import flmodel.symmetry as symmetry

    s = parse_scenario(text, "<network>")
    plain = _results(check_scenario(s, limits=LIMITS, reductions=Reductions.none()))
    assert _results(check_scenario(s, limits=LIMITS, reductions=ONLY_SYMMETRY)) == plain
    monkeypatch.setattr(symmetry, "_map_status", lambda gra, perm, sym: gra)
    wrong = check_scenario(s, limits=LIMITS, reductions=ONLY_SYMMETRY)
    assert wrong.reductions.names == ["symmetry"] and _results(wrong) != plain


TIES = """scenario "ties"
locations g, m, b1, y2, s
links s -- b1, s -- m, s -- y2, b1 -- g, m -- g, y2 -- g
failure b1 -- g
failure y2 -- g
loss b1 -- g 1/2
loss y2 -- g 1/2
server srv at g
clients c1 at b1, c2 at y2, c3 at s
policies default
data d1 = (1) -> 1
data d2 = (1) -> 1
data d3 = (1) -> 0
dataset d1, d2, d3
partition c1: {d1}, c2: {d2}, c3: {d3}
model squared_nobias rate 1/2 initial (0)
protocol fedavg_rounds traces drop
bounds rounds 1
property arrives: probability uniform >= 1/2 reach round = 1;
"""


def test_routes_that_break_the_symmetry_refuse_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """c1 and c2 look alike (same data, sites with mirrored lossy links that may fail), but c3's report
    takes the first shortest route by name: via b1 (lossy) when y2's link is cut, via m (lossless) when
    b1's is. Swapping c1 and c2 changes what c3's route decides, so the detection refuses; skipping the
    route comparison gives a wrong probability (97/240 unreduced)."""
    import flmodel.symmetry as symmetry

    s = parse_scenario(TIES, "<ties>")
    sym, reason = detect_symmetry(build_system(s))
    assert sym is None and reason == "no two clients are interchangeable"
    plain = _results(check_scenario(s, limits=LIMITS, reductions=Reductions.none()))
    assert plain[0][3] == "97/240 ≈ 0.404167"
    real = symmetry._network_valid
    monkeypatch.setattr(symmetry, "_network_valid", lambda net, perm, lam, routes: real(net, perm, lam, {}))
    wrong = check_scenario(s, limits=LIMITS, reductions=ONLY_SYMMETRY)
    assert wrong.reductions.details["symmetry"]["classes"] == [["c1", "c2"]]
    assert _results(wrong) != plain


def test_the_attacker_and_its_site_stay_fixed() -> None:
    """An insider client and a client at the eavesdropper's site are fixed even when nothing else names
    them."""
    text = _network_text([1, 1, 1, 1], [3, 3, 3, 3], relay=False, aggregate="quorum 2", rounds=1,
                         attacker="sat1 observes curmodpar", properties=LOSSY)
    s = parse_scenario(text, "<insider>")
    fixed, _ = symmetry_fixed(s, build_system(s))
    assert fixed == {"sat1"}
    at_site = parse_scenario(text.replace("attacker sat1", "attacker eve at o2"), "<eve>")
    fixed, _ = symmetry_fixed(at_site, build_system(at_site))
    assert fixed == {"sat2"}
    _, applied = reduce_system(build_system(at_site), at_site, ONLY_SYMMETRY)
    assert applied.details["symmetry"]["classes"] == [["sat1", "sat3", "sat4"]]
