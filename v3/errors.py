"""Errors a user of the engine can cause, each one saying what to do about it.

Every error subclasses ``DataflowError`` and the builtin it refines, so callers
may catch either (the README's section on errors). Messages name the operator, show
the offending value and say how to fix the call.
"""

from __future__ import annotations


class DataflowError(Exception):
    """Base class of every error this engine raises on purpose."""


class RecordError(DataflowError, TypeError):
    """A record or multiplicity does not have the shape an operator needs.

    Raised for an update that is not a ``(record, multiplicity)`` pair, a
    multiplicity that is not an int, a record that cannot be hashed, and a
    record that is not a ``(key, value)`` pair where ``join`` or ``reduce``
    needs one.
    """


class IterationError(DataflowError, RuntimeError):
    """``iterate`` did not reach a fixed point within its iteration bound."""


class GraphError(DataflowError, RuntimeError):
    """A dataflow graph was built or wired the wrong way (e.g. after ``finalize``)."""


class VersionError(DataflowError, ValueError):
    """A version is malformed, or data was sent at a version the frontier has passed."""


class FrontierError(DataflowError, ValueError):
    """A frontier is malformed, or it was moved backwards."""
