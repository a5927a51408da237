"""Change logs: a table's history as versioned changes, in Delta Lake's change data feed convention.

A change log has the table's columns plus ``_change_type`` and
``_commit_version`` (and, optionally, ``_commit_timestamp``), exactly as
Delta Lake's change data feed (``readChangeFeed``) returns them, so a real
Delta table's feed can be fed in unchanged. Each row is one update
``(record, version, multiplicity)`` of differential dataflow:

==================  ===========================  ============
``_change_type``    record                       multiplicity
==================  ===========================  ============
insert              the row's data columns       +1
update_postimage    the row after the update     +1
update_preimage     the row before the update    -1
delete              the row's data columns       -1
==================  ===========================  ============

at version ``_commit_version`` (``multiplicities`` makes the column, where
a log is read). A correction is a retraction plus an insertion at one
version; the table at version ``v`` is every record whose multiplicities up
to ``v`` add up to more than zero, that many times.

``slice_versions`` makes a log from a table with a Spark job: most rows at
version 0, the rest inserted in time order over the later versions, and a
few rows corrected (preimage and postimage) or deleted at later versions;
``append_commits`` makes more commits after a log's last. ``write`` replaces
a log only once Spark has written the new one whole, sorted by
``_commit_version`` (so its files, in name order, follow versions).
``snapshot`` is a table as of a version, the from-scratch side's input.

Reading a log back is ``sources``': there is one check of a change log
(``sources.LogChecker``, on Arrow), whichever command reads it, and its
failures are ``ChangeLogError``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .datasets import FIRST_PICKUP, unit
from .outputs import replace_with_spark
from .tables_and_queries import TABLES

if TYPE_CHECKING:
    import pyarrow
    from pyspark.sql import Column, DataFrame, SparkSession

CHANGE_TYPE, VERSION, TIMESTAMP = "_change_type", "_commit_version", "_commit_timestamp"
MULTIPLICITY = "_multiplicity"
MULTIPLICITIES = {"insert": 1, "update_postimage": 1, "update_preimage": -1, "delete": -1}
"""Each change type's multiplicity: the whole mapping from Delta's change feed to differential dataflow."""

VERSION_SECONDS = 60
"""Commits made by ``slice_versions`` are a minute apart (only ``_commit_timestamp`` shows it)."""


class ChangeLogError(ValueError):
    """A change log the pipeline refuses (``sources.LogChecker``): the message names the file (or
    Delta commit), the row counted from 1 and the column, and says what to do."""


@dataclass(frozen=True)
class Slicing:
    """How a table is cut into versions: a large initial load, then small commits.

    ``order`` lists the columns giving time order (empty: a hash of the row).
    Each version after the first inserts the next ``inserted`` share of the
    rows in that order, and corrects and deletes a ``corrected`` and
    ``deleted`` share of the rows inserted before (at least one row each,
    when the share is not zero); version 0 inserts the rest.
    ``corrections`` maps a column to its corrected value, a function of the
    column's value and a deterministic ``u(salt)`` in [0, 1).
    """

    order: tuple[str, ...] = ()
    inserted: float = 0.0
    corrected: float = 0.0
    deleted: float = 0.0
    corrections: dict[str, Callable[[Column, Callable[[int], Column]], Column]] = field(default_factory=dict)


def per_version(share: float, rows: int) -> int:
    """Rows per commit for a ``share`` of ``rows``: at least one unless the share is zero."""
    return max(1, round(share * rows)) if share else 0


def _fare_correction(fare: Column, u: Callable[[int], Column]) -> Column:
    from pyspark.sql import functions as F

    # A corrected fare: usually a dollar more, sometimes erased (NULL), sometimes refunded.
    return F.when(u(61) < 0.2, None).when(u(61) < 0.3, -fare).otherwise(fare + 1)


def _new_count(count: Column, u: Callable[[int], Column]) -> Column:
    from pyspark.sql import functions as F

    # A third of corrected trips move to another passenger count (another group), some of them to NULL.
    return F.when(u(62) < 0.05, None).when(u(62) < 0.33, F.floor(u(63) * 7)).otherwise(count)


def _new_key(share_null: float, salt: int) -> Callable[[Column, Callable[[int], Column]], Column]:
    def correction(key: Column, u: Callable[[int], Column]) -> Column:
        from pyspark.sql import functions as F

        return F.when(u(salt) < share_null, None).otherwise(F.floor(u(salt + 1) * (F.coalesce(key, F.lit(9)) + 7)))

    return correction


def _renamed(value: Column, u: Callable[[int], Column]) -> Column:
    from pyspark.sql import functions as F

    return F.concat(value, F.lit(" (renamed)"))


SLICINGS = {
    # A taxi feed: about 10 new trips a commit on 20,000, 2 corrected (fare, passenger count) and 1 deleted.
    "trips": Slicing(order=("pickup_datetime", "trip_id"), inserted=0.0005, corrected=0.0001, deleted=0.00005,
                     corrections={"fare_amount": _fare_correction, "passenger_count": _new_count}),
    "edges": Slicing(inserted=0.001, corrected=0.001, deleted=0.001, corrections={"dst": _new_key(0.0, 64)}),
    "roots": Slicing(),
    "facts": Slicing(order=("fact_id",), inserted=0.002, corrected=0.0004, deleted=0.0002,
                     corrections={"amount": lambda amount, u: amount + 1}),
    "users": Slicing(corrected=0.004, deleted=0.002, corrections={"addr_id": _new_key(0.1, 66)}),
    "addrs": Slicing(corrected=0.004, deleted=0.002, corrections={"zipcode": lambda zipcode, u: zipcode + 1}),
    "agent": Slicing(corrected=0.05, deleted=0.02, corrections={"agent_name": _renamed}),
}
"""How each table of the data sets changes over time."""


def slice_versions(frame: DataFrame, table: str, versions: int, seed: int) -> DataFrame:
    """``frame``, a ``table``, as a change log over versions ``0 .. versions - 1``, sorted by version.

    Rows are numbered in time order (one Spark window: the whole table is
    sorted once); versions 1 and later insert the last rows in that order,
    ``Slicing.inserted`` of them each, and version 0 the rest. A row picked by
    its hash is corrected at a version after its insertion, and one picked by
    another hash deleted after that.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    plan, columns = SLICINGS[table], TABLES[table].columns
    rows = frame.count()
    order = [F.col(name) for name in plan.order] or [F.xxhash64(*(F.col(name) for name, _ in columns), F.lit(seed))]
    position = F.col("_position")

    def u(salt: int) -> Column:
        return unit(position, seed, salt)

    last = versions - 1
    commit = per_version(plan.inserted, rows)
    bulk = max(0, rows - last * commit)
    inserted = F.lit(0) if not commit else F.when(position < bulk, 0).otherwise(
        F.least(F.lit(last), 1 + F.floor((position - bulk) / commit))
    )

    def later(share: float, after: Column, salt: int) -> Column:
        """A version after ``after`` for the rows a hash picks (about ``share`` of them each version), else NULL."""
        picked = min(1.0, per_version(share, rows) * last / rows)
        return F.when((u(salt) < picked) & (after < last), after + 1 + F.floor(u(salt + 1) * (last - after)))

    ranked = (
        frame.withColumn("_position", F.row_number().over(Window.orderBy(*order)) - 1)
        .withColumn("_inserted", inserted.cast("long"))
        .withColumn("_corrected", later(plan.corrected, F.col("_inserted"), 51).cast("long"))
        .withColumn("_deleted", later(plan.deleted, F.coalesce("_corrected", "_inserted"), 53).cast("long"))
    )
    before = [F.col(name) for name, _ in columns]
    after = [
        plan.corrections[name](F.col(name), u).cast(kind).alias(name) if name in plan.corrections else F.col(name)
        for name, kind in columns
    ]
    deleted = [F.when(F.col("_corrected").isNull(), old).otherwise(new).alias(name)
               for (name, _), old, new in zip(columns, before, after, strict=True)]

    def changes(values: list[Column], change: str, version: str, where: Column | None = None) -> DataFrame:
        picked = ranked if where is None else ranked.where(where)
        return picked.select(*values, F.lit(change).alias(CHANGE_TYPE), F.col(version).alias(VERSION))

    log = (
        changes(before, "insert", "_inserted")
        .unionByName(changes(before, "update_preimage", "_corrected", F.col("_corrected").isNotNull()))
        .unionByName(changes(after, "update_postimage", "_corrected", F.col("_corrected").isNotNull()))
        .unionByName(changes(deleted, "delete", "_deleted", F.col("_deleted").isNotNull()))
    )
    log = log.withColumn(TIMESTAMP, F.timestamp_seconds(F.lit(FIRST_PICKUP) + F.col(VERSION) * VERSION_SECONDS))
    return typed_log(log, table).orderBy(VERSION)


