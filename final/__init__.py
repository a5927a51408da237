"""Stage final: the complete engine, built on v5's partially ordered versions.

New since v5: a package with one module per concept (``order``,
``collection``, ``trace``, ``graph``, and ``operators/`` with one module per
operator family) instead of one file per stage concept, and the operators the
documents add beyond document 002. So far: the most general linear operator
of shared/seeds/000_60294c000a3077be.txt (``explode``, ``join_function``,
``temporal_filter``), and chains of linear operators fused into one operator
when the graph is finalized. Everything v5 computes, final computes the same.
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
    ArrangedStream,
    DifferenceStreamBuilder,
    DifferenceStreamReader,
    DifferenceStreamWriter,
    Graph,
    GraphBuilder,
)
from .operators import DataMessage, FrontierMessage
from .order import Antichain, Version
from .trace import Arrangement, Index

__all__ = [
    "Arrangement",
    "Antichain",
    "ArrangedStream",
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
