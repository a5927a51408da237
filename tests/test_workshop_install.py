"""``scripts/workshop.sh`` makes a machine ready for the workshop day from a fresh clone, online and offline.

Each test clones the repository (committed files only, as a teacher's clone
would be) into a temporary folder and runs the script there, into the clone's
own ``.venv-workshop``. Online, the workshop set comes from PyPI; the venv must
then hold none of the pipeline's or development's heavy packages (pyspark,
pyarrow, playwright), the script must not apt-install chromium, and the check
must pass. Offline, the install runs from a wheelhouse with no network (a
network namespace of its own when the test runs as root, else pip's
``--no-index`` alone); the wheelhouse is built once per workshop set and Python
in the user cache (``~/.cache/dd-workshop/``), so only the first run downloads
(about 150 MB: the wheels and graphviz's .deb files). The .deb files are checked
by unpacking them into a folder and drawing a graph with the ``dot`` they hold,
every library it loads coming from that folder: this machine's own graphviz is
not removed to try ``dpkg -i`` for real. Needs git, and PyPI (skipped without).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow

HEAVY = ("pyspark", "pyarrow", "playwright", "pandas", "deltalake")
"""The pipeline's and development's packages, which the workshop's venv must not hold."""

CLEAN = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "VIRTUAL_ENV")}
"""The environment the script runs in: without the suite's PYTHONPATH or venv, as a teacher's shell would be."""


def online() -> bool:
    """PyPI answers (a TCP connection to pypi.org within five seconds)."""
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


@pytest.fixture
def clone(tmp_path: Path) -> Iterator[Path]:
    """A fresh clone of this repository; skips without git or a repository. Removed afterwards, venv
    included (about 450 MB), so that pytest's kept temporary folders stay small."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a repository to clone")
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(target)], check=True)
    yield target
    shutil.rmtree(target, ignore_errors=True)


def needs_root_for_dot() -> None:
    """Skip when ``dot`` is missing and only sudo could install it (a test must not wait for a password)."""
    if shutil.which("dot") is None and os.geteuid() != 0:
        pytest.skip("graphviz's dot is missing and installing it needs root")


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    """The workshop set's wheels and graphviz's .deb files, made once per set and Python in the user cache."""
    if not online():
        pytest.skip("needs PyPI to build the wheelhouse (no network)")
    key = hashlib.sha256((ROOT / "requirements" / "workshop.txt").read_bytes() + sys.version.encode()).hexdigest()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dd-workshop"
    folder = cache / f"wheelhouse-{key[:16]}"
    if not (folder / "workshop.txt").exists():
        partial = cache / f"partial-{key[:16]}-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        result = subprocess.run([str(ROOT / "scripts" / "workshop.sh"), "--wheelhouse", str(partial)],
                                capture_output=True, text=True, timeout=900, env=CLEAN)
        assert result.returncode == 0, result.stderr[-3000:]
        shutil.rmtree(folder, ignore_errors=True)
        partial.rename(folder)
    return folder


DAY = [path for path in sorted((ROOT / "notebooks").glob("*.ipynb")) if path.stem != "spark_pipeline"]
"""The notebooks of the workshop day: the ladder, the final engine's three and the conformance oracle."""


def day_imports() -> list[str]:
    """Every module the day's notebooks import in their code cells (top-level ``import`` and ``from`` lines)."""
    modules = set()
    for path in DAY:
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            for line in "".join(cell["source"]).splitlines():
                found = re.match(r"\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w.]+))", line)
                if found:
                    modules.add(found.group(1) or found.group(2))
    return sorted(modules)


def importable(python: Path, module: str) -> bool:
    """``module`` can be found by ``python`` (without importing it)."""
    code = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([str(python), "-c", code], env=CLEAN).returncode == 0


