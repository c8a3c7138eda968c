"""What a search asks for and where it stands in a text: the one matcher of `sieve search` and Review's `/`.

A query is words, found in any order. Case and diacritics do not matter (`klic`
finds `klíč`; curly and straight quotes, and dashes, are one). A word is found
inside longer words too (`minc` finds `minci`), and a word of five letters or
more also finds its other forms: a common ending (Czech case endings, English
-s, -ed, -ing) is dropped and what is left is found at the start of a word
(`mince` finds `minci` and `mincemi`). `minc*` finds the words that begin with
`minc`. A word of one or two letters is found only as a whole word. Words in
double quotes are found together, in that order.

Matching runs on the text itself, not on a folded copy: each letter of the query
becomes the set of characters that fold to it, so a text is read once per word,
and offsets are the text's own (a masked text, a quote's span).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from sieve.store.scoring.quotes import normalise, without_diacritics

# Endings whose removal leaves the stem other forms of the word share: Czech case endings
# (mince, minci, mincí, mincemi; stříbrná, stříbrnou) and English -s, -ed, -ing. The longest first.
ENDINGS = tuple(
    sorted(
        "ami emi ech ich ych ach ing ou em am um ym im om es ed a e i o u y s".split(),
        key=len,
        reverse=True,
    )
)
MIN_FORMS = 5  # a shorter word is found as written (inside longer words too)
MIN_STEM = 4
MIN_PART = 3  # a shorter word is found only as a whole word
MAX_EXTEND = 40  # how far a hit grows to its whole word (a "word" of megabytes is not walked)
SNIPPET_CONTEXT = 50  # characters of text either side of a snippet's hits
SNIPPET_HITS = 3

# Combining marks after a letter (text in decomposed form, NFD): part of the letter.
_MARKS = "[\u0300-\u036f]*"
_SEPARATOR = r"[\W_]+"
# Where letters that fold to plain ones live: Latin, Greek, Cyrillic, punctuation (quotes, dashes), full width.
_RANGES = ((0x20, 0x250), (0x370, 0x530), (0x1E00, 0x2000), (0x2010, 0x2040), (0xFF01, 0xFF5F))
_QUERY = re.compile(r'"([^"]*)"?|(\S+)')


def fold(text: str) -> str:
    """`text` as the matcher compares it: lower case, no diacritics, one kind of quote, dash and space."""
    return without_diacritics(normalise(text).text)


@cache
def _variants() -> dict[str, str]:
    """Each folded character -> every character that folds to it (itself included)."""
    out: dict[str, set[str]] = {}
    for low, high in _RANGES:
        for code in range(low, high):
            ch = chr(code)
            if unicodedata.category(ch) in ("Cn", "Cc", "Mn"):
                continue
            folded = fold(ch)
            if len(folded) == 1:
                out.setdefault(folded, {folded}).add(ch)
    return {k: "".join(sorted(v)) for k, v in out.items()}


def _letter(ch: str) -> str:
    """A regular expression for one folded character of the query: every character that folds to it."""
    if ch == " ":
        return r"\s+"
    chars = _variants().get(ch, ch + ch.upper() if ch.upper() != ch and len(ch.upper()) == 1 else ch)
    piece = re.escape(chars) if len(chars) == 1 else "[" + "".join(re.escape(c) for c in chars) + "]"
    return piece + (_MARKS if ch.isalpha() else "")


def _letters(folded: str) -> str:
    return "".join(_letter(ch) for ch in folded)


def _wordy(ch: str) -> bool:
    return ch.isalnum() or unicodedata.combining(ch) > 0


def starts_word(text: str, at: int) -> bool:
    return at == 0 or not _wordy(text[at - 1])


def ends_word(text: str, at: int) -> bool:
    return at >= len(text) or not _wordy(text[at])


def whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) grown to the words it cuts (at most MAX_EXTEND characters each way)."""
    low = max(0, start - MAX_EXTEND)
    while start > low and _wordy(text[start - 1]):
        start -= 1
    high = min(len(text), end + MAX_EXTEND)
    while end < high and _wordy(text[end]):
        end += 1
    return start, end


