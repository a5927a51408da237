"""The engines a fuzzed query runs on: Spark SQL and SQLite from scratch, and ``final/`` incrementally.

Each answers a case's query at one version of its data set as an ``Answer``
(rows and types, or the error raised). Spark SQL is the reference, asked
through the pipeline's own from-scratch side (``truth.over``), which ``run``
and ``verify`` use too; the fuzzer adds what a run of thousands of small
queries needs: each version's DataFrames made once, answers kept for the
shrinker's repeated questions, and Spark's errors read as answers. SQLite
(the query transpiled by sqlglot) answers recursive queries beside Spark,
and alone those Spark does not take. Ours is the compiled query in one
``IncrementalQuery`` fed the history version by version, as the pipeline
runs it.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from collections import OrderedDict
from typing import Any

from ...errors import DataflowError
from ..incremental import IncrementalQuery
from ..query import Table
from ..sql import SqlQuery
from ..sql.dialect import SPARK
from ..sql.errors import runtime_cause
from ..truth import over
from .compare import Answer
from .data import Dataset, Row
from .queries import family_of

SPARK_CONF = {
    "spark.sql.shuffle.partitions": "1",
    "spark.default.parallelism": "1",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
"""One partition: the tables are a few rows, and a task per shuffle partition would cost more than the query.
No generated code: every query is new, and compiling Java for it took longer than running it over so few
rows (Spark's interpreted evaluation has the same semantics, ANSI errors included; ``--conf`` puts it back)."""


class SparkOracle:
    """Spark SQL computing a query from scratch (``truth.over``) over a data set's tables at one version.

    DataFrames and answers are kept (``DATAFRAMES``, ``ANSWERS``; beyond
    them the oldest go) for the versions and queries a shrink asks for again.

    Invariant: ``_answers`` maps a query's text and the rows of the tables it
    names to Spark's answer over exactly those rows; ``_frames`` maps a
    table's DDL and rows to a DataFrame holding them.
    """

    DATAFRAMES = 256
    """DataFrames kept: a data set's tables at each of its versions, for a few data sets."""

    ANSWERS = 4096
    """Answers kept: enough for the candidates one shrink checks again and again."""

    def __init__(self, session: Any) -> None:
        from pyspark.logger import PySparkLogger

        self.session = session
        # pyspark logs every query's error at ERROR level with its Java trace; here an error is an answer.
        PySparkLogger.getLogger("SQLQueryContextLogger").setLevel(logging.CRITICAL + 1)
        self._frames: OrderedDict = OrderedDict()
        self._answers: OrderedDict = OrderedDict()
        self.queries = 0
        self.seconds = 0.0

    def answer(self, text: str, dataset: Dataset, version: int) -> Answer:
        """Spark's answer to ``text`` over ``dataset`` as of ``version`` (kept: the same text over the same
        rows of the tables it names is answered once)."""
        named = tuple((table, dataset.commits[version].rows[index]) for index, table in enumerate(dataset.tables)
                      if re.search(rf"\b{table.name}\b", text))
        key = (text, tuple((table.name, table.ddl, rows) for table, rows in named))
        if key in self._answers:
            self._answers.move_to_end(key)
            return self._answers[key]
        frames = {table.name: self._frame(table, rows) for table, rows in named}
        start = time.perf_counter()
        found = self._run(text, frames)
        self.seconds += time.perf_counter() - start
        self.queries += 1
        self._answers[key] = found
        if len(self._answers) > self.ANSWERS:
            self._answers.popitem(last=False)
        return found

    def _frame(self, table: Table, rows: tuple[Row, ...]) -> Any:
        """A DataFrame of ``rows`` with ``table``'s columns (made once for the same rows)."""
        key = (table.ddl, rows)
        frame = self._frames.get(key)
        if frame is None:
            # pyspark takes a float, not sqlfloat's NaN (a float subclass): float() gives it a plain one.
            frame = self.session.createDataFrame(
                [tuple(float(value) if isinstance(value, float) else value for value in row) for row in rows],
                table.ddl)
            self._frames[key] = frame
            if len(self._frames) > self.DATAFRAMES:
                self._frames.popitem(last=False)
        return frame

    def _run(self, text: str, frames: dict[str, Any]) -> Answer:
        from pyspark.errors import AnalysisException

        try:
            truth = over(self.session, text, frames)
        except AnalysisException as error:
            return Answer(refused=first_line(error))
        except Exception as error:  # an ANSI error for the data: DIVIDE_BY_ZERO, CAST_INVALID_INPUT, ...
            condition = getattr(error, "getCondition", lambda: None)()
            inside = _java_failure(error) if condition is None or condition.startswith("INTERNAL_ERROR") else None
            if inside is not None:  # no error of SQL's: a bug inside Spark, which gives no answer to compare with
                return Answer(refused=f"{SPARK_INTERNAL}: {inside}")
            return Answer(error=condition or first_line(error))
        return Answer(truth.rows, truth.types, names=truth.names)


SPARK_INTERNAL = "Spark SQL failed inside"
"""How an answer starts when Spark failed with a Java exception of its own rather than an error of SQL's."""


def _java_failure(error: BaseException) -> str | None:
    """The Java exception that ``error`` (a pyspark error without an error class, or of Spark's class
    ``INTERNAL_ERROR``) carries, if it is one that is not SQL's: ``java.util.NoSuchElementException: key not
    found: k#14``, or Spark's own word that it hit a bug of its own (``[INTERNAL_ERROR] The Spark SQL phase
    analysis failed with an internal error``)."""
    for line in str(error).splitlines():
        found = re.match(r"\s*:?\s*((?:java|scala)\.[\w.$]+(?:Exception|Error)\b.*|"
                         r"org\.apache\.spark\.SparkException: \[INTERNAL_ERROR.*)", line)
        if found:
            return found.group(1)[:300]
    return None


SQLITE_TYPES = {"int": "INTEGER", "bigint": "INTEGER", "double": "REAL", "string": "TEXT", "boolean": "INTEGER",
                "decimal": "NUMERIC"}
"""The SQLite column type (its affinity) each family is stored as."""


class SqliteOracle:
    """SQLite (``sqlite3``) computing a query from scratch: the text transpiled by sqlglot, the version's
    rows loaded into a fresh in-memory database."""

    def answer(self, text: str, dataset: Dataset, version: int) -> Answer:
        import sqlglot

        connection = sqlite3.connect(":memory:")
        try:
            for index, table in enumerate(dataset.tables):
                columns = ", ".join(f"{name} {SQLITE_TYPES[family_of(kind)]}" for name, kind in table.columns)
                connection.execute(f"CREATE TABLE {table.name} ({columns})")
                marks = ", ".join("?" for _ in table.columns)
                connection.executemany(f"INSERT INTO {table.name} VALUES ({marks})",
                                       dataset.commits[version].rows[index])
            translated = sqlglot.transpile(text, read=SPARK, write="sqlite")[0]
            return Answer(tuple(tuple(row) for row in connection.execute(translated).fetchall()))
        except (sqlite3.Error, ValueError) as error:
            return Answer(refused=f"SQLite: {error}")
        finally:
            connection.close()


class Ours:
    """``final/`` answering a compiled query incrementally: one ``IncrementalQuery``, fed version by version.

    Once it has raised, it is broken (as ``IncrementalQuery`` is), and the
    case stops there.
    """

    def __init__(self, compiled: SqlQuery) -> None:
        self.compiled = compiled
        self.query = IncrementalQuery(compiled)

    def answer(self, dataset: Dataset, version: int) -> tuple[Answer, dict[tuple, int]]:
        """Our answer after applying ``version``, and the snapshot (row -> multiplicity) it comes from."""
        reads = set(self.compiled.inputs)
        updates = [update for update in dataset.updates(version) if update[0] in reads]
        try:
            self.query.apply(version, updates)
            snapshot = dict(self.query.snapshot)
        except DataflowError as error:
            cause = runtime_cause(error)
            if cause is None:
                return Answer(crash=f"{type(error).__name__}: {first_line(error)}"), {}
            return Answer(error=first_line(cause)), {}
        except Exception as error:
            return Answer(crash=f"{type(error).__name__}: {first_line(error)}"), {}
        rows = tuple(row for row, count in snapshot.items() for _ in range(max(count, 0)))
        return Answer(rows, tuple(self.compiled.types), names=tuple(self.compiled.columns)), snapshot


def first_line(error: BaseException) -> str:
    """``error``'s first line that is not blank, cut to 300 characters (its type's name if it has none)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0][:300] if lines else type(error).__name__
