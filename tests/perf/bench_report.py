"""The report's speed: a keykeeper field of 38 runs × 14 turns, each run's cards full (a person's and a
judge's, every item, verdict and event on a quote), written as a site.

    python -m tests.perf.bench_report

Target (issue 27): under 3 s for the whole site, the multi-page one and the single file each.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from sieve import store
from sieve.report.site import Options, write
from tests.perf.timing import machine_line
from tests.support.report_field import field

MODELS = {f"maker{m}/model-{m}": 38 // 4 + (1 if m < 38 % 4 else 0) for m in range(4)}  # 38 runs
TARGET = 3.0


def main() -> None:
    print(machine_line())  # first: the machine these figures were taken on
    with tempfile.TemporaryDirectory() as tmp:
        db = store.open_db(Path(tmp) / "bench.db")
        runs = field(db, MODELS, note="a note")
        assert len(runs) == 38
        for name, options in (
            ("pages", Options()),
            ("single file", Options(single_file=True)),
            ("blind", Options(blind=True)),
        ):
            store.open_db(Path(tmp) / "bench.db")  # no warm caches from the last write but the process's own
            start = time.perf_counter()
            done = write(db, "keykeeper", Path(tmp) / name.replace(" ", "-"), options)
            took = time.perf_counter() - start
            size = sum(p.stat().st_size for p in done.files)
            verdict = "ok" if took < TARGET else "OVER THE TARGET"
            print(
                f"{name}: {took:.2f} s for {done.runs} runs, {len(done.files)} files, {size / 1e6:.1f} MB ({verdict}, target {TARGET} s)"
            )


if __name__ == "__main__":
    main()
