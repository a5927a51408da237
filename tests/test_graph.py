"""How the dataflow stages deliver: what v2's lockstep costs, and what v3's versions buy.

Expected behaviours come from document 002, "v2:
Constructing dataflow graphs" and "v3: Versions and frontiers".
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import v2
from final.conformance.drive import frontier_after
from tests.harness import as_frontier, build_graph, operators, stage_module


def test_v2_map_filter_graph_debug_output() -> None:
    """002, v2: map(+5), filter(even), debug, fed 0..9 one difference at a time."""
    lines: list[str] = []
    builder = v2.GraphBuilder()
    source, writer = builder.new_input()
    source.map(lambda data: data + 5).filter(lambda data: data % 2 == 0).debug("output", sink=lines.append)
    graph = builder.finalize()
    for i in range(10):
        writer.send_data(v2.Collection([(i, 1)]))
        graph.step()
    evens = [f"debug output data: collection: Collection([({i + 5}, 1)])" for i in range(1, 10, 2)]
    empties = ["debug output data: collection: Collection([])"] * 5
    assert lines[1::2] == evens and lines[0::2] == empties


def test_v2_concat_waits_for_both_inputs() -> None:
    """002, v2: with 4 differences on input a and 2 on input b, concat can emit only 2."""
    C = v2.Collection
    builder = v2.GraphBuilder()
    a, write_a = builder.new_input()
    b, write_b = builder.new_input()
    reader = a.concat(b).connect_reader()
    graph = builder.finalize()
    for i in range(4):
        write_a.send_data(C([(f"a{i}", 1)]))
    for i in range(2):
        write_b.send_data(C([(f"b{i}", 1)]))
    graph.step()
    assert list(reader.drain()) == [C([("a0", 1), ("b0", 1)]), C([("a1", 1), ("b1", 1)])]
    for i in range(2, 4):
        write_b.send_data(C([(f"b{i}", 1)]))
    graph.step()
    assert list(reader.drain()) == [C([("a2", 1), ("b2", 1)]), C([("a3", 1), ("b3", 1)])]


def entries(index, key) -> dict:
    """``key``'s entries in an index, version -> sorted ``(value, multiplicity)`` pairs.

    final's ``Index.versions`` shows them; v3..v5 keep to document 002's API,
    which has none, so their ``_values`` are read (a list per version, a dict in final).
    """
    versions = index.versions(key) if hasattr(index, "versions") else index._values[key]
    return {version: sorted(dict(values).items()) for version, values in versions.items()}


def join_index(join, side: int):
    """The index a join keeps of input ``side``: final shows it (``Join.indexes``), v3..v5 keep ``_indexes``."""
    if hasattr(join, "indexes"):
        (index,) = join.indexes(side)
        return index
    return join._indexes[side]


def message_reader(stage: str, reader) -> Callable[[], list[tuple]]:
    """A function reading ``reader``'s new messages as ``("data", version, records)`` and ``("frontier", f)``.

    A frontier of one version is shown as that version, in every stage (v5 on
    send antichains, final sends their changes: the function keeps the
    frontier it last saw to apply them to).
    """
    module = stage_module(stage)
    seen = [reader.frontier if hasattr(reader, "frontier") else None]

    def plain(frontier):
        elements = getattr(frontier, "elements", None)
        return elements[0] if elements is not None and len(elements) == 1 else frontier

    def read() -> list[tuple]:
        result = []
        for message in reader.drain():
            if isinstance(message, module.DataMessage):
                result.append(("data", message.version, message.collection.as_dict()))
            else:
                seen[0] = frontier_after(message, seen[0])
                result.append(("frontier", plain(seen[0])))
        return result

    return read


@pytest.mark.since("v3")
def test_concat_forwards_out_of_order_data_without_waiting(stage: str) -> None:
    """002, v3: concat forwards each (version, difference) as it arrives, in any order."""
    module = stage_module(stage)
    V, C = module.Version, module.Collection
    (write_a, write_b), reader, graph = build_graph(module, lambda a, b: a.concat(b), 2)
    read = message_reader(stage, reader)
    write_a.send_data(V(2), C([("a2", 1)]))
    write_a.send_data(V(0), C([("a0", 1)]))
    write_a.send_frontier(V(3))
    graph.step()
    # b has sent nothing, yet a's data is through; the frontier waits for b.
    assert read() == [("data", V(2), {"a2": 1}), ("data", V(0), {"a0": 1})]
    write_b.send_frontier(V(1))
    graph.step()
    assert read() == [("frontier", V(1))]
    assert reader.probe_frontier_less_than(V(2)) and not reader.probe_frontier_less_than(V(1))


@pytest.mark.since("v3")
@pytest.mark.parametrize("operator", ["count", "consolidate"])
def test_finished_versions_come_out_in_version_order(stage: str, operator: str) -> None:
    """002, v3: 'if versions 0, 1 and 2 are closed with one notification ... reduce must first
    produce the output for 0, then 1, and then finally 2'."""
    module = stage_module(stage)
    V, C = module.Version, module.Collection
    (writer,), reader, graph = build_graph(module, lambda source: getattr(source, operator)(), 1)
    read = message_reader(stage, reader)
    for version, value in [(2, "c"), (0, "a"), (1, "b")]:
        writer.send_data(V(version), C([(("k", value), 1)]))
    graph.step()
    assert read() == []  # nothing is finished yet
    writer.send_frontier(V(3))
    graph.step()
    if operator == "count":
        expected = [{("k", 1): 1}, {("k", 2): 1, ("k", 1): -1}, {("k", 3): 1, ("k", 2): -1}]
    else:
        expected = [{("k", "a"): 1}, {("k", "b"): 1}, {("k", "c"): 1}]
    assert read() == [("data", V(v), e) for v, e in enumerate(expected)] + [("frontier", V(3))]


