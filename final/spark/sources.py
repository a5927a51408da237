"""Where the pipeline's changes come from: Delta tables, or the Parquet change-log layout, read and checked.

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

One model of a change serves every command: a ``Change`` is
``(version, table, record, multiplicity)``, a ``Commit`` one complete commit,
and a ``LogChecker`` is the one check of a change log, on Arrow, whoever reads
it: a table's columns and types against the catalog (a Delta table's
schema followed as it changes: a column added is left out, a type widened
as Delta widens types is held wider), every ``_change_type`` in Delta's
vocabulary, versions that are there, never negative and never going back,
and no delete of a row the log does not hold; a failure is a
``ChangeLogError`` naming the file (or the Delta commit), the row (counted
from 1) and the column, in SQL's words. One
reader per layout: ``read_log`` reads a Parquet log's files (``log_files``:
those its markers name) and ``read_feed`` a Delta table's whole change
feed, as ``run`` and ``verify`` want them (``CheckedLog``: Arrow, for
``spark.createDataFrame``); ``read_commit`` reads one commit of either,
whole and checked before anything is applied, as ``follow`` and ``run``
over Delta tables want it.

``CommitStream`` is the Structured Streaming side: a Python data source whose
offsets are each table's newest commit (a Delta version, or the newest
marker), so Spark keeps the offsets and drives the micro-batches; a
micro-batch's rows name the commits it brings, and the follow reads each
commit's changes on the driver, where ``final/`` runs, straight from the
table's files through Arrow.
"""

from __future__ import annotations

import bisect
import itertools
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from pyspark.sql.datasource import DataSource, SimpleDataSourceStreamReader
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from .arrow_types import arrow_type, is_text, pandas_type, sql_type, sql_words
from .changelog import CHANGE_TYPE, MULTIPLICITIES, MULTIPLICITY, TIMESTAMP, VERSION, ChangeLogError, multiplicities
from .outputs import record_text, sql_text
from .tables_and_queries import DATASETS, TABLES

if TYPE_CHECKING:
    import pyarrow

MARKERS = "_commits"
"""The folder, beside a Parquet data set's table folders, of its commit markers."""

DELTA_LOG = "_delta_log"
MARKER_NAME = re.compile(r"^(\d{8})\.json$")


class CommitError(ChangeLogError):
    """A data set's commits cannot be read in order: a marker is missing, a file a marker names is gone, the
    tables mix layouts or were written anew, a Delta table has no change feed. The message says which."""


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


# The change model: a change, a table's log checked as it is read, and the readers of each layout.


class Change(NamedTuple):
    """One update of differential dataflow: ``record`` of ``table`` at ``version``, with ``multiplicity``.

    A record is the tuple of the table's values in its columns' order, NULL as None, a TIMESTAMP a naive
    datetime in UTC (as Spark's rows give it). A Delta commit read on its own has its Delta version as
    ``version``; a follow binds it to a version of the data set.
    """

    version: int
    table: str
    record: tuple
    multiplicity: int


def log_schema(table: str, columns: pyarrow.Schema | None = None) -> pyarrow.Schema:
    """A checked change log of ``table`` in Arrow: the table's columns (``table_schema``, or ``columns``, the
    columns as a ``LogChecker`` holds them), then ``_change_type``, ``_commit_version`` and ``_multiplicity``."""
    import pyarrow

    return pyarrow.schema([*(columns or table_schema(table)), pyarrow.field(CHANGE_TYPE, pyarrow.string()),
                           pyarrow.field(VERSION, pyarrow.int64()), pyarrow.field(MULTIPLICITY, pyarrow.int64())])


