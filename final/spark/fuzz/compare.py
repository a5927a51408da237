"""How the SQL fuzzer compares answers: by the pipeline's one rule (``equality``), and how a difference is told.

Two answers are the same when they hold the same rows the same number of
times, each value exactly as Spark SQL types it (``equality.value_key``);
a DOUBLE computed by SUM, AVG or a spread (``stddev``, ``variance``)
within ``equality.TOLERANCE``, and a top-k's ties at its cut as the
pipeline compares them. ``describe`` and ``as_source`` tell a difference
as Python source, for reports and reproducers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from ..equality import compare_rows


@dataclass(frozen=True)
class Answer:
    """A query's answer at one version: its rows (a multiset, as a tuple), types and column names, or the error
    raised.

    ``error`` is Spark's error class (``DIVIDE_BY_ZERO``), or our error's
    message; ``refused`` says the engine refused the query itself (Spark's
    AnalysisException: a generator bug); ``crash`` that ours failed other
    than as Spark would (a Python error, a DataflowError not from the data).
    """

    rows: tuple[tuple, ...] = ()
    types: tuple[str, ...] | None = None
    error: str | None = None
    names: tuple[str, ...] | None = None
    refused: str | None = None
    crash: str | None = None


def same_rows(expected: Sequence[tuple], actual: Mapping[tuple, int], tolerant: Sequence[int] = (),
              rank: Callable[[tuple], tuple] | None = None) -> list[tuple[tuple, int, int]]:
    """Where ``actual`` (row -> multiplicity) differs from the multiset ``expected``: ``(row, expected
    count, actual count)`` for each differing row, by ``equality.compare_rows``; empty when they are the same."""
    return compare_rows(Counter(expected), actual, tolerant, rank).differing


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
