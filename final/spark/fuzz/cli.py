"""``python -m final.spark fuzz``: a fuzzing run from the command line, with a progress bar and a summary.

It starts a Spark session with the fuzzer's settings (``SPARK_CONF``: one
partition, no generated code, as suits thousands of queries over a few
rows), runs ``fuzz``, prints each difference and generator error with the
path of its reproducer, and ends with the summary line; the exit status is
1 when a difference was found.
"""

from __future__ import annotations

import sys
from typing import Any

from ..session import check_master, settings, spark_session
from . import FuzzRun, fuzz
from .check import REFUSALS
from .engines import SPARK_CONF


def command(arguments: Any, conf: dict[str, str], log_file: str) -> int:
    """``python -m final.spark fuzz``: run, print each difference and generator error, and the summary line.

    Exit status 1 when a difference was found, 0 otherwise.

    Raises:
        ValueError: a count of ``arguments`` is out of range.
        MasterURLError: the Spark master is none of the forms Spark knows.
        SparkUnavailableError: Spark cannot start (no pyspark, no Java, a master that does not answer).
    """
    if arguments.queries < 1 or arguments.first < 0 or arguments.shrink < 0:
        raise ValueError(f"--queries takes a positive count and --first and --shrink counts from 0, not "
                         f"{arguments.queries}, {arguments.first} and {arguments.shrink}; e.g. --queries 200")
    check_master(settings(arguments.master, conf)[0])
    spark = spark_session(arguments.master, {**SPARK_CONF, **conf}, app_name="final-fuzz", log_file=log_file)
    bar = _progress_bar(arguments.queries)

    def progress(found: FuzzRun) -> None:
        bar.update(1)
        bar.set_postfix(differences=len(found.differences), refused=len(found.refused), refresh=False)

    try:
        found = fuzz(spark, arguments.seed, arguments.queries, arguments.out, arguments.shrink, progress=progress,
                    first=arguments.first)
    finally:
        bar.close()
    for finding in found.differences:
        case, outcome = finding.smallest
        where = f"; reproducer {finding.path}" if finding.path else ""
        print(f"difference ({finding.case.origin}, {outcome.kind} at version {outcome.version}"
              f"{', shrunk' if finding.shrunk else ''}): {case.text}\n    {outcome.detail}{where}")
    inside = [finding for finding in found.refused if finding.outcome.kind == "spark-internal"]
    for finding in found.refused:
        what = "no reference" if finding in inside else "generator error"
        print(f"{what} ({finding.case.origin}, {REFUSALS[finding.outcome.kind].split(':')[0]}): "
              f"{finding.case.text}\n    {finding.outcome.detail}")
    failed = f"; Spark failed inside on {len(inside)} (no reference to compare with)" if inside else ""
    print(f"{len(found.refused) - len(inside)} generator errors{failed}; {found.raised} queries raised for the data "
          f"in Spark and in final/ alike; {found.seconds:.0f} s, Spark {found.spark_seconds:.0f} s")
    print(found.summary)
    return 1 if found.differences else 0


def _progress_bar(total: int) -> Any:
    """A tqdm bar on stderr (a stand-in that does nothing when tqdm is missing)."""
    try:
        from tqdm import tqdm
    except ImportError:
        class Quiet:
            def update(self, count: int) -> None: ...
            def set_postfix(self, **values: Any) -> None: ...
            def close(self) -> None: ...
        return Quiet()
    return tqdm(total=total, file=sys.stderr, desc="fuzz", unit="query", dynamic_ncols=True)
