"""Quote verification: where a quote stands in a run's transcript, and how exactly.

A quote is looked up after a normalisation that keeps every character mappable
to the original text (case, curly and straight quotes, dashes, runs of
whitespace, `...` and `…`): found there it is *exact*. Otherwise rapidfuzz's
`partial_ratio_alignment` looks for it turn by turn, on the turns that share the
most words with it; above the cutoff it is *fuzzy*, with its similarity, and its
span is refined to cover the whole quote. Below, it is *absent*. A quote found
only in the player's turns (or the setup) is *player*: the player's own words
are no evidence of the model's behaviour. A quote made of pieces joined by an
ellipsis (`he said … and left`) is checked piece by piece, in order, in one turn.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

# Similarity (0-100, rapidfuzz's ratio over the refined span, after normalisation)
# from which a quote that is not found exactly still counts as found. Chosen on
# the labelled corpus in tests/data (tests/test_quote_corpus.py prints the margins):
# quotes with one or two typos scored 95.7 and above; the best match of any
# paraphrase scored at most 82.4, of any invented quote at most 75.2.
FUZZY_CUTOFF = 88.0
# Shorter pieces match something by chance too easily to be trusted fuzzily.
MIN_FUZZY_CHARS = 16
CANDIDATE_TURNS = 6

_QUOTES = {ord(c): "'" for c in "‘’‚‛′`´"} | {ord(c): '"' for c in "“”„‟«»″"}
_DASHES = {ord(c): "-" for c in "‐‑‒–—―−"}
_FOLD = _QUOTES | _DASHES
_SPACES = {i: " " for i in range(0x3001) if chr(i).isspace()}
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…)\s*")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Normalised:
    text: str
    # Where the normalised text drifts from the original: at normalised index
    # shifts_at[k] and after, original index = normalised index + shifts[k].
    shifts_at: tuple[int, ...] = ()
    shifts: tuple[int, ...] = ()

    def original(self, i: int) -> int:
        k = bisect_right(self.shifts_at, i) - 1
        return i + (self.shifts[k] if k >= 0 else 0)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original [start, end) of normalised [start, end)."""
        return self.original(start), self.original(end - 1) + 1


_CHANGES = re.compile(r"\s{2,}|…")


def normalise(text: str) -> Normalised:
    """Fold case, quotes, dashes, whitespace runs and ellipses, remembering where each character came from."""
    folded = text.translate(_FOLD)
    lowered = folded.lower()
    if len(lowered) != len(folded):  # a character whose lower case is longer (İ): map one by one
        return _normalise_slowly(text)
    lowered = lowered.translate(_SPACES)
    out: list[str] = []
    shifts_at: list[int] = []
    shifts: list[int] = []
    position = 0  # in the original
    drift = 0  # original index minus normalised index, after the last change
    for change in _CHANGES.finditer(lowered):
        out.append(lowered[position : change.start()])
        n = change.start() - drift  # where the change lands in the normalised text
        if change.group() == "…":
            out.append("...")
            # the three dots all come from the one character
            shifts_at.extend((n, n + 1, n + 2, n + 3))
            shifts.extend((drift, drift - 1, drift - 2, drift - 2))
            drift -= 2
        else:
            out.append(" ")
            drift += len(change.group()) - 1
            shifts_at.append(n + 1)
            shifts.append(drift)
        position = change.end()
    out.append(lowered[position:])
    return Normalised("".join(out), tuple(shifts_at), tuple(shifts))


def _normalise_slowly(text: str) -> Normalised:
    out: list[str] = []
    origin: list[int] = []
    in_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if not in_space:
                out.append(" ")
                origin.append(i)
            in_space = True
            continue
        in_space = False
        if ch == "…":
            out.extend("...")
            origin.extend((i, i, i))
            continue
        folded = ch.translate(_FOLD).lower()
        out.extend(folded)
        origin.extend([i] * len(folded))
    # Every character gets its own entry: correct, if not compact.
    return Normalised("".join(out), tuple(range(len(origin))), tuple(o - n for n, o in enumerate(origin)))


@dataclass(frozen=True)
class Found:
    """Where a quote stands. `verdict`: exact, fuzzy, absent or player."""

    verdict: str
    similarity: float | None = None  # 0-1
    turn_id: str | None = None
    turn_idx: int | None = None
    start: int | None = None
    end: int | None = None

    @property
    def found(self) -> bool:
        return self.verdict != "absent"


def pieces(quote: str) -> list[str]:
    """A quote cut at its ellipses; leading and trailing ellipses only mark a cut."""
    return [p for p in _ELLIPSIS.split(quote.strip()) if p.strip()]


