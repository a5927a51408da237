"""``python -m final.spark`` with one's own SQL (``--sql FILE.sql``) and tables (``--table NAME=PATH``).

``run --sql`` checks a query of one's own against Spark SQL at every version;
``--table`` binds a Delta table (or a Parquet change log) whose commits are
the versions; ``follow --sql`` keeps exactly the given queries, skipping the
data sets none reads, and ``verify --sql`` checks what it wrote. A restart
with other queries or tables is refused, and a value Spark SQL raises an
error for stops the follow at its version, with nothing written for it.
Every refusal is one ``error:`` line and exit status 2.

The commands run in this process (``main``), on the suite's one Spark
session; the tables are a few rows written with ``deltalake``.
"""

from __future__ import annotations

import datetime as dt
import doctest
import json
import os
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pyarrow
import pyarrow.parquet
import pytest

from final.spark import arrow_types, delta
from final.spark.__main__ import main

RIDES = pyarrow.schema([("ride_id", pyarrow.int64()), ("city", pyarrow.string()), ("riders", pyarrow.int16()),
                        ("fare", pyarrow.decimal128(8, 2)), ("day", pyarrow.date32())])

RIDES_BY_CITY = """-- source: a table of one's own, GROUP BY with a DATE and a DECIMAL
SELECT city, COUNT(*) AS rides, SUM(fare) AS total, MAX(day) AS last_day, SUM(riders) AS riders
FROM rides
GROUP BY city
"""


