"""``follow``: keep every query of a data set up to date as its tables' commits land, never dropping a change.

The tables are Delta tables or the Parquet change-log layout (``sources``).
Structured Streaming drives the micro-batches: a ``sources.CommitStream``
per data set, whose offsets are each table's newest commit, and
``foreachBatch`` hands each micro-batch (the commits it brings) to a
``Follower``, which reads and checks every commit, binds it to a version of
the data set, feeds ``final/`` one version at a time, and writes each
query's result as a Delta table with its change data feed on.

**One durable order.** Delta tables have their own versions and no
multi-table transactions, so the follow makes the data set's versions
itself: version ``n`` *is* one table's commit (Materialize calls this
reclocking). A micro-batch's new commits are bound in commit-time order
(ties in catalog order), each to the next version, and the binding is
appended to ``CHECKPOINT/<dataset>/binding.jsonl`` and flushed to disk
before anything is applied; a restart replays the same binding. A Parquet
log's versions are already shared by its tables: a marker's commit binds its
own versions, which must all come after the versions bound before. Spark SQL's
truth at version ``n`` is each table as of its newest commit bound at or
before ``n`` (``verify``).

**Nothing dropped, nothing misplaced.** A commit is complete when Delta's log
holds it, or its marker is written; only complete commits are read, every
one in full, and each table's commits are bound in their own order with no
gap. A commit for a version already applied (a Parquet file of an old
version, a table whose history was rewritten) stops the follow with exit 2,
never silence. Every commit is checked before it is bound, by the one
check of a change log (``sources.LogChecker``: columns, types, change types,
versions), and in the Parquet layout a delete of a row the table does not
hold is refused too (Delta's feed cannot hold one: it is made from the rows
a commit removed).

**Checkpoints that grow with the change.** A micro-batch appends a line per
commit to the binding and switches ``state.json`` (the last version whose
outputs are all written); it never writes the inputs. The inputs' durable
copy is the source itself: a restart reads each table as of its commit bound
at that version (Delta's time travel; the Parquet log's files) into fresh
dataflows, then applies the bound versions after it. Each output commit
carries a Delta transaction identifier (``txn``): the application id is the
follow's identity (made once, kept in ``queries.json``) and the query's
name, the version the data set version it brings the output to. A restart
reads from each output table how far this follow wrote it, so an output a
killed run already committed is recognised and not written twice, and
OPTIMIZE or another writer committing to an output table in between does
not disturb it (``read_output`` gives each change its data set version).

**One set of queries.** A follow keeps a data set's built-in queries, or the
SQL queries it is given (``--sql``), and only the data sets those read: its
own tables too (``--table``, ``own_tables``). ``CHECKPOINT/<dataset>/queries.json``
records each query's name and the hash of its SQL text, the columns it reads
of each table with their types (``reads_of``), and each table's columns as
the follow holds them: outputs and checkpoint belong to those, so a restart
with other queries, another text under a query's name, or queries that read
other columns is refused; a column no query reads is no reason to. It also
records where the follow keeps its state (``STATES``: here, in the driver;
or on Spark's executors, ``executors.run``, which keeps the same record), and
a restart that would keep it the other way is refused (``check_state``).

**Schema changes.** A follow holds the columns its tables had when it
started (``held_tables``; a ``--table`` is bound with them at a restart,
``recorded_tables``), and reads each Delta commit in its own schema
(``sources.LogChecker``): a column added is left out (``SELECT *`` keeps its
columns, and its output table its schema); a column widened as Delta's type
widening allows is held wider from its commit on, and the queries compiled
again over it (``over_held``) where no result type changes, else the follow
stops; a column a query reads that is dropped or changed otherwise stops it,
naming the table, the column and the commit. A value Spark SQL
would raise an error for (a division by zero, an overflow: ``SqlRuntimeError``
in ``final/``) stops the follow at that version, naming the query, version and
row; nothing of that version is written, and the versions before it are.

``FINAL_FOLLOW_KILL=<point>:<n>`` makes the process SIGKILL itself the
``n``-th time it reaches ``point``: ``startup`` (restored, the stream not
started), ``batch`` (a micro-batch arrived), ``bind`` (its commits bound,
none applied), ``apply`` (a version applied, no output written), ``output``
(one query's output committed, not the others'), ``checkpoint`` (every
output written, ``state.json`` not switched).

SIGINT and SIGTERM stop the follow at a micro-batch boundary: the batch in
flight finishes, the stream stops, one line says how far it came, and the
exit status is 130 or 143; the outputs and checkpoint are consistent, so a
restart goes on exactly once.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .. import add_multiplicity
from . import delta, sources
from .arrow_types import arrow_type, sql_type, sql_words
from .changelog import CHANGE_TYPE, MULTIPLICITY, VERSION, ChangeLogError, multiplicities
from .incremental import IncrementalQuery
from .outputs import remove_leftovers, replace_file
from .query import Table
from .sources import MARKERS, Change, Commit, CommitError, LogChecker
from .sql.errors import runtime_cause
from .sqlfloat import sql_row
from .tables_and_queries import BOUND, BUILT_IN, DATASETS, TABLES, Query, queries_of

if TYPE_CHECKING:
    import pyarrow
    from deltalake import DeltaTable
    from pyspark.sql import DataFrame, SparkSession

KILL_VARIABLE = "FINAL_FOLLOW_KILL"
STOP_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""Exit statuses of a follow stopped by a signal: 128 + the signal's number, as a shell reports it."""


GRACE_MS = 1000
"""A live follow takes a commit only once it is this old (``sources.CommitStream``), so commits are bound in
the order they were made; with --available-now every commit there is taken."""


class FollowError(ValueError):
    """A log folder, checkpoint or output the follow cannot use: the message names it and says what to do."""


def commit_name(table: str) -> str:
    """How a message names the source of a bound commit: a table, or a change log's commit markers."""
    return f"the log's commit markers ({MARKERS})" if table == MARKERS else f"table {table}"


def data_error(query: str, version: int, dataset: str, bindings: Sequence[Bound], refused: object,
               applied: int) -> FollowError:
    """The error that stops a follow where query ``query`` raises at ``version`` of ``dataset`` for a value, as
    Spark SQL does on the same data (``refused``, a ``SqlRuntimeError`` naming the row): the commits bound to
    that version, and that nothing is written for it (the outputs and checkpoint stay at ``applied``)."""
    commits = ", ".join(f"{commit_name(bound.table)}'s commit {bound.commit}" for bound in bindings
                        if bound.first <= version <= bound.last)
    return FollowError(
        f"query {query} fails at version {version} of {dataset} ({commits}): {refused}, as Spark SQL fails on this "
        f"data; nothing is written for version {version} (the outputs and checkpoint stay at version {applied}). A "
        f"bound version is bound for good: make the query take such values (a CASE, or a WHERE that leaves their "
        f"rows out) and follow it with a new --out and --checkpoint")


