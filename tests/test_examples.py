"""The documents' examples (tests/examples.py), asserted exactly on every stage that can run them.

Each expected value is the one the document gives, in the passage the
example's ``source`` names; a stage lacking a concept the example needs is
skipped with the stage's own reason. Where a document shows a stage getting an
example wrong (v4's lexicographic loops), the test asserts that documented
wrong output and that it differs from from-scratch, and reports it under
"known limitations" at the end of the run.
"""

from __future__ import annotations

import pytest

from tests.conftest import stages_since
from tests.examples import EQUAL_COLLECTIONS, EXAMPLES, Example, judge
from tests.harness import PRESENT_STAGES, run_differences, run_messages, run_or_skip, stage_module

CASES = [(example, stage) for example in EXAMPLES for stage in stages_since(example.since)]
IDS = [f"{example.name}-{stage}" for example, stage in CASES]


@pytest.mark.parametrize(("example", "stage"), CASES, ids=IDS)
def test_example_gives_what_the_document_gives(example: Example, stage: str, known_limitation) -> None:
    verdict = judge(example, stage, run_or_skip(stage, example.program, example.inputs, example.at))
    assert verdict.ok, "\n".join(verdict.failures)
    if verdict.limitation:
        known_limitation(f"{example.name} on {stage}: {verdict.limitation}")


DIFFERENCE_CASES = [(e, s) for e, s in CASES if e.differences is not None]


@pytest.mark.parametrize(("example", "stage"), DIFFERENCE_CASES, ids=[f"{e.name}-{s}" for e, s in DIFFERENCE_CASES])
def test_example_differences_are_the_documents(example: Example, stage: str) -> None:
    """The per-version output differences, where the document prints them (001's difference[t])."""
    try:
        differences = run_differences(stage, example.program, example.inputs)
    except NotImplementedError as missing:
        pytest.skip(f"{stage}: {missing}")
    assert differences == example.differences


MESSAGE_CASES = [(e, s) for e, s in CASES if e.messages_on(s) is not None]


@pytest.mark.parametrize(("example", "stage"), MESSAGE_CASES, ids=[f"{e.name}-{s}" for e, s in MESSAGE_CASES])
def test_example_messages_are_the_documents_debug_lines(example: Example, stage: str) -> None:
    """002's debug output, line for line: one (version, difference) per message, in order."""
    assert run_messages(stage, example.program, example.inputs) == example.messages_on(stage)


@pytest.mark.parametrize("stage", PRESENT_STAGES)
def test_five_physically_different_collections_are_equal(stage: str) -> None:
    """002, v0: the five lists that are all the collection [('cat', 4), ('dog', 2)]."""
    Collection = stage_module(stage).Collection
    first, *others = (Collection(updates) for updates in EQUAL_COLLECTIONS)
    assert all(other == first for other in others)
    assert first.as_dict() == {"cat": 4, "dog": 2}
    assert Collection([("cat", 4)]) != first
