"""Out-of-game voice: the model stepping out of the fiction to talk about it.

Every sentence of narration and every aside in brackets is weighed by its cues:
OOC and being an AI weigh most; talk about the story, the scene, the narrator or
the rules, addressing the user about what they wrote, and what the model "can
do" weigh less, and an aside in brackets a little on top. Dialogue in quotes is
the characters' own and is not weighed, except for the unmistakable cues (an AI,
a language model, OOC). A passage whose cues reach the threshold is suggested;
flagged sentences in a row are one event, one time out of the fiction.

The scenario's language picks the cue lists: English's, or Czech's
(detectors/czech.py) with English's beside them, since a model that steps out of
a Czech scene often does so in English. A scenario adds cues of its own
(`detector_params = { cues = ["poznámka autora"] }`): phrases, each enough on its own.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from typing import Any

from sieve.store.record.rows import Turn
from sieve.store.scoring.detectors import czech
from sieve.store.scoring.detectors.base import (
    Cue,
    Cues,
    Finding,
    Quoted,
    Reading,
    RunText,
    at_word_start,
    clamp,
    lower,
    span,
)

NAME = "out-of-game"
VERSION = 1

ASIDE_WEIGHT = 0.25


# Each cue: a pattern, its weight, what it is about, and (where the pattern begins with a choice) words
# one of which every match holds, so that a reply without any of them is not searched.
# Cues heard even inside quotes: no character of a scene says these.
ALWAYS = Cues(
    [
        (r"\bOOC\b|\bout[- ]of[- ](?:character|game)\b", 1.0, "OOC"),
        (r"\bas an? (?:AI|artificial intelligence|language model|assistant|chatbot)\b", 1.0, "being an AI"),
        (
            r"\blanguage model\b|\bI(?:'m| am) (?:just )?an? (?:AI|bot|chatbot|assistant)\b",
            1.0,
            "an AI",
            ("language model", " ai", "bot", "assistant"),
        ),
    ]
)
NARRATION = Cues(
    [
        (r"\brole[- ]?play(?:ing)?\b|\bRP\b", 1.0, "the roleplay"),
        (r"\b(?:who|that) (?:plays?|played) (?:her|him|you|me)\b", 1.0, "the roleplay", ("play",)),
        (r"\bthe (?:user|player)\b|\byour (?:character|prompt|message|last message|post)\b", 1.0, "the user"),
        (r"\bmy character\b", 1.0, "the player's side"),
        (r"\bthe narrator\b", 1.0, "the narrator"),
        (
            r"\b(?:the|this|my|our) (?:rules?|instructions?|prompt)\b|\brule (?:\d+|one|two|three|seven)\b",
            0.5,
            "rules",
            ("rule", "instruction", "prompt"),
        ),
        (
            r"\b(?:story|stories|scene|narrative|plot|characters|dialogue|chapter)\b",
            0.5,
            "the story",
            ("stor", "scene", "narrative", "plot", "characters", "dialogue", "chapter"),
        ),
        (
            r"\b(?:this|the|your|my) (?:story|scene|narrative) (?:can|could|would|should|will)\b",
            0.5,
            "the story",
            ("story", "scene", "narrative"),
        ),
        (
            r"\b(?:sentences?|paragraphs?|beats?|continuation|response|reply|details|readers?|writing)\b",
            0.5,
            "the text",
            ("sentence", "paragraph", "beat", "continuation", "response", "reply", "details", "reader", "writing"),
        ),
        (r"\byour (?:next )?(?:answer|response|question|idea|reply)\b", 0.5, "the user"),
        (r"\byou(?:'ve| have)? (?:already )?(?:added|mentioned|wrote|written|asked|described)\b", 0.5, "the user"),
        (r"\byou mention\b|\byou forgot to add\b", 0.5, "the user"),
        (
            r"\badd(?:ing)? (?:a |another |more |one more |new )?(?:sentences?|details?|lines?|paragraphs?)\b",
            0.5,
            "writing",
        ),
        (
            r"\bI(?: can|'ll| will| could)(?: just)? (?:do|write|show|add|continue|describe|play|give|make|keep|wrap"
            r"|break|help|create|generate)\b",
            0.5,
            "what the model can do",
        ),
        (
            r"\bI was (?:just )?(?:showing|writing|doing|playing|trying to show|describing)\b",
            0.5,
            "what the model can do",
        ),
        (r"\blet me know (?:if|what|how|whether)\b|\bI hope you (?:enjoy|like|liked|enjoyed)\b", 1.0, "the user"),
        (r"\blet me know\b", 0.5, "the user"),
        (
            r"\b(?:shall|should) I (?:continue|go on|keep going)\b|\b(?:do you want|would you like) me to\b",
            1.0,
            "the user",
            ("shall i", "should i", " me to"),
        ),
        (r"\bfeel free to\b|\bthank you for (?:reading|playing|the prompt|asking|reminding)\b", 0.5, "the user"),
        (
            r"^(?:sure|certainly|of course)[,!.]? (?:here|I)\b"
            r"|\bhere(?:'s| is) (?:the|a|your) (?:\w+ )?(?:scene|story|continuation|version|response|rewrite|reply)\b",
            1.0,
            "assistant",
            ("sure", "certainly", "of course", "here"),
        ),
    ]
)
REFUSALS = Cues(
    [
        (
            r"\bI(?:'m| am)? ?(?:can(?:not|'t)|won't|will not|am unable to|'m unable to|am not able to) "
            r"(?:help|assist|continue|provide|write|create|generate|engage|comply|fulfil|fulfill|participate"
            r"|roleplay|role-play|produce|do that|do this)\b",
            1.0,
            "a refusal",
            ("can't", "cannot", "won't", "will not", "unable", "not able"),
        ),
        (r"\bI must (?:decline|refuse)\b|\bI(?:'m| am) not comfortable\b", 1.0, "a refusal"),
        (
            r"\b(?:content|usage) polic(?:y|ies)\b|\b(?:safety|community) guidelines\b",
            1.0,
            "safety boilerplate",
            ("polic", "guidelines"),
        ),
        (r"\bI(?:'m| am) sorry,? but\b", 0.5, "a refusal", ("sorry",)),
        (
            r"\b(?:inappropriate|harmful|explicit content)\b",
            0.5,
            "safety boilerplate",
            ("inappropriate", "harmful", "explicit content"),
        ),
    ]
)
# The cue lists of each language beside English's: (always, narration, refusals).
LANGUAGES: dict[str, tuple[Cues, Cues, Cues]] = {
    "en": (ALWAYS, NARRATION, REFUSALS),
    "cs": (czech.ALWAYS, czech.NARRATION, czech.REFUSALS),
}
# A cue none of whose words stands in the reply is not searched for.
_NEEDLES = {k: v for cues in LANGUAGES.values() for c in cues for k, v in c.needles.items()}


@cache
def _lists(language: str | None) -> tuple[list[Cue], list[Cue], list[Cue]]:
    """A language's cue lists beside English's (English's alone for a language without lists of its own)."""
    lists = [LANGUAGES["en"]]
    if language in LANGUAGES and language != "en":
        lists.insert(0, LANGUAGES[language])
    return (
        [cue for lang in lists for cue in lang[0]],
        [cue for lang in lists for cue in lang[1]],
        [cue for lang in lists for cue in lang[2]],
    )


def cues_for(language: str | None, params: dict[str, Any]) -> tuple[list[Cue], list[Cue]]:
    """The cues heard even in quotes, and the rest (refusals if asked for, the scenario's own), for a language."""
    always, narration, refusals = _lists(language)
    cues = narration + refusals if params.get("refusals", True) else list(narration)
    return always, cues + scenario_cues(tuple(params.get("cues") or ()))


@cache
def scenario_cues(phrases: tuple[str, ...]) -> list[Cue]:
    """A scenario's own cues: phrases matched as they are written (case aside), each enough on its own."""
    entries = []
    for phrase in phrases:
        pattern = re.escape(phrase.strip().lower())
        if phrase.strip()[-1:].isalnum():
            pattern += r"\b"
        entries.append((pattern, 1.0, "the scenario's cue"))
    return list(Cues(entries))


def _absent(pattern: re.Pattern[str], low: str) -> bool:
    needles = _NEEDLES.get(pattern)
    return needles is not None and not any(n in low for n in needles)


_ASIDE = re.compile(r"\([^()\n]{2,400}\)|\[[^\[\]\n]{2,400}\]")


def detect(run: RunText, params: dict[str, Any]) -> list[Finding]:
    always, cues = cues_for(run.language, params)
    threshold = params["threshold"]
    out = []
    for turn in run.replies:
        out += _reply(turn, run.read(turn), always, cues, threshold)
    return out


def _reply(turn: Turn, reading: Reading, always: list[Cue], cues: list[Cue], threshold: float) -> list[Finding]:
    text = turn["text"]
    if not text.strip():
        return []
    quoted = reading.quoted
    asides = [(m.start(), m.end()) for m in _ASIDE.finditer(text) if not quoted.inside(m.start())]
    sents = reading.sentences
    # Each cue is looked for once in the whole reply, then credited to the aside or sentence it stands in.
    units: dict[tuple[str, int], dict[int, tuple[float, str]]] = defaultdict(dict)
    aside_starts = [s for s, _ in asides]
    sentence_starts = [s for s, _ in sents]
    low = reading.low
    for k, (pattern, weight, label) in enumerate(always + cues):
        if _absent(pattern, low):
            continue
        for m in pattern.finditer(low):
            at = m.start()
            if not at_word_start(low, at):
                continue
            a = bisect_right(aside_starts, at) - 1
            if a >= 0 and at < asides[a][1]:
                units[("aside", a)][k] = (weight, label)
            elif k < len(always) or not quoted.inside(at):
                units[("sentence", bisect_right(sentence_starts, at) - 1)][k] = (weight, label)
    flagged: list[tuple[int, int, float, set[str]]] = []
    for (kind, i), found in units.items():
        weight = sum(w for w, _ in found.values()) + (ASIDE_WEIGHT if kind == "aside" else 0.0)
        if weight >= threshold and i >= 0:
            start, end = asides[i] if kind == "aside" else sents[i]
            flagged.append((start, end, weight, {label for _, label in found.values()}))
    return [
        Finding(
            NAME,
            VERSION,
            "aside" if any(a == (s, e) for a in asides) else "narration",
            (span(turn, s, e),),
            f"out of the fiction ({', '.join(sorted(labels))})",
            clamp(0.35 + 0.3 * weight),
        )
        for s, e, weight, labels in _merge(flagged, text)
    ]


def out_of_fiction(
    text: str, start: int, end: int, quoted: Quoted, threshold: float = 1.0, language: str | None = None
) -> bool:
    """Whether text[start:end] reads as the model talking about the fiction rather than in it."""
    always, narration, _ = _lists(language)
    return _weigh(text, start, end, quoted, always, narration)[0] >= threshold


def _weigh(
    text: str, start: int, end: int, quoted: Quoted, always: list[Cue], cues: Iterable[Cue]
) -> tuple[float, set[str]]:
    """The summed weight of the cues in text[start:end] (each cue once), dialogue left out."""
    piece = lower(text[start:end])
    weight = 0.0
    labels: set[str] = set()
    for k, (pattern, w, label) in enumerate(always + list(cues)):
        for m in pattern.finditer(piece):
            if at_word_start(piece, m.start()) and (k < len(always) or not quoted.inside(start + m.start())):
                weight += w
                labels.add(label)
                break
    return weight, labels


def _merge(flagged: list[tuple[int, int, float, set[str]]], text: str) -> list[tuple[int, int, float, set[str]]]:
    """Flagged passages that touch or sit in one another (only whitespace between) are one event."""
    out: list[list[Any]] = []
    for s, e, w, labels in sorted(flagged):
        if out and s <= out[-1][1] + 2 and not text[out[-1][1] : s].strip():
            last = out[-1]
            last[1], last[2], last[3] = max(last[1], e), max(last[2], w), last[3] | labels
        elif out and s < out[-1][1]:
            last = out[-1]
            last[1], last[2], last[3] = max(last[1], e), max(last[2], w), last[3] | labels
        else:
            out.append([s, e, w, set(labels)])
    return [(s, e, w, labels) for s, e, w, labels in out]
