"""``python -m final.spark follow`` on Delta tables and Parquet change logs: nothing dropped, nothing misplaced.

The main test follows 003's four enrichment tables, as Delta tables, through
everything a data engineer's week brings: SIGKILLs at start-up, as a
micro-batch arrives, between one version's output and the next, and with
every output written but the checkpoint not switched; a live follow while
commits land table by table, stopped by SIGTERM; killed again while applying
the next commits; stopped by SIGINT. What it wrote must equal, version by
version, what one uninterrupted follow of the same tables writes, and add
up at every version to Spark SQL's answer over each table's files as of the
commit bound there (``follow.verify``). Then every kind of bad commit is
refused with one line naming it, and nothing is written for it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pyarrow
import pytest

from final.spark import datasets, delta, pipeline, sources
from final.spark.changelog import MULTIPLICITY, VERSION
from final.spark.follow import KILL_VARIABLE, FollowError, follow, lag, output_columns, read_output, verify
from final.spark.sqlfloat import sql_row
from final.spark.tables_and_queries import QUERIES, TABLES, queries_of

pytestmark = pytest.mark.slow  # Spark: JVMs, a few minutes

ROOT = Path(__file__).resolve().parents[1]


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


def live_follow(logs: Path, out: Path, kill: str | None = None) -> subprocess.Popen:
    return subprocess.Popen(follow_command(logs, out, "--trigger-seconds", "1"), cwd=ROOT, env=environment(kill),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def append(logs: Path, dataset: str, commits: int) -> None:
    """``generate --append``: the commits land table by table, one Delta commit at a time."""
    done = subprocess.run([sys.executable, "-m", "final.spark", "generate", "--dataset", dataset, "--append",
                           str(commits), "--logs", str(logs)], cwd=ROOT, env=environment(), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def commits_in(logs: Path, dataset: str) -> int:
    return sum(delta.version(str(logs / dataset / table)) + 1 for table in pipeline.DATASETS[dataset])


def applied(out: Path, dataset: str) -> int:
    state = out / "_checkpoint" / dataset / "state.json"
    return json.loads(state.read_text())["version"] if state.exists() else -1


def wait_until(done, process: subprocess.Popen, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not done() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    assert done(), (process.poll(), process.stderr.read() if process.poll() is not None else "still running")


def stopped_once_caught_up(live: subprocess.Popen, logs: Path, out: Path, stop: int, meanwhile=None
                           ) -> tuple[str, str]:
    """Wait until the live follow of enrichment has applied every commit (and, after ``meanwhile`` runs, every
    commit again), then send it ``stop``; what it printed."""
    try:
        for work in (meanwhile, None) if meanwhile else (None,):
            wait_until(lambda: applied(out, "enrichment") == commits_in(logs, "enrichment") - 1, live)
            if work:
                work()
        live.send_signal(stop)
        return live.communicate(timeout=120)
    finally:
        live.kill()


def feed(spark, out: Path, name: str) -> dict[int, Counter]:
    """A query's output feed as ``{version: Counter(row -> multiplicity change)}``."""
    query = QUERIES[name]
    names = output_columns(query)
    changes: dict[int, Counter] = {}
    for row in read_output(spark, str(out), query).collect():
        changes.setdefault(row[VERSION], Counter())[sql_row(tuple(row[column] for column in names))] += row[
            MULTIPLICITY]
    return {version: {row: count for row, count in counter.items() if count} for version, counter in changes.items()}


def delta_data_set(spark, folder: Path, dataset: str, rows: int, versions: int, **options) -> Path:
    """``dataset`` generated at ``rows`` and written as Delta tables under ``folder/dataset``; ``folder``."""
    frames = datasets.generate(spark, dataset, rows, **options)
    pipeline.write_delta(frames, str(folder / dataset), versions)
    return folder


@pytest.fixture(scope="module")
def enrichment(spark, tmp_path_factory) -> Path:
    return delta_data_set(spark, tmp_path_factory.mktemp("enrichment") / "logs", "enrichment", 300, 3, seed=5)


