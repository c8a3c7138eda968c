"""A real HTTP server on 127.0.0.1 that speaks the streaming chat protocol and misbehaves on request.

Part of the test suite, not of sieve. It is raw asyncio (no framework) so that it
can do what real servers do wrong: drop a connection mid-chunk, stall, send
errors inside a 200 stream. The model name carries the behaviour, so concurrent
runs and other processes (the CLI under test) can each ask for their own:

    "a"                              an ordinary OpenRouter-shaped reply
    "x;tokens=24000;delay=0"         a long reply
    "x;status=429;times=2;retry_after=0.1"  two 429s for each prompt, then a reply
    "x;drop=1;after=5"               the connection drops after 5 tokens

Options (key=value, separated by ';'):
    tokens N      reply length in tokens (default 40); delay S between tokens; ttft S before the first
    comments 0|1  ": OPENROUTER PROCESSING" comment lines (default 1); crlf 1: \\r\\n line endings
    usage 0|1     the final usage chunk with cost and empty choices (default 1); provider NAME
    finish R      finish reason (stop, length, content_filter; none: no finishing chunk); empty 1: no content at all
    status N      answer with HTTP status N and a JSON error body; retry_after S: a Retry-After
                  header; body moderation: OpenRouter's moderation refusal
    times K       any fault applies to the first K requests for the same prompt only
    only_at K     any fault applies only to a conversation of K messages
    stream_error 1 | choice_error 1   an error inside the 200 stream after `after` tokens
    drop 1        abort the connection after `after` tokens; stall S: stop sending for S seconds
    drip_at K     from the K-th message of a conversation on, send a token every `drip` seconds
    echo_auth 1   a 401 whose body repeats the Authorization header (a careless server)
    text WORDS    the reply's words instead of the generated ones ('+' for spaces)
    seeded 1      the generated words drawn by the request's `seed` too (else by the prompt alone)
    markup 1      a reply full of Rich markup, ANSI escapes and control characters
    malformed SHAPE  with after K: after K tokens, one chunk of an odd shape, then the rest as usual:
                  choices_str, delta_str, choice_not_object, content_list, content_number,
                  finish_object, provider_object (and in every chunk after it), usage_odd,
                  usage_list, usage_huge, surrogate
    bom 1         a UTF-8 byte order mark before the first line of the stream
    not_sse 1     a 200 whose body is one JSON completion (Content-Type application/json), as servers that
                  ignore `stream: true` answer; not_sse=unlabelled: the same without a Content-Type;
                  not_sse=mislabelled: the same labelled text/event-stream; not_sse=html: a 200 HTML page
    two_choices 1 every chunk carries a second choice (index 1) with other text
    cost X        the usage chunk's cost as written (inf, nan: JSON's Infinity, NaN)
    length_error 1  a ceiling hit: finish_reason "length", an error 400 and the usage in one chunk (synthetic)
    length_error after   OpenRouter's ceiling hit in the order of a real capture: a chunk with finish_reason
                  "length", then a separate chunk with the error 400 and the usage (no choices), then [DONE];
                  length_error=after_choice: that second chunk also has a choice with finish_reason "error"
    cut N         the reply stops after N tokens at the output ceiling (finish_reason "length")
    chunk N       a whole reply (`reply=NAME`) sent N characters a chunk (default 4, about a token)
    echo_key provider|text|upper|lower   a careless server repeats the bearer token as the provider, or in the
                  reply (as sent, upper-cased or lower-cased)
    error_text T  the message of a `status` error or a `stream_error` (default: "fake failure N", ...)
    refusal 1     the reply comes as `delta.refusal` (OpenAI's structured outputs declining), not content
    pieces N      the stream written N bytes at a time, each piece a write of its own (lines, CR LF
                  pairs and UTF-8 characters cut anywhere)
    raw 1         chunks' JSON written with non-ASCII characters as they are, not escaped (a U+2028 raw)
    linger S      after [DONE], S seconds before the body ends; trailing N: N bytes of comments after [DONE]
    gate PATH     hold the reply until the file PATH exists (a test opens the gate when it is ready)
    stale 1       with keep_alive: a request on a connection that served one before is not answered, the
                  connection closed (a server closing a kept connection just as the next request comes)

`GET /models` lists the models of `prices` (set it: model -> (prompt, completion) US dollars a token)
with OpenRouter's `pricing`, as strings; a priced model's usage chunk then charges those prices.

A server started with keep_alive (`--keep-alive`) keeps a connection open for the next
request, as a hosted API does; `connections` counts those it accepted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

WORDS = (
    "the keykeeper sets the bowl down and the porridge steams in the cold cell while rain "
    "taps the small window onto the yard and somewhere a gate creaks on its hinge he counts "
    "the coins twice writes a line in the ledger and looks at her without a word"
).split()

MARKUP_REPLY = (
    "[bold red]not bold[/bold red] [link=https://example.com]click[/link] "
    "\x1b[31mred\x1b[0m \x1b]0;title\x07 bell\x07 nul\x00 [/] [[escaped]] :smile: $(rm -rf) "
)


# Whole replies computed from the request (a judge reading its packet), by name: the option `reply=NAME`
# picks one. tests/support/fakejudge.py registers `judge`, which answers a packet with a card.
REPLIERS: dict[str, Callable[[Behaviour, dict[str, Any]], str]] = {}


@dataclass
class Behaviour:
    name: str
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, model: str) -> Behaviour:
        name, *rest = model.split(";")
        options = {}
        for part in rest:
            key, _, value = part.partition("=")
            options[key.strip()] = value.strip()
        return cls(name, options)

    def num(self, key: str, default: float) -> float:
        return float(self.options.get(key, default))

    def flag(self, key: str, default: bool = False) -> bool:
        return self.options.get(key, "1" if default else "0") not in ("0", "", "false")


# One odd chunk of each shape (`malformed=SHAPE;after=K`), as careless servers have sent them.
def malformed_chunk(shape: str, gen_id: str, provider: str) -> dict[str, Any]:
    head: dict[str, Any] = {"id": gen_id, "provider": provider, "object": "chat.completion.chunk"}
    choice: dict[str, Any] = {"index": 0, "delta": {"content": " odd"}, "finish_reason": None}
    shapes: dict[str, dict[str, Any]] = {
        "choices_str": {"choices": "not a list"},
        "delta_str": {"choices": [{**choice, "delta": "not an object"}]},
        "choice_not_object": {"choices": ["not an object"]},
        "content_list": {
            "choices": [{**choice, "delta": {"content": [{"type": "text", "text": " listed"}, " parts"]}}]
        },
        "content_number": {"choices": [{**choice, "delta": {"content": 42}}]},
        "finish_object": {"choices": [{**choice, "finish_reason": {"reason": "stop"}}]},
        "provider_object": {"provider": {"name": "Nested"}, "choices": [choice]},
        "usage_odd": {
            "choices": [choice],
            "usage": {
                "prompt_tokens": True,
                "completion_tokens": -5,
                "cost": True,
                "completion_tokens_details": {"reasoning_tokens": "3"},
            },
        },
        "usage_list": {"choices": [choice], "usage": [1, 2, 3]},
        "usage_huge": {
            "choices": [choice],
            "usage": {"prompt_tokens": 2**64, "completion_tokens": 2**70, "cost": 1e400},
        },
        "surrogate": {"choices": [{**choice, "delta": {"content": " half \ud800 a pair"}}]},
    }
    return {**head, **shapes[shape]}


def chunk_line(
    behaviour: Behaviour, gen_id: str, provider: Any, delta: dict[str, Any], finish: str | None = None, **extra: Any
) -> str:
    """One chunk of the stream as its `data:` line (without the blank line that ends the event)."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    if finish:
        choice["native_finish_reason"] = finish.upper() if finish != "stop" else "end_turn"
    choices = [choice]
    if behaviour.flag("two_choices"):
        other = {"content": " OTHER"} if delta.get("content") else delta
        choices.append({"index": 1, "delta": other, "finish_reason": finish})
    payload = {
        "id": gen_id,
        "provider": provider,
        "model": behaviour.name,
        "object": "chat.completion.chunk",
        "choices": choices,
        **extra,
    }
    return "data: " + json.dumps(payload, ensure_ascii=not behaviour.flag("raw"))


