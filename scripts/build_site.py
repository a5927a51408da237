"""Build the workshop site, ``site/``: the notebooks executed and rendered in ladder order, and the pages around them.

``scripts/site.sh`` executes every notebook and writes the whole site;
``scripts/site.sh v3 final2`` executes only the notebooks whose file name
contains one of the names and keeps the other notebooks' pages as they are;
``scripts/site.sh --pages`` executes nothing and rebuilds every page around
the notebooks (after an edit to the README, the guide or the glossary).

The generator is nbconvert (from PyPI, already needed to run the notebooks)
with the project's own template and layout in ``docs/site/``: nothing is
downloaded while building, and no page asks another host for a script, font
or style, so the site works offline. Pages:

- ``index.html``, the route: the ladder as a picture, each stop's concept in a
  sentence and its time; ``guide.html`` (the teacher's guide) and
  ``glossary.html``, from ``docs/site/*.md``;
- one page per notebook in ladder order, titled by its first heading, with
  previous and next links, a link to download the notebook (copied into
  ``notebooks/``) and its path in the repository; solutions collapsed behind
  a click; every picture described by the notebook's own words (alt text);
- ``library.html``, ``pipeline.html``, ``oracle.html``: the README's sections
  on using final/, the Spark pipeline and the conformance oracle;
  ``benchmarks.html``: ``tests/bench/README.md`` with its plots.

Every page has an outline of its headings and a search box (``search.js``
over ``assets/search-index.js``, written here: a script, so that it loads
from file:// too), and reads on a phone: the route turns into a column,
pictures keep a readable size in frames that scroll sideways, as do tables
and printed output.

Rebuilds are stable: the kernels run with a fixed hash seed and each cell's
printed output is joined into one piece, with timings and memory addresses
normalized (``RUN_DEPENDENT``); the few cells whose whole output is a
measurement (``MEASURING``) keep the site's output while their code is the
same (``--remeasure`` takes the new one). So executing the notebooks again
gives the same pages.

``site/MANIFEST.json`` records the hash of every notebook each page was
rendered from and of every other source; the tests fail when one changed
since the site was built, and when building the pages again would not give
the committed files.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from struct import unpack

import jinja2
import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter
from nbconvert.filters.markdown import markdown2html
from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOURCES = ROOT / "docs" / "site"
SITE = ROOT / "site"
CELL_TIMEOUT = 600

TITLE = "Differential Dataflow, one concept at a time"

ROUTE: dict[str, tuple[str, str]] = {
    "v0": ("core", "Collections: multisets whose multiplicities may be negative, and every operator from scratch."),
    "v1": ("core", "A changing collection as a sequence of difference collections; an index per key, "
                   "so join and reduce touch only the keys that changed."),
    "v2": ("core", "Dataflow graphs, built once and fed online; binary operators wait for both inputs."),
    "v3": ("core", "Versions and frontiers: data out of order, indexes compacted behind the frontier, "
                   "reduce emitting finished versions in order."),
    "v4": ("core", "Loops: tuple versions in lexicographic order, ingress, feedback and egress. "
                   "Right while inputs only grow, wrong on retractions, as document 002 shows."),
    "v5": ("core", "Partially ordered versions, antichain frontiers, advance_by, and a loop that ends "
                   "by a stated rule: iterate is right."),
    "final1": ("final", "The complete engine driven as a library: sessions, outputs, failures, "
                        "000's general linear operator and fusion."),
    "final2": ("final", "Arrangements and joins: shared arrangements, semijoins, left joins with NULLs, "
                        "delta joins (003)."),
    "final3": ("final", "Reductions as SQL has them: in-place totals, hierarchical min/max, NULLs (004); "
                        "how final tracks progress through loops."),
    "conformance": ("beyond", "The conformance oracle: judging any engine, this one or another, on the cases."),
    "spark": ("beyond", "final/ checked against Spark SQL, version by version, on a change log."),
}
"""Each stop of the route by its notebook's module (its file name up to the first underscore), in ladder
order: its part of the route (the core ladder, the final engine, beyond) and its concept in a sentence."""

PARTS = {"core": "The ladder, v0 to v5", "final": "The final engine", "beyond": "Beyond the engine"}

README_PAGES: dict[str, tuple[str, list[str]]] = {
    "library": ("Using final as a library", ["Using final as a library", "Errors"]),
    "pipeline": ("The Spark pipeline", ["The Spark pipeline"]),
    "oracle": ("The conformance oracle", ["The conformance oracle", "What the engines agree on"]),
}
"""Pages made of README sections: page name -> (title, the ``##`` headings it holds, in order)."""

MARKDOWN_PAGES = {"guide": "A teacher's guide", "glossary": "Glossary"}
"""Pages written for the site, from ``docs/site/<name>.md`` (Jinja templates, then Markdown)."""

MENU = [("index", "Route"), ("guide", "Teacher's guide"), ("glossary", "Glossary"), ("library", "Library"),
        ("pipeline", "Pipeline"), ("oracle", "Oracle"), ("benchmarks", "Benchmarks")]

WORKSHOP_TIME = re.compile(r"Workshop time: about (\d+) minutes")
ANCHOR_LINK = r'<a class="anchor-link" href="#[^"]*">(?:&#182;|¶)</a>'
HEADING = re.compile(rf'<h([1-6]) id="[^"]*">(.*?)(?:{ANCHOR_LINK})*</h\1>', re.S)
LINK = re.compile(r'<a href="([^"]*)"([^>]*)>(.*?)</a>', re.S)
IMAGE = re.compile(r'(?:<span class="picture">)?<img\b([^>]*)>(?:</span>)?')
SOURCE = re.compile(r'\s*\bsrc="([^"]*)"')
LEAST_WIDTH = re.compile(r'\s*\bstyle="min-width: \d+px"')
TABLE = re.compile(r'(?:<div class="table-scroll">)?(<table\b.*?</table>)(?:</div>)?', re.S)
"""An image and a table, each in the frame the builder puts it in, if it has one already (a notebook's page is
rebuilt from the page built before)."""
READABLE = 0.6
"""No picture is drawn smaller than this share of its own width: a wider one scrolls sideways instead."""
SEARCHED_CHARACTERS = 30_000
"""How much of a page's text the search index holds (the start of the page: its prose and first outputs)."""
BODY = re.compile(r"<!-- notebook -->\n(.*)\n<!-- /notebook -->", re.S)
KERNEL_ENV = {"PYTHONHASHSEED": "0"}
"""Set in the kernels that execute the notebooks: set and dict order of strings is the same on every build."""
RUN_DEPENDENT = [
    (re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?(?:e-?\d+)?( ?)(ns|µs|us|ms|s|sec|seconds)\b"), r"…\1\2"),
    (re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "0x…"),
]
"""What a notebook prints that differs from run to run, and what the site shows instead: a time measured
("0.12 s" becomes "… s") and a memory address ("0x7f79d7eda476" becomes "0x…")."""
JVM_NOISE = re.compile(r"^(?:WARNING: Using incubator modules: .*|Setting default log level to .*"
                       r"|To adjust logging level use sc\.setLogLevel.*|\d\d/\d\d/\d\d \d\d:\d\d:\d\d WARN .*)\n", re.M)
"""What Spark's JVM writes to the kernel's stderr as it starts: it reaches the notebook or not depending on how the
kernel was started, so the site leaves it out."""
MEASURING = {"final-34", "spark-21", "spark-23", "spark-25"}
"""The cells (by id) whose whole output is a measurement, a ratio of times, a table or plot of them: a build
keeps such a cell's output from the site built before while its code is the same (``--remeasure`` does not)."""
NO_ALT = 'alt="No description has been provided for this image"'
CELL_START = re.compile(r'(?=<div class="jp-Cell [^"]*" id="cell-id=)')
CELL_ID = re.compile(r'<div class="jp-Cell [^"]*" id="cell-id=([^"]+)"')
OUTPUTS = '<div class="jp-Cell-outputWrapper">'


@dataclass
class Stop:
    """A notebook on the route: its page, title, time, part and sentence."""

    path: Path
    module: str
    title: str
    minutes: int
    part: str
    sentence: str

    @property
    def page(self) -> str:
        return f"{self.path.stem}.html"


@dataclass
class Page:
    """A page of the site: its file name (without ``.html``), title, body (HTML), where its links start from,
    the repository file it is made of, and its headings (level, anchor, text) once anchored."""

    name: str
    title: str
    body: str
    base: Path
    stop: Stop | None = None
    ids: set[str] = field(default_factory=set)
    source: str = ""
    headings: list[tuple[int, str, str]] = field(default_factory=list)


class SiteError(Exception):
    """The site cannot be built from the sources as they are; the message says what to change."""


def digest(path: Path) -> str:
    """The sha256 of a file, as the manifest records it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def slug(text: str) -> str:
    """A heading's anchor as GitHub makes it (so the README's links keep working): lower case, words joined by '-'."""
    text = html.unescape(re.sub(r"<[^>]+>", "", text)).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def plain(markdown: str) -> str:
    """A Markdown heading's text without its markup."""
    return re.sub(r"[`*_]", "", markdown).strip()


def route() -> list[Stop]:
    """Every notebook in ladder order, read from its first cell: title (its ``#`` heading) and workshop time."""
    stops = []
    for path in NOTEBOOKS.glob("*.ipynb"):
        module = path.stem.split("_")[0]
        if module not in ROUTE:
            raise SiteError(f"{path.name} is not on the route: add its module {module!r} to ROUTE "
                            "in scripts/build_site.py")
        first = nbformat.read(path, as_version=4).cells[0].source
        title = next((line[2:] for line in first.splitlines() if line.startswith("# ")), None)
        minutes = WORKSHOP_TIME.search(first)
        if title is None or minutes is None:
            raise SiteError(f"{path.name}: its first cell needs a '# title' and 'Workshop time: about N minutes'")
        part, sentence = ROUTE[module]
        stops.append(Stop(path, module, plain(title), int(minutes.group(1)), part, sentence))
    order = list(ROUTE)
    return sorted(stops, key=lambda stop: order.index(stop.module))


def execute(path: Path) -> nbformat.NotebookNode:
    """``path`` executed in a fresh kernel with notebooks/ as the working directory and a fixed hash seed
    (``KERNEL_ENV``), each cell's printed output in one piece and its run-dependent parts normalized."""
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}},
        coalesce_streams=True,
    ).execute(env={**os.environ, **KERNEL_ENV})
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("name") == "stderr":
                output.text = JVM_NOISE.sub("", output.text)
            if "text" in output:
                output.text = normalized(output.text)
            if "text/plain" in output.get("data", {}):
                output.data["text/plain"] = normalized(output.data["text/plain"])
        if "outputs" in cell:
            cell.outputs = [output for output in cell.outputs if output.get("text", True)]
    return notebook


