"""Run a `sieve` command under cProfile timed by CPU time, not wall time, and save the profile.

    python -m tests.perf.profiled OUT.prof run keykeeper --endpoint URL -m MODEL ...

Wall-clock profiles of an event loop put the time spent waiting (in epoll) and the time
other processes took among the functions; CPU time is what the process itself spent.
Read the result with `python -m pstats OUT.prof`, or let `bench_batch --profile` print it.
"""

from __future__ import annotations

import cProfile
import sys
import time


def main() -> None:
    out, *args = sys.argv[1:]
    sys.argv = ["sieve", *args]
    from sieve.cli import main as sieve

    profile = cProfile.Profile(time.process_time)
    try:
        profile.runcall(sieve)
    except SystemExit as exc:
        if exc.code:
            raise
    finally:
        profile.dump_stats(out)


if __name__ == "__main__":
    main()
