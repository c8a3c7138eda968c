"""Reading a streamed reply's chunks: each JSON chunk folded into the `Result` of its request.

An ordinary chunk (a piece of choice 0's text and nothing else) is read by a short path
(`plain_text`); every other by `apply_full`, which checks every field: an odd but readable chunk is
tolerated (content given as a list of parts, usage of a strange shape ignored), anything else
raises `MalformedChunk` or `StreamError`, which end the reply as failed. No network here: the
gateway (`sieve.engine.gateway`) reads the body and hands the chunks over.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

INT64_MAX = 2**63 - 1  # the largest count SQLite stores


@dataclass
class Result:
    """How a request ended. `status` is what the turn is recorded as."""

    status: str = "complete"  # complete | length | filtered | failed
    text: str = ""
    finish_reason: str | None = None
    native_finish_reason: str | None = None
    provider: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    token_source: str | None = None  # usage | tokenize | deltas
    cost: float | None = None
    ttft: float | None = None
    duration: float | None = None
    error: str | None = None
    http_status: int | None = None
    retry_after: float | None = None
    # Whether trying again could help: connection errors, 408, 429, 5xx, and
    # only while nothing was streamed (a reply that streamed text is never retried).
    retryable: bool = False
    deltas: int = 0
    refusal: bool = False  # the text came as `delta.refusal`: the model declined
    generation_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class StreamError(Exception):
    """An error the server reported inside a 200 stream."""

    def __init__(self, message: str, code: Any = None, filtered: bool = False):
        super().__init__(message)
        self.code = code
        self.filtered = filtered


class MalformedChunk(Exception):
    """A chunk whose shape cannot be read as part of a reply."""


class NotAStream(Exception):
    """A 200 whose body is not a server-sent event stream."""


def apply_chunk(data: str, result: Result, event: str = "") -> tuple[str, bool]:
    """Fold one JSON chunk into `result`; returns its text delta and whether it finished."""
    try:
        chunk = json.loads(data)
    except json.JSONDecodeError:
        if event == "error":
            raise StreamError(data[:500]) from None
        raise StreamError(f"a chunk is not JSON: {data[:200]!r}") from None
    except RecursionError:
        raise MalformedChunk("a chunk is nested too deeply to read") from None
    if event == "error":
        raise stream_error(chunk.get("error", chunk) if isinstance(chunk, dict) else chunk)
    return apply_object(chunk, result, data)


def apply_object(chunk: Any, result: Result, data: str) -> tuple[str, bool]:
    """Fold one chunk, already parsed, into `result`; returns its text delta and whether it finished."""
    text = plain_text(chunk)
    if text is not None:  # nearly every chunk: a piece of the reply and nothing else to note
        note_source(chunk, result)
        return text, False
    return apply_full(chunk, result, data)


def apply_full(chunk: Any, result: Result, data: str) -> tuple[str, bool]:
    """`_apply_object` for any chunk, every field checked."""
    if not isinstance(chunk, dict):
        raise StreamError(f"a chunk is not a JSON object: {data[:200]!r}")
    choices = chunk.get("choices")
    if choices is not None and not isinstance(choices, list):
        raise MalformedChunk(f"'choices' is {json_kind(choices)}, not a list")
    # OpenRouter reports a ceiling hit as an error beside finish_reason "length", or (as a real capture
    # has it) in a chunk of its own after "length", with the usage: a reply cut at the ceiling, whole up to
    # there, not a failure. Whatever error follows "length" is noted, never raised.
    cut = result.finish_reason == "length"
    error = chunk.get("error")
    if error:
        if not cut and not any(isinstance(c, dict) and c.get("finish_reason") == "length" for c in choices or ()):
            raise stream_error(error)
        note_ceiling(result, error)
    note_source(chunk, result)
    if "usage" in chunk:
        apply_usage(chunk["usage"], result)
    text = ""
    finished = False
    for position, choice in enumerate(choices or ()):
        if not isinstance(choice, dict):
            raise MalformedChunk(f"choices[{position}] is {json_kind(choice)}, not an object")
        index = choice.get("index", position)
        if index != 0 and isinstance(index, int):
            result.extra.setdefault("other_choices", set()).add(index)
            continue  # only choice 0 is the reply
        if choice.get("error"):
            if not cut:
                raise stream_error(choice["error"])
            note_ceiling(result, choice["error"])
        delta = choice.get("delta")
        if delta is None:
            delta = {}
        if not isinstance(delta, dict):
            raise MalformedChunk(f"choices[{position}].delta is {json_kind(delta)}, not an object")
        text += delta_text(delta.get("content"), position)
        refusal = delta.get("refusal")
        if refusal is not None:
            # OpenAI's structured outputs decline in `delta.refusal`, not in the content: the
            # words are the reply all the same (shown, quotable), and the result says so.
            refused = delta_text(refusal, position)
            text += refused
            result.refusal = True
        reason = choice.get("finish_reason")
        if reason is not None and not isinstance(reason, str):
            raise MalformedChunk(f"choices[{position}].finish_reason is {json_kind(reason)}, not a string")
        if reason == "error" and cut:
            finished = True  # the error that follows the ceiling: noted above, the reply stays cut
        elif reason:
            finished = True
            result.finish_reason = reason
            if reason == "error":
                raise StreamError('the provider ended the reply with finish_reason "error"')
        native = choice.get("native_finish_reason")
        if isinstance(native, str) and native:
            result.native_finish_reason = native
    return text, finished


def plain_text(chunk: Any) -> str | None:
    """The text of an ordinary chunk (choice 0's content, no finish, error, usage or refusal); None for any other,
    which the full reading of `Gateway._apply_object` takes."""
    # OpenAI sends "usage": null in every chunk but the last, OpenRouter "native_finish_reason": null: as absent.
    if type(chunk) is not dict or chunk.get("error") or chunk.get("usage") is not None:
        return None
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if (
        type(choice) is not dict
        or choice.get("finish_reason") is not None
        or choice.get("index", 0) != 0
        or choice.get("error")
        or choice.get("native_finish_reason")
    ):
        return None
    delta = choice.get("delta")
    if type(delta) is not dict or delta.get("refusal") is not None:
        return None
    content = delta.get("content")
    return content if type(content) is str else None


def note_source(chunk: dict[str, Any], result: Result) -> None:
    """The provider (the last named) and the generation's id (the first) that a chunk names."""
    provider = chunk.get("provider")
    if isinstance(provider, str) and provider:
        result.provider = provider
    generation = chunk.get("id")
    if isinstance(generation, (str, int)) and not isinstance(generation, bool) and not result.generation_id:
        result.generation_id = str(generation)


def status_for_finish(reason: str | None) -> str:
    if reason == "length":
        return "length"
    if reason == "content_filter":
        return "filtered"
    return "complete"


def apply_usage(usage: Any, result: Result) -> None:
    """Token counts and cost where they are what they claim; anything else is treated as missing."""
    if not isinstance(usage, dict):
        return
    for key in ("prompt_tokens", "completion_tokens"):
        count = token_count(usage.get(key))
        if count is not None:
            setattr(result, key, count)
            result.token_source = "usage"
    details = usage.get("completion_tokens_details")
    if isinstance(details, dict) and token_count(details.get("reasoning_tokens")) is not None:
        result.reasoning_tokens = token_count(details["reasoning_tokens"])
    cost = usage.get("cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and math.isfinite(cost):
        result.cost = float(cost)


def token_count(value: Any) -> int | None:
    """A token count, or None for anything that is not one a database can hold."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= INT64_MAX:
        return value
    return None


def delta_text(content: Any, position: int) -> str:
    """A delta's text: a string, or a list of parts (strings, or objects with "text") joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content] if isinstance(content, dict) else None
    if parts is None:
        raise MalformedChunk(f"choices[{position}].delta.content is {json_kind(content)}, not text")
    text = ""
    for part in parts:
        if isinstance(part, str):
            text += part
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            text += part["text"]
        elif not isinstance(part, dict):  # an object without text (an image, say) carries no words
            raise MalformedChunk(f"a part of choices[{position}].delta.content is {json_kind(part)}, not text")
    return text


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words (a list, an object, null); scenarios.errors.kind_of speaks TOML's."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__


def looks_moderated(message: str) -> bool:
    lowered = message.lower()
    return any(word in lowered for word in ("moderation", "flagged", "content policy", "safety"))


def note_ceiling(result: Result, error: Any) -> None:
    """What the provider said beside a ceiling hit, kept as the reply's note (the first such error)."""
    if "ceiling_note" in result.extra:
        return
    problem = stream_error(error)
    code = f"{problem.code} " if problem.code is not None else ""
    result.extra["ceiling_note"] = f"cut at the output ceiling; the provider said: {code}{problem}"


def stream_error(err: Any) -> StreamError:
    if isinstance(err, dict):
        message = str(err.get("message") or json.dumps(err))
        code = err.get("code")
        filtered = code in (403, "content_filter") or looks_moderated(message)
        return StreamError(message, code, filtered)
    return StreamError(str(err))
