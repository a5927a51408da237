"""Named programs over ``(key, value)`` records of small ints, for the property tests.

Each takes collection-likes and uses only operator methods, so one function
runs on every stage. They cover every operator, and compositions where one
operator's output feeds another's index (join then reduce, reduce of a reduce,
distinct of a concat).
"""

from __future__ import annotations

from typing import Any

from final.conformance.catalog import connected_components
from tests.examples import geometric_series
from tests.examples import reachable as reachability


def top_two(values: list) -> list:
    """A reduction with no algebraic shortcut: the two largest present values, as one tuple."""
    present = sorted(value for value, multiplicity in values if multiplicity > 0)
    return [(tuple(present[-2:]), 1)] if present else []


UNARY: dict[str, Any] = {
    "map": lambda c: c.map(lambda r: (r[1], r[0])),
    "filter": lambda c: c.filter(lambda r: r[1] % 2 == 0),
    "flat_map": lambda c: c.flat_map(lambda r: [r, (r[0], r[1] + 10)]),
    "negate": lambda c: c.negate(),
    "consolidate": lambda c: c.consolidate(),
    "count": lambda c: c.count(),
    "sum": lambda c: c.sum(),
    "min": lambda c: c.min(),
    "max": lambda c: c.max(),
    "distinct": lambda c: c.distinct(),
    "reduce_top_two": lambda c: c.reduce(top_two),
    "map_then_count": lambda c: c.map(lambda r: (r[1] % 2, r[0])).count(),
    "count_then_sum": lambda c: c.count().map(lambda r: (r[1] % 2, r[0])).sum(),
    "distinct_then_count": lambda c: c.distinct().count(),
    "self_join": lambda c: c.join(c),
    "distinct_of_concat_with_negation": lambda c: c.concat(c.negate()).concat(c).distinct(),
}

BINARY: dict[str, Any] = {
    "concat": lambda a, b: a.concat(b),
    "difference": lambda a, b: a.concat(b.negate()),
    "join": lambda a, b: a.join(b),
    "join_then_sum": lambda a, b: a.join(b).map(lambda r: (r[0], r[1][0] * r[1][1])).sum(),
    "join_then_distinct": lambda a, b: a.join(b).map(lambda r: (r[0], r[1][0])).distinct(),
    "distinct_of_concat": lambda a, b: a.concat(b).distinct(),
    "three_way_join": lambda a, b: a.join(b).map(lambda r: (r[1][1] % 3, r[0])).join(a),
    "min_of_concat": lambda a, b: a.concat(b).min(),
}





def doubling_to_fifty(numbers: Any) -> Any:
    """002's geometric series as a loop: each number times 2^k while <= 50."""
    return numbers.iterate(geometric_series)

ITERATIVE: dict[str, Any] = {
    "reachability": reachability,
    "connected_components": connected_components,
    "doubling_to_fifty": doubling_to_fifty,
}


def reachability_sessions() -> tuple:
    """``(roots, edges, reached, graph)``: reachability on final, fed by two input sessions, its output kept."""
    from final import GraphBuilder

    builder = GraphBuilder(0)
    roots, root_session = builder.new_session("roots")
    edges, edge_session = builder.new_session("edges")
    reached = reachability(roots, edges).output("reached")
    return root_session, edge_session, reached, builder.finalize()
