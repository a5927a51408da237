"""The executors' steps without Spark: each step's code run as an executor runs it, with Spark's shuffle and
state store stood in for.

``final.spark.executors`` leaves two things to Spark: the shuffle, which
brings the changes of one key group to one call of a state processor, and
the state store, which keeps a value per key group between micro-batches.
Both are simple enough to stand in for here (rows grouped by their key
group, handed over in a shuffled order; ``KeyState``: a dict per key
group), so everything else runs as on an executor: the ``mapInArrow``
steps on Arrow batches, ``GroupBy`` and ``KeyedStep`` on ``Row``s, a step
found by its place in ``steps.executors_plan``. ``follows_the_dataflow``
feeds a query's versions through it in micro-batches of random lengths and
holds its output to ``final/``'s own dataflow at every version; where the
dataflow raises for a value Spark SQL refuses, the executors must raise
``ValueRefused`` for that query at a version of the micro-batch.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

import pytest
from pyspark.sql import Row

from final.errors import DataflowError
from final.spark.executors.changes import (
    KEY,
    MULTIPLICITY,
    ROW,
    START,
    VERSION,
    change_batch,
    decoded_row,
    source_batch,
)
from final.spark.executors.steps import (
    KEYED,
    STATELESS,
    GroupBy,
    KeyedBy,
    KeyedStep,
    Output,
    Started,
    Through,
    ValueRefused,
    executors_plan,
)
from final.spark.incremental import IncrementalQuery, UnversionedChange
from final.spark.sql import SqlQuery
from final.spark.sql.errors import runtime_cause
from final.spark.sql.logical import Aggregate, One, Plan, Scan, SetOperation, nodes

Change = tuple[int, int, tuple]
"""``(version, multiplicity, row)``: a change between two steps."""

Lowered = tuple[list, tuple[int, ...], "str | None"]
"""A node's changes as ``lowering.Lowered`` has them: its changes (or, with a table, the source's ``(table,
change)``s), the stateless steps still to run on them, and the table of the source they are to be taken from."""


class KeyState:
    """The state store as ``transformWithState`` scopes it: one value per key, the key set before each call."""

    def __init__(self) -> None:
        self.values: dict = {}
        self.key = None

    def getValueState(self, name: str, schema: str) -> KeyState:
        return self

    def get(self) -> tuple | None:
        return self.values.get(self.key)

    def update(self, value: tuple) -> None:
        self.values[self.key] = value

    def clear(self) -> None:
        self.values.pop(self.key, None)


class SparklessExecutors:
    """A query's plan run as the executors run it, a micro-batch at a time, with Spark's shuffle and state store
    stood in for."""

    def __init__(self, recipe: tuple, plan: Plan, rng: random.Random) -> None:
        self.recipe, self.rng = recipe, rng
        self.plan = executors_plan(plan)
        self.places = {id(node): place for place, node in enumerate(nodes(self.plan))}
        self.processors: dict[int, tuple] = {}
        self.kinds: Counter = Counter()

    def micro_batch(self, source: list[tuple[str, Change]]) -> list[Change]:
        """The query's output changes for ``source``'s changes (``(table, change)``, whole versions)."""
        self.lowered: dict[int, Lowered] = {}
        changes, steps, table = self._lower(self.plan, source)
        return self._map(Output(self.recipe, steps, table), changes, table)

    def _lower(self, node: Plan, source: list[tuple[str, Change]]) -> Lowered:
        """A node read by two parents (a CTE read twice) is computed once per micro-batch: its step keeps one
        state here, where Spark plans one operator for each reading."""
        if id(node) not in self.lowered:
            self.lowered[id(node)] = self._lower_once(node, source)
        return self.lowered[id(node)]

    def _lower_once(self, node: Plan, source: list[tuple[str, Change]]) -> Lowered:
        place = self.places[id(node)]
        self.kinds[type(node).__name__] += 1
        if isinstance(node, (Scan, One)):  # the source's changes, the table's taken by the step that reads them
            return source, (), node.table if isinstance(node, Scan) else START
        if isinstance(node, STATELESS):
            changes, steps, table = self._lower(node.inputs()[0], source)
            return changes, (*steps, place), table
        sides = [self._lower(child, source) for child in node.inputs()]
        if isinstance(node, SetOperation) and node.kind == "UNION" and node.keep_all:
            return [change for changes, steps, table in sides
                    for change in self._map(Through(self.recipe, steps, table), changes, table)], (), None
        rows = [(row[KEY], row) for side, (changes, steps, table) in enumerate(sides)
                for row in self._map_batches(KeyedBy(self.recipe, steps, place, side, table), changes, table)]
        if isinstance(node, Aggregate):
            if node.whole:  # the source's start row, as lowering unions it in
                rows += [(row[KEY], row) for row in self._map_batches(Started(), source, START)]
            return self._shuffle(place, lambda: GroupBy(self.recipe, place), rows), (), None
        assert isinstance(node, KEYED)
        return self._shuffle(place, lambda: KeyedStep(self.recipe, place), rows), (), None

    def _map_batches(self, step: Callable, changes: list, table: str | None) -> list[dict]:
        """``step`` (a ``mapInArrow``) over ``changes`` in one or two Arrow batches: its rows as dicts. With
        ``table``, ``changes`` are the source's (``(table, change)``), in batches of its columns."""
        cut = self.rng.randint(0, len(changes))
        batch = change_batch if table is None else source_batch
        batches = [batch(part) for part in (changes[:cut], changes[cut:]) if part]
        return [row for batch in step(iter(batches)) for row in batch.to_pylist()]

    def _map(self, step: Callable, changes: list, table: str | None) -> list[Change]:
        return [(row[VERSION], row[MULTIPLICITY], decoded_row(row[ROW]))
                for row in self._map_batches(step, changes, table)]

    def _shuffle(self, place: int, make: Callable, rows: list[tuple]) -> list[Change]:
        """Spark's shuffle and ``transformWithState``: each key's rows, in no order, to one call of the step's
        processor, whose state is the key's."""
        if place not in self.processors:
            processor, state = make(), KeyState()
            processor.init(state)
            self.processors[place] = processor, state
        processor, state = self.processors[place]
        by_key: dict = defaultdict(list)
        for key, row in rows:
            by_key[key].append(Row(**{name: row[name] for name in row if name != KEY}))
        out = []
        for key, found in by_key.items():
            self.rng.shuffle(found)
            state.key = key
            out += [(row[VERSION], row[MULTIPLICITY], decoded_row(row[ROW]))
                    for row in processor.handleInputRows(key, iter(found), None)]
        return out


