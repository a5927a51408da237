"""What runs on the executors: a query's steps compiled again from its text, as ``final/``'s own row functions.

A Python worker gets a step as ``(recipe, index)``: the query's recipe
(``SqlQuery.recipe``: name, SQL text, tables) and the step's place in
``logical.nodes(plan)``. It compiles the query again, once per worker
(``plan_nodes``), as ``run_partition`` does, and builds the step from the
same code the driver's dataflow is built from (``sql.lower``): a filter's
condition and a projection's expressions are ``compiled`` Scalars, a GROUP
BY is ``lower.grouping`` and ``operators.aggregate.Aggregates``. So nothing
but plain data crosses from the driver, and there is no second
implementation of a step.

- ``KeyedBy`` (``mapInArrow``): changes through the stateless steps below a
  keyed one, each with its key (``shuffle_keys``), packed by key group
  (``changes.key_group``) for Spark's shuffle.
- ``GroupBy`` (``transformWithState``, one call per key group and
  micro-batch): its keys' aggregates in Spark's state store, a
  micro-batch's changes taken version by version, in version order, the
  keys' output changes out.
- ``KeyedStep`` (``transformWithState``): every other keyed step (a join,
  DISTINCT, a set operation, a top-k, a window, a scalar subquery's one
  row). Each input's changes are keyed
  (``shuffle_keys``: a join's by its key, DISTINCT and set operations by
  the whole row, a top-k and a window by their partition), and a key's
  state is its rows of each input; a version's output change is the step
  over the key's inputs after it minus before it (run once over all the
  keys of a key group that changed), the step built by
  ``sql.lower`` over ``at_once`` streams (an inner join, which is
  bilinear, as 003's ``dA x B + A' x dB`` instead).
- ``Through`` (``mapInArrow``): changes through stateless steps and on as
  changes: the sides of a UNION ALL, which keeps no state.
- ``Output`` (``mapInArrow``): changes through the last stateless steps,
  named by their query, so that a data set's queries make one stream.

A three-input delta join (``MultiJoin``: 003's ``join_many``) looks each
change up in the other inputs by several keys at once, which no one
shuffle can place; on the executors it is the chain of binary joins it was
made from (``binary_joins``), each keyed by its own key.
"""

from __future__ import annotations

import contextlib
import io
import operator
import pickle
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql import Row
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle

from ...collection import Collection
from ...operators.aggregate import Aggregates
from ...operators.reduce import NOTHING
from ..sql.errors import SqlRuntimeError, runtime_cause
from ..sql.expressions import conjunction
from ..sql.logical import (
    Aggregate,
    AtMostOne,
    Distinct,
    Filter,
    Join,
    MultiJoin,
    Plan,
    Project,
    RecursiveReference,
    Rename,
    SetOperation,
    Sort,
    TopK,
    Window,
    nodes,
    transform,
)
from ..sql.lower import Env, compiled, grouping, join_keys, lower
from ..sql.scalar import Call, Ref
from ..sql.types import BOOLEAN
from . import at_once
from .changes import (
    KEY,
    MULTIPLICITY,
    PACK,
    PICKLE,
    QUERY,
    ROW,
    SIDE,
    START,
    VERSION,
    change_batch,
    changes_of,
    encoded,
    key_group,
    packed,
    shuffle_key,
    unpacked,
)

if TYPE_CHECKING:
    import pyarrow

Recipe = tuple[str, str, dict]
"""``SqlQuery.recipe``: what a worker compiles a query again from (name, SQL text, tables)."""

_compiled: dict[tuple[str, str, tuple[str, ...]], list[Plan]] = {}
"""Each query this worker compiled, by name, text and tables' columns (a widened column compiles it again): its
plan's nodes, parents first."""


class StepError(RuntimeError):
    """A worker's plan of a query is not the driver's: the node at a step's place is of another kind."""


