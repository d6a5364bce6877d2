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

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from checker.privacy.ni_fl_dp import END, EpsilonResult, pure_epsilon
from checker.privacy.pld_figures import (
    Atom,
    Ratio,
    by_ratio,
    epsilon_for_delta,
    pld_delta,
    pld_epsilon,
    pld_pair,
    ratio_key,
    rep_before,
)

__all__ = ["SILENT", "Atom", "CyclicChain", "ForwardPass", "Level", "ObservedChain", "epsilon_for_delta",
           "forward_pld", "pld_delta", "pld_epsilon", "pld_pair", "ratio_key"]

#: A belief: the normalised forward vector of one chain, as sorted ``(state, probability)`` pairs
#: (empty when the prefix has probability 0 in that chain).
Belief = tuple[tuple[int, Fraction], ...]
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


@dataclass
class _Group:
    """The prefixes of one level that share a pair of beliefs: their atoms by merge key (``None``
    once the pass keeps no ratios), total masses and count, and the atoms of the largest and the
    smallest ratio (what ε* needs when the ratios are no longer kept)."""

    atoms: dict[Hashable, Atom] | None
    m0: Fraction = Fraction(0)
    m1: Fraction = Fraction(0)
    count: int = 0
    hi: Atom | None = None
    lo: Atom | None = None
    #: how many prefixes each chain charges
    count0: int = 0
    count1: int = 0

    def add(self, a: Atom, key: Callable[[Ratio], Hashable] | None) -> None:
        self.m0 += a.m0
        self.m1 += a.m1
        self.count += a.count
        self.count0 += a.count if a.m0 else 0
        self.count1 += a.count if a.m1 else 0
        if self.atoms is not None and key is not None:
            k = key(a.ratio)
            if k in self.atoms:
                self.atoms[k].merge(a)
            else:
                self.atoms[k] = a
            return
        self.extreme(a)

    def extreme(self, a: Atom) -> None:
        """Keep ``a`` if its ratio is the largest or the smallest so far."""
        if self.hi is None or _wins(a, self.hi, 1):
            self.hi = a
        if self.lo is None or _wins(a, self.lo, -1):
            self.lo = a

    def forget_ratios(self) -> None:
        """Keep only the totals and the extreme atoms."""
        if self.atoms is not None:
            for a in self.atoms.values():
                self.extreme(a)
            self.atoms = None


def _wins(a: Atom, b: Atom, sign: int) -> bool:
    """Whether ``a`` replaces ``b`` as the atom of the largest (``sign`` 1) or smallest ratio
    (ties: the least representative)."""
    ra = math.inf if a.ratio is None else a.ratio
    rb = math.inf if b.ratio is None else b.ratio
    if ra != rb:
        return (ra > rb) if sign > 0 else (ra < rb)
    return rep_before(a.rep, b.rep)


@dataclass
class Level:
    """The figures of prefix length ``length`` (from 1): ``epsilon`` (ε* of the prefixes of that
    length, sequences that ended earlier included; exact), ``atoms`` (their PLD merged by ratio;
    ``None`` past the pass's ``max_atoms``), ``element`` (the distributions of the ``length``-th
    observation under each chain, :data:`END` for ended runs), ``conditional`` (the largest ε* of that
    observation given a prefix both chains reach: the round's mechanism,
    :func:`checker.privacy.ni_fl_dp.per_round_epsilons`; ``None`` when no prefix is reached by both)
    and ``situations`` (pairs of beliefs, and atoms when kept)."""

    length: int
    epsilon: EpsilonResult
    atoms: list[Atom] | None
    element: tuple[dict[Hashable, Fraction], dict[Hashable, Fraction]]
    conditional: EpsilonResult | None
    situations: int
    beliefs: int
    #: how many prefixes of this length (runs that ended earlier included) each chain charges
    outcomes: tuple[int, int] = (0, 0)
    #: the observations of a representative (:attr:`Atom.rep`)
    decode: Callable[[tuple[int, ...]], tuple[Hashable, ...]] = field(default=tuple, repr=False)


