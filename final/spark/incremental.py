"""The incremental side: one ``final/`` dataflow per query, fed a change log version by version.

``IncrementalQuery`` is the whole use of ``final/`` here, through its public
API only: an input session per table, an output handle that keeps just the
current result (``history=False``) and hands over each version's changes,
``graph.run()`` after each version. The single-process run on the driver and
every partition's task on a Spark executor run this same class, so the two
can differ only in which updates they see.

This module imports nothing from Spark or from outside the standard library
and ``final/``: it is what executors run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from time import perf_counter
from typing import Any

from ..graph import GraphBuilder
from .sqlfloat import float_positions, sql_row
from .tables_and_queries import QUERIES, TABLES, Query

UnversionedChange = tuple[str, tuple, int]
"""``(table, record, multiplicity)``: a ``sources.Change`` without its version, which is given beside a batch of
them (``versions_of``)."""


class IncrementalQuery:
    """A query's dataflow in ``final/``, with the result it holds as of the last version applied.

    Invariant: ``snapshot`` is the query's result over every update applied
    so far; every version before ``next_version`` is finished in the graph.
    Records of tables with floating-point columns enter with every NaN as
    ``sqlfloat.NAN``, so NaN is one value, as in Spark SQL.
    """

    def __init__(self, query: Query) -> None:
        self.query = query
        builder = GraphBuilder(0)
        streams = []
        self._sessions = {}
        for table in query.inputs:
            stream, session = builder.new_session(table)
            streams.append(stream)
            self._sessions[table] = session
        schemas = getattr(query, "schemas", None) or TABLES
        self._floats = {
            table: positions for table in query.inputs if (positions := float_positions(schemas[table].columns))
        }
        """Each input table that has floating-point columns: their positions, where a NaN may be."""
        self._changes: dict[tuple, int] = {}
        self._output = query.build(*streams).output(query.name, on_version=self._collect, history=False)
        self._graph = builder.finalize()
        self.next_version = 0

    @property
    def graph(self) -> Any:
        """The query's finalized ``final/`` graph (to draw it: ``final.viz.to_dot``)."""
        return self._graph

    def _collect(self, version: Any, changes: dict[tuple, int]) -> None:
        self._changes.update(changes)

    @property
    def snapshot(self) -> dict[tuple, int]:
        """The accumulated result: each row with its multiplicity."""
        return self._output.snapshot()

    def apply(self, version: int, updates: Iterable[UnversionedChange]) -> dict[tuple, int]:
        """Feed one version's updates, finish the version, and return the result's changes at it.

        Raises:
            ValueError: ``version`` is before a version already applied.
            DataflowError: (from ``final/``) as the graph raises it, e.g. a FunctionError.
        """
        if version < self.next_version:
            raise ValueError(f"{self.query.name}: version {version} comes after version {self.next_version - 1}")
        sessions = self._sessions
        for session in sessions.values():
            session.advance_to(version)
        floats = self._floats
        update = {table: session.update for table, session in sessions.items()}
        for table, record, multiplicity in updates:
            positions = floats.get(table)
            update[table](record if positions is None else sql_row(record, positions), multiplicity)
        for session in sessions.values():
            session.advance_to(version + 1)
        self._changes = {}
        self._graph.run()
        self.next_version = version + 1
        return self._changes


def versions_of(updates: Iterable[tuple[int, str, tuple, int]]) -> Iterator[tuple[int, list[UnversionedChange]]]:
    """``(version, [(table, record, multiplicity), ...])`` for each version, from updates sorted by version."""
    version, batch = None, []
    for at, table, record, multiplicity in updates:
        if at != version:
            if batch:
                yield version, batch
            version, batch = at, []
        batch.append((table, record, multiplicity))
    if batch:
        yield version, batch


def run_partition(
    query_name: str | tuple, partition: int, rows: Iterable[tuple[tuple[int, int], UnversionedChange]]
) -> Iterator[tuple]:
    """A Spark task: run the query ``query_name`` over one partition's updates, sorted by version.

    ``query_name`` names a catalog query, or is a compiled SQL query's
    ``recipe`` ``(name, text, tables)``, compiled here again.

    ``rows`` are ``((partition, version), (table, record, multiplicity))``.
    Yields ``("change", version, row, multiplicity)`` for every change of the
    result, then ``("task", partition, seconds, the file this module was imported from)``: on an
    executor, a path inside the zip of ``final/`` the driver shipped.
    """
    if isinstance(query_name, tuple):
        from .sql import compile_sql

        name, text, tables = query_name
        query = IncrementalQuery(compile_sql(text, tables, name))
    else:
        query = IncrementalQuery(QUERIES[query_name])
    seconds = 0.0
    for version, batch in versions_of((key[1], *update) for key, update in rows):
        start = perf_counter()
        changes = query.apply(version, batch)
        seconds += perf_counter() - start
        for row, multiplicity in changes.items():
            yield ("change", version, row, multiplicity)
    yield ("task", partition, seconds, __file__)
