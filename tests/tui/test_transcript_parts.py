"""The transcript's parts that need no running widget: the cursor and the selection, a line's marks and cuts, the turns."""

from __future__ import annotations

from rich.style import Style

from sieve.tui.widgets.layout import Block, Layout
from sieve.tui.widgets.transcript_cursor import Caret
from sieve.tui.widgets.transcript_lines import Highlight, line_mark, line_segments, text_segments
from sieve.tui.widgets.transcript_turns import TurnBlocks


def layout_of(*texts: str, width: int = 10) -> Layout:
    layout = Layout(width)
    layout.set_blocks([Block(key=f"t{i}", title=f"turn {i}", text=text) for i, text in enumerate(texts)])
    return layout


# A style of its own for each name a line asks for, so a test reads which a piece was drawn in.
FLAGS = {
    "highlight--score": "bold",
    "highlight--exact": "italic",
    "highlight--note": "underline",
    "overlap": "strike",
    "selection": "blink",
    "cursor": "reverse",
}


def flagged(name: str) -> Style:
    return Style(**{FLAGS[name]: True}) if name in FLAGS else Style()


def turn(idx: int, text: str, **more) -> dict:
    return {
        "id": f"t{idx}",
        "idx": idx,
        "role": "assistant",
        "status": "complete",
        "text": text,
        "alt": 0,
        "chosen": 1,
    } | more


def test_the_cursor_starts_at_the_first_turn_and_leaves_a_turn_at_its_edges():
    layout = layout_of("abc", "defgh")
    assert Caret().moved(layout_of(), 1, 0) is None  # nothing to move over
    assert Caret().moved(layout, 1, 0) == Caret(("t0", 1))
    assert Caret(("t0", 3)).moved(layout, 1, 0) == Caret(("t1", 0))  # past the end: the next turn's start
    assert Caret(("t1", 0)).moved(layout, -1, 0) == Caret(("t0", 3))  # before the start: the last turn's end
    assert Caret(("t0", 2)).moved(layout, 0, 1) == Caret(("t1", 2))  # down, at the same column
    assert Caret(("t1", 5)).moved(layout, 1, 0) == Caret(("t1", 5))  # the last turn's end stays


def test_a_selection_grows_from_where_it_began_and_stays_in_its_turn():
    layout = layout_of("abc", "defgh")
    caret = Caret(("t0", 1)).moved(layout, 1, 0, extend=True)
    assert caret == Caret(("t0", 2), ("t0", 1)) and caret.selection == ("t0", 1, 2)
    caret = caret.moved(layout, 5, 0, extend=True)
    assert caret.selection == ("t0", 1, 3)  # stopped at the turn's end
    assert caret.moved(layout, 0, 1, extend=True).cursor == ("t0", 3)  # not down into the next turn
    assert caret.moved(layout, 1, 0).anchor is None  # a plain move ends the selection
    assert Caret(("t0", 2), ("t0", 2)).selection is None  # empty
    assert caret.to_line_edge(layout, -1, extend=True).selection == ("t0", 0, 1)


def test_a_drag_past_its_turn_stops_at_the_turn_s_edge():
    layout = layout_of("abc", "defgh", "ij")
    dragging = Caret(("t1", 2), ("t1", 2))
    assert dragging.dragged_to(layout, ("t2", 1)) == Caret(("t1", 5), ("t1", 2))
    assert dragging.dragged_to(layout, ("t0", 1)) == Caret(("t1", 0), ("t1", 2))
    assert Caret(("t1", 2)).dragged_to(layout, ("t1", 4)) is None  # no drag began


def test_the_gutter_counts_the_annotations_on_a_line_and_marks_a_search_hit():
    assert line_mark([], 0, 10) == ""
    assert line_mark([Highlight(2, 4, "search")], 0, 10) == "•"
    assert line_mark([Highlight(2, 4, "score", key="a"), Highlight(3, 5, "note", key="a")], 0, 10) == "•"
    assert line_mark([Highlight(i, i + 1, "score", key=str(i)) for i in range(3)], 0, 10) == "3"
    assert line_mark([Highlight(i, i + 1, "score", key=str(i)) for i in range(10)], 0, 10) == "+"
    assert line_mark([Highlight(12, 14, "score", key="a")], 0, 10) == ""  # on another line


def test_a_line_is_cut_where_its_styles_change_and_two_annotations_overlapping_show():
    block = Block(key="t0", title="turn 0", text="abcdefghij")
    block.relayout(20)
    highlights = [Highlight(2, 6, "score", "exact", key="a"), Highlight(4, 8, "note", key="b")]
    pieces = text_segments(block, 0, 10, Style(), flagged, highlights, (7, 9), 9)
    assert [(p.text, p.style) for p in pieces] == [
        ("ab", Style()),
        ("cd", Style(bold=True, italic=True)),
        ("ef", Style(bold=True, italic=True, underline=True, strike=True)),  # two annotations: the overlap shows
        ("g", Style(underline=True)),
        ("h", Style(underline=True, blink=True)),  # the selection over an annotation
        ("i", Style(blink=True)),
        ("j", Style(reverse=True)),  # the cursor
    ]


