"""Every detector over a 120-turn, 100,000-word run, against a plain sentence-by-sentence rapidfuzz search.

    python -m tests.perf.bench_detectors

The run is the keykeeper script (its messages cycled) answered by replies built
from the local model's own sentences (tests/data), about 1,600 words each, drawn
from a small pool so that passages come back reply after reply: the detectors
have looping to find, as they would in a run of a small model.
The baseline, measured in the same run, is what repetition would cost done plainly:
every sentence of each reply looked for in the next with rapidfuzz's partial_ratio.
Target (issue 13): all detectors under 0.5 s. The per-detector lines are one run each on a fresh
run (the first also reads the text, which the others then share).
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

from rapidfuzz import fuzz

from sieve import scenarios
from sieve.store.scoring import detectors
from sieve.store.scoring.detectors import REGISTRY
from sieve.store.scoring.detectors.base import sentences
from tests.perf.timing import machine_line

DATA = Path(__file__).resolve().parent.parent / "data"
TURNS = 120
WORDS = 100_000
TARGET = 0.5
REPEATS = 5


def build() -> list[dict]:
    rng = random.Random(13)
    pool = []
    for name in ("transcripts", "detector_transcripts"):
        for run in json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))["runs"]:
            for turn in run["turns"]:
                if turn["role"] == "assistant":
                    pool += [turn["text"][s:e] for s, e in sentences(turn["text"])]
    script = scenarios.load("keykeeper").script()
    player_words = sum(len(step.text.split()) for step, _ in script) * (TURNS // 2) // len(script)
    per_reply = (WORDS - player_words) // (TURNS // 2)
    turns: list[dict] = []
    recent: list[str] = []
    for k in range(TURNS // 2):
        step, _ = script[k % len(script)]
        turns.append({"id": f"u{k}", "idx": 2 * k, "role": "user", "text": step.text, "status": "complete"})
        reply, count = [], 0
        while count < per_reply:
            # Half the sentences come back from the last replies: the looping a small model does.
            sentence = rng.choice(recent) if recent and rng.random() < 0.5 else rng.choice(pool)
            reply.append(sentence)
            count += len(sentence.split())
        recent = (recent + reply)[-200:]
        text = " ".join(reply)
        turns.append({"id": f"a{k}", "idx": 2 * k + 1, "role": "assistant", "text": text, "status": "complete"})
    return turns


def plain_repetition(turns: list[dict]) -> int:
    """The plain way: each sentence of a reply against the whole next reply."""
    replies = [t["text"] for t in turns if t["role"] == "assistant"]
    found = 0
    for this, following in zip(replies, replies[1:]):
        for s, e in sentences(this):
            if fuzz.partial_ratio(this[s:e], following, score_cutoff=85):
                found += 1
    return found


def main() -> None:
    print(machine_line())  # first: the machine these figures were taken on
    turns = build()
    words = sum(len(t["text"].split()) for t in turns)
    scenario = scenarios.load("keykeeper")
    run = detectors.run_text(turns, scenario)
    params = {u.detector: u.params for u in scenario.detector_uses()}
    timings = {}
    counts = {}
    for name, module in REGISTRY.items():
        start = time.perf_counter()
        counts[name] = len(module.detect(run, detectors.SPECS[name].resolve(params.get(name))))
        timings[name] = time.perf_counter() - start
    # Best of five: the machine is shared, and the best run is what the code costs.
    totals, cpu, baselines = [], [], []
    for _ in range(REPEATS):
        start, start_cpu = time.perf_counter(), time.process_time()
        suggested = detectors.suggest(detectors.run_text(turns, scenario), scenario)
        totals.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        start = time.perf_counter()
        plain = plain_repetition(turns)
        baselines.append(time.perf_counter() - start)
    total, baseline = min(totals), min(baselines)
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    print(f"{len(turns)} turns, {words:,} words; {len(suggested)} suggestions; best of {REPEATS} runs")
    print(f"  (machine load {load:.1f} per core: wall time counts the time other processes took)")
    for name in REGISTRY:
        print(f"  {name:<14} {timings[name]:7.3f} s  {counts[name]:4d} findings")
    print(f"  all detectors, routed as keykeeper says   {total:7.3f} s (slowest run {max(totals):.3f} s)")
    print(f"  the same, CPU time of this process        {min(cpu):7.3f} s")
    print(f"  plain sentence-by-sentence rapidfuzz search for repetition  {baseline:7.3f} s ({plain} sentences)")
    print(f"  all detectors take {total / baseline:.2f} of the plain repetition search alone")
    print(f"  target under {TARGET} s: wall time {_verdict(total)}, CPU time {_verdict(min(cpu))}")


def _verdict(seconds: float) -> str:
    return "met" if seconds < TARGET else "NOT met"


if __name__ == "__main__":
    main()