@dataclass(frozen=True)
class CheckedLog:
    """Changes of ``table`` as ``LogChecker.take`` checked them: ``arrow`` holds them in ``log_schema(table)``, one row
    per change, in the order read. ``spark.createDataFrame(log.arrow)`` is the change log in Spark."""

    table: str
    arrow: pyarrow.Table

    def changes(self) -> list[Change]:
        """The rows as ``Change``s, in order."""
        columns = [_values(column) for column in self.arrow.columns[:-3]]
        versions = self.arrow.column(VERSION).to_pylist()
        row_multiplicities = self.arrow.column(MULTIPLICITY).to_pylist()
        records = zip(*columns, strict=True)
        return [Change(version, self.table, record, multiplicity)
                for version, record, multiplicity in zip(versions, records, row_multiplicities, strict=True)]

    def at(self, version: int) -> CheckedLog:
        """The same changes, every one at ``version`` (a Delta commit bound to a version of its data set)."""
        import pyarrow

        versions = pyarrow.repeat(pyarrow.scalar(version, pyarrow.int64()), self.arrow.num_rows)
        return CheckedLog(self.table, self.arrow.set_column(self.arrow.schema.get_field_index(VERSION), VERSION,
                                                            versions))


@dataclass(frozen=True)
class Widened:
    """A column a Delta commit widened, as Delta's type widening allows (``widens``): ``table``'s ``column`` from
    ``before`` to ``after`` (Arrow types) at the commit ``where`` names, Delta version ``version``."""

    table: str
    column: str
    before: pyarrow.DataType
    after: pyarrow.DataType
    where: str
    version: int | None


