"""Where a follow's changes come from: Delta tables, or the Parquet change-log layout, one commit at a time.

A data set's tables live under ``LOGS/<dataset>/<table>``, all in one of two layouts:

**Delta tables** (``<table>/_delta_log``), read with ``deltalake`` (delta-rs,
no JVM). Each table has its own versions; a *commit* is one table's Delta
version, complete once Delta's log holds it (Delta commits are atomic), and
its changes are the table's change data feed at that version
(``delta.enableChangeDataFeed`` must be on).

**The Parquet change-log layout**: each table's folder holds Parquet files
in the change-feed columns (the table's, ``_change_type``,
``_commit_version``), the versions shared by the data set's tables, and
``LOGS/<dataset>/_commits/<n>.json`` marks commit ``n`` complete: it names
the files (per table) that the commit added, and is written after them, so
a half-landed commit is never read. ``write_marker`` writes one.

Either way a ``Commit`` is read whole and checked before anything is
applied (``read_commit``): the table's columns and types against the
catalog, every ``_change_type`` in Delta's vocabulary, no NULL version; a
failure is a ``CommitError`` naming the table, the file, the row (counted
from 1) and the column, in SQL's words.

``CommitStream`` is the Structured Streaming side: a Python data source whose
offsets are each table's newest commit (a Delta version, or the newest
marker), so Spark keeps the offsets and drives the micro-batches; a
micro-batch's rows name the commits it brings, and the follow reads each
commit's changes on the driver, where ``final/`` runs, straight from the
table's files through Arrow.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSource, SimpleDataSourceStreamReader

from .catalog import DATASETS, TABLES
from .changelog import CHANGE_TYPE, MULTIPLICITIES, TIMESTAMP, VERSION
from .outputs import sql_text

if TYPE_CHECKING:
    import pyarrow

MARKERS = "_commits"
"""The folder, beside a Parquet data set's table folders, of its commit markers."""

DELTA_LOG = "_delta_log"
MARKER_NAME = re.compile(r"^(\d{8})\.json$")

SQL_TYPES = {"BIGINT": "int64", "INT": "int32", "SMALLINT": "int16", "TINYINT": "int8", "DOUBLE": "double",
             "STRING": "string", "BOOLEAN": "bool", "DATE": "date32"}


class CommitError(ValueError):
    """A commit the follow refuses to apply: the message names the table, file, row and column."""


def arrow_type(kind: str) -> pyarrow.DataType:
    """The Arrow type of a Spark SQL type name as the catalog spells it (timestamps in microseconds, UTC)."""
    import pyarrow

    kind = kind.upper()
    if kind.startswith("DECIMAL"):
        precision, scale = (int(part) for part in kind[kind.index("(") + 1:-1].split(","))
        return pyarrow.decimal128(precision, scale)
    if kind == "TIMESTAMP":
        return pyarrow.timestamp("us", tz="UTC")
    return pyarrow.type_for_alias(SQL_TYPES[kind])


def table_schema(table: str) -> pyarrow.Schema:
    """``table``'s columns as an Arrow schema: what a Delta table or a log file of it must hold."""
    import pyarrow

    return pyarrow.schema([pyarrow.field(name, arrow_type(kind)) for name, kind in TABLES[table].columns])


def members(dataset: str, tables: Sequence[str] | None = None) -> tuple[str, ...]:
    """``dataset``'s tables: ``tables`` when given (a Spark worker, which knows no bound table, is told them),
    else the catalog's."""
    return tuple(tables) if tables is not None else DATASETS[dataset]


def table_path(folder: str, table: str) -> str:
    """Where ``table`` of the data set in ``folder`` is: ``folder/table``, or what that links to (a bound
    table's folder is a symbolic link, ``own_tables.link``), so messages name the path one gave."""
    path = os.path.join(folder, table)
    return os.path.realpath(path) if os.path.islink(path) else path