class Stopped(Exception):
    """Raised in a micro-batch that begins after a stop was asked for, so Spark does not mark it done."""


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
    """The data sets with a folder under ``logs``, in catalog order, each checked to hold all its tables.

    Raises:
        FollowError: ``logs`` is not a folder, holds no data set, or a data set lacks a table.
    """
    if not os.path.isdir(logs):
        raise FollowError(f"no log folder {logs}; write one with `python -m final.spark generate --out DIR` "
                          f"and follow DIR/logs")
    found = [name for name in BUILT_IN if os.path.isdir(os.path.join(logs, name))]
    if not found:
        raise FollowError(f"{logs} holds no data set: expected folders <dataset>/<table> (Delta tables or Parquet "
                          f"change logs) for one of " + "; ".join(f"{name} ({', '.join(tables)})"
                                                                  for name in BUILT_IN
                                                                  for tables in [DATASETS[name]]))
    for name in found:
        try:
            sources.layout(os.path.join(logs, name), name)
        except CommitError as error:
            raise FollowError(str(error)) from None
    return found


@dataclass(frozen=True)
class Followed:
    """A data set a follow keeps up to date: the folder of its tables (``folder/<table>``) and the queries
    over them."""

    dataset: str
    folder: str
    queries: tuple[Query, ...]


def data_sets(logs: str | None, queries: Sequence[Query] | None = None, bound: str | None = None
              ) -> tuple[list[Followed], list[str]]:
    """What a follow of ``logs`` (and of ``bound``, the folder of the tables bound with ``--table``) keeps up to
    date: each data set a query reads, with those queries (by default each data set's built-in ones); and the
    data sets there that no query reads, which it skips.

    Raises:
        FollowError: ``logs`` holds no data set, or a data set lacks a table (``datasets_in``); a query reads a
            data set that neither ``logs`` holds nor ``--table`` binds; no query reads any; a query's output
            columns cannot be a Delta table's (``output_columns``).
    """
    folders = {name: os.path.join(logs, name) for name in datasets_in(logs)} if logs else {}
    if bound is not None:
        folders[BOUND] = bound
    if queries is None:
        chosen = {name: tuple(queries_of(name)) for name in folders}
    else:
        for query in queries:
            if query.dataset not in folders:
                where = f"--logs {logs} holds " + (", ".join(name for name in folders if name != BOUND) or "none")
                raise FollowError(f"{query.source}: reads {', '.join(query.inputs)}, tables of data set "
                                  f"{query.dataset!r}, which is not followed here ({where}"
                                  f"{'; --table binds ' + ', '.join(DATASETS[BOUND]) if bound else ''}); give "
                                  f"--logs a folder holding {query.dataset}/<table> for each of its tables")
        chosen = {name: tuple(query for query in queries if query.dataset == name) for name in folders}
    followed = [Followed(name, folder, chosen[name]) for name, folder in folders.items() if chosen[name]]
    for each in followed:
        for query in each.queries:
            output_columns(query)  # refused before any work: a column its output table cannot hold
    if not followed:
        raise FollowError("no query reads the tables given (with --table, name the queries with --sql FILE.sql)")
    return followed, [name for name in folders if not chosen[name]]


def query_record(followed: Followed, tables: Mapping[str, Table] | None = None) -> dict:
    """What a follow's outputs and checkpoint of ``followed`` belong to (``CHECKPOINT/<dataset>/queries.json``):
    each query's name and the SHA-256 of its SQL text (``queries``), the columns each query reads of each table,
    with their types (``reads``, ``reads_of``), and each table's columns as the follow holds them (``tables``:
    ``tables``, by default the catalog's)."""
    held = held_tables({}, followed.dataset) if tables is None else tables
    return {"queries": {query.name: hashlib.sha256(query.sql.encode()).hexdigest() for query in followed.queries},
            "reads": {query.name: reads_of(query, held) for query in followed.queries},
            "tables": {table: held[table].ddl for table in DATASETS[followed.dataset]}}


def reads_of(query: Query, tables: Mapping[str, Table]) -> dict[str, dict[str, str]]:
    """The columns ``query`` reads of each of its tables, with their types in ``tables``: those its plan reads
    (``sql.rules.prune.read_columns``), or for a query built in Python every column of its inputs. No change
    to a table's other columns changes the query's result."""
    from .sql.rules.prune import read_columns

    plan = getattr(query, "plan", None)
    read = read_columns(plan) if plan is not None else {table: set(TABLES[table].names) for table in query.inputs}
    return {table: {name: kind for name, kind in tables[table].columns if name in read.get(table, ())}
            for table in query.inputs}


def readers_of(queries: Sequence[Query], tables: Mapping[str, Table], table: str) -> dict[str, list[str]]:
    """The queries (names) that read each column of ``table`` as ``tables`` hold it (``LogChecker``'s
    ``readers``): a column no query reads may change or go."""
    readers: dict[str, list[str]] = {name: [] for name in tables[table].names}
    for query in queries:
        for name in reads_of(query, tables).get(table, {}):
            readers[name].append(query.name)
    return readers


def held_tables(record: Mapping, dataset: str) -> dict[str, Table]:
    """Each table of ``dataset`` as a follow's ``record`` holds it: its columns and types as recorded (``tables``),
    each table's key the catalog's; the catalog's table where the record has none."""
    recorded = record.get("tables", {})
    return {table: TABLES[table] if table not in recorded else replace(TABLES[table], columns=_columns_of(
        recorded[table])) for table in DATASETS[dataset]}


DDL_COLUMN = re.compile(r"(\w+) ([A-Z]+(?:\(\d+,\s*\d+\))?)")
"""A column in ``Table.ddl``: its name, then its type (``DECIMAL(8,2)`` with its parameters)."""


def _columns_of(ddl: str) -> tuple[tuple[str, str], ...]:
    """``Table.ddl``'s columns: ``"id BIGINT, fare DECIMAL(8,2)"`` as ``(("id", "BIGINT"), ("fare", "DECIMAL(8,2)"))``.

    >>> _columns_of("id BIGINT, fare DECIMAL(8,2)")
    (('id', 'BIGINT'), ('fare', 'DECIMAL(8,2)'))
    """
    return tuple((match.group(1), match.group(2)) for match in DDL_COLUMN.finditer(ddl))


def recorded_tables(checkpoint: str, dataset: str) -> dict[str, Table] | None:
    """The tables of ``dataset`` as a follow recorded in ``checkpoint`` holds them (``held_tables``), or None if no
    follow of it bound a commit there. A restart binds ``--table`` tables with these columns, not the table's
    columns now, so a column added since is left out (``SELECT *`` keeps its columns)."""
    folder = os.path.join(checkpoint, dataset)
    path = os.path.join(folder, "queries.json")
    if not (os.path.exists(os.path.join(folder, "binding.jsonl")) and os.path.exists(path)):
        return None
    with open(path) as file:
        record = json.load(file)
    return {name: Table(name, _columns_of(ddl)) for name, ddl in record.get("tables", {}).items()}


def over_held(queries: Sequence[Query], tables: Mapping[str, Table]) -> tuple[Query, ...]:
    """``queries`` over ``tables`` (the tables as a follow holds them): each query as it is where it was compiled
    over those tables, else compiled again from its SQL text over them.

    Raises:
        FollowError: a query built in Python (not SQL) reads a table held otherwise than the catalog has it; a
            query does not compile over the tables held.
    """
    from .sql import SqlError, SqlQuery, compile_sql

    found = []
    for query in queries:
        schemas = getattr(query, "schemas", {table: TABLES[table] for table in query.inputs})
        if all(schemas[table] == tables[table] for table in query.inputs):
            found.append(query)
            continue
        if not isinstance(query, SqlQuery):
            raise FollowError(f"query {query.name} is built in Python, and this follow holds its tables with other "
                              f"columns than the catalog's ({'; '.join(tables[table].ddl for table in query.inputs)})"
                              f": follow it with a new --out and --checkpoint")
        try:
            again = compile_sql(query.sql, {**TABLES, **tables}, query.name, query.source)
        except SqlError as error:
            raise FollowError(f"query {query.name} does not compile over the tables this follow holds "
                              f"({'; '.join(tables[table].ddl for table in query.inputs)}): {error}") from None
        found.append(replace(again, dataset=query.dataset, partition_by=query.partition_by))
    return tuple(found)


