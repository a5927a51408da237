"""Stage v5: partially ordered versions, antichain frontiers, and a correct ``iterate``.

New since v4: versions are ordered coordinate by coordinate (the product
order), so ``(1, 0)`` and ``(0, 1)`` are incomparable and a loop's iteration
at one input version no longer sees other versions' iterations as its past.
Frontiers become ``Antichain``s of minimal versions; operators take the
``meet`` of their inputs' frontiers; ``join`` emits at the lattice join of its
inputs' versions; indexes compact with ``advance_by``; ``reduce`` corrects its
output at joins of versions where its input changed (the ``(couch, -1)`` of
document 002); and ``Feedback`` drops a frontier element once the loop has
provably converged below it, so loops end. Retractions now come out right.
Source: document 002, "v5/vFinal: Partially ordered
versions", and document 001.
"""

from .collection import Collection
from .errors import (
    DataflowError,
    FrontierError,
    GraphError,
    IterationError,
    RecordError,
    VersionError,
)
from .graph import (
    DifferenceStreamBuilder,
    DifferenceStreamReader,
    DifferenceStreamWriter,
    Graph,
    GraphBuilder,
)
from .index import Index
from .operators import DataMessage, FrontierMessage
from .order import Antichain, Version

__all__ = [
    "Antichain",
    "Collection",
    "DataMessage",
    "DataflowError",
    "DifferenceStreamBuilder",
    "DifferenceStreamReader",
    "DifferenceStreamWriter",
    "FrontierError",
    "FrontierMessage",
    "Graph",
    "GraphBuilder",
    "GraphError",
    "Index",
    "IterationError",
    "RecordError",
    "Version",
    "VersionError",
]
