"""Tables of one's own: ``--table NAME=PATH`` makes a Delta table, or a Parquet change log, a table SQL reads.

A bound table's columns come from the table itself (the Delta table's
schema, or a log file's), its Arrow types said in Spark SQL's words
(``arrow_types.sql_type``); a type with no place there is refused, naming
the column.
The bound tables form one data set of their own, ``tables_and_queries.BOUND``
(``tables``), whose history is their commits: each Delta version of each
table, bound to the data set's versions in commit-time order as a follow binds
any data set's commits (or, for change logs, their own ``_commit_version``s).
So a query over them is checked by ``run``, kept up to date by ``follow`` and
checked again by ``verify``, as queries over a built-in data set are.

The pipeline reads a data set from one folder, ``<folder>/<table>``. ``link``
makes that folder for the bound tables out of symbolic links, one per table,
so everything that reads a data set's folder reads bound tables unchanged.
A follow keeps its links in its checkpoint (``CHECKPOINT/_tables``), where
they record the path each name was bound to: a restart or a ``verify``
that binds a name elsewhere is refused.

Change logs in the Parquet layout are read as ``run --logs`` reads them
(``sources.log_files``): the files their commit markers name, when the
folder holding the log has markers (``<parent>/_commits``, naming each
table by its folder's name), else every file. A follow needs the markers:
they say when a commit is whole.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import tables_and_queries
from .arrow_types import TYPES_LISTED, sql_type
from .changelog import CHANGE_TYPE, TIMESTAMP, VERSION
from .query import Table
from .sources import DELTA_LOG, MARKERS

if TYPE_CHECKING:
    import pyarrow

FOLDER = "_tables"
"""The folder, in a follow's checkpoint, of the links to the bound tables (the data set ``tables``'s folder)."""

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
"""A table's or column's name as SQL reads it unquoted (and as a data set's folder may hold it: not ``_...``)."""


class TableError(ValueError):
    """A ``--table`` that cannot be bound: the message names the argument, path or column, and what to do."""


@dataclass(frozen=True)
class OwnTable:
    """A table bound with ``--table``: its name and columns (``table``), its absolute ``path``, and its
    ``layout``, ``"delta"`` or ``"parquet"`` (a change log)."""

    table: Table
    path: str
    layout: str


def read_tables(arguments: Sequence[str]) -> list[OwnTable]:
    """Each ``NAME=PATH`` of ``arguments`` as a bound table, its columns read from the table at PATH.

    Raises:
        TableError: an argument is not ``NAME=PATH`` with NAME a name SQL reads; the path is missing, or is
            neither a Delta table nor a Parquet change log; a name is a built-in table's or given twice (as
            SQL compares names: in any case); a column has a type with no Spark SQL type here, or a name SQL
            does not read unquoted; the tables mix Delta tables and change logs.
    """
    found: list[OwnTable] = []
    for argument in arguments:
        name, equals, path = argument.partition("=")
        name, path = name.strip(), path.strip()
        if not equals or not path or not NAME.fullmatch(name):
            raise TableError(f"--table takes NAME=PATH, NAME a table name (a letter, then letters, digits or _), "
                             f"not {argument!r}; e.g. --table rides=data/rides")
        clash = [table for table in _built_in_tables() if table.lower() == name.lower()]
        if clash:
            raise TableError(f"--table {argument}: {name} names the built-in table {clash[0]} (SQL names ignore "
                             f"case; the built-in tables are {', '.join(_built_in_tables())}); bind yours under "
                             f"another name")
        twin = [other.table.name for other in found if other.table.name.lower() == name.lower()]
        if twin:
            raise TableError(f"--table {argument}: {twin[0]} is bound already (SQL names ignore case); give each "
                             f"table a name of its own")
        found.append(_read(name, os.path.abspath(path), argument))
    if len({table.layout for table in found}) > 1:
        raise TableError("the bound tables mix Delta tables and Parquet change logs ("
                         + ", ".join(f"{table.table.name}: {table.layout}" for table in found)
                         + "); bind tables of one layout")
    return found


def _built_in_tables() -> list[str]:
    return [table for dataset in tables_and_queries.BUILT_IN for table in tables_and_queries.DATASETS[dataset]]


def _read(name: str, path: str, argument: str) -> OwnTable:
    """The table at ``path``, bound as ``name``: its layout and columns."""
    import pyarrow
    import pyarrow.parquet

    if not os.path.exists(path):
        raise TableError(f"--table {argument}: there is no {path}; give a Delta table's folder or a Parquet change "
                         f"log's")
    if os.path.isdir(os.path.join(path, DELTA_LOG)):
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError

        try:
            schema = pyarrow.schema(DeltaTable(path).schema().to_arrow())
        except DeltaError as error:
            raise TableError(f"--table {argument}: the Delta table {path} does not read "
                             f"({str(error).splitlines()[0]})") from None
        return OwnTable(_table(name, schema, path), path, "delta")
    from .inputs import data_files

    files = sorted(file for file in data_files(path) if file.endswith(".parquet")) if os.path.isdir(path) else []
    schema = pyarrow.parquet.read_schema(files[0]) if files else None
    if schema is None or CHANGE_TYPE not in schema.names or VERSION not in schema.names:
        raise TableError(f"--table {argument}: {path} is neither a Delta table (a folder with {DELTA_LOG}) nor a "
                         f"Parquet change log (a folder of Parquet files with the table's columns, {CHANGE_TYPE} and "
                         f"{VERSION})")
    columns = pyarrow.schema([field for field in schema if field.name not in (CHANGE_TYPE, VERSION, TIMESTAMP)])
    return OwnTable(_table(name, columns, files[0]), path, "parquet")


def _table(name: str, schema: pyarrow.Schema, where: str) -> Table:
    """Table ``name`` with ``schema``'s columns in Spark SQL's types (read from ``where``)."""
    columns = []
    for field in schema:
        kind = sql_type(field.type)
        if kind is None:
            raise TableError(f"table {name} ({where}): column {field.name} is {field.type}, which has no Spark SQL "
                             f"type here ({TYPES_LISTED}); write it as one of those")
        if not NAME.fullmatch(field.name):
            raise TableError(f"table {name} ({where}): column {field.name!r} is not a name SQL reads unquoted "
                             f"(a letter, then letters, digits or _); rename it")
        if any(field.name.lower() == other.lower() for other, _ in columns):
            raise TableError(f"table {name} ({where}): two columns are named {field.name} (SQL names ignore case)")
        columns.append((field.name, kind))
    return Table(name, tuple(columns))


@contextmanager
def bound(tables: Sequence[OwnTable]) -> Iterator[None]:
    """While entered, ``tables`` are the catalog's data set ``BOUND`` (``tables_and_queries.bind``); then none is."""
    tables_and_queries.bind(table.table for table in tables)
    try:
        yield
    finally:
        tables_and_queries.bind(())


def link(folder: str, tables: Sequence[OwnTable], fresh: bool) -> str:
    """``folder`` made the bound tables' data set folder: a symbolic link ``folder/<name>`` to each table (and,
    for change logs, ``folder/_commits`` to their commit markers, if they have any); ``folder``.

    With ``fresh``, links made before are replaced; otherwise they must be these (a follow's checkpoint holds
    them: they say what it followed).

    Raises:
        TableError: without ``fresh``, ``folder`` links a name elsewhere, or other names; the change logs'
            markers are not one folder's, or name a table other than it is bound as.
    """
    wanted = {table.table.name: table.path for table in tables}
    markers = _markers(tables)
    if markers:
        wanted[MARKERS] = markers
    os.makedirs(folder, exist_ok=True)
    made = {entry: os.readlink(os.path.join(folder, entry)) for entry in os.listdir(folder)
            if os.path.islink(os.path.join(folder, entry))}
    if made and made != wanted and not fresh:
        before = ", ".join(f"{name}={path}" for name, path in sorted(made.items()) if name != MARKERS)
        now = ", ".join(f"{name}={path}" for name, path in sorted(wanted.items()) if name != MARKERS)
        raise TableError(f"{folder} records the tables this checkpoint followed, {before}, and this command binds "
                         f"{now or 'none'}: give the same --table arguments, or follow these with a new --out and "
                         f"--checkpoint")
    for entry in made:
        if made[entry] != wanted.get(entry):
            os.unlink(os.path.join(folder, entry))
    for name, path in wanted.items():
        if made.get(name) != path:
            os.symlink(path, os.path.join(folder, name), target_is_directory=True)
    return folder


def _markers(tables: Sequence[OwnTable]) -> str | None:
    """The commit markers of the bound change logs (their parent folder's ``_commits``), or None if they have none.

    Raises:
        TableError: some have markers and the logs are not all in that folder, each bound as its folder's name.
    """
    logs = [table for table in tables if table.layout == "parquet"]
    marked = sorted({os.path.join(os.path.dirname(table.path), MARKERS) for table in logs
                     if os.path.isdir(os.path.join(os.path.dirname(table.path), MARKERS))})
    if not marked:
        return None
    for table in logs:
        if os.path.join(os.path.dirname(table.path), MARKERS) != marked[0] or (
                os.path.basename(table.path) != table.table.name):
            raise TableError(f"change log {table.path} is bound as {table.table.name}, but the commit markers in "
                             f"{marked[0]} name the tables of {os.path.dirname(marked[0])} by their folders' names: "
                             f"bind each log of that folder as its folder's name, and no other log with them")
    return marked[0]


def check_followable(tables: Sequence[OwnTable]) -> None:
    """Refuse to follow change logs without commit markers: a follow takes a commit only once it is whole.

    Raises:
        TableError: a bound change log's folder has no ``_commits`` markers beside it.
    """
    for table in tables:
        if table.layout == "parquet" and _markers([table]) is None:
            raise TableError(f"change log {table.path} has no commit markers ({os.path.dirname(table.path)}/"
                             f"{MARKERS}), which a follow needs to know a commit is whole; write them with "
                             f"final.spark.sources.write_marker, or bind a Delta table (run reads the log as it is)")
