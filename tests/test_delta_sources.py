"""Delta tables and commits without Spark: what ``delta.apply_changes`` commits is what its change feed says,
and ``sources`` reads commits whole, in order, checked.

Each commit ``apply_changes`` makes is checked against its definition: the
table after it is the table before it plus the commit's changes, as
multisets, and the change data feed of that Delta version holds exactly
those changes (a row updated in place as a preimage and a postimage). A
change log is checked by one check (``sources.LogChecker``) whichever reader
takes it: ``run``'s (``read_log``, the whole log) refuses what ``follow``'s
(``read_commit``, commit by commit) refuses, with the same message.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pyarrow
import pyarrow.parquet
import pytest

from final.spark import delta, sources
from final.spark.changelog import MULTIPLICITIES, ChangeLogError
from final.spark.sources import MARKERS, Commit, CommitError

EDGES = sources.table_schema("edges")
AGENT = sources.table_schema("agent")


def table_rows(path: Path, version: int) -> Counter:
    return Counter(tuple(row.values()) for row in delta.read_table(str(path), version).to_pylist())


def feed_at(path: Path, version: int) -> Counter:
    changes: Counter = Counter()
    for _, _, record, multiplicity in sources.read_commit(str(path.parent), Commit(path.name, version, 0)):
        changes[record] += multiplicity
    return {record: count for record, count in changes.items() if count}


def commit(path: Path, schema: pyarrow.Schema, rows: list[tuple], key: tuple[str, ...] | None) -> None:
    """``apply_changes``, with the table's rows after the commit given for a table without a key."""
    before = table_rows(path, delta.version(str(path))) if delta.exists(str(path)) else Counter()
    after = before.copy()
    for row in rows:
        after[row[:-1]] += MULTIPLICITIES[row[-1]]
    delta.apply_changes(str(path), schema, rows, key, None if key else dict(+after))


@pytest.mark.parametrize("key", [None, ("zc",)], ids=["whole rows", "keyed"])
def test_each_commit_changes_the_table_by_what_its_change_feed_holds(tmp_path: Path, key) -> None:
    path = tmp_path / "agent"
    commits = [
        [(1, "a", "insert"), (1, "a", "insert"), (2, "b", "insert"), (None, "c", "insert")],
        [(2, "b", "update_preimage"), (2, "B", "update_postimage"), (3, "d", "insert")],
        [(1, "a", "delete"), (None, "c", "delete")],
        [],
    ]
    if key:  # a keyed table holds one row per key
        commits[0] = commits[0][1:]
        commits[2] = [(1, "a", "delete"), (None, "c", "delete")]
    for number, rows in enumerate(commits):
        commit(path, AGENT, rows, key)
        assert delta.version(str(path)) == number
        expected = Counter()
        for row in rows:
            expected[row[:-1]] += MULTIPLICITIES[row[-1]]
        before = table_rows(path, number - 1) if number else Counter()
        now = table_rows(path, number)
        assert now - before == +expected and before - now == -expected
        assert feed_at(path, number) == {record: count for record, count in expected.items() if count}
    kinds = Counter(delta.change_feed(str(path)).column("_change_type").to_pylist())
    assert (kinds["update_preimage"] > 0) == bool(key)


def test_a_nan_key_that_keeps_its_key_is_updated_in_place(tmp_path: Path) -> None:
    schema = pyarrow.schema([("distance", pyarrow.float64()), ("trips", pyarrow.int64())])
    path = tmp_path / "groups"
    delta.apply_changes(str(path), schema, [(float("nan"), 1, "insert")], ("distance",))
    delta.apply_changes(str(path), schema, [(float("nan"), 1, "delete"), (float("nan"), 2, "insert")], ("distance",))
    kinds = [row["_change_type"] for row in delta.change_feed(str(path)).to_pylist() if row["_commit_version"] == 1]
    assert sorted(kinds) == ["update_postimage", "update_preimage"]


