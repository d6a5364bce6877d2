"""The exact privacy loss distribution of an observed run, by a forward pass that merges prefixes.

Two finite Markov chains ``C0`` and ``C1`` (one system run on two neighbouring datasets) whose states
emit observations (:class:`ObservedChain`: entering state ``s`` appends ``label(s)`` to what the
attacker has seen, :data:`SILENT` appends nothing; a run ends in a state without successors). What the
attacker observes is the sequence ``o = (o_1, …, o_k)`` of a whole run; the privacy loss of ``o`` is
``L(o) = ln P0(o)/P1(o)`` and its distribution under ``P0`` and ``P1`` (the privacy loss distribution,
PLD, [DRV10]; [KOV15]) gives every figure of pure and approximate DP exactly:
``ε* = max_o |L(o)|`` and ``δ(ε) = max(Σ_o (P0(o) − e^ε P1(o))⁺, Σ_o (P1(o) − e^ε P0(o))⁺)``
([DworkRoth14] §3.5).

Enumerating the sequences costs their number, exponential in the rounds. The forward pass walks the
observed prefixes ``h`` level by level (length 0, 1, …) and keeps, for each chain, the forward vector
``α_i(h, s) = P_i(h, state s after h)`` (the forward algorithm of hidden Markov models). Two prefixes
``h``, ``h'`` with the same *situation* — the same normalised forward vectors (beliefs)
``α_i(h, ·)/P_i(h)`` in both chains and the same likelihood ratio ``P0(h)/P1(h)`` — have the same
future: for every continuation ``c``, ``P_i(hc) = P_i(h) · P_i(c | belief_i)``, so
``P0(hc)/P1(hc) = P0(h'c)/P1(h'c)``. Merging them (adding their masses) therefore keeps the loss of
every sequence and the mass at each loss value: the PLD of the run, of each prefix length, the
distribution of each element and each round's conditional ε are all exact (rationals). The number of
situations is what the cost grows with — in a model whose observation reveals the state (a released
model after each round) it is the number of (state, ratio) pairs, polynomial in the rounds where the
ratios are products of a few per-round factors. Merging prefixes with *different* ratios, or
different beliefs, would be wrong; the tests catch such a merge (``key`` parameter).

Silent steps between two observations are summed out (:meth:`ObservedChain.kernel`); a cycle of
states (silent or not) is refused with :class:`CyclicChain` (the runs would not end, or the sequences
would be unbounded): callers fall back to their own computation.

Generic: knows nothing of FL and never imports ``flmodel`` (the FL application is
:mod:`checker.app.privacy_rounds`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from checker.privacy.ni_fl_dp import END, EpsilonResult, delta_for_epsilon, pure_epsilon

__all__ = ["SILENT", "Atom", "CyclicChain", "Level", "ObservedChain", "Situation", "epsilon_for_delta",
           "forward_pld", "pld_delta", "pld_epsilon", "situation_key"]

#: A belief: the normalised forward vector of one chain, as sorted ``(state, probability)`` pairs
#: (empty when the prefix has probability 0 in that chain).
Belief = tuple[tuple[int, Fraction], ...]
#: ``None`` stands for an infinite ratio (``P1(h) = 0``).
Ratio = Fraction | None
#: The state ``-1`` after an observation of :data:`~checker.privacy.ni_fl_dp.END`.
ENDED = -1


class _Silent:
    """The label of a state that shows the attacker nothing."""

    def __repr__(self) -> str:
        return "SILENT"


#: The label of a silent state (:class:`ObservedChain`).
SILENT: Hashable = _Silent()


class CyclicChain(ValueError):
    """The chain has a cycle among the states a run can reach: runs need not end or their observed
    sequences are unbounded, so no level-by-level pass exists."""


@dataclass(frozen=True)
class ObservedChain:
    """A finite Markov chain with an observation per state: ``initial`` (state, probability) pairs;
    ``rows[s]`` the successors of ``s`` with their exact probabilities (an empty row ends the run, as
    does a row that is only a self-loop); ``labels[s]`` what entering ``s`` shows the attacker
    (:data:`SILENT`: nothing; the initial states show nothing)."""

    initial: tuple[tuple[int, Fraction], ...]
    rows: Sequence[Mapping[int, Fraction]]
    labels: Sequence[Hashable]
    _kernels: dict[int, dict[Hashable, dict[int, Fraction]]] = field(default_factory=dict, repr=False,
                                                                      compare=False)

    def _ends(self, s: int) -> bool:
        row = self.rows[s]
        return not row or (len(row) == 1 and s in row)

    def kernel(self, s: int) -> dict[Hashable, dict[int, Fraction]]:
        """From state ``s``, the distribution of the next observation and the state that shows it:
        ``{observation: {state: probability}}``, silent states summed out; a run that ends before
        another observation gives ``{END: {ENDED: p}}``. Raises :class:`CyclicChain` on a cycle of
        silent states."""
        if s in self._kernels:
            return self._kernels[s]
        # silent closure of the successors, iteratively (runs of hundreds of silent steps)
        closure: dict[int, dict[tuple[Hashable, int], Fraction]] = {}
        on_stack: set[int] = set()

        def pending_of(u: int) -> list[int]:
            return [v for v in self.rows[u] if self.labels[v] is SILENT and v not in closure and v != u]

        starts = [v for v in self.rows[s] if self.labels[v] is SILENT and v != s]
        for start in starts:
            if start in closure:
                continue
            stack = [(start, pending_of(start))]
            on_stack.add(start)
            while stack:
                u, pending = stack[-1]
                if pending:
                    v = pending.pop()
                    if v in on_stack:
                        raise CyclicChain(f"a cycle of silent states through state {v}")
                    if v not in closure:
                        stack.append((v, pending_of(v)))
                        on_stack.add(v)
                    continue
                stack.pop()
                on_stack.discard(u)
                closure[u] = self._combine(u, closure)
        out: dict[Hashable, dict[int, Fraction]] = {}
        for (obs, t), p in self._combine(s, closure).items():
            out.setdefault(obs, {})[t] = p
        self._kernels[s] = out
        return out

    def _combine(self, u: int, closure: Mapping[int, Mapping[tuple[Hashable, int], Fraction]]
                 ) -> dict[tuple[Hashable, int], Fraction]:
        if self._ends(u):
            return {(END, ENDED): Fraction(1)}
        acc: dict[tuple[Hashable, int], Fraction] = {}
        for v, p in self.rows[u].items():
            label = self.labels[v]
            if label is not SILENT:
                acc[(label, v)] = acc.get((label, v), Fraction(0)) + p
                continue
            if v == u:
                raise CyclicChain(f"silent state {u} loops on itself with probability {p} < 1")
            for key, q in closure[v].items():
                acc[key] = acc.get(key, Fraction(0)) + p * q
        return acc


@dataclass(frozen=True)
class Situation:
    """What the future of an observed prefix depends on: the two beliefs and the ratio
    ``P0(h)/P1(h)`` (``None``: infinite; ``0`` when ``P0(h) = 0``)."""

    belief0: Belief
    belief1: Belief
    ratio: Ratio


def situation_key(s: Situation) -> Hashable:
    """The merge key of the exact pass: the whole situation."""
    return s


@dataclass
class Atom:
    """Merged prefixes: their ``ratio`` (``None`` = ∞), total masses ``m0``, ``m1``, how many prefixes
    (``count``), and a representative prefix ``rep`` (the least one in sort order) with its own
    probabilities ``r0``, ``r1``."""

    ratio: Ratio
    m0: Fraction
    m1: Fraction
    count: int
    rep: tuple[Hashable, ...]
    r0: Fraction
    r1: Fraction

    def merge(self, other: Atom) -> None:
        self.m0 += other.m0
        self.m1 += other.m1
        self.count += other.count
        if _before(other.rep, self.rep):
            self.rep, self.r0, self.r1 = other.rep, other.r0, other.r1


def _before(a: tuple[Hashable, ...], b: tuple[Hashable, ...]) -> bool:
    try:
        return bool(a < b)  # type: ignore[operator]  # observations are usually ordered; else by repr
    except TypeError:
        return repr(a) < repr(b)


@dataclass
class Level:
    """The figures of prefix length ``length`` (from 1): ``atoms`` (the PLD of the prefixes of that
    length, sequences that ended earlier included, merged by ratio), ``element`` (the distributions
    of the ``length``-th observation under each chain, :data:`END` for ended runs) and ``conditional``
    (the largest ε* of that observation given a prefix both chains reach: the round's mechanism,
    :func:`checker.privacy.ni_fl_dp.per_round_epsilons`; ``None`` when no prefix is reached by both)."""

    length: int
    atoms: list[Atom]
    element: tuple[dict[Hashable, Fraction], dict[Hashable, Fraction]]
    conditional: EpsilonResult | None
    situations: int


def _normalise(vec: Mapping[int, Fraction], total: Fraction) -> Belief:
    return tuple(sorted((s, p / total) for s, p in vec.items()))


def _step(belief: Belief, chain: ObservedChain) -> dict[Hashable, dict[int, Fraction]]:
    """``{observation: unnormalised next forward vector}`` from a belief."""
    out: dict[Hashable, dict[int, Fraction]] = {}
    for s, p in belief:
        for obs, targets in chain.kernel(s).items():
            row = out.setdefault(obs, {})
            for t, q in targets.items():
                row[t] = row.get(t, Fraction(0)) + p * q
    return out


def _ratio(m0: Fraction, m1: Fraction) -> Ratio:
    return None if m1 == 0 else m0 / m1


def _by_ratio(atoms: Sequence[Atom]) -> list[Atom]:
    merged: dict[Ratio, Atom] = {}
    for a in atoms:
        if a.ratio in merged:
            merged[a.ratio].merge(a)
        else:
            merged[a.ratio] = Atom(a.ratio, a.m0, a.m1, a.count, a.rep, a.r0, a.r1)
    return list(merged.values())


def forward_pld(c0: ObservedChain, c1: ObservedChain, *,
                key: Callable[[Situation], Hashable] = situation_key,
                progress: Callable[[int, int], None] | None = None) -> list[Level]:
    """The :class:`Level` of every prefix length ``1..k`` of the observed runs of ``c0`` and ``c1``
    (``k`` the longest sequence either charges), by the merged forward pass of the module docstring.

    ``key``: what prefixes are merged by (default the whole :class:`Situation`, which is exact; a
    coarser key is wrong and is there for the tests). ``progress(length, situations)`` is called after
    each level. Raises :class:`CyclicChain` when the runs' observations have no bound."""
    def initial(c: ObservedChain) -> dict[int, Fraction]:
        vec: dict[int, Fraction] = {}
        for s, p in c.initial:
            vec[s] = vec.get(s, Fraction(0)) + p
        return vec

    v0, v1 = initial(c0), initial(c1)
    start = Situation(_normalise(v0, sum(v0.values(), Fraction(0))),
                      _normalise(v1, sum(v1.values(), Fraction(0))), Fraction(1))
    frontier: dict[Hashable, tuple[Situation, Atom]] = {
        key(start): (start, Atom(Fraction(1), Fraction(1), Fraction(1), 1, (), Fraction(1), Fraction(1)))}
    ended: list[Atom] = []
    levels: list[Level] = []
    length = 0
    # each observation enters a new state: in a chain without cycles no sequence is longer than that
    max_levels = max(len(c0.rows), len(c1.rows))
    while frontier:
        if length > max_levels:
            raise CyclicChain(f"observed sequences longer than {max_levels}: a cycle of observations")
        nxt: dict[Hashable, tuple[Situation, Atom]] = {}
        elem: tuple[dict[Hashable, Fraction], dict[Hashable, Fraction]] = ({}, {})
        for a in ended:  # runs that ended before: their next element is END
            for e, m in zip(elem, (a.m0, a.m1), strict=True):
                if m:
                    e[END] = e.get(END, Fraction(0)) + m
        conditional: EpsilonResult | None = None
        now_ended: list[Atom] = []
        for sit, atom in frontier.values():
            out0 = _step(sit.belief0, c0) if atom.m0 else {}
            out1 = _step(sit.belief1, c1) if atom.m1 else {}
            cond0 = {o: sum(v.values(), Fraction(0)) for o, v in out0.items()}
            cond1 = {o: sum(v.values(), Fraction(0)) for o, v in out1.items()}
            for e, cond, m in ((elem[0], cond0, atom.m0), (elem[1], cond1, atom.m1)):
                for o, p in cond.items():
                    e[o] = e.get(o, Fraction(0)) + m * p
            if atom.m0 and atom.m1:
                res = pure_epsilon(cond0, cond1)
                res = EpsilonResult(res.epsilon, res.ratio, (atom.rep, res.outcome), res.direction, res.p0,
                                    res.p1, res.exact)
                if conditional is None or _larger(res, conditional, atom.rep):
                    conditional = res
            for o in sorted(set(cond0) | set(cond1), key=repr):
                p0, p1 = cond0.get(o, Fraction(0)), cond1.get(o, Fraction(0))
                m0, m1 = atom.m0 * p0, atom.m1 * p1
                if o == END:
                    now_ended.append(Atom(_ratio(m0, m1), m0, m1, atom.count, atom.rep, atom.r0 * p0,
                                          atom.r1 * p1))
                    continue
                sit2 = Situation(_normalise(out0[o], p0) if p0 else (),
                                 _normalise(out1[o], p1) if p1 else (), _ratio(m0, m1))
                child = Atom(sit2.ratio, m0, m1, atom.count, (*atom.rep, o), atom.r0 * p0, atom.r1 * p1)
                k = key(sit2)
                if k in nxt:
                    nxt[k][1].merge(child)
                else:
                    nxt[k] = (sit2, child)
        length += 1
        ended.extend(now_ended)
        if not nxt:  # every run ended: no element at this length
            break
        for _, a in nxt.values():  # a wrong key may merge different ratios: the atom's is its masses'
            a.ratio = _ratio(a.m0, a.m1)
        atoms = _by_ratio([a for _, a in nxt.values()] + ended)
        levels.append(Level(length, atoms, elem, conditional, len(nxt)))
        frontier = nxt
        if progress is not None:
            progress(length, len(nxt))
    return levels


