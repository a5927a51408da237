"""The workshop site (site/, built by scripts/site.sh): current, rebuilt exactly, and working in a browser.

Every notebook states at least the read-through scripts/readthrough.py counts
for it. The site is committed. Two quick tests hold it to its sources: every notebook's
page was rendered from the notebook as it is now (site/MANIFEST.json records
its hash), and building the pages again from docs/site/, the README and the
benchmarks' README gives the committed files byte for byte. The browser tests
(slow) open every page in headless Chromium from Debian's packages, driven by
Playwright from PyPI, served from site/ on localhost with every request to
another host refused: each page loads without a console error and offline,
every picture has loaded and fits a 1,280 px window, every internal link
(SVG links in the route picture included) reaches a page and anchor that
exist (or a file the site serves, a notebook to download), a solution
opens on click, and the previous/next links walk the ladder in order, both
ways. At 1,280 px and at a phone's 390 px, no page is
wider than the window, every picture is drawn at a readable size (in a frame
that scrolls sideways if it must), every table and printed output scrolls
sideways rather than wrap, and notebook pages use the same type size as the
others; the search box finds a page by a word, and every notebook page links
to its notebook, which the site serves. Screenshots go to
out/site/screenshots/. The slowest tests execute each notebook again, which
is how the suite runs every notebook from top to bottom, and expect the
committed pages back.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlparse

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
SCREENSHOTS = ROOT / "out" / "site" / "screenshots"
WIDTH, HEIGHT = 1280, 900
PHONE = 390
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
"""As root, in a sandbox whose network reaches only the package registries: no background connections."""

sys.path.insert(0, str(ROOT / "scripts"))
import build_site  # noqa: E402 (scripts/ is not a package)
import readthrough  # noqa: E402

REBUILD = "run scripts/site.sh and commit site/"


def pages() -> list[Path]:
    return sorted(SITE.glob("*.html"))


def test_every_notebook_page_was_built_from_the_notebook_as_it_is_now() -> None:
    manifest = json.loads((SITE / "MANIFEST.json").read_text())["notebooks"]
    stops = build_site.route()
    for stop in stops:
        assert (SITE / stop.page).exists(), f"{stop.path.name} has no page: run scripts/site.sh {stop.module}"
        assert manifest.get(stop.path.name) == build_site.digest(stop.path), (
            f"{stop.path.name} changed since its page was built: run scripts/site.sh {stop.module} and commit site/"
        )
    gone = set(manifest) - {stop.path.name for stop in stops}
    assert not gone, f"site/ still has pages of notebooks that are gone ({sorted(gone)}): {REBUILD}"


def test_building_the_pages_again_gives_the_committed_site(tmp_path: Path) -> None:
    build_site.build(tmp_path, [], pages_only=True, previous=SITE)
    built = {path.relative_to(tmp_path) for path in tmp_path.rglob("*") if path.is_file()}
    committed = {path.relative_to(SITE) for path in SITE.rglob("*") if path.is_file()}
    assert built == committed, f"files differ (only built: {sorted(built - committed)}, only committed: " \
        f"{sorted(committed - built)}): run scripts/site.sh --pages and commit site/"
    stale = sorted(str(path) for path in built if (tmp_path / path).read_bytes() != (SITE / path).read_bytes())
    assert not stale, f"site/ was built from other sources than today's ({stale}): " \
        f"run scripts/site.sh --pages and commit site/"


@pytest.mark.slow
@pytest.mark.parametrize("stop", build_site.route(), ids=lambda stop: stop.path.stem)
def test_executing_each_notebook_again_gives_the_committed_site(stop: build_site.Stop, tmp_path: Path) -> None:
    """The notebook runs from top to bottom in a fresh kernel, as the site executes it (a failing cell raises,
    naming it), and the site built with it executed again (hash seed fixed, timings normalized) is the
    committed one byte for byte: rebuilding is stable. Over every notebook, this is a full rebuild."""
    build_site.build(tmp_path, [stop.path.name], pages_only=False, previous=SITE)
    differ = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*")
                    if path.is_file() and path.read_bytes() != (SITE / path.relative_to(tmp_path)).read_bytes())
    assert not differ, f"a full rebuild differs from site/ in {differ}: some output depends on the run " \
        "(normalize it in build_site.RUN_DEPENDENT) or site/ is stale (run scripts/site.sh and commit site/)"


def test_every_picture_is_described_and_every_notebook_is_served() -> None:
    """No image keeps nbconvert's placeholder or an empty alt text, and each notebook page's download link
    points at a copy of its notebook in the site."""
    missing = {path.name: len(re.findall(r'<img\b(?![^>]*\balt="[^"]+")[^>]*>|No description has been provided',
                                         path.read_text())) for path in pages()}
    assert not any(missing.values()), f"images without a description: {missing}"
    for stop in build_site.route():
        page = (SITE / stop.page).read_text()
        assert f'href="notebooks/{stop.path.name}" download' in page, f"{stop.page} has no download link"
        assert (SITE / "notebooks" / stop.path.name).read_bytes() == stop.path.read_bytes(), (
            f"site/notebooks/{stop.path.name} is not the notebook as it is now: {REBUILD}")


def test_run_dependent_output_is_normalized() -> None:
    assert build_site.normalized("load 0.12 s, step 3.5ms, at 0x7f79d7eda476") == "load … s, step …ms, at 0x…"
    assert build_site.normalized("3 records, version (1, 2), 10x faster") == "3 records, version (1, 2), 10x faster"
    assert build_site.JVM_NOISE.sub("", 'WARNING: Using incubator modules: jdk.incubator.vector\nSetting default log '
                                   'level to "WARN".\nan error of the notebook\n') == "an error of the notebook\n"


def test_a_measuring_cell_keeps_its_output_while_its_code_is_the_same() -> None:
    measuring = sorted(build_site.MEASURING)[0]

    def cell(ident: str, code: str, output: str) -> str:
        return (f'<div class="jp-Cell jp-CodeCell" id="cell-id={ident}">{code}'
                f'{build_site.OUTPUTS}{output}</div></div>\n')

    before = cell(measuring, "time it", "12 ms") + cell("other", "count", "3")
    rebuilt = cell(measuring, "time it", "15 ms") + cell("other", "count", "4")
    kept = cell(measuring, "time it", "12 ms") + cell("other", "count", "4")
    assert build_site.with_measurements_kept(rebuilt, before) == kept
    changed = cell(measuring, "time it twice", "15 ms")
    assert build_site.with_measurements_kept(changed, before) == changed


def test_the_route_puts_every_notebook_in_ladder_order() -> None:
    modules = [stop.module for stop in build_site.route()]
    assert modules[:6] == ["v0", "v1", "v2", "v3", "v4", "v5"]
    assert [module for module in modules if module.startswith("final")] == sorted(
        module for module in modules if module.startswith("final"))
    long = [stop.path.name for stop in build_site.route() if stop.module.startswith("final") and stop.minutes > 60]
    assert not long, f"a notebook of the final engine takes at most 60 minutes: {long}"


def test_every_notebook_states_at_least_its_read_through() -> None:
    """The time a notebook's first cell states covers its read-through as scripts/readthrough.py counts it
    without executing (reading, code and exercises; the execution it measures adds to that), and every
    ``### Exercise`` heading has an answer cell, so no exercise goes uncounted."""
    short, unanswered = {}, {}
    for stop in build_site.route():
        notebook = nbformat.read(stop.path, as_version=4)
        counted = readthrough.whole(stop.module, list(readthrough.measure(stop.path, notebook).values()))
        if counted.total > stop.minutes:
            short[stop.path.name] = f"states {stop.minutes} min, reads in {counted.total}"
        headings = sum(len(readthrough.EXERCISE.findall(cell.source)) for cell in notebook.cells
                       if cell.cell_type == "markdown")
        if counted.predictions + counted.builds != headings:
            unanswered[stop.path.name] = f"{headings} exercises, {counted.predictions + counted.builds} answer cells"
    assert not short, f"measure again (scripts/readthrough.py) and state the time: {short}"
    assert not unanswered, unanswered


