"""The logical plan: a query as a tree of relational steps over symbolic expressions, printed and rewritten
before any dataflow exists.

Each node has the ``fields`` of the rows it produces (``scalar.Field``: name,
qualifier, Spark type and the id expressions read it by), the ``clause`` of
the query it comes from, and its inputs. Nodes hold ``Scalar`` trees, never
compiled code, so a rule can move a predicate, split a join's condition or
turn a subquery into a join, and ``explain`` prints what will run. The
binder (``binder.py``) makes the tree, the rules (``rules/``) rewrite it,
and lowering (``lower.py``) builds it through ``final/``'s stream API, one
function per node. This is DataFusion's ``LogicalPlan`` and Materialize's
HIR/MIR, at the size of this subset.

Row order: a relation is a multiset. ``Sort`` (ORDER BY without LIMIT)
keeps every row, and says so; ``TopK`` (ORDER BY ... LIMIT) keeps the rows
that rank in the window, ties broken by the whole row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .scalar import Field, Scalar, Subquery, ids, walk
from .types import SqlType

LABEL_WIDTH = 48
"""Longest clause text an operator's label carries (diagrams stay readable)."""


class Plan:
    """A step of a query's plan: the ``fields`` of its rows and the ``clause`` it comes from."""

    fields: list[Field]
    clause: str

    def inputs(self) -> list[Plan]:
        """The plans this step reads, in order."""
        return [getattr(self, f.name) for f in fields(self) if f.name in _INPUT_NAMES and
                getattr(self, f.name) is not None] + list(getattr(self, "members", []))

    def with_inputs(self, inputs: list[Plan]) -> Plan:
        """This step over other inputs (with the same fields)."""
        names = [f.name for f in fields(self) if f.name in _INPUT_NAMES and getattr(self, f.name) is not None]
        changes: dict[str, Any] = dict(zip(names, inputs, strict=False))
        if hasattr(self, "members"):
            changes["members"] = list(inputs[len(names):])
        return replace(self, **changes)

    def expressions(self) -> list[Scalar]:
        """The expressions this step holds (for rules that look into them)."""
        return []

    def describe(self) -> str:
        raise NotImplementedError

    def explain(self, depth: int = 0, seen: set[int] | None = None, where: Mapping[int, str] | None = None
                ) -> list[str]:
        """The plan as indented lines: each step, what it does, its clause and its columns, and after ``|``
        what ``where`` says of it (by the step's ``id``: where it runs, for ``explain``). A step that two
        parents read (a CTE read twice) is printed once, then named."""
        seen = set() if seen is None else seen
        names = ", ".join(f"{f.name}#{f.id} {f.type}" for f in self.fields)
        line = f"{'  ' * depth}{self.describe()}  [{self.clause}]  -> ({names})"
        if where and id(self) in where:
            line += f"  | {where[id(self)]}"
        if id(self) in seen:
            return [f"{'  ' * depth}(the same {self.describe().split(' (')[0]} as above)  [{self.clause}]"]
        seen.add(id(self))
        subqueries = [part for scalar in self.expressions() for part in walk(scalar) if isinstance(part, Subquery)]
        below = [f"{'  ' * (depth + 1)}{part} is:" for part in subqueries]
        for position, part in enumerate(subqueries):
            below[position:position + 1] = [below[position], *part.plan.explain(depth + 2, seen, where)]
        return [line, *below, *(text for plan in self.inputs() for text in plan.explain(depth + 1, seen, where))]


_INPUT_NAMES = ("child", "left", "right", "base", "step")


def shown(scalars: list[Scalar]) -> str:
    return ", ".join(str(scalar) for scalar in scalars)


@dataclass(eq=False)
class Scan(Plan):
    """A table's rows: an input session."""

    table: str
    fields: list[Field]
    clause: str

    def describe(self) -> str:
        return f"scan {self.table} (an input session)"


@dataclass(eq=False)
class One(Plan):
    """One empty row that never changes: the FROM of a SELECT without one."""

    fields: list[Field] = field(default_factory=list)
    clause: str = "(no FROM)"

    def describe(self) -> str:
        return "constant one row (GraphBuilder.constant)"


