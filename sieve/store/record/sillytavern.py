"""A SillyTavern (or TavernAI) chat file (.jsonl) as a run, to review and score like any other.

The first line may be the chat's header (user and character names, a group's
`character_names`, metadata); every other line is one message: `mes`, `is_user`,
its speaker's `name`, maybe `is_system`, `swipes` (kept as alternatives, the
shown one chosen), `send_date` and `extra.model`. Every vintage is read: dates as
epoch milliseconds, "2023-4-20 @10h 26m 30s 175ms", "August 7, 2024 6:47pm" or
ISO 8601; `is_name`; no `extra` at all. A line that is no message (a hand-added
`{"system": ...}`, a comment, a line cut short, a message with a field of the wrong
kind) is skipped with a warning naming its line, or refused with `strict`; a byte
order mark is no fault. The file is checked whole before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveError, SieveInputError
from sieve.files import read_text
from sieve.scenarios import Scenario
from sieve.store.record.ids import new_id
from sieve.store.record.runs import create_run, now

MAX_CHAT_BYTES = 64 * 1024 * 1024
# SillyTavern's own "humanized" dates: 2023-4-20 @10h 26m 30s 175ms, 2024-08-07@18h47m12s.
_HUMANIZED = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m\s*(\d{1,2})s(?:\s*(\d{1,3})ms)?$")
_SPOKEN = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p", "%b %d, %Y %I:%M%p", "%B %d, %Y %H:%M")


class ChatError(SieveInputError):
    """A chat file that cannot be imported: the file, the line, what is wrong."""


def sent_at(value: Any) -> str | None:
    """A message's send_date as an ISO timestamp, whatever the vintage wrote; None if it cannot be read.

    Epoch numbers are UTC; the humanized and spoken forms carry no zone and stay local, as written.
    """
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            seconds = value / 1000 if value > 1e11 else value  # milliseconds, as every vintage but the oldest
            return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")
        if not isinstance(value, str) or not value.strip():
            return None
        text = value.strip()
        found = _HUMANIZED.match(text)
        if found:
            y, mo, d, h, mi, s, ms = (int(g or 0) for g in found.groups())
            return datetime(y, mo, d, h, mi, s, ms * 1000).isoformat(timespec="milliseconds")
        for pattern in _SPOKEN:
            try:
                return datetime.strptime(text, pattern).isoformat(timespec="milliseconds")
            except ValueError:
                continue
        return datetime.fromisoformat(text).isoformat(timespec="milliseconds")
    except (ValueError, OverflowError, OSError):
        return None


def read_chat(
    path: str | Path,
    *,
    strict: bool = False,
    warn: Callable[[str], None] | None = None,
    cut: list[int] | None = None,
) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]]]:
    """The header (possibly empty) and the messages with their line numbers.

    A line that is no message (a comment, a truncated last line, an object without
    `mes`, a message whose fields are not as they should be) is skipped, and `warn`
    is told its number and what is wrong; with `strict`, the file is refused at that
    line (ChatError). A line whose only fault is a comma after its object is read
    without it, with a warning. A byte order mark is no fault, wherever a line starts with one.
    `cut` is given the numbers of the lines cut short: each a message lost, the chat not whole.
    """
    path = Path(path)
    text = read_text(path, MAX_CHAT_BYTES, "chat", ChatError)
    header: dict[str, Any] = {}
    messages: list[tuple[int, dict[str, Any]]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.lstrip("\ufeff")  # files joined together keep each one's mark
        if not line.strip():
            continue
        try:
            entry = _entry(path, n, line, strict, warn)
        except ChatError as bad:
            if strict:
                raise
            if warn is not None:
                warn(f"{path}:{n}: {bad.message}: skipped")
            if cut is not None and bad.message.startswith(CUT_SHORT):
                cut.append(n)
            continue
        if "mes" not in entry and "is_user" not in entry and not messages and not header:
            header = entry
            continue
        try:
            _check_message(path, n, entry)
        except ChatError as bad:
            if strict:
                raise
            if warn is not None:
                warn(f"{path}:{n}: {bad.message}: skipped")
            continue
        messages.append((n, entry))
    if not messages:
        raise ChatError(str(path), "the chat has no messages")
    return header, messages


def _entry(path: Path, n: int, line: str, strict: bool, warn: Callable[[str], None] | None) -> dict[str, Any]:
    """The line's object, its strings checked; ChatError naming what is wrong."""
    try:
        entry = _parse(path, n, line)
    except json.JSONDecodeError as exc:
        trimmed = line.rstrip()
        if strict or not trimmed.endswith(","):
            raise ChatError(str(path), _what_is_wrong(line, exc), line=n, col=exc.colno) from None
        try:  # a line ending in a comma, as in a JSON array taken apart: the object before it
            entry = _parse(path, n, trimmed[:-1])
        except json.JSONDecodeError:
            raise ChatError(str(path), _what_is_wrong(line, exc), line=n, col=exc.colno) from None
        if warn is not None:
            warn(f"{path}:{n}: a comma after the object: read without it")
    if not isinstance(entry, dict):
        raise ChatError(str(path), f"expected an object, found {type(entry).__name__}", line=n, col=1)
    _check_text(path, n, entry)
    return entry


