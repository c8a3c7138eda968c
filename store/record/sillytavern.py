"""A SillyTavern (or TavernAI) chat file (.jsonl) as a run, origin live, to review and score like any other.

The first line may be the chat's header (user and character names, a group's
`character_names`, metadata); every other line is one message: `mes`, `is_user`,
its speaker's `name`, maybe `is_system`, `swipes` (kept as alternatives, the
shown one chosen), `send_date` and `extra.model`. Every vintage is read: dates as
epoch milliseconds, "2023-4-20 @10h 26m 30s 175ms", "August 7, 2024 6:47pm" or
ISO 8601; `is_name`; no `extra` at all. A line that is an object but no message
(a hand-added `{"system": ...}`) is skipped with a warning naming it, or refused
with `strict`. The file is checked whole before anything is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveInputError
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
    path: str | Path, *, strict: bool = False, warn: Callable[[str], None] | None = None
) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]]]:
    """The header (possibly empty) and the messages with their line numbers."""
    path = Path(path)
    text = read_text(path, MAX_CHAT_BYTES, "chat", ChatError)
    header: dict[str, Any] = {}
    messages: list[tuple[int, dict[str, Any]]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ChatError(str(path), exc.msg, line=n, col=exc.colno) from None
        except RecursionError:
            raise ChatError(str(path), "arrays or objects nested too deeply to read", line=n, col=1) from None
        if not isinstance(entry, dict):
            raise ChatError(str(path), f"expected an object, found {type(entry).__name__}", line=n, col=1)
        _check_text(path, n, entry)
        if "mes" not in entry and "is_user" not in entry:
            if not messages and not header:
                header = entry
                continue
            if strict:
                raise ChatError(str(path), "not a message (no 'mes', no 'is_user')", line=n, col=1)
            if warn is not None:
                warn(f"{path}:{n}: not a message (no 'mes', no 'is_user'): skipped")
            continue
        if not isinstance(entry.get("mes"), str):
            raise ChatError(str(path), "a message needs 'mes', its text, as a string", line=n, col=1)
        if not isinstance(entry.get("is_user"), bool):
            raise ChatError(str(path), "a message needs 'is_user': true or false", line=n, col=1)
        swipes = entry.get("swipes")
        if swipes is not None:
            if not isinstance(swipes, list) or not all(isinstance(s, str) for s in swipes):
                raise ChatError(str(path), "'swipes' must be a list of strings", line=n, col=1)
            swipe_id = entry.get("swipe_id", 0)
            if swipes and (
                not isinstance(swipe_id, int) or isinstance(swipe_id, bool) or not 0 <= swipe_id < len(swipes)
            ):
                raise ChatError(
                    str(path), f"'swipe_id' {swipe_id!r} is not one of the {len(swipes)} swipes", line=n, col=1
                )
        messages.append((n, entry))
    if not messages:
        raise ChatError(str(path), "the chat has no messages")
    return header, messages


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


def import_chat(
    db: Database,
    path: str | Path,
    scenario: Scenario,
    model: str | None = None,
    *,
    strict: bool = False,
    warn: Callable[[str], None] | None = None,
) -> str:
    """Store the chat as a run of `scenario`; returns the run's id. Each message keeps its speaker's name."""
    header, messages = read_chat(path, strict=strict, warn=warn)
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
    }
    with db.atomic():
        run_id = create_run(db, scenario, model=chosen_model, endpoint="sillytavern", settings=settings, origin="live")
        t = now()
        for idx, (_, message) in enumerate(messages):
            role = "system" if message.get("is_system") else ("user" if message["is_user"] else "assistant")
            origin = "reply" if role == "assistant" else "live"
            swipes: list[Any] = message["swipes"] if role == "assistant" and message.get("swipes") else [message["mes"]]
            chosen = message.get("swipe_id", 0) if len(swipes) > 1 else 0
            created = sent_at(message.get("send_date")) or t
            for alt, text in enumerate(swipes):
                db.execute(
                    "INSERT INTO turns (id, run_id, idx, alt, chosen, role, origin, text, status, speaker, created, updated) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'complete', ?, ?, ?)",
                    [
                        new_id(),
                        run_id,
                        idx,
                        alt,
                        int(alt == chosen),
                        role,
                        origin,
                        message["mes"] if alt == chosen else text,
                        _name(message.get("name")),
                        created,
                        t,
                    ],
                )
        db.execute(
            "UPDATE runs SET status = 'complete', ended = ?, owner = NULL, left_script_at = 0 WHERE id = ?", [t, run_id]
        )
    return run_id
