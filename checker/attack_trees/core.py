"""IIIf attack trees over a Kripke structure: the tree type, validity ``⊢ A``, refinement ``A ⊑ A'``,
refinement-validity ``⊢V A``, and the constructive completeness theorem (generation of a valid tree from
``EF s``), with the blocking invariant ``AG ¬s`` when no tree exists.

Reference: Kammüller's Isabelle theory ``AT`` (AFP session *Attack_Trees*, the core of IIIf; see
``shared/iiif-notes.md``, AT). Everything here is generic over :class:`checker.mc.kripke.Kripke`: states are
integer ids and a state set is a ``frozenset[int]``.

Definitions encoded (names of the Isabelle rules in brackets):

* ``attree = BaseAttack (I, s) | AndAttack [trees] (I, s) | OrAttack [trees] (I, s)``; ``attack A`` is the
  pair ``(I, s)`` of the root (:func:`attack`).
* validity ``⊢ A`` (:func:`is_valid`, ``is_attack_tree``):

  - [att_base] ``⊢ N(I, s)  ⟺  ∀x ∈ I. ∃y ∈ s. x → y``;
  - [att_and] ``⊢ (As ⊕∧ (I, s))`` by cases on the list: ``[] ⟹ I ⊆ s``; ``[a] ⟹ ⊢a ∧ attack a = (I, s)``;
    ``a # l ⟹ ⊢a ∧ fst(attack a) = I ∧ ⊢(l ⊕∧ (snd(attack a), s))``;
  - [att_or] ``⊢ (As ⊕∨ (I, s))``: ``[] ⟹ I ⊆ s``; ``[a] ⟹ ⊢a ∧ fst(attack a) ⊇ I ∧ snd(attack a) ⊆ s``;
    ``a # l ⟹ ⊢a ∧ fst(attack a) ⊆ I ∧ snd(attack a) ⊆ s ∧ ⊢(l ⊕∨ (I − fst(attack a), s))``.

  A consequence worth knowing: in a flat or-list only the *last* child may start on states an earlier
  child already covered, so ``k > 2`` alternatives over the *same* start set are valid only when nested
  (``Or[a1, Or[a2, Or[a3, a4]]]``, every nested or carrying the same pair); :func:`generate_attack_tree`
  builds exactly that shape and the exporters can display it flattened.
* refinement ``A ⊑ A'`` (:func:`refines`, inductive ``refines_to``): [refI] splice the list ``l'`` of an
  and-attack ``l' ⊕∧ (si', si'')`` in place of a base attack ``N(si', si'')`` of an and-list; [ref_or]
  ``as ≠ [] ∧ ∀A' ∈ as. A ⊑ A' ∧ attack A = s ⟹ A ⊑ (as ⊕∨ s)``; [ref_trans]; [ref_refl].
* ``A ⊑V A' ⟺ A ⊑ A' ∧ ⊢A'`` and ``⊢V A ⟺ ∃A'. A ⊑V A'`` (:func:`is_ref_valid`, with the witness
  :func:`valid_refinement`).
* correctness [AT_EF]: ``⊢A ∧ attack A = (I, s) ⟹ Kripke(reach I) ⊢ EF s``; completeness [Completeness]:
  ``I ≠ {} ∧ finite I ∧ Kripke(reach I) ⊢ EF s ⟹ ∃A. ⊢A ∧ attack A = (I, s)``. :func:`generate_attack_tree`
  is the constructive direction; :func:`ef_mask` is an independent backward search used to check both.

"Genuinely different" attacks. Two steps commute when their actions are *independent*
(:class:`Independence`): actions ``a ≠ b`` are independent in ``K`` iff for every state ``x``
(D) whenever ``x -a-> y`` and ``x -b-> y'`` there is ``z`` with ``y -b-> z`` and ``y' -a-> z`` (diamond), and
(C) whenever ``x -a-> y -b-> z`` there is ``y'`` with ``x -b-> y' -a-> z``, and symmetrically for ``b a``
(the axioms of an asynchronous transition system). Two action words are the same attack iff they are
Mazurkiewicz-trace equivalent, i.e. one becomes the other by swapping adjacent independent actions. Each
trace class is represented by its lexicographic normal form (Anisimov–Knuth): a word is in normal form iff
it has no factor ``b·u·a`` with ``a < b``, ``a`` independent of ``b`` and of every letter of ``u``. Because of
(C), any path realising a word can be rearranged into a path realising its normal form with the same end
points, so the search only extends paths whose word stays in normal form and distinct normal forms are
distinct ways (a class is not reported when its normal-form realisation revisits a state or passes the
goal early — such a class contains a strictly shorter attack). Letters are the full actions by default,
or the actions without their detail (``steps``: a client step whatever value it carries), or the edges
themselves (``paths``). *Minimal* attacks: no other attack uses a strict subset of its actions, or the
same actions with fewer repetitions.

Typical use (the exporters are in :mod:`checker.attack_trees.export`)::

    >>> import numpy as np
    >>> from checker.mc.kripke import Kripke
    >>> from checker.mc.ts import Action
    >>> k = Kripke.from_edges(4, [0], [0, 0, 1, 2], [1, 2, 3, 3], action=[0, 1, 1, 0],
    ...                       actions=(Action("get_grad", "sat1"), Action("get_grad", "sat2")))
    >>> found = generate_attack_tree(k, [3])     # the two client steps commute: one way
    >>> found.exists, len(found.paths[0]), is_valid(found.tree, k), found.tree.pair
    (True, 1, True, (frozenset({0}), frozenset({3})))
    >>> blocked = generate_attack_tree(k, [0], initial=[3])
    >>> blocked.exists, sorted(blocked.failing), blocked.certificate_ok
    (False, [3], True)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

import numpy as np

from checker.mc.kripke import Kripke
from checker.mc.ts import Action

StateSet = frozenset[int]
Pair = tuple[StateSet, StateSet]


# =============================================================================== labels
@dataclass(frozen=True)
class Change:
    """An observable (or label) whose value differs between the two states of a step."""

    name: str
    before: str
    after: str

    def __str__(self) -> str:
        return f"{self.name} {self.before} -> {self.after}"


@dataclass(frozen=True)
class StepLabel:
    """What a base attack does in terms of the model: the action of the Kripke edge and the observables
    that changed. ``source``/``target`` are the state names (used when nothing observable changed)."""

    action: Action | None
    changes: tuple[Change, ...] = ()
    source: str = ""
    target: str = ""

    def action_text(self) -> str:
        """``rule by actor at location [detail]``."""
        if self.action is None:
            return "step"
        a = self.action
        text = a.rule
        if a.actor is not None:
            text += f" by {a.actor}"
        if a.location is not None:
            text += f" at {a.location}"
        if a.detail:
            text += f" [{a.detail}]"
        return text

    def text(self, sep: str = "; ", head: str = ": ") -> str:
        """``action: change; change`` (``sep`` between changes, ``head`` after the action)."""
        text = self.action_text()
        if self.changes:
            return text + head + sep.join(map(str, self.changes))
        if self.source or self.target:
            return text + head + f"{self.source} -> {self.target}"
        return text

    def __str__(self) -> str:
        return self.text()


def format_value(value: object) -> str:
    """Human text of an observable value: sets as ``{a, b}`` (sorted), tuples as ``(a, b)``, exact
    numbers as ``p/q``, booleans as ``true``/``false``."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(sorted(format_value(v) for v in value)) + "}"
    if isinstance(value, tuple | list):
        return "(" + ", ".join(format_value(v) for v in value) + ")"
    if isinstance(value, np.ndarray):
        return format_value(tuple(value.tolist()))
    if isinstance(value, Fraction):
        return str(value)
    return str(value)


