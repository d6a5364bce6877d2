"""An integer-coded view of an :class:`~flmodel.system.FLSystem` whose successors are computed for many
states at once with numpy (the checker's batch explorer, ``checker.mc.explore_batch``, reads it).

What it covers, exactly: the round-based FedAvg variant ``fedavg_rounds`` ([IIIf-FL] III-B with
flcheck's rounds, :mod:`flmodel.rules`) with the ``drop`` trace abstraction and the data deployed from
the start (so ``put_part_once`` never fires), any noise per client, policies, the rounds and events
bounds and the dead-value reset (``reset_unready``). :func:`batch_view` refuses everything else with a
reason (the literal trace sets, the published rules, a network, data deployed by ``put_part_once``, the
cone of influence's forgotten values, the gradient sum), and the caller explores the system as usual.

A state is a row of small integers::

    round, events, last, prot, model, client_1, ..., client_N

``last`` indexes the rule names (``"none"`` first), ``prot`` the protocols seen (under ``drop`` there
are at most two), ``model`` the interned vectors, and ``client_i`` is ``2·g + r`` for client ``i``'s
gradient ``g`` (an interned vector) and ``r = 1`` when it is in ``ready``; everything else of the state
(``gra``, ``aloc``, ``server``, ``clients``, ``partition``, ``dataset``, ``poli``, ``partitioned``)
never changes under these rules. Interned vectors are equal exactly when their ids are, so rows are a
canonical code of the states.

The steps of a row are those of :meth:`FLSystem.successors`, in its order (the rules' order, then the
clients' sorted names, then the outcomes' order):

* ``get_grad_round`` of an unready client ``c``: its outcomes depend only on ``c``, the model and the
  protocol (the rule's footprint, :meth:`FLSystem.action_classes`), so they are computed once per
  ``(c, model, protocol)`` by asking the system itself for the successors of a representative state
  in which only ``c`` is unready — every outcome's action, probability, reported value and protocol
  is read off those steps, and each step is checked to change nothing but ``ready``, ``gradient c``,
  the protocol, ``last`` and ``events``;
* ``eval_round`` when every client is ready: ``Newmodel = Σ_c (card (partition G c) / n) · gradient
  G c`` (``n = card (dataset G)``, ``x/0 = 0``; :func:`flmodel.rules.new_model`) computed for all such
  rows at once as an integer sum over a common denominator per coordinate; its action, probability,
  protocol and whether the policy lets it fire are read off the system's own step from a
  representative state (per protocol), whose new model the vectorised sum must reproduce;
  ``ready := ∅``, ``round + 1`` and, with the dead-value reset, the reset clients' gradients back to
  their initial values.

No state is bounded out or merged differently from :class:`FLSystem`: a row is active while
``round < max_rounds`` and ``events < max_events``, and the targets are not merged (two outcomes with
equal targets stay two edges, as in the system).

Observables are the observer's (the :class:`FLSystem` or the scenario's system wrapping it), read on
decoded states; :meth:`FastFL.observe_rows` computes a whole column from the rows by observing one
decoded row per distinct value of the columns the observable reads (the observer's
``variable_reads``), and ``enabled:r`` from the rows' steps.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from fractions import Fraction
from typing import Any, NamedTuple, TypeVar

import numpy as np
from flcheck_spec.vocab import Action

from flmodel.frozen import FrozenMap
from flmodel.infrastructure import Igraph, Infrastructure, Protocol
from flmodel.learning import Vec, Vector
from flmodel.rules import FEDAVG_ROUNDS
from flmodel.system import FLState
from flmodel.view import FLView

#: Columns of a row before the clients' columns.
ROUND, EVENTS, LAST, PROT, MODEL = range(5)
FIRST_CLIENT = 5

_INT64_SAFE = 1 << 62
T = TypeVar("T")
#: Variables (:class:`flmodel.system.ActionClass`) with a column of their own, and those these rules never
#: change.
_COLUMN_OF = {"round": ROUND, "events": EVENTS, "last": LAST, "evs": PROT, "curmodpar": MODEL}
_CONSTANT = frozenset({"dataset", "partitioned", "aloc", "poli"})


class Steps(NamedTuple):
    """The steps from a batch of rows (the checker's ``BatchSteps``): per edge the source row's index
    in the batch, the action id, the target row and the probability id."""

    source: np.ndarray
    action: np.ndarray
    target: np.ndarray
    probability: np.ndarray


class Interned(list[T]):
    """A table of distinct values: :meth:`id` is a value's index, the value appended when it is new."""

    def __init__(self) -> None:
        super().__init__()
        self._ids: dict[T, int] = {}

    def id(self, value: T) -> int:
        """The index of ``value`` (added at the end when new)."""
        i = self._ids.get(value)
        if i is None:
            i = self._ids[value] = len(self)
            self.append(value)
        return i


class _Outcomes(NamedTuple):
    """The flattened ``get_grad`` outcome table: per entry the reported value's id, probability id,
    action id, protocol id and ``last`` id."""

    value: list[int]
    probability: list[int]
    action: list[int]
    prot: list[int]
    last: list[int]


def batch_view(fl: FLView, observer: Any = None) -> FastFL | str:
    """The integer-coded view of ``fl`` (observables read through ``observer``, default ``fl``), or
    the reason it is refused (see the module docstring)."""
    if fl.rules != FEDAVG_ROUNDS:  # the declarations themselves: a changed or added rule is refused
        return "only the round-based rules fedavg_rounds are coded as integers"
    if fl.ctx.trace_mode != "drop":
        return "the literal trace sets (traces full) are not coded as integers"
    if not fl.initial_partitioned:
        return "data deployed by put_part_once are not coded as integers"
    if fl.forgotten or fl.sums_gradients:
        return "the cone of influence and the gradient sum are not coded as integers"
    if fl.initial.igra.gra.status is not None:
        return "a time-varying topology is not coded as integers"
    return FastFL(fl, fl if observer is None else observer)


class FastFL:
    """The integer-coded view of an FL system (see the module docstring); the checker's
    ``BatchTransitionSystem``. Build it with :func:`batch_view`, which refuses what it does not cover."""

    def __init__(self, fl: FLView, observer: Any):
        self.fl = fl
        self._observer = observer
        (s0,) = fl.initial_states()
        g = s0.infra.igra
        self._clients: tuple[str, ...] = fl.clients
        self._n = len(self._clients)
        self.width = FIRST_CLIENT + self._n
        self._const = (g.gra, g.aloc, g.server, g.clients)
        self._partition, self._dataset = g.partition, g.dataset
        self._poli = s0.infra.poli
        self._partitioned = s0.partitioned
        self._max_rounds = fl.bounds.max_rounds
        self._max_events = fl.bounds.max_events
        self.actions: Interned[Action] = Interned()
        self.probabilities: Interned[Fraction] = Interned()
        self._vecs: Interned[Vector] = Interned()
        self._prots: Interned[Protocol] = Interned()
        self._lasts: Interned[str] = Interned()
        self._ready_sets: dict[tuple[bool, ...], frozenset[str]] = {}
        self._out = _Outcomes([], [], [], [], [])
        self._out_arrays: tuple[np.ndarray, ...] | None = None
        self._start = np.full((self._n, 1, 1), -1, dtype=np.int64)  # client, model, prot -> entry
        self._count = np.zeros((self._n, 1, 1), dtype=np.int64)
        self._eval = np.full((1, 5), -2, dtype=np.int64)  # prot -> enabled?, action, prob, prot', last
        self._sizes = np.array([len(g.part(c)) for c in self._clients], dtype=np.int64)
        self._dim = len(g.curmodpar)
        self._numerators: tuple[int, list[int], list[np.ndarray]] | None = None
        self._initial_value = np.array([self._vecs.id(g.gradient[c]) for c in self._clients], dtype=np.int64)
        reset = set(fl.reset_unready)
        self._reset = np.array([c in reset for c in self._clients], dtype=bool)
        self._lasts.id("none")
        self._initial = self.encode(s0)
        if self.decode(self._initial) != s0:
            raise AssertionError("the integer code of the initial state does not decode to it")

    # -- coding ------------------------------------------------------------------------------------

    def encode(self, state: FLState) -> np.ndarray:
        """The row of ``state`` (a state of this system)."""
        g = state.infra.igra
        row = [state.round, state.events, self._lasts.id(state.last), self._prots.id(state.infra.prot),
               self._vecs.id(g.curmodpar)]
        row += [2 * self._vecs.id(g.gradient[c]) + (c in g.ready) for c in self._clients]
        return np.array(row, dtype=np.int32)

    def decode(self, row: np.ndarray) -> FLState:
        """The state a row codes (equal to the system's own state object)."""
        r = row.tolist()
        vecs = self._vecs
        cols = r[FIRST_CLIENT:]
        bits = tuple(bool(x & 1) for x in cols)
        ready = self._ready_sets.get(bits)
        if ready is None:
            ready = frozenset(c for c, b in zip(self._clients, bits, strict=True) if b)
            self._ready_sets[bits] = ready
        gradient = FrozenMap(zip(self._clients, (vecs[x >> 1] for x in cols), strict=True))
        gra, aloc, server, clients = self._const
        g = Igraph(gra, aloc, server, clients, ready, gradient, vecs[r[MODEL]], self._partition,
                   self._dataset)
        infra = Infrastructure(g, self._prots[r[PROT]], self._poli)
        return FLState(infra, r[ROUND], r[EVENTS], self._lasts[r[LAST]], self._partitioned)

    def initial_rows(self) -> np.ndarray:
        """The initial state's row."""
        return self._initial.reshape(1, -1).copy()

    # -- the rules, once per (client, model, protocol) ---------------------------------------------

    def _representative(self, ready: Sequence[str], model: int, prot: int) -> FLState:
        """A state with these ready clients, model and protocol, the initial gradients, round and
        events 0 (within the bounds whenever a row is)."""
        gra, aloc, server, clients = self._const
        grads = FrozenMap({c: self._vecs[int(v)] for c, v in zip(self._clients, self._initial_value,
                                                                   strict=True)})
        g = Igraph(gra, aloc, server, clients, frozenset(ready), grads, self._vecs[model], self._partition,
                   self._dataset)
        return FLState(Infrastructure(g, self._prots[prot], self._poli), 0, 0, "none", self._partitioned)

    def _update_entry(self, ci: int, model: int, prot: int) -> None:
        """The outcomes of ``get_grad_round`` of client ``ci`` at ``model`` and ``prot``, from the system's
        own steps of a representative state."""
        c = self._clients[ci]
        rep = self._representative([d for d in self._clients if d != c], model, prot)
        start = len(self._out.value)
        out = self._out
        events = 1 if self._max_events is not None else 0
        for act, target, p in self.fl.successors(rep):
            v = target.infra.igra.gradient[c]
            expected = rep._replace(
                infra=Infrastructure(rep.infra.igra._replace(ready=rep.infra.igra.clients,
                                                             gradient=rep.infra.igra.gradient.set(c, v)),
                                     target.infra.prot, self._poli),
                events=events, last=act.rule)
            if act.actor != c or target != expected:
                raise AssertionError(f"step {act} of {c} changes more than its footprint states")
            out.value.append(self._vecs.id(v))
            out.probability.append(self.probabilities.id(p))
            out.action.append(self.actions.id(act))
            out.prot.append(self._prots.id(target.infra.prot))
            out.last.append(self._lasts.id(act.rule))
        self._start[ci, model, prot] = start
        self._count[ci, model, prot] = len(out.value) - start
        self._out_arrays = None

    def _eval_entry(self, prot: int) -> None:
        """Whether ``eval_round`` fires at ``prot`` (every client ready), with its action, probability,
        protocol and ``last``, from the system's own step of a representative state; its new model
        must be the vectorised sum's."""
        rep = self._representative(self._clients, self._vecs.id(self.fl.initial.igra.curmodpar), prot)
        steps = self.fl.successors(rep)
        if not steps:
            self._eval[prot] = (0, -1, -1, -1, -1)
            return
        ((act, target, p),) = steps
        model = self._new_models(np.array([self._initial_value], dtype=np.int64))[0]
        g = rep.infra.igra
        grads = g.gradient
        for ci, c in enumerate(self._clients):
            if self._reset[ci]:
                grads = grads.set(c, self._vecs[int(self._initial_value[ci])])
        expected = rep._replace(infra=Infrastructure(g._replace(ready=frozenset(), gradient=grads,
                                                                curmodpar=self._vecs[model]),
                                                     target.infra.prot, self._poli),
                                round=1, events=1 if self._max_events is not None else 0, last=act.rule)
        if target != expected:
            raise AssertionError(f"step {act} does not aggregate as eval_round")
        self._eval[prot] = (1, self.actions.id(act), self.probabilities.id(p),
                            self._prots.id(target.infra.prot), self._lasts.id(act.rule))

    def _grow(self, models: int, prots: int) -> None:
        """Room in the entry tables for ``models`` model ids and ``prots`` protocol ids."""
        n, m0, p0 = self._start.shape
        if models > m0 or prots > p0:
            shape = (n, max(models, 2 * m0), max(prots, p0))
            start = np.full(shape, -1, dtype=np.int64)
            count = np.zeros(shape, dtype=np.int64)
            start[:, :m0, :p0] = self._start
            count[:, :m0, :p0] = self._count
            self._start, self._count = start, count
        if prots > len(self._eval):
            ev = np.full((max(prots, 2 * len(self._eval)), 5), -2, dtype=np.int64)
            ev[: len(self._eval)] = self._eval
            self._eval = ev

    # -- FedAvg over many rows ---------------------------------------------------------------------

    def _new_models(self, values: np.ndarray) -> np.ndarray:
        """The model ids of ``Newmodel = Σ_c (k_c / n) · gradient c`` for rows of gradient ids
        ``values`` (shape ``(m, N)``): per coordinate ``i`` the values are integers ``a_v`` over one
        denominator ``L_i`` (the lcm of the interned values' denominators), the sum
        ``Σ_c k_c · a_{v_c}`` is taken in int64 (or in Python integers where it might not fit) and
        ``Newmodel_i = sum / (L_i · n)`` (``0`` when ``n = 0``)."""
        n = len(self._dataset)
        m = len(values)
        if n == 0 or m == 0:
            zero = self._vecs.id(Vec((Fraction(0),) * self._dim))
            return np.full(m, zero, dtype=np.int64)
        if self._numerators is None or self._numerators[0] != len(self._vecs):
            dens = [math.lcm(*(v[i].denominator for v in self._vecs)) for i in range(self._dim)]
            nums = []
            for i, den in enumerate(dens):
                col = [v[i].numerator * (den // v[i].denominator) for v in self._vecs]
                wide = max((abs(x) for x in col), default=0) * max(int(self._sizes.sum()), 1) >= _INT64_SAFE
                nums.append(np.array(col, dtype=object if wide else np.int64))
            self._numerators = (len(self._vecs), dens, nums)
        _, dens, nums = self._numerators
        sums = np.stack([(nums[i][values] * self._sizes).sum(axis=1) for i in range(self._dim)], axis=1)
        if sums.dtype == object:
            keyed = [tuple(r) for r in sums.tolist()]
            uniq = list(dict.fromkeys(keyed))
            pos = {k: j for j, k in enumerate(uniq)}
            inverse = np.array([pos[k] for k in keyed], dtype=np.int64)
            rows = uniq
        else:
            u, inverse = np.unique(sums, axis=0, return_inverse=True)
            inverse = inverse.reshape(-1)
            rows = [tuple(r) for r in u.tolist()]
        ids = np.array([self._vecs.id(Vec(Fraction(int(s), dens[i] * n) for i, s in enumerate(r)))
                        for r in rows], dtype=np.int64)
        result: np.ndarray = ids[inverse]
        return result

    # -- the successors of a batch -----------------------------------------------------------------

    def successors_batch(self, rows: np.ndarray) -> Steps:
        """The steps of every row, in the order of :meth:`FLSystem.successors` (module docstring)."""
        m = len(rows)
        if len(self._vecs) >= 1 << 30 or len(self._prots) >= 1 << 31:
            raise OverflowError("more interned values than an int32 row column holds")
        active = np.ones(m, dtype=bool)
        if self._max_rounds is not None:
            active &= rows[:, ROUND] < self._max_rounds
        if self._max_events is not None:
            active &= rows[:, EVENTS] < self._max_events
        cols = rows[:, FIRST_CLIENT:]
        ready = (cols & 1).astype(bool)
        self._grow(len(self._vecs), len(self._prots))
        parts = [self._reports(rows, active, ready), self._aggregations(rows, active, ready)]
        parts = [p for p in parts if len(p.source)]
        if not parts:
            return Steps(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, self.width), rows.dtype),
                         np.zeros(0, np.int64))
        if len(parts) == 1:
            return parts[0]
        source = np.concatenate([p.source for p in parts])
        order = np.argsort(source, kind="stable")
        return Steps(source[order], np.concatenate([p.action for p in parts])[order],
                     np.concatenate([p.target for p in parts])[order],
                     np.concatenate([p.probability for p in parts])[order])

    def _reports(self, rows: np.ndarray, active: np.ndarray, ready: np.ndarray) -> Steps:
        """``get_grad_round`` of every unready client of every active row (row-major: by row, then
        client, then outcome)."""
        ps, pc = np.nonzero(~ready & active[:, None])
        model = rows[ps, MODEL]
        prot = rows[ps, PROT]
        start = self._start[pc, model, prot]
        missing = start < 0
        if missing.any():
            todo = np.unique(np.stack([pc[missing], model[missing], prot[missing]], axis=1), axis=0)
            for ci, mi, pi in todo.tolist():
                self._update_entry(ci, mi, pi)
            self._grow(len(self._vecs), len(self._prots))
            start = self._start[pc, model, prot]
        count = self._count[pc, model, prot]
        if self._out_arrays is None:
            self._out_arrays = tuple(np.array(col, dtype=np.int64) for col in self._out)
        value, prob, action, new_prot, last = self._out_arrays
        pair = np.repeat(np.arange(len(ps)), count)
        offset = np.cumsum(count) - count
        entry = start[pair] + np.arange(len(pair)) - offset[pair]
        source = ps[pair]
        target = np.take(rows, source, axis=0)
        target[np.arange(len(pair)), FIRST_CLIENT + pc[pair]] = 2 * value[entry] + 1
        target[:, PROT] = new_prot[entry]
        target[:, LAST] = last[entry]
        if self._max_events is not None:
            target[:, EVENTS] += 1
        return Steps(source, action[entry], target, prob[entry])

    def _aggregations(self, rows: np.ndarray, active: np.ndarray, ready: np.ndarray) -> Steps:
        """``eval_round`` of every active row whose clients are all ready and whose protocol lets it
        fire."""
        candidates = np.flatnonzero(active & ready.all(axis=1)) if self._n else np.zeros(0, np.int64)
        prot = rows[candidates, PROT]
        for pi in np.unique(prot[self._eval[prot, 0] == -2]).tolist():
            self._eval_entry(pi)
        source = candidates[self._eval[prot, 0] == 1]
        info = self._eval[rows[source, PROT]]
        target = np.take(rows, source, axis=0)
        values = target[:, FIRST_CLIENT:] >> 1
        target[:, MODEL] = self._new_models(values)
        target[:, FIRST_CLIENT:] = np.where(self._reset, 2 * self._initial_value, 2 * values)
        target[:, ROUND] += 1
        target[:, PROT] = info[:, 3]
        target[:, LAST] = info[:, 4]
        if self._max_events is not None:
            target[:, EVENTS] += 1
        return Steps(source, info[:, 1], target, info[:, 2])

    # -- observables -------------------------------------------------------------------------------

    def observe_rows(self, rows: np.ndarray, name: str) -> list[object] | None:
        """The values of observable ``name`` on every row, or ``None`` when they are not computed here.

        An observable that reads (the observer's ``variable_reads``) only variables with a column —
        ``round``, ``events``, ``last``, ``evs`` (the protocol), ``curmodpar``, ``ready:c``,
        ``gradient:c`` — and ones these rules never change (``dataset``, ``partition:c``,
        ``partitioned``, ``aloc``, ``poli``) has one value per distinct projection of the rows on those
        columns: it is observed on one decoded row per projection. ``enabled:r`` holds on the rows
        with a step of rule ``r`` (:meth:`successors_batch`)."""
        rule = self._enabled_rule(name)
        if rule is not None:
            return self._enabled_column(rows, rule)
        reads_of = getattr(self._observer, "variable_reads", None)
        reads = None if reads_of is None else reads_of(name)
        if reads is None:
            return None
        keys: list[np.ndarray] = []
        for var in sorted(reads):
            kind, _, client = var.partition(":")
            if var in _COLUMN_OF:
                keys.append(rows[:, _COLUMN_OF[var]])
            elif kind in ("ready", "gradient") and client in self._clients:
                col = rows[:, FIRST_CLIENT + self._clients.index(client)]
                keys.append(col & 1 if kind == "ready" else col >> 1)
            elif var not in _CONSTANT and kind != "partition":
                return None
        if not len(rows):
            return []
        if not keys:
            value = self.observe(self.decode(rows[0]), name)
            return [value] * len(rows)
        _, first, inverse = np.unique(np.stack(keys, axis=1), axis=0, return_index=True, return_inverse=True)
        values = [self.observe(self.decode(rows[i]), name) for i in first.tolist()]
        return [values[i] for i in inverse.reshape(-1).tolist()]

    def _enabled_rule(self, name: str) -> str | None:
        """The rule ``r`` of an observable ``enabled:r`` (``enabled_r`` for a scenario's observer)."""
        if name not in self.observable_names():
            return None
        for r in self.fl.rule_names:
            if name in (f"enabled:{r}", f"enabled_{r}"):
                return r
        return None

    def _enabled_column(self, rows: np.ndarray, rule: str, slice_rows: int = 1 << 14) -> list[object]:
        out = np.zeros(len(rows), dtype=bool)
        for a in range(0, len(rows), slice_rows):
            steps = self.successors_batch(rows[a: a + slice_rows])
            mine = np.array([act.rule == rule for act in self.actions], dtype=bool)
            if len(steps.source):
                out[a + steps.source[mine[steps.action]]] = True
        return out.tolist()

    def observable_names(self) -> Sequence[str]:
        """The observer's observables."""
        names: Sequence[str] = self._observer.observable_names()
        return names

    def observe(self, state: Hashable, name: str) -> object:
        """The observer's value of ``name`` on a decoded state."""
        return self._observer.observe(state, name)
