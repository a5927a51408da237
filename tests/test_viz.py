"""final.viz draws what the graph is: operators by name and number, loops as nested boxes, and the product order."""

from __future__ import annotations

import pytest

from tests.harness import build_graph, stage_module
from tests.programs import reachability


@pytest.mark.since("final")
def test_dot_shows_every_operator_and_nests_loops(stage: str) -> None:
    module = stage_module(stage)

    def two_loops(roots, edges):
        return reachability(roots, edges).iterate(lambda inner: inner.map(lambda n: n).distinct_keys())

    _, _, graph = build_graph(module, two_loops, 2)
    dot = graph.to_dot()
    assert dot.count("subgraph cluster_") == 2  # two loops, one after the other
    for operator in graph.operators:
        assert f"{operator.name} #{operator.number}" in dot
    names = {operator.name for operator in graph.operators}
    assert {"ingress", "feedback", "egress", "join", "distinct", "threshold", "concat", "enter"} <= names
    # The maps after the loop's join and distinct are fused into them (000, "Fusing logic"), and say so.
    assert 'label="join #' in dot and "\\n+ map" in dot.split('label="join #')[1].split('"')[0]
    assert "\\n+ map" in dot.split('label="distinct #')[1].split('"')[0]
    assert dot.count("[label=") == len(graph.operators) + 2 + 1  # operators, two inputs, one reader
    assert dot.count("style=dashed") == 2  # each loop's feedback edge


@pytest.mark.since("final")
def test_loops_inside_loops_are_boxes_inside_boxes(stage: str) -> None:
    module = stage_module(stage)
    _, _, graph = build_graph(
        module, lambda c: c.iterate(lambda outer: outer.iterate(lambda inner: inner.distinct_keys())), 1)
    dot = graph.to_dot()
    outer_start = dot.index("subgraph cluster_")
    inner_start = dot.index("subgraph cluster_", outer_start + 1)
    assert dot.index("}", outer_start) > inner_start  # the inner box opens before the outer one closes


@pytest.mark.since("final")
def test_render_and_plot(stage: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from final import viz

    _, _, graph = build_graph(stage_module(stage), lambda c: c.map(lambda x: x).count(), 1)
    assert viz.render(graph, "svg").lstrip().startswith(b"<?xml")
    ax = viz.plot_product_order(5, antichain=[(2, 4), (4, 1)], frontiers=[[(0, 0)], [(1, 0), (0, 1)]],
                                versions=[(3, 3)])
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels == ["allowed by the antichain", "antichain", "frontier 0", "frontier 1", "data"]


def test_the_readme_picture_of_pointstamps_is_the_engine_s() -> None:
    """docs/pictures/progress_loop.dot is what final.viz draws of the loop today (python -m tests.pictures)."""
    from tests.pictures import FOLDER, PICTURES

    for name, draw in PICTURES.items():
        committed = (FOLDER / f"{name}.dot").read_text()
        assert committed == draw() + "\n", f"docs/pictures/{name}.dot is stale: run python -m tests.pictures"
        assert (FOLDER / f"{name}.svg").exists()


def test_pointstamps_drawn_are_the_tracker_s() -> None:
    """Every pointstamp the tracker holds shows in the picture: an input's frontier, what an operator holds
    back, what is queued on an edge; and an output's frontier follows from them."""
    from final import viz
    from tests.pictures import progress_on_a_loop

    graph = progress_on_a_loop()
    dot = viz.to_dot(graph, pointstamps=True)
    assert 'label="numbers\\nholds 1"' in dot
    held = graph.progress.held()
    (distinct,) = [operator for operator in graph.operators if operator.name == "distinct"]
    assert f"holds {', '.join(str(tuple(v)) for v in sorted(held[distinct.label], key=tuple))}" in dot
    assert "queued (0, 0), (0, 1)" in dot
    (output,) = graph.outputs
    assert output.frontier.elements == ((0,),) and "frontier 0" in dot
    assert "holds" not in viz.to_dot(graph)  # without pointstamps, the plain diagram
