"""The gateway against a real streaming server: what the caller sees for each shape and fault."""

from __future__ import annotations

import pytest

from sieve.engine.gateway import Endpoint, Gateway, RequestSettings, Result, normalise_base_url

MESSAGES = [{"role": "user", "content": "Good morning, Havel."}]


async def collect(server, model: str, **settings) -> tuple[list[str], Result]:
    deltas: list[str] = []
    async with Gateway(Endpoint(server.base_url, name="fake")) as gateway:
        async for event in gateway.stream(MESSAGES, RequestSettings(model=model, **settings)):
            if isinstance(event, str):
                deltas.append(event)
            else:
                return deltas, event
    raise AssertionError("the stream ended without a Result")


async def test_an_openrouter_shaped_stream_gives_text_usage_cost_and_provider(fake_server):
    deltas, result = await collect(fake_server, "plain;tokens=30;provider=Chutes")
    assert result.status == "complete" and result.error is None
    assert "".join(deltas) == result.text and result.text.startswith("Reply 1 from plain:")
    assert result.deltas == 30 and len(deltas) <= 30  # a read from the network at a time, not a token
    assert (result.finish_reason, result.native_finish_reason) == ("stop", "end_turn")
    assert result.provider == "Chutes"
    assert (result.completion_tokens, result.token_source) == (30, "usage")
    assert result.prompt_tokens == 3 and result.cost == pytest.approx(30e-6)
    assert result.ttft is not None and 0 <= result.ttft <= result.duration


async def test_a_refusal_streamed_in_delta_refusal_is_the_reply_and_marked(fake_server):
    _, plain = await collect(fake_server, "same;tokens=12")
    deltas, refused = await collect(fake_server, "same;tokens=12;refusal=1")
    assert refused.text == plain.text and "".join(deltas) == refused.text  # its words kept, as a reply's
    assert refused.refusal and not plain.refusal


async def test_crlf_line_endings_and_comment_lines_are_read_the_same(fake_server):
    _, plain = await collect(fake_server, "same;tokens=80;comments=0")
    deltas, crlf = await collect(fake_server, "same;tokens=80;crlf=1;comments=1")
    assert crlf.status == "complete" and crlf.text == plain.text and crlf.deltas == 80


@pytest.mark.slow
async def test_a_stream_cut_anywhere_reads_the_same(fake_server):
    # Lines, CR LF pairs and UTF-8 characters cut between reads; a raw U+2028 and other characters
    # str.splitlines takes for line ends stay inside their JSON line (SSE ends lines at CR and LF only).
    words = "Havel+says+ünïcödé+—+\u2028+and+\x85\x1c\u2029+then+the+rest"
    _, whole = await collect(fake_server, f"cut;text={words};raw=1")
    deltas, cut = await collect(fake_server, f"cut;text={words};raw=1;pieces=3;crlf=1")
    assert whole.status == cut.status == "complete", (whole.error, cut.error)
    assert cut.text == whole.text == words.replace("+", " ") and cut.deltas == whole.deltas == 10
    assert len(deltas) > 1  # it did come in pieces, each given as it came


async def test_the_request_carries_the_run_settings_and_no_system_prompt(fake_server):
    await collect(fake_server, "settings-probe", temperature=0.7, max_tokens=321, reasoning_effort="low", seed=42)
    body = next(r for r in reversed(fake_server.requests) if r["model"] == "settings-probe")["body"]
    assert body["stream"] is True
    assert (body["temperature"], body["max_tokens"], body["reasoning"], body["seed"]) == (
        0.7,
        321,
        {"effort": "low"},
        42,
    )
    assert body["messages"] == MESSAGES  # nothing added: no system prompt unless the scenario has one
    await collect(fake_server, "settings-probe-2", temperature=1.0)
    body = next(r for r in reversed(fake_server.requests) if r["model"] == "settings-probe-2")["body"]
    assert "reasoning" not in body and "seed" not in body and "max_tokens" not in body


async def test_the_final_usage_chunk_with_empty_choices_is_optional(fake_server):
    _, result = await collect(fake_server, "nousage;tokens=5;usage=0")
    assert result.status == "complete" and result.completion_tokens is None and result.token_source is None


async def test_an_error_chunk_inside_a_200_stream_fails_the_reply(fake_server):
    deltas, result = await collect(fake_server, "se;tokens=20;stream_error=1;after=6")
    assert result.deltas == 6 and result.text.startswith("Reply 1 from se:")
    assert result.status == "failed" and not result.retryable
    assert result.error.startswith(f"POST {fake_server.base_url}/chat/completions: 200 with an error in the stream 502")
    assert "Provider returned error" in result.error
    assert result.text == "".join(deltas)  # the partial text is kept


