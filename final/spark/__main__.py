"""The pipeline's command line: ``python -m final.spark run``, ``generate``, ``follow``, ``status``, ``verify``,
``explain``, ``tpch``, ``fuzz``.

``run`` checks ``final/`` against Spark SQL at every version of each data
set's change logs and writes the report; its last line reads
``<V> versions checked, <D> differences`` and it exits with 1 when D > 0,
and only then. ``generate`` writes a data set's tables as Parquet and its
history as Delta tables (or, with ``--format parquet``, as Parquet change
logs), to read back with ``run --tables`` or ``run --logs`` or to follow;
with ``--append K`` it adds K commits to existing ones, table by table.
``follow`` keeps every query up to date as commits land (``follow.py``),
its state in this process, or with ``--state executors`` each keyed step's
state in Spark's state store on the executors (``executors``); SIGINT or
SIGTERM stops it with exit status 130 or 143. ``status`` says how far a follow has come, and ``verify`` checks
what it wrote against Spark SQL at every version (exit 1 on a difference).
``explain`` prints a SQL query's plan and draws its ``final/`` dataflow.
``tpch`` writes TPC-H's tables as Delta tables with its refreshes as
commits and checks its 22 queries at every version against DuckDB and, with
``run``, Spark SQL (``tpch.py``).

Your own queries and tables: ``--sql FILE.sql ...`` (run, follow, verify,
status, explain) puts the queries in those files, each named by its
file's stem, in place of the built-in ones; each reads the tables of one
data set, and a data set no query reads is skipped. ``--table NAME=PATH``
(repeatable; run, follow, verify, status, explain) binds a Delta table or a
Parquet change log as table NAME, its columns read from it
(``own_tables.py``); the bound tables are a data set of their own,
``tables``, whose versions are their commits, for the queries of ``--sql``
to read. ``follow`` records its queries' SQL text (hashed) and its bound
tables in its checkpoint: ``verify``, ``status`` and a restart take the same
``--logs``, ``--sql`` and ``--table``, and a restart with others is refused.

Every input (the arguments, the master URL, each data set's tables or logs)
is checked before any work starts (``inputs.validate``). Anything that fails
to start, read or write is one line on stderr beginning ``error:`` and exit
status 2; Spark's own output (the JVM's log and stack traces) goes to
``<out>/spark.log``, and so does the trace of an error the pipeline did not
foresee, which the ``error:`` line points to.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from . import datasets
from .changelog import ChangeLogError
from .datasets import DatasetError
from .follow import FollowError
from .inputs import validate
from .outputs import OutputError
from .session import MasterURLError, SparkUnavailableError, check_master, parse_conf, settings
from .tables_and_queries import DATASETS
from .truth import FixedPointError

DEFAULT_OUT = os.path.join("out", "spark")

SPARK_LOG = "spark.log"
"""The file under ``--out`` that receives the JVM's stderr and the trace of any unforeseen error."""

FORESEEN = (SparkUnavailableError, MasterURLError, DatasetError, ChangeLogError, OutputError, FixedPointError,
            FollowError, ValueError)
