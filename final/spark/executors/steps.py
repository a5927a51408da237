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

- ``Keyed`` (``mapInArrow``): changes through the stateless steps below a
  keyed one, each with its key as typed columns for Spark's shuffle.
- ``GroupBy`` (``transformWithState``, one call per key and micro-batch):
  the key's aggregates in Spark's state store, a micro-batch's changes
  taken version by version, in version order, the key's output changes out.
- ``Output`` (``mapInArrow``): changes through the last stateless steps,
  named by their query, so that a data set's queries make one stream.
"""

from __future__ import annotations

import io
import pickle
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql import Row
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle

from ...operators.aggregate import Aggregates
from ...operators.reduce import NOTHING
from ..sql.logical import Aggregate, Filter, Plan, Project, Rename, Sort, nodes
from ..sql.lower import compiled, grouping
from .changes import (
    MULTIPLICITY,
    PACK,
    PICKLE,
    QUERY,
    ROW,
    VERSION,
    change_batch,
    changes_of,
    encoded,
    key_columns,
    key_value,
    packed,
    unpacked,
)

if TYPE_CHECKING:
    import pyarrow

Recipe = tuple[str, str, dict]
"""``SqlQuery.recipe``: what a worker compiles a query again from (name, SQL text, tables)."""

_compiled: dict[tuple[str, str], list[Plan]] = {}
"""Each query this worker compiled: its plan's nodes, parents first."""


class StepError(RuntimeError):
    """A worker's plan of a query is not the driver's: the node at a step's place is of another kind."""


def plan_nodes(recipe: Recipe) -> list[Plan]:
    """The nodes of the query ``recipe`` compiles to (``logical.nodes``: parents first), compiled once per
    worker."""
    name, text, tables = recipe
    found = _compiled.get((name, text))
    if found is None:
        from ..sql import compile_sql

        found = _compiled[name, text] = nodes(compile_sql(text, tables, name).plan)
    return found


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


def chain(recipe: Recipe, steps: Sequence[int]) -> Callable[[tuple], tuple | None]:
    """The stateless steps at ``steps`` (bottom first) as one function of a row."""
    fns = [row_step(step(recipe, index, STATELESS)) for index in steps]

    def through(row: tuple) -> tuple | None:
        for fn in fns:
            row = fn(row)
            if row is None:
                return None
        return row

    return through


def key_names(count: int) -> list[str]:
    """The names of a keyed step's key columns."""
    return [f"_key{position}" for position in range(count)]


class Keyed:
    """``mapInArrow``: each change through the stateless ``steps``, then packed with the other changes of its key
    (of the keyed step at ``index``) and version in its batch: a row per key and version, the key's typed columns
    (``key_names``, ``changes.key_columns``) before ``changes.PACKED``'s."""

    def __init__(self, recipe: Recipe, steps: Sequence[int], index: int) -> None:
        self.recipe, self.steps, self.index = recipe, tuple(steps), index

    def __call__(self, batches: Iterator[pyarrow.RecordBatch]) -> Iterator[pyarrow.RecordBatch]:
        import pyarrow

        node = step(self.recipe, self.index, Aggregate)
        through = chain(self.recipe, self.steps)
        keys = [compiled(key, node.child.fields) for key in node.keys]
        types = [str(key.type) for key in node.keys]
        names = [*key_names(len(keys)), VERSION, PACK]
        for batch in batches:
            groups: dict[tuple, list[tuple[tuple, int]]] = defaultdict(list)
            for version, multiplicity, row in changes_of(batch):
                row = through(row)
                if row is not None:
                    # The key as its columns carry it: values final/ finds equal are one group here too.
                    found = tuple([key_value(key(row)) for key in keys])
                    groups[found, version].append((row, multiplicity))
            columns = key_columns([found for found, _ in groups], types)
            versions = pyarrow.array([version for _, version in groups], pyarrow.int64())
            packs = pyarrow.array([packed(changes) for changes in groups.values()], pyarrow.binary())
            yield pyarrow.RecordBatch.from_arrays([*columns, versions, packs], names=names)


class GroupBy(StatefulProcessor):
    """``transformWithState`` of the GROUP BY at ``index``: a key's groups (``operators.aggregate._Group``, by
    ``final/``'s key of the rows) in the state store, and its output changes out.

    A micro-batch holds whole versions, and a key's changes of it come in no
    order (packed by version: ``Keyed``): they are put in version order and
    taken a version at a time (``Aggregates.apply``), each version's output
    change made into rows of the step (``Grouping.row``). The state is the key's groups pickled; the
    objects shared with the code rather than held (the MIN/MAX reduction,
    the ``NOTHING`` marker) are pickled by name, so they are the same
    objects once read back.

    Invariant: the state of a key is ``(v, {final key: _Group})``, its groups as of ``v``, the last version it
    had changes at in the micro-batches Spark committed; absent for a key with nothing left.
    """

    def __init__(self, recipe: Recipe, index: int) -> None:
        self.recipe, self.index = recipe, index

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.grouping = grouping(step(self.recipe, self.index, Aggregate))
        self.aggregates = Aggregates(self.grouping.named)
        self.shared = {id(self.aggregates.reduction): "reduction", id(NOTHING): "nothing"}
        self.objects = {"reduction": self.aggregates.reduction, "nothing": NOTHING}
        self.state = handle.getValueState("groups", "groups BINARY")

    def handleInputRows(self, key: Any, rows: Iterator[Row], timerValues: Any) -> Iterator[Row]:
        versions: dict[int, list[tuple[tuple, int]]] = defaultdict(list)
        for row in rows:
            versions[row[VERSION]] += unpacked(row[PACK])
        held = self.state.get()  # None for a key with no state (one call to the state store, not two)
        last, groups = self._load(held[0]) if held is not None else (-1, {})
        if min(versions) < last:
            raise StepError(f"query {self.recipe[0]}: the GROUP BY at step {self.index} got changes at version "
                            f"{min(versions)} for a key whose changes at version {last} it had applied; a key's "
                            f"changes must come in version order (a micro-batch's, in one call)")
        make_row, key_of, apply = self.grouping.row, self.grouping.key, self.aggregates.apply
        out: dict[tuple[int, tuple], int] = {}
        for version in sorted(versions):
            for pair, multiplicity in apply(groups, key_of, [versions[version]]):
                made = (version, make_row(pair))
                out[made] = out.get(made, 0) + multiplicity
        if groups:
            self.state.update((self._dump((max(versions), groups)),))
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


class Output:
    """``mapInArrow``: each change through the stateless ``steps``, a batch's changes consolidated, each named by
    the query ``QUERY`` (``changes.OUTPUT``'s columns): the changes of a data set's queries are one stream."""

    def __init__(self, recipe: Recipe, steps: Sequence[int]) -> None:
        self.recipe, self.steps = recipe, tuple(steps)

    def __call__(self, batches: Iterator[pyarrow.RecordBatch]) -> Iterator[pyarrow.RecordBatch]:
        import pyarrow

        through = chain(self.recipe, self.steps)
        for batch in batches:
            out: dict[tuple[int, tuple], int] = {}
            for version, multiplicity, row in changes_of(batch):
                made = through(row)
                if made is not None:
                    out[version, made] = out.get((version, made), 0) + multiplicity
            changes = change_batch([(version, multiplicity, row) for (version, row), multiplicity in out.items()
                                    if multiplicity])
            names = pyarrow.array([self.recipe[0]] * changes.num_rows, pyarrow.string())
            yield pyarrow.RecordBatch.from_arrays([names, *changes.columns], names=[QUERY, *changes.schema.names])
