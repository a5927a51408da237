"""``follow``: keep every query of a log folder's data sets up to date as commits land, exactly once.

Structured Streaming reads each data set's change logs (``LOGS/<dataset>/<table>``,
Parquet in the change-feed columns) as one stream, the union of its tables'
file streams; ``foreachBatch`` hands each micro-batch to a ``Follower``, which
feeds ``final/`` one version at a time and writes each query's result as a
change feed of its own:

``OUT/<query>/part-<version>.parquet``
    the query's columns (dots made underscores), ``_change_type`` (``insert``
    or ``delete``) and ``_commit_version``: the rows whose multiplicity
    changed at that version, one row per copy. Every version of the input
    logs gets a file, empty when the result did not change, so the files
    say how far the follow has come. Each file is written beside its place
    and renamed into it, so a file is whole or absent. ``read_output``
    reads a query's feed back as a change log (with ``_multiplicity``), so
    a follow's output can be another pipeline's input.

**When a version is applied.** Commits land in version order (as Delta's
do), but one micro-batch may hold part of a commit: a version is complete
once a later version appears in any table's log, or when the source is
drained (``--available-now``: process what is there, then stop). So in a
live follow, the newest version waits for the next commit.

**Exactly once across restarts.** Nothing is trusted that a kill could cut
short. ``CHECKPOINT/<dataset>/`` holds Spark's own streaming checkpoint and,
after every micro-batch that applied a version, a snapshot of the
consolidated input collections as of the last applied version ``S``
(``snapshot-S/<table>.parquet``, each record with its copies) and
``state.json`` naming it (and the log files read so far), replaced
atomically. A restart refuses a log rewritten since (a file it read is
gone), and otherwise loads snapshot
``S`` into fresh dataflows (their output at the load is not written: it
was, version by version, before ``S`` was recorded), then reads the log's
tail (every update after ``S``) from the log files themselves, and only
then resumes the stream; a file the stream delivers that the tail already
read is skipped, and an update at or before the applied version is never
applied twice. Versions after ``S`` are applied again and their output files
written again, identically (a version's changes depend only on the
inputs up to it), over whatever a kill left. So after a SIGKILL at any point
the restarted follow ends with the output an uninterrupted one writes: no
version missing, none written twice.

``FINAL_FOLLOW_KILL=<point>:<n>`` makes the process kill itself (SIGKILL)
the ``n``-th time it reaches ``point`` (``batch``: a micro-batch arrived;
``apply``: a version applied, its outputs not written; ``output``: an
output file written but not yet renamed into place; ``snapshot``: a
snapshot written, ``state.json`` not yet switched), so the tests can check
the guarantee at each of those moments.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from ..trace import add_multiplicity
from .catalog import DATASETS, TABLES, Query, queries_of
from .changelog import CHANGE_TYPE, MULTIPLICITY, VERSION, typed_log, with_multiplicity
from .incremental import IncrementalQuery
from .outputs import remove_leftovers, replace_file, replace_folder
from .pipeline import rows
from .sqlfloat import sql_row

if TYPE_CHECKING:
    import pyarrow
    from pyspark.sql import DataFrame, SparkSession

KILL_VARIABLE = "FINAL_FOLLOW_KILL"
COPIES = "_copies"
FILE, TABLE = "_file", "_table"

Update = tuple[int, str, tuple, int]
"""``(version, table, record, multiplicity)``."""


class FollowError(ValueError):
    """A log folder or checkpoint the follow cannot use: the message names it and says what to do."""


_reached: dict[str, int] = {}
"""How many times this process has reached each kill point."""


def _kill_point(point: str) -> None:
    """SIGKILL this process the n-th time ``point`` is reached, if ``FINAL_FOLLOW_KILL`` is ``point:n``."""
    wanted, _, count = os.environ.get(KILL_VARIABLE, "").partition(":")
    if wanted != point:
        return
    _reached[point] = _reached.get(point, 0) + 1
    if _reached[point] == int(count or 1):
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


def _say(line: str) -> None:
    """A follow's line, flushed: a live follow runs for hours, and its lines should show as they happen."""
    print(line, flush=True)


