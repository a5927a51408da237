"""final/spark: at every version of a change log, ``final/`` holds what Spark SQL computes from scratch.

Spark SQL is the reference oracle here, as v0 is for the stages: for each
query of ``final.spark.tables_and_queries`` (document 004's GROUP BY with
NULLs and refunds, document 003's chain of LEFT JOINs, document 002's
reachability loop), ``final/`` is fed the logs version by version, in one
process and split over Spark tasks, and must hold exactly Spark SQL's rows at
each version. The data sets are small but chosen so that the NULL cases the
documents are about really occur (a NULL group, NULL fares skipped, a NULL
key, a missing row, a NULL zipcode), and a planted fault shows the check
reports the version and the row it concerns, so a pass is not vacuous. The
rest holds the boundary to account: logs that are not a history, data sets
that lack a table or a column, a machine without Java, and the settings a
session is given.
"""

from __future__ import annotations

import math
import re
import shutil
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from final.spark import datasets, pipeline, session, sources, truth
from final.spark.changelog import ChangeLogError
from final.spark.inputs import data_files
from final.spark.sql import compile_sql
from final.spark.tables_and_queries import DATASETS, QUERIES, TABLES

pytestmark = pytest.mark.slow  # Spark: a JVM, seconds per test

VERSIONS = 4
"""An initial load and three commits: enough for a correction or a delete to follow an insert."""

SIZES = {"trips": 300, "graph": 200, "enrichment": 300}
"""A few hundred rows per data set: every query is checked at every version within the time budget."""

SEEDS = {"trips": datasets.SEED, "graph": datasets.SEED, "enrichment": 4}
"""With 300 facts there are 15 addresses, and with the default seed none has a NULL zipcode; seed 4 gives two."""

ROOTS_LOG = "node BIGINT, _change_type STRING, _commit_version BIGINT"
"""A change log of the one-column table ``roots``: the smallest log to break on purpose."""


@pytest.fixture(scope="module")
def logs_of(spark, tmp_path_factory):
    """``logs_of(dataset)``: the data set's change logs, written and read back (checked) once per module."""
    made = {}

    def logs(dataset: str) -> dict:
        if dataset not in made:
            folder = str(tmp_path_factory.mktemp(f"logs-{dataset}"))
            paths = pipeline.make_logs(spark, dataset, folder, rows=SIZES[dataset], versions=VERSIONS,
                                       seed=SEEDS[dataset])
            made[dataset] = pipeline.read_logs(spark, dataset, paths)
        return made[dataset]

    yield logs
    for frames in made.values():
        for frame in frames.values():
            frame.unpersist()


def logged_versions(logs: dict, tables: tuple[str, ...]) -> list[int]:
    """The versions at which ``tables``' logs hold an update."""
    return sorted({version for version, table, _, _ in pipeline.updates(logs) if table in tables})


@pytest.mark.parametrize("name", list(QUERIES))
def test_final_holds_what_spark_sql_computes_at_every_version(spark, logs_of, name: str) -> None:
    query = QUERIES[name]
    logs = logs_of(query.dataset)
    run = pipeline.check_query(spark, query, logs, partitions=(1, 3))
    # Every table of a data set is sliced over the same versions, so each query sees all of them.
    assert run.versions == logged_versions(logs, query.inputs) == list(range(VERSIONS))
    assert run.differences == []
    # Reachability does not split by key: it runs in one process only.
    assert [p.partitions for p in run.partitioned] == ([1, 3] if query.partition_by is not None else [])
    for partitioned in run.partitioned:
        assert partitioned.differences == [], partitioned.partitions
    assert run.rows[-1] > 0


NAN_FRACTION = 0.05
"""With 600 trips, about 30 NaN distances and 30 zeros (half -0.0) in every version's table."""


@pytest.fixture(scope="module")
def nan_logs(spark, tmp_path_factory):
    """The trips logs with NaN and signed-zero distances, written and read back once per module."""
    folder = str(tmp_path_factory.mktemp("logs-nan"))
    paths = pipeline.make_logs(spark, "trips", folder, rows=600, versions=VERSIONS, nan_fraction=NAN_FRACTION)
    logs = pipeline.read_logs(spark, "trips", paths)
    yield logs
    for frame in logs.values():
        frame.unpersist()