def _same_value(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    try:
        return bool(a == b)
    except Exception:  # pragma: no cover - exotic values without a boolean equality
        return a is b


def counter_observables(kripke: Kripke, sample: int = 20_000) -> set[str]:
    """Numeric observables that change on every step between distinct states (step counters, trace
    lengths): they say nothing about *what* happened, so labels leave them out by default. Decided on
    the first ``sample`` such edges."""
    moving = np.flatnonzero(kripke.edge_src != kripke.succ_idx)[:sample]
    if not len(moving):
        return set()
    src, dst = kripke.edge_src[moving].tolist(), kripke.succ_idx[moving].tolist()
    out = set()
    for name, values in kripke.observables.items():
        first = values[src[0]]
        if isinstance(first, np.generic):
            first = first.item()
        if isinstance(first, bool) or not isinstance(first, int | Fraction | float):
            continue
        if all(not _same_value(values[a], values[b]) for a, b in zip(src, dst, strict=True)):
            out.add(name)
    return out


def step_label(kripke: Kripke, source: int, target: int, edge: int | None = None,
               observables: Iterable[str] | None = None) -> StepLabel:
    """Label of the step ``source -> target``: the action of edge ``edge`` (else of the first edge between
    the two states) and every label/observable (restricted to ``observables`` when given) whose value
    changes."""
    action: Action | None = None
    if edge is None:
        lo, hi = int(kripke.succ_ptr[source]), int(kripke.succ_ptr[source + 1])
        hits = np.flatnonzero(kripke.succ_idx[lo:hi] == target)
        edge = lo + int(hits[0]) if len(hits) else None
    if edge is not None:
        action = kripke.actions[int(kripke.edge_action[edge])]
    changes: list[Change] = []
    shown = None if observables is None else set(observables)
    for name in sorted(kripke.observables):
        if shown is not None and name not in shown:
            continue
        values = kripke.observables[name]
        before, after = values[source], values[target]
        if not _same_value(before, after):
            changes.append(Change(name, format_value(before), format_value(after)))
    for name in sorted(kripke.labels):
        if name in kripke.observables or (shown is not None and name not in shown):
            continue
        arr = kripke.labels[name]
        if bool(arr[source]) != bool(arr[target]):
            changes.append(Change(name, format_value(bool(arr[source])), format_value(bool(arr[target]))))
    return StepLabel(action, tuple(changes), kripke.state_name(source), kripke.state_name(target))


# =============================================================================== the tree type
class AttackTree:
    """An IIIf attack tree node; immutable and hashable (hash cached). Subclasses: :class:`BaseAttack`,
    :class:`AndAttack`, :class:`OrAttack`. ``pre`` = ``fst (attack A)``, ``post`` = ``snd (attack A)``."""

    __slots__ = ("_hash", "post", "pre")
    kind: str = ""
    pre: StateSet
    post: StateSet
    _hash: int

    @property
    def pair(self) -> Pair:
        """``attack A`` (IIIf ``primrec attack``)."""
        return (self.pre, self.post)

    @property
    def children(self) -> tuple[AttackTree, ...]:
        return ()

    def __hash__(self) -> int:
        return self._hash

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("attack trees are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("attack trees are immutable")

    def iter_nodes(self) -> Iterator[AttackTree]:
        """Every distinct node (by identity) reachable from this one, in depth-first pre-order."""
        seen: set[int] = set()
        stack: list[AttackTree] = [self]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            yield node
            stack.extend(reversed(node.children))

    def postorder(self) -> list[AttackTree]:
        """Every distinct node (by identity), each after all of its children (a topological order of the
        shared DAG; iterative, so deep trees do not hit the recursion limit)."""
        out: list[AttackTree] = []
        done: set[int] = set()
        stack: list[tuple[AttackTree, int]] = [(self, 0)]
        while stack:
            node, i = stack.pop()
            if i == 0 and id(node) in done:
                continue
            kids = node.children
            if i < len(kids):
                stack.append((node, i + 1))
                if id(kids[i]) not in done:
                    stack.append((kids[i], 0))
            else:
                if id(node) not in done:
                    done.add(id(node))
                    out.append(node)
        return out

    def size(self) -> int:
        """Number of nodes of the tree with shared sub-attacks counted once (the DAG size)."""
        return sum(1 for _ in self.iter_nodes())

    def tree_size(self) -> int:
        """Number of nodes with every shared sub-attack counted at each occurrence."""
        memo: dict[int, int] = {}
        for node in self.postorder():
            memo[id(node)] = 1 + sum(memo[id(c)] for c in node.children)
        return memo[id(self)]


def _init(obj: AttackTree, pre: Iterable[int], post: Iterable[int]) -> tuple[StateSet, StateSet]:
    pre_s = pre if isinstance(pre, frozenset) else frozenset(int(x) for x in pre)
    post_s = post if isinstance(post, frozenset) else frozenset(int(x) for x in post)
    object.__setattr__(obj, "pre", pre_s)
    object.__setattr__(obj, "post", post_s)
    return pre_s, post_s


class BaseAttack(AttackTree):
    """``N(I, s)``: one step of the transition relation from every state of ``I`` into ``s``. ``label``
    (optional, not part of IIIf) says what the step is in terms of the model."""

    __slots__ = ("label",)
    kind = "base"
    label: StepLabel | None

    def __init__(self, pre: Iterable[int], post: Iterable[int], label: StepLabel | None = None):
        pre_s, post_s = _init(self, pre, post)
        object.__setattr__(self, "label", label)
        object.__setattr__(self, "_hash", hash(("base", pre_s, post_s, label)))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (isinstance(other, BaseAttack) and self._hash == other._hash and self.pre == other.pre
                and self.post == other.post and self.label == other.label)

    __hash__ = AttackTree.__hash__

    def __repr__(self) -> str:
        return f"BaseAttack({sorted(self.pre)}, {sorted(self.post)})"


class _Composite(AttackTree):
    __slots__ = ("_children",)
    _children: tuple[AttackTree, ...]

    def __init__(self, children: Sequence[AttackTree], pre: Iterable[int], post: Iterable[int]):
        pre_s, post_s = _init(self, pre, post)
        kids = tuple(children)
        for k in kids:
            if not isinstance(k, AttackTree):
                raise TypeError(f"child {k!r} is not an attack tree")
        object.__setattr__(self, "_children", kids)
        object.__setattr__(self, "_hash", hash((self.kind, pre_s, post_s, kids)))

    @property
    def children(self) -> tuple[AttackTree, ...]:
        return self._children

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (type(other) is type(self) and self._hash == other._hash  # type: ignore[union-attr]
                and self.pre == other.pre and self.post == other.post  # type: ignore[union-attr]
                and self._children == other._children)  # type: ignore[union-attr]

    __hash__ = AttackTree.__hash__

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({list(self._children)!r}, "
                f"{sorted(self.pre)}, {sorted(self.post)})")


class AndAttack(_Composite):
    """``As ⊕∧ (I, s)``: the sub-attacks in sequence, the goal of each the start of the next."""

    __slots__ = ()
    kind = "and"


class OrAttack(_Composite):
    """``As ⊕∨ (I, s)``: alternative sub-attacks that together cover the start states ``I``."""

    __slots__ = ()
    kind = "or"


def attack(tree: AttackTree) -> Pair:
    """IIIf ``attack``: the pair ``(I, s)`` at the root of ``tree``."""
    return tree.pair


class TreeBuilder:
    """Hash-consing constructor: structurally equal sub-attacks are returned as one shared object."""

    def __init__(self) -> None:
        self._table: dict[AttackTree, AttackTree] = {}

    def intern(self, node: AttackTree) -> AttackTree:
        return self._table.setdefault(node, node)

    def base(self, pre: Iterable[int], post: Iterable[int], label: StepLabel | None = None) -> AttackTree:
        return self.intern(BaseAttack(pre, post, label))

    def and_(self, children: Sequence[AttackTree], pre: Iterable[int], post: Iterable[int]) -> AttackTree:
        return self.intern(AndAttack([self.intern(c) for c in children], pre, post))

    def or_(self, children: Sequence[AttackTree], pre: Iterable[int], post: Iterable[int]) -> AttackTree:
        return self.intern(OrAttack([self.intern(c) for c in children], pre, post))

    def or_chain(self, children: Sequence[AttackTree], pre: Iterable[int],
                 post: Iterable[int]) -> AttackTree:
        """Alternatives that all start on ``pre``: ``Or[c1, Or[c2, ... Or[c_{k-1}, c_k]]]`` with the same pair
        at every level (the only valid shape for more than two of them, see the module docstring)."""
        kids = list(children)
        if len(kids) <= 2:
            return self.or_(kids, pre, post)
        return self.or_([kids[0], self.or_chain(kids[1:], pre, post)], pre, post)


def same_attack(a: AttackTree, b: AttackTree) -> bool:
    """IIIf equality of trees: same constructors, pairs and children (labels are ignored)."""
    memo: dict[tuple[int, int], bool] = {}

    def eq(x: AttackTree, y: AttackTree) -> bool:
        if x is y:
            return True
        key = (id(x), id(y))
        if key in memo:
            return memo[key]
        r = (x.kind == y.kind and x.pre == y.pre and x.post == y.post
             and len(x.children) == len(y.children)
             and all(eq(c, d) for c, d in zip(x.children, y.children, strict=True)))
        memo[key] = r
        return r

    return eq(a, b)


# =============================================================================== validity ⊢ A
@dataclass(frozen=True)
class Validity:
    """Result of :func:`check_validity`: ``valid`` and, when not, the first offending node (parents
    reported through the child that fails) and the rule that fails there."""

    valid: bool
    reason: str = ""
    node: AttackTree | None = None

    def __bool__(self) -> bool:
        return self.valid


def _fmt(states: StateSet, kripke: Kripke, limit: int = 6) -> str:
    names = [kripke.state_name(s) if 0 <= s < kripke.num_states else f"#{s}" for s in sorted(states)]
    if len(names) > limit:
        return "{" + ", ".join(names[:limit]) + f", ... ({len(names)} states)}}"
    return "{" + ", ".join(names) + "}"


class _Checker:
    def __init__(self, kripke: Kripke):
        self.k = kripke
        self.masks: dict[int, tuple[StateSet, np.ndarray]] = {}
        self.memo: dict[int, Validity] = {}

    def mask(self, states: StateSet) -> np.ndarray:
        hit = self.masks.get(id(states))
        if hit is not None and hit[0] is states:
            return hit[1]
        m = np.zeros(self.k.num_states, dtype=bool)
        ids = [s for s in states if 0 <= s < self.k.num_states]
        m[ids] = True
        self.masks[id(states)] = (states, m)
        return m

    def base(self, node: AttackTree) -> Validity:
        # att_base: ∀x ∈ I. ∃y ∈ s. x → y
        goal = self.mask(node.post)
        k = self.k
        for x in sorted(node.pre):
            if not 0 <= x < k.num_states:
                return Validity(False, f"base attack: state id {x} is not a state of the model", node)
            succ = k.succ_idx[k.succ_ptr[x]:k.succ_ptr[x + 1]]
            if not bool(goal[succ].any()):
                return Validity(False, f"base attack: state {k.state_name(x)} has no successor in "
                                       f"the goal {_fmt(node.post, k)}", node)
        return Validity(True)

    def and_(self, node: AttackTree) -> Validity:
        # att_and, unrolled along the list: the tail is checked against (snd(attack a), s)
        pre, goal, kids = node.pre, node.post, node.children
        k = self.k
        i = 0
        while True:
            rest = len(kids) - i
            if rest == 0:
                if pre <= goal:
                    return Validity(True)
                return Validity(False, f"and-attack: empty remainder needs start {_fmt(pre, k)} ⊆ goal "
                                       f"{_fmt(goal, k)}", node)
            a = kids[i]
            va = self.memo[id(a)]
            if not va:
                return Validity(False, f"and-attack: sub-attack {i + 1} is invalid: {va.reason}",
                                va.node)
            if rest == 1:
                if a.pre == pre and a.post == goal:
                    return Validity(True)
                return Validity(False, f"and-attack: last sub-attack {i + 1} has pair "
                                       f"({_fmt(a.pre, k)}, {_fmt(a.post, k)}), needs "
                                       f"({_fmt(pre, k)}, {_fmt(goal, k)})", node)
            if a.pre != pre:
                return Validity(False, f"and-attack: sub-attack {i + 1} starts at {_fmt(a.pre, k)}, needs "
                                       f"{_fmt(pre, k)}", node)
            pre = a.post
            i += 1

    def or_(self, node: AttackTree) -> Validity:
        # att_or, unrolled: the tail must cover I − fst(attack a)
        pre, goal, kids = node.pre, node.post, node.children
        k = self.k
        i = 0
        while True:
            rest = len(kids) - i
            if rest == 0:
                if pre <= goal:
                    return Validity(True)
                return Validity(False, f"or-attack: uncovered start states {_fmt(pre - goal, k)}", node)
            a = kids[i]
            va = self.memo[id(a)]
            if not va:
                return Validity(False, f"or-attack: alternative {i + 1} is invalid: {va.reason}", va.node)
            if not a.post <= goal:
                return Validity(False, f"or-attack: alternative {i + 1} reaches "
                                       f"{_fmt(a.post - goal, k)} outside the goal", node)
            if rest == 1:
                if a.pre >= pre:
                    return Validity(True)
                return Validity(False, f"or-attack: last alternative {i + 1} does not start on the "
                                       f"uncovered states {_fmt(pre - a.pre, k)}", node)
            if not a.pre <= pre:
                return Validity(False, f"or-attack: alternative {i + 1} starts on "
                                       f"{_fmt(a.pre - pre, k)}, outside the states left to cover", node)
            pre = pre - a.pre
            i += 1

    def check(self, tree: AttackTree) -> Validity:
        for node in tree.postorder():  # children before parents
            if id(node) in self.memo:
                continue
            if node.kind == "base":
                v = self.base(node)
            elif node.kind == "and":
                v = self.and_(node)
            elif node.kind == "or":
                v = self.or_(node)
            else:  # pragma: no cover
                raise TypeError(f"unknown attack tree node {node!r}")
            self.memo[id(node)] = v
        return self.memo[id(tree)]


def check_validity(tree: AttackTree, kripke: Kripke) -> Validity:
    """``⊢ tree`` in ``kripke`` exactly as IIIf's ``is_attack_tree`` (att_base, att_and, att_or), with the
    reason when it fails. Shared sub-attacks are checked once."""
    return _Checker(kripke).check(tree)


def is_valid(tree: AttackTree, kripke: Kripke) -> bool:
    """``⊢ tree`` (see :func:`check_validity`)."""
    return check_validity(tree, kripke).valid


# =============================================================================== refinement ⊑
def refines(a: AttackTree, b: AttackTree) -> bool:
    """Decide ``a ⊑ b`` for IIIf's inductive ``refines_to`` (labels ignored).

    Characterisation (by induction on derivations, flattened with ref_trans): refI turns an and-attack
    into an and-attack with the same pair, ref_or wraps a tree into an or-attack, and nothing turns an
    or-attack or a base attack into an and-attack. Hence
    ``a ⊑ b`` iff ``a = b``, or ``b = bs ⊕∨ s`` with ``bs ≠ []``, ``attack a = s`` and ``a ⊑ b'`` for every
    ``b' ∈ bs``, or ``a = as ⊕∧ p``, ``b = bs ⊕∧ p`` and ``bs`` arises from ``as`` by replacing each base
    attack of ``as`` by some (possibly empty) list of trees while every non-base element stays.
    """
    if same_attack(a, b):
        return True
    if b.kind == "or":
        return bool(b.children) and a.pair == b.pair and all(refines(a, c) for c in b.children)
    if b.kind == "and" and a.kind == "and":
        return a.pair == b.pair and _splice_match(a.children, b.children)
    return False


def _splice_match(la: Sequence[AttackTree], lb: Sequence[AttackTree]) -> bool:
    """Can ``lb`` be obtained from ``la`` by replacing base attacks of ``la`` by arbitrary lists?"""
    m, n = len(la), len(lb)
    reach = np.zeros(n + 1, dtype=bool)  # reach[j]: la[:i] can produce lb[:j]
    reach[0] = True
    for i in range(m):
        new = np.zeros(n + 1, dtype=bool)
        if la[i].kind == "base":
            first = np.flatnonzero(reach)
            if len(first):
                new[first[0]:] = True
        else:
            for j in np.flatnonzero(reach[:n]):
                if same_attack(la[i], lb[j]):
                    new[j + 1] = True
        reach = new
    return bool(reach[n])


# =============================================================================== reachability (own BFS)
def as_mask(kripke: Kripke, states: Iterable[int] | np.ndarray) -> np.ndarray:
    """A boolean state mask from a mask or an iterable of ids."""
    if isinstance(states, np.ndarray) and states.dtype == bool:
        if states.shape != (kripke.num_states,):
            raise ValueError(f"state mask has shape {states.shape}, expected ({kripke.num_states},)")
        return states
    m = np.zeros(kripke.num_states, dtype=bool)
    ids = np.asarray(list(states) if not isinstance(states, np.ndarray) else states, dtype=np.int64)
    if len(ids) and (ids.min() < 0 or ids.max() >= kripke.num_states):
        raise ValueError("state id out of range")
    m[ids] = True
    return m


def distance_to(kripke: Kripke, goal: np.ndarray) -> np.ndarray:
    """Length of a shortest path from every state into ``goal`` (``-1`` when none): a layered backward
    breadth-first search (``EF goal`` is ``distance_to(...) >= 0``)."""
    dist = np.full(kripke.num_states, -1, dtype=np.int64)
    dist[goal] = 0
    frontier = goal.copy()
    src, dst = kripke.edge_src, kripke.succ_idx
    level = 0
    while frontier.any():
        level += 1
        sel = frontier[dst]
        cand = src[sel]
        cand = cand[dist[cand] < 0]
        if not len(cand):
            break
        dist[cand] = level
        frontier = np.zeros(kripke.num_states, dtype=bool)
        frontier[cand] = True
    return dist


def ef_mask(kripke: Kripke, goal: np.ndarray) -> np.ndarray:
    """``EF goal`` = lfp Z. goal ∪ EX Z, by backward search (independent of the CTL checker)."""
    return distance_to(kripke, goal) >= 0


def forward_reach(kripke: Kripke, sources: np.ndarray) -> np.ndarray:
    """States reachable (in zero or more steps) from the mask ``sources``."""
    seen = sources.copy()
    frontier = sources.copy()
    src, dst = kripke.edge_src, kripke.succ_idx
    while frontier.any():
        nxt = dst[frontier[src]]
        nxt = nxt[~seen[nxt]]
        if not len(nxt):
            break
        seen[nxt] = True
        frontier = np.zeros(kripke.num_states, dtype=bool)
        frontier[nxt] = True
    return seen


# =============================================================================== independence, traces
class Independence:
    """The independence relation of the actions of ``kripke`` (axioms (D) and (C) of the module
    docstring), computed lazily per pair (vectorised joins over the edges of the two actions) and
    cached."""

    def __init__(self, kripke: Kripke, letters: np.ndarray | None = None, n_letters: int | None = None):
        self.k = kripke
        lets = kripke.edge_action if letters is None else letters
        n = len(kripke.actions) if n_letters is None else n_letters
        # CSR edges are ordered by source, so a stable sort by letter orders them by (letter, source)
        order = np.argsort(lets, kind="stable")
        self._src = kripke.edge_src[order]
        self._dst = kripke.succ_idx[order]
        self._bounds = np.searchsorted(lets[order], np.arange(n + 1))
        self._cache: dict[tuple[int, int], bool] = {}

    def edges_of(self, action: int) -> tuple[np.ndarray, np.ndarray]:
        """``(src, dst)`` of the edges carrying ``action`` (a letter), sorted by source."""
        lo, hi = int(self._bounds[action]), int(self._bounds[action + 1])
        return self._src[lo:hi], self._dst[lo:hi]

    @staticmethod
    def _join(keys: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All ``(j, i)`` with ``keys[i] == queries[j]`` (``keys`` sorted)."""
        lo = np.searchsorted(keys, queries, "left")
        cnt = np.searchsorted(keys, queries, "right") - lo
        total = int(cnt.sum())
        j = np.repeat(np.arange(len(queries)), cnt)
        offsets = np.cumsum(cnt) - cnt
        i = np.arange(total) - np.repeat(offsets, cnt) + np.repeat(lo, cnt)
        return j, i

    def _commutes(self, a: int, b: int, limit: int | None = None) -> bool:
        """(C) for ``a b``: every ``x -a-> y -b-> z`` has some ``x -b-> y' -a-> z`` (checked for the first
        ``limit`` ``a``-edges only when ``limit`` is given: a quick, sound rejection test)."""
        n = self.k.num_states
        sa, da = self.edges_of(a)
        sb, db = self.edges_of(b)
        if limit is not None:
            sa, da = sa[:limit], da[:limit]
        j, i = self._join(sb, da)
        if not len(j):
            return True
        ab = sa[j] * n + db[i]
        xs = np.unique(sa[j])
        jb, ib = self._join(sb, xs)  # x -b-> y'
        sa_all, da_all = self.edges_of(a)
        j2, i2 = self._join(sa_all, db[ib])  # y' -a-> z
        ba = xs[jb[j2]] * n + da_all[i2]
        return bool(np.isin(ab, ba).all())

    def _diamond(self, a: int, b: int, limit: int | None = None) -> bool:
        """(D): whenever ``x -a-> y`` and ``x -b-> y'``, some ``z`` has ``y -b-> z`` and ``y' -a-> z``."""
        n = self.k.num_states
        sa, da = self.edges_of(a)
        sb, db = self.edges_of(b)
        sa_all, da_all = sa, da
        if limit is not None:
            sa, da = sa[:limit], da[:limit]
        ja, ib = self._join(sb, sa)  # triples t: (x, y = da[ja], y' = db[ib])
        if not len(ja):
            return True
        y, y2 = da[ja], db[ib]
        t1, e1 = self._join(sb, y)  # y -b-> z
        t2, e2 = self._join(sa_all, y2)  # y' -a-> z
        keys1 = t1 * n + db[e1]
        keys2 = t2 * n + da_all[e2]
        closed = np.unique(keys1[np.isin(keys1, keys2)] // n)
        return len(closed) == len(ja)

    def _axioms(self, a: int, b: int, limit: int | None) -> bool:
        return (self._diamond(a, b, limit) and self._commutes(a, b, limit)
                and self._commutes(b, a, limit))

    def independent(self, a: int, b: int) -> bool:
        if a == b:
            return False
        key = (a, b) if a < b else (b, a)
        hit = self._cache.get(key)
        if hit is None:
            # a cheap check on a prefix of the edges rejects most dependent pairs early
            hit = self._axioms(a, b, 1024) and self._axioms(a, b, None)
            self._cache[key] = hit
        return hit


def extends_normal_form(word: Sequence[int], letter: int, rank: Sequence[int],
                        independent: Callable[[int, int], bool]) -> bool:
    """Is ``word·letter`` in lexicographic normal form, given ``word`` is? (No factor ``b·u·letter`` with
    ``letter < b`` in ``rank`` order, ``letter`` independent of ``b`` and of every letter of ``u``.)"""
    r = rank[letter]
    for prev in reversed(word):
        if not independent(prev, letter):
            return True
        if rank[prev] > r:
            return False
    return True


# =============================================================================== generation
@dataclass(frozen=True)
class AttackPath:
    """One way to the goal from one initial state: the states, the edges taken and their letters (the
    action id in ``actions`` mode, the action-without-detail class in ``steps`` mode, the edge id in
    ``paths`` mode; see :func:`edge_letters`)."""

    states: tuple[int, ...]
    edges: tuple[int, ...]
    letters: tuple[int, ...]

    @property
    def length(self) -> int:
        return len(self.edges)


@dataclass
class AttackFound:
    """A valid tree with ``attack tree = (initial, goal)`` (the completeness theorem, made constructive).

    ``paths`` maps each initial state to the alternatives found for it (shortest first);
    ``truncated`` says whether a bound (depth, breadth, search budget) cut the search of alternatives."""

    tree: AttackTree
    initial: StateSet
    goal: StateSet
    paths: dict[int, list[AttackPath]]
    distinguish: str
    max_depth: dict[int, int]
    truncated: bool
    complete_model: bool
    warnings: list[str] = field(default_factory=list)

    exists: bool = True


@dataclass
class NoAttack:
    """No valid tree exists for ``(initial, goal)`` (IIIf correctness: it would give ``EF goal``).

    The proof is an invariant: ``invariant`` = the states reachable from the ``failing`` initial states; it is
    closed under successors and contains no goal state, so ``AG ¬goal`` holds from every failing initial
    state. ``cannot_reach`` = ``¬EF goal`` (the largest such invariant). ``facts`` restate the invariant in
    the model's terms (labels/observables constant on it, observables whose values there never occur in a
    goal state). ``conclusive`` is false on an incomplete exploration (then nothing is proved).
    ``partial`` is a valid tree for the initial states that *can* reach the goal, if any."""

    initial: StateSet
    goal: StateSet
    failing: StateSet
    invariant: np.ndarray
    cannot_reach: np.ndarray
    certificate_ok: bool
    conclusive: bool
    facts: list[str]
    partial: AttackFound | None = None
    limit_reason: str | None = None

    exists: bool = False

    @property
    def invariant_size(self) -> int:
        return int(self.invariant.sum())


def edge_letters(kripke: Kripke, mode: str) -> tuple[np.ndarray, list[str], list[int]]:
    """The letter of every edge for comparing attacks, the letters' names and their rank (the total
    order of the lexicographic normal form). ``actions``: the full action (rule, actor, location,
    detail); ``steps``: the action without its detail (e.g. the same client step whatever noisy value or
    trace choice it carries); ``paths``: the edge itself (every path is its own attack)."""
    if mode == "paths":
        return np.arange(kripke.num_transitions), [], []
    if mode == "actions":
        keys = [(a.rule, a.actor or "", a.location or "", a.detail) for a in kripke.actions]
        names = [str(a) for a in kripke.actions]
        letters = kripke.edge_action.astype(np.int64)
    elif mode == "steps":
        classes: dict[tuple[str, str, str], int] = {}
        of_action = []
        for a in kripke.actions:
            of_action.append(classes.setdefault((a.rule, a.actor or "", a.location or ""), len(classes)))
        keys = [(*k, "") for k in classes]
        names = [str(Action(r, act or None, loc or None)) for r, act, loc in classes]
        letters = np.asarray(of_action, dtype=np.int64)[kripke.edge_action] if of_action else \
            np.zeros(0, np.int64)
    else:
        raise ValueError(f"unknown distinction {mode!r} (expected actions, steps or paths)")
    order = sorted(range(len(keys)), key=lambda i: (keys[i], i))
    rank = [0] * len(keys)
    for r, i in enumerate(order):
        rank[i] = r
    return letters, names, rank


class _Search:
    """Enumeration of first-hitting simple paths from one state, one trace class at a time."""

    def __init__(self, kripke: Kripke, goal: np.ndarray, dist: np.ndarray, mode: str, budget: int):
        self.k = kripke
        self.goal = goal
        self.dist = dist
        self.mode = mode
        self.budget = budget
        self.exhausted = False
        self.letters, self.names, self.rank = edge_letters(kripke, mode)
        self.ind: Independence | None = None
        if mode != "paths":
            self.ind = Independence(kripke, self.letters, len(self.names))

    def letter(self, edge: int) -> int:
        return int(self.letters[edge])

    def paths(self, start: int, length: int) -> Iterator[AttackPath]:
        """All simple paths of exactly ``length`` steps from ``start`` whose last state (only) is in the
        goal and whose letter word is in lexicographic normal form (unless ``paths`` mode); an explicit
        stack, so long attacks do not hit Python's recursion limit."""
        k, goal, dist = self.k, self.goal, self.dist
        ptr, idx = k.succ_ptr, k.succ_idx
        if length == 0 or goal[start]:
            if length == 0 and goal[start]:
                yield AttackPath((start,), (), ())
            return
        states = [start]
        edges: list[int] = []
        letters: list[int] = []
        on_path = {start}
        ind = self.ind
        frames: list[list[int]] = [[length, int(ptr[start]), int(ptr[start + 1])]]
        while frames:
            frame = frames[-1]
            remaining, e, hi = frame
            if e >= hi:
                frames.pop()
                if frames:  # undo the step into this frame's state
                    on_path.discard(states.pop())
                    edges.pop()
                    letters.pop()
                continue
            frame[1] = e + 1
            if self.budget <= 0:
                self.exhausted = True
                return
            y = int(idx[e])
            d = int(dist[y])
            if d < 0 or d > remaining - 1 or y in on_path:
                continue
            let = self.letter(e)
            if ind is not None and not extends_normal_form(letters, let, self.rank, ind.independent):
                continue
            self.budget -= 1
            if remaining == 1:  # d == 0: y is a goal state
                yield AttackPath((*states, y), (*edges, e), (*letters, let))
                continue
            if goal[y]:
                continue
            states.append(y)
            edges.append(e)
            letters.append(let)
            on_path.add(y)
            frames.append([remaining - 1, int(ptr[y]), int(ptr[y + 1])])


