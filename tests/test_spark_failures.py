"""final/spark's failures: every bad input is one ``error:`` line and exit 2, and outputs are replaced whole.

Each bad input a tester found (a truncated or non-Parquet file, an empty or
half-written log folder, a CSV value that does not cast, a log that deletes
what it never held, a master that is malformed or does not answer, a data
set without its logs) must end the run before any query is checked, with
exit status 2 and exactly one line on stderr naming the file, the row
(counted from 1) and the column, and showing values as SQL does (NULL,
10.00, ISO timestamps). Exit status 1 is kept for differences. And a report
or change log is never left half old and half new: a write that fails keeps
the previous one, and a file the run does not make again is removed.
"""

from __future__ import annotations

import doctest
import json
import os
import shutil
import socket
import subprocess
import sys
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from final.spark import changelog, outputs, report, sources
from final.spark.__main__ import main
from final.spark.inputs import data_files
from final.spark.pipeline import Difference, Partitioned, PipelineRun, QueryRun

pytestmark = pytest.mark.slow  # Spark: a JVM, seconds per test

ROOT = Path(__file__).resolve().parent.parent

TRIPS = ["--dataset", "trips", "--rows", "200", "--versions", "3"]
"""The smallest run: one data set of 200 trips, an initial load and two commits."""

TRIPS_LOG = ("trip_id BIGINT, passenger_count INT, fare_amount DECIMAL(8,2), trip_distance DOUBLE, "
             "pickup_datetime TIMESTAMP, dropoff_datetime TIMESTAMP, _change_type STRING, _commit_version BIGINT")


def the_error(capsys: pytest.CaptureFixture) -> str:
    """The one line on stderr, which begins with ``error:``; anything else fails the test."""
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.fixture(scope="module")
def generated(spark, tmp_path_factory) -> Path:
    """``generate``'s output for the smallest trips run in the Parquet layout: ``tables/trips/trips.parquet`` and
    ``logs/trips/trips``."""
    out = tmp_path_factory.mktemp("generated")
    assert main(["generate", *TRIPS, "--format", "parquet", "--out", str(out)]) == 0
    return out


@pytest.fixture
def logs(generated: Path, tmp_path: Path) -> Path:
    """A copy of the generated logs, to damage."""
    shutil.copytree(generated / "logs", tmp_path / "logs")
    return tmp_path / "logs"


def part_file(folder: Path) -> Path:
    [part] = folder.glob("part-*.parquet")
    return part


def run_on_logs(logs: Path, out: Path) -> int:
    return main(["run", *TRIPS, "--partitions", "", "--logs", str(logs), "--out", str(out)])


def test_a_truncated_parquet_file_is_named(logs: Path, tmp_path: Path, capsys) -> None:
    part = part_file(logs / "trips" / "trips")
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    assert run_on_logs(logs, tmp_path / "out") == 2
    assert f"{part} is truncated" in the_error(capsys)
    assert not (tmp_path / "out" / "report.json").exists()


def test_a_file_that_is_not_parquet_is_named(logs: Path, tmp_path: Path, capsys) -> None:
    part = part_file(logs / "trips" / "trips")
    part.write_text("trip_id,fare_amount\n1,10.00\n")
    assert run_on_logs(logs, tmp_path / "out") == 2
    assert f"{part} is not a Parquet file" in the_error(capsys)


def test_a_table_that_is_not_parquet_is_named(tmp_path: Path, capsys) -> None:
    (tmp_path / "tables" / "trips").mkdir(parents=True)
    (tmp_path / "tables" / "trips" / "trips.parquet").write_bytes(b"\x00" * 64)
    arguments = ["run", *TRIPS, "--tables", str(tmp_path / "tables"), "--out", str(tmp_path / "out")]
    assert main(arguments) == 2
    assert f"{tmp_path / 'tables' / 'trips' / 'trips.parquet'} is not a Parquet file" in the_error(capsys)


def test_an_empty_log_folder_is_named(logs: Path, tmp_path: Path, capsys) -> None:
    folder = logs / "trips" / "trips"
    shutil.rmtree(folder)
    folder.mkdir()
    assert run_on_logs(logs, tmp_path / "out") == 2
    assert f"change log {folder} is empty" in the_error(capsys)


def test_a_log_left_by_a_killed_write_is_half_written(logs: Path, tmp_path: Path, capsys) -> None:
    """What Spark leaves when killed mid-write: its ``_temporary`` folder, and no ``_SUCCESS``."""
    folder = logs / "trips" / "trips"
    (folder / "_SUCCESS").unlink()
    (folder / "_temporary" / "0").mkdir(parents=True)
    assert run_on_logs(logs, tmp_path / "out") == 2
    assert f"change log {folder} is half-written" in the_error(capsys)


