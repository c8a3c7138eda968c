"""Making outside text safe where it meets a terminal, Markdown or JSON.

A reply, a model or provider name, a scenario title, a reviewer's name, a
server's error text: any of them may hold escape sequences, bells, C1 controls
or bidi overrides. The safe place is the sink: every output passes such strings
through one of these functions, and nothing in them is ever interpreted.
"""

from __future__ import annotations

import json
import re
from typing import Any

# C0 controls except tab and newline, DEL, the C1 range (which includes the 8-bit
# CSI, 0x9b), and the invisible marks and overrides that reorder text (U+202E).
# ESC is among them, so no escape sequence survives.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def storable(text: str) -> str:
    """`text` as UTF-8 can hold it: surrogate halves that make a pair are joined, a lone one becomes U+FFFD.

    JSON can spell a lone surrogate (`"\\ud800"`); SQLite, files and terminals cannot take one.
    """
    if not _SURROGATE.search(text):
        return text
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.sub("\ufffd", joined)


def visible(text: str) -> str:
    """`text` with every control character shown as an escape (\\x1b, \\u202e), harmless to print."""
    return _CONTROL.sub(_escape, text)


def one_line(text: str) -> str:
    """`visible`, on one line: for table cells, titles and headers."""
    return visible(text).replace("\r\n", " ").replace("\n", " ").replace("\t", " ")


def md_cell(text: str | None) -> str:
    """Text for a Markdown table cell: visible, one line, pipes and Markdown's inline characters escaped. A cell
    is never the start of a block, so a leading `-`, `#` or `1.` stays as it is (`-0.31 to 2.00`)."""
    return _MD_ANYWHERE.sub(r"\\\1", one_line(text or ""))


def md_fence(text: str) -> str:
    """Text as a fenced block, so nothing in it is read as Markdown (the fence outgrows any run of backticks)."""
    shown = visible(text)
    longest = max((len(m) for m in re.findall(r"`+", shown)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{shown}\n{fence}"


# Characters that mean something to Markdown wherever they stand (emphasis, code, links, HTML, tables,
# strikethrough); `&` only where it would begin an entity (`&copy;`).
_MD_ANYWHERE = re.compile(r"([\\`*_\[\]<|~]|&(?=#?\w+;))")
# What means something only at the start of a line: a heading, a quote, a list item, a rule.
_MD_LINE_START = re.compile(r"^(\s*)(?:([#>+=-])|(\d+)([.)]))")


def md_inline(text: str | None) -> str:
    """Outside text in running Markdown: visible, one line, with the characters escaped that Markdown would read
    there, and no others (`(+1)` and `+00:00` stay as they are)."""
    escaped = _MD_ANYWHERE.sub(r"\\\1", one_line(text or ""))

    def at_start(m: re.Match) -> str:
        if m.group(2):
            return f"{m.group(1)}\\{m.group(2)}"
        return f"{m.group(1)}{m.group(3)}\\{m.group(4)}"

    return _MD_LINE_START.sub(at_start, escaped, count=1)


def dumps_json(data: Any, *, indent: int | None = 2, sort_keys: bool = False) -> str:
    """JSON whose strings carry no control or bidi character raw: they are \\u escapes, as JSON allows."""
    text = json.dumps(data, indent=indent, ensure_ascii=False, sort_keys=sort_keys)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
