"""Running a data set's queries with their state on the executors: one stream, each output a Delta table.

``start`` starts one streaming query for all the queries over a data set:
its ``ChangeStream``, each query lowered onto it (``lowering.lowered``),
their output changes in one union, and a ``foreachBatch`` sink, with the
state store Spark keeps in RocksDB with changelog checkpointing
(``STATE_STORE``) under the data set's checkpoint folder. A restart with the
same checkpoint goes on from Spark's offsets and state: it reads only the
commits after the last micro-batch Spark committed.

``DeltaSink`` appends a micro-batch's output changes of each query (its
columns, ``_version``, ``_multiplicity``) to the query's Delta table in a
commit that carries Delta's transaction identifier (``txn``: the query's app
id and the micro-batch id), and skips a table that already holds the
micro-batch: Spark runs a micro-batch again after a kill between the sink's
commits and its own, and each change is written once all the same (the
batch's job still runs: its state stores must commit).

``FINAL_FOLLOW_KILL=<point>:<n>`` (as ``follow`` reads it) makes the
process SIGKILL itself the ``n``-th time the sink reaches ``point``:
``sink`` (a micro-batch computed, its state committed, no output written),
``output`` (one query's output committed, not the next ones', nor Spark's
commit log).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import delta
from ..follow import _kill_point, output_columns
from ..tables_and_queries import DATASETS
from .changes import MULTIPLICITY, QUERY, ROW, VERSION, ChangeStream, decoded_row, typed
from .lowering import check_placement, lowered

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from ..sql import SqlQuery

STATE_STORE = {
    "spark.sql.streaming.stateStore.providerClass":
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
}
"""Spark's state store as the executors keep it: RocksDB on each executor's disk, and a checkpoint of only the
changes since the last snapshot per micro-batch (not a copy of every key's state)."""


class DeltaSink:
    """``foreachBatch``: each micro-batch's changes of each of ``queries`` appended to its Delta table
    ``out/<query>``, exactly once.

    The changes reach the driver as pickled rows, a micro-batch's at a
    time, and are typed there (``changes.typed``): what the driver holds is
    one micro-batch's output changes, never a table's rows.

    Invariant: the table of each query holds the changes of every micro-batch through its transaction version
    for the query's app id (Delta's ``txn``), each once, and of none after it.
    """

    def __init__(self, out: str, queries: Sequence[SqlQuery]) -> None:
        self.out, self.queries = out, list(queries)

    def path(self, query: SqlQuery) -> str:
        return os.path.join(self.out, query.name)

    @staticmethod
    def app_id(query: SqlQuery) -> str:
        """The app id of ``query``'s output commits (Delta's ``txn``)."""
        return f"final-executors:{query.name}"

    def written(self, query: SqlQuery) -> int:
        """The last micro-batch ``query``'s table holds (-1: none)."""
        if not delta.exists(self.path(query)):
            return -1
        from deltalake import DeltaTable

        found = DeltaTable(self.path(query)).transaction_version(self.app_id(query))
        return -1 if found is None else found

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        from deltalake import write_deltalake
        from deltalake.transaction import CommitProperties, Transaction

        due = [query for query in self.queries if batch_id > self.written(query)]
        if not due:
            # Run again all the same: Spark 4.3 fails a micro-batch whose state stores did not all commit
            # (STATE_STORE_COMMIT_VALIDATION_FAILED), and they commit as the batch's job runs.
            frame.write.format("noop").mode("overwrite").save()
            return
        found = frame.toArrow()  # the micro-batch's job: its tasks have committed the state store when it returns
        _kill_point("sink")
        names = found.column(QUERY).to_pylist()
        versions, multiplicities = found.column(VERSION).to_pylist(), found.column(MULTIPLICITY).to_pylist()
        rows = found.column(ROW).to_pylist()
        for query in due:
            changes = [(versions[at], multiplicities[at], decoded_row(rows[at]))
                       for at, name in enumerate(names) if name == query.name]
            table = typed(changes, output_columns(query), query.types)
            transaction = CommitProperties(app_transactions=[Transaction(self.app_id(query), batch_id)])
            write_deltalake(self.path(query), table, mode="append", commit_properties=transaction)
            _kill_point("output")


def start(spark: SparkSession, queries: Sequence[SqlQuery], folder: str, checkpoint: str, out: str,
          available_now: bool = True, trigger_seconds: float = 10.0, tables: Sequence[str] | None = None
          ) -> StreamingQuery:
    """Start ``queries`` (of one data set) over its Delta tables in ``folder`` (``folder/<table>``; ``tables``
    names them, by default the catalog's) as one stream, their state on the executors, its checkpoint
    ``checkpoint/<dataset>``, each query's output the Delta table ``out/<query>`` (``DeltaSink``). With
    ``available_now``, the stream stops once it has taken every commit there when it started.

    Raises:
        PlacementError: a step of a query cannot run on the executors yet (``lowering.lowered``).
    """
    from ..partitioned import ship_final

    for query in queries:
        check_placement(query)
    ship_final(spark)  # the source, the mapInArrow steps and the state processors import final on the workers
    for key, value in STATE_STORE.items():
        spark.conf.set(key, value)
    spark.dataSource.register(ChangeStream)
    dataset = queries[0].dataset
    source = (spark.readStream.format(ChangeStream.name()).option("folder", folder).option("dataset", dataset)
              .option("tables", json.dumps(list(tables or DATASETS[dataset])))
              .option("grace_ms", "0" if available_now else "1000").load())
    changes = functools.reduce(lambda one, other: one.union(other), [lowered(query, source) for query in queries])
    trigger = {"availableNow": True} if available_now else {"processingTime": f"{trigger_seconds} seconds"}
    return (changes.writeStream.foreachBatch(DeltaSink(out, queries))
            .option("checkpointLocation", os.path.join(checkpoint, dataset))
            .trigger(**trigger).queryName(f"executors-{dataset}").start())


def follow_on_executors(spark: SparkSession, folder: str, queries: Sequence[SqlQuery], out: str,
                        available_now: bool = True, trigger_seconds: float = 10.0) -> int:
    """Keep ``queries`` (of one data set, over its Delta tables in ``folder``: ``folder/<table>``) up to date with
    their state on the executors, each output the Delta table ``out/<query>`` of change rows (``DeltaSink``), the
    checkpoint ``out/_checkpoint/<dataset>``; the data set's version they have taken. With ``available_now``,
    until every commit there now is taken; otherwise until the stream is stopped.

    Raises:
        PlacementError: a step of a query cannot run on the executors yet (before the stream starts).
        StreamingQueryException: a micro-batch failed (a commit that fails its checks, a value Spark SQL
            raises an error for).
    """
    checkpoint = os.path.join(out, "_checkpoint")
    start(spark, queries, folder, checkpoint, out, available_now, trigger_seconds).awaitTermination()
    return reached(os.path.join(checkpoint, queries[0].dataset))


def reached(checkpoint: str) -> int:
    """The last version a stream with its checkpoint in ``checkpoint`` took in a micro-batch Spark committed (-1:
    none): the end offset of that micro-batch, as Spark's offset log holds it."""
    committed = [int(name) for name in _names(os.path.join(checkpoint, "commits")) if name.isdigit()]
    if not committed:
        return -1
    with open(os.path.join(checkpoint, "offsets", str(max(committed)))) as file:
        return json.loads(file.read().splitlines()[-1])["version"]


def _names(folder: str) -> list[str]:
    return os.listdir(folder) if os.path.isdir(folder) else []
