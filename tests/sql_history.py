"""A query over a small history of tables, answered at every version by ``final/`` and by Spark SQL.

``tests/test_sql.py`` and ``tests/test_sql_functions.py`` each write a
history (a load, deletes, re-inserts, a table emptied) and compare the
compiled query, fed it version by version, with Spark SQL computing it from
scratch at each version. A version where a side raises ends its list with
the error's class (``error: DIVIDE_BY_ZERO``); a failure of ``final/`` that
is not Spark's kind of error reads ``crash: ...``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence

from final.spark.incremental import IncrementalQuery, UnversionedChange
from final.spark.query import Table
from final.spark.sql import compile_sql
from final.spark.sql.errors import runtime_cause


def error_class(message: str) -> str:
    """The error class a message starts with (``[DIVIDE_BY_ZERO] ...``), as ``error: DIVIDE_BY_ZERO``."""
    found = re.search(r"\[([A-Z_.]+)\]", message)
    return f"error: {found.group(1) if found else message.splitlines()[0]}"


class TableHistory:
    """Tables (name -> ``Table``) and their updates, version by version (version 0 the load)."""

    def __init__(self, tables: Mapping[str, Table], updates: Sequence[Sequence[UnversionedChange]]) -> None:
        self.tables = tables
        self.updates = updates

    def at(self, version: int) -> dict[str, Counter]:
        """Each table's rows (with multiplicities) as of ``version``."""
        held = {name: Counter() for name in self.tables}
        for updates in self.updates[: version + 1]:
            for table, row, multiplicity in updates:
                held[table][row] += multiplicity
        return held

    def ours(self, text: str) -> tuple[list[Counter | str], list[tuple[str, str]]]:
        """The compiled query's rows at every version (or the error it stopped with), and its output columns'
        names and types (Spark's names: as written, or Spark's for an item without AS)."""
        query = compile_sql(text, self.tables, "q")
        engine = IncrementalQuery(query)
        results: list[Counter | str] = []
        for version, updates in enumerate(self.updates):
            try:
                engine.apply(version, [update for update in updates if update[0] in query.inputs])
            except Exception as error:
                cause = runtime_cause(error)
                results.append(error_class(str(cause)) if cause is not None else f"crash: {error!r}")
                break
            results.append(Counter(engine.snapshot))
        return results, list(zip(query.columns, query.types, strict=True))

    def spark(self, spark) -> Iterator[Callable[[str], tuple[list[list[tuple] | str], list[tuple[str, str]]]]]:
        """For a module fixture: yields a function giving Spark SQL's rows of a query at every version (or the
        error it stopped with) and its columns' names and types; each version's tables are cached once, and
        dropped after."""
        frames = [{name: spark.createDataFrame(list(rows.elements()), self.tables[name].ddl).cache()
                   for name, rows in self.at(version).items()} for version in range(len(self.updates))]

        def run(text: str) -> tuple[list[list[tuple] | str], list[tuple[str, str]]]:
            results: list[list[tuple] | str] = []
            schema: list[tuple[str, str]] = []
            for version in range(len(self.updates)):
                for name, frame in frames[version].items():
                    frame.createOrReplaceTempView(name)
                try:
                    frame = spark.sql(text)
                    rows = frame.collect()
                except Exception as error:
                    results.append(error_class(str(error)))
                    break
                schema = [(f.name, f.dataType.simpleString()) for f in frame.schema]
                results.append([tuple(row) for row in rows])
            return results, schema

        yield run
        for tables in frames:
            for frame in tables.values():
                frame.unpersist()
