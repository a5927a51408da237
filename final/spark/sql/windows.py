"""Window functions: ``f(...) OVER (PARTITION BY ... ORDER BY ... frame)`` bound, and computed over a partition.

A window function gives each row a value computed from the other rows of its
partition (the rows equal in PARTITION BY), in the partition's ORDER BY:
its place (``ROW_NUMBER``, ``RANK``, ``DENSE_RANK``), a neighbour's value
(``LAG``, ``LEAD``), the frame's first or last value (``FIRST_VALUE``,
``LAST_VALUE``), or an aggregate over the frame (``COUNT``, ``SUM``,
``AVG``, ``MIN``, ``MAX``, as GROUP BY computes them). The frame is the
rows a value or aggregate function sees, as Spark 4.3 defines it by
default: the whole partition without ORDER BY, and from its first row to
the current row and its peers (the rows equal in the ORDER BY) with one;
``ROWS`` stops at the current row itself. Other frames are refused.

``bind`` makes a ``WindowCall`` (``logical.py``) from the parsed node;
``column`` computes one call's values for a partition's rows, sorted: the
lowering (``lower.py``) keeps each partition in a reduce and calls it when
the partition changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import localcontext
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from .errors import SqlError, refuse
from .expressions import Expressions, converted
from .functions import spelled
from .logical import AggregateCall, SortKey, WindowCall
from .scalar import Literal, Scalar
from .types import INT, NULL, WIDE

if TYPE_CHECKING:
    from .lower import Aggregation

RANKINGS = {exp.RowNumber: "row_number", exp.Rank: "rank", exp.DenseRank: "dense_rank"}
OFFSETS = {exp.Lag: "lag", exp.Lead: "lead"}
VALUES = {exp.FirstValue: "first_value", exp.First: "first_value", exp.LastValue: "last_value",
          exp.Last: "last_value"}
AGGREGATES = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)

Spec = tuple[tuple[Scalar, ...], tuple[SortKey, ...]]
"""A window's PARTITION BY and ORDER BY: the calls that share one are computed by one step."""


def bind(node: exp.Window, compiler: Expressions,
         aggregate: Callable[[exp.AggFunc, Expressions], AggregateCall]) -> tuple[Spec, WindowCall]:
    """``node`` (a window function with its OVER) bound over ``compiler``'s scope: its PARTITION BY and ORDER BY,
    and the call; ``aggregate`` binds an aggregate function as GROUP BY does.

    Raises:
        SqlError: a window function, frame or form outside the subset, or one Spark refuses, named.
    """
    if node.alias:
        raise refuse(node, f"the named window {node.alias} (WINDOW ... AS) is not in the subset; write its "
                           f"PARTITION BY and ORDER BY inside the OVER (...)")
    function = node.this
    if isinstance(function, exp.RespectNulls):
        function = function.this
    if isinstance(function, exp.IgnoreNulls):
        raise refuse(node, "IGNORE NULLS is not in the subset")
    partition = tuple(compiler.bind(item) for item in node.args.get("partition_by") or [])
    order_node = node.args.get("order")
    order = tuple(SortKey(compiler.bind(item.this), bool(item.args.get("desc")),
                          bool(item.args.get("nulls_first", not item.args.get("desc"))))
                  for item in (order_node.expressions if order_node is not None else []))
    frame = _frame(node, bool(order))
    text = node.sql(dialect="spark")
    kind = type(function)
    if kind in RANKINGS or kind in OFFSETS:
        name = RANKINGS.get(kind) or OFFSETS[kind]
        if not order:
            raise refuse(node, f"{spelled(function)}() needs an ORDER BY in its OVER (...), as in Spark")
        spec = node.args.get("spec")
        if spec is not None and (kind in OFFSETS or frame != "rows"):
            raise refuse(node, f"{spelled(function)}() takes no frame but its own, as in Spark (rows up to the "
                               f"current one: its partition's, in order)")
        if kind in RANKINGS:
            return (partition, order), WindowCall(name, None, INT, text)
        return (partition, order), _offset(function, name, compiler, text)
    if kind in VALUES:
        if function.args.get("expression") is not None:
            raise refuse(node, f"{spelled(function)}(x, ignoreNulls) is not in the subset; write {VALUES[kind]}(x)")
        argument = compiler.bind(function.this)
        return (partition, order), WindowCall(VALUES[kind], argument, argument.type, text, frame)
    if isinstance(function, AGGREGATES):
        if isinstance(function.this, exp.Distinct):
            raise refuse(node, f"{spelled(function)}(DISTINCT ...) OVER (...) is not in Spark SQL")
        call = aggregate(function, compiler)
        return (partition, order), WindowCall("aggregate", call.argument, call.type, text, frame, aggregate=call)
    raise refuse(node, f"the window function {spelled(function)}() is not in the subset (ROW_NUMBER, RANK, "
                       f"DENSE_RANK, LAG, LEAD, FIRST_VALUE, LAST_VALUE, COUNT, SUM, AVG, MIN and MAX are)")


