"""An adaptive pair queue judged round by round: each round's pairs judged (both orders), the ratings refitted,
the next round added (store.scoring.adaptive_queue), until the budget is spent or the ranking stops changing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from sqlite_utils import Database

from sieve.engine.judge.client import Judge
from sieve.engine.judge.pairs import judge_queue
from sieve.engine.judge.runs import Options
from sieve.store.scoring import adaptive_queue
from sieve.tables import counted


async def judge_adaptive(
    db: Database,
    judges: Sequence[Judge],
    queue: str,
    options: Options,
    *,
    concurrency: int = 4,
    console: Console | None = None,
    announce: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Judge the queue's rounds in turn, the judges' own verdicts driving which pairs come next. Returns the summary
    rows ({"cards", "pairs"}), each round's size, and why it stopped."""
    say = announce or (lambda text: None)
    voters = {judge.reviewer for judge in judges}
    cards: list[dict[str, Any]] = []
    pair_rows: list[dict[str, Any]] = []
    rounds: list[dict[str, Any]] = []
    while True:
        result = await judge_queue(
            db, judges, queue, options, concurrency=concurrency, console=console, skip_judged=True
        )
        cards += result["cards"]
        pair_rows += result["pairs"]
        step = adaptive_queue.extend(db, queue, voters)
        if step.waiting:
            stopped = (
                f"round {step.number}: {counted(step.waiting, 'pair')} still without a verdict (their judgings failed); "
                "judge the queue again to retry them and go on"
            )
            break
        if step.reason is not None:
            stopped = step.reason
            break
        rounds.append({"round": step.number, "pairs": len(step.added)})
        say(f"round {step.number}: {counted(len(step.added), 'pair')}, the least certain under the ratings so far")
    return {"cards": cards, "pairs": pair_rows, "rounds": rounds, "stopped": stopped}
