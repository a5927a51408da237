"""The pipeline's command line (``python -m final.spark``): its summary, its exit status, its errors.

One run goes through a separate Python whose working directory and
environment do not contain this repository (the driver finds ``final`` by a
path given to it alone): its executors can import ``final`` only from the zip
the driver ships, which the report shows. The other tests call ``main`` in
this process, reusing the suite's Spark session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from final.spark.__main__ import main

pytestmark = pytest.mark.slow  # Spark: a JVM, seconds per test

ROOT = Path(__file__).resolve().parent.parent


def test_run_prints_the_summary_and_ships_final_to_executors(tmp_path: Path) -> None:
    out = tmp_path / "out"
    arguments = ["run", "--dataset", "trips", "--rows", "300", "--versions", "3", "--partitions", "2",
                 "--out", str(out)]
    script = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from final.spark.__main__ import main; "
              f"sys.exit(main({arguments!r}))")
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    finished = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=environment, capture_output=True,
                              text=True, timeout=900)
    assert finished.returncode == 0, finished.stderr[-3000:]
    lines = finished.stdout.strip().splitlines()
    assert lines[-1] == "12 versions checked, 0 differences"
    assert any(line.startswith("speed-up per version after the load") for line in lines)
    # Off a terminal, progress is lines: each phase, and each tenth of a query's versions (3 versions: each one).
    assert "change logs checked; checking each query at every version" in lines
    assert "trips/fare_totals: version 2, 3 of 3 (100%)" in lines
    assert "trips/fare_totals: partitioned over 2 Spark tasks" in lines
    report = json.loads((out / "report.json").read_text())
    assert [query["query"] for query in report["queries"]] == [
        "fares_by_passengers", "fare_totals", "distance_range", "trips_by_distance"]
    assert all(query["agrees"] and query["versions"] == [0, 1, 2] for query in report["queries"])
    imported = {where for query in report["queries"] for run in query["partitioned"]
                for where in run["final_imported_from"]}
    assert imported and all("final.zip" in where for where in imported), imported
    assert (out / "latency.png").stat().st_size > 0 and (out / "partitions.png").stat().st_size > 0
    assert "versions checked" in (out / "report.md").read_text()


@pytest.mark.parametrize("arguments, message", [
    (["run", "--partitions", "two"], "--partitions takes positive ints"),
    (["run", "--conf", "novalue"], "a Spark setting is key=value"),
])
def test_bad_arguments_are_one_line_and_status_2(arguments: list, message: str, capsys) -> None:
    assert main(arguments) == 2
    assert message in capsys.readouterr().err


def test_a_missing_log_is_one_line_and_status_2(spark, tmp_path: Path, capsys) -> None:
    assert main(["run", "--dataset", "trips", "--logs", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: no change log at") and str(tmp_path / "trips" / "trips") in error


def test_a_bad_size_is_one_line_and_status_2(spark, tmp_path: Path, capsys) -> None:
    assert main(["run", "--dataset", "graph", "--rows", "0", "--out", str(tmp_path)]) == 2
    assert "a data set's size is a positive number of rows" in capsys.readouterr().err


def test_a_jvm_that_does_not_start_is_one_clear_error(tmp_path: Path) -> None:
    """JAVA_GATEWAY_EXITED (here a ``java`` that exits at once) is a SparkUnavailableError saying what to check."""
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text("#!/bin/sh\nexit 1\n")
    java.chmod(0o755)
    script = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from final.spark.session import spark_session, "
              f"SparkUnavailableError\ntry:\n    spark_session()\nexcept SparkUnavailableError as error:\n"
              f"    print(error)\n    sys.exit(3)")
    environment = dict(os.environ, JAVA_HOME=str(tmp_path))
    finished = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=environment, capture_output=True,
                              text=True, timeout=300)
    assert finished.returncode == 3, finished.stderr[-2000:]
    assert "Spark's JVM exited while starting" in finished.stdout and "Java 17" in finished.stdout