def normalized(text: str) -> str:
    """Printed output with what differs from run to run (``RUN_DEPENDENT``) replaced."""
    for pattern, replacement in RUN_DEPENDENT:
        text = pattern.sub(replacement, text)
    return text


def alt_texts(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """A description of the pictures each code cell draws, by cell id: the cell's first comment line, else
    the last paragraph of the Markdown above it (what the notebook says the picture shows)."""
    texts, above = {}, ""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            paragraphs = [part for part in re.split(r"\n\s*\n", cell.source) if part.strip()
                          and not part.lstrip().startswith(("#", "```", "|"))]
            above = words(paragraphs[-1]) if paragraphs else above
        elif cell.cell_type == "code":
            comment = next((line.strip().lstrip("#").strip() for line in cell.source.splitlines()
                            if line.strip().startswith("#") and len(line.strip()) > 10), None)
            texts[cell.get("id", "")] = comment or above or "A picture drawn by the code cell above"
    return texts


def words(markdown: str) -> str:
    """A Markdown paragraph as plain text for an alt attribute: no markup, links as their text, one line."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    return " ".join(re.sub(r"[`*_]|<[^>]+>|\$", "", text).split())


def with_alt_texts(body: str, texts: dict[str, str]) -> str:
    """The notebook's HTML with every picture described (nbconvert's placeholder replaced by ``alt_texts``)."""
    cells = CELL_START.split(body)
    for number, cell in enumerate(cells):
        found = CELL_ID.match(cell)
        if found is None or NO_ALT not in cell:
            continue
        text, count = texts.get(found.group(1), "A picture drawn by this cell"), cell.count(NO_ALT)
        for picture in range(1, count + 1):
            label = text if count == 1 else f"{text} (picture {picture} of {count})"
            cell = cell.replace(NO_ALT, f'alt="{html.escape(label)}"', 1)
        cells[number] = cell
    return "".join(cells)


def with_measurements_kept(body: str, before: str) -> str:
    """The notebook's HTML with each ``MEASURING`` cell as ``before`` (the page built before) shows it, when the
    cell's code there is the same: a rebuild does not change a page only because a measurement did."""
    kept = {}
    for cell in CELL_START.split(before):
        found = CELL_ID.match(cell)
        if found and found.group(1) in MEASURING:
            kept[found.group(1)] = cell
    cells = CELL_START.split(body)
    for number, cell in enumerate(cells):
        found = CELL_ID.match(cell)
        old = kept.get(found.group(1)) if found else None
        if old is not None and old.partition(OUTPUTS)[0] == cell.partition(OUTPUTS)[0]:
            cells[number] = old
    return "".join(cells)


