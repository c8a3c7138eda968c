"""Streams as careless servers send them: odd chunks, a BOM, a JSON 200, two choices, Infinity, an echoed key.

Whatever arrives, the text that streamed is kept, the turn ends (never left
"streaming"), and nothing the database cannot hold, or must not hold, gets in.
"""

from __future__ import annotations

import pytest

from sieve import scenarios
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.session import RetryPolicy, Session, resolve_settings
from sieve.store.record import turns as record
from tests.support.fakeserver import Behaviour, reply_tokens
from tests.support.tui_helpers import play_app, screen_text, settle

FAST_RETRY = RetryPolicy(attempts=4, base=0.01, cap=0.05)
TRAIN = scenarios.load("train")


def start(db, server, model, scenario=TRAIN, endpoint=None) -> Session:
    gateway = Gateway(endpoint or Endpoint(server.base_url, name="fake"))
    return Session.start(db, scenario, gateway, resolve_settings(model, scenario), retry=FAST_RETRY)


def first_reply(db, session) -> dict:
    return next(t for t in record.all_turns(db, session.run_id) if t["role"] == "assistant")


def streaming_turns(db) -> list[dict]:
    return list(db.query("SELECT id, run_id FROM turns WHERE status = 'streaming'"))


def words(model: str, tokens: int) -> str:
    """What the test server sends as the first `tokens` tokens of the first reply."""
    return "".join(reply_tokens(Behaviour.parse(model), 1)[:tokens])


# -- 1. malformed chunks -----------------------------------------------------------


@pytest.mark.parametrize(
    "shape,what",
    [
        ("choices_str", "'choices' is a string, not a list"),
        ("delta_str", "choices[0].delta is a string, not an object"),
        ("choice_not_object", "choices[0] is a string, not an object"),
        ("content_number", "choices[0].delta.content is a number, not text"),
        ("finish_object", "choices[0].finish_reason is an object, not a string"),
    ],
)
async def test_a_malformed_chunk_fails_the_reply_and_keeps_the_text_that_streamed(db, fake_server, shape, what):
    model = f"bad-{shape};tokens=12;after=5;malformed={shape}"
    session = start(db, fake_server, model)
    assert await session.send_next() is not None
    reply = first_reply(db, session)
    assert reply["status"] == "failed"
    assert reply["text"] == words(model, 5)  # the five tokens before the odd chunk
    assert "a malformed chunk in the stream" in reply["error"] and what in reply["error"]
    assert reply["error"].startswith(f"POST {fake_server.base_url}/chat/completions")
    assert streaming_turns(db) == []


@pytest.mark.parametrize("shape", ["content_list", "surrogate", "provider_object"])
async def test_an_odd_but_readable_chunk_is_tolerated(db, fake_server, shape):
    model = f"odd-{shape};tokens=8;after=4;malformed={shape}"
    session = start(db, fake_server, model)
    await session.send_next()
    reply = first_reply(db, session)
    assert reply["status"] == "complete", reply["error"]
    before, whole = words(model, 4), words(model, 8)
    extra = {
        "content_list": " listed parts",  # the parts joined
        "surrogate": " half \ufffd a pair",  # the lone surrogate replaced, the rest kept
    }.get(shape, " odd")
    assert reply["text"] == before + extra + whole[len(before) :]
    assert reply["provider"] == "FakeProvider"  # an object sent as the provider later is no provider
    assert (reply["completion_tokens"], reply["token_source"]) == (8, "usage")


@pytest.mark.parametrize("shape", ["usage_odd", "usage_list"])
async def test_usage_of_a_strange_shape_is_missing_not_misread(db, fake_server, shape):
    # No final usage chunk: the odd one is all the server says (true as a count, a negative count).
    session = start(db, fake_server, f"{shape};tokens=6;after=3;malformed={shape};usage=0")
    await session.send_next()
    reply = first_reply(db, session)
    assert reply["status"] == "complete"
    assert (reply["prompt_tokens"], reply["reasoning_tokens"], reply["cost"]) == (None, None, None)
    assert (reply["completion_tokens"], reply["token_source"]) == (7, "deltas")  # counted another way


