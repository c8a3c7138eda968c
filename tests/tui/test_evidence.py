"""The evidence on Review's page: every quote highlighted where it stands, styled by its kind and how it was found;
what is under the cursor or the mouse said under the transcript; the card and the transcript linked both ways."""

from __future__ import annotations

import re

import pytest
from rich.style import Style
from textual.color import Color
from textual.theme import BUILTIN_THEMES

from sieve import scenarios
from sieve.engine.endpoints import Endpoints
from sieve.store.record import annotations as notes
from sieve.store.record.annotations import Quote, Verified
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from sieve.tui.app import HIGHLIGHT_VARIABLES, LIGHT_HIGHLIGHT_VARIABLES, SieveApp
from sieve.tui.screens.pickers import Picker, ValueList
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.screens.review import evidence as review_evidence
from sieve.tui.widgets.scorecard import ScoreCardView, card_rows, cut_at_word
from sieve.tui.widgets.transcript import GUTTER, HIGHLIGHT_KINDS, Highlight, TranscriptView
from tests.support.review_runs import review_app, scripted_run
from tests.support.tui_helpers import on_screen, overlay_is, screen_is, screen_text, wait_until
from tests.tui.test_blind import FORBIDDEN, make_run
from tests.tui.test_looks import contrast

# -- what a reply of tests/support/review_runs.py says, and where -------------------------------------


def span(turn: dict, words: str) -> Quote:
    start = turn["text"].index(words)
    return Quote(turn["id"], start, start + len(words), words)


def give(db, run_id: str, **fields) -> dict:
    """An annotation stored as Review stores one; returns it as the database holds it."""
    annotation_id = evidence.annotate(db, run_id, reviewer="ada", **fields)
    return next(a for a in notes.active(db, run_id, "ada") if a["id"] == annotation_id)


def highlight_colour(app, transcript: TranscriptView, key: str, offset: int) -> tuple[str | None, Style]:
    """The background drawn at a character of a turn, and its whole style, from the line the transcript renders."""
    layout = transcript.text_layout
    y = layout.y_of(key, offset)
    transcript.scroll_to(y=y, animate=False, immediate=True)
    strip = transcript.render_line(y - transcript.scroll_offset.y)
    block = layout.block(key)
    line_start = block.lines[block.line_at(offset)][0]
    column = GUTTER + offset - line_start  # the replies here are ASCII: a character is a cell
    at = 0
    for segment in strip:
        if at <= column < at + len(segment.text):
            colour = segment.style.bgcolor
            return (colour.triplet.hex if colour is not None and colour.triplet else None), segment.style
        at += len(segment.text)
    raise AssertionError(f"column {column} is past the line")


def gutter_mark(transcript: TranscriptView, key: str, offset: int) -> str:
    y = transcript.text_layout.y_of(key, offset)
    transcript.scroll_to(y=y, animate=False, immediate=True)
    return list(transcript.render_line(y - transcript.scroll_offset.y))[1].text


def theme_colour(app, name: str) -> str:
    return Color.parse(app.theme_variables[name]).hex.lower()


# -- the pieces, without the screen -------------------------------------------------------------


def test_quotes_are_cut_after_a_word_with_an_ellipsis():
    quote = "The people looked up, and one of the men from the island reached out"
    assert cut_at_word(quote, 100) == quote
    assert cut_at_word(quote, 36) == "The people looked up, and one of…"
    assert cut_at_word(quote, 37) == "The people looked up, and one of the…"  # a word that ends at the edge stays
    assert cut_at_word("Supercalifragilisticexpialidocious", 12) == "Supercalifr…"  # one word: cut where it must
    assert cut_at_word("  spaced\n\nout  words ", 40) == "spaced out words"


