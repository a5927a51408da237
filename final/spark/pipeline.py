"""The pipeline: data set -> change logs -> Spark SQL from scratch and ``final/`` incrementally, compared per version.

For every data set asked for, first: generate its tables (or read them,
checked), slice each into a change log written as Parquet in Delta's change
data feed convention, and read the logs back, checked (``sources``: the
Arrow tables the one check of a change log returns, made Spark DataFrames);
so a bad input of the last data set stops the run before the first is
checked. Then for each data
set's queries and each
version, in order: ``final/`` applies that version's updates to its dataflow
(timed), Spark SQL recomputes the query from scratch on the accumulated
tables (timed), and the two results are compared as multisets; every row
whose multiplicities differ is a ``Difference``. A query that splits by key
is then run again partitioned on Spark at each partition count asked for,
and its result at every version compared with Spark SQL's.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import TYPE_CHECKING, Any

from .. import add_multiplicity
from . import changelog, datasets, delta, sources
from .equality import TOLERANCE, compare_rows, tolerant_columns
from .incremental import IncrementalQuery, versions_of
from .inputs import data_files
from .outputs import replace_folder
from .partitioned import run_partitioned
from .sources import Change
from .tables_and_queries import DATASETS, TABLES, Query, queries_of
from .truth import at

if TYPE_CHECKING:
    import pyarrow
    from pyspark.sql import DataFrame, SparkSession

EMBEDDED_VERSIONS = 12
"""Versions in the embedded run: an initial load, then eleven small commits."""

PARTITION_BYTES = 128 * 2**20
"""The most bytes of a log in one partition of its DataFrame: the split of Spark's file reader, by default
(``spark.sql.files.maxPartitionBytes``)."""

Feed = Callable[[list[Change]], list[Change]]
"""What ``final/`` is fed, given the log's updates: the identity, except when a test plants a fault."""


@dataclass(frozen=True)
class Difference:
    """A row whose multiplicity at ``version`` differs: Spark SQL's (``expected``) against ``final/``'s."""

    version: int
    row: tuple
    expected: int
    actual: int


@dataclass
class Partitioned:
    """A partitioned run of a query, compared with Spark SQL at every version."""

    partitions: int
    seconds: float
    slowest_task_seconds: float
    differences: list[Difference]
    final_from: list[str]


@dataclass
class QueryRun:
    """A query checked at every version: ``final/``'s result against Spark SQL's from scratch, and timings.

    ``incremental_seconds[i]`` and ``scratch_seconds[i]`` are the two sides'
    times at ``versions[i]``; ``rows[i]`` is the result's size there, and
    ``rows_changed[i]`` how many result rows ``final/`` added or retracted
    there (the sum of its changes' absolute multiplicities).
    """

    dataset: str
    query: str
    sql: str
    source: str
    versions: list[int] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    incremental_seconds: list[float] = field(default_factory=list)
    scratch_seconds: list[float] = field(default_factory=list)
    rows_changed: list[int] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    partitioned: list[Partitioned] = field(default_factory=list)
    tolerated: int = 0
    """Rows equal to Spark SQL's only within ``equality.TOLERANCE`` (a DOUBLE SUM, AVG or spread, whose
    last bits depend on the order Spark adds in), over all versions."""
    stopped: str | None = None
    """Where Spark SQL and ``final/`` both raised for the data (a division by zero, an overflow): the version,
    Spark's error and ``final/``'s, naming the row. The query is checked no further."""

    @property
    def agrees(self) -> bool:
        return not self.differences and not any(run.differences for run in self.partitioned)

    @property
    def incremental_median(self) -> float:
        """``final/``'s median seconds per version after the initial load (version 0 alone, if it is all)."""
        return _after_load(self.incremental_seconds)

    @property
    def scratch_median(self) -> float:
        """Spark SQL's median seconds per version after the initial load."""
        return _after_load(self.scratch_seconds)

    @property
    def speedup(self) -> float:
        """Median from-scratch time over median incremental time, for the versions after the initial load."""
        incremental = self.incremental_median
        return self.scratch_median / incremental if incremental else float("inf")

    @property
    def load_seconds(self) -> float:
        """``final/``'s time for the first version: the initial load, built from nothing."""
        return self.incremental_seconds[0] if self.incremental_seconds else 0.0

    @property
    def break_even_version(self) -> int | None:
        """The first version by which ``final/``'s total time, load included, is at most Spark SQL's; or None.

        Spark SQL's total is every version computed from scratch up to that
        one: what answering at each version costs without ``final/``.
        """
        incremental = scratch = 0.0
        for version, ours, theirs in zip(self.versions, self.incremental_seconds, self.scratch_seconds, strict=True):
            incremental, scratch = incremental + ours, scratch + theirs
            if incremental <= scratch:
                return version
        return None


