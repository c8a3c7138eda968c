"""Judging runs with a model, the way the seeds did: a packet out, a card back, every quote verified.

A judge is a reviewer whose hand is a model (`judge:MODEL` unless named). For
each run it sends one packet per part (judge_packet says what is asked and
shown, judge_prompt in what words), and each packet's conversation
(judge_exchange) reads the reply, verifies every quote with the same verifier
as a person's, and asks once more for the answers that failed. What still fails
is stored as it is (absent, low confidence) and never as evidence, or, with no
answer at all, reported as a failure of that item. Here the parts' answers are
combined and stored as the judge's annotations; everything the judge saw and
said is kept in `judgings`.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.text import Text
from sqlite_utils import Database

from sieve.engine import progress
from sieve.engine.judge import answers
from sieve.engine.judge import packet as packets
from sieve.engine.judge import prompt as prompts
from sieve.engine.judge.client import REMOTE_MAX_TOKENS, Judge, Spent, settings_record
from sieve.engine.judge.combine import combine
from sieve.engine.judge.exchange import Answer, Checked, Exchange, Verifier, outcome
from sieve.engine.judge.packet import Part, Question
from sieve.engine.judge.precedents import masker, precedent_cards
from sieve.engine.progress import bars as progress_bars_of
from sieve.engine.progress import finished
from sieve.safe_text import one_line
from sieve.store.record import annotations as notes
from sieve.store.record import catches, judgings
from sieve.store.record import suggestions as suggestion_record
from sieve.store.record.db import DatabaseError
from sieve.store.record.ids import new_id
from sieve.store.record.rows import Annotation
from sieve.store.scoring import evidence
from sieve.store.scoring.navigation import chapter_of
from sieve.store.scoring.runview import RunView


@dataclass(frozen=True)
class Options:
    """How a judging is done: blind (the default), and with other runs' cards as precedents or not."""

    blind: bool = True
    precedents: bool = False
    # Judged again (`sieve judge --again`): a catch trial of the judge. Its answers carry the trial, so the
    # judge's first card stays as it was and the two can be compared (store.scoring.judge_report).
    again: bool = False


# -- one run ---------------------------------------------------------------------------


@dataclass
class Tally:
    """What a judging came to: the summary row."""

    run: str
    model: str
    judge: str
    status: str = "running"
    parts: int = 0
    items: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    repairs: int = 0
    failed: list[str] = field(default_factory=list)
    set_aside: dict[str, str] = field(default_factory=dict)  # answers the scenario cannot hold: label -> why
    strays: list[str] = field(default_factory=list)
    addressed: list[str] = field(default_factory=list)  # replies speaking to their judge: a person should look
    spent: Spent = field(default_factory=Spent)
    conflict: str | None = None
    error: str | None = None

    def row(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "model": self.model,
            "judge": self.judge,
            "status": self.status,
            "parts": self.parts,
            "items": self.items,
            "exact": self.verdicts.get("exact", 0),
            "fuzzy": self.verdicts.get("fuzzy", 0),
            "absent": self.verdicts.get("absent", 0),
            "altered": self.verdicts.get("altered", 0),
            "short": self.verdicts.get("short", 0),
            "player": self.verdicts.get("player", 0),
            "ambiguous": self.verdicts.get("ambiguous", 0),
            "off step": self.verdicts.get("off step", 0),
            "no quote": self.verdicts.get("none", 0),
            # Answers no verified quote on their step backs: on the card, left out of its totals.
            "unsupported": self.verdicts.get("unsupported", 0),
            "repairs": self.repairs,
            "failed": self.failed,
            "set aside": self.set_aside,
            "strays": self.strays,
            "addressed": self.addressed,
            "prompt_tokens": self.spent.prompt_tokens,
            "completion_tokens": self.spent.completion_tokens,
            "cost": None if self.spent.cost is None else round(self.spent.cost, 6),
            "conflict": self.conflict,
            "error": self.error,
        }


Report = Callable[..., None]  # progress: report(advance=1, status="...", total=N)


