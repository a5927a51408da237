"""Scalar expressions as symbolic trees: what a logical plan holds, printed and rewritten before anything runs.

The binder (``expressions.py``) turns a sqlglot expression into one of these
typed trees, with every column resolved to the ``Field`` it reads by its
``id``; rewrite rules move, split and substitute them (a predicate pushed
below a join reads the same ids); lowering turns one into a Python function
of a record with ``evaluator(scalar, layout)``, once the positions of the
ids in the record are known. This is DataFusion's symbolic ``Expr`` and
Materialize's ``MirScalarExpr``: a plan you can print and rewrite comes
before code that runs it.

A ``Call`` names its operation and holds its ``kernel``, the Spark semantics
of the operation on values (``types.py``, ``expressions.py``, ``dates.py``),
and how NULL reaches it (``mode``):

- ``STRICT``: any NULL argument makes the result NULL without calling the
  kernel (most operations: ``+``, ``=``, ``lower``);
- ``VALUES``: the kernel gets every value, NULLs included (``IS NULL``,
  ``<=>``, ``concat``'s callers decide);
- ``LAZY``: the kernel gets the row and the argument functions and calls
  them as it needs (``AND``, ``OR``, ``CASE``, ``COALESCE``), so a branch
  Spark never evaluates cannot raise here either.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .types import SqlType

STRICT, VALUES, LAZY = "strict", "values", "lazy"

_next_id = iter(range(1, 1 << 62))


def fresh_id() -> int:
    """A column id no other column of any plan has (ids are only compared, never read as numbers)."""
    return next(_next_id)


@dataclass(frozen=True)
class Field:
    """A column of a relation: the table name or alias that qualifies it (if any), its name, its type, and the
    ``id`` that expressions read it by. A table alias gives the same ids new qualifiers; reading a table or a
    CTE again gives new ids, so both sides of a self-join are told apart."""

    qualifier: str | None
    name: str
    type: SqlType
    id: int = field(default_factory=fresh_id)


class Scalar:
    """A typed expression over the columns of a row; ``str()`` prints it, and equal texts are equal expressions."""

    type: SqlType

    def children(self) -> tuple[Scalar, ...]:
        return ()

    def with_children(self, children: tuple[Scalar, ...]) -> Scalar:
        return self

    def __str__(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class Ref(Scalar):
    """The value of the column ``field`` (by its id)."""

    field: Field

    @property
    def type(self) -> SqlType:  # type: ignore[override]
        return self.field.type

    @property
    def id(self) -> int:
        return self.field.id

    def __str__(self) -> str:
        return f"{self.field.name}#{self.field.id}"


@dataclass(frozen=True, eq=False)
class Literal(Scalar):
    """A constant ``value`` of ``type``; ``folded`` when it is a cast of a constant computed at compile time.

    Spark types an integer *written* beside a DECIMAL by its own digits, but
    a cast of one (``CAST(1 AS BIGINT)``) by its type: ``folded`` keeps the
    two apart after folding.
    """

    value: Any
    type: SqlType
    folded: bool = False

    def __str__(self) -> str:
        if self.value is None:
            return "NULL"
        return repr(self.value) if isinstance(self.value, str) else str(self.value)


@dataclass(frozen=True, eq=False)
class Call(Scalar):
    """``name(args)``: ``kernel`` computes it from the arguments, NULLs handled as ``mode`` says."""

    name: str
    args: tuple[Scalar, ...]
    type: SqlType
    kernel: Callable[..., Any]
    mode: str = STRICT

    def children(self) -> tuple[Scalar, ...]:
        return self.args

    def with_children(self, children: tuple[Scalar, ...]) -> Scalar:
        return Call(self.name, children, self.type, self.kernel, self.mode)

    def __str__(self) -> str:
        if self.name == "NOT":
            return f"NOT {self.args[0]}"
        if (len(self.args) == 2 and not self.name.isidentifier()) or self.name in ("AND", "OR", "div"):
            return f"({self.args[0]} {self.name} {self.args[1]})"
        return f"{self.name}({', '.join(str(arg) for arg in self.args)})"


@dataclass(frozen=True, eq=False)
class Subquery(Scalar):
    """A subquery inside an expression, before decorrelation rewrites it into a join.

    ``kind`` is ``exists`` (``plan`` has rows), ``in`` (``value`` is among
    the plan's one column) or ``scalar`` (the plan's one value, NULL when it
    has no row). ``negated`` is ``NOT EXISTS`` / ``NOT IN``. ``correlated``
    lists the outer columns the plan reads. ``node`` is the sqlglot node, for
    refusals that point at it.
    """

    kind: str
    plan: Any
    value: Scalar | None
    negated: bool
    type: SqlType
    correlated: tuple[Field, ...]
    node: Any = None

    def children(self) -> tuple[Scalar, ...]:
        return (self.value,) if self.value is not None else ()

    def with_children(self, children: tuple[Scalar, ...]) -> Scalar:
        value = children[0] if children else None
        return Subquery(self.kind, self.plan, value, self.negated, self.type, self.correlated, self.node)

    def __str__(self) -> str:
        word = {"exists": "EXISTS", "in": "IN", "scalar": "SCALAR"}[self.kind]
        word = f"NOT {word}" if self.negated else word
        head = f"{self.value} " if self.value is not None else ""
        outer = f", correlated on {', '.join(f'{f.name}#{f.id}' for f in self.correlated)}" if self.correlated else ""
        return f"{head}{word}(subquery{outer})"


def walk(scalar: Scalar) -> Iterator[Scalar]:
    """``scalar`` and every expression under it, parents first (not looking into subqueries' plans)."""
    yield scalar
    for child in scalar.children():
        yield from walk(child)


def ids(scalar: Scalar) -> set[int]:
    """The ids of the columns ``scalar`` reads (a subquery's correlated columns included)."""
    found = set()
    for part in walk(scalar):
        if isinstance(part, Ref):
            found.add(part.id)
        elif isinstance(part, Subquery):
            found.update(f.id for f in part.correlated)
    return found


def substitute(scalar: Scalar, replace: Callable[[Scalar], Scalar | None]) -> Scalar:
    """``scalar`` with each part for which ``replace`` returns an expression replaced by it (outermost first)."""
    found = replace(scalar)
    if found is not None:
        return found
    children = scalar.children()
    if not children:
        return scalar
    new = tuple(substitute(child, replace) for child in children)
    return scalar if all(a is b for a, b in zip(new, children, strict=True)) else scalar.with_children(new)


def conjuncts(scalar: Scalar | None) -> list[Scalar]:
    """The parts of an ``AND`` chain (a condition that is not an ``AND`` is its own one part)."""
    if scalar is None:
        return []
    if isinstance(scalar, Call) and scalar.name == "AND":
        return [*conjuncts(scalar.args[0]), *conjuncts(scalar.args[1])]
    return [scalar]


def disjuncts(scalar: Scalar) -> list[Scalar]:
    """The parts of an ``OR`` chain."""
    if isinstance(scalar, Call) and scalar.name == "OR":
        return [*disjuncts(scalar.args[0]), *disjuncts(scalar.args[1])]
    return [scalar]


def evaluator(scalar: Scalar, layout: Mapping[int, int]) -> Callable[[tuple], Any]:
    """A function of a record computing ``scalar``, where column id ``i`` is at position ``layout[i]``.

    Raises:
        KeyError: ``scalar`` reads a column that is not in the record (a rule left a reference unresolved).
    """
    if isinstance(scalar, Ref):
        return operator.itemgetter(layout[scalar.id])
    if isinstance(scalar, Literal):
        value = scalar.value
        return lambda row: value
    if isinstance(scalar, Subquery):
        raise ValueError(f"{scalar} was not rewritten into a join before lowering")
    assert isinstance(scalar, Call), scalar
    fns = [evaluator(arg, layout) for arg in scalar.args]
    kernel = scalar.kernel
    if scalar.mode == LAZY:
        return lambda row: kernel(row, fns)
    if scalar.mode == VALUES:
        if len(fns) == 1:
            (only,) = fns
            return lambda row: kernel(only(row))
        return lambda row: kernel(*[fn(row) for fn in fns])
    if len(fns) == 1:
        (only,) = fns
        return lambda row: None if (value := only(row)) is None else kernel(value)
    if len(fns) == 2:
        first, second = fns

        def binary(row: tuple) -> Any:
            a = first(row)
            if a is None:
                return None
            b = second(row)
            return None if b is None else kernel(a, b)

        return binary

    def strict(row: tuple) -> Any:
        values = []
        for fn in fns:
            value = fn(row)
            if value is None:
                return None
            values.append(value)
        return kernel(*values)

    return strict