class LogChecker:
    """One table's change log, checked as it is read, piece after piece in order: the pipeline's one check of a
    change log, whichever command reads it (``run``, ``follow``, ``verify``, ``generate --append``).

    A piece is a Parquet file of the log, or a Delta table's change data feed
    (one commit's, or the whole). Each must have the table's columns, each
    of a type that converts to the one held without loss (``widens``), and
    a ``_change_type`` of Delta's on every row. A piece that carries its
    versions (all but a Delta commit read on its own, whose version is
    given) must have a ``_commit_version`` on every row, a non-negative
    integer that never goes back: not from one row to the next, nor from
    the piece before. And a log deletes only what it holds: at the end of
    each version, every record's multiplicity summed over all that was taken
    is at least zero. A Delta commit read on its own is not checked for
    that: its feed is made of the rows the commit removed, so it cannot hold
    such a delete (and its table's rows before it are not at hand).

    A Parquet file has the table's columns and no others (``_commit_timestamp``
    aside). A Delta table's schema may change from one commit to the next:
    a column it gained is left out (``added`` names it). A Delta commit (or
    the table's rows as of a version, ``records``) is read in the table's
    schema then: a column the table widened as Delta's type widening allows
    is held in the wider type from that commit on (``widened`` records it),
    and a column the commit does not have is NULL: the table did not have
    it yet. A column the table had and dropped, or changed otherwise, is
    refused, unless no reader reads it: ``readers`` names, per column, the
    queries that read it (None: every column is read), and a column none
    reads is NULL from then on. A whole feed (``read_feed``) is in the
    table's newest schema, which must have every column.

    A failure is a ``ChangeLogError`` naming the piece (its file, or its
    Delta commit), the row counted from 1 and the column, and showing values
    as SQL does.

    Invariant: ``schema`` holds the columns as taken (the table's, each in its
    type or a type it widened to); ``types`` each column's type in the newest
    Delta piece that had it (the table's schema then); ``held`` maps each
    record of the versioned pieces taken (by ``_keys``: NaN one value, -0.0 as
    0.0, as Spark SQL compares them) to its multiplicity over them, which is
    positive (a record at zero is absent); ``version`` is the highest version
    taken (-1 before any), the last row of the piece ``where``.
    """

    def __init__(self, table: str, schema: pyarrow.Schema | None = None,
                 readers: Mapping[str, Sequence[str]] | None = None) -> None:
        self.table = table
        self.schema = schema if schema is not None else table_schema(table)
        self.readers = readers
        self.types: dict[str, pyarrow.DataType] = {}
        self.widened: list[Widened] = []
        self.added: dict[str, str] = {}
        self.held: dict[tuple, int] = {}
        self.version = -1
        self.where = ""

    def take(self, pieces: Sequence[tuple[pyarrow.Table, str]], version: int | None = None,
             delta: bool = False) -> CheckedLog:
        """The next ``pieces`` of the log, each ``(rows, where)`` (``where`` names it in messages), checked with
        what was taken before; with ``version``, the pieces are a Delta commit read on its own, at that version;
        with ``delta``, a Delta table's change data feed, in the schema the table had then.

        Raises:
            ChangeLogError: a piece fails a check (see the class); the checker is of no further use then.
        """
        import pyarrow

        checked = [self._piece(rows, where, version, delta or version is not None) for rows, where in pieces]
        log = pyarrow.concat_tables(checked) if checked else log_schema(self.table, self.schema).empty_table()
        if version is None:
            self._check_deletes(log, [(where, piece.num_rows) for (_, where), piece in zip(pieces, checked,
                                                                                           strict=True)])
        else:
            self.version = max(self.version, version)
        return CheckedLog(self.table, log)

    def records(self, rows: pyarrow.Table, where: str) -> list[tuple]:
        """A Delta table's rows as of a version, read as a Delta piece is (its schema then), as records; the pieces
        taken next are the commits after that version.

        Raises:
            ChangeLogError: a column the readers read is missing, or has a type that does not convert.
        """
        return list(zip(*(_values(column) for column in self._columns(rows, where, True, True, None)), strict=True))

    def _piece(self, rows: pyarrow.Table, where: str, version: int | None, delta: bool) -> pyarrow.Table:
        """One piece, checked but for its deletes, in ``log_schema``."""
        import pyarrow

        columns = self._columns(rows, where, delta, version is not None, version)
        kinds = self._change_types(rows, where)
        if version is None:
            versions = self._versions(rows, where)
        else:
            versions = pyarrow.repeat(pyarrow.scalar(version, pyarrow.int64()), rows.num_rows)
        return pyarrow.Table.from_arrays([*columns, kinds, versions, multiplicities(kinds)],
                                         schema=log_schema(self.table, self.schema))

    def _columns(self, rows: pyarrow.Table, where: str, delta: bool, as_of: bool, version: int | None
                 ) -> list[pyarrow.ChunkedArray]:
        """``rows``' columns as held (``schema``), after the checks of the class. A Delta piece (``delta``) may
        have columns the table gained; one that is the table as of one version (``as_of``: a commit's feed, or
        its rows, in the table's schema then) may lack a column, its types become ``types``, and a column it
        widened is held widened from it on. (A whole feed is in the table's newest schema: a column it lacks
        was dropped, and it tells nothing of when.)"""
        import pyarrow

        names = set(rows.column_names) - {CHANGE_TYPE, VERSION, TIMESTAMP}
        extra = sorted(names - set(self.schema.names))
        if extra and not delta:
            raise ChangeLogError(f"{where}: column {extra[0]} is not a column of table {self.table}, which has "
                                 f"{', '.join(self.schema.names)}; a Parquet change log's files hold the table's "
                                 f"columns and no others (a Delta table may gain columns)")
        for name in extra:
            self.added.setdefault(name, where)
        columns = []
        for position, field in enumerate(self.schema):
            before = self.types.get(field.name) if as_of else None
            if field.name not in names:
                if not as_of:
                    raise ChangeLogError(f"{where}: column {field.name} is missing; table {self.table} has the "
                                         f"columns {', '.join(self.schema.names)}")
                if before is not None and self._read(field.name):
                    raise ChangeLogError(
                        f"{where}: column {field.name} is gone (the table had it, {sql_words(before)}); "
                        f"{self._reading(field.name)}: put the column back, or follow the queries that do not "
                        f"read it with a new --out and --checkpoint")
                self.types.pop(field.name, None)
                columns.append(pyarrow.chunked_array([pyarrow.nulls(rows.num_rows, field.type)], field.type))
                continue
            column = rows.column(field.name)
            kind = column.type
            if as_of:
                self.types[field.name] = kind
            if _converts(kind, field.type):
                columns.append(_typed(column, field, where))
            elif before is not None and kind != before and widens(field.type, kind):
                self.schema = self.schema.set(position, field.with_type(kind))
                self.widened.append(Widened(self.table, field.name, field.type, kind, where, version))
                columns.append(column)
            elif as_of and not self._read(field.name):
                columns.append(pyarrow.chunked_array([pyarrow.nulls(rows.num_rows, field.type)], field.type))
            elif before is not None and kind != before:
                raise ChangeLogError(
                    f"{where}: column {field.name} changed from {sql_words(before)} to {sql_words(kind)}, which is "
                    f"no widening Delta allows (a wider integer, FLOAT to DOUBLE, a DECIMAL with more digits); "
                    f"{self._reading(field.name)}: follow the queries with a new --out and --checkpoint")
            else:
                wanted = sql_type(field.type) or sql_words(field.type)
                raise ChangeLogError(f"{where}: column {field.name} is {sql_words(kind)}, but table {self.table} has "
                                     f"it as {wanted}; write it with that type (e.g. pandas: "
                                     f".astype({pandas_type(wanted)!r}))")
        return columns

    def _read(self, column: str) -> bool:
        return self.readers is None or bool(self.readers.get(column))

    def _reading(self, column: str) -> str:
        """Who reads ``column``, for a message."""
        if self.readers is None:
            return f"table {self.table} has the columns {', '.join(self.schema.names)}"
        names = sorted(self.readers[column])
        return f"quer{'y' if len(names) == 1 else 'ies'} {', '.join(names)} read{'s' if len(names) == 1 else ''} it"

    def _change_types(self, rows: pyarrow.Table, where: str) -> pyarrow.ChunkedArray:
        """The piece's ``_change_type``, checked to be Delta's on every row."""
        import pyarrow
        import pyarrow.compute as pc

        _require(rows, CHANGE_TYPE, where)
        kinds = rows.column(CHANGE_TYPE)
        if not is_text(kinds.type):
            raise ChangeLogError(f"{where}: column {CHANGE_TYPE} is {sql_words(kinds.type)}, not a STRING")
        kinds = kinds.cast(pyarrow.string())
        bad = pc.index(pc.is_in(kinds, value_set=pyarrow.array(list(MULTIPLICITIES))), False).as_py()
        if bad >= 0:
            raise ChangeLogError(f"{where}, row {bad + 1} (counted from 1), column {CHANGE_TYPE}: "
                                 f"{sql_text(kinds[bad].as_py())} is not one of Delta's change types "
                                 f"({', '.join(MULTIPLICITIES)})")
        return kinds

    def _versions(self, rows: pyarrow.Table, where: str) -> pyarrow.Array:
        """The piece's ``_commit_version``, checked: a non-negative integer on every row, never going back within
        the piece or from the piece before; ``version`` and ``where`` move on to its last row."""
        import pyarrow
        import pyarrow.compute as pc

        _require(rows, VERSION, where)
        column = rows.column(VERSION)
        if not pyarrow.types.is_integer(column.type):
            raise ChangeLogError(f"{where}: column {VERSION} is {sql_words(column.type)}, not an integer")
        versions = column.cast(pyarrow.int64()).combine_chunks()
        bad = pc.index(pc.fill_null(pc.less(versions, 0), True), True).as_py()
        if bad >= 0:
            raise ChangeLogError(f"{where}, row {bad + 1} (counted from 1), column {VERSION}: "
                                 f"{sql_text(versions[bad].as_py())} is not a version (a non-negative integer)")
        if not len(versions):
            return versions
        back = pc.index(pc.less(versions.slice(1), versions.slice(0, len(versions) - 1)), True).as_py()
        if back >= 0:
            raise ChangeLogError(f"{where}, row {back + 2} (counted from 1), column {VERSION}: goes back from "
                                 f"{versions[back]} to {versions[back + 1]}; a change log lists versions in order "
                                 f"(write it sorted: .orderBy('{VERSION}'))")
        if versions[0].as_py() < self.version:
            raise ChangeLogError(f"{where}, row 1 (counted from 1), column {VERSION}: goes back from {self.version} "
                                 f"in {self.where} to {versions[0]}; a log's files, in the order they are read (by "
                                 f"name; with commit markers, commit by commit), follow versions (write it sorted: "
                                 f".orderBy('{VERSION}'))")
        self.version, self.where = versions[-1].as_py(), where
        return versions

    def _check_deletes(self, log: pyarrow.Table, pieces: list[tuple[str, int]]) -> None:
        """Add ``log``'s changes to ``held``, a version at a time (its inserts, then its deletes), refusing a delete
        of a record that is not held. ``pieces`` are ``(where, rows)`` of the pieces ``log`` joins, to name one."""
        keys = self._keys(log)
        row_multiplicities = log.column(MULTIPLICITY).to_pylist()
        held = self.held
        deletes: list[int] = []  # rows of the version at hand that delete: applied once its inserts are

        def delete() -> None:
            for row in deletes:
                left = held.get(keys[row], 0) + row_multiplicities[row]
                if left < 0:
                    raise self._not_held(log, row, pieces)
                if left:
                    held[keys[row]] = left
                else:
                    held.pop(keys[row], None)
            deletes.clear()

        current = None
        for row, version in enumerate(log.column(VERSION).to_pylist()):
            if version != current:
                delete()
                current = version
            if row_multiplicities[row] > 0:
                held[keys[row]] = held.get(keys[row], 0) + row_multiplicities[row]
            else:
                deletes.append(row)
        delete()

    def _not_held(self, log: pyarrow.Table, row: int, pieces: list[tuple[str, int]]) -> ChangeLogError:
        """The error for ``log``'s ``row``, a delete of a record the table does not hold, naming its piece and row."""
        ends = list(itertools.accumulate(size for _, size in pieces))
        piece = bisect.bisect_right(ends, row)
        where, first = pieces[piece][0], ends[piece] - pieces[piece][1]
        [change] = CheckedLog(self.table, log.slice(row, 1)).changes()
        return ChangeLogError(
            f"{where}, row {row - first + 1} (counted from 1): table {self.table} has no row "
            f"{record_text(self.schema.names, change.record)} to delete at version {change.version}; a log "
            f"may only delete rows the table holds")

    def _keys(self, log: pyarrow.Table) -> list[tuple]:
        """Each row's record as a key that compares as Spark SQL compares records: a DOUBLE's bits once every NaN
        is one NaN and -0.0 is 0.0; a DECIMAL's (of one scale), a TIMESTAMP's and a DATE's bits; the rest as they
        are. (No ``Decimal`` or ``datetime`` is made: a large log's keys cost a few of Arrow's passes.)"""
        import pyarrow
        import pyarrow.compute as pc

        types = pyarrow.types
        columns = []
        for name in self.schema.names:
            column = log.column(name).combine_chunks()
            kind = column.type
            if types.is_floating(kind):
                zero = pyarrow.scalar(0.0, kind)
                one_nan = pc.if_else(pc.is_nan(column), pyarrow.scalar(float("nan"), kind), column)
                column = pc.if_else(pc.equal(one_nan, zero), zero, one_nan).view(_bits(kind))
            elif types.is_decimal(kind):
                column = column.view(pyarrow.binary(kind.byte_width))
            elif types.is_timestamp(kind) or types.is_date(kind):
                column = column.view(_bits(kind))
            columns.append(column.to_pylist())
        return list(zip(*columns, strict=True))


