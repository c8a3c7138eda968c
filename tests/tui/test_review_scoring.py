"""Scoring whole runs in Review by keystroke: everything the seeds score can be entered, and the card says
when a run is complete.

Every test presses the keys a person would press and checks the screen and the database.
"""

from __future__ import annotations

import json
import re
import statistics

import pytest
from click.testing import CliRunner

from sieve import scenarios
from sieve.cli import main
from sieve.store.record import annotations as notes
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.pickers import Confirm, Picker, ValueList
from sieve.tui.screens.review import ReviewScreen
from tests.support.review_runs import review_app, scripted_run
from tests.support.tui_helpers import no_overlay, on_screen, overlay_is, screen_is, screen_text, wait_until

KEYKEEPER = scenarios.load("keykeeper")


def notified(app, text: str) -> bool:
    """Whether a notification holding `text` is showing (it wraps on the screen)."""
    return any(text in n.message for n in app._notifications)


async def go_to_step(pilot, app, number: int) -> None:
    await pilot.press("g", *str(number), "enter")
    await wait_until(pilot, on_screen(app, f"step {number} of "))


@pytest.mark.slow
async def test_the_keykeeper_test_scored_whole_by_keystroke_with_six_keys_or_fewer_per_item(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    numbers = {s.id: n for n, s in enumerate(KEYKEEPER.steps)}  # m0 is the setup, step 0
    # What to score, where: each stepped item at its step, L1 on each of its steps, the whole-run ones last.
    plan: list[tuple[str | None, str, str]] = []  # (step, id, value typed; "" for a count's one value)
    for rubric in KEYKEEPER.rubrics:
        for item in rubric.all_items():
            plan.append((item.steps[0] if item.steps else None, item.id, "1" if item.bonus else "2"))
    plan += [(step, "L1", "1") for step in KEYKEEPER.counter("L1").steps]  # 1: played out, the first value
    plan += [(None, "L2", "1"), (None, "L3", ""), (None, "L4", ""), (None, "L5", "3")]
    plan += [(None, "L6", ""), (None, "L7", ""), (None, "L8", "")]
    plan.sort(key=lambda p: numbers[p[0]] if p[0] else len(numbers))
    assert len(plan) == 12 + 4 + 6 + 13 + 7

    keystrokes = []
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        for n, (step, item_id, value) in enumerate(plan):
            where = step or "m13"
            if review.current_step() != where:
                await pilot.press("g", *str(numbers[where]), "enter")
                await wait_until(pilot, lambda w=where: review.current_step() == w, what=f"step {where}")
            # The quote: the sentence under the cursor (after a save, the next one). Then the item's id typed
            # straight away, Enter, the value, Enter.
            keys = ["full_stop", *item_id, "enter", *(value or ["enter"]), "enter"]
            await pilot.press(*keys)
            await wait_until(pilot, lambda n=n: len(notes.active(db, run_id, "ada")) == n + 1, what=f"{item_id} saved")
            keystrokes.append(len(keys))
        card = RunView.open(db, run_id).card("ada")
        assert card.complete, card.progress.text()
        await wait_until(pilot, on_screen(app, "complete: every item, step and probe is scored"))
        shown = screen_text(app)
        assert "T 24+4 / 24+4   R 12 / 12" in shown and "(partial)" not in shown
        assert "13 played out / 0 annulled" in shown and "DISQUALIFIED" not in shown

    assert card.progress.text() == "scored 22/22"
    given = notes.active(db, run_id, "ada")
    assert all(a["quote"] and a["verification"] == "exact" for a in given)
    assert all(a["seconds"] is not None and a["seconds"] >= 0 for a in given)  # from the picker opening to saving
    verdicts = {a["step_id"]: a["value"] for a in given if a["item"] == "L1"}
    assert verdicts == {step: "played out" for step in KEYKEEPER.counter("L1").steps}
    median = statistics.median(keystrokes)
    print(f"keystrokes per scored item with a quote (selecting it included): median {median}, max {max(keystrokes)}")
    assert median <= 6


@pytest.mark.slow
async def test_a_verdict_on_a_step_its_counter_does_not_list_is_refused_and_a_second_one_replaces_the_first(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50), notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        # The reply to message 0, the setup: L1 does not judge it.
        await pilot.press("shift+end", *"L1", "enter", "1", "enter")
        await wait_until(pilot, lambda: notified(app, "L1 is judged only on the steps it lists (m1 … m13, 13 in all)"))
        assert notes.active(db, run_id) == []

        # T1 on the same reply: it is judged on m1, so the quote is off its step. Asked before, nothing saved on n.
        await pilot.press("shift+end", *"T1", "enter", "2", "enter")
        await wait_until(pilot, overlay_is(app, Confirm))
        assert "T1 is judged on m1: this quote is off its step" in screen_text(app)
        await pilot.press("n")
        await wait_until(pilot, no_overlay(app))
        assert notes.active(db, run_id) == []

        await go_to_step(pilot, app, 3)
        await pilot.press("shift+end", "l", *"L1", "enter", "1", "enter")
        await wait_until(pilot, lambda: len(notes.active(db, run_id)) == 1)
        await wait_until(pilot, on_screen(app, "L1 played out ✓"))  # the header: scored here
        await pilot.press("l", *"L1", "enter", "2", "enter")  # annulled, on the same step: it replaces
        await wait_until(pilot, overlay_is(app, Confirm))  # it disqualifies the run: asked first
        await pilot.press("y")
        await wait_until(pilot, on_screen(app, "0 played out / 1 annulled (12 steps not judged)"))
        (verdict,) = notes.active(db, run_id)
        assert (verdict["value"], verdict["step_id"]) == ("annulled", "m3")
        assert "L1 │ annulled │ m3 │" in screen_text(app)  # the annotations list: a verdict shows its step
        await pilot.press("u")  # one gesture: undo brings the first verdict back
        await wait_until(pilot, on_screen(app, "1 played out / 0 annulled (12 steps not judged)"))
        assert [(a["value"], a["step_id"]) for a in notes.active(db, run_id)] == [("played out", "m3")]


@pytest.mark.slow
async def test_a_story_card_with_unmarked_probes_is_not_complete(db, tmp_path):
    story = scenarios.load("story-5")
    run_id = scripted_run(db, "story-5")
    view = RunView.open(db, run_id)
    for item in story.rubrics[0].items:
        step = item.steps[0] if item.steps else "c2-river"
        turn = view.replies_to(step)[0]
        quote = Quote(turn["id"], 0, 24, turn["text"][:24])
        evidence.annotate(db, run_id, reviewer="ada", item=item.id, rubric="C", kind="score", score=3, quote=quote)
    card = RunView.open(db, run_id).card("ada")
    assert card.rubrics_scored and not card.complete
    probes = len(story.probes)
    assert card.progress.text() == f"scored 10/10 · {probes} probes"
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, on_screen(app, f"scored 10/10 · {probes} probes"))
        assert "not yet scored: P-" in screen_text(app)
        assert "complete" not in screen_text(app)
        # The next thing left is a probe: i goes to the step that asks it, the picker open on it.
        await pilot.press("i")
        await wait_until(pilot, overlay_is(app, Picker))
        order = [s.id for s in story.steps]
        first = min(story.probes, key=lambda p: order.index(p.asked[0]))  # the one asked earliest in the script
        picker = app.screen.query_one(Picker)
        assert picker.chosen is not None and picker.chosen.id == first.id
        assert view.steps[app.screen.turns[app.screen.position]["id"]] == first.asked[0]
    result = CliRunner().invoke(
        main, ["results", "--scenario", "story-5", "--format", "json", "--db", str(tmp_path / "sieve.db")]
    )
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["progress"] == f"scored 10/10 · {probes} probes" and all(row[p.id] is None for p in story.probes)


