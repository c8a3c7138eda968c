"""The labelled corpus: quotes cut from transcripts the local model wrote (and a Czech one written by hand), each with what it is.

Every exact and near-exact quote is found in the right turn, every paraphrase and
invention is absent, every quote of the player's own words is flagged. In Czech, a
quote in the other Unicode form (NFD against NFC) is exact at the same place, and one
typed without its diacritics is fuzzy. A quote with a negation added or removed, in
either language, is altered (found, but no evidence).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from sieve.store.scoring.quotes import FUZZY_CUTOFF, Transcript, normalise

DATA = Path(__file__).resolve().parent / "data"
ENGLISH = json.loads((DATA / "transcripts.json").read_text(encoding="utf-8"))["runs"]
CZECH = json.loads((DATA / "transcripts_cs.json").read_text(encoding="utf-8"))["runs"]
RUNS = ENGLISH + CZECH
QUOTES = json.loads((DATA / "quotes.json").read_text(encoding="utf-8"))
TRANSCRIPTS = [Transcript([dict(t, id=f"{n}:{t['idx']}") for t in run["turns"]]) for n, run in enumerate(RUNS)]
EXPECTED = {
    "exact": {"exact"},
    "variant": {"exact"},
    "cut": {"exact"},
    "typo": {"fuzzy"},
    "player": {"player"},
    "paraphrase": {"absent"},
    "invented": {"absent"},
    "decomposed": {"exact"},
    "diacritics": {"fuzzy"},
    "negated": {"altered"},
}
CZECH_ONLY = {"decomposed", "diacritics"}


def test_the_corpus_has_every_label_from_both_english_transcripts_and_the_czech_one():
    labels = defaultdict(set)
    for q in QUOTES:
        labels[q["label"]].add(q["run"])
    assert set(labels) == set(EXPECTED)
    assert all(runs == ({2} if label in CZECH_ONLY else {0, 1, 2}) for label, runs in labels.items())
    assert sum(q["run"] < 2 for q in QUOTES) >= 150 and sum(q["run"] == 2 for q in QUOTES) >= 60


@pytest.mark.parametrize("case", QUOTES, ids=[f"{q['label']}-{i}" for i, q in enumerate(QUOTES)])
def test_each_labelled_quote_gets_its_verdict_in_the_right_turn(case):
    """Given with the turn it was cut from, as a judge gives it (and a person's selection places it)."""
    transcript = TRANSCRIPTS[case["run"]]
    found = transcript.locate(case["quote"], prefer_turn=f"{case['run']}:{case['turn']}")
    assert found.verdict in EXPECTED[case["label"]], (found, case)
    if found.verdict == "absent":
        return
    turn = RUNS[case["run"]]["turns"][[t["idx"] for t in RUNS[case["run"]]["turns"]].index(found.turn_idx)]
    source = case["source"] or case["quote"]
    first_piece = normalise(source).text.split("...")[0].strip(" .")[:20]
    # Right turn: the one the quote was cut from, or one holding the same words (the model repeats itself).
    assert found.turn_idx == case["turn"] or first_piece in normalise(turn["text"]).text
    span = turn["text"][found.start : found.end]
    if case["label"] == "decomposed":  # the same place as the quote in the turn's own form
        assert (found.turn_idx, found.start, found.end) == (case["turn"], *at(transcript, case["source"]))
        assert span == case["source"]
    if case["label"] in ("exact", "player"):
        # The very span, but for an ellipsis at either end (it reads as "cut here").
        assert normalise(span).text.strip(". ") == normalise(case["quote"]).text.strip(". ")
    if case["label"] == "typo":  # the span covers the whole quote, not a window of it
        assert abs(len(span) - len(case["source"])) <= 3 and span.split()[-1][:3] == case["source"].split()[-1][:3]


def test_a_quote_the_model_wrote_in_several_turns_is_ambiguous_without_its_turn():
    """The model repeats itself: a quote standing in several of its replies points at none of them until the
    turn it claims places it. Claiming a turn it is not in does not place it either."""
    repeated = []
    for case in QUOTES:
        if case["label"] != "exact":
            continue
        transcript = TRANSCRIPTS[case["run"]]
        bare = transcript.locate(case["quote"])
        if bare.places > 1:
            repeated.append(case)
            assert bare.verdict == "ambiguous" and bare.turn_id is None, (bare, case)
            placed = transcript.locate(case["quote"], prefer_turn=f"{case['run']}:{case['turn']}")
            assert (placed.verdict, placed.turn_idx) == ("exact", case["turn"]), (placed, case)
            player_turn = next(t for t in RUNS[case["run"]]["turns"] if t["role"] == "user")
            claimed_elsewhere = transcript.locate(case["quote"], prefer_turn=f"{case['run']}:{player_turn['idx']}")
            assert claimed_elsewhere.verdict == "ambiguous", (claimed_elsewhere, case)
        else:
            assert bare.verdict == "exact" and bare.places == 1, (bare, case)
    assert len(repeated) >= 1  # the corpus holds quotes the model repeated


def at(transcript: Transcript, quote: str) -> tuple[int | None, int | None]:
    found = transcript.locate(quote)
    return found.start, found.end


def test_the_cutoff_sits_between_near_misses_and_inventions(capsys):
    best = defaultdict(list)
    for q in QUOTES:
        best[q["label"]].append(TRANSCRIPTS[q["run"]].best_similarity(q["quote"]))
    # A quote without its diacritics: how like the text it is as written (what the card shows), and for the cutoff.
    plain = [TRANSCRIPTS[2].locate(q["quote"]).similarity * 100 for q in QUOTES if q["label"] == "diacritics"]
    lowest_typo = min(best["typo"])
    highest_false = max(best["paraphrase"] + best["invented"])
    with capsys.disabled():
        print(
            f"\n  quote corpus: typos score >= {lowest_typo:.1f}; paraphrases <= {max(best['paraphrase']):.1f}, "
            f"inventions <= {max(best['invented']):.1f}; cutoff {FUZZY_CUTOFF}"
            f"\n  Czech without diacritics: {min(plain):.1f}-{max(plain):.1f} as written, "
            f"{min(best['diacritics']):.1f} without diacritics (fuzzy, whatever the cutoff)"
        )
    assert min(best["diacritics"]) == 100.0
    assert highest_false < FUZZY_CUTOFF < lowest_typo
