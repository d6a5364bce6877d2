"""``D{ε,δ}[ψ]`` ([dpCTL]) over a class of schedulers: ``Pr_D^σ(ψ) ≤ e^ε Pr_D'^σ(ψ) + δ`` for every
scheduler σ of the class, in both directions (D, D') and (D', D).

Setting as in :mod:`checker.privacy.schedulers`: two finite acyclic observable MDPs share their actions
and observations, and ONE scheduler σ, seeing only its actions and the observations, resolves the
nondeterminism of both.  The path formula ψ is decided per complete run; the caller makes it a
function of the observation history by putting ψ's verdict into the observation of the terminal
states (``(observation, verdict)``: no choice follows a terminal state, so this tells the scheduler
nothing it could use).  ``event(node)`` says whether the leaf ``node`` of the
:class:`~checker.privacy.observable_mdp.HistoryTree` satisfies ψ.

For a fixed σ, ``g(σ) = Pr_first^σ(ψ) − e^ε Pr_second^σ(ψ)`` is a sum over the leaves σ reaches of
``[ψ(h)] (m_first(h) − e^ε m_second(h))`` (multilinear in σ's choice probabilities, fact 1 of
:mod:`checker.privacy.schedulers`), affine in each single choice, so deterministic schedulers attain
its maximum (fact 2).  The property holds iff ``max_σ g(σ) ≤ δ``.  The classes
(:data:`~checker.privacy.schedulers.SCHEDULER_SEES`):

* ``adaptive`` (alias ``worst``, the default): history-dependent schedulers; the maximum is the
  bottom-up programme ``value(h) = max_a Σ_o value(h a o)`` (fact 3), exact and linear in the number of
  histories (the choices below different histories are independent, so each is optimised alone);
* ``blind`` ([dpCTL]'s query schedulers, :mod:`checker.privacy.blind`): a deterministic blind
  scheduler is one maximal action word ``W``, and ``g`` is the sum over the histories whose word is a
  prefix of ``W``, so the maximum is the programme ``value(w) = Σ_{leaves of word w} g_leaf +
  max_a value(w a)`` over the word tree, exact and linear in it; randomised blind schedulers do no
  better (``g`` is affine in each word's choice vector);
* ``uniform``: the one scheduler choosing uniformly;
* ``memoryless``: deterministic schedulers that choose by the current observation; enumerated when
  there are at most ``max_memoryless`` of them, else bracketed by [the best found among the enumerated
  ones, the history-dependent maximum] (``exact`` False).

Exact with ``Fraction`` models and ``e^ε`` rational (``ε = ln(r)`` or 0); otherwise the pair
``(A, B)`` of ``A − e^ε B`` is compared exactly (:class:`~checker.privacy.scheduler_bounds.Scale`) and
only the reported number is a float.  This module is generic (it never imports ``flmodel``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from fractions import Fraction

from checker.errors import Undecided
from checker.privacy.blind import word_choice, word_programme, word_tree
from checker.privacy.ni_fl_dp import Eps, Number
from checker.privacy.observable_mdp import Action, History, HistoryTree
from checker.privacy.scheduler_bounds import Choice, Direction, Pair, Scale, add_pairs, linear_programme
from checker.privacy.schedulers import Scheduler, SchedulerClass, blind_scheduler, canonical_class
from checker.render import value_text

__all__ = ["DPQueryResult", "SchedulerClass", "dp_query", "event_probabilities"]

_DIRECTIONS: tuple[tuple[str, str], tuple[str, str]] = (("D", "D'"), ("D'", "D"))


@dataclass(frozen=True)
class DPQueryResult:
    """One direction of ``D{ε,δ}[ψ]``: ``probabilities`` ``(Pr_first(ψ), Pr_second(ψ))`` under the
    worst ``scheduler`` found (``None`` for ``uniform``), ``value`` = ``Pr_first − e^ε Pr_second``
    there, ``upper`` an upper bound of it over the class (= ``value`` when ``exact``), ``holds``
    (``value ≤ δ`` decided exactly; ``None`` when the bracket straddles δ), and ``witness``: a
    history satisfying ψ with the largest ``m_first − e^ε m_second`` among those σ reaches."""

    direction: tuple[str, str]
    schedulers: SchedulerClass
    probabilities: tuple[Number, Number]
    value: Number
    upper: Number
    exact: bool
    holds: bool | None
    scheduler: Scheduler | None
    witness: History | None
    note: str


def _value(scale: Scale, pair: Pair) -> Number:
    """``A − e^ε B`` of ``pair = (A, B)``: exact when ``e^ε`` is rational and the model exact, else a
    float (its sign is decided exactly by :meth:`Scale.sign`)."""
    a, b = pair
    if scale.eps.infinite:
        return a if b == 0 else -float("inf")
    if scale.exact and scale.alpha is not None:
        return Fraction(a) - scale.alpha * Fraction(b)
    return float(a) - scale.eps.exp_float() * float(b)


def _reached(tree: HistoryTree, choice: Choice) -> list[int]:
    """The leaves a deterministic scheduler reaches (positive mass in D or D')."""
    out: list[int] = []
    stack = list(tree.roots)
    while stack:
        node = stack.pop()
        if tree.is_leaf(node):
            out.append(node)
            continue
        stack.extend(tree.children[node][choice[node]])
    return out


def event_probabilities(tree: HistoryTree, event: Callable[[int], bool],
                        choice: Choice | None) -> tuple[Number, Number]:
    """``(Pr_D(ψ), Pr_D'(ψ))`` under the deterministic scheduler ``choice`` (node -> action), or
    under the uniform scheduler when ``choice`` is ``None``."""
    zero: Number = Fraction(0) if tree.exact else 0.0
    value: list[Pair] = [(zero, zero)] * len(tree)
    for node in reversed(range(len(tree))):
        if tree.is_leaf(node):
            value[node] = tree.mass[node] if event(node) else (zero, zero)
            continue
        actions = tree.enabled[node] if choice is None else (choice[node],)
        total: Pair = (zero, zero)
        for action in actions:
            for child in tree.children[node][action]:
                total = add_pairs(total, value[child])
        if len(actions) > 1:
            k = Fraction(len(actions)) if tree.exact else float(len(actions))
            total = (total[0] / k, total[1] / k)
        value[node] = total
    result: Pair = (zero, zero)
    for root in tree.roots:
        result = add_pairs(result, value[root])
    return result


def _memoryless_choices(tree: HistoryTree) -> tuple[list[Hashable], list[tuple[Action, ...]]]:
    """The observations of the non-terminal histories and the actions each offers (one set per
    observation, else no memoryless scheduler exists: ``ValueError``)."""
    offered: dict[Hashable, tuple[Action, ...]] = {}
    for node in range(len(tree)):
        if tree.is_leaf(node):
            continue
        o = tree.observation(node)
        if offered.setdefault(o, tree.enabled[node]) != tree.enabled[node]:
            raise Undecided(f"observation {value_text(o)} offers different actions at different "
                            "histories: no memoryless scheduler exists")
    keys = list(offered)
    return keys, [offered[k] for k in keys]


def _witness(tree: HistoryTree, event: Callable[[int], bool], choice: Choice, direction: Direction,
             scale: Scale) -> History | None:
    best: int | None = None
    for leaf in _reached(tree, choice):
        if not event(leaf):
            continue
        m = tree.mass[leaf]
        pair = (m[direction], m[1 - direction])
        if best is None or scale.less((tree.mass[best][direction], tree.mass[best][1 - direction]), pair):
            best = leaf
    return None if best is None else tree.histories[best]


def dp_query(tree: HistoryTree, event: Callable[[int], bool], eps: Eps | float | Fraction | str,
             delta: Number, *, direction: Direction = 0, schedulers: SchedulerClass = "adaptive",
             max_memoryless: int = 4096) -> DPQueryResult:
    """``max_σ Pr_first^σ(ψ) − e^ε Pr_second^σ(ψ)`` over the scheduler class, against ``δ``.

    >>> from fractions import Fraction as F
    >>> from checker.privacy.observable_mdp import ObservableMDP, build_history_tree
    >>> coin = ObservableMDP({"s": 1}, {"s": {"go": {"h": F(3, 4), "t": F(1, 4)}}}, {"s": 0, "h": 1, "t": 2})
    >>> fair = ObservableMDP({"s": 1}, {"s": {"go": {"h": F(1, 2), "t": F(1, 2)}}}, {"s": 0, "h": 1, "t": 2})
    >>> tree = build_history_tree(coin, fair)
    >>> r = dp_query(tree, lambda n: tree.observation(n) == 1, "ln(3/2)", 0)
    >>> r.probabilities, r.value, r.holds
    ((Fraction(3, 4), Fraction(1, 2)), Fraction(0, 1), True)
    """
    schedulers = canonical_class(schedulers)
    e = Eps.of(eps)
    scale = Scale(e, tree.exact)
    zero: Number = Fraction(0) if tree.exact else 0.0
    dval: Number = Fraction(delta) if tree.exact else float(delta)

    def oriented(p: Pair) -> Pair:
        return (p[0], p[1]) if direction == 0 else (p[1], p[0])

    def decide(pair: Pair) -> bool:
        return scale.sign(pair[0] - dval, pair[1]) <= 0

    if schedulers == "uniform":
        pair = oriented(event_probabilities(tree, event, None))
        v = _value(scale, pair)
        return DPQueryResult(_DIRECTIONS[direction], schedulers, pair, v, v, True, decide(pair), None, None,
                             "exact: the uniform scheduler")

    def leaf(node: int) -> Pair:
        return oriented(tree.mass[node]) if event(node) else (zero, zero)

    if schedulers == "blind":
        words = word_tree(tree)
        best, path = word_programme(words, leaf, add_pairs, scale.less, (zero, zero))
        choice = word_choice(tree, words, path)
        v = _value(scale, best)
        return DPQueryResult(_DIRECTIONS[direction], schedulers, best, v, v, True, decide(best),
                             blind_scheduler(tree, choice), _witness(tree, event, choice, direction, scale),
                             f"exact: dynamic programme over the {words.schedulers} blind schedulers' "
                             "step sequences")
    best, choice = linear_programme(tree, tree.enabled, leaf, add_pairs, scale.less, (zero, zero))
    if schedulers == "adaptive":
        sched = Scheduler("history", tuple((tree.histories[n], a) for n, a in sorted(choice.items())))
        v = _value(scale, best)
        return DPQueryResult(_DIRECTIONS[direction], schedulers, best, v, v, True, decide(best), sched,
                             _witness(tree, event, choice, direction, scale),
                             "exact: dynamic programme over the history tree")
    keys, offered = _memoryless_choices(tree)
    count = 1
    for actions in offered:
        count *= len(actions)
    incumbent: tuple[Pair, Choice] | None = None
    for n_tried, assignment in enumerate(itertools.product(*offered)):
        if n_tried >= max_memoryless:
            break
        by_obs = dict(zip(keys, assignment, strict=True))
        ch = {n: by_obs[tree.observation(n)] for n in range(len(tree)) if not tree.is_leaf(n)}
        pair = oriented(event_probabilities(tree, event, ch))
        if incumbent is None or scale.less(incumbent[0], pair):
            incumbent = (pair, ch)
    if incumbent is None:  # no choice at all: the one (empty) scheduler
        incumbent = (oriented(event_probabilities(tree, event, {})), {})
    pair, ch = incumbent
    exact = count <= max_memoryless
    by_observation: dict[Hashable, Action] = {}
    for node in sorted(ch):
        by_observation.setdefault(tree.observation(node), ch[node])
    sched = Scheduler("observation", tuple(by_observation.items()))
    holds: bool | None = decide(pair) if exact or not decide(pair) else (True if decide(best) else None)
    note = (f"exact: all {count} memoryless schedulers" if exact else
            f"bracket: {max_memoryless} of {count} memoryless schedulers tried; the upper bound is the "
            "history-dependent worst case")
    return DPQueryResult(_DIRECTIONS[direction], schedulers, pair, _value(scale, pair),
                         _value(scale, pair if exact else best), exact, holds, sched,
                         _witness(tree, event, ch, direction, scale), note)