def layout(folder: str, dataset: str, tables: Sequence[str] | None = None) -> str:
    """``"delta"`` or ``"parquet"``: how ``dataset``'s tables are kept under ``folder``.

    Raises:
        CommitError: a table's folder is missing, or the tables mix the two layouts.
    """
    kinds = {}
    for table in members(dataset, tables):
        path = os.path.join(folder, table)
        if not os.path.isdir(path):
            raise CommitError(f"data set {dataset!r} has no table {table!r}: {path} is not a folder (a Delta table "
                              f"or a Parquet change log); its tables are {', '.join(members(dataset, tables))}")
        kinds[table] = "delta" if os.path.isdir(os.path.join(path, DELTA_LOG)) else "parquet"
    if len(set(kinds.values())) > 1:
        raise CommitError(f"data set {dataset!r} under {folder} mixes Delta tables and Parquet logs ("
                          + ", ".join(f"{table}: {kind}" for table, kind in kinds.items())
                          + "); keep all of a data set's tables in one layout")
    return next(iter(kinds.values()))


@dataclass(frozen=True)
class Commit:
    """One complete commit: ``table``'s Delta version ``number``, or (``table`` = ``MARKERS``) the ``number``-th
    marker of a Parquet data set. ``timestamp`` is milliseconds since the epoch, for the order of a binding."""

    table: str
    number: int
    timestamp: int


def newest_commits(folder: str, dataset: str, tables: Sequence[str] | None = None) -> dict[str, int]:
    """Each source's newest complete commit (-1 for none): a Delta table's version, or the newest marker."""
    if layout(folder, dataset, tables) == "parquet":
        return {MARKERS: max(_markers(folder), default=-1)}
    from deltalake import DeltaTable

    return {table: DeltaTable(table_path(folder, table)).version() for table in members(dataset, tables)}


def check_offsets(folder: str, dataset: str, delivered: dict[str, int], tables: Sequence[str] | None = None
                  ) -> dict[str, int]:
    """The newest commits, after checking that no source went back behind the commits ``delivered``.

    Raises:
        CommitError: a table (or the markers) holds fewer commits than were delivered: it was written anew.
    """
    newest = newest_commits(folder, dataset, tables)
    for source, number in delivered.items():
        if newest.get(source, -1) < number:
            name = (f"the commit markers of {folder}" if source == MARKERS
                    else f"table {source} ({table_path(folder, source)})")
            raise CommitError(f"{name} now end at commit {newest.get(source, -1)}, but commits through {number} "
                              f"were read: the tables were written anew; follow them with a new --out and "
                              f"--checkpoint")
    return newest


def commits_between(folder: str, dataset: str, start: dict[str, int], end: dict[str, int],
                    tables: Sequence[str] | None = None) -> list[Commit]:
    """The commits after ``start`` up to ``end`` (offsets as ``newest_commits`` gives them), oldest first."""
    found = []
    if layout(folder, dataset, tables) == "parquet":
        for number in range(start.get(MARKERS, -1) + 1, end.get(MARKERS, -1) + 1):
            path = os.path.join(folder, MARKERS, f"{number:08d}.json")
            found.append(Commit(MARKERS, number, int(os.path.getmtime(path) * 1000)))
        return found
    from deltalake import DeltaTable

    for table in members(dataset, tables):
        low, high = start.get(table, -1) + 1, end.get(table, -1)
        if high < low:
            continue
        found_table = DeltaTable(table_path(folder, table))
        history = found_table.history(limit=found_table.version() - low + 1)
        times = {entry["version"]: entry["timestamp"] for entry in history}
        found += [Commit(table, number, times.get(number, 0)) for number in range(low, high + 1)]
    found.sort(key=binding_order(dataset, tables))
    return found


def binding_order(dataset: str, tables: Sequence[str] | None = None) -> Callable[[Commit], tuple]:
    """The order in which a follow binds commits it sees together: commit time, then the catalog's table order
    (a tie), then commit number."""
    order = members(dataset, tables)
    return lambda commit: (commit.timestamp, order.index(commit.table) if commit.table in order else -1,
                           commit.number)


def _markers(folder: str) -> list[int]:
    """The numbers of a Parquet data set's commit markers, checked to run 0, 1, 2, ... with no gap."""
    path = os.path.join(folder, MARKERS)
    if not os.path.isdir(path):
        return []
    numbers = sorted(int(match.group(1)) for name in os.listdir(path) if (match := MARKER_NAME.match(name)))
    for expected, number in enumerate(numbers):
        if number != expected:
            raise CommitError(f"{path}: commit marker {expected:08d}.json is missing before {number:08d}.json; "
                              f"markers number a log's commits 0, 1, 2, ... with no gap")
    return numbers


