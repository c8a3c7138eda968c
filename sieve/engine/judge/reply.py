"""Reading a judge's reply: the JSON object asked for, JSON inside prose, or a Markdown table; or a refusal.

Pure. Each question asked gets a claim (its value, with the quote and turn the
judge gave) or a problem that says what was wrong with its answer; keys that
answer no question asked (a wrong item id) are listed as strays.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sieve.engine.judge.packet import NO_EVIDENCE, Question
from sieve.store.scoring.cards import CardError, parse_score, read_markdown

# What a judge writes instead of a quote: "no evidence", or the placeholder of the answer's template.
_NOTHING = {"", NO_EVIDENCE, "none", "n/a", "na", "-", "–", "no quote", "no evidence found", "…", "...", "quote"}
_WRAPPERS = (('"', '"'), ("“", "”"), ("„", "“"), ("'", "'"), ("‘", "’"), ("«", "»"))
_REFUSAL = re.compile(
    r"\b(?:I\s+(?:can(?:not|'t|’t)|won(?:'t|’t)|will\s+not|must\s+decline|refuse|am\s+(?:not\s+able|unable)|"
    r"'m\s+(?:not\s+able|unable)|’m\s+(?:not\s+able|unable))|as\s+an\s+ai\b)",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.S)


class Unreadable(Exception):
    """No JSON object (nor a score table) could be read out of the reply; the message says why."""


@dataclass(frozen=True)
class Evidence:
    quote: str | None  # None: the judge said there is no evidence
    turn: int | None


@dataclass(frozen=True)
class Claim:
    """What the judge answered to one question.

    `value`: a score as (low, high or None); a chain's length; a verdict, yes/no
    answer or mark; the summary's sentence; None for a count (its events are the
    evidence, one each).
    """

    question: Question
    value: Any
    evidence: tuple[Evidence, ...]


@dataclass
class Reading:
    claims: dict[Question, Claim] = field(default_factory=dict)
    problems: dict[Question, str] = field(default_factory=dict)
    strays: list[str] = field(default_factory=list)
    form: str = "json"  # json | json in prose | markdown table


def looks_like_refusal(text: str) -> bool:
    """Whether a reply that holds no answer reads as the judge declining to judge."""
    return bool(_REFUSAL.search(text[:600]))


# Raw control characters (a newline) inside strings are taken as they are: a small model writes them.
_DECODER = json.JSONDecoder(strict=False)
# An answer object nests four levels at most (a counter's events, a verdict's steps); past this, a reply is
# refused before any reading of it could exhaust the stack.
NESTING_MAX = 64
OBJECT_TRIES = 256  # places in prose where an answer object is looked for


def extract(text: str, asked: Sequence[Question], keys: Sequence[str] = ()) -> tuple[dict[str, Any], str]:
    """The answer object, and how it was found: the whole reply, else the first object in it that answers
    something asked (`keys`, else the questions' keys), else a score table. Unreadable when there is none."""
    stripped = text.strip()
    if not stripped:
        raise Unreadable("the reply is empty")
    try:
        data = _DECODER.decode(stripped)
    except json.JSONDecodeError as exc:
        first_error = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except RecursionError:
        # Nested deeper than any answer (a reply of 400,000 brackets): refused, not searched for objects inside.
        raise Unreadable(f"the reply is nested too deeply to read (more than {NESTING_MAX} levels)") from None
    else:
        if isinstance(data, dict):
            return data, "json"
        raise Unreadable(f"the reply is JSON but not an object ({type(data).__name__})")
    if _depth(stripped) > NESTING_MAX:
        raise Unreadable(f"the reply is nested too deeply to read (more than {NESTING_MAX} levels)")
    wanted = set(keys) or {q.key for q in asked}
    salvaged = _salvage(stripped, wanted)
    if salvaged:
        return salvaged, "json, cut off"
    for candidate in [m.group(1) for m in _FENCE.finditer(text)] + [text]:
        found = _first_object(candidate, wanted)
        if found is not None:
            return found, "json in prose"
    table = _table(text, asked)
    if table is not None:
        return table, "markdown table"
    raise Unreadable(f"not JSON ({first_error}), and no JSON object or score table in it")


def _depth(text: str) -> int:
    """How deep brackets nest in the text at most (counted outside strings only roughly: an upper bound that is
    enough to refuse a reply no answer could need)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif char in "]}" and depth:
            depth -= 1
    return deepest


def _salvage(text: str, wanted: set[str]) -> dict[str, Any]:
    """The whole entries of an answer object that was cut off (at the output ceiling): each key asked for
    with a complete value, up to the cut. Empty when the text is no such object."""
    if not text.startswith("{"):
        return {}
    out: dict[str, Any] = {}
    at = 1
    while True:
        at = _skip(text, at, " \t\r\n,")
        try:
            key, at = _DECODER.raw_decode(text, at)
            at = _skip(text, at, " \t\r\n")
            if not isinstance(key, str) or text[at : at + 1] != ":":
                break
            value, at = _DECODER.raw_decode(text, _skip(text, at + 1, " \t\r\n"))
        except (json.JSONDecodeError, IndexError, RecursionError):
            break
        out[key] = value
    return out if wanted & set(out) else {}


def _skip(text: str, at: int, chars: str) -> int:
    while at < len(text) and text[at] in chars:
        at += 1
    return at


def _first_object(text: str, wanted: set[str]) -> dict[str, Any] | None:
    """The first JSON object in the text with a key asked for (a cut-off reply still holds inner objects)."""
    at = text.find("{")
    tries = 0
    while at >= 0 and tries < OBJECT_TRIES:  # each try may read to the end: a bound keeps it linear
        tries += 1
        try:
            value, _ = _DECODER.raw_decode(text, at)
        except (json.JSONDecodeError, RecursionError):
            value = None
        if isinstance(value, dict) and wanted & set(value):
            return value
        at = text.find("{", at + 1)
    return None


def _table(text: str, asked: Sequence[Question]) -> dict[str, Any] | None:
    """A Markdown score table (| item | score | quote |), as the answer object would hold it."""
    if "|" not in text:
        return None
    try:
        rows = read_markdown("the reply", text)
    except CardError:
        return None
    kinds = {q.key: q.kind for q in asked}
    data: dict[str, Any] = {}
    for row in rows:
        entry = {"quote": row.quote or NO_EVIDENCE, "turn": row.turn}
        if kinds.get(row.id) == "count":
            data.setdefault(row.id, {"events": []})["events"].append(entry)
        elif row.score is not None:
            score = row.score if row.score_high is None else f"{row.score}-{row.score_high}"
            data[row.id] = {"score": score, **entry}
        else:
            data[row.id] = entry
    return data or None


def quote_of(raw: Any) -> str | None:
    """The quote as given, or None where the judge gave none ("no evidence")."""
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    for opening, closing in _WRAPPERS:
        if len(text) >= 2 and text.startswith(opening) and text.endswith(closing):
            text = text[len(opening) : -len(closing)].strip()
            break
    return None if text.lower() in _NOTHING or text.lower().rstrip(".") in _NOTHING else text


def turn_of(raw: Any) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int) and raw >= 0:
        return raw
    if isinstance(raw, str) and raw.strip().isdigit():
        return int(raw.strip())
    return None


def read(text: str, asked: Sequence[Question]) -> Reading:
    """Every question's claim or problem. Unreadable when the reply holds no answer object at all."""
    data, form = extract(text, asked)
    reading = Reading(form=form)
    keys = {q.key for q in asked}
    reading.strays = [k for k in data if k not in keys]
    for q in asked:
        entry = data.get(q.key)
        if q.kind == "verdict" and isinstance(entry, dict):
            steps = {q2.path[1] for q2 in asked if q2.key == q.key}
            reading.strays += [f"{q.key}.{s}" for s in entry if s not in steps and f"{q.key}.{s}" not in reading.strays]
            entry = entry.get(q.path[1])
        if entry is None:
            reading.problems[q] = "missing from your answer"
            continue
        if not isinstance(entry, dict):
            reading.problems[q] = f"expected an object, found {type(entry).__name__}"
            continue
        try:
            reading.claims[q] = _claim(q, entry)
        except ValueError as exc:
            reading.problems[q] = str(exc)
    return reading


def _evidence(entry: dict[str, Any]) -> Evidence:
    return Evidence(quote_of(entry.get("quote")), turn_of(entry.get("turn")))


def _claim(q: Question, entry: dict[str, Any]) -> Claim:
    if q.kind == "score":
        raw = entry.get("score")
        if raw is None:
            raise ValueError("no score given")
        try:
            low, high = parse_score(raw)
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        allowed = (high is None and low in q.values) or (
            high is not None and f"{_num(low)}-{_num(high)}" in q.undecided
        )
        if not allowed:
            choices = ", ".join(str(v) for v in (*q.values, *q.undecided))
            raise ValueError(f"the score {raw!r} is not on its scale ({choices})")
        return Claim(q, (low, high), (_evidence(entry),))
    if q.kind == "count":
        events = entry.get("events")
        if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
            raise ValueError('"events" must be a list of objects, each with its quote')
        return Claim(q, None, tuple(_evidence(e) for e in events))
    if q.kind == "chain":
        length = entry.get("length")
        if isinstance(length, bool) or not isinstance(length, int) or length < 0:
            raise ValueError(f"the length must be a whole number, found {length!r}")
        return Claim(q, length, (_evidence(entry),))
    if q.kind == "summary":
        sentence = quote_of(entry.get("sentence"))  # the template's "…" is no sentence either
        if sentence is None:
            raise ValueError("no sentence given")
        return Claim(q, sentence, (_evidence(entry),))
    name = {"yesno": "answer", "verdict": "verdict", "probe": "mark"}[q.kind]
    value = entry.get(name)
    if value not in q.values:
        raise ValueError(f"the {name} {value!r} is not one of: {', '.join(map(str, q.values))}")
    return Claim(q, value, (_evidence(entry),))


def _num(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


@dataclass
class Verdicts:
    """A head-to-head reply read: criterion -> (winner as shown, reason), what was wrong, stray keys."""

    given: dict[str, tuple[str, str]] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    strays: list[str] = field(default_factory=list)


def read_verdicts(text: str, criteria: Sequence[str]) -> Verdicts:
    """Each criterion's winner (A, B or tie) and reason. Unreadable when the reply holds no answer object."""
    data, _ = extract(text, (), keys=criteria)
    out = Verdicts(strays=[k for k in data if k not in criteria])
    for criterion in criteria:
        entry = data.get(criterion)
        if isinstance(entry, str):
            entry = {"winner": entry}
        if not isinstance(entry, dict):
            out.problems[criterion] = "missing from your answer"
            continue
        raw = entry.get("winner")
        winner = {"a": "A", "b": "B", "tie": "tie"}.get(str(raw).strip().lower()) if raw is not None else None
        if winner is None:
            out.problems[criterion] = f'the winner {raw!r} is not "A", "B" or "tie"'
            continue
        reason = entry.get("reason")
        out.given[criterion] = (winner, reason.strip() if isinstance(reason, str) else "")
    return out
