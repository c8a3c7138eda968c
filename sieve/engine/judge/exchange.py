"""One packet's conversation with the judge: the reply read, every quote verified, one retry if the reply
could not be read, one repair round for the answers that cannot stand.

A quote is checked with the same verifier as a person's (store.scoring.quotes),
against the transcript as the judge saw it (masked when blind), and with the
scenario's rules about what may back an item (store.scoring.evidence): a quote
off the item's steps, in several places, or from an excluded kind of step is
sent back in the repair round with the rest. An answer the scenario cannot hold
at all (a chain longer than the run's replies, events counted twice on one
quote) is asked again too, and what is still impossible after the repair round
is set aside: never stored, named in the judging's record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sieve.engine.gateway import Result
from sieve.engine.judge import packet as packets
from sieve.engine.judge import prompt as prompts
from sieve.engine.judge import reply as replies
from sieve.engine.judge.client import Judge, Spent
from sieve.engine.judge.packet import Question
from sieve.engine.judge.reply import Claim, Evidence, Reading, Unreadable
from sieve.store.record.annotations import Quote, Verified, is_evidence
from sieve.store.record.rows import Turn
from sieve.store.scoring import blind as blinding
from sieve.store.scoring import evidence, quotes
from sieve.store.scoring.runview import RunView


@dataclass(frozen=True)
class Checked:
    """One quote of a claim, verified: where it stands and how exactly, or why it cannot back the claim."""

    evidence: Evidence
    verified: Verified | None  # None: the judge gave no quote
    refused: str | None = None  # the scenario's rule that forbids this quote for this question
    off_step: tuple[str, ...] = ()  # the steps the question is judged on, when the quote stands off them

    @property
    def verdict(self) -> str:
        if self.verified is None or self.refused:
            return "none"
        return self.verified.verdict

    @property
    def is_evidence(self) -> bool:
        return is_evidence(self.verdict) and not self.off_step

    def problem(self) -> str | None:
        """What is wrong with the quote, for the repair round; None when it stands (or none was given)."""
        if self.verified is None:
            return None
        shown = short(self.evidence.quote or "")
        if self.refused:
            return f'your quote "{shown}" cannot back it: {self.refused}'
        if self.verified.verdict == "absent":
            return f'your quote "{shown}" is not in the transcript'
        if self.verified.verdict == "short":
            return (
                f'your quote "{shown}" is too short to show anything: quote at least '
                f"{quotes.MIN_QUOTE_WORDS} words, the passage that backs your answer"
            )
        if self.verified.verdict == "altered":
            return (
                f'your quote "{shown}" adds or removes a negation: the transcript says the opposite. '
                "Quote the words as they stand"
            )
        if self.verified.verdict == "player":
            return f'your quote "{shown}" is the player\'s own words, which are no evidence of how the model behaved'
        if self.verified.verdict == "ambiguous":
            return (
                f'your quote "{shown}" stands in several turns: give the number of the turn it comes from, '
                "or quote more of the passage"
            )
        if self.off_step:
            return (
                f'your quote "{shown}" comes from another step: this is judged on {", ".join(self.off_step)}; '
                "quote the reply to that step"
            )
        return None


# A quote is asked for in at most QUOTE_MAX characters; one many times longer is no quote but a dump.
QUOTE_LIMIT = 10 * packets.QUOTE_MAX
QUOTE_KEPT = 2 * packets.QUOTE_MAX  # of a quote refused for its length, what the record keeps (the reply has all)


def short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Verifier:
    """Checks a judge's quotes against the run, as it was shown: masked when blind."""

    def __init__(self, view: RunView, mask: Callable[[str], str]):
        self.view = view
        self.by_idx = {t["idx"]: t for t in view.turns}
        self.masked = quotes.Transcript([{**t, "text": mask(t["text"] or "")} for t in view.turns])
        self._longest: dict[tuple[str, ...], int] = {}

    def check(self, q: Question, ev: Evidence) -> Checked:
        if ev.quote is None:
            return Checked(ev, None)
        scenario = self.view.scenario
        prefer = self.by_idx[ev.turn]["id"] if ev.turn in self.by_idx else None
        # The packet escaped lines that looked like its own; the transcript has them as they were.
        quote = packets.unescape(ev.quote)
        longest = self.longest(q)
        if len(quote) > longest:
            # Longer than any passage it could be: refused unsearched (a search would cost what the quote is long).
            verified = Verified(Quote(None, None, None, _kept(quote) or ""), "absent", 0.0)
            return Checked(
                ev, verified, f"it is {len(quote)} characters long, longer than its evidence could be ({longest})"
            )
        # The judge saw the masked text; a quote found there points into the original too (masks keep lengths).
        found = self.masked.locate(quote, prefer, repeats=evidence.repeats(scenario, q.target))
        text = quote
        if found.turn_id is not None and blinding.MASK in text and found.verdict == "exact":
            text = self.by_id(found.turn_id)["text"][found.start : found.end]
        verified = Verified(Quote(found.turn_id, found.start, found.end, text), found.verdict, found.similarity)
        placed = found.turn_id if found.verdict in evidence.PLACED else None
        refused = evidence.refused_quote(scenario, q.target, self.view.steps, placed) if q.kind == "score" else None
        if found.found and q.kind in ("score", "probe"):
            refused = refused or self._addressed(found.turn_id, found.start, found.end)
        verdict_step = q.path[1] if q.kind == "verdict" else None
        off: tuple[str, ...] = ()
        if evidence.off_step(scenario, q.target, self.view.steps.get(placed or ""), self.played, verdict_step):
            off = evidence.judged_on(scenario, q.target, verdict_step)
        return Checked(ev, verified, refused, off)

    @property
    def played(self) -> set[str]:
        return set(self.view.steps.values())

    def impossible(self, claim: Claim, checks: Sequence[Checked]) -> str | None:
        """Why the scenario cannot hold the answer at all (the evidence rule's `impossible`), or None: a chain
        longer than the run's replies; events of a count that rest on one quote, counted twice."""
        q = claim.question
        if q.kind == "chain" and isinstance(claim.value, int) and claim.value >= 2:
            fields = {"item": q.target, "kind": "count", "score": float(claim.value)}
            return evidence.impossible(self.view.scenario, fields, len(self.view.replies()))
        if q.kind == "count":
            places = [
                (c.verified.quote.turn_id, c.verified.quote.start)
                for c in checks
                if c.verified is not None and c.verdict in evidence.PLACED
            ]
            return evidence.events_on_one_quote(places, len(checks))
        return None

    def _addressed(self, turn_id: str | None, start: int | None, end: int | None) -> str | None:
        """Why a quote cannot back a score or a mark: it is the reply speaking to its judge (store.scoring.addressed).

        Those words are behaviour to score (an out-of-game counter may count them), never the merit a score rests on.
        """
        if start is None or end is None:
            return None
        for passage in self.view.addressed:
            if passage.covers(turn_id, start, end):
                return (
                    f"it is the reply speaking to whoever scores it (turn {passage.turn}): words that tell a judge "
                    "how to score are behaviour to score, not evidence for a score; quote the play itself"
                )
        return None

    def longest(self, q: Question) -> int:
        """The longest quote that could back this question: its steps' longest turn (the run's, if it names no
        steps), and never more than QUOTE_LIMIT, many times what was asked for."""
        key = q.needs
        if key not in self._longest:
            texts = [len(t["text"] or "") for t in self.view.turns if not key or self.view.steps.get(t["id"]) in key]
            self._longest[key] = min(QUOTE_LIMIT, max(texts, default=0))
        return self._longest[key]

    def by_id(self, turn_id: str) -> Turn:
        return next(t for t in self.view.turns if t["id"] == turn_id)