def write(folder: Path, name: str, text: str) -> str:
    """``text`` as the file ``folder/name``; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return str(folder / name)


def ride(ride_id: int, city: str, riders: int, fare: str) -> dict:
    return {"ride_id": ride_id, "city": city, "riders": riders, "fare": Decimal(fare),
            "day": dt.date(2024, 5, 1) + dt.timedelta(days=ride_id)}


@pytest.fixture(scope="module")
def rides(tmp_path_factory) -> Path:
    """A Delta table of rides over three commits, as one changes a table by hand: rides inserted, a fare
    corrected (an update in place), a ride deleted. It is partitioned by city, so its files do not hold that
    column (Spark SQL's truth reads it from their folders' names)."""
    from deltalake import DeltaTable, write_deltalake

    path = tmp_path_factory.mktemp("own") / "rides"
    rows = [ride(1, "Lyon", 1, "12.50"), ride(2, "Lyon", 2, "7.25"), ride(3, "Nice", 1, "30.00"),
            ride(4, "Oslo", 3, "4.00")]
    write_deltalake(str(path), pyarrow.Table.from_pylist(rows, schema=RIDES), partition_by=["city"],
                    configuration=delta.FEED)
    table = DeltaTable(str(path))
    table.update(updates={"fare": "13.50"}, predicate="ride_id = 1")
    table.delete("ride_id = 4")
    return path


def one_error(capsys) -> str:
    """The one line a refused command printed on stderr."""
    error = capsys.readouterr().err
    assert error.startswith("error: ") and error.count("\n") == 1, error
    return error


# Refused before any work: no Spark.


def test_the_arrow_types_of_a_bound_table_are_spark_sqls() -> None:
    """One map between Arrow's types and Spark SQL's (``arrow_types``), both ways: a bound table's columns get
    their types from it, and each type the catalog spells is held in the Arrow type that maps back to it."""
    assert doctest.testmod(arrow_types).failed == 0
    kinds = [pyarrow.int64(), pyarrow.int32(), pyarrow.int16(), pyarrow.int8(), pyarrow.float64(),
             pyarrow.decimal128(12, 3), pyarrow.string(), pyarrow.large_string(), pyarrow.bool_(),
             pyarrow.timestamp("us", tz="UTC"), pyarrow.date32()]
    names = ["BIGINT", "INT", "SMALLINT", "TINYINT", "DOUBLE", "DECIMAL(12,3)", "STRING", "STRING", "BOOLEAN",
             "TIMESTAMP", "DATE"]
    assert [arrow_types.sql_type(kind) for kind in kinds] == names
    assert arrow_types.sql_type(pyarrow.list_(pyarrow.int64())) is None
    assert [arrow_types.arrow_type(name) for name in names] == [
        kind if kind != pyarrow.large_string() else pyarrow.string() for kind in kinds]
    with pytest.raises(ValueError, match="SQL type 'FLOAT' has no Arrow type here"):
        arrow_types.arrow_type("FLOAT")


def test_a_refused_query_exits_2_naming_its_file_line_and_column(tmp_path, capsys) -> None:
    bad = write(tmp_path, "bad.sql", "SELECT passenger_count,\n  nope FROM trips")
    assert main(["run", "--sql", bad, "--out", str(tmp_path / "out")]) == 2
    assert one_error(capsys).startswith(f"error: {bad}:2:3: column nope is not found")
    assert main(["follow", "--logs", str(tmp_path), "--sql", bad, "--out", str(tmp_path / "out")]) == 2
    assert one_error(capsys).startswith(f"error: {bad}:2:3: column nope is not found")


@pytest.mark.slow
def test_a_follow_refuses_output_columns_a_delta_table_cannot_hold(tmp_path, capsys) -> None:
    from deltalake import write_deltalake

    write_deltalake(str(tmp_path / "t"), pyarrow.table({"id": pyarrow.array([1, 1, 2], pyarrow.int64())}),
                    configuration={"delta.enableChangeDataFeed": "true"})
    unnamed = write(tmp_path, "unnamed.sql", "SELECT id, count(*) FROM t GROUP BY id")
    twice = write(tmp_path, "twice.sql", "SELECT id, id + 1 AS ID FROM t")
    for sql, message in ((unnamed, r"output column 2 is named 'count\(1\)' \(Spark SQL's name for an item without "
                                   r"AS\), which a Delta table cannot hold: .* name it with AS"),
                         (twice, r"output columns 1 and 2 are both named 'ID'.* rename one with AS")):
        given = ["--table", f"t={tmp_path / 't'}", "--sql", sql, "--out", str(tmp_path / "out")]
        assert main(["follow", *given, "--available-now"]) == 2
        assert re.search(message, one_error(capsys))
        assert not (tmp_path / "out").exists()  # refused before any work
    # run writes no table: it checks the unnamed column against Spark SQL's
    assert main(["run", "--table", f"t={tmp_path / 't'}", "--sql", unnamed, "--out", str(tmp_path / "run")]) == 0


def bad_tables(folder: Path) -> dict[str, tuple[list[str], str]]:
    """Each --table refused: the arguments, and what the error line says."""
    from deltalake import write_deltalake

    write_deltalake(str(folder / "floats"), pyarrow.table({"id": pyarrow.array([1], pyarrow.int64()),
                                                          "share": pyarrow.array([0.5], pyarrow.float32())}))
    write_deltalake(str(folder / "good"), pyarrow.table({"id": pyarrow.array([1], pyarrow.int64())}))
    (folder / "empty").mkdir()
    (folder / "plain").mkdir()
    pyarrow.parquet.write_table(pyarrow.table({"id": [1]}), folder / "plain" / "part-0.parquet")
    sql = write(folder, "q.sql", "SELECT id FROM t")
    return {
        "no =": (["--table", "rides", "--sql", sql], r"--table takes NAME=PATH, .* not 'rides'"),
        "a name SQL does not read": (["--table", "my table=x", "--sql", sql], r"not 'my table=x'"),
        "a missing path": (["--table", f"t={folder / 'nowhere'}", "--sql", sql], r"there is no .*nowhere"),
        "an empty folder": (["--table", f"t={folder / 'empty'}", "--sql", sql],
                            r"is neither a Delta table \(a folder with _delta_log\) nor a Parquet change log"),
        "Parquet without change columns": (["--table", f"t={folder / 'plain'}", "--sql", sql],
                                           r"plain is neither a Delta table"),
        "a built-in table's name": (["--table", f"Trips={folder / 'good'}", "--sql", sql],
                                    r"Trips names the built-in table trips \(SQL names ignore case; the built-in "
                                    r"tables are trips, edges"),
        "a name given twice": (["--table", f"t={folder / 'good'}", "--table", f"T={folder / 'good'}", "--sql", sql],
                               r"--table T=.*: t is bound already \(SQL names ignore case\)"),
        "a FLOAT column": (["--table", f"t={folder / 'floats'}", "--sql", sql],
                           r"table t \(.*floats\): column share is float, which has no Spark SQL type here "
                           r"\(BIGINT, INT, .*\)"),
        "no --sql": (["--table", f"t={folder / 'good'}"], r"--table binds tables for the queries of --sql"),
    }


def test_a_bad_table_exits_2_with_one_line(tmp_path, capsys) -> None:
    for case, (arguments, message) in bad_tables(tmp_path).items():
        for command in ("run", "follow", "explain") if "--sql" in arguments else ("run", "follow"):
            assert main([command, *arguments, "--out", str(tmp_path / "out")]) == 2, (case, command)
            error = one_error(capsys)
            assert re.search(message, error), (case, command, error)
    from final.spark.tables_and_queries import BOUND, DATASETS, TABLES

    assert BOUND not in DATASETS and "t" not in TABLES  # nothing stays bound after a command


def test_follow_on_the_executors_refuses_a_step_that_stays_on_the_driver_before_spark_starts(
        rides, tmp_path, capsys) -> None:
    """A query with a step that cannot keep its state on the executors (a loop: it stays on the driver by
    design) is refused with one line naming the query, the step and its clause and saying to follow it with
    ``--state driver``, before Spark starts (no spark.log) and before the checkpoint records anything."""
    looped = write(tmp_path, "looped.sql", "WITH RECURSIVE r(id) AS (SELECT ride_id FROM rides UNION "
                                           "SELECT id + 1 FROM r WHERE id < 5) SELECT id FROM r")
    out = tmp_path / "out"
    assert main(["follow", "--state", "executors", "--table", f"rides={rides}", "--sql", looped, "--out", str(out),
                 "--available-now"]) == 2
    assert re.match(r"error: query looped: .* stays on the driver: a loop's rounds are versions a micro-batch "
                    r"cannot hold; follow this query with --state driver", one_error(capsys))
    assert not (out / "spark.log").exists() and not (out / "_checkpoint" / "tables" / "queries.json").exists()


def test_explain_says_where_each_step_runs_with_the_state_on_the_executors(rides, tmp_path, capsys) -> None:
    """``explain`` prints the lowered plan with, after ``|``, where each step runs when a follow keeps its state
    on the executors (``executors.placement``), and writes the same text to ``OUT/<name>.txt``."""
    sql = write(tmp_path, "per_city.sql", "SELECT a.city, COUNT(*) AS n FROM rides a JOIN rides b "
                                          "ON a.ride_id = b.ride_id WHERE a.fare > 5 GROUP BY a.city")
    out = tmp_path / "explain"
    assert main(["explain", "--table", f"rides={rides}", "--sql", sql, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    text = (out / "per_city.txt").read_text()
    assert printed.startswith(text)
    lowered = text.split("--state executors):\n")[1].splitlines()
    where = {line.split("  [")[0].strip().split(" ")[0]: line.split("  | ")[1] for line in lowered}
    assert where["aggregate"].startswith("executors: transformWithState by its key")
    assert where["join"].startswith("executors: transformWithState by its key, the key's rows of each input")
    assert where["scan"].startswith("executors: a task per commit reads its change data feed")
    assert all("  | executors: " in line or "  | driver: " in line for line in lowered)


# With Spark.


@pytest.mark.slow
def test_run_checks_a_query_of_ones_own_on_a_built_in_data_set(spark, tmp_path, capsys) -> None:
    own = write(tmp_path, "long_fares.sql", "SELECT passenger_count, COUNT(*) AS trips, MAX(trip_distance) AS "
                                           "longest FROM trips WHERE fare_amount > 5 GROUP BY passenger_count")
    assert main(["run", "--dataset", "all", "--rows", "200", "--versions", "3", "--partitions", "",
                 "--sql", own, "--out", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "3 versions checked, 0 differences"
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [query["query"] for query in report["queries"]] == ["long_fares"]


@pytest.mark.slow
def test_run_checks_a_query_over_a_bound_delta_table_at_each_of_its_commits(spark, rides, tmp_path, capsys) -> None:
    sql = write(tmp_path, "rides_by_city.sql", RIDES_BY_CITY)
    out = tmp_path / "out"
    assert main(["run", "--table", f"rides={rides}", "--sql", sql, "--partitions", "2", "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "3 versions checked, 0 differences"
    report = json.loads((out / "report.json").read_text())
    [query] = report["queries"]
    assert (query["dataset"], query["query"], query["versions"], query["agrees"]) == (
        "tables", "rides_by_city", [0, 1, 2], True)
    assert [run["partitions"] for run in query["partitioned"]] == [2]
    assert (out / "logs" / "tables" / "rides").resolve() == rides.resolve()


@pytest.mark.slow
def test_follow_and_verify_keep_a_query_over_a_bound_table_and_refuse_other_queries_or_tables(
        spark, rides, tmp_path, capsys) -> None:
    sql = write(tmp_path, "rides_by_city.sql", RIDES_BY_CITY)
    out = tmp_path / "feed"
    given = ["--table", f"rides={rides}", "--sql", sql, "--out", str(out)]
    assert main(["follow", *given, "--available-now"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"followed: tables through version 2; output tables in {out}"
    assert delta.version(str(out / "rides_by_city")) == 2
    kinds = [row["_change_type"] for row in delta.change_feed(str(out / "rides_by_city")).to_pylist()
             if row["_commit_version"] == 1]
    assert sorted(kinds) == ["update_postimage", "update_preimage"]  # Lyon's total, its key kept
    assert main(["verify", *given]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "3 versions checked, 0 differences"
    assert main(["status", *given]) == 0
    assert capsys.readouterr().out.strip() == ("tables: 3 of 3 commits bound, applied through version 2 of 2 "
                                                "(caught up); state on the driver")

    # Another text under the query's name, another query beside it, the name bound to another table: refused.
    changed = write(tmp_path / "changed", "rides_by_city.sql", RIDES_BY_CITY.replace("SUM(fare)", "MAX(fare)"))
    assert main(["follow", "--table", f"rides={rides}", "--sql", changed, "--out", str(out), "--available-now"]) == 2
    assert "the SQL text of rides_by_city is not the text it followed" in one_error(capsys)
    other = write(tmp_path, "cities.sql", "SELECT DISTINCT city FROM rides")
    assert main(["verify", "--table", f"rides={rides}", "--sql", sql, other, "--out", str(out)]) == 2
    assert "it followed the queries rides_by_city, and this command has cities, rides_by_city" in one_error(capsys)
    assert main(["status", "--table", f"rides={rides}", "--sql", other, "--out", str(out)]) == 2
    assert "it followed the queries rides_by_city, and this command has cities" in one_error(capsys)
    assert main(["follow", "--table", f"rides={tmp_path}", "--sql", sql, "--out", str(out)]) == 2
    one_error(capsys)  # tmp_path is no table
    elsewhere = tmp_path / "copy"
    shutil.copytree(rides, elsewhere)
    assert main(["follow", "--table", f"rides={elsewhere}", "--sql", sql, "--out", str(out), "--available-now"]) == 2
    assert f"records the tables this checkpoint followed, rides={rides}" in one_error(capsys)


def trips_and_graph(folder: Path) -> Path:
    """A log folder with data sets trips (two commits) and graph, as small Delta tables written by hand."""
    from deltalake import write_deltalake

    from final.spark.sources import table_schema

    def trip(trip_id: int, passengers: int, fare: str) -> dict:
        pickup = dt.datetime(2018, 1, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=trip_id)
        return {"trip_id": trip_id, "passenger_count": passengers, "fare_amount": Decimal(fare),
                "trip_distance": 1.5 * trip_id, "pickup_datetime": pickup,
                "dropoff_datetime": pickup + dt.timedelta(minutes=9)}

    trips = str(folder / "trips" / "trips")
    for rows in ([trip(1, 1, "10.00"), trip(2, 2, "3.00")], [trip(3, 1, "8.50")]):
        write_deltalake(trips, pyarrow.Table.from_pylist(rows, schema=table_schema("trips")), mode="append",
                        configuration=delta.FEED)
    for table, rows in (("edges", [{"src": 1, "dst": 2}]), ("roots", [{"node": 1}])):
        write_deltalake(str(folder / "graph" / table), pyarrow.Table.from_pylist(rows, schema=table_schema(table)),
                        configuration=delta.FEED)
    return folder


@pytest.mark.slow
def test_follow_on_the_executors_keeps_queries_over_a_bound_table_with_a_checkpoint_of_its_own(
        spark, rides, tmp_path, capsys) -> None:
    """``follow --state executors`` over a table bound with ``--table``, its checkpoint where ``--checkpoint``
    says: a GROUP BY, and a query without a key whose result holds a row twice, one copy of which is
    retracted (a fare corrected above the cut): its output table is merged on whole rows, and keeps the copy
    that stays. ``verify`` and ``status`` read it as they read the driver's follow."""
    by_city = write(tmp_path, "rides_by_city.sql", RIDES_BY_CITY)
    cheap = write(tmp_path, "cheap.sql", "SELECT city FROM rides WHERE fare < 13")
    out, checkpoint = tmp_path / "feed", tmp_path / "elsewhere"
    given = ["--table", f"rides={rides}", "--sql", by_city, cheap, "--out", str(out), "--checkpoint", str(checkpoint)]
    assert main(["follow", "--state", "executors", *given, "--available-now"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"followed: tables through version 2; output tables in {out}"
    assert (checkpoint / "tables" / "spark" / "offsets").is_dir() and not (out / "_checkpoint").exists()
    from deltalake import DeltaTable

    assert [row["city"] for row in DeltaTable(str(out / "cheap")).to_pyarrow_table().to_pylist()] == ["Lyon"]
    assert main(["verify", *given]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "6 versions checked, 0 differences"
    assert main(["status", *given]) == 0
    assert capsys.readouterr().out.strip().endswith("(caught up); state on the executors")


@pytest.mark.slow
def test_follow_sql_keeps_only_the_given_queries_and_skips_the_data_sets_they_do_not_read(
        spark, tmp_path, capsys) -> None:
    logs, out = trips_and_graph(tmp_path / "logs"), tmp_path / "feed"
    own = write(tmp_path, "long_fares.sql", "SELECT passenger_count, COUNT(*) AS trips, MAX(trip_distance) AS "
                                           "longest FROM trips WHERE fare_amount > 5 GROUP BY passenger_count")
    given = ["--logs", str(logs), "--sql", own, "--out", str(out)]
    assert main(["follow", *given, "--available-now"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "skipped: graph (no --sql query reads its tables)"
    assert printed[-1] == f"followed: trips through version 1; output tables in {out}"
    assert sorted(path.name for path in out.iterdir()) == ["_checkpoint", "long_fares", "spark.log"]
    assert not (out / "_checkpoint" / "graph").exists()
    assert main(["verify", *given]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "2 versions checked, 0 differences"

    facts = write(tmp_path, "facts.sql", "SELECT fact_id FROM facts")
    assert main(["follow", "--logs", str(logs), "--sql", facts, "--out", str(tmp_path / "other")]) == 2
    assert "reads facts, tables of data set 'enrichment', which is not followed here (--logs" in one_error(capsys)


WINDOWS = {
    "top_ride": "SELECT city, ride_id, fare FROM (SELECT city, ride_id, fare, ROW_NUMBER() OVER (PARTITION BY city "
                "ORDER BY fare DESC, ride_id) AS rn FROM rides) AS ranked WHERE rn = 1",
    "running_fares": "SELECT ride_id, city, SUM(fare) OVER (PARTITION BY city ORDER BY day) AS running, "
                     "fare - LAG(fare, 1, 0) OVER (PARTITION BY city ORDER BY day) AS change FROM rides",
}
"""The window shapes a data engineer writes first: the top row per group, a running sum, a change from the last row."""


@pytest.mark.slow
def test_window_queries_are_followed_through_a_kill_and_verified(rides, tmp_path, capsys) -> None:
    """Killed once its first batch is applied (in a process of its own), a follow of window queries restarts
    from its checkpoint (here), and what it wrote is Spark SQL's at every version."""
    import subprocess
    import sys

    from final.spark.follow import KILL_VARIABLE

    files = [write(tmp_path, f"{name}.sql", text) for name, text in WINDOWS.items()]
    out = tmp_path / "feed"
    given = ["--table", f"rides={rides}", "--sql", *files, "--out", str(out)]
    root = Path(__file__).resolve().parents[1]
    killed = subprocess.run([sys.executable, "-m", "final.spark", "follow", *given, "--available-now"], cwd=root,
                            env={**os.environ, "PYTHONPATH": str(root), KILL_VARIABLE: "batch:1"},
                            capture_output=True, text=True, timeout=600)
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert main(["follow", *given, "--available-now"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("followed: tables through version 2")
    assert main(["verify", *given]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "6 versions checked, 0 differences"  # 2 queries x 3
    assert delta.version(str(out / "top_ride")) == 2


def tenths(folder: Path, out: Path) -> list[str]:
    """A follow's arguments: ``SELECT id, 10 / x`` over a table t whose x is 0 in the row (3, 0) its commit 2
    (version 2) adds, output to ``out``."""
    from deltalake import write_deltalake

    path = folder / "t"
    schema = pyarrow.schema([("id", pyarrow.int64()), ("x", pyarrow.int32())])
    for row in ({"id": 1, "x": 2}, {"id": 2, "x": 5}, {"id": 3, "x": 0}):
        write_deltalake(str(path), pyarrow.Table.from_pylist([row], schema=schema), mode="append",
                        configuration=delta.FEED)
    return ["--table", f"t={path}", "--sql", write(folder, "tenths.sql", "SELECT id, 10 / x AS y FROM t"), "--out",
            str(out)]


@pytest.mark.slow
def test_a_value_spark_sql_refuses_stops_the_follow_at_its_version_with_nothing_written(
        spark, tmp_path, capsys) -> None:
    out = tmp_path / "feed"
    given = tenths(tmp_path, out)
    assert main(["follow", *given, "--available-now"]) == 2
    assert one_error(capsys).startswith(
        "error: query tenths fails at version 2 of tables (table t's commit 2): [DIVIDE_BY_ZERO] Division by zero "
        "(in the row (3, 0)), as Spark SQL fails on this data; nothing is written for version 2 (the outputs and "
        "checkpoint stay at version 1)")
    assert delta.version(str(out / "tenths")) == 1
    assert json.loads((out / "_checkpoint" / "tables" / "state.json").read_text()) == {"version": 1}
    assert main(["verify", *given]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "2 versions checked, 0 differences"
    assert main(["follow", *given, "--available-now"]) == 2  # a restart stops there again
    assert "fails at version 2" in one_error(capsys)


@pytest.mark.slow
def test_a_value_spark_sql_refuses_on_the_executors_stops_the_follow_naming_query_version_and_row(
        spark, tmp_path, capsys) -> None:
    """With the state on the executors, a step that meets such a value fails its micro-batch on an executor;
    the follow stops with the driver's follow's one line (query, version, commit, SQL's row), not Spark's trace,
    and writes nothing for that micro-batch, the first load here: no output table, the checkpoint at no version."""
    out = tmp_path / "feed"
    given = ["--state", "executors", *tenths(tmp_path, out)]
    assert main(["follow", *given, "--available-now"]) == 2
    assert one_error(capsys).startswith(
        "error: query tenths fails at version 2 of tables (table t's commit 2): [DIVIDE_BY_ZERO] Division by zero "
        "(in the row (3, 0)), as Spark SQL fails on this data; nothing is written for version 2 (the outputs and "
        "checkpoint stay at version -1)")
    assert not (out / "tenths").exists()


@pytest.mark.slow
def test_a_data_error_names_its_row_in_sql_literals(spark, tmp_path, capsys) -> None:
    """A follow's data error names the row as Spark SQL literals, not as Python shows them (``Decimal('199.50')``,
    ``datetime.date(...)``, ``None``): the DECIMAL as written, the text quoted as Spark reads it, NULL, a DATE."""
    from deltalake import write_deltalake

    path = tmp_path / "orders"
    schema = pyarrow.schema([("id", pyarrow.int64()), ("shop", pyarrow.string()), ("items", pyarrow.int32()),
                             ("total", pyarrow.decimal128(8, 2)), ("note", pyarrow.string()),
                             ("day", pyarrow.date32())])
    for row in ({"id": 1, "shop": "Lyon", "items": 2, "total": Decimal("20.00"), "note": "ok",
                 "day": dt.date(2024, 5, 1)},
                {"id": 8, "shop": "O'Neil's", "items": 0, "total": Decimal("199.50"), "note": None,
                 "day": dt.date(2024, 5, 9)}):
        write_deltalake(str(path), pyarrow.Table.from_pylist([row], schema=schema), mode="append",
                        configuration=delta.FEED)
    sql = write(tmp_path, "per_item.sql", "SELECT id, total / items AS per_item FROM orders")
    given = ["--table", f"orders={path}", "--sql", sql, "--out", str(tmp_path / "feed")]
    assert main(["follow", *given, "--available-now"]) == 2
    row = "(8, 'O\\'Neil\\'s', 0, 199.50, NULL, DATE '2024-05-09')"  # a quote escaped as Spark SQL reads it
    assert f"[DIVIDE_BY_ZERO] Division by zero (in the row {row})" in one_error(capsys)


def points(path: Path, commits: list[list[dict]], schema: pyarrow.Schema, **options) -> None:
    """A commit of each list of rows to the Delta table at ``path`` (created with its change data feed on)."""
    from deltalake import write_deltalake

    for rows in commits:
        write_deltalake(str(path), pyarrow.Table.from_pylist(rows, schema=schema), mode="append",
                        configuration=delta.FEED, **options)


POINTS = pyarrow.schema([("id", pyarrow.int64()), ("x", pyarrow.int32())])

POINT_QUERIES = {"totals": "SELECT COUNT(*) AS n, SUM(x) AS total FROM p", "everything": "SELECT * FROM p",
                 "ids": "SELECT COUNT(DISTINCT id) AS ids FROM p", "positive": "SELECT id FROM p WHERE x > 0",
                 "bumped": "SELECT id, CAST(x + 1 AS BIGINT) AS next FROM p WHERE x > 0"}
"""Over a table ``p (id BIGINT, x INT)``: SUM(x) is a BIGINT whether x is an INT or a BIGINT, SELECT * returns x;
``x + 1`` overflows an INT where x is 2,147,483,647 and not a BIGINT, and is a BIGINT once cast."""


def point_follow(tmp_path: Path, table: Path, names: list[str], out: str = "feed") -> list[str]:
    """``--table p=TABLE --sql`` with the queries ``names`` of ``POINT_QUERIES``, and ``--out``."""
    files = [write(tmp_path / "sql", f"{name}.sql", POINT_QUERIES[name]) for name in names]
    return ["--table", f"p={table}", "--sql", *files, "--out", str(tmp_path / out)]


@pytest.mark.slow
def test_a_column_added_to_a_bound_table_changes_no_query_and_select_star_keeps_its_columns(
        spark, tmp_path, capsys) -> None:
    """A restart binds a table with the columns its follow started with: a column added since (Delta's schema
    evolution) is no reason to refuse the checkpoint, which compares what the queries read (it said "belongs to
    another follow", the same --sql given); SELECT * keeps its columns, and its output table its schema. A
    checkpoint recorded before reads were (only the tables' columns) is read too, and given them."""
    table = tmp_path / "p"
    points(table, [[{"id": 1, "x": 1}], [{"id": 2, "x": 5}]], POINTS)
    given = point_follow(tmp_path, table, ["totals", "everything"])
    assert main(["follow", *given, "--available-now"]) == 0
    record = tmp_path / "feed" / "_checkpoint" / "tables" / "queries.json"
    written = json.loads(record.read_text())
    assert written["reads"] == {"totals": {"p": {"x": "INT"}}, "everything": {"p": {"id": "BIGINT", "x": "INT"}}}
    record.write_text(json.dumps({"queries": written["queries"], "tables": written["tables"]}))  # as main wrote it
    tipped = POINTS.append(pyarrow.field("tip", pyarrow.float64()))
    points(table, [[{"id": 3, "x": 2, "tip": 0.5}]], tipped, schema_mode="merge")
    capsys.readouterr()
    assert main(["follow", *given, "--available-now"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1].startswith("followed: tables through version 2") and "has a column tip" in printed[-3]
    assert json.loads(record.read_text())["reads"] == written["reads"]
    assert delta.change_feed(str(tmp_path / "feed" / "everything")).column_names[:2] == ["id", "x"]
    assert "tip" not in delta.change_feed(str(tmp_path / "feed" / "everything")).column_names
    assert main(["verify", *given]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "6 versions checked, 0 differences"


@pytest.mark.slow
def test_a_widened_column_is_followed_unless_a_querys_result_type_changes(spark, tmp_path, capsys) -> None:
    """x widened from INT to BIGINT (the table rewritten with ``schema_mode="overwrite"``, as delta-rs changes a
    type) with a value no INT holds: SUM(x) and WHERE x > 0 keep their result types, so they go on, compiled
    again over BIGINT (Spark SQL agrees at every version); SELECT * would return a BIGINT column to an output
    table of INT, so that follow stops, naming the table, the column and the commit."""
    from deltalake import DeltaTable, write_deltalake

    table = tmp_path / "p"
    points(table, [[{"id": 1, "x": 1}], [{"id": 2, "x": -5}]], POINTS)
    going, stopping = point_follow(tmp_path, table, ["totals", "positive"]), point_follow(
        tmp_path, table, ["everything"], "star")
    assert main(["follow", *going, "--available-now"]) == 0
    assert main(["follow", *stopping, "--available-now"]) == 0
    rows = pyarrow.table(DeltaTable(str(table)).to_pyarrow_table())
    wide = pyarrow.schema([("id", pyarrow.int64()), ("x", pyarrow.int64())])
    write_deltalake(str(table), pyarrow.concat_tables([rows.cast(wide), pyarrow.Table.from_pylist(
        [{"id": 3, "x": 2 ** 40}], schema=wide)]), mode="overwrite", schema_mode="overwrite")
    points(table, [[{"id": 4, "x": 7}]], wide)
    capsys.readouterr()
    assert main(["follow", *going, "--available-now"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("followed: tables through version 3")
    assert delta.version(str(tmp_path / "feed" / "totals")) == 3
    totals = [row for row in delta.change_feed(str(tmp_path / "feed" / "totals")).to_pylist()
              if row["_commit_version"] == 3 and row["_change_type"] == "insert"]
    assert [(row["n"], row["total"]) for row in totals] == [(4, 2 ** 40 + 3)]
    assert main(["verify", *going]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "8 versions checked, 0 differences"
    assert main(["follow", *stopping, "--available-now"]) == 2
    assert one_error(capsys) == (
        f"error: table p ({table}), commit 2 (_delta_log/00000000000000000002.json): column x is widened from INT to "
        f"BIGINT, and query everything reads it: its column x would be BIGINT, and its output table holds INT. An "
        f"output table keeps its columns' types: follow the query with a new --out and --checkpoint\n")


@pytest.mark.slow
def test_a_widened_column_starts_the_stream_on_the_executors_again_compiled_over_the_wider_type(
        spark, tmp_path, capsys) -> None:
    """With the state on the executors, the source stops before the commit that widens x from INT to BIGINT,
    and the follow starts its stream again with every step compiled over BIGINT: ``x + 1`` of 2,147,483,647 is
    not an INT overflow there (it was, with the steps compiled over INT); Spark SQL agrees at every version. A
    query whose result type would change stops the follow, naming the table, the column and the commit, and so
    does a commit that drops a column a query reads (found by the executor that reads it)."""
    from deltalake import DeltaTable, write_deltalake

    table = tmp_path / "p"
    points(table, [[{"id": 1, "x": 1}], [{"id": 2, "x": -5}]], POINTS)
    going, stopping = point_follow(tmp_path, table, ["totals", "bumped"]), point_follow(
        tmp_path, table, ["everything"], "star")
    assert main(["follow", "--state", "executors", *going, "--available-now"]) == 0
    assert main(["follow", "--state", "executors", *stopping, "--available-now"]) == 0
    rows = pyarrow.table(DeltaTable(str(table)).to_pyarrow_table())
    wide = pyarrow.schema([("id", pyarrow.int64()), ("x", pyarrow.int64())])
    write_deltalake(str(table), pyarrow.concat_tables([rows.cast(wide), pyarrow.Table.from_pylist(
        [{"id": 3, "x": 2 ** 40}], schema=wide)]), mode="overwrite", schema_mode="overwrite")
    points(table, [[{"id": 4, "x": 2 ** 31 - 1}]], wide)
    capsys.readouterr()
    assert main(["follow", "--state", "executors", *going, "--available-now"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert "tables: the queries compiled again for the widened columns (id BIGINT, x BIGINT) at version 1; the " \
           "stream starts again" in printed
    assert printed[-1].startswith("followed: tables through version 3")
    bumped = pyarrow.table(DeltaTable(str(tmp_path / "feed" / "bumped")).to_pyarrow_table()).to_pylist()
    assert sorted((row["id"], row["next"]) for row in bumped) == [(1, 2), (3, 2 ** 40 + 1), (4, 2 ** 31)]
    assert main(["verify", *going]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "8 versions checked, 0 differences"
    assert main(["follow", "--state", "executors", *stopping, "--available-now"]) == 2
    assert one_error(capsys) == (
        f"error: table p ({table}), commit 2 (_delta_log/00000000000000000002.json): column x is widened from INT to "
        f"BIGINT, and query everything reads it: its column x would be BIGINT, and its output table holds INT. An "
        f"output table keeps its columns' types: follow the query with a new --out and --checkpoint\n")

    # x dropped: the executor that reads the commit refuses it, and the follow says why in one line.
    rows = pyarrow.table(DeltaTable(str(table)).to_pyarrow_table()).drop_columns(["x"])
    write_deltalake(str(table), rows, mode="overwrite", schema_mode="overwrite")
    assert main(["follow", "--state", "executors", *going, "--available-now"]) == 2
    assert one_error(capsys).startswith(
        f"error: table p ({table}), commit 4 (_delta_log/00000000000000000004.json): column x is gone (the table had "
        f"it, BIGINT); queries bumped, totals read it: put the column back")


@pytest.mark.slow
def test_a_column_a_query_reads_that_the_table_drops_stops_the_follow(spark, tmp_path, capsys) -> None:
    """x dropped (the table rewritten without it): a follow whose query reads x stops at that commit, naming the
    table, the column and the commit; one whose queries do not read x goes on (x is NULL from then on)."""
    from deltalake import DeltaTable, write_deltalake

    table = tmp_path / "p"
    points(table, [[{"id": 1, "x": 1}], [{"id": 2, "x": 5}]], POINTS)
    reading, not_reading = point_follow(tmp_path, table, ["totals", "ids"]), point_follow(
        tmp_path, table, ["ids"], "ids")
    assert main(["follow", *reading, "--available-now"]) == 0
    assert main(["follow", *not_reading, "--available-now"]) == 0
    rows = pyarrow.table(DeltaTable(str(table)).to_pyarrow_table()).drop_columns(["x"])
    write_deltalake(str(table), rows, mode="overwrite", schema_mode="overwrite")
    capsys.readouterr()
    assert main(["follow", *reading, "--available-now"]) == 2
    assert one_error(capsys).startswith(
        f"error: table p ({table}), commit 2 (_delta_log/00000000000000000002.json): column x is gone (the table had "
        f"it, INT); query totals reads it: put the column back, or follow the queries that do not read it")
    assert main(["follow", *not_reading, "--available-now"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("followed: tables through version 2")
    assert main(["verify", *not_reading]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "3 versions checked, 0 differences"
