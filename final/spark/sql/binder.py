"""The binder: sqlglot's syntax tree, checked and typed, as a logical plan (``logical.py``).

``Binder(tables).query(node)`` resolves every table and column, types every
expression with Spark SQL's rules (``expressions.py``), and makes the plan:
FROM and its joins, WHERE, GROUP BY and HAVING, the SELECT list, DISTINCT,
ORDER BY and LIMIT, set operations, derived tables (with column lists), WITH
and WITH RECURSIVE, and subqueries in expressions (kept as ``Subquery``
expressions, each with its own plan and the outer columns it reads, for the
decorrelation rule to turn into joins). Everything outside the subset is
refused here, before a graph exists, with the construct's line and column.

The binder decides nothing physical: a comma join is a join on no condition
under the WHERE filter, which the rules push into it; keys, delta joins and
strategies are chosen later (``rules/``, ``lower.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sqlglot import exp

from . import windows
from .errors import SqlError, refuse
from .expressions import AGGREGATE_NAMES, Expressions, conjunction, construct, converted, field_at, is_aggregate
from .functions import spelled
from .logical import (
    LABEL_WIDTH,
    Aggregate,
    AggregateCall,
    Distinct,
    Filter,
    Join,
    One,
    Plan,
    Project,
    Recursive,
    RecursiveReference,
    Rename,
    Scan,
    SetOperation,
    Sort,
    SortKey,
    TopK,
    Window,
    WindowCall,
    produced,
    reads,
)
from .names import item_name
from .scalar import Field, Ref, Scalar, ids
from .types import BIGINT, BOOLEAN, DOUBLE, NULL, STRING, SqlType, bounded, wider


def clause_text(node: exp.Expression | None, prefix: str = "") -> str:
    """``node`` as Spark SQL text, shortened for a label."""
    text = prefix + (node.sql(dialect="spark", comments=False) if node is not None else "")
    return text if len(text) <= LABEL_WIDTH else text[: LABEL_WIDTH - 1] + "…"


UNSUPPORTED_CLAUSES = {
    "windows": "WINDOW (a named window)", "laterals": "LATERAL VIEW",
    "pivots": "PIVOT", "cluster": "CLUSTER BY", "distribute": "DISTRIBUTE BY", "sort": "SORT BY",
    "into": "INTO", "prewhere": "PREWHERE", "connect": "CONNECT BY", "match": "MATCH_RECOGNIZE",
}


@dataclass
class Cte:
    """A CTE in scope: its plan (bound once; every reference reads it under new ids)."""

    plan: Plan


Scopes = Sequence[Sequence[Field]]
"""The scopes around a subquery, innermost first: the columns a correlated subquery may read."""


class Binder:
    """Binds one query over ``tables`` (name -> columns as ``(name, SqlType)``); ``read`` collects the tables the
    query reads, in order."""

    def __init__(self, tables: Mapping[str, Sequence[tuple[str, SqlType]]], text: str = "") -> None:
        self.tables = {name.lower(): (name, columns) for name, columns in tables.items()}
        self.text = text
        self.read: list[str] = []

    # Queries

    def query(self, node: exp.Expression, ctes: Mapping[str, Cte], outer: Scopes = ()) -> Plan:
        """A SELECT, a set operation, or a parenthesized query, with its WITH clause."""
        ctes = dict(ctes)
        with_ = node.args.get("with_") or node.args.get("with")
        if with_ is not None:
            for cte in with_.expressions:
                name = cte.alias_or_name.lower()
                ctes[name] = Cte(self._cte(cte, name, ctes, bool(with_.args.get("recursive")), outer))
        if isinstance(node, exp.Subquery):
            return self._ordered(self.query(node.this, ctes, outer), node, None)
        if isinstance(node, exp.Select):
            return self.select(node, ctes, outer)
        if isinstance(node, (exp.Union, exp.Except, exp.Intersect)):
            return self.set_operation(node, ctes, outer)
        raise refuse(node, f"{construct(node)} is not a query this subset runs; write a SELECT")

    def _cte(self, cte: exp.CTE, name: str, ctes: Mapping[str, Cte], recursive: bool, outer: Scopes) -> Plan:
        body = cte.this
        columns = [column.name for column in (cte.args["alias"].columns if cte.args.get("alias") else [])]
        if recursive and _reads(body, name):
            plan = self._recursive(cte, body, name, columns, ctes)
        else:
            plan = self.query(body, ctes, outer)
        return _named(plan, columns, cte, name)

    def _recursive(self, cte: exp.CTE, body: exp.Expression, name: str, columns: list[str],
                   ctes: Mapping[str, Cte]) -> Plan:
        if not isinstance(body, exp.Union):
            raise refuse(body, f"a recursive CTE is (base) UNION [ALL] (recursive term); {name} is not")
        base_node, step_node = body.this, body.expression
        if _reads(base_node, name):
            raise refuse(base_node, f"the base of recursive CTE {name} must not read {name}")
        references = [table for table in step_node.find_all(exp.Table) if table.name.lower() == name]
        if len(references) != 1:
            raise refuse(step_node, f"the recursive term of {name} must read {name} exactly once")
        for bad in (inner for inner in step_node.walk() if is_aggregate(inner)):
            raise refuse(bad, f"the recursive term of {name} cannot aggregate ({spelled(bad)})")
        base = self.query(base_node, ctes)
        names = columns or [f.name for f in base.fields]
        if len(names) != len(base.fields):
            raise refuse(cte, f"{name} names {len(names)} columns but its base has {len(base.fields)}")
        fields = [Field(None, column, f.type) for column, f in zip(names, base.fields, strict=True)]
        variable = RecursiveReference(name, fields, clause_text(references[0], "FROM "))
        step = self.query(step_node, {**ctes, name: Cte(variable)})
        step = self._cast_to(step, fields, step_node, f"the recursive term of {name}")
        keep_all = not body.args.get("distinct")
        result = [Field(None, f.name, f.type) for f in fields]
        return Recursive(name, base, step, keep_all, result, clause_text(cte.args.get("alias"), "WITH RECURSIVE "))

    def _cast_to(self, plan: Plan, fields: list[Field], node: exp.Expression, what: str) -> Plan:
        """``plan``'s rows as ``fields``' types (widened), under new ids."""
        if len(plan.fields) != len(fields):
            raise refuse(node, f"{what} has {len(plan.fields)} columns where {len(fields)} are needed")
        exprs: list[Scalar] = []
        for position, (have, want) in enumerate(zip(plan.fields, fields, strict=True)):
            if wider(have.type, want.type) != want.type:
                raise refuse(node, f"{what}: column {position + 1} is {have.type}, which does not fit {want.type}")
            exprs.append(converted(Ref(have), want.type))
        return Project(plan, exprs, [Field(f.qualifier, f.name, e.type) for f, e in zip(plan.fields, exprs,
                                                                                         strict=True)], plan.clause)

    def set_operation(self, node: exp.Expression, ctes: Mapping[str, Cte], outer: Scopes) -> Plan:
        kind = {exp.Union: "UNION", exp.Except: "EXCEPT", exp.Intersect: "INTERSECT"}[type(node)]
        keep_all = not node.args.get("distinct")
        left, right = self.query(node.this, ctes, outer), self.query(node.expression, ctes, outer)
        if len(left.fields) != len(right.fields):
            raise refuse(node, f"{kind} needs the same number of columns on both sides, not {len(left.fields)} and "
                               f"{len(right.fields)}")
        types = []
        for position, (a, b) in enumerate(zip(left.fields, right.fields, strict=True)):
            common = wider(a.type, b.type)
            if common is None:
                raise refuse(node, f"{kind}: column {position + 1} is {a.type} on one side and {b.type} on the other")
            types.append(common)
        fields = [Field(None, f.name, kind_) for f, kind_ in zip(left.fields, types, strict=True)]
        left = self._cast_to(left, fields, node.this, f"the left side of {kind}")
        right = self._cast_to(right, fields, node.expression, f"the right side of {kind}")
        plan = SetOperation(kind, keep_all, left, right, fields, f"{kind}{' ALL' if keep_all else ''}")
        return self._ordered(plan, node, None)

    # SELECT

    def select(self, node: exp.Select, ctes: Mapping[str, Cte], outer: Scopes) -> Plan:
        for key, words in UNSUPPORTED_CLAUSES.items():
            if node.args.get(key):
                value = node.args[key]
                raise refuse(value[0] if isinstance(value, list) else value, f"{words} is not in the subset")
        distinct = node.args.get("distinct")
        if distinct is not None and distinct.args.get("on"):
            raise refuse(distinct, "DISTINCT ON is not in the subset")
        source = node.args.get("from_") or node.args.get("from")
        plan = self.from_item(source.this, ctes, outer) if source is not None else One()
        for join in node.args.get("joins") or []:
            plan = self.join(plan, join, ctes, outer)
        where = node.args.get("where")
        if where is not None:
            condition = self._expressions(plan.fields, "in WHERE", outer, ctes).boolean(where.this)
            plan = Filter(plan, condition, clause_text(where.this, "WHERE "))
        group = node.args.get("group")
        having = node.args.get("having")
        items = node.expressions
        qualify = node.args.get("qualify")
        if group is not None or having is not None or any(_aggregates(item) for item in items):
            if qualify is not None:
                raise refuse(qualify, "QUALIFY over a GROUP BY or an aggregate is not in the subset (Spark 4.3 "
                                      "resolves its names inconsistently there); filter the grouped query's rows "
                                      "in a query around it")
            plan, compiler = self.aggregate(plan, node, group, having, ctes, outer)
        else:
            compiler = self._expressions(plan.fields, "in this SELECT list", outer, ctes)
        found = [window for item in items for window in item.find_all(exp.Window)]
        if found:
            plan, compiler = self.windows(plan, found, compiler)
        if qualify is not None:
            qualifier = self._qualified(plan, items, compiler)
            inside = list(qualify.find_all(exp.Window))
            if inside:  # its own windows, whose names are QUALIFY's (a SELECT alias or a column)
                plan, qualifier = self.windows(plan, inside, qualifier)
            plan = Filter(plan, qualifier.boolean(qualify.this), clause_text(qualify.this, "QUALIFY "))
        exprs, fields = self.select_list(items, plan.fields, compiler)
        clause = clause_text(exp.Select(expressions=node.expressions))
        if distinct is not None:
            projected = Distinct(Project(plan, exprs, fields, clause), "SELECT DISTINCT")
            return self._ordered(projected, node, None)
        return self._ordered(Project(plan, exprs, fields, clause), node, compiler)

    def windows(self, plan: Plan, found: list[exp.Window], compiler: Expressions) -> tuple[Plan, Expressions]:
        """A ``Window`` step for each PARTITION BY and ORDER BY the window functions ``found`` use, one over the
        other, and the binder for the SELECT list that reads each function's value from its step."""
        steps: dict[str, tuple[windows.Spec, list[WindowCall], list[str], exp.Window]] = {}
        for node in found:
            text = node.sql(dialect="spark").lower()
            if any(text in texts for _, _, texts, _ in steps.values()):
                continue
            spec, call = windows.bind(node, compiler, lambda inner, scope: self._aggregation(inner, scope, (), True))
            key = f"{[str(part) for part in spec[0]]} {[str(key) for key in spec[1]]}"
            steps.setdefault(key, (spec, [], [], node))
            steps[key][1].append(call)
            steps[key][2].append(text)
        values: dict[str, Field] = {}
        for (partition, order), calls, texts, first in steps.values():
            added = [Field(None, f"window {len(values) + position}", call.type) for position, call in enumerate(calls)]
            values.update(zip(texts, added, strict=True))
            over = first.copy()
            over.set("this", exp.Star())
            clause = clause_text(None, over.sql(dialect="spark").replace("* OVER", "OVER", 1))
            plan = Window(plan, list(partition), list(order), calls, [*plan.fields, *added], clause)
        around = compiler.replace

        def replace(expression: exp.Expression) -> Scalar | None:
            if isinstance(expression, exp.Window):
                return Ref(values[expression.sql(dialect="spark").lower()])
            return around(expression) if around is not None else None

        return plan, Expressions(plan.fields, replace, where=compiler.where, outer=compiler.outer,
                                 subquery=compiler.subquery)

    @staticmethod
    def _qualified(plan: Plan, items: list[exp.Expression], compiler: Expressions) -> Expressions:
        """The binder for QUALIFY: the SELECT list's binder, where a name that is no column of the rows is a
        SELECT item's alias (``QUALIFY rn = 1``), as in Spark, and a name that is both is refused as ambiguous."""
        aliases = {item.alias.lower(): item.this for item in items if isinstance(item, exp.Alias)}
        around = compiler.replace

        def replace(expression: exp.Expression) -> Scalar | None:
            if isinstance(expression, exp.Column) and not expression.table:
                alias = aliases.get(expression.name.lower())
                if alias is not None and _resolves(expression, plan.fields):
                    raise refuse(expression, f"{expression.name} in QUALIFY names both a SELECT item and a column "
                                             f"of the rows: Spark calls it ambiguous; qualify the column or rename "
                                             f"the item")
                if alias is not None:
                    return compiler.bind(alias)
            return around(expression) if around is not None else None

        return Expressions(plan.fields, replace, where="in QUALIFY", outer=compiler.outer, subquery=compiler.subquery)

    def _expressions(self, fields: Sequence[Field], where: str, outer: Scopes, ctes: Mapping[str, Cte],
                     replace: Callable[[exp.Expression], Scalar | None] | None = None) -> Expressions:
        """An expression binder over ``fields`` in these outer scopes, whose subqueries see the CTEs in scope."""

        def subquery(query: exp.Expression, around: Expressions) -> tuple[Plan, tuple[Field, ...]]:
            plan = self.query(query, ctes, around.scopes())
            free = reads(plan) - produced(plan)
            known = {f.id: f for scope in around.scopes() for f in scope}
            return plan, tuple(known[i] for i in sorted(free) if i in known)

        return Expressions(fields, replace, where=where, outer=outer, subquery=subquery)

    def _ordered(self, plan: Plan, node: exp.Expression, compiler: Expressions | None) -> Plan:
        """``plan`` under its ORDER BY, LIMIT and OFFSET, if it has them.

        An ORDER BY item names a SELECT item (by ordinal, alias or the same
        expression) or, in a SELECT without DISTINCT, any expression over its
        input (``compiler``), computed as a hidden column and dropped after.
        """
        order, limit, offset = (node.args.get(key) for key in ("order", "limit", "offset"))
        if order is None and limit is None and offset is None:
            return plan
        if order is None:
            raise refuse(limit or offset, "LIMIT or OFFSET without ORDER BY picks rows in no stated order, which "
                                          "cannot be kept up to date; add an ORDER BY")
        keys: list[SortKey] = []
        hidden: list[Scalar] = []
        project = plan if isinstance(plan, Project) and compiler is not None else None
        for item in order.expressions:
            target = self._sort_target(item.this, plan, node, project, compiler, hidden)
            descending = bool(item.args.get("desc"))
            nulls_first = item.args.get("nulls_first")
            keys.append(SortKey(target, descending, (not descending) if nulls_first is None else bool(nulls_first)))
        if hidden:
            extra = [Field(None, f"_order{position}", scalar.type) for position, scalar in enumerate(hidden)]
            plan = Project(project.child, [*project.exprs, *hidden], [*project.fields, *extra], project.clause)
            computed = {id(scalar): Ref(f) for scalar, f in zip(hidden, extra, strict=True)}
            keys = [SortKey(computed.get(id(key.expression), key.expression), key.descending, key.nulls_first)
                    for key in keys]
        clause = clause_text(order)
        if limit is None and offset is None:
            sorted_: Plan = Sort(plan, keys, clause)
        else:
            sorted_ = TopK(plan, keys, _count(limit, "LIMIT"), _count(offset, "OFFSET") or 0,
                           clause_text(None, f"{clause} {(limit or offset).sql(dialect='spark')}"))
        if hidden:
            visible = project.fields
            sorted_ = Project(sorted_, [Ref(f) for f in visible], [Field(f.qualifier, f.name, f.type) for f in visible],
                              "drop the ORDER BY columns")
        return sorted_

    def _sort_target(self, item: exp.Expression, plan: Plan, node: exp.Expression, project: Project | None,
                     compiler: Expressions | None, hidden: list[Scalar]) -> Scalar:
        fields = plan.fields
        if isinstance(item, exp.Literal) and not item.is_string:
            position = int(item.this)
            if not 1 <= position <= len(fields):
                raise refuse(item, f"ORDER BY {position}: the SELECT list has {len(fields)} items")
            return Ref(fields[position - 1])
        selected = node.expressions if isinstance(node, exp.Select) else []
        if isinstance(item, exp.Column) and not item.table:
            named = [f for f in fields if f.name.lower() == item.name.lower()]
            if len(named) == 1:
                return Ref(named[0])
        for position, chosen in enumerate(selected):
            inner = chosen.this if isinstance(chosen, exp.Alias) else chosen
            if inner.sql(dialect="spark").lower() == item.sql(dialect="spark").lower():
                return Ref(fields[position])
        if project is None or compiler is None:
            if isinstance(item, exp.Column):
                field_at(fields, item)  # an unknown column is reported as such
            raise refuse(item, "ORDER BY here takes the result's columns (by name or position)")
        bound = compiler.bind(item)
        hidden.append(bound)
        return bound

    def select_list(self, items: list[exp.Expression], fields: list[Field],
                    compiler: Expressions) -> tuple[list[Scalar], list[Field]]:
        exprs: list[Scalar] = []
        out: list[Field] = []
        for item in items:
            if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star)):
                if compiler.replace is not None:
                    raise refuse(item, "SELECT * with GROUP BY is not in the subset; name the columns")
                qualifier = item.table.lower() if isinstance(item, exp.Column) else ""
                chosen = [f for f in fields if not qualifier or (f.qualifier or "").lower() == qualifier]
                if not chosen:
                    raise refuse(item, f"{item.sql()} matches no table here")
                for f in chosen:
                    exprs.append(Ref(f))
                    out.append(Field(None, f.name, f.type))
                continue
            inner = item.this if isinstance(item, exp.Alias) else item
            bound = compiler.bind(inner)
            name = item.alias if isinstance(item, exp.Alias) else item_name(inner, self.text, compiler.bound)
            exprs.append(bound)
            out.append(Field(None, name, bound.type))
        return exprs, out

    def from_item(self, node: exp.Expression, ctes: Mapping[str, Cte], outer: Scopes) -> Plan:
        if isinstance(node, exp.Table):
            if node.args.get("db") or node.args.get("catalog"):
                raise refuse(node, f"{node.sql()}: name a bound table without a database")
            if node.args.get("joins") or node.args.get("laterals") or node.args.get("pivots"):
                raise refuse(node, f"{node.sql()[:40]} is not in the subset")
            name = node.name.lower()
            alias = node.alias or node.name
            if name in ctes:
                plan = ctes[name].plan
                columns = _alias_columns(node)
                fields = [Field(alias, f.name, f.type) for f in plan.fields]
                return _named(Rename(plan, fields, plan.clause), columns, node, alias)
            if name in self.tables:
                table, columns = self.tables[name]
                if table not in self.read:
                    self.read.append(table)
                scan = Scan(table, [Field(alias, column, kind) for column, kind in columns], f"FROM {table}")
                return _named(scan, _alias_columns(node), node, alias)
            known = ", ".join(name for name, _ in self.tables.values()) or "none"
            raise refuse(node, f"table {node.name} is not bound (bound: {known}); bind it with --table "
                               f"{node.name}=PATH")
        if isinstance(node, exp.Subquery):
            plan = self.query(node, ctes, outer)
            alias = node.alias or None
            renamed = Rename(plan, [Field(alias, f.name, f.type) for f in plan.fields], plan.clause)
            return _named(renamed, _alias_columns(node), node, alias or "the subquery")
        raise refuse(node, f"{construct(node)} in FROM is not in the subset; FROM takes tables, CTEs and subqueries")

    def join(self, left: Plan, node: exp.Join, ctes: Mapping[str, Cte], outer: Scopes) -> Plan:
        if node.args.get("using"):
            raise refuse(node, "JOIN ... USING is not in the subset; write ON a.column = b.column")
        if node.args.get("method"):
            raise refuse(node, f"{node.args['method']} JOIN is not in the subset")
        side = (node.args.get("side") or "").upper()
        kind = (node.args.get("kind") or "").upper()
        if kind in ("SEMI", "ANTI") or kind not in ("", "INNER", "OUTER", "CROSS"):
            raise refuse(node, f"{side} {kind} JOIN is not in the subset".replace("  ", " ").strip())
        right = self.from_item(node.this, ctes, outer)
        condition = node.args.get("on")
        if kind == "CROSS" and condition is not None:
            raise refuse(node, "CROSS JOIN takes no ON")
        if side and condition is None:
            raise refuse(node, f"{side} JOIN needs an ON clause")
        clause = f"{side + ' ' if side else ''}JOIN {node.this.sql(dialect='spark')}"
        bound = None
        if condition is not None:
            clause += f" ON {condition.sql(dialect='spark')}"
            compiler = Expressions([*left.fields, *right.fields], where="in ON")
            bound = conjunction([compiler.boolean(part) for part in _conjuncts(condition)])
        return Join(left, right, side or "INNER", bound, clause_text(None, clause))

    # GROUP BY

    def aggregate(self, plan: Plan, node: exp.Select, group: exp.Group | None, having: exp.Having | None,
                  ctes: Mapping[str, Cte], outer: Scopes) -> tuple[Plan, Expressions]:
        """The Aggregate step, and the binder for the SELECT list, HAVING and ORDER BY over its rows."""
        if group is not None:
            for key in ("rollup", "cube", "grouping_sets", "totals"):
                if group.args.get(key):
                    raise refuse(group, f"GROUP BY {key.upper().replace('_', ' ')} is not in the subset")
        inputs = self._expressions(plan.fields, "in GROUP BY", outer, ctes)
        group_nodes = [self._group_node(item, node, plan.fields)
                       for item in (group.expressions if group is not None else [])]
        # Each key bound where it is first written (the SELECT list's copy), so a refusal points there.
        keys = [inputs.bind(_first_copy(item, node.expressions)) for item in group_nodes]
        calls: dict[str, tuple[exp.Expression, int]] = {}
        order = node.args.get("order")
        for item in [*node.expressions, *([having.this] if having is not None else []),
                     *(order.expressions if order is not None else [])]:
            for call in _aggregates(item):
                calls.setdefault(call.sql(dialect="spark").lower(), (call, len(calls)))
        arguments = self._expressions(plan.fields, "inside an aggregate", outer, ctes)
        aggregations = [self._aggregation(call, arguments, keys) for call, _ in calls.values()]
        fields = [Field(None, f"key{i}", key.type) for i, key in enumerate(keys)] + [
            Field(None, f"agg{i}", a.type) for i, a in enumerate(aggregations)]
        aggregated = Aggregate(plan, keys, aggregations, fields, group is None,
                               clause_text(group, "") if group is not None else "global aggregate")
        width = len(keys)

        def replace(expression: exp.Expression) -> Scalar | None:
            if is_aggregate(expression):
                found = calls.get(expression.sql(dialect="spark").lower())
                if found is not None:
                    return Ref(fields[width + found[1]])
            for position, grouped in enumerate(group_nodes):
                if _same(expression, grouped, plan.fields):
                    return Ref(fields[position])
            if isinstance(expression, exp.Column) and not isinstance(expression.this, exp.Star):
                alias = aliases.get(expression.name.lower()) if not expression.table else None
                if alias is not None and not _resolves(expression, plan.fields):
                    return compiler.bind(alias)  # HAVING may name a SELECT item by its alias
                if _resolves(expression, plan.fields) or not any(_matches_any(expression, scope) for scope in outer):
                    field_at(plan.fields, expression)  # an unknown column is reported as such first
                    raise refuse(expression, f"column {expression.sql()} is neither in GROUP BY nor inside an "
                                             f"aggregate")
            return None

        aliases = {item.alias.lower(): item.this for item in node.expressions if isinstance(item, exp.Alias)}
        result: Plan = aggregated
        compiler = self._expressions(fields, "after GROUP BY", outer, ctes, replace)
        if having is not None:
            result = Filter(result, compiler.boolean(having.this), clause_text(having.this, "HAVING "))
        return result, compiler

    def _group_node(self, item: exp.Expression, select: exp.Select, fields: list[Field]) -> exp.Expression:
        """A GROUP BY item: an ordinal (``GROUP BY 1``) or a SELECT alias stands for that SELECT item."""
        items = select.expressions
        if isinstance(item, exp.Literal) and not item.is_string:
            position = int(item.this)
            if not 1 <= position <= len(items):
                raise refuse(item, f"GROUP BY {position}: the SELECT list has {len(items)} items")
            chosen = items[position - 1]
            return chosen.this if isinstance(chosen, exp.Alias) else chosen
        if isinstance(item, exp.Column) and not item.table and not _resolves(item, fields):
            # A name that is no input column may be a SELECT alias (an input column wins, as in Spark).
            aliases = {selected.alias.lower(): selected.this for selected in items if isinstance(selected, exp.Alias)}
            if item.name.lower() in aliases:
                return aliases[item.name.lower()]
        if _aggregates(item):
            raise refuse(item, "GROUP BY cannot hold an aggregate")
        return item

    def _aggregation(self, call: exp.Expression, arguments: Expressions, keys: Sequence[Scalar],
                     window: bool = False) -> AggregateCall:
        """``call`` bound over ``arguments`` (``keys``: the GROUP BY's, for ``any_value``); in a ``window``
        (``SUM(SUM(x)) OVER ()``) its argument may read the GROUP BY's aggregates, which ``arguments`` binds."""
        function = _function(call)
        if function is None:
            raise refuse(call, f"the aggregate {spelled(call)}() is not in the subset (COUNT, SUM, AVG, MIN, MAX, "
                               f"count_if, bool_and, bool_or, stddev, variance and their _samp and _pop forms are, "
                               f"and any_value of a grouped expression)")
        inner = _argument(call)
        if inner is None and not isinstance(call, exp.Count):
            raise refuse(call, f"{spelled(call)}() takes an argument")
        distinct = isinstance(inner, exp.Distinct)
        if distinct:
            if len(inner.expressions) != 1:
                raise refuse(call, f"{spelled(call)}(DISTINCT ...) takes one expression here")
            inner = inner.expressions[0]
        text = call.sql(dialect="spark").lower()
        if isinstance(call, exp.Count) and (inner is None or isinstance(inner, exp.Star)):
            return AggregateCall("count", None, False, BIGINT, text)
        if isinstance(call, exp.Count) and call.expressions:
            raise refuse(call, "COUNT of several expressions is not in the subset")
        if _aggregates(inner) and not window:
            raise refuse(call, "an aggregate inside an aggregate is not SQL")
        if function in ("count_if", "bool_and", "bool_or"):
            condition = arguments.boolean(inner)
            if distinct:
                raise refuse(call, f"{spelled(call)}(DISTINCT ...) is not in the subset")
            return AggregateCall(function, condition, False, BIGINT if function == "count_if" else BOOLEAN, text)
        argument = arguments.bind(inner)
        if isinstance(call, exp.Count):
            return AggregateCall("count", argument, distinct, BIGINT, text)
        if distinct:
            raise refuse(call, f"{spelled(call)}(DISTINCT ...) is not in the subset; COUNT(DISTINCT ...) is")
        kind = argument.type
        if function == "any_value":
            return self._any_value(call, argument, keys, text)
        if function in ("min", "max"):
            if kind == NULL:
                raise refuse(call, f"{spelled(call)} of NULL has no type; CAST it")
            return AggregateCall(function, argument, False, kind, text)
        if function in MOMENTS:
            if not (kind.numeric or kind in (STRING, NULL)):
                raise refuse(call, f"{spelled(call)}() needs numbers, not {kind}")
            return AggregateCall(function, converted(argument, DOUBLE), False, DOUBLE, text)  # Spark's input type
        if not kind.numeric:
            raise refuse(call, f"{spelled(call)} needs numbers, not {kind}")
        if kind == DOUBLE:
            result = DOUBLE
        elif kind.integral:
            result = BIGINT if function == "sum" else DOUBLE
        else:
            result = bounded(kind.precision + 10, kind.scale) if function == "sum" else bounded(
                kind.precision + 4, kind.scale + 4)
        return AggregateCall(function, argument, False, result, text)

    def _any_value(self, call: exp.Expression, argument: Scalar, keys: Sequence[Scalar], text: str) -> AggregateCall:
        """``any_value(x)`` where every row of a group has the same ``x``: a constant, a GROUP BY expression, or
        an expression of grouped columns only. Elsewhere Spark returns the value of whichever row it reads first,
        which depends on its partitions and their order, so no answer kept here could be checked against it."""
        grouped = {key.id for key in keys if isinstance(key, Ref)}
        if not (ids(argument) <= grouped or str(argument) in {str(key) for key in keys}):
            raise refuse(call, f"any_value({_argument(call).sql(dialect='spark')}) is Spark's value of whichever row "
                               f"it reads first, which depends on how it partitions and orders the rows, so it "
                               f"cannot be kept up to date or checked; use MIN or MAX, or group by the expression "
                               f"(any_value of a grouped expression or a constant is in the subset)")
        return AggregateCall("any_value", argument, False, argument.type, text)