def stem(word: str) -> str | None:
    """The stem other forms of a folded word share (`mince` -> `minc`), or None when it has none to drop."""
    if len(word) < MIN_FORMS or not word.isalpha():
        return None
    for ending in ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= MIN_STEM:
            return word[: -len(ending)]
    return None


@dataclass(frozen=True)
class Term:
    """One thing the query asks for. kind: `part` (a word, inside others too, and its forms), `prefix` (`minc*`),
    `whole` (a word of one or two letters), `phrase` (words in double quotes, together)."""

    word: str  # folded, as asked
    kind: str
    core: str  # what is searched: the stem when the word has forms, else the word
    pattern: re.Pattern[str]  # the core, over the text itself
    rest: re.Pattern[str] | None  # after a stem: the rest of the word, which makes a hit inside a word

    def occurrences(self, text: str, start: int = 0) -> Iterator[tuple[int, int]]:
        """Where the term stands in `text`, in order, as spans of its own characters."""
        for found in self.pattern.finditer(text, start):
            end = self.stands(text, *found.span())
            if end is not None:
                yield found.start(), end

    def stands(self, text: str, a: int, b: int) -> int | None:
        """Whether the pattern found at [a, b) is the term (a prefix at a word's start, ...): where it ends, or None."""
        if self.kind == "prefix" and not starts_word(text, a):
            return None
        if self.kind == "whole" and not (starts_word(text, a) and ends_word(text, b)):
            return None
        if self.rest is not None and not starts_word(text, a):
            after = self.rest.match(text, b)  # inside a word, the word itself must stand there, not only its stem
            return None if after is None else after.end()
        return b

    def first(self, text: str) -> tuple[int, int] | None:
        return next(self.occurrences(text), None)


def _term(word: str, kind: str) -> Term | None:
    word = word.strip()
    if kind == "phrase":
        words = [w for w in word.split() if w]
        if not words:
            return None
        joined = " ".join(words)
        return Term(joined, kind, joined, re.compile(_SEPARATOR.join(_letters(w) for w in words)), None)
    if kind != "prefix":
        word = word.strip("\"'.,;:!?()[]{}<>")
    if not any(ch.isalnum() for ch in word):
        return None
    if kind == "prefix":
        return Term(word, kind, word, re.compile(_letters(word)), None)
    if sum(ch.isalnum() for ch in word) < MIN_PART:
        return Term(word, "whole", word, re.compile(_letters(word)), None)
    core = stem(word)
    if core is None:
        return Term(word, "part", word, re.compile(_letters(word)), None)
    return Term(word, "part", core, re.compile(_letters(core)), re.compile(_letters(word[len(core) :])))


@dataclass(frozen=True)
class Match:
    """A text that holds the query: `together` when its words stand side by side, in order; the hits to show."""

    together: bool
    spans: list[tuple[int, int]]


