"""Fresh random cases at run time: histories the committed case set does not hold, each with its answer.

The committed set is a few hundred cases; an engine that passes them may
still fail a history nobody drew. ``fuzz_cases`` draws new ones for as long as
it is asked, with ``generate``'s machinery: the programs' own random records
and the ``FAMILIES`` aimed where engines break, ``random_history`` and
``make_case``, so every case is answered as ``generate`` answers one (final's
output, checked against the from-scratch definition at every version; a
disagreement raises ``GenerationError`` rather than yield a wrong case).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from .cases import Case, CaseError
from .catalog import BY_NAME, PROGRAMS, Program
from .generate import FAMILIES, GROW_ONLY, KIND_NEEDS, Family, make_case, random_history

KINDS = ("int", "product", "triple")
"""The kinds of versions fuzz cases cycle through: integers, pairs and triples, as far as a program allows them."""
TRIPLE_TAG = "three-dimensions"
"""The tag of a case whose versions are triples, as ``generate``'s family of them names it."""


def kinds_of(program: Program) -> tuple[str, ...]:
    """The kinds of versions of ``KINDS`` that ``program`` allows (``KIND_NEEDS`` says what each needs)."""
    return tuple(kind for kind in KINDS if KIND_NEEDS[kind] in program.versions)


def families_of(program: Program) -> tuple[Family | None, ...]:
    """Where ``program``'s fuzz records come from, in turn: its own records (None), then each of the ``FAMILIES``
    that gives records for it. Families without records of their own are shapes, not records: the
    ``three-dimensions`` one is the ``triple`` kind, and the ``large`` one is left out (a case of a thousand
    updates is too slow for a loop that should turn over many cases a second)."""
    return (None, *(family for family in FAMILIES if family.records.get(program.name) is not None))


def fuzz_cases(seed: int, histories: int, programs: Sequence[str] = ()) -> Iterator[Case]:
    """``histories`` fresh random cases for each of ``programs`` (all of the catalog's when empty), each with
    its expected output, the programs taking turns so that a run cut short has covered every one.

    Case ``i`` of a program is drawn from its own generator, seeded by (``seed``, program, ``i``), so a run is
    the same for a seed whatever else it holds, and any one case can be made again alone. The cases of a
    program cycle through the kinds of versions it allows (``kinds_of``) and, for each kind, through the
    sources of its records (``families_of``); each is named ``<program>/fuzz-<seed>-<i>`` and tagged with
    its family's name where it comes from one.

    Raises:
        CaseError: a name in ``programs`` is not a program of the catalog.
        GenerationError: final and the from-scratch answer disagree on a case (an engine bug in final).
    """
    chosen = _chosen(programs)
    return (fuzz_case(program, seed, number) for number in range(histories) for program in chosen)


def fuzz_names(seed: int, histories: int, programs: Sequence[str] = ()) -> list[str]:
    """The names of the cases ``fuzz_cases`` gives for the same arguments, in its order, without drawing any
    (a run's report names those it did not reach).

    Raises:
        CaseError: as ``fuzz_cases``.
    """
    chosen = _chosen(programs)
    return [_name(program, seed, number) for number in range(histories) for program in chosen]


def _chosen(programs: Sequence[str]) -> list[Program]:
    """The programs ``programs`` names, each once in the order first named, or the whole catalog.

    Raises:
        CaseError: a name that is not a program of the catalog.
    """
    unknown = [name for name in programs if name not in BY_NAME]
    if unknown:
        raise CaseError(f"no program {', '.join(map(repr, unknown))} in the catalog: fuzz some of "
                        f"{', '.join(BY_NAME)}")
    return [BY_NAME[name] for name in dict.fromkeys(programs)] or list(PROGRAMS)


def _name(program: Program, seed: int, number: int) -> str:
    return f"{program.name}/fuzz-{seed}-{number}"


def fuzz_case(program: Program, seed: int, number: int) -> Case:
    """The case ``number`` of ``program`` in the fuzz run of ``seed`` (``fuzz_cases``)."""
    rng = random.Random(f"{seed}:fuzz:{program.name}:{number}")
    kinds, families = kinds_of(program), families_of(program)
    kind = kinds[number % len(kinds)]
    family = families[number // len(kinds) % len(families)]
    if family is None:
        grow_only = rng.random() < GROW_ONLY
        inputs = [random_history(rng, record, kind, grow_only) for record in program.records]
    else:
        inputs = family.histories(rng, program, family.records[program.name], kind)
    tags = ((family.name,) if family else ()) + ((TRIPLE_TAG,) if kind == "triple" else ())
    return make_case(_name(program, seed, number), program, inputs,
                     f"dd-conformance fuzz, seed {seed}, history {number}", rng, extra_tags=tags)
