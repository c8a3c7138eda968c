"""Plays the player's character: the reply makes her speak, act or decide, which only the player may do.

Three signals, each in narration only (dialogue in quotes is the characters' own):
- her name (or an alias) as the subject of an action verb, or attributing speech
  to her (`"...," Jarla said`, `Jarla: ...`);
- `you` doing something, where the player writes as I and the model addresses her
  as you (`You take out the key`);
- the reply speaking her own lines: a sentence the player wrote in the first
  person, near word for word, or the narrator's `my knife` for a thing that is hers.
An action the player's last message already declared (`I pry the lock` -> `you
pry the lock`) is her own move narrated back, not a breach.

In a scenario played in Czech (`language = "cs"`) the signals are Czech's
(detectors/plays_player_cs.py): her name in its cases, subjects dropped, the
second person on the verb. A scenario adds verb forms of its own (`verbs`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from typing import Any

from rapidfuzz import fuzz, process

from sieve.store.record.rows import Turn
from sieve.store.scoring.detectors import czech, plays_player_cs
from sieve.store.scoring.detectors.base import (
    WORD,
    Finding,
    Quoted,
    Reading,
    RunText,
    at_word_start,
    clamp,
    folded,
    span,
    tokens,
)
from sieve.store.scoring.detectors.out_of_game import out_of_fiction

NAME = "plays-player"
VERSION = 1

ACTIONS = """accept add admit agree answer apologise apologize approach ask beg begin bite blink bow break breathe
bring call carry catch charge chase check choose climb close confess continue crawl creep cross cry cut dance
decide demand dig draw drink drop eat embrace enter escape explain fall fight find finish flee follow force gasp
get give glance go grab greet grin grip groan hand hang head hesitate hide hit hold hug hurry insist jump kick
kiss kneel knock laugh lay lead lean leap leave let lie lift light listen lock look make march mumble murmur
mutter nod offer open order pace pass pay peel pick plead point pour pray press promise pry pull punch push put
race raise reach read refuse remove repeat reply rest retreat return rise roll run rush say scream search seize
shake shout shove shrug shut sigh sing sip sit slam sleep slide slip smile snap sneak sob speak spin spit stand
stare start steal step stop storm strike stumble swallow swear take talk tear tell thank throw tiptoe touch
toss try tug turn twist unlock wait wake walk wander watch wave weep whisper wince wink wipe wrap write yank
yell""".split()
IRREGULAR_PAST = """ate began bit blew broke brought caught chose crept cried drank drew drove fell fled flung
fought found froze gave got grabbed hid held hung knelt knew laid lay led left let lit made met paid put ran rang
rode rose said sang sank sat saw shook shot shut slid slept slipped smiled sought spat spoke spun stood stole
struck stuck swore swung took threw told tore tried wept woke won wore wrote""".split()
# Said of a writer, not of a character: the out-of-game detector's business.
META_VERBS = {"added", "mentioned", "wrote", "written", "described", "forgot", "asked"}
# Things everyone has: `my hand` says nothing about whose hand.
COMMON = set(
    """character eyes eye hand hands head face heart voice way life name mind own time lips breath feet legs arms
    body side back god word words turn part friend dear lord goodness gosh""".split()
)

_ADVERB = r"(?:(?:\w+ly|just|then|also|still|only|again|now|already|finally|suddenly|quietly|slowly|quickly)\s+){0,2}"


def _verb_forms() -> set[str]:
    forms = set(IRREGULAR_PAST)
    for verb in ACTIONS:
        forms.add(verb)
        if verb.endswith("e"):
            forms.update((verb + "s", verb + "d"))
        elif verb.endswith("y") and verb[-2] not in "aeiou":
            forms.update((verb[:-1] + "ies", verb[:-1] + "ied"))
        elif verb.endswith(("s", "sh", "ch", "x", "z")):
            forms.update((verb + "es", verb + "ed"))
        else:
            forms.update((verb + "s", verb + "ed", verb + verb[-1] + "ed"))
    return forms


VERB_FORMS = frozenset(_verb_forms())
STEMS = frozenset(w[:4] for w in VERB_FORMS)
_UTTERANCES = r"expression|voice|words|reply|answer|response|thoughts"
# Before "you": what makes it not her doing something (if you..., can you..., like you said, holding you...).
_NOT_HER_DOING = (
    r"(?:\b(?:if|when|unless|can|could|will|would|should|must|let|make|made|help|and i|as|did|do|does|didn't"
    r"|don't|what|where|why|how|like|that|things|everything|all|tell|told|ask|asked|hold|held"
    r"|give|gave|take|took|bring|brought|show|showed|meet|met|thank|thanked|want|wanted|need|needed)|ing)\s*$"
)
_YOU = re.compile(rf"you\s+{_ADVERB}([a-z]+)\b")
_SPEECH = (
    r"(?:said|says|asked|asks|replied|replies|whispered|whispers|shouted|shouts|answered|answers|cried|cries"
    r"|muttered|mutters|murmured|murmurs|called|calls|added|adds|continued|continues|sobbed|sobs|pleaded|pleads"
    r"|begged|begs|insisted|insists)"
)


def detect(run: RunText, params: dict[str, Any]) -> list[Finding]:
    names = [n for n in run.player_names if n.strip()]
    if run.language == "cs":
        return _in_czech(run, params, names)
    name_pattern = _names_pattern(names) if names else None
    verbs = VERB_FORMS | frozenset(v.lower() for v in params.get("verbs") or ())
    lines = _player_lines(run) if params["first_person"] else {}
    belongings = _belongings(run) if params["first_person"] else set()
    out: list[Finding] = []
    previous_player = ""
    for turn in run.turns:
        if turn["role"] == "user":
            previous_player = turn["text"]
            continue
        if turn["role"] != "assistant" or not turn["text"].strip():
            continue
        echoed = _declared(previous_player)
        hits: list[tuple[int, int, str, float]] = []
        text, reading = turn["text"], run.read(turn)
        quoted = reading.quoted
        if name_pattern is not None:
            hits += _by_name(reading, name_pattern, echoed, verbs)
        if params["second_person"]:
            hits += _as_you(reading, echoed, verbs)
        if params["first_person"]:
            hits += _her_lines(reading, lines) + _her_things(reading, belongings)
        # A sentence about the story ("you've added a detail") is out of the fiction, not her played.
        hits = [h for h in hits if not out_of_fiction(text, h[0], h[1], quoted)]
        out += _findings(turn, hits)
    return out


def _in_czech(run: RunText, params: dict[str, Any], names: list[str]) -> list[Finding]:
    """The Czech signals (plays_player_cs) over each reply, with the player's message before it."""
    forms = [form for name in names for form in czech.name_forms(name)[:1]]  # the nominative: who acts
    verbs = czech.THIRD | frozenset(v.lower() for v in params.get("verbs") or ())
    out: list[Finding] = []
    previous_player = ""
    for turn in run.turns:
        if turn["role"] == "user":
            previous_player = turn["text"]
            continue
        if turn["role"] != "assistant" or not turn["text"].strip():
            continue
        reading = run.read(turn)
        hits = plays_player_cs.hits(reading, forms, previous_player, verbs, params["second_person"]) if forms else []
        if not forms and params["second_person"]:
            hits = plays_player_cs.hits(reading, [], previous_player, verbs, True)
        text = turn["text"]
        hits = [h for h in hits if not out_of_fiction(text, h[0], h[1], reading.quoted, language="cs")]
        out += _findings(turn, hits)
    return out