def typed_log(frame: DataFrame, table: str) -> DataFrame:
    """A log's data columns cast to ``table``'s types, then the change type, version and (if present) timestamp."""
    from pyspark.sql import functions as F

    extra = [F.col(TIMESTAMP).cast("timestamp").alias(TIMESTAMP)] if TIMESTAMP in frame.columns else []
    return frame.select(
        *(F.col(name).cast(kind).alias(name) for name, kind in TABLES[table].columns),
        F.col(CHANGE_TYPE).cast("string").alias(CHANGE_TYPE), F.col(VERSION).cast("long").alias(VERSION), *extra,
    )


def write(log: DataFrame, path: str) -> None:
    """``log`` as Parquet at ``path``, sorted by version, so files in name order follow versions.

    Spark writes beside ``path`` and the new log replaces the old only when
    Spark's write committed (``_SUCCESS``): a failed or killed write leaves
    the previous log as it was (``outputs.replace_with_spark``).
    """
    replace_with_spark(path, log.orderBy(VERSION).write.parquet)


def multiplicities(kinds: pyarrow.ChunkedArray) -> pyarrow.ChunkedArray:
    """The multiplicity of each change type in ``kinds`` (a ``_change_type`` column, as Arrow reads it), by
    ``MULTIPLICITIES``: +1 for insert and update_postimage, -1 for delete and update_preimage. The whole
    translation from Delta's change feed to differential dataflow, made where a log is read (``sources``)."""
    import pyarrow
    import pyarrow.compute as pc

    positive = pyarrow.array([kind for kind, multiplicity in MULTIPLICITIES.items() if multiplicity > 0])
    return pc.if_else(pc.is_in(kinds, value_set=positive), 1, -1).cast(pyarrow.int64())


