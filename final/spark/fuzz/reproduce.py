"""Reproducers: a fuzzing case that differs, written as a pytest file that replays it without Spark.

The file holds the tables, each version's updates, the query, and the
reference's answer at every version up to the one that differs; its test
calls ``replay``, which compiles the query, feeds ``final/`` the history
and compares as the fuzzer does (``compare``). It fails while the bug is
there, so once fixed it moves into ``tests/sql_found/`` as a regression
test, with the fix told in its docstring.
"""

from __future__ import annotations

import os
import textwrap
from collections import Counter
from collections.abc import Sequence

from ..equality import tolerant_columns
from ..incremental import UnversionedChange
from ..query import Table
from ..sql import compile_sql
from .check import DIFFERENCE_KINDS, Outcome
from .compare import as_source, describe, same_rows
from .data import Dataset, DatasetCommit
from .engines import Ours
from .queries import FuzzCase


def reproducer(case: FuzzCase, outcome: Outcome, name: str) -> str:
    """A pytest file (its source) that replays ``case`` and asserts the reference's answers at every version
    up to the one that differs: it fails while ``final/`` still differs, and needs no Spark. Every line fits
    ruff's 120 columns, so the file can move into ``tests/`` as it is."""
    history = [case.dataset.updates(version) for version in range(outcome.version + 1)]
    types = outcome.answers[-1].types if outcome.answers else None
    reference = "Spark SQL" if "spark" in case.oracles else "SQLite"
    ours = outcome.ours
    if ours is None:
        said = outcome.detail
    elif ours.crash or ours.error:
        said = f"raises {ours.crash or ours.error}"
    else:
        said = f"{list(ours.types or ())}: {as_source(list(ours.rows))}"
    expected = outcome.answers[-1] if outcome.answers else None
    if expected is None:
        wanted = "(no answer: the query fails before any version)"
    elif expected.error is not None:
        wanted = f"raises {expected.error}"
    else:
        wanted = f"{list(expected.types or ())}: {as_source(list(expected.rows))}"
    kind = DIFFERENCE_KINDS.get(outcome.kind, outcome.kind)
    paragraphs = [
        f"{kind[0].upper()}{kind[1:]}. Shrunk by final.spark.fuzz; move it into tests/ once the "
        f"cause is fixed.",
        f"{reference}'s answer at version {outcome.version}: {wanted}", f"final/'s answer: {said}",
        f"({outcome.detail})",
    ]
    # The docstring is not raw: a backslash (a LIKE pattern's escape) is doubled to stay one.
    wrapped = "\n\n".join(textwrap.fill(paragraph, 116) for paragraph in paragraphs).replace("\\", "\\\\")
    query = textwrap.indent(textwrap.fill(case.text, 112), "    ").replace("\\", "\\\\")
    tables = "".join(f"    Table({table.name!r}, {table.columns!r}),\n" for table in case.dataset.tables)
    versions = "".join(f"    [  # version {version}\n"
                       + "".join(f"        ({table!r}, {as_source(row)}, {count}),\n" for table, row, count in updates)
                       + "    ],\n" for version, updates in enumerate(history))
    listed = "".join(
        f"    {as_source(answer.error)},  # version {version}\n" if answer.error is not None else
        f"    [  # version {version}\n" + "".join(f"        {as_source(row)},\n" for row in answer.rows) + "    ],\n"
        for version, answer in enumerate(outcome.answers))
    written = versions + listed
    temporal = ", ".join(name for name in ("date", "datetime") if f"{name}(" in written)
    standard = "".join(line for line, used in ((f"from datetime import {temporal}\n", temporal),
                                               ("from decimal import Decimal\n", "Decimal(" in written)) if used)
    standard += "\n" if standard else ""
    pieces = textwrap.wrap(case.text, 100, drop_whitespace=False)
    text = "(\n" + "".join(f"    {piece!r}\n" for piece in pieces) + ")" if "".join(pieces) == case.text \
        else repr(case.text)
    # Spelled out of two parts: a line of this file that imports final/ would read as a stage importing another.
    imports = "\n".join(f"from {package} import {name}" for package, name in (
        ("final" + ".spark.fuzz", "replay"), ("final" + ".spark.query", "Table")))
    source = f'''"""A difference the SQL fuzzer found ({case.origin}): {outcome.kind} at version {outcome.version}.

{wrapped}

The query:

{query}
"""

{standard}{imports}

TABLES = [
{tables}]

HISTORY = [
{versions}]
"""Each version's updates: (table, record, multiplicity)."""

QUERY = {text}

TYPES = {(tuple(types) if types is not None else None)!r}
"""The result's types as {reference} gives them."""

ANSWERS = [
{listed}]
"""{reference}'s answer at each version: its rows, or the error class it raised."""


def test_{name}() -> None:
    replay(TABLES, HISTORY, QUERY, TYPES, ANSWERS)
'''
    return source


def replay(tables: Sequence[Table], history: Sequence[Sequence[UnversionedChange]], query: str,
           types: Sequence[str] | None, answers: Sequence[list | str]) -> None:
    """Compile ``query``, apply ``history`` version by version, and assert ``answers`` (rows, or the error
    class a version raises) and ``types``, as the fuzzer compares them.

    Raises:
        AssertionError: naming the version and how ours differs.
    """
    compiled = compile_sql(query, {table.name: table for table in tables}, name="reproducer")
    rank = compiled.rank
    if types is not None:
        assert tuple(compiled.types) == tuple(types), f"types: expected {list(types)}, final/ {list(compiled.types)}"
    ours = Ours(compiled)
    dataset = _replayed(tables, history)
    for version, expected in enumerate(answers):
        mine, snapshot = ours.answer(dataset, version)
        assert mine.crash is None, f"version {version}: final/ fails: {mine.crash}"
        if isinstance(expected, str):
            assert mine.error is not None, f"version {version}: Spark raises {expected}; final/ does not"
            return
        assert mine.error is None, f"version {version}: final/ raises {mine.error}; Spark does not"
        differing = same_rows(expected, snapshot, tolerant_columns(query, types), rank)
        assert not differing, f"version {version}: {describe(differing, limit=10)}"


def _replayed(tables: Sequence[Table], history: Sequence[Sequence[UnversionedChange]]) -> Dataset:
    """A ``Dataset`` whose versions make exactly ``history``'s updates (churn as a retraction and an insert)."""
    names = [table.name for table in tables]
    current: list[Counter] = [Counter() for _ in tables]
    commits = []
    for updates in history:
        before = [Counter(held) for held in current]
        churn = []
        for name, row, count in updates:
            current[names.index(name)][row] += count
        net = Counter()
        for name, row, count in updates:
            net[(name, row)] += count
        for name, row, count in updates:
            if count < 0 and net[(name, row)] == 0 and before[names.index(name)][row] > 0:
                churn.append((names.index(name), row))
        commits.append(DatasetCommit(tuple(tuple(held.elements()) for held in current), tuple(dict.fromkeys(churn))))
    return Dataset(tuple(tables), tuple(commits))


def write_reproducer(case: FuzzCase, outcome: Outcome, folder: str, name: str) -> str:
    """Write ``reproducer(case, outcome, name)`` as ``folder/test_fuzz_<name>.py``; return the path.

    Raises:
        OSError: ``folder`` cannot be made or the file written.
    """
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"test_fuzz_{name}.py")
    with open(path, "w") as file:
        file.write(reproducer(case, outcome, name))
    return path
