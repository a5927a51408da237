"""``python -m final.spark.executors``: follow Delta tables with each query's state on Spark's executors.

    python -m final.spark.executors --logs DIR --out OUT [--sql FILE.sql ...] [--trigger-seconds S]

Every data set under ``--logs`` (``DIR/<dataset>/<table>``, Delta tables)
that a query reads is followed: by default each data set's built-in queries,
or the queries of ``--sql``. A data set's queries are one streaming query
(``run.start``), its checkpoint (Spark's offsets and state store)
``OUT/_checkpoint/<dataset>``; each query's output is the Delta table
``OUT/<query>`` of change rows (the query's columns, ``_version``,
``_multiplicity``). By default the commits there now are taken and the
command exits, printing how far each data set came; ``--trigger-seconds``
follows until stopped. A restart with the same ``--out`` goes on from
Spark's checkpoint.

A query with a step that does not run on the executors yet (a join, a
WITH RECURSIVE, ...: ``lowering.placement``) is refused before anything
starts, with exit status 2 and one ``error:`` line, as is any other error
the pipeline foresees; Spark's own output goes to ``OUT/spark.log``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..__main__ import FORESEEN, SPARK_LOG, _Parser, _queries, _unforeseen
from .lowering import PlacementError

WORKERS = {"spark.python.authenticate.socketTimeout": "120s"}
"""A stream starts Python workers of several kinds (its source, each mapInArrow, each state processor); on a busy
machine one may take longer to start than Spark's default of 15 s to connect back, which fails the stream."""


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="python -m final.spark.executors", description=__doc__.split("\n\n")[0])
    top.add_argument("--logs", required=True, help="the folder of the data sets' Delta tables (DIR/<dataset>/<table>)")
    top.add_argument("--out", required=True, help="where each query's output table and checkpoint go")
    top.add_argument("--sql", nargs="+", metavar="FILE.sql", help="these queries instead of the built-in ones")
    top.add_argument("--trigger-seconds", type=float, help="follow until stopped, a micro-batch this often")
    top.add_argument("--master", help="Spark's master URL (default local[*])")
    top.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting")
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; its exit status."""
    arguments = parser().parse_args(argv)
    log_file = os.path.join(arguments.out, SPARK_LOG)
    try:
        return _follow(arguments, log_file)
    except Exception as error:
        foreseen = isinstance(error, (*FORESEEN, PlacementError)) and not type(error).__module__.startswith(
            ("pyspark", "py4j"))
        print(f"error: {error if foreseen else _unforeseen(error, log_file)}", file=sys.stderr)
        return 2


def _follow(arguments: argparse.Namespace, log_file: str) -> int:
    from ..follow import data_sets
    from ..session import parse_conf, spark_session
    from .lowering import check_placement
    from .run import follow_on_executors

    queries = _queries(arguments.sql) if arguments.sql else None
    followed, _ = data_sets(arguments.logs, queries)
    for each in followed:
        for query in each.queries:
            check_placement(query)  # every query is refused before Spark starts, not after some ran
    spark = spark_session(arguments.master, {**WORKERS, **parse_conf(arguments.conf)}, log_file=log_file)
    for each in followed:
        version = follow_on_executors(spark, each.folder, each.queries, arguments.out,
                                      arguments.trigger_seconds is None, arguments.trigger_seconds or 10.0)
        print(f"{each.dataset}: through version {version} ({', '.join(query.name for query in each.queries)})",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
