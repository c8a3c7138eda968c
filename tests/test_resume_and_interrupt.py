"""Resuming and stopping runs: one process plays a run at a time; Ctrl-C and a full disk lose no step."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from sieve import scenarios, store
from sieve.engine.batch import play_sessions
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.session import RetryPolicy, Session, resolve_settings
from sieve.store.record import turns as record
from sieve.store.record.runs import owner_tag

TRAIN = scenarios.load("train")
FAST_RETRY = RetryPolicy(attempts=2, base=0.01, cap=0.05)


def sieve(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "sieve", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def start(db, server, model: str) -> Session:
    gateway = Gateway(Endpoint(server.base_url, name="fake"))
    return Session.start(db, TRAIN, gateway, resolve_settings(model, TRAIN), retry=FAST_RETRY)


def assert_played_once_each(db, run_id: str) -> None:
    """The conversation alternates player and model, every scripted step once, in order."""
    turns = record.chosen_turns(db, run_id)
    assert [t["role"] for t in turns] == ["user", "assistant"] * len(TRAIN.script())
    assert [t["step_id"] for t in turns if t["role"] == "user"] == [s.id for s, _ in TRAIN.script()]
    assert all(t["status"] == "complete" for t in turns)


def wait_for(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never held")
        time.sleep(0.05)


# -- 4. two --resume at once ---------------------------------------------------------


@pytest.mark.slow
async def test_two_resumes_at_once_one_plays_and_the_other_is_refused(fake_server, tmp_path):
    path = tmp_path / "race.db"
    db = store.open_db(path)
    model = "race;tokens=20;delay=0.03"  # about 5 s of replies left: the two processes surely overlap
    session = start(db, fake_server, model)
    await session.send_next()
    await session.send_next()
    session.close("interrupted")
    procs = [sieve("run", "--resume", session.run_id, "--endpoint", fake_server.base_url, "--db", str(path))]
    procs.append(sieve("run", "--resume", session.run_id[-8:], "--endpoint", fake_server.base_url, "--db", str(path)))
    outcomes = [(p.wait(120), p.stdout.read(), p.stderr.read()) for p in procs]
    assert sorted(code for code, _, _ in outcomes) == [0, 2], outcomes
    refused = next(err for code, _, err in outcomes if code == 2)
    assert f"run {session.run_id} is being played by" in refused and "Traceback" not in refused
    assert record.get_run(db, session.run_id)["status"] == "complete"
    assert_played_once_each(db, session.run_id)
    # No reply was asked for (and paid) twice: one request per conversation length.
    lengths = [len(r["body"]["messages"]) for r in fake_server.requests if r["model"] == model]
    assert sorted(lengths) == sorted(set(lengths))


def test_a_run_played_by_a_live_process_is_refused_and_one_whose_process_died_is_taken(db, fake_server):
    session = start(db, fake_server, "owned")
    host = owner_tag().rpartition(":")[0]
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        db.execute(
            "UPDATE runs SET owner = ?, status = 'running' WHERE id = ?", [f"{host}:{sleeper.pid}", session.run_id]
        )
        db.conn.commit()
        with pytest.raises(record.RunBusy, match=f"being played by {host}:{sleeper.pid}"):
            Session.open(db, session.run_id, session.gateway)
    finally:
        sleeper.kill()
        sleeper.wait()
    # Its process is gone now: the run can be taken over.
    resumed = Session.open(db, session.run_id, session.gateway)
    assert record.get_run(db, resumed.run_id)["owner"] == owner_tag()


# -- 5. Ctrl-C during sieve run, then --resume -----------------------------------------


@pytest.mark.slow
def test_ctrl_c_during_a_run_interrupts_the_reply_and_resume_asks_again(fake_server, tmp_path):
    path = tmp_path / "ctrlc.db"
    # The first reply drips slowly (only the first request for it); everything else is quick.
    model = "ctrlc;tokens=200;drip_at=0;drip=0.05;only_at=1;times=1"
    proc = sieve("run", "train", "-m", model, "--endpoint", fake_server.base_url, "--db", str(path))
    db = store.open_db(path)

    def partial_on_disk() -> bool:
        row = db.execute("SELECT length(text) FROM turns WHERE role = 'assistant' AND status = 'streaming'").fetchone()
        return bool(row and row[0])

    wait_for(partial_on_disk)
    proc.send_signal(signal.SIGINT)
    proc.wait(60)
    (run,) = store.list_runs(db)
    assert run["status"] == "interrupted"
    (cut,) = record.alternatives(db, run["id"], 1)
    assert cut["status"] == "interrupted" and cut["text"] and "reviewer" not in (cut["error"] or "")

    resumed = sieve("run", "--resume", run["id"], "--endpoint", fake_server.base_url, "--db", str(path))
    assert resumed.wait(120) == 0, resumed.stderr.read()
    assert_played_once_each(db, run["id"])
    first, again = record.alternatives(db, run["id"], 1)
    assert (first["status"], first["chosen"], first["text"]) == ("interrupted", 0, cut["text"])  # kept
    assert (again["status"], again["chosen"]) == ("complete", 1)  # asked again, and chosen


# -- 6. a full disk ------------------------------------------------------------------


@pytest.mark.slow
async def test_after_a_full_disk_a_resumed_run_leaves_no_reply_streaming(fake_server, tmp_path):
    db = store.open_db(tmp_path / "full.db")
    session = start(db, fake_server, "full;tokens=3000;drip_at=0;drip=0.0005;only_at=1;times=1")
    session.flush_interval = 0.01
    # A real SQLITE_FULL: the file may grow by two pages, no more.
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages + 2}")
    (row,) = await play_sessions(db, [session], [session.settings.model])
    assert row["status"] == "failed" and "disk is full" in row["error"]

    db.execute("PRAGMA max_page_count = 1073741823")  # room again
    resumed = Session.open(db, session.run_id, session.gateway, retry=FAST_RETRY)
    assert await resumed.play() == "complete"
    assert db.execute("SELECT COUNT(*) FROM turns WHERE status = 'streaming'").fetchone()[0] == 0
    first, again = record.alternatives(db, session.run_id, 1)
    assert first["status"] == "interrupted" and (again["status"], again["chosen"]) == ("complete", 1)
    assert_played_once_each(db, session.run_id)


def test_a_run_let_go_between_turns_stays_idle_and_one_whose_process_vanished_is_interrupted(tmp_path):
    import socket

    from sieve.store.record.runs import activity

    path = tmp_path / "left.db"
    db = store.open_db(path)
    keykeeper = scenarios.load("keykeeper")
    made = {}
    for name in ("released", "killed"):
        run_id = store.create_run(db, keykeeper, model=f"m/{name}", endpoint="e", settings={})
        record.add_turn(db, run_id, idx=0, role="user", origin="script", text="Hello.", step_id="m0", step_repeat=1)
        record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", text="Hello to you.")
        made[name] = run_id
    record.release_runs(db, keep=[made["killed"]])  # the TUI lets go of its runs as it quits
    gone = f"{socket.gethostname()}:{2**22 + 1}"  # a process past any pid this system gives out
    db.execute("UPDATE runs SET owner = ? WHERE id = ?", [gone, made["killed"]])
    db.conn.commit()
    db.conn.close()
    again = store.open_db(path)  # the next open recovers what a process that is gone left
    released, killed = (record.get_run(again, made[n]) for n in ("released", "killed"))
    assert released["status"] == "running" and released["owner"] is None
    assert activity(released["status"], released["owner"], False) == "idle"  # unfinished, for anyone to go on
    assert killed["status"] == "interrupted"
