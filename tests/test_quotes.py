"""Quote verification on hand-made turns: normalisation, offsets, pieces, the player's words, fuzzy spans."""

from __future__ import annotations

import unicodedata

from sieve.store.scoring.quotes import normalise, pieces, verify, without_diacritics

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


CZECH = "Havel se na minci ani nepodívá. Přisune ji prstem zpátky k\u00a0okraji stolu a řekne: „Klíč se neprodává.“"


def czech_turns(text: str) -> list[dict]:
    return [{"id": "a1", "idx": 1, "role": "assistant", "text": text}]


def test_nfd_and_nfc_forms_verify_the_same_way_at_the_same_place():
    quote = "Přisune ji prstem zpátky k okraji stolu"
    for text in (CZECH, unicodedata.normalize("NFD", CZECH)):
        expected = None
        for form in ("NFC", "NFD"):
            found = verify(czech_turns(text), unicodedata.normalize(form, quote))
            assert found.verdict == "exact" and found.similarity == 1.0
            expected = expected or (found.start, found.end)
            assert (found.start, found.end) == expected
        # The span holds the accents of its last letter, in the turn's own form.
        assert unicodedata.normalize("NFC", text[expected[0] : expected[1]]) == quote.replace("k o", "k\u00a0o")


def test_normalising_decomposed_text_maps_back_to_whole_letters():
    text = unicodedata.normalize("NFD", "žluťoučký kůň")
    n = normalise(text)
    assert n.text == "žluťoučký kůň"
    at = n.text.index("kůň")
    assert n.span(at, at + 3) == (text.rindex("k"), len(text))
    assert n.span(0, 1) == (0, 2)  # ž is z and its háček


def test_unicode_spaces_and_invisible_characters_are_folded_on_both_sides():
    text = "Jen\u202fv\u00a0noci, kdy\u200b je brána za\u00advřená, a ﬁnále"
    turns = czech_turns(text)
    found = verify(turns, "jen v noci, kdy je brána zavřená, a finále")
    assert found.verdict == "exact" and turns[0]["text"][found.start : found.end] == text
    assert verify(turns, "kdy\u2009je\u00a0brána").verdict == "exact"


def test_a_czech_quote_that_differs_only_by_its_diacritics_is_fuzzy():
    for quote in ("Prisune ji prstem zpatky k okraji stolu", "Klic se neprodava", "klíc se neprodava"):
        found = verify(czech_turns(CZECH), quote)
        assert found.verdict == "fuzzy" and found.similarity < 1, quote
        assert without_diacritics(normalise(CZECH[found.start : found.end]).text) == without_diacritics(
            normalise(quote).text
        )
    # Letters changed, not only diacritics: a short quote is not matched fuzzily.
    assert verify(czech_turns(CZECH), "Klíč se prodává").verdict == "absent"
