"""Checkers for the exercises of ``final2_arrangements.ipynb``: a LEFT JOIN with NULLs, a shared arrangement,
the half of a join that meets a difference with the other side's index.

The first two checkers drive ``final`` through its public API only (input
sessions, ``graph.run()``, ``Output`` handles, the finished graph's
``operators``), and the right answer is what final does, cross-checked
against a from-scratch computation (plain Python, or v0). The data an
exercise is about is defined here (``ORDERS``, ``CUSTOMERS``, ``QUERY``,
``LINKS``), so the notebook shows the very data the checker judges. The
``Index.meet`` a learner builds is judged inside final against v0 from
scratch (``workshop.build``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workshop import Wrong, as_multiset, check_piece, equals_from_scratch, exercise
from workshop.final import build, feed, from_scratch, left_join_from_scratch, own_indexes

# Exercise 1: a LEFT JOIN where NULLs and deletions matter.

ORDERS = [
    (("ann", "tea"), 0, 1),
    ((None, "jam"), 0, 1),
    (("bo", "cake"), 0, 1),
    (("cy", "pie"), 1, 1),
]
"""Orders ``(customer, item)``; the jam's customer is NULL, and cy's pie arrives at version 1."""

CUSTOMERS = [
    (("ann", "Oslo"), 0, 1),
    ((None, "Nowhere"), 0, 1),
    (("bo", "Rome"), 0, 1),
    (("bo", "Rome"), 1, -1),
]
"""Customers ``(customer, city)``; one has a NULL name, and bo is deleted at version 1."""


@exercise
def left_join_at_1(answer: Any) -> None:
    """The learner's ``orders.left_join(customers).at(1)``, as ``{(customer, (item, city)): multiplicity}``."""
    truth = feed(lambda orders, customers: orders.left_join(customers), [ORDERS, CUSTOMERS]).at(1)
    assert truth == left_join_from_scratch(ORDERS, CUSTOMERS, 1), "final and plain Python disagree"
    given = as_multiset(answer, "the left join at version 1")
    if given == truth:
        return
    for (customer, item), _, _ in ORDERS:
        mine = {record: m for record, m in given.items()
                if isinstance(record, tuple) and len(record) == 2 and isinstance(record[1], tuple)
                and record[1][:1] == (item,)}
        theirs = {record: m for record, m in truth.items() if record[1][0] == item}
        if mine == theirs:
            continue
        if customer is None:
            why = ("a NULL key equals nothing, not even the customer whose name is NULL, so the order is kept "
                   "and padded with NULL (003's third term, a filter on NULL keys)")
        elif customer == "bo":
            why = "bo is deleted at version 1, so the order matches nothing there and is padded with NULL"
        else:
            why = "every left record is kept: matched with each matching right record, or padded with NULL"
        raise Wrong(f"the order of {item!r} (customer {customer!r}): you gave {mine or 'no record'}, but the "
                    f"left join holds {theirs}: {why}")
    raise Wrong(f"you gave {given}, but the left join at version 1 is {truth}: one record per order")


# Exercise 2: two hops over one shared arrangement.

QUERY = [("a", 0, 1), ("c", 1, 1)]
"""The nodes two hops are asked from: a at version 0, c from version 1 on."""

LINKS = [(("a", "b"), 0, 1), (("b", "c"), 0, 1), (("c", "d"), 0, 1), (("d", "a"), 0, 1), (("b", "c"), 2, -1)]
"""Links ``(from, to)``; the link b -> c goes at version 2."""


def two_hops_unshared(query: Any, links: Any) -> Any:
    """``(end, start)`` for each node two links from a query node, ``links`` joined twice (any stage)."""
    one = query.map(lambda node: (node, node)).join(links).map(lambda pair: (pair[1][1], pair[1][0]))
    return one.join(links).map(lambda pair: (pair[1][1], pair[1][0]))


@exercise
def two_hops(answer: Callable[[Any, Any], Any]) -> None:
    """The learner's ``program(query, links)``: two hops from each query node, ``links`` indexed once."""
    if not callable(answer):
        raise Wrong(f"give a function program(query, links) that returns a stream, not {answer!r}")
    got = feed(answer, [QUERY, LINKS])
    expected = from_scratch(two_hops_unshared, [QUERY, LINKS], [0, 1, 2])
    for version, records in expected.items():
        if got.at(version) != records:
            raise Wrong(f"at version {version} your program gives {got.at(version)}, but two hops from the query "
                        f"nodes are {records} as (end, start) pairs; check each join's key and the map after it")
    _, _, graph = build(answer, 2)
    joins = [operator for operator in graph.operators if operator.name == "join"]
    arranges = [operator for operator in graph.operators if operator.name == "arrange"]
    if len(joins) != 2:
        raise Wrong(f"your program runs {len(joins)} joins; join links twice, once per hop")
    if len(arranges) != 1 or not all(arranges[0].arrangement in join.arrangements for join in joins):
        raise Wrong(
            f"the answers are right, but the joins index {own_indexes(graph)} inputs themselves and "
            f"{len(arranges)} arrange operators run: call links.arrange() once, keep the stream it returns, and "
            f"join both hops with that stream, so the two joins read one index of links"
        )
    if own_indexes(graph) != 2:
        raise Wrong(f"the joins index {own_indexes(graph)} inputs themselves; only the two hops' left inputs "
                    f"should be, with links read through its one arrangement")


# Exercise 3: build the half of a join that meets a difference with the other side's index.


@exercise
def build_meet(answer: Any) -> None:
    """The learner's ``Index.meet(self, version, updates, left=True)``, run inside final: ``join`` equals v0.

    A ``join`` whose inputs are not arranged meets every difference arriving
    on one side with the other side's own index through ``meet``
    (``_OwnIndex.meets``), so the suite's oracle property on ``a.join(b)``
    runs the learner's function on every message, both sides, with versions
    arriving out of order.
    """
    check_piece("final", "trace.Index.meet", answer, [equals_from_scratch("final", "join")])
