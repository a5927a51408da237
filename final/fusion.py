"""Fusion: a chain of linear operators folded into the operator next to it, when a graph is compiled.

A linear operator works on each update alone (``final.operators.linear``),
so its logic can run wherever the data passes: 000 ("Fusing logic") composes
the logics of a chain (``followed_by``) into one. ``fuse`` does that to a
graph's recorded ``Topology`` before ``GraphBuilder.finalize`` builds it: a
linear operator that alone reads an operator's output joins that operator,
its logic applied to what the operator sends (a map after a join becomes
part of the join); a chain that only one operator reads joins that
operator's input, its logic applied to what arrives (a map between an input
and a count becomes part of the count). Same results, one operator and one
edge fewer per linear operator, no intermediate collection built. Nothing
is rewired: ``fuse`` returns a new topology, which the graph is then built
from. Rust DD fuses nothing itself; Materialize folds maps, filters and
projections into one operator the same way (its ``MapFilterProject``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .edges import DifferenceStreamReader, DifferenceStreamWriter, Topology
from .operators.base import Logic, followed_by
from .operators.linear import LinearUnaryOperator


@dataclass(frozen=True)
class Chain:
    """Linear logic fused into one end of an edge, and the operators it came from, in the order data meets them.

    >>> double = Chain(lambda version, updates: [(version, [(r * 2, m) for r, m in updates])], ("map",))
    >>> both = double.followed_by(Chain(lambda version, updates: [(version, updates + updates)], ("flat_map",)))
    >>> both.names, list(both.logic(0, [(1, 1)]))
    (('map', 'flat_map'), [(0, [(2, 1), (2, 1)])])

    Invariant: ``logic`` applies the logics of the operators ``names`` names,
    one after another, in that order.
    """

    logic: Logic
    names: tuple[str, ...]

    def followed_by(self, then: Chain | None) -> Chain:
        """This chain, then ``then`` on what it produced (nothing more if ``then`` is None)."""
        if then is None:
            return self
        return Chain(followed_by(self.logic, then.logic), self.names + then.names)


def fuse(topology: Topology) -> Topology:
    """The topology left once every linear operator that can be has been fused into an operator next to it.

    First, in build order, a linear operator that alone reads another
    operator's output joins that output (the operator's writer applies its
    logic and sends to its readers), so a chain after an operator becomes
    part of it. Then, from the last operator back, a linear operator left
    whose output one operator alone reads joins that operator's input (the
    reader applies its logic, and reads from its writer): a chain after an
    input, or after a stream that several read.
    """
    source = {reader: writer for writer, reader in topology.edges}
    readers: dict[DifferenceStreamWriter, list[DifferenceStreamReader]] = {}
    for writer, reader in topology.edges:
        readers.setdefault(writer, []).append(reader)
    chains = dict(topology.chains)
    producing = {operator.output for operator in topology.operators}

    kept = []
    for operator in topology.operators:
        if isinstance(operator, LinearUnaryOperator):
            (reader,) = operator.inputs
            writer = source[reader]
            if writer in producing and readers[writer] == [reader]:
                own = _alone(operator).followed_by(chains.pop(operator.output, None))
                chains[writer] = own if writer not in chains else chains[writer].followed_by(own)
                readers[writer] = readers.pop(operator.output, [])
                for moved in readers[writer]:
                    source[moved] = writer
                continue
        kept.append(operator)

    reading = {reader for operator in kept for reader in operator.inputs}
    fused = set()
    for operator in reversed(kept):
        if not isinstance(operator, LinearUnaryOperator):
            continue
        targets = readers.get(operator.output, [])
        if len(targets) != 1 or targets[0] not in reading:
            continue
        (target,) = targets
        own = _alone(operator).followed_by(chains.pop(operator.output, None))
        chains[target] = own.followed_by(chains.get(target))
        (reader,) = operator.inputs
        writer = source[reader]
        readers[writer].remove(reader)
        readers[writer].append(target)
        source[target] = writer
        del readers[operator.output]
        fused.add(operator)

    operators = [operator for operator in kept if operator not in fused]
    writers = [*topology.inputs, *(operator.output for operator in operators)]
    edges = [(writer, reader) for writer in writers for reader in readers.get(writer, [])]
    return Topology(topology.inputs, operators, topology.outputs, edges, chains)


def _alone(operator: LinearUnaryOperator) -> Chain:
    """The chain of one linear operator: its logic, under its name."""
    return Chain(operator.logic, (operator.name,))