def test_overlapping_quotes_draw_the_innermost_then_the_latest_on_top():
    def note(n: int, start: int, end: int, kind: str = "score", verdict: str = "exact") -> dict:
        return dict(
            id=f"A{n}",
            kind=kind,
            item=f"X{n}",
            quote="q",
            quote_turn_id="t",
            quote_start=start,
            quote_end=end,
            verification=verdict,
        )

    given = [note(1, 0, 40), note(2, 10, 20, "count", "fuzzy"), note(3, 0, 40, "probe"), note(4, 5, 9, "deduction")]
    given.append(dict(note(5, 0, 0), quote=None))  # no quote: nothing to draw
    spans = review_evidence.highlights(given)["t"]
    assert [h.key for h in spans] == ["A1", "A3", "A2", "A4"]  # the longest first; of equal ones, the older
    assert spans[2] == Highlight(10, 20, "counter", "fuzzy", "A2")
    by_id = {a["id"]: a for a in given}
    at_12 = [h for h in spans if h.start <= 12 < h.end]
    assert [a["id"] for a in review_evidence.under(at_12, by_id)] == ["A2", "A3", "A1"]
    assert [a["id"] for a in review_evidence.under(at_12, by_id, chosen="A1")] == ["A1", "A2", "A3"]


def test_highlight_colours_read_in_the_light_and_the_dark_theme():
    """The text on every kind of highlight keeps a contrast of 4.5 or more, and each kind stands off the page."""
    for theme, palette in (("textual-dark", HIGHLIGHT_VARIABLES), ("textual-light", LIGHT_HIGHLIGHT_VARIABLES)):
        variables = BUILTIN_THEMES[theme].to_color_system().generate()
        text, surface = Color.parse(variables["foreground"]), Color.parse(variables["surface"])
        assert {name.removeprefix("highlight-") for name in palette} == set(review_evidence.LEGEND) | {"suggestion"}
        for name, value in palette.items():
            assert contrast(text.hex, value) >= 4.5, (theme, name, value)
            colour = Color.parse(value)
            assert max(abs(a - b) for a, b in zip(colour.rgb, surface.rgb)) >= 20, (theme, name, value)
        assert len(set(palette.values())) == len(palette)


def test_the_card_stands_in_columns_and_marks_what_can_disqualify(db):
    run_id = scripted_run(db, "keykeeper")
    view = RunView.open(db, run_id)
    m1, m2 = view.replies_to("m1")[0], view.replies_to("m2")[0]
    long_quote = "He counts the coins again at m1, writes a line in the ledger and the grate holds."
    give(db, run_id, item="T1", rubric="T", kind="score", score=2, quote=span(m1, long_quote))
    give(db, run_id, item="T2", rubric="T", kind="score", score=1, quote=span(m2, "Havel answers m2"))
    give(db, run_id, item="L1", kind="verdict", value="annulled", quote=span(m1, "Havel answers m1"))
    card = RunView.open(db, run_id).card("ada")
    rows = [row.text.plain for row in card_rows(card, lambda name: Style(), width=58)]
    t1 = next(r for r in rows if r.startswith("  T1 "))
    t2 = next(r for r in rows if r.startswith("  T2 "))
    t3 = next(r for r in rows if r.startswith("  T3 "))
    # id, value (right-aligned), verdict, quote: each in its column, a space or two between.
    assert re.fullmatch(r"  T1 +2  ✓ exact  +“He counts the coins again at m1…”", t1)  # the comma dropped
    assert t1.index("✓") == t2.index("✓") and t1.index("“") == t2.index("“")
    assert t1.index("2") == t2.index("1  ✓") and t3.index("–") == t1.index("2")
    assert "not scored" in t3
    assert len(t1) <= 58
    # The counters: the ones that can disqualify marked; L1 does, L2's yes/no is not judged, never "-".
    l1 = rows.index(next(r for r in rows if r.startswith("  L1 ")))
    assert re.match(r"  L1 ⚠ disqualifies +played out against annulled", rows[l1])
    assert rows[l1 + 1].strip() == "0 played out / 1 annulled (12 steps not judged)"
    assert re.match(r"  L2 ⚠ not judged +did the test reach", rows[l1 + 2])
    assert re.match(r"  L3   0 +events the world produced on its own", rows[l1 + 3])
    assert "⚠ can disqualify" in rows[l1 - 1] and "DISQUALIFIED by L1" in rows[1]