def test_a_duplicated_row_loses_one_copy_exactly(tmp_path: Path) -> None:
    path = tmp_path / "edges"
    commit(path, EDGES, [(1, 2, "insert")] * 3, None)
    commit(path, EDGES, [(1, 2, "delete")], None)
    assert table_rows(path, 1) == Counter({(1, 2): 2})


def marked_log(tmp_path: Path, versions: list[int]) -> Path:
    folder = tmp_path / "graph"
    for table in ("edges", "roots"):
        (folder / table).mkdir(parents=True)
    edges = pyarrow.table({"src": pyarrow.array([1] * len(versions), pyarrow.int64()),
                           "dst": pyarrow.array(range(len(versions)), pyarrow.int64()),
                           "_change_type": ["insert"] * len(versions), "_commit_version": versions})
    pyarrow.parquet.write_table(edges, folder / "edges" / "part-0.parquet")
    sources.write_marker(str(folder), {"edges": ["part-0.parquet"]})
    return folder


def test_a_parquet_commit_is_its_markers_files(tmp_path: Path) -> None:
    folder = marked_log(tmp_path, [0, 0, 1])
    assert sources.layout(str(folder), "graph") == "parquet"
    assert sources.newest_commits(str(folder), "graph") == {MARKERS: 0}
    assert sources.read_commit(str(folder), Commit(MARKERS, 0, 0)) == [
        (0, "edges", (1, 0), 1), (0, "edges", (1, 1), 1), (1, "edges", (1, 2), 1)]
    (folder / MARKERS / "00000002.json").write_text('{"commit": 2, "files": {}}')
    with pytest.raises(CommitError, match=r"commit marker 00000001.json is missing before 00000002.json"):
        sources.newest_commits(str(folder), "graph")


def test_offsets_that_go_back_are_refused(tmp_path: Path) -> None:
    folder = marked_log(tmp_path, [0])
    with pytest.raises(CommitError, match=r"now end at commit 0, but commits through 3 were read: the tables were "
                                          r"written anew"):
        sources.check_offsets(str(folder), "graph", {MARKERS: 3})


def test_types_are_taken_when_every_value_fits_and_refused_otherwise(tmp_path: Path) -> None:
    folder = marked_log(tmp_path, [0])
    narrow = pyarrow.table({"node": pyarrow.array([7], pyarrow.int8()), "_change_type": ["insert"],
                            "_commit_version": [1]})
    pyarrow.parquet.write_table(narrow, folder / "roots" / "part-1.parquet")
    sources.write_marker(str(folder), {"roots": ["part-1.parquet"]})
    assert sources.read_commit(str(folder), Commit(MARKERS, 1, 0)) == [(1, "roots", (7,), 1)]
    wide = pyarrow.table({"node": [7.0], "_change_type": ["insert"], "_commit_version": [2]})
    pyarrow.parquet.write_table(wide, folder / "roots" / "part-2.parquet")
    sources.write_marker(str(folder), {"roots": ["part-2.parquet"]})
    with pytest.raises(ChangeLogError, match=r"part-2.parquet: column node is DOUBLE, but table roots has it as "
                                             r"BIGINT"):
        sources.read_commit(str(folder), Commit(MARKERS, 2, 0))


def test_a_timestamp_with_nanoseconds_is_named(tmp_path: Path) -> None:
    trips = sources.table_schema("trips")
    values = {"trip_id": [1], "passenger_count": [1], "fare_amount": [Decimal("1.00")], "trip_distance": [1.0],
              "dropoff_datetime": [dt.datetime(2018, 1, 1, tzinfo=dt.UTC)]}
    columns = {name: pyarrow.array(values[name], trips.field(name).type) for name in values}
    columns["pickup_datetime"] = pyarrow.array([1_514_764_800_000_000_123], pyarrow.int64()).cast(
        pyarrow.timestamp("ns", "UTC"))
    folder = tmp_path / "trips"
    (folder / "trips").mkdir(parents=True)
    pyarrow.parquet.write_table(pyarrow.table({**columns, "_change_type": ["insert"], "_commit_version": [0]}),
                                folder / "trips" / "part-0.parquet")
    sources.write_marker(str(folder), {"trips": ["part-0.parquet"]})
    with pytest.raises(ChangeLogError, match=r"row 1 \(counted from 1\), column pickup_datetime: .* has nanoseconds"):
        sources.read_commit(str(folder), Commit(MARKERS, 0, 0))
    with pytest.raises(ChangeLogError, match=r"part-0.parquet, row 1 \(counted from 1\), column pickup_datetime: "
                                             r".* has nanoseconds"):
        sources.read_log(sources.log_files(str(folder), "trips"), "trips")


