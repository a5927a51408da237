"""``python -m final.spark follow``: change feeds that equal Spark SQL at every version, exactly once across kills.

A follow over a trips log is SIGKILLed at each moment a crash could cut
something short (a version applied but not written, an output file half
renamed, a snapshot written but not recorded, a micro-batch just arrived),
restarted each time with the same checkpoint; then it polls the log while
two more commits land (``generate --append``), applies the first as a
micro-batch brings it, and is killed, and killed once more while applying
the second. What it wrote in the end must equal, file for file and row for
row, what one uninterrupted follow over the same log writes, and both must
add up, at every version, to what Spark SQL computes from scratch. The
other data sets' queries (a loop, a chain of LEFT JOINs) are followed
uninterrupted and held to Spark SQL the same way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from final.spark import pipeline, truth
from final.spark.catalog import DATASETS, QUERIES, queries_of
from final.spark.changelog import MULTIPLICITY, VERSION
from final.spark.follow import KILL_VARIABLE, follow, output_columns, read_output
from final.spark.sqlfloat import sql_row

pytestmark = pytest.mark.slow  # Spark: JVMs, a minute or two

ROOT = Path(__file__).resolve().parents[1]

KILLS = ["apply:2", "output:3", "snapshot:1", "batch:1"]
"""Where the first follow is killed, one run after another on the same checkpoint."""


def environment(kill: str | None = None) -> dict[str, str]:
    """The subprocess's environment: this checkout on the path, and the kill point asked for (if any)."""
    variables = {name: value for name, value in os.environ.items() if name != KILL_VARIABLE}
    variables["PYTHONPATH"] = str(ROOT)
    if kill:
        variables[KILL_VARIABLE] = kill
    return variables


def follow_command(logs: Path, out: Path, *when: str) -> list[str]:
    return [sys.executable, "-m", "final.spark", "follow", "--logs", str(logs), "--out", str(out), *when]


def run_follow(logs: Path, out: Path, kill: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(follow_command(logs, out, "--available-now"), cwd=ROOT, env=environment(kill),
                          capture_output=True, text=True, timeout=600)


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

    # Live: a follow polling every second restarts after the last kill, catches up, sees two appended
    # commits arrive, applies the first (the second waits for a later commit), and is killed; then it is
    # killed once more while applying the second.
    live = subprocess.Popen(follow_command(trips_logs, out, "--trigger-seconds", "1"), cwd=ROOT,
                            env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        appended = subprocess.run(
            [sys.executable, "-m", "final.spark", "generate", "--dataset", "trips", "--append", "2", "--logs",
             str(trips_logs)], cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=600)
        assert appended.returncode == 0, appended.stderr[-2000:]
        assert "now through version 5" in appended.stdout
        written = [out / query.name / "part-00000004.parquet" for query in queries_of("trips")]
        deadline = time.monotonic() + 300
        while not all(path.exists() for path in written) and live.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert all(path.exists() for path in written), live.poll()
        assert all((out / query.name / "part-00000003.parquet").exists() for query in queries_of("trips"))
        assert not (out / "trips_by_distance" / "part-00000005.parquet").exists()
    finally:
        live.kill()
        live.communicate()
    killed = run_follow(trips_logs, out, "apply:1")
    assert killed.returncode == -9, killed.stderr[-2000:]
    finished = run_follow(trips_logs, out)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "restarted from the snapshot at version 4" in finished.stdout
    assert "trips through version 5" in finished.stdout

    # One uninterrupted follow over a copy of the same log, in this process.
    copy = tmp_path / "copy"
    shutil.copytree(trips_logs, copy)
    uninterrupted = tmp_path / "uninterrupted"
    assert follow(spark, str(copy), str(uninterrupted), log=lambda line: None) == {"trips": 5}

    for query in queries_of("trips"):
        assert files(out, query.name) == files(uninterrupted, query.name)
        assert feed(spark, out, query.name) == feed(spark, uninterrupted, query.name), query.name
    check_against_spark(spark, trips_logs, out, "trips", 6)


def check_against_spark(spark, logs_folder: Path, out: Path, dataset: str, versions: int) -> None:
    """Each query's feed under ``out``, added up to each version, is Spark SQL's result there from scratch."""
    paths = {table: str(logs_folder / dataset / table) for table in DATASETS[dataset]}
    logs = pipeline.read_logs(spark, dataset, paths)
    for query in queries_of(dataset):
        assert files(out, query.name) == [f"part-{version:08d}.parquet" for version in range(versions)]
        written = feed(spark, out, query.name)
        held: Counter = Counter()
        for version in range(versions):
            held.update(written.get(version, Counter()))
            assert min(held.values(), default=0) >= 0, (query.name, version)
            now = {row: count for row, count in held.items() if count}
            assert now == dict(truth.from_scratch(spark, query, logs, version)), (query.name, version)
    for frame in logs.values():
        frame.unpersist()


@pytest.mark.parametrize("dataset", ["graph", "enrichment"])
def test_a_follow_of_a_loop_and_of_left_joins_is_spark_sql_at_every_version(spark, tmp_path, dataset) -> None:
    logs = tmp_path / "logs"
    pipeline.make_logs(spark, dataset, str(logs / dataset), rows=300, versions=4, seed=4)
    assert follow(spark, str(logs), str(tmp_path / "out"), log=lambda line: None) == {dataset: 3}
    check_against_spark(spark, logs, tmp_path / "out", dataset, 4)


def test_a_checkpoint_refuses_a_log_written_anew(spark, tmp_path) -> None:
    """A checkpoint follows one log as it grows; a log written again (new files) must not be taken for it."""
    from final.spark.follow import FollowError

    logs, out = tmp_path / "logs", tmp_path / "out"
    pipeline.make_logs(spark, "graph", str(logs / "graph"), rows=100, versions=2)
    assert follow(spark, str(logs), str(out), log=lambda line: None) == {"graph": 1}
    pipeline.make_logs(spark, "graph", str(logs / "graph"), rows=120, versions=2)
    with pytest.raises(FollowError, match=r"was rewritten since checkpoint .* with a new --checkpoint and --out"):
        follow(spark, str(logs), str(out), log=lambda line: None)


def test_follow_refuses_a_folder_without_logs(tmp_path: Path) -> None:
    from final.spark.__main__ import main

    (tmp_path / "empty").mkdir()
    assert main(["follow", "--logs", str(tmp_path / "empty"), "--out", str(tmp_path / "out"),
                 "--available-now"]) == 2