@pytest.mark.since("v3")
def test_binary_output_frontier_is_the_meet_of_its_inputs(stage: str) -> None:
    module = stage_module(stage)
    V = module.Version
    (write_a, write_b), reader, graph = build_graph(module, lambda a, b: a.join(b), 2)
    read = message_reader(stage, reader)
    write_a.send_frontier(V(5))
    write_b.send_frontier(V(2))
    graph.step()
    assert read() == [("frontier", V(2))]
    write_b.send_frontier(V(9))
    graph.step()
    assert read() == [("frontier", V(5))]


@pytest.mark.since("v3")
def test_index_compaction_merges_versions_the_frontier_passed(stage: str) -> None:
    """002, v3: a multiversion index compacts what the frontier has passed, keeping later versions apart."""
    module = stage_module(stage)
    V = module.Version
    index = module.Index()
    for version in range(5):
        index.add_value("k", V(version), ("x", 1))
        index.add_value("k", V(version), ("y", (-1) ** version))
    index.compact(as_frontier(module, V(3)))
    # y alternates +1, -1: it cancels by version 3 and is back at version 4.
    assert index.reconstruct_at("k", V(3)) == [("x", 4)]
    assert index.reconstruct_at("k", V(4)) == [("x", 5), ("y", 1)]
    assert sorted(entries(index, "k"), key=V.sort_key) == [V(3), V(4)]
    # A later change to the key (v5 compacts a key only when it changes) and a frontier past everything.
    index.add_value("k", V(6), ("x", 1))
    index.compact(as_frontier(module, V(10)))
    assert entries(index, "k") == {V(10): [("x", 6), ("y", 1)]}


@pytest.mark.since("v3")
def test_an_index_of_a_collection_takes_pairs_only(stage: str) -> None:
    module = stage_module(stage)
    V, C = module.Version, module.Collection
    index = module.Index.from_collection(V(0), C([(("k", 1), 2), (("k", 2), 1)]), "join")
    assert sorted(index.reconstruct_at("k", V(0))) == [(1, 2), (2, 1)]
    with pytest.raises(module.RecordError, match=r"join needs \(key, value\) pairs, but got the record 5"):
        module.Index.from_collection(V(0), C([(5, 1)]), "join")


