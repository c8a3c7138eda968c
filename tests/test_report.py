"""The report: a static site where every score on a run's page links to a mark that wraps its quote; outside
text stays inert; blind names nothing that tells runs apart; private notes leave no note behind."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from sieve.cli import main
from sieve.report import excerpts_page, markup
from sieve.report.site import Options, write
from sieve.report.transcript import Mark, marked
from sieve.store.record import annotations as notes
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from tests.support import report_field
from tests.support.report_field import JUDGE, PERSON, excerpt, field, keykeeper_run, score, summary
from tests.test_hostile_strings import HOSTILE, UNSAFE

# Every address a page may hold: the report's own pages and anchors, never one taken from outside text.
REPORT_LINK = r"((\.\./)?(index|excerpts)\.html|runs/[\w-]+\.html(#[\w-]+)?|#[\w-]+)"
HTML_HOSTILE = (
    '</mark></td><script>alert(1)</script><img src=x onerror="alert(2)"> <a href="javascript:alert(3)">x</a> &amp; &lt;'
)


class Page(HTMLParser):
    """What the tests read of a page: ids, the text inside each mark (and its continued pieces), links, tags."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.mark_text: dict[str, str] = {}
        self._open: list[str | None] = []  # for each open <mark>, the anchor it belongs to
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href") is not None:
            self.links.append(a["href"])
        if tag == "mark":
            anchor = a.get("id") or a.get("data-q")
            self._open.append(anchor)
            if anchor:
                self.mark_text.setdefault(anchor, "")

    def handle_endtag(self, tag):
        if tag == "mark":
            self._open.pop()

    def handle_data(self, data):
        for anchor in set(self._open):
            if anchor:
                self.mark_text[anchor] += data


def pages(folder: Path) -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.html"))}


@pytest.fixture
def scored(db):
    runs = field(db, {"acme/oracle-1": 2, "mistral/small-3": 1}, note="a private thought")
    return db, runs


def quoted(db, run_id):
    return [a for a in notes.active(db, run_id) if a["quote"] and a["quote_turn_id"] and a["quote_start"] is not None]


def test_every_score_on_a_run_page_links_to_a_mark_that_wraps_its_verified_quote(scored, tmp_path):
    db, runs = scored
    write(db, "keykeeper", tmp_path / "site")
    for run_id in runs:
        page = Page((tmp_path / "site" / "runs" / f"{run_id}.html").read_text(encoding="utf-8"))
        texts = {t["id"]: t["text"] for t in record.all_turns(db, run_id)}
        given = quoted(db, run_id)
        assert len(given) > 40  # a person's and a judge's whole cards
        for a in given:
            anchor = f"q-{a['id']}"
            assert f"#{anchor}" in page.links, a["item"]
            assert anchor in page.ids
            assert page.mark_text[anchor] == texts[a["quote_turn_id"]][a["quote_start"] : a["quote_end"]] == a["quote"]
        local = [link for link in page.links if link.startswith("#")]
        assert all(link[1:] in page.ids for link in local)