class Transcript:
    """A run's chosen turns, normalised once, ready for many quotes."""

    def __init__(self, turns: Sequence[Mapping[str, Any]]):
        self.turns = [t for t in turns if t.get("text")]
        self.norm = [normalise(t["text"]) for t in self.turns]
        # One string for all turns, so an exact piece is one str.find, not one per turn.
        self.joined = "\x00".join(n.text for n in self.norm)
        self.starts: list[int] = []
        at = 0
        for n in self.norm:
            self.starts.append(at)
            at += len(n.text) + 1
        self.by_word: dict[str, list[int]] = {}
        for i, n in enumerate(self.norm):
            for word in set(_WORD.findall(n.text)):
                self.by_word.setdefault(word, []).append(i)
        self._default_order = self._order(None)

    def locate(self, quote: str, prefer_turn: str | None = None) -> Found:
        parts = [normalise(p).text.strip() for p in pieces(quote)]
        parts = [p for p in parts if p]
        if not parts:
            return Found("absent")
        order = self._order(prefer_turn) if prefer_turn else self._default_order
        hits = self._exact_hits(parts)
        if hits:
            rank = {i: r for r, i in enumerate(order)}
            return self._found("exact", 1.0, sorted(hits, key=rank.__getitem__), parts)
        fuzzy = self._fuzzy(parts, order)
        if fuzzy is not None:
            return fuzzy
        return Found("absent")

    def _exact_hits(self, parts: list[str]) -> set[int]:
        """The turns holding every piece, in order."""
        hits: set[int] = set()
        at = self.joined.find(parts[0])
        while at >= 0:
            i = bisect_right(self.starts, at) - 1
            if i not in hits and self._exact(i, parts) is not None:
                hits.add(i)
            at = self.joined.find(parts[0], at + 1)
        return hits

    def best_similarity(self, quote: str) -> float:
        """The best fuzzy similarity (0-100) over the candidate turns, whatever the cutoff (for calibration)."""
        parts = [p for p in (normalise(x).text.strip() for x in pieces(quote)) if p]
        if not parts:
            return 0.0
        return max((self._fuzzy_span(i, parts)[0] for i in self._candidates(parts, self._order(None))), default=0.0)

    def _order(self, prefer_turn: str | None) -> list[int]:
        # The model's turns first (a quote is evidence of what the model wrote), the
        # annotation's own turn first of all.
        indexes = sorted(range(len(self.turns)), key=lambda i: (self.turns[i]["role"] != "assistant", i))
        if prefer_turn is not None:
            indexes.sort(key=lambda i: self.turns[i]["id"] != prefer_turn)
        return indexes

    def _exact(self, i: int, parts: list[str]) -> tuple[int, int] | None:
        text = self.norm[i].text
        position, first = 0, -1  # parts are never empty: first is where the first one stands
        for part in parts:
            at = text.find(part, position)
            if at < 0:
                return None
            first = at if first < 0 else first
            position = at + len(part)
        return first, position

    def _found(self, verdict: str, similarity: float, hits: list[int], parts: list[str]) -> Found:
        model_hits = [i for i in hits if self.turns[i]["role"] == "assistant"]
        i = (model_hits or hits)[0]
        span = self._exact(i, parts) if verdict == "exact" else self._fuzzy_span(i, parts)[1]
        assert span is not None  # an exact hit is a turn where _exact found the pieces
        start, end = self.norm[i].span(*span)
        if not model_hits:
            verdict = "player"
        turn = self.turns[i]
        return Found(verdict, round(similarity, 4), turn["id"], turn["idx"], start, end)

    def _candidates(self, parts: list[str], order: list[int]) -> list[int]:
        """The turns sharing the most words with the quote (ties: in `order`)."""
        shared: Counter[int] = Counter()
        for word in set(_WORD.findall(" ".join(parts))):
            shared.update(self.by_word.get(word, ()))
        if not shared:
            return order[:CANDIDATE_TURNS]
        rank = {i: r for r, i in enumerate(order)}
        return sorted(shared, key=lambda i: (-shared[i], rank[i]))[:CANDIDATE_TURNS]

    def _fuzzy(self, parts: list[str], order: list[int]) -> Found | None:
        if sum(len(p) for p in parts) < MIN_FUZZY_CHARS:
            return None
        best: tuple[float, int] | None = None
        for i in self._candidates(parts, order):
            similarity, _ = self._fuzzy_span(i, parts)
            if similarity >= FUZZY_CUTOFF and (best is None or similarity > best[0]):
                best = (similarity, i)
        if best is None:
            return None
        return self._found("fuzzy", best[0] / 100, [best[1]], parts)

    def _fuzzy_span(self, i: int, parts: list[str]) -> tuple[float, tuple[int, int]]:
        """The worst piece's similarity, and the span from the first piece to the last, in order."""
        text = self.norm[i].text
        position, first, worst = 0, -1, 100.0
        for part in parts:
            rest = text[position:]
            if len(part) > len(rest) or not rest:
                return 0.0, (0, 0)
            alignment = fuzz.partial_ratio_alignment(part, rest)
            if alignment is None or alignment.score <= 0:
                return 0.0, (0, 0)
            start, end = _refine(part, rest, alignment.dest_start, alignment.dest_end)
            # The similarity of the whole refined span, not just the best window.
            worst = min(worst, fuzz.ratio(part, rest[start:end]))
            first = position + start if first < 0 else first
            position += end
        return worst, (first, position)


def _refine(needle: str, hay: str, start: int, end: int) -> tuple[int, int]:
    """Move the ends of an alignment so the span covers the whole quote (typos shift it)."""
    reach = max(2, min(12, len(needle) // 8))

    def score(s: int, e: int) -> float:
        return fuzz.ratio(needle, hay[s:e]) if 0 <= s < e <= len(hay) else -1.0

    best_start = max(range(start - reach, start + reach + 1), key=lambda s: (score(s, end), -abs(s - start)))
    best_end = max(range(end - reach, end + reach + 1), key=lambda e: (score(best_start, e), -abs(e - end)))
    return best_start, best_end


def verify(turns: Sequence[Mapping[str, Any]], quote: str, prefer_turn: str | None = None) -> Found:
    """Where `quote` stands among `turns` (the chosen turns of a run, in order)."""
    return Transcript(turns).locate(quote, prefer_turn)