@pytest.mark.since("v3")
def test_appending_a_difference_that_cancels_a_value_keeps_the_rest(stage: str) -> None:
    """An index plus a difference: a value that cancels goes, the difference's other values stay."""
    module = stage_module(stage)
    V = module.Version
    index, difference = module.Index(), module.Index()
    index.add_value("k", V(0), ("a", 1))
    difference.add_value("k", V(0), ("a", -1))
    difference.add_value("k", V(0), ("b", 2))
    index.append(difference)
    assert index.reconstruct_at("k", V(0)) == [("b", 2)]


@pytest.mark.since("v3")
def test_join_indexes_stay_small_under_repeated_updates(stage: str) -> None:
    """Compaction: 200 versions of churn on one key leave one version of live data."""
    module = stage_module(stage)
    V, C = module.Version, module.Collection
    (write_a, write_b), _, graph = build_graph(module, lambda a, b: a.join(b), 2)
    write_b.send_data(V(0), C([(("k", "b"), 1)]))
    for version in range(200):
        retract_previous = [(("k", version - 1), -1)] if version else []
        write_a.send_data(V(version), C([(("k", version), 1), *retract_previous]))
        write_a.send_frontier(V(version + 1))
        write_b.send_frontier(V(version + 1))
        graph.step()
    (join,) = operators(graph)
    assert list(entries(join_index(join, 0), "k").values()) == [[(199, 1)]]


def _named(node) -> str:
    """An edge end as a test reads it: an operator by its name, an input's writer or a user's reader by its kind."""
    return getattr(node, "name", type(node).__name__.removeprefix("DifferenceStream"))


@pytest.mark.parametrize("stage", ["v2", "v3", "v4", "v5"])
def test_a_graph_shows_its_operators_and_edges(stage: str) -> None:
    """The public view the notebooks draw from: inputs, named operators in build order, and every edge."""
    module = stage_module(stage)
    writers, reader, graph = build_graph(module, lambda a, b: a.map(str).concat(b).count(), 2)
    assert [operator.name for operator in graph.operators] == ["map", "concat", "count"]
    assert graph.inputs == tuple(writers)
    edges = [(_named(source), _named(target)) for source, target in graph.edges()]
    assert sorted(edges) == sorted(
        [("Writer", "map"), ("Writer", "concat"), ("map", "concat"), ("concat", "count"), ("count", "Reader")]
    )
    assert [target for _, target in graph.edges() if not hasattr(target, "name")] == [reader]


@pytest.mark.parametrize("stage", ["v4", "v5"])
def test_a_graph_shows_each_operators_scope_and_the_feedback_edge(stage: str) -> None:
    """From v4: ``scope_of`` puts the loop body one level down, and feedback goes back to the loop head."""
    module = stage_module(stage)
    _, _, graph = build_graph(module, lambda a: a.iterate(lambda x: x.map(lambda n: n).distinct()), 1)
    depths = {operator.name: graph.scope_of(operator).depth for operator in graph.operators}
    assert depths == {"ingress": 1, "concat": 1, "map": 1, "distinct": 1, "feedback": 1, "egress": 0}
    (head,) = [target for source, target in graph.edges() if getattr(source, "name", "") == "feedback"]
    assert head.name == "concat" and graph.scope_of(head).parent is graph.scope_of(graph.operators[-1])


@pytest.mark.parametrize("pause", [True, False])
@pytest.mark.parametrize("enabled", [True, False])
def test_runs_pause_the_cyclic_collector_and_restore_it(pause: bool, enabled: bool, monkeypatch) -> None:
    """``final.collector``: the collector is off while a run or a step works, if ``PAUSE``, and as it was after."""
    import gc

    from final import GraphBuilder, collector

    monkeypatch.setattr(collector, "PAUSE", pause)
    seen = []
    builder = GraphBuilder(0)
    stream, session = builder.new_session()
    stream.map(lambda record: seen.append(gc.isenabled()) or record).output("out")
    graph = builder.finalize()
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        session.insert(1)
        session.advance_to(1)
        graph.run()
        session.insert(2)
        session.flush()
        graph.step()
        assert seen == [enabled and not pause] * 2 and gc.isenabled() == enabled
    finally:
        (gc.enable if was else gc.disable)()
