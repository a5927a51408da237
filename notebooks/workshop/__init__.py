"""Helpers the workshop notebooks share: the stages' own code, their graphs, and exercises.

Each notebook shows the code that carries its concept (``show_source``) and
what changed from the stage before (``show_diff``), draws the graphs it builds
from the graph's public view (``draw``), and sets exercises whose answers are
checked by functions that say what is wrong (``check``); the solutions live in
``notebooks/solutions`` and ``solve`` shows one and checks it. A build-it
exercise's checker swaps the learner's piece into the stage and runs the
stage's own property test on it (``check_piece``, in ``build``). Notebooks run
with ``notebooks/`` as the working directory, so this package imports as
``workshop``.
"""

from .build import Property, check_piece, equals_from_scratch, swapped
from .exercises import Wrong, as_multiset, check, exercise, solve
from .graphs import dataflow_dot, draw
from .source import show_diff, show_source, stage_changes

__all__ = [
    "Property", "Wrong", "as_multiset", "check", "check_piece", "dataflow_dot", "draw", "equals_from_scratch",
    "exercise", "show_diff", "show_source", "solve", "stage_changes", "swapped",
]