STATES = ("driver", "executors")
"""Where a follow keeps its queries' state: all of it in the Python driver (``Follower``), or each keyed step's
per-key state in Spark's state store on the executors (``executors``). A checkpoint records which
(``queries.json``'s ``state``; a record without one is the driver's), and keeps it."""


def recorded_state(checkpoint: str, dataset: str) -> str | None:
    """Where the follow recorded in ``checkpoint`` keeps ``dataset``'s state (``STATES``), or None if no follow
    of it started there."""
    path = os.path.join(checkpoint, dataset, "queries.json")
    if not os.path.exists(path):
        return None
    with open(path) as file:
        return json.load(file).get("state", STATES[0])


def check_state(checkpoint: str, dataset: str, state: str) -> None:
    """Refuse to follow ``dataset`` with its state kept as ``state`` says (``STATES``) over a checkpoint whose
    follow keeps it the other way: the two write different checkpoints, and one cannot go on from the other's.

    Raises:
        FollowError: the checkpoint's follow keeps its state elsewhere; the message says how to go on.
    """
    found = recorded_state(checkpoint, dataset)
    if found is not None and found != state:
        raise FollowError(f"checkpoint {os.path.join(checkpoint, dataset)} belongs to a follow with --state {found}, "
                          f"and this one has --state {state}: a follow keeps its state one way from its first "
                          f"start. Go on with --state {found}, or follow with --state {state} into a new --out and "
                          f"--checkpoint")


def check_record(checkpoint: str, followed: Followed, write: bool, state: str | None = None) -> dict:
    """Refuse a follow (or verify) of ``followed`` with a checkpoint made for other queries, or for queries that
    read other columns (or types) of the tables; with ``write``, record them in a checkpoint that has bound no
    commit yet (nothing is written for it before). The record (``query_record``'s, ``follow``, the follow's
    identity, made once at random, and ``state``, where it keeps its state: ``STATES``) is returned: its
    ``tables`` are the tables as the follow holds them (``held_tables``), and the queries are compared over
    those (``over_held``). A column no query reads, added or changed, is no reason to refuse. ``state`` (None:
    either) is the state the caller keeps; a follow that kept it otherwise is refused (``check_state``).

    A checkpoint made before queries were recorded was made with the data set's built-in queries: their names
    are compared, and the record written; one made before reads and the identity were recorded is given them.

    Raises:
        FollowError: the recorded queries or what they read differ (named), or the state is kept otherwise, or
            ``write`` is False and nothing of the data set was ever followed here.
    """
    folder = os.path.join(checkpoint, followed.dataset)
    path = os.path.join(folder, "queries.json")
    if state is not None:
        check_state(checkpoint, followed.dataset, state)
    followed_before = os.path.exists(os.path.join(folder, "binding.jsonl"))
    if followed_before and os.path.exists(path):
        with open(path) as file:
            recorded = json.load(file)
    elif followed_before:
        recorded = {"queries": {query.name: hashlib.sha256(query.sql.encode()).hexdigest()
                                for query in queries_of(followed.dataset)}}
    elif write:
        recorded = {}
    else:
        raise FollowError(f"no follow of {followed.dataset!r} recorded in {checkpoint} ({path} is missing): follow "
                          f"the tables first (python -m final.spark follow), with the same --out and --checkpoint")
    held = held_tables(recorded, followed.dataset)
    wanted = query_record(replace(followed, queries=over_held(followed.queries, held)), held)
    # What an older record lacks is as it is now; where the state is kept, as the caller keeps it.
    on_disk, recorded = recorded, {**wanted, "state": state or STATES[0], **recorded}
    problems = []
    before, now = recorded["queries"], wanted["queries"]
    if set(before) != set(now):
        problems.append(f"it followed the queries {', '.join(sorted(before)) or 'none'}, and this command has "
                        f"{', '.join(sorted(now))}")
    changed = sorted(name for name in set(before) & set(now) if before[name] != now[name])
    if changed:
        problems.append(f"the SQL text of {', '.join(changed)} is not the text it followed")
    for name in sorted(set(before) & set(now) - set(changed)):
        read_then, read_now = recorded["reads"].get(name, wanted["reads"][name]), wanted["reads"][name]
        if read_then != read_now:
            problems.append(f"query {name} reads {_columns_read(read_now)}, and it read {_columns_read(read_then)}")
    if problems:
        raise FollowError(f"checkpoint {folder} belongs to another follow: {'; '.join(problems)}. Outputs and a "
                          f"checkpoint belong to one set of queries: give the --sql files it was made with, or "
                          f"follow these with a new --out and --checkpoint")
    if write and (not followed_before or recorded != on_disk or "follow" not in on_disk):
        recorded = {**recorded, "follow": on_disk.get("follow") or uuid.uuid4().hex}
        replace_file(path, lambda temporary: _write_json(temporary, recorded))
    return recorded


def _columns_read(reads: Mapping[str, Mapping[str, str]]) -> str:
    """``reads_of``'s answer in words: ``trips (trip_id BIGINT, fare_amount DECIMAL(8,2))``."""
    return "; ".join(f"{table} ({', '.join(f'{name} {kind}' for name, kind in columns.items()) or 'no column'})"
                     for table, columns in reads.items())


def _write_json(path: str, value: object) -> None:
    with open(path, "w") as file:
        json.dump(value, file, indent=1, sort_keys=True)


DELTA_FORBIDDEN = " ,;{}()\n\t="
"""The characters a Delta table's column names cannot hold without column mapping (Spark's Delta writer refuses
them, and so does a follow, which writes tables any Delta reader reads)."""


def widened_tables(queries: Sequence[Query], tables: Mapping[str, Table], widened: Sequence[sources.Widened]
                   ) -> tuple[dict[str, Table], tuple[Query, ...]]:
    """``tables`` (as a follow holds them) with the columns ``widened`` in their wider types, and ``queries``
    (compiled over ``tables``) compiled over those.

    Raises:
        FollowError: a query's result would change type (an output table keeps its columns' types): the message
            names the commit, the column and the query.
    """
    wider = dict(tables)
    for event in widened:
        kind = sql_type(event.after)
        wider[event.table] = replace(wider[event.table], columns=tuple(
            (name, kind if name == event.column else before) for name, before in wider[event.table].columns))
    again = over_held(queries, wider)
    for before, after in zip(queries, again, strict=True):
        was, now = getattr(before, "types", ()), getattr(after, "types", ())
        changed = [position for position, (old, new) in enumerate(zip(was, now, strict=True)) if old != new]
        if changed:
            read = reads_of(before, tables)
            event = next((event for event in widened if event.column in read.get(event.table, {})), widened[0])
            column = output_columns(before)[changed[0]]
            raise FollowError(
                f"{event.where}: column {event.column} is widened from {sql_words(event.before)} to "
                f"{sql_words(event.after)}, and query {before.name} reads it: its column {column} would be "
                f"{now[changed[0]].upper()}, and its output table holds {was[changed[0]].upper()}. An output "
                f"table keeps its columns' types: follow the query with a new --out and --checkpoint")
    return wider, again


