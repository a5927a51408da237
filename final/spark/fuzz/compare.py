"""How the SQL fuzzer compares answers: rows as multisets of exactly typed values.

Two answers are the same when they hold the same rows the same number of
times, a value being the same as another only if Spark SQL would call it
so and print it so: a bool is not an int, nor an int a double, a DECIMAL
keeps its scale, every NaN is one value and -0.0 is 0.0 (``value_key``).
One exception: a DOUBLE computed by SUM or AVG depends on the order Spark
adds in, so such a column is compared within ``TOLERANCE``
(``tolerant_columns``). And for a query ending in ORDER BY ... LIMIT, rows
tied at the window's first or last place compare as the pipeline compares
them (``pipeline.untied``): as many there on both sides, whichever rows.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from ..pipeline import untied

TOLERANCE = 1e-9
"""Relative tolerance for a DOUBLE column of a query with SUM or AVG: Spark adds doubles in an order of its own."""


@dataclass(frozen=True)
class Answer:
    """A query's answer at one version: its rows (a multiset, as a tuple) and types, or the error raised.

    ``error`` is Spark's error class (``DIVIDE_BY_ZERO``), or our error's
    message; ``refused`` says the engine refused the query itself (Spark's
    AnalysisException: a generator bug); ``crash`` that ours failed other
    than as Spark would (a Python error, a DataflowError not from the data).
    """

    rows: tuple[tuple, ...] = ()
    types: tuple[str, ...] | None = None
    error: str | None = None
    refused: str | None = None
    crash: str | None = None


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


def tolerant_columns(text: str, types: Sequence[str] | None) -> tuple[int, ...]:
    """The DOUBLE columns of a query that uses SUM or AVG: compared within ``TOLERANCE`` (the generator
    lets such a value only pass through unchanged, so exactness elsewhere is untouched)."""
    if not types or not re.search(r"\b(SUM|AVG)\s*\(", text, re.IGNORECASE):
        return ()
    return tuple(position for position, kind in enumerate(types) if kind == "double")


def _close(a: Any, b: Any) -> bool:
    if not (isinstance(a, float) and isinstance(b, float)):
        return value_key(a) == value_key(b)
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return value_key(a) == value_key(b)
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-12)


def same_rows(expected: Sequence[tuple], actual: Mapping[tuple, int], tolerant: Sequence[int] = (),
              rank: Callable[[tuple], tuple] | None = None) -> list[tuple[tuple, int, int]]:
    """Where ``actual`` (row -> multiplicity) differs from the multiset ``expected``: ``(row, expected
    count, actual count)`` for each differing row; empty when they are the same.

    Values compare by ``value_key``; in the ``tolerant`` positions two
    finite floats are the same within ``TOLERANCE`` (paired greedily among
    the rows that differ otherwise). With ``rank`` (a top-k's order,
    ``SqlQuery.rank``), rows tied at the window's edges are the same when as
    many are there on both sides.
    """
    want: Counter = Counter()
    have: Counter = Counter()
    shown: dict[tuple, tuple] = {}
    for row in expected:
        key = row_key(row)
        want[key] += 1
        shown.setdefault(key, row)
    for row, count in actual.items():
        key = row_key(row)
        have[key] += count
        shown.setdefault(key, row)
    keys = [key for key in shown if want[key] != have[key]]
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
                    break
        keys = [key for key in shown if want[key] != have[key]]
    if rank is not None and keys:
        kept = untied({shown[key] for key in keys}, {shown[key]: want[key] for key in shown},
                      {shown[key]: have[key] for key in shown}, rank)
        keys = [key for key in keys if shown[key] in kept]
    return [(shown[key], want[key], have[key]) for key in keys]


def describe(differing: Sequence[tuple[tuple, int, int]], limit: int = 4) -> str:
    """The rows that differ (``same_rows``) in one line, at most ``limit`` of them, each as Python source."""
    shown = "; ".join(f"{as_source(row)}: Spark {want}, final/ {have}" for row, want, have in differing[:limit])
    more = f" (and {len(differing) - limit} more rows)" if len(differing) > limit else ""
    return f"rows differ: {shown}{more}"


def as_source(value: Any) -> str:
    """``value`` as Python source that rebuilds it (NaN and the infinities as ``float(...)``, a DATE as
    ``date(...)``, a TIMESTAMP as ``datetime(...)``)."""
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return f'float("{"-" if value < 0 else ""}inf")'
        return repr(float(value))
    if isinstance(value, Decimal):
        return f'Decimal("{value}")'
    if isinstance(value, date):  # date(...) or datetime(...), as the reproducer imports them
        return repr(value).removeprefix("datetime.")
    if isinstance(value, tuple):
        inner = ", ".join(as_source(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(as_source(item) for item in value) + "]"
    return repr(value)
