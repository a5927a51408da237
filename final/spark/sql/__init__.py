"""Your own SQL, kept up to date: a subset of Spark SQL compiled into ``final/`` dataflows, in layers.

``compile_sql(text, tables)`` parses one query with sqlglot (Spark's
dialect as Spark 4.3 reads strings: ``dialect``), then:

1. binds it (``binder``): names resolved, every expression typed with
   Spark SQL's types and values (``types``, ``expressions``), the query a
   logical plan of symbolic expressions (``logical``, ``scalar``); dates,
   strings, numbers, regular expressions and window functions each bind in
   a module of their own (``dates``/``functions``, ``strings``, ``numbers``,
   ``regex``, ``windows``); an item without AS is named as Spark names it
   (``names``);
2. rewrites the plan with the rules of ``rules.RULES``, in their stated
   order (subqueries into joins, ORs factored, predicates pushed down, a
   window's first rows as a top-k, columns pruned, the delta join chosen);
3. lowers it (``lower``), one function per node, onto ``final/``'s stream
   API, when the pipeline builds the dataflow.

It returns a ``SqlQuery``: a catalog ``Query`` whose ``build`` makes the
dataflow from one input stream per table it reads, and whose ``sql`` is the
text Spark SQL runs from scratch. The tables reach the compiler through an
interface, as DataFusion's planner asks a ``ContextProvider`` for them: a
``TableProvider`` gives the tables and names the data set a query over some of
them belongs to (the pipeline's catalog is one:
``tables_and_queries.CATALOG``), or a plain mapping of tables is taken as one
of no data set (``Tables``). So this package imports nothing from
``tables_and_queries``, which compiles its own SQL files with it. The pipeline
runs it like the built-in queries: ``python -m final.spark run --sql
FILE.sql`` checks it against Spark SQL at every version, ``follow`` keeps it
up to date, ``explain`` prints each layer and draws the dataflow.

What is in the subset, what is refused and how types behave is the
README's "Your own SQL". A query outside the subset raises ``SqlError``
before anything runs, naming the construct and its line and column; a value
Spark SQL would raise an error for (overflow, division by zero, an invalid
cast) raises ``SqlRuntimeError`` inside the dataflow, at that version.

This package imports nothing from Spark: executors compile a query again
from its text (``SqlQuery.recipe``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from ..query import Query, Table
from .binder import Binder
from .dialect import SPARK
from .errors import SqlError, SqlRuntimeError, located, refuse
from .logical import Aggregate, Filter, Plan, Project, Rename, Scan, Sort, TopK, nodes
from .lower import Env, lower, rank_of
from .rules import rewrite
from .scalar import Ref
from .types import SqlType

__all__ = ["SqlError", "SqlQuery", "SqlRuntimeError", "TableProvider", "Tables", "compile_sql", "explain", "load"]

NO_DATASET = "sql"
"""The data set of a query compiled over tables that belong to none (``Tables``)."""


class TableProvider(Protocol):
    """Where the compiler finds the tables a query may read (DataFusion's ``ContextProvider``): ``tables`` maps
    each name to its ``Table``, and ``dataset_of(inputs)`` names the data set that a query reading the tables
    ``inputs`` belongs to, which the pipeline generates, runs, follows and checks it over."""

    @property
    def tables(self) -> Mapping[str, Table]: ...

    def dataset_of(self, inputs: Sequence[str]) -> str: ...


@dataclass(frozen=True)
class Tables:
    """A ``TableProvider`` of the ``tables`` given, every query over them of the one data set ``dataset``."""

    tables: Mapping[str, Table]
    dataset: str = NO_DATASET

    def dataset_of(self, inputs: Sequence[str]) -> str:
        return self.dataset


@dataclass(frozen=True)
class SqlQuery(Query):
    """A query compiled from SQL: a catalog ``Query``, with the output's Spark types and its plans.

    ``types`` are the output columns' types as Spark's ``simpleString``
    spells them (``bigint``, ``decimal(10,2)``); ``schemas`` the tables it
    reads; ``recursive`` is ``"UNION"`` or ``"UNION ALL"`` for a WITH
    RECURSIVE query (Spark SQL runs only the second: the first is checked
    with a loop of Spark SQL rounds, ``truth.py``), else None. ``bound`` is
    the plan as bound, ``plan`` as the rules left it (the one lowered), and
    ``rules`` names the rules that changed it.
    """

    types: tuple[str, ...] = ()
    schemas: dict[str, Table] = field(default_factory=dict)
    recursive: str | None = None
    plan: Plan | None = field(default=None, compare=False, repr=False)
    bound: Plan | None = field(default=None, compare=False, repr=False)
    rules: tuple[str, ...] = ()

    @property
    def rank(self) -> Callable[[tuple], tuple] | None:
        """For a query that ends in ORDER BY ... LIMIT: a result row's place in its order, by which rows tied at
        the window's edges are told apart from rows that differ (``pipeline.compare``); None otherwise."""
        return rank_of(self.plan) if self.plan is not None else None

    @property
    def recipe(self) -> tuple[str, str, dict[str, Table]]:
        """What an executor needs to compile this query again: its name, text and tables (all picklable)."""
        return self.name, self.sql, self.schemas


def compile_sql(text: str, tables: TableProvider | Mapping[str, Table], name: str = "query", source: str = ""
                ) -> SqlQuery:
    """The query in ``text`` over ``tables`` (a ``TableProvider``, or name -> ``Table``: ``Tables``), as a
    ``SqlQuery`` named ``name``, of the data set the provider names for the tables it reads.

    Raises:
        SqlError: ``text`` is not one query of the subset over these tables; the message names the construct,
            its line and column.
    """
    provider = Tables(tables) if isinstance(tables, Mapping) else tables
    node = parse(text)
    columns = {}
    for table in provider.tables.values():
        try:
            columns[table.name] = [(column, SqlType.of_text(kind)) for column, kind in table.columns]
        except ValueError as error:
            raise SqlError(f"table {table.name}: {error}") from None
    binder = Binder(columns, text)
    try:
        bound = binder.query(node, {})
        plan, applied = rewrite(bound)
    except SqlError as error:
        raise located(error, text) from None
    inputs = tuple(binder.read)
    if not inputs:
        raise refuse(node, "the query reads no table: there is nothing to keep up to date")
    names = [f.name for f in plan.fields]  # Spark's: as written, or its name for an unnamed item (``names``)
    recursive = _recursion(node)

    def build(*streams: Any) -> Any:
        return lower(plan, Env(dict(zip(inputs, streams, strict=True)), streams[0].builder))

    partition_by = _partitioning(bound, inputs) if not recursive else None
    return SqlQuery(
        name=name, dataset=provider.dataset_of(inputs), inputs=inputs, columns=tuple(names),
        build=build, sql=text, source=source or f"{name}.sql", key=_key(bound, names),
        partition_by=partition_by, types=tuple(str(f.type) for f in plan.fields),
        schemas={table: provider.tables[table] for table in inputs}, recursive=recursive, plan=plan, bound=bound,
        rules=tuple(applied),
    )


def load(path: str, tables: TableProvider | Mapping[str, Table]) -> SqlQuery:
    """The query in the file ``path``, named by its stem, over ``tables`` (as ``compile_sql`` takes them).

    Leading comment lines may say where the query comes from
    (``-- source: ...``, shown in reports) and how the pipeline may split
    it across Spark tasks (``-- partition_by: facts=user_id, addrs=*``: per
    table, the column whose hash picks a row's partition, or ``*`` to give
    every partition the whole table); without one, a GROUP BY over one table
    splits by its first key column, and anything else runs in one process.

    Raises:
        SqlError: the file cannot be read, or its query is refused (the message starts with the file's name).
    """
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError) as error:
        raise SqlError(f"cannot be read ({getattr(error, 'strerror', None) or error})", path=path) from None
    headers = {}
    for line in text.splitlines():
        found = re.fullmatch(r"\s*--\s*(source|partition_by)\s*:\s*(.*?)\s*", line)
        if found:
            headers[found.group(1)] = found.group(2)
    try:
        query = compile_sql(text, tables, name, headers.get("source", ""))
        if "partition_by" in headers:
            query = replace(query, partition_by=_partition_header(headers["partition_by"], query))
    except SqlError as error:
        raise SqlError(error.message, error.line, error.column, path) from None
    return query


