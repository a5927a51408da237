"""Choosing the delta join: three inputs joined by inner equi-joins become one ``MultiJoin``.

A chain of binary joins arranges every intermediate result (``a ⋈ b`` is
kept to be joined with ``c``); a delta join (003, ``join_many``) arranges
each input by each key it is looked up by and nothing else, and answers a
change to one input by looking it up in the others. The rule gathers a tree
of inner joins whose conditions connect every input by equalities between
two inputs; the other conditions filter its output. Inside a loop (WITH
RECURSIVE) binary joins stay: the delta join is built for one-coordinate
versions.

Only three inputs, not more: measured on TPC-H at scale 0.01, a delta join
of three loads and updates as fast as binary joins do (Q3: 0.32 s against
0.25 s to load, 0.9 against 1.0 ms a refresh) and keeps no intermediate
arrangement; past three, each change walks a path through every other input,
and that costs far more than the intermediates save (Q9, six inputs: 13.4 s
against 0.36 s to load, 46.5 against 1.9 ms a refresh). Larger clusters stay
binary joins, in the order the query names them.
"""

from __future__ import annotations

from ..expressions import conjunction
from ..logical import Filter, Join, MultiJoin, Plan, Recursive
from ..scalar import Call, Scalar, conjuncts, ids

MEMBERS = 3
"""The number of inputs a delta join is chosen for (see above for why not more)."""


def apply(plan: Plan) -> Plan:
    """``plan`` with each cluster of three inner equi-joined inputs as one delta join."""
    done: dict[int, Plan] = {}

    def visit(node: Plan, looping: bool) -> Plan:
        if id(node) in done:
            return done[id(node)]
        result = None if looping else _cluster(node, lambda child: visit(child, looping))
        if result is None:
            inputs = node.inputs()
            if isinstance(node, Recursive):
                new = [visit(node.base, looping), visit(node.step, True)]
            else:
                new = [visit(child, looping) for child in inputs]
            result = node if all(a is b for a, b in zip(new, inputs, strict=True)) else node.with_inputs(new)
        done[id(node)] = result
        return result

    return visit(plan, False)


def _members(plan: Plan, parts: list[Scalar]) -> list[Plan]:
    if isinstance(plan, Join) and plan.kind == "INNER" and plan.null_aware is None:
        parts += conjuncts(plan.condition)
        return [*_members(plan.left, parts), *_members(plan.right, parts)]
    return [plan]


def _cluster(node: Plan, visit) -> Plan | None:
    if not (isinstance(node, Join) and node.kind == "INNER"):
        return None
    parts: list[Scalar] = []
    members = _members(node, parts)
    if len(members) != MEMBERS:
        return None
    owners = [{f.id for f in member.fields} for member in members]
    equalities, residual = [], []
    for part in parts:
        found = _equality(part, owners)
        if found is None:
            residual.append(part)
        else:
            equalities.append(found)
    if not _connected(len(members), equalities):
        return None
    joined: Plan = MultiJoin([visit(member) for member in members], equalities, node.clause)
    if residual:
        joined = Filter(joined, conjunction(residual), node.clause)
    return joined


def _equality(part: Scalar, owners: list[set[int]]) -> tuple[int, Scalar, int, Scalar] | None:
    """``part`` as ``(i, a, j, b)`` when it is ``a = b`` with ``a`` reading only input i and ``b`` only j."""
    if not (isinstance(part, Call) and part.name == "=" and len(part.args) == 2):
        return None
    a, b = part.args
    sides = [next((number for number, own in enumerate(owners) if ids(side) and ids(side) <= own), None)
             for side in (a, b)]
    if None in sides or sides[0] == sides[1]:
        return None
    return sides[0], a, sides[1], b


def _connected(count: int, equalities: list[tuple[int, Scalar, int, Scalar]]) -> bool:
    reached, frontier = {0}, [0]
    while frontier:
        member = frontier.pop()
        for i, _, j, _ in equalities:
            for here, there in ((i, j), (j, i)):
                if here == member and there not in reached:
                    reached.add(there)
                    frontier.append(there)
    return len(reached) == count
