"""sqlite3 as the small from-scratch oracle for SQL-shaped programs (shared/DESIGN.md, section 7 names
Spark SQL as the large one).

``group_by_reference`` builds, for every version, a table of the rows whose
accumulated multiplicity is positive (a row with multiplicity 2 is inserted
twice), runs a GROUP BY query, and returns the result in the shape
``final``'s ``aggregate`` produces: ``{(key, ((name, value), ...)): 1}``.
"""

from __future__ import annotations

import sqlite3
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
        result: Result = {}
        for version in versions:
            totals: dict[Any, int] = {}
            for row, at_version, multiplicity in history:
                if less_equal(at_version, version):
                    totals[row] = totals.get(row, 0) + multiplicity
            connection = sqlite3.connect(":memory:")
            connection.execute(f"CREATE TABLE rows ({', '.join(columns)})")
            connection.executemany(
                f"INSERT INTO rows VALUES ({', '.join('?' for _ in columns)})",
                [row for row, count in totals.items() for _ in range(count)],
            )
            result[version] = {
                (group[0], tuple(zip(names, group[1:], strict=True))): 1 for group in connection.execute(query)
            }
            connection.close()
        return result

    return reference
