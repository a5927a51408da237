"""A change stream on Spark: every row a change ``(version, multiplicity, row)``, read by the executors.

Between the steps of a query lowered onto Structured Streaming
(``lowering``), a change travels as the three columns of ``CHANGES`` (on
its way to a keyed step, packed with the other changes of its key group
and version: ``PACKED``): the
data set's ``_version``, the ``_multiplicity`` (an int, as in ``final/``),
and the ``_row`` as ``final/`` holds it (a tuple of Python values: an
exact ``Decimal``, a naive ``datetime`` in UTC, NaN as ``sqlfloat.NAN``),
pickled. So no step depends on how Spark or Arrow would convert a value to
Python and back: a stateful operator on the executors sees the very records
``final/``'s driver follow sees. Spark reads no value of a row:
a shuffle groups changes by their key's group (``key_group``), and the
query's output is typed on the driver (``typed``).

``ChangeStream`` is the source: a Python streaming data source over a data
set's Delta tables whose offsets are ``{"version": v, "commits": {table:
newest commit}}``. A micro-batch is a range of whole commits, each bound
to the next version of the data set in commit-time order (``sources
.binding_order``), which is a function of the two offsets alone: Spark
keeps the offsets in its checkpoint, so a restart binds a replayed range
exactly as before, with no binding file of the follow's own. Each commit
is one input partition: an executor reads its change data feed with
``deltalake``, checks it (``sources.LogChecker``) and turns it into change
rows. So a micro-batch holds whole versions, and the driver reads no row.
"""

from __future__ import annotations

import json
import math
import pickle
import time
import zlib
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from .. import sources
from ..sqlfloat import float_positions, sql_row
from ..tables_and_queries import TABLES

if TYPE_CHECKING:
    import pyarrow

VERSION, MULTIPLICITY, ROW, TABLE, PACK, QUERY, SIDE = ("_version", "_multiplicity", "_row", "_table", "_changes",
                                                     "_query", "_side")
CHANGES = f"{VERSION} BIGINT, {MULTIPLICITY} BIGINT, {ROW} BINARY"
"""The columns of a change stream between two steps, in Spark's DDL."""
KEY = "_key"
"""The column a keyed step's shuffle groups by: its key group (``key_group``)."""

PACKED = f"{KEY} INT, {VERSION} BIGINT, {PACK} BINARY"
"""The columns of a change stream on its way to a GROUP BY: each row holds the changes at one version of one key
group's keys from one Arrow batch, ``[(row, multiplicity), ...]`` pickled (``packed``). The shuffle and the state
processor then handle a row per key group and version, not per change: the Python worker that calls a processor
spends tens of microseconds on each row it hands over."""

TAGGED = f"{KEY} INT, {SIDE} INT, {VERSION} BIGINT, {PACK} BINARY"
"""The columns of a change stream on its way to any other keyed step (``steps.KeyedBy``): as ``PACKED``, with the
input the changes are of, and each change with its key (``shuffle_key``): ``[(key, row, multiplicity), ...]``."""

OUTPUT = f"{QUERY} STRING, {CHANGES}"
"""The columns of a data set's queries' output changes, each named by its query."""
SOURCE = f"{TABLE} STRING, {CHANGES}"
"""The source's columns: a change stream of every table of the data set, each change naming its table."""

START = ""
"""The table named by the one row the source adds to the data set's version 0 (the empty record, multiplicity 1):
a global aggregate's row over no rows exists from the first version on, whether or not a row ever reaches it, and
this row is what calls its state processor then; and it is the one row of a SELECT without FROM (``One``)
(``lowering``)."""

PICKLE = pickle.HIGHEST_PROTOCOL


def encoded(row: tuple) -> bytes:
    """A row as ``_row`` holds it."""
    return pickle.dumps(row, PICKLE)


def decoded_row(data: bytes) -> tuple:
    """The row ``_row`` holds (``encoded``'s inverse)."""
    return pickle.loads(data)


def packed(changes: list) -> bytes:
    """Changes as ``PACK`` holds them: ``(row, multiplicity)`` pairs, or ``(key, row, multiplicity)``."""
    return pickle.dumps(changes, PICKLE)