def test_an_average_of_doubles_agrees_by_the_one_equality_rule(spark, logs_of) -> None:
    """A data engineer's query: Spark adds an AVG's doubles in row order, final/ exactly and rounds once, so the
    last bits may differ; the one rule (``equality``) compares such a column within its tolerance, and counts
    the rows it let through for the report, where ``run`` once reported them as differences."""
    text = ("SELECT CASE WHEN trip_distance < 2 THEN 'short' ELSE 'long' END AS kind, COUNT(*) AS n, "
            "AVG(trip_distance) AS mean_distance FROM trips GROUP BY 1")
    query = compile_sql(text, {"trips": TABLES["trips"]}, name="kinds")
    run = pipeline.check_query(spark, query, logs_of("trips"))
    assert run.agrees and len(run.versions) == VERSIONS, run.differences
    assert 0 <= run.tolerated <= sum(run.rows)


def test_the_nan_trips_hold_nan_and_both_zeros(nan_logs) -> None:
    distances = [record[3] for _, _, record, _ in pipeline.updates(nan_logs)]
    assert sum(1 for value in distances if value != value) >= 10
    zeros = [value for value in distances if value == 0]
    assert any(math.copysign(1, value) < 0 for value in zeros) and any(math.copysign(1, value) > 0 for value in zeros)


@pytest.mark.parametrize("name", [query.name for query in QUERIES.values() if query.dataset == "trips"])
def test_nan_and_signed_zero_are_one_value_each_as_in_spark_sql(spark, nan_logs, name: str) -> None:
    """NaN equals NaN and is above every number, -0.0 = 0.0: in GROUP BY keys, DISTINCT and MIN/MAX, single and
    partitioned."""
    run = pipeline.check_query(spark, QUERIES[name], nan_logs, partitions=(1, 3))
    assert run.versions == list(range(VERSIONS))
    assert run.differences == []
    assert [(p.partitions, p.differences) for p in run.partitioned] == [(1, []), (3, [])]


def test_nan_is_the_greatest_distance_and_one_group(spark, nan_logs) -> None:
    """Spark SQL's own answers, which final/ was just held to: MAX is NaN, and all NaN rows are one group."""
    ranges = truth.from_scratch(spark, QUERIES["distance_range"], nan_logs, VERSIONS - 1)
    assert any(math.isnan(row[2]) for row in ranges)
    assert not any(math.isnan(row[1]) for row in ranges if row[3] > 10)
    groups = truth.from_scratch(spark, QUERIES["trips_by_distance"], nan_logs, VERSIONS - 1)
    # One NaN group and one zero group (-0.0 with 0.0) per passenger count that has them.
    nan_groups = [row[0] for row in groups if row[1] is not None and math.isnan(row[1])]
    zero_groups = [row[0] for row in groups if row[1] == 0]
    assert nan_groups and len(nan_groups) == len(set(nan_groups))
    assert zero_groups and len(zero_groups) == len(set(zero_groups))


def test_trips_have_a_null_group_and_null_fares_that_sql_skips(spark, logs_of) -> None:
    """Document 004: NULL passenger counts form a group of their own; COUNT(fare) skips NULL fares."""
    logs = logs_of("trips")
    groups = truth.from_scratch(spark, QUERIES["fares_by_passengers"], logs, VERSIONS - 1)
    assert any(row[0] is None for row in groups)
    assert any(row[1] < 0 for row in groups)  # a refund is some group's lowest fare
    totals = truth.from_scratch(spark, QUERIES["fare_totals"], logs, VERSIONS - 1)
    passenger_count, trips, fares = 0, 1, 2
    assert any(row[fares] < row[trips] for row in totals), totals
    assert any(row[passenger_count] is None for row in totals)


def test_enrichment_has_null_keys_missing_rows_and_null_zipcodes(spark, logs_of) -> None:
    """Document 003's cases, in the truth at the last version: a fact with a NULL user, a fact whose user
    does not exist, and an address with a NULL zipcode (which matches no agent)."""
    query = QUERIES["enriched_facts"]
    found = truth.from_scratch(spark, query, logs_of("enrichment"), VERSIONS - 1)
    rows = [dict(zip(query.columns, row, strict=True)) for row in found]
    null_user = [row for row in rows if row["user_id"] is None]
    assert null_user and all(row["users.id"] is None for row in null_user)  # NULL never equals a key
    assert any(row["user_id"] is not None and row["users.id"] is None for row in rows)
    null_zipcode = [row for row in rows if row["addrs.id"] is not None and row["zipcode"] is None]
    assert null_zipcode and all(row["zc"] is None for row in null_zipcode)


