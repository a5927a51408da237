"""The peer benchmark's Spark SQL engine: every version recomputed from scratch.

A Spark SQL batch query does not keep its result up to date as its input
changes: to have the answer at each version, it is run again over the whole
input. This adapter measures that for W1 (count), W2 (join) and W5 (taxi),
the workloads issue 13 asks Spark for:

- ``load`` turns each input's version-0 records into a cached DataFrame of
  BIGINT columns, materializes it, and runs the first query;
- each version's input is ``base EXCEPT ALL retracted UNION ALL inserted``,
  where ``inserted`` and ``retracted`` are small DataFrames rebuilt from the
  net changes since version 0 (a record inserted then retracted cancels out;
  an input with no net changes is its base as it is);
- the query's result is reduced inside Spark to PROTOCOL.md's checksum (the
  number of rows and the sum of their record hashes modulo P), so every row is
  computed but only one row comes back to Python.

Only ``SPARK_VERSIONS`` versions are timed (each costs about the same,
whatever changed); ``finish`` applies the rest and computes the final version,
whose result is the checksum, as PROTOCOL.md says for from-scratch engines.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from final.spark.session import spark_session
from tests.bench.peers.engines import SPARK_VERSIONS, Checksum, P, UnversionedChange

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

COLUMNS = {
    "records": ("key", "value"),
    "left": ("key", "value"),
    "right": ("key", "value"),
    "trips": ("trip_id", "passenger_count", "fare", "distance"),
}
"""Each input's columns, in the order of its records' fields."""

VIEWS = {"left": "left_input", "right": "right_input"}
"""Temp view names for inputs whose names are SQL keywords; the others keep their own."""

QUERIES = {
    "count": "SELECT key, COUNT(*) FROM records GROUP BY key",
    "join": "SELECT l.key, l.value, r.value FROM left_input l JOIN right_input r ON l.key = r.key",
    "taxi": "SELECT passenger_count, MIN(fare), MAX(fare), COUNT(DISTINCT distance) FROM trips "
    "GROUP BY passenger_count",
}
"""Each query with its output columns in PROTOCOL.md's order."""

NOT_MEASURED = {
    "reach": "W3's reachability would be a recursive query, re-run to its fixed point at every version",
    "minmax": "W4 (per-key MIN/MAX as each version retracts a minimum) is not among them",
}
"""Why each query outside issue 13's three is left out."""


def unsupported(query: str) -> str | None:
    """Why Spark does not run ``query``, or None if it does."""
    if query in QUERIES:
        return None
    reason = NOT_MEASURED.get(query, f"there is no Spark SQL for {query!r}")
    return f"Spark SQL is measured on W1, W2 and W5 only (issue 13); {reason}"


def hash_expression(columns: int) -> str:
    """PROTOCOL.md's ``record_hash`` over columns ``c0 .. c{columns-1}``, as a BIGINT SQL expression.

    Every step stays below P < 2**31 before it is multiplied by 1000003 (< 2**20), so nothing overflows.
    """
    h = "CAST(17 AS BIGINT)"
    for index in range(columns):
        h = f"pmod({h} * 1000003 + pmod(c{index}, {P}), {P})"
    return h


class Spark:
    """Spark SQL over the base tables and the net changes so far, recomputed at each version."""

    timed_versions = SPARK_VERSIONS

    def __init__(self, checksum: Checksum, query: str, inputs: list[str]) -> None:
        from pyspark.sql.types import LongType, StructField, StructType

        self.checksum, self.sql = checksum, QUERIES[query]
        self.session = spark_session(app_name="peer-benchmark")
        self.schemas = {
            name: StructType([StructField(column, LongType(), False) for column in COLUMNS[name]]) for name in inputs
        }
        self.base: dict[str, DataFrame] = {}
        self.net: dict[str, defaultdict[tuple, int]] = {name: defaultdict(int) for name in inputs}

    def load(self, inputs: dict[str, list]) -> None:
        for name, records in inputs.items():
            frame = self.session.createDataFrame(records, self.schemas[name]).persist()
            frame.count()  # materializes the cache
            self.base[name] = frame
        self._compute()

    def update(self, version: int, changes: list[UnversionedChange]) -> None:
        self._apply(changes)
        self._compute()

    def finish(self, remaining: list[list[UnversionedChange]]) -> None:
        """Apply the untimed versions, then fold the final version's result into the checksum."""
        for changes in remaining:
            self._apply(changes)
        self.checksum.count, self.checksum.total = self._compute()
        self._stop()

    def _stop(self) -> None:
        """Stop Spark and wait for its JVM to exit: reaped by this process, the JVM's peak memory is in the
        one the driver measures for it (``wait4`` counts waited-for descendants). ``_gateway.proc`` is
        pyspark's handle on the JVM it launched."""
        gateway = self.session.sparkContext._gateway
        self.session.stop()
        gateway.shutdown()
        gateway.proc.stdin.close()  # the JVM exits when its standard input closes
        gateway.proc.wait(timeout=60)

    def _apply(self, changes: list[UnversionedChange]) -> None:
        for name, record, diff in changes:
            net = self.net[name]
            net[record] += diff
            if not net[record]:
                del net[record]

    def _compute(self) -> tuple[int, int]:
        """Run the query from scratch over the current inputs; its result's (row count, hash total)."""
        for name, base in self.base.items():
            self._current(name, base).createOrReplaceTempView(VIEWS.get(name, name))
        result = self.session.sql(self.sql)
        result = result.toDF(*(f"c{index}" for index in range(len(result.columns))))
        hashes = result.selectExpr(f"{hash_expression(len(result.columns))} AS h")
        row = hashes.selectExpr("COUNT(*)", f"pmod(COALESCE(SUM(h), 0), {P})").collect()[0]
        return row[0], row[1]

    def _current(self, name: str, base: DataFrame) -> DataFrame:
        """The input at the current version: the base less what was retracted, plus what was inserted."""
        net, schema = self.net[name], self.schemas[name]
        retracted = [record for record, diff in net.items() if diff < 0]
        inserted = [record for record, diff in net.items() if diff > 0]
        current = base
        if retracted:
            current = current.exceptAll(self.session.createDataFrame(retracted, schema))
        if inserted:
            current = current.unionAll(self.session.createDataFrame(inserted, schema))
        return current
