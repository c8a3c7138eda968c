"""The report in a real browser: Debian's chromium, driven by Playwright pointed at the system executable.

Clicking a score lands on its highlighted quote, the table sorts, no console error, hostile text stays
inert, and the results table's first column stays in view on a laptop and on a phone; an excerpt and a
run's one-sentence summary open on their marks; the blind site shows no name. Skips, saying why, where
Playwright or chromium is missing. `SIEVE_REPORT_SCREENSHOT=PATH` saves the field's page of a plain field
(screenshots/make.py passes it the README's picture).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sieve.report.site import Options, write
from sieve.store.record import annotations as notes
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from tests.support.report_field import JUDGE, KEYKEEPER, PERSON, field, keykeeper_run, score
from tests.test_hostile_strings import HOSTILE
from tests.test_report import HTML_HOSTILE

pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("SIEVE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def site(db, tmp_path):
    runs = field(db, {"acme/oracle-1": 2, "mistral/small-3": 2})
    hostile = keykeeper_run(
        db,
        "evil" + HTML_HOSTILE,
        9,
        provider=HOSTILE,
        texts={"m1": f"He says {HTML_HOSTILE} and {HOSTILE}. The key stays with me."},
    )
    score(db, hostile, "ada", note=HTML_HOSTILE + HOSTILE)
    notes.add(db, hostile, reviewer="ada", item="n", kind="note", note=HTML_HOSTILE)
    write(db, "keykeeper", tmp_path / "site")
    return tmp_path / "site", runs, hostile


def opened(browser, path: Path, width: int = 1280, height: int = 800):
    page = browser.new_page(viewport={"width": width, "height": height})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("dialog", lambda d: (problems.append("a dialog: " + d.message), d.dismiss()))
    page.goto(path.as_uri())
    return page, problems


def test_clicking_a_score_lands_on_its_highlighted_quote(browser, site):
    folder, runs, _ = site
    page, problems = opened(browser, folder / "runs" / f"{runs[0]}.html")
    links = page.locator('table a[href^="#q-"]')
    assert links.count() > 40
    for n in (0, 7, links.count() - 1):
        link = links.nth(n)
        href = link.get_attribute("href")
        quote = link.locator("xpath=ancestor::tr/td[3]").inner_text()
        link.click()
        assert page.evaluate("location.hash") == href
        target = page.evaluate(
            "(() => { const t = document.querySelector(':target'); return t && [t.tagName, t.textContent,"
            " getComputedStyle(t).outlineStyle]; })()"
        )
        assert target == ["MARK", quote, "solid"]
        assert page.locator(":target").is_visible()
        box = page.locator(":target").bounding_box()
        assert box is not None and 0 <= box["y"] < 800
    assert problems == []


def test_the_results_table_sorts_by_a_column(browser, site):
    folder, _, _ = site
    page, problems = opened(browser, folder / "index.html")
    table = page.locator("table.sortable-table").first
    headers = table.locator("thead th")
    names = headers.all_inner_texts()
    column = names.index("run")
    cells = lambda: table.locator(f"tbody tr td:nth-child({column + 1})").all_inner_texts()  # noqa: E731
    headers.nth(column).click()
    assert cells() == sorted(cells(), key=str.lower)
    headers.nth(column).click()
    assert cells() == sorted(cells(), key=str.lower, reverse=True)
    assert headers.nth(column).get_attribute("aria-sort") == "descending"
    assert problems == []


def test_hostile_text_stays_inert(browser, site):
    folder, _, hostile = site
    for path in (folder / "index.html", folder / "runs" / f"{hostile}.html"):
        page, problems = opened(browser, path)
        assert page.locator("img").count() == 0
        assert page.locator("script").count() == 1
        assert page.evaluate(
            "[...document.querySelectorAll('a')].every(a => !(a.getAttribute('href') || '').startsWith('javascript:'))"
        )
        assert page.evaluate(
            "[...document.querySelectorAll('*')].every(e => [...e.attributes].every(a => !a.name.startsWith('on')))"
        )
        assert "<script>alert(1)</script>" in page.locator("body").inner_text()  # shown as text
        assert problems == []


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
def test_the_tables_first_column_stays_in_view(browser, site, size):
    folder, runs, _ = site
    for path in (folder / "index.html", folder / "runs" / f"{runs[0]}.html"):
        page, problems = opened(browser, path, *size)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), path
        first = page.locator("table thead th").first.bounding_box()
        assert first is not None and first["x"] >= 0 and first["x"] + first["width"] <= size[0]
        page.locator(".scroll").first.evaluate("e => e.scrollLeft = e.scrollWidth")
        after = page.locator("table tbody td.table-first").first.bounding_box()
        assert after is not None and after["x"] >= 0, "the first column scrolled out of view"
        assert problems == []


def landed(page) -> list | None:
    """The element the address's fragment names, as [tag, its text, its outline style], or None."""
    return page.evaluate(
        "(() => { const t = document.querySelector(':target'); return t && [t.tagName, t.textContent,"
        " getComputedStyle(t).outlineStyle]; })()"
    )