def dropping_first(pick):
    """A ``feed`` for ``check_query`` that withholds the first update ``pick(update, updates)`` accepts,
    and the list the withheld update is put in."""
    dropped = []

    def feed(updates: list) -> list:
        index = next(i for i, update in enumerate(updates) if pick(update, updates))
        dropped.append(updates[index])
        return updates[:index] + updates[index + 1:]

    return feed, dropped


def test_a_lost_fact_retraction_is_reported_at_its_version_and_row(spark, logs_of) -> None:
    def drop_first_retraction(update: tuple, updates: list) -> bool:
        version, table, _, multiplicity = update
        return table == "facts" and multiplicity == -1 and version > 0

    feed, dropped = dropping_first(drop_first_retraction)
    run = pipeline.check_query(spark, QUERIES["enriched_facts"], logs_of("enrichment"), feed=feed)
    [(version, _, fact, _)] = dropped
    assert version > 0 and run.differences
    first = run.differences[0]
    assert first.version == version
    assert first.row[:3] == fact
    assert (first.expected, first.actual) == (0, 1)
    # Later versions may show the stale fact joined anew; no other fact is touched.
    assert {difference.row[0] for difference in run.differences} == {fact[0]}


def test_a_lost_trip_delete_is_reported_at_its_version_in_its_group(spark, logs_of) -> None:
    """Not the first trips retraction: that one (a fare correction inside its group) changes no group's
    MIN, MAX or COUNT(DISTINCT), so losing it is invisible to this query. The first delete of a trip
    whose distance no other trip of its group holds must change that group's COUNT(DISTINCT)."""
    trip_id, group, distance = 0, 1, 3

    def deletes_a_distinct_distance(update: tuple, updates: list) -> bool:
        version, _, trip, multiplicity = update
        if version == 0 or multiplicity != -1 or trip[distance] is None:
            return False
        if any(at == version and m == 1 and other[trip_id] == trip[trip_id] for at, _, other, m in updates):
            return False  # a correction: the trip stays, with new values
        held = Counter()
        for at, _, record, m in updates:
            if at <= version:
                held[record] += m
        return not any(count > 0 and record[group] == trip[group] and record[distance] == trip[distance]
                       for record, count in held.items())

    feed, dropped = dropping_first(deletes_a_distinct_distance)
    run = pipeline.check_query(spark, QUERIES["fares_by_passengers"], logs_of("trips"), feed=feed)
    [(version, _, trip, _)] = dropped
    assert run.differences and run.differences[0].version == version
    assert {difference.row[0] for difference in run.differences} == {trip[group]}
    at_version = [difference for difference in run.differences if difference.version == version]
    [spark_row] = [d.row for d in at_version if (d.expected, d.actual) == (1, 0)]
    [final_row] = [d.row for d in at_version if (d.expected, d.actual) == (0, 1)]
    assert final_row[3] == spark_row[3] + 1  # the lost trip's distance is still counted


def write_log(spark, folder: Path, rows: list[tuple], schema: str = ROOTS_LOG) -> str:
    """``rows`` as one Parquet file under ``folder``, in the order given; the folder's path."""
    spark.createDataFrame(rows, schema).coalesce(1).write.parquet(str(folder))
    return str(folder)


def read_log(path: str, table: str) -> sources.CheckedLog:
    """The log of ``table`` in the folder ``path`` (no commit markers: every file, by name), as ``run`` reads it."""
    return sources.read_log(sorted(data_files(path)), table)


def part_of(path: str) -> str:
    [part] = Path(path).glob("part-*.parquet")
    return str(part)


def test_a_log_without_change_types_is_refused(spark, tmp_path: Path) -> None:
    path = write_log(spark, tmp_path / "log", [(1, 0)], "node BIGINT, _commit_version BIGINT")
    with pytest.raises(ChangeLogError, match=re.escape(f"{part_of(path)}: column _change_type is missing")):
        read_log(path, "roots")


