"""Review's keys, in one list: where a key is bound twice, the first binding whose action applies wins
(ReviewScreen.check_action says which apply), so the order here is part of what each key does.

Every binding has an id (users remap keys by it, the Pilot tests press them) and a tooltip.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

BINDINGS: list[BindingType] = [
    # While walking the draft, n skips (before n, the next turn).
    Binding("n", "draft_skip", "Skip", id="review.draft_skip", tooltip="Walking the draft: skip this item"),
    Binding("n", "turn(1)", "Next turn", id="review.next_turn", tooltip="The next turn"),
    Binding("n", "hit(1)", "Next hit", id="review.next_hit", tooltip="The next place the search found"),
    Binding("p", "turn(-1)", "Prev turn", id="review.prev_turn", tooltip="The previous turn"),
    Binding("N", "hit(-1)", "Prev hit", id="review.prev_hit", tooltip="The previous place the search found"),
    Binding("g", "goto_step", "Step…", id="review.goto_step", tooltip="Go to step N (its number or its id)"),
    Binding("c", "goto_chapter", "Chapter…", id="review.goto_chapter", tooltip="Go to chapter N"),
    Binding(
        "i",
        "next_item",
        "Next unscored",
        id="review.next_item",
        tooltip="Go to the next thing left to score, with the picker open on it",
    ),
    Binding(
        "r",
        "next_run",
        "Next run",
        id="review.next_run",
        tooltip="Open the next run of this scenario that you have not finished",
    ),
    Binding("slash", "search", "Search", id="review.search", tooltip="Search the transcript; n / N move"),
    Binding(
        "s", "score", "Score", id="review.score", tooltip="Score a rubric item with the selected span as its quote"
    ),
    Binding("l", "count", "Count", id="review.count", tooltip="Record a counted event or a probe's mark"),
    Binding(
        "m",
        "excerpt",
        "Excerpt",
        id="review.excerpt",
        tooltip="Mark the selected passage as an excerpt, with a caption (the report's excerpts page); scores nothing",
    ),
    Binding("u", "undo", "Undo", id="review.undo", tooltip="Undo the last annotation, and say what (undid T3 = 2)"),
    Binding("U,ctrl+y", "redo", "Redo", id="review.redo", tooltip="Redo what was undone, and say what"),
    Binding(
        "e",
        "edit",
        "Edit",
        id="review.edit",
        tooltip="Change the annotation under the cursor (else the one highlighted in the list)",
    ),
    # On a current suggestion, x rejects it (before x, delete).
    Binding("x", "reject_suggestion", "Reject", id="review.reject_suggestion", tooltip="Reject the current suggestion"),
    Binding(
        "x,delete",
        "delete",
        "Delete",
        id="review.delete",
        tooltip="Delete the annotation under the cursor (else the one highlighted in the list)",
    ),
    Binding(
        "R",
        "reveal",
        "Reveal",
        id="review.reveal",
        tooltip="Blind review: show which model this is (once every item is scored)",
    ),
    Binding(
        "w",
        "whole",
        "Whole transcript",
        id="review.whole",
        tooltip="All turns in one scrolling view, or one turn at a time",
    ),
    Binding("f", "card", "Card", id="review.card", tooltip="The whole score card, or only the rubric of this step"),
    # What machines propose (proposals.py, draft_walk.py).
    Binding(
        "right_square_bracket",
        "suggestion(1)",
        "Next suggestion",
        id="review.next_suggestion",
        tooltip="The next suggestion pending: its span selected, y accepts, x rejects, e accepts and edits",
    ),
    Binding(
        "left_square_bracket",
        "suggestion(-1)",
        "Prev suggestion",
        id="review.prev_suggestion",
        tooltip="The previous suggestion pending",
    ),
    Binding(
        "y",
        "accept_suggestion",
        "Accept",
        id="review.accept_suggestion",
        tooltip="Accept the current suggestion: its span becomes your quote, verified",
    ),
    Binding("y", "draft_accept", "Adopt", id="review.draft_accept", tooltip="Walking the draft: adopt the judge's"),
    Binding(
        "enter",
        "draft_quote",
        "Adopt with quote",
        id="review.draft_quote",
        tooltip="Walking the draft: adopt with the span selected as the quote",
    ),
    Binding(
        "a",
        "adopt",
        "Adopt",
        id="review.adopt",
        tooltip="Adopt the judge's score and quote for the item highlighted on the card (or the step's one item)",
    ),
    Binding(
        "A",
        "walk_draft",
        "Walk draft",
        id="review.walk_draft",
        tooltip="Go through the judge's draft: y adopt, a digit another value, enter the selected quote, n skip",
    ),
    # escape ends the walk, else the search, else goes back.
    Binding("escape", "end_walk", "End walk", id="review.end_walk", tooltip="Stop walking the judge's draft"),
    Binding("escape", "end_search", "End search", id="review.end_search", tooltip="Stop searching; n is next turn"),
    Binding(
        "escape",
        "back",
        "Back",
        id="review.back",
        tooltip="Back to where you came from (a picker, a search or a walk open: escape closes that instead)",
    ),
]

WRITES = ("score", "count", "excerpt", "undo", "redo", "edit", "delete")  # hidden in a read-only database
SEARCHING = ("hit", "end_search")  # keys that mean something only while a search is on
WALK_ACTIONS = ("draft_accept", "draft_skip", "draft_quote", "end_walk")  # only while walking a judge's draft
PROPOSING = ("accept_suggestion", "reject_suggestion", "adopt", "walk_draft", *WALK_ACTIONS)  # these write too
