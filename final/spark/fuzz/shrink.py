"""Shrinking a fuzzing case that differs: the smallest case found that still differs the same way.

A difference found on a random case comes with tables, versions and a
query far larger than the bug needs. ``Shrinker`` cuts them down in passes
(versions, the query's clauses and subexpressions, rows, churn, tables,
columns, values), keeping a candidate only when the check still differs
with the same ``signature``, until no pass helps or its time is up; the
result is what ``reproduce`` writes as a test.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import sqlglot
from sqlglot import exp

from ..query import Table
from ..sql.dialect import SPARK
from .check import Checker, Outcome
from .data import Dataset, DatasetCommit, Row
from .queries import FuzzCase

SHRINK_SECONDS = 240.0
"""Time one difference may take to shrink; a shrink stops there with what it has (still a reproducer)."""


def signature(outcome: Outcome) -> tuple[str, str]:
    """What a shrink keeps of a difference: its kind and, for a failure of ours, the error raised (its type
    and message, without the operators that name the query's clauses, which shrinking changes)."""
    if outcome.kind not in ("crash", "compile-crash"):
        return outcome.kind, ""
    return outcome.kind, outcome.detail.rpartition("raised ")[2] or outcome.detail


class Shrinker:
    """Makes a differing case smaller while it still differs in the same way (``Outcome.kind``).

    Passes, repeated until none helps or time runs out: drop versions (the
    first left becomes the load); drop the query's clauses, SELECT items,
    joins, set-operation arms and CTEs, and replace subexpressions by their
    parts or NULL (parsed and printed by sqlglot); drop rows (in halves,
    then quarters, ... then one by one), churn, tables and columns; replace
    values by NULL. A candidate is kept only if it compiles, Spark takes it,
    and the check differs with the same kind.
    """

    def __init__(self, checker: Checker, seconds: float = SHRINK_SECONDS) -> None:
        self.checker = checker
        self.seconds = seconds
        self.checks = 0

    def shrink(self, case: FuzzCase, outcome: Outcome) -> tuple[FuzzCase, Outcome]:
        """The smallest case found that differs as ``outcome`` does (``signature``), and its outcome."""
        self._deadline = time.monotonic() + self.seconds
        self._signature = signature(outcome)
        self._best = (case, outcome)
        passes = (self._versions, self._query, self._rows, self._churn, self._tables, self._columns, self._values)
        progress = True
        while progress and not self._late():
            progress = False
            for step in passes:
                if self._late():
                    break
                progress |= step()
        return self._best

    def _late(self) -> bool:
        return time.monotonic() > self._deadline

    def _try(self, case: FuzzCase) -> bool:
        """Keep ``case`` if it still differs with the same kind."""
        if self._late():
            return False
        self.checks += 1
        outcome = self.checker.check(case)
        if outcome.status == "differ" and signature(outcome) == self._signature:
            self._best = (case, outcome)
            return True
        return False

    @property
    def _case(self) -> FuzzCase:
        return self._best[0]

    def _with(self, tables: Sequence[Table] | None = None, commits: Sequence[DatasetCommit] | None = None,
              text: str | None = None) -> FuzzCase:
        dataset = self._case.dataset
        dataset = Dataset(tuple(dataset.tables if tables is None else tables),
                          tuple(dataset.commits if commits is None else commits))
        return replace(self._case, dataset=dataset, text=self._case.text if text is None else text)

    def _versions(self) -> bool:
        progress = False
        index = len(self._case.dataset.commits) - 1
        while index >= 0 and len(self._case.dataset.commits) > 1:
            commits = list(self._case.dataset.commits)
            del commits[index]
            if index == 0:
                commits[0] = replace(commits[0], churn=())
            progress |= self._try(self._with(commits=commits))
            index = min(index - 1, len(self._case.dataset.commits) - 1)
        return progress

    def _query(self) -> bool:
        """Each node of the query in turn: drop it or replace it by a part, keeping the first that differs."""
        progress = False
        index = 0
        while not self._late():
            try:
                tree = sqlglot.parse_one(self._case.text, read=SPARK)
            except sqlglot.errors.SqlglotError:
                return progress
            nodes = list(tree.walk())
            if index >= len(nodes):
                return progress
            kept = False
            # A query only SQLite answers has the types the generator wrote down; an edited one has none known.
            types = self._case.types if "spark" in self._case.oracles else None
            for candidate in _query_variants(tree, index):
                if candidate != self._case.text and self._try(replace(self._case, text=candidate, types=types)):
                    progress = kept = True
                    break
            if not kept:
                index += 1

    def _rows(self) -> bool:
        progress = False
        for table in range(len(self._case.dataset.tables)):
            distinct = list(dict.fromkeys(row for commit in self._case.dataset.commits for row in commit.rows[table]))
            size = max(1, len(distinct) // 2)
            while size >= 1 and distinct and not self._late():
                start = 0
                while start < len(distinct):
                    chunk = set(distinct[start:start + size])
                    if self._try(self._without_rows(table, chunk)):
                        progress = True
                        distinct = [row for row in distinct if row not in chunk]
                    else:
                        start += size
                size //= 2
        return progress

    def _without_rows(self, table: int, rows: set) -> FuzzCase:
        commits = [replace(commit,
                           rows=tuple(tuple(row for row in held if row not in rows) if position == table else held
                                      for position, held in enumerate(commit.rows)),
                           churn=tuple((index, row) for index, row in commit.churn
                                       if not (index == table and row in rows)))
                   for commit in self._case.dataset.commits]
        return self._with(commits=commits)

    def _churn(self) -> bool:
        progress = False
        for version in range(len(self._case.dataset.commits)):
            for entry in list(self._case.dataset.commits[version].churn):
                commits = list(self._case.dataset.commits)
                commits[version] = replace(commits[version],
                                           churn=tuple(item for item in commits[version].churn if item != entry))
                progress |= self._try(self._with(commits=commits))
        return progress

    def _tables(self) -> bool:
        """Drop the tables the query does not read (they only fill the reproducer)."""
        progress = False
        for name in list(self._case.dataset.names):
            if len(self._case.dataset.tables) == 1 or re.search(rf"\b{name}\b", self._case.text):
                continue
            keep = [index for index, table in enumerate(self._case.dataset.tables) if table.name != name]
            progress |= self._try(self._with(
                tables=[self._case.dataset.tables[index] for index in keep],
                commits=[DatasetCommit(tuple(commit.rows[index] for index in keep),
                                tuple((keep.index(table), row) for table, row in commit.churn if table in keep))
                         for commit in self._case.dataset.commits]))
        return progress

    def _columns(self) -> bool:
        progress = False
        for table in range(len(self._case.dataset.tables)):
            position = len(self._case.dataset.tables[table].columns) - 1
            while position >= 0 and len(self._case.dataset.tables[table].columns) > 1:
                name = self._case.dataset.tables[table].columns[position][0]
                if not re.search(rf"\b{name}\b", self._case.text):
                    progress |= self._try(self._without_column(table, position))
                position -= 1
        return progress

    def _without_column(self, table: int, position: int) -> FuzzCase:
        def cut(row: Row) -> Row:
            return row[:position] + row[position + 1:]

        tables = list(self._case.dataset.tables)
        tables[table] = replace(tables[table], columns=cut(tables[table].columns), key=None)
        commits = [DatasetCommit(tuple(tuple(cut(row) for row in held) if index == table else held
                                for index, held in enumerate(commit.rows)),
                          tuple((index, cut(row) if index == table else row) for index, row in commit.churn))
                   for commit in self._case.dataset.commits]
        return self._with(tables=tables, commits=commits)

    def _values(self) -> bool:
        """Replace a column's value by NULL wherever it is (one value at a time)."""
        progress = False
        for table in range(len(self._case.dataset.tables)):
            for position in range(len(self._case.dataset.tables[table].columns)):
                values = list(dict.fromkeys(row[position] for commit in self._case.dataset.commits
                                            for row in commit.rows[table] if row[position] is not None))
                for value in values:
                    if self._late():
                        return progress
                    progress |= self._try(self._replaced(table, position, value, None))
        return progress

    def _replaced(self, table: int, position: int, old: Any, new: Any) -> FuzzCase:
        def swap(row: Row) -> Row:
            if row[position] is old or (row[position] == old and type(row[position]) is type(old)):
                return (*row[:position], new, *row[position + 1:])
            return row

        commits = [DatasetCommit(tuple(tuple(swap(row) for row in held) if index == table else held
                                for index, held in enumerate(commit.rows)),
                          tuple((index, swap(row) if index == table else row) for index, row in commit.churn))
                   for commit in self._case.dataset.commits]
        return self._with(commits=commits)


def _query_variants(tree: Any, index: int) -> Iterator[str]:
    """Smaller queries made from ``tree`` at its ``index``-th node (in ``tree.walk()`` order): the node's
    clauses, items, joins, arms or list entries dropped one at a time, an outer join made inner, a set
    operation made ALL, the node replaced by one of its parts or by NULL."""
    node = list(tree.walk())[index]
    changes: list[Callable[[Any], Any]] = []

    def dropping(key: str, position: int) -> Callable[[Any], Any]:
        return lambda n: n.set(key, [item for i, item in enumerate(n.args[key]) if i != position] or None)

    if isinstance(node, exp.SetOperation):
        changes += [lambda n: n.replace(n.this.copy()), lambda n: n.replace(n.expression.copy())]
        if node.args.get("distinct"):
            changes.append(lambda n: n.set("distinct", False))
    if isinstance(node, exp.Select):
        for key in ("where", "having", "distinct"):
            if node.args.get(key):
                changes.append(lambda n, key=key: n.set(key, None))
        if node.args.get("group"):
            changes.append(lambda n: (n.set("group", None), n.set("having", None)))
        if len(node.expressions) > 1:
            changes += [dropping("expressions", position) for position in range(len(node.expressions))]
        changes += [dropping("joins", position) for position in range(len(node.args.get("joins") or ()))]
    if isinstance(node, exp.With) and len(node.expressions) > 1:
        changes += [dropping("expressions", position) for position in range(len(node.expressions))]
    if isinstance(node, exp.Join) and (node.args.get("side") or node.args.get("kind")):
        changes.append(lambda n: (n.set("side", None), n.set("kind", None)))
    if isinstance(node, (exp.In, exp.Coalesce, exp.Concat)) and len(node.expressions) > 1:
        changes += [dropping("expressions", position) for position in range(len(node.expressions))]
    if isinstance(node, exp.Case):
        if node.args.get("default") is not None:
            changes += [lambda n: n.set("default", None), lambda n: n.replace(n.args["default"].copy())]
        for position in range(len(node.args.get("ifs") or ())):
            changes.append(lambda n, p=position: n.replace(n.args["ifs"][p].args["true"].copy()))
        if len(node.args.get("ifs") or ()) > 1:
            changes += [dropping("ifs", position) for position in range(len(node.args["ifs"]))]
    if _replaceable(node):
        for key, value in node.args.items():
            listed = isinstance(value, list)
            for position, child in enumerate(value if listed else [value]):
                if isinstance(child, (exp.Condition, exp.Paren)) and not isinstance(child, exp.DataType):
                    changes.append(lambda n, key=key, position=position, listed=listed:
                                   n.replace((n.args[key][position] if listed else n.args[key]).copy()))
        if not isinstance(node, exp.Null):
            changes.append(lambda n: n.replace(exp.Null()))
    seen = set()
    for change in changes:
        copy = tree.copy()
        target = list(copy.walk())[index]
        try:
            result = change(target)
            root = result if target is copy and isinstance(result, exp.Expression) else copy
            text = root.sql(dialect="spark")
        except Exception:  # a change that leaves no valid tree is no candidate
            continue
        if text not in seen:
            seen.add(text)
            yield text


def _replaceable(node: Any) -> bool:
    """Whether ``node`` is an expression a simpler one may stand for (not a clause, name, type, literal,
    or a CASE's WHEN branch)."""
    if isinstance(node, (exp.Column, exp.Literal, exp.Identifier, exp.DataType, exp.Star, exp.Table,
                         exp.TableAlias, exp.Alias, exp.Null, exp.Boolean, exp.Select, exp.SetOperation,
                         exp.Subquery)):
        return False
    if isinstance(node, exp.If) and isinstance(node.parent, exp.Case):
        return False
    return isinstance(node, (exp.Condition, exp.Paren)) and node.parent is not None