def test_the_field_links_every_run_and_shows_each_rubric_apart_with_the_total_cost(scored, tmp_path):
    db, runs = scored
    write(db, "keykeeper", tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    page = Page(index)
    for run_id in runs:
        assert f"runs/{run_id}.html" in page.links
        assert (tmp_path / "site" / "runs" / f"{run_id}.html").exists()
    headers = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', index)
    for column in ("T", "R", "L1 played out", "L3", "status", "filtered", "ceiling", "tokens", "cost", "extreme"):
        assert column in headers or column == "extreme", column
    assert "total cost $" in index
    assert "Models: repeats as distributions" in index and "95% interval" in index
    assert '<h2 id="agreement">' in index and "κw" in index
    assert index.count("<svg") == 2


def test_every_page_has_a_strict_policy_one_script_no_handlers_and_only_the_reports_own_links(db, tmp_path):
    run_id = keykeeper_run(
        db,
        HOSTILE + HTML_HOSTILE,
        0,
        provider=HTML_HOSTILE + HOSTILE,
        texts={"m1": f"He says {HTML_HOSTILE} and {HOSTILE} then The key stays with me."},
    )
    score(db, run_id, HOSTILE + "<b>rev</b>", note=HTML_HOSTILE + HOSTILE)
    notes.add(db, run_id, reviewer="ada", item="n", kind="note", note=HTML_HOSTILE)
    excerpt(db, run_id, HOSTILE, "m1", HTML_HOSTILE, caption=HTML_HOSTILE + HOSTILE)
    summary(db, run_id, JUDGE + HOSTILE, "m1", HOSTILE, HTML_HOSTILE + HOSTILE)
    for options in (Options(), Options(single_file=True), Options(blind=True)):
        folder = tmp_path / f"site-{options.single_file}-{options.blind}"
        write(db, "keykeeper", folder, options)
        for path, text in pages(folder).items():
            page = Page(text)
            assert f'content="{markup.CSP}"' in text and "default-src 'none'" in markup.CSP
            assert text.count("<script") == 1 and [t for t, _ in page.tags].count("script") == 1
            assert [t for t, _ in page.tags].count("img") == 0
            for tag, attrs in page.tags:
                assert not [n for n, _ in attrs if n.startswith("on")], (path, tag, attrs)
                assert "style" not in dict(attrs), (path, tag)  # the policy allows no style attribute
            for link in page.links:
                assert re.fullmatch(REPORT_LINK, link), link
            assert not UNSAFE.search(text), path  # escapes, bells, C1 and bidi controls made visible
            if not options.blind:  # blind, the model's name (which holds the string) is masked
                assert "\\x1b]0;pwned\\x07" in text, path


@pytest.mark.slow
def test_blind_names_no_model_provider_id_or_date_and_writes_its_key_outside(scored, tmp_path):
    db, runs = scored
    folder = tmp_path / "site"
    done = write(db, "keykeeper", folder, Options(blind=True))
    assert done.key == tmp_path / "site.key.json" and folder not in done.key.parents
    key = json.loads(done.key.read_text())
    codes = {row["run"]: row["code"] for row in key["codes"]}
    assert set(codes) == set(runs)
    forbidden = {"acme", "oracle", "mistral", "small-3", "Acme Cloud", "example.test"}
    forbidden |= set(runs) | {a["id"] for r in runs for a in notes.active(db, r)}
    rows = (
        db.execute("SELECT started, ended FROM runs").fetchall()
        + db.execute("SELECT created, created FROM annotations").fetchall()
    )
    forbidden |= {value[:10] for row in rows for value in row if value}
    forbidden |= {t["id"] for r in runs for t in record.all_turns(db, r)}
    files = pages(folder)
    assert len(files) == 2 + len(runs)
    for path, text in files.items():
        lowered = text.lower()
        for word in forbidden:
            assert word.lower() not in lowered, (path.name, word)
    assert all((folder / "runs" / f"{code}.html").exists() for code in codes.values())
    # A later named report into the same folder replaces the blind pages; a blind one after a named one, too.
    write(db, "keykeeper", folder, Options())
    write(db, "keykeeper", folder, Options(blind=True))
    assert all(runs[0] not in text for text in pages(folder).values())


@pytest.mark.slow
def test_private_notes_leave_no_note_in_any_file(scored, tmp_path):
    db, runs = scored
    notes.add(db, runs[0], reviewer=PERSON, item="note", kind="note", note="the reviewer's own aside")
    notes.add(db, runs[0], reviewer=JUDGE, item="summary", kind="note", value="summary", note="a judge's sentence")
    write(db, "keykeeper", tmp_path / "open")
    assert any("a private thought" in t for t in pages(tmp_path / "open").values())
    assert any("the reviewer&#x27;s own aside" in t for t in pages(tmp_path / "open").values())
    assert any("Havel keeps the gate in run 0." in t for t in pages(tmp_path / "open").values())
    write(db, "keykeeper", tmp_path / "closed", Options(private_notes=True))
    for text in pages(tmp_path / "closed").values():
        assert "private thought" not in text and "own aside" not in text and "judge&#x27;s sentence" not in text
        assert "Havel keeps the gate" not in text and "In one sentence" not in text
    # An excerpt's caption is written to be published: it stays, with its passage.
    assert "the rain of run 0" in (tmp_path / "closed" / "excerpts.html").read_text(encoding="utf-8")


def test_people_or_judges_alone(scored, tmp_path):
    db, runs = scored
    write(db, "keykeeper", tmp_path / "people", Options(voters="humans"))
    text = (tmp_path / "people" / "runs" / f"{runs[0]}.html").read_text(encoding="utf-8")
    assert f"<h3>{PERSON}</h3>" in text and "judge:acme" not in text
    write(db, "keykeeper", tmp_path / "judges", Options(voters="judges"))
    text = (tmp_path / "judges" / "runs" / f"{runs[0]}.html").read_text(encoding="utf-8")
    assert f"<h3>{PERSON}</h3>" not in text and "<h3>judge:acme/oracle-1</h3>" in text


def test_a_single_file_holds_every_run_and_its_links_resolve_inside_it(scored, tmp_path):
    db, runs = scored
    write(db, "keykeeper", tmp_path / "one", Options(single_file=True))
    assert [p.name for p in pages(tmp_path / "one")] == ["index.html"]
    page = Page((tmp_path / "one" / "index.html").read_text(encoding="utf-8"))
    assert all(link.startswith("#") and link[1:] in page.ids for link in page.links)
    assert sum(1 for link in page.links if link.startswith("#q-")) >= 3 * 40


def test_marks_nest_and_a_crossing_quote_is_split_with_one_anchor():
    text = "abcdefghij"
    html = marked(
        text,
        [Mark(2, 6, "score", "exact", "q-a"), Mark(4, 8, "counter", "fuzzy", "q-b"), Mark(3, 5, "note", "", "q-c")],
    )
    page = Page(html)
    assert page.mark_text == {"q-a": "cdef", "q-b": "efgh", "q-c": "de"}
    assert html.count('id="q-b"') == 1 and html.count('data-q="q-b"') >= 1
    assert re.sub(r"<[^>]+>", "", html) == text
    assert marked("<&>", [Mark(0, 3, "score", "", "q-x")]) == '<mark id="q-x" class="k-score">&lt;&amp;&gt;</mark>'


def test_the_command_writes_the_site_and_refuses_two_choices_of_cards(scored, tmp_path):
    db, runs = scored
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    out = tmp_path / "site"
    done = CliRunner().invoke(main, ["report", "--scenario", "keykeeper", "-o", str(out), "--db", path])
    assert done.exit_code == 0, done.output
    assert "wrote 5 pages for 3 runs" in done.output and (out / "index.html").exists()
    both = CliRunner().invoke(
        main, ["report", "--scenario", "keykeeper", "--humans", "--reviewer", "ada", "--db", path]
    )
    assert both.exit_code == 2
    none = CliRunner().invoke(main, ["report", "--scenario", "train", "-o", str(out), "--db", path])
    assert none.exit_code != 0 and "no run of the scenario train" in none.output


@pytest.mark.slow
def test_the_report_never_removes_or_overwrites_a_file_it_did_not_write(scored, tmp_path):
    db, runs = scored
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    site = tmp_path / "mysite"
    (site / "runs").mkdir(parents=True)
    (site / "runs" / "mine.html").write_text("<p>mine</p>")
    (site / "notes.txt").write_text("mine too")

    def report(*more: str):
        return CliRunner().invoke(main, ["report", "--scenario", "keykeeper", "-o", str(site), "--db", path, *more])

    done = report()  # beside the user's files, none of them in the way
    assert done.exit_code == 0, done.output
    assert (site / "runs" / "mine.html").read_text() == "<p>mine</p>" and (site / "notes.txt").read_text() == "mine too"
    assert report("--blind").exit_code == 0  # a blind report replaces the named pages it wrote, and only those
    assert not any((site / "runs" / f"{r}.html").exists() for r in runs)
    assert (site / "runs" / "mine.html").read_text() == "<p>mine</p>"

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "index.html").write_text("<p>mine</p>")
    refused = CliRunner().invoke(main, ["report", "--scenario", "keykeeper", "-o", str(theirs), "--db", path])
    assert refused.exit_code == 2 and "index.html would be overwritten" in refused.output
    assert (theirs / "index.html").read_text() == "<p>mine</p>" and sorted(p.name for p in theirs.iterdir()) == [
        "index.html"
    ]
    (site / "runs" / "mine.html").rename(site / "runs" / f"{runs[0]}.html")  # a user's page where a run's would go
    (site / "runs" / f"{runs[0]}.html").write_text("<p>mine</p>")
    assert report().exit_code == 2 and (site / "runs" / f"{runs[0]}.html").read_text() == "<p>mine</p>"