def test_a_cursor_at_the_end_of_a_turn_is_drawn_past_its_last_character():
    block = Block(key="t0", title="turn 0", text="abc")
    block.relayout(20)
    drawn = line_segments(block, "text", 0, flagged, "assistant", False, [], None, 3)
    assert [(p.text, p.style) for p in drawn][2:] == [("abc", Style()), (" ", Style(reverse=True))]
    title = line_segments(block, "title", 0, flagged, "assistant", True, [], None, None)
    assert [p.text for p in title] == ["▌", "▶", "turn 0"]  # the selected turn (Play)


def test_a_new_alternative_takes_the_place_of_the_turn_at_its_position():
    turns = TurnBlocks(exact=True)
    turns.set_turns([turn(0, "hi"), turn(1, "there")], {})
    assert turns.show(turn(1, "again", id="t1b"), alternatives=2) == "t1"
    assert turns.keys == ["t0", "t1b"] and list(turns.turns) == ["t0", "t1b"]
    assert turns.layout["t1b"].title == "1 · model · alternative 1 of 2 (chosen)"


def test_streamed_text_waits_for_the_frame_and_a_flood_slows_the_frames():
    turns = TurnBlocks(exact=False)
    turns.set_turns([turn(0, "")], {})
    turns.pending["t0"] = ["one ", "\x1b two"]  # two deltas (the widget appends them)
    assert turns.layout["t0"].text == "" and turns.text_of("t0") == "one \\x1b two"
    turns.flush()
    assert turns.layout["t0"].text == "one \\x1b two" and not turns.pending and turns.frame == 0.05
    turns.pending["t0"] = ["x" * 5000]
    turns.flush()
    assert turns.frame == 0.25


def test_sentences_end_at_their_marks_and_closing_quotes_and_at_a_line_break_never_inside_a_number():
    from sieve.tui.widgets.text_spans import sentence_at, sentence_end_after, sentences

    text = "„Dobrý den,“ řekl Havel. „Kolik mincí?“ Tři.\nJarla mlčí… Pak: 3.5 dne!  Konec"
    said = [text[a:b] for a, b in sentences(text)]
    assert said == ["„Dobrý den,“ řekl Havel.", "„Kolik mincí?“", "Tři.", "Jarla mlčí…", "Pak: 3.5 dne!", "Konec"]
    assert text[slice(*sentence_at(text, 3))] == "„Dobrý den,“ řekl Havel."
    gap = text.index(" „Kolik")  # between two sentences: the one after
    assert text[slice(*sentence_at(text, gap))] == "„Kolik mincí?“"
    assert text[slice(*sentence_at(text, len(text)))] == "Konec"  # at the very end: the last
    first_end = text.index(".") + 1
    assert text[: sentence_end_after(text, first_end)] == "„Dobrý den,“ řekl Havel. „Kolik mincí?“"
    middle = text.index("řekl")  # a selection ending inside a sentence: to that sentence's end
    assert sentence_end_after(text, middle) == first_end
    assert sentence_at("", 0) is None and sentence_end_after(text, len(text)) is None
    # A question quoted inside a sentence does not end it; a line break always does.
    quoted = 'The key is in the phrase "How many days have I left?" he said. „Kolik dní?“ zeptal se.\nkonec'
    assert [quoted[a:b] for a, b in sentences(quoted)] == [
        'The key is in the phrase "How many days have I left?" he said.',
        "„Kolik dní?“ zeptal se.",
        "konec",
    ]


def test_words_hold_their_apostrophes_and_hyphens_and_a_selection_by_words_has_no_loose_ends():
    from sieve.tui.widgets.text_spans import word_at, word_end_after, word_start_before

    text = "He didn't step out-of-game, said Jarla."
    assert text[slice(*word_at(text, 5))] == "didn't" and text[slice(*word_at(text, 17))] == "out-of-game"
    assert word_at(text, 2) is None  # on a space
    assert word_end_after(text, 0) == 2 and word_end_after(text, 2) == text.index(" step")
    assert word_start_before(text, len(text)) == text.index("Jarla")
    layout = layout_of(text, width=80)
    caret = Caret(cursor=("t0", 0))
    for _ in range(3):
        caret = caret.by_word(layout, 1, extend=True)
    assert caret.selection == ("t0", 0, text.index(" out"))  # "He didn't step"
    caret = caret.by_word(layout, -1, extend=True)  # a word fewer: the space before it left out
    assert caret.selection == ("t0", 0, text.index(" step"))
    assert Caret(cursor=("t0", 0)).by_word(layout, 1).selection is None  # ctrl+→ moves, selects nothing
    sentence = Caret(cursor=("t0", 8)).sentence(layout)
    assert sentence is not None and sentence.selection == ("t0", 0, len(text))
    assert Caret().word(layout, ("t0", 4)).selection == ("t0", 3, 9)  # a double click on "didn't"