# -- the screen ------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_every_quote_is_highlighted_and_enter_on_the_card_selects_it(db):
    """Quotes given before the screen opens: drawn by kind, counted in the gutter, named under the cursor and the
    mouse; enter on the card's item selects its quote, `e` edits the annotation under the cursor."""
    run_id = scripted_run(db, "keykeeper")
    view = RunView.open(db, run_id)
    m1, m2 = view.replies_to("m1")[0], view.replies_to("m2")[0]
    t1 = give(db, run_id, item="T1", rubric="T", kind="score", score=2, quote=span(m1, "Havel answers m1"))
    l3 = give(db, run_id, item="L3", kind="count", quote=span(m1, "answers m1 #1"), note="the world moves")
    near = Quote(None, None, None, "He counts the coin again at m2, writes a line")
    r2 = give(db, run_id, item="R2", rubric="R", kind="score", score=1, quote=near)
    assert r2["verification"] == "fuzzy" and r2["quote_turn_id"] == m2["id"]
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        transcript = review.transcript
        assert transcript.highlights[m1["id"]] == [
            Highlight(t1["quote_start"], t1["quote_end"], "score", "exact", t1["id"]),
            Highlight(l3["quote_start"], l3["quote_end"], "counter", "exact", l3["id"]),
        ]
        assert transcript.highlights[m2["id"]] == [
            Highlight(r2["quote_start"], r2["quote_end"], "score", "fuzzy", r2["id"])
        ]
        await pilot.press("g", "1", "enter")  # m1's reply
        await wait_until(pilot, lambda: review.current_step() == "m1")
        # The colours on screen: T1 in the score's, the inner L3 over it in the event's, bold where they overlap.
        colour, style = highlight_colour(app, transcript, m1["id"], 2)
        assert colour == theme_colour(app, "highlight-score") and not style.bold
        colour, style = highlight_colour(app, transcript, m1["id"], l3["quote_start"] + 1)
        assert colour == theme_colour(app, "highlight-counter") and style.bold
        assert gutter_mark(transcript, m1["id"], 0) == "2"
        assert gutter_mark(transcript, m1["id"], m1["text"].index("He counts")) == " "
        # The cursor on the span: the line under the transcript names what is there, the one e edits first.
        transcript.focus()
        transcript.place_cursor(m1["id"], l3["quote_start"] + 1)
        await wait_until(pilot, on_screen(app, "2 here: L3 +1 · ada · ✓ exact · ✎ the world moves"))
        assert re.search(r"│  T1 2 · ada · ✓ exact +e edits L3", screen_text(app))
        # The mouse over R2's near quote in the next reply says so, without moving the cursor.
        await pilot.press("n", "n")
        await wait_until(pilot, lambda: review.current_step() == "m2")
        colour, style = highlight_colour(app, transcript, m2["id"], r2["quote_start"] + 3)
        assert colour == theme_colour(app, "highlight-score") and style.underline  # near, not word for word
        transcript.scroll_home(animate=False)
        await pilot.pause()
        line = transcript.text_layout.y_of(m2["id"], r2["quote_start"]) - transcript.scroll_offset.y
        await pilot.hover(transcript, offset=(GUTTER + 1 + 3, line))  # the padding, the gutter, into the text
        await wait_until(pilot, on_screen(app, "R2 1 · ada · ≈ 9"))
        assert transcript.cursor == (m2["id"], 0)
        await pilot.hover(review.query_one(ScoreCardView), offset=(5, 5))
        await wait_until(pilot, on_screen(app, "highlights:  score   event"))

        # enter on the card's T1: the reply to m1 again, T1's quote selected, ready to be scored again with s.
        await pilot.press("tab")
        await wait_until(pilot, lambda: review.query_one(ScoreCardView).has_focus)
        card = review.query_one(ScoreCardView)
        assert card.highlighted_key == "T1"
        await pilot.press("enter")
        await wait_until(pilot, lambda: transcript.selection is not None)
        assert transcript.selection == (t1["quote_turn_id"], t1["quote_start"], t1["quote_end"])
        assert review.selected_quote().text == t1["quote"] and review.current_step() == "m1"
        # e with the cursor on it: T1's own picker, its value and quote given.
        await pilot.press("e")
        await wait_until(pilot, overlay_is(app, Picker))
        picker = app.screen.query_one(Picker)
        assert picker.chosen.id == "T1" and picker.quote == t1["quote"]
        await wait_until(pilot, lambda: picker.query_one(ValueList).has_focus)
        await pilot.press("1", "enter")  # T1 = 1 now, the same quote
        await wait_until(pilot, lambda: RunView.open(db, run_id).card("ada").item("T1").low == 1)
        (edited,) = [a for a in notes.active(db, run_id, "ada") if a["item"] == "T1"]
        assert edited["supersedes"] == t1["id"] and edited["quote_start"] == t1["quote_start"]
        await wait_until(pilot, lambda: any(h.key == edited["id"] for h in transcript.highlights[m1["id"]]))
        # x with the cursor inside L3's quote (drawn over T1's): L3 goes, T1 stays.
        transcript.focus()
        transcript.place_cursor(m1["id"], l3["quote_start"] + 1)
        await pilot.press("x")
        await wait_until(pilot, lambda: {a["item"] for a in notes.active(db, run_id, "ada")} == {"T1", "R2"})
        await wait_until(pilot, lambda: [h.key for h in transcript.highlights[m1["id"]]] == [edited["id"]])