def test_the_helper_field_is_what_the_benchmark_uses():
    assert report_field.KEYKEEPER.name == "keykeeper"


@pytest.mark.slow
def test_excerpts_page_shows_each_passage_in_its_context_linked_to_its_mark(scored, tmp_path):
    db, runs = scored
    write(db, "keykeeper", tmp_path / "site")
    text = (tmp_path / "site" / "excerpts.html").read_text(encoding="utf-8")
    page = Page(text)
    made = [a for r in runs for a in notes.active(db, r) if a["kind"] == "excerpt"]
    assert len(made) == len(runs)
    for n, a in enumerate(made):
        link = f"runs/{a['run_id']}.html#q-{a['id']}"
        assert link in page.links
        assert f"the rain of run {n}" in text
        # The link lands on the run's page, on a mark that wraps exactly the passage.
        run_page = Page((tmp_path / "site" / "runs" / f"{a['run_id']}.html").read_text(encoding="utf-8"))
        assert run_page.mark_text[f"q-{a['id']}"] == a["quote"] == "Rain drums on the roof"
        assert f"#q-{a['id']}" in run_page.links  # the run page lists it too
    # Each quote stands in its context: the words around it, the quote marked.
    assert text.count('<mark class="k-excerpt">Rain drums on the roof</mark> of the gatehouse') == len(runs)
    assert "&#x27;The key stays with me,&#x27; he says" in text
    # Blind, the page names runs by their codes, and the links still land.
    done = write(db, "keykeeper", tmp_path / "blind", Options(blind=True))
    blind = (tmp_path / "blind" / "excerpts.html").read_text(encoding="utf-8")
    codes = [row["code"] for row in json.loads(done.key.read_text())["codes"]]
    assert all(code in blind for code in codes) and not any(r in blind for r in runs)
    assert "oracle" not in blind.lower() and "mistral" not in blind.lower()
    for link in Page(blind).links:
        if "#" in link:
            path, anchor = link.split("#")
            assert anchor in Page((tmp_path / "blind" / path).read_text(encoding="utf-8")).ids
    # One file: the excerpts are a section of it, their links anchors in it.
    write(db, "keykeeper", tmp_path / "one", Options(single_file=True))
    one = Page((tmp_path / "one" / "index.html").read_text(encoding="utf-8"))
    assert "excerpts" in one.ids and all(f"#q-{a['id']}" in one.links for a in made)