def shortest_attack_path(kripke: Kripke, start: int, dist: np.ndarray) -> AttackPath | None:
    """A shortest path from ``start`` into the goal of ``dist`` (:func:`distance_to`), following at each
    state the first edge that decreases the distance (``None`` when the goal is unreachable)."""
    if dist[start] < 0:
        return None
    states, edges = [start], []
    x = start
    while dist[x] > 0:
        lo, hi = int(kripke.succ_ptr[x]), int(kripke.succ_ptr[x + 1])
        step = lo + int(np.flatnonzero(dist[kripke.succ_idx[lo:hi]] == dist[x] - 1)[0])
        x = int(kripke.succ_idx[step])
        states.append(x)
        edges.append(step)
    return AttackPath(tuple(states), tuple(edges), tuple(int(kripke.edge_action[e]) for e in edges))


def _minimal(paths: list[AttackPath]) -> list[AttackPath]:
    """Keep the minimal attacks (order kept): drop a path when another uses a strict subset of its
    actions, or the same actions with strictly fewer repetitions (a strict sub-multiset).

    Both relations are strict orders, their union is transitive and acyclic (a sub-multiset has a
    subset of the actions), and it strictly increases ``(number of distinct actions, length)``; so
    visiting paths by that key against the minimal ones kept so far decides minimality exactly."""
    sets = [frozenset(p.letters) for p in paths]
    bags = [Counter(p.letters) for p in paths]
    kept: list[int] = []
    minimal = [False] * len(paths)
    for i in sorted(range(len(paths)), key=lambda i: (len(sets[i]), len(paths[i].letters))):
        if not any(sets[j] < sets[i] or (bags[j] <= bags[i] and bags[j] != bags[i]) for j in kept):
            minimal[i] = True
            kept.append(i)
    return [p for p, m in zip(paths, minimal, strict=True) if m]


