"""final's state follows the live data and the versions still open, not every version ever seen.

Key churn: at every version the only live key is replaced by a new one, so
the live data never grows. Over 4,000 versions every operator of every
program (1-D and 2-D versions, joins, reductions, loops) must hold as much at
the end as it did a quarter of the way in. ``Operator.state_size()`` counts
entries: records at versions in indexes, pending versions, a reduction's kept
times.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from final import GraphBuilder, GraphError
from tests.programs import reachability_sessions

VERSIONS = 4_000
CHECKPOINT = 1_003
"""State is compared after this version and after the last (3,999): the churn has long reached its
steady state, and both are 23 modulo 28, so the programs below, whose live data depends on the key
modulo 4 and 7, hold the same amount at both."""


def churn(version: int) -> list[tuple[Any, int]]:
    """The changes at ``version``: the key of the previous version leaves, a new one arrives."""
    changes = [((version, version % 7), 1)]
    if version:
        changes.append(((version - 1, (version - 1) % 7), -1))
    return changes


PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "count": lambda c: c.count(),
    "count_total": lambda c: c.count_total(),
    "distinct": lambda c: c.distinct(),
    "min": lambda c: c.map(lambda r: (r[1], r[0])).min(),
    "count_distinct": lambda c: c.map(lambda r: (r[1], r[0])).count_distinct(),
    "join": lambda c: c.join(c.map(lambda r: (r[0], -r[1]))),
    # From key n down to the multiple of 4 below it: up to four iterations, up to four live records.
    "loop": lambda c: c.map(lambda r: r[0]).iterate(
        lambda x: x.map(lambda n: n - 1 if n % 4 else n).concat(x).distinct_keys()
    ),
}


def sizes_during(program: Callable[[Any], Any], zero: Any, at: Callable[[int], Any]) -> tuple[list, list]:
    """Feed the churn through ``program``; its operators' state sizes at ``CHECKPOINT`` and at the end."""
    builder = GraphBuilder(zero)
    stream, session = builder.new_session()
    output = program(stream).output()
    graph = builder.finalize()
    checkpoint = []
    for version in range(VERSIONS):
        for record, multiplicity in churn(version):
            session.update(record, multiplicity)
        session.advance_to(at(version + 1))
        graph.run()
        if version == CHECKPOINT:
            checkpoint = graph.state_sizes()
    assert output.finished(at(VERSIONS - 1))
    return checkpoint, graph.state_sizes()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("dimensions", [1, 2])
def test_state_stays_the_same_size_under_key_churn(name: str, dimensions: int) -> None:
    at = (lambda version: version) if dimensions == 1 else (lambda version: (version, 0))
    checkpoint, end = sizes_during(PROGRAMS[name], at(0), at)
    assert end == checkpoint


def test_sliding_reachability_keeps_a_constant_state() -> None:
    """The root and its two edges move on every version: reachability's loop holds what it did."""
    root_session, edge_session, reached, graph = reachability_sessions()
    checkpoint = []
    for version in range(VERSIONS):
        root_session.insert(version)
        edge_session.insert((version, version + 1))
        edge_session.insert((version + 1, version + 2))
        if version:
            root_session.remove(version - 1)
            edge_session.remove((version - 1, version))
            edge_session.remove((version, version + 1))
        for session in (root_session, edge_session):
            session.advance_to(version + 1)
        graph.run()
        if version == CHECKPOINT:
            checkpoint = graph.state_sizes()
    assert reached.changes(VERSIONS - 1) == {VERSIONS - 2: -1, VERSIONS + 1: 1}
    assert graph.state_sizes() == checkpoint


def test_an_output_without_history_keeps_only_the_snapshot() -> None:
    """``output(history=False)`` folds each finished version into its snapshot: its memory follows the live
    result, and every version's change still reaches the callback."""
    seen: list = []
    builder = GraphBuilder(0)
    stream, session = builder.new_session()
    output = stream.count().output(history=False, on_version=lambda version, changes: seen.append(changes))
    graph = builder.finalize()
    for version in range(VERSIONS):
        for record, multiplicity in churn(version):
            session.update(record, multiplicity)
        session.advance_to(version + 1)
        graph.run()
        assert output.snapshot() == {(version, 1): 1}
    assert len(seen) == VERSIONS and seen[-1] == {(VERSIONS - 2, 1): -1, (VERSIONS - 1, 1): 1}
    assert repr(output).endswith("versions=0)")
    with pytest.raises(GraphError, match=r"keeps no history .* read snapshot"):
        output.at(VERSIONS - 1)
