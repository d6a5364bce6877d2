"""The worst case over schedulers of δ(ε) and of the pure ε* between two observable MDPs.

Setting ([dpCTL] ``D{ε,δ}`` over neighbouring initial states, with the scheduler quantification of
[HyperPCTL]): two finite acyclic :class:`~checker.privacy.observable_mdp.ObservableMDP` s, one per
neighbouring dataset D, D', share their actions and observations; ONE scheduler σ, which sees its own
actions and the observations but never the hidden states, resolves the nondeterminism in both.  The
attacker sees an *outcome*: the observation sequence (``"sequence"``, default: everything on the link,
per release; actions are not observed) or only the last observation (``"final"``).  For ε ≥ 0,

* ``δ_σ(ε) = Σ_o max(0, P_D^σ(o) − e^ε P_D'^σ(o))`` (hockey-stick divergence), and
* ``ε*_σ = max_o ln(P_D^σ(o) / P_D'^σ(o))`` (``∞`` when ``P_D'^σ(o) = 0 < P_D^σ(o)``),

both reported in the two directions (D, D') and (D', D).  Scheduler classes (:data:`SCHEDULER_SEES`
says in one line what each sees):

* ``uniform``: each enabled action with equal probability (one number, no optimisation);
* ``memoryless``: deterministic, a function of the current observation;
* ``adaptive`` (alias ``worst``): a function of the whole history — its own actions and every
  observation so far (the attacker's record) — never the hidden states; deterministic, and by the facts
  below also the worst over all randomised history-dependent schedulers;
* ``blind``: a function of its own past actions only, [dpCTL]'s query schedulers
  (:mod:`checker.privacy.blind`: the deterministic ones are the maximal action words, enumerated
  exactly up to a limit, and randomised ones do no better).

``uniform ≤ memoryless, blind ≤ adaptive`` for every figure (the classes are included in the adaptive
one; uniform is blind where the actions offered depend only on the actions taken).

Facts used, with proofs.

1. *Multilinearity.*  A randomised scheduler is a choice distribution ``σ(h)`` per history ``h``.
   ``P_D^σ(o)`` is a sum over complete histories ``h = (o0, a1, ..., ok)`` with outcome ``o`` of
   ``m_D(h) · Π_i σ(h_<i)(a_i)``, where the mass ``m_D(h)`` does not depend on σ (see
   :mod:`checker.privacy.observable_mdp`) and the product has one factor per distinct prefix.  So
   ``P_D^σ(o)`` and ``P_D'^σ(o)`` are multilinear in the choice vectors: affine in each ``σ(h)``.
2. *Deterministic schedulers suffice.*  Fix all choices but ``σ(h)``.  Each term
   ``max(0, P_D(o) − e^ε P_D'(o))`` is the maximum of two affine functions of ``σ(h)``, hence convex,
   and so is their sum; a convex function on the simplex attains its maximum at a vertex, i.e. a
   deterministic choice at ``h``.  Replacing the choices one history at a time never decreases δ,
   so a deterministic scheduler attains the supremum.  For ε*, ``P_D(o)/P_D'(o)`` is a ratio of two
   affine functions of ``σ(h)`` (quasi-linear), again maximal at a vertex.
3. *Decomposition for observation sequences.*  Under a deterministic σ the outcome (observation
   sequence) determines the history, so the outcomes of σ are the leaves of the history tree that σ
   reaches, and ``δ_σ = Σ_leaves max(0, m_D(h) − e^ε m_D'(h))``.  The choices below different children
   are independent, so the worst deterministic scheduler is a bottom-up dynamic programme:
   ``value(leaf h) = max(0, m_D(h) − e^ε m_D'(h))``, ``value(h) = max_a Σ_{o} value(h a o)``.
   For ε* every leaf is reached by the scheduler that plays its actions: ε* is the largest leaf ratio.
4. *Final observations.*  When no deterministic scheduler reaches two leaves with the same last
   observation (:func:`~checker.privacy.scheduler_bounds.finals_separate`: at every branching on an
   observation the leaves below have disjoint last observations, e.g. the attacker's record of
   everything seen so far), every outcome is one leaf and fact 3 applies unchanged.  Otherwise the
   leaves merge by their last observation and δ does not decompose.  A
   sound upper bound for a partially fixed scheduler maximises each outcome's term separately:
   ``Σ_o max(0, max_σ Σ_{leaves with last obs o} (m_D − e^ε m_D'))``, each inner maximum a linear
   programme of the kind of fact 3.  :func:`worst_delta` runs a branch and bound over the
   deterministic choices with this bound; at its node or time limit it returns the bracket
   [best found, upper bound].  For ε* with final outcomes the maximum ratio is found exactly by
   Dinkelbach's iteration: ``max_σ P(o)/Q(o) > r`` iff ``max_σ P(o) − r Q(o) > 0``, a programme of the
   kind of fact 3 (and ``∞`` iff a scheduler reaches ``Q(o) = 0 < P(o)``, a lexicographic programme).
5. *Memoryless schedulers* tie the choices of all histories with the same current observation; the
   relaxation "history-dependent, with the observations fixed so far" bounds them from above, and a
   branch and bound over observations closes the gap.

Exactness: with ``Fraction`` models and ``e^ε`` rational (:class:`~checker.privacy.ni_fl_dp.Eps`,
e.g. ``Eps.parse("ln(3)")`` or ε = 0) every value is an exact ``Fraction``.  With ε rational and
non-zero, ``e^ε`` is transcendental; values ``A − e^ε B`` are kept as the exact pair ``(A, B)`` and
compared exactly (:func:`~checker.privacy.ni_fl_dp.ratio_within`), and only the reported number is a
float.  This module is generic (it never imports ``flmodel``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Generic, Literal, TypeVar

from checker.errors import Undecided
from checker.privacy.blind import maximal_words, word_choice, word_of, word_tree
from checker.privacy.ni_fl_dp import Eps, Number
from checker.privacy.observable_mdp import (
    Action,
    HistoryTree,
    ObservableMDP,
    build_history_tree,
    format_history,
)
from checker.privacy.scheduler_bounds import (
    Allowed,
    Choice,
    DeltaRelaxation,
    Direction,
    EpsilonRelaxation,
    OutcomeKind,
    Ratio,
    Relaxation,
    Scale,
    charged_event,
    max_ratio,
    ratio_epsilon,
    uniform_distributions,
)
from checker.render import value_text

__all__ = [
    "SCHEDULER_CLASSES",
    "SCHEDULER_SEES",
    "Scheduler",
    "SchedulerClass",
    "SchedulerPrivacy",
    "WorstCase",
    "blind_scheduler",
    "canonical_class",
    "scheduler_class_json",
    "scheduler_class_text",
    "scheduler_privacy",
    "worst_delta",
    "worst_epsilon",
]

#: A scheduler class as the user names it (``worst`` is ``adaptive``'s alias).
SchedulerClass = Literal["uniform", "memoryless", "adaptive", "blind", "worst"]
#: The classes by their own names, as :func:`canonical_class` returns them.
SCHEDULER_CLASSES: tuple[SchedulerClass, ...] = ("uniform", "memoryless", "adaptive", "blind")
#: What a scheduler of each class sees, and why the class matters: one line each, for every output.
SCHEDULER_SEES: dict[str, str] = {
    "uniform": "no adversary: every enabled step equally likely",
    "memoryless": "one deterministic scheduler for both systems that sees the current observation and the "
                  "steps on offer, never the data",
    "adaptive": "one scheduler for both systems that sees its own steps, the steps on offer and everything "
                "the attacker has recorded so far, never the data: an insider who reacts to what was "
                "released (the largest class; its worst case bounds every other class's)",
    "blind": "one scheduler for both systems that sees only its own past steps ([dpCTL]'s query "
             "schedulers): an order of steps fixed in advance, reacting to nothing the runs reveal "
             "(its worst case is at most the adaptive one)",
}
V = TypeVar("V")


def canonical_class(name: str) -> SchedulerClass:
    """The class ``name`` denotes (``worst`` -> ``adaptive``); ``ValueError`` for an unknown name."""
    if name == "worst":
        return "adaptive"
    if name not in SCHEDULER_CLASSES:
        raise ValueError(f"unknown scheduler class {name!r}: expected uniform, memoryless, adaptive "
                         "(alias worst) or blind")
    return name


def scheduler_class_json(name: str) -> dict[str, str]:
    """``{"name", "given", "sees"}``: the class ``name`` denotes, the name as given, and what its
    schedulers see (why the figures depend on the class)."""
    canonical = canonical_class(name)
    return {"name": canonical, "given": name, "sees": SCHEDULER_SEES[canonical]}


def scheduler_class_text(name: str) -> str:
    """One line: ``scheduler class adaptive (worst): one scheduler ...``."""
    canonical = canonical_class(name)
    alias = "" if canonical == name else f" ({name})"
    return f"scheduler class {canonical}{alias}: {SCHEDULER_SEES[canonical]}"


_DIRECTIONS: tuple[tuple[str, str], tuple[str, str]] = (("D", "D'"), ("D'", "D"))


@dataclass(frozen=True)
class Scheduler:
    """A deterministic scheduler in the model's terms.

    ``kind == "history"``: ``choices`` maps histories ``(o0, a1, o1, ...)`` to the action played there;
    ``kind == "observation"`` (memoryless): observations to actions; ``kind == "actions"`` (blind): the
    scheduler's own past actions ``(a1, ..., ak)`` to the next one.  Only the histories (observations,
    action sequences) that the scheduler reaches in D or D' are listed."""

    kind: Literal["history", "observation", "actions"]
    choices: tuple[tuple[Hashable, Action], ...]

    def as_dict(self) -> dict[Hashable, Action]:
        return dict(self.choices)

    def key(self, history: tuple[Hashable, ...]) -> Hashable:
        """What the scheduler reads of ``history``: all of it, its current observation, or its actions."""
        if self.kind == "history":
            return history
        return history[-1] if self.kind == "observation" else history[1::2]

    def text(self) -> str:
        """One line per choice: ``o0 -a-> o1  =>  b`` (``after a, b  =>  c`` for a blind scheduler)."""
        def render(key: Hashable) -> str:
            if self.kind == "history":
                return format_history(key)  # type: ignore[arg-type]  # history keys are History tuples
            if self.kind == "actions":
                return f"after {', '.join(key)}" if key else "at the start"  # type: ignore[arg-type]  # action words
            return str(key)
        return "\n".join(f"{render(key)}  =>  {action}" for key, action in self.choices)