def marker_files(folder: str, number: int) -> dict[str, list[str]]:
    """The files (per table, paths) that Parquet commit ``number`` added."""
    path = os.path.join(folder, MARKERS, f"{number:08d}.json")
    with open(path) as file:
        named = json.load(file)["files"]
    return {table: [os.path.join(table_path(folder, table), name) for name in names] for table, names in named.items()}


def write_marker(folder: str, files: dict[str, list[str]]) -> int:
    """Mark the files just added to a Parquet data set's table folders as its next commit; the commit's number.

    ``files`` maps a table to the names of its new files (in its folder).
    The marker is written under a hidden name and renamed into place, so it
    is whole or absent; write it only after every file it names is in place.
    """
    number = max(_markers(folder), default=-1) + 1
    os.makedirs(os.path.join(folder, MARKERS), exist_ok=True)
    path = os.path.join(folder, MARKERS, f"{number:08d}.json")
    temporary = os.path.join(folder, MARKERS, f".{number:08d}.json.tmp-{os.getpid()}")
    with open(temporary, "w") as file:
        json.dump({"commit": number, "files": {table: sorted(names) for table, names in files.items()}}, file)
    os.replace(temporary, path)
    return number


# Reading a commit, checked.

Change = tuple[int, str, tuple, int]
"""``(version, table, record, multiplicity)``: for a Delta commit, ``version`` is its own Delta version."""


def read_commit(folder: str, commit: Commit) -> list[Change]:
    """Every change ``commit`` holds, checked (``CommitError``), records typed as the catalog says.

    A Delta commit's changes come from the table's change data feed at that
    version; a Parquet commit's from the files its marker names, in their
    order.
    """
    if commit.table == MARKERS:
        found: list[Change] = []
        for table, paths in marker_files(folder, commit.number).items():
            for path in paths:
                if not os.path.exists(path):
                    raise CommitError(f"{path} is gone: commit {commit.number} of {folder} named it; a log only "
                                      f"grows (write a new log, and follow it with a new --out and --checkpoint)")
                found += _checked(_read_parquet(path), table, path, versioned=True)
        return found
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaError

    path = table_path(folder, commit.table)
    where = f"table {commit.table} ({path}), commit {commit.number} ({DELTA_LOG}/{commit.number:020d}.json)"
    table = DeltaTable(path)
    if table.metadata().configuration.get("delta.enableChangeDataFeed", "").lower() != "true":
        raise CommitError(f"{where}: the table has no change data feed; create it with the property "
                          f"delta.enableChangeDataFeed = true (write_deltalake(..., configuration="
                          f"{{'delta.enableChangeDataFeed': 'true'}}))")
    import pyarrow

    try:
        feed = pyarrow.table(table.load_cdf(starting_version=commit.number, ending_version=commit.number).read_all())
    except DeltaError as error:
        raise CommitError(f"{where}: its change data feed does not read ({str(error).splitlines()[0]})") from error
    return _checked(feed, commit.table, where, versioned=False, version=commit.number)


def locate(folder: str, commit: Commit, table: str, version: int, record: tuple) -> str:
    """Where Parquet commit ``commit`` retracts ``record`` of ``table`` at ``version``: "file F, row R"."""
    for path in marker_files(folder, commit.number).get(table, []):
        for row, (at, _, found, multiplicity) in enumerate(_checked(_read_parquet(path), table, path, True), 1):
            if at == version and found == record and multiplicity < 0:
                return f"{path}, row {row} (counted from 1)"
    return f"commit {commit.number}"


def _read_parquet(path: str) -> pyarrow.Table:
    import pyarrow
    import pyarrow.parquet

    try:
        return pyarrow.parquet.read_table(path)
    except (OSError, pyarrow.ArrowInvalid) as error:
        raise CommitError(f"{path} does not read as Parquet ({str(error).splitlines()[0]}); write it again") from error


def _columns(feed: pyarrow.Table, table: str, where: str) -> list[pyarrow.ChunkedArray]:
    """``feed``'s data columns in ``table``'s order and types, after checking that it has those and no others."""
    expected = table_schema(table)
    names = set(feed.column_names) - {CHANGE_TYPE, VERSION, TIMESTAMP}
    for name in expected.names:
        if name not in names:
            raise CommitError(f"{where}: column {name} is missing; table {table} has the columns "
                              f"{', '.join(expected.names)}")
    extra = sorted(names - set(expected.names))
    if extra:
        raise CommitError(f"{where}: column {extra[0]} is not a column of table {table}, which has "
                          f"{', '.join(expected.names)}")
    return [_typed(feed.column(field.name), field, table, where) for field in expected]


