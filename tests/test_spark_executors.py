"""Keyed state on Spark's executors (``follow --state executors``): the trips queries kept up to date with each
GROUP BY's aggregates in Spark's state store, equal to Spark SQL from scratch at every version.

The command (``python -m final.spark follow --state executors
--available-now``) follows a trips Delta table with NaNs, signed zeros and
NULLs in it: SIGKILLed during the first load (every state store committed,
no output written), then run to the end; two more commits land, and it is
SIGKILLed again with one query's output committed, the others' not, nor
Spark's commit log; then run to the end. ``verify`` must find every query's
output, summed to each version, equal to Spark SQL's answer over the table
as of that version; ``status`` must say the follow is caught up with its
state on the executors; the restart must have read only the commits after
the first run's; and the driver's follow must refuse to go on from that
checkpoint.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from final.spark import datasets, delta, pipeline
from final.spark.__main__ import main
from final.spark.executors.lowering import PlacementError, check_placement, placement
from final.spark.follow import KILL_VARIABLE
from final.spark.tables_and_queries import QUERIES, queries_of

pytestmark = pytest.mark.slow  # Spark: JVMs, a few minutes

ROOT = Path(__file__).resolve().parents[1]


def run_executors(logs: Path, out: Path, kill: str | None = None) -> subprocess.CompletedProcess:
    variables = {name: value for name, value in os.environ.items() if name != KILL_VARIABLE}
    variables["PYTHONPATH"] = str(ROOT)
    if kill:
        variables[KILL_VARIABLE] = kill
    command = [sys.executable, "-m", "final.spark", "follow", "--state", "executors", "--logs", str(logs), "--out",
               str(out), "--available-now", "--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=2"]
    return subprocess.run(command, cwd=ROOT, env=variables, capture_output=True, text=True, timeout=900)


def offsets(out: Path, dataset: str) -> list[int]:
    """The version each micro-batch Spark logged for a data set ended at, by batch id."""
    folder = out / "_checkpoint" / dataset / "spark" / "offsets"
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
        spark, trips, tmp_path, capsys) -> None:
    logs, out = tmp_path / "logs", tmp_path / "out"
    shutil.copytree(trips, logs)
    table = logs / "trips" / "trips"
    names = [query.name for query in queries_of("trips")]

    killed = run_executors(logs, out, "sink:1")
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert not any((out / name).exists() for name in names)  # state committed, no output written
    first = run_executors(logs, out)
    assert first.returncode == 0, first.stderr[-2000:]
    assert f"followed: trips through version 2; output tables in {out}" in first.stdout

    pipeline.append_logs(spark, "trips", str(logs / "trips"), 2)
    last = delta.version(str(table))
    killed = run_executors(logs, out, "output:1")
    assert killed.returncode == -9, killed.stderr[-2000:]
    written = [max(delta.dataset_versions(str(out / name)).values()) for name in names]
    assert written == [last] + [2] * (len(names) - 1)  # one output committed, not the others
    finished = run_executors(logs, out)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "trips: restarted at version 2, from Spark's checkpoint" in finished.stdout
    assert f"followed: trips through version {last}" in finished.stdout
    assert offsets(out, "trips") == [2, last]  # the restart read only the commits after the first run's

    capsys.readouterr()
    assert main(["verify", "--logs", str(logs), "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{(last + 1) * len(names)} versions checked, 0 differences"
    assert main(["status", "--logs", str(logs), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == (f"trips: {last + 1} of {last + 1} commits bound, applied through "
                                               f"version {last} of {last} (caught up); state on the executors")
    assert main(["follow", "--logs", str(logs), "--out", str(out), "--available-now"]) == 2
    assert capsys.readouterr().err.startswith(
        f"error: checkpoint {out / '_checkpoint' / 'trips'} belongs to a follow with --state executors, and this one "
        f"has --state driver")


def test_placement_says_where_each_step_runs_and_a_join_is_refused() -> None:
    steps = dict((type(node).__name__, where) for node, where in placement(QUERIES["fare_totals"]))
    assert steps["Aggregate"].startswith("executors: transformWithState by its key")
    assert steps["Scan"].startswith("executors: a task per commit")
    with pytest.raises(PlacementError, match=r"enriched_facts: left join .* does not run on the executors yet; "
                                             r"follow this query with --state driver"):
        check_placement(QUERIES["enriched_facts"])