async def test_usage_past_64_bits_and_infinite_cost_are_missing_not_a_crash(db, fake_server):
    # No final usage chunk: the odd one is all the server says about usage.
    session = start(db, fake_server, "huge;tokens=6;after=3;malformed=usage_huge;usage=0")
    assert await session.play() == "complete"
    reply = first_reply(db, session)
    assert reply["status"] == "complete" and reply["text"]
    assert reply["prompt_tokens"] is None and reply["cost"] is None
    assert (reply["completion_tokens"], reply["token_source"]) == (7, "deltas")  # counted another way
    assert streaming_turns(db) == []


async def test_a_turn_never_stays_streaming_even_when_the_store_refuses_a_value(db, fake_server):
    # The database itself refuses to record the reply as complete (a trigger, as a
    # constraint would): the turn still ends, failed, with its text.
    db.execute(
        "CREATE TRIGGER refuse_complete BEFORE UPDATE OF status ON turns WHEN new.status = 'complete' "
        "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
    )
    session = start(db, fake_server, "refused;tokens=6")
    await session.send_next()
    reply = first_reply(db, session)
    assert reply["status"] == "failed" and reply["text"] == words("refused;tokens=6", 6)
    assert "could not be stored" in reply["error"] and "refused by the test" in reply["error"]
    assert streaming_turns(db) == []


@pytest.mark.slow
async def test_play_shows_the_failed_reply_and_its_text_not_streaming_forever(db, fake_server):
    model = "play-bad;tokens=12;after=5;malformed=delta_str"
    app, session = play_app(db, fake_server, model)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("n")
        await settle(app, pilot)
        shown = screen_text(app)
        assert "streaming…" not in shown
        assert "1 · model · failed" in shown and "malformed chunk" in shown
        assert words(model, 5).strip() in shown
    assert streaming_turns(db) == []


def test_recovery_ends_a_reply_left_streaming_in_a_failed_run(db):
    run_id = record_run(db)
    turn = record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", status="streaming", text="half a")
    record.set_run_status(db, run_id, "failed", "it broke")
    record.recover(db)
    row = db["turns"].get(turn)
    assert row["status"] == "interrupted" and row["text"] == "half a"
    assert db["runs"].get(run_id)["status"] == "failed"  # the run's own status stands


def record_run(db) -> str:
    from sieve.store.record.runs import create_run

    return create_run(db, TRAIN, model="m", endpoint="e", settings={})


# -- 2. a ceiling hit reported with an error ----------------------------------------


@pytest.mark.parametrize(
    "order",
    [
        "1",  # the error and the usage in the same chunk as finish_reason "length"
        "after",  # a real capture's order: "length", then a chunk of its own with the error 400 and the usage
        "after_choice",  # the same, that chunk's choice ending with finish_reason "error"
    ],
)
async def test_a_ceiling_hit_reported_with_an_error_is_length_with_its_usage_and_the_run_goes_on(
    db, fake_server, order
):
    model = f"ceiling-{order};tokens=9;length_error={order}"
    session = start(db, fake_server, model)
    assert await session.play() == "complete"
    replies = [t for t in record.chosen_turns(db, session.run_id) if t["role"] == "assistant"]
    assert len(replies) == len(TRAIN.script())  # every step was sent
    assert replies[0]["text"] == words(model, 9)  # whole at the ceiling
    for reply in replies:
        assert reply["status"] == "length" and reply["finish_reason"] == "length"
        assert reply["text"].startswith("Reply ") and len(reply["text"].split()) == 12
        assert reply["completion_tokens"] == 9 and reply["cost"] > 0 and reply["token_source"] == "usage"
        assert "cut at the output ceiling" in reply["error"] and "Token limit reached" in reply["error"]
    run = record.get_run(db, session.run_id)
    assert run["status"] == "complete" and run["cost"] > 0 and run["completion_tokens"] == 9 * len(replies)


# -- 3. smaller shapes --------------------------------------------------------------


async def test_a_byte_order_mark_before_the_first_line_loses_nothing(db, fake_server):
    model = "bom;tokens=6;bom=1;comments=0"
    session = start(db, fake_server, model)
    await session.send_next()
    reply = first_reply(db, session)
    assert reply["status"] == "complete" and reply["text"] == words(model, 6)


