"""Quote verification: where a quote stands in a run's transcript, and how exactly.

A quote is looked up after a normalisation that keeps every character mappable
to the original text (Unicode NFC, so that decomposed and composed text agree;
no-break and other Unicode spaces; ligatures and full-width forms; invisible
characters; case, curly and straight quotes, dashes, runs of whitespace, `...`
and `…`): found there it is *exact*. A quote that differs from the text only by
its diacritics (Czech typed without háčky and čárky) is *fuzzy*, never exact
and never absent. Otherwise rapidfuzz's
`partial_ratio_alignment` looks for it turn by turn, on the turns that share the
most words with it, both without diacritics; above the cutoff it is *fuzzy*, with
its similarity as written, and its
span is refined to cover the whole quote. Below, it is *absent*. A quote found
only in the player's turns (or the setup) is *player*: the player's own words
are no evidence of the model's behaviour. A fuzzy match that adds or removes a
negation ("not", "n't", Czech "ne-", "nikdy", "žádný": sieve/store/scoring/negation.py)
is *altered*: it says the opposite of the passage, and is no evidence. A quote
found, but of fewer than three words or twelve characters, is *short*: no evidence.
A quote that stands in the model's words in several turns points at no one passage:
the turn it claims places it (`prefer_turn`), and without one, or where the claimed
turn is not among them, it is *ambiguous*: no evidence either. A repetition chain
is exempt from both (what repeats may be one word, and stands in many places). A
quote made of pieces joined by an ellipsis (`he said … and left`) is checked piece
by piece, in order, in one turn.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rapidfuzz import fuzz

from sieve.store.scoring import negation

# Similarity (0-100, rapidfuzz's ratio over the refined span, after normalisation)
# from which a quote that is not found exactly still counts as found. Chosen on
# the labelled corpus in tests/data (tests/test_quote_corpus.py prints the margins):
# quotes with one or two typos scored 95.7 and above; the best match of any
# paraphrase scored at most 82.4, of any invented quote at most 75.2.
FUZZY_CUTOFF = 88.0
# Shorter pieces match something by chance too easily to be trusted fuzzily.
MIN_FUZZY_CHARS = 16
CANDIDATE_TURNS = 6
# A quote shorter than this points at nothing in particular: a word or two ("the", "he said")
# stands in almost any run, so it cannot show what the model did. Three words and twelve
# characters make a phrase ("pockets the coin", "Nikdy jsem nevzal"). Such a quote is `short`,
# found but no evidence; a repetition chain's quotes are exempt (what repeats may be one word).
MIN_QUOTE_WORDS = 3
MIN_QUOTE_CHARS = 12

_QUOTES = {ord(c): "'" for c in "‘’‚‛′`´"} | {ord(c): '"' for c in "“”„‟«»″"}
_DASHES = {ord(c): "-" for c in "‐‑‒–—―−"}
_FOLD = _QUOTES | _DASHES
# Every Unicode space (no-break, narrow no-break, em, ideographic ...) is a space.
_SPACES = {i: " " for i in range(0x3001) if chr(i).isspace()}
# Characters that do not show and are dropped: soft hyphen, zero-width space and joiners, word joiner, BOM.
_INVISIBLE = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")
# Compatibility forms read as their plain letters (NFKC): Latin ligatures (ﬁ), full-width ASCII (Ａ).
_COMPAT = re.compile("[\ufb00-\ufb06\uff01-\uff5e]")
_SPECIAL = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff\ufb00-\ufb06\uff01-\uff5e]")
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…)\s*")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Normalised:
    text: str
    # Where the normalised text drifts from the original: at normalised index
    # shifts_at[k] and after, original index = normalised index + shifts[k].
    shifts_at: tuple[int, ...] = ()
    shifts: tuple[int, ...] = ()
    size: int | None = None  # the original's length (None: as long as the normalised text)

    def original(self, i: int) -> int:
        k = bisect_right(self.shifts_at, i) - 1
        return i + (self.shifts[k] if k >= 0 else 0)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original [start, end) of normalised [start, end).

        The end is where the next normalised character comes from, so a span keeps
        the whole of what its last character was made of (a letter and its combining accent).
        """
        if end >= len(self.text):
            return self.original(start), len(self.text) if self.size is None else self.size
        return self.original(start), self.original(end)