def roots_commit(folder: Path, number: int, rows: list[tuple]) -> None:
    """A commit of ``rows`` ``(node, change type, version)`` to the log of ``roots`` under ``folder``."""
    nodes, changes, versions = (list(column) for column in zip(*rows, strict=True))
    name = f"part-{number}.parquet"
    pyarrow.parquet.write_table(pyarrow.table({"node": pyarrow.array(nodes, pyarrow.int64()), "_change_type": changes,
                                               "_commit_version": versions}), folder / "roots" / name)
    sources.write_marker(str(folder), {"roots": [name]})


def test_run_and_follow_read_a_log_through_one_check(tmp_path: Path) -> None:
    """Commit 1 deletes a row commit 0 inserted, and re-inserts another in the same version: a follow reading
    commit by commit (its checkers kept) and ``run`` reading the whole log take both; a commit read on its own
    cannot delete what came before it, and a delete of a row never inserted is refused by every reader alike."""
    folder = tmp_path / "graph"
    (folder / "roots").mkdir(parents=True)
    roots_commit(folder, 0, [(1, "insert", 0), (2, "insert", 0)])
    roots_commit(folder, 1, [(2, "delete", 1), (2, "insert", 1), (1, "delete", 1)])
    checkers: dict[str, sources.LogChecker] = {}
    changes = [change for number in (0, 1) for change in
               sources.read_commit(str(folder), Commit(MARKERS, number, 0), checkers)]
    assert changes == [(0, "roots", (1,), 1), (0, "roots", (2,), 1), (1, "roots", (2,), -1), (1, "roots", (2,), 1),
                       (1, "roots", (1,), -1)]
    assert checkers["roots"].held == {(2,): 1}
    log = sources.read_log(sources.log_files(str(folder), "roots"), "roots")
    assert log.changes() == changes
    assert log.arrow.column("_multiplicity").to_pylist() == [1, 1, -1, 1, -1]
    part = folder / "roots" / "part-1.parquet"
    # On its own, commit 1 holds none of commit 0's rows: its row 1 deletes the 2 its row 2 inserts (one version).
    with pytest.raises(ChangeLogError, match=re.escape(f"{part}, row 3 (counted from 1): table roots has no row "
                                                       f"(node = 1) to delete at version 1")):
        sources.read_commit(str(folder), Commit(MARKERS, 1, 0))
    roots_commit(folder, 2, [(3, "delete", 2)])
    never = re.escape(f"{folder / 'roots' / 'part-2.parquet'}, row 1 (counted from 1): table roots has no row "
                      f"(node = 3) to delete at version 2; a log may only delete rows the table holds")
    with pytest.raises(ChangeLogError, match=never):
        sources.read_commit(str(folder), Commit(MARKERS, 2, 0), checkers)
    with pytest.raises(ChangeLogError, match=never):
        sources.read_log(sources.log_files(str(folder), "roots"), "roots")


def trips_changes(rows: list[tuple[int, float, str, int]]) -> pyarrow.Table:
    """Changes ``(trip_id, trip_distance, change type, version)`` of trips, the other columns alike."""
    schema = sources.table_schema("trips")
    ids, distances, changes, versions = (list(column) for column in zip(*rows, strict=True))
    pickup = dt.datetime(2018, 1, 1, tzinfo=dt.UTC)
    same = {"passenger_count": 1, "fare_amount": Decimal("1.00"), "pickup_datetime": pickup,
            "dropoff_datetime": pickup + dt.timedelta(minutes=9)}
    columns = {"trip_id": ids, "trip_distance": distances, **{name: [value] * len(ids) for name, value in same.items()}}
    return pyarrow.table({**{name: pyarrow.array(columns[name], schema.field(name).type) for name in schema.names},
                          "_change_type": changes, "_commit_version": versions})