class ValueRefused(ArithmeticError):
    """A value Spark SQL raises an error for (``SqlRuntimeError``: a division by zero, an overflow, a cast that
    fails), met by a step of query ``query`` at ``version`` on an executor.

    It fails the micro-batch, and its line is in the error Spark gives the
    driver, which finds it there (``found_in``) and stops the follow as the
    driver's follow stops at such a value (``follow.data_error``).
    """

    LINE = re.compile(r"ValueRefused: query (?P<query>.+?) fails at version (?P<version>\d+): (?P<refused>.*)")

    def __init__(self, query: str, version: int, refused: SqlRuntimeError) -> None:
        super().__init__(f"query {query} fails at version {version}: {refused}")

    @classmethod
    def found_in(cls, text: str) -> tuple[str, int, str] | None:
        """The query, version and refusal of the ``ValueRefused`` that ``text`` (a failed micro-batch's error,
        with its Python trace) reports, if it reports one."""
        found = cls.LINE.search(text)
        return None if found is None else (found["query"], int(found["version"]), found["refused"])


@contextlib.contextmanager
def refusing(recipe: Recipe, version: int) -> Iterator[None]:
    """A value the body raises a ``SqlRuntimeError`` for (even wrapped, as ``final/``'s operators wrap what a
    function raises) as a ``ValueRefused`` of ``recipe``'s query at ``version``."""
    try:
        yield
    except Exception as error:
        refused = runtime_cause(error)
        if refused is None:
            raise
        raise ValueRefused(recipe[0], version, refused) from None


def plan_nodes(recipe: Recipe) -> list[Plan]:
    """The nodes of the query ``recipe`` compiles to (``logical.nodes``: parents first), compiled once per
    worker."""
    name, text, tables = recipe
    held = (name, text, tuple(f"{table}: {tables[table].ddl}" for table in sorted(tables)))
    found = _compiled.get(held)
    if found is None:
        from ..sql import compile_sql

        found = _compiled[held] = nodes(executors_plan(compile_sql(text, tables, name).plan))
    return found


def executors_plan(plan: Plan) -> Plan:
    """``plan`` as the executors run it: each delta join the chain of binary joins it was made from
    (``binary_joins``). The driver and every worker lower this same plan, and find a step by its place in it."""
    return transform(plan, lambda node: binary_joins(node) if isinstance(node, MultiJoin) else None)


def binary_joins(node: MultiJoin) -> Plan:
    """A delta join as inner joins, left-deep: its first input, joined with each next input that an equality
    connects to those before (lowest number first) on those equalities; then its columns in its own order."""
    joined: Plan = node.members[0]
    order = [0]
    while len(order) < len(node.members):
        equal = [(i, a, j, b) for i, a, j, b in node.equalities if (i in order) != (j in order)]
        member = min(j if i in order else i for i, _, j, _ in equal)
        parts = [Call("=", (a, b) if i in order else (b, a), BOOLEAN, operator.eq)
                 for i, a, j, b in equal if member in (i, j)]
        joined = Join(joined, node.members[member], "INNER", conjunction(parts), node.clause)
        order.append(member)
    if order == sorted(order):
        return joined
    return Project(joined, [Ref(f) for f in node.fields], node.fields, node.clause)


def step(recipe: Recipe, index: int, kind: type) -> Any:
    """The node at ``index`` of the query's plan, checked to be a ``kind``.

    Raises:
        StepError: it is not: the worker compiled the text to another plan than the driver's.
    """
    node = plan_nodes(recipe)[index]
    if not isinstance(node, kind):
        raise StepError(f"query {recipe[0]}: step {index} is a {type(node).__name__} on this worker, where the "
                        f"driver planned a {kind.__name__}; run the driver and the executors on one version of final")
    return node


STATELESS = (Filter, Project, Rename, Sort)
"""The steps that map each change on its own: a row in, at most one row out."""


def row_step(node: Plan) -> Callable[[tuple], tuple | None]:
    """A stateless step as a function of one row: the row it makes, or None where it drops the row."""
    if isinstance(node, Filter):
        condition = compiled(node.condition, node.child.fields)
        return lambda row: row if condition(row) is True else None
    if isinstance(node, Project):
        fns = [compiled(expr, node.child.fields) for expr in node.exprs]
        return lambda row: tuple([fn(row) for fn in fns])
    return lambda row: row  # a Rename names the same rows; a Sort keeps every row