def find_attack_paths(
    kripke: Kripke,
    start: int,
    goal: np.ndarray,
    *,
    dist: np.ndarray | None = None,
    max_depth: int | None = None,
    max_attacks: int = 5,
    minimal_only: bool = False,
    distinguish: Literal["actions", "steps", "paths"] = "actions",
    budget: int = 200_000,
    candidates: int | None = None,
) -> tuple[list[AttackPath], bool, int]:
    """The genuinely different ways from ``start`` into ``goal`` (shortest first): at most ``max_attacks``
    trace classes of first-hitting simple paths of length ≤ ``max_depth`` (default: shortest + 2; never
    less than the shortest, so a path is always found when ``EF goal`` holds). Returns
    ``(paths, truncated, depth_used)``. ``distinguish="paths"`` treats every path as its own way.

    ``budget`` bounds the search steps; with ``minimal_only`` at most ``candidates`` (default
    ``max(1000, 50 * max_attacks)``) ways are enumerated and minimality is decided among them. Either
    bound being hit sets ``truncated``."""
    if dist is None:
        dist = distance_to(kripke, goal)
    d0 = int(dist[start])
    if d0 < 0:
        return [], False, 0
    if d0 == 0:
        return [AttackPath((start,), (), ())], False, 0
    depth = d0 + 2 if max_depth is None else max(max_depth, d0)
    search = _Search(kripke, goal, dist, distinguish, budget)
    limit = (candidates or max(1000, 50 * max_attacks)) if minimal_only else max_attacks
    found: list[AttackPath] = []
    words: set[tuple[int, ...]] = set()
    stop = False
    for length in range(d0, depth + 1):
        for p in search.paths(start, length):
            if p.letters in words:
                continue
            words.add(p.letters)
            found.append(p)
            if len(found) >= limit:
                stop = True
                break
        if stop or search.exhausted:
            break
    truncated = stop or search.exhausted
    if not found:  # only when the budget ran out first: completeness still needs one attack
        fallback = shortest_attack_path(kripke, start, dist)
        assert fallback is not None
        found.append(AttackPath(fallback.states, fallback.edges,
                                tuple(search.letter(e) for e in fallback.edges)))
    if minimal_only:
        found = _minimal(found)
    if len(found) > max_attacks:
        found = found[:max_attacks]
        truncated = True
    return found, truncated, depth


