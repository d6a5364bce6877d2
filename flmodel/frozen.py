"""An immutable, hashable finite map: the encoding of [IIIf-FL]'s total functions
``actor ⇒ location`` (``aloc``), ``actor ⇒ α`` (``gradient``) and ``actor ⇒ data set``
(``partition``) of [IIIf-FL] Section III-B, datatype ``igraph``.

Isabelle functions are total; a :class:`FrozenMap` stores the values on a finite domain (the actors
of the infrastructure) and is compared and hashed by its sorted items, so two maps with the same graph
are equal whatever order they were built in. The hash is computed once (states are hashed when the
explorer interns them).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


def _sort_key(item: tuple[Any, Any]) -> Any:
    return item[0]


class FrozenMap(Mapping[K, V], Generic[K, V]):
    """Immutable mapping with sorted items, cached hash and functional update.

    Maps with the same key set share one key -> position index, so the functional update of an
    existing key only rebuilds the items tuple.

    >>> m = FrozenMap({"c2": 1, "c1": 0})
    >>> m.items_tuple
    (('c1', 0), ('c2', 1))
    >>> m.set("c1", 5)["c1"], m["c1"]
    (5, 0)
    """

    __slots__ = ("_hash", "_index", "_items")

    _items: tuple[tuple[K, V], ...]
    _index: dict[K, int]
    _hash: int

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        d: dict[K, V] = dict(items.items()) if isinstance(items, Mapping) else dict(items)
        pairs = tuple(sorted(d.items(), key=_sort_key))
        object.__setattr__(self, "_items", pairs)
        object.__setattr__(self, "_index", {k: i for i, (k, _) in enumerate(pairs)})
        object.__setattr__(self, "_hash", hash(pairs))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("FrozenMap is immutable")

    def __getitem__(self, key: K) -> V:
        return self._items[self._index[key]][1]

    def get(self, key: K, default: Any = None) -> Any:
        i = self._index.get(key)
        return default if i is None else self._items[i][1]

    def __iter__(self) -> Iterator[K]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, FrozenMap):
            return self._hash == other._hash and self._items == other._items
        return NotImplemented

    def __lt__(self, other: FrozenMap[K, V]) -> bool:
        return self._items < other._items

    def __repr__(self) -> str:
        inner = ", ".join(f"{k!r}: {v!r}" for k, v in self._items)
        return f"FrozenMap({{{inner}}})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (self._items,))

    @property
    def items_tuple(self) -> tuple[tuple[K, V], ...]:
        """The items, sorted by key."""
        return self._items

    def set(self, key: K, value: V) -> FrozenMap[K, V]:
        """The functional update ``f(key := value)`` (Isabelle's ``fun_upd``)."""
        i = self._index.get(key)
        if i is None:
            d = dict(self._items)
            d[key] = value
            return FrozenMap(d)
        old = self._items[i][1]
        if old is value:
            return self
        # (an incremental, order-independent hash — the sum of the pairs' hashes — was tried and
        # collided massively: tuple hashes of similar pairs are nearly additive)
        pairs = (*self._items[:i], (key, value), *self._items[i + 1 :])
        new = object.__new__(FrozenMap)
        _set_items(new, pairs)
        _set_index(new, self._index)
        _set_hash(new, hash(pairs))
        return new


# slot setters that bypass the immutability guard (used only while building a new map)
_set_items = FrozenMap.__dict__["_items"].__set__
_set_index = FrozenMap.__dict__["_index"].__set__
_set_hash = FrozenMap.__dict__["_hash"].__set__
