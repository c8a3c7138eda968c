"""The judge as a client of its endpoint: its settings, how it asks for structured output, one request with
its retries, and what the requests cost."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from sieve.engine.gateway import Gateway, RequestSettings, Result
from sieve.engine.local_model import CONTEXT
from sieve.engine.session import RetryPolicy

# What a judge's context and reply may hold when nothing says otherwise. The
# embedded model has 8192 tokens; most models a judge is drawn from have 128k.
LOCAL_CONTEXT = CONTEXT
LOCAL_MAX_TOKENS = 2048
REMOTE_CONTEXT = 128_000
REMOTE_MAX_TOKENS = 16_000
MARGIN = 256  # tokens of the context left unplanned: chat templates, the estimate's error
REPLY_MIN = 262_144  # characters of a judge's reply read at the least, whatever its token ceiling
DRAIN_FACTOR = 16  # past the limit, a reply is read on (its text dropped) for its usage, up to this many times it
# A judge's cards should come out the same when asked twice: it samples greedily unless told otherwise.
JUDGE_DEFAULTS: dict[str, Any] = {"temperature": 0.0, "timeout": 240.0}
STRUCTURED = ("json_schema", "json_object", "off")


@dataclass
class Judge:
    """A model on an endpoint, judging as `reviewer`. `structured`: how structured output is asked for."""

    gateway: Gateway
    settings: RequestSettings
    reviewer: str
    context: int
    structured: str = "json_schema"
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def budget(self) -> int:
        """Tokens of packet one request may carry: the context less the reply's ceiling and a margin."""
        return self.context - (self.settings.max_tokens or 0) - MARGIN

    def response_format(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        if self.structured == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "judging", "schema": schema, "strict": False}}
        if self.structured == "json_object":  # llama.cpp's server: a grammar from the schema
            return {"type": "json_object", "schema": schema}
        return None

    @property
    def reply_limit(self) -> int:
        """The most characters of one reply read: twice what its token ceiling allows in plain prose, and at least
        REPLY_MIN. A server that sends more (a judge rambling on in quotes) is cut there, as a ceiling would."""
        return max(REPLY_MIN, 8 * (self.settings.max_tokens or REMOTE_MAX_TOKENS))

    async def send(self, messages: list[dict[str, str]], schema: dict[str, Any], spent: Spent) -> Result:
        """One request (retried before its first token as a run's are); the reply whole, its cost added to `spent`.

        A reply longer than `reply_limit` is read up to there and ends as if cut at the ceiling ("length"), with
        an error that says so: the text so far is kept and read like any reply cut off."""
        attempt = 1
        while True:
            settings = dataclasses.replace(self.settings, response_format=self.response_format(schema))
            result = await self._one(messages, settings)
            if result.status == "failed" and settings.response_format and result.http_status in (400, 422):
                # The endpoint does not take structured output: ask for JSON in prose from now on.
                self.structured = "off"
                continue
            if result.status == "failed" and result.retryable and not result.text and attempt < self.retry.attempts:
                await asyncio.sleep(self.retry.delay(attempt, result.retry_after))
                attempt += 1
                continue
            await self._count_tokens(result, messages)
            spent.add(result)
            return result

    async def _one(self, messages: list[dict[str, str]], settings: RequestSettings) -> Result:
        """One request's reply, kept up to `reply_limit` characters. Past the limit the stream is still read (its
        text dropped) for the usage and cost that end it, up to DRAIN_FACTOR times the limit; then it is closed."""
        result = Result(status="failed", error="the stream ended without a result")
        limit = self.reply_limit
        kept: list[str] = []
        received = 0
        closed = False
        stream = self.gateway.stream(messages, settings)
        async for event in stream:
            if isinstance(event, Result):
                result = event
                continue
            if received < limit:
                kept.append(event[: limit - received])
            received += len(event)
            if received > DRAIN_FACTOR * limit:
                await stream.aclose()  # closes the response: nothing more is read
                closed = True
                break
        if received <= limit:
            return result
        note = (
            f"POST {self.gateway.endpoint.url}: the judge's reply passed {limit} characters, the limit of one "
            "reply; it was read up to there"
        )
        if closed:
            return Result(status="length", text="".join(kept), finish_reason="length", deltas=len(kept), error=note)
        result.text = "".join(kept)
        result.error = note if result.status in ("complete", "length") else f"{result.error}; {note}"
        if result.status == "complete":
            result.status = "length"  # a reply cut off, however it ended
        return result

    async def _count_tokens(self, result: Result, messages: list[dict[str, str]]) -> None:
        # llama.cpp's server sends no usage while streaming: its tokenizer counts, else the deltas do.
        if result.completion_tokens is not None:
            return
        counted = await self.gateway.count_tokens(result.text, self.model)
        if counted is not None:
            result.completion_tokens = counted
            result.prompt_tokens = await self.gateway.count_tokens(
                "\n".join(m["content"] for m in messages), self.model
            )
        elif result.deltas:
            result.completion_tokens = result.deltas


def judge_settings(model: str, local: bool, given: dict[str, Any] | None = None) -> RequestSettings:
    """A judge's settings: sieve's judge defaults, a reply ceiling for its context, then the command line's."""
    merged = dict(JUDGE_DEFAULTS, max_tokens=LOCAL_MAX_TOKENS if local else REMOTE_MAX_TOKENS)
    merged.update({k: v for k, v in (given or {}).items() if v is not None})
    return RequestSettings(model=model, **{k: v for k, v in merged.items() if k in _SETTING_FIELDS})


_SETTING_FIELDS = {f.name for f in dataclasses.fields(RequestSettings)} - {"model", "response_format"}


@dataclass
class Spent:
    """Tokens, cost, time and provider of every request a judging made."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    duration: float = 0.0
    provider: str | None = None

    def add(self, result: Result | Spent) -> None:
        """Add one request's result, or another tally's total."""
        self.prompt_tokens += result.prompt_tokens or 0
        self.completion_tokens += result.completion_tokens or 0
        if result.cost is not None:
            self.cost = (self.cost or 0.0) + result.cost
        self.duration += result.duration or 0.0
        self.provider = result.provider or self.provider


def settings_record(judge: Judge) -> dict[str, Any]:
    """What a judging stores as the settings it used (the key's variable name, never the key)."""
    data = dataclasses.asdict(judge.settings)
    data.pop("response_format", None)
    data.update(
        context=judge.context,
        structured=judge.structured,
        endpoint_url=judge.gateway.endpoint.base_url,
        api_key_env=judge.gateway.endpoint.api_key_env,
    )
    return data
