"""The field page's neighbours: each model against the next in the ranking, by compare's statistics, checked
against a worked example, every number on it a link to its evidence; and the page's contents link every section
it holds (QA #19: the ratings had none)."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from sieve.cli import main
from sieve.report.site import Options, write
from sieve.store.record import pairs as pairing
from sieve.store.scoring.neighbours import neighbours
from tests.support.report_field import field
from tests.support.scores import score
from tests.test_judge_report import ITEMS, RUBRIC, card, path_of
from tests.test_pairs import story_run
from tests.test_report import Page

# The worked example: ada's totals of each model's four runs. a over b: every a run above every b run, so of the
# C(8, 4) = 70 relabellings only this one and its mirror are as far apart: p = 2/70. b over c: 0.5 apart, noise.
TOTALS = {"maker/a": [34, 35, 36, 37], "maker/b": [28, 29, 30, 31], "maker/c": [26, 28, 30, 32]}


@pytest.fixture
def worked(db):
    runs = {}
    for model, totals in TOTALS.items():
        for total in totals:
            run = story_run(db, model)
            card(db, run, "ada", total)
            runs[run] = (model, total)
    return db, runs


def welch_half_width(x: list[float], y: list[float]) -> float:
    """Welch's 95% half-width, by hand (compare's interval is never narrower): t quantile for df from tables."""

    def var(v):
        m = sum(v) / len(v)
        return sum((e - m) ** 2 for e in v) / (len(v) - 1)

    va, vb = var(x) / len(x), var(y) / len(y)
    df = (va + vb) ** 2 / (va * va / (len(x) - 1) + vb * vb / (len(y) - 1))
    assert df == pytest.approx(6.0)  # both sides spread alike: df = 2 (n - 1)
    return 2.4469 * math.sqrt(va + vb)  # t(0.975, 6)


@pytest.mark.slow
def test_each_model_against_the_next_by_compares_statistics_on_a_worked_example(worked):
    db, _ = worked
    (entry,) = neighbours(db, "story-5", "humans")
    assert entry["figure"] == RUBRIC
    assert entry["ranking"] == [("maker/a", 35.5), ("maker/b", 29.5), ("maker/c", 29.0)]
    first, second = entry["pairs"]
    assert (first["a"], first["b"], first["difference"]) == ("maker/a", "maker/b", 6.0)
    assert first["p"] == pytest.approx(2 / 70, abs=1e-4) and first["status"] == "a ahead"
    half = welch_half_width(TOTALS["maker/a"], TOTALS["maker/b"])
    assert first["low"] <= 6.0 - half + 1e-3 and first["high"] >= 6.0 + half - 1e-3 and first["low"] > 0
    assert (second["a"], second["b"], second["difference"]) == ("maker/b", "maker/c", 0.5)
    assert second["low"] < 0 < second["high"] and second["status"] == "within noise"
    # The very figures `sieve compare` gives for the same two sides.
    for row in (first, second):
        args = ["compare", "--scenario", "story-5", "--a", row["a"], "--b", row["b"], "--db", path_of(db), "--json"]
        out = CliRunner().invoke(main, args)
        assert out.exit_code == 0, out.output
        (same,) = [r for r in json.loads(out.output)["rows"] if r["figure"] == RUBRIC]
        for key in ("a_mean", "b_mean", "difference", "low", "high", "p", "status"):
            assert same[key] == row[key], key


class Section(HTMLParser):
    """The neighbours section's table: each cell's text, and whether each piece of text in it is inside a link."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.bare_numbers: list[str] = []
        self.links: list[tuple[str, str]] = []  # (href, text)
        self._in_body = self._in_cell = False
        self._href: str | None = None
        self._text = ""
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.rows.append([])
        elif tag == "td" and self._in_body:
            self._in_cell, self._text = True, ""
        elif tag == "a" and self._in_cell:
            self._href, self._link_text = a["href"], ""

    def handle_endtag(self, tag):
        if tag == "tbody":
            self._in_body = False
        elif tag == "td" and self._in_cell:
            self._in_cell = False
            self.rows[-1].append(self._text)
        elif tag == "a" and self._href is not None:
            self.links.append((self._href, self._link_text))
            self._href = None

    def handle_data(self, data):
        if not self._in_cell:
            return
        self._text += data
        if self._href is not None:
            self._link_text += data
        else:
            # Outside a link: a figure (a mean, a difference, a total) would be a number with a point or a sign.
            # Model names (maker/a), run names and the verdict hold none.
            self.bare_numbers += re.findall(r"[+-]?\d+\.\d+|(?<![\w/])[+-]?\d+(?![\w/])", data)


