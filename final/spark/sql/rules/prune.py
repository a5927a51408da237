"""Column pruning: what a join arranges and what a SELECT computes are only the columns read above.

A table's rows enter the dataflow whole, and every arrangement of them (a
join's index, a delta join's per-key lookups) holds what it is given: TPC-H's
``lineitem`` has sixteen columns, of which a query reads three or four. So
each input of a join (and of a delta join) is narrowed by a ``map`` to the
columns the plan reads before it is arranged, and a SELECT computes only the
items something reads. Filters and maps below see whole rows, so a value
that fails there is reported with its whole row. A column is read when an
expression anywhere reads its id (or the id an alias gives it), when it is
part of the query's result, or when a step needs whole rows below it:
DISTINCT, set operations, loops, ORDER BY, top-k and window functions
(whose ties are broken by the whole row), and a scalar subquery's count of
rows.
"""

from __future__ import annotations

from dataclasses import replace

from ..logical import (
    AtMostOne,
    Distinct,
    Join,
    MultiJoin,
    Plan,
    Project,
    Recursive,
    Rename,
    SetOperation,
    Sort,
    TopK,
    Window,
    nodes,
    reads,
)
from ..scalar import Ref

WHOLE_ROWS = (Distinct, SetOperation, Recursive, Sort, TopK, AtMostOne, Window)
"""Steps whose inputs' every column matters (they compare, count or return whole rows)."""


def apply(plan: Plan) -> Plan:
    """``plan`` with the columns nothing reads dropped as early as they can be."""
    needed = reads(plan) | {f.id for f in plan.fields}
    for node in nodes(plan):
        if isinstance(node, WHOLE_ROWS):
            needed |= {f.id for child in node.inputs() for f in child.fields}
    aliases = [(new.id, old.id) for node in nodes(plan) if isinstance(node, Rename)
               for new, old in zip(node.fields, node.child.fields, strict=True)]
    grown = True
    while grown:  # an alias is read if the column it names is, and the other way round
        grown = False
        for a, b in aliases:
            if (a in needed) != (b in needed):
                needed |= {a, b}
                grown = True
    done: dict[int, Plan] = {}

    def visit(node: Plan) -> Plan:
        if id(node) in done:
            return done[id(node)]
        if isinstance(node, Rename):
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
