"""What one judge instance is asked and shown: the questions of a scenario's card, the transcript as blocks,
and the parts a long run is sent in (the words themselves are in judge_prompt). Pure: no database, no network.

The questions come from the scenario: each rubric item and bonus, each counter
(a verdict counter once per step it judges), each probe, and a one-sentence
summary of the run. A long run that does not fit the judge's context is sent
in parts: groups of steps (by chapter where the scenario has chapters), each
question in the part that holds the steps it needs. Nothing is cut: a step that
alone does not fit is an error, and each part says what it holds.

The transcript is data, and a reply may try to pass for the packet around it (a
line `## Your answer`, a heading of a turn that never was). Each turn's words
stand inside a fence that they cannot close: its lines carry a boundary drawn at
random for each packet, and a line of a turn that looks like the packet's own
(a heading, a fence) is escaped with a backslash, which `unescape` takes off a
quote again.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sieve.errors import SieveUsageError
from sieve.scenarios import Scenario
from sieve.store.scoring.navigation import chapter_of

QUOTE_MAX = 200  # characters of one quote: a verbatim quote needs no more, and a small model cannot ramble on
SENTENCE_MAX = 300
EVENTS_MAX = 20
NO_EVIDENCE = "no evidence"
# Tokens are estimated from characters, on the safe side: English runs near four
# characters a token, other languages and quotes fewer.
CHARS_PER_TOKEN = 3
ROLE_NAMES = {"user": "the player", "assistant": "the model", "system": "the system prompt"}


class PacketTooLarge(SieveUsageError):
    """The judge's context cannot hold even the smallest packet: the message says how much is needed."""


def estimate_tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + 1


def number(value: float) -> int | float:
    """A scale value as JSON writes it: 2, 0.5."""
    return int(value) if value == int(value) else value


# -- what is asked -------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One thing the judge answers: an item's score, a counter, a verdict on one step, a probe's mark, the summary.

    `path` is where the answer stands in the reply object: ("T1",), or ("L1", "m3")
    for a verdict counter's step. `needs` are the steps whose turns it is judged
    from; empty: the whole run.
    """

    path: tuple[str, ...]
    kind: str  # score | count | chain | yesno | verdict | probe | summary
    target: str
    needs: tuple[str, ...] = ()
    values: tuple[Any, ...] = ()
    undecided: tuple[str, ...] = ()  # undecided pairs a score may be, as "0.5-1"
    rubric: str | None = None

    @property
    def key(self) -> str:
        return self.path[0]

    @property
    def label(self) -> str:
        return self.path[0] if len(self.path) == 1 else f"{self.path[0]} at {self.path[1]}"

    @property
    def reply_tokens(self) -> int:
        """The most tokens its answer should take (a quote of QUOTE_MAX and the keys around it)."""
        one = QUOTE_MAX // CHARS_PER_TOKEN + 25
        return {"count": 4 * one, "summary": one + SENTENCE_MAX // CHARS_PER_TOKEN}.get(self.kind, one)


def questions(scenario: Scenario) -> list[Question]:
    """Everything a card of this scenario holds, in the scenario's order, and the summary last."""
    out: list[Question] = []
    for rubric in scenario.rubrics:
        for item in rubric.all_items():
            pairs: tuple[str, ...] = ()
            if item.scale.undecided:
                ordered = sorted(item.scale.values)
                pairs = tuple(f"{number(a)}-{number(b)}" for a, b in zip(ordered, ordered[1:]))
            values = tuple(number(v) for v in item.scale.values)
            out.append(Question((item.id,), "score", item.id, item.steps, values, pairs, rubric.id))
    for counter in scenario.counters:
        if counter.kind == "verdict":
            for step in counter.steps:
                out.append(Question((counter.id, step), "verdict", counter.id, (step,), counter.values))
        else:
            out.append(Question((counter.id,), counter.kind, counter.id, (), counter.values))
    for probe in scenario.probes:
        needs = tuple(dict.fromkeys(probe.planted + probe.asked))
        out.append(Question((probe.id,), "probe", probe.id, needs, probe.marks))
    out.append(Question(("summary",), "summary", "summary"))
    return out


# -- the transcript --------------------------------------------------------------