def _bits(kind: pyarrow.DataType) -> pyarrow.DataType:
    """The integer type of ``kind``'s width (a float's, a timestamp's or a date's), to view its values as bits."""
    import pyarrow

    return pyarrow.int64() if kind.bit_width == 64 else pyarrow.int32()


def _require(rows: pyarrow.Table, name: str, where: str) -> None:
    if name not in rows.column_names:
        raise ChangeLogError(f"{where}: column {name} is missing; a change log has the table's columns, "
                             f"{CHANGE_TYPE} and {VERSION} (Delta's change data feed)")


def log_files(folder: str, table: str) -> list[str]:
    """The files of ``table``'s change log in the Parquet layout under ``folder`` (``folder/<table>``), in the
    order the log is read: those the data set's commit markers name, commit by commit (a file that landed
    without its marker is not part of the log yet); without markers, every file of the table's folder, by name.

    Raises:
        ChangeLogError: the table's folder is missing.
        CommitError: a marker is missing before a later one.
    """
    from .inputs import data_files

    path = table_path(folder, table)
    if not os.path.isdir(path):
        raise ChangeLogError(f"no change log at {path}; write one with `python -m final.spark generate`")
    numbers = _markers(folder)
    if not numbers:
        return sorted(data_files(path))
    return [file for number in numbers for file in marker_files(folder, number).get(table, [])]