@dataclass(frozen=True)
class WorstCase:
    """The worst case of one quantity in one direction over one scheduler class.

    ``quantity``: ``"delta"`` (δ(ε) of ``P_first ≤ e^ε P_second + δ``) or ``"epsilon"`` (ε*).
    ``value`` is attained by ``scheduler`` (``None`` for ``uniform``); ``upper`` is an upper bound over
    the class, equal to ``value`` when ``exact``.  For ε*: ``value``/``upper`` are floats (``inf``) and
    ``ratio`` is ``e^ε*`` exactly (``None`` when ∞).  ``outcome`` is the decisive outcome (ε*) or event
    (δ: the tuple of outcomes with a positive term); ``p_d``, ``p_d_prime`` its probabilities under D and
    D'.  ``explored``: branch-and-bound nodes; ``note`` says how the value was found."""

    quantity: Literal["delta", "epsilon"]
    direction: tuple[str, str]
    schedulers: SchedulerClass
    outcome_kind: OutcomeKind
    value: Number
    upper: Number
    exact: bool
    ratio: Ratio | None
    scheduler: Scheduler | None
    outcome: Hashable
    p_d: Number
    p_d_prime: Number
    explored: int
    note: str

    def text(self) -> str:
        first, second = self.direction
        name = "δ" if self.quantity == "delta" else "ε*"
        bracket = f"{self.value}" if self.exact else f"in [{self.value}, {self.upper}]"
        return (f"{name}({first}‖{second}) over {self.schedulers} schedulers, {self.outcome_kind} outcomes: "
                f"{bracket}; P_D = {self.p_d}, P_D' = {self.p_d_prime} ({self.note})")