class RunJudging:
    """One judge scoring one run: its parts in turn, the answers combined and stored."""

    def __init__(
        self,
        db: Database,
        judge: Judge,
        run_id: str,
        options: Options,
        report: Report | None = None,
        warn: Callable[[str], None] | None = None,
    ):
        self.db = db
        self.judge = judge
        self.options = options
        self.report = report or (lambda **_: None)
        self.warn = warn or (lambda _: None)
        self.view = RunView.open(db, run_id)
        self.scenario = self.view.scenario
        self.precedents = precedent_cards(db, self.view, judge.reviewer, options.blind) if options.precedents else []
        self.mask = masker(db, self.view, self.precedents) if options.blind else _same
        self.verifier = Verifier(self.view, self.mask)
        self.tally = Tally(run_id, self.view.run["model"], judge.reviewer)
        self.tally.conflict = judgings.shared_maker(judge.model, self.view.run["model"])
        self.tally.addressed = [p.warning(self.mask) for p in self.view.addressed]
        self.judging = new_id()
        self.trial = catches.create(db, judge.reviewer, run_id) if options.again else None
        self._row = ""  # the judgings row of the part being judged
        self._rows: list[str] = []  # every part's row, in order
        self._unsaved: dict[str, dict[str, Any]] = {}  # a row -> what its judge answered, not written yet
        self._answered: set[Question] = set()

    async def run(self) -> Tally:
        shown = packets.blocks(self.view.turns, self.view.steps, self.scenario, self.mask)
        asked = packets.questions(self.scenario)
        try:
            parts = self._plan(asked, shown)
        except packets.PacketTooLarge as exc:
            self.tally.status, self.tally.error = "failed", str(exc)
            return self.tally
        self.tally.parts = len(parts)
        self.report(total=len(parts), status="judging")
        asked_in = {q: sum(1 for p in parts if q in p.questions) for q in asked}
        gathered: dict[Question, list[tuple[Part, Answer]]] = {}
        card: list[tuple[Answer, str]] = []
        statuses = []
        try:
            for part in parts:
                self.report(status=f"part {part.number}/{part.of}" if part.of > 1 else "judging")
                status, answers = await self._judge_part(part, shown)
                statuses.append(status)
                for q, answer in answers.items():
                    if asked_in[q] > 1:
                        gathered.setdefault(q, []).append((part, answer))
                    else:
                        card.append((answer, f"judging {self._row}"))
                self.report(advance=1, status=status)
            for q, parted in gathered.items():
                card.append((combine(q, parted), f"judging {self.judging} (its parts combined)"))
            self.tally.failed = [q.label for q in asked if q not in self._answered]
            self._write(card, statuses)
        except (DatabaseError, sqlite3.Error) as exc:
            self._unwritten(exc)
        return self.tally

    def _write(self, card: list[tuple[Answer, str]], statuses: list[str]) -> None:
        """The card and every packet's status in one transaction: a judging is stored whole or not at all."""
        verdicts: dict[str, int] = {}
        items = backed = 0
        with self.db.atomic():
            for answer, source in card:
                given = self._store(answer, source)
                for verdict in given:
                    verdicts[verdict] = verdicts.get(verdict, 0) + 1
                if answer.claim.question.kind == "score":
                    items += 1
                    backed += bool(given) and "unsupported" not in given
            if items and not backed:
                # Not one score rests on a quote that backs it: the card adds nothing to any total, so the
                # judging is not complete, whatever its packets did (its answers stay, each of low confidence).
                self.tally.error = self.tally.error or (
                    f"every score unsupported: none of its {items} scores rests on a quote that backs it on its "
                    "step (kept with low confidence, left out of the judges' totals)"
                )
                statuses = ["partial" if s == "complete" else s for s in statuses]
            for row, status in zip(self._rows, statuses):
                judgings.close(self.db, row, status)
        for verdict, n in verdicts.items():
            self.tally.verdicts[verdict] = self.tally.verdicts.get(verdict, 0) + n
        self.tally.items += items
        self.tally.status = _overall(statuses, bool(self.tally.failed))

    def _unwritten(self, exc: BaseException) -> None:
        """The card could not be stored: the judging is failed, saying why, so `--unjudged` takes the run again."""
        why = f"the card could not be stored ({one_line(str(exc))}); nothing of it was kept"
        self.tally.status = "failed"
        self.tally.error = "; ".join(e for e in (self.tally.error, why) if e)
        self.warn(f"{self.view.id} ({self.judge.reviewer}): {why}; recording the judging as failed")
        try:
            with self.db.atomic():
                for row in self._rows:
                    if row in self._unsaved:  # the reply and what it cost are kept all the same
                        judgings.answered(self.db, row, **self._unsaved[row])
                    judgings.close(self.db, row, "failed", why)
        except (DatabaseError, sqlite3.Error) as again:
            self.warn(
                f"{self.view.id} ({self.judge.reviewer}): that could not be recorded either ({one_line(str(again))}); "
                "it is recorded failed when the database is next opened"
            )

    def _plan(self, asked: list[Question], shown: list[packets.Block]) -> list[Part]:
        empty = Part(1, 1, (), tuple(asked))
        fixed_text, _ = prompts.render(
            self.scenario, empty, [], mask=self.mask, blind=self.options.blind, model=self.view.run["model"]
        )
        return packets.plan(
            self.scenario,
            asked,
            shown,
            fixed=packets.estimate_tokens(fixed_text),
            budget=self.judge.budget,
            reply_budget=self.judge.settings.max_tokens or REMOTE_MAX_TOKENS,
        )

    def rendered_packets(self) -> list[str]:
        """The packets this judging would send, one a part, rendered and neither sent nor stored (--dry-run)."""
        shown = packets.blocks(self.view.turns, self.view.steps, self.scenario, self.mask)
        return [self._packet(part, shown)[0] for part in self._plan(packets.questions(self.scenario), shown)]

    def _packet(self, part: Part, shown: list[packets.Block]) -> tuple[str, list[str]]:
        drawn = packets.boundary(b.text for b in shown)  # this packet's fences
        base, _ = prompts.render(
            self.scenario,
            part,
            shown,
            mask=self.mask,
            blind=self.options.blind,
            model=self.view.run["model"],
            drawn=drawn,
        )
        room = self.judge.budget - packets.estimate_tokens(base)
        return prompts.render(
            self.scenario,
            part,
            shown,
            mask=self.mask,
            blind=self.options.blind,
            model=self.view.run["model"],
            precedents=self.precedents,
            precedent_budget=room,
            drawn=drawn,
        )

    async def _judge_part(self, part: Part, shown: list[packets.Block]) -> tuple[str, dict[Question, Answer]]:
        packet, used = self._packet(part, shown)
        schema = prompts.schema(part.questions)
        covers = {
            "steps": list(part.steps) if part.steps is not None else "all",
            "turns": [b.idx for b in shown if part.shows(b)],
            "questions": [q.label for q in part.questions],
            "tokens_estimate": packets.estimate_tokens(packet),
            "schema": schema,
            "trial": self.trial,
        }
        self._row = judgings.start(
            self.db,
            judging=self.judging,
            kind="card",
            run_id=self.view.id,
            part=part.number,
            parts=part.of,
            reviewer=self.judge.reviewer,
            model=self.judge.model,
            endpoint=self.judge.gateway.endpoint.label,
            packet=packet,
            settings=settings_record(self.judge),
            blind=self.options.blind,
            covers=covers,
            precedents=used,
            conflict=self.tally.conflict,
        )
        self._rows.append(self._row)
        exchange = Exchange(self.judge, packet, part.questions)
        try:
            status, answers = await exchange.run(self.verifier)
        except Exception as exc:  # whatever the reply did, the row ends with the reply and tokens it has
            status, answers = "failed", {}
            exchange.error = f"the reply could not be handled ({type(exc).__name__}: {str(exc)[:200]})"
        self.tally.spent.add(exchange.spent)
        if exchange.error:
            where = f"part {part.number}/{part.of}: " if part.of > 1 else ""
            self.tally.error = "; ".join(e for e in (self.tally.error, where + exchange.error) if e)
        self.tally.repairs += len(exchange.repaired)
        self.tally.set_aside.update(exchange.set_aside)
        self.tally.strays += [s for s in exchange.strays if s not in self.tally.strays]
        self._answered |= set(answers)
        # The reply is kept as soon as it comes (or, the database busy, with the failure); the packet's
        # status is written with the card.
        self._unsaved[self._row] = {
            "reply": exchange.reply,
            "repairs": exchange.repairs,
            "outcome": {**outcome(answers, exchange, self._place), "addressed": self.tally.addressed},
            "error": exchange.error,
            "prompt_tokens": exchange.spent.prompt_tokens,
            "completion_tokens": exchange.spent.completion_tokens,
            "cost": exchange.spent.cost,
            "provider": exchange.spent.provider,
            "duration": round(exchange.spent.duration, 3),
        }
        judgings.answered(self.db, self._row, **self._unsaved[self._row])
        del self._unsaved[self._row]
        return status, answers

    # -- storing ---------------------------------------------------------------------

    def _store(self, answer: Answer, source: str) -> list[str]:
        """Store an answer as the judge's annotations (in the caller's transaction), each through the evidence
        rule as a person's is; returns the verdict of each quote, with `off step` and `unsupported` where they
        apply. One the scenario cannot hold is set aside: nothing of the answer is stored, and the judging's
        record names it."""
        q = answer.claim.question
        verdicts = []
        # A catch trial of the judge (--again) is stored, and replaces earlier verdicts, in its trial only.
        view = self.view if self.trial is None else RunView(self.db, self.view.run, trial=self.trial)
        try:
            with self.db.atomic():  # a savepoint: an answer set aside leaves nothing behind
                for old in self._previous(q):
                    notes.remove(self.db, old["id"], self.judge.reviewer)
                for kind, fields, check in answers.stored_as(self.view, answer):
                    verdict = "none" if check is None else check.verdict  # no check: a claim without evidence
                    verdicts.append(verdict)
                    if check is not None and check.off_step:
                        verdicts.append("off step")
                    if check is None or not check.is_evidence:
                        verdicts.append("unsupported")
                    evidence.annotate(
                        self.db,
                        self.view.id,
                        verified=None if check is None or verdict == "none" else check.verified,
                        view=view,
                        reviewer=self.judge.reviewer,
                        item=q.target,
                        kind=kind,
                        confidence=None if check is not None and check.is_evidence else "low",
                        blind=self.options.blind,
                        source=source,
                        **fields,
                    )
        except evidence.EvidenceRefused as exc:
            self.set_aside(q, str(exc))
            return []
        self._suggest(answer)
        return verdicts

    def set_aside(self, q: Question, reason: str) -> None:
        """An answer the scenario cannot hold: not stored, named in the tally and in the judging's record."""
        self.tally.set_aside[q.label] = reason
        self._answered.discard(q)
        if q.label not in self.tally.failed:
            self.tally.failed.append(q.label)
        judgings.note_set_aside(self.db, self._row, q.label, reason)

    def _suggest(self, answer: Answer) -> None:
        """The judge's counted events, where no detector covers the counter, wait for a person as suggestions."""
        if self.trial is not None:
            return  # a repeat measures the judge: what it finds was proposed the first time
        entries = answers.suggested(self.view, answer, self.judge.reviewer, self.judge.settings.model)
        if entries:
            suggestion_record.add(self.db, self.view.id, entries)

    def _previous(self, q: Question) -> list[Annotation]:
        """The judge's own annotations this answer replaces (a judging again replaces the last one's; a repeat,
        new each time, replaces nothing)."""
        if self.trial is not None:
            return []
        kinds = {"score": ("score",), "probe": ("probe",), "summary": ("note",)}.get(q.kind, ("count", "verdict"))
        mine = [a for a in self.view.annotations(self.judge.reviewer) if a["item"] == q.target and a["kind"] in kinds]
        if q.kind == "verdict":
            step = q.path[1]
            mine = [a for a in mine if (a["step_id"] or self.view.steps.get(a["turn_id"] or "")) == step]
        return mine

    def _place(self, check: Checked) -> dict[str, Any]:
        """Where a quote was found, as the judging's record keeps it: its step and chapter (the story seed's)."""
        if check.verified is None or check.verified.quote.turn_id is None:
            return {}
        step = self.view.steps.get(check.verified.quote.turn_id)
        chapter = chapter_of(self.scenario, step)
        return {"step": step, "chapter": chapter[1].title if chapter else None}


