"""Shared hypothesis strategies (random Kripke structures, random distributions, ...) and the text of
the small star-shaped FL scenarios the generated-scenario tests build."""

from __future__ import annotations

from collections.abc import Sequence
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


# ------------------------------------------------------------------------------ star-shaped scenarios
#: The property kinds whose statement ends with ``;`` in a generated scenario (their formula runs to it);
#: the other kinds (privacy, advantage) end with the line.
FORMULA_KINDS = ("ctl", "probability", "attack_tree")


def star_scenario_text(
    values: Sequence[int],
    *,
    name: str = "generated",
    hub: str = "ground",
    site: str = "o",
    server: str = "srv",
    client: str = "sat",
    datum: str = "d",
    sites: Sequence[int] | None = None,
    partitioned: bool = True,
    noise: str | Sequence[str] | None = None,
    protocol: str = "fedavg_rounds",
    quorum: int | None = None,
    traces: str = "drop",
    rounds: int = 1,
    events: int | None = None,
    hot: bool = False,
    attacker: str | None = None,
    properties: Sequence[str] = (),
) -> str:
    """The scenario-language text of a star-shaped FL system ([IIIf-FL] III-B, the seed's shape): the
    server ``server`` at the hub location ``hub``, linked to the sites ``{site}1 .. {site}m``; client
    ``{client}i`` (i = 1 .. n = ``len(values)``) sits at site ``sites[i-1]`` (default: its own site i,
    m = max ``sites``) and holds datum ``{datum}i = (1) -> values[i-1]`` (feature 1, target
    ``values[i-1]``); the dataset is every datum, and with ``partitioned`` client i's part is ``{datum}i``.
    The learner is the biasless squared loss (prediction w·x) at rate 1/2 from w = 0.

    ``noise`` is one mechanism on every update, or one per client (``noise for {client}i: ...``);
    ``protocol`` (with ``aggregate quorum`` when ``quorum`` is given) and ``traces`` choose the rules,
    ``rounds`` and ``events`` the bounds. With ``hot``, the last datum is secret and the neighbour
    ``hot`` replaces it by ``{datum}_hot = (1) -> values[n-1] + 2``, secret and observed by its owner;
    ``attacker`` is the declaration after ``attacker``. Property i is ``property p{i}: ...``, ending with
    ``;`` for the kinds in :data:`FORMULA_KINDS`."""
    n = len(values)
    if n == 0:
        raise ValueError("a star scenario needs at least one client")
    clients = [f"{client}{i}" for i in range(1, n + 1)]
    where = list(range(1, n + 1)) if sites is None else list(sites)
    if len(where) != n:
        raise ValueError(f"{len(where)} sites for {n} clients")
    m = max(where)
    lines = [
        f'scenario "{name}"',
        f"locations {hub}, " + ", ".join(f"{site}{i}" for i in range(1, m + 1)),
        "links " + ", ".join(f"{hub} -- {site}{i}" for i in range(1, m + 1)),
        f"server {server} at {hub}",
        "clients " + ", ".join(f"{c} at {site}{loc}" for c, loc in zip(clients, where, strict=True)),
        "policies default",
    ]
    lines += [f"data {datum}{i} = (1) -> {v}" + (" secret" if hot and i == n else "")
              for i, v in enumerate(values, 1)]
    if hot:
        lines.append(f"data {datum}_hot = (1) -> {values[-1] + 2} secret observed by {clients[-1]}")
    lines.append("dataset " + ", ".join(f"{datum}{i}" for i in range(1, n + 1)))
    if partitioned:
        lines.append("partition " + ", ".join(f"{c}: {{{datum}{i}}}" for i, c in enumerate(clients, 1)))
    lines.append("model squared_nobias rate 1/2 initial (0)")
    if isinstance(noise, str):
        lines.append(f"noise {noise} on update")
    elif noise is not None:
        if len(noise) != n:
            raise ValueError(f"{len(noise)} noise mechanisms for {n} clients")
        lines += [f"noise for {c}: {mech} on update" for c, mech in zip(clients, noise, strict=True)]
    aggregate = f"aggregate quorum {quorum} " if quorum is not None else ""
    lines.append(f"protocol {protocol} {aggregate}traces {traces}")
    lines.append(f"bounds rounds {rounds}" + (f", events {events}" if events is not None else ""))
    if hot:
        lines.append(f"neighbour hot: replace {datum}{n} with {datum}_hot")
    if attacker is not None:
        lines.append(f"attacker {attacker}")
    lines += [f"property p{i}: {p}" + (";" if p.startswith(FORMULA_KINDS) else "")
              for i, p in enumerate(properties)]
    return "\n".join(lines) + "\n"

