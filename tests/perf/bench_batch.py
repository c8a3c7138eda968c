"""38 models at once through `sieve run`, against the slowest single run.

    python -m tests.perf.bench_batch

Every model streams from the test server with a fixed delay per token, so a run's
time is set by the server; what sieve adds on top (one event loop, one database,
38 progress bars) shows as the ratio. Target (issue 3): under 1.15.

The server keeps its connections open between requests, as a hosted API does, so
each run's turns go over one connection. (Against a server that closes every
connection, each turn also opens one: 38 at once at every turn's end, about 1.16.)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.perf.serve import fake_server_process

MODELS = 38
# 100 and 50 tokens a second per stream: a fast and a usual pace of hosted models.
PACES = ("tokens=40;delay=0.01", "tokens=40;delay=0.02")
SINGLES = 3


def timed_run(url: str, models: list[str], db: Path) -> float:
    args = [
        sys.executable,
        "-m",
        "sieve",
        "run",
        "keykeeper",
        "--endpoint",
        url,
        "--db",
        str(db),
        "--concurrency",
        str(len(models)),
    ]
    for model in models:
        args += ["-m", model]
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"sieve run failed:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def measure(url: str, pace: str, tmp: Path, tag: str) -> float:
    """The field's time over the slowest single run's, with both printed."""
    singles = [timed_run(url, [f"single{i};{pace}"], tmp / f"single-{tag}-{i}.db") for i in range(SINGLES)]
    field = timed_run(url, [f"model{i:02d};{pace}" for i in range(MODELS)], tmp / f"field-{tag}.db")
    slowest = max(singles)
    print(f"  single runs (keykeeper, 14 replies): {', '.join(f'{s:.2f} s' for s in singles)}; slowest {slowest:.2f} s")
    print(f"  {MODELS} models at once:                {field:.2f} s")
    return field / slowest


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with fake_server_process(keep_alive=True) as url:
            for n, pace in enumerate(PACES):
                print(f"pace {pace}")
                ratio = measure(url, pace, Path(tmp), f"kept{n}")
                print(
                    f"  wall-time ratio field/slowest single = {ratio:.3f}  (target < 1.15: {'met' if ratio < 1.15 else 'NOT met'})"
                )
        # For comparison, not the target's case: every request on a connection of its own.
        with fake_server_process() as url:
            print(f"pace {PACES[0]}, against a server that closes every connection")
            ratio = measure(url, PACES[0], Path(tmp), "closed")
            print(f"  wall-time ratio field/slowest single = {ratio:.3f}  (for comparison)")


if __name__ == "__main__":
    main()
