"""The SSE reader: the same events however the stream is cut between reads."""

from __future__ import annotations

from sieve.engine.sse import EventReader

STREAM = (
    "\ufeff: OPENROUTER PROCESSING\r\n\r\n"
    'data: {"a": "one\u2028two"}\r\n\r\n'
    "event: error\ndata: first\ndata:second\n\n"
    ": a ping\r\r"
    "data: [DONE]\n\n"
    "data: a last event without its blank line"
)
EVENTS = [
    ("", '{"a": "one\u2028two"}'),
    ("error", "first\nsecond"),
    ("", "[DONE]"),
    ("", "a last event without its blank line"),
]


def read(pieces: list[str]) -> list[tuple[str, str]]:
    reader = EventReader()
    events = [event for piece in pieces for event in reader.feed(piece)]
    return events + reader.close()


def test_the_events_of_a_stream_read_whole():
    assert read([STREAM]) == EVENTS


def test_a_stream_cut_at_any_one_place_or_at_every_character_reads_the_same():
    for cut in range(len(STREAM) + 1):
        assert read([STREAM[:cut], STREAM[cut:]]) == EVENTS, cut
    assert read(list(STREAM)) == EVENTS


def test_the_event_name_lasts_for_one_event():
    assert read(["event: error\ndata: x\n\ndata: y\n\n"]) == [("error", "x"), ("", "y")]
