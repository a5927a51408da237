"""Differential fuzzing of the SQL compiler: random tables, histories and queries, checked against Spark SQL.

SQLancer and Feldera's SQL tests find an engine's bugs by running many
random, well-typed queries over random data through the engine and through
a reference, and comparing the answers. This package does that for
``compile_sql``, one module per job:

- ``data``: a seeded data set, two or three small typed tables holding the
  awkward values, and a history of four to six versions over them;
- ``queries``: queries of the subset over it (``QueryMaker``), and the case
  a seed and a number make (``generate_case``);
- ``engines``: the case's query answered by Spark SQL from scratch (the
  pipeline's ``truth.over``, as ``run`` and ``verify`` ask it), by SQLite
  for recursive queries, and by ``final/`` incrementally;
- ``compare``: answers compared as multisets of exactly typed values (a
  top-k's ties at its cut as the pipeline compares them);
- ``check``: one case checked at every version, and how it went;
- ``shrink``: a differing case made small while it differs the same way;
- ``reproduce``: that case as a pytest file replaying it without Spark;
- ``cli``: ``python -m final.spark fuzz``.

``fuzz`` here runs it all: it generates, checks, shrinks and writes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..equality import TOLERANCE, row_key, tolerant_columns, value_key
from .check import DIFFERENCE_KINDS, REFUSALS, Checker, Fault, Outcome
from .compare import Answer, same_rows
from .data import MAX_ROWS, Dataset, DatasetCommit
from .engines import SPARK_CONF, Ours, SparkOracle, SqliteOracle, first_line
from .queries import QUERIES_PER_DATASET, TYPE_FAMILIES, FuzzCase, QueryMaker, coverage, generate, generate_case
from .reproduce import replay, reproducer, write_reproducer
from .shrink import SHRINK_SECONDS, Shrinker, signature

__all__ = [
    "DIFFERENCE_KINDS", "MAX_ROWS", "QUERIES_PER_DATASET", "REFUSALS", "SHRINK_LIMIT", "SHRINK_SECONDS", "SPARK_CONF",
    "TOLERANCE", "TYPE_FAMILIES", "Answer", "Checker", "Dataset", "DatasetCommit", "Fault", "Finding", "FuzzCase",
    "FuzzRun", "Ours", "Outcome", "QueryMaker", "Shrinker", "SparkOracle", "SqliteOracle", "coverage", "fuzz",
    "generate", "generate_case", "replay", "reproducer", "row_key", "same_rows", "signature", "tolerant_columns",
    "value_key", "write_reproducer",
]

SHRINK_LIMIT = 20
"""Differences shrunk in a run; the rest are written as found (when a bug makes many, the first few suffice)."""


@dataclass
class Finding:
    """A case that differs (or that an engine refused), its outcome, and its shrunk form and reproducer.

    Invariant: ``shrunk`` and ``shrunk_outcome`` are both set (the case was
    shrunk) or both None; ``path`` is the reproducer written for ``smallest``.
    """

    case: FuzzCase
    outcome: Outcome
    shrunk: FuzzCase | None = None
    shrunk_outcome: Outcome | None = None
    path: str | None = None

    @property
    def smallest(self) -> tuple[FuzzCase, Outcome]:
        """The case and its outcome as shrunk, or as found when it was not shrunk."""
        return self.shrunk or self.case, self.shrunk_outcome or self.outcome


@dataclass
class FuzzRun:
    """What a fuzzing run did: queries and versions checked, differences, generator errors, time."""

    queries: int = 0
    versions: int = 0
    differences: list[Finding] = field(default_factory=list)
    refused: list[Finding] = field(default_factory=list)
    raised: int = 0
    """Cases where Spark raised for the data at some version, and final/ did too: agreement."""
    seconds: float = 0.0
    spark_seconds: float = 0.0

    @property
    def summary(self) -> str:
        """The run's last line: queries and versions checked, differences found."""
        return f"{self.queries} queries x {self.versions} versions checked, {len(self.differences)} differences"


def fuzz(spark: Any, seed: int, queries: int, out: str | None = None, shrink: int = SHRINK_LIMIT,
         fault: Fault | None = None, progress: Callable[[FuzzRun], None] | None = None, first: int = 0,
         shrink_seconds: float = SHRINK_SECONDS) -> FuzzRun:
    """Check cases ``first`` .. ``first + queries - 1`` of the run seeded ``seed``.

    The first ``shrink`` differences are shrunk, but for a failure of ours
    only the first two with the same error (``signature``): one bug makes
    many. Every difference is written as a reproducer under ``out`` (when
    given). ``progress``, if given, is called after each case with the
    ``FuzzRun`` so far.

    Raises:
        OSError: a reproducer cannot be written under ``out``.
    """
    checker = Checker(spark, fault)
    shrinker = Shrinker(checker, shrink_seconds)
    found = FuzzRun()
    shrunk: Counter = Counter()
    start = time.perf_counter()
    for index in range(first, first + queries):
        case = generate_case(seed, index)
        try:
            outcome = checker.check(case)
        except Exception as error:  # a bug of the fuzzer's own: counted, and the run goes on
            outcome = Outcome("refused", kind="fuzzer", detail=f"{type(error).__name__}: {first_line(error)}")
        found.queries += 1
        found.versions += outcome.versions
        if outcome.status == "agree" and outcome.answers and outcome.answers[-1].error is not None:
            found.raised += 1
        if outcome.status == "refused":
            found.refused.append(Finding(case, outcome))
        elif outcome.status == "differ":
            finding = Finding(case, outcome)
            same = signature(outcome)
            if sum(shrunk.values()) < shrink and (not same[1] or shrunk[same] < 2):
                shrunk[same] += 1
                finding.shrunk, finding.shrunk_outcome = shrinker.shrink(case, outcome)
            if out is not None:
                finding.path = write_reproducer(*finding.smallest, out, f"seed_{seed}_query_{index}")
            found.differences.append(finding)
        if progress is not None:
            progress(found)
    found.seconds = time.perf_counter() - start
    found.spark_seconds = checker.spark.seconds if checker.spark is not None else 0.0
    return found