async def test_an_error_inside_the_choice_fails_the_reply(fake_server):
    _, result = await collect(fake_server, "ce;tokens=20;choice_error=1;after=3")
    assert result.status == "failed" and "upstream overloaded" in result.error and "529" in result.error


@pytest.mark.parametrize(
    "status,retryable,outcome",
    [
        (401, False, "failed"),
        (402, False, "failed"),
        (408, True, "failed"),
        (429, True, "failed"),
        (500, True, "failed"),
        (502, True, "failed"),
        (503, True, "failed"),
    ],
)
async def test_http_errors_name_the_endpoint_and_the_status(fake_server, status, retryable, outcome):
    deltas, result = await collect(fake_server, f"http{status};status={status}")
    assert deltas == []
    assert result.status == outcome and result.http_status == status and result.retryable is retryable
    assert result.error.startswith(f"POST {fake_server.base_url}/chat/completions: {status} ")
    assert f"fake failure {status}" in result.error


async def test_429_carries_retry_after(fake_server):
    _, result = await collect(fake_server, "ra;status=429;retry_after=7")
    assert result.retry_after == 7.0 and result.retryable


async def test_a_moderation_403_is_a_filter_not_a_failure(fake_server):
    _, result = await collect(fake_server, "mod;status=403;body=moderation")
    assert result.status == "filtered" and not result.retryable
    assert "403 Forbidden" in result.error and "flagged" in result.error and "violence" in result.error
    assert result.provider == "Anthropic"


async def test_content_filter_finish_reason_is_filtered(fake_server):
    _, result = await collect(fake_server, "cf;tokens=4;finish=content_filter")
    assert result.status == "filtered" and result.finish_reason == "content_filter"


async def test_an_empty_reply_is_filtered(fake_server):
    deltas, result = await collect(fake_server, "empty;empty=1")
    assert deltas == [] and result.status == "filtered" and "empty reply" in result.error


async def test_the_output_ceiling_is_length(fake_server):
    _, result = await collect(fake_server, "len;tokens=10;finish=length")
    assert result.status == "length" and len(result.text) > 0


async def test_a_connection_dropped_mid_reply_keeps_the_text_and_is_not_retryable(fake_server):
    deltas, result = await collect(fake_server, "drop;tokens=50;drop=1;after=12")
    assert result.deltas == 12 and result.text == "".join(deltas) and result.text.startswith("Reply 1 from drop:")
    assert result.status == "failed" and not result.retryable
    assert "the connection dropped after" in result.error


async def test_a_connection_dropped_before_the_reply_is_retryable(fake_server):
    deltas, result = await collect(fake_server, "drop0;tokens=50;drop=1;after=0")
    assert deltas == [] and result.status == "failed" and result.retryable
    assert "dropped before the reply began" in result.error


@pytest.mark.slow
async def test_a_server_that_stops_sending_hits_the_read_timeout(fake_server):
    deltas, result = await collect(fake_server, "stall;tokens=50;stall=5;after=4", read_timeout=0.5)
    assert result.deltas == 4 and result.text == "".join(deltas) and result.status == "failed"
    assert "stopped sending for 0.5 s" in result.error and not result.retryable
    assert result.duration < 3


@pytest.mark.slow
async def test_the_overall_limit_per_request_stops_a_slow_drip(fake_server):
    deltas, result = await collect(fake_server, "drip;tokens=200;delay=0.05", timeout=1.0)
    assert 5 < len(deltas) < 200  # a token every 50 ms: each its own read, given as it came
    assert result.status == "failed" and "no complete reply within 1 s (the limit per request)" in result.error
    assert result.duration < 2


async def test_nothing_listening_is_a_retryable_connection_error():
    async with Gateway(Endpoint("http://127.0.0.1:9/v1")) as gateway:
        events = [e async for e in gateway.stream(MESSAGES, RequestSettings(model="m"))]
    (result,) = events
    assert result.status == "failed" and result.retryable and "cannot connect" in result.error
    assert result.error.startswith("POST http://127.0.0.1:9/v1/chat/completions")


async def test_a_long_reply_arrives_whole(fake_server):
    deltas, result = await collect(fake_server, "long;tokens=24000")
    assert result.deltas == 24000 and result.completion_tokens == 24000 and result.status == "complete"
    # At full speed a read holds hundreds of tokens: passed on a read at a time, not a token at a time.
    assert len(deltas) < 2400 and "".join(deltas) == result.text


@pytest.fixture
def keeping_server():
    """A server that keeps a connection open for the next request, as a hosted API does."""
    from tests.support.fakeserver import FakeServer

    server = FakeServer(keep_alive=True).start()
    yield server
    server.stop()


async def replies_on_one_gateway(server, models: list[str]) -> list[Result]:
    results = []
    async with Gateway(Endpoint(server.base_url, name="fake")) as gateway:
        for model in models:
            events = [e async for e in gateway.stream(MESSAGES, RequestSettings(model=model))]
            results.append(events[-1])
    return results


