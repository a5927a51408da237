"""The data sets: generated deterministically at any size with Spark, or read from CSV or Parquet.

Every random-looking value is a hash of the row's id, the seed and a salt
(``xxhash64``), never ``rand()``: the same size and seed give the same rows
however Spark partitions the work, on a laptop or on a cluster.

- ``trips``, shaped like 004's taxi data: about 5% NULL passenger counts,
  3% refunds (negative fares), 2% NULL fares, 1% NULL distances, pickups in
  time order about 30 s apart; with a ``nan_fraction``, NaN and signed-zero
  distances too.
- ``graph``: ``rows`` directed edges between ``rows // 4`` nodes, and three roots.
- ``enrichment``, 003's tables: ``rows`` facts; a tenth as many users, half as
  many addresses, and 22 sales agents. About 10% of facts name a user who does
  not exist and 3% have a NULL user; users and addresses likewise miss or
  NULL their keys; one agent has a NULL zipcode and one zipcode two agents.

``read`` takes a folder holding one file or folder per table
(``<table>.parquet`` or ``<table>.csv`` with a header), with the columns of
``tables_and_queries.TABLES``, and refuses a value that does not cast to its
column's type, naming the file, row and column (``uncastable``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .outputs import replace_with_spark, sql_text
from .tables_and_queries import DATASETS, TABLES

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

SEED = 2018
"""The default seed (004's taxi data is from 2018)."""

EMBEDDED_ROWS = {"trips": 20_000, "graph": 2_000, "enrichment": 5_000}
"""The embedded default sizes: large enough to be real-shaped, small enough to check every version in minutes."""

FIRST_PICKUP = 1_514_764_800
"""2018-01-01 00:00:00 UTC, in seconds."""


class DatasetError(ValueError):
    """A data set name, size or file that the pipeline cannot use."""


def unit(id_column: Column, seed: int, salt: int) -> Column:
    """A deterministic number in [0, 1) for each row: a hash of its id, the seed and ``salt``."""
    from pyspark.sql import functions as F

    return F.pmod(F.xxhash64(id_column, F.lit(seed), F.lit(salt)), F.lit(1 << 30)) / float(1 << 30)


def generate(
    spark: SparkSession, dataset: str, rows: int | None = None, seed: int = SEED, nan_fraction: float = 0.0
) -> dict[str, DataFrame]:
    """``dataset``'s tables with about ``rows`` rows in the main table (the embedded size by default).

    With ``nan_fraction``, about that share of each floating-point value is
    NaN and as many again are zeros, half of them -0.0 (only ``trips`` has
    such a column, ``trip_distance``); 0 leaves the data as without it.

    Raises:
        DatasetError: the data set is unknown, ``rows`` is not a positive
            int, or ``nan_fraction`` is not between 0 and 0.5.
    """
    _check_dataset(dataset)
    rows = EMBEDDED_ROWS[dataset] if rows is None else rows
    if type(rows) is not int or rows < 1:
        raise DatasetError(f"a data set's size is a positive number of rows, not {rows!r}; e.g. --rows 10000")
    if not isinstance(nan_fraction, (int, float)) or not 0 <= nan_fraction <= 0.5:
        raise DatasetError(f"the share of NaN values is a number from 0 to 0.5, not {nan_fraction!r}; "
                           f"e.g. --nan-fraction 0.02")
    if dataset == "trips":
        return _trips(spark, rows, seed, nan_fraction)
    return {"graph": _graph, "enrichment": _enrichment}[dataset](spark, rows, seed)


def _trips(spark: SparkSession, rows: int, seed: int, nan_fraction: float = 0.0) -> dict[str, DataFrame]:
    from pyspark.sql import functions as F

    trip_id = F.col("id")

    def u(salt: int) -> Column:
        return unit(trip_id, seed, salt)

    fare = F.round(F.lit(2.5) + F.pow(u(3), 2) * 77.5, 2)
    pickup = F.lit(FIRST_PICKUP) + trip_id * 30 + F.floor(u(6) * 30)
    distance = F.when(u(5) < 0.01, None).otherwise(F.round(F.lit(0.1) + F.pow(u(7), 2) * 30, 1))
    if nan_fraction:
        # A per-row product: Spark folds a literal -0.0 into 0.0.
        zero = F.when(u(10) < 0.5, u(10) * -0.0).otherwise(F.lit(0.0))
        distance = F.when(u(9) < nan_fraction, F.lit(float("nan"))).when(u(9) < 2 * nan_fraction, zero).otherwise(
            distance)
    trips = spark.range(rows).select(
        trip_id.alias("trip_id"),
        F.when(u(1) < 0.05, None).otherwise(F.floor(F.pow(u(2), 2) * 7)).alias("passenger_count"),
        F.when(u(4) < 0.02, None).when(u(4) < 0.05, -fare).otherwise(fare).alias("fare_amount"),
        distance.alias("trip_distance"),
        F.timestamp_seconds(pickup).alias("pickup_datetime"),
        F.timestamp_seconds(pickup + 120 + F.floor(u(8) * 2400)).alias("dropoff_datetime"),
    )
    return {"trips": typed(trips, "trips")}


def _graph(spark: SparkSession, rows: int, seed: int) -> dict[str, DataFrame]:
    from pyspark.sql import functions as F

    nodes = max(2, rows // 4)
    edge = F.col("id")
    edges = spark.range(rows).select(
        F.floor(unit(edge, seed, 11) * nodes).alias("src"), F.floor(unit(edge, seed, 12) * nodes).alias("dst")
    )
    roots = spark.range(min(3, nodes)).select(F.col("id").alias("node"))
    return {"edges": typed(edges, "edges"), "roots": typed(roots, "roots")}


def _enrichment(spark: SparkSession, rows: int, seed: int) -> dict[str, DataFrame]:
    from pyspark.sql import functions as F

    users, addrs = max(1, rows // 10), max(1, rows // 20)
    row = F.col("id")

    def key(salt: int, null_share: float, count: int) -> Column:
        # One in ten keys points past the other table's ids: a missing row, not a NULL.
        return F.when(unit(row, seed, salt) < null_share, None).otherwise(
            F.floor(unit(row, seed, salt + 1) * count * 1.1)
        )

    facts = spark.range(rows).select(
        row.alias("fact_id"), key(21, 0.03, users).alias("user_id"),
        F.round(F.lit(1.0) + unit(row, seed, 23) * 499, 2).alias("amount"),
    )
    user_table = spark.range(users).select(
        row.alias("id"), F.concat(F.lit("user-"), row).alias("name"), key(31, 0.05, addrs).alias("addr_id")
    )
    addr_table = spark.range(addrs).select(
        row.alias("id"), F.concat(row, F.lit(" Main St")).alias("street"),
        F.when(unit(row, seed, 41) < 0.05, None).otherwise(10_000 + F.floor(unit(row, seed, 42) * 25)).alias(
            "zipcode"
        ),
    )
    # Agents cover 20 of the 25 zipcodes; agent 20 has no zipcode and agent 21 shares one with agent 3.
    agents = spark.range(22).select(
        F.when(row == 20, None).when(row == 21, 10_003).otherwise(10_000 + row).alias("zc"),
        F.concat(F.lit("agent-"), row).alias("agent_name"),
    )
    return {
        "facts": typed(facts, "facts"), "users": typed(user_table, "users"),
        "addrs": typed(addr_table, "addrs"), "agent": typed(agents, "agent"),
    }


def typed(frame: DataFrame, table: str) -> DataFrame:
    """``frame``'s columns cast to ``table``'s types, in its order."""
    from pyspark.sql import functions as F

    return frame.select(*(F.col(name).cast(kind).alias(name) for name, kind in TABLES[table].columns))


def read(spark: SparkSession, dataset: str, folder: str) -> dict[str, DataFrame]:
    """``dataset``'s tables from ``folder``: ``<table>.parquet`` or ``<table>.csv`` (with a header) for each.

    Raises:
        DatasetError: a table's file is missing, lacks one of its columns, or
            holds a value that does not cast to its column's type.
    """
    _check_dataset(dataset)
    tables = {}
    for name in DATASETS[dataset]:
        table = TABLES[name]
        parquet, csv = os.path.join(folder, f"{name}.parquet"), os.path.join(folder, f"{name}.csv")
        if os.path.exists(parquet):
            path, frame = parquet, spark.read.parquet(parquet)
        elif os.path.exists(csv):
            # Read as text and cast by column name: a schema given to Spark's CSV reader goes by position.
            path, frame = csv, spark.read.option("header", True).csv(csv)
        else:
            raise DatasetError(
                f"data set {dataset!r} needs table {name!r}: neither {parquet} nor {csv} exists; write it with "
                f"the columns {', '.join(table.names)}"
            )
        missing = [column for column in table.names if column not in frame.columns]
        if missing:
            raise DatasetError(
                f"{path} lacks column {missing[0]!r}; table {name!r} has the columns {', '.join(table.names)}"
            )
        problem = uncastable(frame, table.columns, header=path == csv)
        if problem:
            raise DatasetError(f"{problem}; correct it, or leave the field empty for NULL")
        tables[name] = typed(frame, name)
    return tables


def uncastable(frame: DataFrame, columns: Sequence[tuple[str, str]], header: bool = False) -> str | None:
    """The first value of ``frame`` (read from files) that does not cast to its column's type, said where; or None.

    ``columns`` are ``(name, Spark SQL type)``; only those whose type in
    ``frame`` differs are checked (a Parquet file written with the table's
    types costs nothing). A value does not cast when it is not NULL and
    ``try_cast`` makes it NULL. The row is counted from 1, after the header
    for a CSV file (``header``), in file order.
    """
    from pyspark.sql import functions as F

    types = dict(frame.dtypes)
    checked = [(name, kind) for name, kind in columns if types[name] != kind.lower()]
    if not checked:
        return None
    fails = [F.col(name).isNotNull() & F.col(name).try_cast(kind).isNull() for name, kind in checked]
    # Parquet numbers its rows (from 0); a CSV file's rows are counted in file order, which the ids follow.
    position = F.monotonically_increasing_id() if header else F.col("_metadata.row_index")
    located = frame.select(
        *(name for name, _ in checked), *(fail.alias(f"_fails_{index}") for index, fail in enumerate(fails)),
        F.col("_metadata.file_path").alias("_file"), position.alias("_position"),
    )
    condition = F.lit(False)
    for fail in fails:
        condition = condition | fail
    found = located.where(condition).orderBy("_file", "_position").limit(1).collect()
    if not found:
        return None
    first = found[0]
    if header:
        row = located.where((F.col("_file") == first["_file"]) & (F.col("_position") <= first["_position"])).count()
    else:
        row = first["_position"] + 1
    name, kind = next(column for index, column in enumerate(checked) if first[f"_fails_{index}"])
    counted = "counted from 1 after the header" if header else "counted from 1"
    return f"{first['_file']}, row {row} ({counted}), column {name}: {sql_text(first[name])} is not a {kind}"


def write(tables: dict[str, DataFrame], folder: str) -> None:
    """Each table to ``<folder>/<table>.parquet``, replacing what is there only once the new one is written whole."""
    for name, frame in tables.items():
        replace_with_spark(os.path.join(folder, f"{name}.parquet"), frame.write.parquet)


def _check_dataset(dataset: str) -> None:
    if dataset not in DATASETS:
        raise DatasetError(f"no data set {dataset!r}; the data sets are {', '.join(DATASETS)}")