def exporter() -> HTMLExporter:
    """nbconvert with the project's template: the cells only, each solution inside a closed ``<details>``."""
    return HTMLExporter(extra_template_basedirs=[str(SOURCES / "templates")], template_name="workshop")


def notebook_css() -> str:
    """JupyterLab's styles for cells and outputs, as nbconvert's lab template inlines them (no other host)."""
    page, _ = HTMLExporter(template_name="lab").from_notebook_node(nbformat.v4.new_notebook())
    head = page.partition("</head>")[0]
    return "\n".join(re.findall(r"<style[^>]*>(.*?)</style>", head, re.S))


def readme_sections(readme: str, headings: list[str]) -> str:
    """The ``##`` sections of the README with these headings, each up to the next ``##``."""
    parts = []
    for heading in headings:
        found = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", readme, re.S | re.M)
        if found is None:
            raise SiteError(f"README.md has no section '## {heading}' (the {heading!r} page is made of it)")
        parts.append(f"## {heading}\n{found.group(1)}")
    return "\n".join(parts)


def schedule(start: str, stops: list[str], times: dict[str, Stop]) -> str:
    """A day's plan as a Markdown table: each stop (a module, or ``what:minutes``) with its start time."""
    hours, minutes = map(int, start.split(":"))
    clock = hours * 60 + minutes
    rows = ["| starts | what | minutes |", "| --- | --- | --- |"]
    for item in stops:
        if item in times:
            stop = times[item]
            what, length = f"[{stop.title}]({stop.path.name})", stop.minutes
        elif re.fullmatch(r".+:\d+", item):
            what, _, length_text = item.rpartition(":")
            length = int(length_text)
        else:
            raise SiteError(f"the schedule names {item!r}, which is neither a notebook's module "
                            f"({', '.join(times)}) nor 'what:minutes'")
        rows.append(f"| {clock // 60:02d}:{clock % 60:02d} | {what} | {length} |")
        clock += length
    rows.append(f"| {clock // 60:02d}:{clock % 60:02d} | end | |")
    return "\n".join(rows)


