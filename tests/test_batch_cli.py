"""`sieve run` as a person runs it: several models at once, plans, resume, exit status, a kill mid-reply."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from sieve import scenarios, store
from sieve.store.record import turns as record
from tests.support.fakeserver import Behaviour, reply_tokens

# Every test here starts sieve in processes of its own, as a person runs it.
pytestmark = pytest.mark.slow


def sieve(*args, timeout=120, env=None):
    return subprocess.run(
        [sys.executable, "-m", "sieve", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_three_models_concurrently_complete_with_a_summary(fake_server, tmp_path):
    db_path = tmp_path / "batch.db"
    proc = sieve(
        "run",
        "keykeeper",
        "-m",
        "a",
        "-m",
        "b",
        "-m",
        "c",
        "--concurrency",
        "3",
        "--endpoint",
        fake_server.base_url,
        "--db",
        str(db_path),
    )
    assert proc.returncode == 0, proc.stderr
    header = proc.stdout.splitlines()[0]
    assert header.split() == ["run", "model", "status", "replies", "tokens", "cost", "filtered", "ceiling", "hits"]
    assert sum(" complete " in line for line in proc.stdout.splitlines()) == 3
    db = store.open_db(db_path)
    runs = store.list_runs(db)
    assert sorted(r["model"] for r in runs) == ["a", "b", "c"]
    for run in runs:
        assert run["status"] == "complete"
        turns = record.chosen_turns(db, run["id"])
        assert [t["role"] for t in turns].count("user") == 14 and [t["role"] for t in turns].count("assistant") == 14
        assert all(t["status"] == "complete" for t in turns)
    # They really ran at once: their requests interleave at the server.
    order = [r["model"] for r in fake_server.requests if r["model"] in ("a", "b", "c")]
    assert order[:3] != ["a"] * 3 and len(set(order[:6])) > 1


def test_a_failed_run_gives_exit_status_1_and_filtered_turns_do_not(fake_server, tmp_path):
    db_path = tmp_path / "mixed.db"
    proc = sieve(
        "run",
        "train",
        "-m",
        "ok",
        "-m",
        "filt;empty=1",
        "--endpoint",
        fake_server.base_url,
        "--db",
        str(db_path),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    rows = {r["model"]: r for r in json.loads(proc.stdout)}
    assert rows["filt;empty=1"]["filtered"] == 11 and rows["filt;empty=1"]["status"] == "complete"
    proc = sieve(
        "run",
        "train",
        "-m",
        "ok2",
        "-m",
        "bad;status=401",
        "--endpoint",
        fake_server.base_url,
        "--db",
        str(db_path),
        "--json",
    )
    assert proc.returncode == 1
    rows = {r["model"]: r for r in json.loads(proc.stdout)}
    assert rows["bad;status=401"]["status"] == "failed" and "401 Unauthorized" in rows["bad;status=401"]["error"]
    assert rows["ok2"]["status"] == "complete"


def test_repeats_and_ceiling_hits_are_counted(fake_server, tmp_path):
    proc = sieve(
        "run",
        "train",
        "-m",
        "cap;tokens=5;finish=length",
        "--repeat",
        "2",
        "--endpoint",
        fake_server.base_url,
        "--db",
        str(tmp_path / "r.db"),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["repeat"] for r in rows] == [0, 1] and all(r["ceiling"] == 11 for r in rows)


def test_a_plan_gives_each_model_its_own_settings(fake_server, tmp_path):
    plan = tmp_path / "field.toml"
    plan.write_text(
        f"""
scenario = "train"
endpoint = "{fake_server.base_url}"
concurrency = 2

[settings]
max_tokens = 24000
reasoning_effort = "low"

[[models]]
model = "plan-her;tokens=3"
max_tokens = 2048

