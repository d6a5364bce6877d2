"""The counter abstraction of interchangeable clients (generic representatives).

Where the symmetry (:mod:`flmodel.symmetry`) finds classes of interchangeable clients, a state of the
quotient is determined by how many clients of each class are in each *local state* — the components a
permutation of the class carries along with the client: whether it is in ``ready``, its gradient, its
part (described up to ``δ``), and with a network whether its report is lost, crossed or copied — not by
which clients they are ([ES96] Sec. 6; the *generic representatives* of [EW05] and [DM06], which is
also PRISM's symmetry reduction). :class:`CounterSystem` stores each such counter vector as its
generic representative, the orbit representative of :class:`flmodel.symmetry.SymmetricSystem` (within a
class the clients sorted by local state and renamed onto the class's names in order), so that every
observable, witness and replay reads an ordinary FL state; :meth:`CounterSystem.counters` gives the
counter vector itself. The number of abstract states is polynomial in the class sizes: a class of
``k`` clients with ``L`` reachable local states contributes at most ``C(k + L − 1, L − 1)`` counter
vectors.

The successors are computed on the counters, not per client: in a representative ``s`` two clients
``c``, ``d`` of one class in the same local state are swapped by the transposition ``π = (c d)``, an
automorphism of the system (the group of :func:`flmodel.symmetry.detect_symmetry`) that fixes ``s``
(:meth:`CounterSystem.local_state` is the whole of what ``π`` moves, so ``π·s = s``; a state whose
traces name clients, or whose links are cut while the class's clients sit at distinct locations, is
not split into local states and keeps every client's steps). Hence ``succ_d(s) = π·succ_c(s)``: ``d``'s
action has the same distribution over orbits as ``c``'s, and only the first client of each occupied
local state acts (``FLSystem.successors(skip=...)``), one action per (class, local state) instead of
one per client. Dropping an action whose distribution over orbits equals another action's of the same
state keeps the orbit relation a bisimulation between the full quotient and this one, so CTL over
symmetric atoms ([ES96]) and minimal and maximal reachability probabilities ([KNP06]) are unchanged.
Two things are not kept and refuse the abstraction (:func:`counter_refusal`): the *uniform* scheduler,
which weighs an action by the number of clients that can take it, and attack trees, whose ways and
their count are paths of the structure.

Example::

    >>> from flmodel.scenario import load_scenario
    >>> from flmodel.scenario_build import build_system
    >>> from flmodel.symmetry import detect_symmetry
    >>> from checker.app.load import resolve_scenario_path
    >>> s = load_scenario(resolve_scenario_path("moniteo_swarm8"), defines={"N": 3})
    >>> system = build_system(s)
    >>> sym, _ = detect_symmetry(system)
    >>> counter = CounterSystem(system, sym)
    >>> start = counter.initial_states()[0]
    >>> [len(counter.successors(start)), len(system.successors(start))]
    [6, 9]
    >>> (local, count), = counter.counters(start)[0]  # the class (sat1, sat3): both unready, at 0
    >>> local[0], [str(x) for x in local[1]], count
    (False, ['0'], 2)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from checker.app.scenario_formulas import parse_property
from checker.mc import ctl_ast
from flmodel.data import DataPoint
from flmodel.infrastructure import Get, Igraph, Put
from flmodel.network import NetStatus
from flmodel.scenario_ast import Scenario
from flmodel.scenario_build import ScenarioSystem
from flmodel.symmetry import ClientSymmetry, SymmetricSystem
from flmodel.system import FLState

__all__ = ["CounterStates", "CounterSystem", "compact_refusal", "counter_refusal"]

LocalState = tuple[Any, ...]


def counter_refusal(scenario: Scenario, base: ScenarioSystem) -> str | None:
    """Why the counter abstraction may not replace the orbit quotient (module docstring), ``None`` when
    it may: a property that reads the uniform scheduler (``probability`` with ``uniform``, a ``P`` query
    inside ``ctl``), an attack tree (its ways are paths of the structure), or a system whose steps are
    not the FL system's own (a wrapper the skip of interchangeable actors cannot reach)."""
    if type(base).successors is not ScenarioSystem.successors:
        return "not applied: the system's steps are not the FL system's own"
    for p in scenario.properties:
        if p.kind == "attack_tree":
            return f"not applied: property {p.name} is an attack tree, whose ways are paths of the structure"
        if p.kind == "probability" and p.scheduler not in ("min", "max"):
            return f"not applied: property {p.name} reads the uniform scheduler, which weighs an action " \
                   "by the number of clients that can take it"
        if p.kind == "ctl" and p.formula is not None and ctl_ast.has_probabilistic(parse_property(p)):
            return f"not applied: property {p.name} has a P or D query (the uniform scheduler)"
    return None