@dataclass
class ForwardPass:
    """The result of :func:`forward_pld`: the :class:`Level` of each prefix length computed, whether
    they are all of them (``complete``; else ``stopped`` says why) and the largest number of atoms and
    of belief pairs a level held."""

    levels: list[Level]
    complete: bool
    stopped: str | None = None

    @property
    def exact_levels(self) -> int:
        """How many levels (from the first) have their whole PLD."""
        n = 0
        for lv in self.levels:
            if lv.atoms is None:
                break
            n += 1
        return n


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


#: ``(observation, its rank, next beliefs' ids, p0, p1, p0/p1)``
Transition = tuple[Hashable, int, int, int, Fraction, Fraction, Ratio]


class _Beliefs:
    """Interns beliefs (a pair of them is a level's group key) and observations (a representative
    prefix is the tuple of its observations' ranks, in the order of the observations)."""

    def __init__(self, c0: ObservedChain, c1: ObservedChain) -> None:
        self.c0, self.c1 = c0, c1
        self.ids: dict[Belief, int] = {(): 0}
        labels = {x for c in (c0, c1) for x in c.labels if x is not SILENT}
        try:
            self.order: list[Hashable] = sorted(labels)  # type: ignore[type-var]
        except TypeError:
            self.order = sorted(labels, key=repr)
        self.rank = {x: i for i, x in enumerate(self.order)}

    def intern(self, b: Belief) -> int:
        if b not in self.ids:
            self.ids[b] = len(self.ids)
        return self.ids[b]

    def decode(self, rep: tuple[int, ...]) -> tuple[Hashable, ...]:
        return tuple(self.order[i] for i in rep)

    def own(self, atom: Atom) -> tuple[Fraction, Fraction]:
        """The probabilities of the representative of ``atom`` in each chain (the forward algorithm
        along it; for a whole run, times the probability of ending there)."""
        seq = self.decode(atom.rep)
        out: list[Fraction] = []
        for c in (self.c0, self.c1):
            vec: dict[int, Fraction] = {}
            for s, p in c.initial:
                vec[s] = vec.get(s, Fraction(0)) + p
            for o in (*seq, *((END,) if atom.whole else ())):
                nxt: dict[int, Fraction] = {}
                for s, p in vec.items():
                    for t, q in c.kernel(s).get(o, {}).items():
                        nxt[t] = nxt.get(t, Fraction(0)) + p * q
                vec = nxt
            out.append(sum(vec.values(), Fraction(0)))
        return out[0], out[1]

    def transitions(self, b0: Belief, b1: Belief
                    ) -> tuple[list[Transition], dict[Hashable, Fraction], dict[Hashable, Fraction]]:
        """From a pair of beliefs: each next observation with the next beliefs, its two conditional
        probabilities and their ratio; and the two conditional distributions."""
        out0 = _step(b0, self.c0) if b0 else {}
        out1 = _step(b1, self.c1) if b1 else {}
        cond0 = {o: sum(v.values(), Fraction(0)) for o, v in out0.items()}
        cond1 = {o: sum(v.values(), Fraction(0)) for o, v in out1.items()}
        trans: list[Transition] = []
        for o in sorted(set(cond0) | set(cond1), key=repr):
            p0, p1 = cond0.get(o, Fraction(0)), cond1.get(o, Fraction(0))
            nb0 = self.intern(_normalise(out0[o], p0)) if p0 and o != END else 0
            nb1 = self.intern(_normalise(out1[o], p1)) if p1 and o != END else 0
            trans.append((o, self.rank.get(o, -1), nb0, nb1, p0, p1, _ratio(p0, p1)))
        return trans, cond0, cond1