def test_an_excerpt_opens_on_its_mark_in_the_runs_transcript(browser, site):
    folder, runs, _ = site
    page, problems = opened(browser, folder / "excerpts.html")
    links = page.locator('figure.excerpt a[href*="#q-"]')
    assert links.count() == len(runs)
    marked = page.locator("figure.excerpt mark.k-excerpt").first.inner_text()
    links.nth(1).click()
    page.wait_for_load_state()
    assert page.url.split("#")[0].endswith(f"runs/{runs[1]}.html")
    assert landed(page) == ["MARK", marked, "solid"]
    box = page.locator(":target").bounding_box()
    assert box is not None and 0 <= box["y"] < 800
    assert problems == []


def test_a_runs_one_sentence_opens_on_the_quote_it_rests_on(browser, site):
    folder, runs, _ = site
    page, problems = opened(browser, folder / "index.html")
    sentence = page.locator("#summaries ~ .scroll a[href*='#q-']").first
    quote = sentence.inner_text().strip("“”")
    sentence.click()
    page.wait_for_load_state()
    assert page.url.split("#")[0].endswith(f"runs/{runs[0]}.html")
    assert landed(page) == ["MARK", quote, "solid"]
    assert problems == []


def test_the_blind_site_shows_no_name_date_or_id(browser, db, tmp_path):
    runs = field(db, {"acme/oracle-1": 2, "mistral/small-3": 1})
    write(db, "keykeeper", tmp_path / "blind", Options(blind=True))
    forbidden = ["acme", "oracle", "mistral", "small-3", "Acme Cloud", "example.test", *runs]
    forbidden += {r[0][:10] for r in db.execute("SELECT started FROM runs").fetchall()}
    for path in sorted((tmp_path / "blind").rglob("*.html")):
        page, problems = opened(browser, path)
        shown = (page.title() + " " + page.locator("body").inner_text()).lower()
        assert not [w for w in forbidden if w.lower() in shown], path.name
        assert problems == []


def varied_field(db) -> list[str]:
    """A field whose runs differ (the README's picture): each run's cards with some items given lower scores."""
    runs = field(db, {"acme/oracle-1": 3, "mistral/small-3": 2, "vendor/tiny-1": 2})
    for n, run_id in enumerate(runs):
        view = RunView.open(db, run_id)
        reply = view.replies()[-1]
        at = reply["text"].index("the gate stays shut")
        quote = Quote(reply["id"], at, at + len("the gate stays shut"), "the gate stays shut")
        for reviewer in (PERSON, JUDGE):
            # The test reached the letter in all runs but one (L2, disqualifying when it did not).
            answer = "no" if n == 3 else "yes"
            evidence.annotate(db, run_id, view=view, reviewer=reviewer, item="L2", kind="verdict", value=answer)
            for k, item in enumerate(KEYKEEPER.rubrics[0].items + KEYKEEPER.rubrics[1].items):
                if (k * 7 + n * 3 + (reviewer == JUDGE)) % 5 < n % 4 + 1:
                    evidence.annotate(
                        db,
                        run_id,
                        quote=quote,
                        view=view,
                        reviewer=reviewer,
                        item=item.id,
                        rubric=item.id[0],
                        kind="score",
                        score=item.scale.minimum,
                    )
    return runs


def test_the_readme_screenshot_of_the_field(browser, db, tmp_path):
    varied_field(db)
    write(db, "keykeeper", tmp_path / "site")
    page, problems = opened(browser, tmp_path / "site" / "index.html", 1280, 800)
    shot = Path(os.environ.get("SIEVE_REPORT_SCREENSHOT") or tmp_path / "report.png")
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 10_000 and problems == []
    totals = page.locator("table.sortable-table").first.locator("tbody tr td:nth-child(4)").all_inner_texts()
    assert len(set(totals)) > 2  # the runs differ: the picture shows a field, not one run repeated
