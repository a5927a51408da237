"""The one rule by which a result of ``final/`` equals Spark SQL's: ``run``, ``verify``, the fuzzer and the tests.

Two results are equal when they hold the same rows the same number of
times, a value being the same as another only if Spark SQL would call it
so and print it so (``value_key``): a bool is not an int, nor an int a
double, a DECIMAL keeps its scale (1.50 is not 1.5), every NaN is one value
and -0.0 is 0.0, as Spark compares them.

Two exceptions, both stated where they apply:

- a DOUBLE computed by SUM or AVG depends on the order Spark adds in (it
  adds in row order, ``final/`` exactly and rounds once), and so does a
  spread (``stddev``, ``variance`` and their ``_samp`` and ``_pop``
  forms, of any numbers: Spark updates a running mean row by row, so
  ``var_samp`` of the INTs 733, 926, ... ends in other bits than the exact
  value rounded once); so in a query that has one, a DOUBLE column is equal
  within ``TOLERANCE``
  (``tolerant_columns``), and the comparison counts the values that were
  equal only so (``Compared.tolerated``), for the report to say;
- a query ending in ORDER BY ... LIMIT: Spark breaks ties at the window's
  cut in no stated order, so rows tied at its first or last place are equal
  when as many are there on both sides (``untied``, by ``SqlQuery.rank``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

TOLERANCE = 1e-9
"""Relative tolerance for a DOUBLE column of a query with SUM, AVG or a spread: Spark adds in an order of its own."""

ORDER_DEPENDENT = re.compile(r"\b(SUM|AVG|STDDEV|STDDEV_SAMP|STDDEV_POP|STD|VARIANCE|VAR_SAMP|VAR_POP)\s*\(",
                             re.IGNORECASE)
"""The aggregates whose DOUBLE value depends on the order Spark reads the rows in."""


def value_key(value: Any) -> tuple:
    """What makes two values the same here: a bool is not an int, a DECIMAL keeps its scale (1.50 is not
    1.5), -0.0 is 0.0 (and a DECIMAL -0.00 is 0.00), every NaN is one value."""
    if value is None:
        return (0,)
    if isinstance(value, bool):
        return (1, value)
    if isinstance(value, int):
        return (2, value)
    if isinstance(value, Decimal):
        return (3, str(abs(value) if value.is_zero() else value))
    if isinstance(value, float):
        return (4, "nan") if math.isnan(value) else (4, value + 0.0)
    if isinstance(value, str):
        return (5, value)
    return (6, type(value).__name__, repr(value))


def row_key(row: Sequence) -> tuple:
    """``row`` with each value replaced by its ``value_key``: two rows are the same here when their keys are."""
    return tuple(value_key(value) for value in row)


def tolerant_columns(sql: str, types: Sequence[str] | None) -> tuple[int, ...]:
    """The positions of the DOUBLE columns (``types`` as Spark names them) of a query whose ``sql`` uses SUM,
    AVG or a spread (``ORDER_DEPENDENT``): compared within ``TOLERANCE``."""
    if not types or not ORDER_DEPENDENT.search(sql):
        return ()
    return tuple(position for position, kind in enumerate(types) if kind == "double")


@dataclass
class Compared:
    """Where two results differ: ``(row, expected count, actual count)`` per differing row (empty when equal),
    and how many rows were equal only within ``TOLERANCE``."""

    differing: list[tuple[tuple, int, int]] = field(default_factory=list)
    tolerated: int = 0


def compare_rows(expected: Mapping[tuple, int], actual: Mapping[tuple, int], tolerant: Sequence[int] = (),
                 rank: Callable[[tuple], tuple] | None = None) -> Compared:
    """``expected`` (Spark SQL's rows, row -> count) against ``actual`` (``final/``'s) by this module's rule.

    Values compare by ``value_key``; in the ``tolerant`` positions two
    finite floats are the same within ``TOLERANCE`` (paired greedily among
    the rows that differ otherwise); with ``rank``, rows tied at a top-k's
    edges are the same when as many are there on both sides.
    """
    want: Counter = Counter()
    have: Counter = Counter()
    shown: dict[tuple, tuple] = {}
    for counted, side in ((expected, want), (actual, have)):
        for row, count in counted.items():
            key = row_key(row)
            side[key] += count
            shown.setdefault(key, row)
    keys = [key for key in shown if want[key] != have[key]]
    tolerated = 0
    if tolerant and keys:
        spare_want = [key for key in keys if want[key] > have[key] for _ in range(want[key] - max(have[key], 0))]
        spare_have = [key for key in keys if have[key] > want[key] for _ in range(have[key] - want[key])]
        fixed = set(range(len(next(iter(shown))))) - set(tolerant)
        for key in spare_want:
            for other in spare_have:
                if all(key[position] == other[position] for position in fixed) and all(
                        _close(shown[key][position], shown[other][position]) for position in tolerant):
                    spare_have.remove(other)
                    want[key] -= 1
                    want[other] += 1
                    tolerated += 1
                    break
        keys = [key for key in shown if want[key] != have[key]]
    if rank is not None and keys:
        kept = untied({shown[key] for key in keys}, {shown[key]: want[key] for key in shown},
                      {shown[key]: have[key] for key in shown}, rank)
        keys = [key for key in keys if shown[key] in kept]
    return Compared([(shown[key], want[key], have[key]) for key in keys], tolerated)


def _close(a: Any, b: Any) -> bool:
    if not (isinstance(a, float) and isinstance(b, float)):
        return value_key(a) == value_key(b)
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return value_key(a) == value_key(b)
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-12)


def untied(rows: set[tuple], expected: Mapping[tuple, int], actual: Mapping[tuple, int],
           rank: Callable[[tuple], tuple]) -> set[tuple]:
    """``rows`` (differing between ``expected`` and ``actual``) less those at a top-k window's first or last
    place (by ``rank``) that holds as many rows on both sides."""
    places = [rank(row) for row in [*expected, *actual]]
    edges = {min(places), max(places)}
    held: dict[tuple, list[int]] = {}
    for side, counted in enumerate((expected, actual)):
        for row, multiplicity in counted.items():
            place = rank(row)
            if place in edges:
                held.setdefault(place, [0, 0])[side] += multiplicity
    return {row for row in rows if rank(row) not in edges or held[rank(row)][0] != held[rank(row)][1]}