def test_a_log_without_a_data_column_is_refused(spark, tmp_path: Path) -> None:
    schema = ("trip_id BIGINT, passenger_count INT, trip_distance DOUBLE, pickup_datetime TIMESTAMP, "
              "dropoff_datetime TIMESTAMP, _change_type STRING, _commit_version BIGINT")
    row = (1, 2, 3.5, datetime(2018, 1, 1, 0, 0), datetime(2018, 1, 1, 0, 20), "insert", 0)
    path = write_log(spark, tmp_path / "trips", [row], schema)
    with pytest.raises(ChangeLogError, match=re.escape(f"{part_of(path)}: column fare_amount is missing; table "
                                                       f"trips has the columns trip_id, passenger_count")):
        read_log(path, "trips")


def test_versions_going_back_inside_a_file_are_refused(spark, tmp_path: Path) -> None:
    path = write_log(spark, tmp_path / "log", [(1, "insert", 0), (2, "insert", 2), (3, "insert", 1)])
    # The third row, (3, 'insert', 1).
    with pytest.raises(ChangeLogError, match=re.escape(f"{part_of(path)}, row 3 (counted from 1), column "
                                                       f"_commit_version: goes back from 2 to 1")):
        read_log(path, "roots")


def test_versions_going_back_across_files_are_refused(spark, tmp_path: Path) -> None:
    later = write_log(spark, tmp_path / "later", [(1, "insert", 2), (2, "insert", 3)])
    earlier = write_log(spark, tmp_path / "earlier", [(3, "insert", 0), (4, "insert", 1)])
    path = tmp_path / "log"
    path.mkdir()
    # Spark names a write's files part-<task>-<random id>: renamed, the file of later versions comes first.
    for source, name in [(later, "part-00000-later.snappy.parquet"), (earlier, "part-00001-earlier.snappy.parquet")]:
        [part] = Path(source).glob("part-*.parquet")
        shutil.move(part, path / name)
    with pytest.raises(ChangeLogError, match=re.escape(
            f"{path}/part-00001-earlier.snappy.parquet, row 1 (counted from 1), column _commit_version: goes back "
            f"from 3 in {path}/part-00000-later.snappy.parquet to 0")):
        read_log(str(path), "roots")


def test_an_unknown_change_type_is_refused(spark, tmp_path: Path) -> None:
    path = write_log(spark, tmp_path / "log", [(1, "insert", 0), (1, "upsert", 1)])
    with pytest.raises(ChangeLogError, match=re.escape(f"{part_of(path)}, row 2 (counted from 1), column "
                                                       f"_change_type: 'upsert' is not one of Delta's change types")):
        read_log(path, "roots")


def test_deleting_a_row_never_inserted_is_refused(spark, tmp_path: Path) -> None:
    rows = [(1, "insert", 0), (2, "insert", 0), (1, "delete", 1)]
    held = spark.createDataFrame(read_log(write_log(spark, tmp_path / "good", rows), "roots").arrow)
    assert sorted(tuple(row) for row in held.select("node", "_commit_version", "_multiplicity").collect()) == [
        (1, 0, 1), (1, 1, -1), (2, 0, 1)]
    path = write_log(spark, tmp_path / "bad", [*rows, (3, "delete", 1)])
    with pytest.raises(ChangeLogError, match=re.escape(f"{part_of(path)}, row 4 (counted from 1): table roots has no "
                                                       f"row (node = 3) to delete at version 1")):
        read_log(path, "roots")


def test_a_setting_without_a_value_or_key_is_refused() -> None:
    with pytest.raises(ValueError, match="not 'novalue'"):
        session.parse_conf(["novalue"])
    with pytest.raises(ValueError, match="not '=2'"):
        session.parse_conf(["=2"])


def test_settings_merge_defaults_then_environment_then_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(session.MASTER_VARIABLE, raising=False)
    monkeypatch.delenv(session.CONF_VARIABLE, raising=False)
    assert session.settings() == ("local[*]", session.DEFAULTS)
    monkeypatch.setenv(session.MASTER_VARIABLE, "local[2]")
    monkeypatch.setenv(session.CONF_VARIABLE, "spark.executor.memory=2g  spark.sql.shuffle.partitions=8")
    master, conf = session.settings(conf={"spark.sql.shuffle.partitions": "3"})
    assert master == "local[2]"
    assert conf == {**session.DEFAULTS, "spark.executor.memory": "2g", "spark.sql.shuffle.partitions": "3"}
    assert session.settings(master="local[1]")[0] == "local[1]"
    assert session.settings()[1]["spark.sql.shuffle.partitions"] == "8"


