"""What every detector reads and returns: the run's text, spans into it, findings; and the text helpers they share.

A detector is a plain function over a run's turns (no Textual, no network). It
returns Findings: the turns and the spans of their ORIGINAL text that are the
evidence, a short reason, a confidence, and its own name and version. Where a
finding goes (which counter, or a note) is the scenario's business, decided in
sieve.store.scoring.detectors.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from sieve.store.record.rows import Turn


@dataclass(frozen=True)
class Span:
    """Evidence: [start, end) of one turn's original text."""

    turn_id: str
    turn_idx: int
    start: int
    end: int
    text: str

    def as_dict(self) -> dict[str, Any]:
        return {"turn_id": self.turn_id, "turn": self.turn_idx, "start": self.start, "end": self.end, "text": self.text}


def span(turn: Turn, start: int, end: int) -> Span:
    return Span(turn["id"], turn["idx"], start, end, turn["text"][start:end])


@dataclass(frozen=True)
class Finding:
    """One event a detector saw. `length`: for repetition, the chain it makes (replies in a row, or repeats)."""

    detector: str
    version: int
    category: str
    spans: tuple[Span, ...]
    reason: str
    confidence: float
    length: int | None = None

    @property
    def turn_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.turn_id for s in self.spans))


@dataclass
class RunText:
    """A run's turns as the detectors read them: dicts with id, idx, role, text, status, finish_reason.

    Only the conversation as it stands (chosen turns); replies are the assistant's turns.
    """

    turns: list[Turn]
    player_names: tuple[str, ...] = ()
    language: str | None = None
    readings: dict[str, Reading] = field(default_factory=dict, repr=False)

    @cached_property
    def replies(self) -> list[Turn]:
        return [t for t in self.turns if t["role"] == "assistant"]

    @cached_property
    def player_turns(self) -> list[Turn]:
        return [t for t in self.turns if t["role"] == "user"]

    def read(self, turn: Turn) -> Reading:
        """The turn's text read once, whichever detector asks first."""
        reading = self.readings.get(turn["id"])
        if reading is None:
            reading = self.readings[turn["id"]] = Reading(turn["text"])
        return reading


class Reading:
    """One text as every detector reads it: lower-cased (same offsets), words, sentences, quoted speech."""

    def __init__(self, text: str):
        self.text = text

    @cached_property
    def low(self) -> str:
        return lower(self.text)

    @cached_property
    def words(self) -> list[tuple[int, int, str]]:
        return [(*m.span(), m.group()) for m in _LOW_WORD.finditer(self.low)]

    @cached_property
    def sentences(self) -> list[tuple[int, int]]:
        return sentences(self.text)

    @cached_property
    def quoted(self) -> Quoted:
        return Quoted(self.text)


# -- words, sentences, quoted speech ------------------------------------------------

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_LOW_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")  # the same, in `lower` text (where ’ is ')
# A sentence ends at . ! ? or … (closing quotes and brackets stay with it), or at a line break.
# (“ closes a quote in Czech and German, where „ opens it.)
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’“)\]]*(?=\s|$)|\n+")

# Function words: a passage made only of these says nothing (English; the scenarios are played in English).
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
    off on once only or other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself yourselves i'm i've i'll i'd you're
    you've you'll he's she's it's that's there's don't didn't can't couldn't won't wasn't isn't aren't let's
    one also even still back like well yes oh said says""".split()
)


def lower(text: str) -> str:
    """Lower case, the same length as `text` (offsets stay valid), with ’ as '."""
    out = text.lower()
    if len(out) != len(text):  # a letter whose lower case is longer (İ) stays as it is
        out = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return out.replace("’", "'")


def words(text: str) -> list[tuple[int, int, str]]:
    """The words of a text with their offsets: (start, end, lower-case word)."""
    return [(*m.span(), m.group()) for m in _LOW_WORD.finditer(lower(text))]


def tokens(text: str) -> list[str]:
    """The words of a text in lower case, where their offsets are not needed (twice as fast as `words`)."""
    return _LOW_WORD.findall(lower(text))


# A cue: the compiled pattern, its weight, its label.
Cue = tuple[re.Pattern[str], float, str]