_CHANGES = re.compile(r"\s{2,}|…")


def normalise(text: str) -> Normalised:
    """Fold Unicode forms, case, quotes, dashes, whitespace runs and ellipses, remembering where each character came from.

    Both sides of a comparison go through this: NFC (a letter and its combining
    accent are one character), compatibility spaces, ligatures and full-width forms
    as their plain letters, invisible characters dropped.
    """
    folded = text.translate(_FOLD)
    lowered = folded.lower()
    if len(lowered) != len(folded) or _SPECIAL.search(text) or not unicodedata.is_normalized("NFC", text):
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
    return Normalised("".join(out), tuple(shifts_at), tuple(shifts), len(text))


def _clusters(text: str) -> Iterator[tuple[int, str]]:
    """Each character with the combining marks (and Hangul vowel and final jamo) that follow it, and where it starts."""
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or not (unicodedata.combining(text[i]) or "\u1160" <= text[i] <= "\u11ff"):
            yield start, text[start:i]
            start = i


def _normalise_slowly(text: str) -> Normalised:
    out: list[str] = []
    origin: list[int] = []
    in_space = False
    for at, cluster in _clusters(text):
        if cluster in _INVISIBLE:
            continue
        composed = unicodedata.normalize("NFC", cluster)
        composed = _COMPAT.sub(lambda m: unicodedata.normalize("NFKC", m.group()), composed)
        for ch in composed.translate(_FOLD).lower():
            if ch.isspace():
                if not in_space:
                    out.append(" ")
                    origin.append(at)
                in_space = True
                continue
            in_space = False
            if ch == "…":
                out.extend("...")
                origin.extend((at, at, at))
                continue
            out.append(ch)
            origin.append(at)
    shifts_at: list[int] = []
    shifts: list[int] = []
    for n, o in enumerate(origin):
        if not shifts or o - n != shifts[-1]:
            shifts_at.append(n)
            shifts.append(o - n)
    return Normalised("".join(out), tuple(shifts_at), tuple(shifts), len(text))


class _Bases(dict[int, str]):
    """str.translate's table from a letter to its letter without diacritics (č → c), one for one, filled as met."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        base = "".join(c for c in unicodedata.normalize("NFD", ch) if not unicodedata.combining(c))
        self[code] = base = base if len(base) == 1 else ch
        return base


_BASES = _Bases()


def without_diacritics(text: str) -> str:
    """`text` with its letters' diacritics removed, as long as `text` (so offsets stay valid)."""
    return text if text.isascii() else text.translate(_BASES)


@dataclass(frozen=True)
class Found:
    """Where a quote stands. `verdict`: exact, fuzzy, altered (fuzzy, but a negation flipped), short, ambiguous,
    absent or player. `places`: the model's turns it stands in (more than one only when it is ambiguous or
    placed by the turn it claims)."""

    verdict: str
    similarity: float | None = None  # 0-1
    turn_id: str | None = None
    turn_idx: int | None = None
    start: int | None = None
    end: int | None = None
    places: int = 1

    @property
    def found(self) -> bool:
        """Whether the quote stands in one place of the run (found, if not evidence): not absent, not ambiguous."""
        return self.verdict not in ("absent", "ambiguous")


def pieces(quote: str) -> list[str]:
    """A quote cut at its ellipses; leading and trailing ellipses only mark a cut."""
    return [p for p in _ELLIPSIS.split(quote.strip()) if p.strip()]


