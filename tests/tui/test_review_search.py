"""Review's `/` matches as `sieve search` does (issue 26 §5): one matcher, diacritics and word order folded,
prefixes and word forms, and every word highlighted."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import turns as record
from sieve.store.scoring import navigation
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.review import ReviewScreen
from tests.support.review_runs import review_app
from tests.support.tui_helpers import screen_is, screen_text, wait_until

KEYKEEPER = scenarios.load("keykeeper")
REPLIES = [
    "Havel zvedne klíč ze stolu.\nPodá ti stříbrnou minci a mlčí.",
    "Klíče visí na hřebíku; o minci už nemluví.",
    "Stříbrnou lžičkou míchá kaši, pak položí na stůl jednu minci.",
]


def czech_run(db) -> str:
    run_id = store.create_run(db, KEYKEEPER, model="engine/1", endpoint="fake", settings={})
    for n, (step, repeat) in enumerate(KEYKEEPER.script()[: len(REPLIES)]):
        origin = "setup" if step.kind == "setup" else "script"
        record.add_turn(
            db, run_id, idx=2 * n, role="user", origin=origin, text=step.text, step_id=step.id, step_repeat=repeat
        )
        record.add_turn(db, run_id, idx=2 * n + 1, role="assistant", origin="reply", text=REPLIES[n])
    record.set_run_status(db, run_id, "complete")
    return run_id


def words_at(view: RunView, hits) -> list[str]:
    text = {t["id"]: t["text"] for t in view.turns}
    return [text[h.turn_id][h.start : h.end] for h in hits]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("klic", ["klíč", "Klíče"]),  # without diacritics; inside a longer form too
        ("minc*", ["minci", "minci", "minci"]),
        ("mince", ["minci", "minci", "minci"]),  # another form of the word
        # Side by side in one reply: that place, both words; apart in another: each.
        ("stribrnou minci", ["stříbrnou minci", "Stříbrnou", "minci"]),
        ("minci stribrnou", ["stříbrnou", "minci", "Stříbrnou", "minci"]),  # never side by side in this order
    ],
)
def test_review_finds_what_sieve_search_finds(db, tmp_path, query, expected):
    run_id = czech_run(db)
    view = RunView.open(db, run_id)
    hits = navigation.find(view, query)
    replies = {t["id"] for t in view.turns if t["role"] == "assistant"}
    assert words_at(view, [h for h in hits if h.turn_id in replies]) == expected
    # The same turns as the command line's search of this run.
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    result = CliRunner().invoke(main, ["search", *query.split(), "--run", run_id, "--json", "--db", path])
    assert result.exit_code == 0, result.output
    assert {h["turn_id"] for h in json.loads(result.output)} == {h.turn_id for h in hits}


@pytest.mark.slow
async def test_slash_klic_finds_klic_and_two_words_highlight_both(db):
    run_id = czech_run(db)
    view = RunView.open(db, run_id)
    first = next(t for t in view.turns if t["role"] == "assistant")
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("slash", *"klic", "enter")
        await wait_until(pilot, lambda: review.search_text == "klic")
        assert "Not found" not in screen_text(app)
        assert len(review.hits) == 2 and review.selected_quote().text == "klíč"
        assert "search “klic”: 1 of 2" in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: review.search_text is None)

        await pilot.press("slash", *"stribrnou minci", "enter")
        await wait_until(pilot, lambda: review.search_text == "stribrnou minci")
        marks = [h for h in review.transcript.highlights[first["id"]] if h.style == "search"]
        marked = [first["text"][h.start : h.end] for h in marks]
        assert marked == ["stříbrnou minci"]  # both words, not only the one written as it stands
        assert review.selected_quote().text == "stříbrnou minci"