# The options of a plain reply paced by `delay`: such a reply is sent by the cheap path (FakeServer._paced),
# every other option (a fault) by the general one.
PACED_OPTIONS = frozenset(
    ("tokens", "delay", "ttft", "comments", "crlf", "usage", "provider", "text", "markup", "seeded", "finish")
)


def reply_tokens(behaviour: Behaviour, n_user: int, seed: Any = None) -> list[str]:
    if behaviour.flag("markup"):
        return [MARKUP_REPLY[i : i + 7] for i in range(0, len(MARKUP_REPLY), 7)]
    if "text" in behaviour.options:
        words = behaviour.options["text"].split("+")
        return [w if i == 0 else " " + w for i, w in enumerate(words)]
    count = int(behaviour.num("tokens", 40))
    # The same prompt gets the same reply; with `seeded`, the same prompt and seed do (as a sampling server).
    rng = random.Random(f"{behaviour.name}:{n_user}" + (f":{seed}" if behaviour.flag("seeded") else ""))
    head = f"Reply {n_user} from {behaviour.name}:"
    return [head] + [" " + rng.choice(WORDS) for _ in range(count - 1)]


class FakeServer:
    """Start with .start() (a thread with its own event loop); .base_url is the /v1 URL."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, keep_alive: bool = False, tls: ssl.SSLContext | None = None
    ):
        self.host = host
        self.port = port
        self.tls = tls  # a server context: the server speaks HTTPS (base_url says so)
        # Whether a connection stays open for the next request, as a hosted API's does; by
        # default every response closes it, so that each request starts on a new one.
        self.keep_alive = keep_alive
        self.requests: list[dict[str, Any]] = []
        self.prices: dict[str, tuple[float, float]] = {}  # the price list /models serves, as OpenRouter's
        self.connections = 0  # accepted so far: with keep_alive, fewer than the requests
        self.writes = 0  # writes of paced replies' bytes (FakeServer._paced), or of the general path's batches
        # Chat requests being answered now, and the most at once (a test sets it back to 0 first).
        self.in_flight = self.most_in_flight = 0
        self._seen: dict[tuple[str, int], int] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def _connection(self) -> str:
        return "" if self.keep_alive else "Connection: close\r\n"

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}/v1"

    def start(self) -> FakeServer:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._handle, self.host, self.port, ssl=self.tls)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="fakeserver", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop and self._server:

            async def shutdown() -> None:
                self._server.close()
                # Handlers still streaming (a stall, a slow drip) are cancelled, so
                # their sockets close while the loop still runs.
                others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
                for task in others:
                    task.cancel()
                await asyncio.gather(*others, return_exceptions=True)
                await self._server.wait_closed()

            try:
                asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(5)
            except Exception:
                pass
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)

    # -- HTTP -------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while await self._one_request(reader, writer, served > 0) and self.keep_alive:
                served += 1
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            if not writer.is_closing():
                writer.close()

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, reused: bool) -> bool:
        """Answer one request (`reused`: not the connection's first); whether the connection is still open."""
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        body = await reader.readexactly(int(headers.get("content-length", 0)))
        if method == "GET" and path.rstrip("/").endswith("/models"):
            listed = [{"id": "fake", "object": "model"}] + [
                {"id": model, "object": "model", "pricing": {"prompt": f"{p:.12f}", "completion": f"{c:.12f}"}}
                for model, (p, c) in self.prices.items()
            ]
            await self._json(writer, 200, {"object": "list", "data": listed})
        elif method == "POST" and path.endswith("/chat/completions"):
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            try:
                await self._chat(writer, headers, json.loads(body), reused)
            finally:
                self.in_flight -= 1
        elif method == "GET" and path == "/_stats":
            # What a benchmark reads of the server: its process's CPU time (meaningful when it runs in a
            # process of its own, tests/perf/serve.py) and how much it served.
            times = os.times()
            stats = {"cpu": times.user + times.system, "user": times.user, "system": times.system}
            served = {"requests": len(self.requests), "connections": self.connections, "writes": self.writes}
            await self._json(writer, 200, {**stats, **served})
        elif method == "POST" and path.endswith("/extras/tokenize/count"):  # llama-cpp-python's tokenizer
            await self._json(writer, 200, {"count": len(json.loads(body)["input"].split())})
        elif method == "POST" and path.endswith("/tokenize"):  # llama.cpp's own: the tokens, not their count
            words = json.loads(body)["content"].split()
            await self._json(writer, 200, {"tokens": list(range(len(words)))})
        else:
            await self._json(writer, 404, {"error": {"message": f"no route {method} {path}"}})
        return not writer.is_closing()

    async def _json(self, writer: asyncio.StreamWriter, status: int, payload: Any, extra: str = "") -> None:
        data = json.dumps(payload).encode()
        reason = {
            200: "OK",
            401: "Unauthorized",
            402: "Payment Required",
            403: "Forbidden",
            404: "Not Found",
            408: "Request Timeout",
            429: "Too Many Requests",
            500: "Internal Server Error",
            502: "Bad Gateway",
            503: "Service Unavailable",
        }.get(status, "Error")
        writer.write(
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n{extra}{self._connection}\r\n".encode()
            + data
        )
        await writer.drain()

    async def _chat(
        self, writer: asyncio.StreamWriter, headers: dict[str, str], body: dict[str, Any], reused: bool = False
    ) -> None:
        model = body.get("model", "")
        behaviour = Behaviour.parse(model)
        messages = body.get("messages", [])
        if reused and behaviour.flag("stale"):  # closed just as the request came, unanswered and unrecorded
            writer.close()
            return
        self.requests.append({"model": model, "body": body, "headers": headers, "at": time.time()})
        key = (model, len(messages))
        self._seen[key] = self._seen.get(key, 0) + 1
        n_user = sum(1 for m in messages if m.get("role") == "user")
        replier = REPLIERS.get(behaviour.options.get("reply", ""))
        whole = replier(behaviour, body) if replier is not None else None

        # `times=K`: the fault applies to the first K requests for the same prompt only.
        faulty = self._seen[key] <= behaviour.num("times", 1e9)
        if "only_at" in behaviour.options:  # the fault only for a conversation of this many messages
            faulty = faulty and len(messages) == int(behaviour.num("only_at", 0))
        if not faulty:
            behaviour = Behaviour(
                behaviour.name,
                {
                    k: v
                    for k, v in behaviour.options.items()
                    if k
                    in (
                        "tokens",
                        "delay",
                        "ttft",
                        "comments",
                        "crlf",
                        "usage",
                        "provider",
                        "text",
                        "markup",
                        "seeded",
                        "chunk",
                    )
                },
            )
        if behaviour.flag("echo_auth"):
            await self._json(
                writer,
                401,
                {"error": {"message": f"invalid key in header: {headers.get('authorization', '')}", "code": 401}},
            )
            return
        if "status" in behaviour.options:
            status = int(behaviour.options["status"])
            extra = f"Retry-After: {behaviour.options['retry_after']}\r\n" if "retry_after" in behaviour.options else ""
            if behaviour.options.get("body") == "moderation":
                err = {
                    "message": "Your chosen model requires moderation and your input was flagged",
                    "code": 403,
                    "metadata": {"reasons": ["violence"], "provider_name": "Anthropic"},
                }
            else:
                err = {"message": behaviour.options.get("error_text", f"fake failure {status}"), "code": status}
            await self._json(writer, status, {"error": err}, extra)
            return

        bearer = headers.get("authorization", "").removeprefix("Bearer ")
        if behaviour.flag("not_sse"):
            text = whole if whole is not None else "".join(reply_tokens(behaviour, n_user, body.get("seed")))
            await self._not_a_stream(writer, behaviour, text, messages)
            return
        if whole is None and behaviour.num("delay", 0) > 0 and PACED_OPTIONS.issuperset(behaviour.options):
            tokens = reply_tokens(behaviour, n_user, body.get("seed"))
            await self._paced(writer, behaviour, body, tokens, f"gen-{len(self.requests)}")
            return
        eol = "\r\n" if behaviour.flag("crlf") else "\n"
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
            + self._connection.encode()
            + b"\r\n"
        )
        buffer: list[str] = ["\ufeff"] if behaviour.flag("bom") else []

        def event(text: str) -> None:
            buffer.append(text + eol + eol)

        pieces = int(behaviour.num("pieces", 0))

        async def flush(force: bool = False) -> None:
            if buffer and (force or sum(map(len, buffer)) > 32768):
                data = "".join(buffer).encode()
                buffer.clear()
                for at in range(0, len(data), pieces or len(data)):
                    piece = data[at : at + pieces] if pieces else data
                    writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.writes += 1
                    await writer.drain()
                    if pieces:
                        await asyncio.sleep(0.001)  # so that the client reads it on its own

        gen_id = f"gen-{len(self.requests)}"
        provider = behaviour.options.get("provider", "FakeProvider")
        if behaviour.options.get("echo_key") == "provider":
            provider = f"Provider {bearer}"

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
            return chunk_line(behaviour, gen_id, provider, delta, finish, **extra)

        if behaviour.flag("comments", True):
            buffer.append(": OPENROUTER PROCESSING" + eol + eol)
        await flush(True)
        while "gate" in behaviour.options and not os.path.exists(behaviour.options["gate"]):
            await asyncio.sleep(0.01)
        ttft = behaviour.num("ttft", 0)
        if ttft:
            await asyncio.sleep(ttft)
        tokens = [] if behaviour.flag("empty") else reply_tokens(behaviour, n_user, body.get("seed"))
        if behaviour.options.get("echo_key") in ("text", "upper", "lower") and bearer:
            # The key split over several chunks, as a tokenizer would cut it; its case changed, as some echo it.
            echoed_key = {"upper": bearer.upper(), "lower": bearer.lower()}.get(behaviour.options["echo_key"], bearer)
            echoed = f" your key is {echoed_key}, thanks"
            tokens[1:1] = [echoed[i : i + 5] for i in range(0, len(echoed), 5)]
        delay = behaviour.num("delay", 0)
        if whole is not None:
            size = int(behaviour.num("chunk", 4))  # about a token each, unless told otherwise
            tokens = [whole[i : i + size] for i in range(0, len(whole), size)]
        if "cut" in behaviour.options:  # the output ceiling: the reply stops here, its finish reason says so
            tokens = tokens[: int(behaviour.num("cut", 0))]
            behaviour.options.setdefault("finish", "length")
        if "drip_at" in behaviour.options and len(messages) >= behaviour.num("drip_at", 0):
            delay = behaviour.num("drip", 0.2)
        after = int(behaviour.num("after", len(tokens)))
        if not behaviour.flag("bom"):  # with a BOM, the first line is the first words of the reply
            event(chunk({"role": "assistant", "content": ""}))
        for i, token in enumerate(tokens):
            if i == after and "malformed" in behaviour.options:
                event("data: " + json.dumps(malformed_chunk(behaviour.options["malformed"], gen_id, provider)))
                if behaviour.options["malformed"] == "provider_object":
                    provider = {"name": "Nested"}  # and so in every chunk after it
            if i == after:
                if behaviour.flag("drop"):
                    await flush(True)
                    writer.transport.abort()
                    return
                if "stall" in behaviour.options:
                    await flush(True)
                    await asyncio.sleep(behaviour.num("stall", 5))
                    writer.transport.abort()
                    return
                if behaviour.flag("stream_error"):
                    event(
                        "data: "
                        + json.dumps(
                            {
                                "id": gen_id,
                                "provider": provider,
                                "error": {
                                    "code": 502,
                                    "message": behaviour.options.get("error_text", "Provider returned error"),
                                },
                                "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
                            }
                        )
                    )
                    break
                if behaviour.flag("choice_error"):
                    event(
                        "data: "
                        + json.dumps(
                            {
                                "id": gen_id,
                                "choices": [
                                    {
                                        "index": 0,
                                        "delta": {},
                                        "finish_reason": "error",
                                        "error": {"message": "upstream overloaded", "code": 529},
                                    }
                                ],
                            }
                        )
                    )
                    break
            event(chunk({"refusal": token} if behaviour.flag("refusal") else {"content": token}))
            if behaviour.flag("comments", True) and i % 50 == 25:
                buffer.append(": OPENROUTER PROCESSING" + eol + eol)
            if delay:
                await flush(True)
                await asyncio.sleep(delay)
            else:
                await flush()
        else:
            finish = behaviour.options.get("finish", "stop")
            usage = self._usage(behaviour, model, body, len(tokens))
            ceiling_error = {"code": 400, "message": "Token limit reached"}
            late = behaviour.options.get("length_error") in ("after", "after_choice")
            if behaviour.flag("length_error") and not late:
                # A synthetic order: the ceiling, an error and the usage in one final chunk.
                event(chunk({}, "length", error=ceiling_error, usage=usage))
            elif late:
                # As a real OpenRouter capture has it: the ceiling first, then the error with the usage on its own.
                event(chunk({}, "length"))
                after_choices: list[dict[str, Any]] = []
                if behaviour.options["length_error"] == "after_choice":
                    after_choices = [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]
                payload = {
                    "id": gen_id,
                    "provider": provider,
                    "object": "chat.completion.chunk",
                    "choices": after_choices,
                    "error": ceiling_error,
                    "usage": usage,
                }
                event("data: " + json.dumps(payload))
            elif finish != "none":  # none: [DONE] with no finish reason at all
                event(chunk({}, finish))
            if behaviour.flag("usage", True) and not behaviour.flag("length_error"):
                buffer.append(
                    "data: "
                    + json.dumps({"id": gen_id, "provider": provider, "choices": [], "usage": usage})
                    + eol
                    + eol
                )
        buffer.append("data: [DONE]" + eol + eol)
        await flush(True)
        if "trailing" in behaviour.options:
            buffer.append(": " + "x" * int(behaviour.num("trailing", 0)) + eol + eol)
            await flush(True)
        if "linger" in behaviour.options:
            await asyncio.sleep(behaviour.num("linger", 0))
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    def _usage(self, behaviour: Behaviour, model: str, body: dict[str, Any], completion: int) -> dict[str, Any]:
        """The final usage chunk's usage: token counts, and the cost (as told, by the price list, or a millionth a token)."""
        prompt_tokens = sum(len(m.get("content", "").split()) for m in body.get("messages", []))
        priced = self.prices.get(model)
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": 0,
            "cost": float(behaviour.options["cost"])
            if "cost" in behaviour.options
            else (prompt_tokens * priced[0] + completion * priced[1])
            if priced
            else round(completion * 1e-6, 9),
            "completion_tokens_details": {"reasoning_tokens": 3 if body.get("reasoning") else 0},
        }

    async def _paced(
        self, writer: asyncio.StreamWriter, behaviour: Behaviour, body: dict[str, Any], tokens: list[str], gen_id: str
    ) -> None:
        """A plain reply at `delay` seconds a token, sent cheaply, so that a benchmark's client has the CPU.

        Every chunk is encoded before the first is sent (each token's JSON made from one template),
        each is due at a fixed time from the start (token i at ttft + i * delay, the end at
        ttft + n * delay), and whatever is due when the server wakes goes out in one write:
        a server that fell behind catches up in one piece, as a read of the client takes it.
        """
        eol = ("\r\n" if behaviour.flag("crlf") else "\n") * 2
        provider = behaviour.options.get("provider", "FakeProvider")
        comments = behaviour.flag("comments", True)
        marker = "\x00token\x00"
        head, tail = chunk_line(behaviour, gen_id, provider, {"content": marker}).split(json.dumps(marker))
        delay, ttft = behaviour.num("delay", 0), behaviour.num("ttft", 0)

        def frame(text: str) -> bytes:
            data = text.encode()
            return b"%x\r\n%s\r\n" % (len(data), data)

        # (seconds from the start, bytes): the head, each token, the end with the body's last chunk
        due: list[tuple[float, bytes]] = [
            (
                0.0,
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                + self._connection.encode()
                + b"\r\n"
                + (frame(": OPENROUTER PROCESSING" + eol) if comments else b""),
            )
        ]
        for i, token in enumerate(tokens):
            text = head + json.dumps(token) + tail + eol
            if i == 0:
                text = chunk_line(behaviour, gen_id, provider, {"role": "assistant", "content": ""}) + eol + text
            if comments and i % 50 == 25:
                text += ": OPENROUTER PROCESSING" + eol
            due.append((ttft + i * delay, frame(text)))
        end = chunk_line(behaviour, gen_id, provider, {}, behaviour.options.get("finish", "stop")) + eol
        if behaviour.flag("usage", True):
            usage = self._usage(behaviour, body.get("model", ""), body, len(tokens))
            end += "data: " + json.dumps({"id": gen_id, "provider": provider, "choices": [], "usage": usage}) + eol
        due.append((ttft + len(tokens) * delay, frame(end + "data: [DONE]" + eol) + b"0\r\n\r\n"))

        # Timer callbacks, not a task that sleeps: a wake-up costs a timer and a write, nothing more.
        loop = asyncio.get_running_loop()
        start = loop.time()
        sent = loop.create_future()

        def send(at: int) -> None:
            if writer.is_closing():  # the client went away: nothing more to send
                sent.done() or sent.set_result(None)
                return
            now = loop.time() - start
            upto = at + 1
            while upto < len(due) and due[upto][0] <= now:
                upto += 1
            writer.write(b"".join([data for _, data in due[at:upto]]) if upto > at + 1 else due[at][1])
            self.writes += 1
            if upto < len(due):
                loop.call_at(start + due[upto][0], send, upto)
            elif not sent.done():
                sent.set_result(None)

        loop.call_at(start, send, 0)
        await sent
        await writer.drain()

    async def _not_a_stream(
        self, writer: asyncio.StreamWriter, behaviour: Behaviour, text: str, messages: list[dict[str, Any]]
    ) -> None:
        """A 200 that ignores `stream: true`: one JSON completion (labelled as JSON, as nothing, or as a stream),
        or an HTML page."""
        how = behaviour.options.get("not_sse", "1")
        if how == "html":
            page = b"<html><body>Service temporarily unavailable</body></html>"
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n%s\r\n%s"
                % (len(page), self._connection.encode(), page)
            )
            await writer.drain()
            return
        completion = {
            "id": "gen-json",
            "object": "chat.completion",
            "provider": behaviour.options.get("provider", "FakeProvider"),
            "model": behaviour.name,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": behaviour.options.get("finish", "stop"),
                }
            ],
            "usage": {
                "prompt_tokens": sum(len(m.get("content", "").split()) for m in messages),
                "completion_tokens": len(text.split()),
                "cost": 0.000042,
            },
        }
        data = json.dumps(completion).encode()
        kind = {"unlabelled": b"", "mislabelled": b"Content-Type: text/event-stream\r\n"}.get(
            how, b"Content-Type: application/json\r\n"
        )
        writer.write(
            b"HTTP/1.1 200 OK\r\n%sContent-Length: %d\r\n%s\r\n%s" % (kind, len(data), self._connection.encode(), data)
        )
        await writer.drain()


def main() -> None:
    parser = argparse.ArgumentParser(description="sieve's misbehaving test server")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--keep-alive", action="store_true", help="keep connections open between requests")
    args = parser.parse_args()
    server = FakeServer(port=args.port, keep_alive=args.keep_alive).start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
