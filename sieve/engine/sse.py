"""Server-sent events read from a stream's text as it arrives, a network read at a time.

The gateway hands this each piece of text the network gave it and gets back the
events that piece completed, so that everything one read held is handled at once
(one delta for the caller per read, not one per token: at full speed a read holds
hundreds of events).

A line ends at CRLF, LF or CR, and nowhere else: not at the other breaks
`str.splitlines` knows, so a model's U+2028 left raw in a JSON string stays in
its line. A piece may end anywhere: inside a line, or between the CR and the LF
of one line's end.
"""

from __future__ import annotations


class EventReader:
    """Pieces of an SSE stream in, completed events out as (event name, data)."""

    def __init__(self) -> None:
        self._pending = ""  # the start of a line whose end has not arrived
        self._after_cr = False  # the last piece ended in CR: an LF first in the next ends no second line
        self._first = True
        self._data: list[str] = []
        self._name = ""

    def feed(self, text: str) -> list[tuple[str, str]]:
        """The events this piece of the stream completes, in order."""
        if self._after_cr:
            self._after_cr = False
            if text.startswith("\n"):
                text = text[1:]
        if "\r" in text:
            self._after_cr = text.endswith("\r")
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        return self._lines(lines)

    def close(self) -> list[tuple[str, str]]:
        """At the end of the stream: a last line without its end, and a last event without its blank line."""
        lines = [self._pending] if self._pending else []
        self._pending = ""
        events = self._lines(lines)
        if self._data:
            events.append((self._name, "\n".join(self._data)))
            self._data = []
        return events

    def _lines(self, lines: list[str]) -> list[tuple[str, str]]:
        events: list[tuple[str, str]] = []
        if lines and self._first:
            self._first = False
            lines[0] = lines[0].removeprefix("\ufeff")  # a byte order mark before the first line
        for line in lines:
            if line:
                if line[0] == ":":
                    continue  # a comment: ": OPENROUTER PROCESSING", keep-alive pings
                if line.startswith("data:"):
                    self._data.append(line[6:] if line.startswith("data: ") else line[5:])
                elif line.startswith("event:"):
                    self._name = line[6:].strip()
                continue
            if self._data:  # a blank line ends an event
                events.append((self._name, "\n".join(self._data)))
                self._data = []
            self._name = ""
        return events