[[models]]
model = "plan-command;tokens=3"
max_tokens = 8192
temperature = 0.5
repeat = 2
""",
        encoding="utf-8",
    )
    db_path = tmp_path / "plan.db"
    proc = sieve("run", "--plan", str(plan), "--db", str(db_path))
    assert proc.returncode == 0, proc.stderr
    db = store.open_db(db_path)
    settings = {(r["model"], r["id"]): record.get_run(db, r["id"])["settings"] for r in store.list_runs(db)}
    her = [s for (m, _), s in settings.items() if m == "plan-her;tokens=3"]
    command = [s for (m, _), s in settings.items() if m == "plan-command;tokens=3"]
    assert len(her) == 1 and len(command) == 2
    assert her[0]["max_tokens"] == 2048 and her[0]["temperature"] == 1.0
    assert command[0]["max_tokens"] == 8192 and command[0]["temperature"] == 0.5
    sent = [r["body"] for r in fake_server.requests if r["model"] == "plan-her;tokens=3"]
    assert {b["max_tokens"] for b in sent} == {2048} and {json.dumps(b["reasoning"]) for b in sent} == {
        '{"effort": "low"}'
    }


def test_a_bad_plan_names_its_line_and_exits_2(tmp_path):
    plan = tmp_path / "bad.toml"
    plan.write_text('scenario = "train"\n\n[[models]]\nmodel = "x"\nmax_tokns = 5\n', encoding="utf-8")
    proc = sieve("run", "--plan", str(plan), "--db", str(tmp_path / "x.db"))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{plan}:5:1: models[0].max_tokns: unknown key 'max_tokns'")


def test_an_unknown_endpoint_name_and_scenario_exit_2(tmp_path):
    proc = sieve("run", "keykeeper", "-m", "x", "--endpoint", "nowhere", "--db", str(tmp_path / "x.db"))
    assert proc.returncode == 2 and "no endpoint named 'nowhere'" in proc.stderr and "openrouter" in proc.stderr
    proc = sieve("run", "keykeepr", "-m", "x", "--endpoint", "http://127.0.0.1:9/v1", "--db", str(tmp_path / "x.db"))
    assert proc.returncode == 2 and "no such scenario" in proc.stderr


def test_export_writes_the_run_with_all_its_turns_and_fields(fake_server, tmp_path):
    db_path = tmp_path / "e.db"
    assert (
        sieve("run", "train", "-m", "exp;tokens=4", "--endpoint", fake_server.base_url, "--db", str(db_path)).returncode
        == 0
    )
    db = store.open_db(db_path)
    (run,) = store.list_runs(db)
    proc = sieve("export", run["id"], "--format", "json", "--db", str(db_path))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["format"] == "sieve-bundle" and [r["id"] for r in data["runs"]] == [run["id"]]
    assert len(data["turns"]) == 22
    reply = data["turns"][1]
    for field in (
        "status",
        "finish_reason",
        "native_finish_reason",
        "provider",
        "prompt_tokens",
        "completion_tokens",
        "cost",
        "ttft",
        "duration",
        "text",
    ):
        assert field in reply
    assert reply["provider"] == "FakeProvider" and data["scenarios"][0]["toml"] == scenarios.load("train").source
    assert sieve("export", "NOPE", "--db", str(db_path)).returncode == 2


def _expected_reply(model: str, n_user: int) -> str:
    return "".join(reply_tokens(Behaviour.parse(model), n_user))


def test_a_batch_killed_mid_reply_loses_nothing_completed_and_resumes(fake_server, tmp_path):
    db_path = tmp_path / "killed.db"
    # Replies 1-3 come at once; the 4th (a conversation of 7 messages) drips, once.
    model = "kill;tokens=400;drip_at=7;drip=0.02;only_at=7;times=1"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sieve",
            "run",
            "keykeeper",
            "-m",
            model,
            "--endpoint",
            fake_server.base_url,
            "--db",
            str(db_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    observer = None
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            time.sleep(0.1)
            if not db_path.exists():
                continue
            observer = observer or sqlite3.connect(db_path)
            try:
                row = observer.execute(
                    "SELECT length(text) FROM turns WHERE role = 'assistant' AND status = 'streaming'"
                ).fetchone()
            except sqlite3.OperationalError:
                continue  # the schema is still being created
            if row and row[0] > 200:
                break
        else:
            pytest.fail("the run never reached a long streaming reply")
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    observer.close()

    db = store.open_db(db_path)  # the next open marks the orphaned reply interrupted
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    (run,) = store.list_runs(db)
    assert run["status"] == "interrupted"
    turns = record.chosen_turns(db, run["id"])
    replies = [t for t in turns if t["role"] == "assistant"]
    assert [t["status"] for t in replies] == ["complete", "complete", "complete", "interrupted"]
    for n, reply in enumerate(replies[:3], start=1):
        assert reply["text"] == _expected_reply(model, n)
    partial = replies[3]["text"]
    assert len(partial) >= 200 and _expected_reply(model, 4).startswith(partial)
    assert [t["text"] for t in turns if t["role"] == "user"] == [s.text for s in scenarios.load("keykeeper").steps[:4]]

    # The same run, resumed: the script goes on from the last complete turn.
    resumed = sieve("run", "--resume", run["id"], "--endpoint", fake_server.base_url, "--db", str(db_path), timeout=300)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    turns = record.chosen_turns(db, run["id"])
    assert len(turns) == 28 and record.get_run(db, run["id"])["status"] == "complete"
    alts = record.alternatives(db, run["id"], 7)
    assert [(a["status"], a["chosen"]) for a in alts] == [("interrupted", 0), ("complete", 1)]
    assert alts[0]["text"] == partial