def _larger(a: EpsilonResult, b: EpsilonResult, rep: tuple[Hashable, ...]) -> bool:
    """Whether the conditional ε ``a`` replaces the best so far ``b`` (ties: the smaller prefix, as
    :func:`~checker.privacy.ni_fl_dp.per_round_epsilons` goes through prefixes in order)."""
    if b.ratio is None:
        return a.ratio is None and _before(rep, b.outcome[0])  # type: ignore[index]
    if a.ratio is None:
        return True
    if a.ratio != b.ratio:
        return a.ratio > b.ratio
    return _before(rep, b.outcome[0])  # type: ignore[index]


def _dists(atoms: Sequence[Atom]) -> tuple[dict[Hashable, Fraction], dict[Hashable, Fraction]]:
    """The atoms as two distributions over their representatives: the loss of each representative is
    that of every prefix it stands for, so every figure of the pair is that of the run."""
    p0 = {a.rep: a.m0 for a in atoms if a.m0}
    p1 = {a.rep: a.m1 for a in atoms if a.m1}
    return p0, p1


def pld_epsilon(atoms: Sequence[Atom]) -> EpsilonResult:
    """ε* of a PLD: the largest ``|ln ratio|``, with the representative prefix of the worst atom and
    its own probabilities (as :func:`~checker.privacy.ni_fl_dp.pure_epsilon` reports an outcome)."""
    p0, p1 = _dists(atoms)
    res = pure_epsilon(p0, p1)
    if res.outcome is None:
        return res
    (atom,) = [a for a in atoms if a.rep == res.outcome]
    return EpsilonResult(res.epsilon, res.ratio, res.outcome, res.direction, atom.r0, atom.r1, res.exact)