def read_log(files: Sequence[str], table: str) -> CheckedLog:
    """``table``'s change log made of the Parquet ``files``, in their order (``log_files``), checked whole.

    Raises:
        ChangeLogError: a file does not read as Parquet, or fails a check of ``LogChecker``.
    """
    return LogChecker(table).take([(_read_parquet(path), path) for path in files])


def read_feed(path: str, table: str) -> CheckedLog:
    """The whole change data feed of ``table``'s Delta table at ``path``, checked as one piece (``LogChecker``).

    Raises:
        ChangeLogError: the feed fails a check of ``LogChecker``.
    """
    from . import delta

    return LogChecker(table).take([(delta.change_feed(path), f"table {table} ({path})")], delta=True)


def read_commit(folder: str, commit: Commit, checkers: dict[str, LogChecker] | None = None) -> list[Change]:
    """Every change ``commit`` holds (``read_commit_logs``), in order."""
    return [change for log in read_commit_logs(folder, commit, checkers) for change in log.changes()]


def read_commit_logs(folder: str, commit: Commit, checkers: dict[str, LogChecker] | None = None) -> list[CheckedLog]:
    """The changes of each table ``commit`` changes, checked, in the order read.

    A Delta commit's changes are the table's change data feed at that
    version, in the table's schema as of that version; a Parquet commit's,
    the files its marker names, in its order. ``checkers`` keeps each
    table's ``LogChecker`` from one call to the next (a follow's, so that a
    Parquet commit may delete rows the commits before it inserted, and a
    Delta table's schema is followed from commit to commit); without it, a
    commit is checked on its own.

    Raises:
        ChangeLogError: a change fails a check (``LogChecker``).
        CommitError: a file the marker names is gone; a Delta table has no change data feed, or it does not read.
    """
    checkers = {} if checkers is None else checkers
    if commit.table == MARKERS:
        logs = []
        for table, paths in marker_files(folder, commit.number).items():
            for path in paths:
                if not os.path.exists(path):
                    raise CommitError(f"{path} is gone: commit {commit.number} of {folder} named it; a log only "
                                      f"grows (write a new log, and follow it with a new --out and --checkpoint)")
            checker = checkers.setdefault(table, LogChecker(table))
            logs.append(checker.take([(_read_parquet(path), path) for path in paths]))
        return logs
    from deltalake import DeltaTable

    from . import delta

    path = table_path(folder, commit.table)
    where = _delta_commit(path, commit)
    table = DeltaTable(path, version=commit.number)  # its feed in the table's schema then
    if table.metadata().configuration.get("delta.enableChangeDataFeed", "").lower() != "true":
        raise CommitError(f"{where}: the table has no change data feed; create it with the property "
                          f"delta.enableChangeDataFeed = true (write_deltalake(..., configuration="
                          f"{{'delta.enableChangeDataFeed': 'true'}}))")
    try:
        feed = delta.change_feed(table, commit.number, commit.number)
    except Exception as error:  # delta-rs raises a bare Exception when a file of the feed is gone
        raise CommitError(
            f"{where}: its change data feed does not read ({str(error).splitlines()[0]}); a follow reads every "
            f"commit's changes, so VACUUM must keep the files of the commits not yet followed. If they are gone, "
            f"follow a copy of the table as it is now (a new Delta table of its rows) with a new --out and "
            f"--checkpoint") from error
    if commit.table not in checkers:  # made only when needed: a worker knows no bound table's columns itself
        checkers[commit.table] = LogChecker(commit.table)
    return [checkers[commit.table].take([(feed, where)], version=commit.number)]