def test_links_are_pointed_at_pages_and_a_repository_path_is_kept_as_text(tmp_path: Path) -> None:
    """A notebook, a README anchor or the benchmarks' README becomes its page; a file the site does not serve
    (a source file, a folder) stays as text marked as a path, never a broken link."""
    builder = build_site.Builder(tmp_path, SITE)
    first = builder.stops[0]
    body = (f'<a href="notebooks/{first.path.name}">first</a> <a href="#the-spark-pipeline">spark</a> '
            '<a href="tests/bench/README.md">bench</a> <a href="final/">final/</a> <a href="https://example.org">out</a>')
    page = build_site.Page("test", "Test", body, build_site.ROOT)
    pipeline = build_site.Page("pipeline", "Pipeline", '<h2 id="x">The Spark pipeline</h2>', build_site.ROOT)
    bench = build_site.Page("benchmarks", "Benchmarks", "", build_site.ROOT / "tests" / "bench")
    builder.anchors([page, pipeline, bench])
    builder.links([page, pipeline, bench])
    assert f'<a href="{first.page}">first</a>' in page.body
    assert '<a href="pipeline.html#the-spark-pipeline">spark</a>' in page.body
    assert '<a href="benchmarks.html">bench</a>' in page.body
    assert '<span class="repo-path" title="final/ in the repository">final/</span>' in page.body
    assert '<a href="https://example.org" rel="external">out</a>' in page.body


