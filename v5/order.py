"""Versions and frontiers, partially ordered: the product order, and antichains.

In v5 a version is a tuple of non-negative ints ordered coordinate by
coordinate: ``(i1, i2) <= (j1, j2)`` when ``i1 <= j1`` and ``i2 <= j2``. So
``(1, 0)`` and ``(0, 1)`` are incomparable, which is exactly what a loop
needs: iteration 2 of input version 1 must not see iteration 2 of version 0
as its past unless it is ``<=`` it. Any two versions still have a least upper
bound (``join``, coordinate-wise max) and a greatest lower bound (``meet``,
coordinate-wise min): the versions form a lattice. A frontier can no longer
be one least version: it is an ``Antichain``, the minimal versions that may
still change. Compaction moves a version forward only as far as every
future version can still tell (``advance_by``).
Source: document 002, "v5/vFinal: Partially ordered
versions", and document 001 (differences over a
partial order). Rust DD calls a version a timestamp, or time (``Product`` in
loops), and ``advance_by`` is its name too.

>>> Version((0, 1)).less_equal(Version((1, 1))), Version((1, 0)).less_equal(Version((0, 1)))
(True, False)
>>> Version((1, 0)).join(Version((0, 2))), Version((1, 0)).meet(Version((0, 2)))
(Version((1, 2)), Version((0, 0)))
>>> frontier = Antichain([Version((2, 5)), Version((4, 1))])
>>> frontier.less_equal_version(Version((3, 6))), frontier.less_equal_version(Version((3, 3)))
(True, False)
>>> Antichain([Version((1, 0)), Version((0, 1)), Version((1, 1))])
Antichain([Version((0, 1)), Version((1, 0))])
>>> Version((0, 1)).advance_by(Antichain([Version((1, 2)), Version((2, 0))]))
Version((1, 1))
>>> Version(3).extend(), Version((3, 4)).truncate(), Version((3, 4)).increment()
(Version((3, 0)), Version((3,)), Version((3, 5)))
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import FrontierError, VersionError


@dataclass(frozen=True)
class Version:
    """A logical time: a non-empty tuple of non-negative ints, ordered coordinate by coordinate.

    ``Version(3)`` is short for ``Version((3,))``. ``<`` is not defined on
    purpose (later stages have incomparable versions): use ``less_equal`` and
    ``less_than``. Only versions with the same number of coordinates compare.
    """

    coords: tuple[int, ...]

    def __post_init__(self) -> None:
        coords = (self.coords,) if type(self.coords) is int else self.coords
        if type(coords) is not tuple or not coords or any(type(c) is not int or c < 0 for c in coords):
            raise VersionError(
                f"a version is a non-negative int or a tuple of them, not {self.coords!r}; "
                f"write Version(3) or Version((3, 0))"
            )
        object.__setattr__(self, "coords", coords)

    def __repr__(self) -> str:
        return f"Version({self.coords!r})"

    def less_equal(self, other: Version) -> bool:
        return all(a <= b for a, b in zip(self.coords, other.coords, strict=True))

    def less_than(self, other: Version) -> bool:
        return self != other and self.less_equal(other)

    def join(self, other: Version) -> Version:
        """The least upper bound of the two versions: the coordinate-wise max."""
        return Version(tuple(max(a, b) for a, b in zip(self.coords, other.coords, strict=True)))

    def meet(self, other: Version) -> Version:
        """The greatest lower bound of the two versions: the coordinate-wise min."""
        return Version(tuple(min(a, b) for a, b in zip(self.coords, other.coords, strict=True)))

    def advance_by(self, frontier: Antichain) -> Version:
        """The greatest version that every future version ``>= self`` is also ``>=``.

        That is the meet, over the frontier's elements ``f``, of ``self.join(f)``.
        Every version still to come is ``>=`` some ``f``, and it is ``>= self``
        exactly when it is ``>=`` the result, so data can be moved here without
        any future comparison telling the difference. With several frontier
        elements it may move less far than any one of them would take it.
        """
        if not frontier.elements:
            return self
        advanced = self.join(frontier.elements[0])
        for element in frontier.elements[1:]:
            advanced = advanced.meet(self.join(element))
        return advanced

    def sort_key(self) -> Any:
        """A key whose order lists a version after every version less than it.

        Lexicographic order extends the product order: if ``a <= b`` then
        ``a.coords <= b.coords`` as tuples.
        """
        return self.coords

    def extend(self) -> Version:
        """This version inside a loop, at iteration 0: one more coordinate."""
        return Version((*self.coords, 0))

    def truncate(self) -> Version:
        """This version outside its innermost loop: the iteration coordinate dropped."""
        return Version(self.coords[:-1])

    def increment(self) -> Version:
        """The same version one iteration later: the last coordinate plus one."""
        return Version((*self.coords[:-1], self.coords[-1] + 1))


def checked_version(version: Any, error: type[Exception], what: str, like: Version | None = None) -> Version:
    """Return ``version`` if it is a Version (with as many coordinates as ``like``), else raise ``error``."""
    if not isinstance(version, Version):
        raise error(f"{what} must be a Version, not {version!r}; write Version({version!r})")
    if like is not None and len(version.coords) != len(like.coords):
        raise error(
            f"{what}, {version}, has {len(version.coords)} coordinates, but this stream's versions have "
            f"{len(like.coords)}, like {like}; do not mix versions of different dimensions"
        )
    return version


class Antichain:
    """Mutually incomparable versions, used as a frontier.

    A frontier ``F`` promises that every version still to come is ``>=`` some
    element of ``F``; a version for which ``F.less_equal_version`` is False is
    finished. Frontiers compare by their upper sets: ``F <= G`` when every
    version ``G`` allows, ``F`` allows too. The empty antichain allows
    nothing: everything is finished.

    Invariant: no element is ``less_equal`` another; ``elements`` is sorted by
    ``sort_key``, so equal antichains have equal tuples.
    """

    __slots__ = ("elements",)

    def __init__(self, versions: Iterable[Version] = ()) -> None:
        """The minimal elements of ``versions``.

        Raises:
            FrontierError: an element is not a Version, or they differ in dimension.
        """
        minimal: list[Version] = []
        for version in versions:
            checked_version(version, FrontierError, "an antichain element", minimal[0] if minimal else None)
            if any(other.less_equal(version) for other in minimal):
                continue
            minimal = [other for other in minimal if not version.less_equal(other)]
            minimal.append(version)
        self.elements: tuple[Version, ...] = tuple(sorted(minimal, key=Version.sort_key))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Antichain):
            return NotImplemented
        return self.elements == other.elements

    def __hash__(self) -> int:
        return hash(self.elements)

    def __repr__(self) -> str:
        return f"Antichain({list(self.elements)!r})"

    def less_equal_version(self, version: Version) -> bool:
        """Whether ``version`` may still change: some element is ``<=`` it."""
        return any(element.less_equal(version) for element in self.elements)

    def less_equal(self, other: Antichain) -> bool:
        """Whether this frontier is at or behind ``other``: it allows every version ``other`` allows."""
        return all(self.less_equal_version(version) for version in other.elements)

    def less_than(self, other: Antichain) -> bool:
        return self != other and self.less_equal(other)

    def meet(self, other: Antichain) -> Antichain:
        """The frontier allowing what either allows: the minimal elements of both."""
        return Antichain(self.elements + other.elements)

    def join(self, other: Antichain) -> Antichain:
        """The frontier allowing what both allow: the minimal joins of an element of each."""
        return Antichain(mine.join(theirs) for mine in self.elements for theirs in other.elements)

    def extend(self) -> Antichain:
        return Antichain(element.extend() for element in self.elements)

    def truncate(self) -> Antichain:
        return Antichain(element.truncate() for element in self.elements)

    def increment(self) -> Antichain:
        return Antichain(element.increment() for element in self.elements)


def checked_frontier(frontier: Any, what: str, like: Version) -> Antichain:
    """An Antichain from ``frontier`` (a Version stands for the antichain of just itself).

    Raises:
        FrontierError: ``frontier`` is neither, or its versions' dimension is not ``like``'s.
    """
    if isinstance(frontier, Version):
        frontier = Antichain([frontier])
    if not isinstance(frontier, Antichain):
        raise FrontierError(
            f"{what} must be an Antichain (or a Version), not {frontier!r}; write Antichain([Version((1, 0))])"
        )
    for element in frontier.elements:
        checked_version(element, FrontierError, what, like)
    return frontier