@dataclass(eq=False)
class Rename(Plan):
    """The same rows under other names or ids (a table alias, a CTE read again): no operator."""

    child: Plan
    fields: list[Field]
    clause: str

    def describe(self) -> str:
        return "alias (no operator)"

    def explain(self, depth: int = 0, seen: set[int] | None = None, where: Mapping[int, str] | None = None
                ) -> list[str]:
        if all(a.id == b.id for a, b in zip(self.fields, self.child.fields, strict=True)):
            return self.child.explain(depth, seen, where)
        return super().explain(depth, seen, where)


@dataclass(eq=False)
class Project(Plan):
    """Each row mapped to the values of ``exprs``: ``map``."""

    child: Plan
    exprs: list[Scalar]
    fields: list[Field]
    clause: str

    def expressions(self) -> list[Scalar]:
        return list(self.exprs)

    def describe(self) -> str:
        return f"map ({shown(self.exprs)})"


@dataclass(eq=False)
class Filter(Plan):
    """The rows whose condition is true (not false, not NULL): ``filter``."""

    child: Plan
    condition: Scalar
    clause: str

    @property
    def fields(self) -> list[Field]:  # type: ignore[override]
        return self.child.fields

    def expressions(self) -> list[Scalar]:
        return [self.condition]

    def describe(self) -> str:
        return f"filter {self.condition} (three-valued: NULL drops the row)"


JOIN_WORDS = {"INNER": "join", "LEFT": "left join", "RIGHT": "right join", "FULL": "full outer join",
              "SEMI": "semijoin", "ANTI": "antijoin"}


@dataclass(eq=False)
class Join(Plan):
    """``left kind JOIN right ON condition``: INNER, LEFT, RIGHT, FULL; SEMI and ANTI keep the left rows that
    have (have no) match, once each, as EXISTS and NOT EXISTS do.

    ``null_aware`` marks NOT IN's antijoin: a left row whose value is NULL,
    or any right row whose value is NULL, stops a left row with matches in
    its group from being kept; ``null_aware`` holds the two compared
    expressions (left, right), the rest of ``condition`` correlates.
    ``pad`` is the right row a LEFT join gives a left row with no match
    (NULLs by default; a scalar subquery's value over no rows, e.g. COUNT's 0).
    """

    left: Plan
    right: Plan
    kind: str
    condition: Scalar | None
    clause: str
    null_aware: tuple[Scalar, Scalar] | None = None
    pad: tuple | None = None

    @property
    def fields(self) -> list[Field]:  # type: ignore[override]
        if self.kind in ("SEMI", "ANTI"):
            return self.left.fields
        return [*self.left.fields, *self.right.fields]

    def expressions(self) -> list[Scalar]:
        return [self.condition] if self.condition is not None else []

    def describe(self) -> str:
        how = JOIN_WORDS[self.kind]
        if self.null_aware is not None:
            how += f" for NOT IN ({self.null_aware[0]} = {self.null_aware[1]}, NULLs as NOT IN has them)"
        if self.kind in ("LEFT", "RIGHT", "FULL"):
            how += " (003: matches, then the unmatched rows padded"
            how += " with the subquery's value over no rows)" if self.pad is not None else " with NULLs)"
        on = f" on {self.condition}" if self.condition is not None else " on no condition: every pair"
        return how + on


@dataclass(eq=False)
class MultiJoin(Plan):
    """Three or more inputs joined by inner equi-joins, as one delta join (003): ``join_many`` keeps an
    arrangement of each input by each key it is looked up by, and none of any intermediate result.
    ``equalities`` are ``(i, expression over input i, j, expression over input j)``."""

    members: list[Plan]
    equalities: list[tuple[int, Scalar, int, Scalar]]
    clause: str

    @property
    def fields(self) -> list[Field]:  # type: ignore[override]
        return [f for plan in self.members for f in plan.fields]

    def expressions(self) -> list[Scalar]:
        return [scalar for _, a, _, b in self.equalities for scalar in (a, b)]

    def describe(self) -> str:
        return (f"delta join of {len(self.members)} inputs on {len(self.equalities)} equalities "
                f"(003: join_many, no intermediate arrangement): "
                + ", ".join(f"{a} = {b}" for _, a, _, b in self.equalities))