def _frame(node: exp.Window, ordered: bool) -> str:
    """The frame named by ``node``'s ROWS or RANGE clause, or Spark's default: ``partition``, ``rows`` or
    ``range`` (see ``WindowCall``)."""
    spec = node.args.get("spec")
    if spec is None:
        return "range" if ordered else "partition"
    kind = (spec.args.get("kind") or "").upper()
    start = f"{spec.args.get('start')} {spec.args.get('start_side') or ''}".strip().upper()
    end = f"{spec.args.get('end')} {spec.args.get('end_side') or ''}".strip().upper()
    if start == "UNBOUNDED PRECEDING" and end == "UNBOUNDED FOLLOWING":
        return "partition"
    if start == "UNBOUNDED PRECEDING" and end == "CURRENT ROW" and kind in ("ROWS", "RANGE"):
        if not ordered:
            raise _at_frame(node, spec, f"a {kind} frame up to the current row needs an ORDER BY: "
                               + ("Spark refuses one without" if kind == "RANGE" else
                                  "without one Spark goes through the partition in no stated order"))
        return kind.lower()
    raise _at_frame(node, spec, f"the frame {kind} BETWEEN {start} AND {end} is not in the subset: frames run "
                                f"from UNBOUNDED PRECEDING to CURRENT ROW or to UNBOUNDED FOLLOWING")


def _at_frame(node: exp.Window, spec: exp.Expression, message: str) -> SqlError:
    """A refusal at the frame's ROWS or RANGE where a number in it locates it, else at the window function."""
    error = refuse(spec, message)
    return error if error.offset is not None else refuse(node, message)


def _offset(function: exp.Lag | exp.Lead, name: str, compiler: Expressions, text: str) -> WindowCall:
    """LAG or LEAD: the value ``offset`` rows before (after; a negative offset turns round), or ``default``, cast
    to the value's type as Spark casts it."""
    offset_node = function.args.get("offset")
    offset = 1
    if offset_node is not None:
        bound = compiler.bind(offset_node)
        if not (isinstance(bound, Literal) and bound.type.integral):
            raise refuse(offset_node, f"{name}()'s offset is an integer literal here")
        offset = bound.value
    argument = compiler.bind(function.this)
    kind = argument.type
    if kind == NULL:
        raise refuse(function, f"{name}() of NULL has no type; CAST it")
    default_node = function.args.get("default")
    default = None
    if default_node is not None:
        given = compiler.bind(default_node)
        default = converted(given, kind)
        if isinstance(given, Literal) and given.value is not None and not isinstance(default, Literal):
            raise refuse(default_node, f"{name}()'s default {default_node.sql(dialect='spark')} does not cast to "
                                       f"{kind}, the type of its value (Spark fails the query)")
    return WindowCall(name, argument, kind, text, offset=offset, default=default)


Column = Callable[[Sequence[tuple], Sequence[int]], list[Any]]
"""One call's values for a partition: from its rows in order and each row's peer group (0, 0, 1, 2, 2, ...)."""


