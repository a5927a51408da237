"""Fusion: a compile pass that folds each chain of linear operators into the operator next to it.

A linear operator works on each update alone (``final.operators.linear``),
so its logic can run wherever the data passes: 000 ("Fusing logic") composes
the logics of a chain (``followed_by``) into one. ``fuse`` does that to a
topology, as one of ``final.compile``'s passes: a linear operator that alone
reads an operator's output joins that operator, its logic applied to what the
operator sends (a map after a join becomes part of the join); a chain that
only one operator reads joins that operator's input, its logic applied to
what arrives (a map between an input and a count becomes part of the
count). Same results, one operator and one edge fewer per linear operator,
no intermediate collection built. The topology it is given stays as it
was: ``fuse`` returns a new one, whose ``chains`` say which end of an edge
applies which logic, and the compiled graph builds each end with its own.
Rust DD fuses nothing itself; Materialize folds maps, filters and
projections into one operator the same way (its ``MapFilterProject``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .logic import Logic, followed_by
from .operators.linear import LinearUnaryOperator
from .topology import Node, Source, Target, Topology


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


def fuse(topology: Topology) -> tuple[Topology, list[str]]:
    """The topology left once every linear operator that can be has been fused into an operator next to it,
    and what was fused where, one line per linear operator.

    First, in build order, a linear operator that alone reads another
    operator's output joins that output (the operator's writer applies its
    logic and sends to its readers), so a chain after an operator becomes
    part of it. Then, from the last operator back, a linear operator left
    whose output one operator alone reads joins that operator's input (the
    reader applies its logic, and reads from its writer): a chain after an
    input, or after a stream that several read.
    """
    source = topology.sources()
    readers: dict[Source, list[Target]] = {}
    for writer, reader in topology.edges:
        readers.setdefault(writer, []).append(reader)
    chains = dict(topology.chains)
    producer = {node.output: node for node in topology.nodes}
    changes = []

    kept = []
    for node in topology.nodes:
        if issubclass(node.operator, LinearUnaryOperator):
            (reader,) = node.inputs
            writer = source[reader]
            if writer in producer and readers[writer] == [reader]:
                own = _alone(node).followed_by(chains.pop(node.output, None))
                chains[writer] = own if writer not in chains else chains[writer].followed_by(own)
                readers[writer] = readers.pop(node.output, [])
                for moved in readers[writer]:
                    source[moved] = writer
                changes.append(f"{node.name} fused after {producer[writer].name}, into what it sends")
                continue
        kept.append(node)

    reader_of = {reader: node for node in kept for reader in node.inputs}
    fused = set()
    for node in reversed(kept):
        if not issubclass(node.operator, LinearUnaryOperator):
            continue
        targets = readers.get(node.output, [])
        if len(targets) != 1 or targets[0] not in reader_of:
            continue
        (target,) = targets
        own = _alone(node).followed_by(chains.pop(node.output, None))
        chains[target] = own.followed_by(chains.get(target))
        (reader,) = node.inputs
        writer = source[reader]
        readers[writer].remove(reader)
        readers[writer].append(target)
        source[target] = writer
        del readers[node.output]
        fused.add(node)
        changes.append(f"{node.name} fused in front of {reader_of[target].name}, into what it takes")

    nodes = [node for node in kept if node not in fused]
    writers = [*(writer.source for writer in topology.inputs), *(node.output for node in nodes)]
    edges = [(writer, reader) for writer in writers for reader in readers.get(writer, [])]
    return topology.replaced(nodes, edges, chains), changes


def _alone(node: Node) -> Chain:
    """The chain of one linear operator: its logic (all a linear operator is made from), under its name."""
    (logic,) = node.arguments
    return Chain(logic, (node.name,))
