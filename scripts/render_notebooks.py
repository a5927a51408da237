"""Execute every notebook and write it, outputs and pictures included, as HTML to docs/notebooks/.

``scripts/render_notebooks.sh [NAME ...]`` (all notebooks, or those whose file
name contains a NAME). The stored notebooks stay output-free; the rendered
copies are for reading without a kernel. Cells tagged ``solution`` are left
out of the HTML, so the exercises stay exercises (the solutions are in
``notebooks/solutions/``). ``docs/notebooks/MANIFEST.json`` records the hash
of each notebook rendered, and a test says when a notebook changed after its
copy was rendered.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from nbconvert.preprocessors import TagRemovePreprocessor
from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
RENDERED = ROOT / "docs" / "notebooks"
MANIFEST = RENDERED / "MANIFEST.json"
STYLESHEET = RENDERED / "notebook.css"
CELL_TIMEOUT = 600
STYLE = re.compile(r"<style[^>]*>(.*?)</style>\s*", re.S)


def digest(path: Path) -> str:
    """The sha256 of a notebook file, as the manifest records it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shared_styles(html: str) -> str:
    """``html`` with the styles of its head moved to ``notebook.css``, which every page links to.

    nbconvert's template inlines about 260 kB of the same CSS into every page;
    kept once, the rendered notebooks are a third of the size.
    """
    head, end, body = html.partition("</head>")
    STYLESHEET.write_text("\n".join(STYLE.findall(head)))
    head = STYLE.sub("", head) + f'<link rel="stylesheet" href="{STYLESHEET.name}">\n'
    return head + end + body


def render(path: Path) -> Path:
    """Execute ``path`` (working directory notebooks/) and write its HTML; return where."""
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}},
    ).execute()
    exporter = HTMLExporter()
    exporter.register_preprocessor(TagRemovePreprocessor(remove_cell_tags={"solution"}), enabled=True)
    html, _ = exporter.from_notebook_node(notebook)
    target = RENDERED / f"{path.stem}.html"
    target.write_text(shared_styles(html))
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="render only notebooks whose file name contains one of these")
    args = parser.parse_args()
    paths = sorted(NOTEBOOKS.glob("*.ipynb"))
    if args.names:
        paths = [path for path in paths if any(name in path.name for name in args.names)]
    if not paths:
        print(f"no notebook in {NOTEBOOKS} matches {args.names}", file=sys.stderr)
        return 2
    RENDERED.mkdir(parents=True, exist_ok=True)
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}
    for path in tqdm(paths, desc="rendering notebooks", unit="notebook", disable=not sys.stderr.isatty()):
        target = render(path)
        manifest[path.name] = digest(path)
        print(f"{path.relative_to(ROOT)} -> {target.relative_to(ROOT)}")
    MANIFEST.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