def _after_load(seconds: list[float]) -> float:
    return statistics.median(seconds[1:] or seconds)


@dataclass
class PipelineRun:
    """The pipeline's whole result: one ``QueryRun`` per query, and the settings it ran with."""

    settings: dict
    queries: list[QueryRun] = field(default_factory=list)

    @property
    def versions_checked(self) -> int:
        return sum(len(run.versions) for run in self.queries)

    @property
    def differences(self) -> int:
        return sum(len(run.differences) + sum(len(p.differences) for p in run.partitioned) for run in self.queries)


def make_logs(
    spark: SparkSession, dataset: str, folder: str, rows: int | None = None, versions: int = EMBEDDED_VERSIONS,
    seed: int = datasets.SEED, tables: str | None = None, nan_fraction: float = 0.0,
) -> dict[str, str]:
    """Write ``dataset``'s change logs as Parquet under ``folder``; the path of each table's log.

    The tables are generated (``rows``, ``seed``, ``nan_fraction``) or, with
    ``tables``, read from that folder (``datasets.read``).
    """
    frames = (datasets.read(spark, dataset, tables) if tables
              else datasets.generate(spark, dataset, rows, seed, nan_fraction))
    return write_logs(frames, folder, versions, seed)


def write_logs(
    frames: dict[str, DataFrame], folder: str, versions: int = EMBEDDED_VERSIONS, seed: int = datasets.SEED
) -> dict[str, str]:
    """Each table of ``frames`` as a change log over ``versions`` versions under ``folder`` (the Parquet
    change-log layout, all versions in one commit marker); each log's path.

    Raises:
        ValueError: ``versions`` is not a positive int.
    """
    _check_versions(versions)
    shutil.rmtree(os.path.join(folder, sources.MARKERS), ignore_errors=True)
    paths = {}
    for table, frame in frames.items():
        paths[table] = os.path.join(folder, table)
        changelog.write(changelog.slice_versions(frame, table, versions, seed), paths[table])
    sources.write_marker(folder, {table: sorted(os.path.basename(file) for file in data_files(path))
                                  for table, path in paths.items()})
    return paths


def write_delta(
    frames: dict[str, DataFrame], folder: str, versions: int = EMBEDDED_VERSIONS, seed: int = datasets.SEED
) -> dict[str, str]:
    """Each table of ``frames`` as a Delta table under ``folder`` (replacing what is there), its history the
    change log ``write_logs`` would write: each version a commit of each table it changes, version by
    version, table by table (``commit_logs``); each table's path.

    Raises:
        ValueError: ``versions`` is not a positive int.
    """
    _check_versions(versions)
    logs = {table: changelog.slice_versions(frame, table, versions, seed) for table, frame in frames.items()}
    replace_folder(folder, lambda new: commit_logs(logs, new))
    return {table: os.path.join(folder, table) for table in frames}


def commit_logs(logs: dict[str, DataFrame], folder: str) -> None:
    """Commit each table's change log (Spark, the change-feed columns) to its Delta table under ``folder``:
    for each version in order, one commit per table that it changes, in catalog order (a table that does not
    exist yet is created at its first version). Commits are at least a millisecond apart, so their commit
    times order them as they were made."""
    changes: dict[str, dict[int, list[tuple]]] = {}
    for table, log in logs.items():
        changes[table] = defaultdict(list)
        names = TABLES[table].names
        for row in rows(log.select(*names, changelog.CHANGE_TYPE, changelog.VERSION)):
            changes[table][row[-1]].append(row[:-1])
    held: dict[str, Counter] = {table: Counter() for table in logs}
    for version in sorted({version for by_version in changes.values() for version in by_version}):
        for table in logs:
            path = os.path.join(folder, table)
            if version not in changes[table] and delta.exists(path):
                continue
            commit = changes[table].get(version, [])
            key = TABLES[table].key
            if not key:
                for row in commit:
                    held[table][row[:-1]] += changelog.MULTIPLICITIES[row[-1]]
            delta.apply_changes(path, sources.table_schema(table), commit, key, held[table])
            time.sleep(0.002)