def test_a_csv_value_that_does_not_cast_is_named_by_file_row_and_column(spark, tmp_path: Path, capsys) -> None:
    folder = tmp_path / "tables" / "trips"
    folder.mkdir(parents=True)
    (folder / "trips.csv").write_text(
        "trip_id,passenger_count,fare_amount,trip_distance,pickup_datetime,dropoff_datetime\n"
        "1,2,10.00,1.5,2018-01-01 00:00:00,2018-01-01 00:10:00\n"
        "2,1,ten,2.5,2018-01-01 00:01:00,2018-01-01 00:20:00\n"
    )
    arguments = ["run", *TRIPS, "--tables", str(tmp_path / "tables"), "--out", str(tmp_path / "out")]
    assert main(arguments) == 2
    error = the_error(capsys)
    assert f"{folder / 'trips.csv'}, row 2 (counted from 1 after the header), column fare_amount: 'ten' is not " \
           f"a DECIMAL(8,2)" in error, error


def test_a_delete_of_a_row_never_held_shows_its_values_as_sql_does(spark, tmp_path: Path, capsys) -> None:
    held = (1, 2, Decimal("7.50"), 1.5, datetime(2018, 1, 1, 0, 0), datetime(2018, 1, 1, 0, 10), "insert", 0)
    never = (2, None, Decimal("10.00"), 2.5, datetime(2018, 1, 1, 0, 30), datetime(2018, 1, 1, 0, 45), "delete", 1)
    folder = tmp_path / "logs" / "trips" / "trips"
    spark.createDataFrame([held, never], TRIPS_LOG).coalesce(1).write.parquet(str(folder))
    assert run_on_logs(tmp_path / "logs", tmp_path / "out") == 2
    error = the_error(capsys)
    assert (f"{part_file(folder)}, row 2 (counted from 1): table trips has no row (trip_id = 2, passenger_count = "
            "NULL, fare_amount = 10.00, trip_distance = 2.5, pickup_datetime = 2018-01-01T00:30:00, dropoff_datetime "
            "= 2018-01-01T00:45:00) to delete at version 1") in error


def test_an_unreachable_master_is_named_before_spark_starts(tmp_path: Path, capsys) -> None:
    with socket.socket() as probe:  # a port nothing listens on: bound, then freed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    master = f"spark://127.0.0.1:{port}"
    assert main(["run", *TRIPS, "--master", master, "--out", str(tmp_path / "out")]) == 2
    assert f"error: Spark master {master} is unreachable (connection refused)" in the_error(capsys)


def test_a_malformed_master_is_named(tmp_path: Path, capsys) -> None:
    assert main(["run", *TRIPS, "--master", "bogus://x", "--out", str(tmp_path / "out")]) == 2
    assert the_error(capsys).startswith("error: malformed master URL 'bogus://x'")


def test_a_usage_error_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as exit_status:
        main(["run", "--dataset", "taxis"])
    assert exit_status.value.code == 2
    assert "invalid choice: 'taxis'" in the_error(capsys)


def test_every_data_set_is_checked_before_any_query(logs: Path, tmp_path: Path, capsys) -> None:
    """``--dataset all`` with only the trips logs: the graph's missing log stops the run before trips is checked."""
    out = tmp_path / "out"
    assert main(["run", "--dataset", "all", "--versions", "3", "--partitions", "", "--logs", str(logs),
                 "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no query was checked
    assert captured.err.splitlines() == [
        f"error: no change log at {logs / 'graph' / 'edges'}; write one with `python -m final.spark generate`"]
    assert not (out / "report.json").exists()


def test_an_unforeseen_spark_failure_is_one_line_and_its_trace_goes_to_spark_log(
    spark, logs: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch,
) -> None:
    def failing(spark, query, inputs, version):
        return spark.sql("SELECT raise_error('planted failure')").collect()

    monkeypatch.setattr("final.spark.pipeline.at", failing)
    out = tmp_path / "out"
    assert run_on_logs(logs, out) == 2
    error = the_error(capsys)
    assert "planted failure" in error and error.endswith(f"the full trace is in {out / 'spark.log'}")
    trace = (out / "spark.log").read_text()
    assert "Traceback" in trace and "planted failure" in trace


def test_spark_traces_stay_out_of_the_terminal(logs: Path, tmp_path: Path) -> None:
    """In a process of its own, the JVM's stderr (its ERROR logs and stack traces) goes to spark.log."""
    out = tmp_path / "out"
    arguments = ["run", *TRIPS, "--partitions", "", "--logs", str(logs), "--out", str(out)]
    script = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from final.spark import pipeline\n"
        "from final.spark.__main__ import main\n"
        "pipeline.at = lambda spark, *_: spark.sql(\"SELECT raise_error('planted failure')\").collect()\n"
        f"sys.exit(main({arguments!r}))\n"
    )
    finished = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)
    assert finished.returncode == 2, finished.stderr[-3000:]
    lines = finished.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "planted failure" in lines[0], lines[:20]
    log = (out / "spark.log").read_text()
    assert "ERROR" in log and "\tat org.apache.spark" in log  # the JVM's own stack trace
    assert "Traceback" in log  # and Python's


