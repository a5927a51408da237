"""Checkers for the exercises of ``final1_operators.ipynb``: failures, ``join_function`` logic.

Each checker drives ``final`` through its public API only (input sessions,
``graph.run()``, ``Output`` handles), and the right answer is what final
does (for the subscriptions, cross-checked against plain Python from scratch).
The data an exercise is about is defined here (``DIVIDE_INPUTS``,
``COUNT_INPUTS``, ``LATE_CHANGE``, ``SUBSCRIPTIONS``), so the notebook shows
the very data the checker judges.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from workshop import Wrong, exercise
from workshop.final import feed

import final

# Exercise 1: which exception, and does the graph still work afterwards?

DIVIDE_INPUTS = [[4, 5], [0]]
"""Program "divide", ``numbers.map(lambda n: 100 // n)``: version 0 inserts 4 and 5, version 1 inserts 0."""

COUNT_INPUTS = [[("cake", ())], ["tea"]]
"""Program "count", ``words.count()``: version 0 inserts ``("cake", ())``, version 1 the bare string ``"tea"``."""

LATE_CHANGE = (("tea", ()), 1, 1)
"""Program "late", ``words.count()``: version 0 inserts ``("cake", ())`` and the session advances to 2; then
``session.update_at(*LATE_CHANGE)`` changes the input at version 1, which the session has already passed."""

PROGRAMS = ("divide", "count", "late")


def _by_version(versions: list[list[Any]]) -> Callable[[Any, Any], None]:
    """Feeding one version of records at a time, ``graph.run()`` after each."""

    def feed(session: Any, graph: Any) -> None:
        for version, records in enumerate(versions):
            for record in records:
                session.insert(record)
            session.advance_to(version + 1)
            graph.run()

    return feed


def _late(session: Any, graph: Any) -> None:
    session.insert(("cake", ()))
    session.advance_to(2)
    graph.run()
    session.update_at(*LATE_CHANGE)


def _failure(program: Callable[[Any], Any], feed: Callable[[Any, Any], None]) -> tuple[type, bool]:
    """``(the exception class feeding the graph raised, whether the session still takes input afterwards)``."""
    builder = final.GraphBuilder(0)
    stream, session = builder.new_session("in")
    program(stream).output("out")
    graph = builder.finalize()
    try:
        feed(session, graph)
    except final.DataflowError as error:
        raised = type(error)
    else:
        raise AssertionError("the exercise's program must fail")
    try:
        session.insert(("jam", ()))
        session.advance_to(10)
        graph.run()
    except final.BrokenGraphError:
        return raised, False
    return raised, True


def failure_truth() -> dict[str, tuple[type, bool]]:
    """What final really does on the three programs of exercise 1."""
    return {
        "divide": _failure(lambda numbers: numbers.map(lambda n: 100 // n), _by_version(DIVIDE_INPUTS)),
        "count": _failure(lambda words: words.count(), _by_version(COUNT_INPUTS)),
        "late": _failure(lambda words: words.count(), _late),
    }


_WHY = {
    ("divide", 0): (
        "100 // 0 raises ZeroDivisionError inside map's function; graph.run() does not let it through as it "
        "is but raises final.FunctionError, which names the operator (map #0), the version and the record, "
        "and keeps your ZeroDivisionError as its __cause__"
    ),
    ("divide", 1): (
        "map stopped half way through version 1, so no later answer could be trusted: the graph is broken "
        "and every further insert, advance_to, step or run raises BrokenGraphError (what finished before, "
        "version 0, can still be read)"
    ),
    ("count", 0): (
        "count needs (key, value) pairs, and 'tea' is not one; no function of yours ran, so it is not a "
        "FunctionError but final.RecordError, naming the operator, the version and the record"
    ),
    ("count", 1): (
        "the record reached count while the graph was stepping, and anything raised while stepping breaks the "
        "graph: an operator may hold part of that version's work, so every further insert, advance_to, step "
        "or run raises BrokenGraphError"
    ),
    ("late", 0): (
        "version 1 is finished once the session has advanced to 2, so a change there is refused with "
        "final.VersionError, which names the input and its frontier"
    ),
    ("late", 1): (
        "the session refused the call before buffering anything, so nothing changed: the graph stays usable "
        "and takes changes at versions its frontier allows"
    ),
}


@exercise
def predict_failures(answer: Any) -> None:
    """The learner's ``{program: (exception class, usable afterwards)}`` for the three programs."""
    if not isinstance(answer, dict) or set(answer) != set(PROGRAMS):
        raise Wrong(
            f"give a dict with the keys 'divide', 'count' and 'late', each (exception class, True/False), "
            f"e.g. {{'divide': (final.GraphError, True), 'count': ..., 'late': ...}}; you gave {answer!r}"
        )
    truth = failure_truth()
    for program in PROGRAMS:
        given = answer[program]
        if not (isinstance(given, tuple) and len(given) == 2):
            raise Wrong(f"{program!r}: give a pair (exception class, True/False), not {given!r}")
        raised, usable = given
        if not (isinstance(raised, type) and issubclass(raised, BaseException)):
            raise Wrong(
                f"{program!r}: the first item is an exception class, such as final.GraphError, not {raised!r}"
            )
        if not isinstance(usable, bool):
            raise Wrong(f"{program!r}: the second item is True or False (does the graph take input?), not {usable!r}")
        if raised is not truth[program][0]:
            raise Wrong(
                f"{program!r}: you said it raises {raised.__name__}, but it raises "
                f"{truth[program][0].__name__}: {_WHY[program, 0]}"
            )
        if usable is not truth[program][1]:
            raise Wrong(
                f"{program!r}: you said the graph {'takes' if usable else 'refuses'} input afterwards, but it "
                f"{'takes' if truth[program][1] else 'refuses'} it: {_WHY[program, 1]}"
            )


# Exercise 2: join_function logic.

SUBSCRIPTIONS = [
    (("ann", 2, 3), 0, 1),
    (("bo", 0, 4), 0, 1),
    (("cy", 1, 6), 3, 1),
    (("bo", 0, 4), 2, -1),
    (("dee", 5, 2), 0, 2),
    (("ann", 8, 1), 1, 1),
]
"""The input's history ``(record, version, multiplicity)``; a record is ``(user, start, months)``.

ann subscribes for versions 2, 3, 4 and again for 8; bo for 0..3 but the
subscription is deleted at version 2; cy's subscription from 1 arrives only at
version 3; dee is recorded twice (multiplicity 2) for versions 5 and 6.
"""

SUBSCRIPTION_VERSIONS = range(11)


def subscribed_from_scratch(version: int) -> dict[str, int]:
    """Who is subscribed at ``version``, with multiplicity: plain Python over the records known by then."""
    present: Counter = Counter()
    for (user, start, months), at, multiplicity in SUBSCRIPTIONS:
        if at <= version and start <= version < start + months:
            present[user] += multiplicity
    return {user: multiplicity for user, multiplicity in present.items() if multiplicity}


def subscribed_by_final(logic: Callable[[Any], Any]) -> dict[int, dict[str, int]]:
    """``join_function(logic)`` on ``SUBSCRIPTIONS``: the output at every version."""
    output = feed(lambda stream: stream.join_function(logic), [SUBSCRIPTIONS])
    return {version: output.at(version) for version in SUBSCRIPTION_VERSIONS}


@exercise
def subscription_logic(answer: Any) -> None:
    """The learner's ``logic(record)`` for ``join_function``: each user present while subscribed."""
    if not callable(answer):
        raise Wrong(
            f"give a function logic(record) that returns a list of (value, version, multiplicity), not {answer!r}"
        )
    sample = SUBSCRIPTIONS[0][0]
    produced = answer(sample)
    try:
        updates = list(produced)
        shapes_ok = all(isinstance(update, tuple) and len(update) == 3 for update in updates)
    except TypeError:
        shapes_ok = False
    if not shapes_ok:
        raise Wrong(
            f"logic({sample!r}) returned {produced!r}; join_function wants a list of (value, version, "
            f"multiplicity) triples, e.g. [('ann', 2, 1), ...]"
        )
    got = subscribed_by_final(answer)
    for version in SUBSCRIPTION_VERSIONS:
        expected = subscribed_from_scratch(version)
        if got[version] != expected:
            wrong = sorted(set(got[version]) | set(expected), key=str)
            culprit = next(user for user in wrong if got[version].get(user) != expected.get(user))
            records = [record for (record, _, _) in SUBSCRIPTIONS if record[0] == culprit]
            raise Wrong(
                f"at version {version} your output holds {got[version]}, but the subscribed users are {expected}; "
                f"look at {culprit!r} (records {records}): a user with (user, start, months) is present at "
                f"versions start, ..., start + months - 1 and gone from start + months on. join_function "
                f"joins your versions with the version the record arrived at, and multiplies multiplicities, "
                f"so a deletion or a late record is taken care of for you"
            )
