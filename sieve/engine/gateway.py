"""The model gateway: one streamed `/chat/completions` request to any OpenAI-compatible endpoint.

`Gateway.stream()` yields the reply's text as strings as it arrives (one string for
everything a read from the network brought, not one per token), then exactly one
`Result`. Failures never raise: they end the stream with a Result
whose `status` is "failed" or "filtered" and whose `error` names the endpoint
and the status. Only cancellation (the caller's) propagates.

The API key is read from the environment when a request is made; it is sent in
the Authorization header and nowhere else, and scrubbed, in any case, from
everything the server sends back (the reply's text, the provider, error texts)
before any of it is yielded. Every chunk is checked: an odd but readable one is
tolerated (content given as a list of parts, usage of a strange shape ignored),
anything else ends the reply as failed with the text that had already arrived.
A server that ignores `stream: true` and answers with one JSON completion is
read as the reply; an error that follows a finish at the output ceiling (as
OpenRouter sends it, with the usage) leaves the reply cut, not failed.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import os
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from sieve.engine import chunks
from sieve.engine.chunks import Result
from sieve.engine.lanes import Lanes
from sieve.engine.sse import EventReader
from sieve.safe_text import storable

DEFAULT_TIMEOUT = 240.0  # the seeds' limit per request
DEFAULT_READ_TIMEOUT = 90.0  # silence (not even a keep-alive comment) that counts as a stalled server
CONNECT_TIMEOUT = 15.0
# After [DONE], how long the end of the body may take, and how much may come before it.
REST_SECONDS = 0.25
REST_LIMIT = 65536
# A reply sent as one JSON document (a server that ignored `stream: true`) is read whole, up to this size.
JSON_REPLY_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class Endpoint:
    """Where requests go. `api_key_env` names the variable holding the key, never the key."""

    base_url: str
    name: str = ""
    api_key_env: str | None = None
    # Where the server's tokenizer counts, for replies that came without usage (llama.cpp).
    tokenize_url: str | None = None
    # A server on this machine that sieve started (the embedded model): an empty reply from it without
    # a finish reason is its fault, not a filter. It answers `slots` requests at once; more wait here.
    local: bool = False
    slots: int | None = None

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    @property
    def label(self) -> str:
        """What the record stores: the name if it has one, else the base URL."""
        return self.name or self.base_url

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None


def normalise_base_url(url: str) -> str:
    """Accept a base URL or the full completions URL; keep the base."""
    url = url.strip().rstrip("/")
    for suffix in ("/chat/completions", "/completions"):
        if url.endswith(suffix):
            url = url[: -len(suffix)]
    return url


@dataclass(frozen=True)
class RequestSettings:
    """What one request carries besides the conversation."""

    model: str
    temperature: float | None = 1.0
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    seed: int | None = None
    timeout: float = DEFAULT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    # Structured output, sent as given: OpenAI's {"type": "json_schema", ...} or
    # llama.cpp's {"type": "json_object", "schema": ...}. A judge asks for it; runs never do.
    response_format: dict[str, Any] | None = None

    def body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": True}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.reasoning_effort:
            body["reasoning"] = {"effort": self.reasoning_effort}
        if self.seed is not None:
            body["seed"] = self.seed
        if self.response_format is not None:
            body["response_format"] = self.response_format
        # Ask for the final usage chunk (OpenAI's spelling; OpenRouter sends it anyway).
        body["stream_options"] = {"include_usage": True}
        return body


class _OverallTimeout(Exception):
    """The limit per request ran out while data was still arriving."""


async def _read_rest(pieces: AsyncIterator[str]) -> None:
    """After [DONE]: the rest of the body (the chunk that ends it), so the connection can carry the next request.

    httpx closes a connection whose response was left unread, so the next turn would pay for a
    new one (a TLS handshake). A server that sends more than the end, or nothing, has
    REST_SECONDS; then its connection is closed.
    """
    extra = 0
    try:
        async with asyncio.timeout(REST_SECONDS):  # no yield inside: only this read is cancelled
            async for text in pieces:
                extra += len(text)
                if extra > REST_LIMIT:
                    return
    except Exception:  # whatever the rest holds or does, the reply was whole at [DONE]
        pass


def scrub_key(text: str, key: str | None) -> str:
    """`text` with the API key replaced by "[api key]", in any case (a server may echo it upper- or lower-cased)."""
    if not key or not text:
        return text
    if key in text:
        text = text.replace(key, "[api key]")
    folded = key.lower()
    if folded in text.lower():
        text = re.sub(re.escape(key), "[api key]", text, flags=re.IGNORECASE)
    return text


class _Outgoing:
    """The reply's text on its way to the caller: the key scrubbed (in any case) and surrogates made whole,
    across chunks.

    A chunk may end in the middle of the key, or between the two halves of a
    surrogate pair; such a tail is held back until the next chunk (or the end).
    """

    def __init__(self, key: str | None):
        self.key = key or None
        self.folded = self.key.lower() if self.key else ""
        self.pending = ""

    def push(self, text: str) -> str:
        text = scrub_key(self.pending + text, self.key)
        keep = 0
        if self.key:
            for k in range(min(len(self.key) - 1, len(text)), 0, -1):
                if self.folded.startswith(text[-k:].lower()):
                    keep = k
                    break
        if text and "\ud800" <= text[-1] <= "\udbff":
            keep = max(keep, 1)
        self.pending = text[len(text) - keep :] if keep else ""
        return storable(text[: len(text) - keep])

    def flush(self) -> str:
        text, self.pending = self.pending, ""
        return storable(text)


class Gateway:
    """Streams replies from one endpoint. Share one Gateway across concurrent runs."""

    def __init__(self, endpoint: Endpoint, client: httpx.AsyncClient | None = None):
        self.endpoint = endpoint
        self._client = client  # given: every request goes through it; else each stream has a lane of its own
        self._lanes = Lanes()
        self._url = httpx.URL(endpoint.url)  # parsed once: httpx parses a string on every request
        self.budget: Any = None  # an engine.spending.Budget when a command is given --max-cost
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    async def __aenter__(self) -> Gateway:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @contextlib.asynccontextmanager
    async def _http(self) -> AsyncIterator[httpx.AsyncClient]:
        """The client for one request: the one given, or a lane (engine.lanes: no pool shared by concurrent runs)."""
        if self._client is not None:
            yield self._client
        else:
            with self._lanes.lane() as client:
                yield client

    @contextlib.asynccontextmanager
    async def _request(self, method: str, url: str | httpx.URL, **options: Any) -> AsyncIterator[httpx.Response]:
        """A request's response, its body to be read within the block.

        A server may close a kept connection just as the next request goes out on it (llama.cpp's
        does, now and then, after a streamed reply; any server at the end of its idle time): the
        request is lost before any of the answer came, and is sent once more at once, on a new
        connection. Nothing was answered, so nothing is asked twice that was answered once."""
        async with self._http() as client:
            request = client.build_request(method, url, **options)
            try:
                response = await client.send(request, stream=True)
            except httpx.RemoteProtocolError as exc:
                if not _unanswered(exc):
                    raise
                response = await client.send(request, stream=True)
            try:
                yield response
            finally:
                await response.aclose()

    async def aclose(self) -> None:
        await self._lanes.aclose()

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        key = self.endpoint.api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def scrub(self, text: str) -> str:
        """Remove the API key (in any case) from any text that might be shown or stored."""
        return scrub_key(text, self.endpoint.api_key())

    def stream(self, messages: list[dict[str, str]], settings: RequestSettings) -> AsyncGenerator[str | Result, None]:
        """Yield the reply's text (str) as it arrives, a read from the network at a time, then one Result.

        With a `budget` (engine.spending.Budget, --max-cost), a request whose worst case does not fit waits for the
        requests in flight to settle; one that would pass it on what was really spent is not sent: its Result is
        failed, saying so. Closing the stream early (aclose) closes the response.
        Where the server answers a set number of requests at once (the embedded model), a request
        waits for its turn first; its time limits start when it goes out."""
        # Without a budget, the stream itself: every generator between the caller and the network costs a step
        # for each piece of the reply.
        return self._in_turn(messages, settings) if self.budget is None else self._budgeted(messages, settings)

    async def _budgeted(
        self, messages: list[dict[str, str]], settings: RequestSettings
    ) -> AsyncGenerator[str | Result, None]:
        budget = self.budget
        worst = budget.worst_case(messages, settings.model, settings.max_tokens)
        if not await budget.acquire(worst):
            yield Result(status="failed", error=budget.refusal(worst), extra={"budget": True})
            return
        final: Result | None = None
        try:
            async with contextlib.aclosing(self._in_turn(messages, settings)) as events:
                async for event in events:
                    if isinstance(event, Result):
                        final = event
                    yield event
        finally:
            budget.settle(worst, worst if final is None else budget.actual(final, messages, settings.model))

    def _in_turn(self, messages: list[dict[str, str]], settings: RequestSettings) -> AsyncGenerator[str | Result, None]:
        """The request, sent once one of the server's slots is free where it has a set number of them."""
        return self._in_slot(messages, settings) if self.endpoint.slots else self._stream(messages, settings)

    async def _in_slot(
        self, messages: list[dict[str, str]], settings: RequestSettings
    ) -> AsyncGenerator[str | Result, None]:
        assert self.endpoint.slots
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:
            self._slots = (loop, asyncio.Semaphore(self.endpoint.slots))
        async with self._slots[1], contextlib.aclosing(self._stream(messages, settings)) as events:
            async for event in events:
                yield event

    async def _stream(
        self, messages: list[dict[str, str]], settings: RequestSettings
    ) -> AsyncGenerator[str | Result, None]:
        result = Result()
        started = time.monotonic()
        deadline = started + settings.timeout
        parts: list[str] = []
        outgoing = _Outgoing(self.endpoint.api_key())
        where = f"POST {self.endpoint.url}"
        # The overall limit is checked as data arrives; a silent server is caught by
        # the read timeout, never longer than the limit itself. (asyncio.timeout would
        # cancel the consumer's task while this generator waits at a yield.)
        read = min(settings.read_timeout, settings.timeout)
        timeout = httpx.Timeout(min(CONNECT_TIMEOUT, settings.timeout), read=read, write=30.0, pool=CONNECT_TIMEOUT)
        arrived: list[str] = []  # deltas read from the network, not yet passed on
        given = 0  # how many of `parts` the caller has had
        try:
            try:
                async with self._request(
                    "POST", self._url, json=settings.body(messages), headers=self._headers(), timeout=timeout
                ) as response:
                    result.http_status = response.status_code
                    if response.status_code != 200:
                        await self._http_error(response, result, where)
                    else:
                        await _expect_stream(response)
                        async for _ in self._read_events(response, result, started, deadline, arrived):
                            shown = outgoing.push("".join(arrived))
                            arrived.clear()
                            if shown:
                                parts.append(shown)
                                given = len(parts)
                                yield shown
            finally:
                # What was read before a fault is the reply's all the same: given to the caller with the tail.
                shown = outgoing.push("".join(arrived)) if arrived else ""
                if shown:
                    parts.append(shown)
        except _OverallTimeout:
            result.status = "failed"
            result.error = f"{where}: no complete reply within {settings.timeout:g} s (the limit per request)"
        except httpx.ReadTimeout:
            result.status = "failed"
            if time.monotonic() >= deadline - 0.05:
                result.error = f"{where}: no complete reply within {settings.timeout:g} s (the limit per request)"
            else:
                result.error = f"{where}: the server stopped sending for {read:g} s"
                result.retryable = not (parts or outgoing.pending)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            result.status = "failed"
            result.error = f"{where}: cannot connect ({type(exc).__name__}: {exc})"
            result.retryable = True
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            result.status = "failed"
            detail = str(exc) or type(exc).__name__
            if parts:
                result.error = (
                    f"{where}: the connection dropped after {sum(map(len, parts))} characters of the reply ({detail})"
                )
            else:
                result.error = f"{where}: the connection dropped before the reply began ({detail})"
            result.retryable = not (parts or outgoing.pending)
        except chunks.StreamError as exc:
            result.status = "filtered" if exc.filtered else "failed"
            code = f" {exc.code}" if exc.code is not None else ""
            result.error = f"{where}: 200 with an error in the stream{code}: {exc}"
        except chunks.MalformedChunk as exc:
            result.status = "failed"
            result.error = f"{where}: a malformed chunk in the stream: {exc}"
        except chunks.NotAStream as exc:
            result.status = "failed"
            result.error = f"{where}: 200 but not a stream: {exc}"
        except httpx.HTTPError as exc:  # anything else httpx can raise (invalid URL, ...)
            result.status = "failed"
            result.error = f"{where}: {type(exc).__name__}: {exc}"
        except Exception as exc:  # the promise is a Result, whatever the server sent
            result.status = "failed"
            result.error = f"{where}: the stream could not be read ({type(exc).__name__}: {exc})"
        tail = outgoing.flush()
        if tail:
            parts.append(tail)
        rest = "".join(parts[given:])
        if rest:
            yield rest
        result.text = "".join(parts)
        result.duration = time.monotonic() - started
        if result.status == "length" and "ceiling_note" in result.extra and not result.error:
            result.error = f"{where}: {result.extra['ceiling_note']}"
        others = result.extra.get("other_choices")
        if others and not result.error:
            shown = ", ".join(str(i) for i in sorted(others))
            result.error = f"{where}: the server also sent choice {shown}; only choice 0 is recorded"
        for name in ("error", "provider", "finish_reason", "native_finish_reason", "generation_id"):
            value = getattr(result, name)
            if value is not None:
                setattr(result, name, self.scrub(storable(value)))
        if not result.text.strip() and result.status == "complete":
            if self.endpoint.local and result.finish_reason is None:
                # A local server has no filter: one that ends a reply before it began broke off (issue 25).
                result.status = "failed"
                result.error = f"{where}: the local server ended the reply empty, without a finish reason"
                result.retryable = True
            else:
                # The seeds record an empty reply (zero cost) as a filter, not as an answer.
                result.status = "filtered"
                result.error = f"{where}: empty reply (finish reason {result.finish_reason or 'none'})"
        yield result

    async def _read_events(
        self, response: httpx.Response, result: Result, started: float, deadline: float, arrived: list[str]
    ) -> AsyncIterator[None]:
        """Parse the SSE stream: comments, data lines, [DONE], usage, errors in the stream.

        The text deltas go into `arrived`; after each read from the network that brought any,
        one yield. Everything a read holds is handled at once: at full speed that is hundreds
        of tokens, and the cost of passing text on is paid per read, not per token.
        """
        reader = EventReader()
        done = finished = False
        now = time.monotonic
        pieces = _text(response)
        # Until the first event, the body is kept: a server that ignored `stream: true` sent one JSON reply.
        body: list[str] | None = [] if not _says_json(response) else None
        kept = 0
        if body is None:
            whole = await _json_body(pieces, deadline)
            finished = self._fold_completion(whole, result, started, arrived)
            if arrived:
                yield
            done = True
        async for text in pieces:
            if now() > deadline:
                raise _OverallTimeout
            events = reader.feed(text)
            if body is not None:
                kept += len(text)
                body = None if events or kept > JSON_REPLY_LIMIT else [*body, text]
            done, ended = self._fold(events, result, started, arrived)
            finished = finished or ended
            if arrived:
                yield
            if done:
                break
        if done:
            await _read_rest(pieces)
        else:  # a last line or event without its end
            events = reader.close()
            done, ended = self._fold(events, result, started, arrived)
            finished = finished or ended
            if not events and body and "".join(body).lstrip().startswith("{"):
                finished = self._fold_completion("".join(body), result, started, arrived)
            if arrived:
                yield
        if not done and not finished:
            # A 200 that ended with neither a finish reason nor [DONE]: the connection dropped.
            raise httpx.RemoteProtocolError("the stream ended without a finish reason")
        result.status = chunks.status_for_finish(result.finish_reason)

    def _fold(
        self, events: list[tuple[str, str]], result: Result, started: float, arrived: list[str]
    ) -> tuple[bool, bool]:
        """Events folded into `result` up to [DONE], their text deltas added to `arrived`.

        Returns whether [DONE] came and whether an event finished the reply.
        """
        finished = False
        for name, data in events:
            if data == "[DONE]":
                return True, finished
            delta, ended = chunks.apply_chunk(data, result, name)
            finished = finished or ended
            if delta:
                if result.ttft is None:
                    result.ttft = time.monotonic() - started
                result.deltas += 1
                arrived.append(delta)
        return False, finished

    def _fold_completion(self, text: str, result: Result, started: float, arrived: list[str]) -> bool:
        """A whole JSON completion (`choices[].message`), as a server that ignored `stream: true` sends it,
        folded into `result` as one chunk would be; its text added to `arrived`. Returns True: it is whole."""
        try:
            completion = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            raise chunks.NotAStream(
                f"the body is neither server-sent events nor one JSON reply: {text[:200]!r}"
            ) from None
        if not isinstance(completion, dict):
            raise chunks.NotAStream(f"the body is JSON but not a reply object: {text[:200]!r}")
        choices = completion.get("choices")
        if isinstance(choices, list):
            choices = [
                {**c, "delta": c.get("message")} if isinstance(c, dict) and "message" in c else c for c in choices
            ]
            completion = {**completion, "choices": choices}
        delta, _ = chunks.apply_object(completion, result, text)
        if delta:
            result.ttft = time.monotonic() - started
            result.deltas += 1
            arrived.append(delta)
        return True

    async def _http_error(self, response: httpx.Response, result: Result, where: str) -> None:
        body = (await response.aread())[:65536].decode("utf-8", "replace")
        message = body.strip()
        try:
            parsed = json.loads(body)
            err = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
            if isinstance(err, dict):
                message = str(err.get("message") or err)
                meta = err.get("metadata") or {}
                if isinstance(meta, dict) and meta.get("reasons"):
                    message += f" (reasons: {', '.join(map(str, meta['reasons']))})"
                if isinstance(meta, dict) and meta.get("provider_name"):
                    result.provider = str(meta["provider_name"])
            elif isinstance(err, str):
                message = err
        except (json.JSONDecodeError, AttributeError):
            pass
        status = response.status_code
        reason = response.reason_phrase or ""
        result.error = f"{where}: {status} {reason}: {message[:500]}".replace(": :", ":")
        result.status = "failed"
        if status == 403 and chunks.looks_moderated(message):
            result.status = "filtered"  # moderation refused the input: documented, the script goes on
        result.retryable = status in (408, 409, 425, 429) or status >= 500
        retry_after = response.headers.get("Retry-After")
        if retry_after:
            try:
                result.retry_after = max(0.0, float(retry_after))
            except ValueError:
                result.retry_after = None  # an HTTP date: fall back to our own backoff

    async def prices(self) -> dict[str, Any]:
        """The endpoint's published prices by model (engine.spending.Price), from its /models; {} where none.
        A client of its own: the command asks before its requests, in an event loop of its own."""
        from sieve.engine.spending import published_prices

        async with httpx.AsyncClient() as client:
            return await published_prices(client, self.endpoint.base_url, self._headers())

    async def count_tokens(self, text: str, model: str) -> int | None:
        """Tokens in `text` by the server's own tokenizer, where it offers one (llama.cpp).

        Both spellings in one request: llama.cpp's own /tokenize reads `content` and answers the
        tokens; llama-cpp-python's /extras/tokenize/count reads `input` and answers the count."""
        if not self.endpoint.tokenize_url or not text:
            return 0 if self.endpoint.tokenize_url else None
        try:
            body = {"content": text, "input": text, "model": model}
            async with self._request("POST", self.endpoint.tokenize_url, json=body, timeout=30.0) as response:
                await response.aread()
            response.raise_for_status()
            answer = response.json()
            return int(answer["count"]) if "count" in answer else len(answer["tokens"])
        except (httpx.HTTPError, KeyError, ValueError, TypeError):
            return None


