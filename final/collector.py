"""CPython's cyclic garbage collector, paused while a graph runs.

The engine's state is dicts, lists and tuples that refer to each other
without cycles, so reference counting frees all of it; the cyclic collector
finds nothing there to free. Yet CPython runs it on every 700 new
container objects, and a full collection each time the objects that
survived earlier ones grow by a quarter: a load that keeps a million tuples
walks them again and again, and a version that makes a thousand new tuples
beside them pays for young collections that find nothing (half of a join's
time per change, measured in ``tests/bench/README.md``).

The policy: ``Graph.run`` and ``Graph.step`` pause the collector while they
work and put it back as they found it, so the objects a run made are looked
at once, by the first collection after it, not once per 700 of them. Nothing
else changes: a program's own code between runs is collected as usual, and
``gc.collect()`` works at any time. Cycles that a function given to an
operator makes wait until the run ends. A process that wants the collector
on all the time sets ``final.collector.PAUSE = False``. Rust DD has no such
question: Rust frees memory when its owner goes.
"""

from __future__ import annotations

import gc

PAUSE = True
"""Whether graphs pause the cyclic collector while they run (see the module docstring)."""


class paused:  # lower case: it reads as a function, ``with collector.paused():``
    """The collector off for a ``with`` block if ``PAUSE`` (and it was on), then as it was.

    Blocks nest: an inner one finds the collector off already and leaves it so.
    """

    __slots__ = ("_resume",)

    def __enter__(self) -> None:
        self._resume = PAUSE and gc.isenabled()
        if self._resume:
            gc.disable()

    def __exit__(self, *_: object) -> None:
        if self._resume:
            gc.enable()