@pytest.mark.slow
async def test_search_hits_draw_over_the_evidence_and_leave_it_when_the_search_ends(db):
    run_id = scripted_run(db, "keykeeper")
    m1 = RunView.open(db, run_id).replies_to("m1")[0]
    t1 = give(db, run_id, item="T1", rubric="T", kind="score", score=2, quote=span(m1, "counts the coins again"))
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review, transcript = app.screen, app.screen.transcript
        await pilot.press("slash", *"coins again", "enter")
        await wait_until(pilot, lambda: review.search_text == "coins again")
        spans = transcript.highlights[m1["id"]]
        assert [h.style for h in spans] == ["score", "search"]  # the hit last: drawn on top
        await pilot.press("escape")
        await wait_until(pilot, lambda: review.search_text is None)
        assert transcript.highlights == {
            m1["id"]: [Highlight(t1["quote_start"], t1["quote_end"], "score", "exact", t1["id"])]
        }


@pytest.mark.slow
async def test_enter_in_the_list_and_a_click_on_the_card_go_to_the_quote(db):
    run_id = scripted_run(db, "keykeeper")
    view = RunView.open(db, run_id)
    m3, m5 = view.replies_to("m3")[0], view.replies_to("m5")[0]
    t3 = give(db, run_id, item="T3", rubric="T", kind="score", score=1, quote=span(m3, "writes a line"))
    l3 = give(db, run_id, item="L3", kind="count", quote=span(m5, "the grate holds"))
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review, transcript = app.screen, app.screen.transcript
        # A click on the card's T3 row: its quote selected, the card keeps the keys.
        card = review.query_one(ScoreCardView)
        row = next(i for i, r in enumerate(card.rows) if r.key == "T3")
        await pilot.click(card, offset=(4, row + 1 - card.scroll_offset.y))  # inside the border
        await wait_until(pilot, lambda: transcript.selection == (m3["id"], t3["quote_start"], t3["quote_end"]))
        assert review.current_step() == "m3"
        # enter on the list's L3 (the newest, first): its quote, and the keys back on the transcript.
        listed = review.query_one("#annotations")
        listed.focus()
        await wait_until(pilot, lambda: listed.highlighted_key == l3["id"])
        await pilot.press("enter")
        await wait_until(pilot, lambda: transcript.has_focus)
        assert transcript.selection == (m5["id"], l3["quote_start"], l3["quote_end"])
        await wait_until(pilot, on_screen(app, "L3 +1 · ada · ✓ exact   e edits L3"))
        # The light theme: the highlights and the line under them take its colours.
        app.theme = "textual-light"
        await wait_until(pilot, lambda: theme_colour(app, "highlight-counter") == "#e6b8ea")
        transcript.place_cursor(m5["id"], l3["quote_start"] + 1)
        await pilot.pause()
        colour, _ = highlight_colour(app, transcript, m5["id"], l3["quote_start"] + 1)
        assert colour == "#e6b8ea"