def _unanswered(exc: httpx.RemoteProtocolError) -> bool:
    """Whether the connection closed before any of the response came (httpcore's words for it)."""
    return "without sending a response" in str(exc)


def _text(response: httpx.Response) -> AsyncIterator[str]:
    """The body as text, a network read at a time: httpx's `aiter_text`, or where the body is not compressed
    its `aiter_raw` decoded here, one generator where httpx has three (each a step for each piece)."""
    if response.headers.get("content-encoding", "identity").strip().lower() not in ("", "identity"):
        return response.aiter_text()
    return _decoded(response.aiter_raw(), response.encoding or "utf-8")


async def _decoded(raw: AsyncIterator[bytes], encoding: str) -> AsyncIterator[str]:
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")  # as httpx's TextDecoder
    async for data in raw:
        text = decoder.decode(data)
        if text:
            yield text
    tail = decoder.decode(b"", True)
    if tail:
        yield tail


def _says_json(response: httpx.Response) -> bool:
    """Whether a 200 is labelled as one JSON document: a server that ignored `stream: true`."""
    return "json" in response.headers.get("content-type", "").lower()


async def _expect_stream(response: httpx.Response) -> None:
    """NotAStream for a 200 that says it is neither a stream nor JSON (an HTML page, plain text)."""
    kind = response.headers.get("content-type", "")
    if kind and "event-stream" not in kind.lower() and not _says_json(response):
        body = (await response.aread())[:200].decode("utf-8", "replace").strip()
        raise chunks.NotAStream(f"Content-Type {kind}, not text/event-stream" + (f": {body}" if body else ""))


async def _json_body(pieces: AsyncIterator[str], deadline: float) -> str:
    """A 200's whole body, labelled JSON: up to JSON_REPLY_LIMIT characters, within the limit per request."""
    parts: list[str] = []
    size = 0
    async for text in pieces:
        if time.monotonic() > deadline:
            raise _OverallTimeout
        size += len(text)
        if size > JSON_REPLY_LIMIT:
            raise chunks.NotAStream(f"a JSON reply of more than {JSON_REPLY_LIMIT} characters")
        parts.append(text)
    return "".join(parts)