@dataclass(frozen=True)
class SchedulerPrivacy:
    """δ(ε) and ε* in both directions; ``delta``/``epsilon`` are the larger of the two."""

    delta_forward: WorstCase
    delta_backward: WorstCase
    epsilon_forward: WorstCase
    epsilon_backward: WorstCase
    histories: int

    @property
    def delta(self) -> WorstCase:
        return max(self.delta_forward, self.delta_backward, key=lambda r: r.upper)

    @property
    def epsilon(self) -> WorstCase:
        return max(self.epsilon_forward, self.epsilon_backward, key=lambda r: r.upper)


# ---------------------------------------------------------------------------------------------------
# Branch and bound over deterministic choices
# ---------------------------------------------------------------------------------------------------

Key = Callable[[int], Hashable]


@dataclass(frozen=True)
class _Search(Generic[V]):
    value: V
    choice: Choice
    upper: V
    exact: bool
    explored: int
    stopped: str


def _project(tree: HistoryTree, key: Key, assignment: Mapping[Hashable, Action], witness: Choice) -> Choice:
    """The scheduler of the class that follows ``assignment`` and otherwise the witness's choice at the
    first (breadth-first) history of each key; only reached histories are listed."""
    chosen: dict[Hashable, Action] = {}
    choice: Choice = {}
    queue = list(tree.roots)
    for node in queue:
        if tree.is_leaf(node):
            continue
        k = key(node)
        action = chosen.setdefault(k, assignment.get(k, witness[node]))
        choice[node] = action
        queue.extend(tree.children[node][action])
    return choice