FENCE_TOKENS = 24  # the two fence lines around a turn's words
# A line of a turn that could pass for the packet's own: a heading (#), a fence (===), or an escape (\\).
# A line starts wherever a model reading the packet may see one start, not only after "\n".
_LINE_START = r"(?:\A|(?<=[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]))"
_LOOKS_OURS = re.compile(_LINE_START + r"([ \t]*)(?=#|===|\\)")
_ESCAPED = re.compile(_LINE_START + r"([ \t]*)\\(?=#|===|\\)")


def escape(text: str) -> str:
    """A turn's words as the packet shows them: a line that could pass for the packet's own gets a backslash."""
    return _LOOKS_OURS.sub(lambda m: m.group(1) + "\\", text)


def unescape(text: str) -> str:
    """A quote copied from the packet, as the transcript has it: the backslashes `escape` added taken off.

    Only at the start of a line, or of the quote (which may begin at the start of a line)."""
    return _ESCAPED.sub(lambda m: m.group(1), text)


def boundary(texts: Iterable[str] = ()) -> str:
    """A random boundary for one packet's fences, found in none of the texts it fences."""
    texts = list(texts)
    while True:
        drawn = secrets.token_hex(6)
        if not any(drawn in text for text in texts):
            return drawn


def fence_open(idx: int, drawn: str) -> str:
    return f"=== begin turn {idx} · {drawn} ==="


def fence_close(idx: int, drawn: str) -> str:
    return f"=== end turn {idx} · {drawn} ==="


@dataclass(frozen=True)
class Block:
    """One turn as the packet shows it: its step (None for a system prompt), number, heading and text."""

    step: str | None
    idx: int
    role: str
    heading: str
    text: str

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.heading) + estimate_tokens(self.text) + FENCE_TOKENS

    def fenced(self, drawn: str) -> list[str]:
        """The block's lines in the packet: its heading, then its words (escaped) inside their fence."""
        return [self.heading, fence_open(self.idx, drawn), escape(self.text), fence_close(self.idx, drawn)]


def chapter_text(scenario: Scenario, step: str | None, mask: Callable[[str], str]) -> str | None:
    """How the packet names a step's chapter: `chapter 2, "The valley"`; None where the scenario has none."""
    found = chapter_of(scenario, step)
    if found is None:
        return None
    n, chapter = found
    return f'chapter {n}, "{mask(chapter.title)}"'


def steps_text(scenario: Scenario, steps: Sequence[str], mask: Callable[[str], str]) -> str:
    """Step ids as the packet names them, with their chapters' titles beside them where the scenario has chapters:
    `c12-secret, c12-recall (chapter 12, "The reckoning")`."""
    groups: list[tuple[str | None, list[str]]] = []
    for step in steps:
        chapter = chapter_text(scenario, step, mask)
        if groups and groups[-1][0] == chapter:
            groups[-1][1].append(step)
        else:
            groups.append((chapter, [step]))
    return "; ".join(", ".join(ids) + (f" ({chapter})" if chapter else "") for chapter, ids in groups)


def blocks(
    turns: Sequence[Mapping[str, Any]], steps: dict[str, str], scenario: Scenario, mask: Callable[[str], str]
) -> list[Block]:
    """The chosen turns as the packet shows them, masked when blind, each headed by its number, role and step."""
    kinds = {s.id: s.kind for s in scenario.steps}
    out = []
    for turn in turns:
        step = steps.get(turn["id"])
        heading = f"### turn {turn['idx']} · {ROLE_NAMES.get(turn['role'], turn['role'])}"
        if step:
            heading += f" · step {step}"
            if turn["role"] == "user" and kinds.get(step, "player") != "player":
                heading += f" ({kinds[step]})"
            chapter = chapter_text(scenario, step, mask)
            if chapter:
                heading += f" · {chapter}"
        if turn["role"] == "assistant" and turn["status"] not in ("complete",):
            heading += f" [{_STATUS_NOTES.get(turn['status'], turn['status'])}]"
        out.append(Block(step, turn["idx"], turn["role"], heading, mask(turn["text"] or "")))
    return out


_STATUS_NOTES = {
    "length": "cut at the output ceiling",
    "filtered": "filtered: the provider returned no reply",
    "cancelled": "cancelled while streaming",
    "failed": "failed",
    "interrupted": "interrupted",
    "streaming": "still streaming",
}