def datasets_in(logs: str) -> list[str]:
    """The data sets whose every table has a log folder under ``logs``, in catalog order.

    Raises:
        FollowError: ``logs`` is not a folder, or holds no data set's logs.
    """
    if not os.path.isdir(logs):
        raise FollowError(f"no log folder {logs}; write one with `python -m final.spark generate --out DIR` "
                          f"and follow DIR/logs")
    found = [name for name, tables in DATASETS.items()
             if all(os.path.isdir(os.path.join(logs, name, table)) for table in tables)]
    if not found:
        raise FollowError(f"{logs} holds no data set's change logs: expected folders <dataset>/<table> for one of "
                          + "; ".join(f"{name} ({', '.join(tables)})" for name, tables in DATASETS.items()))
    return found


def output_columns(query: Query) -> list[str]:
    """A query's output column names as Parquet holds them: ``users.id`` becomes ``users_id``."""
    return [column.replace(".", "_") for column in query.columns]


def _arrow_type(kind: str) -> pyarrow.DataType:
    """The Arrow type of a Spark SQL type name as the catalog and Spark's schemas spell them."""
    import pyarrow

    kind = kind.upper()
    if kind.startswith("DECIMAL"):
        precision, scale = (int(part) for part in kind[kind.index("(") + 1:-1].split(","))
        return pyarrow.decimal128(precision, scale)
    simple = {"BIGINT": pyarrow.int64(), "INT": pyarrow.int32(), "DOUBLE": pyarrow.float64(),
              "STRING": pyarrow.string(), "TIMESTAMP": pyarrow.timestamp("us"), "BOOLEAN": pyarrow.bool_()}
    return simple[kind]


def output_schema(spark: SparkSession, query: Query) -> pyarrow.Schema:
    """The Arrow schema of ``query``'s change feed: its SQL result's column types, then the change columns."""
    import pyarrow

    empty = spark.newSession()  # its own temporary views: empty tables of the inputs' types
    for table in query.inputs:
        columns = ", ".join(f"{name} {kind}" for name, kind in TABLES[table].columns)
        empty.createDataFrame([], columns).createOrReplaceTempView(table)
    result = empty.sql(query.sql).schema
    fields = [pyarrow.field(name, _arrow_type(column.dataType.simpleString()))
              for name, column in zip(output_columns(query), result.fields, strict=True)]
    return pyarrow.schema([*fields, pyarrow.field(CHANGE_TYPE, pyarrow.string()),
                           pyarrow.field(VERSION, pyarrow.int64())])


def _write_table(table: pyarrow.Table, path: str, point: str | None = None) -> None:
    """``table`` as Parquet at ``path``; then the kill point ``point``, if any (the file written, not yet renamed)."""
    import pyarrow.parquet

    pyarrow.parquet.write_table(table, path)
    if point:
        _kill_point(point)


