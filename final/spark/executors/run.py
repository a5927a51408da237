"""Running a query with its state on the executors: one streaming query per SQL query, its output a Delta table.

``start`` starts the stream of one query: the data set's ``ChangeStream``,
the query lowered onto it (``lowering.lowered``), and a ``foreachBatch``
sink, with the state store Spark keeps in RocksDB with changelog
checkpointing (``STATE_STORE``) under the query's own checkpoint folder. A
restart with the same checkpoint goes on from Spark's offsets and state:
it reads only the commits after the last micro-batch Spark committed.

``DeltaSink`` appends a micro-batch's output changes (the query's columns,
``_version``, ``_multiplicity``) to a Delta table in one commit that
carries Delta's transaction identifier (``txn``: the sink's app id and the
micro-batch id), and skips a micro-batch the table already holds: Spark
runs a micro-batch again after a kill between the sink's commit and its
own, and its changes are then written once (the batch's job still runs:
its state stores must commit).

``FINAL_FOLLOW_KILL=<point>:<n>`` (as ``follow`` reads it) makes the
process SIGKILL itself the ``n``-th time a sink reaches ``point``: ``sink``
(a micro-batch computed, its state committed, its output not), ``output``
(its output committed, Spark's commit log not written).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .. import delta
from ..catalog import DATASETS
from ..follow import _kill_point
from .changes import ChangeStream
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
    """``foreachBatch``: each micro-batch's changes appended to the Delta table at ``path``, exactly once.

    Invariant: the table holds the changes of every micro-batch through its transaction version for
    ``app_id`` (Delta's ``txn``), each once, and of none after it.
    """

    def __init__(self, path: str, app_id: str) -> None:
        self.path, self.app_id = path, app_id

    def written(self) -> int:
        """The last micro-batch the table holds (-1: none)."""
        if not delta.exists(self.path):
            return -1
        from deltalake import DeltaTable

        found = DeltaTable(self.path).transaction_version(self.app_id)
        return -1 if found is None else found

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        if batch_id <= self.written():
            # Run again all the same: Spark 4.3 fails a micro-batch whose state stores did not all commit
            # (STATE_STORE_COMMIT_VALIDATION_FAILED), and they commit as the batch's job runs.
            frame.write.format("noop").mode("overwrite").save()
            return
        from deltalake import write_deltalake
        from deltalake.transaction import CommitProperties, Transaction

        changes = frame.toArrow()  # the micro-batch's job: its tasks have committed the state store when it returns
        _kill_point("sink")
        write_deltalake(self.path, changes, mode="append",
                        commit_properties=CommitProperties(app_transactions=[Transaction(self.app_id, batch_id)]))
        _kill_point("output")


def start(spark: SparkSession, query: SqlQuery, folder: str, checkpoint: str,
          sink: Callable[[DataFrame, int], None], available_now: bool = True, trigger_seconds: float = 10.0,
          tables: Sequence[str] | None = None) -> StreamingQuery:
    """Start ``query`` over the data set's Delta tables in ``folder`` (``folder/<table>``; ``tables`` names them,
    by default the catalog's), its state on the executors and its checkpoint in ``checkpoint``, each
    micro-batch's output changes handed to ``sink``. With ``available_now``, the stream stops once it has
    taken every commit there when it started.

    Raises:
        PlacementError: a step of the query cannot run on the executors yet (``lowering.lowered``).
    """
    from ..partitioned import ship_final

    ship_final(spark)  # the source, the mapInArrow steps and the state processors import final on the workers
    for key, value in STATE_STORE.items():
        spark.conf.set(key, value)
    spark.dataSource.register(ChangeStream)
    dataset = query.dataset
    source = (spark.readStream.format(ChangeStream.name()).option("folder", folder).option("dataset", dataset)
              .option("tables", json.dumps(list(tables or DATASETS[dataset])))
              .option("grace_ms", "0" if available_now else "1000").load())
    trigger = {"availableNow": True} if available_now else {"processingTime": f"{trigger_seconds} seconds"}
    return (lowered(query, source).writeStream.foreachBatch(sink)
            .option("checkpointLocation", os.path.join(checkpoint, query.name))
            .trigger(**trigger).queryName(f"executors-{query.name}").start())


def follow_on_executors(spark: SparkSession, folder: str, queries: Sequence[SqlQuery], out: str,
                        available_now: bool = True, trigger_seconds: float = 10.0) -> dict[str, int]:
    """Keep each of ``queries`` (over the Delta tables in ``folder``, ``folder/<table>``) up to date with its
    state on the executors, each output the Delta table ``out/<query>`` of change rows (``DeltaSink``) and each
    checkpoint ``out/_checkpoint/<query>``; the version each query has taken. With ``available_now``, the
    queries run one after another, each until it has taken every commit there when it started (so a query's
    Python workers are not all started at once); otherwise together, until their streams are stopped.

    Raises:
        PlacementError: a step of a query cannot run on the executors yet (before any stream starts).
        StreamingQueryException: a micro-batch failed (a commit that fails its checks, a value Spark SQL
            raises an error for).
    """
    for query in queries:
        check_placement(query)
    checkpoint = os.path.join(out, "_checkpoint")
    streams = []
    for query in queries:
        sink = DeltaSink(os.path.join(out, query.name), f"final-executors:{query.name}")
        stream = start(spark, query, folder, checkpoint, sink, available_now, trigger_seconds)
        if available_now:
            stream.awaitTermination()
        streams.append(stream)
    for stream in streams:
        stream.awaitTermination()
    return {query.name: reached(os.path.join(checkpoint, query.name)) for query in queries}


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