def _branching(tree: HistoryTree, key: Key, allowed: Allowed, assignment: Mapping[Hashable, Action],
               witnesses: Sequence[Choice]) -> tuple[Hashable, list[Action]] | None:
    """The first free key (breadth first over the histories that ``allowed`` reaches) on which the
    witnesses disagree, else the first free key; its actions, the witnesses' first."""
    proposed: dict[Hashable, list[Action]] = {}
    first_node: dict[Hashable, int] = {}
    queue = list(tree.roots)
    for node in queue:
        if tree.is_leaf(node):
            continue
        k = key(node)
        if k not in assignment:
            first_node.setdefault(k, node)
            actions = proposed.setdefault(k, [])
            for witness in witnesses:
                if witness[node] not in actions:
                    actions.append(witness[node])
        for action in allowed[node]:
            queue.extend(tree.children[node][action])
    if not proposed:
        return None
    k = next((k for k, actions in proposed.items() if len(actions) > 1), next(iter(proposed)))
    actions = proposed[k]
    return k, actions + [a for a in tree.enabled[first_node[k]] if a not in actions]


def _branch_and_bound(tree: HistoryTree, relaxation: Relaxation[V], key: Key, node_limit: int,
                      time_limit: float | None) -> _Search[V]:
    """Depth-first branch and bound: a node fixes the actions of some keys; its relaxation bounds every
    scheduler that extends it; witnesses projected into the class give incumbents."""
    if node_limit < 1:
        raise ValueError(f"node_limit must be >= 1, got {node_limit}")
    start = time.monotonic()
    less = relaxation.less
    incumbent: tuple[V, Choice] | None = None
    stack: list[tuple[dict[Hashable, Action], V | None]] = [({}, None)]
    explored = 0
    stopped = ""
    while stack:
        if explored >= node_limit:
            stopped = f"node limit {node_limit}"
            break
        if time_limit is not None and time.monotonic() - start > time_limit:
            stopped = f"time limit {time_limit} s"
            break
        assignment, parent_bound = stack.pop()
        if parent_bound is not None and incumbent is not None and not less(incumbent[0], parent_bound):
            continue
        explored += 1
        allowed = [tree.enabled[n] if tree.is_leaf(n) or key(n) not in assignment else (assignment[key(n)],)
                   for n in range(len(tree))]
        bound, witnesses = relaxation.bound(allowed)
        for witness in witnesses:
            choice = _project(tree, key, assignment, witness)
            value = relaxation.evaluate(choice)[0]
            if incumbent is None or less(incumbent[0], value):
                incumbent = (value, choice)
        assert incumbent is not None
        if not less(incumbent[0], bound):
            continue
        branch = _branching(tree, key, allowed, assignment, witnesses)
        if branch is None:
            continue
        k, actions = branch
        stack.extend(({**assignment, k: a}, bound) for a in reversed(actions))
    assert incumbent is not None
    upper = incumbent[0]
    for _, open_bound in stack if stopped else ():
        if open_bound is not None and less(upper, open_bound):
            upper = open_bound
    return _Search(incumbent[0], incumbent[1], upper, not stopped, explored, stopped)


