"""The full-text index of what was said, asked which turns may hold a word, a word's start or a piece of a word.

The index (FTS5, `turns_fts`) holds every finished turn's words folded for case and
diacritics (`klíč` is `klic`); its vocabulary (`turns_fts_vocab`, one row per distinct
word) is what a piece inside a word is looked up in. The index narrows a search to the
turns that can hold it; the matcher (sieve/store/scoring/search_terms.py) decides.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlite_utils import Database

# Words of the vocabulary a piece may stand in, beyond which it narrows nothing worth the query
# (a piece as common as `e`); the other pieces narrow, or the turns are read as they are.
MAX_WORDS = 5_000
CHUNK = 400  # words per MATCH: an OR of thousands is slower than a few of hundreds


def words_holding(db: Database, piece: str, how: str) -> list[str] | None:
    """The indexed words in which `piece` stands `how` (part: anywhere; prefix: at the start; word: as the word).

    None when there are more than MAX_WORDS (the piece narrows too little to be worth it).
    """
    if how == "word":
        return [piece]
    if how == "prefix":
        # The vocabulary is ordered by word: a prefix is a range, read without a scan.
        rows = db.execute(
            "SELECT term FROM turns_fts_vocab WHERE term >= ? AND term < ? LIMIT ?",
            [piece, piece + "\U0010ffff", MAX_WORDS + 1],
        ).fetchall()
    else:
        rows = db.execute(
            "SELECT term FROM turns_fts_vocab WHERE instr(term, ?) > 0 LIMIT ?", [piece, MAX_WORDS + 1]
        ).fetchall()
    if len(rows) > MAX_WORDS:
        return None
    return [r[0] for r in rows]


def turns_with(db: Database, words: Iterable[str]) -> set[int]:
    """The rowids of the turns holding any of `words` (indexed words, as the vocabulary spells them)."""
    words = list(words)
    found: set[int] = set()
    for n in range(0, len(words), CHUNK):
        query = " OR ".join('"' + w.replace('"', '""') + '"' for w in words[n : n + CHUNK])
        found.update(r[0] for r in db.execute("SELECT rowid FROM turns_fts WHERE turns_fts MATCH ?", [query]))
    return found


def candidates(db: Database, pieces: Iterable[tuple[str, str]]) -> set[int] | None:
    """The rowids of the turns that hold, for every piece, a word it stands in; None: the index cannot narrow."""
    narrowed: set[int] | None = None
    for piece, how in pieces:
        if how == "part" and len(piece) < 3:
            continue  # in almost every word
        words = words_holding(db, piece, how)
        if words is None:
            continue
        found = turns_with(db, words)
        narrowed = found if narrowed is None else narrowed & found
        if not narrowed:
            return set()
    return narrowed
