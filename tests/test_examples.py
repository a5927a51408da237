"""The documents' examples (tests/catalog.py), asserted exactly on every stage that can run them.

Each expected value is the one the document gives, in the passage the
example's ``source`` names; a stage lacking a concept the example needs is
skipped with the stage's own reason.
"""

from __future__ import annotations

import pytest

from tests.catalog import EQUAL_COLLECTIONS, EXAMPLES, Example
from tests.conftest import stages_since
from tests.harness import PRESENT_STAGES, run_or_skip, stage_module

CASES = [(example, stage) for example in EXAMPLES for stage in stages_since(example.since)]


@pytest.mark.parametrize(("example", "stage"), CASES, ids=[f"{e.name}-{s}" for e, s in CASES])
def test_example_prints_what_the_document_prints(example: Example, stage: str) -> None:
    assert run_or_skip(stage, example.program, example.inputs) == example.expected


@pytest.mark.parametrize("stage", PRESENT_STAGES)
def test_five_physically_different_collections_are_equal(stage: str) -> None:
    """002, v0: the five lists that are all the collection [('cat', 4), ('dog', 2)]."""
    Collection = stage_module(stage).Collection
    first, *others = (Collection(updates) for updates in EQUAL_COLLECTIONS)
    assert all(other == first for other in others)
    assert first.as_dict() == {"cat": 4, "dog": 2}
    assert Collection([("cat", 4)]) != first

