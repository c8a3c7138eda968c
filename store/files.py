"""Reading a file someone hands us (a card, a bundle, a chat): bounded in size, UTF-8, errors that name it."""

from __future__ import annotations

from pathlib import Path

from scenarios import ScenarioError


def read_text(path: str | Path, limit: int, noun: str, error: type[ScenarioError]) -> str:
    """The file's text; `error(path, message)` if it is too large, unreadable or not UTF-8.

    The size is checked before anything is read, so a huge file costs nothing.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > limit:
            raise error(str(path), f"the file is {size:,} bytes; a {noun} is at most {limit:,}")
        raw = path.read_bytes()
    except OSError as exc:
        raise error(str(path), f"cannot read the {noun}: {exc.strerror}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise error(str(path), f"the {noun} is not UTF-8 text") from None
