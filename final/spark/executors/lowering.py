"""The second lowering of a query's logical plan: onto Structured Streaming, its keyed state on the executors.

``sql.lower`` builds a plan as a ``final/`` dataflow in one process. This
builds the same plan as a streaming DataFrame of change rows, one function
per kind of node, and leaves every step's work to the executors
(``steps``):

- a scan (``Scan``) is the source's changes, exchanged once for every scan
  of every query (``exchanged``), of which the step that reads them takes
  its table's;
- a stateless step (``Filter``, ``Project``, ``Rename``, ``Sort``) is not
  an operator of its own: consecutive ones are run together, by the
  ``mapInArrow`` in front of the next keyed step or of the output;
- a GROUP BY (``Aggregate``) is a ``transformWithState`` keyed by its key:
  a ``mapInArrow`` computes the key's columns, Spark's shuffle brings a
  key's changes to one task, and the task keeps the key's aggregates in
  the state store (``steps.GroupBy``);
- a join, DISTINCT, a set operation, a top-k, a window and a scalar
  subquery's one row are each a ``transformWithState`` too: each input's
  changes keyed by the step's key (``steps.KeyedBy``), the inputs' union
  shuffled by it, and the task keeping the key's rows of each input
  (``steps.KeyedStep``); a UNION ALL is the union of its sides' changes;
- a delta join is the chain of binary joins it was made from
  (``steps.executors_plan``);
- a global aggregate is a ``transformWithState`` of its one group, which
  the source's start row (``changes.START``) calls at version 0, and a
  constant row (``One``) is that start row, the empty record;
- ``WITH RECURSIVE`` is refused (``PlacementError``): it stays with the
  driver's follow.

``placement`` says where each step of a plan runs, for ``explain``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..sql.logical import Aggregate, MultiJoin, One, Plan, Recursive, RecursiveReference, Scan, SetOperation, nodes
from .changes import CHANGES, KEY, OUTPUT, ROW, START, TAGGED
from .steps import KEYED, STATELESS, GroupBy, KeyedBy, KeyedStep, Output, Started, Through, executors_plan

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from ..sql import SqlQuery


class PlacementError(ValueError):
    """A step of a query that cannot run on the executors yet: the message names it and says what to do."""


@dataclass(frozen=True)
class Lowered:
    """A step's changes: ``frame`` in ``changes.CHANGES``' columns, and the stateless ``steps`` (node indices,
    bottom first) still to run on its rows; or, for a step over a table (``table``), the source's exchanged
    changes (``exchanged``) in ``changes.SOURCE``'s columns, of which the table's are chosen by the Python step
    that reads them, not by a Spark filter: Spark would push a filter below the exchange, and each table's scan
    would read the source again."""

    frame: DataFrame
    steps: tuple[int, ...] = ()
    table: str | None = None


def placement(query: SqlQuery) -> list[tuple[Plan, str]]:
    """Each step of ``query``'s plan (parents first) and where it runs with its state on the executors; a step
    that cannot is said to stay on the driver."""
    found = []
    for node in nodes(query.plan):
        if isinstance(node, Scan):
            where = ("executors: a task per commit reads its change data feed (ChangeStream), once for every scan "
                     "(one exchange)")
        elif isinstance(node, STATELESS):
            where = "executors: stateless, in the mapInArrow before the next keyed step or the output"
        elif isinstance(node, SetOperation) and node.kind == "UNION" and node.keep_all:
            where = "executors: stateless, the union of its sides' changes"
        elif isinstance(node, Aggregate) and not node.whole:
            where = "executors: transformWithState by its key, the key's aggregates in the state store"
        elif isinstance(node, Aggregate):
            where = "executors: transformWithState of its one group, its aggregates in the state store"
        elif isinstance(node, KEYED):
            where = "executors: transformWithState by its key, the key's rows of each input in the state store"
        elif isinstance(node, MultiJoin):
            where = ("executors: the binary joins it was made from, each a transformWithState by its key, the key's "
                     "rows of each input in the state store")
        elif isinstance(node, One):
            where = "executors: the source's start row, made the one empty row at version 0"
        else:
            where = "driver: a loop's rounds are versions of a partial order that a micro-batch cannot hold"
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


def exchanged(source: DataFrame, partitions: int) -> DataFrame:
    """A ``changes.ChangeStream``'s changes spread over ``partitions`` shuffle partitions by row: one exchange,
    which every scan of every query over the source reads (Spark reuses an exchange that several branches of a
    plan hold alike), so that a micro-batch's commits are read once, not once per scan, and the steps after it
    run in ``partitions`` tasks, not in one per commit."""
    return source.repartition(partitions, ROW)


def lowered(query: SqlQuery, source: DataFrame) -> DataFrame:
    """``query``'s output changes as a streaming DataFrame over ``source`` (a ``changes.ChangeStream``'s changes,
    ``exchanged``), in ``changes.OUTPUT``'s columns (each change named by its query).

    Raises:
        PlacementError: a step of the plan cannot run on the executors yet.
    """
    check_placement(query)
    lowering = _Lowering(query, source)
    top = lowering.lower(lowering.plan)
    return top.frame.mapInArrow(Output(query.recipe, top.steps, top.table), OUTPUT)


class _Lowering:
    """One query's lowering: each node by its place in ``nodes(plan)``, which the executors find it by."""

    def __init__(self, query: SqlQuery, source: DataFrame) -> None:
        self.query, self.source = query, source
        self.plan = executors_plan(query.plan)
        self.places = {id(node): place for place, node in enumerate(nodes(self.plan))}

    def lower(self, node: Plan) -> Lowered:
        lower = next(lower for kind, lower in LOWERINGS.items() if isinstance(node, kind))  # check_placement's
        return lower(self, node)

    def _scan(self, node: Scan) -> Lowered:
        return Lowered(self.source, (), node.table)

    def _one(self, node: One) -> Lowered:
        return Lowered(self.source, (), START)  # the source's start row: the empty record at version 0

    def _stateless(self, node: Plan) -> Lowered:
        (child,) = node.inputs()
        below = self.lower(child)
        return Lowered(below.frame, (*below.steps, self.places[id(node)]), below.table)

    def _aggregate(self, node: Aggregate) -> Lowered:
        below = self.lower(node.child)
        place = self.places[id(node)]
        keyed = below.frame.mapInArrow(KeyedBy(self.query.recipe, below.steps, place, 0, below.table), TAGGED)
        if node.whole:  # its row over no rows from version 0 on: the source's start row calls it then
            keyed = keyed.union(self.source.mapInArrow(Started(), TAGGED))
        grouped = keyed.groupBy(KEY).transformWithState(GroupBy(self.query.recipe, place), CHANGES, "Append", "None")
        return Lowered(grouped)

    def _keyed(self, node: Plan) -> Lowered:
        if isinstance(node, SetOperation) and node.kind == "UNION" and node.keep_all:
            return self._union_all(node)
        place = self.places[id(node)]
        tagged = [below.frame.mapInArrow(KeyedBy(self.query.recipe, below.steps, place, side, below.table), TAGGED)
                  for side, below in enumerate(self.lower(child) for child in node.inputs())]
        keyed = functools.reduce(lambda one, other: one.union(other), tagged)
        return Lowered(keyed.groupBy(KEY).transformWithState(KeyedStep(self.query.recipe, place), CHANGES, "Append",
                                                             "None"))

    def _union_all(self, node: SetOperation) -> Lowered:
        sides = [self.lower(child) for child in node.inputs()]
        frames = [below.frame.mapInArrow(Through(self.query.recipe, below.steps, below.table), CHANGES)
                  if below.steps or below.table is not None else below.frame for below in sides]
        return Lowered(frames[0].union(frames[1]))


LOWERINGS: dict[type | tuple[type, ...], Callable[[_Lowering, Any], Lowered]] = {
    Scan: _Lowering._scan, One: _Lowering._one, STATELESS: _Lowering._stateless, Aggregate: _Lowering._aggregate,
    KEYED: _Lowering._keyed,
}
"""The one function that lowers each kind of node onto Structured Streaming."""