AGGREGATES = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max",
              exp.CountIf: "count_if", exp.LogicalAnd: "bool_and", exp.LogicalOr: "bool_or",
              exp.Stddev: "stddev_samp", exp.StddevSamp: "stddev_samp", exp.StddevPop: "stddev_pop",
              exp.Variance: "var_samp", exp.VariancePop: "var_pop", exp.AnyValue: "any_value"}
"""The aggregates in the subset, by sqlglot's node (``variance`` and ``var_samp`` are one, ``stddev`` is
``stddev_samp``), as ``AggregateCall.function`` names them."""
MOMENTS = ("var_samp", "var_pop", "stddev_samp", "stddev_pop")
"""The aggregates of a DOUBLE's spread: Spark casts their argument to DOUBLE."""


def _function(call: exp.Expression) -> str | None:
    """What aggregate ``call`` is in the subset (``AggregateCall.function``), or None."""
    if isinstance(call, (exp.Anonymous, exp.Any)):
        return AGGREGATE_NAMES.get(spelled(call))
    return AGGREGATES.get(type(call))


def _argument(call: exp.Expression) -> exp.Expression | None:
    """An aggregate call's argument (``any(x)``'s is inside the parentheses sqlglot keeps).

    Raises:
        SqlError: an aggregate sqlglot does not know, given other than one argument.
    """
    if isinstance(call, exp.Anonymous):
        if len(call.expressions) != 1:
            raise refuse(call, f"{spelled(call)}() takes one argument")
        return call.expressions[0]
    if isinstance(call, exp.Any):
        return call.this.this
    return call.this