class CounterSystem(SymmetricSystem):
    """The counter abstraction of ``base`` under the group ``sym`` (module docstring): the states are
    the generic representatives of :class:`SymmetricSystem`, the steps one per occupied (class, local
    state) and per client outside the classes."""

    def __init__(self, base: ScenarioSystem, sym: ClientSymmetry) -> None:
        super().__init__(base, sym)
        self._classes = sym.classes
        self._reference_index = {x: (c, i) for c, ref in sym.reference.items() for i, x in enumerate(ref)}

    def _part_of(self, c: str, part: frozenset[DataPoint]) -> tuple[Any, ...]:
        """``c``'s part as ``π`` moves it: its own reference points by index, every other point by
        itself (two clients with equal descriptions hold no point of each other, so ``δ`` of the
        transposition maps one part onto the other)."""
        ref = self._reference_index
        out: list[tuple[Any, ...]] = []
        for x in part:
            owner = ref.get(x)
            mine = owner is not None and owner[0] == c
            out.append(("own", owner[1]) if owner is not None and mine
                       else ("other", x.name, x.target, x.features))
        return tuple(sorted(out, key=repr))

    def local_state(self, g: Igraph, c: str) -> LocalState:
        """What a permutation of ``c``'s class carries along with ``c`` in the igraph ``g``: in ``ready``,
        its gradient, its part (:meth:`_part_of`) and what the network status says of its report."""
        st = g.gra.status
        net = (c in st.lost, c in st.crossed, c in st.seen) if isinstance(st, NetStatus) else ()
        return (c in g.ready, tuple(g.gradient[c]), self._part_of(c, g.part(c)), net)

    def _splittable(self, state: FLState) -> bool:
        """Whether the local states are all the transposition moves: no trace names a client, and no
        link is cut between clients at distinct locations (the state's links are renamed then)."""
        infra = state.infra
        if any(t and any(type(e) in (Get, Put) for e in t) for t in infra.prot.evs):
            return False
        edges = self.symmetry.edges
        return not edges or infra.igra.gra.edges == edges

    def counters(self, state: FLState) -> tuple[tuple[tuple[LocalState, int], ...], ...]:
        """Per class, how many of its clients are in each local state (sorted by local state)."""
        g = state.infra.igra
        out = []
        for cls in self._classes:
            count: dict[LocalState, int] = {}
            for c in cls:
                key = self.local_state(g, c)
                count[key] = count.get(key, 0) + 1
            out.append(tuple(sorted(count.items(), key=repr)))
        return tuple(out)

    def _skipped(self, state: FLState) -> frozenset[str]:
        """The clients whose steps repeat another client's up to the transposition of the two."""
        if not self._splittable(state):
            return frozenset()
        g = state.infra.igra
        skip: list[str] = []
        for cls in self._classes:
            seen: set[LocalState] = set()
            for c in cls:
                key = self.local_state(g, c)
                if key in seen:
                    skip.append(c)
                else:
                    seen.add(key)
        return frozenset(skip)

    def successors(self, state: FLState) -> list[Any]:
        merged: dict[tuple[object, FLState], Fraction] = {}
        canonical = self.canonical
        for act, target, p in self.base.fl.successors(state, skip=self._skipped(state)):
            key = (act, canonical(target))
            merged[key] = merged[key] + p if key in merged else p
        return [(a, t, p) for (a, t), p in merged.items()]


#: An abstract state of :class:`CounterStates`: the interned global part and, per class, the sorted
#: ``(local state id, count)`` pairs.
Counters = tuple[int, tuple[tuple[tuple[int, int], ...], ...]]
_NONLOCAL = ()


