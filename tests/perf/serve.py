"""Run the test server in its own process, so a benchmark measures the client alone."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def fake_server_process(module: str = "tests.support.fakeserver", *, keep_alive: bool = False) -> Iterator[str]:
    """The server's base URL while it runs; `tests.support.fakejudge` is the same server with the judge installed.

    With `keep_alive`, a connection stays open for the next request, as a hosted API's does.
    """
    args = [sys.executable, "-m", module, *(["--keep-alive"] if keep_alive else [])]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(10)