def test_a_schedule_adds_up_and_names_only_notebooks_or_timed_items() -> None:
    times = {stop.module: stop for stop in build_site.route()}
    table = build_site.schedule("09:00", ["Opening:5", "v0", "Break:15"], times)
    end = 9 * 60 + 5 + times["v0"].minutes + 15
    assert table.splitlines()[-1] == f"| {end // 60:02d}:{end % 60:02d} | end | |"
    with pytest.raises(build_site.SiteError, match="neither a notebook"):
        build_site.schedule("09:00", ["v9"], times)


def test_the_opening_demo_answers_every_correction_both_ways_alike() -> None:
    """The guide's five-minute demo (python -m workshop.demo) on a small table: v0 from scratch and final
    incrementally agree after every correction (run() raises if not), and the table names both times."""
    sys.path.insert(0, str(ROOT / "notebooks"))
    from workshop import demo

    first_from_scratch, first_incremental, done = demo.run(rows=2_000, corrections=3)
    assert len(done) == 3 and all(c.before[0] == c.after[0] for c in done)
    text = demo.report(2_000, first_from_scratch, first_incremental, done)
    assert text.startswith("2,000 trips") and text.count("correction") == 3 and text.count(" ms") == 3


# The browser tests.

@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """site/ served on localhost (an ephemeral port), quietly."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(SITE)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's Chromium, headless, driven by Playwright (whose own browser downloads cannot work here)."""
    executable = shutil.which("chromium")
    assert executable, "Debian's chromium is not installed: scripts/test.sh installs it (apt-get install -y chromium)"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


class Visit:
    """A page opened at 1,280 x 900 (or ``width`` wide), with every console error, failed or outside request
    recorded."""

    def __init__(self, browser: object, server: str, width: int = WIDTH) -> None:
        self.server = server
        self.context = browser.new_context(viewport={"width": width, "height": HEIGHT})
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("console", lambda message: message.type == "error" and self.problems.append(
            f"console error: {message.text}"))
        self.page.on("pageerror", lambda error: self.problems.append(f"script error: {error}"))
        self.page.on("requestfailed", lambda request: self.problems.append(
            f"request failed: {request.url} ({request.failure})"))
        self.page.on("response", lambda response: response.status >= 400 and self.problems.append(
            f"HTTP {response.status}: {response.url}"))
        self.page.route("**/*", self.only_this_site)

    def only_this_site(self, route: object) -> None:
        url = route.request.url
        if url.startswith(self.server) or url.startswith("data:"):
            route.continue_()
        else:
            self.problems.append(f"asked another host: {url}")
            route.abort()

    def open(self, name: str) -> object:
        self.page.goto(urljoin(self.server, name), wait_until="load")
        return self.page

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def visit(browser: object, server: str) -> Iterator[Visit]:
    opened = Visit(browser, server)
    yield opened
    opened.close()


@pytest.fixture(params=[WIDTH, PHONE], ids=["1280px", "390px"])
def visit_at(request: pytest.FixtureRequest, browser: object, server: str) -> Iterator[Visit]:
    """A visit at a desktop's width, then at a phone's."""
    opened = Visit(browser, server, request.param)
    yield opened
    opened.close()


PICTURES = """() => {
  const width = window.innerWidth;
  const problems = [];
  for (const img of document.querySelectorAll('img')) {
    if (!img.complete || img.naturalWidth === 0) problems.push(`image not loaded: ${img.src}`);
  }
  for (const picture of document.querySelectorAll('img, svg:not(svg svg)')) {
    const box = picture.getBoundingClientRect();
    if (box.right > width + 0.5) {
      problems.push(`${picture.tagName} ${Math.round(box.width)} px wide ends at ${Math.round(box.right)} px`);
    }
  }
  if (document.documentElement.scrollWidth > width) {
    problems.push(`the page is ${document.documentElement.scrollWidth} px wide`);
  }
  return problems;
}"""