def _intern(ids: dict[Any, int], items: list[Any], key: Any) -> int:
    """The number of ``key`` in ``items`` (appended when new)."""
    i = ids.get(key)
    if i is None:
        i = ids[key] = len(items)
        items.append(key)
    return i


def compact_refusal(base: ScenarioSystem, sym: ClientSymmetry) -> str | None:
    """Why the counters cannot be the stored states (:class:`CounterStates`), ``None`` when they can:
    each client of a class keeps only ``ready`` and its gradient of its own (no network status, no trace
    naming it, its part never rewritten), every action of such a client reads and writes no other
    client's variables (the footprints, :meth:`flmodel.system.FLSystem.action_classes`), and the
    gradients are not kept as their sum (which one client holds for all)."""
    fl = base.fl
    if base.network is not None or fl.initial.igra.gra.status is not None:
        return "a network status names clients"
    if fl.ctx.trace_mode != "drop":
        return "the traces name clients"
    if fl.sums_gradients:
        return "one client holds the sum of the gradients"
    classes = fl.action_classes()
    if classes is None:
        return "a rule of the system states no footprint"
    moved = sym.clients()
    for ac in classes:
        if any(v == "dataset" or v.startswith("partition:") for v in ac.writes):
            return f"{ac.rule} rewrites the data or a part"
        if ac.actor in moved:
            others = {v.partition(":")[2] for v in ac.reads | ac.writes if ":" in v} - {ac.actor}
            if others & set(fl.clients):
                return f"{ac.rule} of {ac.actor} reads or writes another client's variables"
    return None