def test_a_fresh_clone_gets_ready_with_the_workshop_set_only(clone: Path, tmp_path: Path) -> None:
    if not online():
        pytest.skip("needs PyPI (no network)")
    needs_root_for_dot()
    repository = clone
    # An apt-get that logs its arguments, then runs the real one: chromium must never be asked for.
    shims, log = tmp_path / "shims", tmp_path / "apt-get.log"
    shims.mkdir()
    real = shutil.which("apt-get")
    shim = shims / "apt-get"
    shim.write_text(f'#!/bin/sh\necho "$*" >>{log}\n' + (f'exec {real} "$@"\n' if real else "exit 1\n"))
    shim.chmod(0o755)
    env = {**CLEAN, "PATH": f"{shims}{os.pathsep}{CLEAN['PATH']}"}
    result = subprocess.run([str(repository / "scripts" / "workshop.sh")], capture_output=True, text=True,
                            timeout=900, env=env)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "READY for the workshop" in result.stdout
    assert "FIX" not in result.stdout
    python = repository / ".venv-workshop" / "bin" / "python"
    for module in HEAVY:
        assert not importable(python, module), f"{module} is in the workshop's venv"
    assert importable(python, "nbclient") and importable(python, "graphviz")
    # Every module the day's notebooks import imports in the workshop's venv (from notebooks/, as Jupyter runs them).
    modules = day_imports()
    assert "workshop" in modules and "matplotlib.pyplot" in modules
    probe = (f"import importlib, sys; sys.path[:0] = [{str(repository)!r}, {str(repository / 'notebooks')!r}]\n"
             f"for name in {modules!r}: importlib.import_module(name)")
    imported = subprocess.run([str(python), "-c", probe], cwd=repository / "notebooks", capture_output=True,
                              text=True, env={**CLEAN, "MPLBACKEND": "Agg"}, timeout=300)
    assert imported.returncode == 0, imported.stderr[-3000:]
    assert "chromium" not in (log.read_text() if log.exists() else "")
    assert not (repository / ".venv").exists(), "workshop.sh made the developers' venv"
    # Run again: the check alone, and an install with nothing to do, are quick.
    again = subprocess.run([str(repository / "scripts" / "workshop.sh"), "--check"], capture_output=True,
                           text=True, timeout=120, env=env)
    assert again.returncode == 0 and "READY" in again.stdout, again.stdout + again.stderr


def test_the_offline_route_installs_from_the_wheelhouse_alone(wheelhouse: Path, clone: Path) -> None:
    needs_root_for_dot()
    repository = clone
    # pip must not reach an index: no configured extra index or find-links either.
    env = {**CLEAN, "PIP_CONFIG_FILE": os.devnull}
    command = [str(repository / "scripts" / "workshop.sh"), "--offline", str(wheelhouse)]
    if os.geteuid() == 0 and shutil.which("unshare") and shutil.which("ip"):
        # A network namespace with only loopback (the kernel's sockets need it): no way out at all.
        command = ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *command]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "READY for the workshop" in result.stdout
    python = repository / ".venv-workshop" / "bin" / "python"
    for module in HEAVY:
        assert not importable(python, module), f"{module} is in the workshop's venv"


def test_the_wheelhouse_debs_hold_a_dot_that_draws_on_its_own(wheelhouse: Path, tmp_path: Path) -> None:
    debs = sorted((wheelhouse / "debs").glob("*.deb"))
    if not debs or shutil.which("dpkg-deb") is None:
        pytest.skip("no .deb files in the wheelhouse (not a Debian machine)")
    tree = tmp_path / "tree"
    for deb in debs:
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tree)], check=True)
    dot = tree / "usr" / "bin" / "dot"
    assert dot.exists(), "the graphviz .deb is missing"
    plugins = next(tree.glob("usr/lib/*/graphviz"))
    libraries = os.pathsep.join(str(folder) for folder in [*tree.glob("usr/lib/*-linux-gnu"),
                                                           *tree.glob("lib/*-linux-gnu")])
    env = {**CLEAN, "LD_LIBRARY_PATH": libraries, "GVBINDIR": str(plugins)}
    # Every shared library dot loads resolves inside the unpacked tree (the loader and vdso aside).
    linked = subprocess.run(["ldd", str(dot)], capture_output=True, text=True, env=env, check=True).stdout
    outside = [line.strip() for line in linked.splitlines() if "=>" in line and str(tree) not in line]
    assert not outside, f"libraries not in the wheelhouse's debs: {outside}"
    try:
        subprocess.run([str(dot), "-c"], env=env, check=True)  # what graphviz's postinst does: register plugins
        svg = subprocess.run([str(dot), "-Tsvg"], input="digraph { a -> b }", capture_output=True, text=True,
                             env=env, check=True).stdout
        assert "<svg" in svg
    finally:
        shutil.rmtree(tree, ignore_errors=True)