def record_held(state: str, followed: Followed, tables: Mapping[str, Table], kept: Mapping[str, str]) -> None:
    """Record in ``state/queries.json`` (a data set's checkpoint) that its follow now holds ``tables``, with what
    ``followed``'s queries read of them (``query_record``) and the record's ``kept`` entries (the follow's
    identity; where it keeps its state)."""
    record = {**query_record(followed, tables), **kept}
    replace_file(os.path.join(state, "queries.json"), lambda temporary: _write_json(temporary, record))


def output_columns(query: Query) -> list[str]:
    """A query's output column names as its Delta table holds them: ``users.id`` becomes ``users_id``.

    Raises:
        FollowError: two columns have one name (Delta's names ignore case), or a name has a character of
            ``DELTA_FORBIDDEN``: Spark's name for an unnamed SQL item (``count(1)``) has; name it with AS.
    """
    names = [column.replace(".", "_") for column in query.columns]
    for position, name in enumerate(names):
        if any(char in DELTA_FORBIDDEN for char in name):
            raise FollowError(f"{query.source}: output column {position + 1} is named {name!r} (Spark SQL's name for "
                              f"an item without AS), which a Delta table cannot hold: its column names have none of "
                              f"{DELTA_FORBIDDEN!r} (Spark's Delta writer refuses them too); name it with AS")
        first = next(earlier for earlier, other in enumerate(names) if other.lower() == name.lower())
        if first != position:
            raise FollowError(f"{query.source}: output columns {first + 1} and {position + 1} are both named "
                              f"{name!r}, and a Delta table holds each name once (ignoring case); rename one with AS")
    return names


def output_schema(spark: SparkSession, query: Query) -> pyarrow.Schema:
    """The Arrow schema of ``query``'s output table: its SQL result's column types, as Spark SQL infers them.

    A query compiled from SQL knows them (``SqlQuery.types``, Spark's types by Spark's rules), so no Spark job
    is needed, and none could run a WITH RECURSIVE ... UNION, which Spark SQL refuses; for a query built by
    hand, Spark SQL plans its text over empty tables.
    """
    import pyarrow

    names = output_columns(query)
    types = getattr(query, "types", None)
    if types:
        return pyarrow.schema([pyarrow.field(name, arrow_type(kind)) for name, kind in zip(names, types, strict=True)])
    empty = spark.newSession()  # its own temporary views: empty tables of the inputs' types
    for table in query.inputs:
        empty.createDataFrame([], TABLES[table].ddl).createOrReplaceTempView(table)
    result = empty.sql(query.sql).schema
    return pyarrow.schema([pyarrow.field(name, arrow_type(column.dataType.simpleString()))
                           for name, column in zip(names, result.fields, strict=True)])


def output_table_schema(spark: SparkSession, path: str, query: Query) -> pyarrow.Schema:
    """The schema of ``query``'s output table at ``path``: the table's own if it exists (no Spark job), else
    ``output_schema``.

    Raises:
        FollowError: the output table there has other columns (another query's output).
    """
    if delta.exists(path):
        import pyarrow
        from deltalake import DeltaTable

        schema = pyarrow.schema(DeltaTable(path).schema().to_arrow())
        if schema.names != output_columns(query):
            raise FollowError(f"output table {path} has the columns {', '.join(schema.names)}, but query "
                              f"{query.name} has {', '.join(output_columns(query))}: it was written for "
                              f"another query; use a new --out and --checkpoint")
        return schema
    return output_schema(spark, query)


@dataclass(frozen=True)
class Bound:
    """A commit bound to the data set's versions ``first .. last`` (one version for a Delta commit);
    ``timestamp``, the commit's time, tells a Delta table written anew from the one that was followed."""

    table: str
    commit: int
    first: int
    last: int
    timestamp: int = 0