"""(``SqlError``, a query refused, is a ValueError.)"""
"""The pipeline's errors, whose message says all there is to say: printed alone, with no trace. (pyspark's
own errors subclass ValueError too, but they are not foreseen: their trace goes to spark.log.)"""


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one ``error:`` line (exit status 2, as argparse has it)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message}; see `{self.prog} --help`\n")


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="python -m final.spark", description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="check final/ against Spark SQL at every version, and report")
    generate = commands.add_parser("generate", help="write a data set's tables, and its history as Delta tables")
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
    run.add_argument("--sql", nargs="+", metavar="FILE.sql",
                     help="check these queries (one per file, named by its stem) instead of the built-in ones")
    explain = commands.add_parser("explain", help="print a SQL query's plan and draw its final/ dataflow")
    explain.add_argument("--sql", nargs="+", required=True, metavar="FILE.sql", help="the queries to explain")
    for command in (run, explain):
        _table_option(command)
    explain.add_argument("--out", default=os.path.join(DEFAULT_OUT, "explain"),
                         help="where each query's drawing goes, as <name>.dot and <name>.svg (default "
                              f"{os.path.join(DEFAULT_OUT, 'explain')})")
    generate.add_argument("--format", choices=["delta", "parquet"], default="delta",
                          help="logs as Delta tables with their change data feed (default), or as Parquet change "
                               "logs with commit markers")
    generate.add_argument("--append", type=int, metavar="K",
                          help="add K commits to the tables in --logs DIR (a live source for follow)")
    generate.add_argument("--logs", help="with --append: the folder to add to (DIR/<dataset>/<table>)")
    follow = commands.add_parser("follow", help="keep every query up to date as commits land in a log folder")
    follow.add_argument("--logs", help="the log folder to follow: DIR/<dataset>/<table> (or --table, or both)")
    follow.add_argument("--out", required=True, help="where each query's change feed goes: OUT/<query>/")
    follow.add_argument("--checkpoint", help="where progress is kept across restarts (default OUT/_checkpoint)")
    follow.add_argument("--state", choices=["driver", "executors"], default="driver",
                        help="where the queries' state is kept: all of it in this Python process (driver, the "
                             "default; every query), or each keyed step's per-key state in Spark's state store on "
                             "the executors (executors; queries whose steps all run there: see explain)")
    when = follow.add_mutually_exclusive_group()
    when.add_argument("--available-now", action="store_true", help="process what is there, then stop")
    when.add_argument("--trigger-seconds", type=float, default=10.0,
                      help="look for new commits this often, until stopped (default 10)")
    verify = commands.add_parser("verify", help="check a follow's outputs against Spark SQL at every version")
    verify.add_argument("--logs", help="the tables the follow read: DIR/<dataset>/<table>")
    verify.add_argument("--out", required=True, help="the follow's --out")
    verify.add_argument("--checkpoint", help="the follow's --checkpoint (default OUT/_checkpoint)")
    status = commands.add_parser("status", help="how far a follow has come: commits bound, version applied")
    status.add_argument("--logs", help="the tables the follow reads: DIR/<dataset>/<table>")
    status.add_argument("--out", required=True, help="the follow's --out")
    status.add_argument("--checkpoint", help="the follow's --checkpoint (default OUT/_checkpoint)")
    status.add_argument("--wait", type=float, metavar="SECONDS",
                        help="wait until every data set is caught up (exit 0), or SECONDS pass (exit 1)")
    follow.add_argument("--sql", nargs="+", metavar="FILE.sql",
                        help="keep these queries (one per file, named by its stem) instead of the built-in ones; "
                             "data sets no query reads are skipped")
    for command in (verify, status):
        command.add_argument("--sql", nargs="+", metavar="FILE.sql", help="the follow's --sql files")
    _table_option(follow)
    for command in (verify, status):
        _table_option(command, "the follow's --table NAME=PATH, each of them")
    for command in (follow, verify):
        command.add_argument("--master", help="Spark master URL (default local[*], or $FINAL_SPARK_MASTER)")
        command.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting")
    tpch = commands.add_parser("tpch", help="TPC-H's 22 queries kept up to date through its refresh functions, "
                                            "checked against DuckDB and Spark SQL at every version")
    tpch.add_argument("--scale", type=float, default=0.01, help="TPC-H's scale factor (default 0.01)")
    tpch.add_argument("--refreshes", type=int, default=3, help="refreshes after the load, each RF1 and RF2 and "
                                                               "an update of customers and parts (default 3)")
    tpch.add_argument("--queries", default="1-22", help="the query numbers, e.g. 1,3,5-8 (default 1-22)")
    tpch.add_argument("--seed", type=int, default=1, help="the refreshes' seed (default 1)")
    tpch.add_argument("--out", default=os.path.join(DEFAULT_OUT, "tpch"),
                      help="where the tables (OUT/tables), the queries' Spark SQL (OUT/queries) and the report go")
    tpch.add_argument("--spark", action=argparse.BooleanOptionalAction, default=True,
                      help="also check against Spark SQL at every version (run); --no-spark checks DuckDB only")
    tpch.add_argument("--master", help="Spark master URL (default local[*], or $FINAL_SPARK_MASTER)")
    tpch.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting")
    fuzz = commands.add_parser("fuzz", help="random queries over random histories: compile_sql against Spark SQL")
    fuzz.add_argument("--queries", type=int, default=200, help="queries to check (default 200)")
    fuzz.add_argument("--seed", type=int, default=0, help="the run's seed: a seed makes the same cases everywhere")
    fuzz.add_argument("--first", type=int, default=0, help="the first case's number (rerun one: --first N --queries 1)")
    fuzz.add_argument("--shrink", type=int, default=20, help="differences to shrink before writing them (default 20)")
    fuzz.add_argument("--out", default=os.path.join(DEFAULT_OUT, "fuzz"),
                      help="where each difference's reproducer (a pytest file) and spark.log go")
    fuzz.add_argument("--master", help="Spark master URL (default local[*], or $FINAL_SPARK_MASTER)")
    fuzz.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting")
    return top


