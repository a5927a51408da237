"""The recorded graph: what a program's shape is before it runs, and what the compile passes rewrite.

While a program is built, nothing runs: ``GraphBuilder`` records its
shape, a ``Topology`` of inputs, operators (``Node``: what makes the
operator, its name, the ends it reads and writes), outputs, and the edges
between them, each edge from a ``Source`` (an input, or an operator's
output) to a ``Target`` (an operator's input, or a reader the user holds),
in a ``Scope``: the top level, or a loop's body. These are plans, not
running parts: a node holds no state, an end no queue and no location.
``final.compile`` rewrites a topology in passes, each making a new one and
leaving the one it was given as it was, and then builds the running graph
from the last. Source: document 002, "v2: Constructing
dataflow graphs"; timely dataflow's ``SubgraphBuilder`` collects a scope's
edges the same way, and its ``build`` makes the subgraph that runs.

A ``Recorder`` records nodes and edges: the builder records a program with
one, and a pass records with one the dataflow it puts in a node's place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import GraphError

if TYPE_CHECKING:
    from .fusion import Chain
    from .operators.base import Operator
    from .order import Antichain
    from .sessions import ConnectedReader, InputWriter, Output


class Scope:
    """A nesting level of the graph: the top level, or the body of an ``iterate`` (``GraphBuilder.new_scope``).

    Invariant: every stream of a scope carries versions of ``dimension``
    coordinates, one more than its parent's; every edge of a scope starts at
    ``initial_frontier``. A loop's scope is ``closed`` once ``iterate`` has
    built it: nothing more of the program may read its streams.
    """

    def __init__(self, parent: Scope | None, initial_frontier: Antichain) -> None:
        self.parent = parent
        self.depth = parent.depth + 1 if parent else 0
        self.initial_frontier = initial_frontier
        self.dimension = len(initial_frontier.elements[0])
        self.closed = False

    def encloses(self, other: Scope) -> bool:
        """Whether ``other`` is this scope or nested, at any depth, inside it."""
        while other is not None and other is not self:
            other = other.parent
        return other is self

    def check_open(self, what: str) -> None:
        """Raise a GraphError if this scope is inside a loop that ``iterate`` has finished building: ``what``
        would read a stream whose versions count iterations from outside."""
        scope: Scope | None = self
        while scope is not None:
            if scope.closed:
                raise GraphError(
                    f"{what} reads a stream built inside an iterate body, after the loop was built; its versions "
                    f"count iterations. Use the stream iterate returns, or build this inside the body"
                )
            scope = scope.parent


class Source:
    """The sending end of a stream, as recorded: an input, or an operator's output, in a scope.

    It names a place, nothing more: compiling the graph builds the writer
    that sends from there (``final.edges``).

    Invariant: it never changes once made.
    """

    __slots__ = ("dimension", "scope")

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.dimension = scope.dimension
        """How many coordinates the versions of this stream have."""


class Target:
    """The receiving end of an edge, as recorded: an operator's input, or a reader the user holds.

    Invariant: it never changes once made; compiling the graph builds the
    reader that queues messages there (``final.edges``).
    """

    __slots__ = ("scope",)

    def __init__(self, scope: Scope) -> None:
        self.scope = scope


General = Callable[[Any], Any]
"""A reduction's general rendering: from the stream it reads, the stream of its result, built with the stream
API (``final.strategies`` builds it where the in-place rendering cannot run)."""


@dataclass(frozen=True, eq=False)
class Node:
    """An operator as recorded: the compiled graph makes it as ``operator(place, *arguments)``.

    ``name`` is what messages call it (with the label of the ``labelled``
    block it was recorded in, ``label``). An in-place reduction carries its
    ``general`` rendering too, for the strategy pass to put in its place
    where versions are not totally ordered.

    Invariant: ``inputs`` are its own targets, read by no other node;
    ``output`` is the source no other node sends from; ``general`` is None
    unless ``operator`` is an in-place reduction whose strategy is not chosen yet.
    """

    operator: type[Operator]
    arguments: tuple
    name: str
    inputs: tuple[Target, ...]
    output: Source
    label: str | None = None
    general: General | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Topology:
    """The shape of a dataflow graph: its inputs, operators and outputs, and the edges between them.

    ``readers`` are the readers the user connected (an ``Output`` reads
    through one); ``chains`` maps an end of an edge to the ``fusion.Chain``
    of linear logic it applies, once fusion has made some.

    Invariant: ``nodes`` are in a topological order once a loop's feedback
    edges are left out (a node comes after those whose output it reads);
    ``edges`` holds every target once, as ``(source, target)``.
    """

    inputs: tuple[InputWriter, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[Output, ...]
    edges: tuple[tuple[Source, Target], ...]
    readers: tuple[ConnectedReader, ...]
    chains: dict[Source | Target, Chain] = field(default_factory=dict)

    def vertices(self) -> dict[Source | Target, Any]:
        """The vertex at each end of an edge: a node at its output and its inputs, an input's writer at its
        source, an ``Output`` or the reader the user connected at its target."""
        vertex: dict[Source | Target, Any] = {writer.source: writer for writer in self.inputs}
        for reader in self.readers:
            vertex[reader.target] = reader
        for output in self.outputs:
            vertex[output.reader.target] = output
        for node in self.nodes:
            vertex[node.output] = node
            for target in node.inputs:
                vertex[target] = node
        return vertex

    def fused(self, node: Node) -> tuple[list[str], list[str]]:
        """The linear operators fused into ``node``: those in front of its inputs and those after its output,
        each in the order data meets them."""
        chains = self.chains
        before = [name for target in node.inputs if target in chains for name in chains[target].names]
        return before, list(chains[node.output].names) if node.output in chains else []

    def sources(self) -> dict[Target, Source]:
        """The source each target reads from."""
        return {target: source for source, target in self.edges}

    def replaced(self, nodes: Sequence[Node], edges: Sequence[tuple[Source, Target]],
                 chains: dict[Source | Target, Chain] | None = None) -> Topology:
        """The same inputs, outputs and readers with these nodes, edges and (if given) chains: a pass's result."""
        return Topology(self.inputs, tuple(nodes), self.outputs, tuple(edges), self.readers,
                        self.chains if chains is None else chains)