def chain(recipe: Recipe, steps: Sequence[int]) -> Callable[[int, tuple], tuple | None]:
    """The stateless steps at ``steps`` (bottom first) as one function of a change's version and row; a value
    Spark SQL refuses raises ``ValueRefused`` at that version."""
    fns = [row_step(step(recipe, index, STATELESS)) for index in steps]

    def through(version: int, row: tuple) -> tuple | None:
        try:
            for fn in fns:
                row = fn(row)
                if row is None:
                    return None
        except SqlRuntimeError as refused:
            raise ValueRefused(recipe[0], version, refused) from None
        return row

    return through


class GroupBy(StatefulProcessor):
    """``transformWithState`` of the GROUP BY at ``index``: a key group's groups (``operators.aggregate._Group``,
    by ``final/``'s key of the rows) in the state store, and its output changes out.

    A micro-batch holds whole versions, and a key group's changes of it come
    in no order (packed by version: ``KeyedBy``): they are put in version order and
    taken a version at a time (``Aggregates.apply``), each version's output
    change made into rows of the step (``Grouping.row``). The state is the key's groups pickled; the
    objects shared with the code rather than held (the MIN/MAX reduction,
    the ``NOTHING`` marker) are pickled by name, so they are the same
    objects once read back.

    A global aggregate (``whole``) has one key and its row over no rows
    (``Grouping.empty``) whenever it has no group: from version 0 on, where
    the source's start row (``changes.START``) calls it even if no row ever
    does.

    Invariant: the state of a key group is ``(v, {final key: _Group})``, its keys' groups as of ``v``, the last
    version it had changes at in the micro-batches Spark committed; absent for a key group with nothing left (a
    global aggregate's is kept: ``v`` says its empty row has been given).
    """

    def __init__(self, recipe: Recipe, index: int) -> None:
        self.recipe, self.index = recipe, index

    def init(self, handle: StatefulProcessorHandle) -> None:
        node = step(self.recipe, self.index, Aggregate)
        self.grouping, self.whole = grouping(node), node.whole
        self.aggregates = Aggregates(self.grouping.named)
        self.shared = {id(self.aggregates.reduction): "reduction", id(NOTHING): "nothing"}
        self.objects = {"reduction": self.aggregates.reduction, "nothing": NOTHING}
        self.state = handle.getValueState("groups", "groups BINARY")

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        versions: dict[int, list[tuple[tuple, int]]] = defaultdict(list)
        for row in rows:
            versions[row[VERSION]] += [(made, multiplicity) for _, made, multiplicity in unpacked(row[PACK])]
        held = self.state.get()  # None for a key with no state (one call to the state store, not two)
        last, groups = self._load(held[0]) if held is not None else (-1, {})
        if min(versions) < last:
            raise StepError(f"query {self.recipe[0]}: the GROUP BY at step {self.index} got changes at version "
                            f"{min(versions)} for a key whose changes at version {last} it had applied; a key's "
                            f"changes must come in version order (a micro-batch's, in one call)")
        make_row, key_of, apply = self.grouping.row, self.grouping.key, self.aggregates.apply
        out: dict[tuple[int, tuple], int] = {}
        for version in sorted(versions):
            shown = self.whole and last >= 0 and not groups  # the row over no rows, given before this version
            with refusing(self.recipe, version):
                for pair, multiplicity in apply(groups, key_of, [versions[version]]):
                    made = (version, make_row(pair))
                    out[made] = out.get(made, 0) + multiplicity
            if self.whole and shown != (not groups):
                made = (version, self.grouping.empty())
                out[made] = out.get(made, 0) + (-1 if shown else 1)
            last = version
        if groups or self.whole:
            self.state.update((self._dump((last, groups)),))
        else:
            self.state.clear()
        for (version, made), multiplicity in out.items():
            if multiplicity:
                yield Row(**{VERSION: version, MULTIPLICITY: multiplicity, ROW: encoded(made)})

    def _dump(self, state: tuple[int, dict]) -> bytes:
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, PICKLE)
        shared = self.shared
        pickler.persistent_id = lambda thing: shared.get(id(thing))
        pickler.dump(state)
        return buffer.getvalue()

    def _load(self, data: bytes) -> tuple[int, dict]:
        unpickler = pickle.Unpickler(io.BytesIO(data))
        unpickler.persistent_load = self.objects.__getitem__
        return unpickler.load()

    def close(self) -> None:
        """Nothing held outside the state store."""


