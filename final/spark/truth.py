"""The from-scratch side: Spark SQL computes each query anew on the table as of each version.

Nothing is carried from one version to the next: at version ``v`` every
input is rebuilt from its change log (``changelog.snapshot``) and the query's
SQL runs over it, which is what a batch system does when asked again. A
query with a ``fixed_point`` (reachability) is a loop of SQL rounds, each
joining what was reached with the edges, until a round reaches nothing new.
Each round is cut from its lineage with ``localCheckpoint()``: without it,
every round's plan contains all earlier rounds, and round times double
after about six rounds.

``over`` is the one place Spark SQL answers a query for the pipeline: ``run``
(``from_scratch``, over a change log's snapshot), ``verify`` (over the tables
as a follow bound them) and the SQL fuzzer (over a generated data set's rows)
all call it, and each decides itself what an error Spark raises means.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .changelog import snapshot
from .sqlfloat import sql_row
from .tables_and_queries import Query

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MAX_ROUNDS = 10_000
"""A bound on fixed-point rounds: a loop that has not converged by then is reported, not run forever."""


class FixedPointError(RuntimeError):
    """A from-scratch loop did not reach its fixed point within ``MAX_ROUNDS`` rounds."""


@dataclass(frozen=True)
class Truth:
    """Spark SQL's answer to a query: its rows in the order Spark gave them, and its columns' types and names.

    Invariant: every NaN in ``rows`` is ``sqlfloat.NAN``, Spark SQL's one NaN,
    as ``final/``'s rows hold it; ``types`` are Spark's names for the result's
    column types (``decimal(8,2)``, ``bigint``), one per column, and ``names``
    the columns' names in Spark's schema (``count(1)`` for an unnamed
    ``COUNT(*)``).
    """

    rows: tuple[tuple, ...]
    types: tuple[str, ...]
    names: tuple[str, ...] = ()

    @property
    def counts(self) -> Counter:
        """The rows as a multiset: row -> multiplicity."""
        return Counter(self.rows)


def from_scratch(spark: SparkSession, query: Query, logs: dict[str, DataFrame], version: int) -> Counter:
    """``query``'s result at ``version``, computed by Spark SQL from the accumulated inputs: row -> multiplicity.

    Raises:
        FixedPointError: (``over``) a loop reached no fixed point.
    """
    return at(spark, query, logs, version).counts


def at(spark: SparkSession, query: Query, logs: dict[str, DataFrame], version: int) -> Truth:
    """``query``'s answer at ``version`` (rows and types), computed by Spark SQL from the accumulated inputs.

    Raises:
        FixedPointError: (``over``) a loop reached no fixed point.
    """
    return over(spark, query, {table: snapshot(logs[table], table, version) for table in query.inputs})


def over(spark: SparkSession, query: Query | str, tables: Mapping[str, DataFrame]) -> Truth:
    """``query``'s answer computed by Spark SQL over ``tables``, each a table's rows as of one moment.

    ``query`` is a catalog or compiled ``Query``, which reads its inputs from
    ``tables`` (a fixed point or a recursion by UNION run round by round), or
    the text of one Spark SQL query, run once over a view of every table in
    ``tables``.

    Raises:
        FixedPointError: a loop reached no fixed point within ``MAX_ROUNDS`` rounds.
        pyspark.errors.AnalysisException: Spark SQL refuses the query; other pyspark errors as Spark SQL raises
            them, e.g. an ANSI error for a value (``DIVIDE_BY_ZERO``), for the caller to judge.
    """
    text = query if isinstance(query, str) else None
    for table in tables if text is not None else query.inputs:
        # A loop reads its inputs once per round: materialize them once per version instead.
        frame = tables[table]
        (frame.localCheckpoint() if text is None and query.fixed_point else frame).createOrReplaceTempView(table)
    if text is not None:
        result = spark.sql(text)
    elif getattr(query, "recursive", None) == "UNION":
        result = _recursive_union(spark, query)
    else:
        result = _fixed_point(spark, query) if query.fixed_point else spark.sql(query.sql)
    types = tuple(field.dataType.simpleString() for field in result.schema)
    return Truth(tuple(sql_row(tuple(row)) for row in result.collect()), types, tuple(result.schema.names))


def _recursive_union(spark: SparkSession, query: Query) -> DataFrame:
    """A WITH RECURSIVE ... UNION query, which Spark SQL refuses to run itself: its base, then rounds of
    ``previous UNION step(previous)`` until a round adds no row, then the rest of the query over the result."""
    from .sql import recursion

    parts = recursion(query.sql)
    reached = spark.sql(parts.base)
    if parts.columns:
        reached = reached.toDF(*parts.columns)
    reached = reached.distinct().localCheckpoint()
    size = reached.count()
    for _ in range(MAX_ROUNDS):
        reached.createOrReplaceTempView(parts.name)
        following = reached.union(spark.sql(parts.step)).distinct().localCheckpoint()
        grown = following.count()
        if grown == size:
            break
        reached, size = following, grown
    else:
        raise FixedPointError(f"{query.name}: no fixed point after {MAX_ROUNDS} rounds of {parts.step!r}")
    following.createOrReplaceTempView(parts.name)
    return spark.sql(parts.outer)


def _fixed_point(spark: SparkSession, query: Query) -> DataFrame:
    """Run ``query.sql``, then ``query.fixed_point`` over the previous round, until a round adds no rows."""
    reached = spark.sql(query.sql).localCheckpoint()
    size = reached.count()
    for _ in range(MAX_ROUNDS):
        reached.createOrReplaceTempView("reached")
        following = spark.sql(query.fixed_point).localCheckpoint()
        grown = following.count()
        # Each round keeps what was reached (UNION), so the same size means the same rows.
        if grown == size:
            return following
        reached, size = following, grown
    raise FixedPointError(f"{query.name}: no fixed point after {MAX_ROUNDS} rounds of {query.fixed_point!r}")
