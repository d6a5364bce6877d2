"""Attack trees on an FL-shaped transition system, explored with the checker's explorer and with goals in
the property language: a goal reachable in several genuinely different ways gives an or-tree with more
than one child, each child valid; interleavings of independent client steps are not counted twice."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import flcheck_spec
import numpy as np

from checker.app.load import load_model
from checker.attack_trees.export import tree_to_text
from checker.attack_trees.generation import AttackFound, NoAttack, generate_attack_tree
from checker.attack_trees.traces import Independence
from checker.attack_trees.validity import check_validity, is_valid
from checker.mc.ctl import ModelChecker
from checker.mc.ctl_parse import parse_formula
from checker.mc.explore import Limits, explore
from checker.mc.ts import Action, Step
from flmodel import examples
from tests.checker.test_attack_trees import trace_class

CLIENTS = ("sat1", "sat2")
LOC = {"sat1": "loc1", "sat2": "loc2", "server": "hub"}


@dataclass(frozen=True)
class S:
    ready: frozenset[str] = frozenset()  # clients that computed their gradient (get_grad)
    sent: frozenset[str] = frozenset()  # updates delivered to the server (put)
    leaked: frozenset[str] = frozenset()  # gradients the eavesdropper has seen
    server_compromised: bool = False
    round: int = 0


class MiniFL:
    """Clients compute (get_grad) and send (put) updates; the server aggregates (eval) when all arrived.
    An eavesdropper at a client's location sees the update while it is sent (the ``put`` makes it
    visible: ``sniff``), or compromises the server and reads every update it holds (``read_server``)."""

    def initial_states(self) -> list[S]:
        return [S()]

    def successors(self, s: S) -> Iterator[Step[S]]:
        if s.round >= 1:
            return
        for c in CLIENTS:
            if c not in s.ready:
                yield Step(Action("get_grad", c, LOC[c]), replace(s, ready=s.ready | {c}))
            elif c not in s.sent:
                yield Step(Action("put", c, LOC[c]), replace(s, sent=s.sent | {c}))
            if c in s.ready and c not in s.sent and c not in s.leaked:
                yield Step(Action("sniff", "eve", LOC[c], c), replace(s, leaked=s.leaked | {c}))
        if not s.server_compromised:
            yield Step(Action("compromise", "eve", LOC["server"]), replace(s, server_compromised=True))
        elif not s.sent <= s.leaked:
            yield Step(Action("read_server", "eve", LOC["server"]), replace(s, leaked=s.leaked | s.sent))
        if s.sent == frozenset(CLIENTS):
            yield Step(Action("eval", "server", LOC["server"]), replace(s, round=s.round + 1))

    def observable_names(self) -> list[str]:
        return ["ready", "sent", "leaked", "server_compromised", "round"]

    def observe(self, s: S, name: str) -> object:
        return getattr(s, name)


def _goal(k, text: str) -> np.ndarray:
    return ModelChecker(k).sat(parse_formula(text))


def test_several_ways_to_leak_a_gradient() -> None:
    k = explore(MiniFL())
    goal = _goal(k, '"sat2" in leaked')
    assert ModelChecker(k).check('EF "sat2" in leaked').verdict == "holds"
    r = generate_attack_tree(k, goal, max_depth=5, max_attacks=8)
    assert isinstance(r, AttackFound)
    t = r.tree
    assert check_validity(t, k).valid
    assert t.pair == (frozenset(k.initial.tolist()), frozenset(np.flatnonzero(goal).tolist()))
    assert t.kind == "or" and len(t.children) > 1
    for child in t.children:
        assert is_valid(child, k)
    ways = r.paths[int(k.initial[0])]
    rules = [{k.actions[a].rule for a in p.letters} for p in ways]
    assert {"sniff"} <= rules[0] and any("read_server" in rs for rs in rules)  # two mechanisms
    # interleavings of the independent client steps are one way: with paths compared instead, more
    by_path = generate_attack_tree(k, goal, max_depth=5, max_attacks=50, distinguish="paths")
    assert isinstance(by_path, AttackFound)
    n_traces = len(generate_attack_tree(k, goal, max_depth=5, max_attacks=50).paths[0])  # type: ignore[union-attr]
    assert len(by_path.paths[0]) > n_traces
    text = tree_to_text(t, k, goal_text='"sat2" in leaked')
    assert "sniff by eve at loc2 [sat2]: leaked {} -> {sat2}" in text
    assert "get_grad by sat2 at loc2: ready {} -> {sat2}" in text


def test_minimal_attacks_and_breadth_bound() -> None:
    k = explore(MiniFL())
    goal = _goal(k, '"sat2" in leaked')
    full = generate_attack_tree(k, goal, max_depth=6, max_attacks=100)
    mini = generate_attack_tree(k, goal, max_depth=6, max_attacks=100, minimal_only=True)
    one = generate_attack_tree(k, goal, max_depth=6, max_attacks=1)
    assert isinstance(full, AttackFound) and isinstance(mini, AttackFound) and isinstance(one, AttackFound)
    sets = [frozenset(p.letters) for p in mini.paths[0]]
    assert all(not (a < b) for a in sets for b in sets)
    assert len(mini.paths[0]) < len(full.paths[0])
    assert len(one.paths[0]) == 1 and one.truncated and is_valid(one.tree, k)
    assert one.tree.kind == "or" and len(one.tree.children) == 1


def test_unreachable_goal_gives_the_invariant_in_model_terms() -> None:
    k = explore(MiniFL())
    goal = _goal(k, "round >= 2")
    r = generate_attack_tree(k, goal)
    assert isinstance(r, NoAttack) and r.conclusive and r.certificate_ok
    assert r.invariant_size == k.num_states
    assert any(f.startswith("round stays in {0, 1}") for f in r.facts) or any(
        "no state of the model satisfies the goal" in f for f in r.facts)
    assert ModelChecker(k).check("AG !(round >= 2)").verdict == "holds"


def test_equal_sub_attacks_are_shared() -> None:
    k = explore(MiniFL())
    goal = _goal(k, '"sat2" in leaked')
    r = generate_attack_tree(k, goal, max_depth=5, max_attacks=8)
    assert isinstance(r, AttackFound)
    t = r.tree
    assert t.size() < t.tree_size()  # some base attacks occur in several alternatives, stored once
    seen: dict[object, object] = {}
    for n in t.iter_nodes():
        assert seen.setdefault(n, n) is n  # no two distinct objects are equal


def test_bundled_fl_model_goal_reachable_in_several_ways() -> None:
    """The FL model of [IIIf-FL] III-B (flmodel.examples.seed_model): client c2 becomes ready either
    by computing on the empty partition right away or after the server deployed one of several data
    partitions (put_part). The or-tree has several children, each valid, pairwise not trace-equivalent."""
    k = explore(examples.seed_model())
    goal = _goal(k, '"c2" in ready')
    r = generate_attack_tree(k, goal, max_attacks=4)
    assert isinstance(r, AttackFound)
    t = r.tree
    assert check_validity(t, k).valid
    assert t.pair == (frozenset(k.initial.tolist()), frozenset(np.flatnonzero(goal).tolist()))
    assert t.kind == "or" and len(t.children) > 1
    assert all(is_valid(c, k) for c in t.children)
    ways = r.paths[int(k.initial[0])]
    rule_seqs = {tuple(k.actions[a].rule for a in p.letters) for p in ways}
    assert ("get_grad",) in rule_seqs and ("put_part", "get_grad") in rule_seqs
    oracle = Independence(k)
    words = [p.letters for p in ways]
    used = {a for w in words for a in w}
    ind = {(a, b): oracle.independent(a, b) for a in used for b in used}
    for i, w1 in enumerate(words):
        cls = trace_class(w1, ind)
        assert all(w2 not in cls for w2 in words[i + 1:])
    text = tree_to_text(t, k, goal_text='"c2" in ready')
    assert "put_part by server at loc_server" in text and "ready {} -> {c2}" in text


def test_incomplete_exploration_proves_attacks_but_not_their_absence() -> None:
    k = explore(MiniFL(), limits=Limits(max_states=6))
    assert not k.complete
    found = generate_attack_tree(k, _goal(k, '"sat1" in ready'))
    assert isinstance(found, AttackFound) and is_valid(found.tree, k)
    assert any("incomplete" in w for w in found.warnings)
    none = generate_attack_tree(k, _goal(k, "round >= 1"))
    assert isinstance(none, NoAttack) and not none.conclusive and not none.certificate_ok


def test_bundled_moniteo_scenario() -> None:
    """The bundled Moniteo scenario (spec/scenarios/moniteo.fl, [IIIf-FL] IV) through the application
    loader: "some satellite among sat1, sat3 has reported" is reached in two genuinely different ways
    (an or-tree with two valid children); completing the round is one way, since the three satellites'
    reports commute (3! interleavings, and every noise outcome, are one trace class)."""
    path = flcheck_spec.bundled_scenarios()["moniteo"]
    k = load_model(path)
    goal = _goal(k, '"sat1" in ready or "sat3" in ready')
    r = generate_attack_tree(k, goal, minimal_only=True, label_observables=["ready"])
    assert isinstance(r, AttackFound) and check_validity(r.tree, k).valid
    t = r.tree
    assert t.kind == "or" and len(t.children) == 2 and all(is_valid(c, k) for c in t.children)
    assert {(k.actions[p.letters[0]].actor) for p in r.paths[0]} == {"sat1", "sat3"}
    text = tree_to_text(t, k)
    assert "by sat1 at orbit1: ready {} -> {sat1}" in text and "by sat3 at orbit3: ready {} -> {sat3}" in text
    round_done = generate_attack_tree(k, _goal(k, "round = 1"), max_attacks=10)
    assert isinstance(round_done, AttackFound) and len(round_done.paths[0]) == 1
    assert is_valid(round_done.tree, k)
    by_path = generate_attack_tree(k, _goal(k, "round = 1"), max_attacks=10, distinguish="paths")
    assert isinstance(by_path, AttackFound) and len(by_path.paths[0]) == 10