def records(rows: pyarrow.Table, table: str, where: str) -> list[tuple]:
    """A table's rows (a Delta table as of a version), checked like a commit's, as records."""
    columns = _columns(rows, table, where)
    return list(zip(*(column.to_pylist() for column in columns), strict=True))


def _checked(feed: pyarrow.Table, table: str, where: str, versioned: bool, version: int = 0) -> list[Change]:
    """``feed`` (a table's changes in the change-feed columns) as changes, after checking it as a whole."""
    import pyarrow

    columns = _columns(feed, table, where)
    required = [CHANGE_TYPE] + ([VERSION] if versioned else [])
    for name in required:
        if name not in feed.column_names:
            raise CommitError(f"{where}: column {name} is missing; a change log has the table's columns, "
                              f"{CHANGE_TYPE} and {VERSION} (Delta's change data feed)")
    changes = feed.column(CHANGE_TYPE)
    if not _is_text(changes.type):
        raise CommitError(f"{where}: column {CHANGE_TYPE} is {_sql_kind(changes.type)}, not a STRING")
    kinds = changes.to_pylist()
    for row, kind in enumerate(kinds, 1):
        if kind not in MULTIPLICITIES:
            raise CommitError(f"{where}, row {row} (counted from 1), column {CHANGE_TYPE}: {sql_text(kind)} is not "
                              f"one of Delta's change types ({', '.join(MULTIPLICITIES)})")
    if versioned:
        versions_column = feed.column(VERSION)
        if not pyarrow.types.is_integer(versions_column.type):
            raise CommitError(f"{where}: column {VERSION} is {_sql_kind(versions_column.type)}, not an integer")
        versions = versions_column.to_pylist()
        for row, at in enumerate(versions, 1):
            if at is None or at < 0:
                raise CommitError(f"{where}, row {row} (counted from 1), column {VERSION}: {sql_text(at)} is not a "
                                  f"version (a non-negative integer)")
    else:
        versions = [version] * len(kinds)
    rows = zip(*(column.to_pylist() for column in columns), strict=True)
    return [(at, table, record, MULTIPLICITIES[kind]) for at, kind, record in zip(versions, kinds, rows,
                                                                                   strict=True)]


def _typed(column: pyarrow.ChunkedArray, field: pyarrow.Field, table: str, where: str) -> pyarrow.ChunkedArray:
    """``column`` as ``field``'s type: the same type, or a timestamp in another unit or zone (pandas writes
    nanoseconds) that converts without loss; timestamps come out naive, in UTC, as Spark's rows give them."""
    import pyarrow

    kind = column.type
    if pyarrow.types.is_timestamp(field.type) and pyarrow.types.is_timestamp(kind):
        try:
            return column.cast(pyarrow.timestamp("us", tz=kind.tz)).cast(pyarrow.timestamp("us"))
        except pyarrow.ArrowInvalid:
            values = column.to_pylist()
            row = next(row for row, value in enumerate(values, 1)
                       if value is not None and getattr(value, "nanosecond", 0))
            raise CommitError(f"{where}, row {row} (counted from 1), column {field.name}: {values[row - 1]} has "
                              f"nanoseconds; a TIMESTAMP holds microseconds") from None
    if kind == field.type:
        return column
    if (pyarrow.types.is_string(field.type) and _is_text(kind)) or _widens(kind, field.type):
        return column.cast(field.type)
    wanted = dict(TABLES[table].columns)[field.name]
    raise CommitError(f"{where}: column {field.name} is {_sql_kind(kind)}, but table {table} has it as {wanted}; "
                      f"write it with that type (e.g. pandas: .astype({_pandas_hint(wanted)!r}))")


def _widens(kind: pyarrow.DataType, wanted: pyarrow.DataType) -> bool:
    """True if every value of type ``kind`` is a value of ``wanted`` as it is: a narrower integer, a FLOAT for a
    DOUBLE, a decimal of the same scale and no more digits (pandas and Arrow infer these from the values)."""
    import pyarrow

    types = pyarrow.types
    if types.is_signed_integer(kind) and types.is_signed_integer(wanted):
        return kind.bit_width <= wanted.bit_width
    if types.is_float32(kind) and types.is_float64(wanted):
        return True
    if types.is_decimal(kind) and types.is_decimal(wanted):
        return kind.scale == wanted.scale and kind.precision <= wanted.precision
    return False