def _parse(path: Path, n: int, line: str) -> Any:
    try:
        return json.loads(line)
    except RecursionError:
        raise ChatError(str(path), "arrays or objects nested too deeply to read", line=n, col=1) from None


CUT_SHORT = "the line ends before its object does (cut short?)"


def _what_is_wrong(line: str, exc: json.JSONDecodeError) -> str:
    if line.lstrip().startswith(("//", "#", "/*")):
        return "a comment, not a message"
    # json's own words, whole: its message ("Unterminated string starting at") leaves the column to the caller.
    said = f"{exc.msg[0].lower()}{exc.msg[1:]}" + (" " if exc.msg.endswith(" at") else " at ") + f"column {exc.colno}"
    if exc.msg.startswith("Unterminated") or exc.pos >= len(line.rstrip()):
        return f"{CUT_SHORT}: {said}"
    return said


def cut_short_error(lines: Sequence[int]) -> str:
    """Why an imported chat's run is interrupted: the lines cut short, each a message lost."""
    named = ", ".join(str(n) for n in lines)
    lost = "a message" if len(lines) == 1 else f"{len(lines)} messages"
    return f"the chat file is cut short (line{'s' if len(lines) > 1 else ''} {named}): {lost} lost"


def _check_message(path: Path, n: int, entry: dict[str, Any]) -> None:
    """A message as SillyTavern writes one: `mes` a string, `is_user` true or false, `swipes` strings."""
    if "mes" not in entry and "is_user" not in entry:
        raise ChatError(str(path), "not a message (no 'mes', no 'is_user')", line=n, col=1)
    if not isinstance(entry.get("mes"), str):
        raise ChatError(str(path), "a message needs 'mes', its text, as a string", line=n, col=1)
    if not isinstance(entry.get("is_user"), bool):
        raise ChatError(str(path), "a message needs 'is_user': true or false", line=n, col=1)
    swipes = entry.get("swipes")
    if swipes is not None:
        if not isinstance(swipes, list) or not all(isinstance(s, str) for s in swipes):
            raise ChatError(str(path), "'swipes' must be a list of strings", line=n, col=1)
        swipe_id = entry.get("swipe_id", 0)
        if swipes and (not isinstance(swipe_id, int) or isinstance(swipe_id, bool) or not 0 <= swipe_id < len(swipes)):
            raise ChatError(str(path), f"'swipe_id' {swipe_id!r} is not one of the {len(swipes)} swipes", line=n, col=1)


