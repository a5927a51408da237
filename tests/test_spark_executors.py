"""Keyed state on Spark's executors (``final.spark.executors``): queries kept up to date with each keyed step's
state in Spark's state store, equal to Spark SQL from scratch at every version.

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

from final.spark import datasets, delta, pipeline, sources
from final.spark.equality import tolerant_columns
from final.spark.executors.changes import MULTIPLICITY, VERSION
from final.spark.executors.lowering import PlacementError, check_placement, placement
from final.spark.follow import KILL_VARIABLE, Bound, output_columns, tables_as_bound
from final.spark.incremental import IncrementalQuery
from final.spark.pipeline import compare
from final.spark.sql import SqlQuery, load
from final.spark.sqlfloat import sql_row
from final.spark.tables_and_queries import CATALOG, QUERIES, queries_of
from final.spark.truth import over

pytestmark = pytest.mark.slow  # Spark: JVMs, a few minutes

ROOT = Path(__file__).resolve().parents[1]


def run_executors(logs: Path, out: Path, kill: str | None = None, sql: list[Path] | None = None,
                  partitions: int = 2) -> subprocess.CompletedProcess:
    variables = {name: value for name, value in os.environ.items() if name != KILL_VARIABLE}
    variables["PYTHONPATH"] = str(ROOT)
    if kill:
        variables[KILL_VARIABLE] = kill
    command = [sys.executable, "-m", "final.spark.executors", "--logs", str(logs), "--out", str(out),
               "--master", "local[2]", "--conf", f"spark.sql.shuffle.partitions={partitions}"]
    if sql:
        command += ["--sql", *map(str, sql)]
    return subprocess.run(command, cwd=ROOT, env=variables, capture_output=True, text=True, timeout=900)


def feed(out: Path, query: SqlQuery) -> dict[int, Counter]:
    """A query's output table as ``{version: Counter(row -> multiplicity change)}``."""
    from deltalake import DeltaTable

    name, names = query.name, output_columns(query)
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

    assert offsets(out, "trips") == [2, last]  # the restart read only the commits after the first run's
    assert_spark_sql_at_versions(spark, logs, out, "trips", [QUERIES[name] for name in names])


def binding(logs: Path, dataset: str) -> list[sources.Commit]:
    """The data set's commits in the order the change stream binds them to versions (``sources.binding_order``):
    the ``i``-th is version ``i``."""
    folder = str(logs / dataset)
    return sorted(sources.commits_between(folder, dataset, {}, sources.newest_commits(folder, dataset)),
                  key=sources.binding_order(dataset))


def held_at(changes: dict[int, Counter], version: int) -> dict[tuple, int]:
    """A query's result as of ``version``: its output changes through it, summed."""
    held: Counter = Counter()
    for at in range(version + 1):
        held.update(changes.get(at, Counter()))
    return {row: count for row, count in held.items() if count}


def assert_spark_sql_at_versions(spark, logs: Path, out: Path, dataset: str, queries: list,
                                 versions: list[int] | None = None) -> None:
    """Each query's result as of each of ``versions`` (default: every one) equal to Spark SQL over the tables
    as bound then."""
    folder, commits = str(logs / dataset), binding(logs, dataset)
    bindings = [Bound(commit.table, commit.number, version, version) for version, commit in enumerate(commits)]
    for query in queries:
        changes = feed(out, query)
        assert changes, f"{query.name} wrote no change"
        for version in range(len(commits)) if versions is None else versions:
            truth = over(spark, query, tables_as_bound(spark, folder, dataset, bindings, version))
            assert compare(version, truth.counts, held_at(changes, version), None,
                           tolerant_columns(query.sql, truth.types)) == [], (query.name, version)


def assert_driver_dataflow_at_every_version(logs: Path, out: Path, dataset: str, queries: list) -> None:
    """Each query's result as of every version equal to ``final/``'s dataflow of it (the driver follow's
    engine, itself checked against Spark SQL by test_spark.py) fed the same commits."""
    commits = binding(logs, dataset)
    engines = [IncrementalQuery(query) for query in queries]
    outputs = [feed(out, query) for query in queries]
    for version, commit in enumerate(commits):
        changes = [(change.table, change.record, change.multiplicity)
                   for change in sources.read_commit(str(logs / dataset), commit)]
        for engine, changed in zip(engines, outputs, strict=True):
            engine.apply(version, [change for change in changes if change[0] in engine.query.inputs])
            expected = {row: count for row, count in engine.snapshot.items() if count}
            assert held_at(changed, version) == expected, (engine.query.name, version)


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
        spark, tmp_path) -> None:
    logs, out = tmp_path / "logs", tmp_path / "out"
    frames = datasets.generate(spark, "enrichment", 400, seed=11)
    pipeline.write_delta(frames, str(logs / "enrichment"), 3)
    files = []
    for name, text in ENRICHMENT_SQL.items():
        (tmp_path / f"{name}.sql").write_text(text)
        files.append(tmp_path / f"{name}.sql")
    (tmp_path / "enriched_facts.sql").write_text(QUERIES["enriched_facts"].sql)
    files.append(tmp_path / "enriched_facts.sql")
    queries = [load(str(path), CATALOG) for path in files]
    for query in queries:
        check_placement(query)

    first = run_executors(logs, out, sql=files)
    assert first.returncode == 0, first.stderr[-2000:]
    pipeline.append_logs(spark, "enrichment", str(logs / "enrichment"), 2)
    finished = run_executors(logs, out, sql=files)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert len(offsets(out, "enrichment")) == 2
    assert_driver_dataflow_at_every_version(logs, out, "enrichment", queries)
    assert_spark_sql_at_versions(spark, logs, out, "enrichment", queries, [len(binding(logs, "enrichment")) - 1])


def test_placement_says_where_each_step_runs_and_a_loop_is_refused() -> None:
    steps = dict((type(node).__name__, where) for node, where in placement(QUERIES["fare_totals"]))
    assert steps["Aggregate"].startswith("executors: transformWithState by its key")
    assert steps["Scan"].startswith("executors: a task per commit")
    joins = [where for node, where in placement(QUERIES["enriched_facts"]) if type(node).__name__ == "Join"]
    assert len(joins) == 3 and all(where.startswith("executors: transformWithState by its key") for where in joins)
    with pytest.raises(PlacementError, match=r"reachable: .* does not run on the executors yet"):
        check_placement(QUERIES["reachable"])
