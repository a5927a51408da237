"""The oracle's user cache folder: what it keeps between runs so that no run does it again.

Two things live there: what the adapters install on first use (d2ts's and
d2mini's npm packages, pathway's and pydbsp's venvs, ``engines``), and the
digests of the case files found valid against ``schema.json`` (``Digests``),
since checking a case against the schema is most of the time a check takes
to start (about 15 ms a case, six seconds for the committed set). Nothing
is ever written into the package's own folder, which may be site-packages.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_folder() -> Path:
    """Where the oracle keeps what it installs and remembers: ``DD_CONFORMANCE_CACHE`` names it; else
    ``$XDG_CACHE_HOME/dd-conformance``, else ``~/.cache/dd-conformance``."""
    if os.environ.get("DD_CONFORMANCE_CACHE"):
        return Path(os.environ["DD_CONFORMANCE_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dd-conformance"


class Digests:
    """A set of hex digests kept in one file of the cache, one a line, shared by every run on the machine.

    A digest is added by appending its line, in one write of a few dozen
    bytes (which a local file system does not interleave with another
    process's), so two runs at once never corrupt the file; a line cut short
    is a digest that matches nothing. The cache is only a shortcut: a folder
    that cannot be read or written makes every digest unknown, never an error.

    Invariant: ``_known`` holds every digest of the file when it was read, and
    every one this process added since.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._known = set(path.read_text().split())
        except (OSError, UnicodeDecodeError):
            self._known = set()

    def __contains__(self, digest: str) -> bool:
        return digest in self._known

    def add(self, digest: str) -> None:
        """Remember ``digest``, in this process and, if the cache can be written, for later runs."""
        if digest in self._known:
            return
        self._known.add(digest)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as file:
                file.write(digest + "\n")
        except OSError:
            pass  # a read-only home: the digest is remembered for this run only
