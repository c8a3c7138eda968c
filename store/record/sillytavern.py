"""A SillyTavern chat file (.jsonl) as a run, origin live, to review and score like any other.

The first line may be the chat's header (user and character names, metadata);
every other line is one message: `mes`, `is_user`, maybe `swipes` (kept as
alternatives, the shown one chosen) and `extra.model`. The file is checked whole
before anything is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveInputError
from sieve.files import read_text
from sieve.scenarios import Scenario
from sieve.store.record.ids import new_id
from sieve.store.record.runs import create_run, now

MAX_CHAT_BYTES = 64 * 1024 * 1024


class ChatError(SieveInputError):
    """A chat file that cannot be imported: the file, the line, what is wrong."""


def read_chat(path: str | Path) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]]]:
    """The header (possibly empty) and the messages with their line numbers."""
    path = Path(path)
    text = read_text(path, MAX_CHAT_BYTES, "chat", ChatError)
    header: dict[str, Any] = {}
    messages = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ChatError(str(path), exc.msg, line=n, col=exc.colno) from None
        if not isinstance(entry, dict):
            raise ChatError(str(path), f"expected an object, found {type(entry).__name__}", line=n, col=1)
        if "mes" not in entry and "is_user" not in entry and not messages and not header:
            header = entry
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
            if swipes and (not isinstance(swipe_id, int) or not 0 <= swipe_id < len(swipes)):
                raise ChatError(
                    str(path), f"'swipe_id' {swipe_id!r} is not one of the {len(swipes)} swipes", line=n, col=1
                )
        messages.append((n, entry))
    if not messages:
        raise ChatError(str(path), "the chat has no messages")
    return header, messages


def import_chat(db: Database, path: str | Path, scenario: Scenario, model: str | None = None) -> str:
    """Store the chat as a run of `scenario`; returns the run's id."""
    header, messages = read_chat(path)
    character = str(
        header.get("character_name")
        or next((m.get("name") for _, m in messages if not m["is_user"]), "")
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
        "user": header.get("user_name"),
    }
    with db.atomic():
        run_id = create_run(db, scenario, model=chosen_model, endpoint="sillytavern", settings=settings, origin="live")
        t = now()
        for idx, (_, message) in enumerate(messages):
            role = "system" if message.get("is_system") else ("user" if message["is_user"] else "assistant")
            origin = "reply" if role == "assistant" else "live"
            swipes = message.get("swipes") if role == "assistant" and message.get("swipes") else [message["mes"]]
            chosen = message.get("swipe_id", 0) if len(swipes) > 1 else 0
            for alt, text in enumerate(swipes):
                db.execute(
                    "INSERT INTO turns (id, run_id, idx, alt, chosen, role, origin, text, status, created, updated) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'complete', ?, ?)",
                    [
                        new_id(),
                        run_id,
                        idx,
                        alt,
                        int(alt == chosen),
                        role,
                        origin,
                        message["mes"] if alt == chosen else text,
                        t,
                        t,
                    ],
                )
        db.execute(
            "UPDATE runs SET status = 'complete', ended = ?, owner = NULL, left_script_at = 0 WHERE id = ?", [t, run_id]
        )
    return run_id