@dataclass
class Follower:
    """One data set's queries kept up to date: what ``foreachBatch`` calls, and what a restart rebuilds.

    Invariant: every version up to ``applied`` is applied to every query's
    dataflow, and its output files are written; ``pending`` holds, by log
    file, the updates after ``applied`` seen so far; ``inputs`` is each
    table's consolidated collection as of ``applied``.
    """

    spark: SparkSession
    dataset: str
    logs: str
    out: str
    checkpoint: str
    log: Callable[[str], None] = print
    applied: int = -1
    newest: int = -1
    pending: dict[str, list[Update]] = field(default_factory=dict)
    known_files: set[str] = field(default_factory=set)
    inputs: dict[str, dict[tuple, int]] = field(default_factory=dict)
    engines: dict[str, IncrementalQuery] = field(default_factory=dict)
    schemas: dict[str, pyarrow.Schema] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.queries = queries_of(self.dataset)
        self.engines = {query.name: IncrementalQuery(query) for query in self.queries}
        self.schemas = {query.name: self._schema(query) for query in self.queries}
        self.inputs = {table: {} for table in DATASETS[self.dataset]}
        self.folder = os.path.join(self.checkpoint, self.dataset)
        os.makedirs(self.folder, exist_ok=True)
        remove_leftovers(self.folder)
        for query in self.queries:
            os.makedirs(os.path.join(self.out, query.name), exist_ok=True)
            remove_leftovers(os.path.join(self.out, query.name))

    def _schema(self, query: Query) -> pyarrow.Schema:
        """The schema of ``query``'s feed: its first file's, on a restart (no Spark job), else Spark SQL's."""
        import pyarrow.parquet

        folder = os.path.join(self.out, query.name)
        written = sorted(name for name in os.listdir(folder) if name.startswith("part-")) if os.path.isdir(
            folder) else []
        if written:
            return pyarrow.parquet.read_schema(os.path.join(folder, written[0])).remove_metadata()
        return output_schema(self.spark, query)

    # Restart: the snapshot, then the log's tail.

    def restore(self) -> None:
        """Load the last snapshot (if any) and read every update after it from the log files."""
        import pyarrow.parquet

        state_path = os.path.join(self.folder, "state.json")
        if os.path.exists(state_path):
            with open(state_path) as file:
                state = json.load(file)
            version = state["version"]
            for uri in state["files"]:
                path = unquote(urlparse(uri).path)
                if not os.path.exists(path):
                    raise FollowError(
                        f"the change log under {os.path.join(self.logs, self.dataset)} was rewritten since checkpoint "
                        f"{self.folder} read it ({path} is gone): a checkpoint follows one log as it grows; follow "
                        f"the new log with a new --checkpoint and --out")
            for table in DATASETS[self.dataset]:
                names = TABLES[table].names
                held = pyarrow.parquet.read_table(os.path.join(self.folder, state["snapshot"], f"{table}.parquet"))
                self.inputs[table] = {sql_row(tuple(row[name] for name in names)): row[COPIES]
                                      for row in held.to_pylist()}
            for query in self.queries:
                self.engines[query.name].apply(version, [
                    (table, record, copies) for table in query.inputs for record, copies in self.inputs[table].items()
                ])
            self.applied = version
            self.log(f"{self.dataset}: restarted from the snapshot at version {version}")
        tail = self._read_logs()
        self.take(tail)

    def _read_logs(self) -> list[tuple[str, int, str, tuple, int]]:
        """Every update in the data set's log files now: ``(file, version, table, record, multiplicity)``."""
        from pyspark.sql import functions as F

        found = []
        for table in DATASETS[self.dataset]:
            frame = with_multiplicity(typed_log(self.spark.read.parquet(os.path.join(self.logs, self.dataset, table)),
                                                table))
            names = TABLES[table].names
            selected = frame.select(F.col("_metadata.file_path"), VERSION, *names, MULTIPLICITY)
            found += [(row[0], row[1], table, row[2:-1], row[-1]) for row in rows(selected)]
        return found

    # The stream.

    def stream(self) -> DataFrame:
        """The data set's logs as one streaming DataFrame: a row per update, each table's columns prefixed."""
        from pyspark.sql import functions as F

        frames = []
        for table in DATASETS[self.dataset]:
            path = os.path.join(self.logs, self.dataset, table)
            schema = self.spark.read.parquet(path).schema
            frame = with_multiplicity(typed_log(self.spark.readStream.schema(schema).parquet(path), table))
            frames.append(frame.select(
                F.lit(table).alias(TABLE), F.col("_metadata.file_path").alias(FILE), F.col(VERSION),
                F.col(MULTIPLICITY), *(F.col(name).alias(f"{table}__{name}") for name in TABLES[table].names),
            ))
        union = frames[0]
        for frame in frames[1:]:
            union = union.unionByName(frame, allowMissingColumns=True)
        return union

    def on_batch(self, frame: DataFrame, batch_id: int) -> None:
        """``foreachBatch``: take the batch's new files, apply every complete version, snapshot."""
        from pyspark.sql import functions as F

        _kill_point("batch")
        updates = []
        for table in DATASETS[self.dataset]:
            prefixed = [f"{table}__{name}" for name in TABLES[table].names]
            chosen = frame.where(F.col(TABLE) == table).select(FILE, VERSION, *prefixed, MULTIPLICITY)
            updates += [(row[0], row[1], table, row[2:-1], row[-1]) for row in rows(chosen)]
        self.take(updates)
        self.advance(self.newest - 1)

    def take(self, updates: Iterable[tuple[str, int, str, tuple, int]]) -> None:
        """Hold the updates of files not seen before that come after the applied version (NaN as ``NAN``, so a
        record's copies and its deletions meet in ``inputs``)."""
        fresh: dict[str, list[Update]] = defaultdict(list)
        for file, version, table, record, multiplicity in updates:
            if file in self.known_files:
                continue
            self.newest = max(self.newest, version)
            if version > self.applied:
                fresh[file].append((version, table, sql_row(record), multiplicity))
        self.known_files.update(file for file, *_ in updates)
        self.pending.update(fresh)

    def advance(self, through: int) -> None:
        """Apply every held version up to ``through``, in order, writing each one's outputs; then snapshot."""
        by_version: dict[int, list[tuple[str, tuple, int]]] = defaultdict(list)
        for held in self.pending.values():
            for version, table, record, multiplicity in held:
                if version <= through:
                    by_version[version].append((table, record, multiplicity))
        if not by_version:
            return
        for version in sorted(by_version):
            batch = by_version[version]
            changes = {query.name: self.engines[query.name].apply(
                version, [update for update in batch if update[0] in query.inputs]) for query in self.queries}
            for table, record, multiplicity in batch:
                add_multiplicity(self.inputs[table], record, multiplicity)
            _kill_point("apply")
            for query in self.queries:
                self._write_changes(query, version, changes[query.name])
            self.applied = version
        self.pending = {file: kept for file, held in self.pending.items()
                        if (kept := [update for update in held if update[0] > self.applied])}
        self._snapshot()
        self.log(f"{self.dataset}: applied through version {self.applied} "
                 f"({len(by_version)} version{'s' if len(by_version) != 1 else ''})")

    def _write_changes(self, query: Query, version: int, changes: dict[tuple, int]) -> None:
        import pyarrow

        schema = self.schemas[query.name]
        columns: list[list] = [[] for _ in schema.names]
        for row, multiplicity in sorted(changes.items(), key=lambda item: repr(item)):
            for _ in range(abs(multiplicity)):
                for position, value in enumerate(row):
                    columns[position].append(value)
                columns[-2].append("insert" if multiplicity > 0 else "delete")
                columns[-1].append(version)
        table = pyarrow.Table.from_arrays(
            [pyarrow.array(values, type=kind) for values, kind in zip(columns, schema.types, strict=True)],
            schema=schema)
        replace_file(os.path.join(self.out, query.name, f"part-{version:08d}.parquet"),
                     lambda temporary: _write_table(table, temporary, "output"))

    def _snapshot(self) -> None:
        """The inputs as of ``applied`` to ``snapshot-<applied>/``, then ``state.json`` switched to it."""
        import pyarrow

        name = f"snapshot-{self.applied}"

        def write_snapshot(folder: str) -> None:
            os.makedirs(folder)
            for table, held in self.inputs.items():
                columns = TABLES[table].columns
                arrays = [pyarrow.array([record[position] for record in held], type=_arrow_type(kind))
                          for position, (_, kind) in enumerate(columns)]
                arrays.append(pyarrow.array(list(held.values()), type=pyarrow.int64()))
                names = [*TABLES[table].names, COPIES]
                _write_table(pyarrow.Table.from_arrays(arrays, names=names), os.path.join(folder, f"{table}.parquet"))

        def write_state(path: str) -> None:
            with open(path, "w") as file:
                json.dump({"version": self.applied, "snapshot": name, "files": sorted(self.known_files)}, file)

        replace_folder(os.path.join(self.folder, name), write_snapshot)
        _kill_point("snapshot")
        replace_file(os.path.join(self.folder, "state.json"), write_state)
        for old in os.listdir(self.folder):
            if old.startswith("snapshot-") and old != name:
                shutil.rmtree(os.path.join(self.folder, old), ignore_errors=True)