def _check_versions(versions: int) -> None:
    if type(versions) is not int or versions < 1:
        raise ValueError(f"versions is a positive int, not {versions!r}; e.g. --versions 12")


def append_logs(spark: SparkSession, dataset: str, folder: str, commits: int, seed: int = datasets.SEED) -> str:
    """Add ``commits`` versions of commits to ``dataset``'s tables in ``folder`` (``changelog.append_commits``),
    landing table by table: Delta commits (``commit_logs``), or Parquet files with a commit marker per
    version; what the tables hold now, in words."""
    paths = {table: os.path.join(folder, table) for table in DATASETS[dataset]}
    if sources.layout(folder, dataset) == "delta":
        logs = {table: _delta_log(spark, path, table) for table, path in paths.items()}
        first = max(delta.version(path) for path in paths.values()) + 1
        appended = {table: changelog.append_commits(spark, log, table, dataset, first, commits, seed)
                    for table, log in logs.items()}
        commit_logs({table: log for table, log in appended.items() if log is not None}, folder)
        return ", ".join(f"{table} through Delta version {delta.version(path)}" for table, path in paths.items())
    logs = read_logs(spark, dataset, paths)
    first = max(log.agg({changelog.VERSION: "max"}).first()[0] for log in logs.values()) + 1
    appended = {table: changelog.append_commits(spark, log, table, dataset, first, commits, seed)
                for table, log in logs.items()}
    for version in range(first, first + commits):
        files = {}
        for table, log in appended.items():
            if log is not None and not log.where(log[changelog.VERSION] == version).isEmpty():
                files[table] = changelog.write_appended(log.where(log[changelog.VERSION] == version), paths[table])
        sources.write_marker(folder, files)
    return f"versions through {first + commits - 1}"


def _delta_log(spark: SparkSession, path: str, table: str) -> DataFrame:
    """A Delta table's whole change data feed as a change log in Spark, checked (``sources.read_feed``)."""
    return frame_of(spark, sources.read_feed(path, table).arrow)