async def test_replies_from_a_server_that_keeps_connections_open_share_one(keeping_server):
    # The body is read to its end after [DONE]: a response left unread is closed by httpx,
    # and every turn against a hosted API paid for a new connection.
    results = await replies_on_one_gateway(keeping_server, ["kept;tokens=20"] * 3)
    assert [r.status for r in results] == ["complete"] * 3 and all(r.deltas == 20 for r in results)
    assert keeping_server.connections == 1


async def test_a_body_that_does_not_end_after_done_costs_a_moment_and_its_connection(keeping_server):
    lingering, after = await replies_on_one_gateway(keeping_server, ["linger;tokens=20;linger=5", "next;tokens=5"])
    assert lingering.status == "complete" and lingering.deltas == 20 and lingering.error is None
    assert lingering.duration < 2  # not the five seconds the server waits
    assert after.status == "complete" and keeping_server.connections == 2  # that connection was closed


async def test_what_follows_done_is_read_up_to_a_limit(keeping_server):
    results = await replies_on_one_gateway(
        keeping_server, ["small;tokens=5;trailing=1000", "big;tokens=5;trailing=100000", "last;tokens=5"]
    )
    assert [r.status for r in results] == ["complete"] * 3
    assert [r.text.startswith(f"Reply 1 from {name}:") for r, name in zip(results, ["small", "big", "last"])] == [
        True
    ] * 3
    assert keeping_server.connections == 2  # kept after a little, closed after too much


def test_base_urls_are_normalised():
    assert normalise_base_url("http://h:1/v1/chat/completions/") == "http://h:1/v1"
    assert Endpoint(normalise_base_url("http://h:1/v1/")).url == "http://h:1/v1/chat/completions"


# An ordinary chunk is read by a short path (chunks.plain_text); every other by the full reading. For each
# shape, the short path either declines or gives what the full reading gives: the same text, not finished,
# and the same result.
CHUNKS = [
    {"id": "gen-1", "provider": "P", "choices": [{"index": 0, "delta": {"content": " word"}, "finish_reason": None}]},
    {"id": "gen-1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
    # OpenAI: "usage": null in every chunk but the last, logprobs null; OpenRouter: native_finish_reason null.
    {"id": "c", "usage": None, "choices": [{"index": 0, "delta": {"content": "x"}, "logprobs": None}]},
    {
        "id": 7,
        "provider": "P",
        "choices": [{"delta": {"content": "y"}, "finish_reason": None, "native_finish_reason": None}],
    },
    {"id": True, "provider": "", "choices": [{"index": 0, "delta": {"content": "z", "refusal": None}}]},
    # Shapes the short path must leave to the full reading.
    {"id": "g", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "native_finish_reason": "end_turn"}]},
    {"id": "g", "choices": [{"index": 0, "delta": {"content": "a"}, "native_finish_reason": "STOP"}]},
    {"id": "g", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "cost": 0.1}},
    {"id": "g", "choices": [{"index": 0, "delta": {"content": "a"}}], "usage": {"completion_tokens": 2}},
    {"id": "g", "choices": [{"index": 0, "delta": {"refusal": "no"}}]},
    {"id": "g", "choices": [{"index": 0, "delta": {"content": [{"type": "text", "text": "parts"}]}}]},
    {"id": "g", "choices": [{"index": 0, "delta": {"content": None}}]},
    {"id": "g", "choices": [{"index": 1, "delta": {"content": "other"}}]},
    {"id": "g", "choices": [{"index": 0, "delta": {"content": "a"}}, {"index": 1, "delta": {"content": "b"}}]},
    {"id": "g", "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": "length"}]},
    {"id": "g", "choices": [{"index": True, "delta": {"content": "a"}}]},
    {"id": "g", "choices": "not a list"},
    {"id": "g", "choices": [{"index": 0, "delta": "not an object"}]},
    ["not", "an", "object"],
]


@pytest.mark.parametrize("chunk", CHUNKS)
def test_the_short_reading_of_a_chunk_agrees_with_the_full_one(chunk):
    import copy
    import json

    from sieve.engine import chunks

    data = json.dumps(chunk)
    short, full = Result(), Result()
    if chunks.plain_text(chunk) is None:
        return  # declined: only the full reading reads it (its own tests say how)
    text, finished = chunks.apply_object(copy.deepcopy(chunk), short, data)
    assert (text, finished) == chunks.apply_full(chunk, full, data) and not finished
    assert short == full


def test_the_short_reading_takes_the_ordinary_shapes_and_leaves_the_rest():
    from sieve.engine.chunks import plain_text

    taken = [plain_text(chunk) is not None for chunk in CHUNKS]
    assert taken == [True] * 5 + [False] * (len(CHUNKS) - 5)