class Query:
    """A person's search, parsed once and matched against many texts."""

    def __init__(self, text: str):
        self.text = text
        folded = fold(text)
        self.terms: list[Term] = []
        for found in _QUERY.finditer(folded):
            phrase, word = found.groups()
            if phrase is not None:
                term = _term(phrase, "phrase")
            elif word.rstrip("*") and word.endswith("*"):
                term = _term(word.rstrip("*").replace("*", ""), "prefix")
            else:
                term = _term(word.replace("*", ""), "plain")
            if term is not None:
                self.terms.append(term)
        # The words side by side, in order, each in any of its forms (a word's end may run on; a word
        # after a separator starts a word). Whether the first stands as its term is checked on each find.
        self.together: re.Pattern[str] | None = None
        if len(self.terms) > 1:
            self.together = re.compile(
                r"[^\W_]*[\W_]+".join(
                    t.pattern.pattern + (r"(?![^\W_])" if t.kind == "whole" else "") for t in self.terms
                )
            )

    def __bool__(self) -> bool:
        return bool(self.terms)

    def pieces(self) -> list[tuple[str, str]]:
        """What the full-text index can narrow by: (a run of letters or digits, how it stands in an indexed word).

        `part`: inside a word; `prefix`: at its start; `word`: the whole word. A turn that holds
        the query has, for every term, a word matching each of its pieces.
        """
        out: list[tuple[str, str]] = []
        for term in self.terms:
            runs = re.findall(r"[^\W_]+", term.core)
            for n, run in enumerate(runs):
                if term.kind == "whole" or (term.kind == "phrase" and 0 < n < len(runs) - 1):
                    out.append((run, "word"))
                elif term.kind == "prefix" and n == 0 and len(runs) == 1:
                    out.append((run, "prefix"))
                else:
                    out.append((run, "part"))
        return out

    def match(self, text: str) -> Match | None:
        """Whether `text` holds every term; if so, where to show it (the words together, else each term's first)."""
        firsts = []
        for term in self.terms:
            span = term.first(text)
            if span is None:
                return None
            firsts.append(span)
        together = next(self._together(text), None)
        if together is not None:
            return Match(True, [together])
        return Match(len(self.terms) == 1, sorted({whole_words(text, a, b) for a, b in firsts}))

    def hits(self, text: str) -> list[tuple[int, int]]:
        """Every place the query's words stand in `text`, grown to whole words, in order (Review highlights these)."""
        spans = {whole_words(text, a, b) for term in self.terms for a, b in term.occurrences(text)}
        return sorted(spans)

    def hits_together(self, text: str) -> list[tuple[int, int]]:
        """Every place the query's words stand side by side, in order (nothing for a query of one word)."""
        return list(self._together(text))

    def _together(self, text: str) -> Iterator[tuple[int, int]]:
        if self.together is None:
            return
        first = self.terms[0]
        for found in self.together.finditer(text):
            head = first.pattern.match(text, found.start())
            if head is not None and first.stands(text, *head.span()) is not None:
                yield whole_words(text, *found.span())


def snippet(text: str, spans: list[tuple[int, int]]) -> str:
    """The text around its first hits, each in [brackets], on one line; `…` where it was cut."""
    spans = sorted(spans)[:SNIPPET_HITS]
    if not spans:
        return _one_line(text[: 2 * SNIPPET_CONTEXT]) + ("…" if len(text) > 2 * SNIPPET_CONTEXT else "")
    out: list[str] = []
    left = _cut_left(text, spans[0][0])
    if left > 0:
        out.append("…")
    position = left
    for a, b in spans:
        if a < position:
            continue
        if a - position > 2 * SNIPPET_CONTEXT:  # far apart: two windows
            out.append(_one_line(text[position : _cut_right(text, position)]) + " … ")
            position = _cut_left(text, a)
        out.append(_one_line(text[position:a]) + "[" + _one_line(text[a:b]) + "]")
        position = b
    right = _cut_right(text, position)
    out.append(_one_line(text[position:right]))
    if right < len(text):
        out.append("…")
    return "".join(out).strip()


def _cut_left(text: str, at: int) -> int:
    """Where a window before `at` starts: SNIPPET_CONTEXT characters back, at a space if one is near."""
    start = max(0, at - SNIPPET_CONTEXT)
    if start == 0:
        return 0
    space = text.find(" ", start, min(at, start + 15))
    return space + 1 if space >= 0 else start


def _cut_right(text: str, at: int) -> int:
    end = min(len(text), at + SNIPPET_CONTEXT)
    if end == len(text):
        return end
    space = text.rfind(" ", max(at, end - 15), end)
    return space if space >= 0 else end


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text)
