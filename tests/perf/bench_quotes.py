"""Verifying 100 quotes against a transcript of about 100,000 words, against a plain difflib search.

    python -m tests.perf.bench_quotes

The transcript is the local model's text from tests/data, its turns repeated and
reshuffled to about 100,000 words; the quotes are the corpus's labels in the same
mix (exact, variants, typos, cut, the player's, paraphrases, inventions).
Target (issue 5): under 0.5 s, and at least 20 times faster than difflib.
"""

from __future__ import annotations

import difflib
import json
import random
import time
from pathlib import Path

from sieve.store.scoring.quotes import Transcript, normalise
from tests.perf.timing import machine_line

DATA = Path(__file__).resolve().parent.parent / "data"
WORDS = 100_000


def build() -> tuple[list[dict], list[str]]:
    runs = json.loads((DATA / "transcripts.json").read_text(encoding="utf-8"))["runs"]
    labelled = json.loads((DATA / "quotes.json").read_text(encoding="utf-8"))
    rng = random.Random(3)
    pool = [t for run in runs for t in run["turns"]]
    turns, words = [], 0
    while words < WORDS:
        source = rng.choice(pool)
        sentences = source["text"].split(". ")
        rng.shuffle(sentences)
        text = ". ".join(sentences)
        turns.append({"id": f"t{len(turns)}", "idx": len(turns), "role": source["role"], "text": text})
        words += len(text.split())
    # The corpus's quotes stand in the original turns, which are in the mix too.
    for t in pool:
        turns.append({"id": f"t{len(turns)}", "idx": len(turns), "role": t["role"], "text": t["text"]})
    quotes = [q["quote"] for q in rng.sample(labelled, 100)]
    return turns, quotes


def difflib_search(turns: list[dict], quote: str) -> float:
    """The plain way: the longest common block in each turn, then the ratio of the window around it."""
    q = normalise(quote).text
    best = 0.0
    for turn in turns:
        text = normalise(turn["text"]).text
        matcher = difflib.SequenceMatcher(None, text, q, autojunk=False)
        block = matcher.find_longest_match(0, len(text), 0, len(q))
        start = max(0, block.a - block.b)
        best = max(best, difflib.SequenceMatcher(None, q, text[start : start + len(q)], autojunk=False).ratio())
    return best


def main() -> None:
    print(machine_line())  # first: the machine these figures were taken on
    turns, quotes = build()
    words = sum(len(t["text"].split()) for t in turns)
    start = time.perf_counter()
    transcript = Transcript(turns)
    verdicts = [transcript.locate(q).verdict for q in quotes]
    ours = time.perf_counter() - start
    start = time.perf_counter()
    for q in quotes:
        difflib_search(turns, q)
    theirs = time.perf_counter() - start
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    print(f"{len(quotes)} quotes against {len(turns)} turns, {words:,} words; verdicts {counts}")
    print(f"  sieve (normalising the transcript included)  {ours:7.3f} s")
    print(f"  plain difflib search                          {theirs:7.3f} s")
    print(
        f"  {theirs / ours:.0f} times faster; target under 0.5 s: {'met' if ours < 0.5 else 'NOT met'}, "
        f"at least 20 times faster: {'met' if theirs / ours >= 20 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