def _delta_commit(path: str, commit: Commit) -> str:
    """How a message names Delta commit ``commit`` of the table at ``path``."""
    return f"table {commit.table} ({path}), commit {commit.number} ({DELTA_LOG}/{commit.number:020d}.json)"


def _changes_schema(path: str, number: int) -> bool:
    """Whether Delta commit ``number`` of the table at ``path`` sets the table's schema: its log entry has a
    ``metaData`` action (the first commit's does)."""
    entry = os.path.join(path, DELTA_LOG, f"{number:020d}.json")
    if not os.path.exists(entry):
        return False
    with open(entry) as file:
        return any('"metaData"' in line for line in file)


def _schema_at(path: str, number: int) -> pyarrow.Schema:
    """The schema of the Delta table at ``path`` as of its commit ``number``, from its log."""
    import pyarrow
    from deltalake import DeltaTable

    return pyarrow.schema(DeltaTable(path, version=number).schema().to_arrow())


def types_before(folder: str, commit: Commit) -> dict[str, pyarrow.DataType]:
    """Each column's type in a Delta table's schema just before ``commit``, where ``commit`` changes the schema
    (none otherwise, nor before a table's first commit): what ``LogChecker.types`` holds when it takes the
    commit after the one before it, for a commit read on its own (an executor's), so that a column the commit
    drops is told from one the table never had."""
    path = table_path(folder, commit.table)
    if commit.number == 0 or not _changes_schema(path, commit.number):
        return {}
    return {field.name: field.type for field in _schema_at(path, commit.number - 1)}


