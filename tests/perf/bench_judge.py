"""38 runs judged through `sieve judge` at concurrency 8, against the slowest single judging.

    python -m tests.perf.bench_judge [--quick]

The judge is the test server's (tests/support/fakejudge.py), streaming its card at 50
tokens a second, so a judging's time is set by the server; what sieve adds on
top (one event loop, one database, a bar per judging, the verification of every
quote) shows in the ratios. With 38 judgings and 8 at a time the schedule needs
ceil(38 / 8) = 5 rounds at the least, so the wall time is set against that ideal
(5 x the slowest single); and the same 38 at once (concurrency 38) against the
slowest single itself. Target (issue 12): at most 1.2.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.perf.serve import fake_server_process
from tests.perf.timing import machine_line

RUNS = 38
CONCURRENCY = 8
PACE = "delay=0.02"  # a chunk of about one token every 20 ms: 50 tokens a second
SINGLES = 3
TARGET = 1.2


def sieve(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "sieve", *args], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"sieve {args[0]} failed:\n{proc.stdout}\n{proc.stderr}")
    return elapsed, proc


def main() -> None:
    print(machine_line())  # first: the machine these figures were taken on
    runs = 12 if "--quick" in sys.argv else RUNS
    with tempfile.TemporaryDirectory() as tmp, fake_server_process("tests.support.fakejudge") as url:
        db = str(Path(tmp) / "judge.db")
        models = [arg for i in range(runs) for arg in ("-m", f"model{i:02d};tokens=30")]
        sieve("run", "keykeeper", *models, "--endpoint", url, "--db", db, "--concurrency", str(runs))
        _, listed = sieve("runs", "--db", db, "--json")
        ids = [r["id"] for r in json.loads(listed.stdout)]
        judge = f"judge;reply=judge;quotes=exact;{PACE}"
        common = ["--endpoint", url, "--db", db, "--reviewer"]
        singles = [sieve("judge", ids[i], "-m", judge, *common, f"single{i}")[0] for i in range(SINGLES)]
        slowest = max(singles)
        field, _ = sieve(
            "judge", "--scenario", "keykeeper", "-m", judge, *common, "field", "--concurrency", str(CONCURRENCY)
        )
        at_once, _ = sieve("judge", "--scenario", "keykeeper", "-m", judge, *common, "once", "--concurrency", str(runs))
        rounds = math.ceil(runs / CONCURRENCY)
        print(f"a judge streaming at 50 tokens/s, keykeeper runs of 14 replies, {runs} runs")
        print(f"  single judgings: {', '.join(f'{s:.2f} s' for s in singles)}; slowest {slowest:.2f} s")
        print(f"  {runs} at concurrency {CONCURRENCY}: {field:.2f} s  ({field / slowest:.2f} x the slowest single)")
        ratio = field / (rounds * slowest)
        verdict = "met" if ratio <= TARGET else "NOT met"
        print(f"    against the ideal {rounds} rounds x slowest single = {ratio:.3f}  (target <= {TARGET}: {verdict})")
        ratio = at_once / slowest
        verdict = "met" if ratio <= TARGET else "NOT met"
        print(f"  {runs} at once (concurrency {runs}): {at_once:.2f} s")
        print(f"    wall-time ratio against the slowest single = {ratio:.3f}  (target <= {TARGET}: {verdict})")


if __name__ == "__main__":
    main()