@dataclass
class Follower:
    """One data set's queries kept up to date: what ``foreachBatch`` calls, and what a restart rebuilds.

    Invariant: every version up to ``applied`` is applied to every query's
    dataflow and its outputs are committed; ``pending`` holds, by version,
    the changes of versions bound after ``applied``; ``bindings`` is
    ``binding.jsonl``, in order, and ``newest`` each source's newest bound
    commit (where a stream with no Spark checkpoint of its own begins).
    ``checkers`` holds each table's ``sources.LogChecker``, which has taken
    every bound commit (in the Parquet layout, each table's rows as of the
    newest bound version, to refuse a delete of a row that is not there).
    ``tables`` holds each table as the follow holds it (``held_tables``):
    the columns it started with, each in its type or the type a commit
    widened it to; the queries are compiled over those (``over_held``),
    and ``queries.json`` records them. ``replan`` is the version from which
    the queries must be compiled again over ``tables`` (a bound commit
    widened a column one reads), or None.

    ``queries`` are the queries kept (by default the data set's built-in ones), and ``folder`` the folder of
    the data set's tables (by default ``logs/<dataset>``).
    """

    spark: SparkSession
    dataset: str
    logs: str
    out: str
    checkpoint: str
    log: Callable[[str], None] = print
    applied: int = -1
    bindings: list[Bound] = field(default_factory=list)
    newest: dict[str, int] = field(default_factory=dict)
    pending: dict[int, list[tuple[str, tuple, int]]] = field(default_factory=lambda: defaultdict(list))
    failure: Exception | None = None
    stopping: bool = False
    queries: Sequence[Query] | None = None
    folder: str | None = None

    def __post_init__(self) -> None:
        self.folder = self.folder or os.path.join(self.logs, self.dataset)
        self.parquet = sources.layout(self.folder, self.dataset) == "parquet"
        self.queries = list(self.queries) if self.queries is not None else queries_of(self.dataset)
        self.state = os.path.join(self.checkpoint, self.dataset)
        self.lock = threading.Lock()
        os.makedirs(self.state, exist_ok=True)
        remove_leftovers(self.state)
        record = check_record(self.checkpoint, Followed(self.dataset, self.folder, tuple(self.queries)), write=True,
                              state="driver")
        self.identity = record["follow"]
        self.tables = held_tables(record, self.dataset)
        self.queries = list(over_held(self.queries, self.tables))
        self.replan: int | None = None
        self.engines = {query.name: IncrementalQuery(query) for query in self.queries}
        self.checkers: dict[str, LogChecker] = {}
        self.announced: set[tuple[str, str]] = set()
        self.schemas = {query.name: self._schema(query) for query in self.queries}
        self.outputs: dict[str, DeltaTable] = {}

    def _schema(self, query: Query) -> pyarrow.Schema:
        return output_table_schema(self.spark, self.output(query), query)

    def output(self, query: Query) -> str:
        return os.path.join(self.out, query.name)

    @property
    def bound_through(self) -> int:
        return self.bindings[-1].last if self.bindings else -1

    # Restart: the binding, the inputs as of the applied version, then the bound versions after it.

    def restore(self) -> None:
        """Load the binding and state, the inputs as of the applied version, and the bound commits after it."""
        path = os.path.join(self.state, "binding.jsonl")
        self.bindings = _read_bindings(path, repair=True) if os.path.exists(path) else []
        self.newest = {bound.table: bound.commit for bound in self.bindings}
        self.applied = applied_version(self.checkpoint, self.dataset)
        bound_commits = [Commit(bound.table, bound.commit, bound.timestamp) for bound in self.bindings]
        newest = sources.newest_commits(self.folder, self.dataset)
        made = {(commit.table, commit.number): commit.timestamp for commit in sources.commits_between(
            self.folder, self.dataset, {}, newest)} if bound_commits and not self.parquet else {}
        for commit in bound_commits:
            if commit.number > newest.get(commit.table, -1):
                problem = f"no longer has (its newest is {newest.get(commit.table, -1)})"
            elif made.get((commit.table, commit.number)) not in (0, None, commit.timestamp):  # 0: log expired
                problem = "holds as made at another time (the table was written again)"
            else:
                continue
            raise FollowError(
                f"checkpoint {self.state} bound commit {commit.number} of {self._name(commit)}, which {self.folder} "
                f"{problem}: the tables were written anew; follow them with a new --out and --checkpoint")
        self._load(bound_commits)
        if self.applied >= 0:
            self.log(f"{self.dataset}: restarted at version {self.applied}")
        _kill_point("startup")

    def _load(self, bound_commits: list[Commit]) -> None:
        """Rebuild the dataflows as of ``applied`` from the source, and hold the bound versions after it; each
        table's ``LogChecker`` made anew (``_checker``) takes both, in that order."""
        from deltalake.exceptions import DeltaError

        self.checkers = {table: self._checker(table) for table in DATASETS[self.dataset]}
        self.pending.clear()
        loaded: dict[str, dict[tuple, int]] = {table: {} for table in DATASETS[self.dataset]}
        if self.parquet:
            for commit in bound_commits:
                for version, table, record, multiplicity in self._read(commit):
                    if version <= self.applied:
                        add_multiplicity(loaded[table], record, multiplicity)
                    else:
                        self.pending[version].append((table, record, multiplicity))
        else:
            as_of = {commit.table: commit.number for commit, bound in zip(bound_commits, self.bindings, strict=True)
                     if bound.first <= self.applied}
            for table, number in as_of.items():
                path = sources.table_path(self.folder, table)
                where = f"table {table} ({path}) as of commit {number}"
                try:
                    rows = delta.read_table(path, number)
                except (DeltaError, OSError) as error:  # a version whose log or files are gone
                    raise FollowError(
                        f"{where} does not read ({str(error).splitlines()[0]}): a restart reads each table as of "
                        f"the commit bound at the applied version {self.applied}; if VACUUM removed its files, "
                        f"follow the tables anew with a new --out and --checkpoint") from None
                try:
                    records = self.checkers[table].records(rows, where)
                except ChangeLogError as error:
                    raise FollowError(str(error)) from None
                for record in records:
                    add_multiplicity(loaded[table], record, 1)
            for commit, bound in zip(bound_commits, self.bindings, strict=True):
                if bound.first > self.applied:
                    self._hold(bound, self._read(commit))
        if self.applied >= 0:
            for query in self.queries:
                self.engines[query.name].apply(self.applied, [
                    (table, record, copies) for table in query.inputs for record, copies in loaded[table].items()])

    def _checker(self, table: str) -> LogChecker:
        """A ``LogChecker`` of ``table`` that holds its columns as the follow does (``tables``), knowing which queries
        read which column."""
        import pyarrow

        schema = pyarrow.schema([pyarrow.field(name, arrow_type(kind)) for name, kind in self.tables[table].columns])
        return LogChecker(table, schema, readers_of(self.queries, self.tables, table))

    def _read(self, commit: Commit) -> list[Change]:
        """``commit``'s changes, checked after the commits read before it (``checkers``)."""
        try:
            return sources.read_commit(self.folder, commit, self.checkers)
        except ChangeLogError as error:
            raise FollowError(str(error)) from None

    def _name(self, commit: Commit) -> str:
        return commit_name(commit.table)

    # The stream.

    def on_batch(self, frame: DataFrame, batch_id: int) -> None:
        """``foreachBatch``: bind the batch's new commits, apply every bound version, switch the state."""
        with self.lock:
            if self.stopping:
                raise Stopped(f"{self.dataset}: stopping; micro-batch {batch_id} is left for the restart")
            try:
                _kill_point("batch")
                commits = [Commit(row["table"], row["commit"], row["timestamp"]) for row in frame.collect()]
                self.take(commits)
                self.advance()
            except Exception as error:
                self.failure = error
                raise

    def take(self, commits: list[Commit]) -> None:
        """Read and check every commit not bound yet, then bind them all (durably), then hold their changes.

        Raises:
            FollowError: a commit fails its checks, skips a commit of its table, or brings a version already
                bound; nothing of this batch is then bound.
        """
        newest = dict(self.newest)
        fresh = []
        for commit in sorted(commits, key=sources.binding_order(self.dataset)):
            last = newest.get(commit.table, -1)
            if commit.number <= last:
                continue  # bound before (Spark replays a batch it had not marked done)
            if commit.number != last + 1:
                raise FollowError(f"{self._name(commit)} went from commit {last} to {commit.number} in "
                                  f"{self.folder}: commits {last + 1}..{commit.number - 1} were never delivered")
            newest[commit.table] = commit.number
            fresh.append(commit)
        if not fresh:
            return
        widened_before = {table: len(checker.widened) for table, checker in self.checkers.items()}
        reads = [(commit, self._read(commit)) for commit in fresh]
        through = self.bound_through
        bindings = []
        for commit, changes in reads:
            if self.parquet:
                versions = [version for version, *_ in changes]
                first, last = (min(versions), max(versions)) if versions else (through + 1, through)
                if versions and first <= through:
                    raise FollowError(
                        f"{self.folder}: commit {commit.number} ({MARKERS}/{commit.number:08d}.json) brings changes "
                        f"at version {first}, but the follow has bound every version through {through}; a commit "
                        f"adds later versions only (write the change at a new version)")
                first = through + 1
            else:
                first = last = through + 1
            bindings.append(Bound(commit.table, commit.number, first, last, commit.timestamp))
            through = last
        self._announce_added()
        widened = [event for table, checker in self.checkers.items()
                   for event in checker.widened[widened_before.get(table, 0):]]
        if widened:
            self._widen(widened, bindings)
        with open(os.path.join(self.state, "binding.jsonl"), "a") as file:
            for bound in bindings:
                file.write(json.dumps(bound.__dict__) + "\n")
            file.flush()
            os.fsync(file.fileno())
        self.bindings += bindings
        self.newest = newest
        _kill_point("bind")
        for bound, (_, changes) in zip(bindings, reads, strict=True):
            self._hold(bound, changes)

    def _announce_added(self) -> None:
        """Say, once, each column a table has that the follow does not hold (Delta's schema evolution added it)."""
        for table, checker in self.checkers.items():
            for name, where in checker.added.items():
                if (table, name) not in self.announced:
                    self.announced.add((table, name))
                    self.log(f"{self.dataset}: table {table} has a column {name} ({where}), which this follow "
                             f"leaves out: its queries keep the columns they started with "
                             f"({', '.join(self.tables[table].names)})")

    def _widen(self, widened: list[sources.Widened], bindings: list[Bound]) -> None:
        """Hold the columns ``widened`` in their wider types (``tables``, recorded in ``queries.json`` before the
        commits are bound), and compile the queries again over them from the first version a widened column
        one reads is bound at (``replan``).

        Raises:
            FollowError: a query's result would change type (an output table keeps its columns' types).
        """
        tables, queries = widened_tables(self.queries, self.tables, widened)
        record_held(self.state, Followed(self.dataset, self.folder, queries), tables, {"follow": self.identity})
        self.tables = tables
        read = [event for event in widened
                if any(event.column in reads_of(query, tables).get(event.table, {}) for query in queries)]
        if read:
            at = {(bound.table, bound.commit): bound.first for bound in self.bindings + bindings}
            first = min(at[event.table, event.version] for event in read)
            self.replan = first if self.replan is None else min(self.replan, first)

    def check_reached(self, present: dict[str, int]) -> None:
        """Refuse to report success before every commit of ``present`` (each source's newest, as
        ``sources.newest_commits`` gives them) is bound and applied.

        Raises:
            FollowError: a commit of ``present`` is not bound, or a bound version is not applied; it names them.
        """
        left = []
        for source, number in present.items():
            first = self.newest.get(source, -1) + 1
            if first <= number:
                commits = f"commit {first}" if first == number else f"commits {first}..{number}"
                left.append(f"{self._name(Commit(source, first, 0))}: {commits}")
        if self.applied < self.bound_through:
            left.append(f"versions {self.applied + 1}..{self.bound_through}, bound but not applied")
        if left:
            raise FollowError(f"{self.dataset}: --available-now stopped before applying what was there when it "
                              f"started: {'; '.join(left)} (applied through version {self.applied}); nothing is "
                              f"lost: start the same command again to apply them")

    def _hold(self, bound: Bound, changes: list[Change]) -> None:
        """Keep ``changes`` for their versions (a Delta commit's: its one bound version)."""
        for version, table, record, multiplicity in changes:
            self.pending[version if self.parquet else bound.first].append((table, record, multiplicity))

    def advance(self) -> None:
        """Apply every bound version after ``applied``, in order, committing each one's outputs; then the state."""
        through = self.bound_through
        if through <= self.applied:
            return
        started = time.perf_counter()
        first = self.applied + 1
        for version in range(first, through + 1):
            if version == self.replan:
                self._compile_again()
            batch = self.pending.pop(version, [])
            try:
                changes = {query.name: self._apply(query, version, batch) for query in self.queries}
            except FollowError:
                if self.applied >= first:  # the versions before this one are written: say so
                    replace_file(os.path.join(self.state, "state.json"), self._write_state)
                raise
            _kill_point("apply")
            for query in self.queries:
                self._commit_output(query, version, changes[query.name])
                _kill_point("output")
            self.applied = version
        _kill_point("checkpoint")
        replace_file(os.path.join(self.state, "state.json"), self._write_state)
        self.log(f"{self.dataset}: applied through version {self.applied} "
                 f"({through - first + 1} version{'s' if through > first else ''}, "
                 f"{time.perf_counter() - started:.2f} s)")

    def _compile_again(self) -> None:
        """Compile the queries again over ``tables`` (a column they read is widened at the next version), and
        rebuild their dataflows from the tables as of ``applied``, read in the wider types: the result there is
        the same (the values are, and so are the result's types), so nothing is written for it."""
        self.queries = list(over_held(self.queries, self.tables))
        self.engines = {query.name: IncrementalQuery(query) for query in self.queries}
        self._load([Commit(bound.table, bound.commit, bound.timestamp) for bound in self.bindings])
        self.replan = None
        self.log(f"{self.dataset}: the queries compiled again for the widened columns "
                 f"({'; '.join(table.ddl for table in self.tables.values())}) at version {self.applied}")

    def _apply(self, query: Query, version: int, batch: list[tuple[str, tuple, int]]) -> dict[tuple, int]:
        """``query``'s changes at ``version``, given the version's updates.

        Raises:
            FollowError: the query raises for a value at this version, as Spark SQL would (``SqlRuntimeError``:
                a division by zero, an overflow, a cast that fails); it names the query, version and row.
        """
        try:
            return self.engines[query.name].apply(version, [update for update in batch if update[0] in query.inputs])
        except Exception as error:
            refused = runtime_cause(error)
            if refused is None:
                raise
            raise data_error(query.name, version, self.dataset, self.bindings, refused, self.applied) from None

    def _write_state(self, path: str) -> None:
        with open(path, "w") as file:
            json.dump({"version": self.applied}, file)

    def application(self, query: Query) -> str:
        """The application id of the transaction identifier on ``query``'s output commits: this follow's and the
        query's, so another writer's commits, or another follow's, are never taken for this one's."""
        return f"final.spark.follow/{self.identity}/{query.name}"

    def _written(self, query: Query, table: DeltaTable | None) -> int:
        """The data set version through which ``query``'s output table holds this follow's commits: the version of
        the table's transaction identifier for ``application``; for an output written before follows stamped
        their commits (it has none), its Delta version, as those wrote one commit per data set version."""
        if table is None:
            return -1
        found = table.transaction_version(self.application(query))
        return table.version() if found is None else found

    def _commit_output(self, query: Query, version: int, changes: dict[tuple, int]) -> None:
        """``changes`` as ``query``'s output at data set version ``version``, one Delta commit stamped with it,
        unless a killed run committed it (``_written``)."""
        path = self.output(query)
        table = self._output_table(query)
        written = self._written(query, table)
        if written >= version:
            return
        if written != version - 1:
            raise FollowError(f"output table {path} holds data set version {written} for this follow, but the "
                              f"follow is at version {version - 1}: it was written by another follow; use a new "
                              f"--out and --checkpoint")
        engine = self.engines[query.name]

        def copies(retracted: list[tuple]) -> list[int]:
            held = engine.snapshot
            return [held.get(row, 0) for row in retracted]

        commit_output(path if table is None else table, self.schemas[query.name], query, changes,
                      (self.application(query), version), copies)

    def _output_table(self, query: Query) -> DeltaTable | None:
        """``query``'s output table, kept open and brought up to date (reading only the commits since, where
        opening it anew reads the log since its last checkpoint), or None before its first commit."""
        from deltalake import DeltaTable

        table = self.outputs.get(query.name)
        if table is not None:
            table.update_incremental()
        elif delta.exists(self.output(query)):
            table = self.outputs[query.name] = DeltaTable(self.output(query))
        return table