COUNTS = ("count", "count_if")
"""The aggregates that are 0 over no rows; every other one is NULL there."""


@dataclass(frozen=True, eq=False)
class AggregateCall:
    """One aggregate: ``function`` (count, sum, avg, min, max, count_if, bool_and, bool_or, var_samp, var_pop,
    stddev_samp, stddev_pop, any_value) of ``argument`` (None for ``COUNT(*)``), of distinct values when
    ``distinct``; ``type`` its Spark type, ``text`` its SQL."""

    function: str
    argument: Scalar | None
    distinct: bool
    type: SqlType
    text: str

    def __str__(self) -> str:
        inner = "*" if self.argument is None else f"{'DISTINCT ' if self.distinct else ''}{self.argument}"
        return f"{self.function}({inner})"


@dataclass(eq=False)
class Aggregate(Plan):
    """GROUP BY ``keys`` with ``calls``: rows ``(*keys, *aggregates)``, one per group with rows.

    Without GROUP BY (``whole``), the one group exists even over an empty
    input, as SQL has it: COUNT is 0 there and every other aggregate NULL.
    ``correlated``: a global aggregate of a correlated subquery, grouped by
    the correlation by decorrelation (a value with no rows has no group: the
    join that reads it supplies the empty input's row).
    """

    child: Plan
    keys: list[Scalar]
    calls: list[AggregateCall]
    fields: list[Field]
    whole: bool
    clause: str
    correlated: bool = False

    def expressions(self) -> list[Scalar]:
        return [*self.keys, *(call.argument for call in self.calls if call.argument is not None)]

    def describe(self) -> str:
        kinds = sorted({call.function for call in self.calls})
        hierarchy = {"min", "max", "any_value"} & set(kinds)
        how = "004: counts and sums in place" + (", MIN/MAX in a per-key hierarchy" if hierarchy else "")
        what = f"aggregate {', '.join(str(call) for call in self.calls) or 'groups'}"
        by = f" by {shown(self.keys)}" if self.keys else ""
        return f"{what}{by} ({how})" + (" + the empty input's row" if self.whole else "")


@dataclass(eq=False)
class Distinct(Plan):
    """Each row once: ``distinct``."""

    child: Plan
    clause: str

    @property
    def fields(self) -> list[Field]:  # type: ignore[override]
        return self.child.fields

    def describe(self) -> str:
        return "distinct (each row once)"


@dataclass(eq=False)
class SetOperation(Plan):
    """UNION [ALL], EXCEPT [ALL] or INTERSECT [ALL] of two queries with the same number of columns."""

    kind: str
    keep_all: bool
    left: Plan
    right: Plan
    fields: list[Field]
    clause: str

    def describe(self) -> str:
        how = {
            ("UNION", True): "concat", ("UNION", False): "concat, then distinct",
            ("EXCEPT", False): "distinct rows, antijoin the other side's",
            ("EXCEPT", True): "each row max(0, m - n) times: concat with the negated other side, then threshold",
            ("INTERSECT", False): "distinct rows, semijoin the other side's",
            ("INTERSECT", True): "each row min(m, n) times: this side minus EXCEPT ALL",
        }[(self.kind, self.keep_all)]
        return f"{self.kind}{' ALL' if self.keep_all else ''} ({how})"


@dataclass(eq=False)
class RecursiveReference(Plan):
    """The recursive CTE read inside its own recursive term: the loop's variable."""

    name: str
    fields: list[Field]
    clause: str

    def describe(self) -> str:
        return f"{self.name} as of the previous round (the loop's variable)"