class CounterStates(CounterSystem):
    """The counter abstraction with the counters as the stored states (:data:`Counters`): a state is
    the interned global part ``G`` (the FL state with every class client at its initial local state:
    not ready, initial gradient) and per class how many clients are in each local state ``(ready,
    gradient)``. :meth:`decode` gives its generic representative (the class's clients, in name order,
    in the local states in the order of their ids), on which the observables are read.

    Steps: the actors outside the classes (the server, fixed clients) fire on the representative; a
    class client's action reads and writes only its own local state and the global part
    (:func:`compact_refusal`), so its outcomes from ``G`` and local state ``ℓ`` — the next global part,
    the next local state and the probability — are computed once per ``(G, client, ℓ)`` on a
    representative and then only move one client between local states of the counter; a memoized
    outcome that changed another client's local state is refused and the client fires on every state."""

    def __init__(self, base: ScenarioSystem, sym: ClientSymmetry) -> None:
        super().__init__(base, sym)
        ig = base.fl.initial.igra
        self._init_grad = {c: ig.gradient[c] for cls in sym.classes for c in cls}
        self._moved = sym.clients()
        classes = base.fl.action_classes() or ()
        self._actors = frozenset(base.fl.clients) | {ig.server} | {ac.actor for ac in classes}
        self._g_ids: dict[FLState, int] = {}
        self._g: list[FLState] = []
        self._l_ids: dict[tuple[bool, Any], int] = {}
        self._l: list[tuple[bool, Any]] = []
        self._outcomes: dict[tuple[Any, ...], Any] = {}
        self._last: tuple[Counters, FLState] | None = None

    # -- coding ----------------------------------------------------------------------------------------
    def _local_id(self, key: tuple[bool, Any]) -> int:
        return _intern(self._l_ids, self._l, key)

    def _global_id(self, state: FLState) -> int:
        return _intern(self._g_ids, self._g, state)

    def encode(self, state: FLState) -> Counters:
        """The counters of an FL state of ``base`` (its class clients counted per local state)."""
        infra = state.infra
        g = infra.igra
        ready, grads = g.ready, g.gradient
        counts = []
        for cls in self._classes:
            count: dict[int, int] = {}
            for c in cls:
                lid = self._local_id((c in ready, grads[c]))
                count[lid] = count.get(lid, 0) + 1
            counts.append(tuple(sorted(count.items())))
        neutral = dict(grads.items_tuple)
        neutral.update(self._init_grad)
        g2 = g._replace(ready=g.ready - self._moved, gradient=type(grads)(neutral))
        glob = FLState(type(infra)(g2, infra.prot, infra.poli), *state[1:])
        return self._global_id(glob), tuple(counts)

    def decode(self, state: Counters) -> FLState:
        """The generic representative of ``state``."""
        last = self._last
        if last is not None and last[0] == state:
            return last[1]
        gid, counts = state
        glob = self._g[gid]
        infra = glob.infra
        g = infra.igra
        ready = set(g.ready)
        grads = dict(g.gradient.items_tuple)
        for cls, count in zip(self._classes, counts, strict=True):
            pos = 0
            for lid, n in count:
                is_ready, grad = self._l[lid]
                for c in cls[pos:pos + n]:
                    grads[c] = grad
                    if is_ready:
                        ready.add(c)
                pos += n
        g2 = g._replace(ready=frozenset(ready), gradient=type(g.gradient)(grads))
        out = FLState(type(infra)(g2, infra.prot, infra.poli), *glob[1:])
        self._last = (state, out)
        return out

    def counters(self, state: Any) -> tuple[tuple[tuple[LocalState, int], ...], ...]:
        if isinstance(state, FLState):
            return super().counters(state)
        return tuple(tuple(((self._l[lid][0], tuple(self._l[lid][1])), n) for lid, n in count)
                     for count in state[1])

    # -- the TransitionSystem protocol -------------------------------------------------------------------
    def initial_states(self) -> tuple[Any, ...]:
        return tuple(dict.fromkeys(self.encode(s) for s in self.base.initial_states()))

    def observe(self, state: Any, name: str) -> object:
        return self.base.observe(self.decode(state), name)

    def abstract(self, state: FLState) -> Counters:
        """The counters of a state of the unreduced system (its reductions applied first)."""
        return self.encode(self.base.fl.abstract(state))

    def _outcome_key(self, gid: int, c: str, lid: int) -> tuple[Any, ...]:
        """What a class client's outcomes depend on (the footprint): the global part, the client, its
        local state."""
        return (gid, c, lid)

    def _fill(self, s: FLState, gid: int, c: str, lid: int) -> Any:
        """The outcomes of ``c``'s actions from ``s`` as ``(action, next global id, next local id, p)``,
        or :data:`_NONLOCAL` when one changes another class client's local state."""
        g = s.infra.igra
        out = []
        for act, t, p in self.base.fl.successors(s, skip=self._actors - {c}):
            tg = t.infra.igra
            for cls in self._classes:
                for d in cls:
                    moved = (d in tg.ready) != (d in g.ready) or (
                        tg.gradient[d] is not g.gradient[d] and tg.gradient[d] != g.gradient[d])
                    if d != c and moved:
                        return _NONLOCAL
            gid2, _ = self.encode(t)
            out.append((act, gid2, self._local_id((c in tg.ready, tg.gradient[c])), p))
        return tuple(out)

    def successors(self, state: Any) -> list[Any]:
        gid, counts = state
        s = self.decode(state)
        merged: dict[tuple[object, Any], Fraction] = {}

        def add(act: object, target: Any, p: Fraction) -> None:
            key = (act, target)
            merged[key] = merged[key] + p if key in merged else p

        for act, t, p in self.base.fl.successors(s, skip=self._moved):
            add(act, self.encode(t), p)
        memo = self._outcomes
        for k, (cls, count) in enumerate(zip(self._classes, counts, strict=True)):
            pos = 0
            for lid, n in count:
                c = cls[pos]
                pos += n
                key = self._outcome_key(gid, c, lid)
                entry = memo.get(key)
                if entry is None:
                    entry = memo[key] = self._fill(s, gid, c, lid)
                if entry is _NONLOCAL:
                    for act, t, p in self.base.fl.successors(s, skip=self._actors - {c}):
                        add(act, self.encode(t), p)
                    continue
                for act, gid2, lid2, p in entry:
                    moved = dict(count)
                    moved[lid] -= 1
                    if not moved[lid]:
                        del moved[lid]
                    moved[lid2] = moved.get(lid2, 0) + 1
                    add(act, (gid2, (*counts[:k], tuple(sorted(moved.items())), *counts[k + 1:])), p)
        return [(a, t, p) for (a, t), p in merged.items()]
