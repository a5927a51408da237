"""TPC-H kept up to date: the benchmark's tables as Delta tables, its refresh functions as commits, its 22 queries
checked at every version against DuckDB and Spark SQL from scratch.

TPC-H is the standard decision-support benchmark (Materialize ships it as a
load generator to show views kept up to date). Here everything comes from
DuckDB's ``tpch`` extension, loaded from the file its PyPI wheel carries (no
download): the tables from its ``dbgen``, and the 22 queries as the
benchmark's text from ``tpch_queries()``, never rewritten for ``final/``;
sqlglot transpiles them to Spark's dialect, which is what ``final/``
compiles and Spark SQL runs.

``generate`` writes the eight tables as Delta tables with the change data
feed on, then applies the refresh functions the benchmark defines, each a
commit of its table: RF1 inserts new orders (scale x 1500 of them) with
their lineitems, RF2 deletes as many old orders with theirs (one merge per
table does both), and, beyond the benchmark, an update of customers'
balances and parts' prices (a row's pre- and post-image). A data set
version is one commit, in commit-time order, as ``follow`` binds them.

``check`` runs each query through every version in ``final/`` and compares
it with DuckDB from scratch on the Delta tables as of that version, under
one stated equality rule (``same_rows``); ``python -m final.spark tpch``
does that and, with Spark, ``run`` over the same tables (Spark SQL from
scratch at every version, the pipeline's own check).
"""

from __future__ import annotations

import contextlib
import os
import random
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")
"""TPC-H's tables, in the order they are written and bound (a tie in commit time binds in this order)."""

RF_ORDERS = 1500
"""Orders RF1 inserts and RF2 deletes, per unit of scale factor (TPC-H 2.26.0, clause 2.27: SF x 1500)."""

UPDATED = 0.01
"""The share of customers and parts whose balance or price a refresh's update commit changes."""

SOURCE = "TPC-H Q{number} as DuckDB's tpch extension gives it (tpch_queries()), transpiled to Spark SQL by sqlglot"


