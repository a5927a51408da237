"""Keyed state on Spark's executors (``follow --state executors``): queries kept up to date with each keyed
step's state in Spark's state store, equal to Spark SQL from scratch at every version.

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

Queries over 003's four tables take every other keyed step (joins of each
kind, DISTINCT, set operations, a top-k, a window, NOT IN, a scalar
subquery, a global aggregate) through two versions of each table; ``verify``
must find them equal to Spark SQL at every version. A key's state carried
from one micro-batch to the next is the trips test's (the same state
store calls), and tests/test_executors_steps.py runs these steps on many
more shapes and micro-batches without Spark.
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


def killed(logs: Path, out: Path, kill: str) -> subprocess.CompletedProcess:
    """``follow --state executors --available-now`` in a process of its own, which SIGKILLs itself at ``kill``
    (``FINAL_FOLLOW_KILL``)."""
    variables = {name: value for name, value in os.environ.items() if name != KILL_VARIABLE}
    variables.update({"PYTHONPATH": str(ROOT), KILL_VARIABLE: kill})
    command = [sys.executable, "-m", "final.spark", "follow", "--state", "executors", "--logs", str(logs), "--out",
               str(out), "--available-now", "--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=2"]
    return subprocess.run(command, cwd=ROOT, env=variables, capture_output=True, text=True, timeout=900)


def follow_here(logs: Path, out: Path, capsys, sql: list[Path] | None = None) -> str:
    """What ``follow --state executors --available-now`` prints in this process, with its Spark session (no
    JVM to start, as ``killed`` starts one); it must exit 0."""
    command = ["follow", "--state", "executors", "--logs", str(logs), "--out", str(out), "--available-now"]
    capsys.readouterr()
    status = main(command + (["--sql", *map(str, sql)] if sql else []))
    printed = capsys.readouterr()
    assert status == 0, printed.err[-2000:]
    return printed.out


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

    run = killed(logs, out, "sink:1")
    assert run.returncode == -9, run.stderr[-2000:]
    assert not any((out / name).exists() for name in names)  # state committed, no output written
    assert f"followed: trips through version 2; output tables in {out}" in follow_here(logs, out, capsys)

    pipeline.append_logs(spark, "trips", str(logs / "trips"), 2)
    last = delta.version(str(table))
    run = killed(logs, out, "output:1")
    assert run.returncode == -9, run.stderr[-2000:]
    written = [max(delta.dataset_versions(str(out / name)).values()) for name in names]
    assert written == [last] + [2] * (len(names) - 1)  # one output committed, not the others
    finished = follow_here(logs, out, capsys)
    assert "trips: restarted at version 2, from Spark's checkpoint" in finished
    assert f"followed: trips through version {last}" in finished
    assert offsets(out, "trips") == [2, last]  # the restart read only the commits after the first run's

    assert main(["verify", "--logs", str(logs), "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{(last + 1) * len(names)} versions checked, 0 differences"
    assert main(["status", "--logs", str(logs), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == (f"trips: {last + 1} of {last + 1} commits bound, applied through "
                                               f"version {last} of {last} (caught up); state on the executors")
    assert main(["follow", "--logs", str(logs), "--out", str(out), "--available-now"]) == 2
    assert capsys.readouterr().err.startswith(
        f"error: checkpoint {out / '_checkpoint' / 'trips'} belongs to a follow with --state executors, and this one "
        f"has --state driver")


ENRICHMENT_SQL = {
    "inner_chain": "SELECT f.fact_id, u.name, a.street FROM facts f JOIN users u ON f.user_id = u.id "
                   "JOIN addrs a ON u.addr_id = a.id",
    "by_name": "SELECT u.name, COUNT(*) AS n, SUM(f.amount) AS total FROM facts f JOIN users u ON f.user_id = u.id "
               "GROUP BY u.name",
    "users_seen": "SELECT DISTINCT user_id FROM facts",
    "idle_addrs": "SELECT id FROM addrs EXCEPT SELECT addr_id FROM users",
    "top_amounts": "SELECT fact_id, amount FROM facts ORDER BY amount DESC, fact_id LIMIT 5",
    "ranked": "SELECT user_id, fact_id, row_number() OVER (PARTITION BY user_id ORDER BY amount DESC, fact_id) AS rn "
              "FROM facts",
    "unknown_users": "SELECT fact_id FROM facts WHERE user_id NOT IN (SELECT id FROM users WHERE name <> 'a')",
    "fact_counts": "SELECT u.id, (SELECT COUNT(*) FROM facts f WHERE f.user_id = u.id) AS n FROM users u",
    "every_id": "SELECT user_id FROM facts UNION ALL SELECT id FROM users",
    "none_large": "SELECT COUNT(*) AS n, MAX(amount) AS top FROM facts WHERE amount > 10000",
}
"""Queries over 003's tables with every keyed step the executors keep besides GROUP BY: joins of each kind (the
built-in enriched_facts: LEFT; a three-input delta join as binary joins; a join into a GROUP BY), DISTINCT,
EXCEPT, a top-k, a window, NOT IN, a scalar subquery (a LEFT join with COUNT's 0), UNION ALL, and a global
aggregate that no row ever reaches (its row over no rows, from version 0 on)."""


def test_joins_distinct_set_operations_top_k_and_windows_on_the_executors_equal_spark_sql(
        spark, tmp_path, capsys) -> None:
    logs, out = tmp_path / "logs", tmp_path / "out"
    frames = datasets.generate(spark, "enrichment", 400, seed=11)
    pipeline.write_delta(frames, str(logs / "enrichment"), 2)
    files = []
    for name, text in {**ENRICHMENT_SQL, "enriched_facts": QUERIES["enriched_facts"].sql}.items():
        files.append(tmp_path / f"{name}.sql")
        files[-1].write_text(text)

    follow_here(logs, out, capsys, files)
    assert main(["verify", "--logs", str(logs), "--out", str(out), "--sql", *map(str, files)]) == 0
    checked = capsys.readouterr().out.splitlines()[-1]
    assert checked.endswith("versions checked, 0 differences") and not checked.startswith("0 "), checked


def test_placement_says_where_each_step_runs_and_a_loop_is_refused() -> None:
    steps = dict((type(node).__name__, where) for node, where in placement(QUERIES["fare_totals"]))
    assert steps["Aggregate"].startswith("executors: transformWithState by its key")
    assert steps["Scan"].startswith("executors: a task per commit")
    joins = [where for node, where in placement(QUERIES["enriched_facts"]) if type(node).__name__ == "Join"]
    assert len(joins) == 3 and all(where.startswith("executors: transformWithState by its key") for where in joins)
    with pytest.raises(PlacementError, match=r"reachable: .* stays on the driver: a loop's rounds .*; follow this "
                                             r"query with --state driver"):
        check_placement(QUERIES["reachable"])
