"""Factoring OR: a condition found in every branch of an OR is taken out of it.

``(a = b AND x) OR (a = b AND y)`` is ``a = b AND (x OR y)``: the same
rows, since a row meets the OR only if it meets some branch, and every
branch asks ``a = b``. Taken out, ``a = b`` can be pushed into a join as
its key (``push_down``), where inside the OR it could only filter every
pair of rows: TPC-H Q19 joins ``lineitem`` and ``part`` on ``p_partkey =
l_partkey`` written in each of its three branches. Branches are compared
by their printed form, which names every column by its id.
"""

from __future__ import annotations

from dataclasses import replace

from ..expressions import conjunction, logic
from ..logical import Filter, Join, Plan, transform
from ..scalar import Call, Scalar, conjuncts, disjuncts


def apply(plan: Plan) -> Plan:
    """``plan`` with every WHERE and ON condition's ORs factored."""
    return transform(plan, _node)


def _node(node: Plan) -> Plan | None:
    if isinstance(node, Filter):
        factored = factored_condition(node.condition)
        return None if factored is node.condition else replace(node, condition=factored)
    if isinstance(node, Join) and node.condition is not None:
        factored = factored_condition(node.condition)
        return None if factored is node.condition else replace(node, condition=factored)
    return None


def factored_condition(condition: Scalar) -> Scalar:
    """``condition`` with the conjuncts common to every branch of each of its OR conjuncts taken out."""
    parts: list[Scalar] = []
    changed = False
    for part in conjuncts(condition):
        if isinstance(part, Call) and part.name == "OR":
            factored = _factor(part)
            changed = changed or factored != [part]
            parts += factored
        else:
            parts.append(part)
    return conjunction(parts) if changed else condition


def _factor(disjunction: Scalar) -> list[Scalar]:
    branches = [conjuncts(branch) for branch in disjuncts(disjunction)]
    texts = [{str(part) for part in branch} for branch in branches]
    common = set.intersection(*texts)
    if not common:
        return [disjunction]
    taken = [part for part in branches[0] if str(part) in common]
    taken = list({str(part): part for part in taken}.values())
    rests = [[part for part in branch if str(part) not in common] for branch in branches]
    if any(not rest for rest in rests):
        return taken  # a branch that is only the common part: the OR adds nothing to it
    remainder = None
    for rest in rests:
        branch = conjunction(rest)
        remainder = branch if remainder is None else logic(False, remainder, branch)
    return [*taken, remainder]
