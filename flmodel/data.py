"""Data points, datasets, partitions and the neighbour relations of [IIIf-FL].

[IIIf-FL], Section III-B: ``dataset: data set`` (the global data set) and
``partition: actor ⇒ data set`` (the part held by each client); rule ``put_part`` requires
``dataset G = ⋃•_{c ∈ clients G} (Part c)``, the *disjoint* union of the parts.
[IIIf-FL], Section III-C: ``D ◇1 D'`` (the data sets differ by one element) and, in Theorem 1,
``D ◇x D'`` (they differ only in ``x``).

[IIIf-FL] does not say which of the two usual readings of "differ by one element" it means; both are
encoded and named (see ``spec/SPEC.md``):

* **replace-one** (bounded DP): ``|D| = |D'|`` and ``|D \\ D'| = |D' \\ D| = 1``
  (one element replaced by another);
* **add/remove-one** (unbounded DP): ``|D △ D'| = 1`` (one element added or removed).

``D ◇x D'`` is read as ``D △ D' = {x}`` (``x`` is in exactly one of them: the membership question of
Theorem 1); its replace-one reading is also offered.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from flmodel.frozen import FrozenMap

Number = Fraction | int | str


@dataclass(frozen=True, order=True, slots=True)
class DataPoint:
    """One training example ``(x_i, y_i)`` ([IIIf-FL] Section III-A: ``f_i(w) = L(x_i, y_i; w)``).

    ``name`` identifies the point (e.g. a location on Earth in the satellite scenario); it comes first
    so that datasets sort by name. ``features`` and ``target`` are exact rationals.
    """

    name: str
    features: tuple[Fraction, ...]
    target: Fraction
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        # hashed once: a state holds its data points in frozensets and maps, and hashing the Fractions
        # again whenever a state is interned or canonicalised costs more than the rest of a step
        object.__setattr__(self, "_hash", hash((self.name, self.features, self.target)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[object, ...]:
        # rebuilt, not restored: the hash of the name differs from one process to another
        return (DataPoint, (self.name, self.features, self.target))

    def __str__(self) -> str:
        if self.name:
            return self.name
        xs = ",".join(str(f) for f in self.features)
        return f"({xs};{self.target})"


#: A dataset is a finite set of data points (Isabelle ``data set``).
Dataset = frozenset[DataPoint]
#: A partition assigns each client its part (Isabelle ``actor ⇒ data set``), stored as a FrozenMap.
Partition = FrozenMap[str, frozenset[DataPoint]]

NeighbourReading = Literal["replace_one", "add_remove_one"]
NEIGHBOUR_READINGS: tuple[NeighbourReading, ...] = ("replace_one", "add_remove_one")


def point(name: str, features: Sequence[Number] | Number, target: Number) -> DataPoint:
    """Build a :class:`DataPoint` converting numbers (ints, Fractions, decimal strings) to Fractions.

    >>> point("p", [1, "1/2"], 3)
    DataPoint(name='p', features=(Fraction(1, 1), Fraction(1, 2)), target=Fraction(3, 1))
    """
    if isinstance(features, (Fraction, int, str)):
        features = [features]
    return DataPoint(name, tuple(Fraction(f) for f in features), Fraction(target))


def dataset(points: Iterable[DataPoint]) -> Dataset:
    """The dataset (a finite set) of the given points."""
    return frozenset(points)


def is_disjoint_union(data: Dataset, parts: Iterable[frozenset[DataPoint]]) -> bool:
    """``data = ⋃• parts``: the parts are pairwise disjoint and their union is ``data``
    ([IIIf-FL] III-B, premise of ``put_part``)."""
    seen: set[DataPoint] = set()
    total = 0
    for part in parts:
        total += len(part)
        seen |= part
        if len(seen) != total:
            return False
    return seen == data


def is_partition(data: Dataset, clients: Iterable[str], partition: Partition) -> bool:
    """Whether ``partition`` restricted to ``clients`` is a disjoint cover of ``data``, and gives no
    data to non-clients (a partition in the sense of ``put_part``; empty parts are allowed)."""
    cs = frozenset(clients)
    if any(c not in cs and partition[c] for c in partition):
        return False
    return is_disjoint_union(data, (partition.get(c, frozenset()) for c in cs))


def partitions(data: Dataset, clients: Iterable[str]) -> Iterator[Partition]:
    """All partitions ``Part`` with ``data = ⋃•_{c ∈ clients} Part c`` (empty parts allowed): the
    ``|clients|^|data|`` assignments of points to clients, in a deterministic order.

    With no clients there is a partition only of the empty dataset.

    >>> from flmodel.data import point
    >>> len(list(partitions(frozenset({point("a", 0, 0), point("b", 1, 1)}), ["c1", "c2"])))
    4
    """
    cs = sorted(set(clients))
    pts = sorted(data)
    if not cs:
        if not pts:
            yield FrozenMap()
        return
    for owners in itertools.product(range(len(cs)), repeat=len(pts)):
        buckets: list[list[DataPoint]] = [[] for _ in cs]
        for p, o in zip(pts, owners, strict=True):
            buckets[o].append(p)
        yield FrozenMap({c: frozenset(b) for c, b in zip(cs, buckets, strict=True)})


def count_partitions(data: Dataset, clients: Iterable[str]) -> int:
    """Number of partitions :func:`partitions` yields: ``K^n`` (``0^0 = 1``)."""
    k = len(set(clients))
    n = len(data)
    if k == 0:
        return 1 if n == 0 else 0
    return k**n


def partition_by(data: Dataset, clients: Iterable[str], owner: Callable[[DataPoint], str]) -> Partition:
    """The partition giving each point to ``owner(point)``; every client gets a (possibly empty) part.

    Raises ``ValueError`` when ``owner`` names a non-client."""
    cs = sorted(set(clients))
    buckets: dict[str, set[DataPoint]] = {c: set() for c in cs}
    for p in data:
        o = owner(p)
        if o not in buckets:
            raise ValueError(f"data point {p} is owned by {o!r}, which is not a client {cs}")
        buckets[o].add(p)
    return FrozenMap({c: frozenset(b) for c, b in buckets.items()})


# --- neighbour relations ([IIIf-FL] III-C: ◇1 and ◇x) --------------------------------------------


def replace_one(d0: Dataset, d1: Dataset) -> bool:
    """``D ◇1 D'`` in the replace-one reading: one element of ``D`` replaced by one not in ``D``
    (``|D \\ D'| = |D' \\ D| = 1``). Symmetric and irreflexive."""
    return len(d0 - d1) == 1 and len(d1 - d0) == 1


def add_remove_one(d0: Dataset, d1: Dataset) -> bool:
    """``D ◇1 D'`` in the add/remove-one reading: ``|D △ D'| = 1``. Symmetric and irreflexive."""
    return len(d0 ^ d1) == 1


def neighbours_1(d0: Dataset, d1: Dataset, reading: NeighbourReading) -> bool:
    """``D ◇1 D'`` in the named reading (``"replace_one"`` or ``"add_remove_one"``)."""
    if reading == "replace_one":
        return replace_one(d0, d1)
    if reading == "add_remove_one":
        return add_remove_one(d0, d1)
    raise ValueError(f"unknown neighbour reading {reading!r}; expected one of {NEIGHBOUR_READINGS}")


