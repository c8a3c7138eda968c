"""Words and sentences of a turn's text, as offsets: what ctrl+shift+←/→, `.` and `>`, and a double or triple
click select as a quote.

A word is a run of letters and digits, with an apostrophe or a hyphen inside it (`don't`, `out-of-game`).
A sentence ends after `.`, `!`, `?` or `…` (and the closing quotes or brackets after them) where white
space follows and what follows it does not begin in lower case (a quoted question inside a sentence,
`"How many days?" he asked.`, goes on), or at a line break; its span leaves out the white space around
it. Abbreviations (`Mr.`) end a sentence too: `>` takes the next one in.
"""

from __future__ import annotations

import re

WORD = re.compile(r"\w+(?:['’\-]\w+)*")
# The end of a sentence: its closing marks and what closes after them, then white space or the end;
# or a line break. The span found is the white space after it (the gap to the next sentence).
_GAP = re.compile(r"(?<=[.!?…])[\"'”’»“)\]]*\s+|\n\s*")


def word_at(text: str, offset: int) -> tuple[int, int] | None:
    """The word under `offset` (or ending just before it); None on white space or punctuation."""
    for match in WORD.finditer(text):
        if match.start() <= offset < match.end() or (match.end() == offset and offset == len(text)):
            return match.span()
        if match.start() > offset:
            break
    return None


def word_end_after(text: str, offset: int) -> int:
    """Where the next word ends after `offset` (the end of the text if none does): ctrl+→."""
    for match in WORD.finditer(text):
        if match.end() > offset:
            return match.end()
    return len(text)


def word_start_before(text: str, offset: int) -> int:
    """Where the word before `offset` begins (0 if none does): ctrl+←."""
    start = 0
    for match in WORD.finditer(text):
        if match.start() >= offset:
            break
        start = match.start()
    return start


def sentences(text: str) -> list[tuple[int, int]]:
    """Every sentence of the text as (start, end), white space around it left out, in order."""
    out: list[tuple[int, int]] = []
    start = 0
    for gap in _GAP.finditer(text):
        if "\n" not in gap.group() and gap.end() < len(text) and text[gap.end()].islower():
            continue  # a question quoted inside a sentence goes on after it: "Kolik dní?“ zeptal se.
        end = gap.start()
        # The closing marks before the gap belong to the sentence (the lookbehind left them in the gap).
        closing = re.match(r"[\"'”’»“)\]]*", text[gap.start() : gap.end()])
        end += closing.end() if closing else 0
        _add(out, text, start, end)
        start = gap.end()
    _add(out, text, start, len(text))
    return out


def _add(out: list[tuple[int, int]], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        out.append((start, end))


def sentence_at(text: str, offset: int) -> tuple[int, int] | None:
    """The sentence under `offset`; between two, the one after it (at the very end, the last). None: no text."""
    spans = sentences(text)
    for start, end in spans:
        if offset < end:
            return start, end
    return spans[-1] if spans else None


def sentence_end_after(text: str, end: int) -> int | None:
    """Where `>` extends a selection that ends at `end`: to the end of the next sentence, or of the sentence
    it stops inside. None: no sentence ends after it."""
    for _, stop in sentences(text):
        if stop > end:
            return stop
    return None