def _partition_header(text: str, query: SqlQuery) -> dict[str, str | None]:
    """``facts=user_id, addrs=*`` as ``{"facts": "user_id", "addrs": None}``, checked against the query."""
    chosen: dict[str, str | None] = {}
    for part in filter(None, (part.strip() for part in text.split(","))):
        table, _, column = (item.strip() for item in part.partition("="))
        schema = query.schemas.get(table)
        if schema is None or (column != "*" and column not in schema.names):
            raise SqlError(f"partition_by: {part!r} is not TABLE=COLUMN or TABLE=* for a table the query reads")
        chosen[table] = None if column == "*" else column
    if set(chosen) != set(query.inputs):
        raise SqlError(f"partition_by names {sorted(chosen)}, but the query reads {sorted(query.inputs)}: name each")
    return chosen


def parse(text: str) -> exp.Expression:
    """``text`` as one sqlglot expression (Spark's dialect); a SqlError for a syntax error or several statements."""
    try:
        for token in sqlglot.tokenize(text, read=SPARK):
            if token.text.upper() == "TRY_CAST":
                raise SqlError("TRY_CAST is not in the subset (it turns errors into NULL); use CAST", token.line,
                               token.col - len(token.text) + 1)
        statements = [statement for statement in sqlglot.parse(text, read=SPARK) if statement is not None]
    except ParseError as error:
        found = error.errors[0] if error.errors else {}
        raise SqlError(f"syntax error: {found.get('description') or error}", found.get("line") or 0,
                       found.get("col") or 0) from None
    except TokenError as error:
        raise SqlError(f"syntax error: {error}") from None
    if len(statements) > 1:
        raise located(refuse(statements[1], f"a .sql file holds one query, not {len(statements)}"), text)
    if not statements:
        raise SqlError("the file holds no query")
    return statements[0]


