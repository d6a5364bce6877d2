"""The seam FLSystem: protocol conformance, observables, bounds, projection onto →FL, the trace-drop
reduction (compared against the literal trace sets), with_dataset, examples."""

from __future__ import annotations

from collections import deque
from fractions import Fraction

import pytest

from checker.mc.ts import Step, TransitionSystem, as_action, check_distributions
from flmodel.data import neighbours, point
from flmodel.errors import ModelError
from flmodel.examples import hinge_model, moniteo_like, moniteo_universe, seed_model
from flmodel.frozen import FrozenMap
from flmodel.infrastructure import Infrastructure
from flmodel.noise import geometric
from flmodel.rules import ELIDED_TRACE, fl_step
from flmodel.system import Bounds, FLState, FLSystem


def explore(
    system: FLSystem, limit: int = 200_000
) -> tuple[dict[FLState, int], list[tuple[FLState, object, FLState, Fraction]]]:
    """Plain BFS (reference explorer for these tests)."""
    init = list(system.initial_states())
    seen = {s: i for i, s in enumerate(init)}
    queue = deque(init)
    edges = []
    while queue:
        s = queue.popleft()
        for a, t, p in system.successors(s):
            edges.append((s, a, t, p))
            if t not in seen:
                seen[t] = len(seen)
                queue.append(t)
                assert len(seen) <= limit
    return seen, edges


def test_protocol_conformance_and_distributions() -> None:
    for system in (
        seed_model(),
        moniteo_like(2, 1, "rr"),
        moniteo_like(2, 1, geometric(Fraction(1, 2), 0, 3)),
    ):
        assert isinstance(system, TransitionSystem)
        seen, _ = explore(system)
        for s in seen:
            steps = [Step(as_action(a), t, p) for a, t, p in system.successors(s)]
            check_distributions(str(s.round), steps)  # raises on a malformed distribution
            for st in steps:
                assert st.action.rule in system.rule_names


def test_every_explored_edge_is_a_published_step() -> None:
    """Projection: each explored edge is an →FL step of the published state (literal trace sets)."""
    system = seed_model(max_events=3)
    seen, edges = explore(system)
    for s, a, t, _ in edges:
        targets = {(x.rule, x.actor, x.detail, x.target) for x in fl_step(system.ctx, s.infra, system.rules)}
        assert (a.rule, a.actor, a.detail, t.infra) in targets
    # and conversely every →FL step below the bounds is explored
    for s in seen:
        if not system.bound_reached(s):
            want = {x.target for x in fl_step(system.ctx, s.infra, system.rules)}
            assert want == {t.infra for _, t, _ in system.successors(s)}


@pytest.mark.parametrize(
    "kw",
    [
        {"max_events": 4, "max_rounds": 1},
        pytest.param({"max_events": 5, "max_rounds": 2}, marks=pytest.mark.slow),
    ],
)
def test_drop_reduction_is_a_functional_bisimulation(kw: dict[str, int]) -> None:
    """Trace-drop reduction vs literal traces: same reachable (igraph, counters), same labelled edges."""

    def projected(system: FLSystem) -> tuple[set, set]:  # type: ignore[type-arg]
        seen, edges = explore(system)
        key = lambda s: (s.infra.igra, s.round, s.events, s.last)  # noqa: E731
        return {key(s) for s in seen}, {(key(s), a.rule, a.actor, key(t), p) for s, a, t, p in edges}

    full = projected(seed_model(trace_mode="full", **kw))  # type: ignore[arg-type]
    drop = projected(seed_model(trace_mode="drop", **kw))  # type: ignore[arg-type]
    assert full == drop
    assert len(full[0]) > 50


def test_drop_mode_state_space_is_smaller_and_traces_abstracted() -> None:
    full, _ = explore(seed_model(trace_mode="full", max_events=4))
    drop, _ = explore(seed_model(trace_mode="drop", max_events=4))
    assert len(drop) < len(full)
    for s in drop:
        assert s.infra.prot.evs <= {(), ELIDED_TRACE}


def test_observables() -> None:
    system = moniteo_like(2, 1)
    names = set(system.observable_names())
    for n in (
        "clients",
        "ready",
        "curmodpar",
        "dataset",
        "round",
        "last",
        "gradient:sat1",
        "partition:sat2",
        "enabled:eval_round",
    ):
        assert n in names
    seen, _ = explore(system)
    for s in seen:
        for n in names:
            v = system.observe(s, n)
            hash(v)
        assert system.observe(s, "enabled:eval_round") == (
            system.observe(s, "ready") == system.observe(s, "clients") and s.round < 1
        )
        assert system.observe(s, "ready:sat1") == ("sat1" in s.infra.igra.ready)
    with pytest.raises(KeyError):
        system.observe(next(iter(seen)), "gradient:nobody")
    with pytest.raises(KeyError):
        system.observe(next(iter(seen)), "nonsense")


