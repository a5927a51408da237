"""The pictures the README shows, drawn from graphs the engine built: ``python -m tests.pictures`` draws them again.

Each picture is kept as its dot source beside the SVG graphviz made of it;
``tests/test_viz.py`` fails when a picture's source is not what the engine
draws today, naming this command.
"""

from __future__ import annotations

from pathlib import Path

from final import Graph, GraphBuilder
from final.viz import to_dot
from tests.examples import geometric_series

FOLDER = Path(__file__).resolve().parent.parent / "docs" / "pictures"


def progress_on_a_loop() -> Graph:
    """002's ``geometric_series`` over 1 and 3 at version 0, stopped after two steps of at most one message per
    operator: version 0's iterations are under way, so pointstamps sit inside the loop."""
    builder = GraphBuilder(0)
    numbers, session = builder.new_session("numbers")
    numbers.iterate(geometric_series).output("series")
    graph = builder.finalize()
    for number in (1, 3):
        session.insert(number)
    session.advance_to(1)
    session.flush()
    for _ in range(2):
        graph.step(budget=1)
    return graph


PICTURES = {"progress_loop": lambda: to_dot(progress_on_a_loop(), pointstamps=True)}
"""Each picture's name, and how to draw its dot source."""


def main() -> None:
    import graphviz

    FOLDER.mkdir(parents=True, exist_ok=True)
    for name, draw in PICTURES.items():
        source = draw()
        (FOLDER / f"{name}.dot").write_text(source + "\n")
        (FOLDER / f"{name}.svg").write_bytes(graphviz.Source(source).pipe(format="svg"))
        print(f"wrote {FOLDER / name}.dot and .svg")


if __name__ == "__main__":
    main()