@pytest.mark.slow
async def test_a_listed_quote_that_names_its_turn_but_no_span_shows_the_turn_with_nothing_selected(db):
    """The record allows a quote's turn without its offsets (a quote not found keeps the turn it claimed)."""
    run_id = scripted_run(db, "keykeeper")
    view = RunView.open(db, run_id)
    m5 = view.replies_to("m5")[0]
    placeless = Verified(Quote(m5["id"], None, None, "words the reply never said"), "absent")
    notes.add(db, run_id, reviewer="ada", item="L3", kind="count", quote=placeless)
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review, transcript = app.screen, app.screen.transcript
        assert review.turns[review.position]["id"] != m5["id"]
        listed = review.query_one("#annotations")
        listed.focus()
        await wait_until(pilot, lambda: review.turns[review.position]["id"] == m5["id"])
        assert transcript.selection is None


@pytest.mark.slow
async def test_scoring_three_items_and_two_events_by_keys_highlights_five_quotes_and_enter_finds_them(db):
    """The issue's test: what a person presses, then what the transcript draws and where enter on the card goes."""
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        transcript = review.transcript

        async def picked(*keys: str, count: int) -> None:
            await wait_until(pilot, overlay_is(app, Picker))
            await pilot.press(*keys)
            await wait_until(pilot, lambda: len(notes.active(db, run_id, "ada")) == count)

        await pilot.press("g", "1", "enter")  # the reply to m1
        await wait_until(pilot, lambda: review.current_step() == "m1")
        await pilot.press("shift+end", "s")  # its first line: "Havel answers m1 #1 plainly."
        await picked(*"T1", "enter", "2", "enter", count=1)  # T1 = 2 (typing the value picks it), no note
        await pilot.press("down", "home", *["shift+right"] * 19, "l")  # "He counts the coins"
        await picked(*"L3", "enter", "enter", "enter", count=2)  # an event of L3
        await pilot.press("g", "2", "enter")
        await wait_until(pilot, lambda: review.current_step() == "m2")
        await pilot.press("shift+end", "s")
        await picked(*"T2", "enter", "1", "enter", count=3)  # T2 = 1
        await pilot.press("home", "shift+end", "l")  # the same line again: L1 on it, over T2
        await picked(*"L1", "enter", "enter", "enter", count=4)  # L1: played out
        await pilot.press("down", "home", *["right"] * 3, *["shift+right"] * 12, "s")  # "counts the c"
        await picked(*"R1", "enter", "1", "enter", count=5)  # R1 = 1

        given = {a["item"]: a for a in notes.active(db, run_id, "ada")}
        assert set(given) == {"T1", "L3", "T2", "L1", "R1"}
        assert all(a["verification"] == "exact" for a in given.values())
        drawn = {h.key: (turn, h) for turn, spans in transcript.highlights.items() for h in spans}
        assert len(drawn) == 5
        for item, kind in (("T1", "score"), ("T2", "score"), ("R1", "score"), ("L3", "counter"), ("L1", "counter")):
            a = given[item]
            turn, h = drawn[a["id"]]
            assert (turn, h.start, h.end, h.style, h.verdict) == (
                a["quote_turn_id"],
                a["quote_start"],
                a["quote_end"],
                kind,
                "exact",
            )
        # On screen, in the whole transcript: each in its kind's colour; L1 over T2 (the same span, the latest).
        await pilot.press("w")
        await wait_until(pilot, lambda: len(transcript.keys) == len(review.turns))
        transcript.focus()
        for item, variable in (
            ("T1", "highlight-score"),
            ("L3", "highlight-counter"),
            ("L1", "highlight-counter"),
            ("R1", "highlight-score"),
        ):
            a = given[item]
            colour, _ = highlight_colour(app, transcript, a["quote_turn_id"], a["quote_start"] + 2)
            assert colour == theme_colour(app, variable), item
        _, style = highlight_colour(app, transcript, given["T2"]["quote_turn_id"], given["T2"]["quote_start"] + 2)
        assert style.bold  # two quotes there
        assert gutter_mark(transcript, given["T2"]["quote_turn_id"], 0) == "2"

        # enter on the card's R1: its quote selected (what s would score with), scrolled into view.
        await pilot.press("tab")
        card = review.query_one(ScoreCardView)
        await wait_until(pilot, lambda: card.has_focus)
        card.highlight("R1")
        await pilot.press("enter")
        r1 = given["R1"]
        await wait_until(
            pilot, lambda: transcript.selection == (r1["quote_turn_id"], r1["quote_start"], r1["quote_end"])
        )
        assert review.selected_quote().text == r1["quote"]
        y = transcript.text_layout.y_of(r1["quote_turn_id"], r1["quote_start"])
        assert (
            transcript.scroll_offset.y <= y < transcript.scroll_offset.y + transcript.scrollable_content_region.height
        )
        # enter on L3, a counter: its event's quote.
        card.highlight("L3")
        await pilot.press("enter")
        l3 = given["L3"]
        await wait_until(
            pilot, lambda: transcript.selection == (l3["quote_turn_id"], l3["quote_start"], l3["quote_end"])
        )
        assert "L3 +1 · ada · ✓ exact" in screen_text(app)


