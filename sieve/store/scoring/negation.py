"""Whether a near-verbatim quote says the opposite of its passage: a negation added or removed.

A quote that matches its passage fuzzily but for a "not" (or a Czech "ne-") is
no typo: it reverses what the model wrote. The quote verifier calls it *altered*.
Both texts are compared word by word, normalised and without diacritics (so
"žádný" typed "zadny" still counts).
"""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher

from rapidfuzz.distance import Levenshtein

# Words that negate on their own (English; Czech without diacritics: nikdy, nic, nikdo, žádný in every case, není).
NEGATION_WORDS = frozenset(
    """not no never nor none nobody nothing nowhere neither cannot
    nikdy nic nikdo nikde nijak nikam neni
    zadny zadna zadne zadneho zadnemu zadnem zadnou zadni zadnych zadnym zadnymi""".split()
)
# English contractions typed without the apostrophe.
_BARE_NT = frozenset(
    "dont doesnt didnt cant wont isnt arent wasnt werent couldnt wouldnt shouldnt havent hasnt hadnt mustnt".split()
)
_WORD = re.compile(r"\w+(?:'\w+)*")
# A Czech verb negated by its prefix is "ne" + the verb: the shorter form must be a word in its own right.
_SHORTEST_STEM = 3


def words(text: str) -> list[str]:
    """`text`'s words, apostrophes kept inside them (didn't): `text` already normalised and without diacritics."""
    return _WORD.findall(text)


def _marks(tokens: list[str]) -> Counter[str]:
    marks: Counter[str] = Counter()
    for w in tokens:
        if w in NEGATION_WORDS:
            marks[w] += 1
        elif w.endswith("n't") or w in _BARE_NT:
            marks["n't"] += 1
    return marks


def _prefixed(a: str, b: str) -> bool:
    """One word is the other with the Czech negating prefix ne- (otevřel / neotevřel)."""
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return len(short) >= _SHORTEST_STEM and long == "ne" + short


def _misspelt(word: str, others: list[str]) -> bool:
    """A word one letter away from one of `others`: a typo of it ("ikdy" for "nikdy"), not a new word."""
    return len(word) >= _SHORTEST_STEM and any(Levenshtein.distance(word, o, score_cutoff=1) <= 1 for o in others)


def flips(quote: str, passage: str) -> bool:
    """Whether `quote` adds or removes a negation that `passage` has (both normalised, without diacritics).

    Where the two differ, the negations on each side are compared, leaving out a
    word that is a typo of one on the other side.
    """
    a, b = words(quote), words(passage)
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        ours, theirs = a[i1:i2], b[j1:j2]
        if any(_prefixed(x, y) for x in ours for y in theirs):
            return True
        kept = [w for w in ours if not _misspelt(w, theirs)]
        their_kept = [w for w in theirs if not _misspelt(w, ours)]
        if _marks(kept) != _marks(their_kept):
            return True
    return False