@dataclass(eq=False)
class Recursive(Plan):
    """WITH RECURSIVE ``name`` AS (base UNION [ALL] step): ``iterate`` to a fixed point.

    Each round is the base rows and ``step`` over the previous round: with
    UNION, made distinct, which is the least fixed point SQL defines; with
    UNION ALL, every derivation counts, which ends when the data has no
    cycle, as SQL's does.
    """

    name: str
    base: Plan
    step: Plan
    keep_all: bool
    fields: list[Field]
    clause: str

    def describe(self) -> str:
        union = "UNION ALL" if self.keep_all else "UNION: distinct each round"
        return f"iterate {self.name} to a fixed point (002's loop; {union})"


@dataclass(frozen=True, eq=False)
class SortKey:
    """One ORDER BY item: the expression, DESC or not, and where NULLs go (Spark: first ascending, last
    descending, unless NULLS FIRST/LAST says)."""

    expression: Scalar
    descending: bool
    nulls_first: bool

    def __str__(self) -> str:
        return (f"{self.expression}{' DESC' if self.descending else ''} "
                f"NULLS {'FIRST' if self.nulls_first else 'LAST'}")


@dataclass(eq=False)
class Sort(Plan):
    """ORDER BY without LIMIT: every row kept. A result kept up to date is a multiset, so the order is the
    reader's to apply; this step only says so."""

    child: Plan
    keys: list[SortKey]
    clause: str

    @property
    def fields(self) -> list[Field]:  # type: ignore[override]
        return self.child.fields

    def expressions(self) -> list[Scalar]:
        return [key.expression for key in self.keys]

    def describe(self) -> str:
        return (f"order by {', '.join(str(key) for key in self.keys)} (no operator: the result is a multiset, "
                f"read it in this order)")


@dataclass(eq=False)
class TopK(Plan):
    """ORDER BY ``keys`` LIMIT ``limit`` OFFSET ``offset``: the rows ranked ``offset`` to ``offset + limit - 1``
    in that order, kept up to date by ``top_k`` (a change moves only the rows at the cut). Rows equal in every
    key are ranked by the whole row, so the result is determined; Spark's order of such ties is unstated.
    With a ``partition`` (a window's rank filtered, ``rules/window_top_k``), each partition has its own window."""

    child: Plan
    keys: list[SortKey]
    limit: int | None
    offset: int
    clause: str
    partition: list[Scalar] = field(default_factory=list)

    @property
    def fields(self) -> list[Field]:  # type: ignore[override]
        return self.child.fields

    def expressions(self) -> list[Scalar]:
        return [*self.partition, *(key.expression for key in self.keys)]

    def describe(self) -> str:
        window = f"limit {self.limit}" if self.limit is not None else "no limit"
        keys = ", ".join(str(key) for key in self.keys) or "the whole row"
        per = f" per partition by {shown(self.partition)}" if self.partition else ""
        return (f"top-k by {keys}, {window}, offset {self.offset}{per} (top_k: a change moves the rows at the "
                f"cut)")


@dataclass(frozen=True, eq=False)
class WindowCall:
    """One window function: ``function`` of ``argument`` over the rows of the current row's partition.

    ``function`` is a ranking one (row_number, rank, dense_rank), an offset
    one (lag, lead: the row ``offset`` places before or after, else
    ``default``), a value one (first_value, last_value) or an aggregate
    (``aggregate``: count, sum, avg, min, max as GROUP BY has them). ``frame``
    is the rows the value and aggregate functions see: ``partition`` (all of
    them), ``rows`` (from the first to the current row) or ``range`` (to the
    current row and every row equal to it in the ORDER BY: its peers).
    """

    function: str
    argument: Scalar | None
    type: SqlType
    text: str
    frame: str = "partition"
    offset: int = 1
    default: Scalar | None = None
    aggregate: AggregateCall | None = None

    def __str__(self) -> str:
        inner = "" if self.argument is None else str(self.argument)
        if self.function in ("lag", "lead"):
            return f"{self.function}({inner}, {self.offset}" + (
                f", {self.default})" if self.default is not None else ")")
        if self.function in ("row_number", "rank", "dense_rank"):
            return f"{self.function}()"
        frame = {"partition": "the partition", "rows": "the rows to the current one",
                 "range": "the rows to the current one and its peers"}[self.frame]
        shown_call = self.aggregate if self.aggregate is not None else f"{self.function}({inner})"
        return f"{shown_call} over {frame}"

    @property
    def prefix(self) -> bool:
        """Whether the value depends only on the rows up to the current one in the partition's order (so the
        first k rows have the same values over the first k alone)."""
        return self.function in ("row_number", "rank", "dense_rank", "lag") or (
            self.function in ("first_value", "last_value", "aggregate") and self.frame == "rows") or (
            self.function == "first_value")


