"""Checkers for the exercises of ``v5_partial_orders.ipynb``: the product order, ``advance_by``, corrections.

Each checker computes the right answer with v5's own ``Version`` and
``Antichain`` (or, for the correction, with v0 from scratch) and, when the
learner's answer differs, says at which version, what was given, what was
expected, and the step of the definition that gives it. The ``advance_by`` a
learner builds is judged inside v5, against its definition and v0 from scratch
(``workshop.build``).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from workshop import Property, Wrong, check_piece, equals_from_scratch, exercise

from tests.strategies import edges_over, tuple_versions
from v5 import Antichain, Version

UPPER_SET_FRONTIER = ((0, 3), (2, 1), (4, 0))
"""Exercise 1's frontier: three incomparable versions, a staircase of three steps."""

UPPER_SET_CANDIDATES = ((1, 2), (2, 3), (5, 0), (0, 4), (3, 0), (1, 1), (2, 1))
"""Exercise 1's versions to sort into "may still change" and "finished"."""

ADVANCE_FRONTIER = ((1, 2), (2, 0))
"""Exercise 2's frontier (the example of ``v5/order.py``'s doctest and of the notebook)."""

ADVANCE_VERSIONS = ((0, 0), (0, 1), (0, 3), (1, 1))
"""Exercise 2's versions to advance by ``ADVANCE_FRONTIER``."""

COUNT_INPUT = [[(("fruit", "apple"), (0, 0), 1), (("fruit", "pear"), (1, 0), 1), (("fruit", "plum"), (0, 1), 1)]]
"""Exercise 3's input: one record at (0, 0), another at (1, 0), a third at (0, 1); nothing at (1, 1)."""


def _coords(value: Any) -> Any:
    """A version given as a Version or as a tuple, as a tuple; anything else unchanged."""
    return value.coords if isinstance(value, Version) else value


def _pairs(frontier: tuple) -> str:
    return "{" + ", ".join(str(element) for element in frontier) + "}"


def _why_not_below(element: tuple, version: tuple) -> str:
    """Which coordinate of ``element`` is larger than ``version``'s."""
    axis = 0 if element[0] > version[0] else 1
    which = "first" if axis == 0 else "second"
    return f"{element} has the larger {which} coordinate ({element[axis]} > {version[axis]})"


@exercise
def allowed_by_frontier(answer) -> None:
    """The versions among ``UPPER_SET_CANDIDATES`` that the frontier ``UPPER_SET_FRONTIER`` still allows."""
    try:
        given = {_coords(version) for version in answer}
    except TypeError:
        raise Wrong(f"give a set of versions, e.g. {{(9, 9), (8, 8)}}, not {answer!r}") from None
    strays = given - set(UPPER_SET_CANDIDATES)
    if strays:
        raise Wrong(f"{sorted(strays)} is not among the versions to sort: {list(UPPER_SET_CANDIDATES)}")
    frontier = Antichain(Version(element) for element in UPPER_SET_FRONTIER)
    for candidate in UPPER_SET_CANDIDATES:
        allowed = frontier.less_equal_version(Version(candidate))
        if candidate in given and not allowed:
            reasons = "; ".join(_why_not_below(element, candidate) for element in UPPER_SET_FRONTIER)
            lexicographic = [element for element in UPPER_SET_FRONTIER if element <= candidate]
            hint = (
                f" (In v4's lexicographic order {lexicographic[0]} <= {candidate}; in the product order "
                f"they are incomparable.)" if lexicographic else ""
            )
            raise Wrong(
                f"you said {_pairs(UPPER_SET_FRONTIER)} allows {candidate}, but no element is <= it coordinate "
                f"by coordinate: {reasons}. So {candidate} is finished.{hint}"
            )
        if candidate not in given and allowed:
            (below, *_) = [e for e in UPPER_SET_FRONTIER if Version(e).less_equal(Version(candidate))]
            if below == candidate:
                raise Wrong(f"you left out {candidate}, but it is an element of the frontier: not finished yet")
            raise Wrong(
                f"you left out {candidate}, but {below} <= {candidate} coordinate by coordinate "
                f"({below[0]} <= {candidate[0]} and {below[1]} <= {candidate[1]}), so data may still arrive there"
            )


@exercise
def advance_by_by_hand(answer) -> None:
    """``{version: version.advance_by(frontier)}`` for ``ADVANCE_VERSIONS`` and ``ADVANCE_FRONTIER``, by hand."""
    if not isinstance(answer, dict):
        raise Wrong(
            f"give a dict from each version to where it moves, like {{(0, 0): (a, b), ...}} with numbers "
            f"for a and b, not {answer!r}"
        )
    given = {_coords(version): _coords(moved) for version, moved in answer.items()}
    if set(given) != set(ADVANCE_VERSIONS):
        raise Wrong(f"give exactly the versions {list(ADVANCE_VERSIONS)} as keys; you gave {sorted(given, key=repr)}")
    frontier = Antichain(Version(element) for element in ADVANCE_FRONTIER)
    for version in ADVANCE_VERSIONS:
        expected = Version(version).advance_by(frontier).coords
        got = given[version]
        if got == expected:
            continue
        joins = [Version(version).join(Version(element)).coords for element in ADVANCE_FRONTIER]
        steps = ", ".join(
            f"{version} join {element} = {join}" for element, join in zip(ADVANCE_FRONTIER, joins, strict=True)
        )
        message = (
            f"at {version} you gave {got}; {version}.advance_by({_pairs(ADVANCE_FRONTIER)}) is {expected}: "
            f"join the version with each frontier element ({steps}), then take the meet of those, their "
            f"coordinate-wise min, {expected}"
        )
        witness = _telling_future(version, got, frontier)
        if witness is not None:
            relation = "is" if Version(version).less_equal(Version(witness)) else "is not"
            message += (
                f". Moving {version} to {got} would change what a future version sees: {witness} is still "
                f"allowed, and it {relation} >= {version} but {'is not' if relation == 'is' else 'is'} >= {got}"
            )
        else:
            message += f". {got} is safe, but advance_by moves as far as no future version can tell: to {expected}"
        raise Wrong(message)