def route_dot(stops: list[Stop], rankdir: str = "LR") -> str:
    """The ladder as a dot graph: one box per notebook, linked to its page, the core in a row (a column with
    ``rankdir="TB"``, for narrow screens), then final/, then the two pages beyond the engine."""
    fills = {"core": "#e8f0fe", "final": "#e6f4ea", "beyond": "#f1f3f4"}
    lines = ["digraph route {", f"  rankdir={rankdir}; nodesep=0.25; ranksep=0.3;",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];']
    for stop in stops:
        label = f"{stop.module}\\n{stop.minutes} min"
        lines.append(f'  {stop.module} [label="{label}", fillcolor="{fills[stop.part]}", URL="{stop.page}", '
                     f'tooltip="{html.escape(stop.title)}", target="_top"];')
    chain = [stop.module for stop in stops if stop.part != "beyond"]
    lines += [f"  {a} -> {b};" for a, b in pairwise(chain)]
    lines += [f"  {chain[-1]} -> {stop.module} [style=dashed];" for stop in stops if stop.part == "beyond"]
    lines.append("}")
    return "\n".join(lines)


def natural_width(picture: bytes) -> int | None:
    """A PNG's or an SVG's own width in CSS pixels, or None when it does not say."""
    if picture.startswith(b"\x89PNG\r\n\x1a\n"):
        return unpack(">I", picture[16:20])[0]
    found = re.search(rb'<svg\b[^>]*?\swidth="([\d.]+)(pt|px)?"', picture)
    if found is None:
        return None
    return round(float(found.group(1)) * (4 / 3 if found.group(2) == b"pt" else 1))