def _memoryless_key(tree: HistoryTree) -> Key:
    """Key histories by their current observation, after checking that every non-terminal history with
    the same observation offers the same actions (else a memoryless scheduler is not defined)."""
    offered: dict[Hashable, int] = {}
    for node in range(len(tree)):
        if tree.is_leaf(node):
            continue
        o = tree.observation(node)
        other = offered.setdefault(o, node)
        if tree.enabled[other] != tree.enabled[node]:
            raise Undecided(
                f"observation {value_text(o)} offers different actions at history "
                f"{format_history(tree.histories[other])} "
                f"({', '.join(tree.enabled[other])}) and at {format_history(tree.histories[node])} "
                f"({', '.join(tree.enabled[node])}): no memoryless scheduler exists")
    return tree.observation


def blind_scheduler(tree: HistoryTree, choice: Mapping[int, Action]) -> Scheduler:
    """The blind scheduler that plays ``choice`` (node -> action, one action per word on the nodes it
    reaches) as a map from its own past actions to the next one; ``ValueError`` when ``choice`` plays
    two actions after one word (it is then no blind scheduler)."""
    by_word: dict[tuple[Action, ...], Action] = {}
    stack = list(tree.roots)
    while stack:
        node = stack.pop()
        if tree.is_leaf(node):
            continue
        word, action = word_of(tree.histories[node]), choice[node]
        if by_word.setdefault(word, action) != action:
            raise ValueError(f"the scheduler plays {by_word[word]} and {action} after the same steps "
                             f"{', '.join(word) or '(none)'}: it is not blind")
        stack.extend(tree.children[node][action])
    shortest_first = sorted(by_word, key=lambda word: (len(word), word))
    return Scheduler("actions", tuple((word, by_word[word]) for word in shortest_first))


def _scheduler(tree: HistoryTree, choice: Choice, schedulers: SchedulerClass) -> Scheduler:
    if schedulers == "blind":
        return blind_scheduler(tree, choice)
    if schedulers == "memoryless":
        by_observation: dict[Hashable, Action] = {}
        for node in sorted(choice):
            by_observation.setdefault(tree.observation(node), choice[node])
        return Scheduler("observation", tuple(by_observation.items()))
    return Scheduler("history", tuple((tree.histories[n], choice[n]) for n in sorted(choice)))


def _blind_search(tree: HistoryTree, relaxation: Relaxation[V], limit: int) -> _Search[V]:
    """The worst deterministic blind scheduler: every maximal action word evaluated exactly
    (:mod:`checker.privacy.blind`; ``ValueError`` past ``limit`` words or when none exists)."""
    words = word_tree(tree)
    best: tuple[V, Choice] | None = None
    count = 0
    for path in maximal_words(words, limit):
        count += 1
        choice = word_choice(tree, words, path)
        value = relaxation.evaluate(choice)[0]
        if best is None or relaxation.less(best[0], value):
            best = (value, choice)
    assert best is not None
    return _Search(best[0], best[1], best[0], True, count, "")


