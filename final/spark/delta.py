"""Delta tables written with ``deltalake`` (delta-rs): the generated data sets' tables, and the follow's outputs.

Every table written here has ``delta.enableChangeDataFeed`` on, and every
change is one Delta commit made as a reader of the change feed expects:
rows inserted by an append or a MERGE's insert (``insert``), removed by a
MERGE's delete (``delete``), and changed in place by a MERGE's update
(``update_preimage`` and ``update_postimage``) when the row keeps its key.

``apply_changes`` turns one version of a change log (rows with
``_change_type``) into one commit of a table. A table with a key
(``tables_and_queries.Table.key``, ``Query.key``) is merged on it: a key both
retracted and inserted is an update, one only retracted a delete, one only
inserted an insert. A table without one is merged on the whole row (``<=>``,
so NULL matches NULL): a retracted row deletes every copy of it, and the
copies that stay are inserted again in the same commit, so multiplicities are
exact.

A commit may carry a Delta transaction identifier (``Transaction``: an
application id and a version), recorded in the table's log as a ``txn``
action and kept by every later commit, OPTIMIZE's too: a writer that stamps
each commit with its own progress reads back from the table itself how far
it got (``DeltaTable.transaction_version``), whoever else wrote to it since.
A follow stamps each output commit with the data set version it brings the
output to, also in the commit's ``commitInfo`` (``DATASET_VERSION``), so
that a reader of the output's change feed can tell each commit's data set
version (``dataset_versions``).

``files_at`` names a table's Parquet files as of a version: what Spark SQL
reads for the truth at that version, without Delta's own reader;
``change_feed`` reads a table's change data feed, a commit's or the whole
(``sources`` checks it).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .changelog import MULTIPLICITIES
from .sqlfloat import sql_row

if TYPE_CHECKING:
    import pyarrow
    from deltalake import DeltaTable

FEED = {"delta.enableChangeDataFeed": "true"}
"""The table property that makes Delta record each commit's changes (its change data feed)."""

ACTION = "_action"

DATASET_VERSION = "final.datasetVersion"
"""The key, in the ``commitInfo`` of a commit made with a transaction identifier, of its version (the data set
version a follow's output commit brings the output to)."""


def exists(path: str) -> bool:
    """True if ``path`` holds a Delta table."""
    return os.path.isdir(os.path.join(path, "_delta_log"))


def version(path: str) -> int:
    """The newest version of the Delta table at ``path``, or -1 if there is none yet."""
    if not exists(path):
        return -1
    from deltalake import DeltaTable

    return DeltaTable(path).version()


def apply_changes(target: str | DeltaTable, schema: pyarrow.Schema, rows: list[tuple], key: Sequence[str] | None,
                  remaining: dict[tuple, int] | None = None, transaction: tuple[str, int] | None = None) -> None:
    """Commit ``rows``, ``(values..., change type)`` in ``schema``'s columns, to a Delta table: ``target``, its
    path or (kept open by a caller that commits to it again and again) the table itself.

    The first commit creates the table (inserts only). ``remaining`` gives,
    for a table without ``key``, each retracted row's multiplicity after the
    commit (absent: 0), so that the copies that stay are inserted again.
    ``transaction``, ``(application id, version)``, is the commit's
    transaction identifier, in the same commit as its rows.

    Raises:
        ValueError: the first commit of a table retracts a row.
    """
    from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

    properties = None
    if transaction is not None:
        application, number = transaction
        properties = CommitProperties(custom_metadata={DATASET_VERSION: number},
                                      app_transactions=[Transaction(application, number)])
    if isinstance(target, str) and not exists(target):
        if any(MULTIPLICITIES[row[-1]] < 0 for row in rows):
            raise ValueError(f"{target}: a new table's first commit can only insert rows")
        write_deltalake(target, _arrow(schema, [row[:-1] for row in rows]), configuration=FEED,
                        commit_properties=properties)
        return
    table = DeltaTable(target) if isinstance(target, str) else target
    source, predicate = (_keyed(schema, rows, key) if key else _whole_rows(schema, rows, remaining or {}))
    if source.num_rows == 0:  # a commit that changes nothing, recorded
        write_deltalake(table, schema.empty_table(), mode="append", commit_properties=properties)
        return
    merge = table.merge(source, predicate=predicate, source_alias="s", target_alias="t",
                        commit_properties=properties)
    every = {name: f"s.`{name}`" for name in schema.names}
    if key:
        merge = merge.when_matched_update(every, predicate=f"s.{ACTION} = 'update'")
    merge.when_matched_delete(predicate=f"s.{ACTION} = 'delete'").when_not_matched_insert(
        every, predicate=f"s.{ACTION} = 'insert'").execute()


def _arrow(schema: pyarrow.Schema, records: list[tuple], actions: list[str] | None = None) -> pyarrow.Table:
    import pyarrow

    columns = [pyarrow.array([record[position] for record in records], type=field.type)
               for position, field in enumerate(schema)]
    if actions is None:
        return pyarrow.Table.from_arrays(columns, schema=schema)
    return pyarrow.Table.from_arrays([*columns, pyarrow.array(actions, pyarrow.string())],
                                     names=[*schema.names, ACTION])