def follow(
    spark: SparkSession, logs: str, out: str, checkpoint: str | None = None, available_now: bool = True,
    trigger_seconds: float = 10.0, log: Callable[[str], None] | None = None,
) -> dict[str, int]:
    """Follow every data set in ``logs``, writing each query's change feed under ``out``; versions applied per
    data set (with ``available_now``: after processing what is there; otherwise this runs until stopped).

    Raises:
        FollowError: ``logs`` holds no data set's logs.
    """
    checkpoint = checkpoint or os.path.join(out, "_checkpoint")
    names = datasets_in(logs)
    followers = []
    for name in names:
        follower = Follower(spark, name, logs, out, checkpoint, log or _say)
        follower.restore()
        follower.advance(follower.newest - 1)
        writer = follower.stream().writeStream.foreachBatch(follower.on_batch).option(
            "checkpointLocation", os.path.join(checkpoint, name, "spark"))
        trigger = {"availableNow": True} if available_now else {"processingTime": f"{trigger_seconds} seconds"}
        query = writer.trigger(**trigger).queryName(f"follow-{name}").start()
        followers.append((follower, query))
        if available_now:
            query.awaitTermination()
            follower.advance(follower.newest)
    if not available_now:
        spark.streams.awaitAnyTermination()
    return {follower.dataset: follower.applied for follower, _ in followers}


def read_output(spark: SparkSession, out: str, query: Query) -> DataFrame:
    """A query's change feed as a follow wrote it, with ``_multiplicity`` (+1 insert, -1 delete)."""
    return with_multiplicity(spark.read.parquet(os.path.join(out, query.name)))