class Cues:
    """Patterns looked for fast: written in lower case against lower-cased text, with the word boundary
    before a match checked here rather than by a leading \\b (which stops the regex engine from
    skipping ahead to its literal prefix: ten times slower on a long reply)."""

    def __init__(self, entries: list[tuple[Any, ...]]):
        self.cues: list[Cue] = []
        # Substrings one of which every match holds: a substring search (much faster) can rule a pattern out.
        # Given as a fourth element, else what each alternative of the pattern begins with.
        self.needles: dict[re.Pattern[str], tuple[str, ...] | None] = {}
        for pattern, weight, label, *needles in entries:
            assert not re.search(r"\\[BWSD]", pattern), pattern  # lower-casing would change them
            fast = re.sub(r"(^|\|)\\b", r"\1", pattern.lower())
            compiled = re.compile(fast, re.M)
            self.cues.append((compiled, weight, label))
            self.needles[compiled] = tuple(needles[0]) if needles else literal_starts(fast)

    def __iter__(self) -> Iterator[Cue]:
        return iter(self.cues)

    def __add__(self, other: Cues) -> list[Cue]:
        return self.cues + other.cues

    def __len__(self) -> int:
        return len(self.cues)


def literal_starts(pattern: str) -> tuple[str, ...] | None:
    """The text every match of a pattern begins with, one per top-level alternative (`as an? ai|ooc` ->
    ("as a", "ooc")); None when an alternative begins with something else than plain text."""
    alternatives: list[str] = []
    depth, current = 0, ""
    for ch in pattern:
        if ch == "|" and depth == 0:
            alternatives.append(current)
            current = ""
            continue
        depth += (ch == "(") - (ch == ")")
        current += ch
    alternatives.append(current)
    out = []
    for alternative in alternatives:
        literal = ""
        for ch in alternative:
            if ch in "?*{":  # the character before is optional
                literal = literal[:-1]
                break
            if not (ch.isalnum() or ch in " '-,"):
                break
            literal += ch
        if not literal:
            return None
        out.append(literal)
    return tuple(out)


def at_word_start(low: str, at: int) -> bool:
    return at == 0 or not (low[at - 1].isalnum() or low[at - 1] == "_")


def content_count(tokens: list[str]) -> int:
    return sum(1 for t in tokens if t not in STOPWORDS)


def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans [start, end), trimmed of surrounding whitespace."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        end = m.end() if m.group()[0] != "\n" else m.start()
        _add_trimmed(text, start, end, out)
        start = m.end()
    _add_trimmed(text, start, len(text), out)
    return out


def _add_trimmed(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        out.append((start, end))


_QUOTE_PAIR = re.compile(r"“[^”\n]*”|«[^»\n]*»|„[^“”\n]*[“”]")


class Quoted:
    """Where a text's quoted speech is, so narration and dialogue can be told apart.

    Curly and guillemet quotes pair as written. A straight quote opens where a word
    starts after it and closes where a word ends before it; each opening pairs with
    the next closing on its line, and a quote mark left over quotes nothing (models
    often drop the opening one).
    """

    def __init__(self, text: str):
        regions = [(m.start(), m.end()) for m in _QUOTE_PAIR.finditer(text) if m.group()[0] != '"']
        opening = None
        for m in re.finditer(r'"|\n', text):
            at = m.start()
            if m.group() == "\n":
                opening = None
                continue
            before = text[at - 1] if at else " "
            after = text[at + 1] if at + 1 < len(text) else " "
            if opening is None and (before.isspace() or before in "([—-:") and not after.isspace():
                opening = at
            elif opening is not None and not before.isspace():
                regions.append((opening, at + 1))
                opening = None
        self.regions = sorted(regions)
        self._starts = [r[0] for r in self.regions]

    def inside(self, pos: int) -> bool:
        k = bisect_right(self._starts, pos) - 1
        return k >= 0 and self.regions[k][0] <= pos < self.regions[k][1]

    def overlaps(self, start: int, end: int) -> bool:
        k = bisect_right(self._starts, end - 1) - 1
        return k >= 0 and self.regions[k][1] > start


def folded(text: str) -> str:
    """Lower case with curly quotes straightened, the same length as `text` (for rapidfuzz alignments)."""
    out = text.lower().replace("’", "'").replace("“", '"').replace("”", '"')
    return out if len(out) == len(text) else text


def clamp(value: float) -> float:
    return round(max(0.05, min(0.99, value)), 2)