def _same(names: Sequence[str]) -> str:
    return " AND ".join(f"t.`{name}` <=> s.`{name}`" for name in names)


def _keyed(schema: pyarrow.Schema, rows: list[tuple], key: Sequence[str]) -> tuple[pyarrow.Table, str]:
    """A MERGE source with one row per key: its new values and ``update``, ``delete`` or ``insert``."""
    positions = [schema.names.index(name) for name in key]
    retracted: dict[tuple, tuple] = {}
    inserted: dict[tuple, tuple] = {}
    for row in rows:
        record, kind = row[:-1], row[-1]
        # NaN as Spark SQL's one NaN (sqlfloat), so a NaN key pairs with itself.
        (inserted if MULTIPLICITIES[kind] > 0 else retracted)[sql_row(tuple(record[p] for p in positions))] = record
    records, actions = [], []
    for found, record in inserted.items():
        records.append(record)
        actions.append("update" if found in retracted else "insert")
    for found, record in retracted.items():
        if found not in inserted:
            records.append(record)
            actions.append("delete")
    return _arrow(schema, records, actions), f"{_same(key)} AND s.{ACTION} <> 'insert'"


def _whole_rows(schema: pyarrow.Schema, rows: list[tuple], remaining: dict[tuple, int]) -> tuple[pyarrow.Table, str]:
    """A MERGE source matching whole rows: one ``delete`` per retracted row (every copy goes), then an
    ``insert`` per copy inserted, and per copy of a retracted row that stays."""
    change: Counter = Counter()
    for row in rows:
        change[row[:-1]] += MULTIPLICITIES[row[-1]]
    records, actions = [], []
    for record, count in change.items():
        if count < 0:
            records.append(record)
            actions.append("delete")
            copies = remaining.get(record, 0)
        else:
            copies = count
        records += [record] * copies
        actions += ["insert"] * copies
    return _arrow(schema, records, actions), f"{_same(schema.names)} AND s.{ACTION} = 'delete'"


def files_at(path: str, at: int) -> list[str]:
    """The Parquet files that make up the Delta table at ``path`` as of version ``at``."""
    from deltalake import DeltaTable

    return DeltaTable(path, version=at).file_uris()


def read_table(path: str, at: int) -> pyarrow.Table:
    """The Delta table at ``path`` (a local folder) as of version ``at``.

    Its files are read through Arrow's own local file system. ``deltalake``'s
    default hands Arrow a file system written in Python, which Arrow's I/O
    threads call into: when a read fails (a file that ``VACUUM`` removed), the
    reads still in flight call into Python as the interpreter exits, Python
    ends those threads under C++ code, and the process aborts (``terminate
    called without an active exception``, exit 134) after its error was said.

    Raises:
        OSError: a file of that version is gone or does not read (``FileNotFoundError`` names it).
        DeltaError: the table's log does not hold version ``at``.
    """
    import pyarrow.fs
    from deltalake import DeltaTable

    files = pyarrow.fs.SubTreeFileSystem(os.path.realpath(path), pyarrow.fs.LocalFileSystem())
    return DeltaTable(path, version=at).to_pyarrow_dataset(filesystem=files).to_table()


def dataset_versions(path: str) -> dict[int, int]:
    """Each version of the Delta table at ``path`` and the version its commit carries (``DATASET_VERSION``).

    A commit that carries none (another writer's, or OPTIMIZE's) counts as the
    version of the commit before it that does; before any does (a follow's
    output written before follows stamped their commits), each commit's own
    version is its data set version, as such a follow wrote one commit per
    data set version.
    """
    from deltalake import DeltaTable

    found, carried = {}, None
    for entry in sorted(DeltaTable(path).history(), key=lambda entry: entry["version"]):
        carried = entry.get(DATASET_VERSION, carried)
        found[entry["version"]] = entry["version"] if carried is None else carried
    return found


def change_feed(table: str | DeltaTable, first: int = 0, last: int | None = None) -> pyarrow.Table:
    """The change data feed of the Delta table ``table`` (its path, or the table opened) from version ``first``
    through ``last`` (None: its newest), in version order: the one reader of a Delta table's changes, whole
    (``first`` 0) or a commit's (``first`` = ``last``)."""
    import pyarrow
    from deltalake import DeltaTable

    opened = DeltaTable(table) if isinstance(table, str) else table
    feed = pyarrow.table(opened.load_cdf(starting_version=first, ending_version=last).read_all())
    # delta-rs hands text over as string_view, which Spark and some Arrow kernels do not take yet.
    # And _commit_version as uint64, which Spark has no type for.
    plain = pyarrow.schema([field.with_type(pyarrow.string()) if pyarrow.types.is_string_view(field.type)
                            else field.with_type(pyarrow.int64()) if pyarrow.types.is_unsigned_integer(field.type)
                            else field for field in feed.schema])
    return feed.cast(plain).sort_by("_commit_version")
