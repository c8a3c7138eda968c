"""Reading a TOML table by the format's rules: syntax errors placed, types and ranges checked, ids.

`TableReader` is what every part of a scenario file is read with: each problem a ScenarioError
naming the file, the line and column where it can be found, and the key
(`rubrics[T].items[T3].steps[0]`). The scenario's own parts are read in `rubric_reader` and `loader`.
"""

from __future__ import annotations

import math
import re
import tomllib
from typing import Any

from sieve.scenarios.errors import KeyPath, ScenarioError, kind_of, locate, render_key

INT64 = 2**63 - 1  # the largest integer SQLite (and so the record) holds
# Scores, maxima and deductions: a scale of a million points is already absurd;
# past this, sums stop being exact and a typo (1e300) would pass for a value.
NUMBER_LIMIT = 1_000_000
MAX_NESTING = 64  # where a RecursionError is blamed: nesting far beyond any real scenario
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SYNTAX_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def parse_toml(path: str, text: str) -> dict[str, Any]:
    """tomllib with its error moved into `path:line:col: message` form."""
    try:
        return tomllib.loads(text)
    except RecursionError:  # tomllib recurses once per level of nesting
        line, col = _too_deep(text) or (1, 1)
        raise ScenarioError(path, "arrays or tables nested too deeply to read", line=line, col=col) from None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _SYNTAX_POSITION.search(message)
        if found:
            raise ScenarioError(
                path,
                message[: found.start()],
                line=int(found.group(1)),
                col=int(found.group(2)),
            ) from None
        # "(at end of document)": point past the last line.
        message = message.replace(" (at end of document)", "")
        raise ScenarioError(path, f"{message} at end of file", line=text.count("\n") + 1, col=1) from None


def _too_deep(text: str) -> tuple[int, int] | None:
    """Where arrays and inline tables first nest past MAX_NESTING (strings and comments skipped), if they do."""
    depth, i, line, line_start = 0, 0, 1, 0
    while i < len(text):
        char = text[i]
        if char == "\n":
            line, line_start = line + 1, i + 1
        elif char == "#":
            i = text.find("\n", i)
            if i < 0:
                return None
            continue
        elif text.startswith(('"""', "'''"), i):
            end = text.find(text[i : i + 3], i + 3)
            if end < 0:
                return None  # an unclosed string: tomllib names it
            line += text.count("\n", i, end)
            line_start = text.rfind("\n", 0, end) + 1 if "\n" in text[i:end] else line_start
            i = end + 3
            continue
        elif char in "\"'":
            i += 1
            while i < len(text) and text[i] not in (char, "\n"):
                i += 2 if char == '"' and text[i] == "\\" else 1
            if i < len(text) and text[i] == "\n":
                continue  # an unclosed string ends with its line
        elif char in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return line, i - line_start + 1
        elif char in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None


class TableReader:
    """Typed access to a parsed document, every problem placed in its file."""

    def __init__(self, path: str, text: str, doc: dict[str, Any]):
        self.path = path
        self.text = text
        self.doc = doc

    def error(self, keypath: KeyPath, message: str) -> ScenarioError:
        # A key the file does not place (the top-level table, that has no header) is where the file begins.
        line, col = locate(self.text, keypath) or (1, 1)
        return ScenarioError(self.path, message, line=line, col=col, key=render_key(self.doc, keypath) or None)

    def table(self, value: Any, keypath: KeyPath, required: dict[str, str], optional: dict[str, str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(keypath, f"expected a table, found {kind_of(value)}")
        for key in value:
            if key not in required and key not in optional:
                known = ", ".join(sorted({*required, *optional}))
                raise self.error([*keypath, key], f"unknown key '{key}' (known keys: {known})")
        for key in required:
            if key not in value:
                # A nested table is named before the message (its key); the top level has none to name.
                where = "" if keypath else " (at the top level)"
                raise self.error(keypath, f"missing required key '{key}'{where}")
        for key, expected in {**required, **optional}.items():
            if key in value:
                self.check_type(value[key], [*keypath, key], expected)
        return value

    def check_type(self, value: Any, keypath: KeyPath, expected: str) -> None:
        checks = {
            "str": lambda v: isinstance(v, str),
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "bool": lambda v: isinstance(v, bool),
            "table": lambda v: isinstance(v, dict),
            "array": lambda v: isinstance(v, list),
        }
        if expected.startswith("list:"):
            element = expected[5:]
            if not isinstance(value, list):
                raise self.error(keypath, f"expected a list of {_plural(element)}, found {kind_of(value)}")
            for i, v in enumerate(value):
                if not checks[element](v):
                    raise self.error([*keypath, i], f"expected {_article(element)}, found {kind_of(v)}")
                self.check_range(v, [*keypath, i], element)
        elif not checks[expected](value):
            raise self.error(keypath, f"expected {_article(expected)}, found {kind_of(value)}")
        else:
            self.check_range(value, keypath, expected)

    def check_range(self, value: Any, keypath: KeyPath, kind: str) -> None:
        """Integers fit the record's 64 bits; numbers are finite and of a sane size."""
        if kind == "int" and not -INT64 - 1 <= value <= INT64:
            raise self.error(keypath, "is too large (integers are at most 64 bits)")
        if kind == "number":
            if isinstance(value, float) and not math.isfinite(value):
                raise self.error(keypath, "must be a finite number")
            if abs(value) > NUMBER_LIMIT:
                raise self.error(keypath, f"must be between -{NUMBER_LIMIT:,} and {NUMBER_LIMIT:,}")

    def text_value(self, value: str, keypath: KeyPath) -> str:
        if not value.strip():
            raise self.error(keypath, "must not be empty")
        return value

    def ident(self, value: str, keypath: KeyPath) -> str:
        if not _ID.match(value):
            raise self.error(keypath, f"'{value}' is not a valid id (letters, digits, '_', '-', '.')")
        return value

    def unique(self, seen: dict[str, KeyPath], ident: str, keypath: KeyPath, what: str) -> None:
        if ident in seen:
            first = render_key(self.doc, seen[ident])
            where = locate(self.text, seen[ident])
            if where:
                first += f", line {where[0]}"
            raise self.error(keypath, f"duplicate {what} id '{ident}' (first used at {first})")
        seen[ident] = keypath


def _article(kind: str) -> str:
    return {
        "str": "a string",
        "int": "an integer",
        "number": "a number",
        "bool": "a boolean",
        "table": "a table",
        "array": "an array",
    }[kind]


def _plural(kind: str) -> str:
    return {"str": "strings", "int": "integers", "number": "numbers", "bool": "booleans"}[kind]
