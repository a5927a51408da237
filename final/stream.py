"""The stream API: what a program chains to build a dataflow (``stream.map(f).join(other).count()``).

``DifferenceStreamBuilder`` is a stream under construction, in a scope of a
graph: the source it is sent from, and the recorder that records what reads
it (the program's ``GraphBuilder``, or a compile pass's ``Recorder``). Its
operator methods come from the operator families of ``final.operators``,
each family's methods beside its operators (``LinearMethods``,
``ReduceMethods``, ...; ``final.operators.STREAM_METHODS``); this module adds
what every family needs: recording an operator (``add_operator``), bringing a
stream into a loop (``enter``), and the ends of a graph (``output``,
``connect_reader``). Source: document 002, "v2: Constructing dataflow
graphs" (the builder), "v4" (``enter``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from .collection import Record
from .errors import GraphError
from .operators import STREAM_METHODS
from .operators.base import Operator, StreamMethods
from .operators.iterate import Enter
from .order import Version
from .sessions import Output

if TYPE_CHECKING:
    from .sessions import ConnectedReader
    from .topology import General, Recorder, Scope, Source
    from .trace import Arrangement


class DifferenceStreamBuilder(*STREAM_METHODS):
    """A stream under construction: each operator method adds a vertex and returns its output stream.

    ``builder``, ``writer`` and ``scope`` are the recorder of the graph
    (its ``GraphBuilder``, or a pass's ``Recorder``), the recorded source
    the stream is sent from (an input's, or an operator's output) and the
    scope it lives in.
    """

    def __init__(self, builder: Recorder, writer: Source, scope: Scope) -> None:
        self.builder = builder
        self.writer = writer
        self.scope = scope
        self._entered: dict[Scope, DifferenceStreamBuilder] = {}

    def stream_of(self, writer: Source, scope: Scope) -> DifferenceStreamBuilder:
        """A stream of this builder from ``writer``, in ``scope`` (the internal protocol: a loop's feedback edge)."""
        return DifferenceStreamBuilder(self.builder, writer, scope)

    def with_arrangement(self, arrangement: Arrangement) -> ArrangedStream:
        """This stream, marked as kept in ``arrangement`` (the internal protocol: ``arrange``)."""
        return ArrangedStream(self.builder, self.writer, self.scope, arrangement)

    def add_operator(
        self, operator: type[Operator], name: str, others: Iterable[StreamMethods] = (), scope: Scope | None = None,
        output: Source | None = None, arguments: tuple = (), general: General | None = None,
    ) -> DifferenceStreamBuilder:
        """Record a new operator called ``name`` that reads this stream and ``others``; return its output stream.

        The compiled graph makes it as ``operator(place, *arguments)``
        (``final.operators.base.Place``); ``general`` is an in-place
        reduction's general rendering (``final.strategies``). The output is
        in ``scope`` (by default the innermost scope of the streams read);
        streams from enclosing scopes are entered into the innermost one
        first (the internal protocol).

        Raises:
            GraphError: the graph is finalized, a stream comes from another
                builder, or from a loop that was already built.
        """
        streams = [self, *others]
        self.builder.check_building("adding an operator")
        for stream in streams:
            if stream.builder is not self.builder:
                raise GraphError(
                    "an operator's inputs come from different GraphBuilders; build every "
                    "stream of one computation from one builder"
                )
        inner = max((stream.scope for stream in streams), key=lambda scope: scope.depth)
        for stream in streams:
            stream._check_enters(inner)
        for stream in streams:
            stream._check_open(name)
        readers = [self.builder.new_edge(stream.enter(inner).writer) for stream in streams]
        scope = scope or inner
        writer = self.builder.record_operator(operator, readers, scope, name, output, arguments, general)
        return DifferenceStreamBuilder(self.builder, writer, scope)

    def enter(self, scope: Scope) -> DifferenceStreamBuilder:
        """This stream brought into ``scope``, nested inside its own (Rust DD's ``enter``).

        Each level extends versions with iteration 0, where the stream's
        collection stays for every iteration. Made once per scope and shared.

        Raises:
            GraphError: ``scope`` is not nested inside this stream's scope.
        """
        if scope is self.scope:
            return self
        self._check_enters(scope)
        if scope not in self._entered:
            self._entered[scope] = self.enter(scope.parent).add_operator(Enter, "enter", scope=scope)
        return self._entered[scope]

    def _check_enters(self, scope: Scope) -> None:
        """Raise a GraphError unless this stream can be brought into ``scope``: it is this stream's, or nested in it."""
        if not self.scope.encloses(scope):
            raise GraphError(
                "a stream built inside one iterate body is combined with a stream of another loop "
                "it is not nested in; only the stream iterate returns leaves its loop"
            )

    def _check_open(self, what: str) -> None:
        """Raise a GraphError if this stream is inside a loop that ``iterate`` has finished building."""
        self.builder.check_open(self.scope, what)

    def connect_reader(self) -> ConnectedReader:
        """A new reader of this stream, for the user to read outputs from (002's API).

        Raises:
            GraphError: the graph is already finalized, or this stream is inside a finished loop.
        """
        self.builder.check_building("connect_reader")
        self._check_open("connect_reader")
        return self.builder.new_connected_reader(self.writer)

    def output(
        self, name: str | None = None, on_version: Callable[[Version, dict[Record, int]], None] | None = None,
        history: bool = True,
    ) -> Output:
        """An ``Output`` handle that keeps this stream's consolidated result, version by version.

        ``name`` (by default ``output0``, ...) is what diagrams and messages
        call it; ``on_version(version, changes)`` is called for every version
        at which the result changed, once the version is finished, in order.
        With ``history=False`` only the current snapshot is kept, for
        programs that run for many versions.

        Raises:
            GraphError: the graph is already finalized, the name is taken, or
                this stream is inside a loop (read the stream ``iterate`` returns).
        """
        builder = self.builder
        builder.check_building("output")
        if self.scope.depth:
            self._check_open("output")
            raise GraphError(
                "output reads a stream inside an iterate body, whose versions count iterations; "
                "take the output of the stream iterate returns"
            )
        name = builder.checked_name(name, f"output{len(builder.outputs)}", "output")
        output = Output(builder.new_connected_reader(self.writer), name, on_version, history)
        builder.add_output(output)
        return output


class ArrangedStream(DifferenceStreamBuilder):
    """A stream with a shared ``Arrangement`` of its contents, made by ``arrange()``: joins read it there."""

    def __init__(self, builder: Recorder, writer: Source, scope: Scope, arrangement: Arrangement) -> None:
        super().__init__(builder, writer, scope)
        self.arrangement = arrangement