KEYED = (Join, Distinct, SetOperation, TopK, Window, AtMostOne)
"""The steps kept per key by ``KeyedStep`` (a UNION ALL among the set operations keeps nothing: ``Through``); a
GROUP BY is ``GroupBy``'s."""


def shuffle_keys(node: Plan) -> list[Callable[[tuple], Any]]:
    """A keyed step's key of a row of each of its inputs: rows of different keys never meet in the step, so each
    key's output is the step over that key's rows alone."""
    if isinstance(node, Join):  # a NOT IN's groups are its correlation: these keys too
        keys = join_keys(node.condition, node.left.fields, node.right.fields)
        return [keys.left, keys.right]
    if isinstance(node, (TopK, Window)):
        parts = [compiled(scalar, node.child.fields) for scalar in node.partition]
        return [lambda row: tuple([part(row) for part in parts])]
    if isinstance(node, Aggregate):
        keys = [compiled(key, node.child.fields) for key in node.keys]
        return [lambda row: tuple([key(row) for key in keys])]
    if isinstance(node, AtMostOne):
        return [_nothing]
    return [_itself] * len(node.inputs())  # DISTINCT and set operations: the whole row


def _nothing(row: tuple) -> tuple:
    return ()


def _itself(row: tuple) -> tuple:
    return row


class KeyedBy:
    """``mapInArrow``: each change of input ``side`` of the keyed step at ``index`` (a GROUP BY's too) through the
    stateless ``steps``, with its key (``shuffle_keys``, written as ``changes.shuffle_key`` writes it), packed with
    the other changes of its key group and version in its batch: a row per key group and version, in
    ``changes.TAGGED``'s columns. With ``table``, the changes are the source's, and those of ``table`` are
    taken (``changes.changes_of``)."""

    def __init__(self, recipe: Recipe, steps: Sequence[int], index: int, side: int, table: str | None) -> None:
        self.recipe, self.steps, self.index, self.side, self.table = recipe, tuple(steps), index, side, table

    def __call__(self, batches: Iterator[pyarrow.RecordBatch]) -> Iterator[pyarrow.RecordBatch]:
        import pyarrow

        key = shuffle_keys(step(self.recipe, self.index, (*KEYED, Aggregate)))[self.side]
        through = chain(self.recipe, self.steps)
        for batch in batches:
            groups: dict[tuple[int, int], list[tuple[bytes, tuple, int]]] = defaultdict(list)
            for version, multiplicity, row in changes_of(batch, self.table):
                row = through(version, row)
                if row is not None:
                    found = shuffle_key(key(row))
                    groups[key_group(found), version].append((found, row, multiplicity))
            yield pyarrow.RecordBatch.from_arrays(
                [pyarrow.array([group for group, _ in groups], pyarrow.int32()),
                 pyarrow.array([self.side] * len(groups), pyarrow.int32()),
                 pyarrow.array([version for _, version in groups], pyarrow.int64()),
                 pyarrow.array([packed(changes) for changes in groups.values()], pyarrow.binary())],
                names=[KEY, SIDE, VERSION, PACK])


