"""An item nobody scored reads as unscored, never as 0 (QA cli #18): `results` showed `L1 played out 0 /
annulled 0` and `L3`–`L8` 0 for runs nobody counted on, and the Markdown card said "6 of 8 judged" when nothing
was counted. A count of nothing is 0 (none seen) once the reviewer has been counting on the run, or has scored
the rest of the card."""

from __future__ import annotations

from sieve.store.record import annotations as notes
from sieve.store.scoring import markdown, results
from sieve.store.scoring.runview import RunView
from tests.support.review_runs import scripted_run
from tests.support.scores import score

COUNTS = ("L3", "L4", "L5", "L6", "L7", "L8")


def md_lines(db, run_id: str) -> list[str]:
    view = RunView.open(db, run_id)
    return markdown.card_section(view, "ada", view.card("ada"))


def test_counters_nobody_counted_on_read_as_unscored_in_results_and_the_markdown_card(db):
    run_id = scripted_run(db, "keykeeper")
    score(db, run_id, "T1", 2)  # ada has a card, and has counted nothing
    row = results.run_row(RunView.open(db, run_id))
    assert row["T"] is not None
    assert all(row[c] is None for c in COUNTS), {c: row[c] for c in COUNTS}
    assert row["L1 played out"] is None and row["L1 annulled"] is None
    lines = md_lines(db, run_id)
    assert any(line.endswith(": 0 of 8 judged") for line in lines), lines
    assert any(line.startswith("- L3 ") and line.endswith(": not counted") for line in lines), lines
    assert any(line.startswith("- L1 ") and line.endswith(": not judged") for line in lines), lines

    # Counting once on the run: every count reads as a figure, 0 where nothing was seen; a verdict as its tally.
    notes.add(db, run_id, reviewer="ada", item="L3", kind="count")
    notes.add(db, run_id, reviewer="ada", item="L1", kind="verdict", value="played out", step_id="m1")
    row = results.run_row(RunView.open(db, run_id))
    assert (row["L3"], row["L4"]) == ("1", "0")
    assert (row["L1 played out"], row["L1 annulled"]) == ("1", "0")
    lines = md_lines(db, run_id)
    assert any(line.startswith("- L4 ") and line.endswith(": 0") for line in lines), lines
