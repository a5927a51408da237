"""A table and a query, as the pipeline runs them: the classes the catalog and the SQL compiler share.

This module imports nothing from Spark, and nothing else of the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..stream import DifferenceStreamBuilder


@dataclass(frozen=True)
class Table:
    """A table's name and its columns as ``(name, Spark SQL type)``; a record is a tuple in this order.

    ``key`` names the columns that identify a row, if any: a Delta commit of
    the table changes a row with that key in place (``delta.apply_changes``).
    """

    name: str
    columns: tuple[tuple[str, str], ...]
    key: tuple[str, ...] | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)

    @property
    def ddl(self) -> str:
        """The columns as Spark takes a schema in text: ``"trip_id BIGINT, passenger_count INT, ..."``."""
        return ", ".join(f"{name} {kind}" for name, kind in self.columns)


@dataclass(frozen=True)
class Query:
    """One query over a data set's tables, in Spark SQL and in ``final/``.

    ``sql`` runs over temporary views named after ``inputs``. With
    ``fixed_point``, ``sql`` is only the first round: the from-scratch side
    then runs ``fixed_point`` over a view ``reached`` holding the previous
    round, until a round adds nothing. ``build`` takes one stream per input,
    in order, and returns the stream of result rows. ``key`` names the
    output columns that identify a result row (the GROUP BY key), if any: in
    a follow's change feed, a row that keeps its key while other columns
    change is an update (``update_preimage``, ``update_postimage``).
    """

    name: str
    dataset: str
    inputs: tuple[str, ...]
    columns: tuple[str, ...]
    build: Callable[..., DifferenceStreamBuilder]
    sql: str
    source: str
    fixed_point: str | None = None
    key: tuple[str, ...] | None = None
    partition_by: dict[str, str | None] | None = field(default=None)