def _table_option(command: argparse.ArgumentParser, text: str | None = None) -> None:
    command.add_argument("--table", action="append", default=[], metavar="NAME=PATH",
                         help=text or "bind the Delta table (or Parquet change log) at PATH as table NAME for the "
                                      "--sql queries, its columns read from it; repeatable. The bound tables are "
                                      "data set 'tables', whose versions are their commits")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv``; the exit status: 0, 1 (differences found) or 2 (could not start or read).

    A usage error exits at once (argparse's ``SystemExit``, status 2).
    """
    arguments = parser().parse_args(argv)
    log_file = os.path.join(arguments.out, SPARK_LOG)
    try:
        return _command(arguments, log_file)
    except Exception as error:
        foreseen = isinstance(error, FORESEEN) and not type(error).__module__.startswith(("pyspark", "py4j"))
        print(f"error: {error if foreseen else _unforeseen(error, log_file)}", file=sys.stderr)
        return 2


def _command(arguments: argparse.Namespace, log_file: str) -> int:
    """``arguments``' command, with the tables of ``--table`` bound (``own_tables``) while it runs."""
    conf = parse_conf(getattr(arguments, "conf", []))
    if arguments.command == "fuzz":
        from .fuzz.cli import command

        return command(arguments, conf, log_file)
    if arguments.command == "tpch":
        from .tpch import command as tpch

        return tpch(arguments, main)
    if not getattr(arguments, "table", None):
        return _dispatch(arguments, conf, log_file, [])
    from .own_tables import bound, read_tables

    own = read_tables(arguments.table)
    if arguments.command in ("follow", "verify", "status"):
        own = _as_followed(own, arguments.checkpoint or os.path.join(arguments.out, "_checkpoint"))
    if not arguments.sql:
        raise ValueError("--table binds tables for the queries of --sql FILE.sql (no built-in query reads them); "
                         "give those, e.g. --table rides=data/rides --sql rides_per_day.sql")
    with bound(own):
        return _dispatch(arguments, conf, log_file, own)


def _as_followed(own: list, checkpoint: str) -> list:
    """The tables of ``--table`` with the columns a follow recorded in ``checkpoint`` holds them with
    (``follow.recorded_tables``), where it bound a commit: a column the table gained since is left out, so
    ``SELECT *`` keeps its columns, and the queries compile as they did."""
    from dataclasses import replace

    from .follow import recorded_tables
    from .tables_and_queries import BOUND

    held = recorded_tables(checkpoint, BOUND) or {}
    return [replace(table, table=held.get(table.table.name, table.table)) for table in own]


def _dispatch(arguments: argparse.Namespace, conf: dict[str, str], log_file: str, own: list) -> int:
    if arguments.command == "follow":
        return _follow(arguments, conf, log_file, own)
    if arguments.command == "verify":
        return _verify(arguments, conf, log_file, own)
    if arguments.command == "status":
        return _status(arguments, own)
    if arguments.command == "explain":
        return _explain(arguments)
    if arguments.command == "generate" and arguments.append is not None:
        return _append(arguments, conf, log_file)
    partitions = _partitions(arguments.partitions) if arguments.command == "run" else []
    names = list(DATASETS) if arguments.dataset == "all" else [arguments.dataset]
    chosen = _queries(arguments.sql) if getattr(arguments, "sql", None) else None
    if chosen is not None:
        names = [name for name in names if any(query.dataset == name for query in chosen)]
    folders = {}
    if own:  # the bound tables' folder: OUT/logs/tables/<name>, links to the tables, beside the logs a run writes
        from .own_tables import link
        from .tables_and_queries import BOUND

        folders[BOUND] = link(os.path.join(arguments.out, "logs", BOUND), own, fresh=True)
    from .pipeline import EMBEDDED_VERSIONS, read_logs, run_pipeline, write_delta, write_logs
    from .report import write_report
    from .session import spark_session

    versions = EMBEDDED_VERSIONS if arguments.versions is None else arguments.versions
    check_master(settings(arguments.master, conf)[0])
    reads = arguments.command == "run"
    validate(names, arguments.rows, versions, arguments.tables if reads else None, arguments.logs if reads else None,
             folders)
    spark = spark_session(arguments.master, conf, log_file=log_file)
    if arguments.command == "generate":
        for name in names:
            tables = datasets.generate(spark, name, arguments.rows, arguments.seed, arguments.nan_fraction)
            datasets.write(tables, os.path.join(arguments.out, "tables", name))
            logs = os.path.join(arguments.out, "logs", name)
            if arguments.format == "delta":
                write_delta(tables, logs, versions, arguments.seed)
                kind = "Delta tables with their change data feed"
            else:
                read_logs(spark, name, write_logs(tables, logs, versions, arguments.seed))
                kind = "Parquet change logs"
            print(f"{name}: tables in {os.path.join(arguments.out, 'tables', name)}, {kind} in {logs}")
        return 0
    run = run_pipeline(spark, arguments.out, names, arguments.rows, versions, partitions, arguments.seed,
                       arguments.tables, logs=arguments.logs, progress=arguments.progress,
                       nan_fraction=arguments.nan_fraction, queries=chosen, folders=folders)
    paths = write_report(run, arguments.out, vars(arguments))
    print("speed-up per version after the load, final/ against Spark SQL from scratch: "
          + ", ".join(f"{query.query} {query.speedup:.0f}x" for query in run.queries))
    print(f"report: {paths['report.md']} and {paths['report.json']}; plots: "
          + ", ".join(path for name, path in paths.items() if name.endswith(".png")))
    print(f"{run.versions_checked} versions checked, {run.differences} differences")
    return 1 if run.differences else 0


def _follow(arguments: argparse.Namespace, conf: dict[str, str], log_file: str, own: list) -> int:
    """``follow``: the log folder, tables and queries checked first (with --state executors, that every step of
    every query runs on the executors, and for either state that the checkpoint's follow kept its state the
    same way), then followed (until stopped, unless --available-now); a SIGINT or SIGTERM stops it with one
    line and exit status 130 or 143."""
    from .follow import FollowStopped, check_state, follow
    from .session import spark_session

    check_master(settings(arguments.master, conf)[0])
    queries, bound, followed = _followed(arguments, own, following=True)
    validate([each.dataset for each in followed], None, 1, None, arguments.logs,
             {each.dataset: each.folder for each in followed})
    checkpoint = arguments.checkpoint or os.path.join(arguments.out, "_checkpoint")
    for each in followed:
        check_state(checkpoint, each.dataset, arguments.state)
    try:
        if arguments.state == "executors":
            from .executors import WORKERS, check_placement, follow_on_executors

            for each in followed:
                for query in each.queries:
                    check_placement(query)  # every query is refused before Spark starts, not after some ran
            spark = spark_session(arguments.master, {**WORKERS, **conf}, log_file=log_file)
            applied = follow_on_executors(spark, followed, arguments.out, checkpoint, arguments.available_now,
                                          arguments.trigger_seconds, log=lambda line: print(line, flush=True))
        else:
            spark = spark_session(arguments.master, conf, log_file=log_file)
            applied = follow(spark, arguments.logs, arguments.out, arguments.checkpoint, arguments.available_now,
                             arguments.trigger_seconds, queries=queries, bound=bound)
    except FollowStopped as stopped:
        print(stopped, flush=True)
        return stopped.status
    print("followed: " + ", ".join(f"{name} through version {version}" for name, version in applied.items())
          + f"; output tables in {arguments.out}")
    return 0


def _verify(arguments: argparse.Namespace, conf: dict[str, str], log_file: str, own: list) -> int:
    """``verify``: every output of a follow against Spark SQL at every applied version; exit 1 on a mismatch."""
    from .follow import verify
    from .outputs import sql_text
    from .session import spark_session

    check_master(settings(arguments.master, conf)[0])
    queries, bound, _ = _followed(arguments, own)
    spark = spark_session(arguments.master, conf, log_file=log_file)
    checked, mismatches = verify(spark, arguments.logs, arguments.out, arguments.checkpoint, queries=queries,
                                 bound=bound)
    for mismatch in mismatches[:20]:
        print(f"{mismatch.query} at version {mismatch.version}: {sql_text(mismatch.row)} Spark SQL "
              f"{mismatch.expected}, the follow {mismatch.actual}")
    print(f"{checked} versions checked, {len(mismatches)} differences")
    return 1 if mismatches else 0


def _status(arguments: argparse.Namespace, own: list) -> int:
    """``status``: a line per data set; with --wait, polls until all are caught up (0) or time runs out (1)."""
    import time

    from .follow import lag

    queries, bound, _ = _followed(arguments, own)
    deadline = time.monotonic() + (arguments.wait or 0)
    while True:
        found = lag(arguments.logs, arguments.out, arguments.checkpoint, queries, bound)
        if arguments.wait is None or all(item.caught_up for item in found) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    for item in found:
        print(item)
    return 0 if arguments.wait is None or all(item.caught_up for item in found) else 1


def _followed(arguments: argparse.Namespace, own: list, following: bool = False) -> tuple[list | None, str | None,
                                                                                          list]:
    """What ``follow``, ``verify`` and ``status`` work on: the queries of --sql (None: the built-in ones), the
    folder of the tables of --table (links kept in the checkpoint, ``own_tables.link``) and the data sets
    followed; one line names the data sets of --logs that no query reads, which are skipped.

    Raises:
        ValueError: neither --logs nor --table is given.
        SqlError: a query is refused (``_queries``).
        TableError: --table binds other tables than the checkpoint's follow did; with ``following``, a change log
            has no commit markers.
        FollowError: a query's output columns cannot be a Delta table's (``follow.output_columns``); a query
            reads a data set that is not there (``follow.data_sets``).
    """
    from .follow import data_sets, output_columns

    if not arguments.logs and not own:
        raise ValueError(f"{arguments.command} reads the tables of --logs DIR, of --table NAME=PATH, or both; e.g. "
                         f"--logs out/spark/logs")
    queries = _queries(arguments.sql) if arguments.sql else None
    for query in queries or ():
        output_columns(query)  # a column no output table can hold is refused before the checkpoint is touched
    bound = None
    if own:
        from .own_tables import FOLDER, check_followable, link
        from .tables_and_queries import BOUND

        if following:
            check_followable(own)
        checkpoint = arguments.checkpoint or os.path.join(arguments.out, "_checkpoint")
        # Links made for a follow that bound no commit yet say nothing: they are made again.
        fresh = not os.path.exists(os.path.join(checkpoint, BOUND, "binding.jsonl"))
        bound = link(os.path.join(checkpoint, FOLDER), own, fresh)
    followed, skipped = data_sets(arguments.logs, queries, bound)
    if skipped:
        print(f"skipped: {', '.join(skipped)} (no --sql query reads {'their' if len(skipped) > 1 else 'its'} "
              f"tables)", flush=True)
    return queries, bound, followed


def _append(arguments: argparse.Namespace, conf: dict[str, str], log_file: str) -> int:
    """``generate --append K --logs DIR``: K more commits in each data set's logs under DIR."""
    from .follow import datasets_in
    from .pipeline import append_logs
    from .session import spark_session

    if not arguments.logs or arguments.append < 1:
        raise ValueError("--append K adds K > 0 commits to the logs named by --logs DIR; "
                         "e.g. generate --append 2 --logs out/spark/logs")
    check_master(settings(arguments.master, conf)[0])
    names = datasets_in(arguments.logs) if arguments.dataset == "all" else [arguments.dataset]
    validate(names, None, 1, None, arguments.logs)
    spark = spark_session(arguments.master, conf, log_file=log_file)
    for name in names:
        now = append_logs(spark, name, os.path.join(arguments.logs, name), arguments.append, arguments.seed)
        versions = f"{arguments.append} version{'s' if arguments.append != 1 else ''} of commits"
        print(f"{name}: {versions} added to {os.path.join(arguments.logs, name)}; now {now}")
    return 0


def _queries(paths: list[str]) -> list:
    """The SQL files' queries, compiled over the data sets' tables; each must read the tables of one data set.

    Raises:
        SqlError: a file cannot be read, or its query is refused (line and column named); or two files share a
            name, or a query reads tables of two data sets.
    """
    from .sql import SqlError, load
    from .tables_and_queries import CATALOG, DATASETS

    queries = [load(path, CATALOG) for path in paths]
    names = [query.name for query in queries]
    for query in queries:
        if names.count(query.name) > 1:
            raise SqlError(f"two --sql files are named {query.name}; a query is named by its file's stem")
        if query.dataset not in DATASETS:
            sets = "; ".join(f"{name}: {', '.join(tables)}" for name, tables in DATASETS.items())
            raise SqlError(f"{query.source}: reads {', '.join(query.inputs)}, tables of different data sets; a "
                           f"query reads the tables of one ({sets})")
    return queries


def _explain(arguments: argparse.Namespace) -> int:
    """``explain``: each query's plan on stdout, each step with where it runs when the follow keeps its state on
    the executors (``executors.placement``), also written to ``--out`` as ``<name>.txt``; and its dataflow
    drawn there (``.dot``; ``.svg`` when graphviz's ``dot`` is installed)."""
    import shutil

    from .. import viz
    from .executors import placement
    from .incremental import IncrementalQuery
    from .sql import explain, load
    from .tables_and_queries import CATALOG

    os.makedirs(arguments.out, exist_ok=True)
    for path in arguments.sql:
        query = load(path, CATALOG)
        text = explain(query, {id(node): where for node, where in placement(query)})
        print(text)
        graph = IncrementalQuery(query).graph
        base = os.path.join(arguments.out, query.name)
        with open(f"{base}.txt", "w") as plan:
            plan.write(text + "\n")
        with open(f"{base}.dot", "w") as dot:
            dot.write(viz.to_dot(graph))
        drawn = [f"{base}.dot"]
        if shutil.which("dot"):
            with open(f"{base}.svg", "wb") as svg:
                svg.write(viz.render(graph, "svg"))
            drawn.append(f"{base}.svg")
        print(f"plan: {base}.txt; dataflow: {' and '.join(drawn)}\n")
    return 0


def _unforeseen(error: Exception, log_file: str) -> str:
    """Append ``error``'s trace to ``log_file``; one line saying what failed and where the trace is."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(log_file)), exist_ok=True)
        with open(log_file, "a") as log:
            log.write("".join(traceback.format_exception(error)))
        where = f"the full trace is in {log_file}"
    except OSError as unwritable:
        where = f"its trace could not be written to {log_file} ({unwritable.strerror})"
    return f"{_cause(error)}; {where}"


def _cause(error: Exception) -> str:
    """The first line of what went wrong: for an error from Spark's JVM, its innermost Java cause."""
    text = f"{type(error).__name__}: {error}"
    java = getattr(error, "java_exception", None)
    if java is not None:
        try:
            while java.getCause() is not None:
                java = java.getCause()
            text = java.toString()
        except Exception:  # the JVM may be gone: then the Python side's message is what is left
            pass
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def _partitions(text: str) -> list[int]:
    """``"1,2,4"`` as ``[1, 2, 4]``; a ValueError names anything that is not a positive int."""
    counts = [part.strip() for part in text.split(",") if part.strip()]
    if not all(count.isdigit() and int(count) > 0 for count in counts):
        raise ValueError(f"--partitions takes positive ints separated by commas, not {text!r}; e.g. --partitions 1,2,4")
    return [int(count) for count in counts]


if __name__ == "__main__":
    sys.exit(main())
