"""Blind schedulers: ONE scheduler for both systems that sees nothing but its own past actions.

[dpCTL] (its semantics of ``D{ε,δ}`` over MDPs) quantifies over *query schedulers* ``Q : ℕ → Act``: a
sequence of actions fixed in advance, played whatever the runs do, the same for both neighbouring
systems.  [dpCTL] assumes every action enabled in every state; the models here are not, so the class
is stated for a :class:`~checker.privacy.observable_mdp.HistoryTree` as follows.

*Definition.*  The *word* of a history ``h = (o0, a1, o1, ..., ak, ok)`` is its action sequence
``a1 ... ak``.  A (randomised) blind scheduler is a map ``σ`` from words to distributions over actions:
at a history ``h`` it plays ``σ(word(h))``.  It must be legal: every action it plays with positive
probability is enabled at every non-terminal history of that word that it reaches (with positive mass in
D or D').  Since the word of a history is a function of the history, every blind scheduler is an
adaptive (history-dependent) one: ``blind ⊆ adaptive``.

*The word tree.*  All histories of one word are reached together: a blind scheduler reaches ``h`` iff it
plays ``word(h)``, whatever the observations.  So the actions a blind scheduler may play after ``w`` are
``allowed(w) = ∩ enabled(h)`` over the non-terminal histories ``h`` of word ``w``, and a word is
*viable* when it has no non-terminal history or some ``a ∈ allowed(w)`` leads to a viable ``w a``.
:func:`word_tree` builds the viable words; ``ValueError`` when the empty word is not viable (then no
legal blind scheduler exists: the runs a scheduler cannot tell apart offer disjoint steps).

*Deterministic blind schedulers are words.*  A deterministic blind scheduler plays one action per word,
so all its runs follow one sequence ``W`` of actions until they end: its behaviour is the *maximal*
viable word ``W`` it spells out (a viable word without non-terminal histories), and the histories it
reaches are those whose word is a prefix of ``W``.  Distinct maximal words reach distinct leaves (each
has a leaf of its own word), so there are at most as many deterministic blind schedulers (up to
behaviour) as leaves of the history tree: :func:`maximal_words` enumerates them all, refusing past a
limit with the exact count.

*Randomised ones do no better* (the facts of :mod:`checker.privacy.schedulers` carry over).  The mass of a
history under σ is ``m(h) · Π_i σ(a1...a_{i-1})(a_i)``, one factor per prefix of its word, and the
prefixes of one word are distinct words: so ``P^σ(o)`` is affine in each choice vector ``σ(w)``
separately (multilinear).  δ(ε) = ``Σ_o max(0, P_D(o) − e^ε P_D'(o))`` is convex in each ``σ(w)``, each
``P_D(o)/P_D'(o)`` quasi-linear, and ``Pr_D(ψ) − e^ε Pr_D'(ψ)`` affine: each is maximal at a vertex of
the simplex of ``σ(w)`` (over the legal actions), so fixing the choices one word at a time, deepest word
first, never decreases the value and ends at a deterministic blind scheduler.  (A mixture of
deterministic blind schedulers is a behavioural blind scheduler and conversely, by Kuhn's theorem: the
scheduler recalls its own actions.)  Hence the worst case over all blind schedulers, randomised or
not, is the maximum over the maximal words, which is exact.

This module is generic (it never imports ``flmodel``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar, cast

from checker.privacy.observable_mdp import Action, History, HistoryTree, format_history

__all__ = ["Word", "WordTree", "maximal_words", "word_choice", "word_of", "word_programme", "word_tree"]

#: An action sequence ``a1 ... ak``.
Word = tuple[Action, ...]
V = TypeVar("V")


def word_of(history: History) -> Word:
    """The action sequence ``a1 ... ak`` of ``history = (o0, a1, o1, ..., ak, ok)``."""
    return cast(Word, history[1::2])


@dataclass(frozen=True)
class WordTree:
    """The viable words of a history tree, breadth first (a word before its extensions).

    Word ``k`` is ``words[k]``; ``inner[k]``/``ends[k]``: the non-terminal/terminal history nodes of that
    word; ``children[k]``: viable action -> word id (empty when the word has no non-terminal history:
    a maximal word); ``count[k]``: the number of maximal words extending it."""

    words: tuple[Word, ...]
    inner: tuple[tuple[int, ...], ...]
    ends: tuple[tuple[int, ...], ...]
    children: tuple[dict[Action, int], ...]
    count: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.words)

    @property
    def schedulers(self) -> int:
        """The number of deterministic blind schedulers (maximal words)."""
        return self.count[0]


def word_tree(tree: HistoryTree) -> WordTree:
    """The :class:`WordTree` of ``tree``; ``ValueError`` naming the word when no legal blind scheduler
    exists."""
    index: dict[Word, int] = {}
    inner: list[list[int]] = []
    ends: list[list[int]] = []
    for node in range(len(tree)):  # breadth first: a history before its extensions
        word = word_of(tree.histories[node])
        k = index.get(word)
        if k is None:
            k = index[word] = len(inner)
            inner.append([])
            ends.append([])
        (ends if tree.is_leaf(node) else inner)[k].append(node)
    words = list(index)
    allowed: list[tuple[Action, ...]] = []
    for k in range(len(words)):
        offered = [tree.enabled[n] for n in inner[k]]
        common = [a for a in offered[0] if all(a in o for o in offered[1:])] if offered else []
        allowed.append(tuple(common))
    viable = [False] * len(words)
    children: list[dict[Action, int]] = [{} for _ in words]
    count = [0] * len(words)
    for k in range(len(words) - 1, -1, -1):  # extensions first
        if not inner[k]:
            viable[k], count[k] = True, 1
            continue
        for a in allowed[k]:
            child = index.get((*words[k], a))
            if child is not None and viable[child]:
                children[k][a] = child
                count[k] += count[child]
        viable[k] = bool(children[k])
    root = index.get(())
    if root is None or not viable[root]:
        raise ValueError(_no_blind_scheduler(tree, words, inner, allowed, viable, index))
    return WordTree(tuple(words), tuple(tuple(x) for x in inner), tuple(tuple(x) for x in ends),
                    tuple(children), tuple(count))


def _no_blind_scheduler(tree: HistoryTree, words: list[Word], inner: list[list[int]],
                        allowed: list[tuple[Action, ...]], viable: list[bool], index: dict[Word, int]) -> str:
    """Why no blind scheduler exists: the first dead end every blind scheduler runs into."""
    k = index.get((), 0)
    while True:
        if not allowed[k]:
            shown = "; ".join(f"{format_history(tree.histories[n])} offers {{{', '.join(tree.enabled[n])}}}"
                              for n in inner[k][:3])
            after = ", ".join(words[k]) if words[k] else "the start"
            return (f"no blind scheduler exists: after {after} the runs it cannot tell apart offer no "
                    f"common step ({shown})")
        nxt = next((index[(*words[k], a)] for a in allowed[k] if (*words[k], a) in index), None)
        if nxt is None or viable[nxt]:
            return "no blind scheduler exists"
        k = nxt


def maximal_words(words: WordTree, limit: int) -> Iterator[list[int]]:
    """Every maximal word as the list of its prefixes' word ids (root first), depth first in action order.

    ``ValueError`` before anything is enumerated when there are more than ``limit`` of them (the
    message gives the count)."""
    if limit < 1:
        raise ValueError(f"the blind scheduler limit must be >= 1, got {limit}")
    if words.schedulers > limit:
        raise ValueError(f"{words.schedulers} blind schedulers (maximal step sequences) exceed the limit of "
                         f"{limit}: the worst case over blind schedulers is not computed (the adaptive "
                         "class's worst case bounds it from above)")
    def kids(k: int) -> Iterator[int]:
        return iter([c for _, c in sorted(words.children[k].items())])

    if not words.children[0]:
        yield [0]
        return
    path = [0]
    stack = [kids(0)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            path.pop()
            continue
        path.append(child)
        if words.children[child]:
            stack.append(kids(child))
        else:
            yield list(path)
            path.pop()


def word_choice(tree: HistoryTree, words: WordTree, path: list[int]) -> dict[int, Action]:
    """The deterministic blind scheduler spelling the maximal word ``path`` as a node -> action map on
    every non-terminal history (the histories it never reaches get their first enabled action: they
    carry no mass under it)."""
    choice = {n: tree.enabled[n][0] for n in range(len(tree)) if not tree.is_leaf(n)}
    for here, there in itertools.pairwise(path):
        action = words.words[there][-1]
        for n in words.inner[here]:
            choice[n] = action
    return choice


def word_programme(words: WordTree, leaf: Callable[[int], V], add: Callable[[V, V], V],
                   less: Callable[[V, V], bool], zero: V) -> tuple[V, list[int]]:
    """``max_W Σ_{leaves h, word(h) ⊑ W} leaf(h)`` over the maximal words ``W``, bottom up over the word
    tree (``value(w) = Σ_{ends of w} leaf + max_a value(w a)``): exact, linear in the tree; and the
    maximising word as its list of prefix ids."""
    value: list[V] = [zero] * len(words)
    best_child: list[int | None] = [None] * len(words)
    for k in range(len(words) - 1, -1, -1):
        total = zero
        for n in words.ends[k]:
            total = add(total, leaf(n))
        best: V | None = None
        for _, child in sorted(words.children[k].items()):
            if best is None or less(best, value[child]):
                best, best_child[k] = value[child], child
        value[k] = total if best is None else add(total, best)
    path = [0]
    while best_child[path[-1]] is not None:
        nxt = best_child[path[-1]]
        assert nxt is not None
        path.append(nxt)
    return value[0], path