def test_each_run_in_one_sentence_on_the_quote_it_rests_on(scored, tmp_path):
    db, runs = scored
    write(db, "keykeeper", tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    links = Page(index).links
    for n, run_id in enumerate(runs):
        (said,) = [a for a in notes.active(db, run_id, JUDGE) if a["value"] == "summary"]
        assert said["verification"] == "exact"
        text = (tmp_path / "site" / "runs" / f"{run_id}.html").read_text(encoding="utf-8")
        page = Page(text)
        assert "<h2>In one sentence</h2>" in text and f"Havel keeps the gate in run {n}." in text
        assert f"#q-{said['id']}" in page.links
        assert page.mark_text[f"q-{said['id']}"] == "the gate stays shut"
        # The field lists every run's sentence, linked to the same mark on the run's page.
        assert f"runs/{run_id}.html#q-{said['id']}" in links
    assert index.index('id="summaries"') < index.index('id="filters"')


def test_the_context_of_an_excerpt_is_its_paragraph_cut_at_spaces():
    text = "First paragraph, not shown.\n\n" + "word " * 80 + "THE QUOTE" + " tail" * 80 + "\n\nNext one."
    start = text.index("THE QUOTE")
    left, right = excerpts_page.context_span(text, start, start + 9)
    shown = text[left:right]
    assert "First paragraph" not in shown and "Next one" not in shown
    assert shown.startswith("word ") and shown.endswith("tail") and "THE QUOTE" in shown
    assert start - left <= excerpts_page.AROUND and right - start - 9 <= excerpts_page.AROUND
    short = "He said: THE QUOTE.\n\nLater."
    at = short.index("THE QUOTE")
    assert short[slice(*excerpts_page.context_span(short, at, at + 9))] == "He said: THE QUOTE."
    html = excerpts_page.in_context("a <b> " + "THE QUOTE", 6, 15)
    assert html == 'a &lt;b&gt; <mark class="k-excerpt">THE QUOTE</mark>'


@pytest.mark.slow
async def test_a_field_scored_by_a_person_and_a_real_judge_links_every_found_quote(db, fake_server, tmp_path):
    """Runs played against the test server, scored by a person and by `sieve judge` (the judge played by the
    test server, its quotes exact, near, invented, the player's words or missing): every entry whose quote was
    found links to a mark wrapping the passage at its place; the others say why they cannot."""
    from tests.support import fakejudge
    from tests.test_judge import JUDGE as JUDGED_BY_THE_SERVER
    from tests.test_judge import judge, play

    fakejudge.install()
    runs = await play(db, fake_server, "vendor/model-a;tokens=60", "vendor/model-b;tokens=60")
    # fix=0: the quotes still wrong after the repair round stay wrong (absent, the player's words).
    await judge(db, fake_server, runs, model=JUDGED_BY_THE_SERVER + ";fix=0", reviewer="judge:oracle")
    for run_id in runs:
        view = RunView.open(db, run_id)
        reply = view.replies_to("m3")[0]
        quote = Quote(reply["id"], 0, 40, reply["text"][:40])
        evidence.annotate(db, run_id, reviewer=PERSON, item="T3", rubric="T", kind="score", score=1, quote=quote)
    write(db, "keykeeper", tmp_path / "site")
    for run_id in runs:
        text = (tmp_path / "site" / "runs" / f"{run_id}.html").read_text(encoding="utf-8")
        page = Page(text)
        turns = {t["id"]: t["text"] for t in record.all_turns(db, run_id)}
        given = notes.active(db, run_id)
        assert {a["reviewer"] for a in given} == {PERSON, "judge:oracle"}
        found = [a for a in given if a["quote_start"] is not None and a["verification"] in ("exact", "fuzzy")]
        assert len(found) > 10
        for a in found:
            anchor = f"q-{a['id']}"
            assert f"#{anchor}" in page.links, a["item"]
            assert page.mark_text[anchor] == turns[a["quote_turn_id"]][a["quote_start"] : a["quote_end"]]
        assert any(a["verification"] == "absent" for a in given) and "not found" in text
        (said,) = [a for a in given if a["value"] == "summary"]
        assert "The keeper keeps his ledger and his word." in text and f"#q-{said['id']}" in page.links


def test_one_run_is_one_run_on_the_command_line_and_in_the_pages(db, tmp_path):
    field(db, {"acme/oracle-1": 1})
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    out = tmp_path / "site"
    done = CliRunner().invoke(main, ["report", "--scenario", "keykeeper", "-o", str(out), "--db", path])
    assert done.exit_code == 0 and " for 1 run to " in done.output, done.output
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "1 runs" not in index and "the field: 1 run," in index