def test_a_nan_and_a_negative_zero_delete_the_rows_spark_sql_holds_equal() -> None:
    """Spark SQL has one NaN, and -0.0 = 0.0: a log may delete a NaN distance it inserted as another NaN, and a
    0.0 it inserted as -0.0 (``LogChecker`` counts records as Spark SQL compares them); once, not twice."""
    checker = sources.LogChecker("trips")
    checker.take([(trips_changes([(1, float("nan"), "insert", 0), (2, -0.0, "insert", 0),
                                  (1, -float("nan"), "delete", 1), (2, 0.0, "delete", 1)]), "part-0.parquet")])
    assert checker.held == {}
    with pytest.raises(ChangeLogError, match=r"part-1.parquet, row 1 \(counted from 1\): table trips has no row "
                                             r"\(trip_id = 1, .*trip_distance = NaN, .*\) to delete at version 2"):
        checker.take([(trips_changes([(1, float("nan"), "delete", 2)]), "part-1.parquet")])


def test_versions_go_forward_from_one_commit_to_the_next(tmp_path: Path) -> None:
    folder = tmp_path / "graph"
    (folder / "roots").mkdir(parents=True)
    roots_commit(folder, 0, [(1, "insert", 0), (2, "insert", 3)])
    roots_commit(folder, 1, [(3, "insert", 2)])
    checkers: dict[str, sources.LogChecker] = {}
    sources.read_commit(str(folder), Commit(MARKERS, 0, 0), checkers)
    back = re.escape(f"{folder / 'roots' / 'part-1.parquet'}, row 1 (counted from 1), column _commit_version: goes "
                     f"back from 3 in {folder / 'roots' / 'part-0.parquet'} to 2")
    with pytest.raises(ChangeLogError, match=back):
        sources.read_commit(str(folder), Commit(MARKERS, 1, 0), checkers)
    with pytest.raises(ChangeLogError, match=back):
        sources.read_log(sources.log_files(str(folder), "roots"), "roots")


def test_a_delete_of_text_names_the_row_as_sql_shows_it() -> None:
    changes = pyarrow.table({"zc": pyarrow.array([1, 1, 2], pyarrow.int32()), "agent_name": ["Ann", "Ann", "O'Neil"],
                             "_change_type": ["insert", "delete", "delete"], "_commit_version": [0, 1, 1]})
    with pytest.raises(ChangeLogError, match=re.escape("agent.parquet, row 3 (counted from 1): table agent has no row "
                                                       "(zc = 2, agent_name = 'O''Neil') to delete at version 1")):
        sources.LogChecker("agent").take([(changes, "agent.parquet")])


@pytest.mark.slow  # a Python process of its own
def test_a_table_whose_files_vacuum_removed_fails_to_read_without_aborting_the_process(tmp_path: Path) -> None:
    """``delta.read_table`` of a version whose files are gone raises, and the process then exits as Python does.
    Through ``deltalake``'s own file system (Python, called from Arrow's I/O threads) the process aborted as
    it exited, after the error was handled (``terminate called without an active exception``, exit 134)."""
    from deltalake import DeltaTable

    path = tmp_path / "edges"
    for number in range(8):  # eight files, read at once
        delta.apply_changes(str(path), EDGES, [(number, number, "insert")], None)
    DeltaTable(str(path)).delete("src >= 0")
    DeltaTable(str(path)).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    code = ("import sys\nfrom final.spark import delta\ntry:\n    delta.read_table(sys.argv[1], 7)\n"
            "except FileNotFoundError as error:\n    print(type(error).__name__)\n")
    root = Path(__file__).resolve().parents[1]
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", code, str(path)], cwd=root, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(root)}, timeout=120)
        assert (done.returncode, done.stdout, done.stderr) == (0, "FileNotFoundError\n", "")


