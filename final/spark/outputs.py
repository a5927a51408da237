"""What the pipeline shows and writes: values in SQL's words, and outputs replaced whole or not at all.

Every message and report row names a value as SQL would print it
(``sql_text``): NULL, not ``None``; ``10.00``, not ``Decimal('10.00')``; a
timestamp as ISO text. And every output (a change log, a table, the report
with its plots) is written beside its target first and moved into place only
once it is complete, so a run that is killed, or fails half-way, leaves the
previous run's outputs as they were: never a new ``report.json`` beside an
old ``report.md``, never a change log with half its files.

A folder (a change log Spark writes) is swapped as one: the new one is
written to ``<target>.tmp-<pid>``, the old one renamed to
``<target>.old-<pid>``, the new one renamed to ``<target>``, the old one
deleted. Files that share a folder with others (the report, beside the change
logs and ``spark.log``) are written to ``<folder>/.tmp-<pid>`` and moved in
one by one, the old set moved aside first and the marker file last, so
whenever the marker is there the files beside it are of the same run.
Leftovers of a killed run (``.tmp-<pid>``, ``.old-<pid>`` of a process that
no longer exists) are removed by the next write beside them.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import Any

SUCCESS = "_SUCCESS"
"""The empty file Spark writes in a folder last, when a write job commits."""


class OutputError(RuntimeError):
    """An output that could not be written whole; the previous one is left in place."""


def sql_text(value: Any) -> str:
    """``value`` as SQL prints it: NULL, 10.00, 'text', TRUE, NaN, timestamps and dates as ISO text.

    >>> [sql_text(v) for v in (None, Decimal("10.00"), "it's", True, float("nan"), 3)]
    ['NULL', '10.00', "'it''s'", 'TRUE', 'NaN', '3']
    >>> sql_text(dt.datetime(2018, 1, 1, 0, 30))
    '2018-01-01T00:30:00'
    >>> sql_text((1, None))
    '(1, NULL)'
    """
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, tuple):
        return "(" + ", ".join(sql_text(item) for item in value) + ")"
    return str(value)


def record_text(names: Sequence[str], record: Sequence[Any]) -> str:
    """A record with its column names: ``(node = 3)``, ``(id = 1, name = NULL)``."""
    return "(" + ", ".join(f"{name} = {sql_text(value)}" for name, value in zip(names, record, strict=True)) + ")"


def replace_folder(target: str, write: Callable[[str], None], complete: Callable[[str], bool] | None = None) -> None:
    """Call ``write(folder)`` on a new folder beside ``target``, then swap it in for ``target``.

    ``complete(folder)`` (by default: always) says whether what ``write``
    left is whole; if ``write`` raises or the folder is not complete,
    ``target`` is left as it was and the new folder deleted.

    Raises:
        OutputError: ``write`` returned but ``complete`` says the folder is not whole.
    """
    target = os.path.normpath(target)
    parent = os.path.dirname(target) or "."
    os.makedirs(parent, exist_ok=True)
    remove_leftovers(parent, os.path.basename(target) + ".")
    new, old = f"{target}.tmp-{os.getpid()}", f"{target}.old-{os.getpid()}"
    shutil.rmtree(new, ignore_errors=True)
    try:
        write(new)
        if complete is not None and not complete(new):
            raise OutputError(f"the write of {target} did not finish (no {SUCCESS} in {new}); {target} is unchanged")
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    if os.path.exists(target):
        os.rename(target, old)
    os.rename(new, target)
    shutil.rmtree(old, ignore_errors=True)


def replace_with_spark(target: str, write: Callable[[str], None]) -> None:
    """``replace_folder`` for a folder Spark writes: swapped in only if Spark's ``_SUCCESS`` marker is there."""
    replace_folder(target, write, complete=lambda folder: os.path.exists(os.path.join(folder, SUCCESS)))


def replace_files(folder: str, names: Iterable[str], write: Callable[[str], None], marker: str) -> None:
    """Call ``write(scratch)`` on an empty scratch folder, then move the files it made into ``folder``.

    ``names`` are every file this kind of output may hold: each one present
    in ``folder`` is removed, even if ``write`` did not make it again (a
    plot a run no longer draws). The old ``marker`` goes first and the new
    one comes last, so a ``marker`` present in ``folder`` is always beside the
    files of its own run. If ``write`` raises, ``folder`` is left as it was.
    """
    os.makedirs(folder, exist_ok=True)
    remove_leftovers(folder, ".")
    scratch, old = os.path.join(folder, f".tmp-{os.getpid()}"), os.path.join(folder, f".old-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    try:
        write(scratch)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    made = set(os.listdir(scratch))
    os.makedirs(old, exist_ok=True)
    for name in [marker, *(name for name in names if name != marker)]:
        if os.path.exists(os.path.join(folder, name)):
            os.rename(os.path.join(folder, name), os.path.join(old, name))
    for name in sorted(made - {marker}) + sorted(made & {marker}):
        os.rename(os.path.join(scratch, name), os.path.join(folder, name))
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)


def replace_file(path: str, write: Callable[[str], None]) -> None:
    """Call ``write(temporary)`` on a hidden name beside ``path`` (``.<name>.tmp-<pid>``, which Spark's
    readers skip), then rename it to ``path``: the file is whole or absent, never half-written.

    If ``write`` raises, the temporary file is deleted and ``path`` left as it was.
    """
    folder, name = os.path.split(path)
    temporary = os.path.join(folder, f".{name}.tmp-{os.getpid()}")
    try:
        write(temporary)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
    os.replace(temporary, path)


def remove_leftovers(folder: str, prefix: str = "") -> None:
    """Delete the entries of ``folder`` named ``<prefix>….tmp-<pid>`` or ``<prefix>….old-<pid>`` (what the
    writers here leave while they work) whose process is gone: what a killed write left behind."""
    for name in os.listdir(folder):
        stem, _, pid = name.rpartition("-")
        if (not stem.startswith(prefix) or not stem.endswith((".tmp", ".old")) or not pid.isdigit()
                or _alive(int(pid))):
            continue
        path = os.path.join(folder, name)
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.remove(path)


def _alive(pid: int) -> bool:
    """True if a process ``pid`` exists (this one included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