READABLE = """() => {
  const width = window.innerWidth;
  const problems = [];
  const scrolls = element => {
    for (let up = element.parentElement; up && up !== document.body; up = up.parentElement) {
      const frame = getComputedStyle(up).overflowX;
      if (frame === 'auto' || frame === 'scroll') return up.getBoundingClientRect().right <= width + 0.5;
    }
    return false;
  };
  for (const img of document.querySelectorAll('img')) {
    const box = img.getBoundingClientRect();
    if (box.width && img.naturalWidth && box.width < READABLE * img.naturalWidth - 1) {
      problems.push(`image shrunk to ${Math.round(box.width)} of its ${img.naturalWidth} px: ${img.alt}`);
    }
    if (box.right > width + 0.5 && !scrolls(img)) problems.push(`image ends at ${Math.round(box.right)} px unframed`);
  }
  for (const text of document.querySelectorAll('.route svg text')) {
    const box = text.getBoundingClientRect();
    if (box.height && box.height < 11) problems.push(`route label ${text.textContent}: ${box.height.toFixed(1)} px`);
  }
  if (document.querySelector('.route') && !Array.from(document.querySelectorAll('.route svg text')).some(
      text => text.getBoundingClientRect().height)) problems.push('no route shown');
  for (const table of document.querySelectorAll('main table')) {
    if (!scrolls(table)) problems.push(`a table (${table.textContent.trim().slice(0, 40)}) is in no scrolling frame`);
  }
  if (width >= DESKTOP && TABLES_FIT) {
    for (const frame of document.querySelectorAll('main.text .table-scroll')) {
      if (frame.scrollWidth > frame.clientWidth + 0.5) {
        problems.push(`a table (${frame.textContent.trim().slice(0, 40)}) scrolls on a desktop's width`);
      }
    }
  }
  for (const pre of document.querySelectorAll('.jp-OutputArea-output pre')) {
    if (getComputedStyle(pre).whiteSpace !== 'pre') problems.push('printed output wraps its lines');
  }
  const paragraph = document.querySelector('main p');
  if (paragraph && getComputedStyle(paragraph).fontSize !== '16px') {
    problems.push(`text is ${getComputedStyle(paragraph).fontSize}, not 16px`);
  }
  return problems;
}"""

PROSE_TABLES = ("index", "guide", "glossary")
"""The pages whose tables hold words, which fit a desktop's width. The benchmark page's tables of numbers may
scroll sideways there: one compares eleven engines side by side."""

LINKS = """() => Array.from(document.querySelectorAll('a')).map(
  a => a.getAttribute('href') || a.getAttribute('xlink:href')).filter(href => href)"""


@pytest.mark.slow
def test_every_page_loads_offline_without_errors_and_its_pictures_fit(visit: Visit) -> None:
    problems = {}
    for path in pages():
        visit.problems.clear()
        page = visit.open(path.name)
        page.wait_for_load_state("networkidle")
        found = [*visit.problems, *page.evaluate(PICTURES)]
        if found:
            problems[path.name] = found
    assert not problems, json.dumps(problems, indent=1)


@pytest.mark.slow
def test_every_page_reads_at_a_desktops_and_a_phones_width(visit_at: Visit) -> None:
    """No page is wider than the window; pictures are drawn at a readable size, framed to scroll sideways if
    they must; tables and printed output scroll rather than wrap, and the tables of words (PROSE_TABLES) fit a
    desktop's width; one type size for every page."""
    width = visit_at.page.viewport_size["width"]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems = {}
    for path in pages():
        visit_at.problems.clear()
        page = visit_at.open(path.name)
        page.wait_for_load_state("networkidle")
        readable = (READABLE.replace("READABLE", str(build_site.READABLE)).replace("DESKTOP", str(WIDTH))
                    .replace("TABLES_FIT", "true" if path.stem in PROSE_TABLES else "false"))
        found = [*visit_at.problems, *page.evaluate(readable)]
        overflow = page.evaluate("() => document.documentElement.scrollWidth")
        if overflow > width:
            found.append(f"the page is {overflow} px wide in a {width} px window")
        if found:
            problems[path.name] = found
        if path.stem in ("index", "glossary", "benchmarks"):
            page.screenshot(path=str(SCREENSHOTS / f"{path.stem}-{width}.png"))
    assert not problems, json.dumps(problems, indent=1)


