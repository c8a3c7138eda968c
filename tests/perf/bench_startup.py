"""Start-up, as whole processes: `sieve --help` and `sieve runs` in under 0.25 s, the TUI's first frame in under 1 s.

    python -m tests.perf.bench_startup

Each figure is the median of several fresh processes, printed beside the same for a bare
`python -c pass` (the interpreter's own start, which no change to sieve can remove) and
the ratio between them. The first frame is timed from the process starting to Home's first
paint, headless (Textual's test driver), on a database of 50 runs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.perf.timing import bytecode_ready, machine_line

RUNS = 7

FIRST_FRAME = """
import asyncio, sys, time
start = float(sys.argv[1])
from sieve import store
from sieve.tui.app import SieveApp
from sieve.engine.endpoints import Endpoints

async def main():
    app = SieveApp(store.open_db(sys.argv[2]), Endpoints(), "bench")
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        original = screen._compositor_refresh
        painted = []

        def paint():
            original()
            painted.append(time.time())

        screen._compositor_refresh = paint
        while not painted:
            await pilot.pause(0.005)
        print(painted[0] - start)

asyncio.run(main())
"""


def timed(command: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def first_frame(db: Path) -> float:
    times = []
    for _ in range(RUNS):
        out = subprocess.run(
            [sys.executable, "-c", FIRST_FRAME, repr(time.time()), str(db)], check=True, capture_output=True, text=True
        )
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def report(label: str, value: float, target: float, baseline: float) -> None:
    met = "met" if value < target else "NOT met"
    print(f"  {label:<34} {value:5.2f} s  ({value / baseline:4.1f}x python -c pass)   target < {target:g} s: {met}")


def main() -> None:
    print(machine_line())  # first: the machine these figures were taken on
    print(bytecode_ready())  # as a user's machine has it after the first run
    from sieve import scenarios, store
    from tests.support.field_helpers import played_run

    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "sieve.db"
        db = store.open_db(db_path)
        keykeeper = scenarios.load("keykeeper")
        for n in range(50):
            played_run(db, keykeeper, model=f"vendor/model-{n}")
        db.conn.close()
        bare = timed([sys.executable, "-c", "pass"])
        print(f"start-up (median of {RUNS} processes; python -c pass takes {bare:.3f} s):")
        sieve = [sys.executable, "-m", "sieve"]
        report("sieve --help", timed([*sieve, "--help"]), 0.25, bare)
        report("sieve runs (50 runs)", timed([*sieve, "runs", "--db", str(db_path)]), 0.25, bare)
        report("the TUI's first frame (Home)", first_frame(db_path), 1.0, bare)


if __name__ == "__main__":
    main()