def _declared(player_text: str) -> set[str]:
    """The actions the player's message declares (verbs outside her quoted speech), by stem."""
    quoted = Quoted(player_text)
    return {_stem(m.group().lower()) for m in WORD.finditer(player_text) if not quoted.inside(m.start())} & STEMS


def _stem(word: str) -> str:
    return word[:4]


def _names_pattern(names: list[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?:{alternatives.lower()})\b")


def _by_name(
    reading: Reading, names: re.Pattern[str], echoed: set[str], verbs: frozenset[str] = VERB_FORMS
) -> list[tuple[int, int, str, float]]:
    text, low, quoted = reading.text, reading.low, reading.quoted
    hits = []
    for m in names.finditer(low):
        if not at_word_start(low, m.start()) or quoted.inside(m.start()):
            continue
        possessive = text[m.end() : m.end() + 2] in ("'s", "’s")
        after = None if possessive else re.match(rf"\s*,?\s*{_ADVERB}([A-Za-z]+)", text[m.end() : m.end() + 60])
        if after and after.group(1).lower() in verbs:
            verb = after.group(1).lower()
            if _stem(verb) in echoed:
                continue
            end = _clause_end(text, m.end() + after.end())
            kind = "speaks" if re.fullmatch(_SPEECH, verb) else "acts"
            hits.append((_clause_start(text, m.start()), end, f"{kind} as the player's character", 0.85))
            continue
        # Jarla: "..." or Jarla's voice: "...", at the start of a line or a sentence, as a script writes it
        before = text[max(0, m.start() - 3) : m.start()]
        if (m.start() == 0 or before.endswith("\n") or re.search(r"[.!?\"”]\s+$", before)) and (
            re.match(rf"(?:['’]s\s+(?:{_UTTERANCES}))?\s*:", text[m.end() : m.end() + 30])
        ):
            hits.append((m.start(), _clause_end(text, m.end() + 1), "speaks as the player's character", 0.9))
    # "...," Jarla said / said Jarla
    for m in re.finditer(rf"[\"”]\s*,?\s*(?:{_SPEECH}\s+({names.pattern})|({names.pattern})\s+{_SPEECH})", low):
        quote_start = max(text.rfind('"', 0, m.start()), text.rfind("“", 0, m.start()))
        hits.append((max(quote_start, 0), m.end(), "speaks as the player's character", 0.9))
    return hits


def _as_you(
    reading: Reading, echoed: set[str], verbs: frozenset[str] = VERB_FORMS
) -> list[tuple[int, int, str, float]]:
    text, low, quoted = reading.text, reading.low, reading.quoted
    hits = []
    for m in _YOU.finditer(low):
        verb = m.group(1)
        if not at_word_start(low, m.start()) or quoted.inside(m.start()) or verb not in verbs:
            continue
        if verb in META_VERBS:
            continue
        if _stem(verb) in echoed:
            continue
        before = low[max(0, m.start() - 16) : m.start()]
        if re.search(_NOT_HER_DOING, before):
            continue  # a condition, a request, a wish, her words recalled, or "you" as an object
        hits.append((_clause_start(text, m.start()), _clause_end(text, m.end()), "narrates what you do", 0.75))
    return hits


def _player_lines(run: RunText) -> dict[tuple[str, ...], list[str]]:
    """The player's own first-person sentences, long enough to be recognised, by their first and last words."""
    out: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for turn in run.player_turns[1:] if len(run.player_turns) > 1 else []:
        for s, e in run.read(turn).sentences:
            sentence = turn["text"][s:e]
            found = tokens(sentence)
            if len(found) >= 5 and {"i", "my", "me", "i'm"} & set(found):
                line = folded(sentence).strip(' "“”')
                out[tuple(found[:3])].append(line)
                out[tuple(found[-3:])].append(line)
    return out


def _her_lines(reading: Reading, lines: dict[tuple[str, ...], list[str]]) -> list[tuple[int, int, str, float]]:
    """Sentences of the reply that are the player's own lines, near word for word (rapidfuzz ratio 90)."""
    if not lines:
        return []
    text, words_ = reading.text, reading.words
    starts = [w[0] for w in words_]
    hits = []
    for s, e in reading.sentences:
        k, j = bisect_left(starts, s), bisect_left(starts, e)
        if j - k < 5:
            continue
        # A line said again keeps its first three words or its last three: only those are compared.
        candidates = lines.get(tuple(w for _, _, w in words_[k : k + 3]), []) + lines.get(
            tuple(w for _, _, w in words_[j - 3 : j]), []
        )
        if not candidates:
            continue
        sentence = folded(text[s:e]).strip(' "“”')
        if process.extractOne(sentence, candidates, scorer=fuzz.ratio, score_cutoff=90) is not None:
            hits.append((s, e, "speaks the player's own line", 0.8))
    return hits


def _belongings(run: RunText) -> set[str]:
    """What the player calls hers (`my knife`), from her messages after the first."""
    things = set()
    for turn in run.player_turns[1:]:
        for m in re.finditer(r"\bmy\s+([a-z]+)", turn["text"], re.I):
            word = m.group(1).lower()
            if word not in COMMON and len(word) > 2:
                things.add(word)
    return things


def _her_things(reading: Reading, belongings: set[str]) -> list[tuple[int, int, str, float]]:
    if not belongings:
        return []
    text, low, quoted = reading.text, reading.low, reading.quoted
    hits = []
    pattern = re.compile(r"i\b[^.!?\"“”\n]{0,60}?\bmy\s+(" + "|".join(sorted(belongings)) + r")\b")
    for m in pattern.finditer(low):
        if not at_word_start(low, m.start()) or quoted.inside(m.start()):
            continue
        hits.append(
            (_clause_start(text, m.start()), _clause_end(text, m.end()), "narrates as her (I, with her things)", 0.6)
        )
    return hits


def _clause_start(text: str, pos: int) -> int:
    cut = max(text.rfind(c, 0, pos) for c in ".!?\n")
    start = cut + 1
    while start < pos and text[start] in ' \t"”':
        start += 1
    return start


def _clause_end(text: str, pos: int) -> int:
    m = re.compile(r"[.!?\n]").search(text, pos)
    end = m.end() if m else len(text)
    return end if text[end - 1] != "\n" else end - 1


def _findings(turn: Turn, hits: list[tuple[int, int, str, float]]) -> list[Finding]:
    """One finding per sentence: several signals in one sentence are one breach, more sure."""
    merged: list[list[Any]] = []
    for s, e, reason, conf in sorted(hits):
        if merged and s < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], e)
            if reason not in last[2]:
                last[2].append(reason)
            last[3] = max(last[3], conf) + 0.05
        else:
            merged.append([s, e, [reason], conf])
    return [
        Finding(NAME, VERSION, "player", (span(turn, s, e),), "; ".join(reasons), clamp(conf))
        for s, e, reasons, conf in merged
    ]