def _named(plan: Plan, columns: list[str], node: exp.Expression, what: str) -> Plan:
    """``plan`` with its columns renamed to ``columns`` (a column list: ``AS t (a, b)``), if given."""
    if not columns:
        return plan
    if len(columns) != len(plan.fields):
        raise refuse(node, f"{what} names {len(columns)} columns but its query has {len(plan.fields)}")
    qualifier = plan.fields[0].qualifier if plan.fields else None
    fields = [Field(qualifier if isinstance(plan, (Rename, Scan)) else None, column, f.type, f.id)
              for column, f in zip(columns, plan.fields, strict=True)]
    return Rename(plan, fields, plan.clause)


def _alias_columns(node: exp.Expression) -> list[str]:
    alias = node.args.get("alias")
    return [column.name for column in alias.columns] if isinstance(alias, exp.TableAlias) and alias.columns else []


def _count(node: exp.Expression | None, word: str) -> int | None:
    """A LIMIT's or OFFSET's number (a non-negative integer literal)."""
    if node is None:
        return None
    value = node.expression if isinstance(node, (exp.Limit, exp.Offset)) else node
    if not (isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit()):
        raise refuse(node, f"{word} takes a non-negative integer literal here")
    return int(value.this)


def _conjuncts(condition: exp.Expression | None) -> list[exp.Expression]:
    if condition is None:
        return []
    while isinstance(condition, exp.Paren):
        condition = condition.this
    if isinstance(condition, exp.And):
        return [*_conjuncts(condition.this), *_conjuncts(condition.expression)]
    return [condition]


