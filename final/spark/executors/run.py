"""Following a data set's queries with their state on the executors: one stream, each output a Delta table.

``follow_on_executors`` is what ``python -m final.spark follow --state
executors`` runs for each data set. ``start`` starts one streaming query for
all the queries over a data set: its ``ChangeStream``, each query lowered onto
it (``lowering.lowered``), their output changes in one union, and a
``foreachBatch`` sink, with the state store Spark keeps in RocksDB with
changelog checkpointing (``STATE_STORE``) under ``CHECKPOINT/<dataset>/spark``.
A restart with the same checkpoint goes on from Spark's offsets and state: it
reads only the commits after the last micro-batch Spark committed.

A follow on the executors keeps the driver's follow's record beside Spark's
checkpoint, so that ``status`` and ``verify`` read both alike: in
``CHECKPOINT/<dataset>``, ``queries.json`` (the queries, what they read, the
follow's identity, and ``state``: ``executors``; ``follow.check_record``),
``binding.jsonl`` (each commit and the version it is bound to, as the source
binds a micro-batch's range: ``changes.bound_commits``, appended by the sink
before it writes) and ``state.json`` (the version through which every output
is written). A follow that keeps its state in the driver is refused over it,
and the other way round (``follow.check_state``).

``DeltaSink`` writes each query's output table as the driver's follow does
(``follow.commit_output``): the query's result, its change data feed on, a
Delta commit per data set version at which the result changed (and one at
the micro-batch's last version), each carrying Delta's transaction
identifier (the follow's and the query's app id, the data set version) and
the version in its ``commitInfo``. A micro-batch Spark runs again after a
kill is written from the first version its table lacks: each change is
written once.

``FINAL_FOLLOW_KILL=<point>:<n>`` (as ``follow`` reads it) makes the
process SIGKILL itself the ``n``-th time the sink reaches ``point``:
``sink`` (a micro-batch computed, its state committed, no output written),
``output`` (one query's output committed, not the next ones', nor Spark's
commit log).
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from .. import delta, sources
from ..follow import (
    STOP_STATUS,
    Bound,
    Followed,
    FollowError,
    FollowStopped,
    _kill_point,
    _read_bindings,
    _Stop,
    _write_json,
    applied_version,
    binding,
    check_record,
    commit_output,
    data_error,
    held_tables,
    output_table_schema,
    over_held,
    readers_of,
    record_held,
    widened_tables,
)
from ..outputs import remove_leftovers, replace_file
from ..sql.logical import nodes
from ..tables_and_queries import DATASETS
from .changes import MULTIPLICITY, QUERY, ROW, VERSION, ChangeStream, bound_commits, decoded_row
from .lowering import check_placement, exchanged, lowered
from .steps import ValueRefused, executors_plan

if TYPE_CHECKING:
    import pyarrow
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from ..sql import SqlQuery
    from ..tables_and_queries import Table

WORKERS = {"spark.python.authenticate.socketTimeout": "120s"}
"""A stream starts Python workers of several kinds (its source, each mapInArrow, each state processor); on a busy
machine one may take longer to start than Spark's default of 15 s to connect back, which fails the stream. Set
when the session starts."""

STATE_STORE = {
    "spark.sql.streaming.stateStore.providerClass":
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
}
"""Spark's state store as the executors keep it: RocksDB on each executor's disk, and a checkpoint of only the
changes since the last snapshot per micro-batch (not a copy of every key's state)."""


class DeltaSink:
    """``foreachBatch``: each micro-batch's commits bound (``binding.jsonl``), then each query's changes written
    to its output table ``out/<query>`` a data set version at a time, exactly once, then ``state.json``.

    The changes reach the driver as pickled rows, a micro-batch's at a
    time: what the driver holds is one micro-batch's output changes, never
    a table's rows.

    Invariant: each query's table holds the changes of every version through its transaction version for
    ``application(query)`` (Delta's ``txn``), each once, and of none after it; ``binding.jsonl`` binds every
    version of each micro-batch whose output was written; ``state.json``'s version is at most every table's.
    """

    def __init__(self, spark: SparkSession, followed: Followed, queries: Sequence[SqlQuery], out: str, state: str,
                 identity: str, tables: Sequence[str], log: Callable[[str], None] = print) -> None:
        self.followed, self.queries, self.out, self.state = followed, list(queries), out, state
        self.identity, self.tables, self.log = identity, list(tables), log
        self.schemas = {query.name: output_table_schema(spark, self.path(query), query) for query in self.queries}

    def path(self, query: SqlQuery) -> str:
        return os.path.join(self.out, query.name)

    def application(self, query: SqlQuery) -> str:
        """The app id of ``query``'s output commits (Delta's ``txn``): this follow's and the query's."""
        return f"final.spark.executors/{self.identity}/{query.name}"

    def written(self, query: SqlQuery) -> int:
        """The data set version through which ``query``'s table holds this follow's changes (-1: none)."""
        if not delta.exists(self.path(query)):
            return -1
        from deltalake import DeltaTable

        found = DeltaTable(self.path(query)).transaction_version(self.application(query))
        return -1 if found is None else found

    def bind(self, batch_id: int) -> int:
        """Append the bindings of micro-batch ``batch_id``'s commits not in ``binding.jsonl`` yet (the range of
        Spark's offset log for it, bound as the source binds it); the last version of the micro-batch."""
        log = os.path.join(self.state, "spark", "offsets")
        end = _offset(log, batch_id)
        start = _offset(log, batch_id - 1) if batch_id > 0 else {"version": -1, "commits": {}}
        path = os.path.join(self.state, "binding.jsonl")
        held = _read_bindings(path, repair=True) if os.path.exists(path) else []
        through = held[-1].last if held else -1
        if end["version"] > through:
            fresh = [Bound(commit.table, commit.number, version, version, commit.timestamp)
                     for commit, version in bound_commits(self.followed.folder, self.followed.dataset, start, end,
                                                          self.tables) if version > through]
            with open(path, "a") as file:
                for bound in fresh:
                    file.write(json.dumps(bound.__dict__) + "\n")
                file.flush()
                os.fsync(file.fileno())
        return end["version"]

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        started = time.perf_counter()
        last = self.bind(batch_id)
        written = {query.name: self.written(query) for query in self.queries}  # a Delta table opened once each
        due = [query for query in self.queries if written[query.name] < last]
        if not due:
            # Run again all the same: Spark 4.3 fails a micro-batch whose state stores did not all commit
            # (STATE_STORE_COMMIT_VALIDATION_FAILED), and they commit as the batch's job runs.
            frame.write.format("noop").mode("overwrite").save()
            self._applied(last)
            return
        found = frame.toArrow()  # the micro-batch's job: its tasks have committed the state store when it returns
        _kill_point("sink")
        changes: dict[str, dict[int, Counter]] = defaultdict(lambda: defaultdict(Counter))
        for name, version, multiplicity, row in zip(found.column(QUERY).to_pylist(), found.column(VERSION).to_pylist(),
                                                    found.column(MULTIPLICITY).to_pylist(),
                                                    found.column(ROW).to_pylist(), strict=True):
            changes[name][version][decoded_row(row)] += multiplicity
        for query in due:
            by_version = changes.get(query.name, {})
            versions = [version for version in sorted(by_version) if version > written[query.name]
                        and any(by_version[version].values())]
            for version in versions if versions and versions[-1] == last else [*versions, last]:
                self._commit(query, version, {row: count for row, count in by_version.get(version, {}).items()
                                              if count})
            _kill_point("output")
        self._applied(last)
        self.log(f"{self.followed.dataset}: applied through version {last} (micro-batch {batch_id}, "
                 f"{time.perf_counter() - started:.2f} s)")

    def _commit(self, query: SqlQuery, version: int, changes: dict[tuple, int]) -> None:
        schema = self.schemas[query.name]
        commit_output(self.path(query), schema, query, changes, (self.application(query), version),
                      functools.partial(self._copies, query, schema, changes))

    def _copies(self, query: SqlQuery, schema: pyarrow.Schema, changes: dict[tuple, int],
                retracted: list[tuple]) -> list[int]:
        """How many copies of each ``retracted`` row ``query``'s result holds after ``changes``: the copies its
        output table holds, and the change. (Only a query without a key needs it: its table is merged on whole
        rows.) The rows are compared as Arrow gives them back, the table's and the retracted alike."""
        import pyarrow
        from deltalake import DeltaTable

        from ..sqlfloat import sql_row

        held = Counter(sql_row(tuple(row.values())) for row in DeltaTable(self.path(query)).to_pyarrow_table(
            columns=schema.names).to_pylist())
        asked = pyarrow.Table.from_arrays([pyarrow.array(list(column), field.type) for column, field in zip(
            zip(*retracted, strict=True), schema, strict=True)], schema=schema).to_pylist()
        return [held[sql_row(tuple(row.values()))] + changes[original] for row, original in zip(
            asked, retracted, strict=True)]

    def _applied(self, version: int) -> None:
        replace_file(os.path.join(self.state, "state.json"), lambda path: _write_json(path, {"version": version}))


def _offset(log: str, batch_id: int) -> dict:
    """The source's end offset of micro-batch ``batch_id`` in Spark's offset log ``log`` (its last line)."""
    with open(os.path.join(log, str(batch_id))) as file:
        return json.loads(file.read().splitlines()[-1])


def start(spark: SparkSession, followed: Followed, queries: Sequence[SqlQuery], out: str, state: str, identity: str,
          held: dict[str, Table], available_now: bool = True, trigger_seconds: float = 10.0,
          log: Callable[[str], None] = print) -> StreamingQuery:
    """Start ``queries`` (of the data set ``followed``, over its Delta tables ``followed.folder/<table>``, whose
    columns are held as ``held`` says) as one stream, their state on the executors, its checkpoint
    ``state/spark``, each query's output the Delta table ``out/<query>`` (``DeltaSink``). With
    ``available_now``, the stream stops once it has taken every commit there when it started. Each micro-batch
    written is said through ``log``.

    Raises:
        PlacementError: a step of a query cannot run on the executors yet (``lowering.lowered``).
    """
    from ..partitioned import ship_final

    for query in queries:
        check_placement(query)
    ship_final(spark)  # the source, the mapInArrow steps and the state processors import final on the workers
    for key, value in STATE_STORE.items():
        spark.conf.set(key, value)
    spark.dataSource.register(ChangeStream)
    dataset, tables = followed.dataset, list(DATASETS[followed.dataset])
    # The source runs in a Python worker, which knows no bound table: it is told the tables and their columns.
    source = (spark.readStream.format(ChangeStream.name()).option("folder", followed.folder)
              .option("dataset", dataset).option("tables", json.dumps(tables))
              .option("columns", json.dumps({table: held[table].columns for table in tables}))
              .option("readers", json.dumps({table: readers_of(queries, held, table) for table in tables}))
              .option("grace_ms", "0" if available_now else "1000").load())
    source = exchanged(source, int(spark.conf.get("spark.sql.shuffle.partitions")))
    changes = functools.reduce(lambda one, other: one.union(other), [lowered(query, source) for query in queries])
    trigger = {"availableNow": True} if available_now else {"processingTime": f"{trigger_seconds} seconds"}
    sink = DeltaSink(spark, followed, queries, out, state, identity, tables, log)
    return (changes.writeStream.foreachBatch(sink).option("checkpointLocation", os.path.join(state, "spark"))
            .trigger(**trigger).queryName(f"executors-{dataset}").start())


def follow_on_executors(spark: SparkSession, followed: Sequence[Followed], out: str, checkpoint: str | None = None,
                        available_now: bool = True, trigger_seconds: float = 10.0,
                        log: Callable[[str], None] = print) -> dict[str, int]:
    """Keep each data set's queries (``followed``, over Delta tables) up to date with their state on the
    executors, each output the Delta table ``out/<query>`` (``DeltaSink``), a data set's checkpoint
    ``checkpoint/<dataset>`` (default ``out/_checkpoint``); the version each data set's outputs are written
    through. With ``available_now``, until every commit there when it starts is taken; otherwise until
    stopped: in the main thread, SIGINT and SIGTERM stop the streams and raise ``FollowStopped``. A commit that
    widens a column a table is held with starts its data set's stream again over the wider type (``Following``).

    Raises:
        PlacementError: a step of a query cannot run on the executors yet (before any stream starts).
        FollowError: a data set's tables are a Parquet change log; a checkpoint belongs to other queries, or to a
            follow that keeps its state in the driver (``follow.check_record``); with ``available_now``, a
            commit there at the start was left; a query raises for a value at a version, as Spark SQL does on
            the same data (``follow.data_error``: nothing is written for that micro-batch); a commit fails its
            checks (a column a query reads is gone or narrowed: ``sources.LogChecker``); a widened column would
            change a query's result type or steps.
        FollowStopped: a signal stopped the follow (its ``status`` is 130 or 143).
        StreamingQueryException: a micro-batch failed otherwise.
    """
    checkpoint = checkpoint or os.path.join(out, "_checkpoint")
    for each in followed:
        if sources.layout(each.folder, each.dataset) != "delta":
            raise FollowError(f"{each.folder}: state on the executors follows Delta tables, and these are a Parquet "
                              f"change log: follow them with --state driver")
        for query in each.queries:
            check_placement(query)
    running: list[Following] = []
    with _Stop() as stop:
        for each in followed:
            state = os.path.join(checkpoint, each.dataset)
            os.makedirs(state, exist_ok=True)
            remove_leftovers(state)
            record = check_record(checkpoint, each, write=True, state="executors")
            present = sources.newest_commits(each.folder, each.dataset)
            before = applied_version(checkpoint, each.dataset)
            if before >= 0:
                log(f"{each.dataset}: restarted at version {before}, from Spark's checkpoint (offsets and state)")
            running.append(Following(spark, each, out, state, record, available_now, trigger_seconds, log))
            if available_now:
                _await(running[-1:], stop, checkpoint)
                _check_reached(checkpoint, each, present)
        if not available_now:
            _await(running, stop, checkpoint)
    return {each.dataset: applied_version(checkpoint, each.dataset) for each in followed}


class Following:
    """One data set's stream (``start``), started again over the wider type when the next commit to bind widens
    a column its tables are held with.

    The steps are compiled for the columns' types as held, and the source
    reads no commit that widens one (``changes._ChangeReader``): the stream
    comes to that commit and takes nothing more. Then (``widened``) it is
    stopped, the wider columns are recorded as held (``follow.widened_tables``,
    which refuses a query whose result type would change), and the stream is
    started again from its checkpoint with every step compiled over them. The
    state is the same: the rows and aggregates held have the same values in
    the wider type. A step's state is found by its place in the plan, so a
    query whose steps the widening changes is refused.
    """

    POLL_SECONDS = 5.0
    """How often an idle live stream looks for a widening commit it stopped at."""

    def __init__(self, spark: SparkSession, followed: Followed, out: str, state: str, record: dict,
                 available_now: bool, trigger_seconds: float, log: Callable[[str], None]) -> None:
        self.spark, self.followed, self.out, self.state, self.log = spark, followed, out, state, log
        self.identity, self.held = record["follow"], held_tables(record, followed.dataset)
        self.available_now, self.trigger_seconds = available_now, trigger_seconds
        self.polled = time.monotonic()
        self.stream = self._start()

    def _start(self) -> StreamingQuery:
        return start(self.spark, self.followed, over_held(self.followed.queries, self.held), self.out, self.state,
                     self.identity, self.held, self.available_now, self.trigger_seconds, self.log)

    def due(self, ended: bool) -> bool:
        """Whether to look for a widening commit now: the stream ended, or a live one is idle and was not
        looked at for ``POLL_SECONDS``."""
        now = time.monotonic()
        if not ended and (now - self.polled < self.POLL_SECONDS or self.stream.status["isTriggerActive"]):
            return False
        self.polled = now
        return True

    def widened(self) -> bool:
        """If the first commit after those bound widens a column as held, start the stream again over the wider
        type, and say so; whether it did.

        Raises:
            FollowError: a query's result type, or its steps, would change with the wider type.
        """
        dataset, folder = self.followed.dataset, self.followed.folder
        path = os.path.join(self.state, "binding.jsonl")
        bound = {each.table: each.commit for each in (_read_bindings(path) if os.path.exists(path) else [])}
        newest = sources.newest_commits(folder, dataset)
        if all(number <= bound.get(table, -1) for table, number in newest.items()):
            return False
        first = sources.commits_between(folder, dataset, bound, newest)[0]
        widened = sources.widened_at(folder, first, self.held[first.table].columns)
        if not widened:
            return False
        self.stream.stop()
        queries = over_held(self.followed.queries, self.held)
        tables, again = widened_tables(queries, self.held, widened)
        for before, after in zip(queries, again, strict=True):
            if _steps(before) != _steps(after):
                raise FollowError(f"{widened[0].where}: column {widened[0].column} is widened, and the steps of "
                                  f"query {before.name} change with it; a step's state on the executors is found "
                                  f"by its place: follow the query with a new --out and --checkpoint")
        record_held(self.state, replace(self.followed, queries=again), tables,
                    {"follow": self.identity, "state": "executors"})
        self.held = tables
        self.log(f"{dataset}: the queries compiled again for the widened columns "
                 f"({'; '.join(tables[event.table].ddl for event in widened)}) at version "
                 f"{applied_version(os.path.dirname(self.state), dataset)}; the stream starts again")
        self.stream = self._start()
        return True


def _steps(query: SqlQuery) -> list[str]:
    """The kinds of the steps of ``query``'s plan on the executors, by place."""
    return [type(node).__name__ for node in nodes(executors_plan(query.plan))]


FAILED = re.compile(r"^final\.spark\.(?:changelog\.ChangeLogError|sources\.CommitError): (.*)$", re.MULTILINE)
"""The line a commit that fails its checks (``sources.LogChecker``, read on an executor) leaves in the error of
the micro-batch it failed."""


def _await(running: list[Following], stop: _Stop, checkpoint: str) -> None:
    """Wait for the streams ``running`` to end (each started again where a commit widens a column), or for a
    signal: then stop them.

    Raises:
        FollowStopped: a signal arrived.
        FollowError: a query's step raised for a value at a version, as Spark SQL does on the same data
            (``steps.ValueRefused``), or a commit failed its checks, which failed its micro-batch; a widened
            column would change a query (``Following.widened``).
        StreamingQueryException: a micro-batch failed otherwise.
    """
    from pyspark.errors import StreamingQueryException

    datasets = [each.followed.dataset for each in running]
    waiting = list(running)
    try:
        while waiting:
            for each in list(waiting):
                ended = each.stream.awaitTermination(0.5 / len(waiting))
                if stop.signal is not None:
                    for other in running:
                        other.stream.stop()
                    where = "; ".join(f"{name} written through version {applied_version(checkpoint, name)}"
                                      for name in datasets)
                    raise FollowStopped(f"follow: stopped by {signal.Signals(stop.signal).name} ({where}); start it "
                                        f"again with the same --out and --checkpoint to go on",
                                        STOP_STATUS[stop.signal])
                if each.due(ended) and not each.widened() and ended:
                    waiting.remove(each)
    except StreamingQueryException as failed:
        text = str(failed)
        refused = ValueRefused.found_in(text)
        if refused is not None:
            query, version, why = refused
            dataset = next(each.followed.dataset for each in running
                           if any(query == one.name for one in each.followed.queries))
            raise data_error(query, version, dataset, binding(checkpoint, dataset), why,
                             applied_version(checkpoint, dataset)) from None
        checked = FAILED.search(text)
        if checked is not None:
            raise FollowError(checked.group(1)) from None
        raise


def _check_reached(checkpoint: str, followed: Followed, present: dict[str, int]) -> None:
    """Refuse to report success before every commit of ``present`` is bound and every bound version written.

    Raises:
        FollowError: a commit of ``present`` is not bound, or a bound version is not written; it names them.
    """
    path = os.path.join(checkpoint, followed.dataset, "binding.jsonl")
    bindings = _read_bindings(path) if os.path.exists(path) else []
    newest = {bound.table: bound.commit for bound in bindings}
    left = [f"table {table}: commits {newest.get(table, -1) + 1}..{number}" for table, number in present.items()
            if newest.get(table, -1) < number]
    applied, through = applied_version(checkpoint, followed.dataset), bindings[-1].last if bindings else -1
    if applied < through:
        left.append(f"versions {applied + 1}..{through}, bound but not written")
    if left:
        raise FollowError(f"{followed.dataset}: --available-now stopped before applying what was there when it "
                          f"started: {'; '.join(left)} (written through version {applied}); nothing is lost: start "
                          f"the same command again to apply them")