def test_a_live_follow_of_four_tables_killed_and_stopped_equals_an_uninterrupted_one_and_spark_sql(
        spark, enrichment, tmp_path) -> None:
    logs, out = tmp_path / "logs", tmp_path / "out"
    shutil.copytree(enrichment, logs)
    for kill in ["startup:1", "batch:1", "output:2", "checkpoint:1"]:
        killed = run_follow(logs, out, kill)
        assert killed.returncode == -9, (kill, killed.stdout[-2000:], killed.stderr[-2000:])

    # Live, while two versions of commits land table by table; stopped by SIGTERM once all are applied.
    live = live_follow(logs, out)
    stdout, stderr = stopped_once_caught_up(live, logs, out, signal.SIGTERM, lambda: append(logs, "enrichment", 2))
    assert live.returncode == 143, stderr[-2000:]
    assert "stopped by SIGTERM at a micro-batch boundary" in stdout.splitlines()[-1]

    # Killed while applying the next commits; then a live restart catches up and is stopped by SIGINT.
    live = live_follow(logs, out, "apply:2")
    try:
        append(logs, "enrichment", 1)
        assert live.wait(timeout=300) == -9
    finally:
        live.kill()
    live = live_follow(logs, out)
    stdout, stderr = stopped_once_caught_up(live, logs, out, signal.SIGINT)
    assert live.returncode == 130, stderr[-2000:]
    assert stdout.splitlines()[-1].startswith("follow: stopped by SIGINT")
    assert "Traceback" not in stdout + stderr
    finished = run_follow(logs, out)
    assert finished.returncode == 0, finished.stderr[-2000:]
    last = commits_in(logs, "enrichment") - 1
    assert f"enrichment through version {last}" in finished.stdout

    # One uninterrupted follow over a copy of the same tables, in this process.
    copy, uninterrupted = tmp_path / "copy", tmp_path / "uninterrupted"
    shutil.copytree(logs, copy)
    assert follow(spark, str(copy), str(uninterrupted), log=lambda line: None) == {"enrichment": last}
    assert (out / "_checkpoint" / "enrichment" / "binding.jsonl").read_text() == (
        uninterrupted / "_checkpoint" / "enrichment" / "binding.jsonl").read_text()
    for query in queries_of("enrichment"):
        assert delta.version(str(out / query.name)) == last  # a version for every version, changed or not
        assert feed(spark, out, query.name) == feed(spark, uninterrupted, query.name)
    checked, mismatches = verify(spark, str(logs), str(out))
    assert (checked, mismatches) == (last + 1, [])


def test_a_follow_of_a_loop_and_of_many_groups_is_spark_sql_at_every_version(spark, tmp_path) -> None:
    logs = delta_data_set(spark, tmp_path / "logs", "graph", 200, 3, seed=4)
    delta_data_set(spark, logs, "trips", 300, 3, nan_fraction=0.05)
    out = tmp_path / "out"
    reached = follow(spark, str(logs), str(out), log=lambda line: None)
    assert reached == {"trips": 2, "graph": commits_in(logs, "graph") - 1}
    checked, mismatches = verify(spark, str(logs), str(out))
    assert mismatches == [] and checked == 3 * 4 + reached["graph"] + 1
    # A changed group is an update in place: its key stays, its other columns change.
    kinds = Counter(delta.change_feed(str(out / "fare_totals")).column("_change_type").to_pylist())
    assert kinds["update_preimage"] == kinds["update_postimage"] > 0
    keys = [row["trip_distance"] for row in delta.change_feed(str(out / "trips_by_distance")).to_pylist()]
    assert all(str(key) != "-0.0" for key in keys) and any(key == 0.0 for key in keys)  # Spark SQL writes 0.0