def forward_pld(c0: ObservedChain, c1: ObservedChain, *, key: Callable[[Ratio], Hashable] = ratio_key,
                max_atoms: int | None = None, max_beliefs: int | None = None,
                progress: Callable[[int, int], None] | None = None) -> ForwardPass:
    """The :class:`Level` of every prefix length ``1..k`` of the observed runs of ``c0`` and ``c1``
    (``k`` the longest sequence either charges), by the merged forward pass of the module docstring.

    ``key``: what prefixes of one pair of beliefs are merged by (default the ratio, which is exact; a
    coarser key is wrong and is there for the tests). ``max_atoms``: once a level holds more atoms,
    the ratios are no longer kept (the later levels have their ε*, elements and conditionals, exactly,
    but no PLD: ``atoms`` is ``None``; ε* follows the largest and smallest ratio of each pair of
    beliefs, which extend as products). ``max_beliefs``: a level that holds more pairs of beliefs is not
    extended (the pass stops, ``complete`` false: the prefixes' beliefs differ, as when what is
    observed does not reveal the state). ``progress(length, atoms)`` is called after each level. Raises
    :class:`CyclicChain` when the runs' observations have no bound."""
    def initial(c: ObservedChain) -> dict[int, Fraction]:
        vec: dict[int, Fraction] = {}
        for s, p in c.initial:
            vec[s] = vec.get(s, Fraction(0)) + p
        return vec

    v0, v1 = initial(c0), initial(c1)
    one = Fraction(1)
    start = _Group({})
    start.add(Atom(one, one, one, 1, ()), key)
    beliefs = _Beliefs(c0, c1)
    frontier: dict[tuple[int, int], _Group] = {
        (beliefs.intern(_normalise(v0, sum(v0.values(), Fraction(0)))),
         beliefs.intern(_normalise(v1, sum(v1.values(), Fraction(0))))): start}
    by_id: list[Belief] = []
    ended = _Group({})  # runs that ended: their prefixes of every later length are the whole run
    levels: list[Level] = []
    cache: dict[tuple[int, int], tuple[list[Transition], EpsilonResult | None]] = {}
    keep = True
    # each observation enters a new state: in a chain without cycles no sequence is longer than that
    max_levels = max(len(c0.rows), len(c1.rows))
    while frontier:
        if max_beliefs is not None and len(frontier) > max_beliefs:
            return ForwardPass(levels, False, f"{len(frontier)} pairs of beliefs after {len(levels)} "
                                              f"observations (more than {max_beliefs})")
        if len(levels) > max_levels:
            raise CyclicChain(f"observed sequences longer than {max_levels}: a cycle of observations")
        nxt: dict[tuple[int, int], _Group] = {}
        if len(by_id) < len(beliefs.ids):
            by_id = list(beliefs.ids)
        elem: tuple[dict[Hashable, Fraction], dict[Hashable, Fraction]] = ({}, {})
        for e, m in zip(elem, (ended.m0, ended.m1), strict=True):
            if m:
                e[END] = m
        conditional: tuple[EpsilonResult, tuple[int, ...]] | None = None
        for pair, g in frontier.items():
            if pair not in cache:
                trans, cond0, cond1 = beliefs.transitions(by_id[pair[0]], by_id[pair[1]])
                cache[pair] = (trans, pure_epsilon(cond0, cond1) if cond0 and cond1 else None)
            trans, cond = cache[pair]
            if cond is not None and g.m0 and g.m1:
                pool = g.atoms.values() if g.atoms is not None else (a for a in (g.hi, g.lo) if a is not None)
                rep = min(a.rep for a in pool)
                if conditional is None or _larger(cond, conditional[0], rep, conditional[1]):
                    conditional = (cond, rep)
            for o, rank, nb0, nb1, p0, p1, factor in trans:
                for e, m, p in ((elem[0], g.m0, p0), (elem[1], g.m1, p1)):
                    if m and p:
                        e[o] = e.get(o, Fraction(0)) + m * p
                if o == END:
                    target = ended
                else:
                    found = nxt.get((nb0, nb1))
                    if found is None:
                        found = nxt[(nb0, nb1)] = _Group({} if keep else None)
                    target = found
                sources = list(g.atoms.values()) if g.atoms is not None else []
                if g.atoms is None or target.atoms is None:
                    # the totals and the extreme atoms extend without the ratios (the masses add up)
                    totals = Atom(None, g.m0, g.m1, g.count, ())
                    sources = [a for a in (g.hi, g.lo) if a is not None] if g.atoms is None else sources
                    _add_summary(target, totals, sources, rank, p0, p1, factor)
                    continue
                for a in sources:
                    if (a.m0 and p0) or (a.m1 and p1):
                        target.add(a.child(rank, p0, p1, factor), key)
        if not nxt:  # every run ended: no element at this length
            break
        groups = [*nxt.values(), ended]
        if key is not ratio_key:  # a coarser key merges different ratios: an atom's is its masses'
            for grp in groups:
                for a in (grp.atoms or {}).values():
                    a.ratio = _ratio(a.m0, a.m1) if a.m0 else Fraction(0)
        atoms_now = sum(len(grp.atoms) for grp in groups if grp.atoms is not None)
        exact = keep and all(grp.atoms is not None for grp in groups)
        plds = by_ratio([a for grp in groups for a in grp.atoms.values()]) if exact else None  # type: ignore[union-attr]
        cond_res = None
        if conditional is not None:
            c, rep = conditional
            cond_res = EpsilonResult(c.epsilon, c.ratio, (beliefs.decode(rep), c.outcome), c.direction, c.p0,
                                     c.p1, c.exact)
        levels.append(Level(len(levels) + 1, _level_epsilon(groups, plds, beliefs), plds, elem,
                            cond_res, atoms_now, len(nxt), (sum(grp.count0 for grp in groups),
                                                            sum(grp.count1 for grp in groups)),
                            beliefs.decode))
        frontier = nxt
        if progress is not None:
            progress(len(levels), atoms_now)
        if keep and max_atoms is not None and atoms_now > max_atoms:
            keep = False
            for grp in [*frontier.values(), ended]:
                grp.forget_ratios()
    return ForwardPass(levels, True)


