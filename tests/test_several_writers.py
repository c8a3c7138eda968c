"""Several writers on one database file: two judges, a batch and card imports at once, every card whole.

Each writer is a real `sieve` process against the real test server; the file is a real
SQLite database in WAL mode. A judging's annotations and its status are written in one
transaction that waits its turn, so a busy database delays a card and never cuts it.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from rich.console import Console

from sieve import scenarios, store
from sieve.engine.batch import RunSpec, run_batch
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.judge import client as client
from sieve.engine.judge import runs as judging
from sieve.engine.session import resolve_settings
from sieve.store.record import annotations as notes
from sieve.store.record import judgings
from tests.support import fakejudge
from tests.support.tui_helpers import FAST_RETRY

KEYKEEPER = scenarios.load("keykeeper")
MODEL = "vendor/steady;tokens=40"  # every run of it says the same: their cards must be the same size
JUDGE_A = "judge;reply=judge;quotes=exact"
JUDGE_B = "judge;reply=judge;quotes=exact;provider=Other"
BATCH = "vendor/batch;tokens=300;delay=0.002"  # a reply written to the file every half second while it streams


@pytest.fixture(scope="module", autouse=True)
def judge_on_the_server():
    fakejudge.install()


def sieve(*args: object, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sieve", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


async def play(db, server, count: int) -> list[str]:
    gateway = Gateway(Endpoint(server.base_url, name="fake"))
    specs = [RunSpec(resolve_settings(MODEL, KEYKEEPER, {"max_tokens": 200}), gateway) for _ in range(count)]
    rows = await run_batch(db, KEYKEEPER, specs, concurrency=8, retry=FAST_RETRY, console=Console(file=io.StringIO()))
    await gateway.aclose()
    return [r["run"] for r in rows]


async def judge_alone(db, server, run_id: str, model: str) -> None:
    gateway = Gateway(Endpoint(server.base_url, name="fake"))
    judge = client.Judge(gateway, client.judge_settings(model, False, {}), judgings.judge_name(model), 128_000)
    await judging.judge_runs(db, [(judge, run_id)], judging.Options(), console=Console(file=io.StringIO()))
    await gateway.aclose()


def live(path, run_id: str, reviewer: str) -> list[tuple]:
    """What a reviewer's card on a run holds, as comparable values (no ids, no times)."""
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT item, kind, score, value, quote, verification FROM annotations "
        "WHERE run_id = ? AND reviewer = ? AND removed IS NULL ORDER BY item, kind, quote",
        [run_id, reviewer],
    ).fetchall()
    conn.close()
    return rows


@pytest.mark.slow
async def test_two_judges_a_batch_and_card_imports_at_once_keep_every_card_whole(tmp_path, fake_server):
    path = tmp_path / "shared.db"
    db = store.open_db(path)
    reference, *runs = await play(db, fake_server, 9)
    # What a whole card is: each judge's card of a run judged with nobody else writing.
    await judge_alone(db, fake_server, reference, JUDGE_A)
    await judge_alone(db, fake_server, reference, JUDGE_B)
    whole_a = live(path, reference, judgings.judge_name(JUDGE_A))
    whole_b = live(path, reference, judgings.judge_name(JUDGE_B))
    assert len(whole_a) > 30 and len(whole_b) == len(whole_a)
    card = tmp_path / "card.json"
    reply = db.execute("SELECT text FROM turns WHERE run_id = ? AND role = 'assistant' LIMIT 1", [runs[0]]).fetchone()
    quote = " ".join(reply[0].split()[:8])
    card.write_text(json.dumps([{"id": f"T{i}", "score": i % 3, "quote": quote} for i in range(1, 13)]))
    db.conn.close()

    url = fake_server.base_url
    writers = [
        sieve("judge", *runs, "-m", JUDGE_A, "--endpoint", url, "--db", path, "--concurrency", 4),
        sieve("judge", *runs, "-m", JUDGE_B, "--endpoint", url, "--db", path, "--concurrency", 4),
        sieve("run", "keykeeper", "-m", BATCH, "--repeat", 3, "--endpoint", url, "--db", path, "--max-tokens", 400),
    ]
    imported: list[subprocess.CompletedProcess[str]] = []

    def import_cards() -> None:
        for run_id in runs:
            done = sieve("verify", card, "--run", run_id, "--import", "--reviewer", "cards", "--db", path)
            out, err = done.communicate(timeout=120)
            imported.append(subprocess.CompletedProcess(done.args, done.returncode, out, err))

    importer = threading.Thread(target=import_cards)
    importer.start()
    outputs = [w.communicate(timeout=300) for w in writers]
    importer.join(300)
    for writer, (out, err) in zip(writers, outputs):
        assert writer.returncode == 0, (writer.args[3:5], out[-4000:], err[-2000:])
    assert len(imported) == len(runs)
    for done in imported:
        assert done.returncode == 0, (done.stdout[-1000:], done.stderr[-1000:])

    db = store.open_db(path)
    for run_id in runs:
        # Every judging is complete, and each card holds what the same judge gives the same run alone.
        for model, whole in ((JUDGE_A, whole_a), (JUDGE_B, whole_b)):
            rows = judgings.of_run(db, run_id, judgings.judge_name(model))
            assert [r["status"] for r in rows] == ["complete"], (run_id, model, [r["error"] for r in rows])
            assert live(path, run_id, judgings.judge_name(model)) == whole, (run_id, model)
        # Each imported card holds every item of the card.
        assert sorted(a["item"] for a in notes.active(db, run_id, "cards")) == sorted(f"T{i}" for i in range(1, 13))
    batch = [r for r in store.list_runs(db) if r["model"].startswith("vendor/batch")]
    assert len(batch) == 3 and all(r["status"] == "complete" for r in batch)


