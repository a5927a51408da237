"""Stage v1: a changing collection as a sequence of difference collections.

New since v0: ``DifferenceSequence``, a list of difference collections
``[A0, A1 - A0, A2 - A1, ...]`` with the same operators as ``Collection``
(except ``iterate``), and ``Index``, the key -> values map that lets ``join``
and ``reduce`` work only on the keys a difference touches.
Source: document 002, "v1: Sequences of difference
collections".
"""

from .collection import Collection
from .errors import DataflowError, IterationError, RecordError
from .index import Index
from .sequence import DifferenceSequence

__all__ = ["Collection", "DataflowError", "DifferenceSequence", "Index", "IterationError", "RecordError"]