@pytest.mark.slow
async def test_a_value_is_typed_and_an_edit_opens_on_the_saved_item_value_and_note(db):
    run_id = scripted_run(db, "story-5")
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("n", "n", "shift+end", "s", *"C4", "enter")
        await wait_until(pilot, lambda: app.screen.query_one(ValueList).has_focus)
        await pilot.press("5")  # on 1–5, a digit is final at once
        await pilot.press(*"vivid", "enter")
        await wait_until(pilot, lambda: len(notes.active(db, run_id)) == 1)
        (saved,) = notes.active(db, run_id)
        assert (saved["item"], saved["score"], saved["note"]) == ("C4", 5, "vivid")
        await pilot.press("tab", "tab")
        await wait_until(pilot, lambda: app.focused is app.screen.query_one("#annotations"))
        await pilot.press("e")
        await wait_until(pilot, overlay_is(app, Picker))
        values = app.screen.query_one(ValueList)
        assert values.get_option_at_index(values.highlighted).id == "5.0:"  # on its own value
        await pilot.press("3", "enter")  # the note is there already: Enter keeps it
        await wait_until(pilot, lambda: notes.active(db, run_id)[0]["score"] == 3)
        (edited,) = notes.active(db, run_id)
        assert (edited["note"], edited["supersedes"]) == ("vivid", saved["id"])