def widened_at(folder: str, commit: Commit, columns: Sequence[tuple[str, str]]) -> list[Widened]:
    """The columns of ``columns`` (a Delta table's as a follow holds them: names and SQL types) that ``commit``
    widens, as Delta's type widening allows (``widens``), found in its schema without reading its rows; none for
    a commit that does not change the table's schema (its log entry has no ``metaData`` action). A change that
    is no widening is left to ``LogChecker`` when the commit is read."""
    path = table_path(folder, commit.table)
    if not _changes_schema(path, commit.number):
        return []
    schema = _schema_at(path, commit.number)
    found = []
    for name, kind in columns:
        held = arrow_type(kind)
        if name in schema.names and schema.field(name).type != held and widens(held, schema.field(name).type):
            found.append(Widened(commit.table, name, held, schema.field(name).type, _delta_commit(path, commit),
                                 commit.number))
    return found


def _read_parquet(path: str) -> pyarrow.Table:
    import pyarrow
    import pyarrow.parquet

    try:
        return pyarrow.parquet.read_table(path)
    except (OSError, pyarrow.ArrowInvalid) as error:
        raise ChangeLogError(f"{path} does not read as Parquet ({str(error).splitlines()[0]}); write it again"
                             ) from error


def _values(column: pyarrow.ChunkedArray) -> list:
    """A typed column's values as a record holds them: a TIMESTAMP as a naive datetime in UTC."""
    import pyarrow

    if pyarrow.types.is_timestamp(column.type):
        column = column.cast(pyarrow.timestamp(column.type.unit))
    return column.to_pylist()


def _converts(kind: pyarrow.DataType, wanted: pyarrow.DataType) -> bool:
    """True if a column of type ``kind`` is read as ``wanted`` (``_typed``): the same type, a timestamp in another
    unit or zone, text of another string type, or a type ``wanted`` widens."""
    import pyarrow

    types = pyarrow.types
    return (kind == wanted or (types.is_timestamp(kind) and types.is_timestamp(wanted))
            or (types.is_string(wanted) and is_text(kind)) or widens(kind, wanted))


def _typed(column: pyarrow.ChunkedArray, field: pyarrow.Field, where: str) -> pyarrow.ChunkedArray:
    """``column``, of a type that ``_converts`` to ``field``'s, as that type: a timestamp in another unit or zone
    (pandas writes nanoseconds; a timestamp without a zone is taken to be in UTC) with no nanoseconds."""
    import pyarrow
    import pyarrow.compute as pc

    if pyarrow.types.is_timestamp(field.type) and pyarrow.types.is_timestamp(column.type):
        try:
            return column.cast(field.type)
        except pyarrow.ArrowInvalid:
            ticks = column.cast(pyarrow.int64())
            row = pc.index(pc.not_equal(ticks, pc.multiply(pc.divide(ticks, 1000), 1000)), True).as_py()
            raise ChangeLogError(f"{where}, row {row + 1} (counted from 1), column {field.name}: "
                                 f"{column.cast(pyarrow.string())[row]} has nanoseconds; a TIMESTAMP holds "
                                 f"microseconds") from None
    return column if column.type == field.type else column.cast(field.type)


INTEGER_DIGITS = {8: 3, 16: 5, 32: 10, 64: 20}
"""The decimal digits of the largest value of each signed integer width: a DECIMAL with as many digits left of its
point holds every value of it."""