def snapshot(log: DataFrame, table: str, version: int) -> DataFrame:
    """The table at ``version``, from scratch: each record whose multiplicities up to it add up to n > 0, n times."""
    from pyspark.sql import functions as F

    names = list(TABLES[table].names)
    totals = log.where(F.col(VERSION) <= version).groupBy(*names).agg(F.sum(MULTIPLICITY).alias("_copies"))
    copies = F.explode(F.array_repeat(F.lit(0), F.col("_copies").cast("int")))
    return totals.where(F.col("_copies") > 0).select(*names, copies.alias("_copy")).drop("_copy")


IDS = {"trips": "trip_id", "facts": "fact_id"}
"""The tables whose rows have an id that grows, so appended commits can insert new rows after the last."""


def append_commits(
    spark: SparkSession, log: DataFrame, table: str, dataset: str, first: int, commits: int, seed: int
) -> DataFrame | None:
    """Commits ``first .. first + commits - 1`` of ``table`` after its ``log`` (read, with ``_multiplicity``;
    ``first`` after the data set's last version); None if they do not change the table.

    Each commit corrects and deletes rows the table holds (each row at most
    once over all the new commits, in the shares of ``SLICINGS``) and, for a
    table with an id (``IDS``), inserts new rows with the next ids, generated
    as the data set's generator makes them at a larger size.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from .datasets import generate

    plan, columns = SLICINGS[table], TABLES[table].columns
    current = snapshot(log, table, first - 1)
    rows = current.count()
    order = F.xxhash64(*(F.col(name) for name, _ in columns), F.lit(seed), F.lit(first))
    ranked = current.withColumn("_position", F.row_number().over(Window.orderBy(order)) - 1)
    pick = unit(F.col("_position"), seed + first, 71)
    corrected = min(1.0, per_version(plan.corrected, rows) * commits / max(rows, 1))
    deleted = min(1.0 - corrected, per_version(plan.deleted, rows) * commits / max(rows, 1))
    # One action per picked row: the unit interval cut into the commits' shares of corrections, then deletions.
    at = F.when(pick < corrected, F.floor(pick / corrected * commits)).when(
        pick < corrected + deleted, F.floor((pick - corrected) / deleted * commits)) if corrected or deleted else None
    parts = []
    if at is not None:
        ranked = ranked.withColumn("_version", (F.lit(first) + F.least(at, F.lit(commits - 1))).cast("long"))
        before = [F.col(name) for name, _ in columns]
        after = [plan.corrections[name](F.col(name), lambda salt: unit(F.col("_position"), seed + first, salt))
                 .cast(kind).alias(name) if name in plan.corrections else F.col(name) for name, kind in columns]
        fixed, gone = ranked.where(pick < corrected), ranked.where((pick >= corrected) & (pick < corrected + deleted))
        for frame, values, change in ((fixed, before, "update_preimage"), (fixed, after, "update_postimage"),
                                      (gone, before, "delete")):
            parts.append(frame.select(*values, F.lit(change).alias(CHANGE_TYPE), F.col("_version").alias(VERSION)))
    if table in IDS and plan.inserted:
        key = IDS[table]
        last_id = log.agg(F.max(key)).first()[0]
        per_commit = per_version(plan.inserted, rows)
        made = generate(spark, dataset, last_id + 1 + commits * per_commit, seed)[table].where(F.col(key) > last_id)
        version = F.lit(first) + F.floor((F.col(key) - last_id - 1) / per_commit)
        parts.append(made.select(*(F.col(name) for name, _ in columns), F.lit("insert").alias(CHANGE_TYPE),
                                 version.cast("long").alias(VERSION)))
    if not parts:
        return None
    appended = parts[0]
    for part in parts[1:]:
        appended = appended.unionByName(part)
    appended = appended.withColumn(
        TIMESTAMP, F.timestamp_seconds(F.lit(FIRST_PICKUP) + F.col(VERSION) * VERSION_SECONDS))
    return typed_log(appended, table)


def write_appended(log: DataFrame, path: str) -> list[str]:
    """Add ``log``'s rows (one commit's) to the log folder ``path`` as new files; their names.

    Spark writes them into a folder beside ``path`` first; the files are then
    moved in as ``part-v<first version>-<n>.parquet``, names that sort after
    the files already there (``part-0…``). A reader takes them only once the
    commit's marker names them (``sources.write_marker``).
    """
    import shutil

    from pyspark.sql import functions as F

    staging = f"{path.rstrip(os.sep)}.append-{os.getpid()}"
    log.orderBy(VERSION).write.mode("overwrite").parquet(staging)
    low = log.agg(F.min(VERSION)).first()[0]
    files = sorted(name for name in os.listdir(staging) if name.endswith(".parquet"))
    names = []
    for number, name in enumerate(files):
        names.append(f"part-v{low:08d}-{number:05d}.parquet")
        os.replace(os.path.join(staging, name), os.path.join(path, names[-1]))
    shutil.rmtree(staging)
    return names