def _telling_future(version: tuple, moved: Any, frontier: Antichain) -> tuple | None:
    """A version the frontier allows that compares differently with ``version`` and with ``moved``, if any."""
    if not (isinstance(moved, tuple) and len(moved) == 2 and all(type(c) is int and c >= 0 for c in moved)):
        return None
    size = max(*version, *moved, *(c for e in frontier.elements for c in e.coords)) + 2
    for first in range(size):
        for second in range(size):
            future = Version((first, second))
            if frontier.less_equal_version(future) and (
                Version(version).less_equal(future) != Version(moved).less_equal(future)
            ):
                return future.coords
    return None


def _count_differences() -> dict:
    from tests.harness import run_differences

    return run_differences("v0", lambda collection: collection.count(), COUNT_INPUT)


@exercise
def correction_at_the_join(answer) -> None:
    """The difference ``count`` sends at (1, 1), where no input arrived: ``{(key, count): multiplicity}``."""
    if not isinstance(answer, dict):
        raise Wrong(f"give the difference as a dict {{(key, count): multiplicity}}, not {answer!r}")
    if not all(type(m) is int for m in answer.values()):
        raise Wrong(f"each multiplicity is an int (how many copies are added, or removed if negative): {answer!r}")
    given = {record: m for record, m in answer.items() if m}
    differences = _count_differences()
    expected = differences[(1, 1)]
    if given == expected:
        return
    before = {}
    for at in ((0, 0), (1, 0), (0, 1)):
        for record, m in differences.get(at, {}).items():
            before[record] = before.get(record, 0) + m
    before = {record: m for record, m in before.items() if m}
    yours = dict(before)
    for record, m in given.items():
        yours[record] = yours.get(record, 0) + m
    yours = {record: m for record, m in yours.items() if m}
    start = (
        f"you predicted {given} at (1, 1), but" if given
        else "you predicted no change at (1, 1), since no input arrived there. But"
    )
    raise Wrong(
        f"{start} the differences count sent at (0, 0), (1, 0) and (0, 1) already add up, at (1, 1), to "
        f"{dict(sorted(before.items()))} ((1, 0) and (0, 1) each replaced ('fruit', 1) by ('fruit', 2)), "
        f"while the input at (1, 1) holds all three fruits, so count must say {{('fruit', 3): 1}}. "
        f"Your difference would leave {dict(sorted(yours.items()))}"
    )


@st.composite
def _version_and_frontier(draw: st.DrawFn) -> tuple[tuple[int, int], tuple[tuple[int, int], ...]]:
    """A pair version and a frontier of one to three pair versions (an antichain: only its minimal ones kept)."""
    version = draw(tuple_versions)
    frontier = Antichain(Version(element) for element in draw(st.lists(tuple_versions, min_size=1, max_size=3)))
    return version, tuple(element.coords for element in frontier.elements)


def _advanced_by_definition(example: tuple) -> tuple[int, int]:
    """The greatest version that no version the frontier allows can tell from ``version``, searched over a grid.

    A future version ``t`` (one with some frontier element ``<= t``) tells
    ``version`` from ``w`` when ``version <= t`` and ``w <= t`` differ. Every
    coordinate involved is at most 2, so the grid 0..2 holds every ``t`` that
    matters (joins of the version with the frontier's elements).
    """
    version, frontier = example
    grid = [(a, b) for a in range(3) for b in range(3)]

    def below(a: tuple, b: tuple) -> bool:
        return a[0] <= b[0] and a[1] <= b[1]

    future = [t for t in grid if any(below(element, t) for element in frontier)]
    safe = [w for w in grid if below(version, w) and all(below(version, t) == below(w, t) for t in future)]
    (greatest,) = [w for w in safe if all(below(other, w) for other in safe)]
    return greatest


ADVANCE_BY_DEFINITION = Property(
    name="advance_by",
    examples=_version_and_frontier(),
    got=lambda example: Version(example[0]).advance_by(Antichain(Version(element) for element in example[1])).coords,
    expected=_advanced_by_definition,
    example="(version, frontier)",
    reference="the definition",
)
"""The piece against its definition, frontiers of several elements included, which whole programs reach rarely."""


@exercise
def build_advance_by(answer: Any) -> None:
    """The learner's ``Version.advance_by(self, frontier)``, run inside v5: against its definition, then count.

    ``count`` runs on the suite's partially ordered histories (``edges_over``,
    pairs as versions), where compaction advances by frontiers of several
    elements.
    """
    check_piece("v5", "order.Version.advance_by", answer, [
        ADVANCE_BY_DEFINITION,
        equals_from_scratch("v5", "count", st.lists(edges_over["tuple"], min_size=1, max_size=1)),
    ])