def text_of(markup: str) -> str:
    """HTML as the words a reader sees: no tags, entities resolved, whitespace in single spaces."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def search_entry(page: Page) -> dict[str, object]:
    """A page as the search finds it: its address, title, headings (anchor and text) and the start of its text
    (pictures and the cells' code prompts left out)."""
    body = re.sub(r'<img [^>]*>|<svg\b.*?</svg>|<div class="jp-InputPrompt[^>]*>.*?</div>', " ", page.body, flags=re.S)
    return {"page": f"{page.name}.html", "title": page.title,
            "headings": [[anchor, text] for _, anchor, text in page.headings],
            "text": text_of(body)[:SEARCHED_CHARACTERS]}


def svg(dot: str) -> str:
    """``dot`` drawn as inline SVG (graphviz's ``dot``), without the XML prologue."""
    drawn = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True).stdout
    return drawn[drawn.index("<svg"):]


class Builder:
    """Builds every page into ``out``, executing the ``selected`` notebooks and taking the others' bodies from
    the site already built (``previous``)."""

    def __init__(self, out: Path, previous: Path, remeasure: bool = False) -> None:
        self.out, self.previous, self.remeasure = out, previous, remeasure
        self.stops = route()
        self.notebooks = {stop.path.stem for stop in self.stops}
        cells = {cell.get("id") for stop in self.stops for cell in nbformat.read(stop.path, as_version=4).cells}
        if not MEASURING <= cells:
            raise SiteError(f"MEASURING in scripts/build_site.py names cells no notebook has: "
                            f"{sorted(MEASURING - cells)}")
        self.readme = (ROOT / "README.md").read_text()
        self.images: dict[Path, str] = {}

    def notebook_body(self, stop: Stop, selected: bool) -> str:
        """The cells of the notebook's page: executed now if ``selected`` (its measurements kept from the page
        built before, unless remeasuring), else as the page built before shows them."""
        built = self.previous / stop.page
        found = BODY.search(built.read_text()) if built.exists() else None
        if selected:
            if not sys.stderr.isatty():
                print(f"executing {stop.path.relative_to(ROOT)}", flush=True)
            body, _ = exporter().from_notebook_node(execute(stop.path))
            if found is None or self.remeasure:
                return body.strip()
            return with_measurements_kept(body.strip(), found.group(1))
        if found is None:
            raise SiteError(f"{stop.path.name} has no page in {self.previous} yet: build it with "
                            f"scripts/site.sh {stop.module}")
        return found.group(1)

    def pages(self, executed: list[Stop]) -> list[Page]:
        """Every page's body: the home page, guide and glossary (Jinja, then Markdown), the README's sections,
        the benchmarks, and each notebook, executed if it is one of ``executed``."""
        environment = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
        times = {stop.module: stop for stop in self.stops}
        context = {"stops": self.stops, "times": times, "parts": PARTS,
                   "schedule": lambda start, stops: schedule(start, stops, times)}

        def page(name: str, title: str, markdown: str, base: Path) -> Page:
            return Page(name, title, markdown2html(environment.from_string(markdown).render(context)), base,
                        source=f"docs/site/{name}.md")

        home = page("index", "The route", (SOURCES / "index.md").read_text(), SOURCES)
        narrow = re.sub(r'\bid="', 'id="narrow-', svg(route_dot(self.stops, "TB")))
        wide = svg(route_dot(self.stops))
        home.body = home.body.replace("<p>ROUTE-PICTURE</p>", f'<div class="route route-wide">{wide}</div>\n'
                                      f'<div class="route route-narrow">{narrow}</div>')
        pages = [home]
        pages += [page(name, title, (SOURCES / f"{name}.md").read_text(), SOURCES)
                  for name, title in MARKDOWN_PAGES.items()]
        pages += [Page(name, title, markdown2html(readme_sections(self.readme, headings)), ROOT, source="README.md")
                  for name, (title, headings) in README_PAGES.items()]
        bench = ROOT / "tests" / "bench" / "README.md"
        pages.append(Page("benchmarks", "Benchmarks", markdown2html(bench.read_text()), bench.parent,
                          source="tests/bench/README.md"))
        for stop in tqdm(self.stops, desc="notebooks", unit="notebook", disable=not sys.stderr.isatty()):
            body = with_alt_texts(self.notebook_body(stop, stop in executed),
                                  alt_texts(nbformat.read(stop.path, as_version=4)))
            pages.append(Page(stop.path.stem, stop.title, body, NOTEBOOKS, stop,
                              source=stop.path.relative_to(ROOT).as_posix()))
        return pages

    def anchors(self, pages: list[Page]) -> None:
        """Give every heading the anchor GitHub gives it, and record each page's anchors and headings."""
        for page in pages:
            def anchored(match: re.Match, page: Page = page) -> str:
                level, text = match.group(1), match.group(2)
                anchor = slug(text)
                page.ids.add(anchor)
                page.headings.append((int(level), anchor, text_of(text)))
                return f'<h{level} id="{anchor}">{text}<a class="anchor-link" href="#{anchor}">¶</a></h{level}>'
            page.body = HEADING.sub(anchored, page.body)
            page.ids |= set(re.findall(r'\bid="([^"]+)"', page.body))

    def target(self, href: str, page: Page, pages: dict[str, Page], by_path: dict[Path, str]) -> str | None:
        """Where a link of ``page`` goes on the site, or None when it points at a file that is not a page.

        A notebook is found by its file name from anywhere (``v3_versions_and_frontiers.ipynb``,
        ``notebooks/...``, ``../notebooks/...``), a README anchor on the page that holds its section."""
        if re.match(r"^[a-z]+:", href):
            return href
        path, _, anchor = href.partition("#")
        if not path:
            owner = page if anchor in page.ids else next((p for p in pages.values() if anchor in p.ids), None)
            if owner is None:
                return None
            return f"#{anchor}" if owner is page else f"{owner.name}.html#{anchor}"
        if path.endswith(".html") and path.removesuffix(".html") in pages:
            name = path.removesuffix(".html")
        elif path.endswith(".ipynb") and Path(path).stem in self.notebooks:
            name = Path(path).stem
        else:
            name = by_path.get((page.base / path).resolve())
            if name is None and path.endswith("README.md") and (page.base / path).resolve() == ROOT / "README.md":
                name = next((p.name for p in pages.values() if anchor in p.ids), None)
            if name is None:
                return None
        if anchor and (name not in pages or anchor not in pages[name].ids):
            return f"{name}.html"
        return f"{name}.html" + (f"#{anchor}" if anchor else "")

    def links(self, pages: list[Page]) -> None:
        """Point every link at a page of the site; a link to a repository file becomes its text, marked as a path."""
        by_name = {page.name: page for page in pages}
        by_path = {ROOT / "tests" / "bench" / "README.md": "benchmarks"}
        by_path.update({SOURCES / f"{name}.md": name for name in MARKDOWN_PAGES})
        for page in pages:
            def relinked(match: re.Match, page: Page = page) -> str:
                href, rest, text = match.groups()
                if rest.startswith(' class="anchor-link"'):
                    return match.group(0)
                target = self.target(html.unescape(href), page, by_name, by_path)
                if target is None:
                    return f'<span class="repo-path" title="{href} in the repository">{text}</span>'
                external = ' rel="external"' if re.match(r"^[a-z]+:", target) else ""
                return f'<a href="{html.escape(target)}"{rest}{external}>{text}</a>'
            page.body = LINK.sub(relinked, page.body)
            page.body = IMAGE.sub(lambda match, page=page: self.picture(page, match.group(1)), page.body)
            page.body = TABLE.sub(lambda match: f'<div class="table-scroll">{match.group(1)}</div>', page.body)

    def picture(self, page: Page, attributes: str) -> str:
        """An image (its tag's ``attributes``) as the site shows it: served from the site, at least ``READABLE``
        of its own width, in a frame that scrolls sideways when that is wider than the page."""
        found = SOURCE.search(attributes)
        if found is None:
            raise SiteError(f"the {page.name} page has an image without a source: <img{attributes}>")
        rest = LEAST_WIDTH.sub("", SOURCE.sub("", attributes, count=1))
        src = self.image(page, html.unescape(found.group(1)))
        if src.startswith("data:"):
            width = natural_width(base64.b64decode(src.partition(",")[2]))
        else:
            width = natural_width(next(path for path, name in self.images.items() if name == src).read_bytes())
        least = f' style="min-width: {round(width * READABLE)}px"' if width else ""
        return f'<span class="picture"><img src="{html.escape(src)}"{least}{rest}></span>'

    def image(self, page: Page, src: str) -> str:
        """``src`` as the site serves it: a file of the repository is copied into ``images/``."""
        if src.startswith("data:"):
            return src
        path = (page.base / src).resolve()
        if not path.is_file():
            raise SiteError(f"the {page.name} page shows {src}, which is not a file ({path})")
        self.images.setdefault(path, f"images/{path.name}")
        return self.images[path]

    def write(self, pages: list[Page]) -> None:
        """Write every page in the layout, the styles, the search index and script, the pictures and a copy of
        every notebook (``notebooks/``, for the download link of its page)."""
        environment = jinja2.Environment(loader=jinja2.FileSystemLoader(SOURCES), autoescape=False,
                                         undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
        layout = environment.get_template("layout.html.j2")
        stops = [page for page in pages if page.stop]
        (self.out / "assets").mkdir(parents=True, exist_ok=True)
        (self.out / "images").mkdir(exist_ok=True)
        for page in pages:
            number = stops.index(page) if page.stop else None
            previous = stops[number - 1] if number else None
            following = stops[number + 1] if number is not None and number + 1 < len(stops) else None
            text = layout.render(site=TITLE, page=page, menu=MENU, number=number, count=len(stops),
                                 previous=previous, following=following, parts=PARTS)
            (self.out / f"{page.name}.html").write_text(text)
        shutil.copyfile(SOURCES / "site.css", self.out / "assets" / "site.css")
        shutil.copyfile(SOURCES / "search.js", self.out / "assets" / "search.js")
        (self.out / "assets" / "notebook.css").write_text(notebook_css())
        index = json.dumps([search_entry(page) for page in pages], ensure_ascii=False, separators=(",", ":"))
        (self.out / "assets" / "search-index.js").write_text(
            "// The site's pages for the search box (scripts/build_site.py writes it; a script, so that it loads "
            f"from file:// too).\nwindow.SEARCH_INDEX = {index};\n")
        (self.out / "notebooks").mkdir(exist_ok=True)
        for page in stops:
            shutil.copyfile(page.stop.path, self.out / "notebooks" / page.stop.path.name)
        for path, name in self.images.items():
            shutil.copyfile(path, self.out / name)

    def manifest(self, executed: list[Stop]) -> None:
        """Record what the site was built from: each notebook's hash as rendered, and every other source's."""
        old = self.previous / "MANIFEST.json"
        notebooks = json.loads(old.read_text())["notebooks"] if old.exists() else {}
        notebooks = {stop.path.name: notebooks.get(stop.path.name) for stop in self.stops}
        notebooks.update({stop.path.name: digest(stop.path) for stop in executed})
        sources = {path.relative_to(ROOT).as_posix(): digest(path) for path in source_files()}
        manifest = {"notebooks": notebooks, "sources": sources}
        (self.out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def source_files() -> list[Path]:
    """Every file besides the notebooks that the site is built from."""
    files = [ROOT / "README.md", ROOT / "tests" / "bench" / "README.md", Path(__file__)]
    files += sorted(path for path in SOURCES.rglob("*") if path.is_file())
    return files


def build(out: Path, names: list[str], pages_only: bool, previous: Path = SITE, remeasure: bool = False) -> list[Path]:
    """Write the site into ``out``; return the notebooks executed. See the module docstring for the modes."""
    builder = Builder(out, previous, remeasure)
    if pages_only:
        selected = []
    elif names:
        selected = [stop for stop in builder.stops if any(name in stop.path.name for name in names)]
        if not selected:
            raise SiteError(f"no notebook in {NOTEBOOKS} matches {names}")
    else:
        selected = list(builder.stops)
    pages = builder.pages(selected)
    builder.anchors(pages)
    builder.links(pages)
    out.mkdir(parents=True, exist_ok=True)
    builder.write(pages)
    builder.manifest(selected)
    return [stop.path for stop in selected]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="execute only the notebooks whose file name contains one of these")
    parser.add_argument("--pages", action="store_true", help="execute no notebook: rebuild the pages around them")
    parser.add_argument("--out", type=Path, default=SITE, help=f"where to write the site (default {SITE})")
    parser.add_argument("--remeasure", action="store_true",
                        help="show the measuring cells' new output (by default they keep the site's while unchanged)")
    args = parser.parse_args()
    try:
        executed = build(args.out, args.names, args.pages, remeasure=args.remeasure)
    except SiteError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in executed:
        print(f"executed {path.relative_to(ROOT)}")
    print(f"the site is in {args.out}; open {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