def agent_commit(columns: dict[str, pyarrow.Array], change: str = "insert") -> pyarrow.Table:
    """One Delta commit's change feed of a table like ``agent``, in the columns (and types) given."""
    rows = len(next(iter(columns.values())))
    return pyarrow.table({**columns, "_change_type": [change] * rows})


def test_a_delta_tables_schema_is_followed_commit_by_commit() -> None:
    """A Delta table's commits are read each in the schema the table had then: a column added is left out; a
    column no query reads may change or go (NULL from then on); a widened column is held wider from its commit
    on and the widening recorded; a column a query reads may not go, nor change otherwise (the message names
    the commit, the column and the queries)."""
    checker = sources.LogChecker("agent", AGENT, readers={"zc": ["by_zone"], "agent_name": []})
    zc, name = pyarrow.array([1], pyarrow.int32()), pyarrow.array(["Ann"])
    assert checker.take([(agent_commit({"zc": zc, "agent_name": name}), "commit 0")], version=0).changes() == [
        (0, "agent", (1, "Ann"), 1)]
    added = agent_commit({"zc": zc, "agent_name": name, "region": ["north"]})
    assert checker.take([(added, "commit 1")], version=1).changes() == [(1, "agent", (1, "Ann"), 1)]
    assert checker.added == {"region": "commit 1"}
    dropped = agent_commit({"zc": pyarrow.array([2], pyarrow.int32())})  # agent_name, read by no query, gone
    assert checker.take([(dropped, "commit 2")], version=2).changes() == [(2, "agent", (2, None), 1)]
    wide = agent_commit({"zc": pyarrow.array([2 ** 40], pyarrow.int64())})
    assert checker.take([(wide, "commit 3")], version=3).changes() == [(3, "agent", (2 ** 40, None), 1)]
    assert checker.schema.field("zc").type == pyarrow.int64()
    [widened] = checker.widened
    assert (widened.column, widened.before, widened.after, widened.where, widened.version) == (
        "zc", pyarrow.int32(), pyarrow.int64(), "commit 3", 3)
    with pytest.raises(ChangeLogError, match=re.escape("commit 4: column zc changed from BIGINT to STRING, which is no "
                                                       "widening Delta allows")):
        checker.take([(agent_commit({"zc": ["2"]}), "commit 4")], version=4)
    gone = sources.LogChecker("agent", AGENT, readers={"zc": ["by_zone", "zones"], "agent_name": []})
    gone.take([(agent_commit({"zc": zc, "agent_name": name}), "commit 0")], version=0)
    with pytest.raises(ChangeLogError, match=re.escape("commit 1: column zc is gone (the table had it, INT); queries "
                                                       "by_zone, zones read it")):
        gone.take([(agent_commit({"agent_name": name}), "commit 1")], version=1)


def test_a_column_a_delta_table_gains_later_is_null_before() -> None:
    """Read as the table was then, a commit made before a column was added has no such column: it is NULL, as
    Delta reads old files under a newer schema (a follow that began after the column was added holds it)."""
    checker = sources.LogChecker("agent", AGENT)
    old = agent_commit({"zc": pyarrow.array([1], pyarrow.int32())})
    assert checker.take([(old, "commit 0")], version=0).changes() == [(0, "agent", (1, None), 1)]


def test_a_parquet_log_file_with_a_column_the_table_does_not_have_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "graph"
    (folder / "roots").mkdir(parents=True)
    pyarrow.parquet.write_table(pyarrow.table({"node": pyarrow.array([1], pyarrow.int64()), "weight": [0.5],
                                               "_change_type": ["insert"], "_commit_version": [0]}),
                                folder / "roots" / "part-0.parquet")
    sources.write_marker(str(folder), {"roots": ["part-0.parquet"]})
    with pytest.raises(ChangeLogError, match=r"part-0.parquet: column weight is not a column of table roots, which "
                                             r"has node; a Parquet change log's files hold the table's columns and "
                                             r"no others \(a Delta table may gain columns\)"):
        sources.read_commit(str(folder), Commit(MARKERS, 0, 0))
