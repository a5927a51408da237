"""Errors a user of the engine can cause, each one saying what to do about it.

Every error subclasses ``DataflowError`` and the builtin it refines, so callers
may catch either (the README's section on errors). Messages name the operator, show
the offending value and say how to fix the call.

An error comes at one of two moments. A call that hands the engine something
malformed (a record that cannot be hashed, data at a version the frontier has
passed, a frontier moving backwards, a graph built wrong) is refused before
anything is buffered or sent, and the graph stays usable. Anything raised while
a graph runs (a record an operator cannot take, such as a non-pair reaching a
join, as a ``RecordError``; a user's function raising, as a ``FunctionError``;
a malformed result; no fixed point) may leave an operator half way through a
version, so the graph is broken and refuses every further call that would run
or feed it (``BrokenGraphError``); what its outputs finished before is still
right. A graph's ``Status``, shared by the graph and the handles that feed and read
it, records that it is broken, and where.
"""

from __future__ import annotations

from collections.abc import Callable


class DataflowError(Exception):
    """Base class of every error this engine raises on purpose."""

    operator: str | None = None
    """The label of the operator it arose in, once the message names it (set while the graph runs)."""


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


class FunctionError(DataflowError, RuntimeError):
    """A function you gave an operator raised (its exception is this one's ``__cause__``).

    The message names the operator, the version it was working on, and the
    key or record the function was called with. The graph is broken from then
    on (see ``BrokenGraphError``): some operators may hold part of that
    version's work, so no answer it gave after this point could be trusted.
    """


class BrokenGraphError(GraphError):
    """The graph failed earlier (a function raised, a result was malformed, a loop did not converge).

    Every call that would run the graph or feed it refuses with this error:
    build the graph again. What its outputs finished before the failure is
    still right and can still be read.
    """


class Status:
    """Whether a graph can still run: shared by the graph, its inputs' writers and sessions, and its outputs.

    Invariant: ``failure`` is None until an error breaks the graph, then says which error, where.
    """

    __slots__ = ("_watchers", "failure")

    def __init__(self) -> None:
        self.failure: str | None = None
        self._watchers: list[Callable[[], None]] = []

    def check(self, what: str, input_name: str | None = None) -> None:
        """Raise ``BrokenGraphError`` if the graph has failed: ``what`` (to the input ``input_name``, if given)
        cannot be done any more."""
        if self.failure is not None:
            if input_name is not None:
                what = f"{what} input {input_name!r}"
            raise BrokenGraphError(
                f"cannot {what}: this graph failed earlier ({self.failure}), so its operators may hold part of "
                f"that work. Build the graph again; its outputs still answer for the versions they finished"
            )

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when the graph fails (a session forgets the version it was filling)."""
        self._watchers.append(callback)

    def fail(self, failure: str) -> None:
        self.failure = failure
        for callback in self._watchers:
            callback()
