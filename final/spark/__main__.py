"""The pipeline's command line: ``python -m final.spark run`` and ``python -m final.spark generate``.

``run`` checks ``final/`` against Spark SQL at every version of each data
set's change logs and writes the report; its last line reads
``<V> versions checked, <D> differences`` and it exits with 1 when D > 0.
``generate`` writes a data set's tables and change logs as Parquet, to read
back with ``run --tables`` or ``run --logs`` (or to look at). Anything that
fails to start or read (Java, a data set, a change log) is one line on
stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import datasets
from .catalog import DATASETS
from .changelog import ChangeLogError
from .datasets import DatasetError
from .follow import FollowError, datasets_in
from .session import SparkUnavailableError, parse_conf

DEFAULT_OUT = os.path.join("out", "spark")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m final.spark", description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="check final/ against Spark SQL at every version, and report")
    generate = commands.add_parser("generate", help="write a data set's tables and change logs as Parquet")
    for command in (run, generate):
        command.add_argument("--dataset", choices=[*DATASETS, "all"], default="all")
        command.add_argument("--rows", type=int, help="rows in each data set's main table (default: embedded size)")
        command.add_argument("--versions", type=int, default=None, help="versions per change log (default 12)")
        command.add_argument("--seed", type=int, default=datasets.SEED)
        command.add_argument("--nan-fraction", type=float, default=0.0,
                             help="share of NaN (and as many signed zeros) in float columns (default 0)")
        command.add_argument("--out", default=DEFAULT_OUT, help=f"where logs and the report go (default {DEFAULT_OUT})")
        command.add_argument("--master", help="Spark master URL (default local[*], or $FINAL_SPARK_MASTER)")
        command.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                             help="a Spark setting, repeatable (also $FINAL_SPARK_CONF)")
    run.add_argument("--partitions", default="1,2,4",
                     help="partition counts for the partitioned runs, comma-separated; '' for none (default 1,2,4)")
    source = run.add_mutually_exclusive_group()
    source.add_argument("--tables", help="read the tables from DIR/<dataset>/<table>.parquet or .csv")
    source.add_argument("--logs", help="read change logs from DIR/<dataset>/<table> (Delta change feed columns)")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="progress bars (default: when stderr is a terminal)")
    generate.add_argument("--append", type=int, metavar="K",
                          help="add K commits to the change logs in --logs DIR (a live source for follow)")
    generate.add_argument("--logs", help="with --append: the log folder to add to (DIR/<dataset>/<table>)")
    follow = commands.add_parser("follow", help="keep every query up to date as commits land in a log folder")
    follow.add_argument("--logs", required=True, help="the log folder to follow: DIR/<dataset>/<table>")
    follow.add_argument("--out", required=True, help="where each query's change feed goes: OUT/<query>/")
    follow.add_argument("--checkpoint", help="where progress is kept across restarts (default OUT/_checkpoint)")
    when = follow.add_mutually_exclusive_group()
    when.add_argument("--available-now", action="store_true", help="process what is there, then stop")
    when.add_argument("--trigger-seconds", type=float, default=10.0,
                      help="look for new commits this often, until stopped (default 10)")
    follow.add_argument("--master", help="Spark master URL (default local[*], or $FINAL_SPARK_MASTER)")
    follow.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting")
    return top


def main(argv: Sequence[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    try:
        conf = parse_conf(arguments.conf)
        from .session import spark_session

        if arguments.command == "follow":
            from .follow import follow

            datasets_in(arguments.logs)
            applied = follow(spark_session(arguments.master, conf), arguments.logs, arguments.out,
                             arguments.checkpoint, arguments.available_now, arguments.trigger_seconds)
            print("followed: " + ", ".join(f"{name} through version {version}" for name, version in applied.items())
                  + f"; change feeds in {arguments.out}")
            return 0
        partitions = _partitions(arguments.partitions) if arguments.command == "run" else []
        names = list(DATASETS) if arguments.dataset == "all" else [arguments.dataset]
        from .pipeline import EMBEDDED_VERSIONS, append_logs, make_logs, read_logs, run_pipeline
        from .report import write_report

        versions = EMBEDDED_VERSIONS if arguments.versions is None else arguments.versions
        spark = spark_session(arguments.master, conf)
        if arguments.command == "generate" and arguments.append is not None:
            if not arguments.logs or arguments.append < 1:
                raise ValueError("--append K adds K > 0 commits to the logs named by --logs DIR; "
                                 "e.g. generate --append 2 --logs out/spark/logs")
            if arguments.dataset == "all":
                names = datasets_in(arguments.logs)
            for name in names:
                last = append_logs(spark, name, os.path.join(arguments.logs, name), arguments.append, arguments.seed)
                print(f"{name}: {arguments.append} commits added to {os.path.join(arguments.logs, name)}, "
                      f"now through version {last}")
            return 0
        if arguments.command == "generate":
            for name in names:
                tables = datasets.generate(spark, name, arguments.rows, arguments.seed, arguments.nan_fraction)
                datasets.write(tables, os.path.join(arguments.out, "tables", name))
                paths = make_logs(spark, name, os.path.join(arguments.out, "logs", name), arguments.rows, versions,
                                  arguments.seed, nan_fraction=arguments.nan_fraction)
                read_logs(spark, name, paths)
                print(f"{name}: tables in {os.path.join(arguments.out, 'tables', name)}, "
                      f"change logs in {os.path.join(arguments.out, 'logs', name)}")
            return 0
        run = run_pipeline(spark, arguments.out, names, arguments.rows, versions, partitions, arguments.seed,
                           arguments.tables, logs=arguments.logs, progress=arguments.progress,
                           nan_fraction=arguments.nan_fraction)
        paths = write_report(run, arguments.out)
    except (SparkUnavailableError, DatasetError, ChangeLogError, FollowError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("speed-up per version after the load, final/ against Spark SQL from scratch: "
          + ", ".join(f"{query.query} {query.speedup:.0f}x" for query in run.queries))
    print(f"report: {paths['report.md']} and {paths['report.json']}; plots: "
          + ", ".join(path for name, path in paths.items() if name.endswith(".png")))
    print(f"{run.versions_checked} versions checked, {run.differences} differences")
    return 1 if run.differences else 0


def _partitions(text: str) -> list[int]:
    """``"1,2,4"`` as ``[1, 2, 4]``; a ValueError names anything that is not a positive int."""
    counts = [part.strip() for part in text.split(",") if part.strip()]
    if not all(count.isdigit() and int(count) > 0 for count in counts):
        raise ValueError(f"--partitions takes positive ints separated by commas, not {text!r}; e.g. --partitions 1,2,4")
    return [int(count) for count in counts]


if __name__ == "__main__":
    sys.exit(main())
