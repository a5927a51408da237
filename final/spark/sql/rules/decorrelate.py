"""Decorrelation: every subquery in an expression becomes a join of the query it sits in.

A subquery is evaluated, in SQL's definition, once per row of the query
around it; kept up to date that way, a change to the subquery's table would
mean re-running it for every outer row. So each becomes a join that final/
keeps up to date like any other (Neumann and Kemper, "Unnesting Arbitrary
Queries", 2015; Materialize's HIR→MIR lowering does the same):

- a correlated subquery's conditions that read the outer query (in its
  WHERE) are pulled out of it and become the join's condition; the inner
  columns they read are passed up through its SELECT, and an aggregate in
  between groups by them as well, so the subquery is computed once per
  correlation value, not per outer row;
- ``EXISTS`` and ``x IN (subquery)``, AND-ed into a WHERE, become a
  semijoin (each outer row kept once if a row matches), ``NOT EXISTS`` an
  antijoin, and ``x NOT IN (subquery)`` a null-aware antijoin: a row is kept
  only when no subquery row equals x, none is NULL, and x is not NULL unless
  the subquery is empty (SQL's three-valued NOT IN, true only then);
- a scalar subquery becomes a LEFT join with its one value per correlation
  value; a row the join finds nothing for gets the subquery's value over no
  rows (NULL, or 0 for a COUNT), and an uncorrelated one that gives two rows
  fails the query, as Spark's does.

What stays refused, with the subquery's position: EXISTS or IN inside an OR
or a SELECT list, a correlated reference outside the subquery's WHERE, a
correlated scalar subquery that does not aggregate (Spark refuses it too).
"""

from __future__ import annotations

import operator
from dataclasses import replace

from ..errors import SqlError, SqlRuntimeError, refuse
from ..expressions import comparison, conjunction
from ..logical import (
    COUNTS,
    Aggregate,
    AtMostOne,
    Distinct,
    Filter,
    Join,
    Plan,
    Project,
    Rename,
    Sort,
    nodes,
    produced,
    reads,
    transform,
)
from ..scalar import Call, Field, Ref, Scalar, Subquery, conjuncts, evaluator, ids, substitute, walk


def apply(plan: Plan) -> Plan:
    """``plan`` with no ``Subquery`` left in any expression.

    Raises:
        SqlError: a subquery in a position or shape this rule does not unnest (named, with its position).
    """
    return transform(plan, _node)


def _node(node: Plan) -> Plan | None:
    if not any(isinstance(part, Subquery) for scalar in node.expressions() for part in walk(scalar)):
        return None
    if isinstance(node, Filter):
        return _filter(node)
    if isinstance(node, Project):
        rows, exprs = _scalars(node.child, node.exprs)
        return replace(node, child=rows, exprs=exprs)
    found = next(part for scalar in node.expressions() for part in walk(scalar) if isinstance(part, Subquery))
    raise refuse(found.node, f"a subquery in {node.clause} is not in the subset; subqueries go in WHERE, HAVING "
                             f"and SELECT")


def _filter(node: Filter) -> Plan:
    """A WHERE (or HAVING) with subqueries: its EXISTS and IN conjuncts as semi- and antijoins, its scalar
    subqueries as left joins, the rest as a filter over them, and the input's columns as they were."""
    rows = node.child
    rest: list[Scalar] = []
    for part in conjuncts(node.condition):
        negated = isinstance(part, Call) and part.name == "NOT" and isinstance(part.args[0], Subquery)
        inner = part.args[0] if negated else part
        if isinstance(inner, Subquery) and inner.kind in ("exists", "in"):
            rows = _semijoin(rows, inner, negated)
        else:
            rest.append(part)
    for part in rest:
        for found in walk(part):
            if isinstance(found, Subquery) and found.kind != "scalar":
                raise refuse(found.node, f"{'EXISTS' if found.kind == 'exists' else 'IN (subquery)'} is in the "
                                         f"subset as a condition AND-ed into WHERE or HAVING, not inside "
                                         f"{'OR, NOT or CASE' if found is not part else 'this expression'}")
    rows, rest = _scalars(rows, rest)
    kept: Plan = rows if not rest else Filter(rows, conjunction(rest), node.clause)
    if [f.id for f in kept.fields] == [f.id for f in node.child.fields]:
        return kept
    return Project(kept, [Ref(f) for f in node.child.fields], list(node.child.fields), "the columns before")


