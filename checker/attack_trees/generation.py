"""Generation of IIIf attack trees from ``EF s``: the constructive completeness theorem, with the blocking
invariant ``AG ¬s`` when no tree exists ([IIIf], theory ``AT``).

Correctness [AT_EF]: ``⊢A ∧ attack A = (I, s) ⟹ Kripke(reach I) ⊢ EF s``; completeness [Completeness]:
``I ≠ {} ∧ finite I ∧ Kripke(reach I) ⊢ EF s ⟹ ∃A. ⊢A ∧ attack A = (I, s)``. :func:`generate_attack_tree`
is the constructive direction; :func:`checker.attack_trees.graph_search.ef_mask` is an independent
backward search used to check both.

"Genuinely different" attacks are the trace classes of :mod:`checker.attack_trees.traces`: because of
axiom (C), any path realising a word can be rearranged into a path realising its normal form with the same
end points, so the search only extends paths whose word stays in normal form and distinct normal forms are
distinct ways (a class is not reported when its normal-form realisation revisits a state or passes the
goal early — such a class contains a strictly shorter attack). Letters are the full actions by default,
or the actions without their detail (``steps``: a client step whatever value it carries), or the edges
themselves (``paths``). *Minimal* attacks: no other attack uses a strict subset of its actions, or the
same actions with fewer repetitions.

Typical use (the exporters are in :mod:`checker.attack_trees.export`)::

    >>> from checker.mc.kripke import Kripke
    >>> from checker.mc.ts import Action
    >>> k = Kripke.from_edges(4, [0], [0, 0, 1, 2], [1, 2, 3, 3], action=[0, 1, 1, 0],
    ...                       actions=(Action("get_grad", "sat1"), Action("get_grad", "sat2")))
    >>> from checker.attack_trees.validity import is_valid
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
from typing import Literal

import numpy as np

from checker.attack_trees.graph_search import distance_to, forward_reach
from checker.attack_trees.labels import StateValues, counter_observables, step_label
from checker.attack_trees.traces import Independence, edge_letters, extends_normal_form
from checker.attack_trees.tree import AttackTree, StateSet, TreeBuilder
from checker.markov.models import state_mask
from checker.mc.exploration import Limits, check_limits
from checker.mc.kripke import Kripke
from checker.render import value_text

#: The path search checks its limits every this many steps.
LIMIT_CHECK_STEPS = 4096


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



class _PathSearch:
    """Enumeration of first-hitting simple paths from one state, one trace class at a time."""

    def __init__(self, kripke: Kripke, goal: np.ndarray, dist: np.ndarray, mode: str, budget: int,
                 limits: Limits | None = None):
        self.kripke = kripke
        self.limits = limits
        self.goal = goal
        self.dist = dist
        self.mode = mode
        self.budget = budget
        self.exhausted = False
        self.letters, self.names, self.rank = edge_letters(kripke, mode)
        self.independence: Independence | None = None
        if mode != "paths":
            self.independence = Independence(kripke, self.letters, len(self.names))

    def letter(self, edge: int) -> int:
        return int(self.letters[edge])

    def paths(self, start: int, length: int) -> Iterator[AttackPath]:
        """All simple paths of exactly ``length`` steps from ``start`` whose last state (only) is in the
        goal and whose letter word is in lexicographic normal form (unless ``paths`` mode); an explicit
        stack, so long attacks do not hit Python's recursion limit."""
        kripke, goal, dist = self.kripke, self.goal, self.dist
        ptr, idx = kripke.succ_ptr, kripke.succ_idx
        if length == 0 or goal[start]:
            if length == 0 and goal[start]:
                yield AttackPath((start,), (), ())
            return
        states = [start]
        edges: list[int] = []
        letters: list[int] = []
        on_path = {start}
        independence = self.independence
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
            if self.budget % LIMIT_CHECK_STEPS == 0:
                check_limits(self.limits)
            y = int(idx[e])
            distance = int(dist[y])
            if distance < 0 or distance > remaining - 1 or y in on_path:
                continue
            letter = self.letter(e)
            if independence is not None and not extends_normal_form(letters, letter, self.rank,
                                                                     independence.independent):
                continue
            self.budget -= 1
            if remaining == 1:  # distance == 0: y is a goal state
                yield AttackPath((*states, y), (*edges, e), (*letters, letter))
                continue
            if goal[y]:
                continue
            states.append(y)
            edges.append(e)
            letters.append(letter)
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
    limits: Limits | None = None,
) -> tuple[list[AttackPath], bool, int]:
    """The genuinely different ways from ``start`` into ``goal`` (shortest first): at most ``max_attacks``
    trace classes of first-hitting simple paths of length ≤ ``max_depth`` (default: shortest + 2; never
    less than the shortest, so a path is always found when ``EF goal`` holds). Returns
    ``(paths, truncated, depth_used)``. ``distinguish="paths"`` treats every path as its own way.

    ``budget`` bounds the search steps; with ``minimal_only`` at most ``candidates`` (default
    ``max(1000, 50 * max_attacks)``) ways are enumerated and minimality is decided among them. Either
    bound being hit sets ``truncated``. ``limits`` (their shared deadlines and the memory limit) are
    checked every :data:`LIMIT_CHECK_STEPS` search steps: passing one raises
    :class:`~checker.errors.LimitReached`."""
    if dist is None:
        dist = distance_to(kripke, goal)
    d0 = int(dist[start])
    if d0 < 0:
        return [], False, 0
    if d0 == 0:
        return [AttackPath((start,), (), ())], False, 0
    depth = d0 + 2 if max_depth is None else max(max_depth, d0)
    search = _PathSearch(kripke, goal, dist, distinguish, budget, limits)
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
               observables: Iterable[str] | None = None, values: StateValues | None = None) -> AttackTree:
    """``[N({x0},{x1}), ..., N({x_{n-1}},{x_n})] ⊕∧ ({x0},{x_n})`` (att_and chain of att_base steps)."""
    states = path.states
    if not path.edges:
        return builder.and_([], {states[0]}, {states[0]})
    steps = [builder.base({states[i]}, {states[i + 1]},
                          step_label(kripke, states[i], states[i + 1], path.edges[i], observables, values)
                          if label else None)
             for i in range(len(path.edges))]
    return builder.and_(steps, {states[0]}, {states[-1]})


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
    limits: Limits | None = None,
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
    on the blocking invariant when no attack exists. ``limits`` bound the search
    (:func:`find_attack_paths`).
    """
    goal_mask = state_mask(goal, kripke.num_states)
    init_mask = kripke.initial_mask() if initial is None else state_mask(initial, kripke.num_states)
    init_set: StateSet = frozenset(np.flatnonzero(init_mask).tolist())
    goal_set: StateSet = frozenset(np.flatnonzero(goal_mask).tolist())
    dist = distance_to(kripke, goal_mask)
    failing = frozenset(i for i in init_set if dist[i] < 0)
    if failing:
        def tree_for(initial_states: list[int]) -> AttackFound | NoAttack:
            return generate_attack_tree(kripke, goal_mask, initial_states, max_depth=max_depth,
                                        max_attacks=max_attacks, minimal_only=minimal_only,
                                        distinguish=distinguish, labels=labels,
                                        label_observables=label_observables, budget=budget,
                                        limits=limits)

        return _no_attack(kripke, goal_mask, init_set, goal_set, failing, dist, goal_observables, tree_for)
    mode: Literal["actions", "steps", "paths"]
    if distinguish == "auto":
        used = np.unique(kripke.edge_action) if kripke.num_transitions else np.zeros(0)
        mode = "actions" if len(used) > 1 else "paths"
    else:
        mode = distinguish
    builder = TreeBuilder()
    warnings: list[str] = []
    shown: list[str] | None = None
    values = StateValues(kripke)
    if labels:
        if label_observables is None:
            hidden = counter_observables(kripke, values=values)
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
                                                distinguish=mode, budget=budget, limits=limits)
        if max_depth is not None and int(dist[i]) > max_depth:
            warnings.append(f"the shortest attack from {kripke.state_name(i)} has {int(dist[i])} steps, "
                            f"more than --max-depth {max_depth}; it is reported anyway")
        truncated |= trunc
        all_paths[i] = paths
        depths[i] = depth
        subtrees = [_path_tree(builder, kripke, p, labels, shown, values) for p in paths]
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
        return {value_text(v) for v in distinct.tolist()}
    out: set[str] = set()
    for s in np.flatnonzero(mask).tolist():
        out.add(value_text(values[s]))
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
               failing: StateSet, dist: np.ndarray, focus: Sequence[str],
               tree_for: Callable[[list[int]], AttackFound | NoAttack]) -> NoAttack:
    """The blocking invariant of the ``failing`` initial states and, through ``tree_for`` (generation with
    the caller's options), the partial tree of the initial states that can reach the goal."""
    fail_mask = state_mask(sorted(failing), kripke.num_states)
    invariant = forward_reach(kripke, fail_mask)
    cannot_reach = dist < 0
    # certificate: failing ⊆ invariant, invariant closed under successors, invariant ∩ goal = ∅
    closed = (bool(np.all(invariant[kripke.succ_idx[invariant[kripke.edge_src]]]))
              if kripke.num_transitions else True)
    certificate_ok = (bool(np.all(invariant[fail_mask])) and closed
                      and not bool((invariant & goal_mask).any()))
    if kripke.frontier is not None and bool((invariant & kripke.frontier).any()):
        certificate_ok = False  # the successors of frontier states are unknown: nothing is proved
    facts = describe_invariant(kripke, invariant, goal_mask, focus)
    can_reach = init_set - failing
    partial = None
    if can_reach:
        found = tree_for(sorted(can_reach))
        partial = found if isinstance(found, AttackFound) else None
    return NoAttack(init_set, goal_set, failing, invariant, cannot_reach, certificate_ok, kripke.complete,
                    facts, partial, kripke.limit_reason)