def test_without_java_a_session_is_refused_before_spark_starts(tmp_path: Path, monkeypatch) -> None:
    """``spark_session`` looks for Java before ``getOrCreate``, so this is safe while the suite's session runs."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))  # no bin/java in it
    monkeypatch.setenv("PATH", str(empty))
    assert not session._java_found()
    with pytest.raises(session.SparkUnavailableError, match="Spark needs Java 17 or newer and none was found"):
        session.spark_session()
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "java").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "java").chmod(0o755)
    assert session._java_found()
    monkeypatch.delenv("JAVA_HOME")
    assert not session._java_found()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert session._java_found()


def collected(tables: dict) -> dict[str, Counter]:
    """Each table's rows as a multiset of tuples (rows hold NULLs, so they are counted, not sorted)."""
    return {name: Counter(tuple(row) for row in frame.collect()) for name, frame in tables.items()}


@pytest.mark.parametrize("dataset", list(DATASETS))
def test_a_data_set_is_the_same_for_the_same_size_and_seed(spark, dataset: str) -> None:
    first = collected(datasets.generate(spark, dataset, rows=60))
    assert sum(first[DATASETS[dataset][0]].values()) == 60
    assert collected(datasets.generate(spark, dataset, rows=60)) == first
    assert collected(datasets.generate(spark, dataset, rows=60, seed=1)) != first


@pytest.mark.parametrize("dataset", ["trips", "enrichment"])
def test_written_tables_read_back_unchanged(spark, tmp_path: Path, dataset: str) -> None:
    tables = datasets.generate(spark, dataset, rows=40)
    datasets.write(tables, str(tmp_path))
    assert collected(datasets.read(spark, dataset, str(tmp_path))) == collected(tables)


def test_csv_tables_with_a_header_are_read_typed(spark, tmp_path: Path) -> None:
    (tmp_path / "edges.csv").write_text("src,dst\n0,1\n1,2\n2,0\n")
    (tmp_path / "roots.csv").write_text("node\n0\n")
    tables = datasets.read(spark, "graph", str(tmp_path))
    assert tables["edges"].dtypes == [("src", "bigint"), ("dst", "bigint")]
    assert collected(tables) == {"edges": Counter({(0, 1): 1, (1, 2): 1, (2, 0): 1}), "roots": Counter({(0,): 1})}


def test_csv_columns_are_read_by_their_header_names(spark, tmp_path: Path) -> None:
    """A header names the columns: one listing dst before src still means the edge 0 -> 1."""
    (tmp_path / "edges.csv").write_text("dst,src\n1,0\n")
    (tmp_path / "roots.csv").write_text("node\n0\n")
    assert collected(datasets.read(spark, "graph", str(tmp_path)))["edges"] == Counter({(0, 1): 1})


def test_a_missing_table_file_is_a_dataset_error(spark, tmp_path: Path) -> None:
    (tmp_path / "edges.csv").write_text("src,dst\n0,1\n")
    with pytest.raises(datasets.DatasetError, match="needs table 'roots'") as caught:
        datasets.read(spark, "graph", str(tmp_path))
    assert f"neither {tmp_path / 'roots.parquet'} nor {tmp_path / 'roots.csv'} exists" in str(caught.value)


def test_a_parquet_table_without_a_column_is_a_dataset_error(spark, tmp_path: Path) -> None:
    spark.createDataFrame([(0,)], "src BIGINT").write.parquet(str(tmp_path / "edges.parquet"))
    spark.createDataFrame([(0,)], "node BIGINT").write.parquet(str(tmp_path / "roots.parquet"))
    with pytest.raises(datasets.DatasetError, match=re.escape(f"{tmp_path / 'edges.parquet'} lacks column 'dst'")):
        datasets.read(spark, "graph", str(tmp_path))


def test_a_csv_table_without_a_column_is_a_dataset_error(spark, tmp_path: Path) -> None:
    (tmp_path / "edges.csv").write_text("src\n0\n")
    (tmp_path / "roots.csv").write_text("node\n0\n")
    with pytest.raises(datasets.DatasetError, match=re.escape(f"{tmp_path / 'edges.csv'} lacks column 'dst'")):
        datasets.read(spark, "graph", str(tmp_path))