def pld_delta(atoms: Sequence[Atom], eps: object) -> Fraction | float:
    """``δ(ε)`` of a PLD (both directions), exact when ``e^ε`` is rational
    (:func:`~checker.privacy.ni_fl_dp.delta_for_epsilon` over the atoms)."""
    p0, p1 = _dists(atoms)
    return delta_for_epsilon(p0, p1, eps)  # type: ignore[arg-type]


def epsilon_for_delta(p0: Mapping[Hashable, Fraction], p1: Mapping[Hashable, Fraction],
                      delta: Fraction) -> Ratio:
    """The least ``e^ε ≥ 1`` with ``δ(ε) ≤ delta`` (both directions): a rational, as ``E_α(P‖Q) =
    Σ_{P/Q > α} (P − α Q)`` is piecewise linear in ``α`` with rational pieces; ``None`` (ε = ∞) when
    the mass of outcomes ``Q`` does not charge exceeds ``delta``.

    >>> epsilon_for_delta({"a": Fraction(3, 4), "b": Fraction(1, 4)},
    ...                   {"a": Fraction(1, 4), "b": Fraction(3, 4)}, Fraction(1, 4))
    Fraction(2, 1)
    """
    best = Fraction(1)
    for p, q in ((p0, p1), (p1, p0)):
        a = sum((p[o] for o in p if not q.get(o)), Fraction(0))  # the outcomes of ratio ∞
        if a > delta:
            return None
        b = Fraction(0)
        finite = sorted(((p[o], q[o]) for o in p if q.get(o) and p[o]), key=lambda x: x[0] / x[1],
                        reverse=True)
        alpha = Fraction(0)
        for x, y in finite:
            r = x / y
            # E_α = a − α b on the segment below the previous ratio and above r (a, b: ratios > α)
            if a - r * b > delta:
                alpha = (a - delta) / b
                break
            a += x
            b += y
        else:
            alpha = (a - delta) / b if b and a > delta else Fraction(0)
        best = max(best, alpha)
    return best
