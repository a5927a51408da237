"""Column pruning: what a join arranges and what a SELECT computes are only the columns read above.

A table's rows enter the dataflow whole, and every arrangement of them (a
join's index, a delta join's per-key lookups) holds what it is given: TPC-H's
``lineitem`` has sixteen columns, of which a query reads three or four. So
each input of a join (and of a delta join) is narrowed by a ``map`` to the
columns the plan reads before it is arranged, and a SELECT computes only the
items something reads. Filters and maps below see whole rows, so a value
that fails there is reported with its whole row. A column is read when an
expression reads its id (or the id an alias gives it), when it is part of
the query's result, or when a step needs whole rows below it: DISTINCT, set
operations, loops, ORDER BY, top-k and window functions (whose ties are
broken by the whole row). A SELECT item nothing reads reads nothing
itself, and a scalar subquery whose value nothing reads is not joined at
all: Spark's optimizer drops both, so a value that would fail there (a
division by zero, an uncorrelated subquery of two rows) fails neither
engine.
"""

from __future__ import annotations

from dataclasses import replace

from ..logical import (
    Distinct,
    Join,
    MultiJoin,
    Plan,
    Project,
    Recursive,
    Rename,
    Scan,
    SetOperation,
    Sort,
    TopK,
    Window,
    nodes,
)
from ..scalar import Ref, Scalar, Subquery, ids, walk
from .decorrelate import SCALAR_JOIN

WHOLE_ROWS = (Distinct, SetOperation, Recursive, Sort, TopK, Window)
"""Steps whose inputs' every column matters (they compare, count or return whole rows)."""


def apply(plan: Plan) -> Plan:
    """``plan`` with the columns nothing reads dropped as early as they can be."""
    needed = _needed(plan)
    done: dict[int, Plan] = {}

    def visit(node: Plan) -> Plan:
        if id(node) in done:
            return done[id(node)]
        if isinstance(node, Join) and node.clause == SCALAR_JOIN and node.right.fields[0].id not in needed:
            # A scalar subquery's value (its first column) nothing reads: it joins one row to each outer row, so
            # the outer rows are the same without it.
            result = visit(node.left)
        elif isinstance(node, Rename):
            child = visit(node.child)
            kept = {f.id for f in child.fields}
            fields = [new for new, old in zip(node.fields, node.child.fields, strict=True) if old.id in kept]
            unchanged = child is node.child and len(fields) == len(node.fields)
            result = node if unchanged else replace(node, child=child, fields=fields)
        else:
            inputs = node.inputs()
            new = [visit(child) for child in inputs]
            changed = node if all(a is b for a, b in zip(new, inputs, strict=True)) else node.with_inputs(new)
            result = _pruned(changed, needed, top=node is plan)
        done[id(node)] = result
        return result

    return visit(plan)


def read_columns(plan: Plan) -> dict[str, set[str]]:
    """Each table ``plan`` scans and the names of its columns the plan reads, as ``apply`` counts them (a column
    that only a SELECT item nothing reads reads is not read): no change to the table's other columns changes
    the plan's result. A table read for its rows' count alone reads no column. A subquery still held in an
    expression (one no rule made a join) reads its tables whole.
    """
    return _scanned(plan, _needed(plan))


def _scanned(plan: Plan, needed: set[int] | None) -> dict[str, set[str]]:
    """The columns of each table ``plan`` scans whose ids are in ``needed`` (None: all), and every column of the
    tables its subqueries scan."""
    found: dict[str, set[str]] = {}
    for node in nodes(plan):
        if isinstance(node, Scan):
            found.setdefault(node.table, set()).update(f.name for f in node.fields if needed is None or f.id in needed)
        for scalar in node.expressions():
            for part in walk(scalar):
                if isinstance(part, Subquery):
                    for table, columns in _scanned(part.plan, None).items():
                        found.setdefault(table, set()).update(columns)
    return found


def _needed(plan: Plan) -> set[int]:
    """The ids something reads: the result's columns, whole rows below the steps that need them, and what the
    expressions read, but a SELECT's only through the items that are read, until nothing more is."""
    needed = {f.id for f in plan.fields}
    items: list[tuple[int, Scalar]] = []
    for node in nodes(plan):
        if isinstance(node, WHOLE_ROWS):
            needed |= {f.id for child in node.inputs() for f in child.fields}
        if isinstance(node, Project):
            items += [(f.id, expr) for f, expr in zip(node.fields, node.exprs, strict=True)]
        else:
            held = node.expressions() + (list(node.null_aware) if isinstance(node, Join) and node.null_aware else [])
            for scalar in held:
                needed |= ids(scalar)
    aliases = [(new.id, old.id) for node in nodes(plan) if isinstance(node, Rename)
               for new, old in zip(node.fields, node.child.fields, strict=True)]
    grown = True
    while grown:
        before = len(needed)
        for made, expr in items:
            if made in needed:
                needed |= ids(expr)
        for a, b in aliases:  # an alias is read if the column it names is, and the other way round
            if (a in needed) != (b in needed):
                needed |= {a, b}
        grown = len(needed) > before
    return needed


def _pruned(node: Plan, needed: set[int], top: bool) -> Plan:
    """A join whose inputs keep only their needed columns; a SELECT computing only its needed items."""
    if isinstance(node, (Join, MultiJoin)):
        inputs = node.inputs()
        kept = [_narrowed(child, needed) for child in inputs]
        if all(a is b for a, b in zip(kept, inputs, strict=True)):
            return node
        narrowed = node.with_inputs(kept)
        if isinstance(narrowed, Join) and narrowed.pad is not None:  # the pad row loses the same columns
            pad = tuple(value for f, value in zip(node.right.fields, node.pad, strict=True) if f.id in needed)
            narrowed = replace(narrowed, pad=pad)
        return narrowed
    if isinstance(node, Project) and not top and any(f.id not in needed for f in node.fields):
        pairs = [(f, expr) for f, expr in zip(node.fields, node.exprs, strict=True) if f.id in needed]
        return replace(node, exprs=[expr for _, expr in pairs], fields=[f for f, _ in pairs])
    return node


def _narrowed(plan: Plan, needed: set[int]) -> Plan:
    """``plan``'s rows with only the needed columns (a ``map`` in front of the arrangement that holds them)."""
    if all(f.id in needed for f in plan.fields):
        return plan
    kept = [f for f in plan.fields if f.id in needed]
    return Project(plan, [Ref(f) for f in kept], kept, "the columns the query reads")