def test_verify_reports_an_output_row_that_is_not_spark_sqls(spark, tmp_path, monkeypatch, capsys) -> None:
    from final.spark.__main__ import main

    logs = delta_data_set(spark, tmp_path / "logs", "trips", 200, 2)
    out = tmp_path / "out"
    follow(spark, str(logs), str(out), log=lambda line: None)
    feed_of = delta.change_feed
    monkeypatch.setattr(delta, "change_feed", lambda path: feed_of(path).slice(1))  # one row lost
    assert main(["verify", "--logs", str(logs), "--out", str(out)]) == 1
    printed = capsys.readouterr().out.splitlines()
    checked, _, differences = printed[-1].partition(" versions checked, ")
    assert checked == "8" and int(differences.split()[0]) >= 4
    assert sum(" at version 0: " in line and line.endswith("Spark SQL 1, the follow 0") for line in printed) == 4


# Bad commits: each refused with one line naming it, nothing written for it.

TRIPS = TABLES["trips"]


def trip(trip_id: int, passengers: int | None = 1, fare: str | None = "10.00") -> dict:
    import datetime as dt

    pickup = dt.datetime(2018, 1, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=trip_id)
    return {"trip_id": trip_id, "passenger_count": passengers, "fare_amount": None if fare is None else Decimal(fare),
            "trip_distance": 1.5, "pickup_datetime": pickup, "dropoff_datetime": pickup + dt.timedelta(minutes=9)}


def parquet_commit(logs: Path, rows: list[dict], changes: list[str | None], versions: list[int | None],
                   types: dict | None = None) -> None:
    """Write one file of trips changes (the columns of ``rows``, typed as the table has them unless ``types``
    says otherwise) into a Parquet data set, and mark it as the next commit."""
    import pyarrow.parquet

    typed = sources.table_schema("trips")
    table = pyarrow.table({
        **{name: pyarrow.array([row[name] for row in rows], type=(types or {}).get(name, typed.field(name).type))
           for name in rows[0]},
        "_change_type": pyarrow.array(changes, pyarrow.string()),
        "_commit_version": pyarrow.array(versions, pyarrow.int64()),
    })
    name = f"part-bad-{time.monotonic_ns()}.parquet"
    pyarrow.parquet.write_table(table, logs / "trips" / "trips" / name)
    sources.write_marker(str(logs / "trips"), {"trips": [name]})


@pytest.fixture(scope="module")
def parquet_trips(spark, tmp_path_factory) -> Path:
    """A trips change log in the Parquet layout, 2 versions, already marked as commit 0."""
    folder = tmp_path_factory.mktemp("parquet") / "logs"
    pipeline.make_logs(spark, "trips", str(folder / "trips"), rows=200, versions=2)
    return folder


def followed(spark, source: Path, tmp_path: Path) -> tuple[Path, Path, dict]:
    """A copy of ``source`` followed once: the copy, the output folder, and what the outputs hold."""
    logs, out = tmp_path / "logs", tmp_path / "out"
    shutil.copytree(source, logs)
    follow(spark, str(logs), str(out), log=lambda line: None)
    return logs, out, written(out)


def written(out: Path) -> dict:
    """Each output table's version and the binding: what a refused commit must leave as it was."""
    return {"binding": (out / "_checkpoint" / "trips" / "binding.jsonl").read_text(),
            **{query.name: delta.version(str(out / query.name)) for query in queries_of("trips")}}