def _path_tree(builder: TreeBuilder, kripke: Kripke, path: AttackPath, label: bool,
               observables: Iterable[str] | None = None) -> AttackTree:
    """``[N({x0},{x1}), ..., N({x_{n-1}},{x_n})] ⊕∧ ({x0},{x_n})`` (att_and chain of att_base steps)."""
    s = path.states
    if not path.edges:
        return builder.and_([], {s[0]}, {s[0]})
    steps = [builder.base({s[i]}, {s[i + 1]},
                          step_label(kripke, s[i], s[i + 1], path.edges[i], observables) if label else None)
             for i in range(len(path.edges))]
    return builder.and_(steps, {s[0]}, {s[-1]})


def generate_attack_tree(
    kripke: Kripke,
    goal: Iterable[int] | np.ndarray,
    initial: Iterable[int] | np.ndarray | None = None,
    *,
    max_depth: int | None = None,
    max_attacks: int = 5,
    minimal_only: bool = False,
    distinguish: Literal["auto", "actions", "steps", "paths"] = "auto",
    labels: bool = True,
    label_observables: Sequence[str] | None = None,
    goal_observables: Sequence[str] = (),
    budget: int = 200_000,
) -> AttackFound | NoAttack:
    """Build a valid attack tree with ``attack = (initial, goal)`` when ``EF goal`` holds from every initial
    state, else the proof that none exists (IIIf AT, completeness and correctness).

    Shape: for each initial state ``i`` the alternatives ``p1..pk`` (:func:`find_attack_paths`) become
    and-attacks of labelled base attacks ``({i}, {end})``, combined by an or-chain with pair ``({i}, goal)``;
    the root is an or-attack over the initial states (the or-covering condition: each child starts on its
    own initial state, the last covers the rest). If ``initial ⊆ goal`` the tree is ``[] ⊕∧ (initial, goal)``.

    ``initial`` defaults to the structure's initial states. ``distinguish``: ``"actions"`` compares action
    words up to trace equivalence, ``"steps"`` the same ignoring each action's detail (noisy value, trace
    choice), ``"paths"`` compares paths; ``"auto"`` is ``actions`` when the structure has more than one
    action, else ``paths``. Base attacks are labelled (``labels``) with the edge's action and the changed
    observables: those named in ``label_observables``, by default all except step counters
    (:func:`counter_observables`). ``goal_observables`` (the observables the goal mentions) are described
    on the blocking invariant when no attack exists.
    """
    goal_mask = as_mask(kripke, goal)
    init_mask = kripke.initial_mask() if initial is None else as_mask(kripke, initial)
    init_set: StateSet = frozenset(np.flatnonzero(init_mask).tolist())
    goal_set: StateSet = frozenset(np.flatnonzero(goal_mask).tolist())
    dist = distance_to(kripke, goal_mask)
    failing = frozenset(i for i in init_set if dist[i] < 0)
    if failing:
        return _no_attack(kripke, goal_mask, init_set, goal_set, failing, dist, goal_observables,
                          max_depth=max_depth,
                          max_attacks=max_attacks, minimal_only=minimal_only, distinguish=distinguish,
                          labels=labels, label_observables=label_observables, budget=budget)
    mode: Literal["actions", "steps", "paths"]
    if distinguish == "auto":
        used = np.unique(kripke.edge_action) if kripke.num_transitions else np.zeros(0)
        mode = "actions" if len(used) > 1 else "paths"
    else:
        mode = distinguish
    builder = TreeBuilder()
    warnings: list[str] = []
    shown: list[str] | None = None
    if labels:
        if label_observables is None:
            hidden = counter_observables(kripke)
            shown = [n for n in (*kripke.observables, *kripke.labels) if n not in hidden]
        else:
            unknown = sorted(set(label_observables) - set(kripke.observables) - set(kripke.labels))
            if unknown:
                known = ", ".join(sorted({*kripke.observables, *kripke.labels})) or "none"
                raise ValueError(f"unknown observable(s) {', '.join(unknown)} for labels; known: {known}")
            shown = list(label_observables)
    if not kripke.complete:
        warnings.append(f"the model exploration is incomplete ({kripke.limit_reason or 'limit hit'}); "
                        "the attacks found are real, other alternatives may be missing")
    if init_set <= goal_set:
        tree = builder.and_([], init_set, goal_set)
        trivial = {i: [AttackPath((i,), (), ())] for i in sorted(init_set)}
        return AttackFound(tree, init_set, goal_set, trivial, mode, dict.fromkeys(init_set, 0), False,
                           kripke.complete, warnings)
    per_state: list[AttackTree] = []
    all_paths: dict[int, list[AttackPath]] = {}
    depths: dict[int, int] = {}
    truncated = False
    for i in sorted(init_set):
        paths, trunc, depth = find_attack_paths(kripke, i, goal_mask, dist=dist, max_depth=max_depth,
                                                max_attacks=max_attacks, minimal_only=minimal_only,
                                                distinguish=mode, budget=budget)
        if max_depth is not None and int(dist[i]) > max_depth:
            warnings.append(f"the shortest attack from {kripke.state_name(i)} has {int(dist[i])} steps, "
                            f"more than --max-depth {max_depth}; it is reported anyway")
        truncated |= trunc
        all_paths[i] = paths
        depths[i] = depth
        subtrees = [_path_tree(builder, kripke, p, labels, shown) for p in paths]
        per_state.append(subtrees[0] if len(subtrees) == 1 else builder.or_chain(subtrees, {i}, goal_set))
    if len(init_set) == 1 and per_state[0].kind == "or":
        tree = per_state[0]  # already the pair (I, goal)
    else:
        tree = builder.or_(per_state, init_set, goal_set)
    return AttackFound(tree, init_set, goal_set, all_paths, mode, depths, truncated, kripke.complete,
                       warnings)