class Transcript:
    """A run's chosen turns, normalised once, ready for many quotes."""

    def __init__(self, turns: Sequence[Mapping[str, Any]]):
        self.turns = [t for t in turns if t.get("text")]
        self.norm = [normalise(t["text"]) for t in self.turns]
        # The same texts without diacritics, as long: the fuzzy search's ground, and the diacritics-only match.
        self.bare = [without_diacritics(n.text) for n in self.norm]
        # One string for all turns, so an exact piece is one str.find, not one per turn.
        self.joined = "\x00".join(n.text for n in self.norm)
        self.bare_joined = "\x00".join(self.bare)
        self.starts: list[int] = []
        at = 0
        for n in self.norm:
            self.starts.append(at)
            at += len(n.text) + 1
        self.by_word: dict[str, list[int]] = {}
        for i, text in enumerate(self.bare):
            for word in set(_WORD.findall(text)):
                self.by_word.setdefault(word, []).append(i)
        self._default_order = self._order(None)

    def locate(self, quote: str, prefer_turn: str | None = None, *, repeats: bool = False) -> Found:
        """Where `quote` stands. `prefer_turn`: the turn it claims, which places a quote that stands in several.
        `repeats`: it backs a repetition chain, whose quotes may be of any length and stand in many places."""
        found = self._locate(quote, prefer_turn, repeats)
        if not repeats and found.verdict in ("exact", "fuzzy") and too_short(quote):
            return replace(found, verdict="short")
        return found

    def _locate(self, quote: str, prefer_turn: str | None, repeats: bool = False) -> Found:
        parts = _parts(quote)
        if not parts:
            return Found("absent")
        order = self._order(prefer_turn) if prefer_turn else self._default_order
        rank = {i: r for r, i in enumerate(order)}
        hits = self._exact_hits(parts, self.joined, [n.text for n in self.norm])
        if hits:
            return self._placed(self._found("exact", sorted(hits, key=rank.__getitem__), parts), prefer_turn, repeats)
        # Differing only by diacritics (typed without a Czech keyboard): fuzzy, however low the plain similarity.
        bare = [without_diacritics(p) for p in parts]
        hits = self._exact_hits(bare, self.bare_joined, self.bare)
        if hits:
            found = self._found("fuzzy", sorted(hits, key=rank.__getitem__), parts, bare)
            return self._placed(found, prefer_turn, repeats)
        fuzzy = self._fuzzy(parts, bare, order)
        if fuzzy is not None:
            return fuzzy
        return Found("absent")

    def _exact_hits(self, parts: list[str], joined: str, texts: list[str]) -> set[int]:
        """The turns holding every piece, in order."""
        hits: set[int] = set()
        at = joined.find(parts[0])
        while at >= 0:
            i = bisect_right(self.starts, at) - 1
            if i not in hits and _in_order(texts[i], parts) is not None:
                hits.add(i)
            at = joined.find(parts[0], at + 1)
        return hits

    def best_similarity(self, quote: str) -> float:
        """The best fuzzy similarity (0-100, without diacritics) over the candidate turns, whatever the cutoff (for calibration)."""
        parts = _parts(quote)
        if not parts:
            return 0.0
        bare = [without_diacritics(p) for p in parts]
        return max((self._fuzzy_span(i, bare)[0] for i in self._candidates(bare, self._order(None))), default=0.0)

    def _order(self, prefer_turn: str | None) -> list[int]:
        # The model's turns first (a quote is evidence of what the model wrote), the
        # annotation's own turn first of all.
        indexes = sorted(range(len(self.turns)), key=lambda i: (self.turns[i]["role"] != "assistant", i))
        if prefer_turn is not None:
            indexes.sort(key=lambda i: self.turns[i]["id"] != prefer_turn)
        return indexes

    def _found(self, verdict: str, hits: list[int], parts: list[str], bare: list[str] | None = None) -> Found:
        """The first of `hits` (the model's turns first) as a Found; `bare`: the pieces stand there without diacritics."""
        model_hits = [i for i in hits if self.turns[i]["role"] == "assistant"]
        i = (model_hits or hits)[0]
        if bare is None:
            spans = _in_order(self.norm[i].text, parts)
        else:
            spans = _in_order(self.bare[i], bare)
        assert spans is not None  # a hit is a turn where the pieces stand in order
        return replace(self._at(verdict, i, parts, spans, model_hits != []), places=max(1, len(model_hits)))

    def _placed(self, found: Found, prefer_turn: str | None, repeats: bool) -> Found:
        """A quote in several of the model's turns is placed by the turn it claims (found there first, since
        the claimed turn is searched first); claiming none of them, it is ambiguous."""
        if found.places < 2 or repeats or found.verdict == "player" or found.turn_id == prefer_turn:
            return found
        return Found("ambiguous", None, places=found.places)

    def _at(self, verdict: str, i: int, parts: list[str], spans: list[tuple[int, int]], model: bool = True) -> Found:
        text = self.norm[i].text
        # The similarity of what was written, diacritics included: the worst piece's.
        similarity = (
            1.0 if verdict == "exact" else min(fuzz.ratio(p, text[s:e]) for p, (s, e) in zip(parts, spans)) / 100
        )
        start, end = self.norm[i].span(spans[0][0], spans[-1][1])
        turn = self.turns[i]
        if not model or turn["role"] != "assistant":
            verdict = "player"
        elif verdict == "fuzzy":
            passage = " ".join(self.bare[i][s:e] for s, e in spans)
            if negation.flips(" ".join(without_diacritics(p) for p in parts), passage):
                verdict = "altered"
        return Found(verdict, round(similarity, 4), turn["id"], turn["idx"], start, end)

    def _candidates(self, bare: list[str], order: list[int]) -> list[int]:
        """The turns sharing the most words with the quote (ties: in `order`)."""
        shared: Counter[int] = Counter()
        for word in set(_WORD.findall(" ".join(bare))):
            shared.update(self.by_word.get(word, ()))
        if not shared:
            return order[:CANDIDATE_TURNS]
        rank = {i: r for r, i in enumerate(order)}
        return sorted(shared, key=lambda i: (-shared[i], rank[i]))[:CANDIDATE_TURNS]

    def _fuzzy(self, parts: list[str], bare: list[str], order: list[int]) -> Found | None:
        if sum(len(p) for p in parts) < MIN_FUZZY_CHARS:
            return None
        best: tuple[float, int, list[tuple[int, int]]] | None = None
        for i in self._candidates(bare, order):
            similarity, spans = self._fuzzy_span(i, bare)
            if similarity >= FUZZY_CUTOFF and (best is None or similarity > best[0]):
                best = (similarity, i, spans)
        if best is None:
            return None
        return self._at("fuzzy", best[1], parts, best[2])

    def _fuzzy_span(self, i: int, bare: list[str]) -> tuple[float, list[tuple[int, int]]]:
        """The worst piece's similarity (without diacritics), and each piece's span, in order."""
        text = self.bare[i]
        position, worst = 0, 100.0
        spans: list[tuple[int, int]] = []
        for part in bare:
            rest = text[position:]
            if len(part) > len(rest) or not rest:
                return 0.0, [(0, 0)]
            alignment = fuzz.partial_ratio_alignment(part, rest)
            if alignment is None or alignment.score <= 0:
                return 0.0, [(0, 0)]
            start, end = _refine(part, rest, alignment.dest_start, alignment.dest_end)
            # The similarity of the whole refined span, not just the best window.
            worst = min(worst, fuzz.ratio(part, rest[start:end]))
            spans.append((position + start, position + end))
            position += end
        return worst, spans


