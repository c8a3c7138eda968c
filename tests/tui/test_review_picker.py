"""A reviewer's day in Review (issue 26): the picker shows the item it saves, keys never become values by
accident, a disqualifying value is asked about, escape never leaves Review by surprise, and undo says what it undid.

Every test presses the keys a person would press and checks what the screen shows and what the database holds.
"""

from __future__ import annotations

import statistics
import textwrap

import pytest

from sieve import scenarios
from sieve.store.record import annotations as notes
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.home import HomeScreen
from sieve.tui.screens.picker_entries import Entry
from sieve.tui.screens.pickers import Confirm, Picker, ValueList
from sieve.tui.screens.review import ReviewScreen
from tests.support.judge_drafts import JUDGE, store_judge_draft
from tests.support.review_runs import review_app, scripted_run
from tests.support.tui_helpers import (
    no_overlay,
    on_screen,
    open_overlays,
    overlay_is,
    screen_is,
    screen_text,
    wait_until,
)

KEYKEEPER = scenarios.load("keykeeper")

# A scenario written outside the project, as the reviewer met it: a counter first (X1), a verdict that
# disqualifies on `out` (X2) judged on s1 and s2, a probe asked at s3.
LIGHTHOUSE = textwrap.dedent(
    """\
    [scenario]
    name = "lighthouse"
    title = "The lighthouse"
    version = 1

    [scales.points]
    values = [0, 1, 2]

    [[steps]]
    id = "s0"
    kind = "setup"
    text = "You keep the lighthouse; I am Mara, rowing in from the storm."

    [[steps]]
    id = "s1"
    text = "I tie the boat to the ring and knock."

    [[steps]]
    id = "s2"
    text = "I ask whether the lamp has ever gone out."

    [[steps]]
    id = "s3"
    text = "Do you still have the cord I left here last winter?"

    [[rubrics]]
    id = "Q"
    title = "keeping the world"
    scale = "points"
    max = 2

    [[rubrics.items]]
    id = "Q1"
    steps = ["s2"]
    text = "the keeper answers from what the lamp has done"

    [[counters]]
    id = "X1"
    title = "speaks for Mara"
    kind = "count"
    text = "Each time the reply makes Mara speak or act."

    [[counters]]
    id = "X2"
    title = "the lamp"
    kind = "verdict"
    values = ["lit", "out"]
    steps = ["s1", "s2"]
    disqualifying = true
    disqualify_on = "out"

    [[probes]]
    id = "P-cord"
    kind = "memory"
    title = "the cord left last winter"
    text = "the cord Mara left at the lighthouse"
    planted = ["s1"]
    asked = ["s3"]
    """
)


@pytest.fixture
def lighthouse(db, tmp_path):
    path = tmp_path / "lighthouse.toml"
    path.write_text(LIGHTHOUSE, encoding="utf-8")
    return scripted_run(db, str(path))


def picker_of(app) -> Picker:
    return app.screen.query_one(Picker)


def shown_item(picker: Picker) -> tuple[str | None, str, str, list[str]]:
    """What the picker shows as the item it will save: the entry highlighted in its list, the first word of the
    detail (the item's own text and anchors), the first word of its heading, and the values offered."""
    entries = picker.query_one("#entries")
    highlighted = entries.get_option_at_index(entries.highlighted).id if entries.highlighted is not None else None
    detail = str(picker.query_one("#detail").render()).split()[0]
    heading = str(picker.query_one("#heading").render()).split(":")[0]
    values = picker.query_one(ValueList)
    return highlighted, detail, heading, [v.id for v in values.values] if values.display else []


def entry_of(picker: Picker, entry_id: str) -> Entry:
    return next(e for e in picker.entries if e.id == entry_id)


def best_key(entry: Entry) -> str:
    """The key of the value a reviewer of a good run gives: the top score, else the first value that keeps it in."""
    if entry.kind == "score":
        return max(entry.values, key=lambda v: float(v.id.split(":")[0])).key_hint
    return next(v for v in entry.values if not v.disqualifies).key_hint