@dataclass(eq=False)
class Window(Plan):
    """Window functions: each row of ``child`` with ``calls``' values over its partition (the rows equal in
    ``partition``), ordered by ``order``.

    Kept up to date as a reduction per partition: a change to a partition of
    n rows sorts its rows again and recomputes its values, O(n log n), and
    changes only its rows whose values moved (an insert at the front of an
    ordered partition moves every ROW_NUMBER after it, as it must). Rows
    equal in every ORDER BY key are ordered by the whole row, so ROW_NUMBER
    and LAG are determined; Spark orders such ties in no stated way.
    """

    child: Plan
    partition: list[Scalar]
    order: list[SortKey]
    calls: list[WindowCall]
    fields: list[Field]
    clause: str

    def expressions(self) -> list[Scalar]:
        return [*self.partition, *(key.expression for key in self.order),
                *(part for call in self.calls for part in (call.argument, call.default) if part is not None)]

    def describe(self) -> str:
        by = f" by {shown(self.partition)}" if self.partition else " over all rows"
        ordered = f", ordered by {', '.join(str(key) for key in self.order)}" if self.order else ""
        cost = "a change sorts its n rows again, O(n log n)"
        if isinstance(self.child, TopK) and self.child.partition:
            cost = f"over the top-k's first {self.child.limit} rows: a change sorts those again"
        return f"window {', '.join(str(call) for call in self.calls)}{by}{ordered} (a reduce per partition: {cost})"


@dataclass(eq=False)
class AtMostOne(Plan):
    """A scalar subquery's rows: at most one, or the query fails, as Spark's does
    (``SCALAR_SUBQUERY_TOO_MANY_ROWS``)."""

    child: Plan
    clause: str

    @property
    def fields(self) -> list[Field]:  # type: ignore[override]
        return self.child.fields

    def describe(self) -> str:
        return "at most one row (a scalar subquery: more is Spark's error)"


def transform(plan: Plan, rewrite: Callable[[Plan], Plan | None]) -> Plan:
    """``plan`` rewritten bottom up: each node's inputs first, then ``rewrite(node)`` (None keeps it). A node
    that several parents read is rewritten once, so they keep sharing it."""
    done: dict[int, Plan] = {}

    def visit(node: Plan) -> Plan:
        if id(node) in done:
            return done[id(node)]
        inputs = node.inputs()
        new_inputs = [visit(child) for child in inputs]
        changed = node if all(a is b for a, b in zip(new_inputs, inputs, strict=True)) else node.with_inputs(
            new_inputs)
        result = rewrite(changed) or changed
        done[id(node)] = result
        return result

    return visit(plan)


def nodes(plan: Plan) -> list[Plan]:
    """Every node of ``plan``, each once, parents first."""
    found: list[Plan] = []
    seen: set[int] = set()

    def visit(node: Plan) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        found.append(node)
        for child in node.inputs():
            visit(child)

    visit(plan)
    return found


def reads(plan: Plan) -> set[int]:
    """The ids of the fields ``plan``'s expressions read anywhere in it (a correlated subquery's plan reads ids
    that it does not produce)."""
    found: set[int] = set()
    for node in nodes(plan):
        held = node.expressions() + (list(node.null_aware) if isinstance(node, Join) and node.null_aware else [])
        for scalar in held:
            found |= ids(scalar)
    return found


def produced(plan: Plan) -> set[int]:
    """The ids of every field some node of ``plan`` produces."""
    return {f.id for node in nodes(plan) for f in node.fields}
