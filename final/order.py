"""Versions and frontiers, partially ordered: the product order, and antichains.

A version is a tuple of non-negative ints ordered coordinate by
coordinate (as in v5): ``(i1, i2) <= (j1, j2)`` when ``i1 <= j1`` and ``i2 <= j2``. So
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

New in final: a ``Version`` *is* its tuple of coordinates (a ``tuple``
subclass), so hashing it, using it as a dict key and building one cost what
they cost for a tuple; versions are on every message and in every index.

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
(Version((3, 0)), Version(3), Version((3, 5)))
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import le
from typing import Any

from .errors import FrontierError, VersionError


class Version(tuple):
    """A logical time: a non-empty tuple of non-negative ints, ordered coordinate by coordinate.

    ``Version(3)`` is short for ``Version((3,))``. ``<`` is not defined on
    purpose (versions with several coordinates may be incomparable): use
    ``less_equal`` and ``less_than``. Only versions with the same number of coordinates compare.
    A Version equals the plain tuple of its coordinates.
    """

    __slots__ = ()

    def __new__(cls, coords: int | tuple[int, ...]) -> Version:
        """Raises:
        VersionError: ``coords`` is not a non-negative int or a non-empty tuple of them.
        """
        if type(coords) is int and coords >= 0:  # the common case, Version(3)
            return tuple.__new__(cls, (coords,))
        if not isinstance(coords, tuple) or not coords or any(type(c) is not int or c < 0 for c in coords):
            raise VersionError(
                f"a version is a non-negative int or a tuple of them, not {coords!r}; "
                f"write Version(3) or Version((3, 0))"
            )
        return tuple.__new__(cls, coords)

    def __repr__(self) -> str:
        return f"Version({self[0]})" if len(self) == 1 else f"Version({tuple(self)!r})"

    def _unordered(self, other: Any) -> bool:
        raise TypeError(
            f"versions are partially ordered, so {self} < {other} is not defined; use less_equal or less_than"
        )

    __lt__ = __le__ = __gt__ = __ge__ = _unordered

    @property
    def coords(self) -> tuple[int, ...]:
        """The coordinates as a plain tuple."""
        return tuple(self)

    @classmethod
    def trusted(cls, coords: tuple[int, ...]) -> Version:
        """A Version from coordinates the engine computed itself, built without checks (they were made where
        versions entered the graph)."""
        return tuple.__new__(cls, coords)

    def less_equal(self, other: Version) -> bool:
        # Dimensions were checked where versions entered the graph.
        return all(map(le, self, other))

    def less_than(self, other: Version) -> bool:
        return self != other and all(map(le, self, other))

    def join(self, other: Version) -> Version:
        """The least upper bound of the two versions: the coordinate-wise max."""
        if all(map(le, other, self)):
            return self
        if all(map(le, self, other)):
            return other
        return tuple.__new__(Version, map(max, self, other))

    def meet(self, other: Version) -> Version:
        """The greatest lower bound of the two versions: the coordinate-wise min."""
        if all(map(le, self, other)):
            return self
        if all(map(le, other, self)):
            return other
        return tuple.__new__(Version, map(min, self, other))

    def advance_by(self, frontier: Antichain) -> Version:
        """The greatest version that every future version ``>= self`` is also ``>=``.

        That is the meet, over the frontier's elements ``f``, of ``self.join(f)``.
        Every version still to come is ``>=`` some ``f``, and it is ``>= self``
        exactly when it is ``>=`` the result, so data can be moved here without
        any future comparison telling the difference. With several frontier
        elements it may move less far than any one of them would take it.
        """
        elements = frontier.elements
        if not elements:
            return self
        if len(elements) == 1:
            return self.join(elements[0])
        advanced = tuple(map(max, self, elements[0]))
        for element in elements[1:]:
            advanced = tuple(map(min, advanced, map(max, self, element)))
        return self if advanced == self else tuple.__new__(Version, advanced)

    def sort_key(self) -> Any:
        """A key whose order lists a version after every version less than it.

        Lexicographic order extends the product order: if ``a <= b`` then
        ``a.coords <= b.coords`` as tuples.
        """
        return tuple(self)

    def extend(self) -> Version:
        """This version inside a loop, at iteration 0: one more coordinate."""
        return tuple.__new__(Version, (*self, 0))

    def truncate(self) -> Version:
        """This version outside its innermost loop: the iteration coordinate dropped."""
        return tuple.__new__(Version, self[:-1])

    def increment(self) -> Version:
        """The same version one iteration later: the last coordinate plus one."""
        return tuple.__new__(Version, (*self[:-1], self[-1] + 1))


def checked_version(version: Any, error: type[Exception], what: str, dimension: int | None = None) -> Version:
    """Return ``version`` if it is a Version (with ``dimension`` coordinates, if given), else raise ``error``."""
    if type(version) is not Version:
        raise error(f"{what} must be a Version, not {version!r}; write Version({version!r})")
    if dimension is not None and len(version) != dimension:
        like = Version.trusted((0,) * dimension)
        raise error(
            f"{what}, {version}, has {len(version)} coordinates, but this stream's versions have "
            f"{dimension}, like {like}; do not mix versions of different dimensions"
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

    __slots__ = ("_advanced", "elements")

    def __init__(self, versions: Iterable[Version] = ()) -> None:
        """The minimal elements of ``versions``.

        Raises:
            FrontierError: an element is not a Version, or they differ in dimension.
        """
        versions = tuple(versions)
        self._advanced: dict[Version, Version] | None = None
        if len(versions) == 1:  # the common case, a single version: nothing to minimize
            self.elements = (checked_version(versions[0], FrontierError, "an antichain element"),)
            return
        for version in versions:
            checked_version(version, FrontierError, "an antichain element", len(versions[0]))
        self.elements: tuple[Version, ...] = minimal(versions)

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
        for element in self.elements:
            if all(map(le, element, version)):
                return True
        return False

    def less_equal(self, other: Antichain) -> bool:
        """Whether this frontier is at or behind ``other``: it allows every version ``other`` allows."""
        mine, theirs = self.elements, other.elements
        if len(mine) == 1 and len(theirs) == 1:  # the common case, one version each
            return all(map(le, mine[0], theirs[0]))
        for version in theirs:
            for element in mine:
                if all(map(le, element, version)):
                    break
            else:
                return False
        return True

    def less_than(self, other: Antichain) -> bool:
        return self.elements != other.elements and self.less_equal(other)

    @classmethod
    def trusted(cls, elements: tuple[Version, ...]) -> Antichain:
        """An antichain of elements already minimal and sorted (the engine derived them from one), built
        without checks."""
        antichain = object.__new__(cls)
        antichain.elements = elements
        antichain._advanced = None
        return antichain

    def advance(self, version: Version) -> Version:
        """``version.advance_by(self)``, remembered: compaction advances many versions, few of them distinct.

        Operators that read one message share its frontier object, and with it what was worked out.
        """
        if self._advanced is None:
            self._advanced = {}
        advanced = self._advanced.get(version)
        if advanced is None:
            advanced = self._advanced[version] = version.advance_by(self)
        return advanced

    def changes_to(self, other: Antichain) -> tuple[tuple[Version, ...], tuple[Version, ...]]:
        """``(removed, added)``: the elements to drop from this antichain and to add, to make ``other``."""
        mine, theirs = self.elements, other.elements
        if len(mine) == 1 and len(theirs) == 1:  # the common case: one version replaced by another
            return (mine, theirs) if mine != theirs else ((), ())
        return (
            tuple(element for element in mine if element not in theirs),
            tuple(element for element in theirs if element not in mine),
        )

    def apply(self, change: Any) -> Antichain:
        """This antichain after a change with ``removed`` and ``added`` elements (a ``FrontierMessage``)."""
        if change.before.elements == self.elements:  # the sender's frontier before: the change leads to its after
            return change.after
        removed, added = change.removed, change.added
        if removed == self.elements:  # everything replaced; ``added`` is a sorted antichain already
            return Antichain.trusted(added)
        kept = tuple(element for element in self.elements if element not in removed)
        if not added:  # only removals: what is kept stays in order
            return Antichain.trusted(kept)
        return Antichain.trusted(tuple(sorted(kept + added, key=tuple)))

    def meet(self, other: Antichain) -> Antichain:
        """The frontier allowing what either allows: the minimal elements of both."""
        mine, theirs = self.elements, other.elements
        if len(mine) == 1 and len(theirs) == 1:  # the common case, one version each
            if all(map(le, mine[0], theirs[0])):
                return self
            if all(map(le, theirs[0], mine[0])):
                return other
        elif other.less_equal(self):  # this one adds nothing other does not allow already
            return other
        elif self.less_equal(other):
            return self
        return Antichain.trusted(minimal(mine + theirs))

    def join(self, other: Antichain) -> Antichain:
        """The frontier allowing what both allow: the minimal joins of an element of each."""
        if self.elements == other.elements:
            return self
        return Antichain.trusted(minimal([mine.join(theirs) for mine in self.elements for theirs in other.elements]))

    def extend(self) -> Antichain:
        # Appending a coordinate keeps elements incomparable and in order.
        return Antichain.trusted(tuple(element.extend() for element in self.elements))

    def truncate(self) -> Antichain:
        return Antichain.trusted(minimal([element.truncate() for element in self.elements]))

    def increment(self) -> Antichain:
        # Incomparable elements differ before their last coordinate, so adding 1 to it keeps them so, in order.
        return Antichain.trusted(tuple(element.increment() for element in self.elements))


def minimal(versions: Iterable[Version]) -> tuple[Version, ...]:
    """The minimal elements of ``versions``, without repeats, sorted by ``sort_key``: an antichain's elements."""
    versions = tuple(versions)
    if len(versions) == 2:  # the common case in loops: two frontier elements met or joined
        first, second = versions
        if all(map(le, first, second)):
            return (first,)
        if all(map(le, second, first)):
            return (second,)
        return versions if tuple.__lt__(first, second) else (second, first)
    result: list[Version] = []
    for version in sorted(set(versions), key=tuple):
        # Sorted lexicographically, a version can only be >= versions before it.
        for kept in result:
            if all(map(le, kept, version)):
                break
        else:
            result.append(version)
    return tuple(result)


def checked_frontier(frontier: Any, what: str, dimension: int) -> Antichain:
    """An Antichain from ``frontier`` (a Version stands for the antichain of just itself).

    Raises:
        FrontierError: ``frontier`` is neither, or its versions do not have ``dimension`` coordinates.
    """
    if type(frontier) is Version:
        checked_version(frontier, FrontierError, what, dimension)
        return Antichain.trusted((frontier,))
    if not isinstance(frontier, Antichain):
        raise FrontierError(
            f"{what} must be an Antichain (or a Version), not {frontier!r}; write Antichain([Version((1, 0))])"
        )
    for element in frontier.elements:
        checked_version(element, FrontierError, what, dimension)
    return frontier


def as_version(version: Any, dimension: int, what: str = "a version from join_function") -> Version:
    """``version`` as a Version with ``dimension`` coordinates: a Version as is, an int or a tuple of ints wrapped.

    Raises:
        VersionError: it is none of these, or it has another number of coordinates (``what`` names it).
    """
    if type(version) is int and dimension == 1 and version >= 0:  # the common case, a plain int
        return tuple.__new__(Version, (version,))
    if type(version) is not Version:
        version = Version(version)
    return checked_version(version, VersionError, what, dimension)
