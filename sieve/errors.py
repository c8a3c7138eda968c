"""The errors a person must see, under one base, each with the exit status the CLI gives it.

The CLI maps them to exit statuses in one place (`sieve.cli`); the TUI shows
their text. Anything else that escapes is a bug and is reported as one.
"""

from __future__ import annotations


class SieveError(Exception):
    """Something the user has to know about; `str()` is the whole message."""

    exit_status = 1


class SieveInputError(SieveError):
    """A file or a value handed to sieve that cannot be used: `path:line:col: key: what is wrong`.

    `line` and `col` are 1-based and may be None when the place cannot be pinned
    to a line; `key` (`rubrics[T].items[T3].steps[0]`) still says where.
    """

    exit_status = 2

    def __init__(
        self,
        path: str,
        message: str,
        *,
        line: int | None = None,
        col: int | None = None,
        key: str | None = None,
    ):
        self.path = path
        self.message = message
        self.line = line
        self.col = col
        self.key = key
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}:{self.col or 1}"
        if self.key:
            return f"{where}: {self.key}: {self.message}"
        return f"{where}: {self.message}"


class SieveUsageError(SieveError):
    """A request that cannot be carried out as asked: an unknown run, nothing to regenerate, an empty message."""

    exit_status = 2


class NotFound(SieveUsageError):
    """Something named by the user (a run, a queue) that is not in the database."""