def _recursion(node: exp.Expression) -> str | None:
    for with_ in node.find_all(exp.With):
        if with_.args.get("recursive"):
            for cte in with_.expressions:
                name = cte.alias_or_name.lower()
                body = cte.this
                if isinstance(body, exp.Union) and any(t.name.lower() == name for t in body.find_all(exp.Table)):
                    return "UNION" if body.args.get("distinct") else "UNION ALL"
    return None


def _through(plan: Plan) -> Plan:
    """``plan`` below any renames and ORDER BY (neither changes which rows there are)."""
    while isinstance(plan, (Rename, Sort)):
        plan = plan.child
    return plan


def _aggregate_of(plan: Plan) -> tuple[Aggregate, Project] | None:
    """The aggregate a query's last SELECT projects (through HAVING), if the query ends in one."""
    top = _through(plan)
    if not isinstance(top, Project):
        return None
    below = _through(top.child)
    while isinstance(below, Filter):
        below = _through(below.child)
    return (below, top) if isinstance(below, Aggregate) else None


def _key(plan: Plan, names: list[str]) -> tuple[str, ...] | None:
    """The output columns that are the GROUP BY key (each key projected as itself), if the query ends in one."""
    found = _aggregate_of(plan)
    if found is None or found[0].whole:
        return None
    aggregate, project = found
    keys = [f.id for f in aggregate.fields[: len(aggregate.keys)]]
    projected = [expr.id if isinstance(expr, Ref) else None for expr in project.exprs]
    if not all(key in projected for key in keys):
        return None
    return tuple(names[projected.index(key)] for key in keys)


