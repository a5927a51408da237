"""002, v1's identities, as properties.

- ``f(sequence)[i] == f(A_i) - f(A_{i-1})``: an operator on a difference
  sequence yields the differences of the operator applied to each collection.
- ``A1.join(B1) - A0.join(B0) == dA.join(B0) + A0.join(dB) + dA.join(dB)``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import v1
from tests.programs import BINARY, UNARY
from tests.strategies import multiplicities, records

collections = st.lists(st.tuples(records, multiplicities), max_size=8).map(v1.Collection)
sequences = st.lists(collections, max_size=5)


def accumulated(differences: list) -> list:
    """``[A0, A1, ...]`` from ``[A0, A1 - A0, ...]``, with an empty collection in front for ``A_{-1}``."""
    result = [v1.Collection()]
    for difference in differences:
        result.append(result[-1].concat(difference))
    return result


def difference(a: v1.Collection, b: v1.Collection) -> v1.Collection:
    return a.concat(b.negate())


@pytest.mark.parametrize("name", sorted(UNARY))
@given(differences=sequences)
def test_unary_operator_on_a_sequence_gives_the_differences_of_its_results(name: str, differences: list) -> None:
    f = UNARY[name]
    output = f(v1.DifferenceSequence(differences))
    collections_ = accumulated(differences)
    for i in range(len(differences)):
        assert output[i] == difference(f(collections_[i + 1]), f(collections_[i]))


@pytest.mark.parametrize("name", sorted(BINARY))
@given(left=sequences, right=sequences)
def test_binary_operator_on_sequences_gives_the_differences_of_its_results(name: str, left: list, right: list) -> None:
    f = BINARY[name]
    output = f(v1.DifferenceSequence(left), v1.DifferenceSequence(right))
    length = max(len(left), len(right))
    a = accumulated(left + [v1.Collection()] * (length - len(left)))
    b = accumulated(right + [v1.Collection()] * (length - len(right)))
    assert len(output) == length
    for i in range(length):
        assert output[i] == difference(f(a[i + 1], b[i + 1]), f(a[i], b[i]))


@given(a0=collections, da=collections, b0=collections, db=collections)
def test_join_expansion(a0: v1.Collection, da: v1.Collection, b0: v1.Collection, db: v1.Collection) -> None:
    a1, b1 = a0.concat(da), b0.concat(db)
    expanded = da.join(b0).concat(a0.join(db)).concat(da.join(db))
    assert difference(a1.join(b1), a0.join(b0)) == expanded


def test_accumulate_is_the_running_sum() -> None:
    """002, v1: collection_sequence[i] == sum(difference_collection_sequence[v] for v <= i)."""
    C = v1.Collection
    sequence = v1.DifferenceSequence([C([("a", 1)]), C([("b", 2)]), C([("a", -1)])])
    assert sequence.accumulate() == [C([("a", 1)]), C([("a", 1), ("b", 2)]), C([("b", 2)])]


def test_reduce_recomputes_only_the_keys_a_difference_touches() -> None:
    """002, v1: reduce 'recompute[s] the reduction for the subset of keys that were modified'."""
    C = v1.Collection
    calls = []

    def counting(values: list) -> list:
        calls.append(set(values))
        return [(len(values), 1)]

    sequence = v1.DifferenceSequence([C([((k, k), 1) for k in range(100)]), C([((7, "x"), 1)])])
    output = sequence.reduce(counting)
    assert len(calls) == 100 + 1
    assert calls[-1] == {(7, 1), ("x", 1)}
    assert output[1] == C([((7, 2), 1), ((7, 1), -1)])