@pytest.mark.slow
async def test_a_blind_review_highlights_the_masked_text_at_the_same_places(db):
    run_id = make_run(db)
    reply = RunView.open(db, run_id).replies()[0]
    named = give(db, run_id, item="L6", kind="count", quote=span(reply, "I am GPT-6 Astra"), note="says OpenAI")
    app = SieveApp(db, Endpoints(), "ada", first=lambda: ReviewScreen(RunView.open(db, run_id, blind=True)))
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review, transcript = app.screen, app.screen.transcript
        assert review.blind
        (h,) = transcript.highlights[reply["id"]]
        assert (h.start, h.end, h.style) == (named["quote_start"], named["quote_end"], "counter")
        assert transcript.text_of(reply["id"])[h.start : h.end] == "I am ▒▒▒▒▒ ▒▒▒▒▒"
        colour, _ = highlight_colour(app, transcript, reply["id"], h.start + 6)
        assert colour == theme_colour(app, "highlight-counter")
        transcript.place_cursor(reply["id"], h.start + 6)
        await wait_until(pilot, on_screen(app, "L6 +1 · ada · ✓ exact · ✎ says ▒▒▒▒▒▒"))
        await pilot.press("w")  # the whole transcript: the same
        await wait_until(pilot, lambda: len(transcript.keys) == 2)
        assert transcript.highlights[reply["id"]] == [h]
        await pilot.press("tab")
        card = review.query_one(ScoreCardView)
        await wait_until(pilot, lambda: card.has_focus)
        card.highlight("L6")
        await pilot.press("enter")
        await wait_until(pilot, lambda: transcript.selection == (reply["id"], h.start, h.end))
        shown = screen_text(app).lower()
        for word in FORBIDDEN:
            assert word not in shown, word


def test_the_kinds_of_highlight_cover_every_kind_of_annotation():
    assert set(review_evidence.HIGHLIGHT_OF) == set(notes.KINDS)
    assert set(review_evidence.HIGHLIGHT_OF.values()) <= set(HIGHLIGHT_KINDS)
    assert {f"highlight--{k}" for k in HIGHLIGHT_KINDS} <= TranscriptView.COMPONENT_CLASSES


def test_the_train_key_highlights_deductions_and_judgments_in_their_own_kinds(db):
    run_id = scripted_run(db, "train")
    turn7 = RunView.open(db, run_id).replies_to("turn7")[0]
    cut = give(db, run_id, item="key", rubric="key", kind="deduction", score=0.5, quote=span(turn7, "Havel answers"))
    prose = give(
        db, run_id, item="prose", rubric="key", kind="judgment", note="Plain.", quote=span(turn7, "the grate holds")
    )
    spans = review_evidence.highlights(notes.active(db, run_id, "ada"))[turn7["id"]]
    assert {(h.key, h.style) for h in spans} == {(cut["id"], "deduction"), (prose["id"], "judgment")}
    assert scenarios.load("train").rubrics[0].deductions is not None
