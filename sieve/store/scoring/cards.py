"""Score cards made elsewhere (an LLM judge's JSON, a Markdown table like the seeds'): read, check, import.

A card is read whole and checked against the run's scenario before anything is
stored: a card that cannot be read is an error that names the file and where; one
that can is checked item by item, each item's problem (an id the scenario lacks, a
score off its scale, a turn the run does not have) reported as its own, and a card
with any such problem is never imported, so the database is left untouched.

Turns count from 0 (message 0, the setup, is turn 0; its reply turn 1); a card may
name a step (`m3`) instead of a turn, meaning the reply to that step.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveInputError
from sieve.files import read_text
from sieve.scenarios import Scenario
from sieve.store.record import annotations as notes
from sieve.store.record.annotations import Quote, Verified
from sieve.store.scoring import evidence, quotes
from sieve.store.scoring.runview import RunView

MAX_CARD_BYTES = 5 * 1024 * 1024
MAX_SCORE = 1_000_000  # a score or a count past this is a typo, not a judgment
_GLYPHS = {"½": ".5", "¼": ".25", "¾": ".75"}


class CardError(SieveInputError):
    """A card that cannot be used: `path:line:col: what is wrong` (or the key where it is)."""


@dataclass(frozen=True)
class CardItem:
    id: str
    score: float | None
    score_high: float | None
    quote: str | None
    turn: int | None
    note: str | None
    where: str  # "line 7" or "items[3]", for messages
    step: str | None = None  # a step's id given instead of a turn: the reply to it


def parse_score(raw: Any) -> tuple[float, float | None]:
    """2, "0.5", "½", "1½", "½–1", "0.5-1" -> (low, high or None)."""
    if isinstance(raw, bool):
        raise ValueError("a score is a number, not true/false")
    if isinstance(raw, (int, float)):
        if not (math.isfinite(raw) and abs(raw) <= MAX_SCORE):
            raise ValueError(f"{raw!r} is not a score (a finite number up to {MAX_SCORE:,})")
        return float(raw), None
    if not isinstance(raw, str) or not raw.strip():
        raise ValueError(f"a score must be a number, found {raw!r}")
    text = raw.strip()
    for glyph, decimal in _GLYPHS.items():
        text = re.sub(rf"(\d){glyph}", rf"\g<1>{decimal}", text).replace(glyph, "0" + decimal)
    parts = [p.strip() for p in re.split(r"\s*(?:–|—|-(?=\s*\d)|to)\s*", text) if p.strip()]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"'{raw}' is not a score") from None
    if not all(math.isfinite(v) and abs(v) <= MAX_SCORE for v in values):
        raise ValueError(f"'{raw}' is not a score (a finite number up to {MAX_SCORE:,})")
    if len(values) == 1:
        return values[0], None
    if len(values) == 2 and values[0] < values[1]:
        return values[0], values[1]
    raise ValueError(f"'{raw}' is not a score or an undecided pair such as ½–1")


def read_card(path: str | Path) -> list[CardItem]:
    """A card from JSON (a list of items, or {"items": [...]}) or a Markdown table."""
    path = Path(path)
    text = read_text(path, MAX_CARD_BYTES, "card", CardError)
    if text.lstrip().startswith(("[", "{")):
        items = _read_json(str(path), text)
    else:
        items = _read_markdown(str(path), text)
    for item in items:
        for name in ("id", "quote", "note"):
            value = getattr(item, name)
            if value is not None and not _utf8(value):
                raise CardError(
                    str(path), f"the {name} holds a lone surrogate (not text UTF-8 can hold)", key=item.where
                )
    return items


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _read_json(path: str, text: str) -> list[CardItem]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CardError(path, exc.msg, line=exc.lineno, col=exc.colno) from None
    except RecursionError:
        raise CardError(path, "arrays or objects nested too deeply to read") from None
    if isinstance(data, dict):
        data = data.get("items")
    if not isinstance(data, list):
        raise CardError(path, 'expected a list of items (or {"items": [...]})')
    items = []
    for i, entry in enumerate(data):
        where = f"items[{i}]"
        if not isinstance(entry, dict):
            raise CardError(path, f"expected an object, found {type(entry).__name__}", key=where)
        unknown = set(entry) - {"id", "item", "score", "quote", "turn", "step", "note"}
        if unknown:
            raise CardError(path, f"unknown key '{sorted(unknown)[0]}'", key=where)
        item_id = entry.get("id", entry.get("item"))
        if not isinstance(item_id, str) or not item_id.strip():
            raise CardError(path, "needs an 'id' string (T7, R3, L5, C3...)", key=where)
        quote, note = entry.get("quote"), entry.get("note")
        turn: Any = entry.get("turn")
        step: Any = entry.get("step")
        if quote is not None and not isinstance(quote, str):
            raise CardError(path, f"the quote must be a string, found {type(quote).__name__}", key=f"{where}.quote")
        if note is not None and not isinstance(note, str):
            raise CardError(path, f"the note must be a string, found {type(note).__name__}", key=f"{where}.note")
        if isinstance(turn, str) and turn.strip() and step is None:
            turn, step = None, turn.strip()  # a step's id where a turn would be
        if turn is not None and (not isinstance(turn, int) or isinstance(turn, bool) or turn < 0):
            raise CardError(path, "the turn must be a turn number (0, 1, ...) or a step's id", key=f"{where}.turn")
        if step is not None and (not isinstance(step, str) or not step.strip()):
            raise CardError(path, "the step must be a step's id (m3, turn7, ...)", key=f"{where}.step")
        try:
            low, high = parse_score(entry["score"]) if entry.get("score") is not None else (None, None)
        except ValueError as exc:
            raise CardError(path, str(exc), key=f"{where}.score") from None
        items.append(CardItem(item_id.strip(), low, high, quote, turn, note, where, step.strip() if step else None))
    return items


def read_markdown(where: str, text: str) -> list[CardItem]:
    """A Markdown table | item | score | quote | out of any text (a judge's prose reply); CardError if there is none."""
    return _read_markdown(where, text)


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def _unquote(cell: str) -> str:
    for open_, close in (('"', '"'), ("“", "”"), ("„", "“"), ("'", "'"), ("‘", "’")):
        if len(cell) >= 2 and cell.startswith(open_) and cell.endswith(close):
            return cell[len(open_) : -len(close)]
    return cell


def _read_markdown(path: str, text: str) -> list[CardItem]:
    lines = text.splitlines()
    header_at = next((i for i, line in enumerate(lines) if line.lstrip().startswith("|")), None)
    if header_at is None:
        raise CardError(path, "neither JSON nor a Markdown table (| item | score | quote |)")
    header = [c.lower() for c in _cells(lines[header_at])]
    columns = {}
    for name in ("item", "score", "quote", "turn", "step", "note"):
        matches = [i for i, c in enumerate(header) if c == name or c.startswith(name)]
        if matches:
            columns[name] = matches[0]
    if "item" not in columns or "score" not in columns:
        raise CardError(path, "the table needs the columns item and score (and quote)", line=header_at + 1, col=1)
    items = []
    for n in range(header_at + 1, len(lines)):
        line = lines[n]
        if not line.lstrip().startswith("|"):
            if line.strip():
                break  # the table has ended
            continue
        cells = _cells(line)
        if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
            continue  # the separator row
        if len(cells) < len(header):
            raise CardError(path, f"a row with {len(cells)} cells under a header of {len(header)}", line=n + 1, col=1)

        def cell(name: str, cells: list[str] = cells) -> str | None:
            return cells[columns[name]] if name in columns and cells[columns[name]] else None

        try:
            low, high = parse_score(cell("score")) if cell("score") else (None, None)
        except ValueError as exc:
            raise CardError(path, str(exc), line=n + 1, col=max(0, line.find(cells[columns["score"]])) + 1) from None
        turn, step = cell("turn"), cell("step")
        if turn is not None and not re.fullmatch(r"[0-9]{1,9}", turn):
            turn, step = None, step or turn  # a step's id where a turn would be (`m3`)
        quote = cell("quote")
        items.append(
            CardItem(
                cell("item") or "",
                low,
                high,
                _unquote(quote) if quote else None,
                int(turn) if turn else None,
                cell("note"),
                f"line {n + 1}",
                step,
            )
        )
    if not items:
        raise CardError(path, "the table has no rows", line=header_at + 1, col=1)
    return items


@dataclass(frozen=True)
class Checked:
    item: CardItem
    found: quotes.Found | None  # None: the item came without a quote, or could not be checked
    fields: dict[str, Any] | None = None  # the annotation it becomes (None: nothing to store, a count of 0)
    off_step: bool = False  # its quote stands off the steps its item is judged on
    problem: str | None = None  # why the item cannot stand (no such item, off its scale, no such turn, ...)
    claimed: int | None = None  # the turn the card names for it (its step's reply, when it names a step)

    @property
    def elsewhere(self) -> str | None:
        """A note when the quote stands at another turn than the one claimed (None: where claimed, or unclaimed)."""
        found = self.found
        if self.claimed is None or found is None or not found.found or found.turn_idx in (None, self.claimed):
            return None
        return f"found at turn {found.turn_idx}, not at turn {self.claimed} as claimed"


class _Unfit(Exception):
    """Why one item of a card cannot stand (check_card keeps it beside the item and goes on)."""


def _fields(scenario: Scenario, item: CardItem) -> dict[str, Any] | None:
    """The annotation a card's line becomes: a rubric item's score, a counted event, a chain's length.
    None for a count or chain of 0 (none seen: nothing to store)."""
    try:
        rubric = scenario.item(item.id)[0]
    except KeyError:
        counter = next((c for c in scenario.counters if c.id == item.id), None)
        if counter is None or counter.kind in ("verdict", "yesno"):
            what = "a probe" if counter is None else f"a {counter.kind} counter"
            raise ValueError(f"{item.id} is {what}: a card carries scores, counts and chains, not marks or verdicts")
        if item.score == 0 and item.score_high is None:
            return None
        score = None if counter.kind == "count" and item.score == 1 else item.score
        return {"item": item.id, "kind": "count", "score": score, "score_high": item.score_high}
    return {"item": item.id, "rubric": rubric.id, "kind": "score", "score": item.score, "score_high": item.score_high}


def check_card(path: str, items: list[CardItem], view: RunView) -> list[Checked]:
    """Check each item against the run's scenario (the evidence rule: its id, scale, counts and chains, the
    steps its quote may come from; the turn or step it names) and each quote against its transcript.

    Every item is checked, whatever the others hold: one that cannot stand carries its problem
    (Checked.problem), and import_card refuses a card with any."""
    run_turns = view.turns
    by_idx = {t["idx"]: t["id"] for t in run_turns}
    transcript = quotes.Transcript(run_turns)
    played = set(view.steps.values())
    replies = len(view.replies())
    out = []
    for item in items:
        claimed = _claimed_turn(item, view)
        try:
            out.append(_check(item, view, transcript, by_idx, played, replies, claimed))
        except _Unfit as exc:
            out.append(Checked(item, None, problem=str(exc), claimed=claimed))
    return _one_card(view.scenario, out)


def _one_card(scenario: Scenario, checked: list[Checked]) -> list[Checked]:
    """The evidence rule on the card as a whole, as on a judge's answer: an item given two values is refused naming
    both; a count's events resting on one quote are refused (evidence.given_twice, evidence.events_on_one_quote)."""
    out = list(checked)
    first: dict[str, Checked] = {}
    events: dict[str, list[int]] = {}
    for n, c in enumerate(out):
        if c.problem is not None:
            continue
        if evidence.once_a_card(scenario, c.item.id):
            seen = first.setdefault(c.item.id, c)
            if seen is not c:
                out[n] = replace(c, problem=evidence.given_twice(c.item.id, _given(seen.item), _given(c.item)))
        elif c.fields is not None:
            events.setdefault(c.item.id, []).append(n)
    for item_id, at in events.items():
        placed = {n: place for n in at if (place := _place(out[n])) is not None}
        reason = evidence.events_on_one_quote(list(placed.values()), len(at))
        if reason is None:
            continue
        where: dict[Any, str] = {}
        for n, place in placed.items():
            if place in where:
                out[n] = replace(out[n], problem=f"{item_id}: {reason} ({where[place]} and {out[n].item.where})")
            else:
                where[place] = out[n].item.where
    return out


def _place(c: Checked) -> tuple[str | None, int | None] | None:
    """Where an event's quote stands, if in one place."""
    found = c.found
    return (found.turn_id, found.start) if found is not None and found.verdict in evidence.PLACED else None


def _given(item: CardItem) -> tuple[str, str]:
    value = "no score" if item.score is None else _number(item.score)
    if item.score_high is not None:
        value += f"–{_number(item.score_high)}"
    return item.where, value


def _number(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _check(
    item: CardItem,
    view: RunView,
    transcript: quotes.Transcript,
    by_idx: dict[int, str],
    played: set[str],
    replies: int,
    claimed: int | None,
) -> Checked:
    """One item checked; _Unfit names the first thing about it the scenario or the run cannot hold."""
    scenario = view.scenario
    known = {i.id for r in scenario.rubrics for i in r.all_items()}
    counters = {c.id for c in scenario.counters} | {p.id for p in scenario.probes}
    if item.id not in known and item.id not in counters:
        raise _Unfit(f"'{item.id}' is no item of {scenario.name}")
    if item.id in known and item.score is None:
        raise _Unfit(f"{item.id}: a rubric item needs a score")
    try:
        fields = _fields(scenario, item)
    except ValueError as exc:
        raise _Unfit(str(exc)) from None
    reason = evidence.impossible(scenario, fields, replies) if fields is not None else None
    if reason:
        raise _Unfit(reason)
    if item.turn is not None and item.turn not in by_idx:
        raise _Unfit(f"{item.id}: the run has no turn {item.turn} (turns count from 0: 0 to {max(by_idx, default=0)})")
    if item.step is not None:
        if item.step not in {s.id for s in scenario.steps}:
            raise _Unfit(f"{item.id}: {scenario.name} has no step '{item.step}'")
        if claimed is None:
            raise _Unfit(f"{item.id}: step {item.step} was not answered in this run")
    prefer = by_idx.get(claimed) if claimed is not None else None
    found = transcript.locate(item.quote, prefer, repeats=evidence.repeats(scenario, item.id)) if item.quote else None
    placed = found.turn_id if found is not None and found.verdict in evidence.PLACED else None
    reason = evidence.refused_quote(scenario, item.id, view.steps, placed)
    if reason:
        raise _Unfit(reason)
    off = evidence.off_step(scenario, item.id, view.steps.get(placed or ""), played)
    return Checked(item, found, fields, off, claimed=claimed)


def _claimed_turn(item: CardItem, view: RunView) -> int | None:
    if item.turn is not None:
        return item.turn
    if item.step is None:
        return None
    replies = view.replies_to(item.step) if item.step in {s.id for s in view.scenario.steps} else []
    return replies[0]["idx"] if replies else None


def import_card(db: Database, view: RunView, checked: list[Checked], reviewer: str, source: str | None = None) -> int:
    """Store the card's scores as the reviewer's annotations through the evidence rule, all or nothing;
    returns how many were stored (a count of 0 stores nothing).

    A quote that was not found is stored with its verdict (absent) and low
    confidence: never as if it were evidence. A card with an item that cannot stand
    (Checked.problem) is refused whole: CardError, nothing stored.
    """
    problems = [c for c in checked if c.problem]
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise CardError(f"card of {view.id}", f"{first.problem}{more}: nothing imported", key=first.item.where)
    stored = 0
    with db.atomic():
        for c in checked:
            if c.fields is None:
                continue
            item = c.item
            verified = None
            if item.quote and c.found is not None:
                f = c.found
                verified = Verified(Quote(f.turn_id, f.start, f.end, item.quote), f.verdict, f.similarity)
            backed = has_evidence_verdict(verified) and not c.off_step
            evidence.annotate(
                db,
                view.id,
                verified=verified,
                view=view,
                reviewer=reviewer,
                note=item.note,
                confidence=None if backed else "low",
                source=source,
                **c.fields,
            )
            stored += 1
    return stored


def has_evidence_verdict(verified: Verified | None) -> bool:
    return verified is not None and notes.is_evidence(verified.verdict)