def unpacked(data: bytes) -> list:
    """The changes ``PACK`` holds (``packed``'s inverse)."""
    return pickle.loads(data)


def change_batch(changes: Sequence[tuple[int, int, tuple]]) -> pyarrow.RecordBatch:
    """``(version, multiplicity, row)`` changes as an Arrow batch of ``CHANGES``' columns."""
    import pyarrow

    return pyarrow.RecordBatch.from_arrays(
        [pyarrow.array([version for version, _, _ in changes], pyarrow.int64()),
         pyarrow.array([multiplicity for _, multiplicity, _ in changes], pyarrow.int64()),
         pyarrow.array([encoded(row) for _, _, row in changes], pyarrow.binary())],
        names=[VERSION, MULTIPLICITY, ROW])


def source_batch(changes: Sequence[tuple[str, tuple[int, int, tuple]]]) -> pyarrow.RecordBatch:
    """``(table, (version, multiplicity, row))`` changes as an Arrow batch of ``SOURCE``'s columns."""
    import pyarrow

    batch = change_batch([change for _, change in changes])
    return pyarrow.RecordBatch.from_arrays([pyarrow.array([table for table, _ in changes], pyarrow.string()),
                                            *batch.columns], names=[TABLE, *batch.schema.names])


def changes_of(batch: pyarrow.RecordBatch, table: str | None = None) -> Iterator[tuple[int, int, tuple]]:
    """An Arrow batch of ``CHANGES``' columns as ``(version, multiplicity, row)`` changes; with ``table``, a batch
    of ``SOURCE``'s columns, and only the changes of that table (chosen in Arrow: the others are not decoded)."""
    if table is not None:
        import pyarrow.compute

        batch = batch.filter(pyarrow.compute.equal(batch.column(TABLE), table))
    versions = batch.column(VERSION).to_pylist()
    multiplicities = batch.column(MULTIPLICITY).to_pylist()
    rows = batch.column(ROW).to_pylist()
    return zip(versions, multiplicities, map(decoded_row, rows), strict=True)


def typed(changes: Sequence[tuple[int, int, tuple]], names: Sequence[str], types: Sequence[str]
          ) -> pyarrow.Table:
    """``(version, multiplicity, row)`` changes as an Arrow table: the rows' values in columns ``names`` of the
    Spark SQL ``types``, then ``VERSION`` and ``MULTIPLICITY``."""
    import pyarrow

    from ..arrow_types import arrow_type

    columns = list(zip(*(row for _, _, row in changes), strict=True)) if changes else [()] * len(types)
    arrays = [pyarrow.array(list(column), arrow_type(kind)) for column, kind in zip(columns, types, strict=True)]
    arrays += [pyarrow.array([version for version, _, _ in changes], pyarrow.int64()),
               pyarrow.array([multiplicity for _, multiplicity, _ in changes], pyarrow.int64())]
    return pyarrow.Table.from_arrays(arrays, names=[*names, VERSION, MULTIPLICITY])


def shuffle_key(value: Any) -> bytes:
    """A key of any shape as bytes that are equal exactly when ``final/`` finds the keys equal (Python's ``==``,
    with NaN equal to itself as Spark SQL has it): what a keyed step's shuffle groups by when its sides' keys are
    of types Spark would not compare as ``final/`` does (an INT against a DECIMAL, a row of several types).
    Numbers are written as the exact fraction they are, so ``1``, ``1.0`` and ``DECIMAL 1.00`` are one key, as
    they are one value to ``==``."""
    return repr(_canonical(value)).encode()


def _canonical(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_canonical(part) for part in value)
    if isinstance(value, float) and not math.isfinite(value):
        return ("number", "nan" if math.isnan(value) else repr(value))
    if isinstance(value, (int, float, Decimal)):  # a bool is an int; a SQL DECIMAL is always finite
        return ("number", *value.as_integer_ratio())  # in lowest terms: equal numbers, equal pairs
    return (type(value).__name__, value)