def differ_only_in(
    d0: Dataset, d1: Dataset, x: DataPoint, reading: NeighbourReading = "add_remove_one"
) -> bool:
    """``D ◇x D'`` ([IIIf-FL] Theorem 1: "their datasets differ only in x").

    * add/remove-one reading (default): ``D △ D' = {x}`` — ``x`` is in exactly one of them;
    * replace-one reading: ``D ◇1 D'`` (replace-one) and ``x`` is the element of ``D`` that is
      replaced, or the one that replaces it (``x ∈ D △ D'``).
    """
    if reading == "add_remove_one":
        return d0 ^ d1 == frozenset({x})
    if reading == "replace_one":
        return replace_one(d0, d1) and x in (d0 ^ d1)
    raise ValueError(f"unknown neighbour reading {reading!r}; expected one of {NEIGHBOUR_READINGS}")


def neighbours(
    data: Dataset, universe: Iterable[DataPoint], reading: NeighbourReading = "replace_one"
) -> Iterator[Dataset]:
    """All ``D'`` with ``data ◇1 D'`` whose elements are drawn from ``universe ∪ data``, in a
    deterministic order, without repetitions.

    * replace-one: ``data - {x} ∪ {y}`` for ``x ∈ data``, ``y ∈ universe \\ data``;
    * add/remove-one: ``data - {x}`` for ``x ∈ data`` and ``data ∪ {y}`` for ``y ∈ universe \\ data``.
    """
    pts = sorted(data)
    fresh = sorted(set(universe) - data)
    if reading == "replace_one":
        for x in pts:
            for y in fresh:
                yield (data - {x}) | {y}
    elif reading == "add_remove_one":
        for x in pts:
            yield data - {x}
        for y in fresh:
            yield data | {y}
    else:
        raise ValueError(f"unknown neighbour reading {reading!r}; expected one of {NEIGHBOUR_READINGS}")


def neighbour_pairs(
    universe: Iterable[DataPoint], reading: NeighbourReading = "replace_one", size: int | None = None
) -> Iterator[tuple[Dataset, Dataset]]:
    """All ordered pairs ``(D, D')`` of subsets of ``universe`` with ``D ◇1 D'`` (optionally only
    those with ``|D| = size``), deterministic order."""
    u = sorted(set(universe))
    sizes = range(len(u) + 1) if size is None else [size]
    for k in sizes:
        for combo in itertools.combinations(u, k):
            d = frozenset(combo)
            for d1 in neighbours(d, u, reading):
                yield d, d1