class KeyedStep(StatefulProcessor):
    """``transformWithState`` of the keyed step at ``index``: each key's rows of each input in the state store,
    by key group, and the keys' output changes out.

    The step is built once per worker by ``sql.lower`` over ``at_once``
    streams standing for its inputs (``evaluate``); a key's output at a
    version is that step run over the key's rows at the version, and its
    change is the output after the version's changes minus the one before. An
    inner join is bilinear, so its change is ``dA x B + A' x dB`` (003): the
    step run over the changes of one side and the other side's rows, never
    over every pair. A micro-batch's changes of a key group come in no order,
    packed by side and version (``KeyedBy``); they are taken a version at a
    time, in version order. Since rows of different keys never meet in the
    step (``shuffle_keys``), the step over several keys' rows is the sum of
    the step over each key's: each version's step runs once, over every key
    of the group that changed (one call per key made the shop's first load
    2.3 times slower).

    Invariant: the state of a key group is ``(v, {key: [{row: multiplicity}, ...]})``, each of its keys' rows of
    each input as of ``v``, the last version it had changes at in the micro-batches Spark committed, no zero
    and no key without rows kept; absent for a key group with no row left.
    """

    def __init__(self, recipe: Recipe, index: int) -> None:
        self.recipe, self.index = recipe, index

    def init(self, handle: StatefulProcessorHandle) -> None:
        node = step(self.recipe, self.index, KEYED)
        self.sides = len(node.inputs())
        self.bilinear = isinstance(node, Join) and node.kind == "INNER" and node.null_aware is None
        builder = at_once.AtOnceBuilder()
        names = [f"input {side}" for side in range(self.sides)]
        standing = node.with_inputs([RecursiveReference(name, child.fields, child.clause)
                                     for name, child in zip(names, node.inputs(), strict=True)])
        self.step = lower(standing, Env({}, builder, {name: builder.input(side) for side, name in enumerate(names)}))
        self.state = handle.getValueState("rows", "rows BINARY")

    def evaluate(self, inputs: Sequence[Collection]) -> Collection:
        """The step's output over ``inputs``, the rows of each input of one or more keys: the sum of its output
        over each key's rows alone, since rows of different keys never meet in it (``shuffle_keys``)."""
        return at_once.run(self.step, inputs)

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        versions: dict[int, dict[bytes, list[list[tuple[tuple, int]]]]] = defaultdict(dict)
        for row in rows:
            side, keys = row[SIDE], versions[row[VERSION]]
            for found, made, multiplicity in unpacked(row[PACK]):
                if found not in keys:
                    keys[found] = [[] for _ in range(self.sides)]
                keys[found][side].append((made, multiplicity))
        held = self.state.get()
        last, group = pickle.loads(held[0]) if held is not None else (-1, {})
        if min(versions) < last:
            raise StepError(f"query {self.recipe[0]}: the step at {self.index} got changes at version "
                            f"{min(versions)} for a key group whose changes at version {last} it had applied; a "
                            f"key group's changes must come in version order (a micro-batch's, in one call)")
        out: dict[tuple[int, tuple], int] = defaultdict(int)
        for version in sorted(versions):
            changed = versions[version]
            inputs = [group.get(found) or [{} for _ in range(self.sides)] for found in changed]
            with refusing(self.recipe, version):
                for made, multiplicity in self._change(inputs, list(changed.values())):
                    out[version, made] += multiplicity
            for found, rows_of in zip(changed, inputs, strict=True):
                if any(rows_of):
                    group[found] = rows_of
                else:
                    group.pop(found, None)
        if group:
            self.state.update((pickle.dumps((max(versions), group), PICKLE),))
        else:
            self.state.clear()
        for (version, made), multiplicity in out.items():
            if multiplicity:
                yield Row(**{VERSION: version, MULTIPLICITY: multiplicity, ROW: encoded(made)})

    def _change(self, inputs: list[list[dict]], changes: list[list[list[tuple[tuple, int]]]]) -> Collection:
        """The step's output change when ``changes`` (of each key: of each input) are added to the keys' rows
        ``inputs`` (of each key: of each input), which take them: the step over the keys' rows after minus
        before, each run once over every key that changed."""
        if self.bilinear:
            return self._bilinear(inputs, changes)
        before = self.evaluate(_sides(inputs, range(self.sides)))
        for rows_of, changed in zip(inputs, changes, strict=True):
            for rows, change in zip(rows_of, changed, strict=True):
                _apply(rows, change)
        return self.evaluate(_sides(inputs, range(self.sides))).concat(before.negate())

    def _bilinear(self, inputs: list[list[dict]], changes: list[list[list[tuple[tuple, int]]]]) -> Collection:
        """An inner join's change, ``dA x B + A' x dB``, each term over the keys that have changes of that side."""
        made: list[tuple[tuple, int]] = []
        left = [(rows_of, changed) for rows_of, changed in zip(inputs, changes, strict=True) if changed[0]]
        if left:
            made += self.evaluate([Collection.trusted([pair for _, changed in left for pair in changed[0]]),
                                   *_sides([rows_of for rows_of, _ in left], [1])]).updates
        for rows_of, changed in zip(inputs, changes, strict=True):
            _apply(rows_of[0], changed[0])
        right = [(rows_of, changed) for rows_of, changed in zip(inputs, changes, strict=True) if changed[1]]
        if right:
            made += self.evaluate([*_sides([rows_of for rows_of, _ in right], [0]),
                                   Collection.trusted([pair for _, changed in right for pair in changed[1]])]).updates
        for rows_of, changed in zip(inputs, changes, strict=True):
            _apply(rows_of[1], changed[1])
        return Collection.trusted(made)

    def close(self) -> None:
        """Nothing held outside the state store."""