def test_the_field_page_shows_the_neighbours_and_every_number_links_to_its_evidence(worked, tmp_path):
    db, runs = worked
    write(db, "story-5", tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    start = index.index('<h2 id="neighbours">')
    section = index[start : index.index("<h2 ", start + 1)]
    found = Section(section)
    by_model = {r[1]: r for r in found.rows}
    a_row, b_row = by_model["maker/a"], by_model["maker/b"]
    assert a_row[:9] == [RUBRIC, "maker/a", "maker/b", "35.50", "29.50", "+6.00", a_row[6], "0.029", "maker/a ahead"]
    assert b_row[:9] == [RUBRIC, "maker/b", "maker/c", "29.50", "29.00", "+0.50", b_row[6], b_row[7], "within noise"]
    assert found.bare_numbers == []  # every number inside a link
    page = Page(index)
    for href, text in found.links:
        if href.startswith("#"):  # a mean, the difference, its interval, p: to the row's runs, on this page
            assert href[1:] in page.ids, href
            continue
        # A run's value by ada: to ada's card on the run's page, whose total is that value.
        path, anchor = href.split("#")
        run_id = path.removeprefix("runs/").removesuffix(".html")
        assert runs[run_id][1] == float(text)
        run_page = (tmp_path / "site" / path).read_text(encoding="utf-8")
        assert anchor in Page(run_page).ids
        card_html = run_page[run_page.index(f'id="{anchor}"') :]
        assert re.search(rf'<strong class="total">{RUBRIC} {int(float(text))}\b', card_html)
    evidence = [t for h, t in found.links if not h.startswith("#")]
    assert sorted(float(t) for t in evidence) == sorted(
        [*TOTALS["maker/a"], *TOTALS["maker/b"], *TOTALS["maker/b"], *TOTALS["maker/c"]]
    )  # b's runs stand in both of its rows
    assert "no permutation of so few runs" not in section  # 4 against 4 can be ahead


def test_the_contents_link_every_section_the_page_holds_the_ratings_among_them(db, tmp_path):
    runs = field(db, {"acme/oracle-1": 2, "mistral/small-3": 2}, judge=False)
    queue = pairing.create_queue(db, [(runs[0], runs[2]), (runs[1], runs[3])], seed=1)
    for pair in pairing.queue_pairs(db, queue):
        pairing.judge(db, pair, "overall", "A", "ada")
    write(db, "keykeeper", tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    nav = re.search(r"<nav>(.*?)</nav>", index[index.index("<h1") :]).group(1)  # the field's own contents
    targets = re.findall(r'href="#([\w-]+)"', nav)
    sections = re.findall(r'<h2 id="([\w-]+)"', index)
    assert "ratings" in sections and "neighbours" in sections
    assert targets == sections  # each section linked, in the page's order, and no link to one it left out
    assert "excerpts.html" in nav
    write(db, "keykeeper", tmp_path / "blind", Options(blind=True), key=tmp_path / "key.json")
    blind = (tmp_path / "blind" / "index.html").read_text(encoding="utf-8")
    assert "neighbours" not in re.findall(r'<h2 id="([\w-]+)"', blind) and 'href="#neighbours"' not in blind


def test_a_model_without_a_whole_total_is_said_not_ranked_not_dropped_silently(worked, tmp_path):
    db, _ = worked
    partial = story_run(db, "maker/d")
    score(db, partial, ITEMS[0], 5)  # one item of ten: no whole total
    (entry,) = neighbours(db, "story-5", "humans")
    assert [m for m, _ in entry["ranking"]] == ["maker/a", "maker/b", "maker/c"] and entry["unranked"] == ["maker/d"]
    write(db, "story-5", tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert f"not ranked on {RUBRIC}: maker/d (no run with a whole {RUBRIC} total" in index