KEY_GROUPS = 4096
"""How many key groups a keyed step's keys fall into (``key_group``): the grouping key Spark's shuffle and state
store see. A call of a state processor, and each state read and write, costs a round trip from the Python worker
to the JVM, tens to hundreds of microseconds; a group per key made a first load of 100,000 customers 200,000 of
them. A key group holds its keys' state apart (a dict by key), so a step's work on a key is the key's rows still.
Spark keeps state by key group, so this number is part of a checkpoint: changing it needs a new one."""


def key_group(key: bytes) -> int:
    """The key group of a key written as ``shuffle_key`` writes it: a hash that every process computes alike."""
    return zlib.crc32(key) % KEY_GROUPS


class CommitPartition(InputPartition):
    """One commit of one table, bound to ``version`` of the data set: an executor's task reads it whole, in
    ``columns`` (the table's, as the follow holds them: ``(name, Spark SQL type)``); ``readers`` names the
    queries that read each column (``sources.LogChecker``'s; None: every column is read)."""

    def __init__(self, folder: str, table: str, number: int, timestamp: int, version: int,
                 columns: tuple[tuple[str, str], ...], readers: dict[str, list[str]] | None) -> None:
        super().__init__(json.dumps([table, number]))
        self.folder, self.table, self.number, self.timestamp, self.version = folder, table, number, timestamp, version
        self.columns, self.readers = columns, readers


def bound_commits(folder: str, dataset: str, start: dict, end: dict, tables: Sequence[str] | None = None
                  ) -> list[tuple[sources.Commit, int]]:
    """The commits of a micro-batch from offset ``start`` to ``end`` (``_ChangeReader``'s), each with the data
    set version it is bound to: the one binding of a range, which the source reads by and a follow records.

    Raises:
        CommitError: the commits between the two offsets are not as many as their versions (the tables were
            written anew).
    """
    commits = sources.commits_between(folder, dataset, start["commits"], end["commits"], tables)
    if start["version"] + len(commits) != end["version"]:
        raise sources.CommitError(f"{folder}: the commits from {start} to {end} are {len(commits)}, not "
                                  f"{end['version'] - start['version']}: the tables were written anew; follow "
                                  f"them with a new --out and --checkpoint")
    return [(commit, start["version"] + 1 + at) for at, commit in enumerate(commits)]


class ChangeStream(DataSource):
    """``spark.readStream.format("final_changes").option("folder", F).option("dataset", D).option("tables", T)``:
    the changes of a data set's Delta tables, in ``SOURCE``'s columns, a micro-batch of whole commits at a time.

    Options as ``sources.CommitStream`` takes them: ``tables`` (a JSON list of the data set's tables: the
    source runs in a Python worker that knows no table bound with ``--table``) and ``grace_ms`` (hold back the
    commits of the last that many milliseconds, so commits are bound in the order they were made); and
    ``columns``, a JSON object of each table's columns as the follow holds them (``[[name, type], ...]``; by
    default the catalog's), in which an executor reads each commit; ``readers``, of each table's columns and the
    queries that read them (by default every column is read), so that a column no query reads may go.
    """

    @classmethod
    def name(cls) -> str:
        return "final_changes"

    def schema(self) -> str:
        return SOURCE

    def streamReader(self, schema: object) -> DataSourceStreamReader:
        columns = {table: tuple(map(tuple, held)) for table, held in json.loads(self.options.get("columns",
                                                                                                  "{}")).items()}
        return _ChangeReader(self.options["folder"], self.options["dataset"],
                             int(self.options.get("grace_ms", "0")), json.loads(self.options.get("tables", "null")),
                             columns, json.loads(self.options.get("readers", "null")))