def commit_output(target: str | DeltaTable, schema: pyarrow.Schema, query: Query, changes: dict[tuple, int],
                  transaction: tuple[str, int], copies: Callable[[list[tuple]], list[int]]) -> None:
    """``changes`` (a query's result rows, as ``final/`` holds them, and their multiplicity changes) committed to
    ``query``'s output table ``target`` (its path, or the table opened) in ``schema``, in one Delta commit with
    ``transaction`` (the application id and the data set version it brings the table to): the driver's follow's
    and the executors' outputs are written the one way. A query with a key (``Query.key``) is merged on it;
    one without, on whole rows, and then ``copies(rows)`` says how many copies of each retracted result row
    the result holds after the change.

    Raises:
        ValueError: the first commit of a table retracts a row (``delta.apply_changes``).
    """
    key = [column.replace(".", "_") for column in query.key] if query.key else None
    keys = [schema.names.index(name) for name in key or ()]
    written = {row: _as_written(row, keys) for row in changes}  # one tuple per row: a NaN in it finds itself
    rows = []
    for row, multiplicity in sorted(changes.items(), key=repr):
        kind = "insert" if multiplicity > 0 else "delete"
        rows += [(*written[row], kind)] * abs(multiplicity)
    remaining = None
    retracted = [row for row, multiplicity in changes.items() if multiplicity < 0]
    if not query.key and retracted:
        remaining = dict(zip((written[row] for row in retracted), copies(retracted), strict=True))
    delta.apply_changes(target, schema, rows, key, remaining, transaction)


