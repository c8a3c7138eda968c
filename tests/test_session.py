"""The session runner against the test server: what the caller sees and what the database holds."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import time

import pytest

from sieve import scenarios
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.session import (
    RetryPolicy,
    ScriptFinished,
    Session,
    TurnDelta,
    TurnFailed,
    TurnFinished,
    resolve_settings,
)
from sieve.store.record import turns as record

FAST_RETRY = RetryPolicy(attempts=4, base=0.01, cap=0.05)
KEYKEEPER = scenarios.load("keykeeper")


def start(db, server, model, scenario=KEYKEEPER, events=None, endpoint=None, **settings):
    gateway = Gateway(endpoint or Endpoint(server.base_url, name="fake"))
    return Session.start(
        db,
        scenario,
        gateway,
        resolve_settings(model, scenario, settings),
        retry=FAST_RETRY,
        on_event=events.append if events is not None else None,
    )


def requests_for(server, model):
    return [r for r in server.requests if r["model"] == model]


async def test_a_whole_script_is_played_and_stored_word_for_word(db, fake_server):
    session = start(db, fake_server, "whole;tokens=12")
    assert await session.play() == "complete"
    turns = record.chosen_turns(db, session.run_id)
    assert len(turns) == 28
    assert [t["role"] for t in turns] == ["user", "assistant"] * 14
    assert [t["text"] for t in turns if t["role"] == "user"] == [s.text for s in KEYKEEPER.steps]
    assert [t["step_id"] for t in turns if t["role"] == "user"] == [s.id for s in KEYKEEPER.steps]
    assert turns[0]["origin"] == "setup" and turns[2]["origin"] == "script"
    assert all(t["status"] == "complete" for t in turns)
    assert turns[1]["provider"] == "FakeProvider" and turns[1]["completion_tokens"] == 12 and turns[1]["cost"] > 0
    run = record.get_run(db, session.run_id)
    assert run["status"] == "complete" and run["ended"] and run["endpoint"] == "fake"
    assert run["settings"]["temperature"] == 1.0 and run["settings"]["max_tokens"] == 24000
    assert run["settings"]["reasoning_effort"] == "low" and run["settings"]["endpoint_url"] == fake_server.base_url
    assert run["cost"] == pytest.approx(sum(t["cost"] for t in turns if t["cost"]))
    # The conversation sent for the last reply is the whole record so far.
    last = requests_for(fake_server, "whole;tokens=12")[-1]["body"]["messages"]
    assert [m["content"] for m in last] == [t["text"] for t in turns[:-1]]
    with pytest.raises(ScriptFinished):
        await session.send_next()


async def test_events_come_in_order(db, fake_server):
    events = []
    session = start(db, fake_server, "events;tokens=5;delay=0.01", events=events)
    await session.send_next()
    kinds = [type(e).__name__ for e in events]
    # Tokens 10 ms apart: a delta for each read from the network (a busy machine may read two at once).
    deltas = len(kinds) - 3
    assert kinds == ["TurnStarted", "TurnStarted"] + ["TurnDelta"] * deltas + ["TurnFinished"] and 2 <= deltas <= 5
    assert events[0].role == "user" and events[0].step_id == "m0" and events[1].role == "assistant"
    assert "".join(e.text for e in events if isinstance(e, TurnDelta)) == events[-1].result.text


async def test_filtered_and_empty_replies_are_recorded_and_the_script_goes_on(db, fake_server):
    session = start(db, fake_server, "filtered;empty=1")
    assert await session.play() == "complete"
    replies = [t for t in record.chosen_turns(db, session.run_id) if t["role"] == "assistant"]
    assert len(replies) == 14 and {t["status"] for t in replies} == {"filtered"}
    assert "empty reply" in replies[0]["error"]


async def test_a_moderation_refusal_is_filtered_and_the_script_goes_on(db, fake_server):
    session = start(db, fake_server, "moderated;status=403;body=moderation")
    assert await session.play() == "complete"
    replies = [t for t in record.chosen_turns(db, session.run_id) if t["role"] == "assistant"]
    assert {t["status"] for t in replies} == {"filtered"} and "403" in replies[0]["error"]
    assert len(requests_for(fake_server, "moderated;status=403;body=moderation")) == 14  # never retried


async def test_content_filter_and_ceiling_are_recorded_as_what_they_are(db, fake_server):
    session = start(db, fake_server, "cf2;tokens=3;finish=content_filter")
    await session.send_next()
    session2 = start(db, fake_server, "len2;tokens=3;finish=length")
    await session2.send_next()
    assert record.chosen_turns(db, session.run_id)[1]["status"] == "filtered"
    assert record.chosen_turns(db, session2.run_id)[1]["status"] == "length"


@pytest.mark.parametrize(
    "fault", ["status=429;retry_after=0.01", "status=503", "status=502", "status=408", "drop=1;after=0"]
)
async def test_errors_before_the_first_token_are_retried(db, fake_server, fault):
    model = f"retry;{fault};tokens=6;times=2"
    events = []
    session = start(db, fake_server, model, events=events)
    result = await session.send_next()
    assert result.status == "complete"
    reply = record.chosen_turns(db, session.run_id)[1]
    assert (reply["status"], reply["attempts"], reply["error"]) == ("complete", 3, None)
    assert len(requests_for(fake_server, model)) == 3
    retries = [e for e in events if isinstance(e, TurnFailed)]
    assert [e.will_retry for e in retries] == [True, True]


async def test_retry_after_is_honoured(db, fake_server):
    model = "honour;tokens=3;status=429;retry_after=0.4;times=1"
    session = start(db, fake_server, model)
    session.retry = RetryPolicy(attempts=2, base=0.01, cap=5)
    began = time.monotonic()
    await session.send_next()
    seen = [r["at"] for r in requests_for(fake_server, model)]
    assert len(seen) == 2 and seen[1] - seen[0] >= 0.35
    assert time.monotonic() - began >= 0.35


async def test_retries_give_up_and_the_run_fails(db, fake_server):
    model = "always500;status=500"
    session = start(db, fake_server, model)
    assert await session.play() == "failed"
    turns = record.chosen_turns(db, session.run_id)
    assert len(turns) == 2 and turns[1]["status"] == "failed" and turns[1]["attempts"] == FAST_RETRY.attempts
    assert f"POST {fake_server.base_url}/chat/completions: 500 Internal Server Error" in turns[1]["error"]
    run = record.get_run(db, session.run_id)
    assert run["status"] == "failed" and "500" in run["error"]


@pytest.mark.parametrize("status", [401, 402])
async def test_refused_requests_are_not_retried(db, fake_server, status):
    model = f"refused{status};status={status}"
    session = start(db, fake_server, model)
    assert await session.play() == "failed"
    assert len(requests_for(fake_server, model)) == 1
    assert record.chosen_turns(db, session.run_id)[1]["error"].startswith(
        f"POST {fake_server.base_url}/chat/completions: {status}"
    )


async def test_a_reply_that_streamed_text_is_never_silently_retried(db, fake_server):
    model = "dropmid;tokens=40;drop=1;after=15"
    session = start(db, fake_server, model)
    result = await session.send_next()
    assert result.status == "failed"
    reply = record.chosen_turns(db, session.run_id)[1]
    assert reply["status"] == "failed" and reply["attempts"] == 1
    assert reply["text"] == result.text and len(reply["text"]) > 0
    assert "the connection dropped after" in reply["error"]
    assert len(requests_for(fake_server, model)) == 1


@pytest.mark.slow
async def test_an_error_inside_the_stream_and_a_stall_are_failures_with_their_text(db, fake_server):
    s1 = start(db, fake_server, "se2;tokens=30;stream_error=1;after=5")
    await s1.send_next()
    t1 = record.chosen_turns(db, s1.run_id)[1]
    assert t1["status"] == "failed" and "200 with an error in the stream" in t1["error"] and t1["text"]
    s2 = start(db, fake_server, "stall2;tokens=30;stall=5;after=5", read_timeout=0.4)
    await s2.send_next()
    t2 = record.chosen_turns(db, s2.run_id)[1]
    assert t2["status"] == "failed" and "stopped sending" in t2["error"] and t2["text"].startswith("Reply 1")


@pytest.mark.slow
async def test_the_overall_limit_fails_the_reply(db, fake_server):
    session = start(db, fake_server, "slowdrip;tokens=100;delay=0.05", timeout=0.6)
    await session.send_next()
    reply = record.chosen_turns(db, session.run_id)[1]
    assert reply["status"] == "failed" and "no complete reply within 0.6 s" in reply["error"]


async def test_a_server_that_is_not_there_is_retried_then_failed(db, fake_server):
    session = start(db, fake_server, "m", endpoint=Endpoint("http://127.0.0.1:9/v1"))
    assert await session.play() == "failed"
    reply = record.chosen_turns(db, session.run_id)[1]
    assert reply["attempts"] == FAST_RETRY.attempts and "cannot connect" in reply["error"]


async def test_a_live_message_leaves_the_script_and_the_script_resumes_after_it(db, fake_server):
    session = start(db, fake_server, "live;tokens=4")
    await session.send_next()
    await session.send_next()
    await session.send_live("Havel, what is your first name?")
    await session.send_next()
    turns = record.chosen_turns(db, session.run_id)
    users = [t for t in turns if t["role"] == "user"]
    assert [(t["origin"], t["step_id"]) for t in users] == [
        ("setup", "m0"),
        ("script", "m1"),
        ("live", None),
        ("script", "m2"),
    ]
    assert users[2]["text"] == "Havel, what is your first name?"
    assert record.get_run(db, session.run_id)["left_script_at"] == 2
    assert session.next_entry()[0].id == "m3"


async def test_regenerate_keeps_every_alternative_and_marks_one_chosen(db, fake_server):
    session = start(db, fake_server, "regen;tokens=4")
    first = await session.send_next()
    second = await session.regenerate()
    third = await session.regenerate()
    alts = record.alternatives(db, session.run_id, 1)
    assert [a["alt"] for a in alts] == [0, 1, 2]
    assert [a["chosen"] for a in alts] == [0, 0, 1]
    assert [a["text"] for a in alts] == [first.text, second.text, third.text]
    record.choose(db, session.run_id, 1, 0)
    assert record.chosen_turns(db, session.run_id)[1]["text"] == first.text
    await session.send_next()
    # The conversation sent next carries the chosen alternative.
    sent = requests_for(fake_server, "regen;tokens=4")[-1]["body"]["messages"]
    assert sent[1]["content"] == first.text


async def test_a_branch_shares_the_turns_up_to_a_chosen_turn_and_goes_on(db, fake_server):
    session = start(db, fake_server, "branch;tokens=4")
    for _ in range(3):
        await session.send_next()
    before = [t["text"] for t in record.chosen_turns(db, session.run_id)]
    branch = session.branch(3)  # up to the reply to message 1
    await branch.send_live("I ask Havel about the ferryman instead.")
    parent_turns = [t["text"] for t in record.chosen_turns(db, session.run_id)]
    branch_turns = record.chosen_turns(db, branch.run_id)
    assert parent_turns == before
    assert [t["text"] for t in branch_turns[:4]] == before[:4]
    assert branch_turns[4]["origin"] == "live" and len(branch_turns) == 6
    run = record.get_run(db, branch.run_id)
    assert (run["parent_run"], run["parent_turn"], run["scenario_sha256"]) == (session.run_id, 3, KEYKEEPER.sha256)
    assert branch.next_entry()[0].id == "m2"


@pytest.mark.slow
async def test_a_streaming_reply_is_on_disk_at_most_a_second_behind(db, fake_server, tmp_path):
    streamed: list[tuple[float, int]] = []
    session = start(db, fake_server, "disk;tokens=60;delay=0.04", events=None)
    length = 0

    def on_event(event):
        nonlocal length
        if isinstance(event, TurnDelta):
            length += len(event.text)
            streamed.append((time.monotonic(), length))

    session.on_event = on_event
    task = asyncio.create_task(session.send_next())
    observer = sqlite3.connect(tmp_path / "sieve.db")
    checks = 0
    while not task.done():
        await asyncio.sleep(0.1)
        now = time.monotonic()
        row = observer.execute("SELECT length(text), status FROM turns WHERE role = 'assistant'").fetchone()
        if row and row[1] == "streaming":
            on_disk = row[0]
            owed = max((n for t, n in streamed if t <= now - 1.0), default=0)
            assert on_disk >= owed, (on_disk, owed)
            checks += 1
    await task
    assert checks >= 10
    assert observer.execute("SELECT status FROM turns WHERE role = 'assistant'").fetchone()[0] == "complete"


async def test_cancelling_keeps_the_partial_text_marked_cancelled(db, fake_server):
    events = []
    session = start(db, fake_server, "cancel;tokens=200;delay=0.02", events=events)
    task = asyncio.create_task(session.send_next())
    while sum(isinstance(e, TurnDelta) for e in events) < 10:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    reply = record.chosen_turns(db, session.run_id)[1]
    seen = "".join(e.text for e in events if isinstance(e, TurnDelta))
    assert reply["status"] == "cancelled" and reply["text"] == seen and len(seen) > 0
    assert isinstance(events[-1], TurnFinished) and events[-1].status == "cancelled"


async def test_resume_continues_an_unfinished_run_from_its_last_complete_turn(db, fake_server):
    model = "resume;tokens=4;drop=1;after=2;times=1;only_at=1"
    session = start(db, fake_server, model)
    assert await session.play() == "failed"  # the first reply drops mid-stream
    failed = record.chosen_turns(db, session.run_id)
    assert failed[1]["status"] == "failed"
    reopened = Session.open(db, session.run_id, Gateway(Endpoint(fake_server.base_url, name="fake")), retry=FAST_RETRY)
    assert reopened.scenario.sha256 == KEYKEEPER.sha256 and reopened.settings.model == model
    assert await reopened.play() == "complete"
    turns = record.chosen_turns(db, session.run_id)
    assert len(turns) == 28 and all(t["status"] == "complete" for t in turns)
    alts = record.alternatives(db, session.run_id, 1)
    assert [(a["status"], a["chosen"]) for a in alts] == [("failed", 0), ("complete", 1)]


async def test_recover_marks_a_dead_process_runs_interrupted_and_keeps_the_partial_text(db, fake_server):
    session = start(db, fake_server, "rec;tokens=4")
    await session.send_next()
    turn_id = record.add_turn(
        db, session.run_id, idx=2, role="user", origin="script", text="x", step_id="m1", step_repeat=1
    )
    reply_id = record.add_turn(db, session.run_id, idx=3, role="assistant", origin="reply", status="streaming")
    record.save_partial(db, reply_id, "Havel turns the key and")
    # A process that has exited: its pid is free.
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    with db.atomic():
        db.execute("UPDATE runs SET owner = ? WHERE id = ?", [f"{os.uname().nodename}:{dead}", session.run_id])
    live = start(db, fake_server, "alive;tokens=4")  # owned by this process: left alone
    assert record.recover(db) == [session.run_id]
    reply = db["turns"].get(reply_id)
    assert reply["status"] == "interrupted" and reply["text"] == "Havel turns the key and"
    assert record.get_run(db, session.run_id)["status"] == "interrupted"
    assert record.get_run(db, live.run_id)["status"] == "running"
    assert db["turns"].get(turn_id)["status"] == "complete"


async def test_token_counts_come_from_the_tokenizer_or_the_deltas_when_the_server_sends_no_usage(db, fake_server):
    tokenizing = Endpoint(
        fake_server.base_url, name="fake", tokenize_url=fake_server.base_url.replace("/v1", "/extras/tokenize/count")
    )
    s1 = start(db, fake_server, "tok;tokens=9;usage=0", endpoint=tokenizing)
    await s1.send_next()
    r1 = record.chosen_turns(db, s1.run_id)[1]
    assert (r1["token_source"], r1["completion_tokens"]) == ("tokenize", len(r1["text"].split()))
    assert r1["prompt_tokens"] == len(KEYKEEPER.steps[0].text.split())
    s2 = start(db, fake_server, "tok2;tokens=9;usage=0")
    await s2.send_next()
    r2 = record.chosen_turns(db, s2.run_id)[1]
    assert (r2["token_source"], r2["completion_tokens"]) == ("deltas", 9)
    assert record.get_run(db, s1.run_id)["settings"]["token_counting"] == "usage, else tokenize"


async def test_a_scenario_with_a_system_prompt_sends_it_first(db, fake_server):
    text = KEYKEEPER.source.replace("version = 1\n", 'version = 1\nsystem = "You are a narrator."\n', 1)
    scenario = scenarios.load_text(text, "with-system.toml")
    session = start(db, fake_server, "sys;tokens=3", scenario=scenario)
    await session.send_next()
    turns = record.chosen_turns(db, session.run_id)
    assert [(t["idx"], t["role"]) for t in turns] == [(0, "system"), (1, "user"), (2, "assistant")]
    sent = requests_for(fake_server, "sys;tokens=3")[-1]["body"]["messages"]
    assert sent[0] == {"role": "system", "content": "You are a narrator."}
    assert record.get_run(db, session.run_id)["settings"]["system_prompt"] is True


async def test_filler_steps_are_sent_as_often_as_they_repeat(db, fake_server):
    story = scenarios.load("story-12")
    session = start(db, fake_server, "story;tokens=3", scenario=story)
    assert await session.play() == "complete"
    users = [t for t in record.chosen_turns(db, session.run_id) if t["role"] == "user"]
    assert len(users) == len(story.script())
    fillers = [(t["step_id"], t["step_repeat"], t["origin"]) for t in users if t["step_id"] == "c2-filler"]
    assert fillers == [("c2-filler", 1, "filler"), ("c2-filler", 2, "filler")]


async def test_an_error_in_the_choice_and_crlf_streams_are_recorded_as_they_are(db, fake_server):
    s1 = start(db, fake_server, "ce3;tokens=30;choice_error=1;after=4")
    await s1.send_next()
    reply = record.chosen_turns(db, s1.run_id)[1]
    assert (
        reply["status"] == "failed" and "upstream overloaded" in reply["error"] and reply["text"].startswith("Reply 1")
    )
    s2 = start(db, fake_server, "crlf3;tokens=7;crlf=1")
    await s2.send_next()
    reply = record.chosen_turns(db, s2.run_id)[1]
    assert (reply["status"], reply["completion_tokens"], reply["finish_reason"]) == ("complete", 7, "stop")
    assert reply["text"].startswith("Reply 1 from crlf3:") and reply["provider"] == "FakeProvider"
