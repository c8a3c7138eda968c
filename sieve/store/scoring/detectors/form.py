"""Form: what is wrong with a reply as text rather than as play.

- leaks: chat-template tokens (`<|im_start|>`, `</s>`, `[INST]`), role labels at the
  start of a line, XML-style tags, code fences, stray JSON;
- language: a passage in another script, or in another language of the same script
  (told by function words), than the scenario's language (declared, else the
  player's own messages);
- length: a reply cut at the output ceiling (status or finish reason `length`);
- empty: an empty or filtered reply.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from functools import cache
from typing import Any

from sieve.scenarios.detectors import LANGUAGES
from sieve.store.record.rows import Turn
from sieve.store.scoring.detectors.base import Finding, Reading, RunText, Span, clamp, span, tokens

NAME = "form"
VERSION = 2  # 2: a turn that failed, was cancelled, interrupted or never sent is no empty reply
NOT_A_REPLY = ("failed", "cancelled", "interrupted")  # an interrupted reply keeps its text: empty, none came

_LEAKS = [
    (re.compile(r"<\|[A-Za-z0-9_]{1,40}\|>"), "a chat-template token", 0.98),
    (re.compile(r"</s>|<s>|<bos>|<eos>|<unk>|<pad>|<start_of_turn>|<end_of_turn>"), "a special token", 0.95),
    (re.compile(r"\[/?INST\]|<</?SYS>>"), "an instruction tag", 0.98),
    (
        re.compile(
            r"</?(?:think|thinking|reasoning|scratchpad|analysis|response|answer|assistant|user|system|output|input"
            r"|instruction|context|message|reply|narrator|ooc)\b[^<>\n]{0,80}>",
            re.I,
        ),
        "an XML-style tag",
        0.9,
    ),
    (
        re.compile(r"^[ \t]*(?:#{1,4}[ \t]*)?(?:Human|Assistant|User|System|AI|Instruction|Response)[ \t]*:", re.M),
        "a role label",
        0.85,
    ),
    (re.compile(r"^[ \t]*```", re.M), "a code fence", 0.9),
    (re.compile(r"^[ \t]*[\[{][ \t]*\"[^\"\n]{1,60}\"[ \t]*:|\{\"(?:role|content|name|text)\":", re.M), "JSON", 0.9),
]

SCRIPT_RANGES = (
    ("Cyrillic", 0x0400, 0x052F),
    ("Greek", 0x0370, 0x03FF),
    ("Hebrew", 0x0590, 0x05FF),
    ("Arabic", 0x0600, 0x06FF),
    ("Devanagari", 0x0900, 0x097F),
    ("Japanese", 0x3040, 0x30FF),
    ("Han", 0x4E00, 0x9FFF),
    ("Hangul", 0xAC00, 0xD7AF),
)
# Function words by language: a paragraph is in the language whose words it uses most.
FUNCTION_WORDS = {
    "en": "the and of to in is that it was he for with his on at by you not this but had are her she they".split(),
    "cs": "je se na že to jsem ale jak by si tak po pro jsou ve když už jen mi mě co jsme není".split(),
    "sk": "je sa na že to som ale ako by si tak po pre sú vo keď už len mi ma čo nie".split(),
    "pl": "w na się nie to że do jest jak ale co po tak za od mi jego jej są przez dla".split(),
    "de": "der die und das ist nicht ich ein eine zu den mit es sich auf dem des für von sie war wie auch aber".split(),
    "fr": "le la les de et un une est que il elle pas je ne des du en qui dans pour sur au avec ce mais".split(),
    "es": "el la los las de y que en un una es no por con para se lo su al del como pero más yo".split(),
    "it": "il la le di che è un una non per con si del della sono ma come anche mi io ho".split(),
    "pt": "os as de que em um uma é não por com para se do da no na mas como eu ele".split(),
    "nl": "de het een en van is dat niet ik je op te zijn met voor aan er maar hij ze was die".split(),
}
MIN_LANGUAGE_WORDS = 12


def detect(run: RunText, params: dict[str, Any]) -> list[Finding]:
    checks = set(params["checks"])
    language = run.language or guess_language(" ".join(t["text"] for t in run.player_turns))
    out: list[Finding] = []
    cut = []
    for turn in run.replies:
        text = turn["text"]
        # A request that failed, was never sent (--max-cost) or was stopped left no reply: the model said nothing
        # empty, and what happened is the turn's status and error, not the model's behaviour.
        said = turn.get("status") not in NOT_A_REPLY
        if "empty" in checks and said and (turn.get("status") == "filtered" or not text.strip()):
            what = "filtered" if turn.get("status") == "filtered" else "empty"
            out.append(Finding(NAME, VERSION, "empty", (span(turn, 0, len(text)),), f"the reply is {what}", 0.99))
            continue
        if "leaks" in checks:
            out += _leaks(turn)
        if "language" in checks and language:
            out += _language(turn, run.read(turn), language)
        if "length" in checks and (turn.get("status") == "length" or turn.get("finish_reason") == "length"):
            cut.append(span(turn, _last_words(text), len(text)))
    if cut:
        # One note for the run, with each cut reply's last words: the seeds report ceiling hits per run.
        reason = f"{len(cut)} of {len(run.replies)} replies cut at the output ceiling (turns {_turns(cut)})"
        out.append(Finding(NAME, VERSION, "length", tuple(cut), reason, 0.99, len(cut)))
    return out


def _last_words(text: str) -> int:
    """Where the last few words of a reply begin: what a reader sees stop mid-sentence."""
    start = max(0, len(text.rstrip()) - 60)
    while 0 < start < len(text) and not text[start - 1].isspace():
        start += 1
    return min(start, len(text))


def _turns(spans: list[Span]) -> str:
    shown = [str(s.turn_idx) for s in spans]
    return ", ".join(shown) if len(shown) <= 8 else ", ".join(shown[:8]) + ", …"


def _leaks(turn: Turn) -> list[Finding]:
    text = turn["text"]
    hits: dict[tuple[int, int], tuple[str, float]] = {}
    for pattern, what, confidence in _LEAKS:
        for m in pattern.finditer(text):
            start = m.start() + len(m.group()) - len(m.group().lstrip())
            hits.setdefault((start, m.end()), (what, confidence))
    return [
        Finding(NAME, VERSION, "leak", (span(turn, s, e),), f"leaked markup: {what}", confidence)
        for (s, e), (what, confidence) in sorted(hits.items())
    ]


@cache
def _foreign(expected: str | None) -> re.Pattern[str]:
    """Runs of letters in scripts other than `expected` (Han counts as Japanese)."""
    allowed = {expected, "Han"} if expected == "Japanese" else {expected}
    ranges = [f"\\u{low:04x}-\\u{high:04x}" for name, low, high in SCRIPT_RANGES if name not in allowed]
    if expected != "Latin":
        ranges.append("A-Za-z\\u00c0-\\u024f")
    letters = "[" + "".join(ranges) + "]"
    return re.compile(f"{letters}+(?:[^\\w]{{1,3}}{letters}+)*")


def script_of(ch: str) -> str | None:
    code = ord(ch)
    for name, low, high in SCRIPT_RANGES:
        if low <= code <= high:
            return name
    if ch.isalpha() and code < 0x0250:
        return "Latin"
    return None


def _language(turn: Turn, reading: Reading, language: str) -> list[Finding]:
    text = turn["text"]
    expected = LANGUAGES.get(language)
    out = []
    # Another script: each stretch of its letters (with up to three other characters between) is one passage.
    for m in _foreign(expected).finditer(text):
        script = script_of(m.group()[0])
        letters = sum(1 for c in m.group() if c.isalpha())
        if letters >= 3:
            out.append(
                Finding(
                    NAME,
                    VERSION,
                    "language",
                    (span(turn, m.start(), m.end()),),
                    f"written in {script} script",
                    clamp(0.6 + letters / 40),
                )
            )
    if expected == "Latin" and language in FUNCTION_WORDS:
        position = 0
        starts = [w[0] for w in reading.words]
        for paragraph in text.split("\n"):
            start = text.index(paragraph, position) if paragraph else position
            position = start + len(paragraph)
            inside = reading.words[bisect_left(starts, start) : bisect_left(starts, position)]
            guessed, margin = _guess([w for _, _, w in inside], language)
            if guessed and guessed != language and margin >= 2:
                out.append(
                    Finding(
                        NAME,
                        VERSION,
                        "language",
                        (span(turn, start, start + len(paragraph)),),
                        f"a paragraph in another language ({guessed}, not {language})",
                        clamp(0.5 + 0.1 * margin),
                    )
                )
    return out


def _guess(found: list[str], against: str | None = None) -> tuple[str | None, float]:
    """The language whose function words these words use most, and how far ahead it is (a ratio) of
    `against` (the language expected), or else of the runner-up."""
    if len(found) < MIN_LANGUAGE_WORDS:
        return None, 0.0
    counts = Counter(found)
    scores = {lang: sum(counts[w] for w in fw) for lang, fw in FUNCTION_WORDS.items()}
    ranked = sorted(scores, key=lambda lang: -scores[lang])
    best = ranked[0]
    if scores[best] < 4:
        return None, 0.0
    other = against if against in scores and against != best else ranked[1]
    return best, scores[best] / max(scores[other], 1)


def guess_language(text: str) -> str | None:
    """The language of a text: by script where it is not Latin, else by function words; None when unsure."""
    scripts = Counter(s for s in map(script_of, text) if s)
    if not scripts:
        return None
    script = scripts.most_common(1)[0][0]
    if script != "Latin":
        return next((lang for lang, s in LANGUAGES.items() if s == script), None)
    guessed, margin = _guess(tokens(text))
    return guessed if margin >= 1.5 else None
