"""The partitioned run: a query's change logs split by key with Spark, one ``final/`` engine per partition.

For a query whose result splits by key (every GROUP BY, and joins on their
join key), Spark repartitions each input's change log by the hash of the
query's key column (``tables_and_queries.Query.partition_by``), or copies a
small input to every partition (a broadcast). Each partition's task sorts its
updates by version and runs its own ``IncrementalQuery`` over all of them, in
order, and emits the result's changes at each version; the union of all tasks'
changes is the query's changes, because no result row depends on two
partitions.

Executors do not need ``final/`` installed: the driver zips the package, and
sqlglot for the SQL compiler, and ships them with ``SparkContext.addPyFile``,
so on a cluster only pyspark (and Python) must be there. Each task reports where it imported ``final`` from, so
the pipeline can show the zip was used (``final_from``).
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING

from .. import add_multiplicity
from .changelog import MULTIPLICITY, VERSION
from .incremental import run_partition
from .tables_and_queries import TABLES, Query

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_shipped: dict[str, str] = {}
"""Spark application id -> the zip of ``final/`` added to it (each application gets it once)."""


@dataclass
class PartitionedResult:
    """What a partitioned run produced: the result's changes per version, and how long it took.

    ``changes`` maps each version to ``{row: multiplicity}``, the union of
    every task's changes; ``seconds`` is the whole Spark job, from the
    repartition to the last change collected; ``task_seconds`` is each
    partition's time inside ``final/`` alone.
    """

    partitions: int
    changes: dict[int, dict[tuple, int]]
    seconds: float
    task_seconds: dict[int, float]
    final_from: set[str]


def ship_final(spark: SparkSession) -> str:
    """Zip the ``final`` package, and sqlglot (the SQL compiler's parser: an executor compiles a SQL query again
    from its text), and add the zip to ``spark``'s executors' Python path; the zip's path."""
    import sqlglot

    application = spark.sparkContext.applicationId
    if application not in _shipped:
        archive = os.path.join(tempfile.mkdtemp(prefix="final-"), "final.zip")
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
            final = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            for package in (final, os.path.dirname(os.path.abspath(sqlglot.__file__))):
                _add_package(zipped, package)
        spark.sparkContext.addPyFile(archive)
        _shipped[application] = archive
    return _shipped[application]


def _add_package(zipped: zipfile.ZipFile, package: str) -> None:
    """Every Python and SQL file of ``package`` (a folder) into ``zipped``, under the package's name."""
    for folder, folders, files in os.walk(package):
        folders[:] = [name for name in folders if name not in ("__pycache__", "node_modules")]
        for name in files:
            if name.endswith((".py", ".sql")):
                path = os.path.join(folder, name)
                zipped.write(path, os.path.relpath(path, os.path.dirname(package)))


def run_partitioned(
    spark: SparkSession, query: Query, logs: dict[str, DataFrame], partitions: int
) -> PartitionedResult:
    """Run ``query`` over ``logs`` in ``partitions`` Spark tasks, each with its own ``final/`` engine.

    Raises:
        ValueError: the query does not split by key, or ``partitions`` is not a positive int.
    """
    from pyspark.sql import functions as F

    if query.partition_by is None:
        raise ValueError(f"{query.name} does not split by key: its result rows depend on more than one key")
    if type(partitions) is not int or partitions < 1:
        raise ValueError(f"partitions is a positive int, not {partitions!r}")
    ship_final(spark)
    start = perf_counter()
    keyed = []
    for table in query.inputs:
        column = query.partition_by[table]
        if column is None:
            partition = F.explode(F.sequence(F.lit(0), F.lit(partitions - 1)))
        else:
            partition = F.pmod(F.hash(F.col(column)), F.lit(partitions))
        names = (getattr(query, "schemas", None) or TABLES)[table].names
        frame = logs[table].select(partition.alias("_partition"), VERSION, *names, MULTIPLICITY)
        keyed.append(frame.rdd.map(lambda row, table=table: ((row[0], row[1]), (table, tuple(row[2:-1]), row[-1]))))
    # An executor compiles a query from SQL again from its recipe (name, text, tables); a hand-built one by name.
    name = getattr(query, "recipe", query.name)
    rows = (
        spark.sparkContext.union(keyed)
        .repartitionAndSortWithinPartitions(partitions, partitionFunc=lambda key: key[0])
        .mapPartitionsWithIndex(lambda index, updates: run_partition(name, index, updates))
        .collect()
    )
    seconds = perf_counter() - start
    changes: dict[int, dict[tuple, int]] = defaultdict(dict)
    task_seconds, final_from = {}, set()
    for row in rows:
        if row[0] == "change":
            _, version, record, multiplicity = row
            add_multiplicity(changes[version], record, multiplicity)
        else:
            _, index, spent, where = row
            task_seconds[index] = spent
            final_from.add(where)
    return PartitionedResult(partitions, dict(changes), seconds, task_seconds, final_from)