def _value_set(values: Sequence[object], mask: np.ndarray, cap: int = 64) -> set[str] | None:
    """Distinct formatted values on the states of ``mask`` (``None`` when more than ``cap``)."""
    if isinstance(values, np.ndarray) and values.shape == mask.shape:
        distinct = np.unique(values[mask])
        if len(distinct) > cap:
            return None
        return {format_value(v) for v in distinct.tolist()}
    out: set[str] = set()
    for s in np.flatnonzero(mask).tolist():
        out.add(format_value(values[s]))
        if len(out) > cap:
            return None
    return out


def describe_invariant(kripke: Kripke, invariant: np.ndarray, goal: np.ndarray,
                       focus: Sequence[str] = ()) -> list[str]:
    """The invariant ``invariant`` (a set of states with no goal state) in the model's terms: the values
    the ``focus`` observables (e.g. those the goal mentions) take on it, labels and observables constant
    on it, and observables whose values on it never occur in a goal state (each such observable alone
    proves ``AG ¬goal``)."""
    facts: list[str] = []
    for name in focus:
        if name in kripke.observables:
            inside = _value_set(kripke.observables[name], invariant, cap=12)
            if inside is not None:
                facts.append(f"{name} only takes the values {{{', '.join(sorted(inside))}}} there")
    if not goal.any():
        facts.append("no state of the model satisfies the goal")
    for name in sorted(kripke.labels):
        arr = kripke.labels[name][invariant]
        if len(arr) and (arr.all() or not arr.any()):
            facts.append(f"{name} is always {'true' if arr.all() else 'false'}")
    for name in sorted(kripke.observables):
        values = kripke.observables[name]
        inside = _value_set(values, invariant)
        if inside is None:
            continue
        at_goal = _value_set(values, goal) if goal.any() else set()
        shown = ", ".join(sorted(inside))
        if at_goal is not None and not inside & at_goal and goal.any():
            facts.append(f"{name} stays in {{{shown}}}, a value no goal state has "
                         f"(so AG ¬goal)")
        elif len(inside) == 1:
            facts.append(f"{name} is always {shown}")
    return facts