BAD_PARQUET = {
    "a missing column": (lambda logs: parquet_commit(
        logs, [{k: v for k, v in trip(9001).items() if k != "fare_amount"}], ["insert"], [2]),
        r"part-bad-\d+\.parquet: column fare_amount is missing; table trips has the columns"),
    "an upper-case change type": (lambda logs: parquet_commit(logs, [trip(9001)], ["INSERT"], [2]),
                                  r"row 1 \(counted from 1\), column _change_type: 'INSERT' is not one of Delta's"),
    "an upsert": (lambda logs: parquet_commit(logs, [trip(9001), trip(9002)], ["insert", "upsert"], [2, 2]),
                  r"row 2 \(counted from 1\), column _change_type: 'upsert' is not one of"),
    "a NULL change type": (lambda logs: parquet_commit(logs, [trip(9001)], [None], [2]),
                           r"column _change_type: NULL is not one of Delta's change types"),
    "a NULL version": (lambda logs: parquet_commit(logs, [trip(9001)], ["insert"], [None]),
                       r"row 1 \(counted from 1\), column _commit_version: NULL is not a version"),
    "a delete of a row never inserted": (lambda logs: parquet_commit(logs, [trip(9001)], ["delete"], [2]),
                                         r"row 1 \(counted from 1\): table trips has no row \(trip_id = 9001, "
                                         r"passenger_count = 1, fare_amount = 10.00, .*\) to delete at version 2"),
    "a version already applied": (lambda logs: parquet_commit(logs, [trip(9001)], ["insert"], [1]),
                                  r"brings changes at version 1, but the follow has bound every version through 1"),
    "passenger_count as text": (lambda logs: parquet_commit(
        logs, [{**trip(9001), "passenger_count": "1"}], ["insert"], [2], {"passenger_count": pyarrow.string()}),
        r"column passenger_count is STRING, but table trips has it as INT; write it with that type"),
}


@pytest.mark.parametrize("case", list(BAD_PARQUET))
def test_a_bad_parquet_commit_is_refused_naming_file_row_and_column_and_nothing_is_written(
        spark, parquet_trips, tmp_path, case) -> None:
    logs, out, before = followed(spark, parquet_trips, tmp_path)
    make, message = BAD_PARQUET[case]
    make(logs)
    with pytest.raises(FollowError, match=message):
        follow(spark, str(logs), str(out), log=lambda line: None)
    assert written(out) == before


def test_a_commit_is_applied_only_once_its_marker_lands_and_pandas_timestamps_are_taken(
        spark, parquet_trips, tmp_path) -> None:
    import pandas
    import pyarrow.parquet

    logs, out, before = followed(spark, parquet_trips, tmp_path)
    frame = pandas.DataFrame([trip(9001, passengers=2, fare="4.50")]).astype({"passenger_count": "Int32"})
    frame["pickup_datetime"] = frame["pickup_datetime"].astype("datetime64[ns, UTC]")
    frame["_change_type"], frame["_commit_version"] = "insert", 2
    table = pyarrow.Table.from_pandas(frame, preserve_index=False)
    assert table.schema.field("pickup_datetime").type.unit == "ns"
    pyarrow.parquet.write_table(table, logs / "trips" / "trips" / "part-late.parquet")
    assert follow(spark, str(logs), str(out), log=lambda line: None) == {"trips": 1}  # no marker: not there yet
    assert written(out) == before

    # run reads what the markers name too, through the same check: the nanoseconds, whole microseconds, are taken.
    paths = {"trips": str(logs / "trips" / "trips")}
    assert 9001 not in {row["trip_id"] for row in pipeline.read_logs(spark, "trips", paths)["trips"].collect()}
    sources.write_marker(str(logs / "trips"), {"trips": ["part-late.parquet"]})
    [late] = pipeline.read_logs(spark, "trips", paths)["trips"].where("trip_id = 9001").collect()
    assert late["pickup_datetime"] == trip(9001)["pickup_datetime"].replace(tzinfo=None)  # UTC, as Spark's rows
    assert follow(spark, str(logs), str(out), log=lambda line: None) == {"trips": 2}
    assert verify(spark, str(logs), str(out)) == (12, [])