class Recorder:
    """Records nodes and the edges they read, in the order made: a program's, or the dataflow a pass builds.

    ``GraphBuilder`` is one, with the checks a user's program needs; a bare
    one is what a pass records with (``final.strategies``): the program was
    checked when it was recorded, and what a pass builds reads the very
    stream the node it replaces read, inside a finished loop too.

    Invariant: ``edges`` holds every target made, with the source it reads;
    ``nodes`` every node, in the order recorded.
    """

    def __init__(self, labels: Sequence[str] = ()) -> None:
        self.nodes: list[Node] = []
        self.edges: list[tuple[Source, Target]] = []
        self._labels = list(labels)

    def check_building(self, what: str) -> None:
        """Raise a GraphError if ``what`` may not be recorded now: never, for a pass's recorder."""

    def check_open(self, scope: Scope, what: str) -> None:
        """Raise a GraphError if ``what`` may not read a stream of ``scope``: never, for a pass's recorder."""

    @contextmanager
    def labelled(self, label: str) -> Iterator[None]:
        """Operators added inside this block carry ``label`` in their name, so diagrams and error messages show
        it: ``filter (WHERE fare > 0)``. A compiler labels each operator with the clause it comes from; the
        innermost block's label wins."""
        self._labels.append(label)
        try:
            yield
        finally:
            self._labels.pop()

    def new_writer(self, scope: Scope) -> Source:
        """The output of an operator not recorded yet, in ``scope`` (a loop's feedback edge is made before
        its body, the feedback operator after it)."""
        return Source(scope)

    def new_edge(self, source: Source) -> Target:
        """A new edge from ``source``, for an operator about to be recorded to read."""
        target = Target(source.scope)
        self.edges.append((source, target))
        return target

    def record_operator(
        self, operator: type[Operator], readers: list[Target], scope: Scope, name: str, output: Source | None = None,
        arguments: tuple = (), general: General | None = None,
    ) -> Source:
        """Record an operator called ``name``, made as ``operator(place, *arguments)``, that reads ``readers``, in
        ``scope``; its output. ``general``: see ``Node``."""
        self.check_building("adding an operator")
        if output is None:
            output = self.new_writer(scope)
        label = self._labels[-1] if self._labels else None
        name = f"{name} ({label})" if label else name
        self.nodes.append(Node(operator, tuple(arguments), name, tuple(readers), output, label, general))
        return output