def _as_written(row: tuple, keys: list[int]) -> tuple:
    """A result row as its output table holds it: NaN as a float NaN, and in a key column -0.0 as 0.0, as
    Spark SQL writes a GROUP BY key."""
    values = [float(value) if isinstance(value, float) else value for value in row]
    for position in keys:
        if isinstance(values[position], float) and values[position] == 0.0:
            values[position] = 0.0
    return tuple(values)


def follow(
    spark: SparkSession, logs: str | None, out: str, checkpoint: str | None = None, available_now: bool = True,
    trigger_seconds: float = 10.0, log: Callable[[str], None] | None = None, queries: Sequence[Query] | None = None,
    bound: str | None = None,
) -> dict[str, int]:
    """Follow every data set in ``logs`` (and the tables bound with ``--table``, whose folder is ``bound``) that
    a query reads, writing each query's output table under ``out``; the version each data set was applied
    through. The queries are ``queries``, or by default each data set's built-in ones (``data_sets``). With
    ``available_now``, every commit there when it starts is applied and the follow returns; otherwise it runs
    until stopped.

    In the main thread, SIGINT and SIGTERM stop it at a micro-batch boundary and raise ``FollowStopped``.

    Raises:
        FollowError: ``logs`` holds no data set, or none a query reads; a commit fails its checks, or changes a
            column a query reads in a way it cannot follow; the checkpoint or outputs belong to other tables or
            queries; a query fails on the data at a version, as Spark SQL would; with ``available_now``, a
            commit there at the start was left (``Follower.check_reached``).
        FollowStopped: a signal stopped the follow (its ``status`` is 130 or 143).
    """
    from .partitioned import ship_final

    checkpoint = checkpoint or os.path.join(out, "_checkpoint")
    followed, _ = data_sets(logs, queries, bound)
    ship_final(spark)  # the stream's source runs in a Python worker, which imports it from there
    spark.dataSource.register(sources.CommitStream)
    followers, streams = [], []
    with _Stop() as stop:
        for found in followed:
            name = found.dataset
            follower = Follower(spark, name, logs, out, checkpoint, log or _say, queries=found.queries,
                                folder=found.folder)
            follower.restore()
            follower.advance()
            present = sources.newest_commits(follower.folder, name)
            # The source runs in a Python worker, which knows no bound table: it is told the data set's tables.
            reader = (spark.readStream.format(sources.CommitStream.name()).option("folder", follower.folder)
                      .option("dataset", name).option("tables", json.dumps(DATASETS[name]))
                      .option("start", json.dumps(follower.newest))
                      .option("grace_ms", "0" if available_now else str(GRACE_MS)))
            stream = (reader.option("until", json.dumps(present)) if available_now else reader).load()
            trigger = {"availableNow": True} if available_now else {"processingTime": f"{trigger_seconds} seconds"}
            stream_query = (stream.writeStream.foreachBatch(follower.on_batch)
                            .option("checkpointLocation", os.path.join(checkpoint, name, "spark"))
                            .trigger(**trigger).queryName(f"follow-{name}").start())
            followers.append(follower)
            streams.append(stream_query)
            if available_now:
                _await([follower], [stream_query], stop)
                follower.check_reached(present)
        if not available_now:
            _await(followers, streams, stop)
    return {follower.dataset: follower.applied for follower in followers}


class FollowStopped(Exception):
    """A follow stopped by SIGINT or SIGTERM, at a micro-batch boundary; ``status`` is the exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class _Stop:
    """While entered (in the main thread), SIGINT and SIGTERM only record that a stop was asked for
    (``signal``), for ``_await`` to stop the streams at a micro-batch boundary."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self.previous: dict[int, object] = {}

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():
            for number in STOP_STATUS:
                self.previous[number] = signal.signal(number, self._record)
        return self

    def _record(self, number: int, frame: object) -> None:
        self.signal = number

    def __exit__(self, *exc: object) -> None:
        for number, handler in self.previous.items():
            signal.signal(number, handler)


def _await(followers: list[Follower], queries: list, stop: _Stop) -> None:
    """Wait for the streams to end, or for a signal: then stop them at a micro-batch boundary.

    Raises:
        FollowError: a micro-batch failed (the follower's own error, a commit that fails its checks).
        FollowStopped: a signal arrived.
    """
    from pyspark.errors import StreamingQueryException

    while True:
        if stop.signal is not None:
            for follower in followers:
                with follower.lock:  # the micro-batch in flight, if any, finishes first
                    follower.stopping = True
            for query in queries:
                query.stop()
            name = signal.Signals(stop.signal).name
            where = "; ".join(f"{follower.dataset} applied through version {follower.applied}"
                              for follower in followers)
            raise FollowStopped(f"follow: stopped by {name} at a micro-batch boundary ({where}); start it again "
                                f"with the same --out and --checkpoint to go on", STOP_STATUS[stop.signal])
        try:
            if all(query.awaitTermination(0.5 / len(queries)) for query in queries):
                return
        except StreamingQueryException as error:
            for follower in followers:
                if follower.failure is not None and not isinstance(follower.failure, Stopped):
                    raise follower.failure from None
            for follower in followers:  # the source itself failed: say why, as the follow's own error
                try:
                    sources.check_offsets(follower.folder, follower.dataset, follower.newest)
                except CommitError as problem:
                    raise FollowError(str(problem)) from None
            raise error


def read_output(spark: SparkSession, out: str, query: Query) -> DataFrame:
    """A query's change feed as the follow wrote it (its output table's change data feed, read with
    ``deltalake``), with ``_multiplicity`` (``changelog.multiplicities``), and as ``_commit_version`` the data
    set version of each change (``delta.dataset_versions``: the output table's own version differs from it
    once OPTIMIZE, or another writer, has committed to it)."""
    import pyarrow

    path = os.path.join(out, query.name)
    feed = delta.change_feed(path)
    numbers = delta.dataset_versions(path)
    versions = pyarrow.array([numbers[number] for number in feed.column(VERSION).to_pylist()], pyarrow.int64())
    feed = feed.set_column(feed.schema.get_field_index(VERSION), VERSION, versions)
    return spark.createDataFrame(feed.append_column(MULTIPLICITY, multiplicities(feed.column(CHANGE_TYPE))))


@dataclass(frozen=True)
class Lag:
    """How far a follow of ``dataset`` has come: its tables' complete commits, those bound, the version applied
    and the newest bound; and where it keeps its state (``STATES``; None: not started)."""

    dataset: str
    commits: int
    bound: int
    applied: int
    bound_through: int
    state: str | None = None

    @property
    def caught_up(self) -> bool:
        return self.bound == self.commits and self.applied == self.bound_through

    def __str__(self) -> str:
        progress = "caught up" if self.caught_up else "behind"
        kept = "" if self.state is None else f"; state on the {self.state}"
        return (f"{self.dataset}: {self.bound} of {self.commits} commits bound, applied through version "
                f"{self.applied} of {self.bound_through} ({progress}){kept}")