def test_round_bound_makes_final_states_and_training_matches_fedavg() -> None:
    system = moniteo_like(2, 2)
    seen, _ = explore(system)
    finals = [s for s in seen if not system.successors(s)]
    assert finals and all(s.round == 2 and system.observe(s, "bound_reached") for s in finals)
    assert len({s.infra.igra.curmodpar for s in finals}) == 1  # deterministic without noise
    # reference: two rounds of FedAvg computed directly
    g = system.initial.igra
    w = g.curmodpar
    for _ in range(2):
        locals_ = {}
        for c in g.clients:
            part = g.partition[c]
            grad = [Fraction(0), Fraction(0)]
            for p in part:
                r = w[0] + w[1] * p.features[0] - p.target
                grad[0] += r
                grad[1] += r * p.features[0]
            locals_[c] = [w[i] - system.ctx.eta * grad[i] / len(part) for i in range(2)]
        n = len(g.dataset)
        w = tuple(sum(Fraction(len(g.partition[c]), n) * locals_[c][i] for c in g.clients) for i in range(2))
    assert finals[0].infra.igra.curmodpar == w


def test_events_bound() -> None:
    system = seed_model(max_events=2, max_rounds=None)
    seen, _ = explore(system)
    assert max(s.events for s in seen) == 2
    assert all(not system.successors(s) for s in seen if s.events == 2)


def test_with_dataset_and_neighbours() -> None:
    base = moniteo_like(2, 1, "rr")
    d = base.initial.igra.dataset
    ns = list(neighbours(d, moniteo_universe(2), "add_remove_one"))
    assert ns
    for d1 in ns:
        s1 = base.with_dataset(d1)
        g = s1.initial.igra
        assert g.dataset == d1
        assert frozenset().union(*g.partition.values()) == d1
        assert s1.describe()["mechanism"] == base.describe()["mechanism"]
    unowned = seed_model().with_dataset(frozenset({point("z", 1, 1)}))
    assert all(not p for p in unowned.initial.igra.partition.values())


def test_noisy_model_curmodpar_distribution_sums_to_one() -> None:
    """Final curmodpar distribution of a noisy model (probability of reaching each final state)."""
    system = moniteo_like(2, 1, "rr")
    seen, _ = explore(system)
    # The bounded model is a DAG: propagate reach probabilities in topological order under the
    # scheduler that always takes the least action (here: the lowest-numbered unready satellite).
    prob: dict[FLState, Fraction] = {s: Fraction(0) for s in seen}
    (s0,) = system.initial_states()
    prob[s0] = Fraction(1)
    order = sorted(seen, key=lambda s: (s.round, len(s.infra.igra.ready)))
    finals: dict[tuple[Fraction, ...], Fraction] = {}
    for s in order:
        steps = system.successors(s)
        if not steps:
            finals[s.infra.igra.curmodpar] = finals.get(s.infra.igra.curmodpar, Fraction(0)) + prob[s]
            continue
        first = min(a for a, _, _ in steps)
        for a, t, p in steps:
            if a == first:
                prob[t] += prob[s] * p
    assert sum(finals.values()) == 1
    assert len(finals) > 1


def test_model_errors() -> None:
    i = seed_model().initial
    bad = Infrastructure(i.igra.replace(ready=frozenset({"ghost"})), i.prot, i.poli)
    with pytest.raises(ModelError, match="ready"):
        FLSystem(bad)
    bad2 = Infrastructure(i.igra.replace(gradient=FrozenMap({"c1": (Fraction(0),)})), i.prot, i.poli)
    with pytest.raises(ModelError) as err:
        FLSystem(bad2)
    assert len(err.value.diagnostics) == 2  # c1 wrong dimension, c2 missing
    with pytest.raises(ModelError, match="rule set"):
        FLSystem(i, rules="bogus")
    with pytest.raises(ModelError, match="trace mode"):
        FLSystem(i, trace_mode="bogus")  # type: ignore[arg-type]
    with pytest.raises(ModelError):
        Bounds(-1)


def test_hinge_model_runs() -> None:
    system = hinge_model()
    seen, _ = explore(system)
    finals = [s for s in seen if not system.successors(s)]
    assert finals and all(s.round == 1 for s in finals)


def test_state_counts_are_deterministic() -> None:
    counts = [len(explore(moniteo_like(3, 1, "rr"))[0]) for _ in range(2)]
    assert counts[0] == counts[1]
    # 3 clients x 16 outcomes each, any subset reported: (1 + 16)^3 states before eval
    assert counts[0] == 17**3 + 16**3


def test_state_hashes_are_well_spread() -> None:
    """Hash collisions would make interning quadratic (an additive FrozenMap hash once did)."""
    seen, _ = explore(moniteo_like(3, 1, "rr"))
    assert len({hash(s) for s in seen}) >= 0.999 * len(seen)
    maps = {s.infra.igra.gradient for s in seen}
    assert len({hash(m) for m in maps}) >= 0.999 * len(maps)
