"""The second lowering of a query's logical plan: onto Structured Streaming, its keyed state on the executors.

``sql.lower`` builds a plan as a ``final/`` dataflow in one process. This
builds the same plan as a streaming DataFrame of change rows, one function
per kind of node, and leaves every step's work to the executors
(``steps``):

- a stateless step (``Filter``, ``Project``, ``Rename``, ``Sort``) is not
  an operator of its own: consecutive ones are run together, by the
  ``mapInArrow`` in front of the next keyed step or of the output;
- a GROUP BY (``Aggregate``) is a ``transformWithState`` keyed by its key:
  a ``mapInArrow`` computes the key's columns, Spark's shuffle brings a
  key's changes to one task, and the task keeps the key's aggregates in
  the state store (``steps.GroupBy``);
- every other step is refused (``PlacementError``): it stays with the
  driver's follow for now.

``placement`` says where each step of a plan runs, for ``explain``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..sql.logical import Aggregate, Plan, Recursive, RecursiveReference, Scan, nodes
from .changes import CHANGES, MULTIPLICITY, OUTPUT, PACKED, ROW, TABLE, VERSION, key_type
from .steps import STATELESS, GroupBy, Keyed, Output, key_names

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..sql import SqlQuery


class PlacementError(ValueError):
    """A step of a query that cannot run on the executors yet: the message names it and says what to do."""


@dataclass(frozen=True)
class Lowered:
    """A step's changes: ``frame`` in ``changes.CHANGES``' columns, and the stateless ``steps`` (node indices,
    bottom first) still to run on its rows."""

    frame: DataFrame
    steps: tuple[int, ...] = ()


def placement(query: SqlQuery) -> list[tuple[Plan, str]]:
    """Each step of ``query``'s plan (parents first) and where it runs with its state on the executors; a step
    that cannot is said to stay on the driver."""
    found = []
    for node in nodes(query.plan):
        if isinstance(node, Scan):
            where = "executors: a task per commit reads its change data feed (ChangeStream)"
        elif isinstance(node, STATELESS):
            where = "executors: stateless, in the mapInArrow before the next keyed step or the output"
        elif isinstance(node, Aggregate) and not node.whole:
            where = "executors: transformWithState by its key, the key's aggregates in the state store"
        elif isinstance(node, Aggregate):
            where = "driver: a global aggregate's one row over no rows is not kept on the executors yet"
        else:
            where = "driver: not on the executors yet"
        found.append((node, where))
    return found


def check_placement(query: SqlQuery) -> None:
    """Refuse ``query`` if a step of its plan cannot run on the executors yet (before any stream starts).

    Raises:
        PlacementError: the first such step, named with its clause.
    """
    steps = placement(query)
    for node, _ in steps:
        if isinstance(node, (Recursive, RecursiveReference)):
            raise PlacementError(f"query {query.name}: {node.describe()} [{node.clause}] stays on the driver: a "
                                 f"loop's rounds are versions a micro-batch cannot hold; follow this query with "
                                 f"--state driver")
    for node, where in steps:
        if where.startswith("driver"):
            raise PlacementError(f"query {query.name}: {node.describe()} [{node.clause}] does not run on the "
                                 f"executors yet; follow this query with --state driver")


def lowered(query: SqlQuery, source: DataFrame) -> DataFrame:
    """``query``'s output changes as a streaming DataFrame over ``source`` (a ``changes.ChangeStream``), in
    ``changes.OUTPUT``'s columns (each change named by its query).

    Raises:
        PlacementError: a step of the plan cannot run on the executors yet.
    """
    check_placement(query)
    top = _Lowering(query, source).lower(query.plan)
    return top.frame.mapInArrow(Output(query.recipe, top.steps), OUTPUT)


class _Lowering:
    """One query's lowering: each node by its place in ``nodes(plan)``, which the executors find it by."""

    def __init__(self, query: SqlQuery, source: DataFrame) -> None:
        self.query, self.source = query, source
        self.places = {id(node): place for place, node in enumerate(nodes(query.plan))}

    def lower(self, node: Plan) -> Lowered:
        lower = next(lower for kind, lower in LOWERINGS.items() if isinstance(node, kind))  # check_placement's
        return lower(self, node)

    def _scan(self, node: Scan) -> Lowered:
        from pyspark.sql.functions import col

        return Lowered(self.source.filter(col(TABLE) == node.table).select(VERSION, MULTIPLICITY, ROW))

    def _stateless(self, node: Plan) -> Lowered:
        (child,) = node.inputs()
        below = self.lower(child)
        return Lowered(below.frame, (*below.steps, self.places[id(node)]))

    def _aggregate(self, node: Aggregate) -> Lowered:
        below = self.lower(node.child)
        place = self.places[id(node)]
        names = key_names(len(node.keys))
        schema = ", ".join([*(f"{name} {key_type(str(key.type))}" for name, key in zip(names, node.keys, strict=True)),
                            PACKED])
        keyed = below.frame.mapInArrow(Keyed(self.query.recipe, below.steps, place), schema)
        grouped = keyed.groupBy(*names).transformWithState(GroupBy(self.query.recipe, place), CHANGES, "Append",
                                                           "None")
        return Lowered(grouped)


LOWERINGS: dict[type | tuple[type, ...], Callable[[_Lowering, Any], Lowered]] = {
    Scan: _Lowering._scan, STATELESS: _Lowering._stateless, Aggregate: _Lowering._aggregate,
}
"""The one function that lowers each kind of node onto Structured Streaming."""
