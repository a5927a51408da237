"""Linear logic: what a linear operator does to one difference, and the same logic composed and applied.

Every linear operator is a ``Logic`` (000, "All of the linear operators"):
the updates at a version become updates at versions, each on its own. A
chain of them composes into one logic (``followed_by``, 000's "Fusing
logic"), which can then run wherever the data passes: in its own operator
(``final.operators.linear``), or, once ``final.fusion`` has folded it into
the operator next to it, at that operator's output or input
(``final.edges``). ``apply_logic`` runs one and says whose function failed.
Rust DD has no such type: its linear operators are closures over a
collection's updates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .collection import Entry
from .errors import DataflowError, FunctionError
from .order import Version

Logic = Callable[[Version, list[Entry]], Iterable[tuple[Version, list[Entry]]]]
"""A linear operator's work on one difference: the updates at a version become updates at versions.

Every linear operator is this, for some logic (000, "All of the linear
operators"): ``map``, ``filter``, ``flat_map`` and ``negate`` keep the version;
``explode`` multiplies multiplicities; ``join_function`` and temporal filters
move updates to the lattice join of their version and one the logic names.
A logic must not mutate the list it is given: other readers share it."""


def apply_logic(logic: Logic, version: Version, updates: list[Entry], owner: Any) -> list:
    """``logic`` on ``updates`` at ``version``, all of it, before anything is sent.

    Raises:
        FunctionError: a user's function in ``logic`` raised; the message
            names ``owner.label`` (the operator, or the end of an edge, it is
            fused into) and the first record it raises on.
    """
    try:
        return list(logic(version, updates))
    except DataflowError:
        raise
    except Exception as error:
        culprit = ""
        for update in updates:  # a linear logic works update by update: find the one it fails on
            try:
                list(logic(version, [update]))
            except Exception:  # any exception marks the culprit
                culprit = f" on the record {update[0]!r}"
                break
        label = owner.label
        failure = FunctionError(
            f"{label} failed at version {version}{culprit}: your function raised {type(error).__name__}: {error}"
        )
        failure.operator = label
        raise failure from error


def followed_by(first: Logic, then: Logic) -> Logic:
    """The logic applying ``first``, then ``then`` to what it produced."""

    def logic(version: Version, updates: list[Entry]) -> Iterable[tuple[Version, list[Entry]]]:
        for middle_version, middle in first(version, updates):
            yield from then(middle_version, middle)

    return logic