def small_run(partitions: bool, differences: int = 0) -> PipelineRun:
    """A run of one query over three versions, as ``run_pipeline`` returns it, with made-up times."""
    query = QueryRun("trips", "fares_by_passengers", "SELECT 1", "document 004", versions=[0, 1, 2],
                     rows=[3, 3, 4], incremental_seconds=[0.5, 0.001, 0.001], scratch_seconds=[0.2, 0.2, 0.2],
                     rows_changed=[3, 2, 1],
                     differences=[Difference(1, (None, Decimal("10.00")), 1, 0)] * differences)
    if partitions:
        query.partitioned.append(Partitioned(2, 1.0, 0.1, [], ["final.zip"]))
    return PipelineRun({"rows": 200, "versions": 3}, [query])


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir()}


def test_the_report_carries_parameters_load_rows_changed_and_break_even(tmp_path: Path) -> None:
    """Break-even: final/ totals 0.5, 0.501, 0.502 s against Spark SQL's 0.2, 0.4, 0.6 s, so version 2."""
    report.write_report(small_run(partitions=False, differences=1), str(tmp_path), {"rows": 200})
    written = json.loads((tmp_path / "report.json").read_text())
    assert written["complete"] is True and written["parameters"] == {"rows": 200}
    [query] = written["queries"]
    assert (query["load_ms"], query["rows_changed"], query["break_even_version"]) == (500.0, [3, 2, 1], 2)
    text = (tmp_path / "report.md").read_text()
    assert "| 1 | `(NULL, 10.00)` | 1 | 0 |" in text
    assert "| 500 ms | 2 |" in text and "0: 3, 1: 2, 2: 1" in text


def test_a_report_write_that_fails_keeps_the_previous_report(tmp_path: Path, monkeypatch) -> None:
    report.write_report(small_run(partitions=True), str(tmp_path))
    before = snapshot(tmp_path)
    assert set(before) == set(report.REPORT_FILES)

    def killed(*_):
        raise KeyboardInterrupt  # as a kill would, half-way through the markdown

    monkeypatch.setattr(report, "markdown", killed)
    with pytest.raises(KeyboardInterrupt):
        report.write_report(small_run(partitions=False, differences=1), str(tmp_path))
    assert snapshot(tmp_path) == before  # nothing new beside it, no scratch folder left


def test_leftovers_of_a_killed_report_write_are_removed(tmp_path: Path) -> None:
    gone = 2 ** 22 + 1  # above Linux's default pid_max: no process has it
    (tmp_path / f".tmp-{gone}").mkdir()
    (tmp_path / f".tmp-{gone}" / "report.json").write_text("{}")
    report.write_report(small_run(partitions=False), str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["latency.png", "report.json", "report.md"]


def test_a_run_without_partitions_removes_the_previous_partitions_plot(spark, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["run", *TRIPS, "--partitions", "1", "--out", str(out)]) == 0
    assert (out / "partitions.png").exists()
    first = json.loads((out / "report.json").read_text())
    assert first["complete"] is True and first["parameters"]["partitions"] == "1"
    for query in first["queries"]:
        assert len(query["rows_changed"]) == 3 and query["rows_changed"][0] > 0 and query["load_ms"] > 0
        assert query["break_even_version"] in (None, 0, 1, 2)
    assert main(["run", *TRIPS, "--partitions", "", "--logs", str(out / "logs"), "--out", str(out)]) == 0
    assert not (out / "partitions.png").exists()
    assert "Partitioned on Spark" not in (out / "report.md").read_text()
    assert json.loads((out / "report.json").read_text())["parameters"]["logs"] == str(out / "logs")


def test_a_failed_log_write_keeps_the_previous_log(spark, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    path = tmp_path / "roots"
    changelog.write(spark.createDataFrame([(1, "insert", 0)], "node BIGINT, _change_type STRING, "
                                          "_commit_version BIGINT"), str(path))
    before = snapshot(path)
    failing = spark.range(3).select(F.col("id").alias("node"), F.lit("insert").alias("_change_type"),
                                    F.when(F.col("id") == 2, F.raise_error(F.lit("disk full"))).otherwise(0)
                                    .cast("bigint").alias("_commit_version"))
    with pytest.raises(Exception, match="disk full"):
        changelog.write(failing, str(path))
    assert snapshot(path) == before
    assert sorted(os.listdir(tmp_path)) == ["roots"]  # no temporary folder beside it
    assert sources.read_log(sorted(data_files(str(path))), "roots").arrow.column("node").to_pylist() == [1]


def test_values_are_shown_in_sqls_words() -> None:
    assert doctest.testmod(outputs).failed == 0