def _sides(inputs: list[list[dict]], sides: Iterable[int]) -> list[Collection]:
    """For each input of ``sides``, the rows of every key of ``inputs`` (of each key: of each input) together."""
    return [Collection.trusted([pair for rows_of in inputs for pair in rows_of[side].items()]) for side in sides]


def _apply(rows: dict[tuple, int], changes: list[tuple[tuple, int]]) -> None:
    """``changes`` added to ``rows``, a row whose multiplicity reaches zero dropped."""
    for row, multiplicity in changes:
        total = rows.get(row, 0) + multiplicity
        if total:
            rows[row] = total
        else:
            del rows[row]


class Through:
    """``mapInArrow``: each change through the stateless ``steps``, on as a change (``changes.CHANGES``); with
    ``table``, the changes of that table among the source's."""

    def __init__(self, recipe: Recipe, steps: Sequence[int], table: str | None) -> None:
        self.recipe, self.steps, self.table = recipe, tuple(steps), table

    def __call__(self, batches: Iterator[pyarrow.RecordBatch]) -> Iterator[pyarrow.RecordBatch]:
        through = chain(self.recipe, self.steps)
        for batch in batches:
            yield change_batch([(version, multiplicity, made)
                                for version, multiplicity, row in changes_of(batch, self.table)
                                if (made := through(version, row)) is not None])


class Started:
    """``mapInArrow``: the source's start row (``changes.START``), as the call of a global aggregate's one key
    group at version 0 with no change (``changes.TAGGED``' columns): its row over no rows is given then."""

    def __call__(self, batches: Iterator[pyarrow.RecordBatch]) -> Iterator[pyarrow.RecordBatch]:
        import pyarrow

        group, nothing = key_group(shuffle_key(())), packed([])
        for batch in batches:
            versions = [version for version, _, _ in changes_of(batch, START)]
            yield pyarrow.RecordBatch.from_arrays(
                [pyarrow.array([group] * len(versions), pyarrow.int32()),
                 pyarrow.array([0] * len(versions), pyarrow.int32()), pyarrow.array(versions, pyarrow.int64()),
                 pyarrow.array([nothing] * len(versions), pyarrow.binary())], names=[KEY, SIDE, VERSION, PACK])


class Output:
    """``mapInArrow``: each change through the stateless ``steps``, a batch's changes consolidated, each named by
    the query ``QUERY`` (``changes.OUTPUT``'s columns): the changes of a data set's queries are one stream. With
    ``table``, the changes of that table among the source's (a query that is a scan and stateless steps)."""

    def __init__(self, recipe: Recipe, steps: Sequence[int], table: str | None) -> None:
        self.recipe, self.steps, self.table = recipe, tuple(steps), table

    def __call__(self, batches: Iterator[pyarrow.RecordBatch]) -> Iterator[pyarrow.RecordBatch]:
        import pyarrow

        through = chain(self.recipe, self.steps)
        for batch in batches:
            out: dict[tuple[int, tuple], int] = {}
            for version, multiplicity, row in changes_of(batch, self.table):
                made = through(version, row)
                if made is not None:
                    out[version, made] = out.get((version, made), 0) + multiplicity
            changes = change_batch([(version, multiplicity, row) for (version, row), multiplicity in out.items()
                                    if multiplicity])
            names = pyarrow.array([self.recipe[0]] * changes.num_rows, pyarrow.string())
            yield pyarrow.RecordBatch.from_arrays([names, *changes.columns], names=[QUERY, *changes.schema.names])