@pytest.mark.slow
def test_the_search_box_finds_a_page_by_a_word(visit: Visit) -> None:
    page = visit.open("glossary.html")
    page.fill("#search-box", "antichain")
    results = page.locator("#search-results a")
    results.first.wait_for()
    hrefs = [results.nth(n).get_attribute("href") for n in range(results.count())]
    assert any(href.startswith("v5_partial_orders.html") for href in hrefs), hrefs
    page.fill("#search-box", "zzyzx-no-such-word")
    assert page.locator("#search-results").inner_text().startswith("No page holds")
    assert not visit.problems, visit.problems


@pytest.mark.slow
def test_every_notebook_page_links_its_notebook(visit: Visit, server: str) -> None:
    for stop in build_site.route():
        page = visit.open(stop.page)
        link = page.locator("a[download]")
        assert link.count() == 1, f"{stop.page} has no download link"
        response = page.request.get(urljoin(urljoin(server, stop.page), link.get_attribute("href")))
        assert response.ok and json.loads(response.body())["cells"], f"{stop.page}: the notebook is not served"
        assert stop.path.relative_to(ROOT).as_posix() in page.locator(".notebook-source").inner_text()


@pytest.mark.slow
def test_every_internal_link_reaches_a_page_and_anchor_that_exist(visit: Visit, server: str) -> None:
    ids = {path.name: set(re.findall(r'\bid="([^"]+)"', path.read_text())) for path in pages()}
    broken = []
    for path in pages():
        page = visit.open(path.name)
        for href in page.evaluate(LINKS):
            url = urlparse(urljoin(urljoin(server, path.name), href))
            if url.netloc != urlparse(server).netloc:
                continue
            target = url.path.lstrip("/") or "index.html"
            if target not in ids and (url.fragment or not (SITE / target).is_file()):
                broken.append(f"{path.name}: {href} (no such page)")
            elif url.fragment and url.fragment not in ids[target]:
                broken.append(f"{path.name}: {href} (no anchor {url.fragment!r} in {target})")
    assert not broken, "\n".join(broken)


@pytest.mark.slow
def test_a_solution_opens_on_click(visit: Visit) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for stop in build_site.route():
        page = visit.open(stop.page)
        solution = page.locator("details.solution").first
        assert solution.count(), f"{stop.page} shows no solution"
        assert not solution.evaluate("details => details.open"), f"{stop.page}: a solution is open before a click"
        solution.locator("summary").click()
        assert solution.evaluate("details => details.open"), f"{stop.page}: the solution did not open on click"
        assert solution.locator(".jp-Cell").first.is_visible(), f"{stop.page}: the opened solution shows nothing"
        if stop.module == "v3":
            solution.scroll_into_view_if_needed()
            page.screenshot(path=str(SCREENSHOTS / "solution-open.png"))


@pytest.mark.slow
def test_previous_and_next_walk_the_ladder(visit: Visit) -> None:
    ladder = [stop.page for stop in build_site.route()]
    page = visit.open(ladder[0])
    walked = [ladder[0]]
    while page.locator("a[rel=next]").count():
        page.locator("nav.pager-bottom a[rel=next]").click()
        page.wait_for_load_state("load")
        walked.append(page.url.rsplit("/", 1)[-1])
    assert walked == ladder
    back = [walked[-1]]
    while page.locator("a[rel=prev]").count():
        page.locator("nav.pager-top a[rel=prev]").click()
        page.wait_for_load_state("load")
        back.append(page.url.rsplit("/", 1)[-1])
    assert back == ladder[::-1]


@pytest.mark.slow
def test_screenshots_of_the_home_page_the_guide_and_a_loop(visit: Visit) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for name in ("index", "guide"):
        visit.open(f"{name}.html").screenshot(path=str(SCREENSHOTS / f"{name}.png"))
    page = visit.open(next(stop.page for stop in build_site.route() if stop.module == "v5"))
    shown = page.evaluate("""() => {
      const loops = Array.from(document.querySelectorAll('.jp-RenderedSVG img')).filter(
        img => img.src.startsWith('data:image/svg+xml;base64,') && atob(img.src.split(',')[1]).includes('feedback'));
      if (loops.length) loops[0].scrollIntoView();
      return loops.length;
    }""")
    assert shown, "the v5 page draws no loop (no SVG with a feedback edge)"
    page.screenshot(path=str(SCREENSHOTS / "v5-loop.png"))
    assert not visit.problems, visit.problems
    assert all((SCREENSHOTS / f"{name}.png").stat().st_size > 10_000 for name in ("index", "guide", "v5-loop"))