def follows_the_dataflow(query: SqlQuery, versions: Sequence[list[UnversionedChange]], rng: random.Random,
                         label: str, batches: Sequence[int] | None = None) -> SparklessExecutors | None:
    """Feed ``versions`` (each version's changes, NaNs as ``sqlfloat.NAN``) to ``query`` on the stood-in
    executors, in micro-batches of ``batches`` versions (random lengths of 1 to 3 by default), and assert that its
    output so far is ``final/``'s dataflow's result at every version; the executors, or None when the dataflow
    raised for the data (the executors must raise too: ``ValueRefused`` for a value Spark SQL refuses).
    """
    engine = IncrementalQuery(query)
    executors = SparklessExecutors(query.recipe, query.plan, rng)
    output: Counter = Counter()
    pending, sizes = list(range(len(versions))), list(batches or [])
    while pending:
        size = sizes.pop(0) if sizes else rng.randint(1, 3)
        batch, pending = pending[:size], pending[size:]
        source = [(table, (version, multiplicity, row)) for version in batch
                  for table, row, multiplicity in versions[version] if table in query.inputs]
        if batch[0] == 0:
            source.append((START, (0, 1, ())))  # as the change stream adds it to version 0
        expected = {}
        try:
            for version in batch:
                engine.apply(version, [(table, row, multiplicity) for table, row, multiplicity in versions[version]
                                       if table in query.inputs])
                expected[version] = {row: count for row, count in engine.snapshot.items() if count}
        except DataflowError as error:  # the query raises for this data (Spark SQL too: test_sql_fuzz): so must we
            refused = runtime_cause(error)
            with pytest.raises(ValueRefused if refused else Exception) as raised:
                executors.micro_batch(source)
            if refused:  # which row of the micro-batch a step meets first varies, so the version may be a later one
                query_name, version, _ = ValueRefused.found_in(f"ValueRefused: {raised.value}")
                assert query_name == query.name and version in batch, f"{label}: {raised.value}"
            return None
        made = executors.micro_batch(source)
        for version in batch:
            for at, multiplicity, row in made:
                if at == version:
                    output[row] += multiplicity
            assert {row: count for row, count in output.items() if count} == expected[version], (
                f"{label} at version {version}")
    return executors