def cli(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow
async def test_a_train_deduction_and_written_judgment_entered_in_review_reach_the_card_results_and_exports(
    db, tmp_path
):
    train = scenarios.load("train")
    run_id = scripted_run(db, "train")
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("g", "7", "enter")
        await wait_until(pilot, lambda: review.current_step() == "turn7")
        # T7 scored, then half a point off on this turn for a contradiction, with its quote.
        await pilot.press("shift+end", *"T7", "enter", "1", "enter")
        # After a save nothing is selected: the line is selected again (home, shift+end).
        await pilot.press("home", "shift+end", "s", *"deduct", "enter")
        await wait_until(pilot, lambda: review.query_one(ValueList).has_focus)
        await pilot.press("h", "enter", *"cuff on the floor", "enter")  # h: ½ (a letter, so enter takes it)
        # The written judgment of the T7/T8 prose: its text is the note, the selected line its quote.
        await pilot.press("home", "shift+end", "s", *"prose", "enter")
        await pilot.press(*"Concrete verbs, short beats.", "enter")
        await wait_until(pilot, lambda: len(notes.active(db, run_id, "ada")) == 3)
        await wait_until(pilot, on_screen(app, "deducted outside the items: −½ (at most 1½)"))
        shown = screen_text(app)
        assert "key ½ / 8 (partial)" in shown  # T7 1, less ½
        assert re.search(r"−½  ✓ exact +“Havel answers turn7 #1 plainly.”", shown)
        assert re.search(r"prose  ✎  ✓ exact +written “Concrete verbs, short beats.”", shown)
        assert "scored here: T7 1 ✓" in shown and "prose written ✓" in shown
    given = {a["kind"]: a for a in notes.active(db, run_id, "ada")}
    deduction, judgment = given["deduction"], given["judgment"]
    assert (deduction["item"], deduction["rubric"], deduction["score"], deduction["step_id"]) == (
        "key",
        "key",
        0.5,
        "turn7",
    )
    assert deduction["note"] == "cuff on the floor" and deduction["verification"] == "exact"
    assert (judgment["item"], judgment["note"], judgment["verification"]) == (
        "prose",
        "Concrete verbs, short beats.",
        "exact",
    )

    # A second reviewer, so that agreement has people to compare.
    view = RunView.open(db, run_id)
    reply = view.replies_to("turn7")[0]
    quote = Quote(reply["id"], 0, 12, reply["text"][:12])
    for item in ("T7",):
        evidence.annotate(db, run_id, reviewer="bo", item=item, rubric="key", kind="score", score=1, quote=quote)
    evidence.annotate(db, run_id, reviewer="bo", item="key", rubric="key", kind="deduction", score=1.0, quote=quote)

    path = tmp_path / "sieve.db"
    rows = json.loads(cli("results", "--scenario", "train", "--reviewer", "ada", "--format", "json", "--db", path))
    assert (rows[0]["key"], rows[0]["key deducted"], rows[0]["key prose"]) == (
        "0.5 (partial)",
        "0.5",
        "Concrete verbs, short beats.",
    )
    for fmt in ("table", "csv", "md"):
        text = cli("results", "--scenario", "train", "--reviewer", "ada", "--format", fmt, "--db", path)
        assert "key deducted" in text and "key prose" in text and "Concrete verbs, short beats." in text
    both = json.loads(cli("results", "--scenario", "train", "--format", "json", "--db", path))[0]
    assert both["key deducted"] == "0.75"  # the mean of ½ and 1
    markdown = cli("export", run_id, "--format", "md", "--db", path).replace("\\", "")
    assert "deducted outside the items: 0.5 (at most 1.5), ½ at turn 15 (turn7)" in markdown
    assert "written judgment prose: Concrete verbs, short beats." in markdown
    assert "| key | −½ | exact | 15 |" in markdown
    bundle = json.loads(cli("export", run_id, "--format", "json", "--db", path))
    kinds = {(a["kind"], a["item"], a["score"]) for a in bundle["annotations"]}
    assert {("deduction", "key", 0.5), ("judgment", "prose", None), ("deduction", "key", 1.0)} <= kinds
    agreement = json.loads(cli("results", "--scenario", "train", "--agreement", "--format", "json", "--db", path))
    by_item = {r["item"]: r for r in agreement}
    assert by_item["key deducted"]["people"] == 2 and by_item["key deducted"]["people_runs"] == 1
    assert by_item["key prose (written)"]["people"] == 1 and by_item["key prose (written)"]["people_value"] is None
    assert train.rubrics[0].deductions.maximum == 1.5


@pytest.mark.slow
async def test_search_moves_between_hits_and_escape_gives_n_back_to_the_turns(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("slash", *"ledger and", "enter")
        # The words together, in every reply: 14 hits, the first selected (ready to be a quote), all highlighted.
        await wait_until(pilot, lambda: review.search_text == "ledger and")
        assert len(review.hits) == 14 and review.selected_quote().text == "ledger and"
        assert set(review.transcript.highlights) == {t["id"] for t in review.turns if t["role"] == "assistant"}
        assert "search “ledger and”: 1 of 14" in screen_text(app)
        keys = {b.key: b.description for _, b, enabled, _ in review.active_bindings.values() if enabled}
        assert keys["n"] == "Next hit" and keys["N"] == "Prev hit" and keys["escape"] == "End search"
        await pilot.press("n", "n")
        await wait_until(pilot, lambda: review.hit_index == 2)
        assert review.current_step() == "m2" and review.selected_quote().text == "ledger and"
        await pilot.press("N")
        await wait_until(pilot, lambda: review.current_step() == "m1")
        # Words that never stand together: each, in the turns holding them all (the full-text index finds them).
        await pilot.press("slash", "ctrl+u", *"shelf coins", "enter")
        await wait_until(pilot, lambda: review.search_text == "shelf coins")
        assert {review.transcript.turns and h.turn_id for h in review.hits} <= {t["id"] for t in review.turns}
        assert len(review.hits) == 28  # two words in each of the 14 replies
        await pilot.press("escape")
        await wait_until(pilot, lambda: review.search_text is None)
        assert review.transcript.highlights == {}
        position = review.position
        await pilot.press("n")  # the next turn again
        await wait_until(pilot, lambda: review.position == position + 1)


@pytest.mark.slow
async def test_going_to_a_step_a_chapter_and_the_next_run_that_needs_scoring(db):
    story = scenarios.load("story-5")
    first, done, other = scripted_run(db, "story-5"), scripted_run(db, "story-5"), scripted_run(db, "story-5")
    view = RunView.open(db, done)  # one run finished by ada: r passes it by
    for item in story.rubrics[0].items:
        turn = view.replies_to(item.steps[0] if item.steps else "c2-river")[0]
        quote = Quote(turn["id"], 0, 10, turn["text"][:10])
        evidence.annotate(db, done, reviewer="ada", item=item.id, rubric="C", kind="score", score=3, quote=quote)
    for probe in story.probes:
        turn = view.replies_to(probe.asked[0])[0]
        evidence.annotate(
            db, done, reviewer="ada", item=probe.id, kind="probe", value=probe.marks[0], turn_id=turn["id"]
        )
    assert RunView.open(db, done).card("ada").complete
    app = review_app(db, first)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("c", "4", "enter")  # chapter 4, The storm: its first step's reply
        await wait_until(pilot, lambda: review.current_step() == "c4-storm")
        await wait_until(pilot, on_screen(app, "chapter 4: The storm"))
        assert review.turns[review.position]["role"] == "assistant"
        assert story.step("c4-storm").note[:40] in " ".join(screen_text(app).split())
        await pilot.press("g", *"c1-leap", "enter")  # a step by its id
        await wait_until(pilot, lambda: review.current_step() == "c1-leap")
        assert "scored here: C6 –" in screen_text(app)
        await pilot.press("g", "9", "9", "enter")
        await wait_until(pilot, lambda: notified(app, "no step 99"))
        await pilot.press("r")  # the next run ada has not finished: not `done`, but `other`
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.run_id == other)
        await pilot.press("r")  # and round again to the first
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.run_id == first)


@pytest.mark.slow
async def test_at_100_by_30_the_transcript_keeps_half_the_width_and_the_card_shows_the_steps_rubric(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        assert review.transcript.outer_size.width >= 50
        await pilot.press("g", *"12", "enter")  # m12: R6 is scored here, so the card shows rubric R
        await wait_until(pilot, lambda: review.current_step() == "m12")
        await wait_until(pilot, on_screen(app, "R6  –  not scored"))
        shown = screen_text(app)
        assert "T the sieve  0+0 / 24+4  0 of 16 scored" in shown and "T1  –  not scored" not in shown
        assert "f: the whole card" in shown
        await pilot.press("f")
        await wait_until(pilot, on_screen(app, "T1  –  not scored"))
        assert review.transcript.outer_size.width >= 50
