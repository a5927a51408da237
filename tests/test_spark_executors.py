"""Keyed state on Spark's executors (``final.spark.executors``): the trips queries kept up to date with each
GROUP BY's aggregates in Spark's state store, equal to Spark SQL from scratch at every version.

The command (``python -m final.spark.executors``) follows a trips Delta
table with NaNs, signed zeros and NULLs in it: SIGKILLed during the first
load (every state store committed, no output written), then run to the
end; two more commits land, and it is SIGKILLed again with one query's
output committed, the others' not, nor Spark's commit log; then run to
the end. Every
query's output, summed to each version, must be Spark SQL's answer over the
table as of that version; the restart must have read only the commits after
the first run's; and a micro-batch run again must not be written again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from final.spark import datasets, delta, pipeline
from final.spark.equality import tolerant_columns
from final.spark.executors.changes import MULTIPLICITY, VERSION
from final.spark.executors.lowering import PlacementError, check_placement, placement
from final.spark.follow import KILL_VARIABLE, Bound, output_columns, tables_as_bound
from final.spark.pipeline import compare
from final.spark.sqlfloat import sql_row
from final.spark.tables_and_queries import QUERIES, queries_of
from final.spark.truth import over

pytestmark = pytest.mark.slow  # Spark: JVMs, a few minutes

ROOT = Path(__file__).resolve().parents[1]


def run_executors(logs: Path, out: Path, kill: str | None = None) -> subprocess.CompletedProcess:
    variables = {name: value for name, value in os.environ.items() if name != KILL_VARIABLE}
    variables["PYTHONPATH"] = str(ROOT)
    if kill:
        variables[KILL_VARIABLE] = kill
    command = [sys.executable, "-m", "final.spark.executors", "--logs", str(logs), "--out", str(out),
               "--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=2"]
    return subprocess.run(command, cwd=ROOT, env=variables, capture_output=True, text=True, timeout=900)


def feed(out: Path, name: str) -> dict[int, Counter]:
    """A query's output table as ``{version: Counter(row -> multiplicity change)}``."""
    from deltalake import DeltaTable

    names = output_columns(QUERIES[name])
    changes: dict[int, Counter] = defaultdict(Counter)
    for row in DeltaTable(str(out / name)).to_pyarrow_table().to_pylist():
        changes[row[VERSION]][sql_row(tuple(row[column] for column in names))] += row[MULTIPLICITY]
    return changes


def offsets(out: Path, dataset: str) -> list[int]:
    """The version each micro-batch Spark logged for a data set ended at, by batch id."""
    folder = out / "_checkpoint" / dataset / "offsets"
    ends = {int(path.name): json.loads(path.read_text().splitlines()[-1])["version"]
            for path in folder.iterdir() if path.name.isdigit()}
    return [ends[batch] for batch in sorted(ends)]


@pytest.fixture(scope="module")
def trips(spark, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("trips") / "logs"
    frames = datasets.generate(spark, "trips", 300, seed=7, nan_fraction=0.05)
    pipeline.write_delta(frames, str(folder / "trips"), 3)
    return folder


def test_the_trips_queries_on_the_executors_equal_spark_sql_at_every_version_through_kills(
        spark, trips, tmp_path) -> None:
    logs, out = tmp_path / "logs", tmp_path / "out"
    shutil.copytree(trips, logs)
    table = logs / "trips" / "trips"
    names = [query.name for query in queries_of("trips")]

    killed = run_executors(logs, out, "sink:1")
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert not any((out / name).exists() for name in names)  # state committed, no output written
    first = run_executors(logs, out)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "trips: through version 2" in first.stdout

    pipeline.append_logs(spark, "trips", str(logs / "trips"), 2)
    last = delta.version(str(table))
    killed = run_executors(logs, out, "output:1")
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert len({delta.version(str(out / name)) for name in names}) == 2  # one output committed, not the others
    finished = run_executors(logs, out)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert f"trips: through version {last}" in finished.stdout

    bindings = [Bound("trips", number, number, number) for number in range(last + 1)]
    truths = [tables_as_bound(spark, str(logs / "trips"), "trips", bindings, version) for version in range(last + 1)]
    assert offsets(out, "trips") == [2, last]  # the restart read only the commits after the first run's
    for name in names:
        query, changes, held = QUERIES[name], feed(out, name), Counter()
        for version in range(last + 1):
            held.update(changes.get(version, Counter()))
            now = {row: count for row, count in held.items() if count}
            truth = over(spark, query, truths[version])
            assert compare(version, truth.counts, now, None, tolerant_columns(query.sql, truth.types)) == [], (
                name, version)


def test_placement_says_where_each_step_runs_and_a_join_is_refused() -> None:
    steps = dict((type(node).__name__, where) for node, where in placement(QUERIES["fare_totals"]))
    assert steps["Aggregate"].startswith("executors: transformWithState by its key")
    assert steps["Scan"].startswith("executors: a task per commit")
    with pytest.raises(PlacementError, match=r"enriched_facts: left join .* does not run on the executors yet"):
        check_placement(QUERIES["enriched_facts"])
