"""sqlite3 as the small from-scratch oracle for SQL-shaped programs (Spark SQL, in final/spark, is the large one).

``group_by_reference`` builds, for every version, a table of the rows whose
accumulated multiplicity is positive (a row with multiplicity 2 is inserted
twice), runs a GROUP BY query, and returns the result in the shape
``final``'s ``aggregate`` produces: ``{(key, ((name, value), ...)): 1}``.
``enrichment_reference`` does the same for document 003's four tables joined
in a chain, as LEFT JOINs or inner joins.
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


ENRICHMENT_TABLES = {
    "facts": ["id", "user_id"],
    "users": ["id", "addr_id"],
    "addrs": ["id", "zipcode"],
    "agent": ["zipcode", "name"],
}
"""Document 003's enrichment: each fact's user, the user's address, and the sales agent for its zipcode.
Inputs come in this order, one history each, a record being a row of the table's columns."""


def enrichment_reference(join: str) -> Callable[[list, Sequence | None], Result]:
    """A from-scratch reference for the enrichment chained with ``join`` ("LEFT JOIN" or "JOIN").

    At every version sqlite3 runs the query on the accumulated tables. An output
    record is ``(fact, user, addr, agent)``, each the table's row, or None where a
    LEFT JOIN found no match (a matched row's key is never NULL: NULL matches nothing).
    """
    query = (
        "SELECT f.id, f.user_id, u.id, u.addr_id, a.id, a.zipcode, g.zipcode, g.name FROM facts f "
        f"{join} users u ON f.user_id = u.id {join} addrs a ON u.addr_id = a.id {join} agent g ON a.zipcode = g.zipcode"
    )

    def reference(histories: list, at: Sequence | None) -> Result:
        versions = at if at is not None else sorted({version for history in histories for _, version, _ in history})
        result = {}
        for version in versions:
            tables = {
                name: (columns, accumulated(history, version))
                for (name, columns), history in zip(ENRICHMENT_TABLES.items(), histories, strict=True)
            }
            result[version] = {_enriched(values): count for values, count in sqlite_rows(tables, query).items()}
        return result

    return reference


def _enriched(values: tuple) -> tuple:
    """A query row as ``(fact, user, addr, agent)``; a joined table's part is None where it matched nothing."""
    fact, *joined = zip(values[::2], values[1::2], strict=True)
    return (fact, *(None if row[0] is None else row for row in joined))


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