@pytest.mark.parametrize("label", ["1", "unlabelled", "mislabelled"])
async def test_a_json_reply_to_a_streaming_request_is_read_as_the_reply(db, fake_server, label):
    # Some servers ignore `stream: true` and answer with one JSON completion, labelled as JSON, as nothing,
    # or even as a stream.
    model = f"json200-{label};not_sse={label};text=The+courier+nods+and+takes+the+parcel."
    session = start(db, fake_server, model)
    await session.send_next()
    reply = first_reply(db, session)
    assert reply["status"] == "complete", reply["error"]
    assert reply["text"] == "The courier nods and takes the parcel."
    assert reply["finish_reason"] == "stop" and reply["provider"] == "FakeProvider"
    assert (reply["completion_tokens"], reply["cost"], reply["token_source"]) == (7, 0.000042, "usage")
    assert sum(1 for r in fake_server.requests if r["model"] == model) == 1


async def test_a_json_reply_cut_at_the_ceiling_is_length(db, fake_server):
    session = start(db, fake_server, "json200-cut;not_sse=1;finish=length;text=The+courier")
    await session.send_next()
    reply = first_reply(db, session)
    assert (reply["status"], reply["text"]) == ("length", "The courier")


async def test_a_200_that_is_neither_a_stream_nor_json_fails_once_naming_the_content_type(db, fake_server):
    session = start(db, fake_server, "html200;not_sse=html")
    await session.send_next()
    reply = first_reply(db, session)
    assert reply["status"] == "failed" and reply["attempts"] == 1
    assert "not a stream" in reply["error"] and "text/html" in reply["error"]
    assert sum(1 for r in fake_server.requests if r["model"] == "html200;not_sse=html") == 1


async def test_only_choice_zero_is_the_reply_and_the_others_are_noted(db, fake_server):
    model = "twochoices;tokens=6;two_choices=1"
    session = start(db, fake_server, model)
    await session.send_next()
    reply = first_reply(db, session)
    assert reply["status"] == "complete" and reply["text"] == words(model, 6)
    assert "OTHER" not in reply["text"]
    assert "also sent choice 1" in reply["error"] and "only choice 0 is recorded" in reply["error"]


async def test_an_infinite_cost_is_missing_and_never_shown(db, fake_server, tmp_path):
    session = start(db, fake_server, "infcost;tokens=5;cost=inf")
    await session.send_next()
    reply = first_reply(db, session)
    assert reply["status"] == "complete" and reply["cost"] is None and reply["completion_tokens"] == 5
    assert record.get_run(db, session.run_id)["cost"] is None


# -- 10. a key echoed by the server ------------------------------------------------

KEY = "sk-or-v1-ECHOED-KEY-0123456789abcdef0123"


@pytest.mark.parametrize("where", ["provider", "text", "upper", "lower"])
@pytest.mark.slow
async def test_a_key_echoed_into_the_provider_or_the_reply_is_never_stored(tmp_path, fake_server, monkeypatch, where):
    from sieve import store

    monkeypatch.setenv("SIEVE_ECHO_KEY", KEY)
    path = tmp_path / "echo.db"
    db = store.open_db(path)
    endpoint = Endpoint(fake_server.base_url, name="fake", api_key_env="SIEVE_ECHO_KEY")
    session = start(db, fake_server, f"echo-{where};tokens=30;echo_key={where};delay=0.01", endpoint=endpoint)
    session.flush_interval = 0.01  # partial text goes to disk often: the key must not be in any of it
    await session.send_next()
    sent = [r["headers"]["authorization"] for r in fake_server.requests if r["model"].startswith(f"echo-{where}")]
    assert sent == [f"Bearer {KEY}"]  # the key was really sent
    reply = first_reply(db, session)
    assert reply["status"] == "complete"
    if where == "provider":
        assert reply["provider"] == "Provider [api key]"
    else:
        assert "your key is [api key], thanks" in reply["text"]
    db.conn.close()
    for file in tmp_path.iterdir():
        stored = file.read_bytes().lower()  # in any case
        assert KEY.lower().encode() not in stored, file.name
