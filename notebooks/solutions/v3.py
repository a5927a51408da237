"""Solutions to the exercises of ``v3_versions_and_frontiers.ipynb``, and a plausible mistake for each."""

from __future__ import annotations

from collections import defaultdict

concat_frontier = [
    0,  # a -> 2, but b is still at 0: b may send data at version 0, and concat would forward it
    1,  # b -> 1: the meet of 2 and 1
    1,  # a -> 5: b still holds the output back at 1
    4,  # b -> 4: the meet of 5 and 4
    5,  # b -> 7: now a, at 5, is the one holding it back
]

reduce_emission_steps = {
    0: 3,  # the frontier passes 0 in step 3; count at 0 is 1 (y)
    1: 8,  # the frontier passes 1 and 2 in step 8; count at 1 is 3 (y, x, w)
    # version 2: x retracted and re-added at 2 adds up to nothing, so the count at 2 is still 3: nothing sent
    3: 9,  # the frontier passes 3 in step 9; count at 3 is 4 (z added)
}

compact_by_hand = {
    # versions 0, 1 and 2 merge at 3: apple 1 + 1, fig 1 - 1 (gone); plum at 4 is beyond the frontier and stays
    "north": {3: {"apple": 2}, 4: {"plum": 1}},
    # south: pear +1 at 1 moves to 3, where it meets its -1 and cancels, so the key leaves the index
}


def build_compact(self, frontier):
    """Move each dirty key's versions to ``advance_by(frontier)`` and add up what lands on one version."""
    still_dirty = set()
    for key in self._dirty:
        totals = defaultdict(int)  # (advanced version, value) -> multiplicity
        for version, values in self._values[key].items():
            for value, multiplicity in values:
                totals[version.advance_by(frontier), value] += multiplicity
        versions = defaultdict(list)
        for (version, value), total in totals.items():
            if total != 0:
                versions[version].append((value, total))
        if not versions:
            del self._values[key]
            continue
        self._values[key] = versions
        if len(versions) > 1:  # a version beyond the frontier stays apart, for a later compaction
            still_dirty.add(key)
    self._dirty = still_dirty


def _compact_everything_to_the_frontier(self, frontier):
    """Moves every version to the frontier, those beyond it too: later data shows up early."""
    for key in self._dirty:
        totals = defaultdict(int)
        for values in self._values[key].values():
            for value, multiplicity in values:
                totals[value] += multiplicity
        values = [(value, total) for value, total in totals.items() if total != 0]
        if values:
            self._values[key] = defaultdict(list, {frontier: values})
        else:
            del self._values[key]
    self._dirty = set()


MISTAKES = {
    "concat_frontier": [2, 2, 5, 5, 7],  # the max: as if either input's promise were enough
    "reduce_emission_steps": {0: 3, 1: 8, 2: 8, 3: 9},  # as if every closed version with data produced output
    "compact_by_hand": {  # passed versions moved to the last closed version, 2, instead of to the frontier
        "north": {2: {"apple": 2}, 4: {"plum": 1}},
        "south": {2: {"pear": 1}, 3: {"pear": -1}},
    },
    "build_compact": _compact_everything_to_the_frontier,
}