def frame_of(spark: SparkSession, log: pyarrow.Table) -> DataFrame:
    """A checked log (``sources.CheckedLog.arrow``) as a Spark DataFrame that Spark holds for the many queries to
    come: made with ``createDataFrame``, in as many partitions as Spark's file reader cuts a file of its size
    into (``PARTITION_BYTES`` each), and checkpointed locally, so that its plan is a scan of blocks Spark holds.

    ``createDataFrame`` alone makes ``spark.default.parallelism`` partitions and a plan that holds every row,
    which each query's planning goes through: measured at 200,000 trips, the from-scratch queries over it took
    1.1x to 1.8x their time over the log Spark read and cached itself, and over it checkpointed 0.75x to 0.8x.
    Simplification: as with ``truth``'s rounds, a checkpoint lives on the executors that made it, so a run on a
    cluster that loses one fails (Spark says so) instead of reading the log again.
    """
    return spark.createDataFrame(log).coalesce(max(1, -(-log.nbytes // PARTITION_BYTES))).localCheckpoint()


def read_logs(spark: SparkSession, dataset: str, paths: dict[str, str]) -> dict[str, DataFrame]:
    """Each table's change log in the Parquet layout, read and checked (``sources.read_log``), as a Spark
    DataFrame (the log's columns and ``_multiplicity``) that Spark holds for the many queries to come
    (``frame_of``).

    Where the data set has commit markers (``sources.MARKERS``), only the files they name are read, as a follow
    reads them: a file that landed without its marker is not part of the log yet (``sources.log_files``).

    Raises:
        ChangeLogError: a log is missing or fails a check (``sources.LogChecker``).
    """
    frames = {}
    for table, path in paths.items():
        files = sources.log_files(os.path.dirname(os.path.normpath(path)), table)
        frames[table] = frame_of(spark, sources.read_log(files, table).arrow)
    return frames


def bound_logs(spark: SparkSession, folder: str, dataset: str) -> dict[str, DataFrame]:
    """``dataset``'s Delta tables in ``folder`` (``folder/<table>``) as change logs with one version per commit:
    every commit, checked (``sources.read_commit_logs``), bound in commit-time order as a follow binds them;
    held by Spark (``frame_of``).

    Raises:
        ChangeLogError: a commit fails a check, or cannot be read.
    """
    import pyarrow

    commits = sources.commits_between(folder, dataset, {}, sources.newest_commits(folder, dataset))
    found: dict[str, list[pyarrow.Table]] = {table: [] for table in DATASETS[dataset]}
    for version, commit in enumerate(commits):
        for log in sources.read_commit_logs(folder, commit):
            found[log.table].append(log.at(version).arrow)
    return {table: frame_of(spark, pyarrow.concat_tables(logs) if logs else sources.log_schema(table).empty_table())
            for table, logs in found.items()}


def updates(logs: dict[str, DataFrame]) -> list[Change]:
    """Every log's updates as ``Change``s, sorted by version.

    Each log reaches the driver as Arrow record batches (``rows``), not as
    Spark ``Row`` objects, and becomes records one batch at a time.
    """
    found = []
    for table, log in logs.items():
        names = TABLES[table].names
        for row in rows(log.select(changelog.VERSION, *names, changelog.MULTIPLICITY)):
            found.append(Change(row[0], table, row[1:-1], row[-1]))
    found.sort(key=lambda update: update.version)
    return found


def rows(frame: DataFrame) -> Iterator[tuple]:
    """``frame``'s rows as tuples of Python values (NULL as None), read through Arrow batch by batch.

    Timestamps come as naive datetimes in UTC, the session's time zone
    (``session.DEFAULTS``); decimals as ``Decimal``, as ``collect()`` gives them.
    """
    import pyarrow

    for batch in frame.toArrow().to_batches():
        columns = []
        for column in batch.columns:
            if pyarrow.types.is_timestamp(column.type) and column.type.tz is not None:
                column = column.cast(pyarrow.timestamp(column.type.unit))
            columns.append(column.to_pylist())
        yield from zip(*columns, strict=True)


def check_query(
    spark: SparkSession, query: Query, logs: dict[str, DataFrame], partitions: Iterable[int] = (),
    feed: Feed | None = None, progress: bool | None = None,
) -> QueryRun:
    """Check ``query`` at every version of ``logs``: ``final/`` incrementally against Spark SQL from scratch.

    ``feed`` changes what ``final/`` is fed (to plant a fault in a test);
    ``partitions`` lists partition counts for partitioned runs (ignored for
    a query that does not split by key). ``progress`` shows a progress bar
    (None: when stderr is a terminal).
    """
    from tqdm import tqdm

    inputs = {table: logs[table] for table in query.inputs}
    logged = updates(inputs)
    fed = feed(logged) if feed else logged
    versions = sorted({row[0] for row in logged} | {row[0] for row in fed})
    batches = dict(versions_of(fed))
    run = QueryRun(query.dataset, query.name, query.sql if not query.fixed_point else
                   f"{query.sql}; then until nothing is added: {query.fixed_point}", query.source)
    engine = IncrementalQuery(query)
    truths = {}
    bar = tqdm(versions, desc=f"{query.dataset}/{query.name}", unit="version", leave=False,
               disable=None if progress is None else not progress, file=sys.stderr)
    lines = _progress_lines(progress)
    for done, version in enumerate(bar, 1):
        if lines and done * 10 // len(versions) > (done - 1) * 10 // len(versions):
            _phase(f"{query.dataset}/{query.name}: version {version}, {done} of {len(versions)} "
                   f"({done * 100 // len(versions)}%)")
        start = perf_counter()
        changes, ours = _attempt(lambda version=version: engine.apply(version, batches.get(version, [])),
                                 data_error_of_final)
        incremental = perf_counter() - start
        start = perf_counter()
        answer, theirs = _attempt(lambda version=version: at(spark, query, inputs, version), data_error_of_spark)
        scratch = perf_counter() - start
        if ours or theirs:
            run.differences += _error_differences(version, theirs, ours)
            if ours and theirs:
                run.stopped = f"version {version}: Spark SQL raised {theirs}; final/ raised {ours}"
            break
        truth = truths[version] = answer.counts
        tolerant = tolerant_columns(query.sql, answer.types)
        run.versions.append(version)
        run.incremental_seconds.append(incremental)
        run.scratch_seconds.append(scratch)
        run.rows.append(sum(truth.values()))
        run.rows_changed.append(sum(abs(multiplicity) for multiplicity in changes.values()))
        found, tolerated = compared(version, truth, engine.snapshot, getattr(query, "rank", None), tolerant)
        run.differences += found
        run.tolerated += tolerated
    if query.partition_by is not None and not run.stopped:
        for count in partitions:
            if lines:
                _phase(f"{query.dataset}/{query.name}: partitioned over {count} Spark task{'s' * (count > 1)}")
            result = run_partitioned(spark, query, inputs, count)
            held: dict[tuple, int] = {}
            found = []
            for version in versions:
                for row, multiplicity in result.changes.get(version, {}).items():
                    add_multiplicity(held, row, multiplicity)
                found += compare(version, truths[version], held, getattr(query, "rank", None), tolerant)
            run.partitioned.append(Partitioned(
                count, result.seconds, max(result.task_seconds.values(), default=0.0), found,
                sorted(result.final_from),
            ))
    return run


def _attempt(compute: Callable[[], Any], data_error: Callable[[Exception], str | None]) -> tuple[Any, str | None]:
    """``compute()``'s result and no error; or, when it raises an error about the data (``data_error`` says
    which, and how to put it), no result and that error's text. Any other error goes up."""
    try:
        return compute(), None
    except Exception as error:
        text = data_error(error)
        if text is None:
            raise
        return None, text


SPARK_DATA_ERRORS = ("DIVIDE_BY_ZERO", "REMAINDER_BY_ZERO", "ARITHMETIC_OVERFLOW", "CAST_INVALID_INPUT",
                     "CAST_OVERFLOW", "NUMERIC_VALUE_OUT_OF_RANGE", "INVALID_FORMAT")
"""Spark SQL's error classes (ANSI mode) for a value it refuses: the query fails for the data at a version."""


def data_error_of_spark(error: Exception) -> str | None:
    """Spark's error text if ``error`` is Spark SQL refusing a value (``SPARK_DATA_ERRORS``), else None."""
    condition = getattr(error, "getCondition", lambda: None)() or ""
    if not condition.startswith(SPARK_DATA_ERRORS):
        return None
    return str(error).splitlines()[0]


def data_error_of_final(error: Exception) -> str | None:
    """``final/``'s error text if ``error`` is a compiled query refusing a value (``SqlRuntimeError``), else None."""
    from .sql.errors import runtime_cause

    return None if runtime_cause(error) is None else str(error)


def _error_differences(version: int, theirs: str | None, ours: str | None) -> list[Difference]:
    """One difference when only one side raised for the data at ``version`` (its row is the error's text)."""
    if theirs and ours:
        return []
    return [Difference(version, (f"error: {theirs or ours}",), 1 if theirs else 0, 1 if ours else 0)]


def _progress_lines(progress: bool | None) -> bool:
    """Whether to show progress as lines: when no one asked (None) and stderr, where the bars go, is not a
    terminal (a log file, CI), so a long run is not silent."""
    return progress is None and not sys.stderr.isatty()


def _phase(line: str) -> None:
    """A progress line, on stdout with the run's other lines: stderr is kept for the one ``error:`` line."""
    print(line, flush=True)


def compare(version: int, expected: Mapping[tuple, int], actual: Mapping[tuple, int],
            rank: Callable[[tuple], tuple] | None = None, tolerant: Sequence[int] = ()) -> list[Difference]:
    """The rows whose multiplicities differ between ``expected`` and ``actual`` by the one equality rule
    (``compared`` without its count)."""
    return compared(version, expected, actual, rank, tolerant)[0]


def compared(version: int, expected: Mapping[tuple, int], actual: Mapping[tuple, int],
             rank: Callable[[tuple], tuple] | None = None,
             tolerant: Sequence[int] = ()) -> tuple[list[Difference], int]:
    """The rows whose multiplicities differ between ``expected`` and ``actual`` by the one equality rule
    (``equality.compare_rows``), sorted by row (NULLs first), and how many rows were equal only within its
    tolerance (in the ``tolerant`` columns: ``equality.tolerant_columns``).

    With ``rank`` (a top-k's order, ``SqlQuery.rank``), rows tied at the
    window's first or last place are compared as Spark's full order ranks
    them: the same number of rows there, whichever rows they are, since Spark
    breaks such ties in no stated order and ``final/`` by the whole row.
    """
    compared = compare_rows(expected, actual, tolerant, rank)
    differences = [Difference(version, row, want, have) for row, want, have in compared.differing]
    return sorted(differences, key=lambda difference: _order(difference.row)), compared.tolerated


def _order(row: tuple) -> tuple:
    """A sort key for rows with NULLs and mixed types: NULL first, then by type name and value."""
    return tuple((value is not None, type(value).__name__, value if value is not None else 0) for value in row)


def run_pipeline(
    spark: SparkSession, out: str, dataset_names: Iterable[str] = tuple(DATASETS), rows: int | None = None,
    versions: int = EMBEDDED_VERSIONS, partitions: Iterable[int] = (1, 2, 4), seed: int = datasets.SEED,
    tables: str | None = None, logs: str | None = None, log: Callable[[str], None] = print,
    progress: bool | None = None, nan_fraction: float = 0.0, queries: Iterable[Query] | None = None,
    folders: Mapping[str, str] | None = None,
) -> PipelineRun:
    """The whole pipeline over ``dataset_names``; ``log`` receives one line per query checked.

    ``queries`` (by default each data set's built-in ones, ``queries_of``)
    are the queries checked, each over the data set whose tables it reads.

    The change logs are made from generated tables (``rows``, ``seed``), or
    from tables read from ``tables/<dataset>/``, and written under
    ``out/logs/<dataset>/``; or, with ``logs``, read from ``logs/<dataset>/<table>``;
    or, for a data set in ``folders`` (the tables bound with ``--table``), from ``<its folder>/<table>``.
    Every data set's tables are read, and every log written and read back,
    before the first query is checked.

    Raises:
        DatasetError, ChangeLogError: a table or change log that cannot be read (see ``datasets.read``,
            ``read_logs``, ``bound_logs``).
    """
    partitions = list(partitions)
    queries = None if queries is None else list(queries)
    run = PipelineRun({"rows": rows, "versions": versions, "partitions": partitions, "seed": seed,
                       "master": spark.sparkContext.master, "tables": tables, "logs": logs,
                       "nan_fraction": nan_fraction})
    dataset_names = list(dataset_names)
    lines = _progress_lines(progress)
    if lines:
        _phase(f"{'reading' if logs else 'writing'} the change logs of {', '.join(dataset_names)}")
    read_from = {dataset: os.path.join(logs, dataset) for dataset in dataset_names} if logs else {}
    read_from.update({dataset: folder for dataset, folder in (folders or {}).items() if dataset in dataset_names})
    paths = {dataset: {table: os.path.join(folder, table) for table in DATASETS[dataset]}
             for dataset, folder in read_from.items()}
    made = [dataset for dataset in dataset_names if dataset not in read_from]
    frames = {dataset: datasets.read(spark, dataset, os.path.join(tables, dataset)) if tables
              else datasets.generate(spark, dataset, rows, seed, nan_fraction) for dataset in made}
    paths.update({dataset: write_logs(frames[dataset], os.path.join(out, "logs", dataset), versions, seed)
                  for dataset in made})
    logs_read = {dataset: bound_logs(spark, read_from[dataset], dataset) if dataset in read_from and sources.layout(
        read_from[dataset], dataset) == "delta" else read_logs(spark, dataset, paths[dataset])
        for dataset in dataset_names}
    if lines:
        _phase("change logs checked; checking each query at every version")
    for dataset in dataset_names:
        read = logs_read.pop(dataset)  # once its queries are checked nothing refers to it, and Spark's cleaner frees it
        chosen = queries_of(dataset) if queries is None else [query for query in queries if query.dataset == dataset]
        for query in chosen:
            checked = check_query(spark, query, read, partitions, progress=progress)
            run.queries.append(checked)
            log(summary_line(checked))
    return run


def summary_line(run: QueryRun) -> str:
    """One line on a checked query: versions, differences, speed-up, and the partitioned runs."""
    line = (
        f"{run.dataset}/{run.query}: {len(run.versions)} versions, {len(run.differences)} differences; "
        f"per version after the load: final {run.incremental_median * 1e3:.1f} ms, "
        f"Spark SQL from scratch {run.scratch_median * 1e3:.0f} ms ({run.speedup:.0f}x)"
    )
    if run.tolerated:
        line += f"; {run.tolerated} rows equal only within {TOLERANCE:g} (DOUBLE SUM, AVG or spread)"
    if run.stopped:
        line += f"; stopped at {run.stopped}"
    if run.partitioned:
        line += "; partitioned " + ", ".join(
            f"{p.partitions}: {p.seconds:.1f} s{'' if not p.differences else f' ({len(p.differences)} differences)'}"
            for p in run.partitioned
        )
    return line