def wait_for(condition, timeout: float = 60.0, what: str = "") -> None:
    """Until `condition()` holds (looking every 20 ms), else fail saying what was awaited."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.02)


@pytest.mark.slow
async def test_a_card_the_busy_database_will_not_take_is_failed_saying_why_and_unjudged_judges_it_again(
    tmp_path, fake_server
):
    path = tmp_path / "busy.db"
    db = store.open_db(path)
    run, reference = await play(db, fake_server, 2)
    await judge_alone(db, fake_server, reference, JUDGE_A)
    gate = tmp_path / "gate"
    model = f"{JUDGE_A};gate={gate}"  # the judge answers once the test opens the gate
    judge = sieve(
        "judge",
        run,
        "-m",
        model,
        "--reviewer",
        "judge:busy",
        "--endpoint",
        fake_server.base_url,
        "--db",
        path,
        env={"SIEVE_BUSY_SECONDS": "2"},
    )
    said: list[str] = []
    gave_up = threading.Event()

    def read_stderr() -> None:
        assert judge.stderr is not None
        for line in judge.stderr:
            said.append(line)
            if "the card could not be stored" in line:
                gave_up.set()

    reader = threading.Thread(target=read_stderr)
    reader.start()
    watcher = sqlite3.connect(path, isolation_level=None)
    wait_for(
        lambda: watcher.execute("SELECT COUNT(*) FROM judgings WHERE reviewer = 'judge:busy'").fetchone()[0] == 1,
        what="the judging to start",
    )
    # Another process holds the write lock while the judge answers, and longer than the judge waits.
    watcher.execute("BEGIN IMMEDIATE")
    gate.touch()
    assert gave_up.wait(60), "".join(said)
    watcher.execute("ROLLBACK")
    out, _ = judge.communicate(timeout=120)
    reader.join(10)
    assert judge.returncode == 1, out
    assert "the card could not be stored" in out and "busy" in out
    (row,) = judgings.of_run(db, run, "judge:busy")
    # Failed, saying why; the judge's reply and what it cost are kept; not one annotation of the card.
    assert row["status"] == "failed" and "the card could not be stored" in row["error"] and "busy" in row["error"]
    assert row["reply"] and row["prompt_tokens"] and row["owner"] is None
    assert notes.active(db, run, "judge:busy") == []
    assert run not in judgings.judged_runs(db, "judge:busy")
    # --unjudged takes the run again, and the card is whole.
    again = sieve(
        "judge",
        "--scenario",
        "keykeeper",
        "--unjudged",
        "-m",
        JUDGE_A,
        "--reviewer",
        "judge:busy",
        "--endpoint",
        fake_server.base_url,
        "--db",
        path,
    )
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, (out, err)
    statuses = [r["status"] for r in judgings.of_run(db, run, "judge:busy")]
    assert statuses == ["failed", "complete"]
    assert live(path, run, "judge:busy") == live(path, reference, judgings.judge_name(JUDGE_A))


# -- the one mechanism: a write transaction waits its turn (sieve/store/record/db.py) ------------------------


def a_run(path) -> str:
    db = store.open_db(path)
    run_id = store.create_run(db, KEYKEEPER, model="vendor/m", endpoint="e", settings={})
    db.conn.close()
    return run_id


def test_a_transaction_that_reads_then_writes_is_not_refused_because_another_process_wrote_between(tmp_path):
    path = tmp_path / "sieve.db"
    run_id = a_run(path)
    db = store.open_db(path)
    other = sqlite3.connect(path, isolation_level=None, timeout=10, check_same_thread=False)
    wrote = threading.Event()

    def write_meanwhile() -> None:
        other.execute("INSERT INTO meta (key, value) VALUES ('other', 'x')")
        wrote.set()

    with db.atomic():
        assert db.execute("SELECT COUNT(*) FROM annotations").fetchone()[0] == 0  # it reads first
        thread = threading.Thread(target=write_meanwhile)
        thread.start()
        assert not wrote.wait(0.3)  # the other writer waits for this transaction, not the other way round
        notes.add(db, run_id, reviewer="ada", item="T1", rubric="T", kind="score", score=2)
    thread.join(10)
    assert wrote.is_set()
    assert [a["item"] for a in notes.active(db, run_id)] == ["T1"]
    assert db.execute("SELECT value FROM meta WHERE key = 'other'").fetchone()[0] == "x"


@pytest.mark.slow
def test_a_write_waits_out_a_lock_held_elsewhere_then_gives_up_after_its_patience_writing_nothing(
    tmp_path, monkeypatch
):
    from sieve.store.record.db import DatabaseBusy

    path = tmp_path / "sieve.db"
    run_id = a_run(path)
    monkeypatch.setenv("SIEVE_BUSY_SECONDS", "1")
    db = store.open_db(path)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    threading.Timer(0.5, holder.execute, ["ROLLBACK"]).start()
    started = time.monotonic()
    notes.add(db, run_id, reviewer="ada", item="T1", rubric="T", kind="score", score=2)  # waits its turn
    assert time.monotonic() - started >= 0.4
    holder.execute("BEGIN IMMEDIATE")
    started = time.monotonic()
    with pytest.raises(DatabaseBusy) as caught:
        notes.add(db, run_id, reviewer="ada", item="T2", rubric="T", kind="score", score=1)
    assert 0.9 <= time.monotonic() - started < 10
    assert str(path) in str(caught.value) and "busy for 1 s" in str(caught.value)
    holder.execute("ROLLBACK")
    assert [a["item"] for a in notes.active(db, run_id)] == ["T1"]
    assert not db.conn.in_transaction
