"""Errors in scenario files, worded as `path:line:col: what is wrong`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from sieve.errors import SieveInputError

KeyPath = Sequence[str | int]


class ScenarioError(SieveInputError):
    """A scenario file that cannot be used, with where the problem is."""


def kind_of(value: object) -> str:
    """What a TOML value is, in the words a message uses: `expected a table, found an array`."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def render_key(doc: object, keypath: KeyPath) -> str:
    """A key path as a person reads it: rubrics[T].items[T3].steps[0].

    Elements of arrays of tables are named by their id where they have one.
    """
    out = ""
    node = doc
    for part in keypath:
        if isinstance(part, int):
            element = node[part] if isinstance(node, list) and part < len(node) else None
            label = element.get("id") if isinstance(element, dict) else None
            out += f"[{label}]" if isinstance(label, str) and label else f"[{part}]"
            node = element
        else:
            out += f".{part}" if out else part
            node = node.get(part) if isinstance(node, dict) else None
    return out


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\[\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")


def _split_dotted(key: str) -> tuple[str, ...]:
    parts = re.findall(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""", key)
    return tuple(p[1:-1] if p[0] in "\"'" else p for p in parts)


def locate(text: str, keypath: KeyPath) -> tuple[int, int] | None:
    """Find the line and column of a key path in TOML text, best effort.

    tomllib gives no positions for values, so this follows the headers and
    `key =` lines of the usual layout (one `[[rubrics.items]]` per item). For a
    key it cannot find it returns the position of its nearest ancestor.
    """
    positions: dict[tuple[str | int, ...], tuple[int, int]] = {}
    array_index: dict[tuple[str, ...], int] = {}
    current: tuple[str | int, ...] = ()
    in_string: str | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if in_string:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        header = _HEADER.match(line)
        if header:
            names = _split_dotted(header.group(2))
            if header.group(1) == "[[":
                array_index[names] = array_index.get(names, -1) + 1
                for deeper in [k for k in array_index if k[: len(names)] == names and len(k) > len(names)]:
                    del array_index[deeper]
            concrete: list[str | int] = []
            for i in range(len(names)):
                concrete.append(names[i])
                if names[: i + 1] in array_index:
                    concrete.append(array_index[names[: i + 1]])
            current = tuple(concrete)
            positions.setdefault(current, (lineno, line.index("[") + 1))
            continue
        key = _KEY.match(line)
        if key:
            full = current + _split_dotted(key.group(1))
            positions.setdefault(full, (lineno, len(line) - len(line.lstrip()) + 1))
        for quote in ('"""', "'''"):
            if line.count(quote) % 2 == 1:
                in_string = quote
                break
    path = tuple(keypath)
    while path:
        if path in positions:
            return positions[path]
        path = path[:-1]
    return None
