"""The embedded model shared by several runs (issue 25 §6): requests wait their turn, and an empty
reply from a local server is a fault to retry, never a filter; a run that says next to nothing says so.

The gateway's side runs against the fake server; the real servers (xllamacpp and, where it is
installed, llama-cpp-python) play `sieve run keykeeper --repeat 3` in the slow tests.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from sieve import scenarios, store
from sieve.engine.gateway import Endpoint, Gateway, RequestSettings, Result
from sieve.engine.session import RetryPolicy, Session, resolve_settings
from sieve.store.record import turns as record
from tests.support.fakeserver import FakeServer

MESSAGES = [{"role": "user", "content": "Good morning, Havel."}]
KEYKEEPER = scenarios.load("keykeeper")


@pytest.fixture
def server():
    """A fake server of this test's own, so that what it counts is this test's requests alone."""
    fake = FakeServer().start()
    yield fake
    fake.stop()


async def reply(gateway: Gateway, model: str) -> Result:
    async for event in gateway.stream(MESSAGES, RequestSettings(model=model)):
        if isinstance(event, Result):
            return event
    raise AssertionError("the stream ended without a Result")


@pytest.mark.parametrize(("slots", "most"), [(1, 1), (2, 2), (None, 3)])
@pytest.mark.slow
async def test_requests_beyond_the_servers_slots_wait_their_turn_at_the_gateway(server, slots, most):
    endpoint = Endpoint(server.base_url, name="local", local=True, slots=slots)
    async with Gateway(endpoint) as gateway:
        results = await asyncio.gather(*(reply(gateway, f"q{k};tokens=6;delay=0.05") for k in range(3)))
    assert [r.status for r in results] == ["complete"] * 3
    assert server.most_in_flight == most  # None: a hosted API takes them all at once
    # The time limits start when the request goes out, not while it waits: each took its own 0.3 s.
    assert all(r.duration < 1.5 for r in results)


def test_the_gateway_queue_serves_one_event_loop_after_another(server):
    gateway = Gateway(Endpoint(server.base_url, name="local", local=True, slots=1))

    async def two_at_once() -> list[Result]:
        try:
            replies = (reply(gateway, f"loop{k};tokens=3;delay=0.02") for k in range(2))
            return await asyncio.wait_for(asyncio.gather(*replies), 10)
        finally:
            await gateway.aclose()

    for _ in range(2):  # as two commands in one process would: a queue bound to the first loop would fail
        assert [r.status for r in asyncio.run(two_at_once())] == ["complete", "complete"]
    assert server.most_in_flight == 1


async def test_an_empty_reply_without_a_finish_reason_from_a_local_server_is_a_failure_to_retry(server):
    async with Gateway(Endpoint(server.base_url, name="local", local=True, slots=1)) as gateway:
        broke = await reply(gateway, "cut;empty=1;finish=none")
        stopped = await reply(gateway, "eos;empty=1;finish=stop")
    assert broke.status == "failed" and broke.retryable and broke.text == ""
    assert "the local server ended the reply empty, without a finish reason" in broke.error
    # The model itself ending at once (finish reason stop) is an empty reply, as from any server.
    assert stopped.status == "filtered" and "empty reply (finish reason stop)" in stopped.error


async def test_an_empty_reply_from_a_hosted_endpoint_is_still_a_filter(server):
    async with Gateway(Endpoint(server.base_url, name="hosted")) as gateway:
        result = await reply(gateway, "hosted;empty=1;finish=none")
    assert result.status == "filtered" and not result.retryable
    assert "empty reply (finish reason none)" in result.error


async def test_the_runner_retries_an_empty_local_reply_and_records_the_one_that_came(db, server):
    endpoint = Endpoint(server.base_url, name="local", local=True, slots=1)
    async with Gateway(endpoint) as gateway:
        settings = resolve_settings("retry;tokens=5;empty=1;finish=none;times=2", KEYKEEPER)
        session = Session.start(db, KEYKEEPER, gateway, settings, retry=RetryPolicy(base=0.01))
        result = await session.send_next()
    assert result.status == "complete" and result.text.strip()
    (_, answer) = record.chosen_turns(db, session.run_id)
    assert answer["status"] == "complete" and answer["attempts"] == 3
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("path", "server_kind"), [("/tokenize", "llama.cpp's own"), ("/extras/tokenize/count", "llama-cpp-python's")]
)
async def test_tokens_are_counted_by_either_servers_tokenizer(server, path, server_kind):
    root = server.base_url.removesuffix("/v1")
    async with Gateway(Endpoint(server.base_url, tokenize_url=root + path)) as gateway:
        assert await gateway.count_tokens("the key is under the third stone", "m") == 7, server_kind


@pytest.mark.slow
def test_a_run_most_of_whose_replies_are_empty_says_so(server, tmp_path):
    db_path = tmp_path / "empty.db"
    common = ["--endpoint", server.base_url, "--db", str(db_path)]
    proc = sieve("run", "train", "-m", "mute;empty=1", "-m", "fine;tokens=4", *common)
    assert proc.returncode == 0, proc.stderr
    (said,) = [line for line in proc.stdout.splitlines() if "replies are empty" in line]
    assert "(mute;empty=1): complete, but 11 of 11 replies are empty" in said and "--again-extreme" in said
    assert "fine;tokens=4)" not in proc.stdout.split("replies are empty")[-1]
    rows = {r["model"]: r for r in json.loads(sieve("run", "train", "-m", "mute2;empty=1", *common, "--json").stdout)}
    assert rows["mute2;empty=1"]["empty"] == 11 and rows["mute2;empty=1"]["status"] == "complete"
    assert {f["what"] for f in rows["mute2;empty=1"]["extreme"]} == {"a filtered reply"}


def sieve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sieve", *args],
        capture_output=True,
        text=True,
        timeout=1200,
        env={**os.environ, **(env or {})},
    )


SERVERS = [
    pytest.param("xllamacpp", id="xllamacpp"),
    pytest.param(
        "llama-cpp-python",
        id="llama-cpp-python",
        marks=pytest.mark.skipif(
            importlib.util.find_spec("llama_cpp") is None,
            reason="llama-cpp-python is not installed (the fallback extra: pip install -e '.[local-llama-cpp]')",
        ),
    ),
]


@pytest.mark.slow
@pytest.mark.embedded
@pytest.mark.parametrize("server_name", SERVERS)
def test_three_repeats_share_the_embedded_model_and_every_reply_has_words(tmp_path, server_name):
    # llama-cpp-python answers one at a time, so its runs take turns: two show that neither cuts the
    # other off (its default did) and take half the time of three, which on xllamacpp share slots.
    repeats = 3 if server_name == "xllamacpp" else 2
    db_path = tmp_path / "repeat.db"
    proc = sieve(
        "run",
        "keykeeper",
        "--repeat",
        str(repeats),
        "--max-tokens",
        "8",
        "--db",
        str(db_path),
        "--json",
        env={"SIEVE_LOCAL_SERVER": server_name},
    )
    assert proc.returncode == 0, proc.stderr
    slots = repeats if server_name == "xllamacpp" else 1  # the rest wait their turn at the gateway
    assert f"from {server_name}, {slots} slot" in proc.stderr
    rows = json.loads(proc.stdout)
    assert sorted(r["repeat"] for r in rows) == list(range(repeats))
    db = store.open_db(db_path)
    for row in rows:
        assert row["status"] == "complete" and row["turns"] == 14 and row["empty"] == 0 and row["filtered"] == 0
        replies = [t for t in record.chosen_turns(db, row["run"]) if t["role"] == "assistant"]
        assert all(t["text"].strip() and t["status"] in ("complete", "length") for t in replies)
