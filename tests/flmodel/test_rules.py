"""Each published rule of [IIIf-FL] III-B: enabled exactly when [IIIf-FL] says, successor exactly what
it says (including the protocol trace), checked against independent reconstructions."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
import sympy

from flmodel.data import point
from flmodel.examples import fl_infrastructure
from flmodel.frozen import FrozenMap
from flmodel.infrastructure import (
    Eval,
    Get,
    Infrastructure,
    Poli,
    Policy,
    Protocol,
    Put,
    insertp,
)
from flmodel.learning import SquaredLoss, vector
from flmodel.noise import NoNoise, geometric
from flmodel.rules import (
    EVAL_SERVER,
    FEDAVG_ROUNDS,
    GET_GRAD,
    PUBLISHED,
    PUT_PART,
    RuleContext,
    Transition,
    fl_step,
)

ETA = Fraction(1, 2)
A, B, C = point("a", 0, 1), point("b", 1, 3), point("c", 2, 5)
DATA = frozenset({A, B, C})


def put_part(c: RuleContext, i: Infrastructure) -> list[Transition]:
    return list(PUT_PART.fire(c, i, False))


def get_grad(c: RuleContext, i: Infrastructure) -> list[Transition]:
    return list(GET_GRAD.fire(c, i, False))


def eval_server(c: RuleContext, i: Infrastructure) -> list[Transition]:
    return list(EVAL_SERVER.fire(c, i, False))


def put_part_enabled(c: RuleContext, i: Infrastructure) -> bool:
    return bool(put_part(c, i))


def eval_server_enabled(c: RuleContext, i: Infrastructure) -> bool:
    return bool(eval_server(c, i))


def ctx(**kw: object) -> RuleContext:
    return RuleContext(SquaredLoss(), ETA, **kw)  # type: ignore[arg-type]


def infra(**changes: object) -> Infrastructure:
    i = fl_infrastructure(["c1", "c2"], DATA)
    prot = changes.pop("prot", i.prot)
    poli = changes.pop("poli", i.poli)
    return Infrastructure(i.igra.replace(**changes), prot, poli)  # type: ignore[arg-type]


def powerset_partitions(data: frozenset, clients: list[str]) -> set[FrozenMap]:  # type: ignore[type-arg]
    """Independent reference: every map clients -> subsets whose parts are disjoint with union data."""
    subsets = [frozenset(s) for k in range(len(data) + 1) for s in itertools.combinations(sorted(data), k)]
    out = set()
    for parts in itertools.product(subsets, repeat=len(clients)):
        if sum(len(p) for p in parts) == len(data) and frozenset().union(*parts) == data:
            out.add(FrozenMap(dict(zip(clients, parts, strict=True))))
    return out


def sym_update(w: tuple[Fraction, ...], part: frozenset) -> tuple[Fraction, ...]:  # type: ignore[type-arg]
    """Reference client update by symbolic differentiation of the mean squared loss (sympy)."""
    w0, w1 = sympy.symbols("w0 w1")
    if not part:
        return w
    loss = sum(
        sympy.Rational(1, 2) * (w0 + w1 * sympy.Rational(p.features[0]) - sympy.Rational(p.target)) ** 2
        for p in part
    ) / len(part)
    subs = {w0: sympy.Rational(w[0]), w1: sympy.Rational(w[1])}
    g = [sympy.diff(loss, v).subs(subs) for v in (w0, w1)]
    return tuple(Fraction(str(sympy.Rational(w[i]) - sympy.Rational(ETA) * g[i])) for i in range(2))


# --- put_part ------------------------------------------------------------------------------------


def test_put_part_successors_are_exactly_the_partitions() -> None:
    i = infra()
    got = {t.target for t in put_part(ctx(), i)}
    want = set()
    for part in powerset_partitions(DATA, ["c1", "c2"]):
        g2 = i.igra.replace(partition=part)
        want.add(Infrastructure(g2, insertp((Put((part,)),), i.prot.evs), i.poli))
    assert got == want
    assert len(got) == 2**3
    for t in put_part(ctx(), i):
        assert t.rule == "put_part" and t.actor == "server" and t.probability == 1
        # ready, curmodpar and everything else kept (reading of the 8-argument Lgraph)
        assert t.target.igra.ready == i.igra.ready and t.target.igra.curmodpar == i.igra.curmodpar
        assert t.target.igra.gradient == i.igra.gradient and t.target.prot.evs >= i.prot.evs


def test_put_part_needs_the_empty_trace() -> None:
    i = infra(prot=Protocol(frozenset({(Eval(vector(0, 0)),)})))
    assert not put_part_enabled(ctx(), i)
    assert list(put_part(ctx(), i)) == []


def test_put_part_stays_enabled_after_other_steps_and_keeps_ready() -> None:
    """Surprising but well-formed: insertp keeps [] so put_part is enabled forever (re-partitioning)."""
    i = infra(ready=frozenset({"c1"}))
    step = next(iter(get_grad(ctx(), i)))
    assert () in step.target.prot.evs
    assert put_part_enabled(ctx(), step.target)
    t = next(iter(put_part(ctx(), step.target)))
    assert t.target.igra.ready == step.target.igra.ready


def test_put_part_without_clients() -> None:
    c = ctx(enforce_policies=False)
    nonempty = infra(clients=frozenset(), gradient=FrozenMap(), partition=FrozenMap())
    assert not put_part_enabled(c, nonempty)
    empty = infra(clients=frozenset(), gradient=FrozenMap(), partition=FrozenMap(), dataset=frozenset())
    (t,) = put_part(c, empty)
    assert t.target.igra.partition == FrozenMap()


# --- get_grad ------------------------------------------------------------------------------------


def test_get_grad_successor_is_the_seed_update_with_trace() -> None:
    part = FrozenMap({"c1": frozenset({A, B}), "c2": frozenset({C})})
    tr1, tr2 = (), (Eval(vector(1, 1)),)
    i = infra(partition=part, curmodpar=vector(1, 0), prot=Protocol(frozenset({tr1, tr2})))
    got = {(t.actor, t.detail, t.target) for t in get_grad(ctx(), i)}
    want = set()
    for c in ("c1", "c2"):
        upd = sym_update((Fraction(1), Fraction(0)), part[c])
        g2 = i.igra.replace(ready=i.igra.ready | {c}, gradient=i.igra.gradient.set(c, upd))
        for l in (tr1, tr2):
            prot = Protocol(i.prot.evs | {(Get(c, upd), *l)})
            want.add((c, Infrastructure(g2, prot, i.poli)))
    assert {(a, t) for a, _, t in got} == want
    assert len(got) == 4  # 2 clients x 2 traces l, each choice its own action detail
    assert len({(a, d) for a, d, _ in got}) == 4


def test_get_grad_allowed_for_a_ready_client_and_before_put() -> None:
    """No premise c ∉ ready G, nor that put_part happened (kept as published)."""
    i = infra(ready=frozenset({"c1"}))
    actors = sorted(t.actor for t in get_grad(ctx(), i))
    assert actors == ["c1", "c2"]
    # empty part: the update is curmodpar itself (∇ of the empty sum is 0)
    for t in get_grad(ctx(), i):
        assert t.target.igra.gradient[t.actor] == i.igra.curmodpar


def test_get_grad_needs_some_trace() -> None:
    assert list(get_grad(ctx(), infra(prot=Protocol(frozenset())))) == []


def test_get_grad_noisy_is_a_distribution_and_no_noise_is_the_literal_rule() -> None:
    part = FrozenMap({"c1": frozenset({A, B}), "c2": frozenset({C})})
    i = infra(partition=part)
    literal = {(t.actor, t.target) for t in get_grad(ctx(), i)}
    nonoise = list(get_grad(ctx(mechanism=NoNoise()), i))
    assert {(t.actor, t.target) for t in nonoise} == literal
    assert {t.rule for t in nonoise} == {"get_grad_noisy"}
    mech = geometric(Fraction(1, 3), -2, 4)
    steps = list(get_grad(ctx(mechanism=mech), i))
    for c in ("c1", "c2"):
        mine = [t for t in steps if t.actor == c]
        assert sum(t.probability for t in mine) == 1
        assert len({t.target for t in mine}) == len(mine) == 7**2
        for t in mine:  # what is recorded and stored is the noisy value
            (new_trace,) = t.target.prot.evs - i.prot.evs
            assert new_trace[0] == Get(c, t.target.igra.gradient[c])


# --- eval_server ---------------------------------------------------------------------------------


def test_eval_server_enabled_exactly_when_ready_equals_clients() -> None:
    for ready in (frozenset(), frozenset({"c1"}), frozenset({"c2"}), frozenset({"c1", "c2"})):
        assert eval_server_enabled(ctx(), infra(ready=ready)) == (ready == frozenset({"c1", "c2"}))


def test_eval_server_successor_is_the_weighted_average() -> None:
    part = FrozenMap({"c1": frozenset({A, B}), "c2": frozenset({C})})
    grads = FrozenMap({"c1": vector(2, 4), "c2": vector(5, -1)})
    i = infra(
        partition=part,
        gradient=grads,
        ready=frozenset({"c1", "c2"}),
        prot=Protocol(frozenset({(), (Eval(vector(0, 0)),)})),
    )
    steps = list(eval_server(ctx(), i))
    want_model = tuple(Fraction(2, 3) * grads["c1"][k] + Fraction(1, 3) * grads["c2"][k] for k in range(2))
    assert want_model == (Fraction(3), Fraction(7, 3))
    want = set()
    for l in i.prot.evs:
        g2 = i.igra.replace(ready=frozenset(), curmodpar=want_model)
        want.add(Infrastructure(g2, Protocol(i.prot.evs | {(Eval(want_model), *l)}), i.poli))
    assert {t.target for t in steps} == want
    assert all(t.actor == "server" and t.rule == "eval_server" for t in steps)


def test_eval_server_with_no_clients_and_with_empty_dataset() -> None:
    """ready = clients = ∅ enables eval (Newmodel = empty sum = 0); n = 0 gives weights x/0 = 0."""
    c = ctx(enforce_policies=False)
    i = infra(clients=frozenset(), gradient=FrozenMap(), partition=FrozenMap(), curmodpar=vector(3, 3))
    (t,) = eval_server(c, i)
    assert t.target.igra.curmodpar == (0, 0)
    j = infra(
        dataset=frozenset(),
        ready=frozenset({"c1", "c2"}),
        gradient=FrozenMap({"c1": vector(1, 1), "c2": vector(2, 2)}),
    )
    (t,) = eval_server(c, j)
    assert t.target.igra.curmodpar == (0, 0)


# --- policies -----------------------------------------------------------------------------------


def test_policies_gate_actions() -> None:
    i = infra(ready=frozenset({"c1", "c2"}))
    g = i.igra
    only_c1 = Poli(
        FrozenMap(
            {
                g.aloc["server"]: (Policy(frozenset({"server"}), frozenset({"put_part"})),),
                g.aloc["c1"]: (Policy(frozenset({"c1"}), frozenset({"get_grad"})),),
                g.aloc["c2"]: (Policy(None, frozenset({"eval_server"})),),
            }
        )
    )
    j = Infrastructure(g, i.prot, only_c1)
    rules = {(t.rule, t.actor) for t in fl_step(ctx(), j)}
    assert rules == {("put_part", "server"), ("get_grad", "c1")}
    # a policy that requires presence at the location: the server is not at c2's location
    assert not only_c1.enables(g, g.aloc["c2"], "server", "eval_server")
    assert only_c1.enables(g, g.aloc["c2"], "c2", "eval_server")
    # ungated relation = the published one
    assert {(t.rule, t.actor) for t in fl_step(ctx(enforce_policies=False), j)} == {
        ("put_part", "server"),
        ("get_grad", "c1"),
        ("get_grad", "c2"),
        ("eval_server", "server"),
    }


def test_permissive_and_default_policies_give_the_published_relation() -> None:
    i = infra(ready=frozenset({"c1", "c2"}))
    perm = Infrastructure(i.igra, i.prot, Poli.permissive(i.igra.gra.locations))
    ungated = fl_step(ctx(enforce_policies=False), i)
    for j in (i, perm):
        gated = fl_step(ctx(), j)
        assert [(t.rule, t.actor, t.target.igra, t.target.prot) for t in gated] == [
            (t.rule, t.actor, t.target.igra, t.target.prot) for t in ungated
        ]


# --- fedavg_rounds variant -----------------------------------------------------------------------


def test_fedavg_rounds_variant() -> None:
    part = FrozenMap({"c1": frozenset({A, B}), "c2": frozenset({C})})
    i = infra(partition=part)
    before = {t.rule for t in fl_step(ctx(), i, FEDAVG_ROUNDS, partitioned=False)}
    assert before == {"put_part_once"}  # get needs the data deployed; eval needs everyone ready
    after = fl_step(ctx(), i, FEDAVG_ROUNDS, partitioned=True)
    assert {(t.rule, t.actor) for t in after} == {("get_grad_round", "c1"), ("get_grad_round", "c2")}
    j = next(t.target for t in after if t.actor == "c1")
    assert {(t.rule, t.actor) for t in fl_step(ctx(), j, FEDAVG_ROUNDS, True)} == {("get_grad_round", "c2")}
    k = next(t.target for t in fl_step(ctx(), j, FEDAVG_ROUNDS, True))
    assert {t.rule for t in fl_step(ctx(), k, FEDAVG_ROUNDS, True)} == {"eval_round"}
    # no clients: the variant does not aggregate an empty round
    c = ctx(enforce_policies=False)
    e = infra(clients=frozenset(), gradient=FrozenMap(), partition=FrozenMap(), dataset=frozenset())
    assert {t.rule for t in fl_step(c, e, FEDAVG_ROUNDS, True)} == set()
    assert {t.rule for t in fl_step(c, e, PUBLISHED, True)} == {"put_part", "eval_server"}


@pytest.mark.parametrize("mode", ["full", "drop"])
def test_trace_modes_give_the_same_igraph_successors(mode: str) -> None:
    part = FrozenMap({"c1": frozenset({A}), "c2": frozenset({B, C})})
    i = infra(partition=part, prot=Protocol(frozenset({(), (Eval(vector(0, 0)),)})))
    full = {(t.rule, t.actor, t.target.igra) for t in fl_step(ctx(), i)}
    other = {(t.rule, t.actor, t.target.igra) for t in fl_step(ctx(trace_mode=mode), i)}  # type: ignore[arg-type]
    assert other == full


def test_noise_on_the_gradient() -> None:
    """noise_target="gradient": the reported value is w − η·v for each outcome v of M(∇L)."""
    from flmodel.learning import mean_gradient

    part = FrozenMap({"c1": frozenset({A, B}), "c2": frozenset({C})})
    i = infra(partition=part, curmodpar=vector(1, 0))
    literal = {(t.actor, t.target) for t in get_grad(ctx(), i)}
    assert {
        (t.actor, t.target) for t in get_grad(ctx(mechanism=NoNoise(), noise_target="gradient"), i)
    } == literal
    mech = geometric(Fraction(1, 2), -3, 3)
    steps = [t for t in get_grad(ctx(mechanism=mech, noise_target="gradient"), i) if t.actor == "c1"]
    grad = mean_gradient(SquaredLoss(), vector(1, 0), part["c1"])
    want = {tuple(Fraction(1, 1) * (k == 0) - ETA * v[k] for k in range(2)): p for v, p in mech(grad)}
    assert {t.target.igra.gradient["c1"]: t.probability for t in steps} == want
    assert sum(want.values()) == 1
