"""Immutable, hashable infrastructure values ([IIIf-FL] III-B datatypes) and FrozenMap."""

from __future__ import annotations

import pickle
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flmodel.examples import fl_infrastructure, seed_dataset
from flmodel.frozen import FrozenMap
from flmodel.infrastructure import (
    EMPTY_PROTOCOL,
    Eval,
    Get,
    Gra,
    Infrastructure,
    Poli,
    Put,
    insertp,
    lgraph,
    trace_text,
    validate_igraph,
)
from flmodel.learning import Vec, vector


@given(st.dictionaries(st.text(max_size=3), st.integers(), max_size=6), st.text(max_size=3), st.integers())
def test_frozenmap_behaves_like_an_immutable_dict(d: dict[str, int], k: str, v: int) -> None:
    m = FrozenMap(d)
    assert dict(m) == d and len(m) == len(d)
    assert FrozenMap(list(reversed(list(d.items())))) == m
    assert hash(FrozenMap(dict(d))) == hash(m)
    m2 = m.set(k, v)
    assert dict(m2) == {**d, k: v} and dict(m) == d
    assert m2 == FrozenMap({**d, k: v}) and hash(m2) == hash(FrozenMap({**d, k: v}))
    assert m2.get(k) == v and m.get("\x00missing", 7) == 7
    with pytest.raises(AttributeError):
        m.x = 1  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(m2)) == m2


def test_vec_hash_and_equality_agree_with_tuples() -> None:
    v = vector(1, "1/2")
    assert v == (Fraction(1), Fraction(1, 2)) and hash(v) == hash((Fraction(1), Fraction(1, 2)))
    assert {v: 1}[(Fraction(1), Fraction(1, 2))] == 1
    assert pickle.loads(pickle.dumps(v)) == v and type(pickle.loads(pickle.dumps(v))) is Vec


def test_infrastructure_values_are_hashable_and_compare_by_value() -> None:
    a = fl_infrastructure(["c1", "c2"], seed_dataset())
    b = fl_infrastructure(["c2", "c1"], set(seed_dataset()))
    assert a == b and hash(a) == hash(b)
    assert {a: 1}[b] == 1
    c = Infrastructure(a.igra.replace(ready=frozenset({"c1"})), a.prot, a.poli)
    assert c != a
    assert pickle.loads(pickle.dumps(a)) == a
    with pytest.raises(TypeError, match="unknown igraph components"):
        a.igra.replace(bogus=1)


def test_events_traces_and_insertp() -> None:
    part = FrozenMap({"c1": frozenset(seed_dataset())})
    t = (Eval(vector(1)), Get("c1", vector(2)), Put((part,)))
    assert trace_text(t).startswith("[Put[c1:{a b c}] . Get(c1,(2)) . Eval((1))")
    p = insertp(t, EMPTY_PROTOCOL.evs)
    assert p.evs == frozenset({(), t}) and insertp(t, p.evs) == p
    assert trace_text(()) == "[]"


def test_lgraph_converts_and_validate_finds_problems() -> None:
    g = lgraph(
        Gra(frozenset({"s", "l"}), frozenset({("s", "x")})),
        {"srv": "s", "c": "nowhere"},
        "srv",
        ["c", "srv"],
        ["d"],
        {"c": [1, 2]},
        [0],
        {"e": []},
        [],
    )
    assert type(g.curmodpar) is Vec
    problems = "\n".join(validate_igraph(g))
    for needle in (
        "edges",
        "unknown location",
        "also a client",
        "not a subset",
        "dimension",
        "gradient has no value",
        "not a client",
    ):
        assert needle in problems


def test_policy_tables() -> None:
    i = fl_infrastructure(["c1"], seed_dataset())
    g = i.igra
    assert i.poli.enables(g, g.aloc["server"], "server", "eval_server")
    assert not i.poli.enables(g, g.aloc["server"], "c1", "eval_server")
    assert not i.poli.enables(g, g.aloc["c1"], "c1", "eval_server")
    perm = Poli.permissive(g.gra.locations)
    assert perm.enables(g, g.aloc["c1"], "c1", "eval_server")
    assert not perm.enables(g, g.aloc["c1"], "server", "eval_server")  # not located there