class _ChangeReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets ``{"version": newest version bound, "commits": {table: newest commit bound}}``; the commits after
    one offset up to the next, in binding order, are the versions after its ``version``. Under
    ``Trigger.AvailableNow`` no commit after ``target`` (the newest when the stream started) is taken: the reader
    supports that trigger itself, as ``sources.CommitStream`` does, since Spark runs a source that does not
    for one micro-batch only (after a kill, the one its offset log holds, leaving later commits untaken)."""

    def __init__(self, folder: str, dataset: str, grace_ms: int, tables: list[str] | None,
                 columns: dict[str, tuple[tuple[str, str], ...]], readers: dict[str, dict[str, list[str]]] | None
                 ) -> None:
        self.folder, self.dataset, self.grace_ms, self.tables = folder, dataset, grace_ms, tables
        self.columns, self.readers = columns, readers
        self.target: dict[str, int] | None = None
        if sources.layout(folder, dataset, tables) != "delta":
            raise sources.CommitError(f"{folder}: state on the executors follows Delta tables; this data set is a "
                                      f"Parquet change log (follow it with the driver's follow)")

    def initialOffset(self) -> dict:
        return {"version": -1, "commits": {}}

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = sources.newest_commits(self.folder, self.dataset, self.tables)

    def latestOffset(self, start: dict, limit: object) -> dict:
        cut = time.time() * 1000 - self.grace_ms
        delivered = start["commits"]
        newest = sources.check_offsets(self.folder, self.dataset, delivered, self.tables)
        if self.target is not None:
            newest = {table: min(number, self.target.get(table, -1)) for table, number in newest.items()}
        end = {table: delivered.get(table, -1) for table in newest}
        commits = sources.commits_between(self.folder, self.dataset, delivered, newest, self.tables)
        for commit in sorted(commits, key=lambda found: (found.table, found.number)):
            if commit.number == end[commit.table] + 1 and (not self.grace_ms or commit.timestamp <= cut):
                end[commit.table] = commit.number
        self._before_widening(commits, end)
        bound = sum(end[table] - delivered.get(table, -1) for table in end)
        return {"version": start["version"] + bound, "commits": {table: n for table, n in end.items() if n >= 0}}

    def _before_widening(self, commits: list[sources.Commit], end: dict[str, int]) -> None:
        """Cut ``end`` before the first of ``commits`` (in binding order) that widens a column as held
        (``sources.widened_at``), and before every commit after it: the steps are compiled for the columns'
        types, so the follow starts its stream again over the wider ones (``run.follow_on_executors``) before
        such a commit is read."""
        for place, commit in enumerate(commits):
            if commit.number > end[commit.table]:
                continue
            held = self.columns.get(commit.table) or TABLES[commit.table].columns
            if sources.widened_at(self.folder, commit, held):
                for later in commits[place:]:
                    end[later.table] = min(end[later.table], later.number - 1)
                return

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        return [CommitPartition(self.folder, commit.table, commit.number, commit.timestamp, version,
                                self.columns.get(commit.table) or TABLES[commit.table].columns,
                                None if self.readers is None else self.readers.get(commit.table, {}))
                for commit, version in bound_commits(self.folder, self.dataset, start, end, self.tables)]

    def read(self, partition: CommitPartition) -> Iterator[pyarrow.RecordBatch]:
        import pyarrow

        from ..arrow_types import arrow_type

        commit = sources.Commit(partition.table, partition.number, partition.timestamp)
        floats = float_positions(partition.columns)
        schema = pyarrow.schema([pyarrow.field(name, arrow_type(kind)) for name, kind in partition.columns])
        checker = sources.LogChecker(partition.table, schema, partition.readers)
        checker.types = sources.types_before(partition.folder, commit)  # as if it had taken the commit before
        checkers = {partition.table: checker}
        if partition.version == 0:
            yield source_batch([(START, (0, 1, ()))])
        for log in sources.read_commit_logs(partition.folder, commit, checkers):
            for first in range(0, log.arrow.num_rows, BATCH_ROWS):  # a slice's rows at a time as Python objects
                piece = sources.CheckedLog(log.table, log.arrow.slice(first, BATCH_ROWS))
                yield source_batch([(log.table, (partition.version, change.multiplicity,
                                                 sql_row(change.record, floats))) for change in piece.changes()])

    def commit(self, end: dict) -> None:
        """Nothing to let go of: the tables keep their commits (Delta's log), and Spark keeps the offsets."""


BATCH_ROWS = 10_000
"""Rows per Arrow batch a commit is handed to Spark in, and made Python objects at a time: a large first commit is
neither one batch nor a worker's memory's worth of tuples."""