@dataclass
class Answer:
    """A question's final answer: the claim and each of its quotes checked."""

    claim: Claim
    checks: list[Checked]
    note: str | None = None
    impossible: str | None = None  # why the scenario cannot hold this answer at all

    @property
    def repair_reason(self) -> str | None:
        if self.impossible:
            return f"impossible: {self.impossible}"
        problems = [p for p in (c.problem() for c in self.checks) if p]
        if not problems:
            return None
        if self.claim.question.kind == "count":
            return f"{len(problems)} of its {len(self.checks)} events: " + "; ".join(problems)
        return problems[0]


# -- one packet, its retry and its repair round ---------------------------------------------


class Exchange:
    """The conversation about one packet: the packet, one retry if unreadable, one repair round."""

    def __init__(self, judge: Judge, packet: str, asked: Sequence[Question]):
        self.judge = judge
        self.packet = packet
        self.asked = list(asked)
        self.spent = Spent()
        self.reply: str | None = None
        self.repairs: list[dict[str, Any]] = []
        self.repaired: list[str] = []
        self.failed: dict[str, str] = {}
        self.set_aside: dict[str, str] = {}  # answers the scenario cannot hold, after the repair round: never stored
        self.strays: list[str] = []
        self.form: str | None = None
        self.error: str | None = None

    async def run(self, verifier: Verifier) -> tuple[str, dict[Question, Answer]]:
        """The status of the packet (complete, partial, failed, refused) and the answers it gave."""
        messages = [{"role": "user", "content": self.packet}]
        schema = prompts.schema(self.asked)
        result = await self.judge.send(messages, schema, self.spent)
        self.reply = result.text
        if result.status == "length" and result.error:  # cut at the ceiling or the reply limit: said in the record
            self.error = result.error
        if result.status == "filtered":
            self.error = result.error or "the judge's reply was filtered"
            return "refused", {}
        if result.status == "failed":
            self.error = result.error
            return "failed", {}
        if result.refusal:
            self.error = f"the judge declined: {short(result.text, 200)}"
            return "refused", {}
        reading: Reading | None
        try:
            reading = replies.read(result.text, self.asked)
        except Unreadable as exc:
            if replies.looks_like_refusal(result.text):
                self.error = f"the judge declined: {short(result.text, 200)}"
                return "refused", {}
            problem = str(exc)
            if result.status == "length":
                problem = "it was cut off at the output ceiling; keep each quote short"
            messages = messages + [
                {"role": "assistant", "content": result.text},
                {"role": "user", "content": prompts.unreadable_text(problem)},
            ]
            result = await self.judge.send(messages, schema, self.spent)
            self.repairs.append({"asked": "the whole answer", "because": str(exc), "reply": result.text})
            reading, why = self._read_again(result)
            if reading is None:
                self.error = f"the reply could not be read, twice: {why}"
                self.failed = {q.label: "no readable answer" for q in self.asked}
                return "failed", {}
        self.form = reading.form
        self.strays = list(reading.strays)
        answers = {q: _answer(c, verifier) for q, c in reading.claims.items()}
        reasons = [(q, reading.problems[q]) for q in self.asked if q in reading.problems]
        reasons += [(q, reason) for q, a in answers.items() if (reason := a.repair_reason)]
        reasons.sort(key=lambda pair: self.asked.index(pair[0]))
        if reasons:
            await self._repair(messages, result.text, reasons, answers, reading, verifier)
        for q, answer in list(answers.items()):
            if answer.impossible:
                del answers[q]
                self.set_aside[q.label] = answer.impossible
                reading.problems[q] = f"set aside: {answer.impossible}"
        self.failed = {q.label: reading.problems[q] for q in self.asked if q not in answers and q in reading.problems}
        return ("partial" if self.failed else "complete"), answers

    def _read_again(self, result: Result) -> tuple[Reading | None, str]:
        if result.status not in ("complete", "length"):  # a reply cut off is read for what it holds whole
            return None, result.error or result.status
        try:
            return replies.read(result.text, self.asked), ""
        except Unreadable as exc:
            return None, str(exc)

    async def _repair(
        self,
        messages: list[dict[str, str]],
        reply: str,
        reasons: list[tuple[Question, str]],
        answers: dict[Question, Answer],
        reading: Reading,
        verifier: Verifier,
    ) -> None:
        """One more round for the answers that failed; a better answer replaces the first, a worse one does not."""
        subset = [q for q, _ in reasons]
        self.repaired = [q.label for q in subset]
        request = prompts.repair_text(reasons)
        follow_up = messages + [{"role": "assistant", "content": reply}, {"role": "user", "content": request}]
        result = await self.judge.send(follow_up, prompts.schema(subset), self.spent)
        record: dict[str, Any] = {"asked": [q.label for q in subset], "request": request, "reply": result.text}
        self.repairs.append(record)
        if result.status != "complete":
            record["outcome"] = result.error or result.status
            return
        try:
            again = replies.read(result.text, subset)
        except Unreadable as exc:
            record["outcome"] = f"unreadable: {exc}"
            return
        for q in subset:
            claim = again.claims.get(q)
            if claim is None:
                continue
            fresh = _answer(claim, verifier)
            old = answers.get(q)
            if old is None or old.impossible or (not fresh.impossible and _strength(fresh) >= _strength(old)):
                answers[q] = fresh
                reading.problems.pop(q, None)


