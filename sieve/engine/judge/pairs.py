"""Head to head: a judge compares the two runs of each pair in a queue, blind, twice with the sides swapped.

First each side gets its absolute scores from the same judge (a run judged on
its own merits first, the story benchmark's rule). Then the pair is shown as A
and B, and again with the sides swapped. A criterion answered for the same run
both times stands; any other answer counts as a tie for that pair. A judge that
picked the same position both times has flipped with position: the pair summary
reports how often, and which side it favoured (store.scoring.pair_summary).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from sqlite_utils import Database

from sieve.engine.judge import packet as packets
from sieve.engine.judge import prompt as prompts
from sieve.engine.judge import reply as replies
from sieve.engine.judge.client import Judge, Spent, settings_record
from sieve.engine.judge.reply import Unreadable, Verdicts
from sieve.engine.judge.runs import Options, judge_runs, progress_bars
from sieve.engine.progress import finished
from sieve.errors import NotFound
from sieve.safe_text import one_line
from sieve.store.record import judgings
from sieve.store.record import pairs as pairing
from sieve.store.record.db import DatabaseError
from sieve.store.record.ids import new_id
from sieve.store.scoring import blind as blinding
from sieve.store.scoring.runview import RunView

SWAP = {"A": "B", "B": "A", "tie": "tie"}


def settle(straight: str, turned: str) -> tuple[str, str | None]:
    """One verdict from the two orders, in the queue's terms (`turned` already translated back).

    Both for the same run, or both tie: that stands. Anything else is a tie, with
    what happened: a flip with position when the judge picked the same slot twice.
    """
    if straight == turned:
        return straight, None
    if "tie" in (straight, turned):
        return "tie", f"{straight} as shown, {turned} with the sides swapped: counted as a tie"
    shown = straight  # the same slot both times: the straight answer names it
    return "tie", f"flipped with position (chose {'the first' if shown == 'A' else 'the second'} shown both times)"


class PairJudging:
    """One judge on one pair: both orders, then the verdicts stored as the judge's."""

    def __init__(self, db: Database, judge: Judge, pair: dict[str, Any], options: Options):
        self.db = db
        self.judge = judge
        self.pair = pair
        self.options = options
        self.judging = new_id()
        self.spent = Spent()
        self.errors: list[str] = []

    async def run(self, report: Any = None) -> dict[str, Any]:
        report = report or (lambda **_: None)
        views = [RunView.open(self.db, self.pair["run_a"]), RunView.open(self.db, self.pair["run_b"])]
        scenario = views[0].scenario
        criteria = pairing.criteria(scenario)
        ids = [c for c, _ in criteria]
        orders: list[dict[str, str] | None] = []
        for swapped in (False, True):
            report(status="swapped" if swapped else "as queued")
            orders.append(await self._one_order(views, criteria, ids, swapped))
            report(advance=1)
        stored = 0
        flips = 0
        straight, turned = orders
        if straight is not None and turned is not None:
            settled = [
                (criterion, *settle(straight[criterion], SWAP[turned[criterion]]))
                for criterion in ids
                if criterion in straight and criterion in turned
            ]
            try:
                # Every criterion's verdict in one transaction: a pair is judged whole or not at all, so an
                # adaptive queue (which skips pairs with a verdict) never takes a half-stored pair as judged.
                with self.db.atomic():
                    for criterion, winner, note in settled:
                        pairing.judge(self.db, self.pair, criterion, winner, self.judge.reviewer, note)
            except (DatabaseError, sqlite3.Error) as exc:
                self.errors.append(f"the verdicts could not be stored ({one_line(str(exc))}); none of them was kept")
            else:
                stored = len(settled)
                flips = sum(bool(note and note.startswith("flipped")) for _, _, note in settled)
        status = "complete" if stored == len(ids) else ("failed" if not stored else "partial")
        return {
            "pair": self.pair["position"] + 1,
            "judge": self.judge.reviewer,
            "status": status,
            "criteria": stored,
            "flips": flips,
            "prompt_tokens": self.spent.prompt_tokens,
            "completion_tokens": self.spent.completion_tokens,
            "cost": None if self.spent.cost is None else round(self.spent.cost, 6),
            "error": "; ".join(self.errors) or None,
        }

    def rendered_packets(self) -> list[str]:
        """The two packets (as queued, then swapped) this judging would send, neither sent nor stored (--dry-run)."""
        views = [RunView.open(self.db, self.pair["run_a"]), RunView.open(self.db, self.pair["run_b"])]
        criteria = pairing.criteria(views[0].scenario)
        return [self._packet(views, criteria, swapped) for swapped in (False, True)]

    def _packet(self, views: list[RunView], criteria: list[tuple[str, str]], swapped: bool) -> str:
        first, second = (views[1], views[0]) if swapped else (views[0], views[1])
        mask = _pair_mask(views) if self.options.blind else (lambda text: text)
        scenario = views[0].scenario
        shown = [packets.blocks(v.turns, v.steps, scenario, mask) for v in (first, second)]
        return prompts.render_pair(scenario, criteria, shown[0], shown[1], mask)

    async def _one_order(
        self, views: list[RunView], criteria: list[tuple[str, str]], ids: list[str], swapped: bool
    ) -> dict[str, str] | None:
        """The winners as shown in one order (criterion -> A, B or tie), or None when that order failed."""
        first, second = (views[1], views[0]) if swapped else (views[0], views[1])
        packet = self._packet(views, criteria, swapped)
        schema = prompts.pair_schema(ids)
        row = judgings.start(
            self.db,
            judging=self.judging,
            kind="pair",
            pair_id=self.pair["id"],
            swapped=swapped,
            part=2 if swapped else 1,
            parts=2,
            reviewer=self.judge.reviewer,
            model=self.judge.model,
            endpoint=self.judge.gateway.endpoint.label,
            packet=packet,
            settings=settings_record(self.judge),
            blind=self.options.blind,
            covers={"shown_as_a": first.id, "shown_as_b": second.id, "criteria": ids, "schema": schema},
            conflict=next(
                (m for m in (judgings.shared_maker(self.judge.model, v.run["model"]) for v in views) if m), None
            ),
        )
        spent = Spent()
        need = packets.estimate_tokens(packet)
        if need > self.judge.budget:
            error = f"the two transcripts need about {need} tokens, more than the judge's context allows"
            error += f" ({self.judge.budget} for a packet); give a larger --context"
            self._finish(row, "failed", None, [], {}, error, spent)
            return None
        messages = [{"role": "user", "content": packet}]
        result = await self.judge.send(messages, schema, spent)
        repairs: list[dict[str, Any]] = []
        if result.status != "complete":
            status = "refused" if result.status == "filtered" else "failed"
            self._finish(row, status, result.text, repairs, {}, result.error, spent)
            return None
        read: Verdicts | None
        try:
            read = replies.read_verdicts(result.text, ids)
        except Unreadable as exc:
            if replies.looks_like_refusal(result.text):
                self._finish(row, "refused", result.text, repairs, {}, "the judge declined", spent)
                return None
            messages += [
                {"role": "assistant", "content": result.text},
                {"role": "user", "content": prompts.unreadable_text(str(exc))},
            ]
            again = await self.judge.send(messages, schema, spent)
            repairs.append({"asked": "the whole answer", "because": str(exc), "reply": again.text})
            try:
                read = replies.read_verdicts(again.text, ids) if again.status == "complete" else None
            except Unreadable:
                read = None
            if read is None:
                self._finish(row, "failed", result.text, repairs, {}, "the reply could not be read, twice", spent)
                return None
            result = again
        if read.problems:
            reasons = [(c, read.problems[c]) for c in ids if c in read.problems]
            request = prompts.pair_repair_text(reasons)
            messages += [{"role": "assistant", "content": result.text}, {"role": "user", "content": request}]
            again = await self.judge.send(messages, prompts.pair_schema([c for c, _ in reasons]), spent)
            repairs.append({"asked": [c for c, _ in reasons], "request": request, "reply": again.text})
            if again.status == "complete":
                try:
                    fixed = replies.read_verdicts(again.text, [c for c, _ in reasons])
                except Unreadable:
                    fixed = None
                if fixed is not None:
                    read.given.update(fixed.given)
                    read.problems = {c: p for c, p in read.problems.items() if c not in fixed.given}
        status = "partial" if read.problems else "complete"
        winners = {c: w for c, (w, _) in read.given.items()}
        outcome = {
            "verdicts": winners,
            "reasons": {c: r for c, (_, r) in read.given.items()},
            "failed": read.problems,
            "strays": read.strays,
        }
        self._finish(row, status, result.text, repairs, outcome, None, spent)
        return winners

    def _finish(
        self,
        row: str,
        status: str,
        reply: str | None,
        repairs: list[dict[str, Any]],
        outcome: dict[str, Any],
        error: str | None,
        spent: Spent,
    ) -> None:
        if error:
            self.errors.append(error)
        self.spent.add(spent)
        judgings.finish(
            self.db,
            row,
            status=status,
            reply=reply,
            repairs=repairs,
            outcome=outcome,
            error=error,
            prompt_tokens=spent.prompt_tokens,
            completion_tokens=spent.completion_tokens,
            cost=spent.cost,
            provider=spent.provider,
            duration=round(spent.duration, 3),
        )
        return None