def _is_text(kind: pyarrow.DataType) -> bool:
    import pyarrow

    return pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind) or pyarrow.types.is_string_view(kind)


def _sql_kind(kind: pyarrow.DataType) -> str:
    """An Arrow type in Spark SQL's words, for messages."""
    import pyarrow

    names = {pyarrow.int64(): "BIGINT", pyarrow.int32(): "INT", pyarrow.int16(): "SMALLINT", pyarrow.int8(): "TINYINT",
             pyarrow.float64(): "DOUBLE", pyarrow.float32(): "FLOAT", pyarrow.string(): "STRING",
             pyarrow.large_string(): "STRING", pyarrow.string_view(): "STRING", pyarrow.bool_(): "BOOLEAN",
             pyarrow.date32(): "DATE"}
    if kind in names:
        return names[kind]
    if pyarrow.types.is_decimal(kind):
        return f"DECIMAL({kind.precision},{kind.scale})"
    return str(kind)


def _pandas_hint(kind: str) -> str:
    return {"BIGINT": "Int64", "INT": "Int32", "SMALLINT": "Int16", "TINYINT": "Int8", "DOUBLE": "float64",
            "STRING": "string", "BOOLEAN": "boolean"}.get(kind.upper(), "object")


# The stream: Spark keeps the offsets, the rows name the commits.

COMMIT_SCHEMA = "table STRING, commit BIGINT, timestamp BIGINT"


class CommitStream(DataSource):
    """``spark.readStream.format("final_commits").option("folder", F).option("dataset", D).option("tables", T)``:
    one row per new complete commit of the data set's tables, ``(table, commit, timestamp)``.

    Option ``tables`` (a JSON list) names the data set's tables: the source runs in a Python worker that
    imports ``final`` afresh, where the catalog knows no table bound with ``--table``.

    Option ``start``, a JSON offset, is where a query without a Spark checkpoint begins (the follow passes
    the commits it has already bound, so a lost Spark checkpoint never replays or skips one). Option
    ``grace_ms`` holds back the commits made in the last that many milliseconds: a commit is stamped before
    it becomes visible, so a micro-batch that takes only commits stamped before ``now - grace_ms`` sees every
    table's commits up to that moment, and commit-time order is the order commits are bound in.
    """

    @classmethod
    def name(cls) -> str:
        return "final_commits"

    def schema(self) -> str:
        return COMMIT_SCHEMA

    def simpleStreamReader(self, schema: object) -> SimpleDataSourceStreamReader:
        return _CommitReader(self.options["folder"], self.options["dataset"], json.loads(self.options["start"]),
                             int(self.options.get("grace_ms", "0")), json.loads(self.options.get("tables", "null")))


class _CommitReader(SimpleDataSourceStreamReader):
    """Offsets: ``{source: newest commit delivered}``; a read delivers the complete commits after them (per
    table, those stamped before the grace period, in order)."""

    def __init__(self, folder: str, dataset: str, start: dict[str, int], grace_ms: int,
                 tables: list[str] | None = None) -> None:
        self.folder, self.dataset, self.start, self.grace_ms, self.tables = folder, dataset, start, grace_ms, tables

    def initialOffset(self) -> dict:
        return dict(self.start)

    def read(self, start: dict) -> tuple[Iterator[tuple], dict]:
        cut = time.time() * 1000 - self.grace_ms
        newest = check_offsets(self.folder, self.dataset, start, self.tables)
        end = {source: start.get(source, -1) for source in newest}
        for commit in sorted(commits_between(self.folder, self.dataset, start, newest, self.tables),
                             key=lambda found: (found.table, found.number)):
            if commit.number == end[commit.table] + 1 and (not self.grace_ms or commit.timestamp <= cut):
                end[commit.table] = commit.number
        return self.readBetweenOffsets(start, end), end

    def readBetweenOffsets(self, start: dict, end: dict) -> Iterator[tuple]:
        return iter([(commit.table, commit.number, commit.timestamp)
                     for commit in commits_between(self.folder, self.dataset, start, end, self.tables)])