def _answer(claim: Claim, verifier: Verifier) -> Answer:
    checks = [verifier.check(claim.question, ev) for ev in claim.evidence]
    return Answer(claim, checks, impossible=verifier.impossible(claim, checks))


def _strength(answer: Answer) -> tuple[int, int]:
    """How well an answer is backed: its quotes that are evidence, then those that are at least given."""
    return (
        sum(1 for c in answer.checks if c.is_evidence),
        -sum(1 for c in answer.checks if c.problem()),
    )


def refusal_note(check: Checked) -> str | None:
    """The note kept with an answer whose quote the scenario's rules would not take as evidence."""
    if check.refused and check.evidence.quote:
        return f'quote not taken as evidence ({check.refused}): "{short(check.evidence.quote)}"'
    return None


def _kept(quote: str | None) -> str | None:
    """A quote as the judging's record keeps it: whole, unless it is longer than QUOTE_KEPT (the reply has it all)."""
    if quote is None or len(quote) <= QUOTE_KEPT:
        return quote
    return quote[: QUOTE_KEPT - 1] + "…"


def outcome(
    answers: dict[Question, Answer], exchange: Exchange, place: Callable[[Checked], dict[str, Any]] = lambda c: {}
) -> dict[str, Any]:
    """What the judgings row keeps of a packet's answers: each value, each quote with its verdict (and, from
    `place`, where it was found: its step and chapter)."""
    return {
        "form": exchange.form,
        "answers": {
            q.label: {
                "value": list(a.claim.value) if isinstance(a.claim.value, tuple) else a.claim.value,
                "quotes": [
                    {
                        "quote": _kept(c.evidence.quote),
                        "turn": c.evidence.turn,
                        "verdict": c.verdict if not c.refused else "refused",
                        "similarity": c.verified.similarity if c.verified else None,
                        **place(c),
                        "off_step": bool(c.off_step),
                    }
                    for c in a.checks
                ],
                # Not backed by a verified quote on its step: kept on the card, left out of the totals
                # (of a count: how many of its events).
                "unsupported": sum(1 for c in a.checks if not c.is_evidence)
                if q.kind == "count"
                else q.kind != "summary" and not any(c.is_evidence for c in a.checks),
            }
            for q, a in answers.items()
        },
        "failed": exchange.failed,
        "set_aside": exchange.set_aside,
        "strays": exchange.strays,
        "repaired": exchange.repaired,
    }
