"""Versions as the oracle keeps them (ints, or tuples of ints in the product order), and collections over them.

Document 001 ('Differential computation') relates a collection that changes
over partially ordered versions to its differences: the collection at ``t``
is the sum of the differences at every ``s <= t``, and so
``difference[t] = collection[t] - sum(difference[s] for s < t)``. These
functions go both ways: ``accumulate`` sums differences into collections,
``differences`` recovers the differences from collections given at a set of
versions closed under joins (``join_closure``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

from .encoding import PlainVersion, add

Collection = dict[Hashable, int]
"""``{record: multiplicity}``, consolidated: no zero multiplicities."""

Update = tuple[Hashable, PlainVersion, int]
"""``(record, version, multiplicity)``: one change of an input, what DD calls an update."""

History = list[Update]
"""One input's updates, in the order they are sent."""


def less_equal(a: PlainVersion, b: PlainVersion) -> bool:
    """The order of versions: ints as usual, tuples coordinate by coordinate (the product order)."""
    if isinstance(a, int):
        return a <= b
    return all(x <= y for x, y in zip(a, b, strict=True))


def sort_key(version: PlainVersion) -> tuple:
    """A total order that lists every version after all versions below it (lexicographic order does)."""
    return (version,) if isinstance(version, int) else tuple(version)


def join(a: PlainVersion, b: PlainVersion) -> PlainVersion:
    """The least version at or above both: the larger int, or the coordinate-wise max."""
    return max(a, b) if isinstance(a, int) else tuple(max(x, y) for x, y in zip(a, b, strict=True))


def join_closure(versions: Iterable[PlainVersion]) -> list[PlainVersion]:
    """``versions`` and the joins of all their subsets, sorted by ``sort_key``.

    Outputs of a program over partially ordered inputs change only at such
    joins (001: the difference at ``(1, 1)`` of its example).
    """
    closure = set(versions)
    frontier = set(closure)
    while frontier:
        frontier = {join(a, b) for a in frontier for b in closure} - closure
        closure |= frontier
    return sorted(closure, key=sort_key)


def accumulate(differences: Mapping[PlainVersion, Collection], version: PlainVersion) -> Collection:
    """The collection at ``version``: the sum of the differences at versions ``<=`` it."""
    totals: Collection = {}
    for at, difference in differences.items():
        if less_equal(at, version):
            for record, multiplicity in difference.items():
                add(totals, record, multiplicity)
    return totals


def differences(collections: Mapping[PlainVersion, Collection]) -> dict[PlainVersion, Collection]:
    """The differences whose sums at each version give ``collections`` (001's formula, in ``sort_key`` order).

    Right when the versions are closed under join (``join_closure``) and
    every difference lies at one of them: a version's difference is its
    collection minus the sum of the differences strictly below it.
    """
    found: dict[PlainVersion, Collection] = {}
    for version in sorted(collections, key=sort_key):
        below = {at: difference for at, difference in found.items() if at != version and less_equal(at, version)}
        difference = dict(collections[version])
        for record, multiplicity in accumulate(below, version).items():
            add(difference, record, -multiplicity)
        found[version] = difference
    return found


def consolidate(updates: Iterable[tuple[Hashable, PlainVersion, int]]) -> dict[PlainVersion, Collection]:
    """``(record, version, multiplicity)`` updates as ``{version: difference}``, with no empty differences."""
    by_version: dict[PlainVersion, Collection] = {}
    for record, version, multiplicity in updates:
        add(by_version.setdefault(version, {}), record, multiplicity)
    return {version: difference for version, difference in by_version.items() if difference}