def _semijoin(rows: Plan, subquery: Subquery, negated: bool) -> Plan:
    """``rows`` joined to an EXISTS or IN subquery: a semijoin, or (negated) an antijoin."""
    inner, pulled = _unnested(subquery)
    if (subquery.kind == "exists" or negated) and any(isinstance(node, Aggregate) and node.correlated
                                                      for node in nodes(inner)):
        raise refuse(subquery.node, "a correlated EXISTS or NOT IN over an aggregate without GROUP BY is not in the "
                                    "subset: that aggregate gives a row even where no row matches, which a join "
                                    "does not; compare the aggregate with a scalar subquery instead")
    kind = "ANTI" if negated else "SEMI"
    clause = f"{'NOT ' if negated else ''}{'EXISTS' if subquery.kind == 'exists' else 'IN'} (subquery)"
    if subquery.kind == "exists":
        return Join(rows, inner, kind, conjunction(pulled), clause)
    value, column = subquery.value, Ref(inner.fields[0])
    if negated:
        for part in pulled:
            if not _equality(part, produced(inner)):
                raise refuse(subquery.node, "a correlated NOT IN correlates by equalities here (a = outer.b); "
                                            "write NOT EXISTS for other conditions")
        return Join(rows, inner, "ANTI", conjunction(pulled), clause, null_aware=(value, column))
    equal = comparison("=", operator.eq, value, column, subquery.node)
    return Join(rows, inner, "SEMI", conjunction([*pulled, equal]), clause)


def _scalars(rows: Plan, exprs: list[Scalar]) -> tuple[Plan, list[Scalar]]:
    """``rows`` left-joined to each scalar subquery in ``exprs``, and ``exprs`` reading the joined values."""
    found: dict[int, Ref] = {}

    def join(part: Scalar) -> Scalar | None:
        nonlocal rows
        if not isinstance(part, Subquery):
            return None
        if id(part) not in found:
            rows, value = _scalar_join(rows, part)
            found[id(part)] = value
        return found[id(part)]

    replaced = [substitute(scalar, join) for scalar in exprs]  # joins ``rows`` as it goes
    return rows, replaced


SCALAR_JOIN = "scalar subquery"
"""The clause of the LEFT join a scalar subquery becomes: one row of the subquery's for each outer row, its value
the right side's first column."""


def _scalar_join(rows: Plan, subquery: Subquery) -> tuple[Plan, Ref]:
    inner, pulled = _unnested(subquery)
    pad = None
    if pulled:
        body = _aggregate_body(inner)
        if body is None:
            raise refuse(subquery.node, "a correlated scalar subquery must aggregate (one value per outer row), as "
                                        "Spark requires; add MIN(...), MAX(...) or another aggregate")
        pad = _over_no_rows(inner, body, subquery)
    else:
        inner = AtMostOne(inner, SCALAR_JOIN)
    joined = Join(rows, inner, "LEFT", conjunction(pulled), SCALAR_JOIN, pad=pad)
    return joined, Ref(inner.fields[0])


def _unnested(subquery: Subquery) -> tuple[Plan, list[Scalar]]:
    """The subquery's plan, itself decorrelated, with the conditions that read the outer query pulled out of
    it (returned: they read the outer query's columns and the plan's)."""
    plan = apply(subquery.plan)
    outer = {f.id for f in subquery.correlated}
    if not outer:
        return plan, []
    plan, pulled = _pull(plan, outer, subquery)
    left = reads(plan) - produced(plan)
    if left & outer:
        raise refuse(subquery.node, "the subquery reads the outer query's columns outside its WHERE, which is not "
                                    "in the subset; correlate in the subquery's WHERE")
    return plan, pulled