@pytest.mark.slow
async def test_i_walks_a_whole_keykeeper_card_showing_each_item_it_saves_in_at_most_five_keys_an_item(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    keys_per_item = []
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        while not RunView.open(db, run_id).card("ada").complete:
            saved_before = len(notes.active(db, run_id, "ada"))
            await pilot.press("i")
            await wait_until(pilot, overlay_is(app, Picker))
            offered = review.offered
            picker = picker_of(app)
            assert offered is not None and picker.chosen is not None
            # The item the header offers is the one the picker highlights, describes and offers values of.
            entry = entry_of(picker, offered.id)
            assert shown_item(picker) == (offered.id, offered.id, offered.id, [v.id for v in entry.values])
            assert f"next to score: {offered.label}" in str(review.header.render())  # the header, under the picker
            # The quote: the sentence under the cursor (`.`), shown in the picker; then the value's key, enter.
            keys = ["full_stop", *best_key(entry), "enter"]
            await pilot.press(*keys)
            await wait_until(pilot, lambda n=saved_before: len(notes.active(db, run_id, "ada")) == n + 1)
            saved = notes.active(db, run_id, "ada")[-1]
            assert saved["item"] == offered.id, f"the picker showed {offered.id}, {saved['item']} was saved"
            assert saved["verification"] == "exact" and saved["quote"].startswith("Havel answers ")
            assert review.transcript.selection is None  # the quote spent: nothing carries over to the next item
            keys_per_item.append(1 + len(keys))  # i, then the keys in the picker
        await wait_until(pilot, on_screen(app, "complete: every item, step and probe is scored"))
    card = RunView.open(db, run_id).card("ada")
    assert card.progress.text() == "scored 22/22" and not card.disqualified_by
    mean = statistics.mean(keys_per_item)
    # Before issue 26: shift+end (a line, cut mid-sentence), the id typed (2), enter, the value, enter: 6 keys,
    # and 7 with a second line (shift+down) to end the sentence. With `i` and `.`: i . 2 enter.
    print(f"keykeeper card from scratch: {len(keys_per_item)} items, {sum(keys_per_item)} keys, {mean:.1f} an item")
    assert len(keys_per_item) == 22 + 13 + 1  # the items, L1 on each of its 13 steps, L2
    assert max(keys_per_item) <= 5 and mean <= 5


@pytest.mark.slow
async def test_the_picker_opened_by_i_shows_the_offered_verdict_and_typed_text_never_becomes_its_value(db, lighthouse):
    app = review_app(db, lighthouse)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("i")  # at s1: X2 is judged here
        await wait_until(pilot, overlay_is(app, Picker))
        assert review.current_step() == "s1" and review.offered.id == "X2"
        picker = picker_of(app)
        assert shown_item(picker) == ("X2", "X2", "X2", ["value:lit", "value:out"])  # not X1's heading
        assert "X1 speaks for Mara" not in str(picker.query_one("#detail").render())
        assert "2  out   ⚠ disqualifies the run" in screen_text(app)  # the key beside each value, and its danger

        # The reviewer forgets the picker is open: `l` to count, then the probe's id, then enter.
        await pilot.press("l", *"P-cord", "enter")
        await pilot.pause()
        assert notes.active(db, lighthouse) == []  # nothing saved: the letters went into the filter
        assert picker.query_one("#filter").value == "lP-cord" and not picker.query_one(ValueList).display
        assert picker.chosen is None
        # The same without the `l`: the probe found by its id, its marks offered, nothing saved.
        await pilot.press("ctrl+u", *"P-cord", "enter")
        await wait_until(pilot, lambda: picker.chosen is not None and picker.chosen.id == "P-cord")
        assert shown_item(picker)[:3] == ("P-cord", "P-cord", "P-cord")
        await pilot.press(*"out")  # a word typed at the marks: the filter again, never a mark
        await pilot.pause()
        assert notes.active(db, lighthouse) == [] and picker.chosen is None
        assert picker.query_one("#filter").value == "out"
        await pilot.press("enter")  # the entry the filter found (X2: "out" is one of its values), no value yet
        await wait_until(pilot, lambda: picker.chosen is not None and picker.chosen.id == "X2")
        assert picker.value is None and notes.active(db, lighthouse) == []
        await pilot.press("escape")  # one press closes the picker, and Review stays
        await wait_until(pilot, no_overlay(app))
        assert isinstance(app.screen, ReviewScreen) and notes.active(db, lighthouse) == []

        # A value that disqualifies the run is asked about: no, and nothing is saved; yes, and it is.
        await pilot.press("l")  # the picker on X2 again: escaping it left X2 offered
        await _picker_with_values(app, pilot, "X2")
        await pilot.press("full_stop", "2", "enter")
        await wait_until(pilot, overlay_is(app, Confirm))
        assert app.screen.query_one(Confirm).message.startswith("X2 = out disqualifies the run.")
        await pilot.press("n")
        await wait_until(pilot, no_overlay(app))
        assert notes.active(db, lighthouse) == []
        await pilot.press("l")
        await _picker_with_values(app, pilot, "X2")
        await pilot.press("full_stop", "2", "enter")
        await wait_until(pilot, overlay_is(app, Confirm))
        await pilot.press("y")
        await wait_until(pilot, lambda: len(notes.active(db, lighthouse)) == 1)
        (verdict,) = notes.active(db, lighthouse)
        assert (verdict["item"], verdict["value"], verdict["step_id"]) == ("X2", "out", "s1")
        await wait_until(pilot, on_screen(app, "DISQUALIFIED by X2"))


@pytest.mark.slow
async def test_a_letter_at_an_l1_verdict_goes_to_the_filter_and_a_note_is_only_what_is_typed_after_a_value(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("g", "3", "enter")
        await wait_until(pilot, lambda: app.screen.current_step() == "m3")
        await pilot.press("l", *"L1", "enter")  # the verdict's values, with the keys
        picker = await _picker_with_values(app, pilot, "L1")
        await pilot.press("p")  # the first letter of "played out": not a key of the verdict
        await pilot.pause()
        assert picker.chosen is None and picker.query_one("#filter").value == "p"
        assert not picker.query_one("#note").display  # the letter is no note either
        await pilot.press("ctrl+u", *"L1", "enter")
        await _picker_with_values(app, pilot, "L1")
        await pilot.press("1")  # played out: the note is asked for
        await wait_until(pilot, lambda: picker.query_one("#note").has_focus)
        await pilot.press("up")  # ↑: back to the values, nothing saved
        await wait_until(pilot, lambda: picker.query_one(ValueList).has_focus)
        await pilot.press("1", *"calm", "enter")
        await wait_until(pilot, lambda: len(notes.active(db, run_id)) == 1)
        (verdict,) = notes.active(db, run_id)
        assert (verdict["value"], verdict["note"]) == ("played out", "calm")


async def _picker_with_values(app, pilot, entry_id: str) -> Picker:
    await wait_until(pilot, overlay_is(app, Picker))
    picker = picker_of(app)
    await wait_until(pilot, lambda: picker.chosen is not None and picker.chosen.id == entry_id)
    await wait_until(pilot, lambda: picker.query_one(ValueList).has_focus)
    return picker


@pytest.mark.slow
async def test_the_quote_keys_move_the_selection_inside_the_picker_and_the_quote_shown_is_the_one_saved(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("i")  # T1 at m1, the cursor at the reply's start, nothing selected
        await wait_until(pilot, overlay_is(app, Picker))
        picker = picker_of(app)
        assert picker.quote is None and "(nothing selected: no quote)" in screen_text(app)
        await pilot.press("full_stop")
        await wait_until(pilot, lambda: picker.quote == "Havel answers m1 #1 plainly.")
        await pilot.press("greater_than_sign")  # and the next sentence
        second = "He counts the coins again at m1, writes a line in the ledger and the grate holds."
        await wait_until(pilot, lambda: picker.quote == "Havel answers m1 #1 plainly.\n" + second)
        await pilot.press("ctrl+shift+left", "ctrl+shift+left")  # two words fewer
        expected = "Havel answers m1 #1 plainly.\n" + second.removesuffix(" grate holds.")
        await wait_until(pilot, lambda: picker.quote == expected)
        assert "quote: Havel answers m1 #1 plainly." in screen_text(app)
        await pilot.press("2", "enter")
        await wait_until(pilot, lambda: len(notes.active(db, run_id)) == 1)
        (t1,) = notes.active(db, run_id)
        assert (t1["item"], t1["quote"], t1["verification"]) == ("T1", expected, "exact")


@pytest.mark.slow
async def test_escape_closes_a_picker_a_search_or_a_walk_in_one_press_and_leaves_review_only_from_its_plain_state(db):
    run_id = scripted_run(db, "keykeeper")
    store_judge_draft(db, run_id)
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        # A picker at its last stage (the note): one escape closes it all.
        await pilot.press("full_stop", "s", *"T1", "enter", "2")
        await wait_until(pilot, lambda: picker_of(app).query_one("#note").has_focus)
        await pilot.press("escape")
        await wait_until(pilot, no_overlay(app))
        assert app.screen is review and notes.active(db, run_id, "ada") == []
        # A search: escape ends it, Review stays.
        await pilot.press("slash", *"ledger", "enter")
        await wait_until(pilot, lambda: review.search_text == "ledger")
        await pilot.press("escape")
        await wait_until(pilot, lambda: review.search_text is None)
        assert app.screen is review
        # A walk of the judge's draft: escape ends it, Review stays.
        await pilot.press("A")
        await wait_until(pilot, lambda: review.walking)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not review.walking)
        assert app.screen is review
        # The plain state: one escape leaves.
        await pilot.press("escape")
        await wait_until(pilot, screen_is(app, HomeScreen))


@pytest.mark.slow
async def test_undo_and_redo_say_what_they_undid_and_redid(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("g", "3", "enter")
        await wait_until(pilot, lambda: app.screen.current_step() == "m3")
        await pilot.press("full_stop", *"T3", "enter", "2", "enter")
        await wait_until(pilot, lambda: len(notes.active(db, run_id)) == 1)
        await pilot.press("e")  # the cursor is on what was just saved: e edits it
        await _picker_with_values(app, pilot, "T3")
        await pilot.press("1", "enter")
        await wait_until(pilot, lambda: notes.active(db, run_id)[0]["score"] == 1)
        await pilot.press("u")
        await wait_until(pilot, lambda: said(app, "undid T3 = 1 (T3 = 2 is back)"))
        await pilot.press("u")
        await wait_until(pilot, lambda: said(app, "undid T3 = 2"))
        await pilot.press("U")
        await wait_until(pilot, lambda: said(app, "redid T3 = 2"))
        await pilot.press("x")
        await wait_until(pilot, lambda: notes.active(db, run_id) == [])
        await pilot.press("u")
        await wait_until(pilot, lambda: said(app, "undid the deletion of T3 = 2"))
        assert [a["score"] for a in notes.active(db, run_id)] == [2]


def said(app, text: str) -> bool:
    return any(n.message == text for n in app._notifications)


@pytest.mark.slow
async def test_the_header_marks_an_exact_quote_with_a_tick_and_a_score_without_one_as_such(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("g", "1", "2", "enter")  # m12: R6 and L1 are scored here
        await wait_until(pilot, lambda: app.screen.current_step() == "m12")
        await pilot.press(*"R6", "enter", "1", "enter")  # no quote: asked, then marked low
        await wait_until(pilot, overlay_is(app, Confirm))
        await pilot.press("y")
        await wait_until(pilot, lambda: len(notes.active(db, run_id)) == 1)
        await pilot.press("full_stop", *"L1", "enter", "1", "enter")
        await wait_until(pilot, lambda: len(notes.active(db, run_id)) == 2)
        await wait_until(pilot, on_screen(app, "scored here:"))
        header = str(app.screen.header.render())
        assert "R6 1 no quote" in header and "L1 played out ✓" in header


@pytest.mark.slow
async def test_the_transcript_selects_by_words_sentences_and_clicks(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("g", "2", "enter")
        await wait_until(pilot, lambda: review.current_step() == "m2")

        def quote() -> str | None:
            q = review.selected_quote()
            return q.text if q else None

        await pilot.press("ctrl+shift+right", "ctrl+shift+right")
        await wait_until(pilot, lambda: quote() == "Havel answers")
        await pilot.press("ctrl+right")  # a word on, nothing selected
        await wait_until(pilot, lambda: quote() is None)
        await pilot.press("full_stop")
        await wait_until(pilot, lambda: quote() == "Havel answers m2 #1 plainly.")
        await pilot.press("greater_than_sign", "greater_than_sign")
        await wait_until(pilot, lambda: (quote() or "").endswith("the letter waits on the shelf."))
        area = review.transcript
        await pilot.double_click(area, offset=(10, 1))  # "answers", on the first line of the reply (a title above)
        await wait_until(pilot, lambda: quote() == "answers")
        await pilot.triple_click(area, offset=(10, 2))  # the second line: its sentence, whole
        await wait_until(pilot, lambda: (quote() or "").startswith("He counts the coins again at m2"))
        assert (quote() or "").endswith("the grate holds.")


@pytest.mark.slow
async def test_a_adopts_the_judges_score_with_the_span_selected_where_the_judges_quote_is_no_evidence(db):
    run_id = scripted_run(db, "keykeeper")
    store_judge_draft(db, run_id, absent=("T1",))
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("g", "1", "enter")  # m1: T1 (and L1) scored here; T1 the one item
        await wait_until(pilot, lambda: app.screen.current_step() == "m1")
        await pilot.press("a")
        await wait_until(
            pilot, lambda: any("a adopts it with the span selected" in n.message for n in app._notifications)
        )
        assert notes.active(db, run_id, "ada") == []
        await pilot.press("full_stop", "a")  # as it says: a span selected, then a
        await wait_until(pilot, lambda: len(notes.active(db, run_id, "ada")) == 1)
        (t1,) = notes.active(db, run_id, "ada")
        assert (t1["item"], t1["quote"], t1["verification"]) == ("T1", "Havel answers m1 #1 plainly.", "exact")
        assert not open_overlays(app)


@pytest.mark.slow
async def test_a_value_typed_in_the_walk_before_its_quote_is_written_as_the_scale_writes_it(db):
    run_id = scripted_run(db, "keykeeper")
    store_judge_draft(db, run_id, absent=("T1",))
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("A")
        await wait_until(pilot, lambda: review.walking and review.walk_proposal.task.id == "T1")
        await pilot.press("1")  # the judge's quote is no evidence: the value waits for a quote
        await wait_until(pilot, lambda: "your value: 1" in str(review.proposal_line.render()))
        assert "your value: 1.0" not in str(review.proposal_line.render())


@pytest.mark.slow
async def test_adopting_a_judges_verdict_that_disqualifies_the_run_is_asked_about_first(db):
    run_id = scripted_run(db, "keykeeper")
    store_judge_draft(db, run_id)
    view = RunView.open(db, run_id)
    reply = view.replies_to("m1")[0]
    quote = Quote(reply["id"], 0, 28, reply["text"][:28])  # "Havel answers m1 #1 plainly."
    evidence.annotate(db, run_id, quote=quote, view=view, reviewer=JUDGE, item="L1", kind="verdict", value="annulled")
    app = review_app(db, run_id)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("A")
        await wait_until(pilot, lambda: review.walking and review.walk_proposal.task.id == "T1")
        await pilot.press("y")  # T1: adopted at once
        await wait_until(pilot, lambda: review.walk_proposal is not None and review.walk_proposal.task.id == "L1")
        await pilot.press("y")  # L1 at m1: annulled, which disqualifies the run
        await wait_until(pilot, overlay_is(app, Confirm))
        assert "L1 = annulled at m1 disqualifies the run." in app.screen.query_one(Confirm).message
        await pilot.press("n")
        await wait_until(pilot, no_overlay(app))
        assert [a["item"] for a in notes.active(db, run_id, "ada")] == ["T1"]  # declined: not adopted
        assert review.walking and review.walk_proposal.task.id == "L1"  # still on it
        await pilot.press("y")
        await wait_until(pilot, overlay_is(app, Confirm))
        await pilot.press("y")
        await wait_until(pilot, lambda: len(notes.active(db, run_id, "ada")) == 2)
        assert notes.active(db, run_id, "ada")[-1]["value"] == "annulled"
