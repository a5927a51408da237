"""Spark SQL's floating-point semantics in ``final/``'s records: NaN is one value, above every number.

IEEE 754, and Python with it, makes NaN unequal to itself. In a dataflow that
is wrong in every operator that matches records: two NaN rows are two records,
a NaN group is never retracted (its retraction is a different NaN), a join
never matches a NaN key, and ``min``/``max`` answer by the order they were
handed their values. Spark SQL instead treats NaN as a value like any other:
``NaN = NaN`` is true, NaN sorts above every number (positive infinity
included), and GROUP BY, DISTINCT and joins put all NaNs together.

``NAN`` is that value: a float (so arithmetic still works) that equals
itself and every other NaN, hashes alike everywhere, and compares above
every number. ``sql_value`` maps a NaN to it and leaves everything else
alone; ``float_positions`` finds the columns of a table that can hold one.

Signed zero needs no stand-in: Spark SQL and Python both hold ``-0.0 = 0.0``,
and Python hashes them alike, so they are one group, one distinct value and
one join key already.

This module imports nothing from Spark: executors import it with the catalog.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

FLOAT_TYPES = ("DOUBLE", "FLOAT", "REAL")
"""The Spark SQL types whose values can be NaN."""

_NUMBERS = (int, float, Decimal)


class SqlNaN(float):
    """Spark SQL's NaN: equal to every NaN, greater than every other number. There is one, ``NAN``."""

    __slots__ = ()
    _the: SqlNaN | None = None

    def __new__(cls) -> SqlNaN:
        if cls._the is None:
            cls._the = super().__new__(cls, "nan")
        return cls._the

    def __reduce__(self) -> tuple:
        # Pickled to an executor and back, it is still the one NaN.
        return (SqlNaN, ())

    def __hash__(self) -> int:
        return hash("SqlNaN")

    def __repr__(self) -> str:
        return "NaN"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, float) and math.isnan(other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __lt__(self, other: object) -> bool:
        return False if isinstance(other, _NUMBERS) else NotImplemented

    def __le__(self, other: object) -> bool:
        return self == other if isinstance(other, _NUMBERS) else NotImplemented

    def __gt__(self, other: object) -> bool:
        return self != other if isinstance(other, _NUMBERS) else NotImplemented

    def __ge__(self, other: object) -> bool:
        return True if isinstance(other, _NUMBERS) else NotImplemented


NAN = SqlNaN()
"""The one NaN of records built here: ``NAN == NAN``, ``NAN > math.inf``, ``hash(NAN)`` fixed."""


def sql_value(value: Any) -> Any:
    """``NAN`` for a NaN float, ``value`` itself otherwise."""
    return NAN if isinstance(value, float) and math.isnan(value) else value


def sql_row(row: tuple, positions: Iterable[int] | None = None) -> tuple:
    """``row`` with every NaN replaced by ``NAN`` (the same tuple when it holds none).

    ``positions``, if given, are the only ones that can hold a float (``float_positions``): a load
    checks those alone.
    """
    for position in range(len(row)) if positions is None else positions:
        value = row[position]
        if isinstance(value, float) and value != value:  # only NaN differs from itself
            return tuple(sql_value(value) for value in row)
    return row


def float_positions(columns: tuple[tuple[str, str], ...]) -> tuple[int, ...]:
    """The positions of ``columns`` (``(name, Spark SQL type)``) whose type can hold NaN."""
    return tuple(position for position, (_, kind) in enumerate(columns) if kind.upper() in FLOAT_TYPES)