def _pull(plan: Plan, outer: set[int], subquery: Subquery) -> tuple[Plan, list[Scalar]]:
    """``plan`` without its conditions that read ``outer`` ids, and those conditions, which read only
    ``outer`` ids and columns ``plan`` now produces."""
    if isinstance(plan, Filter):
        child, pulled = _pull(plan.child, outer, subquery)
        local = [part for part in conjuncts(plan.condition) if not ids(part) & outer]
        moved = [part for part in conjuncts(plan.condition) if ids(part) & outer]
        kept = Filter(child, conjunction(local), plan.clause) if local else child
        return kept, [*pulled, *moved]
    if isinstance(plan, Project):
        child, pulled = _pull(plan.child, outer, subquery)
        if not pulled:
            return plan, []
        own = {f.id for f in plan.fields}
        needed = [f for f in child.fields if f.id in set().union(*(ids(part) for part in pulled)) and f.id not in own]
        return Project(child, [*plan.exprs, *(Ref(f) for f in needed)], [*plan.fields, *needed], plan.clause), pulled
    if isinstance(plan, Aggregate):
        child, pulled = _pull(plan.child, outer, subquery)
        if not pulled:
            return plan, []
        inside = produced(child)
        keys, extra, conditions = [], [], []
        for part in pulled:
            sides = _equality(part, inside)
            if sides is None:
                raise refuse(subquery.node, "a correlated subquery with an aggregate correlates by equalities "
                                            "(inner.a = outer.b); this one has "
                                            f"{part}")
            inner_side, outer_side = sides
            key = Field(None, f"correlation{len(keys)}", inner_side.type)
            keys.append(inner_side)
            extra.append(key)
            conditions.append(comparison("=", operator.eq, Ref(key), outer_side, subquery.node))
        width = len(plan.keys)
        fields = [*plan.fields[:width], *extra, *plan.fields[width:]]
        grouped = Aggregate(child, [*plan.keys, *keys], plan.calls, fields, False, plan.clause,
                            correlated=plan.whole)
        return grouped, conditions
    if isinstance(plan, Distinct):
        child, pulled = _pull(plan.child, outer, subquery)
        if pulled and not all(_equality(part, produced(child)) for part in pulled):
            raise refuse(subquery.node, "a correlated SELECT DISTINCT subquery correlates by equalities here")
        return (Distinct(child, plan.clause), pulled) if pulled else (plan, [])
    if isinstance(plan, Sort):
        return _pull(plan.child, outer, subquery)  # a subquery's rows have no order
    if isinstance(plan, Rename) and not reads(plan.child) & outer:
        return plan, []
    return plan, []


def _equality(part: Scalar, inside: set[int]) -> tuple[Scalar, Scalar] | None:
    """``part`` as (the side reading ``inside`` ids, the other side) when it is ``a = b`` with one side reading
    only ``inside`` ids and the other none of them."""
    if not (isinstance(part, Call) and part.name == "=" and len(part.args) == 2):
        return None
    a, b = part.args
    if ids(a) and ids(a) <= inside and not ids(b) & inside:
        return a, b
    if ids(b) and ids(b) <= inside and not ids(a) & inside:
        return b, a
    return None


def _aggregate_body(plan: Plan) -> Aggregate | None:
    """The aggregate a decorrelated scalar subquery computes, if it is ``SELECT f(aggregates) [HAVING]`` over
    one that was global before correlation made it grouped."""
    for node in nodes(plan):
        if isinstance(node, Aggregate):
            return node if node.correlated else None
        if not isinstance(node, (Project, Filter)):
            return None
    return None


def _over_no_rows(plan: Plan, body: Aggregate, subquery: Subquery) -> tuple:
    """The subquery's row where no inner row matches: its SELECT over the aggregates of no rows (COUNT 0, every
    other aggregate NULL), or NULLs if its HAVING drops that row."""
    width = len(body.keys)
    row = [None] * width + [0 if call.function in COUNTS else None for call in body.calls]
    values: dict[int, object] = {f.id: value for f, value in zip(body.fields, row, strict=True)}
    chain = []
    node = plan
    while node is not body:
        chain.append(node)
        node = node.child
    try:
        for node in reversed(chain):
            layout = {identity: position for position, identity in enumerate(values)}
            record = tuple(values.values())
            if isinstance(node, Filter):
                if evaluator(node.condition, layout)(record) is not True:
                    return (None,) * len(plan.fields)
                continue
            values = {f.id: evaluator(expr, layout)(record) for f, expr in zip(node.fields, node.exprs, strict=True)}
    except SqlRuntimeError as error:
        raise SqlError(f"the scalar subquery fails over no rows ({error}), where Spark fails only for outer rows "
                       f"with no match; this subset refuses it") from None
    return tuple(values.get(f.id) for f in plan.fields)