def widens(kind: pyarrow.DataType, wanted: pyarrow.DataType) -> bool:
    """True if every value of type ``kind`` is a value of ``wanted`` as it is: Delta's type widening (a wider
    integer; FLOAT to DOUBLE; an integer of up to 32 bits to DOUBLE; an integer to a DECIMAL with as many digits
    left of its point; a DECIMAL to one with no fewer digits either side of its point). pandas and Arrow infer
    the narrower types from values, and a Delta table may widen a column's type.

    >>> import pyarrow
    >>> widens(pyarrow.int32(), pyarrow.int64()), widens(pyarrow.decimal128(8, 2), pyarrow.decimal128(10, 3))
    (True, True)
    >>> widens(pyarrow.int64(), pyarrow.float64()), widens(pyarrow.decimal128(8, 2), pyarrow.decimal128(8, 3))
    (False, False)
    """
    import pyarrow

    types = pyarrow.types
    if types.is_signed_integer(kind) and types.is_signed_integer(wanted):
        return kind.bit_width <= wanted.bit_width
    if types.is_float32(kind) and types.is_float64(wanted):
        return True
    if types.is_signed_integer(kind) and types.is_float64(wanted):
        return kind.bit_width <= 32  # a DOUBLE holds every integer of up to 53 bits
    if types.is_signed_integer(kind) and types.is_decimal(wanted):
        return wanted.precision - wanted.scale >= INTEGER_DIGITS[kind.bit_width]
    if types.is_decimal(kind) and types.is_decimal(wanted):
        return kind.scale <= wanted.scale and kind.precision - kind.scale <= wanted.precision - wanted.scale
    return False


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

    Option ``until``, a JSON offset, is where a query with ``Trigger.AvailableNow`` ends: the commits there
    when the follow started. The reader supports that trigger itself (``SupportsTriggerAvailableNow``):
    for a source that does not, Spark runs one micro-batch instead, and after a stop or a kill that one is
    the batch its offset log holds, so the commits that landed since were left with success reported.
    """

    @classmethod
    def name(cls) -> str:
        return "final_commits"

    def schema(self) -> str:
        return COMMIT_SCHEMA

    def simpleStreamReader(self, schema: object) -> SimpleDataSourceStreamReader:
        return _CommitReader(self.options["folder"], self.options["dataset"], json.loads(self.options["start"]),
                             int(self.options.get("grace_ms", "0")), json.loads(self.options.get("tables", "null")),
                             json.loads(self.options.get("until", "null")))


class _CommitReader(SimpleDataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets: ``{source: newest commit delivered}``; a read delivers the complete commits after them (per
    table, those stamped before the grace period, in order), and under ``Trigger.AvailableNow`` none after
    ``target``."""

    def __init__(self, folder: str, dataset: str, start: dict[str, int], grace_ms: int,
                 tables: list[str] | None = None, until: dict[str, int] | None = None) -> None:
        self.folder, self.dataset, self.start, self.grace_ms, self.tables = folder, dataset, start, grace_ms, tables
        self.until = until
        self.target: dict[str, int] | None = None

    def initialOffset(self) -> dict:
        return dict(self.start)

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self.until if self.until is not None else newest_commits(self.folder, self.dataset,
                                                                               self.tables)

    def read(self, start: dict) -> tuple[Iterator[tuple], dict]:
        cut = time.time() * 1000 - self.grace_ms
        newest = check_offsets(self.folder, self.dataset, start, self.tables)
        if self.target is not None:
            newest = {source: min(number, self.target.get(source, -1)) for source, number in newest.items()}
        end = {source: start.get(source, -1) for source in newest}
        for commit in sorted(commits_between(self.folder, self.dataset, start, newest, self.tables),
                             key=lambda found: (found.table, found.number)):
            if commit.number == end[commit.table] + 1 and (not self.grace_ms or commit.timestamp <= cut):
                end[commit.table] = commit.number
        return self.readBetweenOffsets(start, end), end

    def readBetweenOffsets(self, start: dict, end: dict) -> Iterator[tuple]:
        return iter([(commit.table, commit.number, commit.timestamp)
                     for commit in commits_between(self.folder, self.dataset, start, end, self.tables)])