def _overall(statuses: list[str], failed_items: bool) -> str:
    if statuses and all(s == "refused" for s in statuses):
        return "refused"
    if statuses and all(s == "failed" for s in statuses):
        return "failed"
    if failed_items or any(s != "complete" for s in statuses):
        return "partial"
    return "complete"


def _same(text: str) -> str:
    return text


# -- many judgings at once ------------------------------------------------------------------


def progress_bars(console: Console | None = None) -> Progress:
    """One bar per judging on stderr (a line per judging as it ends where stderr is no terminal)."""
    return progress_bars_of(console)


async def judge_runs(
    db: Database,
    work: Sequence[tuple[Judge, str]],
    options: Options,
    *,
    concurrency: int = 4,
    console: Console | None = None,
    label: Callable[[str], str] = lambda run_id: run_id[-8:],
) -> list[dict[str, Any]]:
    """Every (judge, run) judged, at most `concurrency` at once, a progress bar each; returns the summary rows.

    `label` names a run on its bar (Home's short id; a blind reviewer's code)."""
    bars = progress_bars(console)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(judge: Judge, run_id: str) -> dict[str, Any]:
        task = bars.add_task(one_line(f"{label(run_id)} ← {judge.reviewer}"), total=1, status="waiting")

        def report(**fields: Any) -> None:
            progress.moved(bars, task, "part", **fields)

        def warn(line: str) -> None:
            bars.console.print(Text("sieve: " + one_line(line)))

        async with gate:
            judging = RunJudging(db, judge, run_id, options, report, warn)
            try:
                tally = await judging.run()
            except Exception as exc:  # a bug must not take the other judgings down with it
                tally = judging.tally
                tally.status, tally.error = "failed", f"{type(exc).__name__}: {exc}"
            finished(bars, task, tally.status, "judged")
            return tally.row()

    with bars:
        return list(await asyncio.gather(*(one(judge, run_id) for judge, run_id in work)))
