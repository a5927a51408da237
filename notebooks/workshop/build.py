"""Build-it exercises: a learner writes a piece of a stage, and the stage's own property test judges it.

A build-it checker puts the learner's function in place of one attribute of a
stage (``swapped``: a method such as ``v3.index.Index.compact``), searches
random examples with hypothesis for one on which a property fails, and, if
there is one, raises ``Wrong`` showing the smallest (hypothesis shrinks it),
what the stage gave with the learner's piece and what the reference gives
(``check_piece``). The stage's own code is back in place afterwards, whatever
the learner's code did.

A ``Property`` says, for each example, what the stage gives (``got``, run with
the piece in place) and what it must give (``expected``).
``equals_from_scratch(stage, program)`` is the oracle test the suite checks
every stage with (``tests/test_properties.py``): the program's output at every
input version equals v0 recomputed from scratch, on the suite's own
histories (``tests/strategies.py``) and run by the suite's harness
(``tests/harness.py``). A piece that whole programs reach too rarely (a
lattice operation on frontiers several versions wide), or whose mistakes no
output shows (an index left unconsolidated only grows), can add a
``Property`` comparing it directly with a from-scratch definition.

The API, general enough for any stage, final's included::

    check_piece(stage, attribute, piece, properties)   # raises Wrong, or returns
    swapped(stage, attribute, piece)                   # context manager
    equals_from_scratch(stage, program, inputs=None)   # -> Property
    Property(name, examples, got, expected, example="history", reference="v0 from scratch", rule="")

e.g. ``check_piece("v3", "index.Index.compact", compact, [equals_from_scratch("v3", "count")])``.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from tests.harness import run
from tests.programs import BINARY, ITERATIVE, UNARY
from tests.strategies import any_history

from .exercises import Wrong

EXAMPLES = 150
"""Random examples per property before a piece is passed: enough to find the mistakes the
workshop's exercises expect within a few seconds, which matters because the test suite runs
every checker on every solution and mistake."""

SEARCH = settings(
    database=None,  # a verdict must not depend on what an earlier run saved
    deadline=None,  # machines are shared; a slow example is not a wrong one
    derandomize=True,  # the same answer always gets the same verdict and the same smallest history
    max_examples=EXAMPLES,
    suppress_health_check=list(HealthCheck),  # a learner's slow or partial piece is for the verdict to judge
)

SHRINK_SECONDS = 10.0
"""How long hypothesis may shrink a failing example before the smallest found so far is shown: a
wrong piece can make each run slow (a loop that no longer converges), and a learner is waiting."""


@dataclass(frozen=True)
class Property:
    """What a piece must keep: on every example drawn from ``examples``, ``got(example) == expected(example)``.

    ``got`` runs with the learner's piece in place; ``expected`` is the
    reference (v0 from scratch, or a definition). ``example`` and
    ``reference`` name the two in a ``Wrong`` message, and ``rule``, when
    given, ends it: what the reference asks, for a property whose two sides
    alone do not say why they differ (a definition, a cost).
    """

    name: str
    examples: st.SearchStrategy
    got: Callable[[Any], Any]
    expected: Callable[[Any], Any]
    example: str = "history"
    reference: str = "v0 from scratch"
    rule: str = ""


def equals_from_scratch(stage: str, program: str, inputs: st.SearchStrategy | None = None) -> Property:
    """The suite's oracle property for ``program`` (a name in ``tests/programs.py``) on ``stage``.

    ``inputs`` draws the list of input histories; by default the suite's
    ``any_history`` for each input of a unary or binary program. An iterative
    program needs ``inputs``: the suite draws loops' inputs per stage.
    """
    function = {**UNARY, **BINARY, **ITERATIVE}[program]
    if inputs is None:
        if program in ITERATIVE:
            raise ValueError(f"{program} iterates: give the inputs strategy the suite checks {stage}'s loops with")
        count = 2 if program in BINARY else 1
        inputs = st.lists(any_history, min_size=count, max_size=count)
    return Property(
        name=f"{program} on {stage}",
        examples=inputs,
        got=lambda histories: run(stage, function, histories),
        expected=lambda histories: run("v0", function, histories),
        example="inputs (a list of (record, version, multiplicity) per input)",
    )


def _owner_and_name(stage: str, attribute: str) -> tuple[Any, str]:
    """The object holding ``attribute`` (``"index.Index.compact"``: the class ``Index`` of ``<stage>.index``)."""
    module, *path, name = attribute.split(".")
    owner: Any = importlib.import_module(f"{stage}.{module}")
    for part in path:
        owner = getattr(owner, part)
    if not hasattr(owner, name):
        raise ValueError(f"{stage}.{attribute} does not exist: name a module, class and attribute of the stage")
    return owner, name


@contextmanager
def swapped(stage: str, attribute: str, piece: Callable) -> Iterator[None]:
    """Run the body with ``piece`` in place of ``<stage>.<attribute>``, and always put the original back.

    A method's replacement is wrapped in a plain function, so that a lambda, a
    ``functools.partial`` or a callable object receives ``self`` as a ``def``
    would.
    """
    owner, name = _owner_and_name(stage, attribute)
    had_own = name in vars(owner)  # an inherited attribute is removed again, not copied down
    original = vars(owner).get(name)

    def in_place(*args: Any, **kwargs: Any) -> Any:
        return piece(*args, **kwargs)

    setattr(owner, name, in_place if isinstance(owner, type) else piece)
    try:
        yield
    finally:
        if had_own:
            setattr(owner, name, original)
        else:
            delattr(owner, name)


def _outcome(prop: Property, example: Any) -> tuple[Any, Any, Exception | None]:
    """``(got, expected, None)``, or ``(None, expected, error)`` when the stage raised with the piece in place."""
    expected = prop.expected(example)
    try:
        return prop.got(example), expected, None
    except Exception as error:  # a learner's piece may raise anything: that is a verdict, not a crash
        return None, expected, error


def _fails(prop: Property, example: Any) -> bool:
    """Whether ``example`` breaks ``prop``: the stage gives something else, or raises."""
    got, expected, error = _outcome(prop, example)
    return error is not None or got != expected


class _OutOfTime(Exception):
    """Shrinking has used ``SHRINK_SECONDS``; the smallest failing example found so far stands."""


def _smallest_failing(prop: Property) -> Any:
    """The smallest example hypothesis finds on which ``prop`` fails, or None if it finds none.

    While shrinking, hypothesis only tries examples smaller than the
    smallest failing one so far, so the last failing example seen is the
    one to show if time runs out.
    """
    last: list[Any] = []
    first_failure: list[float] = []

    def fails(example: Any) -> bool:
        if first_failure and time.monotonic() - first_failure[0] > SHRINK_SECONDS:
            raise _OutOfTime
        if not _fails(prop, example):
            return False
        last[:] = [example]
        first_failure[:] = first_failure or [time.monotonic()]
        return True

    try:
        return find(prop.examples, fails, settings=SEARCH)
    except NoSuchExample:
        return None
    except _OutOfTime:
        return last[0]


def _differing(got: Any, expected: Any) -> tuple[Any, Any]:
    """Only the entries that differ, when both are dicts with the same keys (results by version): the rest is noise."""
    if isinstance(got, dict) and isinstance(expected, dict) and got.keys() == expected.keys():
        keys = [key for key in expected if got[key] != expected[key]]
        return {key: got[key] for key in keys}, {key: expected[key] for key in keys}
    return got, expected


def check_piece(stage: str, attribute: str, piece: Callable, properties: Sequence[Property]) -> None:
    """Judge ``piece`` as ``<stage>.<attribute>`` by ``properties``; raise ``Wrong`` on the smallest failing example.

    Each property is searched in turn, with the piece swapped in; the first
    that fails is reported with its smallest failing example, what the stage
    gave there (or the exception it raised) and what the reference gives.

    Raises:
        Wrong: ``piece`` is not callable, or a property fails.
    """
    where = attribute.split(".", 1)[1]
    if not callable(piece):
        raise Wrong(f"give a function to use as {where}, not {type(piece).__name__}: {piece!r}")
    with swapped(stage, attribute, piece):
        for prop in properties:
            smallest = _smallest_failing(prop)
            if smallest is not None:
                got, expected, error = _outcome(prop, smallest)
                break
        else:
            return
    heading = (f"{prop.name} with your {where} differs from {prop.reference}; the smallest failing {prop.example}:\n"
               f"  {smallest!r}\n")
    rule = f"\n{prop.rule}" if prop.rule else ""
    if error is not None:
        raise Wrong(f"{heading}there your {where} raised {type(error).__name__}: {error}{rule}")
    got, expected = _differing(got, expected)
    mine, theirs = f"with your {where}:", f"{prop.reference}:"
    width = max(len(mine), len(theirs))
    raise Wrong(f"{heading}{mine:<{width}}  {got!r}\n{theirs:<{width}}  {expected!r}{rule}")