def _partitioning(plan: Plan, inputs: tuple[str, ...]) -> dict[str, str | None] | None:
    """How the pipeline may split this query across Spark tasks: by a GROUP BY key that is a column of its one
    table (every group then lives in one partition), or not at all."""
    found = _aggregate_of(plan)
    if found is None or found[0].whole or len(inputs) != 1:
        return None
    aggregate = found[0]
    below = _through(aggregate.child)
    while isinstance(below, Filter):
        below = _through(below.child)
    if not isinstance(below, Scan):
        return None
    columns = {f.id: f.name for f in below.fields}
    for key in aggregate.keys:
        if isinstance(key, Ref) and key.id in columns:
            return {below.table: columns[key.id]}
    return None


@dataclass(frozen=True)
class Recursion:
    """A WITH RECURSIVE ... UNION query cut into the SQL texts a loop of Spark SQL rounds runs (Spark SQL
    refuses UNION in a recursive CTE): ``base`` is the first round, ``step`` reads the previous round as a view
    named ``name`` (with ``columns``), and ``outer`` is the query over the finished ``name``."""

    name: str
    columns: tuple[str, ...]
    base: str
    step: str
    outer: str


def recursion(text: str) -> Recursion:
    """``text``'s recursive CTE and the rest of the query, as separate Spark SQL texts.

    Raises:
        SqlError: the query has no recursive CTE.
    """
    node = parse(text)
    with_ = node.args.get("with_") or node.args.get("with")
    ctes = list(with_.expressions) if with_ is not None else []
    for position, cte in enumerate(ctes):
        name = cte.alias_or_name
        body = cte.this
        if not (isinstance(body, exp.Union) and any(t.name.lower() == name.lower()
                                                       for t in body.find_all(exp.Table))):
            continue
        before = ctes[:position]

        def with_before(select: exp.Expression, before: list = before) -> str:
            select = select.copy()
            if before:
                select.set("with_", exp.With(expressions=[cte.copy() for cte in before]))
            return select.sql(dialect="spark")

        alias = cte.args.get("alias")
        columns = tuple(column.name for column in alias.columns) if alias is not None and alias.columns else ()
        outer = node.copy()
        rest = [other.copy() for other in ctes if other is not cte]
        outer_with = outer.args.get("with_") or outer.args.get("with")
        if rest:
            outer_with.set("expressions", rest)
            outer_with.set("recursive", False)
        else:
            outer.set("with_", None)
        outer_text = outer.sql(dialect="spark")
        return Recursion(name, columns, with_before(body.this), with_before(body.expression), outer_text)
    raise SqlError("the query has no recursive CTE")


def explain(query: SqlQuery, where: Mapping[int, str] | None = None) -> str:
    """The query's layers as text: the plan as bound, the rules that changed it, and the plan that is lowered
    (each step, what it does in ``final/``, the clause it comes from, and its columns; and, given ``where``,
    what it says of each step, by its ``id``: where the step runs with the state on Spark's executors)."""
    lines = [f"{query.name}: reads {', '.join(query.inputs) or 'no table'}; "
             f"columns {', '.join(f'{n} {t}' for n, t in zip(query.columns, query.types, strict=True))}"]
    if query.bound is not None and query.plan is not None:
        lines += ["bound plan:", *query.bound.explain(1)]
        lines.append(f"rules that changed it: {', '.join(query.rules) or 'none'}")
        heading = "plan lowered to the dataflow" + (
            " (after |: where the step runs when a follow keeps its state on the executors, --state executors)"
            if where else "")
        lines += [f"{heading}:", *query.plan.explain(1, where=where)]
        if any(isinstance(step, Sort) or (isinstance(step, TopK) and not step.partition) for step in nodes(query.plan)):
            lines.append("note: the result is kept as a multiset; ORDER BY is the order to read it in")
    return "\n".join(lines)