def _add_summary(target: _Group, totals: Atom, extremes: Sequence[Atom], o: int, p0: Fraction,
                 p1: Fraction, factor: Ratio) -> None:
    """Extend a group without its ratios into ``target``: the totals, then the extreme atoms (their
    children are the extreme children: ratios multiply by the same factor)."""
    target.m0 += totals.m0 * p0
    target.m1 += totals.m1 * p1
    target.count += totals.count
    target.count0 += totals.count if totals.m0 and p0 else 0
    target.count1 += totals.count if totals.m1 and p1 else 0
    if target.atoms is not None:
        target.atoms = None
    for a in extremes:
        if (a.m0 and p0) or (a.m1 and p1):
            child = a.child(o, p0, p1, factor)
            if target.hi is None or _wins(child, target.hi, 1):
                target.hi = child
            if target.lo is None or _wins(child, target.lo, -1):
                target.lo = child


def _level_epsilon(groups: Sequence[_Group], plds: list[Atom] | None, beliefs: _Beliefs) -> EpsilonResult:
    """ε* of a level: of its PLD when kept (:func:`pld_epsilon`), else of the extreme atoms."""
    if plds is not None:
        return pld_epsilon(plds, beliefs.decode, beliefs.own)
    extremes = [a for grp in groups for a in (grp.hi, grp.lo) if a is not None]
    return pld_epsilon(by_ratio(extremes), beliefs.decode, beliefs.own)


def _larger(a: EpsilonResult, b: EpsilonResult, rep_a: tuple[int, ...], rep_b: tuple[int, ...]) -> bool:
    """Whether the conditional ε ``a`` (after prefix ``rep_a``) replaces the best so far ``b`` (ties:
    the smaller prefix, as :func:`~checker.privacy.ni_fl_dp.per_round_epsilons` goes through prefixes
    in order)."""
    ka = math.inf if a.ratio is None else a.ratio
    kb = math.inf if b.ratio is None else b.ratio
    if ka != kb:
        return ka > kb
    return rep_before(rep_a, rep_b)
