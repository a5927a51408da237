"""Stage v3: versions and frontiers.

New since v2: every difference collection travels with a ``Version``, so
differences may arrive out of order and several may add up at one version;
inputs and operators send frontiers, promises that versions before them are
finished. ``Index`` becomes multiversion and compacts the versions the frontier
has passed; ``reduce`` and ``consolidate`` send a version only once it is
finished, in version order; binary operators no longer wait for each other;
``reader.probe_frontier_less_than(version)`` tells whether a version is done.
Source: document 002, "v3: Versions and frontiers".
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
from .order import Version

__all__ = [
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
