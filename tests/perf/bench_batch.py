"""38 models at once through `sieve run`, against the slowest single run; and how much of it is sieve's.

    python -m tests.perf.bench_batch [--fields N] [--quick]
    python -m tests.perf.bench_batch --profile OUT.prof

Every model streams from the test server with a fixed delay per token, so a run's time is
set by the server; what sieve adds on top (one event loop, one database, 38 progress bars)
shows as the wall-time ratio of the field to the slowest single run. Target (issues 3, 28):
at most 1.15 at 100 tokens/s, on an idle machine: a wall time counts whatever else the
machine ran, so the load average is printed beside every figure.

What is sieve's own is its CPU time, which the load moves far less: the `sieve run`
process's user + system time (its rusage), per token and per read. `sieve run` plays in a
pseudo-terminal, so its progress bars are drawn as for a person. A token is one of the 40
each reply streams; a read is one write of the server, which a client that keeps up reads
on its own (one that falls behind reads several at once, so the figure a read is the least
it could be). The budget: the CPU a token of the field's runs beyond the first (the field's
CPU less a single run's, over the field's extra tokens: no start-up in it) times 38 runs
times the pace is at most half a core at 100 tokens/s. The server (tests/support/fakeserver.py,
a process of its own) sends a plain paced reply cheaply, every chunk encoded before the
first goes out and all that is due in one write; its CPU is printed too (its /_stats).

Why keeping connections open came out slower than closing them (issue 28: 1.61 and 1.48
against 1.38 and 1.36), measured with `--profile` before this round's change: with one httpx
client for all 38 runs, a third of the client's CPU (9.2 of 27.3 s under the profiler; 0.8
of 18.7 s against the closing server) went to httpcore's pool housekeeping. On every request
that starts and every response that ends, `AsyncConnectionPool._assign_requests_to_connections`
looks at every connection it keeps: for each idle one it counts the idle ones again (842,000
calls of `is_idle` in one field) and asks the socket whether the server closed it (a poll(2),
and anyio's `extra_attributes`, which calls getpeername). With connections kept, the pool
holds one for each of the 38 runs and the work grows with their square; a closing server
leaves it only those in use. Each stream now has a client of its own (a lane,
sieve/engine/lanes.py). docs/performance.md has the figures before and after.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pstats
import pty
import resource
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.perf.serve import fake_server_process
from tests.perf.timing import load_text, machine_line

MODELS = 38
# 100 and 50 tokens a second per stream: a fast and a usual pace of hosted models.
PACES = {100: "tokens=40;delay=0.01", 50: "tokens=40;delay=0.02"}
SINGLES = 3
FIELDS = 3
TARGET = 1.15
BUDGET = 0.5  # of one core: the most the client's CPU may take for 38 runs at 100 tokens/s


@dataclass(frozen=True)
class Taken:
    """One `sieve run`: its wall time, its CPU time, and what the server did meanwhile."""

    wall: float
    cpu: float
    tokens: int
    server_cpu: float
    writes: int
    load: float


def server_stats(url: str) -> dict[str, float]:
    return httpx.get(url.removesuffix("/v1") + "/_stats").json()


def sieve_run(url: str, models: list[str], db: Path, prefix: tuple[str, ...] = ("-m", "sieve")) -> Taken:
    args = [sys.executable, *prefix, "run", "keykeeper", "--endpoint", url, "--db", str(db)]
    args += ["--concurrency", str(len(models))]
    for model in models:
        args += ["-m", model]
    server = server_stats(url)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the server is not waited for: only this run counts
    start = time.perf_counter()
    returncode, output = in_terminal(args)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    served = server_stats(url)
    if returncode != 0:
        raise SystemExit(f"sieve run failed:\n{output}")
    with sqlite3.connect(db) as conn:
        tokens = conn.execute("SELECT SUM(completion_tokens) FROM runs").fetchone()[0] or 0
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    return Taken(
        wall,
        cpu,
        tokens,
        served["cpu"] - server["cpu"],
        int(served["writes"] - server["writes"]),
        os.getloadavg()[0],
    )


def in_terminal(args: list[str]) -> tuple[int, str]:
    """Run a command in a pseudo-terminal of 120 x 50, as a person runs it: its progress bars drawn, as they
    are for them (into a pipe, rich draws nothing until the end). Returns the exit status and the output."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color"}
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    output = bytearray()

    def drain() -> None:  # a terminal that is not read blocks the program that writes to it
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the program ended
                return
            if not data:
                return
            output.extend(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    returncode = proc.wait()
    reader.join(10)
    os.close(leader)
    return returncode, output.decode("utf-8", "replace")


def spread(values: list[float], fmt: str = "{:.3f}") -> str:
    """The median with the range, as 'median (low-high over n)'."""
    if len(values) == 1:
        return fmt.format(values[0])
    low, high = min(values), max(values)
    return f"{fmt.format(statistics.median(values))} ({fmt.format(low)}-{fmt.format(high)} over {len(values)})"


def measure(url: str, rate: int, tmp: Path, tag: str, fields: int, singles: int) -> None:
    """The field against the slowest single run, with what the client and the server spent."""
    pace = PACES[rate]
    ones = [sieve_run(url, [f"single{i};{pace}"], tmp / f"single-{tag}-{i}.db") for i in range(singles)]
    slowest = max(one.wall for one in ones)
    single_cpu = statistics.median(one.cpu for one in ones)
    single_tokens = ones[0].tokens
    print(
        f"  single runs: {', '.join(f'{one.wall:.2f}' for one in ones)} s wall, slowest {slowest:.2f} s; "
        f"client CPU {spread([one.cpu for one in ones], '{:.2f}')} s; {single_tokens} tokens each"
    )
    ratios, extra, budgets = [], [], []
    for n in range(fields):
        taken = sieve_run(url, [f"model{i:02d};{pace}" for i in range(MODELS)], tmp / f"field-{tag}-{n}.db")
        ratios.append(taken.wall / slowest)
        # The field's runs beyond the first, with nothing of start-up: what a run more costs.
        per_token = (taken.cpu - single_cpu) / max(1, taken.tokens - single_tokens)
        extra.append(per_token * 1e6)
        print(
            f"  field {n + 1}: {taken.wall:.2f} s wall, ratio {taken.wall / slowest:.3f}; "
            f"client CPU {taken.cpu:.2f} s = {taken.cpu / taken.tokens * 1e6:.0f} us a token, "
            f"{taken.cpu / max(1, taken.writes) * 1e6:.0f} us a read ({taken.writes} reads); "
            f"server CPU {taken.server_cpu:.2f} s = {taken.server_cpu / taken.tokens * 1e6:.0f} us a token; "
            f"load {taken.load:.2f}"
        )
        budgets.append(per_token * MODELS * rate)  # CPU seconds a second: the share of a core
    verdict = "met" if statistics.median(ratios) <= TARGET else "NOT met"
    print(
        f"  wall-time ratio field/slowest single: {spread(ratios)}  (target <= {TARGET}: {verdict}, on an idle machine)"
    )
    print(f"  client CPU a token of the field's extra runs: {spread(extra, '{:.0f}')} us")
    fits = "met" if statistics.median(budgets) <= BUDGET else "NOT met"
    print(
        f"  {MODELS} runs x {rate} tokens/s at that cost: {spread(budgets, '{:.2f}')} of a core "
        f"(budget <= {BUDGET} at 100 tokens/s: {fits})"
    )


def profile(url: str, out: Path, tmp: Path) -> None:
    """One field at 100 tokens/s under cProfile (CPU time); prints where the client's CPU went."""
    models = [f"model{i:02d};{PACES[100]}" for i in range(MODELS)]
    taken = sieve_run(url, models, tmp / "profiled.db", prefix=("-m", "tests.perf.profiled", str(out)))
    stats = pstats.Stats(str(out))
    reads = sum(
        calls
        for (path, _, name), (_, calls, *_) in stats.stats.items()  # type: ignore[attr-defined]
        if name == "read" and ("httpcore/_backends" in path or "sieve/engine/network" in path)
    )
    print(
        f"profiled field at 100 tokens/s: {taken.tokens} tokens in {reads} reads of the network "
        f"({taken.tokens / max(1, reads):.1f} a read); {taken.cpu:.2f} s CPU with the profiler"
    )
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(r"sieve/engine|httpcore/_async/connection_pool|sqlite3", 25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fields", type=int, default=FIELDS, help="fields measured per pace (for the spread)")
    parser.add_argument("--quick", action="store_true", help="100 tokens/s only, 2 singles, 1 field a case")
    parser.add_argument("--profile", type=Path, help="profile one field (CPU time) into this file instead")
    args = parser.parse_args()
    print(machine_line())
    fields, singles = (1, 2) if args.quick else (args.fields, SINGLES)
    with tempfile.TemporaryDirectory() as tmp:
        if args.profile:
            with fake_server_process(keep_alive=True) as url:
                profile(url, args.profile, Path(tmp))
            return
        with fake_server_process(keep_alive=True) as url:
            for rate, pace in PACES.items():
                if args.quick and rate != 100:
                    continue
                print(f"{MODELS} runs of keykeeper at {rate} tokens/s ({pace}), the server keeping connections open")
                measure(url, rate, Path(tmp), f"kept{rate}", fields, singles)
        # For comparison, not the target's case: every request on a connection of its own.
        with fake_server_process() as url:
            print(f"{MODELS} runs at 100 tokens/s against a server that closes every connection (for comparison)")
            measure(url, 100, Path(tmp), "closed", fields, singles)
    print(f"at the end: {load_text()}")


if __name__ == "__main__":
    main()
