"""Your own SQL, kept up to date: a subset of Spark SQL compiled into ``final/`` dataflows.

``compile_sql(text, tables)`` parses one query with sqlglot (Spark's
dialect), plans it (``planner``) with Spark SQL's types and values
(``types``, ``expressions``), and returns a ``SqlQuery``: a catalog
``Query`` whose ``build`` makes the dataflow from one input stream per table
it reads, and whose ``sql`` is the text Spark SQL runs from scratch. The
pipeline runs it like the built-in queries: ``python -m final.spark run
--sql FILE.sql`` checks it against Spark SQL at every version, ``follow``
keeps it up to date, ``explain`` prints the plan and draws the dataflow.

What is in the subset, what is refused and how types behave is the
README's "Your own SQL". A query outside the subset raises ``SqlError``
before anything runs, naming the construct and its line and column; a value
Spark SQL would raise an error for (overflow, division by zero, an invalid
cast) raises ``SqlRuntimeError`` inside the dataflow, at that version.

This package imports nothing from Spark: executors compile a query again
from its text (``SqlQuery.recipe``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from ..catalog import DATASETS, Query, Table
from .errors import SqlError, SqlRuntimeError, refuse
from .expressions import Field
from .planner import Aggregate, Env, Filter, Plan, Planner, Project, Rename, Scan
from .types import SqlType

__all__ = ["SqlError", "SqlQuery", "SqlRuntimeError", "compile_sql", "explain"]


@dataclass(frozen=True)
class SqlQuery(Query):
    """A query compiled from SQL: a catalog ``Query``, with the output's Spark types and the plan.

    ``types`` are the output columns' types as Spark's ``simpleString``
    spells them (``bigint``, ``decimal(10,2)``); ``schemas`` the tables it
    reads; ``recursive`` is ``"UNION"`` or ``"UNION ALL"`` for a WITH
    RECURSIVE query (Spark SQL runs only the second: the first is checked
    with a loop of Spark SQL rounds, ``truth.py``), else None.
    """

    types: tuple[str, ...] = ()
    schemas: dict[str, Table] = field(default_factory=dict)
    recursive: str | None = None
    plan: Plan | None = field(default=None, compare=False, repr=False)

    @property
    def recipe(self) -> tuple[str, str, dict[str, Table]]:
        """What an executor needs to compile this query again: its name, text and tables (all picklable)."""
        return self.name, self.sql, self.schemas


def compile_sql(text: str, tables: Mapping[str, Table], name: str = "query", source: str = "") -> SqlQuery:
    """The query in ``text`` over ``tables`` (name -> ``Table``), as a ``SqlQuery`` named ``name``.

    Raises:
        SqlError: ``text`` is not one query of the subset over these tables; the message names the construct,
            its line and column.
    """
    node = parse(text)
    fields = {}
    for table in tables.values():
        try:
            fields[table.name] = [Field(table.name, column, SqlType.of_text(kind)) for column, kind in table.columns]
        except ValueError as error:
            raise SqlError(f"table {table.name}: {error}") from None
    planner = Planner(fields)
    plan = planner.query(node, {})
    inputs = tuple(planner.read)
    names = _unique([f.name for f in plan.fields])
    recursive = _recursion(node)

    def build(*streams: Any) -> Any:
        stream = streams[0] if streams else None
        builder = stream.builder if stream is not None else _builder_missing(name)
        return plan.build(Env(dict(zip(inputs, streams, strict=True)), builder))

    datasets = [dataset for dataset, members in DATASETS.items() if set(inputs) <= set(members)]
    partition_by = _partitioning(plan, inputs) if not recursive else None
    return SqlQuery(
        name=name, dataset=datasets[0] if datasets and inputs else "sql", inputs=inputs, columns=tuple(names),
        build=build, sql=text, source=source or f"{name}.sql", key=_key(plan, names),
        partition_by=partition_by, types=tuple(str(f.type) for f in plan.fields),
        schemas={table: tables[table] for table in inputs}, recursive=recursive, plan=plan,
    )


def _builder_missing(name: str) -> Any:
    raise SqlError(f"{name}: a query must read at least one table")


def parse(text: str) -> exp.Expression:
    """``text`` as one sqlglot expression (Spark's dialect); a SqlError for a syntax error or several statements."""
    try:
        for token in sqlglot.tokenize(text, read="spark"):
            if token.text.upper() == "TRY_CAST":
                raise SqlError("TRY_CAST is not in the subset (it turns errors into NULL); use CAST", token.line,
                               token.col - len(token.text) + 1)
        statements = [statement for statement in sqlglot.parse(text, read="spark") if statement is not None]
    except ParseError as error:
        found = error.errors[0] if error.errors else {}
        raise SqlError(f"syntax error: {found.get('description') or error}", found.get("line") or 0,
                       found.get("col") or 0) from None
    except TokenError as error:
        raise SqlError(f"syntax error: {error}") from None
    if len(statements) != 1:
        raise SqlError(f"a .sql file holds one query, not {len(statements)}", *(
            _position(statements[1]) if len(statements) > 1 else (0, 0)))
    return statements[0]


def _position(node: exp.Expression) -> tuple[int, int]:
    error = refuse(node, "")
    return error.line, error.column


def _unique(names: list[str]) -> list[str]:
    """Output column names made unique (``name``, ``name_2``, ...), as an output table needs them."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen[name.lower()] = seen.get(name.lower(), 0) + 1
        out.append(name if count == 1 else f"{name}_{count}")
    return out


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
    """``plan`` below any renames."""
    while isinstance(plan, Rename):
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
    positions = [expr.position for expr in project.exprs]
    if not all(key in positions for key in range(len(aggregate.keys))):
        return None
    return tuple(names[positions.index(key)] for key in range(len(aggregate.keys)))


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
    for key in aggregate.keys:
        if key.position is not None:
            return {below.table: below.fields[key.position].name}
    return None


def explain(query: SqlQuery) -> str:
    """The plan as text: each step, what it does in ``final/``, the clause it comes from, and its columns."""
    lines = [f"{query.name}: reads {', '.join(query.inputs) or 'no table'}; "
             f"columns {', '.join(f'{n} {t}' for n, t in zip(query.columns, query.types, strict=True))}"]
    if query.plan is not None:
        lines += query.plan.explain(1)
    return "\n".join(lines)