def lag(logs: str | None, out: str, checkpoint: str | None = None, queries: Sequence[Query] | None = None,
        bound: str | None = None) -> list[Lag]:
    """The ``Lag`` of each data set a follow of the same arguments keeps (``data_sets``): read from its tables
    and the checkpoint alone (no Spark), so it can be asked of a running follow, or of one not started yet.

    Raises:
        FollowError: the checkpoint followed a data set with other queries, or queries that read other columns
            (``check_record``).
    """
    checkpoint = checkpoint or os.path.join(out, "_checkpoint")
    found = []
    for followed in data_sets(logs, queries, bound)[0]:
        dataset = followed.dataset
        newest = sources.newest_commits(followed.folder, dataset)
        folder = os.path.join(checkpoint, dataset)
        started = os.path.exists(os.path.join(folder, "binding.jsonl"))
        if started:
            check_record(checkpoint, followed, write=False)
        bindings = binding(checkpoint, dataset) if started else []
        found.append(Lag(dataset, sum(number + 1 for number in newest.values()), len(bindings),
                         applied_version(checkpoint, dataset), bindings[-1].last if bindings else -1,
                         recorded_state(checkpoint, dataset)))
    return found


# Spark SQL's truth for the tables as bound.


def applied_version(checkpoint: str, dataset: str) -> int:
    """The version a follow of ``dataset`` recorded in ``checkpoint`` as applied, outputs and all; -1 for none."""
    path = os.path.join(checkpoint, dataset, "state.json")
    if not os.path.exists(path):
        return -1
    with open(path) as file:
        return json.load(file)["version"]


def binding(checkpoint: str, dataset: str) -> list[Bound]:
    """The binding a follow recorded for ``dataset`` in ``checkpoint``."""
    path = os.path.join(checkpoint, dataset, "binding.jsonl")
    if not os.path.exists(path):
        raise FollowError(f"no follow of {dataset!r} recorded in {checkpoint} ({path} is missing): follow the "
                          f"tables first (python -m final.spark follow), with the same --out and --checkpoint")
    return _read_bindings(path)


def _read_bindings(path: str, repair: bool = False) -> list[Bound]:
    """The whole lines of a ``binding.jsonl``: a last line cut short by a kill (its commits never applied) is
    left out, and with ``repair`` cut off the file, so the next line appended starts a line of its own."""
    with open(path, "rb") as file:
        text = file.read()
    whole = text[:text.rfind(b"\n") + 1]
    if repair and len(whole) != len(text):
        with open(path, "r+b") as file:
            file.truncate(len(whole))
    return [Bound(**json.loads(line)) for line in whole.decode().splitlines()]


def tables_as_bound(spark: SparkSession, folder: str, dataset: str, bindings: list[Bound], version: int,
                    held: Mapping[str, Table] | None = None) -> dict[str, DataFrame]:
    """Each table of ``dataset`` (in ``folder/<table>``) as of ``version`` of the binding, for Spark SQL: a Delta
    table's files at its newest commit bound at or before ``version``, read with the columns the follow holds
    (``held``, by default the catalog's: a column added since is left out, one not there yet is NULL); a
    Parquet log's rows up to ``version``, from the files of the commits bound by then, read and checked as
    every log is (``sources.read_log``)."""
    from .changelog import snapshot

    held = held or {table: TABLES[table] for table in DATASETS[dataset]}
    tables = {}
    if sources.layout(folder, dataset) == "parquet":
        files: dict[str, list[str]] = defaultdict(list)
        for bound in bindings:
            if bound.first <= version:
                for table, paths in sources.marker_files(folder, bound.commit).items():
                    files[table] += paths
        for table in DATASETS[dataset]:
            schema = TABLES[table].ddl
            if not files[table]:
                tables[table] = spark.createDataFrame([], schema)
                continue
            log = spark.createDataFrame(sources.read_log(files[table], table).arrow)
            tables[table] = snapshot(log, table, version)
        return tables
    as_of: dict[str, int] = {}
    for bound in bindings:
        if bound.first <= version:
            as_of[bound.table] = bound.commit
    for table in DATASETS[dataset]:
        schema = held[table].ddl
        if table not in as_of:
            tables[table] = spark.createDataFrame([], schema)
            continue
        path = sources.table_path(folder, table)
        paths = delta.files_at(path, as_of[table])
        # A partitioned table's files do not hold its partition columns: Spark reads them from the files' folders'
        # names (col=value) under the base path.
        tables[table] = (spark.read.option("basePath", os.path.realpath(path)).schema(schema).parquet(*paths)
                         if paths else spark.createDataFrame([], schema))
    return tables


@dataclass(frozen=True)
class Mismatch:
    """A row whose multiplicity in a query's output at ``version`` differs from Spark SQL's from scratch."""

    query: str
    version: int
    row: tuple
    expected: int
    actual: int


def verify(spark: SparkSession, logs: str | None, out: str, checkpoint: str | None = None,
           log: Callable[[str], None] | None = None, queries: Sequence[Query] | None = None,
           bound: str | None = None) -> tuple[int, list[Mismatch]]:
    """Check every query's output under ``out``, summed to each version a follow applied, against Spark SQL over
    the tables as bound there; the versions checked and every mismatch. ``logs``, ``queries`` and ``bound``
    are the follow's (``follow``).

    Raises:
        FollowError: a data set was never followed with this checkpoint, or was followed with other queries, or
            queries that read other columns (``check_record``).
    """
    from collections import Counter

    from .equality import tolerant_columns
    from .pipeline import compare
    from .truth import over

    checkpoint = checkpoint or os.path.join(out, "_checkpoint")
    followed = data_sets(logs, queries, bound)[0]
    kept = {each.dataset: held_tables(check_record(checkpoint, each, write=False), each.dataset) for each in followed}
    checked, found = 0, []
    for each in followed:
        dataset, chosen = each.dataset, over_held(each.queries, kept[each.dataset])
        bindings = binding(checkpoint, dataset)
        applied = applied_version(checkpoint, dataset)
        feeds = {}
        for query in chosen if applied >= 0 else ():  # no output table before a version is applied
            names = output_columns(query)
            by_version: dict[int, Counter] = defaultdict(Counter)
            for row in read_output(spark, out, query).collect():
                by_version[row[VERSION]][sql_row(tuple(row[name] for name in names))] += row[MULTIPLICITY]
            feeds[query.name] = by_version
        held = {query.name: Counter() for query in chosen}
        for version in range(applied + 1):
            tables = tables_as_bound(spark, each.folder, dataset, bindings, version, kept[dataset])
            for query in chosen:
                held[query.name].update(feeds[query.name].get(version, Counter()))
                now = {row: count for row, count in held[query.name].items() if count}
                truth = over(spark, query, tables)
                differences = compare(version, truth.counts, now, getattr(query, "rank", None),
                                      tolerant_columns(query.sql, truth.types))
                found += [Mismatch(query.name, difference.version, difference.row, difference.expected,
                                   difference.actual) for difference in differences]
                checked += 1
            if log:
                log(f"{dataset}: version {version} of {applied} checked")
    return checked, found
