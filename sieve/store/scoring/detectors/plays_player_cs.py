"""Plays the player's character, in Czech: her name (in the nominative) acting or speaking, the sentences after
it that go on without a subject, and the narrator's second person doing what she did not declare.

- `Jarla se usměje a poděkuje`, `řekne tiše Jarla`, `Jarla: „…“`: her name as the subject of an action or a
  speech verb (czech.ACTIONS, czech.SPEECH, a scenario's own `verbs`). Her name in another case is someone
  else acting on her (`Havel podá Jarle klíč`) and is left alone.
- `… Jarla si otře slzy. Povzdechne si a řekne: „No jo, vlastně.“`: a sentence that opens with such a verb,
  no subject of its own, goes on with the last one's; after a sentence of hers, it is hers.
- `Položíš minci na stůl`: the second person (the player writes as I) with a verb she did not use herself.
An action her last message declared (`položím` -> `položí`, `položíš`) is her own move narrated back.
"""

from __future__ import annotations

import re

from sieve.store.scoring.detectors import czech
from sieve.store.scoring.detectors.base import Quoted, Reading, at_word_start

Hit = tuple[int, int, str, float]
_WORD = re.compile(r"[^\W\d_]+")
# Before a verb of the second person: what makes it not her doing it (a condition, a wish, a question's frame).
_NOT_HER_DOING = re.compile(r"\b(?:když|pokud|jestli|jestliže|až|aby|abys|kdyby|kdybys|než|zda|ať)\s+(?:\w+\s+){0,2}$")


def hits(reading: Reading, names: list[str], player_text: str, verbs: frozenset[str], second: bool) -> list[Hit]:
    """Every place the reply plays her: (start, end, reason, confidence), over its original text."""
    declared = _declared(player_text)
    out = _by_name(reading, names, verbs, declared)
    if second:
        out += _as_you(reading, declared)
    return out


def _declared(player_text: str) -> set[str]:
    """The stems of what the player's message says outside her quoted speech: her declared moves."""
    quoted = Quoted(player_text)
    return {m.group()[:4] for m in _WORD.finditer(player_text.lower()) if not quoted.inside(m.start())}


def _by_name(reading: Reading, names: list[str], verbs: frozenset[str], declared: set[str]) -> list[Hit]:
    text, low, quoted = reading.text, reading.low, reading.quoted
    sentences = reading.sentences
    starts = [s for s, _ in sentences]
    hers: set[int] = set()  # sentences of which she is the subject
    out: list[Hit] = []
    pattern = re.compile("|".join(re.escape(n.lower()) for n in sorted(names, key=len, reverse=True)) + r"\b")
    for m in pattern.finditer(low):
        if not at_word_start(low, m.start()) or quoted.inside(m.start()):
            continue
        k = _sentence_of(starts, m.start())
        start, end = sentences[k]
        after = czech.verb_after(low, m.end(), verbs)
        before = _verb_before(low, start, m.start(), verbs)
        if after is not None and after.group()[:4] not in declared:
            out.append((_clause_start(text, start, m.start()), end, _reason(after.group()), 0.85))
            hers.add(k)
        elif before is not None and before.group()[:4] not in declared:
            # `„Děkuju,“ řekne tiše Jarla`: from the quote she speaks, if one comes just before.
            opening = _quote_before(text, start, before.start())
            out.append((opening, end, _reason(before.group()), 0.9))
            hers.add(k)
        elif text[m.end() : m.end() + 2].lstrip(" ").startswith(":") and (
            m.start() == start or low[m.start() - 1] == "\n"
        ):
            out.append((m.start(), _line_end(text, m.end()), "speaks as the player's character", 0.9))
            hers.add(k)
    # The sentences after one of hers that open with a verb and no subject of their own go on with her.
    for k in sorted(hers):
        j = k + 1
        while j < len(sentences) and j not in hers:
            start, end = sentences[j]
            verb = czech.opens_with_verb(low, start, end, verbs)
            if verb is None or quoted.inside(verb.start()):
                break
            if verb.group()[:4] not in declared:
                out.append((start, end, _reason(verb.group()), 0.8))
            hers.add(j)
            j += 1
    return out


def _as_you(reading: Reading, declared: set[str]) -> list[Hit]:
    text, low, quoted = reading.text, reading.low, reading.quoted
    out: list[Hit] = []
    starts = [s for s, _ in reading.sentences]
    for m in _WORD.finditer(low):
        word = m.group()
        if word not in czech.SECOND or quoted.inside(m.start()) or word[:4] in declared:
            continue
        start, end = reading.sentences[_sentence_of(starts, m.start())]
        if _NOT_HER_DOING.search(low[max(start, m.start() - 40) : m.start()]) or text[start:end].rstrip().endswith("?"):
            continue
        out.append((_clause_start(text, start, m.start()), end, "narrates what you do", 0.75))
    return out


def _reason(verb: str) -> str:
    return ("speaks" if verb in czech.SPEECH_THIRD else "acts") + " as the player's character"


def _sentence_of(starts: list[int], at: int) -> int:
    k = 0
    for i, s in enumerate(starts):
        if s > at:
            break
        k = i
    return k


def _verb_before(low: str, start: int, at: int, verbs: frozenset[str]) -> re.Match[str] | None:
    """A verb among the (at most three) words just before the name, in its sentence: `řekne tiše Jarla`."""
    words = list(_WORD.finditer(low, start, at))[-3:]
    for m in reversed(words):
        if m.group() in verbs:
            return m
        if m.group() not in czech.BETWEEN:
            return None
    return None


def _quote_before(text: str, start: int, at: int) -> int:
    """Where the quoted speech just before `at` opens (`„Děkuju,“ řekne`), else where the verb is."""
    close = max(text.rfind("“", start, at), text.rfind('"', start, at))
    if close < 0 or text[close + 1 : at].strip(" ,") != "":
        return at
    opening = max(text.rfind("„", start, close), text.rfind('"', start, close))
    return opening if opening >= 0 else at


def _clause_start(text: str, start: int, at: int) -> int:
    """Where the clause holding `at` starts in its sentence: after the last comma or colon before it."""
    cut = max(text.rfind(",", start, at), text.rfind(":", start, at), text.rfind(";", start, at))
    return start if cut < 0 else cut + 1 + (len(text[cut + 1 : at]) - len(text[cut + 1 : at].lstrip()))


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end
