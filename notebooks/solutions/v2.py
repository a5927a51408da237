"""Solutions to the exercises of ``v2_dataflow_graphs.ipynb``, and a plausible mistake for each."""

from __future__ import annotations

from typing import Any

from v2 import Collection, DifferenceStreamReader, DifferenceStreamWriter, GraphBuilder
from v2.index import Index

debug_lines = [
    {6: 1},  # 1 and 2 become 3 and 6; only 6 is even
    {},  # 5 becomes 15, which the filter drops: the line is printed all the same, with an empty collection
    {6: -1, 12: 2},  # the retraction of 2 is a retraction of 6; 4 added twice is 12 added twice
]


def word_count(builder: GraphBuilder) -> tuple[DifferenceStreamWriter, DifferenceStreamReader]:
    lines, writer = builder.new_input()
    counts = lines.flat_map(lambda line: line.split()).map(lambda word: (word, None)).count()
    return writer, counts.connect_reader()


concat_waits = [
    # Step 1: a sent 3 differences and b sent 5, so only 3 pairs are complete; b3 and b4 wait.
    [{"a0": 1, "b0": 1}, {"a0": -1, "a1": 1, "b1": 1}, {"a2": 1, "b2": 1}],
    # Step 2: a's two new differences are the partners b3 and b4 were waiting for.
    [{"a3": 1, "b3": 1}, {"a4": 1, "b4": 1}],
]


def _word_count_with_distinct(builder: GraphBuilder) -> Any:
    """A word list with duplicates removed, not counted."""
    lines, writer = builder.new_input()
    return writer, lines.flat_map(lambda line: line.split()).map(lambda word: (word, 1)).distinct().connect_reader()


def build_reduce(self, collection):
    """Index the difference; for each key it touches, the new output minus the output sent so far."""
    delta = Index.from_collection(collection, "reduce")
    self._inputs.append(delta)
    self._inputs.compact()
    updates = []
    for key in delta.keys():
        values = self._inputs.get(key)
        new = self._f(values) if values else []  # a key whose values all cancelled has no output, not f([])
        updates += [((key, value), multiplicity) for value, multiplicity in new]
        updates += [((key, value), -multiplicity) for value, multiplicity in self._outputs.get(key)]
    changes = Collection(updates).consolidate()
    self._outputs.append(Index.from_collection(changes, "reduce"))
    self._outputs.compact()
    return changes


def _reduce_of_an_emptied_key(self, collection):
    """Also calls ``f`` for a key whose values all cancelled: count then says ``(key, 0)`` where there is nothing."""
    changes = build_reduce(self, collection)
    emptied = {record[0] for record, _ in collection if not self._inputs.get(record[0])}
    extra = Collection([((key, value), multiplicity) for key in emptied for value, multiplicity in self._f([])])
    self._outputs.append(Index.from_collection(extra, "reduce"))
    self._outputs.compact()
    return changes.concat(extra).consolidate()


MISTAKES = {
    "debug_lines": [{6: 1}, {6: -1, 12: 2}],  # forgets that an emptied difference is still a message
    "word_count": _word_count_with_distinct,
    "concat_waits": [  # as if concat forwarded b's unpaired differences on their own
        [{"a0": 1, "b0": 1}, {"a0": -1, "a1": 1, "b1": 1}, {"a2": 1, "b2": 1}, {"b3": 1}, {"b4": 1}],
        [{"a3": 1}, {"a4": 1}],
    ],
    "build_reduce": _reduce_of_an_emptied_key,
}