def _note(schedulers: SchedulerClass, exact_relaxation: str, search: _Search[V]) -> str:
    if search.stopped:
        return (f"branch and bound stopped at the {search.stopped} after {search.explored} nodes: "
                "the worst case lies in [value, upper]")
    if schedulers == "blind":
        return (f"exact: all {search.explored} deterministic blind schedulers (maximal step sequences); "
                "randomised ones do no better")
    if exact_relaxation and schedulers == "adaptive":
        return f"exact: {exact_relaxation}"
    what = "observation" if schedulers == "memoryless" else "history"
    return f"exact: branch and bound over deterministic {what}-dependent schedulers, {search.explored} nodes"


def _per_leaf_note(relaxation: DeltaRelaxation | EpsilonRelaxation, what: str) -> str:
    """``what`` when every outcome of a deterministic scheduler is one leaf (fact 3 applies), else ``""``."""
    if not relaxation.per_leaf:
        return ""
    return what if relaxation.kind == "sequence" else f"{what} (each final observation is one leaf)"


def _check(schedulers: str, outcome: str) -> SchedulerClass:
    if outcome not in ("sequence", "final"):
        raise ValueError(f"unknown outcome {outcome!r}: expected sequence or final")
    return canonical_class(schedulers)


def _search(tree: HistoryTree, relaxation: Relaxation[V], schedulers: SchedulerClass, node_limit: int,
            time_limit: float | None, blind_limit: int) -> _Search[V]:
    if schedulers == "blind":
        return _blind_search(tree, relaxation, blind_limit)
    key = _memoryless_key(tree) if schedulers == "memoryless" else (lambda node: node)
    return _branch_and_bound(tree, relaxation, key, node_limit, time_limit)


# ---------------------------------------------------------------------------------------------------
# The public functions
# ---------------------------------------------------------------------------------------------------


def worst_delta(tree: HistoryTree, eps: Eps | float | Fraction | str, *, direction: Direction = 0,
                schedulers: SchedulerClass = "adaptive", outcome: OutcomeKind = "sequence",
                node_limit: int = 100_000, time_limit: float | None = None,
                blind_limit: int = 100_000) -> WorstCase:
    """The largest ``δ_σ(ε) = Σ_o max(0, P_first(o) − e^ε P_second(o))`` over the scheduler class.

    ``direction`` 0 bounds ``P_D ≤ e^ε P_D' + δ``, 1 the converse.  ``adaptive`` with ``sequence``
    outcomes is the dynamic programme of fact 3 (exact, linear in the number of histories); ``final``
    outcomes and ``memoryless`` schedulers use the branch and bound of facts 4 and 5, stopped after
    ``node_limit`` nodes or ``time_limit`` seconds with the bracket ``[value, upper]``.  ``blind``
    evaluates every deterministic blind scheduler (exact; ``ValueError`` past ``blind_limit`` of them).

    >>> from fractions import Fraction as F
    >>> coin = ObservableMDP({"s": 1}, {"s": {"go": {"h": F(3, 4), "t": F(1, 4)}}}, {"s": 0, "h": 1, "t": 2})
    >>> fair = ObservableMDP({"s": 1}, {"s": {"go": {"h": F(1, 2), "t": F(1, 2)}}}, {"s": 0, "h": 1, "t": 2})
    >>> worst_delta(build_history_tree(coin, fair), 0).value
    Fraction(1, 4)
    """
    schedulers = _check(schedulers, outcome)
    scale = Scale(Eps.of(eps), tree.exact)
    relaxation = DeltaRelaxation(tree, direction, outcome, scale)
    if schedulers == "uniform":
        dists = uniform_distributions(tree, outcome)
        pair, charged = charged_event(dists[direction], dists[1 - direction], scale)
        p = pair if direction == 0 else (pair[1], pair[0])
        return WorstCase("delta", _DIRECTIONS[direction], schedulers, outcome, scale.value(pair),
                         scale.value(pair), True, None, None, charged, p[0], p[1], 0,
                         "exact: the uniform scheduler")
    search = _search(tree, relaxation, schedulers, node_limit, time_limit, blind_limit)
    _, event, p = relaxation.evaluate(search.choice)
    return WorstCase("delta", _DIRECTIONS[direction], schedulers, outcome, scale.value(search.value),
                     scale.value(search.upper), search.exact, None,
                     _scheduler(tree, search.choice, schedulers), event, p[0], p[1], search.explored,
                     _note(schedulers, _per_leaf_note(relaxation, "dynamic programme over the history tree"),
                           search))


