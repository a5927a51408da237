"""The executors' keyed steps without Spark: random queries over random histories, each step's code run as the
executors run it, equal to ``final/``'s dataflow at every version.

``final.spark.executors`` leaves two things to Spark: the shuffle, which
brings the changes of one key to one call of a state processor, and the
state store, which keeps a value per key between micro-batches. Both are
simple enough to stand in for here (rows grouped by their key group,
handed over in a shuffled order; ``KeyState``: a dict per key group), so
everything else runs as on an executor: the ``mapInArrow`` steps on Arrow
batches, ``GroupBy`` and ``KeyedStep`` on ``Row``s, a step found by its
place in ``steps.executors_plan``. The fuzzer's cases (``fuzz.generate``)
give the queries and histories; the versions are cut into micro-batches
of random lengths; at every version each query's output so far must be the
result of ``final/``'s own dataflow (``IncrementalQuery``). This is what
checks, quickly and on many shapes, that a step's key keeps apart only rows
that never meet in it (``steps.shuffle_keys``) and that a key's state
carries from one micro-batch to the next; tests/test_spark_executors.py
runs the same code on Spark.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable

import pytest
from pyspark.sql import Row

from final.errors import DataflowError
from final.spark.executors import changes
from final.spark.executors.changes import (
    KEY,
    MULTIPLICITY,
    PACK,
    ROW,
    SIDE,
    START,
    VERSION,
    change_batch,
    decoded_row,
    key_group,
    packed,
    shuffle_key,
)
from final.spark.executors.lowering import PlacementError, check_placement
from final.spark.executors.steps import (
    KEYED,
    STATELESS,
    GroupBy,
    KeyedBy,
    KeyedStep,
    Output,
    Through,
    executors_plan,
)
from final.spark.fuzz.queries import generate
from final.spark.incremental import IncrementalQuery
from final.spark.sql import SqlError, compile_sql
from final.spark.sql.logical import Aggregate, One, Plan, Scan, SetOperation, nodes
from final.spark.sqlfloat import float_positions, sql_row

CASES = 400
"""Fuzz cases tried (seed 0): about half compile to a plan the executors run."""

Change = tuple[int, int, tuple]
"""``(version, multiplicity, row)``: a change between two steps."""


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
        changes, steps = self._lower(self.plan, source)
        return self._map(Output(self.recipe, steps), changes)

    def _lower(self, node: Plan, source: list[tuple[str, Change]]) -> tuple[list[Change], tuple[int, ...]]:
        place = self.places[id(node)]
        self.kinds[type(node).__name__] += 1
        if isinstance(node, Scan):
            return [change for table, change in source if table == node.table], ()
        if isinstance(node, One):
            return [(version, 1, ()) for table, (version, _, _) in source if table == START], ()
        if isinstance(node, STATELESS):
            changes, steps = self._lower(node.inputs()[0], source)
            return changes, (*steps, place)
        sides = [self._lower(child, source) for child in node.inputs()]
        if isinstance(node, SetOperation) and node.kind == "UNION" and node.keep_all:
            return [change for changes, steps in sides for change in self._map(Through(self.recipe, steps), changes)
                    ], ()
        rows = [(row[KEY], row) for side, (changes, steps) in enumerate(sides)
                for row in self._map_batches(KeyedBy(self.recipe, steps, place, side), changes)]
        if isinstance(node, Aggregate):
            if node.whole:  # the source's start row, as lowering unions it in
                rows += [(key_group(shuffle_key(())), {SIDE: 0, VERSION: version, PACK: packed([])})
                         for table, (version, _, _) in source if table == START]
            return self._shuffle(place, lambda: GroupBy(self.recipe, place), rows), ()
        assert isinstance(node, KEYED)
        return self._shuffle(place, lambda: KeyedStep(self.recipe, place), rows), ()

    def _map_batches(self, step: Callable, changes: list[Change]) -> list[dict]:
        """``step`` (a ``mapInArrow``) over ``changes`` in one or two Arrow batches: its rows as dicts."""
        cut = self.rng.randint(0, len(changes))
        batches = [change_batch(part) for part in (changes[:cut], changes[cut:]) if part]
        return [row for batch in step(iter(batches)) for row in batch.to_pylist()]

    def _map(self, step: Callable, changes: list[Change]) -> list[Change]:
        return [(row[VERSION], row[MULTIPLICITY], decoded_row(row[ROW])) for row in self._map_batches(step, changes)]

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


@pytest.mark.parametrize("groups", [changes.KEY_GROUPS, 3])
def test_random_queries_through_the_executors_steps_equal_final_s_dataflow_at_every_version(
        groups: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """With Spark's number of key groups, and with three, where many keys share a group's state."""
    monkeypatch.setattr(changes, "KEY_GROUPS", groups)
    rng = random.Random(43)
    checked, kinds = 0, Counter()
    for index, case in enumerate(generate(0, CASES)):
        tables = {table.name: table for table in case.dataset.tables}
        try:
            query = compile_sql(case.text, tables, name=f"case_{index}")
            check_placement(query)
        except (SqlError, PlacementError):
            continue
        engine = IncrementalQuery(query)
        executors = SparklessExecutors(query.recipe, query.plan, rng)
        floats = {name: float_positions(table.columns) for name, table in tables.items()}
        output: Counter = Counter()
        versions = list(range(len(case.dataset.commits)))
        while versions:
            size = rng.randint(1, 3)
            batch, versions = versions[:size], versions[size:]
            source = [(table, (version, multiplicity, sql_row(row, floats[table])))
                      for version in batch for table, row, multiplicity in case.dataset.updates(version)
                      if table in query.inputs]
            if batch[0] == 0:
                source.append((START, (0, 0, ())))  # as the change stream adds it to version 0
            expected = {}
            try:
                for version in batch:
                    engine.apply(version, [(table, row, multiplicity) for table, (at, multiplicity, row) in source
                                           if at == version and table != START])
                    expected[version] = {row: count for row, count in engine.snapshot.items() if count}
            except DataflowError:  # the query raises for this data (Spark SQL too: test_sql_fuzz): so must we
                with pytest.raises(Exception):  # noqa: B017 -- the same function raises, the step around it varies
                    executors.micro_batch(source)
                break
            made = executors.micro_batch(source)
            for version in batch:
                for at, multiplicity, row in made:
                    if at == version:
                        output[row] += multiplicity
                assert {row: count for row, count in output.items() if count} == expected[version], (
                    f"case {index} at version {version}: {case.text}")
        checked += 1
        kinds.update(executors.kinds)
    assert checked >= CASES // 4
    for kind in ("Join", "Aggregate", "Distinct", "SetOperation", "TopK"):
        assert kinds[kind], f"no case had a {kind}"


@pytest.mark.parametrize("text", [
    "SELECT a.k, b.w, c.z FROM a JOIN b ON a.k = b.k JOIN c ON b.w = c.z",
    "SELECT a.k, b.w, c.z FROM a JOIN c ON a.s = c.z JOIN b ON a.k = b.k",
])
def test_a_delta_join_runs_on_the_executors_as_binary_joins_with_its_columns_in_order(text: str) -> None:
    from tests.test_sql import TABLES

    query = compile_sql(text, TABLES, "three")
    plan = executors_plan(query.plan)
    assert not any(type(node).__name__ == "MultiJoin" for node in nodes(plan))
    assert [f.id for f in plan.fields] == [f.id for f in query.plan.fields]