def _resolves(column: exp.Column, fields: list[Field]) -> bool:
    try:
        field_at(fields, column)
    except SqlError:
        return False
    return True


def _matches_any(column: exp.Column, fields: Sequence[Field]) -> bool:
    return _resolves(column, list(fields))


def _aggregates(node: exp.Expression) -> list[exp.Expression]:
    """The aggregate calls in ``node``, not looking into subqueries (theirs are their own); a window function's
    own aggregate (``SUM(x) OVER (...)``) is not one, an aggregate inside it (``SUM(SUM(x)) OVER``) is."""
    found = []
    for inner in node.walk(prune=lambda n: isinstance(n, (exp.Subquery, exp.Exists)) or (
            isinstance(n, exp.Select) and n is not node)):
        if is_aggregate(inner) and not _windowed(inner):
            found.append(inner)
    return found


def _windowed(call: exp.Expression) -> bool:
    """Whether ``call`` is a window function's own (under its OVER, perhaps wrapped in IGNORE/RESPECT NULLS)."""
    parent = call.parent
    if isinstance(parent, (exp.IgnoreNulls, exp.RespectNulls)):
        call, parent = parent, parent.parent
    return isinstance(parent, exp.Window) and call.arg_key == "this"


def _first_copy(node: exp.Expression, items: list[exp.Expression]) -> exp.Expression:
    """The first expression of ``items`` written as ``node`` is (the same text), outside aggregates and window
    functions, or ``node`` itself."""
    text = node.sql(dialect="spark").lower()
    for item in items:
        for inner in item.walk(prune=lambda n: isinstance(n, (exp.AggFunc, exp.Window, exp.Subquery))):
            if type(inner) is type(node) and inner.sql(dialect="spark").lower() == text:
                return inner
    return node


def _same(node: exp.Expression, grouped: exp.Expression, fields: list[Field]) -> bool:
    """Whether ``node`` is the GROUP BY expression ``grouped``: the same column, or the same text."""
    if isinstance(node, exp.Column) and isinstance(grouped, exp.Column):
        try:
            return field_at(fields, node) == field_at(fields, grouped)
        except SqlError:
            return False
    if type(node) is not type(grouped):
        return False
    return node.sql(dialect="spark").lower() == grouped.sql(dialect="spark").lower()


def _reads(node: exp.Expression, name: str) -> bool:
    return any(table.name.lower() == name for table in node.find_all(exp.Table))