def too_short(quote: str) -> bool:
    """Whether a quote is too short to be evidence (MIN_QUOTE_WORDS, MIN_QUOTE_CHARS), its ellipses left out."""
    text = " ".join(_parts(quote))
    return len(_WORD.findall(text)) < MIN_QUOTE_WORDS or len(text) < MIN_QUOTE_CHARS


def _parts(quote: str) -> list[str]:
    parts = [normalise(p).text.strip() for p in pieces(quote)]
    return [p for p in parts if p]


def _in_order(text: str, parts: list[str]) -> list[tuple[int, int]] | None:
    """Where each piece stands in `text`, each after the one before, or None."""
    position = 0
    spans = []
    for part in parts:
        at = text.find(part, position)
        if at < 0:
            return None
        position = at + len(part)
        spans.append((at, position))
    return spans


def _refine(needle: str, hay: str, start: int, end: int) -> tuple[int, int]:
    """Move the ends of an alignment so the span covers the whole quote (typos shift it)."""
    reach = max(2, min(12, len(needle) // 8))

    def score(s: int, e: int) -> float:
        return fuzz.ratio(needle, hay[s:e]) if 0 <= s < e <= len(hay) else -1.0

    best_start = max(range(start - reach, start + reach + 1), key=lambda s: (score(s, end), -abs(s - start)))
    best_end = max(range(end - reach, end + reach + 1), key=lambda e: (score(best_start, e), -abs(e - end)))
    return best_start, best_end


def verify(
    turns: Sequence[Mapping[str, Any]], quote: str, prefer_turn: str | None = None, *, repeats: bool = False
) -> Found:
    """Where `quote` stands among `turns` (the chosen turns of a run, in order)."""
    return Transcript(turns).locate(quote, prefer_turn, repeats=repeats)