# -- parts -----------------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One packet's share of the work: the steps it shows (None: the whole transcript) and what it asks."""

    number: int
    of: int
    steps: tuple[str, ...] | None
    questions: tuple[Question, ...]

    def shows(self, block: Block) -> bool:
        return self.steps is None or block.step is None or block.step in self.steps


def plan(
    scenario: Scenario,
    asked: Sequence[Question],
    shown: Sequence[Block],
    *,
    fixed: int,
    budget: int,
    reply_budget: int,
) -> list[Part]:
    """Split the judging into parts that fit: `budget` tokens of packet (of which `fixed` go to the rubric and
    instructions) and `reply_budget` tokens of answer each.

    A question needing the whole run is asked in every part when the transcript
    must be split (the caller combines the answers); the summary only in the last.
    """
    order = list(dict.fromkeys(b.step for b in shown if b.step is not None))
    cost: dict[str, int] = {}
    for b in shown:
        if b.step is not None:
            cost[b.step] = cost.get(b.step, 0) + b.tokens
    base = sum(b.tokens for b in shown if b.step is None)
    room = budget - fixed - base
    if room <= 0:
        raise PacketTooLarge(
            f"the rubric and instructions alone need about {fixed + base} tokens, "
            f"more than the judge's context leaves for a packet ({budget}); give a larger --context"
        )
    groups: list[tuple[str, ...] | None]
    if sum(cost.values()) <= room:
        groups = [None]
    else:
        groups = list(_step_groups(scenario, order, cost, room))
    present = set(order)
    partition = len(groups)  # the groups that cover the run; groups made for one question's steps come after
    by_group: dict[int, list[Question]] = {}

    def put(i: int, q: Question) -> None:
        by_group.setdefault(i, []).append(q)

    for q in asked:
        needs = tuple(s for s in q.needs if s in present)
        if groups == [None]:
            put(0, q)
        elif q.kind == "summary":
            put(partition - 1, q)
        elif not q.needs:
            for i in range(partition):
                put(i, q)
        elif not needs:
            put(partition - 1, q)  # its steps were never reached: the judge will find no evidence
        else:
            holders = [i for i, g in enumerate(groups) if g is not None and set(needs) <= set(g)]
            if holders:
                put(holders[0], q)
            elif sum(cost[s] for s in needs) <= room:
                if needs not in groups:
                    groups.append(needs)
                put(groups.index(needs), q)
            else:
                for i, g in enumerate(groups[:partition]):
                    if g is not None and set(needs) & set(g):
                        put(i, q)
    chunks: list[tuple[tuple[str, ...] | None, list[Question]]] = []
    for i, group in enumerate(groups):
        current: list[Question] = []
        spent = 0
        for q in by_group.get(i, []):
            if current and spent + q.reply_tokens > reply_budget:
                chunks.append((group, current))
                current, spent = [], 0
            current.append(q)
            spent += q.reply_tokens
        if current:
            chunks.append((group, current))
    return [Part(n, len(chunks), group, tuple(qs)) for n, (group, qs) in enumerate(chunks, start=1)]


def _step_groups(scenario: Scenario, order: list[str], cost: dict[str, int], room: int) -> list[tuple[str, ...]]:
    """Consecutive steps packed into groups that fit `room`, keeping chapters whole where they fit."""
    chapter = {s.id: s.chapter for s in scenario.steps}
    units: list[list[str]] = []
    for step in order:
        if scenario.chapters and units and chapter.get(step) == chapter.get(units[-1][-1]):
            units[-1].append(step)
        else:
            units.append([step])
    singles: list[list[str]] = []
    for unit in units:
        if sum(cost[s] for s in unit) <= room:
            singles.append(unit)
            continue
        for step in unit:
            if cost[step] > room:
                raise PacketTooLarge(
                    f"step {step} alone needs about {cost[step]} tokens, more than the judge's context leaves "
                    f"for a transcript ({room}); give a larger --context"
                )
            singles.append([step])
    groups: list[list[str]] = []
    spent = 0
    for unit in singles:
        unit_cost = sum(cost[s] for s in unit)
        if groups and spent + unit_cost <= room:
            groups[-1].extend(unit)
            spent += unit_cost
        else:
            groups.append(list(unit))
            spent = unit_cost
    return [tuple(g) for g in groups]
