"""The oracle test: every stage equals v0 recomputed from scratch, at every version.

On random histories (insertions, retractions, zeros, negative multiplicities,
out-of-order versions, one or two inputs) the accumulated output of each stage
at each input version must equal v0 applied to the accumulated inputs.
"""

from __future__ import annotations

import pytest
from hypothesis import given

from tests.harness import run, run_or_skip
from tests.programs import BINARY, UNARY
from tests.strategies import any_history


@pytest.mark.since("v1")
@pytest.mark.parametrize("name", sorted(UNARY))
@given(history=any_history)
def test_unary_program_equals_from_scratch(stage: str, name: str, history: list) -> None:
    program = UNARY[name]
    assert run_or_skip(stage, program, [history]) == run("v0", program, [history])


@pytest.mark.since("v1")
@pytest.mark.parametrize("name", sorted(BINARY))
@given(left=any_history, right=any_history)
def test_binary_program_equals_from_scratch(stage: str, name: str, left: list, right: list) -> None:
    program = BINARY[name]
    assert run_or_skip(stage, program, [left, right]) == run("v0", program, [left, right])
