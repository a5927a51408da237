"""Helpers the workshop notebooks share: the stages' own code, their graphs, and exercises.

Each notebook shows the code that carries its concept (``show_source``) and
what changed from the stage before (``show_diff``), draws the graphs it builds
from the graph's public view (``draw``), and sets exercises whose answers are
checked by functions that say what is wrong (``check``); the solutions live in
``notebooks/solutions`` and ``solve`` shows one and checks it. Notebooks run
with ``notebooks/`` as the working directory, so this package imports as
``workshop``.
"""

from .exercises import Wrong, as_multiset, check, exercise, solve
from .graphs import dataflow_dot, draw
from .source import show_diff, show_source, stage_changes

__all__ = [
    "Wrong", "as_multiset", "check", "dataflow_dot", "draw", "exercise", "show_diff", "show_source", "solve",
    "stage_changes",
]