def _check_text(path: Path, line: int, node: Any) -> None:
    """Every string of a line as UTF-8 can hold it (JSON can spell a lone surrogate; a database cannot)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise ChatError(str(path), "a lone surrogate (not text UTF-8 can hold)", line=line, col=1) from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _name(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


class AlreadyImported(SieveError):
    """The same chat (the same messages, in order) was imported for this scenario before: nothing is added."""

    def __init__(self, path: str | Path, run_id: str):
        self.run_id = run_id
        super().__init__(f"{path}: already imported as run {run_id}; nothing added (--again adds a copy)")


# Where a chat's player messages stand on the script: for each (in order), (step id, repetition, origin) or None.
Placer = Callable[[Sequence[str]], Sequence[tuple[str, int, str] | None]]


def chat_digest(messages: Sequence[tuple[int, dict[str, Any]]]) -> str:
    """What makes two chat files the same chat: who said what, in order, with every swipe (not dates or names)."""
    said = [[m["is_user"], bool(m.get("is_system")), m["mes"], m.get("swipes")] for _, m in messages]
    return hashlib.sha256(json.dumps(said, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


def imported_before(db: Database, digest: str, scenario: str) -> str | None:
    """The run the same chat was imported as, for this scenario (archived or not), if any."""
    row = db.execute(
        "SELECT id FROM runs WHERE endpoint = 'sillytavern' AND scenario = ? "
        "AND json_extract(settings, '$.chat_sha256') = ? ORDER BY id LIMIT 1",
        [scenario, digest],
    ).fetchone()
    return row[0] if row else None


def import_chat(
    db: Database,
    path: str | Path,
    scenario: Scenario,
    model: str | None = None,
    *,
    strict: bool = False,
    warn: Callable[[str], None] | None = None,
    place: Placer | None = None,
    again: bool = False,
) -> str:
    """Store the chat as a run of `scenario`; returns the run's id. Each message keeps its speaker's name.

    `place` puts the player's messages on the script (sieve/store/scoring/chat_steps.py): those it
    places take their step, the others are the player's own. A chat imported before for
    this scenario is AlreadyImported, unless `again` (a copy is added).
    """
    cut: list[int] = []
    header, messages = read_chat(path, strict=strict, warn=warn, cut=cut)
    digest = chat_digest(messages)
    before = imported_before(db, digest, scenario.name)
    if before is not None and not again:
        raise AlreadyImported(path, before)
    group = [n for n in (header.get("character_names") or []) if _name(n)] if isinstance(header, dict) else []
    speakers = [_name(m.get("name")) for _, m in messages if not m["is_user"] and not m.get("is_system")]
    character = (
        _name(header.get("character_name"))
        or (", ".join(group) if group else None)
        or next((s for s in speakers if s), None)
        or "character"
    )
    models = [m.get("extra", {}).get("model") for _, m in messages if isinstance(m.get("extra"), dict)]
    chosen_model = (
        model or next((m for m in reversed(models) if isinstance(m, str) and m), None) or f"sillytavern:{character}"
    )
    settings = {
        "source": "sillytavern",
        "file": Path(path).name,
        "character": character,
        "characters": sorted({s for s in speakers if s}) or [character],
        "user": _name(header.get("user_name")),
        "chat_sha256": digest,
    }
    player = [m["mes"] for _, m in messages if m["is_user"] and not m.get("is_system")]
    placed = iter(place(player) if place is not None else [None] * len(player))
    left_script_at: int | None = None if place is not None else 0  # unplaced, a chat is off the script throughout
    scripted = 0
    with db.atomic():
        run_id = create_run(db, scenario, model=chosen_model, endpoint="sillytavern", settings=settings, origin="live")
        t = now()
        for idx, (_, message) in enumerate(messages):
            role = "system" if message.get("is_system") else ("user" if message["is_user"] else "assistant")
            origin, step_id, repetition = ("reply" if role == "assistant" else "live"), None, None
            if role == "user":
                step = next(placed)
                if step is not None:
                    step_id, repetition, origin = step
                    scripted += 1
                elif left_script_at is None:
                    left_script_at = scripted
            swipes: list[Any] = message["swipes"] if role == "assistant" and message.get("swipes") else [message["mes"]]
            chosen = message.get("swipe_id", 0) if len(swipes) > 1 else 0
            created = sent_at(message.get("send_date")) or t
            for alt, text in enumerate(swipes):
                db.execute(
                    "INSERT INTO turns (id, run_id, idx, alt, chosen, role, origin, step_id, step_repeat, text, "
                    "status, speaker, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'complete', ?, ?, ?)",
                    [
                        new_id(),
                        run_id,
                        idx,
                        alt,
                        int(alt == chosen),
                        role,
                        origin,
                        step_id,
                        repetition,
                        message["mes"] if alt == chosen else text,
                        _name(message.get("name")),
                        created,
                        t,
                    ],
                )
        # A line cut short is a message lost: the run is not the whole chat, and is not counted as one.
        status, error = ("interrupted", cut_short_error(cut)) if cut else ("complete", None)
        db.execute(
            "UPDATE runs SET status = ?, error = ?, ended = ?, owner = NULL, left_script_at = ? WHERE id = ?",
            [status, error, t, left_script_at, run_id],
        )
    return run_id
