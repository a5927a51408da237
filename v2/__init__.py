"""Stage v2: dataflow graphs, fed with difference collections as they arrive.

New since v1: the computation is a graph built once and fed online.
``GraphBuilder`` hands out inputs (a stream to build on and a writer to feed);
operators are vertices that keep their state (indexes) between calls; edges are
queues that fan each message out to every reader; ``graph.step()`` runs every
operator once. ``DifferenceSequence`` is gone: a stream is its online form.
Binary operators still pair their inputs' i-th differences, so they wait for both.
Source: document 002, "v2: Constructing dataflow graphs".
"""

from .collection import Collection
from .errors import DataflowError, GraphError, IterationError, RecordError
from .graph import (
    DifferenceStreamBuilder,
    DifferenceStreamReader,
    DifferenceStreamWriter,
    Graph,
    GraphBuilder,
)
from .index import Index

__all__ = [
    "Collection",
    "DataflowError",
    "DifferenceStreamBuilder",
    "DifferenceStreamReader",
    "DifferenceStreamWriter",
    "Graph",
    "GraphBuilder",
    "GraphError",
    "Index",
    "IterationError",
    "RecordError",
]
