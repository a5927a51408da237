"""sqlite3 as the small from-scratch oracle for SQL-shaped programs (Spark SQL is
to be the large one, once the Spark pipeline exists).

``group_by_reference`` builds, for every version, a table of the rows whose
accumulated multiplicity is positive (a row with multiplicity 2 is inserted
twice), runs a GROUP BY query, and returns the result in the shape
``final``'s ``aggregate`` produces: ``{(key, ((name, value), ...)): 1}``.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from tests.harness import Result, less_equal

SQL_AGGREGATES = {
    "count": "COUNT({column})",
    "count_distinct": "COUNT(DISTINCT {column})",
    "sum": "SUM({column})",
    "min": "MIN({column})",
    "max": "MAX({column})",
}


def group_by_reference(
    columns: Sequence[str], key: str, named: dict[str, tuple[str, str]]
) -> Callable[[list, Sequence | None], Result]:
    """A from-scratch reference for ``aggregate``: ``named`` maps a name to ``(kind, column)``."""
    selects = ", ".join(
        SQL_AGGREGATES[kind].format(column=column) for _, (kind, column) in sorted(named.items())
    )
    names = sorted(named)
    query = f"SELECT {key}, {selects} FROM rows GROUP BY {key}"

    def reference(inputs: list, at: Sequence | None) -> Result:
        (history,) = inputs
        versions = at if at is not None else sorted({version for _, version, _ in history})
        return {
            version: {
                (group[0], tuple(zip(names, group[1:], strict=True))): 1
                for group in sqlite_rows({"rows": (list(columns), accumulated(history, version))}, query)
            }
            for version in versions
        }

    return reference


def accumulated(history: list, version: Any) -> Counter:
    """The rows of ``history`` at ``version`` with their (positive) multiplicities."""
    totals: Counter = Counter()
    for row, at, multiplicity in history:
        if less_equal(at, version):
            totals[row] += multiplicity
    return +totals



def sqlite_rows(tables: dict[str, tuple[list[str], Counter]], query: str) -> Counter:
    """Run ``query`` over in-memory tables ``{name: (columns, rows)}``; the result rows, counted."""
    connection = sqlite3.connect(":memory:")
    for name, (columns, rows) in tables.items():
        connection.execute(f"CREATE TABLE {name} ({', '.join(columns)})")
        connection.executemany(
            f"INSERT INTO {name} VALUES ({', '.join('?' for _ in columns)})",
            [row for row, count in rows.items() for _ in range(count)],
        )
    result = Counter(connection.execute(query))
    connection.close()
    return result
