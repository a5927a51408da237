"""The source documents' examples, each written once, as data.

An ``Example`` is a program, its inputs (one history of ``(record, version,
multiplicity)`` updates per input, as ``tests.harness.run`` takes them), the
output the document gives (accumulated, at every input version), the text the
document printed, and the passage it comes from. The tests assert every
example on every stage that can run it; the tour prints them side by side;
the notebooks show them. Later stages add their examples here.
The documents are in ../shared/seeds/ and shared/DESIGN.md, section 6, lists
what must be here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

DOC_002 = "002_74f1d5592741c2fb.txt"


@dataclass(frozen=True)
class Example:
    """One worked example of a document, runnable on any stage through the harness."""

    name: str
    source: str
    """The document's file name and the passage the example is in."""
    program: Callable[..., Any]
    inputs: list[list[tuple[Hashable, Any, int]]]
    expected: dict[Any, dict[Hashable, int]]
    """What the document gives, accumulated at every input version."""
    printed: str
    """The document's own text for the result, or a note where it prints none."""
    since: str = "v0"
    """The first stage with every concept the example needs."""
    notes: str = field(default="")


# -- 002, v0 -----------------------------------------------------------------

EQUAL_COLLECTIONS = [
    [("cat", 4), ("dog", 2)],
    [("cat", 1), ("cat", 3), ("dog", 2)],
    [("dog", 2), ("cat", 4)],
    [("cat", 4), ("dog", 2), ("elephant", 0)],
    [("cat", 4), ("dog", 2), ("elephant", -4), ("elephant", 4)],
]
"""002, v0: "The following collections are all logically equivalent"."""


def difference(a: Any, b: Any) -> Any:
    """``a - b``: concat with the negation (SQL's ``EXCEPT ALL``)."""
    return a.concat(b.negate())


def add_one(collection: Any) -> Any:
    """002's ``add_one``: add the successors of the numbers, keep those <= 5, distinct."""
    return (
        collection.map(lambda data: data + 1)
        .concat(collection)
        .filter(lambda data: data <= 5)
        .map(lambda data: (data, ()))
        .distinct()
        .map(lambda data: data[0])
        .consolidate()
    )


def add_one_squares(collection: Any) -> Any:
    """Iterate ``add_one`` to its fixed point, then pair each number with its square."""
    return collection.iterate(add_one).map(lambda data: (data, data * data))


# -- 002, v2 and v3 ----------------------------------------------------------


def plus_five_evens(collection: Any) -> Any:
    """002, v2: ``map(data + 5)`` then ``filter(data % 2 == 0)``."""
    return collection.map(lambda data: data + 5).filter(lambda data: data % 2 == 0)


def concat(a: Any, b: Any) -> Any:
    return a.concat(b)


def count_by_key(collection: Any) -> Any:
    return collection.count()


EXAMPLES = [
    Example(
        name="difference_a_minus_b",
        source=f"{DOC_002}, v0: 'Then the difference between a and b is'",
        program=difference,
        inputs=[
            [("apple", 0, 3), ("banana", 0, 2), ("coconut", 0, 7)],
            [("apple", 0, 1), ("banana", 0, 4), ("coconut", 0, 7)],
        ],
        expected={0: {"apple": 2, "banana": -2}},
        printed="[('apple', 2), ('banana', -2)]",
    ),
    Example(
        name="add_one_iterate",
        source=f"{DOC_002}, v0: 'def add_one(collection)' and 'when run, the output is'",
        program=add_one_squares,
        inputs=[[(1, 0, 1)]],
        expected={0: {(1, 1): 1, (2, 4): 1, (3, 9): 1, (4, 16): 1, (5, 25): 1}},
        printed="Collection([((1, 1), 1), ((2, 4), 1), ((3, 9), 1), ((4, 16), 1), ((5, 25), 1)]",
        notes="The printed line is verbatim; the page lost its closing parenthesis.",
    ),
    Example(
        name="plus_five_evens_graph",
        source=f"{DOC_002}, v2: 'computation_step = ... map(data + 5) .filter(data % 2 == 0)', fed 0..9",
        program=plus_five_evens,
        inputs=[[(i, i, 1) for i in range(10)]],
        # i + 5 is even for odd i: 1 -> 6, 3 -> 8, 5 -> 10, 7 -> 12, 9 -> 14.
        expected={
            0: {},
            1: {6: 1},
            2: {6: 1},
            3: {6: 1, 8: 1},
            4: {6: 1, 8: 1},
            5: {6: 1, 8: 1, 10: 1},
            6: {6: 1, 8: 1, 10: 1},
            7: {6: 1, 8: 1, 10: 1, 12: 1},
            8: {6: 1, 8: 1, 10: 1, 12: 1},
            9: {6: 1, 8: 1, 10: 1, 12: 1, 14: 1},
        },
        printed="(the document shows the graph's diagram but not its debug output; "
        "the expected values follow from its program by hand)",
        since="v0",
    ),
    Example(
        name="concat_out_of_order",
        source=f"{DOC_002}, v3: 'input_a = [(version_0, A0), (version_2, A2 - A1), (version_1, A1 - A0), ...]'",
        program=concat,
        inputs=[
            [("a0", 0, 1), ("a2", 2, 1), ("a1", 1, 1), ("a3", 3, 1)],
            [("b1", 1, 1), ("b0", 0, 1)],
        ],
        expected={
            0: {"a0": 1, "b0": 1},
            1: {"a0": 1, "a1": 1, "b0": 1, "b1": 1},
            2: {"a0": 1, "a1": 1, "a2": 1, "b0": 1, "b1": 1},
            3: {"a0": 1, "a1": 1, "a2": 1, "a3": 1, "b0": 1, "b1": 1},
        },
        printed="output = [(version_0, A0.concat(B0)), (version_2, A2 - A1), "
        "(version_1, (A1 - A0).concat(B1 - B0)), (version_3, A3 - A2)]",
        notes="A_i is ('a<i>', 1) and B_i is ('b<i>', 1) accumulated: each version adds one record per input.",
    ),
    Example(
        name="reduce_closed_versions_in_order",
        source=f"{DOC_002}, v3: 'reduce has to additionally be careful to compute outputs in order'",
        program=count_by_key,
        inputs=[[(("k", "c"), 2, 1), (("k", "a"), 0, 1), (("k", "b"), 1, 1)]],
        expected={0: {("k", 1): 1}, 1: {("k", 2): 1}, 2: {("k", 3): 1}},
        printed="(the document describes, without printing, versions 0, 1 and 2 closing at once and "
        "reduce producing 0, then 1, then 2)",
    ),
]

BY_NAME = {example.name: example for example in EXAMPLES}