class TpchError(ValueError):
    """TPC-H cannot be set up: the extension is missing, or an argument is out of range."""


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the ``tpch`` extension loaded from its wheel's file.

    Raises:
        TpchError: ``duckdb`` or ``duckdb-extension-tpch`` is not installed (``requirements/pipeline.txt``).
    """
    try:
        import duckdb
        import duckdb_extension_tpch
    except ImportError as error:
        raise TpchError(f"TPC-H needs duckdb and duckdb-extension-tpch ({error.name} is missing): "
                        f"pip install -r requirements.txt") from None
    folder = os.path.dirname(duckdb_extension_tpch.__file__)
    found = [os.path.join(root, name) for root, _, names in os.walk(folder) for name in names
             if name == "tpch.duckdb_extension"]
    if not found:
        raise TpchError(f"no tpch.duckdb_extension under {folder}: reinstall duckdb-extension-tpch")
    connection = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    connection.execute(f"LOAD '{found[0]}'")
    return connection


def queries(connection: duckdb.DuckDBPyConnection | None = None) -> dict[int, str]:
    """The 22 queries, numbered, as the benchmark's text in DuckDB's dialect."""
    connection = connection or connect()
    return dict(connection.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY query_nr").fetchall())


def spark_text(text: str, number: int) -> str:
    """A query's text in Spark's dialect (sqlglot), with a ``-- source:`` line saying where it comes from."""
    import sqlglot

    return f"-- source: {SOURCE.format(number=number)}\n" + sqlglot.transpile(text, read="duckdb", write="spark",
                                                                              pretty=True)[0] + "\n"


@dataclass(frozen=True)
class Refresh:
    """What one refresh changed: the orders RF1 inserted and RF2 deleted (keys), the customers and parts updated."""

    inserted: tuple[int, ...]
    deleted: tuple[int, ...]
    customers: tuple[int, ...]
    parts: tuple[int, ...]


def generate(folder: str, scale: float = 0.01, refreshes: int = 3, seed: int = 1) -> list[Refresh]:
    """TPC-H at ``scale`` as Delta tables ``folder/<table>`` (replaced if there), then ``refreshes`` refreshes.

    Each refresh is four commits: ``orders`` and ``lineitem`` each one
    merge that deletes RF2's orders (the oldest left) and inserts RF1's
    (copies of random orders under new keys, above every key so far, with
    their lineitems), then one of ``customer`` and one of ``part`` updating
    ``UPDATED`` of their rows. The same ``seed`` writes the same tables.

    Raises:
        TpchError: ``scale`` is not positive, ``refreshes`` negative, or a refresh would delete more orders
            than there are.
    """
    import shutil

    import pyarrow
    from deltalake import DeltaTable, write_deltalake

    if not scale > 0 or refreshes < 0:
        raise TpchError(f"--scale is a positive number and --refreshes at least 0, not {scale} and {refreshes}")
    connection = connect()
    connection.execute(f"CALL dbgen(sf={scale})")
    for table in TABLES:
        path = os.path.join(folder, table)
        shutil.rmtree(path, ignore_errors=True)
        write_deltalake(path, connection.table(table).arrow().read_all(),
                        configuration={"delta.enableChangeDataFeed": "true"})
    rng = random.Random(seed)
    count = max(1, round(scale * RF_ORDERS))
    orders = pyarrow.table(DeltaTable(os.path.join(folder, "orders")).to_pyarrow_table())
    keys = sorted(orders.column("o_orderkey").to_pylist())
    if count * refreshes > len(keys):
        raise TpchError(f"{refreshes} refreshes delete {count * refreshes} orders, more than the {len(keys)} there "
                        f"are at scale {scale}")
    next_key, done = keys[-1] + 1, []
    for number in range(refreshes):
        deleted = tuple(keys[number * count:(number + 1) * count])
        models = rng.sample(keys[(number + 1) * count:], count)
        inserted = tuple(range(next_key, next_key + count))
        next_key += count
        renamed = dict(zip(models, inserted, strict=True))
        for table, key in (("orders", "o_orderkey"), ("lineitem", "l_orderkey")):
            _merge_orders(DeltaTable(os.path.join(folder, table)), key, deleted, renamed)
        customers = _update(DeltaTable(os.path.join(folder, "customer")), "c_custkey", "c_acctbal", rng)
        parts = _update(DeltaTable(os.path.join(folder, "part")), "p_partkey", "p_retailprice", rng)
        done.append(Refresh(inserted, deleted, customers, parts))
    return done


def _merge_orders(table: Any, key: str, deleted: Sequence[int], renamed: dict[int, int]) -> None:
    """One commit of ``table``: the rows of the ``deleted`` orders deleted, copies of the rows of ``renamed``'s
    orders inserted under their new keys (RF2 and RF1 of one refresh)."""
    import pyarrow
    import pyarrow.compute as pc

    rows = pyarrow.table(table.to_pyarrow_table())
    gone = rows.filter(pc.is_in(rows.column(key), pyarrow.array(list(deleted), rows.schema.field(key).type)))
    models = rows.filter(pc.is_in(rows.column(key), pyarrow.array(list(renamed), rows.schema.field(key).type)))
    fresh = models.set_column(models.schema.get_field_index(key), key, pyarrow.array(
        [renamed[old] for old in models.column(key).to_pylist()], rows.schema.field(key).type))
    unique = [name for name in rows.column_names if name in (key, "l_linenumber")]
    predicate = " AND ".join(f"target.{name} = source.{name}" for name in unique)
    (table.merge(pyarrow.concat_tables([gone, fresh]), predicate, source_alias="source", target_alias="target")
     .when_matched_delete().when_not_matched_insert_all().execute())


def _update(table: Any, key: str, column: str, rng: random.Random) -> tuple[int, ...]:
    """One commit of ``table`` changing ``column`` (a price or balance) of ``UPDATED`` of its rows by a few cents
    either way; the keys changed."""
    import pyarrow
    import pyarrow.compute as pc

    rows = pyarrow.table(table.to_pyarrow_table())
    keys = rows.column(key).to_pylist()
    chosen = sorted(rng.sample(keys, max(1, round(len(keys) * UPDATED))))
    picked = rows.filter(pc.is_in(rows.column(key), pyarrow.array(chosen, rows.schema.field(key).type)))
    moved = [value + Decimal(rng.choice((-1, 1)) * rng.randint(1, 500)).scaleb(-2)
             for value in picked.column(column).to_pylist()]
    changed = picked.set_column(picked.schema.get_field_index(column), column,
                                pyarrow.array(moved, rows.schema.field(column).type))
    (table.merge(changed, f"target.{key} = source.{key}", source_alias="source", target_alias="target")
     .when_matched_update_all().execute())
    return tuple(chosen)


# The check against DuckDB -------------------------------------------------------------------------------------


@dataclass
class QueryCheck:
    """One query followed through every version: how it went, and its times (seconds): ``final/``'s over the
    tables' first writes (``load``) and per later commit of a table the query reads (``updates``); DuckDB's from
    scratch once every table is written (``duckdb_load``) and after each of those commits."""

    number: int
    refused: str | None = None
    versions: int = 0
    differences: list[str] = field(default_factory=list)
    load: float = 0.0
    updates: list[float] = field(default_factory=list)
    duckdb_load: float = 0.0
    duckdb_updates: list[float] = field(default_factory=list)

    @property
    def median_update(self) -> float | None:
        return statistics.median(self.updates) if self.updates else None


def same_rows(ours: Counter, theirs: Sequence[tuple], approximate: Sequence[bool]) -> bool:
    """Whether ``ours`` (rows with multiplicities) holds the rows of ``theirs``, DuckDB's.

    The one equality rule between them: a column DuckDB gives as a DOUBLE
    (its AVG and its quotient of DECIMALs, where Spark SQL keeps a DECIMAL
    rounded to its scale, at least 6 places) equals ours within 1e-6 plus a
    1e-12 share; every other value equals exactly (DECIMALs as numbers, so
    ``1.10`` is ``1.1``).
    """
    exact = [position for position, loose in enumerate(approximate) if not loose]
    loose = [position for position, loose in enumerate(approximate) if loose]

    def grouped(rows: Iterable[tuple]) -> dict[tuple, list[tuple]]:
        groups: dict[tuple, list[tuple]] = defaultdict(list)
        for row in rows:
            groups[tuple(row[p] for p in exact)].append(tuple(row[p] for p in loose))
        return groups

    mine, truth = grouped(ours.elements()), grouped(theirs)
    if mine.keys() != truth.keys():
        return False
    for key, values in truth.items():
        found = sorted(mine[key], key=_nulls_first)
        if len(found) != len(values):
            return False
        for a, b in zip(found, sorted(values, key=_nulls_first), strict=True):
            if any(not _close(x, y) for x, y in zip(a, b, strict=True)):
                return False
    return True


def _nulls_first(values: tuple) -> tuple:
    return tuple((value is not None, float(value) if value is not None else 0.0) for value in values)


def _close(ours: Any, theirs: Any) -> bool:
    if ours is None or theirs is None:
        return ours is theirs
    return abs(float(ours) - float(theirs)) <= 1e-6 + 1e-12 * abs(float(theirs))


@contextlib.contextmanager
def followed(folder: str, work: str | None = None) -> Iterator[tuple[Any, list, list]]:
    """The TPC-H Delta tables under ``folder`` as a follow binds them: the bound data set's tables (a
    ``sql.Tables`` to compile over), its commits in binding order (version ``i`` is the ``i``-th) and each one's
    changes (``sources.Change``). The tables stay bound inside the block.

    ``work`` is a folder for the data set's links (``own_tables.link``; a temporary one by default).
    """
    import tempfile

    from .own_tables import bound, link, read_tables
    from .sources import commits_between, newest_commits, read_commit
    from .sql import Tables
    from .tables_and_queries import BOUND

    own = read_tables([f"{table}={os.path.join(folder, table)}" for table in TABLES])
    provider = Tables({table.table.name: table.table for table in own}, BOUND)  # the bound data set's tables
    with bound(own), tempfile.TemporaryDirectory() as scratch:
        linked = link(os.path.join(work or scratch, BOUND), own, fresh=True)
        commits = commits_between(linked, BOUND, {}, newest_commits(linked, BOUND))
        yield provider, commits, [read_commit(linked, commit) for commit in commits]


def check(folder: str, numbers: Iterable[int] = range(1, 23), log: Callable[[str], None] | None = None,
          work: str | None = None) -> list[QueryCheck]:
    """Each query of ``numbers`` followed by ``final/`` through every commit of the Delta tables under
    ``folder`` (bound as ``follow`` binds them) and compared with DuckDB from scratch at every version.

    ``work`` is a folder for the data set's links (``own_tables.link``; a temporary one by default).
    """
    from .incremental import IncrementalQuery
    from .sql import SqlError, compile_sql

    texts = queries()
    results = []
    with followed(folder, work) as (provider, commits, changes):
        states, at = [], {}
        for commit in commits:  # each data set version: every table's Delta version bound by then
            at[commit.table] = commit.number
            states.append(dict(at))
        truth = DuckDbTruth(folder)
        for number in numbers:
            result = QueryCheck(number)
            results.append(result)
            try:
                query = compile_sql(spark_text(texts[number], number), provider, f"q{number:02d}")
            except SqlError as error:
                result.refused = str(error)
                continue
            engine = IncrementalQuery(query)
            for version, (commit, found, state) in enumerate(zip(commits, changes, states, strict=True)):
                started = time.perf_counter()
                engine.apply(version, [(table, record, multiplicity) for _, table, record, multiplicity in found
                                       if table in query.inputs])
                elapsed = time.perf_counter() - started
                rows, approximate, seconds = truth.answer(texts[number], state)
                if version < len(TABLES):  # the first commits are the tables' first writes: the load
                    result.load += elapsed
                    result.duckdb_load = seconds
                elif commit.table in query.inputs:
                    result.updates.append(elapsed)
                    result.duckdb_updates.append(seconds)
                if not same_rows(Counter(engine.snapshot), rows, approximate):
                    result.differences.append(f"version {version} ({commit.table} commit {commit.number})")
                result.versions += 1
            if log is not None:
                log(_line(result))
    return results


class DuckDbTruth:
    """DuckDB from scratch over the Delta tables under ``folder`` as of a data set version: each table at a Delta
    version (empty before its first), registered under its own name, so a query runs as the benchmark's text
    gives it.

    Invariant: ``_bound[table]`` is the Delta version of ``table`` registered in ``_connection`` (-1: empty).
    """

    def __init__(self, folder: str) -> None:
        import duckdb

        self.folder = folder
        self._connection = duckdb.connect()
        self._bound: dict[str, int] = {}

    def answer(self, text: str, state: dict[str, int]) -> tuple[list[tuple], list[bool], float]:
        """``text``'s rows over the tables at the Delta versions of ``state`` (a table it lacks is empty), which
        of its columns are DOUBLEs, and the seconds DuckDB took."""
        import pyarrow
        from deltalake import DeltaTable

        for name in TABLES:
            version = state.get(name, -1)
            if self._bound.get(name) == version:
                continue
            path = os.path.join(self.folder, name)
            if version < 0:
                rows = pyarrow.schema(DeltaTable(path).schema().to_arrow()).empty_table()
            else:
                rows = pyarrow.table(DeltaTable(path, version=version).to_pyarrow_table())
            self._connection.register(name, rows)
            self._bound[name] = version
        started = time.perf_counter()
        cursor = self._connection.execute(text)
        found = cursor.fetchall()
        approximate = [str(column[1]).upper() in ("DOUBLE", "FLOAT") for column in cursor.description]
        return found, approximate, time.perf_counter() - started


def _line(result: QueryCheck) -> str:
    if result.refused:
        return f"Q{result.number:<2} refused: {result.refused}"
    update = result.median_update
    return (f"Q{result.number:<2} {result.versions} versions, {len(result.differences)} differences; load "
            f"{result.load:.2f} s, median refresh commit {update * 1000:.1f} ms" if update is not None else
            f"Q{result.number:<2} {result.versions} versions, {len(result.differences)} differences; load "
            f"{result.load:.2f} s")


def numbers(text: str) -> list[int]:
    """``"1,3,5-8"`` as ``[1, 3, 5, 6, 7, 8]``.

    Raises:
        TpchError: a part is not a query number from 1 to 22, or a range of them.
    """
    found: list[int] = []
    for part in filter(None, (part.strip() for part in text.split(","))):
        low, _, high = part.partition("-")
        if not (low.isdigit() and (not high or high.isdigit())):
            raise TpchError(f"--queries takes numbers and ranges, e.g. 1,3,5-8, not {text!r}")
        first, last = int(low), int(high or low)
        if not 1 <= first <= last <= 22:
            raise TpchError(f"--queries: TPC-H's queries are numbered 1 to 22, not {part}")
        found += [number for number in range(first, last + 1) if number not in found]
    if not found:
        raise TpchError("--queries names no query; e.g. --queries 1-22")
    return found


def command(arguments: Any, run: Callable[[list[str]], int]) -> int:
    """``python -m final.spark tpch``: generate, check against DuckDB, then (``--spark``) ``run`` the queries'
    Spark SQL files over the tables; 0 when every version agrees, 1 on a difference."""
    chosen = numbers(arguments.queries)
    folder = os.path.join(arguments.out, "tables")
    print(f"tpch: scale {arguments.scale}: the tables and {arguments.refreshes} refreshes as Delta tables in {folder}")
    generate(folder, arguments.scale, arguments.refreshes, arguments.seed)
    results = check(folder, chosen, log=print, work=os.path.join(arguments.out, "bound"))
    different = sum(len(result.differences) for result in results)
    versions = sum(result.versions for result in results)
    print(f"tpch: against DuckDB, {versions} query versions checked, {different} differences")
    texts = queries()
    paths = []
    os.makedirs(os.path.join(arguments.out, "queries"), exist_ok=True)
    for number in chosen:
        paths.append(os.path.join(arguments.out, "queries", f"q{number:02d}.sql"))
        with open(paths[-1], "w", encoding="utf-8") as file:
            file.write(spark_text(texts[number], number))
    status = 1 if different else 0
    spark_report = os.path.join(arguments.out, "spark", "report.json")
    if os.path.exists(spark_report):
        os.remove(spark_report)  # an earlier run's: the summary reads this run's only
    if arguments.spark:
        argv = ["run", "--out", os.path.join(arguments.out, "spark"), "--partitions", "",
                *(f"--table={table}={os.path.join(folder, table)}" for table in TABLES), "--sql", *paths]
        for setting in arguments.conf:
            argv += ["--conf", setting]
        if arguments.master:
            argv += ["--master", arguments.master]
        print(f"tpch: against Spark SQL: python -m final.spark {' '.join(argv)}")
        status = max(status, run(argv))
    summary = summarize(results, spark_report if os.path.exists(spark_report) else None)
    paths = write_summary(summary, arguments.out, vars(arguments))
    print(f"tpch: summary in {paths[0]} and {paths[1]}")
    return status


def summarize(results: Sequence[QueryCheck], spark_report: str | None) -> list[dict[str, Any]]:
    """One row per query: DuckDB's check, and Spark SQL's from ``run``'s report when there is one.

    ``final/``'s load is its time over the tables' first writes; a refresh is
    a later commit of a table the query reads. Spark SQL's and DuckDB's times
    are from scratch: at the version where the last table was first written
    (the load's answer), and the median over the same refresh commits.
    """
    import json

    spark: dict[str, dict] = {}
    if spark_report is not None:
        with open(spark_report, encoding="utf-8") as file:
            spark = {query["query"]: query for query in json.load(file)["queries"]}
    rows = []
    for result in results:
        row: dict[str, Any] = {"query": result.number, "refused": result.refused}
        if result.refused is None:
            row.update(versions=result.versions, duckdb_differences=len(result.differences),
                       load_s=round(result.load, 4), refresh_ms=_ms(result.median_update),
                       duckdb_load_ms=_ms(result.duckdb_load),
                       duckdb_refresh_ms=_ms(statistics.median(result.duckdb_updates) if result.duckdb_updates
                                             else None))
            checked = spark.get(f"q{result.number:02d}")
            if checked is not None:
                timed = list(zip(checked["versions"], checked["scratch_ms"], strict=True))
                loads = [ms for version, ms in timed if version < len(TABLES)]
                refreshes = [ms for version, ms in timed if version >= len(TABLES)]
                row.update(spark_versions=len(timed), spark_differences=len(checked["differences"]),
                           spark_load_ms=round(loads[-1], 1) if loads else None,
                           spark_refresh_ms=round(statistics.median(refreshes), 1) if refreshes else None)
                if row["spark_refresh_ms"] and row["refresh_ms"]:
                    row["refresh_speedup"] = round(row["spark_refresh_ms"] / row["refresh_ms"])
        rows.append(row)
    return rows


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 2)


def write_summary(rows: list[dict[str, Any]], out: str, parameters: dict[str, Any]) -> tuple[str, str]:
    """``OUT/tpch.json`` (the parameters and ``rows``) and ``OUT/tpch.md`` (a table of them); their paths."""
    import json

    columns = [("query", "Q"), ("versions", "versions"), ("duckdb_differences", "differences (DuckDB)"),
               ("spark_differences", "differences (Spark SQL)"), ("load_s", "final/ load (s)"),
               ("spark_load_ms", "Spark SQL at load (ms)"), ("duckdb_load_ms", "DuckDB at load (ms)"),
               ("refresh_ms", "final/ per refresh (ms)"), ("spark_refresh_ms", "Spark SQL per refresh (ms)"),
               ("duckdb_refresh_ms", "DuckDB per refresh (ms)"), ("refresh_speedup", "final/ vs Spark SQL")]
    lines = ["| " + " | ".join(title for _, title in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        if row["refused"]:
            lines.append(f"| {row['query']} | refused: {row['refused']} |")
            continue
        lines.append("| " + " | ".join("" if row.get(key) is None else str(row[key]) for key, _ in columns) + " |")
    shown = {key: value for key, value in parameters.items() if isinstance(value, (str, int, float, bool))}
    os.makedirs(out, exist_ok=True)
    paths = (os.path.join(out, "tpch.md"), os.path.join(out, "tpch.json"))
    with open(paths[0], "w", encoding="utf-8") as file:
        file.write(f"# TPC-H kept up to date\n\nParameters: {json.dumps(shown)}\n\n" + "\n".join(lines) + "\n")
    with open(paths[1], "w", encoding="utf-8") as file:
        json.dump({"parameters": shown, "queries": rows}, file, indent=1)
    return paths
