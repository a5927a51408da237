"""The Spark pipeline notebook's helpers: small change logs written by hand, and tables of rows.

``write_log`` writes a change log given as Python tuples in Delta Lake's
change data feed convention, the way a Delta table's ``readChangeFeed``
would hand it over, so the notebook can feed the pipeline a log small
enough to read. ``show_table`` displays rows with NULL spelled as SQL does.
Only the pipeline's public functions and records are used.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from IPython.display import Markdown, display

from final.spark import changelog
from final.spark.tables_and_queries import TABLES


def write_log(spark: Any, folder: str, table: str, changes: Iterable[tuple[tuple, str, int]]) -> str:
    """Write ``changes``, ``(record, _change_type, _commit_version)`` tuples of ``table``, as a Parquet change log
    under ``folder/table`` (sorted by version, as ``changelog.write`` writes); its path."""
    columns = ", ".join(f"`{name}` {kind}" for name, kind in TABLES[table].columns)
    schema = f"{columns}, {changelog.CHANGE_TYPE} STRING, {changelog.VERSION} BIGINT"
    rows = [(*record, change, version) for record, change, version in changes]
    path = os.path.join(folder, table)
    changelog.write(spark.createDataFrame(rows, schema), path)
    return path


def _cell(value: Any) -> str:
    return "NULL" if value is None else str(value)


def show_table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Display ``rows`` as a markdown table under ``columns``, ``None`` shown as NULL."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    display(Markdown("\n".join(lines)))