def _pair_mask(views: Sequence[RunView]):
    names: list[str | None] = []
    for view in views:
        names += [view.run["model"], view.run["endpoint"], *view.providers]
    return blinding.masker(names)


def queue_work(
    db: Database, judges: Sequence[Judge], queue: str, skip_judged: bool = False
) -> tuple[list[tuple[Judge, dict[str, Any]]], list[tuple[Judge, str]]]:
    """What judging a queue takes: (judge, pair) for each pair each judge judges, and (judge, run) for each side that
    judge has no card of yet (judged first, on its own merits). `skip_judged` as in judge_queue."""
    pairs = pairing.queue_pairs(db, queue, catches=False)  # catch trials are for people: a judge forgets
    if not pairs:
        raise NotFound(f"no pair queue {queue}")
    work = [
        (judge, pair)
        for judge in judges
        for pair in pairs
        if not (skip_judged and (judge.reviewer, pairing.OVERALL) in pairing.verdicts(db, pair["id"]))
    ]
    runs = list(dict.fromkeys(r for _, p in work for r in (p["run_a"], p["run_b"])))
    missing = [(judge, run) for judge in judges for run in runs if run not in judgings.judged_runs(db, judge.reviewer)]
    return work, missing


async def judge_queue(
    db: Database,
    judges: Sequence[Judge],
    queue: str,
    options: Options,
    *,
    concurrency: int = 4,
    console: Console | None = None,
    skip_judged: bool = False,
    label: Callable[[str], str] = lambda run_id: run_id[-8:],
) -> dict[str, list[dict[str, Any]]]:
    """Judge every pair of a queue with every judge: absolute cards first where a side has none, then both orders.
    With `skip_judged`, a pair a judge has a verdict on already (overall) is left as it is (an adaptive queue's
    earlier rounds). `label` names a run on its bar, as in judge_runs.

    Returns the summary rows: {"cards": [...], "pairs": [...]}.
    """
    work, missing = queue_work(db, judges, queue, skip_judged)
    cards = (
        await judge_runs(db, missing, options, concurrency=concurrency, console=console, label=label) if missing else []
    )
    progress = progress_bars(console)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(judge: Judge, pair: dict[str, Any]) -> dict[str, Any]:
        task = progress.add_task(one_line(f"pair {pair['position'] + 1} ← {judge.reviewer}"), total=2, status="waiting")
        async with gate:
            judging = PairJudging(db, judge, pair, options)
            try:
                row = await judging.run(lambda **fields: progress.update(task, **fields))
            except Exception as exc:  # one pair's bug must not stop the others
                row = {"pair": pair["position"] + 1, "judge": judge.reviewer, "status": "failed", "error": str(exc)}
            finished(progress, task, row["status"], "pair judged")
            return row

    with progress:
        rows = await asyncio.gather(*(one(judge, pair) for judge, pair in work))
    return {"cards": cards, "pairs": list(rows)}
