"""Versions, lattices and antichains (v5 on), against document 002's examples and the lattice laws.

Source: document 002, "v5/vFinal: Partially ordered
versions" (the antichain figure, closing (0, 0), upper sets), and compaction's
contract: ``advance_by`` never changes how a version compares with any version
the frontier still allows.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.harness import stage_module

coordinates = st.integers(0, 4)
pairs = st.tuples(coordinates, coordinates)


def grid(size: int) -> list[tuple[int, int]]:
    return list(itertools.product(range(size), repeat=2))


@pytest.mark.since("v5")
def test_antichain_of_the_figure(stage: str) -> None:
    """002: f = Antichain([(2, 5), (4, 1)]) is <= (3, 6), because (2, 5) <= (3, 6), but not <= (3, 3)."""
    V, A = stage_module(stage).Version, stage_module(stage).Antichain
    frontier = A([V((2, 5)), V((4, 1))])
    assert frontier.less_equal_version(V((3, 6)))
    assert not frontier.less_equal_version(V((3, 3)))


@pytest.mark.since("v5")
def test_closing_the_origin_leaves_two_minimal_versions(stage: str) -> None:
    """002: if every version but (0, 0) may still change, the frontier is {(1, 0), (0, 1)}."""
    V, A = stage_module(stage).Version, stage_module(stage).Antichain
    open_versions = [V(p) for p in grid(4) if p != (0, 0)]
    assert A(open_versions) == A([V((1, 0)), V((0, 1))])
    assert set(A(open_versions).elements) == {V((1, 0)), V((0, 1))}


@pytest.mark.since("v5")
def test_product_order_has_incomparable_versions(stage: str) -> None:
    V = stage_module(stage).Version
    assert V((0, 1)).less_equal(V((1, 1))) and V((1, 0)).less_equal(V((1, 1)))
    assert not V((1, 0)).less_equal(V((0, 1))) and not V((0, 1)).less_equal(V((1, 0)))
    assert V((1, 0)).join(V((0, 1))) == V((1, 1)) and V((1, 0)).meet(V((0, 1))) == V((0, 0))
    with pytest.raises(TypeError):
        V((1, 0)) < V((0, 1))  # noqa: B015 - the comparison itself is what is refused


@pytest.mark.since("v5")
@given(a=pairs, b=pairs, c=pairs)
def test_lattice_laws(stage: str, a: tuple, b: tuple, c: tuple) -> None:
    V = stage_module(stage).Version
    x, y, z = V(a), V(b), V(c)
    assert x.join(y) == y.join(x) and x.meet(y) == y.meet(x)
    assert x.join(y.join(z)) == x.join(y).join(z) and x.meet(y.meet(z)) == x.meet(y).meet(z)
    assert x.join(x.meet(y)) == x and x.meet(x.join(y)) == x
    assert x.less_equal(x.join(y)) and x.meet(y).less_equal(x)
    assert x.less_equal(y) == (x.join(y) == y)


@pytest.mark.since("v5")
@given(elements=st.lists(pairs, max_size=5), other=st.lists(pairs, max_size=5), probe=pairs)
def test_antichains_compare_by_upper_sets(stage: str, elements: list, other: list, probe: tuple) -> None:
    """002: f <= g when g's upper set is inside f's; the meet's upper set is the union."""
    V, A = stage_module(stage).Version, stage_module(stage).Antichain
    f, g = A(V(p) for p in elements), A(V(p) for p in other)
    assert all(not a.less_equal(b) for a in f.elements for b in f.elements if a != b)
    upper = {p for p in grid(6) if f.less_equal_version(V(p))}
    assert upper == {p for p in grid(6) if any(V(e).less_equal(V(p)) for e in elements)}
    g_upper = {p for p in grid(6) if g.less_equal_version(V(p))}
    if f.less_equal(g):
        assert g_upper <= upper
    meet_upper = {p for p in grid(6) if f.meet(g).less_equal_version(V(p))}
    assert meet_upper == upper | g_upper
    assert f.meet(g).less_equal(f) and f.meet(g).less_equal(g)


@pytest.mark.since("v5")
@given(version=pairs, frontier=st.lists(pairs, min_size=1, max_size=4), later=pairs)
def test_advance_by_keeps_every_comparison_the_frontier_allows(
    stage: str, version: tuple, frontier: list, later: tuple
) -> None:
    """Compaction's contract: for every version t the frontier allows, v <= t exactly when advance_by(v) <= t."""
    V, A = stage_module(stage).Version, stage_module(stage).Antichain
    f = A(V(p) for p in frontier)
    advanced = V(version).advance_by(f)
    assert V(version).less_equal(advanced)
    if f.less_equal_version(V(later)):
        assert V(version).less_equal(V(later)) == advanced.less_equal(V(later))
