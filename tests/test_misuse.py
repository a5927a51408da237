"""Misuse gets a specific exception whose message says what to do (the README, "Errors").

And a failed call leaves the graph usable: valid data sent afterwards comes
out exactly as if the bad call had never been made.
"""

from __future__ import annotations

import re

import pytest

from tests.harness import build_graph, data_until, new_builder, run, run_or_skip, stage_module


@pytest.mark.parametrize(
    ("updates", "match"),
    [
        ([(5,)], r"\(record, multiplicity\) pairs, but got \(5,\)"),
        ([("a", 1, 2)], r"\(record, multiplicity\) pairs"),
        ([("a", "1")], r"multiplicity of 'a' must be an int, not '1'"),
        ([("a", 1.0)], r"must be an int"),
        ([(["a"], 1)], r"unhashable record \['a'\].*use tuples"),
    ],
)
def test_malformed_collections_are_refused(stage: str, updates: list, match: str) -> None:
    module = stage_module(stage)
    with pytest.raises(module.RecordError, match=match):
        module.Collection(updates)
    assert issubclass(module.RecordError, TypeError) and issubclass(module.RecordError, module.DataflowError)


@pytest.mark.parametrize("operator", ["join", "reduce"])
def test_operators_that_need_pairs_say_so(stage: str, operator: str) -> None:
    module = stage_module(stage)
    programs = {"join": lambda a, b: a.join(b), "reduce": lambda a, b: a.concat(b).count()}
    with pytest.raises(module.RecordError, match=rf"{operator} needs \(key, value\) pairs, but got the record 5"):
        run_or_skip(stage, programs[operator], [[(5, 0, 1)], [((5, "x"), 0, 1)]])


def test_unhashable_records_from_a_map_are_named(stage: str) -> None:
    module = stage_module(stage)
    with pytest.raises(module.RecordError, match=r"unhashable record \[1\]"):
        run_or_skip(stage, lambda c: c.map(lambda r: [r]).consolidate(), [[(1, 0, 1)]])


def test_v0_iterate_that_never_converges_raises() -> None:
    import v0

    with pytest.raises(v0.IterationError, match=r"did not reach a fixed point in 50 iterations.*max_iterations"):
        v0.Collection([(0, 1)]).iterate(lambda c: c.map(lambda x: x + 1), max_iterations=50)


@pytest.mark.since("v1")
def test_stages_without_iterate_name_the_missing_concept(stage: str) -> None:
    try:
        run(stage, lambda c: c.iterate(lambda x: x), [[(1, 0, 1)]])
    except NotImplementedError as missing:
        assert "iteration coordinate" in str(missing) and "v4" in str(missing)
    else:
        assert stage not in ("v1", "v2", "v3"), f"{stage} should not iterate"


@pytest.mark.since("v2")
def test_building_after_finalize_is_refused(stage: str) -> None:
    module = stage_module(stage)
    builder = new_builder(module)
    source, _ = builder.new_input()
    builder.finalize()
    with pytest.raises(module.GraphError, match=r"after finalize\(\).*start a new GraphBuilder"):
        source.map(lambda x: x)
    with pytest.raises(module.GraphError, match="after finalize"):
        builder.new_input()
    with pytest.raises(module.GraphError, match="after finalize"):
        source.connect_reader()
    with pytest.raises(module.GraphError, match="after finalize"):
        builder.finalize()


@pytest.mark.since("v2")
def test_streams_of_two_builders_do_not_mix(stage: str) -> None:
    module = stage_module(stage)
    a, _ = new_builder(module).new_input()
    b, _ = new_builder(module).new_input()
    with pytest.raises(module.GraphError, match="different GraphBuilders"):
        a.concat(b)


@pytest.mark.since("v3")
def test_input_misuse_is_refused_and_the_graph_stays_usable(stage: str) -> None:
    module = stage_module(stage)
    V, C = module.Version, module.Collection
    (writer,), reader, graph = build_graph(module, lambda source: source.map(lambda r: (r, ())).count(), 1)
    writer.send_data(V(1), C([("a", 1)]))
    writer.send_frontier(V(2))
    late = re.escape(repr(V(1)))
    with pytest.raises(module.VersionError, match=rf"data sent at {late}, but the frontier is already"):
        writer.send_data(V(1), C([("late", 1)]))
    with pytest.raises(module.FrontierError, match=r"cannot move backwards from .*2.* to .*1"):
        writer.send_frontier(V(1))
    with pytest.raises(module.VersionError, match=r"must be a Version, not 3; write Version\(3\)"):
        writer.send_data(3, C([("b", 1)]))
    with pytest.raises(module.FrontierError, match=r"a frontier must be an? (Antichain|Version)"):
        writer.send_frontier(3)
    with pytest.raises(module.RecordError, match="send_data takes a Collection"):
        writer.send_data(V(2), [("b", 1)])
    with pytest.raises(module.VersionError, match="non-negative int"):
        V(-1)
    writer.send_data(V(2), C([("b", 1)]))
    writer.send_frontier(V(3))
    assert data_until(module, graph, reader, V(3)) == [{("a", 1): 1}, {("b", 1): 1}]


@pytest.mark.since("v3")
def test_bad_records_inside_the_graph_are_named(stage: str) -> None:
    """A join fed a non-pair raises, naming it. In v3..v5 the join's state is untouched and later data joins
    correctly; final breaks the graph instead (its failure contract, README "Errors"), so that no version
    finishes with part of its data applied: version 0 never finishes."""
    module = stage_module(stage)
    V, C = module.Version, module.Collection
    (write_a, write_b), reader, graph = build_graph(module, lambda a, b: a.join(b), 2)
    write_a.send_data(V(0), C([("not a pair", 1)]))
    with pytest.raises(module.RecordError, match="join needs \\(key, value\\) pairs, but got the record 'not a pair'"):
        graph.step()
    if stage == "final":
        with pytest.raises(module.BrokenGraphError, match="failed earlier"):
            write_a.send_data(V(0), C([(("k", 1), 1)]))
        with pytest.raises(module.BrokenGraphError):
            graph.step()
        assert reader.probe_frontier_less_than(V(1))
        return
    write_a.send_data(V(0), C([(("k", 1), 1)]))
    write_b.send_data(V(0), C([(("k", 2), 1)]))
    for writer in (write_a, write_b):
        writer.send_frontier(V(1))
    assert data_until(module, graph, reader, V(1)) == [{("k", (1, 2)): 1}]


@pytest.mark.since("v4")
def test_versions_of_another_dimension_are_refused(stage: str) -> None:
    module = stage_module(stage)
    V, C = module.Version, module.Collection
    (writer,), reader, graph = build_graph(module, lambda source: source.count(), 1)
    with pytest.raises(module.VersionError, match=r"has 2 coordinates, but this stream's versions have 1"):
        writer.send_data(V((0, 0)), C([(("k", 1), 1)]))
    with pytest.raises(module.FrontierError, match=r"do not mix versions of different dimensions"):
        writer.send_frontier(V((1, 0)))
    writer.send_data(V(0), C([(("k", 1), 1)]))
    writer.send_frontier(V(1))
    assert data_until(module, graph, reader, V(1)) == [{("k", 1): 1}]