def _no_attack(kripke: Kripke, goal_mask: np.ndarray, init_set: StateSet, goal_set: StateSet,
               failing: StateSet, dist: np.ndarray, focus: Sequence[str], **options: object) -> NoAttack:
    fail_mask = as_mask(kripke, sorted(failing))
    inv = forward_reach(kripke, fail_mask)
    cannot = dist < 0
    # certificate: failing ⊆ inv, inv closed under successors, inv ∩ goal = ∅
    closed = bool(np.all(inv[kripke.succ_idx[inv[kripke.edge_src]]])) if kripke.num_transitions else True
    cert = bool(np.all(inv[fail_mask])) and closed and not bool((inv & goal_mask).any())
    if kripke.frontier is not None and bool((inv & kripke.frontier).any()):
        cert = False  # the successors of frontier states are unknown: nothing is proved
    facts = describe_invariant(kripke, inv, goal_mask, focus)
    ok = init_set - failing
    partial = None
    if ok:
        res = generate_attack_tree(kripke, goal_mask, sorted(ok), **options)  # type: ignore[arg-type]
        partial = res if isinstance(res, AttackFound) else None
    return NoAttack(init_set, goal_set, failing, inv, cannot, cert, kripke.complete, facts, partial,
                    kripke.limit_reason)


