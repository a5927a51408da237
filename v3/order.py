"""Versions: the logical times that label every difference collection.

In v3 a version is a non-negative int, ordered as ints are. Labelling each
difference with its version lets differences travel out of order and several
of them add up at one version; a *frontier* (a version too, here) says which
versions may still change: every version ``v`` with ``frontier.less_equal(v)``.
The methods use the lattice vocabulary later stages need (``less_equal``,
``join`` for the least upper bound, ``meet`` for the greatest lower bound),
which for ints is just ``<=``, ``max`` and ``min``.
Source: document 002, "v3: Versions and frontiers".
Rust DD calls a version a timestamp, or time.

>>> Version(1).less_equal(Version(2)), Version(2).less_equal(Version(1))
(True, False)
>>> Version(3).join(Version(5)), Version(3).meet(Version(5))
(Version(5), Version(3))
>>> Version(2).advance_by(Version(4))
Version(4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import VersionError


@dataclass(frozen=True)
class Version:
    """A logical time: a non-negative int.

    ``<`` is not defined on purpose (later stages have incomparable versions):
    use ``less_equal`` and ``less_than``.
    """

    value: int

    def __post_init__(self) -> None:
        if type(self.value) is not int or self.value < 0:
            raise VersionError(f"a version is a non-negative int, not {self.value!r}; write Version(3)")

    def __repr__(self) -> str:
        return f"Version({self.value!r})"

    def less_equal(self, other: Version) -> bool:
        return self.value <= other.value

    def less_than(self, other: Version) -> bool:
        return self.value < other.value

    def join(self, other: Version) -> Version:
        """The least upper bound of the two versions: here, the later one."""
        return self if other.value <= self.value else other

    def meet(self, other: Version) -> Version:
        """The greatest lower bound of the two versions: here, the earlier one."""
        return self if self.value <= other.value else other

    def advance_by(self, frontier: Version) -> Version:
        """The earliest version at or after ``self`` that ``frontier`` still allows.

        Data at a version behind the frontier can be moved here without any
        future comparison telling the difference: every version still to come
        is ``>= frontier``, so it compares with both alike.
        """
        return self.join(frontier)

    def sort_key(self) -> Any:
        """A key whose order lists a version after every version less than it."""
        return self.value


def checked_version(version: Any, error: type[Exception], what: str) -> Version:
    """Return ``version`` if it is a Version, else raise ``error`` saying what to write."""
    if not isinstance(version, Version):
        raise error(f"{what} must be a Version, not {version!r}; write Version({version!r})")
    return version
