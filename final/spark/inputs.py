"""A run's inputs, checked before any work starts: sizes, tables, change logs, files.

``validate`` looks at everything a run will read, for every data set asked
for, before Spark starts: so a missing log of the third data set stops the
run at once, not after the first two have been checked for minutes. What it
can see without Spark it sees here: a table or log that is not there, a log
folder that is empty or half-written (Spark's ``_temporary`` folder and no
``_SUCCESS``: a write that was killed), and a Parquet file that is truncated
or not Parquet at all (its magic bytes and footer, read with pyarrow).
What needs the data read (a CSV value that does not cast, a log that is
not a history) is checked when the tables and logs are read
(``datasets.read``, ``sources.LogChecker``), all of them before the first query.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from .changelog import ChangeLogError
from .datasets import DatasetError
from .outputs import SUCCESS
from .tables_and_queries import DATASETS

MAGIC = b"PAR1"
"""A Parquet file begins and ends with these bytes; the footer's length (4 bytes) comes just before the end."""

TEMPORARY = "_temporary"
"""The folder Spark writes a job's files into before it commits them (and writes ``_SUCCESS``)."""


def validate(names: Iterable[str], rows: int | None, versions: int, tables: str | None, logs: str | None,
             folders: Mapping[str, str] | None = None) -> None:
    """Check a run's sizes and, for each data set in ``names``, its tables (``tables``) or change logs (``logs``,
    or the data set's own folder in ``folders``: the tables bound with ``--table``).

    Raises:
        DatasetError: ``rows`` is not positive, or a table is missing, empty, half-written or not Parquet.
        ChangeLogError: a change log is missing, empty, half-written, or holds a file that is not Parquet.
        ValueError: ``versions`` is not positive.
    """
    if rows is not None and rows < 1:
        raise DatasetError(f"a data set's size is a positive number of rows, not {rows!r}; e.g. --rows 10000")
    if versions < 1:
        raise ValueError(f"versions is a positive int, not {versions!r}; e.g. --versions 12")
    for dataset in names:
        folder = (folders or {}).get(dataset) or (os.path.join(logs, dataset) if logs else None)
        for table in DATASETS[dataset]:
            if folder and os.path.isdir(os.path.join(folder, table, "_delta_log")):
                continue  # a Delta table: its commits are checked as they are read (sources.read_commit)
            if folder:
                problem = folder_problem(os.path.join(folder, table), "change log")
                if problem:
                    raise ChangeLogError(problem)
            elif tables:
                problem = table_problem(os.path.join(tables, dataset), dataset, table)
                if problem:
                    raise DatasetError(problem)


def table_problem(folder: str, dataset: str, table: str) -> str | None:
    """What is wrong with ``table``'s file in ``folder`` (``<table>.parquet`` or ``<table>.csv``), or None."""
    parquet, csv = os.path.join(folder, f"{table}.parquet"), os.path.join(folder, f"{table}.csv")
    if os.path.exists(parquet):
        return folder_problem(parquet, "table")
    if os.path.exists(csv):
        return None
    return (f"data set {dataset!r} needs table {table!r}: neither {parquet} nor {csv} exists; write one of them "
            f"(python -m final.spark generate writes Parquet)")


def folder_problem(path: str, kind: str) -> str | None:
    """What is wrong with the Parquet file or folder of files at ``path`` (a ``kind``: "change log", "table")."""
    if not os.path.exists(path):
        if kind == "change log":
            return f"no change log at {path}; write one with `python -m final.spark generate`"
        return f"no {kind} at {path}"
    if os.path.isfile(path):
        return parquet_problem(path)
    entries = os.listdir(path)
    if TEMPORARY in entries and SUCCESS not in entries:
        return (f"{kind} {path} is half-written: it holds Spark's {TEMPORARY} folder and no {SUCCESS} marker (a "
                f"write that was killed); write it again (python -m final.spark generate)")
    files = sorted(data_files(path))
    if not files:
        return f"{kind} {path} is empty: it holds no Parquet files; write it again (python -m final.spark generate)"
    for file in files:
        problem = parquet_problem(file)
        if problem:
            return f"{kind} {path}: {problem}"
    return None


def data_files(folder: str) -> Iterable[str]:
    """The files Spark reads under ``folder``: all but those whose name (or folder's) begins with ``_`` or ``.``."""
    for parent, folders, files in os.walk(folder):
        folders[:] = [name for name in folders if not name.startswith(("_", "."))]
        yield from (os.path.join(parent, name) for name in files if not name.startswith(("_", ".")))


def parquet_problem(file: str) -> str | None:
    """What keeps ``file`` from being read as Parquet (not Parquet, truncated, a footer that does not read), or None."""
    import pyarrow.parquet

    size = os.path.getsize(file)
    with open(file, "rb") as opened:
        head = opened.read(len(MAGIC))
        opened.seek(max(0, size - len(MAGIC)))
        tail = opened.read(len(MAGIC))
    if head != MAGIC:
        return f"{file} is not a Parquet file: it does not begin with Parquet's magic bytes PAR1"
    if size < 3 * len(MAGIC) or tail != MAGIC:
        return (f"{file} is truncated: a Parquet file ends with its footer and the bytes PAR1, and this one "
                f"ends after {size} bytes without them; write it again")
    try:
        pyarrow.parquet.ParquetFile(file).close()
    except (OSError, ValueError) as error:
        return f"{file} is damaged: its Parquet footer does not read ({str(error).splitlines()[0]}); write it again"
    return None
