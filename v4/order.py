"""Versions: the logical times that label every difference collection.

In v4 a version is a tuple of non-negative ints, ordered lexicographically
(the first coordinate that differs decides), so it is still a total order. A
loop adds a coordinate: ``(input version, iteration)``, so the fifth round of
the loop on version 10 of its input is ``(10, 5)``. ``extend``, ``truncate``
and ``increment`` move versions into a loop, out of it, and around it. A
*frontier* (a version too, here) says which versions may still change: every
version ``v`` with ``frontier.less_equal(v)``. The lattice vocabulary
(``less_equal``, ``join`` for the least upper bound, ``meet`` for the
greatest lower bound) is lexicographic ``<=``, ``max`` and ``min``.
Source: document 002, "v3: Versions and frontiers"
and "v4: Multidimensional versions". Rust DD calls a version a timestamp, or
time; its loop versions are ``Product`` timestamps, ordered as in v5, not as here.

>>> Version(1).less_equal(Version(2)), Version(2).less_equal(Version(1))
(True, False)
>>> Version((0, 5)).less_equal(Version((1, 0)))
True
>>> Version((3, 1)).join(Version((2, 7))), Version((3, 1)).meet(Version((2, 7)))
(Version((3, 1)), Version((2, 7)))
>>> Version((2, 1)).advance_by(Version((4, 0)))
Version((4, 0))
>>> Version(3).extend(), Version((3, 4)).truncate(), Version((3, 4)).increment()
(Version((3, 0)), Version((3,)), Version((3, 5)))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import VersionError


@dataclass(frozen=True)
class Version:
    """A logical time: a non-empty tuple of non-negative ints, ordered lexicographically.

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
        return self.coords <= other.coords

    def less_than(self, other: Version) -> bool:
        return self.coords < other.coords

    def join(self, other: Version) -> Version:
        """The least upper bound of the two versions: here, the later one."""
        return self if other.coords <= self.coords else other

    def meet(self, other: Version) -> Version:
        """The greatest lower bound of the two versions: here, the earlier one."""
        return self if self.coords <= other.coords else other

    def advance_by(self, frontier: Version) -> Version:
        """The earliest version at or after ``self`` that ``frontier`` still allows.

        Data at a version behind the frontier can be moved here without any
        future comparison telling the difference: every version still to come
        is ``>= frontier``, so it compares with both alike.
        """
        return self.join(frontier)

    def sort_key(self) -> Any:
        """A key whose order lists a version after every version less than it."""
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
