"""Checking one fuzzing case: compile its query, then compare ``final/`` with the reference at every version.

The reference is Spark SQL (types and rows), or SQLite for a recursive
query Spark does not take; for a recursive query both run, they must agree
first, or the case is the transpiler's fault, not the compiler's. The first
version where ours differs ends the case with an ``Outcome`` saying how
(``DIFFERENCE_KINDS``); a case no engine should have been asked (a query
the compiler or Spark refuses) is a generator error (``REFUSALS``), not a
difference. A version where the reference raises for the data ends the
case too: ours must raise there as well.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..equality import tolerant_columns
from ..sql import SqlError, compile_sql
from .compare import Answer, describe, same_rows
from .engines import SPARK_INTERNAL, Ours, SparkOracle, SqliteOracle, first_line
from .queries import FuzzCase

DIFFERENCE_KINDS = {
    "types": "the result's types differ from Spark's",
    "names": "the result's column names differ from Spark's (an item without AS named otherwise)",
    "rows": "the rows differ",
    "spark-error": "Spark raises for the data and final/ does not",
    "final-error": "final/ raises for the data and Spark does not",
    "crash": "final/ fails other than as Spark would (a Python error, or a DataflowError not from the data)",
    "compile-crash": "compile_sql fails with an error other than SqlError",
}
"""What a difference can be."""

REFUSALS = {
    "compiler": "compile_sql refuses the query (SqlError): the generator left the subset, or the compiler lacks it",
    "spark": "Spark refuses the query (AnalysisException): the generator made a query that is not valid",
    "spark-internal": "Spark fails inside with a Java exception of its own or its INTERNAL_ERROR (a bug of Spark's): "
                      "no answer to compare",
    "oracles": "Spark and SQLite disagree on a recursive query: the transpiled query means something else",
    "fuzzer": "the fuzzer failed on the case (a bug here, not in the compiler)",
}
"""Why a case may count as a generator error rather than a difference."""


@dataclass(frozen=True)
class Outcome:
    """How one case went.

    ``status`` is ``agree``, ``differ`` (``kind`` from ``DIFFERENCE_KINDS``, at
    ``version``) or ``refused`` (``kind`` from ``REFUSALS``). ``answers``
    are the reference's answers at each version compared (for a difference,
    up to and including the one that differs), ``ours`` our answer there.
    """

    status: str
    versions: int = 0
    kind: str = ""
    version: int = -1
    detail: str = ""
    answers: tuple[Answer, ...] = ()
    ours: Answer | None = None


Fault = Callable[[FuzzCase, dict], dict]
"""A planted fault: takes a case and our snapshot at a version, returns the snapshot to compare (for tests)."""


class Checker:
    """Checks cases: compiles each query, and compares ``final/`` with the oracles at every version."""

    def __init__(self, spark: Any = None, fault: Fault | None = None) -> None:
        self.spark = SparkOracle(spark) if spark is not None else None
        self.sqlite = SqliteOracle()
        self.fault = fault

    def check(self, case: FuzzCase) -> Outcome:
        """``case``'s outcome: the first version where ``final/`` and the reference differ, if any.

        The reference is Spark (types and rows) when the case names it, and
        SQLite otherwise; SQLite also checks a recursive query Spark runs. A
        version where the reference raises for the data ends the case: ours
        must raise there too.

        Raises:
            RuntimeError: the case needs Spark and the checker was made without a SparkSession.
        """
        tables = {table.name: table for table in case.dataset.tables}
        try:
            compiled = compile_sql(case.text, tables, name="fuzz")
        except SqlError as error:
            return Outcome("refused", kind="compiler", detail=str(error))
        except Exception as error:
            reference = self._reference(case, 0)
            if reference.refused is not None:  # not a query at all: Spark refuses it too
                return Outcome("refused", kind="spark", version=0, detail=reference.refused)
            return Outcome("differ", 1, kind="compile-crash", version=0,
                           detail=f"{type(error).__name__}: {first_line(error)}", answers=(reference,))
        try:
            ours = Ours(compiled)
        except Exception as error:
            reference = self._reference(case, 0)
            return Outcome("differ", 1, kind="crash", version=0, detail=f"{type(error).__name__}: {first_line(error)}",
                           answers=() if reference.refused is not None else (reference,))
        answers: list[Answer] = []
        for version in range(len(case.dataset.commits)):
            reference = self._reference(case, version)
            if reference.refused is not None:
                kind = "oracles" if reference.refused.startswith("oracles") else "spark-internal" if \
                    reference.refused.startswith(SPARK_INTERNAL) else "spark"
                return Outcome("refused", version, kind=kind, version=version, detail=reference.refused)
            mine, snapshot = ours.answer(case.dataset, version)
            if self.fault is not None and mine.error is None and mine.crash is None:
                snapshot = self.fault(case, snapshot)
                mine = replace(mine, rows=tuple(row for row, count in snapshot.items()
                                                for _ in range(max(count, 0))))
            answers.append(reference)
            kind, detail = self._compare(case, reference, mine, snapshot, compiled.rank)
            if kind:
                return Outcome("differ", version + 1, kind, version, detail, tuple(answers), mine)
            if reference.error is not None:
                return Outcome("agree", version + 1, answers=tuple(answers))
        return Outcome("agree", len(case.dataset.commits), answers=tuple(answers))

    def _reference(self, case: FuzzCase, version: int) -> Answer:
        """The reference's answer; for a recursive query Spark runs, SQLite's must hold the same rows."""
        if "spark" not in case.oracles:
            found = self.sqlite.answer(case.text, case.dataset, version)
            return replace(found, types=case.types) if found.refused is None else found
        if self.spark is None:
            raise RuntimeError("this case needs Spark: make the Checker with a SparkSession")
        found = self.spark.answer(case.text, case.dataset, version)
        if "sqlite" in case.oracles and found.error is None and found.refused is None:
            other = self.sqlite.answer(case.text, case.dataset, version)
            if other.refused is not None:
                return Answer(refused=f"oracles: {other.refused}")
            differing = same_rows(found.rows, Counter(other.rows), tolerant_columns(case.text, found.types))
            if differing:
                return Answer(refused=f"oracles: Spark and SQLite differ at version {version}: "
                                      f"{describe(differing)}")
        return found

    @staticmethod
    def _compare(case: FuzzCase, reference: Answer, mine: Answer, snapshot: dict,
                 rank: Callable[[tuple], tuple] | None) -> tuple[str, str]:
        """The kind of difference between the reference's answer and ours (a top-k's ties at its edges by
        ``rank``), and a line describing it."""
        if mine.crash is not None:
            return "crash", mine.crash
        if reference.error is not None:
            return ("", "") if mine.error is not None else (
                "spark-error", f"Spark raises {reference.error}; final/ answers {len(mine.rows)} rows")
        if mine.error is not None:
            return "final-error", f"final/ raises {mine.error}; Spark answers {len(reference.rows)} rows"
        if reference.types is not None and tuple(mine.types or ()) != tuple(reference.types):
            return "types", f"types: Spark {list(reference.types)}, final/ {list(mine.types or ())}"
        if reference.names is not None and tuple(mine.names or ()) != tuple(reference.names):
            return "names", f"column names: Spark {list(reference.names)}, final/ {list(mine.names or ())}"
        differing = same_rows(reference.rows, snapshot, tolerant_columns(case.text, reference.types), rank)
        if differing:
            return "rows", describe(differing)
        return "", ""
