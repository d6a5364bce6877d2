"""Shared hypothesis strategies (random Kripke structures, random distributions, ...)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from checker.mc import ctl_ast
from checker.mc.kripke import Kripke
from checker.mc.ts import Action

ATOMS = ("p", "q", "r")


@st.composite
def kripke_structures(
    draw: st.DrawFn,
    max_states: int = 8,
    atoms: tuple[str, ...] = ATOMS,
    allow_deadlocks: bool = True,
    probabilistic: bool = False,
) -> Kripke:
    """A random Kripke structure with 1..max_states states, random edges (deadlocks allowed unless
    ``allow_deadlocks`` is false), one or more initial states and random labels for ``atoms``.
    With ``probabilistic``, each state's edges carry exact probabilities summing to 1 (one action)."""
    n = draw(st.integers(1, max_states))
    src: list[int] = []
    dst: list[int] = []
    probs: list[Fraction] = []
    for s in range(n):
        min_out = 0 if allow_deadlocks else 1
        targets = draw(st.sets(st.integers(0, n - 1), min_size=min_out, max_size=min(n, 3)))
        targets_sorted = sorted(targets)
        if probabilistic and targets_sorted:
            weights = draw(st.lists(st.integers(1, 4), min_size=len(targets_sorted),
                                    max_size=len(targets_sorted)))
            total = sum(weights)
            probs.extend(Fraction(w, total) for w in weights)
        for t in targets_sorted:
            src.append(s)
            dst.append(t)
    initial = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=min(n, 2))))
    labels = {a: np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
              for a in atoms}
    return Kripke.from_edges(n, initial, src, dst, labels=labels,
                             prob_exact=probs if probabilistic else None)


@st.composite
def mdp_structures(draw: st.DrawFn, max_states: int = 6, max_choices: int = 3) -> Kripke:
    """A random probabilistic Kripke structure with nondeterminism (an MDP): each state has 0 ..
    ``max_choices`` choices, each with its own action and an exact distribution over 1..3 targets."""

    n = draw(st.integers(1, max_states))
    actions = tuple(Action(f"a{i}") for i in range(max_choices))
    src: list[int] = []
    dst: list[int] = []
    act: list[int] = []
    probs: list[Fraction] = []
    for s in range(n):
        k = draw(st.integers(0, max_choices))
        for a in range(k):
            targets = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=min(n, 3))))
            weights = draw(st.lists(st.integers(1, 4), min_size=len(targets), max_size=len(targets)))
            total = sum(weights)
            for t, w in zip(targets, weights, strict=True):
                src.append(s)
                dst.append(t)
                act.append(a)
                probs.append(Fraction(w, total))
    initial = [draw(st.integers(0, n - 1))]
    labels = {"goal": np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)}
    return Kripke.from_edges(n, initial, src, dst, action=act, actions=actions, labels=labels,
                             prob_exact=probs)


@st.composite
def ctl_formulas(draw: st.DrawFn, atoms: tuple[str, ...] = ATOMS, max_leaves: int = 10) -> object:
    """A random CTL formula (``checker.mc.ctl_ast``) over the labels ``atoms`` using every operator of
    IIIf's MC theory (EX AX EF AF EG AG, E/A until and release) and the boolean connectives
    (n-ary and/or, implies, iff)."""
    leaves = st.one_of(
        st.sampled_from(atoms).map(ctl_ast.Label), st.sampled_from([ctl_ast.TrueF(), ctl_ast.FalseF()])
    )

    def extend(children: st.SearchStrategy[ctl_ast.Formula]) -> st.SearchStrategy[ctl_ast.Formula]:
        unary = st.sampled_from(
            [ctl_ast.Not, ctl_ast.EX, ctl_ast.AX, ctl_ast.EF, ctl_ast.AF, ctl_ast.EG, ctl_ast.AG]
        )
        binary = st.sampled_from(
            [ctl_ast.EU, ctl_ast.AU, ctl_ast.ER, ctl_ast.AR, ctl_ast.Implies, ctl_ast.Iff]
        )
        return st.one_of(
            st.builds(lambda op, f: op(f), unary, children),
            st.builds(lambda op, f, g: op(f, g), binary, children, children),
            st.lists(children, min_size=2, max_size=4).map(lambda fs: ctl_ast.And(tuple(fs))),
            st.lists(children, min_size=2, max_size=4).map(lambda fs: ctl_ast.Or(tuple(fs))),
        )

    return draw(st.recursive(leaves, extend, max_leaves=max_leaves))
