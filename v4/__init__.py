"""Stage v4: multidimensional versions, ordered lexicographically, and ``iterate``.

New since v3: a ``Version`` is a tuple of ints compared lexicographically, and
``iterate(f)`` runs a loop in a nested scope whose versions are ``(version,
iteration)``: ``Ingress`` enters the input at iteration 0 and retracts it at 1,
``Feedback`` sends the body's output back one iteration on, ``Egress`` drops
the iteration coordinate on the way out, and streams from outside the loop are
entered into it unchanged. Lexicographic order is still a total order, and
that is not enough: a loop sees every earlier version's iterations as its
past, so a retraction can leave stale results behind. This stage is right
only for inputs that only grow; it reproduces document 002's wrong answer on
purpose, and v5 fixes it.
Source: document 002, "v4: Multidimensional versions".
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
