"""Validity ``⊢ A`` and refinement-validity ``⊢V A`` of IIIf attack trees in a Kripke structure ([IIIf],
theory ``AT``).

* validity ``⊢ A`` (:func:`is_valid`, ``is_attack_tree``):

  - [att_base] ``⊢ N(I, s)  ⟺  ∀x ∈ I. ∃y ∈ s. x → y``;
  - [att_and] ``⊢ (As ⊕∧ (I, s))`` by cases on the list: ``[] ⟹ I ⊆ s``; ``[a] ⟹ ⊢a ∧ attack a = (I, s)``;
    ``a # l ⟹ ⊢a ∧ fst(attack a) = I ∧ ⊢(l ⊕∧ (snd(attack a), s))``;
  - [att_or] ``⊢ (As ⊕∨ (I, s))``: ``[] ⟹ I ⊆ s``; ``[a] ⟹ ⊢a ∧ fst(attack a) ⊇ I ∧ snd(attack a) ⊆ s``;
    ``a # l ⟹ ⊢a ∧ fst(attack a) ⊆ I ∧ snd(attack a) ⊆ s ∧ ⊢(l ⊕∨ (I − fst(attack a), s))``.

  A consequence worth knowing: in a flat or-list only the *last* child may start on states an earlier
  child already covered, so ``k > 2`` alternatives over the *same* start set are valid only when nested
  (``Or[a1, Or[a2, Or[a3, a4]]]``, every nested or carrying the same pair);
  :func:`checker.attack_trees.generation.generate_attack_tree` builds exactly that shape and the exporters
  can display it flattened.
* ``A ⊑V A' ⟺ A ⊑ A' ∧ ⊢A'`` and ``⊢V A ⟺ ∃A'. A ⊑V A'`` (:func:`is_ref_valid`, with the witness
  :func:`valid_refinement`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from checker.attack_trees.generation import AttackFound, generate_attack_tree
from checker.attack_trees.graph_search import ef_mask
from checker.attack_trees.tree import AndAttack, AttackTree, StateSet
from checker.markov.models import state_mask
from checker.mc.kripke import Kripke


@dataclass(frozen=True)
class Validity:
    """Result of :func:`check_validity`: ``valid`` and, when not, the first offending node (parents
    reported through the child that fails) and the rule that fails there."""

    valid: bool
    reason: str = ""
    node: AttackTree | None = None

    def __bool__(self) -> bool:
        return self.valid


def _named_states(states: StateSet, kripke: Kripke, limit: int = 6) -> str:
    """``{s0, s3}`` by state name (``#id`` for an id outside the model), cut after ``limit`` names."""
    names = [kripke.state_name(s) if 0 <= s < kripke.num_states else f"#{s}" for s in sorted(states)]
    if len(names) > limit:
        return "{" + ", ".join(names[:limit]) + f", ... ({len(names)} states)}}"
    return "{" + ", ".join(names) + "}"


class _ValidityChecker:
    """Checks the nodes of child tree bottom-up, each shared node once (``memo`` by node identity)."""

    def __init__(self, kripke: Kripke):
        self.kripke = kripke
        self.masks: dict[int, tuple[StateSet, np.ndarray]] = {}
        self.memo: dict[int, Validity] = {}

    def mask(self, states: StateSet) -> np.ndarray:
        """The mask of the model states among ``states`` (ids outside the model are left out), cached by
        the identity of the set (trees share their state sets)."""
        hit = self.masks.get(id(states))
        if hit is not None and hit[0] is states:
            return hit[1]
        in_model = state_mask([s for s in states if 0 <= s < self.kripke.num_states], self.kripke.num_states)
        self.masks[id(states)] = (states, in_model)
        return in_model

    def named(self, states: StateSet) -> str:
        return _named_states(states, self.kripke)

    def base(self, node: AttackTree) -> Validity:
        # att_base: ∀x ∈ I. ∃y ∈ s. x → y
        goal = self.mask(node.post)
        kripke = self.kripke
        for x in sorted(node.pre):
            if not 0 <= x < kripke.num_states:
                return Validity(False, f"base attack: state id {x} is not a state of the model", node)
            succ = kripke.succ_idx[kripke.succ_ptr[x]:kripke.succ_ptr[x + 1]]
            if not bool(goal[succ].any()):
                return Validity(False, f"base attack: state {kripke.state_name(x)} has no successor in "
                                       f"the goal {self.named(node.post)}", node)
        return Validity(True)

    def and_(self, node: AttackTree) -> Validity:
        # att_and, unrolled along the list (a # l): the tail l is checked against (snd(attack a), s)
        pre, goal, kids = node.pre, node.post, node.children
        i = 0
        while True:
            rest = len(kids) - i
            if rest == 0:
                if pre <= goal:
                    return Validity(True)
                return Validity(False, f"and-attack: empty remainder needs start {self.named(pre)} ⊆ goal "
                                       f"{self.named(goal)}", node)
            child = kids[i]
            verdict = self.memo[id(child)]
            if not verdict:
                return Validity(False, f"and-attack: sub-attack {i + 1} is invalid: {verdict.reason}",
                                verdict.node)
            if rest == 1:
                if child.pre == pre and child.post == goal:
                    return Validity(True)
                return Validity(False, f"and-attack: last sub-attack {i + 1} has pair "
                                       f"({self.named(child.pre)}, {self.named(child.post)}), needs "
                                       f"({self.named(pre)}, {self.named(goal)})", node)
            if child.pre != pre:
                return Validity(False, f"and-attack: sub-attack {i + 1} starts at {self.named(child.pre)}, "
                                       f"needs {self.named(pre)}", node)
            pre = child.post
            i += 1

    def or_(self, node: AttackTree) -> Validity:
        # att_or, unrolled (a # l): the tail l must cover I − fst(attack a)
        pre, goal, kids = node.pre, node.post, node.children
        i = 0
        while True:
            rest = len(kids) - i
            if rest == 0:
                if pre <= goal:
                    return Validity(True)
                return Validity(False, f"or-attack: uncovered start states {self.named(pre - goal)}", node)
            child = kids[i]
            verdict = self.memo[id(child)]
            if not verdict:
                return Validity(False, f"or-attack: alternative {i + 1} is invalid: {verdict.reason}",
                                verdict.node)
            if not child.post <= goal:
                return Validity(False, f"or-attack: alternative {i + 1} reaches "
                                       f"{self.named(child.post - goal)} outside the goal", node)
            if rest == 1:
                if child.pre >= pre:
                    return Validity(True)
                return Validity(False, f"or-attack: last alternative {i + 1} does not start on the "
                                       f"uncovered states {self.named(pre - child.pre)}", node)
            if not child.pre <= pre:
                return Validity(False, f"or-attack: alternative {i + 1} starts on "
                                       f"{self.named(child.pre - pre)}, outside the states left to cover",
                                node)
            pre = pre - child.pre
            i += 1

    def check(self, tree: AttackTree) -> Validity:
        for node in tree.postorder():  # children before parents
            if id(node) in self.memo:
                continue
            if node.kind == "base":
                validity = self.base(node)
            elif node.kind == "and":
                validity = self.and_(node)
            elif node.kind == "or":
                validity = self.or_(node)
            else:  # pragma: no cover
                raise TypeError(f"unknown attack tree node {node!r}")
            self.memo[id(node)] = validity
        return self.memo[id(tree)]


def check_validity(tree: AttackTree, kripke: Kripke) -> Validity:
    """``⊢ tree`` in ``kripke`` exactly as IIIf's ``is_attack_tree`` (att_base, att_and, att_or), with the
    reason when it fails. Shared sub-attacks are checked once."""
    return _ValidityChecker(kripke).check(tree)


def is_valid(tree: AttackTree, kripke: Kripke) -> bool:
    """``⊢ tree`` (see :func:`check_validity`)."""
    return check_validity(tree, kripke).valid


def _tree_for_gap(kripke: Kripke, pre: StateSet, post: StateSet, ef_cache: dict[StateSet, np.ndarray],
                  labels: bool) -> AttackTree | None:
    """A valid tree with attack exactly ``(pre, post)`` or ``None`` when ``pre ⊄ EF post``."""
    if post not in ef_cache:
        in_model = [s for s in post if 0 <= s < kripke.num_states]
        ef_cache[post] = ef_mask(kripke, state_mask(in_model, kripke.num_states))
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

    Decision (from the characterisation in :func:`checker.attack_trees.tree.refines`): a base or
    or-attack only refines into or-wrappings of itself, so ``⊢V A ⟺ ⊢ A`` for them. For ``as ⊕∧ (I, s)``
    the non-base elements are fixed and must be valid; each maximal run of base attacks is a gap that may
    be replaced by any list; a gap from ``P`` (the goal of the previous fixed element, or ``I``) to ``Q``
    (the start of the next, or ``s``) can be filled iff ``P ⊆ EF Q`` (completeness gives a tree with attack
    ``(P, Q)``); adjacent fixed elements must chain exactly, and without a trailing gap the last element
    must end on ``s``; a list without any element is valid iff ``I ⊆ s``.
    """
    if tree.kind != "and":
        return tree if is_valid(tree, kripke) else None
    kids = tree.children
    if not kids:
        return tree if tree.pre <= tree.post else None
    checker = _ValidityChecker(kripke)
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
            filler = _tree_for_gap(kripke, pre, child.pre, ef_cache, labels)
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
        filler = _tree_for_gap(kripke, pre, tree.post, ef_cache, labels)
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
