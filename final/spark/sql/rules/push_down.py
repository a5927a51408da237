"""Predicate pushdown: each condition of a WHERE moves down to the rows it reads.

A conjunct that reads one input of a join filters that input before the
join, so the join's arrangements hold only rows that can match; a conjunct
that reads both inputs of an inner join becomes part of its condition, where
lowering finds its keys: ``FROM a, b WHERE a.k = b.k`` is an equi-join, not
every pair filtered. Outer joins keep their meaning: below a LEFT join only
conditions on its left rows move down from WHERE, and of its ON clause only
those on its right rows (a left row that fails ON is padded, not dropped).
Conditions move through aliases, through SELECT items that only rename a
column, and through DISTINCT and ORDER BY; they stop at aggregates, set
operations, top-k and loops.
"""

from __future__ import annotations

from dataclasses import replace

from ..expressions import conjunction
from ..logical import Distinct, Filter, Join, Plan, Project, Rename, Sort, transform
from ..scalar import Ref, Scalar, conjuncts, ids, substitute


def apply(plan: Plan) -> Plan:
    """``plan`` with every filter as far down as it goes."""
    return transform(plan, _node)


def _node(node: Plan) -> Plan | None:
    if isinstance(node, Filter):
        return sink(node.child, conjuncts(node.condition), node.clause)
    if isinstance(node, Join) and node.condition is not None and node.null_aware is None:
        return _on(node)
    return None


def _on(join: Join) -> Plan | None:
    """A join's ON conjuncts that read one side and may filter it first, moved there."""
    left_ids, right_ids = {f.id for f in join.left.fields}, {f.id for f in join.right.fields}
    to_left = join.kind in ("INNER", "RIGHT", "SEMI")
    to_right = join.kind in ("INNER", "LEFT", "SEMI", "ANTI")
    moved_left, moved_right, kept = [], [], []
    for part in conjuncts(join.condition):
        read = ids(part)
        if read and read <= left_ids and to_left:
            moved_left.append(part)
        elif read and read <= right_ids and to_right:
            moved_right.append(part)
        else:
            kept.append(part)
    if not moved_left and not moved_right:
        return None
    return replace(join, left=sink(join.left, moved_left, join.clause), right=sink(join.right, moved_right,
                                                                                    join.clause),
                   condition=conjunction(kept))


def sink(plan: Plan, parts: list[Scalar], clause: str) -> Plan:
    """``plan`` filtered by ``parts``, each placed as far down as it goes."""
    if not parts:
        return plan
    if isinstance(plan, Filter):
        return sink(plan.child, [*conjuncts(plan.condition), *parts], plan.clause)
    if isinstance(plan, (Distinct, Sort)):
        return replace(plan, child=sink(plan.child, parts, clause))
    if isinstance(plan, Rename):
        renamed = {new.id: Ref(old) for new, old in zip(plan.fields, plan.child.fields, strict=True)}
        below = [substitute(part, lambda s: renamed.get(s.id) if isinstance(s, Ref) else None) for part in parts]
        return replace(plan, child=sink(plan.child, below, clause))
    if isinstance(plan, Project):
        return _through_project(plan, parts, clause)
    if isinstance(plan, Join):
        return _into_join(plan, parts, clause)
    return Filter(plan, conjunction(parts), clause)


def _through_project(plan: Project, parts: list[Scalar], clause: str) -> Plan:
    """Conjuncts that read only SELECT items that are columns move below the SELECT (nothing is computed
    twice, and nothing that could fail is computed for rows Spark would not compute it for)."""
    columns = {f.id: expr for f, expr in zip(plan.fields, plan.exprs, strict=True) if isinstance(expr, Ref)}
    below, above = [], []
    for part in parts:
        if ids(part) <= set(columns):
            below.append(substitute(part, lambda s: columns.get(s.id) if isinstance(s, Ref) else None))
        else:
            above.append(part)
    moved = replace(plan, child=sink(plan.child, below, clause)) if below else plan
    return Filter(moved, conjunction(above), clause) if above else moved


def _into_join(join: Join, parts: list[Scalar], clause: str) -> Plan:
    left_ids, right_ids = {f.id for f in join.left.fields}, {f.id for f in join.right.fields}
    to_left = join.kind in ("INNER", "LEFT", "SEMI", "ANTI")
    to_right = join.kind in ("INNER", "RIGHT")
    left, right, into, above = [], [], [], []
    for part in parts:
        read = ids(part)
        if read and read <= left_ids and to_left:
            left.append(part)
        elif read and read <= right_ids and to_right:
            right.append(part)
        elif join.kind == "INNER" and read and read <= left_ids | right_ids:
            into.append(part)
        else:
            above.append(part)
    if not (left or right or into):
        return Filter(join, conjunction(parts), clause)
    moved = replace(join, left=sink(join.left, left, clause), right=sink(join.right, right, clause),
                    condition=conjunction([*conjuncts(join.condition), *into]))
    return Filter(moved, conjunction(above), clause) if above else moved
