"""Quote verification on hand-made turns: normalisation, offsets, pieces, the player's words, fuzzy spans."""

from __future__ import annotations

from sieve.store.scoring.quotes import normalise, pieces, verify

TURNS = [
    {"id": "u0", "idx": 0, "role": "user", "text": "I hand him one silver coin. \u201cCome on, Havel.\u201d"},
    {
        "id": "a1",
        "idx": 1,
        "role": "assistant",
        "text": "Havel turns the coin over \u2014 twice.\n\n\u201cThree days,\u201d he says\u2026  and leaves the   bowl.",
    },
    {"id": "u2", "idx": 2, "role": "user", "text": "I search the cell, every crack and crevice."},
    {
        "id": "a3",
        "idx": 3,
        "role": "assistant",
        "text": "You find nothing but dust and a cold draught from the window. The keykeeper writes a line in his ledger.",
    },
]


def test_normalising_keeps_offsets_into_the_original():
    text = "A\u2014\u201cB\u201d\u2026  C"
    n = normalise(text)
    assert n.text == 'a-"b"... c'
    assert n.span(0, len(n.text)) == (0, len(text))
    at = n.text.index("...")
    assert n.span(at, at + 3) == (text.index("\u2026"), text.index("\u2026") + 1)


def test_exact_after_case_quotes_dashes_spacing_and_ellipsis():
    found = verify(TURNS, '"three days," HE SAYS... and leaves the bowl')
    assert (found.verdict, found.turn_id, found.similarity) == ("exact", "a1", 1.0)
    assert TURNS[1]["text"][found.start : found.end] == "\u201cThree days,\u201d he says\u2026  and leaves the   bowl"
    found = verify(TURNS, "turns the coin over - twice")
    assert found.verdict == "exact" and TURNS[1]["text"][found.start : found.end] == "turns the coin over \u2014 twice"


def test_pieces_joined_by_an_ellipsis_are_found_in_order_in_one_turn():
    assert pieces("...he says … and leaves...") == ["he says", "and leaves"]
    found = verify(TURNS, "Havel turns the coin … leaves the bowl")
    assert found.verdict == "exact" and found.turn_id == "a1"
    assert TURNS[1]["text"][found.start : found.end].startswith("Havel turns the coin")
    assert TURNS[1]["text"][found.start : found.end].endswith("bowl")
    assert verify(TURNS, "leaves the bowl … Havel turns the coin").verdict == "absent"  # out of order
    assert verify(TURNS, "Havel turns the coin … a line in his ledger").verdict == "absent"  # two turns


def test_the_players_own_words_are_flagged():
    found = verify(TURNS, "every crack and crevice")
    assert (found.verdict, found.turn_id) == ("player", "u2")
    # Words found in a model turn too count as the model's.
    assert verify(TURNS, "silver coin").verdict == "player"
    assert verify(TURNS, "the coin over").verdict == "exact"


def test_typos_are_fuzzy_and_the_span_covers_the_whole_quote():
    found = verify(TURNS, "You find nothing but dust and a cold draugt from the windw.")
    assert found.verdict == "fuzzy" and found.turn_id == "a3" and 0.9 <= found.similarity < 1
    assert TURNS[3]["text"][found.start : found.end] == "You find nothing but dust and a cold draught from the window."


def test_paraphrases_and_inventions_are_absent():
    assert verify(TURNS, "There is only dust in the cell and a chilly wind").verdict == "absent"
    assert verify(TURNS, "Havel burns the letter in front of her").verdict == "absent"
    assert verify(TURNS, "").verdict == "absent"