def worst_epsilon(tree: HistoryTree, *, direction: Direction = 0, schedulers: SchedulerClass = "adaptive",
                  outcome: OutcomeKind = "sequence", node_limit: int = 100_000,
                  time_limit: float | None = None, blind_limit: int = 100_000) -> WorstCase:
    """The largest ``ε*_σ = max_o ln(P_first(o) / P_second(o))`` over the scheduler class (``inf`` when
    some scheduler reaches ``P_second(o) = 0 < P_first(o)``).

    ``adaptive``: the largest leaf ratio (``sequence``) or Dinkelbach's iteration (``final``), both
    exact; ``memoryless``: branch and bound as in :func:`worst_delta`; ``blind``: every deterministic
    blind scheduler, as in :func:`worst_delta`.  ``ratio`` is ``e^ε*``."""
    schedulers = _check(schedulers, outcome)
    relaxation = EpsilonRelaxation(tree, direction, outcome)
    if schedulers == "uniform":
        dists = uniform_distributions(tree, outcome)
        r, o = max_ratio(dists[direction], dists[1 - direction])
        zero = relaxation.zero
        return WorstCase("epsilon", _DIRECTIONS[direction], schedulers, outcome, ratio_epsilon(r),
                         ratio_epsilon(r), True, None if r == math.inf else r, None, o,
                         dists[0].get(o, zero), dists[1].get(o, zero), 0, "exact: the uniform scheduler")
    search = _search(tree, relaxation, schedulers, node_limit, time_limit, blind_limit)
    _, o, p = relaxation.evaluate(search.choice)
    return WorstCase("epsilon", _DIRECTIONS[direction], schedulers, outcome, ratio_epsilon(search.value),
                     ratio_epsilon(search.upper), search.exact,
                     None if search.value == math.inf else search.value,
                     _scheduler(tree, search.choice, schedulers), o, p[0], p[1], search.explored,
                     _note(schedulers, _per_leaf_note(relaxation, "the largest leaf ratio")
                           or "Dinkelbach's iteration over the history tree", search))


def scheduler_privacy(d: ObservableMDP, d_prime: ObservableMDP, eps: Eps | float | Fraction | str, *,
                      schedulers: SchedulerClass = "adaptive", outcome: OutcomeKind = "sequence",
                      node_limit: int = 100_000, time_limit: float | None = None,
                      blind_limit: int = 100_000) -> SchedulerPrivacy:
    """δ(ε) and ε* of ``d`` against ``d_prime`` in both directions over one scheduler class.

    Raises ``ValueError`` for an invalid or cyclic model, a history at which the two models (or two
    states of one) enable different actions, or a class that does not exist on the model."""
    tree = build_history_tree(d, d_prime)
    def delta(direction: Direction) -> WorstCase:
        return worst_delta(tree, eps, direction=direction, schedulers=schedulers, outcome=outcome,
                           node_limit=node_limit, time_limit=time_limit, blind_limit=blind_limit)

    def epsilon(direction: Direction) -> WorstCase:
        return worst_epsilon(tree, direction=direction, schedulers=schedulers, outcome=outcome,
                             node_limit=node_limit, time_limit=time_limit, blind_limit=blind_limit)

    return SchedulerPrivacy(delta(0), delta(1), epsilon(0), epsilon(1), len(tree))