def test_bad_delta_tables_are_refused(spark, tmp_path) -> None:
    import pandas
    from deltalake import write_deltalake

    frame = pandas.DataFrame([trip(1), trip(2, passengers=None)])  # passenger_count: pandas' float64, or int64
    path = tmp_path / "logs" / "trips" / "trips"
    write_deltalake(str(path), frame, configuration=delta.FEED)
    with pytest.raises(FollowError, match=r"table trips .*commit 0 .*: column passenger_count is DOUBLE, but table "
                                          r"trips has it as INT; write it with that type \(e.g. pandas: "
                                          r"\.astype\('Int32'\)\)"):
        follow(spark, str(tmp_path / "logs"), str(tmp_path / "out"), log=lambda line: None)
    shutil.rmtree(path)
    write_deltalake(str(path), frame.astype({"passenger_count": "Int32"}))  # no change data feed
    with pytest.raises(FollowError, match=r"commit 0 .*: the table has no change data feed; create it with the "
                                          r"property delta.enableChangeDataFeed = true"):
        follow(spark, str(tmp_path / "logs"), str(tmp_path / "out2"), log=lambda line: None)
    assert not (tmp_path / "out2" / "fare_totals").exists()


def test_a_data_set_missing_a_table_is_refused_not_skipped(spark, enrichment, tmp_path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(enrichment, logs)
    shutil.rmtree(logs / "enrichment" / "agent")
    with pytest.raises(FollowError, match=r"data set 'enrichment' has no table 'agent': .* is not a folder"):
        follow(spark, str(logs), str(tmp_path / "out"), log=lambda line: None)


def test_a_bad_commit_exits_2_with_one_error_line(parquet_trips, tmp_path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(parquet_trips, logs)
    parquet_commit(logs, [trip(9001)], ["upsert"], [2])
    done = run_follow(logs, tmp_path / "out")
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: ") and "'upsert'" in done.stderr


def test_a_checkpoint_refuses_tables_written_anew(spark, tmp_path) -> None:
    logs = delta_data_set(spark, tmp_path / "logs", "graph", 100, 3)
    out = tmp_path / "out"
    follow(spark, str(logs), str(out), log=lambda line: None)
    delta_data_set(spark, logs, "graph", 120, 2)
    with pytest.raises(FollowError, match=r"bound commit 0 of table edges, which .* holds as made at another time "
                                          r"\(the table was written again\): .*follow them with a new --out"):
        follow(spark, str(logs), str(out), log=lambda line: None)


def trips_table(logs: Path, commits: list[list[dict]]) -> Path:
    """``logs/trips/trips``, a Delta table of trips (change data feed on) with one commit per list of rows."""
    from deltalake import write_deltalake

    path = logs / "trips" / "trips"
    for rows in commits:
        write_deltalake(str(path), pyarrow.Table.from_pylist(rows, schema=sources.table_schema("trips")),
                        mode="append", configuration=delta.FEED)
    return path


def test_available_now_applies_every_commit_there_when_it_starts_after_a_kill(tmp_path) -> None:
    """Killed as its micro-batch arrived, a follow leaves that batch in Spark's offset log, not done; a commit
    lands; ``--available-now`` must apply it too. Spark runs a source without ``SupportsTriggerAvailableNow``
    for one micro-batch, the one its log holds: it said "through version 2" and left commit 3 unbound."""
    logs, out = tmp_path / "logs", tmp_path / "out"
    path = trips_table(logs, [[trip(1)], [trip(2)], [trip(3)]])
    assert run_follow(logs, out, "batch:1").returncode == -9
    trips_table(logs, [[trip(4)]])
    assert delta.version(str(path)) == 3
    finished = run_follow(logs, out)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "followed: trips through version 3" in finished.stdout
    assert [str(found) for found in lag(str(logs), str(out))] == [
        "trips: 4 of 4 commits bound, applied through version 3 of 3 (caught up); state on the driver"]


def test_a_restart_after_vacuum_says_so_in_one_line_and_exits_2(tmp_path) -> None:
    """VACUUM with no retention removes the files of the version a restart reads its table as of: the restart
    says so in one line, exit 2. It aborted after that line (``terminate called without an active
    exception``, exit 134): ``deltalake``'s reader handed Arrow a file system written in Python."""
    from deltalake import DeltaTable

    logs, out = tmp_path / "logs", tmp_path / "out"
    path = trips_table(logs, [[trip(number)] for number in range(8)])  # eight files, all read at a restart
    assert run_follow(logs, out).returncode == 0
    DeltaTable(str(path)).delete("trip_id >= 0")  # every file removed, then deleted
    DeltaTable(str(path)).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    for _ in range(2):
        restarted = run_follow(logs, out)
        assert restarted.returncode == 2, restarted.stderr[-2000:]
        assert restarted.stderr.count("\n") == 1 and restarted.stderr.startswith(
            f"error: table trips ({path}) as of commit 7 does not read ("), restarted.stderr
        assert "if VACUUM removed its files, follow the tables anew" in restarted.stderr


def test_a_commit_whose_changes_vacuum_removed_is_named(tmp_path, capsys) -> None:
    from deltalake import DeltaTable

    from final.spark.__main__ import main

    logs = tmp_path / "logs"
    path = trips_table(logs, [[trip(1), trip(2)]])
    DeltaTable(str(path)).delete("trip_id = 2")
    DeltaTable(str(path)).delete("trip_id = 1")
    DeltaTable(str(path)).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    assert main(["follow", "--logs", str(logs), "--out", str(tmp_path / "out"), "--available-now"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and error.startswith(f"error: table trips ({path}), commit 0 "), error
    assert "its change data feed does not read" in error and "VACUUM must keep the files" in error


def test_outputs_optimized_between_follows_and_a_kill_between_outputs_write_each_version_once(spark, tmp_path) -> None:
    """Each output commit carries the follow's transaction identifier, so OPTIMIZE committing to the output
    tables between two follows does not stop the next one (it did: "output table ... is at version 4, but
    this follow is at version 3"), and a restart after a kill between one query's output and the next writes
    each data set version once to each output table (a MERGE committed twice can leave the change feed's sum
    unchanged, so the tables' commits are counted too)."""
    from deltalake import DeltaTable

    logs, out = tmp_path / "logs", tmp_path / "out"
    # New groups at each version: a MERGE that only inserts adds a file, so each output table has four.
    trips_table(logs, [[trip(3 * commit + number, passengers=3 * commit + number) for number in range(3)]
                       for commit in range(4)])
    assert follow(spark, str(logs), str(out), log=lambda line: None) == {"trips": 3}
    for query in queries_of("trips"):
        DeltaTable(str(out / query.name)).optimize.compact()
    assert all(delta.version(str(out / query.name)) == 4 for query in queries_of("trips"))  # OPTIMIZE committed
    trips_table(logs, [[trip(100 + commit, passengers=commit)] for commit in range(2)])
    assert run_follow(logs, out, "output:2").returncode == -9  # version 4 written to one output, not the others
    finished = run_follow(logs, out)
    assert finished.returncode == 0 and "trips through version 5" in finished.stdout, finished.stderr[-2000:]
    assert verify(spark, str(logs), str(out)) == (6 * len(queries_of("trips")), [])
    for query in queries_of("trips"):
        stamped = Counter(entry.get(delta.DATASET_VERSION) for entry in DeltaTable(str(out / query.name)).history())
        assert {version: stamped[version] for version in range(6)} == dict.fromkeys(range(6), 1), query.name


def test_a_column_added_to_a_delta_table_is_left_out_and_the_queries_go_on(spark, tmp_path) -> None:
    """Delta's schema evolution adds a column to trips (``write_deltalake(..., schema_mode="merge")``), which no
    built-in query reads: the follow goes on, in the run that meets the commit and after a restart (it stopped:
    "column tip is not a column of table trips"), and Spark SQL agrees at every version."""
    from deltalake import write_deltalake

    logs, out = tmp_path / "logs", tmp_path / "out"
    path = trips_table(logs, [[trip(1), trip(2, passengers=2)]])
    assert follow(spark, str(logs), str(out), log=lambda line: None) == {"trips": 0}
    tipped = sources.table_schema("trips").append(pyarrow.field("tip", pyarrow.decimal128(6, 2)))
    for rows in ([{**trip(3), "tip": Decimal("1.50")}], [{**trip(4, passengers=2), "tip": None}]):
        write_deltalake(str(path), pyarrow.Table.from_pylist(rows, schema=tipped), mode="append", schema_mode="merge")
    said: list[str] = []
    assert follow(spark, str(logs), str(out), log=said.append) == {"trips": 2}
    assert [line for line in said if "tip" in line] == [
        f"trips: table trips has a column tip (table trips ({path}), commit 1 (_delta_log/00000000000000000001.json)"
        f"), which this follow leaves out: its queries keep the columns they started with (trip_id, passenger_count, "
        f"fare_amount, trip_distance, pickup_datetime, dropoff_datetime)"]
    # Nothing new: a restart reads trips as of commit 2, column tip and all.
    assert follow(spark, str(logs), str(out), log=lambda line: None) == {"trips": 2}
    assert verify(spark, str(logs), str(out)) == (3 * len(queries_of("trips")), [])


def test_follow_refuses_a_folder_without_data_sets(tmp_path: Path) -> None:
    from final.spark.__main__ import main

    (tmp_path / "empty").mkdir()
    assert main(["follow", "--logs", str(tmp_path / "empty"), "--out", str(tmp_path / "out"),
                 "--available-now"]) == 2


def walkthrough() -> tuple[list[str], str]:
    """The README's step-by-step follow of one's own Delta table: its Python blocks, and the section's text."""
    import re

    text = (ROOT / "README.md").read_text()
    start = text.index("#### Your own Delta table, step by step")
    section = text[start:text.index("\n## ", start)]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL), section


def test_the_readmes_own_delta_table_walkthrough_runs_as_written(tmp_path) -> None:
    create, change, read = walkthrough()[0]
    section = walkthrough()[1]
    command = "python -m final.spark follow --logs my_data --out my_feed --trigger-seconds 5"
    assert command in section

    def python(code: str) -> str:
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=environment(), capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    def caught_up() -> None:
        status = subprocess.run([sys.executable, "-m", "final.spark", "status", "--logs", "my_data", "--out",
                                 "my_feed", "--wait", "300"], cwd=tmp_path, env=environment(), capture_output=True,
                                text=True, timeout=400)
        assert status.returncode == 0, status.stdout + status.stderr

    python(create)
    live = subprocess.Popen([sys.executable, *command.split()[1:]], cwd=tmp_path, env=environment(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        caught_up()
        python(change)
        caught_up()
        live.send_signal(signal.SIGINT)
        stdout, stderr = live.communicate(timeout=120)
    finally:
        live.kill()
    assert live.returncode == 130, stderr[-2000:]
    assert stdout.splitlines()[-1].startswith("follow: stopped by SIGINT at a micro-batch boundary (trips applied")
    restarted = subprocess.run([sys.executable, *command.split()[1:-2], "--available-now"], cwd=tmp_path,
                               env=environment(), capture_output=True, text=True, timeout=300)
    assert restarted.returncode == 0 and "trips through version 3" in restarted.stdout, restarted.stderr[-2000:]
    printed = python(read).split("\n")
    changes = [line.split()[-2:] for line in printed[1:] if line.strip()]
    assert changes == [["insert", "0"], ["insert", "0"], ["insert", "0"], ["update_preimage", "1"],
                       ["update_postimage", "1"], ["update_preimage", "2"], ["update_postimage", "2"],
                       ["update_preimage", "3"], ["update_postimage", "3"]], printed
    verified = subprocess.run([sys.executable, "-m", "final.spark", "verify", "--logs", "my_data", "--out",
                               "my_feed"], cwd=tmp_path, env=environment(), capture_output=True, text=True,
                              timeout=300)
    assert verified.returncode == 0 and "16 versions checked, 0 differences" in verified.stdout, verified.stderr