def column(call: WindowCall, argument: Callable[[tuple], Any] | None, default: Callable[[tuple], Any] | None,
           aggregation: Aggregation | None) -> Column:
    """How ``call``'s values are computed for a partition, given its compiled ``argument`` and ``default`` and,
    for an aggregate, its ``Aggregation`` (the parts GROUP BY keeps, and how they make the value)."""
    function = call.function
    if function == "row_number":
        return lambda rows, peers: list(range(1, len(rows) + 1))
    if function == "rank":
        return _rank
    if function == "dense_rank":
        return lambda rows, peers: [peer + 1 for peer in peers]
    if function in ("lag", "lead"):
        step = -call.offset if function == "lag" else call.offset
        return lambda rows, peers: _shifted(rows, step, argument, default)
    if function in ("first_value", "last_value"):
        return lambda rows, peers: _edge(rows, peers, function == "first_value", call.frame, argument)
    return lambda rows, peers: _running(rows, peers, call.frame, aggregation)


def _rank(rows: Sequence[tuple], peers: Sequence[int]) -> list[int]:
    """RANK: one more than the rows before the current row's peer group."""
    ranks: list[int] = []
    for position, peer in enumerate(peers):
        ranks.append(position + 1 if position == 0 or peer != peers[position - 1] else ranks[-1])
    return ranks


def _shifted(rows: Sequence[tuple], step: int, argument: Callable[[tuple], Any],
             default: Callable[[tuple], Any] | None) -> list[Any]:
    values = []
    for position, row in enumerate(rows):
        other = position + step
        values.append(argument(rows[other]) if 0 <= other < len(rows) else
                      default(row) if default is not None else None)
    return values


def _ends(peers: Sequence[int]) -> list[int]:
    """For each row, the position of the last row of its peer group."""
    ends = [0] * len(peers)
    last = len(peers) - 1
    for position in range(len(peers) - 1, -1, -1):
        if position < len(peers) - 1 and peers[position] != peers[position + 1]:
            last = position
        ends[position] = last
    return ends


def _edge(rows: Sequence[tuple], peers: Sequence[int], first: bool, frame: str,
          argument: Callable[[tuple], Any]) -> list[Any]:
    """FIRST_VALUE (every frame here starts at the partition's first row) or LAST_VALUE (the frame's last row:
    the partition's, the current row, or the current row's last peer)."""
    if first:
        return [argument(rows[0])] * len(rows)
    if frame == "partition":
        return [argument(rows[-1])] * len(rows)
    if frame == "rows":
        return [argument(row) for row in rows]
    return [argument(rows[end]) for end in _ends(peers)]


def _running(rows: Sequence[tuple], peers: Sequence[int], frame: str, aggregation: Aggregation) -> list[Any]:
    """An aggregate over each row's frame: the parts GROUP BY keeps, added row by row in order, made into the
    value at the end of the frame (the partition's end, the row, or its last peer)."""
    parts = _Parts(aggregation.parts)
    if frame == "partition":
        for row in rows:
            parts.add(row)
        return [aggregation.finish(parts.values())] * len(rows)
    ends = list(range(len(rows))) if frame == "rows" else _ends(peers)
    values: list[Any] = []
    for position, row in enumerate(rows):
        parts.add(row)
        if ends[position] == position:  # the frame's end: this row and the peers before it get the value
            values.extend([aggregation.finish(parts.values())] * (position + 1 - len(values)))
    return values


class _Parts:
    """An aggregate's parts over the rows added so far, as ``final/``'s ``aggregate`` keeps them: a NULL value
    is skipped by every part; a sum is NULL until a value is added; decimals are added exactly."""

    def __init__(self, parts: Sequence[tuple[str, str, Callable[[tuple], Any]]]) -> None:
        self._parts = parts
        self._held: dict[str, Any] = {}
        for name, kind, _ in parts:
            self._held[name] = 0 if kind == "count" else set() if kind == "count_distinct" else None

    def add(self, row: tuple) -> None:
        held = self._held
        with localcontext(WIDE):
            for name, kind, fn in self._parts:
                value = fn(row)
                if value is None:
                    continue
                old = held[name]
                if kind == "count":
                    held[name] = old + 1
                elif kind == "count_distinct":
                    old.add(value)
                elif kind == "sum":
                    held[name] = value if old is None else old + value
                elif kind == "min":
                    held[name] = value if old is None or value < old else old
                else:
                    held[name] = value if old is None or value > old else old

    def values(self) -> dict[str, Any]:
        return {name: len(value) if isinstance(value, set) else value for name, value in self._held.items()}
