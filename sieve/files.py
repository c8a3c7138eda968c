"""Reading a file someone hands us (a scenario, a card, a bundle, a chat, a plan): bounded, UTF-8, errors that name it."""

from __future__ import annotations

from pathlib import Path

from sieve.errors import SieveInputError


def read_text(path: str | Path, limit: int, noun: str, error: type[SieveInputError] = SieveInputError) -> str:
    """The file's text; `error(path, message)` if it is too large, unreadable or not UTF-8.

    The limit holds on the bytes actually read, not only on what `stat` claims: a
    FIFO or a device such as /dev/zero reports no size and never ends. A regular
    file that is plainly too large is refused before anything is read.
    """
    path = Path(path)
    too_large = f"the file is larger than {limit:,} bytes; a {noun} is at most {limit:,}"
    try:
        if path.is_dir():
            raise error(str(path), f"is a directory, not a {noun}")
        if path.is_file() and path.stat().st_size > limit:
            raise error(str(path), too_large)
        with open(path, "rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as exc:
        raise error(str(path), f"cannot read the {noun}: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise error(str(path), too_large)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(str(path), f"the {noun} is not UTF-8 text", line=line, col=col) from None
