"""The IIIf attack-tree type and refinement ``A ⊑ A'`` ([IIIf], theory ``AT``).

* ``attree = BaseAttack (I, s) | AndAttack [trees] (I, s) | OrAttack [trees] (I, s)``; ``attack A`` is the
  pair ``(I, s)`` of the root (:func:`attack`). States are integer ids of a
  :class:`checker.mc.kripke.Kripke` structure and a state set is a ``frozenset[int]``.
* refinement ``A ⊑ A'`` (:func:`refines`, inductive ``refines_to``): [refI] splice the list ``l'`` of an
  and-attack ``l' ⊕∧ (si', si'')`` in place of a base attack ``N(si', si'')`` of an and-list; [ref_or]
  ``as ≠ [] ∧ ∀A' ∈ as. A ⊑ A' ∧ attack A = s ⟹ A ⊑ (as ⊕∨ s)``; [ref_trans]; [ref_refl].

Validity ``⊢ A`` and ``⊢V A`` are in :mod:`checker.attack_trees.validity`, the generation of trees from
``EF s`` in :mod:`checker.attack_trees.generation`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from checker.attack_trees.labels import StepLabel

StateSet = frozenset[int]
Pair = tuple[StateSet, StateSet]


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


def _set_pair(obj: AttackTree, pre: Iterable[int], post: Iterable[int]) -> tuple[StateSet, StateSet]:
    """Store the pair ``(pre, post)`` as frozensets on the immutable node ``obj`` and return it."""
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
        pre_s, post_s = _set_pair(self, pre, post)
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
        pre_s, post_s = _set_pair(self, pre, post)
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
        return (isinstance(other, _Composite) and type(other) is type(self) and self._hash == other._hash
                and self.pre == other.pre and self.post == other.post
                and self._children == other._children)

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
        at every level (the only valid shape for more than two of them, see
        :mod:`checker.attack_trees.validity`)."""
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


def _splice_match(original: Sequence[AttackTree], refined: Sequence[AttackTree]) -> bool:
    """Can ``refined`` be obtained from ``original`` by replacing base attacks of ``original`` by arbitrary
    lists?"""
    n = len(refined)
    produces = np.zeros(n + 1, dtype=bool)  # produces[j]: original[:i] can produce refined[:j]
    produces[0] = True
    for element in original:
        new = np.zeros(n + 1, dtype=bool)
        if element.kind == "base":
            first = np.flatnonzero(produces)
            if len(first):
                new[first[0]:] = True
        else:
            for j in np.flatnonzero(produces[:n]).tolist():
                if same_attack(element, refined[j]):
                    new[j + 1] = True
        produces = new
    return bool(produces[n])
