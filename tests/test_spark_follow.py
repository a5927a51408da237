"""``python -m final.spark follow``: change feeds that equal Spark SQL at every version, exactly once across kills.

A follow over a trips log is SIGKILLed at each moment a crash could cut
something short (a version applied but not written, an output file half
renamed, a snapshot written but not recorded, a micro-batch just arrived),
restarted each time with the same checkpoint, then fed two more commits
(``generate --append``) and killed again while applying them. What it
wrote in the end must equal, file for file and row for row, what one
uninterrupted follow over the same log writes, and both must add up, at
every version, to what Spark SQL computes from scratch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from final.spark import pipeline, truth
from final.spark.catalog import QUERIES, queries_of
from final.spark.changelog import MULTIPLICITY, VERSION
from final.spark.follow import KILL_VARIABLE, follow, output_columns, read_output
from final.spark.sqlfloat import sql_row

pytestmark = pytest.mark.slow  # Spark: JVMs, a minute or two

ROOT = Path(__file__).resolve().parents[1]

KILLS = ["apply:2", "output:3", "snapshot:1", "batch:1"]
"""Where the first follow is killed, one run after another on the same checkpoint."""


def run_follow(logs: Path, out: Path, kill: str | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    environment.pop(KILL_VARIABLE, None)
    if kill:
        environment[KILL_VARIABLE] = kill
    return subprocess.run(
        [sys.executable, "-m", "final.spark", "follow", "--logs", str(logs), "--out", str(out), "--available-now"],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600,
    )


def feed(spark, out: Path, name: str) -> dict[int, Counter]:
    """A query's change feed as ``{version: Counter(row -> multiplicity change)}``."""
    query = QUERIES[name]
    names = output_columns(query)
    changes: dict[int, Counter] = {}
    for row in read_output(spark, str(out), query).collect():
        changes.setdefault(row[VERSION], Counter())[sql_row(tuple(row[column] for column in names))] += row[
            MULTIPLICITY]
    return changes


def files(out: Path, name: str) -> list[str]:
    return sorted(path.name for path in (out / name).iterdir())


@pytest.fixture(scope="module")
def trips_logs(spark, tmp_path_factory) -> Path:
    """A trips log of 4 versions, with NaN distances, under ``LOGS/trips/trips``."""
    folder = tmp_path_factory.mktemp("follow") / "logs"
    pipeline.make_logs(spark, "trips", str(folder / "trips"), rows=400, versions=4, nan_fraction=0.03)
    return folder


def test_a_killed_and_restarted_follow_writes_what_an_uninterrupted_one_writes(spark, trips_logs, tmp_path) -> None:
    out = tmp_path / "out"
    for kill in KILLS:
        killed = run_follow(trips_logs, out, kill)
        assert killed.returncode == -9, (kill, killed.stderr[-2000:])
    finished = run_follow(trips_logs, out)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "trips through version 3" in finished.stdout

    appended = subprocess.run(
        [sys.executable, "-m", "final.spark", "generate", "--dataset", "trips", "--append", "2", "--logs",
         str(trips_logs)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        timeout=600)
    assert appended.returncode == 0, appended.stderr[-2000:]
    assert "now through version 5" in appended.stdout
    killed = run_follow(trips_logs, out, "apply:1")
    assert killed.returncode == -9, killed.stderr[-2000:]
    finished = run_follow(trips_logs, out)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "restarted from the snapshot at version 3" in finished.stdout + finished.stderr
    assert "trips through version 5" in finished.stdout

    # One uninterrupted follow over a copy of the same log, in this process.
    copy = tmp_path / "copy"
    shutil.copytree(trips_logs, copy)
    uninterrupted = tmp_path / "uninterrupted"
    assert follow(spark, str(copy), str(uninterrupted), log=lambda line: None) == {"trips": 5}

    logs = pipeline.read_logs(spark, "trips", {"trips": str(trips_logs / "trips" / "trips")})
    for query in queries_of("trips"):
        assert files(out, query.name) == files(uninterrupted, query.name) == [
            f"part-{version:08d}.parquet" for version in range(6)]
        written, expected = feed(spark, out, query.name), feed(spark, uninterrupted, query.name)
        assert written == expected, query.name
        held: Counter = Counter()
        for version in range(6):
            held.update(written.get(version, Counter()))
            assert min(held.values(), default=0) >= 0, (query.name, version)
            now = {row: count for row, count in held.items() if count}
            assert now == dict(truth.from_scratch(spark, query, logs, version)), (query.name, version)
    for frame in logs.values():
        frame.unpersist()


def test_follow_refuses_a_folder_without_logs(tmp_path: Path) -> None:
    from final.spark.__main__ import main

    (tmp_path / "empty").mkdir()
    assert main(["follow", "--logs", str(tmp_path / "empty"), "--out", str(tmp_path / "out"),
                 "--available-now"]) == 2
