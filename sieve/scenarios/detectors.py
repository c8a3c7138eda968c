"""The detectors a scenario can name, each defined once with what it feeds and its parameters.

A detector finds events a machine can see in a transcript (looping, out-of-game
voice, the player's character played, leaked markup) and suggests them; a person
confirms each. The scenario loader checks `detector = "..."` and its parameters
against this table, and sieve.store.scoring.detectors implements each entry (a
test holds the two together), so a name or a parameter is spelled in one place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from sieve.scenarios.errors import kind_of

# The languages the form detector can tell apart, with the script each is written in.
LANGUAGES: dict[str, str] = {
    "en": "Latin",
    "cs": "Latin",
    "sk": "Latin",
    "pl": "Latin",
    "de": "Latin",
    "fr": "Latin",
    "es": "Latin",
    "it": "Latin",
    "pt": "Latin",
    "nl": "Latin",
    "ru": "Cyrillic",
    "uk": "Cyrillic",
    "el": "Greek",
    "he": "Hebrew",
    "ar": "Arabic",
    "hi": "Devanagari",
    "zh": "Han",
    "ja": "Japanese",
    "ko": "Hangul",
}


# The longest phrase a scenario may give a detector (a cue, a verb form), in characters.
PHRASE_CHARS = 80


@dataclass(frozen=True)
class Param:
    """One parameter of a detector: a whole number, a number, a flag, a list of choices, or of phrases."""

    name: str
    kind: str  # "int", "float", "bool", "choices", "strings" (at most `maximum` phrases)
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()

    def problem(self, value: Any) -> str | None:
        """Why `value` is not valid for this parameter, or None when it is."""
        if self.kind == "bool":
            return None if isinstance(value, bool) else f"expected true or false, found {kind_of(value)}"
        if self.kind == "choices":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                return f"expected a list of strings, found {kind_of(value)}"
            unknown = [v for v in value if v not in self.choices]
            if unknown:
                return f"'{unknown[0]}' is not one of: {', '.join(self.choices)}"
            return None
        if self.kind == "strings":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                return f"expected a list of strings, found {kind_of(value)}"
            if self.maximum is not None and len(value) > self.maximum:
                return f"at most {_num(self.maximum)} phrases"
            for v in value:
                if not v.strip() or len(v) > PHRASE_CHARS or "\\" in v or not v.isprintable():
                    return f"'{v[:PHRASE_CHARS]}' is not a phrase (printable text of 1 to {PHRASE_CHARS} characters, no \\)"
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"expected {'a whole number' if self.kind == 'int' else 'a number'}, found {kind_of(value)}"
        if self.kind == "int" and not isinstance(value, int):
            return f"expected a whole number, found {kind_of(value)}"
        if not math.isfinite(value):
            return "must be a finite number"
        if self.minimum is not None and value < self.minimum:
            return f"must be at least {_num(self.minimum)}"
        if self.maximum is not None and value > self.maximum:
            return f"must be at most {_num(self.maximum)}"
        return None


@dataclass(frozen=True)
class DetectorSpec:
    """A detector as a scenario names it: the counter kinds it can feed and the parameters it takes."""

    name: str
    title: str
    feeds: tuple[str, ...]  # counter kinds; on a rubric item its findings are notes
    params: tuple[Param, ...] = ()
    note_kind: str = "note"  # the annotation kind of an accepted finding that feeds no counter
    defaults: dict[str, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "defaults", {p.name: p.default for p in self.params})

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def resolve(self, given: dict[str, Any] | None) -> dict[str, Any]:
        """The defaults with the given values over them (the loader has checked them)."""
        return {**self.defaults, **(given or {})}


DETECTORS: tuple[DetectorSpec, ...] = (
    DetectorSpec(
        "repetition",
        "the same or near-same passage across replies, repeated openings, a reply looping inside itself",
        feeds=("chain", "count"),
        params=(
            Param("min_words", "int", 5, "the shortest passage that counts, in words", 3, 50),
            Param("min_chain", "int", 2, "replies in a row that must repeat a passage", 2, 1000),
            Param("similarity", "float", 85.0, "how alike a near-same passage must be (rapidfuzz, 0-100)", 50, 100),
            Param("min_openings", "int", 3, "replies that must open the same way", 2, 1000),
            Param("loops", "bool", True, "also look for a reply repeating itself"),
        ),
    ),
    DetectorSpec(
        "out-of-game",
        "asides, OOC, talk about the roleplay, the rules, the user or being an AI, refusals, meta-commentary",
        feeds=("count",),
        params=(
            Param("threshold", "float", 1.0, "the weight of cues a passage needs to be suggested", 0.1, 10),
            Param("refusals", "bool", True, "also suggest refusals and safety boilerplate"),
            Param(
                "cues",
                "strings",
                [],
                "phrases of the scenario's own, each enough to mark a passage out of the fiction (case aside)",
                maximum=200,
            ),
        ),
    ),
    DetectorSpec(
        "plays-player",
        "the player's character speaking, acting or narrating in the model's reply",
        feeds=("count",),
        params=(
            Param("second_person", "bool", True, "narration of what 'you' did (the player writes as I)"),
            Param("first_person", "bool", True, "the player's own lines spoken in the reply"),
            Param(
                "verbs",
                "strings",
                [],
                "verb forms of the scenario's own that make the player's character act when she is their subject",
                maximum=500,
            ),
        ),
    ),
    DetectorSpec(
        "form",
        "leaked template markup, a change of language or script, replies cut at the ceiling, empty replies",
        feeds=("count",),
        params=(
            Param(
                "checks",
                "choices",
                ["leaks", "language", "length", "empty"],
                "which checks run",
                choices=("leaks", "language", "length", "empty"),
            ),
        ),
        note_kind="flag",
    ),
)
BY_NAME: dict[str, DetectorSpec] = {d.name: d for d in DETECTORS}
NAMES = tuple(BY_NAME)


def _num(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)