# =============================================================================== ⊢V A
def _fill(kripke: Kripke, pre: StateSet, post: StateSet, ef_cache: dict[StateSet, np.ndarray],
          labels: bool) -> AttackTree | None:
    """A valid tree with attack exactly ``(pre, post)`` or ``None`` when ``pre ⊄ EF post``."""
    if post not in ef_cache:
        ef_cache[post] = ef_mask(kripke, as_mask(kripke, [s for s in post if 0 <= s < kripke.num_states]))
    ef = ef_cache[post]
    if any(not (0 <= s < kripke.num_states) or not ef[s] for s in pre):
        return None
    if not pre:
        return AndAttack([], pre, post)
    res = generate_attack_tree(kripke, sorted(post), sorted(pre), max_attacks=1, labels=labels)
    assert isinstance(res, AttackFound)
    return res.tree


def valid_refinement(tree: AttackTree, kripke: Kripke, *, labels: bool = True) -> AttackTree | None:
    """A witness ``A'`` of ``⊢V tree`` (``tree ⊑ A'`` and ``⊢ A'``) or ``None`` when there is none.

    Decision (from the characterisation in :func:`refines`): a base or or-attack only refines into
    or-wrappings of itself, so ``⊢V A ⟺ ⊢ A`` for them. For ``as ⊕∧ (I, s)`` the non-base elements are
    fixed and must be valid; each maximal run of base attacks is a gap that may be replaced by any list;
    a gap from ``P`` (the goal of the previous fixed element, or ``I``) to ``Q`` (the start of the next, or
    ``s``) can be filled iff ``P ⊆ EF Q`` (completeness gives a tree with attack ``(P, Q)``); adjacent fixed
    elements must chain exactly, and without a trailing gap the last element must end on ``s``; a list
    without any element is valid iff ``I ⊆ s``.
    """
    if tree.kind != "and":
        return tree if is_valid(tree, kripke) else None
    kids = tree.children
    if not kids:
        return tree if tree.pre <= tree.post else None
    checker = _Checker(kripke)
    ef_cache: dict[StateSet, np.ndarray] = {}
    out: list[AttackTree] = []
    pre = tree.pre
    gap = False
    for child in kids:
        if child.kind == "base":
            gap = True
            continue
        if not checker.check(child):
            return None
        if gap:
            filler = _fill(kripke, pre, child.pre, ef_cache, labels)
            if filler is None:
                return None
            if filler.pre != filler.post or filler.children:
                out.append(filler)
            gap = False
        elif child.pre != pre:
            return None
        out.append(child)
        pre = child.post
    if gap:
        filler = _fill(kripke, pre, tree.post, ef_cache, labels)
        if filler is None:
            return None
        out.append(filler)
    elif pre != tree.post:
        return None
    witness = AndAttack(out, tree.pre, tree.post)
    return witness if is_valid(witness, kripke) else None


def is_ref_valid(tree: AttackTree, kripke: Kripke) -> bool:
    """``⊢V tree``: some refinement of ``tree`` is valid (see :func:`valid_refinement`)."""
    return valid_refinement(tree, kripke, labels=False) is not None
